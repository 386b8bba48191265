//! Does a run cost the same per megabyte at 100 MB as at 10? Generates a monorepo of many
//! programs on disk (shared headers every program includes, template kernels defined in a
//! header and launched from another file, kernels declared in one file and defined in another,
//! macros from the shared headers in index expressions) and runs the real CLI cold over it, once
//! per size, reporting wall and CPU time, peak memory and their ratios per MB. Run:
//! `cargo bench -p cudalint --bench scaling [-- MB...]` (default: 10 100). The corpora are
//! kept under `target/scaling/` and made again only when the generator changes.

use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Headers under `include/` that every program draws from; a program includes three of them.
const SHARED_HEADERS: usize = 24;

fn shared_header(h: usize) -> String {
    let s = h % 7 + 1;
    format!(
        r#"// shared helpers, set {h}
#pragma once
#define CL_IDX_{h}(r, c, ld) ((r) * (ld) + (c))
#define CL_BLOCK_{h} {block}
#define CL_STRIDE_{h} {s}

__device__ __forceinline__ float cl_load_{h}(const float* p, int i) {{ return p[i * CL_STRIDE_{h}]; }}

template <typename T>
__device__ T cl_block_sum_{h}(const T* p, int n) {{
  T acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += p[i];
  return acc;
}}

__device__ inline void cl_store2_{h}(float2* out, int i, float a, float b) {{ out[i] = make_float2(a, b); }}
"#,
        block = 128 << (h % 3),
    )
}

/// A program: its own header of template kernels, two files of kernels and a host file that
/// launches kernels of the other three (declared there, defined elsewhere).
fn program(p: usize) -> Vec<(String, String)> {
    // each kernel file holds several variants, for files of real size (about 5 KB)
    const VARIANTS: usize = 7;
    let (a, b, c) = (
        p % SHARED_HEADERS,
        (p * 7 + 3) % SHARED_HEADERS,
        (p * 13 + 5) % SHARED_HEADERS,
    );
    let pad = p % 2;
    let kernels_h = format!(
        r#"// program {p}: template kernels, launched from main.cu
#pragma once
#include "../../include/common_{a}.cuh"

template <int TILE, typename T>
__global__ void transpose_{p}(T* out, const T* in, int w, int h) {{
  __shared__ T tile[TILE][TILE + {pad}];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    tile[threadIdx.y + j][threadIdx.x] = in[CL_IDX_{a}(y + j, x, w)];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}}

template <typename T>
__global__ void scale_{p}(T* out, const T* in, int n, T f) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = in[i * {s}] * f;
}}
"#,
        s = p % 4 + 1,
    );
    let ops = |p: &str| {
        format!(
            r#"
__device__ int row_major_{p}(int r, int c, int ld) {{ return r * ld + c; }}

__global__ void gather_{p}(const float* __restrict__ in, const int* idx, float* out, int n) {{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = in[idx[t]] + cl_load_{b}(in, t);
}}

__global__ void matmul_{p}(int M, int N, int K, const float* A, const float* B, float* C) {{
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < M && y < N) {{
    float acc = 0.0f;
    for (int i = 0; i < K; ++i) acc += A[row_major_{p}(x, i, K)] * B[row_major_{p}(i, y, N)];
    C[x * N + y] = acc;
  }}
}}

__global__ void reduce_{p}(const float* in, float* out, int n) {{
  __shared__ float sdata[CL_BLOCK_{b}];
  unsigned tid = threadIdx.x;
  sdata[tid] = cl_block_sum_{b}(in + blockIdx.x * n, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {{
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }}
  if (tid == 0) out[blockIdx.x] = sdata[0];
}}
"#
        )
    };
    let ops_cu = format!(
        "// program {p}: kernels launched from main.cu\n#include \"kernels.cuh\"\n#include \"../../include/common_{b}.cuh\"\n{}",
        (0..VARIANTS).map(|v| ops(&format!("{p}_{v}"))).collect::<String>()
    );
    let stencil = |p: &str| {
        format!(
            r#"
#define RADIUS_{p} {r}

__global__ void stencil_{p}(const float* in, float* out, int w, int h) {{
  __shared__ float s[16 + 2 * RADIUS_{p}][16 + 2 * RADIUS_{p}];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  s[threadIdx.y + RADIUS_{p}][threadIdx.x + RADIUS_{p}] = in[y * w + x];
  __syncthreads();
  float acc = 0;
  for (int d = -RADIUS_{p}; d <= RADIUS_{p}; ++d)
    acc += s[threadIdx.y + RADIUS_{p} + d][threadIdx.x + RADIUS_{p}] + s[threadIdx.y + RADIUS_{p}][threadIdx.x + RADIUS_{p} + d];
  out[y * w + x] = acc;
}}

__global__ void pairs_{p}(const float4* in, float2* out, int n) {{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) {{
    float4 v = in[t];
    cl_store2_{c}(out, t * 2, v.x + v.y, v.z + v.w);
  }}
}}
"#,
            r = p.len() % 3 + 1,
        )
    };
    let stencil_cu = format!(
        "// program {p}: stencils and vector kernels\n#include \"../../include/common_{c}.cuh\"\n{}",
        (0..VARIANTS).map(|v| stencil(&format!("{p}_{v}"))).collect::<String>()
    );
    let declarations = |p: &str| {
        format!(
            r#"__global__ void gather_{p}(const float* __restrict__ in, const int* idx, float* out, int n);
__global__ void matmul_{p}(int M, int N, int K, const float* A, const float* B, float* C);
__global__ void reduce_{p}(const float* in, float* out, int n);
__global__ void stencil_{p}(const float* in, float* out, int w, int h);
__global__ void pairs_{p}(const float4* in, float2* out, int n);
"#
        )
    };
    let launches = |p: &str| {
        format!(
            r#"  gather_{p}<<<n / 256, 256>>>(a, idx, b, n);
  matmul_{p}<<<mg, mb>>>(w, h, w, a, b, b);
  reduce_{p}<<<n / {block}, {block}>>>(a, b, {block});
  stencil_{p}<<<dim3(w / 16, h / 16), dim3(16, 16)>>>(a, b, w, h);
  pairs_{p}<<<n / 128, 128>>>((const float4*)a, (float2*)b, n / 4);
"#,
            block = 128 << (b % 3),
        )
    };
    let main_cu = format!(
        r#"// program {p}: host code; the kernels of ops.cu and stencil.cu are declared here
#include <cstdio>
#include "kernels.cuh"

{decls}
static void run_{p}(float* a, float* b, int* idx, int n, int w, int h) {{
  dim3 tb(32, 8), tg(w / 32, h / 32);
  transpose_{p}<32, float><<<tg, tb>>>(b, a, w, h);
  scale_{p}<float><<<n / 256, 256>>>(b, a, n, 2.0f);
  dim3 mb(16, 16), mg(w / 16, h / 16);
{launches}}}

int main() {{
  const int n = 1 << 20, w = 1024, h = 1024;
  float *a, *b;
  int* idx;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&idx, n * sizeof(int));
  for (int rep = 0; rep < 3; ++rep) run_{p}(a, b, idx, n, w, h);
  cudaDeviceSynchronize();
  printf("program {p} done\n");
  return 0;
}}
"#,
        decls = (0..VARIANTS)
            .map(|v| declarations(&format!("{p}_{v}")))
            .collect::<String>(),
        launches = (0..VARIANTS)
            .map(|v| launches(&format!("{p}_{v}")))
            .collect::<String>(),
    );
    let dir = format!("programs/p{p:05}");
    vec![
        (format!("{dir}/kernels.cuh"), kernels_h),
        (format!("{dir}/ops.cu"), ops_cu),
        (format!("{dir}/stencil.cu"), stencil_cu),
        (format!("{dir}/main.cu"), main_cu),
    ]
}

