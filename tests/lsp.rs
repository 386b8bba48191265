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
        self.send_raw(&msg.to_string());
    }

    /// A body as given, framed: what a broken client might send.
    fn send_raw(&mut self, body: &str) {
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
        self.wait_within(Duration::from_secs(20), pred)
    }

    fn wait_within(&mut self, time: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + time;
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
        self.diagnostics_within(Duration::from_secs(20), uri, version)
    }

    fn diagnostics_within(&mut self, time: Duration, uri: &str, version: i64) -> Vec<Value> {
        let m = self.wait_within(time, |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn initialize(&mut self) {
        let init = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(init.get("error").is_none(), "{init}");
        self.notify("initialized", json!({}));
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}),
        );
    }

    /// One incremental change: `old` (the first occurrence at or after byte `from` of `text`,
    /// which must be ASCII up to it) replaced by `new`, applied to `text` too.
    fn replace(
        &mut self,
        uri: &str,
        version: i64,
        text: &mut String,
        from: usize,
        old: &str,
        new: &str,
    ) {
        let start = from + text[from..].find(old).expect("the text to replace");
        let end = start + old.len();
        let pos = |b: usize| {
            let before = &text[..b];
            let line = before.matches('\n').count();
            let col = b - before.rfind('\n').map_or(0, |i| i + 1);
            json!({"line": line, "character": col})
        };
        let range = json!({"start": pos(start), "end": pos(end)});
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": new}]}),
        );
        text.replace_range(start..end, new);
    }

    fn shutdown(mut self) {
        let shut = self.request("shutdown", Value::Null);
        assert!(shut.get("error").is_none(), "{shut}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                break;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A fresh directory under the system's temporary one, for documents the CLI checks too.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cudalint-lsp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The LSP diagnostics agree with `cudalint check` on the same file: same findings, same
/// places, same messages (LSP appends the notes and the help to the message).
fn assert_same_as_cli(lsp: &[Value], path: &std::path::Path) {
    let cli = common::json(&[
        "check",
        "--format",
        "json",
        "--fail-on",
        "never",
        &path.to_string_lossy(),
    ]);
    let cli = cli["diagnostics"].as_array().unwrap();
    assert_eq!(lsp.len(), cli.len(), "LSP {lsp:#?}\nCLI {cli:#?}");
    for (l, c) in lsp.iter().zip(cli) {
        assert_eq!(l["code"], c["code"]);
        assert_eq!(
            l["range"]["start"]["line"],
            c["at"]["line"].as_i64().unwrap() - 1
        );
        assert_eq!(
            l["range"]["start"]["character"],
            c["at"]["column"].as_i64().unwrap() - 1
        );
        let message = c["message"].as_str().unwrap();
        assert!(
            l["message"].as_str().unwrap().starts_with(message),
            "{l:#?}\n{c:#?}"
        );
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

    // hover over the column read before the fix: the warp, and the same warp padded (the
    // analysis evaluated it on tile[32][33]: lane l's word l * 33 + (y + j), bank l + (y + j))
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
    let md = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        md.contains(
            "after padding the innermost dimension by 1: 1 wavefront per request, 0 lanes conflict"
        ) && md.contains("| bank padded | conflict padded |"),
        "{md}"
    );
    for lane in 0..32i64 {
        let row: Vec<&str> = md
            .lines()
            .find(|l| l.starts_with(&format!("| {lane} |")))
            .unwrap_or_else(|| panic!("no row for lane {lane}: {md}"))
            .split('|')
            .map(str::trim)
            .collect();
        let (offset, bank, clash) = (
            row[2].parse::<i64>().unwrap(),
            row[3].parse::<i64>().unwrap(),
            row[4],
        );
        let (bank_after, clash_after) = (row[5].parse::<i64>().unwrap(), row[6]);
        assert_eq!(
            (bank, clash),
            ((offset / 4) % 32, "yes"),
            "lane {lane}: {md}"
        );
        assert_eq!(
            (bank_after, clash_after),
            ((bank + lane) % 32, ""),
            "lane {lane}: {md}"
        );
    }

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

    // the whole text replaced (a change without a range): the finding is back
    // (bad input and bursts of changes: the tests below)
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": std::fs::read_to_string(&path).unwrap()}]}));
    assert_eq!(c.diagnostics(&uri, 3).len(), 1);
    c.shutdown();
}

#[test]
fn a_five_megabyte_document_is_checked_and_the_server_stays_alive() {
    // 11,000 kernels, one in 500 with a strided load, each under a long comment
    let comment = format!("// {}\n", "a kernel of a generated file, ".repeat(10));
    let mut text = String::new();
    let (mut i, mut strided) = (0usize, 0usize);
    while text.len() < 5 << 20 {
        // the first of every 500 kernels is strided
        let index = if i == strided * 500 {
            strided += 1;
            "t * 2"
        } else {
            "t"
        };
        text.push_str(&comment);
        text.push_str(&format!(
            "__global__ void k{i}(const float* in, float* out, int n) {{\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t < n) out[t] = in[{index}] * 2.0f;\n}}\n\n"
        ));
        i += 1;
    }
    let dir = scratch("large");
    let uri = format!("file://{}", dir.join("large.cu").display());
    let mut c = Client::start();
    c.initialize();
    c.open(&uri, &text);
    let diags = c.diagnostics_within(Duration::from_secs(120), &uri, 1);
    assert_eq!(diags.len(), strided, "one finding per strided kernel");

    // a keystroke in a kernel in the middle: one more finding, and only that kernel redone
    let middle = text.find(&format!("void k{}(", i / 2 + 1)).unwrap();
    let started = Instant::now();
    c.replace(&uri, 2, &mut text, middle, "in[t]", "in[t * 4]");
    let diags = c.diagnostics_within(Duration::from_secs(120), &uri, 2);
    eprintln!(
        "a change to a {} byte document: {:?}",
        text.len(),
        started.elapsed()
    );
    assert_eq!(diags.len(), strided + 1);
    let added = diags
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("in[t * 4]"))
        .expect("the new finding");

    // a later request is answered, from the same report
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": added["range"]["start"]}),
    );
    let md = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(md.contains("| lane | byte offset | sector |"), "{hover}");
    c.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_burst_of_a_thousand_changes_publishes_the_last_version_once() {
    let dir = scratch("burst");
    let path = dir.join("burst.cu");
    let mut text =
        std::fs::read_to_string(common::root().join("fixtures/examples/tile_transpose.cu"))
            .unwrap();
    let uri = format!("file://{}", path.display());
    let mut c = Client::start();
    c.initialize();
    c.open(&uri, &text);
    assert_eq!(c.diagnostics(&uri, 1).len(), 1);

    // typing into a kernel's index and taking it back, 1,000 times without a pause; the last
    // change leaves `x * 3`, a stride the first text does not have
    let at = text.find("idata[(y + j) * width + x]").unwrap();
    for k in 0..1000 {
        let version = k + 2;
        if k == 999 {
            c.replace(&uri, version, &mut text, at, "x * 2]", "x * 3]");
        } else if k % 2 == 0 {
            c.replace(&uri, version, &mut text, at, "x]", "x * 2]");
        } else {
            c.replace(&uri, version, &mut text, at, "x * 2]", "x]");
        }
    }
    let last = 1001;
    let mut published = Vec::new();
    let diags = loop {
        let m = c.wait(|m| m["method"] == "textDocument/publishDiagnostics");
        let v = m["params"]["version"].as_i64().unwrap();
        published.push(v);
        if v == last {
            break m["params"]["diagnostics"].as_array().unwrap().clone();
        }
    };
    assert!(
        published.windows(2).all(|w| w[0] < w[1]),
        "versions published in order: {published:?}"
    );
    assert!(
        published.len() < 20,
        "a burst is coalesced, not checked edit by edit: {published:?}"
    );
    // nothing after the last version: it was published once, and no stale check follows it
    let after =
        c.rx.recv_timeout(Duration::from_millis(1500))
            .ok()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics");
    assert!(
        after.is_none(),
        "published after the last version: {after:?}"
    );

    // what a fresh check of the final text says
    std::fs::write(&path, &text).unwrap();
    assert!(text.contains("idata[(y + j) * width + x * 3]"));
    assert_same_as_cli(&diags, &path);
    assert!(diags.iter().any(|d| d["code"] == "CL201"), "{diags:#?}");
    c.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn broken_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let mut c = Client::start();
    c.initialize();

    // not JSON: a parse error, with no id to answer to
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ");
    let e = c.wait(|m| m.get("error").is_some());
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert_eq!(e["id"], Value::Null, "{e}");
    // JSON, but not a JSON-RPC message
    c.send_raw("{\"hello\": [1, 2, 3]}");
    let e = c.wait(|m| m.get("error").is_some());
    assert_eq!(e["error"]["code"], -32600, "{e}");
    // a notification nobody knows is ignored; a request nobody knows is answered
    c.notify("cudalint/unknownNotification", json!({"x": 1}));
    let unknown = c.request("textDocument/unknownRequest", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // a request with parameters of the wrong shape
    let bad = c.request("textDocument/hover", json!({"textDocument": 3}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    let path = common::root().join("fixtures/examples/tile_transpose.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = format!("file://{}", path.display());
    c.open(&uri, &text);
    assert_eq!(c.diagnostics(&uri, 1).len(), 1);

    // ranges that do not fit the document: past its end, past a line's end, reversed; and a
    // change to a document that is not open
    let change = |v: i64, start: (u32, u32), end: (u32, u32), new: &str| json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}}, "text": new}]});
    c.notify(
        "textDocument/didChange",
        change(2, (9999, 0), (99999, 7), "\n"),
    );
    c.notify("textDocument/didChange", change(3, (2, 500), (2, 900), " "));
    c.notify("textDocument/didChange", change(4, (3, 4), (1, 2), ""));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere/not-open.cu", "version": 9}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
    );
    let diags = c.diagnostics(&uri, 4);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "CL301");

    // and it still answers requests, then shuts down cleanly
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": []}}),
    );
    assert!(
        actions["result"].as_array().is_some_and(|a| !a.is_empty()),
        "{actions}"
    );
    c.shutdown();
}

