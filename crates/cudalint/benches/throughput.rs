//! Lints a generated corpus (thousands of kernels over many files) and prints MB/s for
//! parse-only (tree-sitter, one parser per thread, all cores) and for the whole `check`
//! (parse, lower, analyse every kernel, rules), and their ratio. Run:
//! `cargo bench -p cudalint --bench throughput [-- KERNELS | FOLDER...]`: a number sets the size
//! of the generated corpus; folders benchmark the .cu/.cuh files under them in one run (real
//! corpora), with the headers they include read as the CLI reads them (`workspace::prepare`):
//! parse-only then parses exactly the files `check` parses.

use cudalint_rules::{Input, Settings};
use rayon::prelude::*;
use std::time::Instant;

const PATTERNS: &[&str] = &[
    // strided global
    "__global__ void k{i}(const float* in, float* out, int n) {{\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t < n) out[t] = in[t * {s}] + in[t + {s}];\n}}\n",
    // 2D tile through shared memory
    "#define T{i} 32\n__global__ void k{i}(float* o, const float* a, int w, int h) {{\n  __shared__ float tile[T{i}][T{i} + {p}];\n  int x = blockIdx.x * T{i} + threadIdx.x, y = blockIdx.y * T{i} + threadIdx.y;\n  for (int j = 0; j < T{i}; j += 8) tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * w + x];\n  __syncthreads();\n  x = blockIdx.y * T{i} + threadIdx.x; y = blockIdx.x * T{i} + threadIdx.y;\n  for (int j = 0; j < T{i}; j += 8) o[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];\n}}\n",
    // naive matmul with a device helper
    "__device__ int at{i}(int r, int c, int ld) {{ return r * ld + c; }}\n__global__ void k{i}(int M, int N, int K, const float* A, const float* B, float* C) {{\n  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;\n  if (x < M && y < N) {{ float acc = 0.0f;\n    for (int i = 0; i < K; ++i) acc += A[at{i}(x, i, K)] * B[at{i}(i, y, N)];\n    C[x * N + y] = acc; }}\n}}\n",
    // grid-stride loop, vector loads, gather
    "__global__ void k{i}(const float* __restrict__ in, const int* idx, float4* out, size_t n) {{\n  for (size_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {{\n    float4 v = reinterpret_cast<const float4*>(in)[t];\n    v.x += in[idx[t]];\n    out[t] = v;\n  }}\n}}\n",
    // reduction in shared memory
    "__global__ void k{i}(const float* in, float* out) {{\n  extern __shared__ float sdata[];\n  unsigned tid = threadIdx.x;\n  sdata[tid] = in[blockIdx.x * blockDim.x + tid];\n  __syncthreads();\n  for (unsigned s = 1; s < blockDim.x; s *= 2) {{\n    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];\n    __syncthreads();\n  }}\n  if (tid == 0) out[blockIdx.x] = sdata[0];\n}}\n",
];

fn corpus(kernels: usize, per_file: usize) -> Vec<Input> {
    let mut files = Vec::new();
    let mut text = String::new();
    for i in 0..kernels {
        let p = PATTERNS[i % PATTERNS.len()];
        text.push_str(
            &p.replace("{i}", &i.to_string())
                .replace("{s}", &(1 + i % 8).to_string())
                .replace("{p}", &(i % 2).to_string())
                .replace("{{", "{")
                .replace("}}", "}"),
        );
        if (i + 1) % per_file == 0 || i + 1 == kernels {
            text.push_str(&format!(
                "int main() {{ dim3 b(32, 8), g(64, 64); k{i}<<<g, b>>>(0, 0, 0, 0); return 0; }}\n"
            ));
            files.push(Input::new(
                format!("gen/{:05}.cu", files.len()),
                std::mem::take(&mut text),
            ));
        }
    }
    files
}

/// CPU seconds (user + system) this process has used: steadier than wall time on a shared machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

/// Best wall time of `runs`, and the mean CPU time per run.
fn read_folder(dir: &str) -> Vec<Input> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu" || x == "cuh") {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    out.push(Input::new(p.to_string_lossy(), text));
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn best_of<F: FnMut()>(runs: usize, mut f: F) -> (f64, f64) {
    let cpu0 = cpu_seconds();
    let wall = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (wall, (cpu_seconds() - cpu0) / runs as f64)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let folders: Vec<&String> = args
        .iter()
        .filter(|a| std::path::Path::new(a).is_dir())
        .collect();
    let kernels: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let mut inputs: Vec<Input> = folders.iter().flat_map(|d| read_folder(d)).collect();
    if folders.is_empty() {
        inputs = corpus(kernels, 50);
    }
    let given = inputs.len();
    let skip = |_: &std::path::Path| false;
    cudalint_rules::workspace::prepare(
        &mut inputs,
        None,
        &[],
        &cudalint_rules::compile_commands::Source::Off,
        cudalint_rules::workspace::Headers::Reported {
            skip: &skip,
            folders: &folders
                .iter()
                .map(std::path::PathBuf::from)
                .collect::<Vec<_>>(),
        },
    )
    .expect("no cudalint.toml is given");
    let headers = inputs.len() - given;
    let bytes: usize = inputs.iter().map(|i| i.text.len()).sum();
    let mb = bytes as f64 / 1e6;
    // what `cudalint check` runs: the accesses counted, not recorded
    let settings = Settings {
        accesses: cudalint_rules::Accesses::Counted,
        ..Settings::default()
    };
    let threads = rayon::current_num_threads();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    match folders.is_empty() {
        false => println!(
            "corpus: {}: {given} files and {headers} headers they include, {mb:.1} MB; {threads} threads; load average {load}",
            folders.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(" "),
        ),
        true => println!(
            "corpus: {kernels} kernels in {} files, {mb:.1} MB; {threads} threads",
            inputs.len()
        ),
    }

    let parse = best_of(3, || {
        let trees: Vec<_> = inputs
            .par_iter()
            .map(|i| cudalint_syntax::parse_tree(&i.text))
            .collect();
        assert!(trees.iter().all(|t| t.is_some()));
    });
    let lower = best_of(3, || {
        let parsed = cudalint_rules::check::parse_all(&inputs, &Default::default());
        assert!(parsed.iter().all(|p| p.is_some()));
    });
    let mut findings = 0;
    let mut accesses = 0;
    let check = best_of(3, || {
        let reports = cudalint_rules::check(&inputs, &settings);
        findings = reports.iter().map(|r| r.diagnostics.len()).sum();
        accesses = reports.iter().map(|r| r.accesses_analysed).sum();
    });
    println!(
        "parse only : {:>7.3} s wall {:>6.1} MB/s  {:>7.3} s CPU",
        parse.0,
        mb / parse.0,
        parse.1
    );
    println!(
        "parse+lower: {:>7.3} s wall {:>6.1} MB/s  {:>7.3} s CPU",
        lower.0,
        mb / lower.0,
        lower.1
    );
    println!(
        "check      : {:>7.3} s wall {:>6.1} MB/s  {:>7.3} s CPU  ({accesses} accesses, {findings} findings)",
        check.0,
        mb / check.0,
        check.1
    );
    println!(
        "check / parse-only = {:.2}x wall, {:.2}x CPU",
        check.0 / parse.0,
        check.1 / parse.1
    );
}