/// Writes a corpus of about `mb` megabytes of CUDA under `root` (made again when its marker
/// says another size or generator).
fn generate(root: &Path, mb: usize) -> (usize, usize) {
    let marker = root.join(".generated");
    let mut shape = std::collections::hash_map::DefaultHasher::new();
    (shared_header(0), program(0)).hash(&mut shape);
    let stamp = format!("{mb} MB, generator {:x}\n", shape.finish());
    let mut files = 0;
    let mut bytes = 0;
    let fresh = std::fs::read_to_string(&marker).ok().as_deref() == Some(stamp.as_str());
    if !fresh {
        let _ = std::fs::remove_dir_all(root);
    }
    let write = |rel: &str, text: &str| {
        if !fresh {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("a file has a folder"))
                .expect("the corpus folder can be written");
            std::fs::write(&path, text).expect("the corpus can be written");
        }
    };
    let shared = (0..SHARED_HEADERS).map(|h| (format!("include/common_{h}.cuh"), shared_header(h)));
    let programs = (0..).flat_map(program);
    for (rel, text) in shared.chain(programs) {
        if bytes >= mb * 1_000_000 && rel.ends_with("kernels.cuh") {
            break;
        }
        write(&rel, &text);
        files += 1;
        bytes += text.len();
    }
    if !fresh {
        std::fs::write(&marker, stamp).expect("the marker can be written");
    }
    (files, bytes)
}

struct Run {
    wall: f64,
    cpu: f64,
    peak_mb: f64,
}

/// Runs the CLI cold over `root` and reads its wall time, CPU time and peak resident memory
/// from the kernel's accounting of the child.
// the child is reaped by wait4, which Child::wait cannot do: it alone gives the child's rusage
#[allow(clippy::zombie_processes)]
fn run_cli(root: &Path) -> Run {
    let t = Instant::now();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["check", "--no-cache", "--quiet", "--format", "json"])
        .arg(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the cudalint binary runs");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child's, not yet waited for; both pointers live for the call.
    let waited = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as libc::pid_t, "wait4 on the CLI failed");
    let wall = t.elapsed().as_secs_f64();
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Run {
        wall,
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        // Linux reports kilobytes
        peak_mb: usage.ru_maxrss as f64 / 1024.0,
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10, 100]
    } else {
        sizes
    };
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scaling");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "cold `cudalint check --no-cache` on generated monorepos; {} cores; load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut first: Option<(f64, f64, f64)> = None;
    for mb in sizes {
        let root = base.join(format!("{mb}mb"));
        let (files, bytes) = generate(&root, mb);
        let size = bytes as f64 / 1e6;
        let r = run_cli(&root);
        let per = (r.wall / size, r.cpu / size, r.peak_mb / size);
        let mut line = String::new();
        let _ = write!(
            line,
            "{size:>6.1} MB {files:>6} files: {:>7.2} s wall {:>7.2} s CPU {:>7.0} MB peak | per MB {:.3} s wall {:.3} s CPU {:.1} MB",
            r.wall, r.cpu, r.peak_mb, per.0, per.1, per.2
        );
        match first {
            None => first = Some(per),
            Some(f) => {
                let _ = write!(
                    line,
                    " | x{:.2} wall x{:.2} CPU x{:.2} memory per MB against the first",
                    per.0 / f.0,
                    per.1 / f.1,
                    per.2 / f.2
                );
            }
        }
        println!("{line}");
    }
}