#[test]
fn the_workspace_roots_compile_commands_pick_the_branch() {
    // the document is in a repository of its own (a submodule): looking up from it stops at
    // its top, and the database is found in the editor's workspace root's build/
    let ws = scratch("compile-commands");
    std::fs::create_dir_all(ws.join("sub/.git")).unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    let path = ws.join("sub/k.cu");
    // without the database, the first branch is the guess
    let text = "#ifndef USE_WIDE\n#define STRIDE 1\n#else\n#define STRIDE 32\n#endif\n\
                __global__ void k(float* out, const float* in) {\n  \
                int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = in[t * STRIDE];\n}\n";
    std::fs::write(&path, text).unwrap();
    let db = json!([{"directory": ws.join("build"), "file": path, "command": "nvcc -DUSE_WIDE -c ../sub/k.cu"}]);
    std::fs::write(ws.join("build/compile_commands.json"), db.to_string()).unwrap();
    let uri = format!("file://{}", path.display());
    let codes = |root: Value| -> Vec<Value> {
        let mut c = Client::start();
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "capabilities": {}}),
        );
        assert!(init.get("error").is_none(), "{init}");
        c.notify("initialized", json!({}));
        c.open(&uri, text);
        let codes = c
            .diagnostics(&uri, 1)
            .iter()
            .map(|d| d["code"].clone())
            .collect();
        c.shutdown();
        codes
    };
    assert_eq!(
        codes(json!(format!("file://{}", ws.display()))),
        [json!("CL201")]
    );
    assert!(codes(Value::Null).is_empty());
    let _ = std::fs::remove_dir_all(&ws);
}

