//! Replays typing into a 3,004-line .cu file (250 kernels and a host function) through `cudalint lsp` and reports the latency
//! from each didChange to the publishDiagnostics for that version: p50, p99, max, both to the
//! message received (the server's part) and to it parsed into JSON values as a client would
//! (the client's part added: the message is about half a megabyte).
//! Run: `cargo bench -p cudalint --bench lsp_latency` (after `cargo build --release`).
//! `-- FILE [COPIES]` types into a real file instead (its text repeated COPIES times, the
//! kernels renamed per copy, as a long file of distinct kernels): a space typed and taken back
//! inside the first kernel and inside the middle copy's first kernel, printing the payload
//! size of the diagnostics as well.
//! `CUDALINT_BIN=path` times another build of the server (to compare with an older one);
//! `CUDALINT_LSP_TIMING=1` makes the server say on stderr where each check's time went.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn send(w: &mut impl Write, v: &Value) {
    let b = v.to_string();
    write!(w, "Content-Length: {}\r\n\r\n{}", b.len(), b).unwrap();
    w.flush().unwrap();
}

/// The next message, and when its last byte arrived.
fn read(r: &mut impl BufRead) -> (Value, Instant) {
    let (v, at, _) = read_sized(r);
    (v, at)
}

/// The next message, when its last byte arrived, and its size in bytes.
fn read_sized(r: &mut impl BufRead) -> (Value, Instant, usize) {
    let mut len = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    let received = Instant::now();
    (serde_json::from_slice(&body).unwrap(), received, len)
}

fn main() {
    let exe = std::env::current_exe().unwrap();
    let bin = match std::env::var_os("CUDALINT_BIN") {
        Some(b) => std::path::PathBuf::from(b),
        None => exe
            .parent()
            .and_then(|d| d.parent())
            .map(|d| d.join("cudalint"))
            .unwrap(),
    };
    assert!(
        bin.exists(),
        "build the binary first: cargo build --release -p cudalint"
    );
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let Some(file) = args.first() {
        let copies = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(1);
        return real_file(&bin, file, copies);
    }
    // 3,000 lines: 250 kernels of 12 lines with strided, coalesced and shared accesses
    let mut text = String::new();
    for i in 0..250 {
        text.push_str(&format!(
            "__global__ void k{i}(const float* in, float* out, int n) {{\n  __shared__ float tile[32][32];\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  tile[threadIdx.y][threadIdx.x] = in[t * 2];\n  __syncthreads();\n  float v = tile[threadIdx.x][threadIdx.y];\n  for (int j = 0; j < 8; ++j)\n    v += in[t + j * n];\n  out[t] = v;\n}}\n\n"
        ));
    }
    // and the host code that launches one of them
    text.push_str("void launch(const float* in, float* out, int n) {\n  int threads = 256;\n  k0<<<(n + threads - 1) / threads, threads>>>(in, out, n);\n}\n");
    assert_eq!(text.lines().count(), 3004);
    let uri = "file:///tmp/cudalint-latency/typing.cu";
    let (mut child, mut w, mut r) = open_document(&bin, uri, &text);
    // the number of diagnostics published for `version`, and when the message arrived
    let wait = |r: &mut BufReader<_>, version: i64| loop {
        let (m, received) = read(r);
        if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version {
            let n = m["params"]["diagnostics"]
                .as_array()
                .map(|a| a.len())
                .unwrap_or(0);
            return (n, received);
        }
    };
    let (first, _) = wait(&mut r, 1);
    // type into a strided index, `t * 2` -> `t * 3` -> ... one keystroke per change: in the
    // middle kernel, and in the first (every item after it moves)
    let col = "  tile[threadIdx.y][threadIdx.x] = in[t * ".len();
    let mut version = 1i64;
    let mut runs = Vec::new();
    // and in the host code: every kernel's context changes, so every kernel is analysed again
    let host = (
        "host code (`threads = 256`)",
        3001,
        "  int threads = 2".len(),
    );
    for (where_, line, col) in [
        ("kernel 125 of 250", 125 * 12 + 4, col),
        ("kernel 0 of 250", 4, col),
        host,
    ] {
        let (mut lat, mut lat_received) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            version += 1;
            // kernels: `t * 2` -> `t * 3` ...; host: 256 -> 226 -> 236 ... (the block size)
            let digit = ((version % 8) + 2).to_string();
            let t0 = Instant::now();
            send(
                &mut w,
                &json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},
                "contentChanges":[{"range":{"start":{"line":line,"character":col},"end":{"line":line,"character":col+1}},"text":digit}]}}),
            );
            let (_, received) = wait(&mut r, version);
            lat.push(t0.elapsed().as_secs_f64() * 1000.0);
            lat_received.push((received - t0).as_secs_f64() * 1000.0);
        }
        runs.push((where_, lat_received, lat));
    }
    send(&mut w, &json!({"jsonrpc":"2.0","id":2,"method":"shutdown"}));
    send(&mut w, &json!({"jsonrpc":"2.0","method":"exit"}));
    let _ = child.wait();
    println!(
        "3,004-line file, {} findings; 200 keystrokes each, didChange -> publishDiagnostics:",
        first
    );
    for (where_, received, parsed) in runs {
        print_latencies(where_, received, parsed);
    }
}

