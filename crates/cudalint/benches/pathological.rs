//! One pathological file must not stall a run: times `check` on each of the generated files
//! issue 14 names, alone. Run: `cargo bench -p cudalint --bench pathological`.
//!
//! - a 3 MB kernel (one kernel, tens of thousands of accesses);
//! - 5,000 `#if` groups;
//! - 100,000 `#define`s;
//! - a 50,000-line host file with 10,000 launches of one kernel.

use cudalint_rules::{Input, Settings};
use std::fmt::Write;
use std::time::Instant;

fn big_kernel() -> String {
    let mut s = String::from(
        "__global__ void big(const float* in, float* out, int n) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0;\n",
    );
    let mut i = 0;
    while s.len() < 3_000_000 {
        let _ = writeln!(
            s,
            "  acc += in[t * {} + {i}] * {i}.0f; out[t + {i}] = acc;",
            i % 7 + 1
        );
        i += 1;
    }
    s.push_str("}\n");
    s
}

fn if_groups() -> String {
    let mut s = String::new();
    for i in 0..5000 {
        let _ = writeln!(
            s,
            "#if defined(OPT_{i}) && OPT_{i} > {}\n#define V{i} {i}\n#elif defined(ALT_{i})\n#define V{i} 1\n#else\n#define V{i} 2\n#endif",
            i % 3
        );
    }
    s.push_str("__global__ void k(float* o) { o[threadIdx.x * V7] = 1; }\n");
    s
}

fn defines() -> String {
    let mut s = String::new();
    for i in 0..100_000 {
        if i % 2 == 1 {
            let _ = writeln!(s, "#define NAME_{i} ({i} + NAME_{})", i - 1);
        } else {
            let _ = writeln!(s, "#define NAME_{i} {i}");
        }
    }
    s.push_str("__global__ void k(float* o) { o[threadIdx.x * NAME_2] = 1; }\n");
    s
}

fn launches() -> String {
    let mut s = String::from(
        "__global__ void k(float* o, int s) { o[threadIdx.x * s] = 1; }\nint main() {\n  float* o;\n",
    );
    for i in 0..10_000 {
        let _ = writeln!(
            s,
            "  k<<<{}, {}>>>(o, {});\n  int v{i} = {i};\n  v{i} += 1;\n  (void)v{i};\n  if (v{i} > 3) v{i}--;",
            i % 64 + 1,
            32 * (i % 8 + 1),
            i % 5 + 1
        );
    }
    s.push_str("  return 0;\n}\n");
    s
}

/// Temporaries nested in each other's arguments (RAFT's `KahanBabushkaNeumaierSum<T>(acc,
/// c, main_op(data[i], j))` inside reductions): each constructor evaluated its arguments again,
/// so 24 levels cost 2^24 evaluations (RAFT's normalize.cu ran into the 10 s budget).
fn nested_temporaries() -> String {
    let mut s = String::from(
        "struct Acc {\n  float v;\n  __device__ Acc(float a, float b) : v(a + b) {}\n  __device__ operator float() const { return v; }\n};\n__global__ void k(const float* in, float* out) {\n  float x = ",
    );
    let depth = 24;
    for _ in 0..depth {
        s.push_str("Acc(in[threadIdx.x], ");
    }
    s.push_str("in[threadIdx.x * 2]");
    s.push_str(&")".repeat(depth));
    s.push_str(";\n  out[threadIdx.x] = x;\n}\nint main() { k<<<1, 256>>>(nullptr, nullptr); }\n");
    s
}

/// CUB's segmented radix sort: an enum in a kernel defined through its policy's members of the
/// same names, the policy a typedef not resolved, and helpers whose template parameters of those
/// names are not deduced. Each reading evaluated the enum through itself until too deep (CUB's
/// own `test/link_b.cu` took 4 s).
fn self_defined_constants() -> String {
    let mut s = String::from(
        "template <bool C, typename A, typename B> struct If { typedef A Type; };\n\
         template <typename Chained, bool ALT>\n\
         __global__ void seg(const float* in, float* out) {\n  \
         typedef typename If<ALT, typename Chained::Active::Alt, typename Chained::Active::Seg>::Type P;\n  \
         enum { BLOCK_THREADS = P::BLOCK_THREADS, ITEMS_PER_THREAD = P::ITEMS_PER_THREAD,\n         \
         RADIX_BITS = P::RADIX_BITS, TILE = BLOCK_THREADS * ITEMS_PER_THREAD + RADIX_BITS };\n  \
         for (int i = 0; i < ITEMS_PER_THREAD; ++i) out[threadIdx.x + i * BLOCK_THREADS] = in[threadIdx.x * TILE + i];\n\
         }\n\
         template <int BLOCK_THREADS, int ITEMS_PER_THREAD, int RADIX_BITS>\n\
         __device__ void tile(const float* in, float* out) {\n  \
         for (int i = 0; i < ITEMS_PER_THREAD; ++i) out[threadIdx.x * RADIX_BITS + i * BLOCK_THREADS] = in[i];\n\
         }\n\
         __global__ void k(const float* in, float* out) {\n",
    );
    for i in 0..200 {
        let _ = writeln!(s, "  tile(in + {i}, out);");
    }
    s.push_str(
        "}\nstruct Tuning;\nvoid host(const float* in, float* out) {\n  \
         seg<Tuning, false><<<1, 128>>>(in, out);\n  k<<<1, 128>>>(in, out);\n}\n",
    );
    s
}

fn main() {
    type Case = (&'static str, fn() -> String);
    let cases: [Case; 6] = [
        ("3 MB kernel", big_kernel),
        ("5,000 #if groups", if_groups),
        ("100,000 #defines", defines),
        ("10,000 launches", launches),
        ("24 nested temps", nested_temporaries),
        ("self-defined enums", self_defined_constants),
    ];
    let settings = Settings::default();
    for (name, make) in cases {
        let text = make();
        let mb = text.len() as f64 / 1e6;
        let inputs = [Input::new("gen/pathological.cu", text)];
        let t = Instant::now();
        let reports = cudalint_rules::check(&inputs, &settings);
        let findings: usize = reports.iter().map(|r| r.diagnostics.len()).sum();
        let accesses: usize = reports.iter().map(|r| r.accesses.len()).sum();
        println!(
            "{name:<18} {mb:>5.1} MB  check {:>7.3} s  ({accesses} accesses, {findings} findings)",
            t.elapsed().as_secs_f64()
        );
    }
}