/// The server's resident memory, from the kernel's view of the process (Linux).
fn resident_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_long_day_of_editing_keeps_the_server_memory_flat() {
    if resident_kb(std::process::id()).is_none() {
        eprintln!("skipped: no /proc/<pid>/status to read resident memory from");
        return;
    }
    // 50 open documents made of the fixtures' real kernels (those without includes, so that
    // each stands alone), each typed into: a comment line inside its first kernel, a key at a
    // time, then taken out again, 200 edits each
    let mut sources: Vec<(String, String)> = std::fs::read_dir(common::root().join("fixtures"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
        .filter(|(_, t)| !t.contains("#include \"") && t.contains("__global__"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 10, "{} fixtures", sources.len());
    const DOCS: usize = 50;
    // (CUDALINT_LONG_DAY_EDITS makes the day longer, to see where memory goes)
    let edits: usize = std::env::var("CUDALINT_LONG_DAY_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    const TYPED: &str = "// tile\n";
    struct Typed {
        uri: String,
        text: String,
        version: i64,
        /// where the typing goes: the start of the line after the first kernel's opening line
        at: usize,
        /// keys typed so far, and whether they are being taken back
        keys: usize,
        erasing: bool,
    }
    let mut c = Client::start();
    let pid = c.child.id();
    c.initialize();
    let mut docs: Vec<Typed> = (0..DOCS)
        .map(|i| {
            let (_, text) = &sources[i % sources.len()];
            let k = text.find("__global__").unwrap();
            let at = k + text[k..].find('\n').unwrap() + 1;
            Typed {
                uri: format!("file:///cudalint-long-day/doc{i}.cu"),
                text: text.clone(),
                version: 1,
                at,
                keys: 0,
                erasing: false,
            }
        })
        .collect();
    for d in &docs {
        c.open(&d.uri, &d.text);
    }
    // every document's publication of its latest version, in whatever order they come
    let settle = |c: &mut Client, docs: &[Typed]| {
        let mut waiting: std::collections::HashMap<String, i64> =
            docs.iter().map(|d| (d.uri.clone(), d.version)).collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !waiting.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = c.rx.recv_timeout(left).expect("every document published");
            if m["method"] == "textDocument/publishDiagnostics" {
                let uri = m["params"]["uri"].as_str().unwrap_or("");
                if waiting.get(uri) == m["params"]["version"].as_i64().as_ref() {
                    waiting.remove(uri);
                }
            }
        }
    };
    settle(&mut c, &docs);
    let started = Instant::now();
    let mut after_first_thousand = 0;
    let mut peak = 0;
    for round in 0..edits / DOCS {
        for d in docs.iter_mut() {
            d.version += 1;
            if d.erasing {
                let key = &TYPED[d.keys - 1..d.keys];
                c.replace(&d.uri, d.version, &mut d.text, d.at + d.keys - 1, key, "");
                d.keys -= 1;
                d.erasing = d.keys > 0;
            } else {
                let key = &TYPED[d.keys..d.keys + 1];
                c.replace(&d.uri, d.version, &mut d.text, d.at + d.keys, "", key);
                d.keys += 1;
                d.erasing = d.keys == TYPED.len();
            }
        }
        settle(&mut c, &docs);
        let rss = resident_kb(pid).expect("the server is running");
        peak = peak.max(rss);
        if (round + 1) * DOCS == 1_000 {
            after_first_thousand = rss;
        }
        if ((round + 1) * DOCS).is_multiple_of(1_000) {
            let threads = std::fs::read_to_string(format!("/proc/{pid}/status"))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("Threads:"))
                        .map(|l| l[8..].trim().to_string())
                })
                .unwrap_or_default();
            eprintln!(
                "after {} edits: resident {rss} kB, {threads} threads",
                (round + 1) * DOCS
            );
        }
    }
    let last = resident_kb(pid).expect("the server is running");
    eprintln!(
        "{edits} edits over {DOCS} documents in {:.1} s: resident {} MB after 1,000 edits, {} MB after {edits} (peak {} MB)",
        started.elapsed().as_secs_f64(),
        after_first_thousand / 1024,
        last / 1024,
        peak / 1024
    );
    assert!(
        (last as f64) <= 1.2 * after_first_thousand as f64,
        "resident memory grew from {after_first_thousand} kB after 1,000 edits to {last} kB after {edits}"
    );
    // and the documents still say what a fresh check of their text says
    for d in docs.iter().take(3) {
        let fresh = {
            let mut f = Client::start();
            f.initialize();
            f.open(&d.uri, &d.text);
            let v = f.diagnostics(&d.uri, 1);
            f.shutdown();
            v
        };
        let places = |v: &[Value]| -> Vec<(Value, Value, Value)> {
            v.iter()
                .map(|x| (x["code"].clone(), x["range"].clone(), x["message"].clone()))
                .collect()
        };
        let mut again = d.text.clone();
        let v = d.version + 1;
        // an edit that changes nothing but the version: the long-lived server's view
        c.replace(&d.uri, v, &mut again, d.at, "", "");
        let long_lived = c.diagnostics(&d.uri, v);
        assert_eq!(places(&long_lived), places(&fresh), "{}", d.uri);
    }
    c.shutdown();
}
