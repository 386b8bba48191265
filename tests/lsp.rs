//! `cudalint lsp` spoken to over stdio as an editor would: JSON-RPC with Content-Length
//! framing, diagnostics on open and change, code actions applied, hover, bad input, shutdown.

mod common;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = common::cudalint()
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|m| m["id"] == id)
    }

    /// The next message matching `pred` (others are dropped), within 20 s.
    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .expect("the server answered in time");
            if pred(&m) {
                return m;
            }
        }
    }

    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }
}

#[test]
fn an_editor_session() {
    let path = common::root().join("fixtures/examples/tile_transpose.cu");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let uri = format!("file://{}", path.display());
    let mut c = Client::start();

    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["hoverProvider"], true,
        "{init}"
    );
    assert_eq!(
        init["result"]["capabilities"]["textDocumentSync"]["change"], 2,
        "incremental sync"
    );
    c.notify("initialized", json!({}));

    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}),
    );
    let diags = c.diagnostics(&uri, 1);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["code"], "CL301");
    assert_eq!(d["source"], "cudalint");
    assert_eq!(d["range"]["start"]["line"], 24);
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("32 wavefronts per request where 1 would do"));
    assert!(d["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .ends_with("CL301.md"));
    assert!(d["relatedInformation"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));

    // quick fixes on the finding: the padding, and a suppression
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let actions = actions["result"].as_array().unwrap().clone();
    let pad = actions
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .starts_with("pad the innermost dimension")
        })
        .expect("the padding action");
    assert!(actions
        .iter()
        .any(|a| a["title"] == "Suppress CL301 on this line"));
    let edit = &pad["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "TILE_DIM + 1");
    assert_eq!(edit["range"]["start"]["line"], 15);

    // apply it the way an editor does: an incremental change
    let (s, e) = (&edit["range"]["start"], &edit["range"]["end"]);
    let line: String = text.lines().nth(15).unwrap().to_string();
    let fixed_line = format!(
        "{}TILE_DIM + 1{}",
        &line[..s["character"].as_u64().unwrap() as usize],
        &line[e["character"].as_u64().unwrap() as usize..]
    );
    text = text.replacen(&line, &fixed_line, 1);
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": edit["range"], "text": "TILE_DIM + 1"}]}));
    assert!(
        c.diagnostics(&uri, 2).is_empty(),
        "the padding removes the conflict"
    );

    // hover over the column read: the warp's picture
    let col = text
        .lines()
        .nth(24)
        .unwrap()
        .find("tile[threadIdx.x]")
        .unwrap()
        + 2;
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 24, "character": col}}),
    );
    let md = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        md.contains("shared load")
            && md.contains("| lane | byte offset | bank |")
            && md.contains("| 31 |"),
        "{md}"
    );
    assert!(md.contains("block (32, 8, 1)"), "{md}");

    // bad input: a change far past the end, a method nobody knows, a burst of changes
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"range": {"start": {"line": 9999, "character": 0}, "end": {"line": 9999, "character": 5}}, "text": "\n"}]}));
    let unknown = c.request("cudalint/unknownMethod", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    for v in 4..200 {
        c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": " "}]}));
    }
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 200}, "contentChanges": [{"text": std::fs::read_to_string(&path).unwrap()}]}));
    assert_eq!(
        c.diagnostics(&uri, 200).len(),
        1,
        "the last state of a burst is checked"
    );

    let shut = c.request("shutdown", Value::Null);
    assert!(shut.get("error").is_none(), "{shut}");
    c.notify("exit", Value::Null);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}
