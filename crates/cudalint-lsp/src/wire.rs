//! The stdio between the editor and tower-lsp-server, with broken messages answered here.
//!
//! tower-lsp-server answers a message it cannot decode with the right JSON-RPC error, but its
//! framed reader then ends the stream (tokio-util's `FramedRead` stops after a decoder error),
//! and with it the session. So every message is framed and checked on its way in: one that is
//! not JSON gets -32700, one that is JSON but no JSON-RPC message gets -32600, and neither
//! reaches the server. Answers are written between the server's own whole messages, and so
//! are the diagnostics the backend publishes itself (see `publish_body` in lib.rs).

use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tower_lsp_server::jsonrpc::{ErrorCode, Request, Response};

/// A body larger than this is read and dropped with an error, not held in memory.
const MAX_BODY: usize = 1 << 30;

/// What the editor's side writes to, shared by the server's messages and our answers.
pub type Out<W> = Arc<Mutex<W>>;

/// One framed message read from `r`: its body, or why there is none. `None` at the end of
/// the input.
async fn read_frame<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> Option<Result<Vec<u8>, String>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut seen_header = false;
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).await.ok()? == 0 {
            return None;
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim();
        if line.is_empty() {
            // blank lines before a header are noise between messages, not an empty header
            if seen_header {
                break;
            }
            continue;
        }
        seen_header = true;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad Content-Length `{}`", value.trim())),
                );
            }
        }
    }
    let length = match length {
        Some(Ok(n)) => n,
        Some(Err(e)) => return Some(Err(e)),
        None => return Some(Err("a message without Content-Length".into())),
    };
    if length > MAX_BODY {
        let mut rest = (&mut *r).take(length as u64);
        tokio::io::copy(&mut rest, &mut tokio::io::sink())
            .await
            .ok()?;
        return Some(Err(format!("a message of {length} bytes")));
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await.ok()?;
    Some(Ok(body))
}

/// The error to answer `body` with, or `None` if the server can take it.
fn rejection(body: &[u8]) -> Option<Value> {
    let parse_error = |why: String| {
        Some(json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": ErrorCode::ParseError.code(), "message": format!("Parse error: {why}")}}))
    };
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => return parse_error(e.to_string()),
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return parse_error(e.to_string()),
    };
    if serde_json::from_str::<Request>(text).is_ok()
        || serde_json::from_str::<Response>(text).is_ok()
    {
        return None;
    }
    // answered to its id where it has one a client could match
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    Some(json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": ErrorCode::InvalidRequest.code(), "message": "Invalid request: not a JSON-RPC 2.0 message"}}))
}

async fn write_frame<W: AsyncWrite + Unpin>(out: &Out<W>, body: &[u8]) -> std::io::Result<()> {
    write_frame_to(&mut *out.lock().await, body).await
}

/// Writes one message to `w`, which the caller holds locked.
pub async fn write_frame_to<W: AsyncWrite + Unpin>(w: &mut W, body: &[u8]) -> std::io::Result<()> {
    w.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await?;
    w.write_all(body).await?;
    w.flush().await
}

/// Copies the editor's messages to the server, answering those it must not see. Ends at the
/// end of the editor's input, closing the server's.
pub async fn forward_input<R, S, W>(from: R, mut to_server: S, out: Out<W>)
where
    R: AsyncRead + Unpin,
    S: AsyncWrite + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::new(from);
    while let Some(frame) = read_frame(&mut r).await {
        let answer = match frame {
            Ok(body) => match rejection(&body) {
                None => {
                    let header = format!("Content-Length: {}\r\n\r\n", body.len());
                    let sent = async {
                        to_server.write_all(header.as_bytes()).await?;
                        to_server.write_all(&body).await?;
                        to_server.flush().await
                    };
                    if sent.await.is_err() {
                        return;
                    }
                    continue;
                }
                Some(answer) => answer,
            },
            Err(why) => json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": ErrorCode::ParseError.code(), "message": format!("Parse error: {why}")}}),
        };
        if write_frame(&out, answer.to_string().as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
    let _ = to_server.shutdown().await;
}

/// Copies the server's messages to the editor, each whole. Ends when the server's output does.
pub async fn forward_output<R, W>(from: R, out: Out<W>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::new(from);
    while let Some(Ok(body)) = read_frame(&mut r).await {
        if write_frame(&out, &body).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_server_must_not_see() {
        let code = |b: &str| rejection(b.as_bytes()).map(|v| v["error"]["code"].clone());
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            None
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
            None
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":4,"result":null}"#), None);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"#),
            Some(json!(-32700))
        );
        assert_eq!(code("\u{0}\u{1}"), Some(json!(-32700)));
        assert_eq!(code(""), Some(json!(-32700)));
        assert_eq!(code(r#"{"hello":[1,2]}"#), Some(json!(-32600)));
        assert_eq!(code(r#"[1, 2]"#), Some(json!(-32600)));
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#),
            Some(json!(-32600))
        );
        let answer = rejection(br#"{"id":"a7","method":3}"#).unwrap();
        assert_eq!(answer["id"], "a7");
        assert!(rejection(&[b'"', 0xff, b'"']).is_some());
    }

    #[tokio::test]
    async fn broken_frames_are_answered_and_the_rest_goes_through() {
        let input = b"Content-Length: 5\r\n\r\n{bad}\
            Content-Type: text/plain\r\n\r\n\
            Content-Length: x\r\n\r\n\
            \r\nContent-Length: 42\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{}}"
            .to_vec();
        let (to_server, mut server) = tokio::io::duplex(1 << 16);
        let out: Out<Vec<u8>> = Arc::new(Mutex::new(Vec::new()));
        forward_input(&input[..], to_server, out.clone()).await;
        let mut passed = String::new();
        server.read_to_string(&mut passed).await.unwrap();
        assert_eq!(
            passed,
            "Content-Length: 42\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":{}}"
        );
        let answered = String::from_utf8(out.lock().await.clone()).unwrap();
        assert_eq!(answered.matches("\"code\":-32700").count(), 3, "{answered}");
        assert_eq!(answered.matches("Content-Length:").count(), 3, "{answered}");
    }
}
