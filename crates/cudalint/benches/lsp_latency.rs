//! Replays typing into a 3,004-line .cu file (250 kernels and a host function) through `cudalint lsp` and reports the latency
//! from each didChange to the publishDiagnostics for that version: p50, p99, max, both to the
//! message received (the server's part) and to it parsed into JSON values as a client would
//! (the client's part added: the message is about half a megabyte).
//! Run: `cargo bench -p cudalint --bench lsp_latency` (after `cargo build --release`).
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
    (serde_json::from_slice(&body).unwrap(), received)
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
    let mut child = Command::new(&bin)
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
    let uri = "file:///tmp/cudalint-latency/typing.cu";
    send(
        &mut w,
        &json!({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"cuda-cpp","version":1,"text":text}}}),
    );
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
}