/// The kernels' names in `text`: the identifier before the `(` of each `__global__` function.
fn kernel_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in text.match_indices("__global__") {
        let Some(open) = text[i..].find('(') else {
            continue;
        };
        let head = text[i..i + open].trim_end();
        let name: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// `text` with every whole-word `name` made `name_cK`.
fn rename(text: &str, names: &[String], k: usize) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len() + 64);
    let mut token = String::new();
    for c in text.chars().chain(std::iter::once('\0')) {
        if word(c) {
            token.push(c);
            continue;
        }
        if names.contains(&token) {
            out.push_str(&format!("{token}_c{k}"));
        } else {
            out.push_str(&token);
        }
        token.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

fn real_file(bin: &std::path::Path, file: &str, copies: usize) {
    let one = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let names = kernel_names(&one);
    assert!(!names.is_empty(), "{file}: no __global__ function");
    let mut text = String::new();
    let mut starts = Vec::new();
    for k in 0..copies {
        starts.push(text.len());
        if copies == 1 {
            text.push_str(&one);
        } else {
            text.push_str(&rename(&one, &names, k));
        }
        text.push('\n');
    }
    // where to type: just inside the body of the first kernel of the first and middle copies
    let inside = |from: usize| -> (usize, usize) {
        let g = from + text[from..].find("__global__").unwrap();
        let brace = g + text[g..].find('{').unwrap() + 1;
        let line = text[..brace].matches('\n').count();
        let col = brace - text[..brace].rfind('\n').map_or(0, |i| i + 1);
        (line, col)
    };
    let places = [
        ("the first kernel", inside(starts[0])),
        ("the middle copy's first kernel", inside(starts[copies / 2])),
    ];
    let uri = "file:///tmp/cudalint-latency/real.cu";
    let (mut child, mut w, mut r) = open_document(bin, uri, &text);
    let wait = |r: &mut BufReader<_>, version: i64| loop {
        let (m, received, size) = read_sized(r);
        if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version {
            let n = m["params"]["diagnostics"].as_array().map_or(0, |a| a.len());
            return (n, received, size);
        }
    };
    let opened = Instant::now();
    let (findings, _, size) = wait(&mut r, 1);
    println!(
        "{file} x {copies}: {} lines, {} kernels, {findings} findings, {size} bytes of diagnostics; opened in {:.1} ms",
        text.lines().count(),
        names.len() * copies,
        opened.elapsed().as_secs_f64() * 1000.0
    );
    let mut version = 1;
    for (where_, (line, col)) in places {
        let (mut received, mut parsed) = (Vec::new(), Vec::new());
        for i in 0..200 {
            version += 1;
            // a space typed, then taken back
            let (end, new) = if i % 2 == 0 {
                (col, " ")
            } else {
                (col + 1, "")
            };
            let t0 = Instant::now();
            send(
                &mut w,
                &json!({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":uri,"version":version},
                "contentChanges":[{"range":{"start":{"line":line,"character":col},"end":{"line":line,"character":end}},"text":new}]}}),
            );
            let (_, at, _) = wait(&mut r, version);
            parsed.push(t0.elapsed().as_secs_f64() * 1000.0);
            received.push((at - t0).as_secs_f64() * 1000.0);
        }
        print_latencies(where_, received, parsed);
    }
    send(&mut w, &json!({"jsonrpc":"2.0","id":2,"method":"shutdown"}));
    send(&mut w, &json!({"jsonrpc":"2.0","method":"exit"}));
    let _ = child.wait();
}

/// `cudalint lsp` started, initialized, and `text` opened as `uri`.
fn open_document(
    bin: &std::path::Path,
    uri: &str,
    text: &str,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = Command::new(bin)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut w,
        &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}),
    );
    while read(&mut r).0["id"] != 1 {}
    send(
        &mut w,
        &json!({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"cuda-cpp","version":1,"text":text}}}),
    );
    (child, w, r)
}

/// p50, p99 and max of one place's keystrokes, to the message received and to it parsed.
fn print_latencies(where_: &str, received: Vec<f64>, parsed: Vec<f64>) {
    println!("typing into {where_}");
    for (what, mut lat) in [("received", received), ("parsed  ", parsed)] {
        lat.sort_by(|a, b| a.total_cmp(b));
        let pct = |p: f64| lat[((lat.len() as f64 - 1.0) * p).round() as usize];
        println!(
            "  {what}: p50 {:.1} ms   p99 {:.1} ms   max {:.1} ms",
            pct(0.5),
            pct(0.99),
            lat[lat.len() - 1]
        );
    }
}
