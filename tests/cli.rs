//! The command line as a user meets it: exit codes, output formats, `explain`, and bad input
//! that gets a one-line error naming the file while the rest of the run goes on.

mod common;

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cudalint-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GOOD: &str = "__global__ void k(const float* in, float* out) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = in[t * 32];\n}\n";

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The codes `check --show-unanalysed` reports on a folder, in order.
fn codes_of(dir: &Path) -> Vec<String> {
    let out = common::json(&["check", "--format", "json", "--show-unanalysed", &s(dir)]);
    out["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn exit_codes_follow_fail_on() {
    let dir = scratch("exit");
    let clean = dir.join("clean.cu");
    std::fs::write(
        &clean,
        "__global__ void k(float* a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }\n",
    )
    .unwrap();
    let bad = dir.join("bad.cu");
    std::fs::write(&bad, GOOD).unwrap();
    assert_eq!(common::run(&["check", &s(&clean)]).code, 0);
    let r = common::run(&["check", &s(&bad)]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("CL201"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("32 sectors per request where 4 would do (8x the memory traffic)"),
        "{}",
        r.stdout
    );
    assert_eq!(
        common::run(&["check", "--fail-on", "never", &s(&bad)]).code,
        0
    );
    assert_eq!(
        common::run(&["check", "--fail-on", "error", &s(&bad)]).code,
        0
    );
    assert_eq!(common::run(&["check", "--block", "0", &s(&bad)]).code, 2);
    assert_eq!(
        common::run(&["check", "--assume", "oops", &s(&bad)]).code,
        2
    );
}

#[test]
fn bad_input_gets_one_line_each_and_the_run_goes_on() {
    let dir = scratch("bad");
    std::fs::write(dir.join("good.cu"), GOOD).unwrap();
    std::fs::write(dir.join("empty.cu"), "").unwrap();
    std::fs::write(dir.join("binary.cu"), b"\x7fELF\x00\x00\x01garbage").unwrap();
    std::fs::write(
        dir.join("latin1.cu"),
        b"// caf\xe9\n/* \xe9t\xe9 */ __global__ void k(float* a) { a[threadIdx.x * 32] = 0; }\n",
    )
    .unwrap();
    let depth = 10_000;
    std::fs::write(
        dir.join("deep.cu"),
        format!(
            "__global__ void k(float* a) {{ a[{}threadIdx.x{}] = 0; }}\n",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
    )
    .unwrap();
    // typedefs that name each other: every lookup through them must stop
    std::fs::write(
        dir.join("cycle.cu"),
        "typedef B A;\ntypedef A B;\nstruct S { A v; int w; };\n__global__ void k(A* a, S* s, float* o) { a[threadIdx.x].x = 0; o[threadIdx.x] = s[threadIdx.x].w + sizeof(A); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("garbage.cu"),
        "}}}} __global__ ((( void <<<>>> [[[ ;;; \n template < < <",
    )
    .unwrap();
    let mut big = String::new();
    let mut i = 0;
    while big.len() < 10 * 1024 * 1024 {
        big.push_str(&format!(
            "__global__ void gen{i}(const float* in, float* out, int n) {{\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t < n) out[t] = in[t * {}];\n}}\n",
            1 + i % 4
        ));
        i += 1;
    }
    std::fs::write(dir.join("big.cu"), &big).unwrap();
    let empty_dir = dir.join("nothing-here");
    std::fs::create_dir_all(&empty_dir).unwrap();
    std::fs::write(empty_dir.join("notes.txt"), "no CUDA").unwrap();
    let missing = dir.join("missing.cu");

    let r = common::run(&[
        "check",
        "--fail-on",
        "never",
        &s(&dir),
        &s(&missing),
        &s(&empty_dir),
    ]);
    assert_eq!(r.code, 2, "I/O errors exit 2\n{}", r.stderr);
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("cudalint: error:"))
        .collect();
    let mentions =
        |name: &str, what: &str| errors.iter().any(|l| l.contains(name) && l.contains(what));
    assert!(mentions("missing.cu", "no such file"), "{}", r.stderr);
    assert!(
        mentions("nothing-here", "no .cu or .cuh files"),
        "{}",
        r.stderr
    );
    assert!(mentions("binary.cu", "binary"), "{}", r.stderr);
    // a Latin-1 comment is no reason to skip a file: it is checked, with a warning
    assert!(!mentions("latin1.cu", ""), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l.starts_with("cudalint: warning:")
            && l.contains("latin1.cu: not valid UTF-8: 3 bytes (the first on line 1) read as `?`")),
        "{}",
        r.stderr
    );
    assert_eq!(
        errors.len(),
        3,
        "one line per bad input, no more:\n{}",
        r.stderr
    );
    // the good file, the big one and the odd ones were still checked
    assert!(r.stdout.contains("good.cu"), "{}", r.stdout);
    // columns count the file's bytes: each byte read as `?` is one byte
    let col = b"/* \xe9t\xe9 */ __global__ void k(float* a) { ".len() + 1;
    assert!(
        r.stdout.contains(&format!("latin1.cu:2:{col}")),
        "{}",
        &r.stdout[..r.stdout.len().min(3000)]
    );
    assert!(
        r.stdout.contains("big.cu"),
        "{}",
        &r.stdout[..r.stdout.len().min(2000)]
    );
    assert!(
        r.stdout.contains(&format!("in {} files", 7)),
        "{}",
        r.stdout.lines().last().unwrap_or("")
    );
}

#[test]
fn text_output_to_a_file_has_no_colour_codes() {
    let r = common::run(&["check", "fixtures/examples"]);
    assert!(r.stdout.contains("warning[CL201]"), "{}", r.stdout);
    assert!(
        !r.stdout.contains('\x1b'),
        "escape codes in redirected output"
    );
    let forced = common::run(&["check", "--color", "always", "fixtures/examples"]);
    assert!(forced.stdout.contains('\x1b'));
}

#[test]
fn a_launch_with_a_runtime_block_is_named_and_headers_lend_their_names() {
    let dir = scratch("launch");
    std::fs::write(dir.join("sizes.h"), "#define STRIDE 8\n").unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"sizes.h\"\n__global__ void k(float* o) { o[threadIdx.x * STRIDE] = 0; }\nvoid go(float* o, dim3 block) { k<<<1, block>>>(o); }\n",
    )
    .unwrap();
    let out = common::json(&["check", "--format", "json", &s(&dir.join("k.cu"))]);
    let d = &out["diagnostics"][0];
    assert_eq!(d["code"], "CL201", "{out}");
    // STRIDE comes from the included header: 8 floats apart is 32 bytes, one sector per lane
    assert_eq!(d["figures"]["sectors_per_request"], 32.0);
    let notes = d["notes"].to_string();
    assert!(
        notes.contains("the launch at") && notes.contains("known only at run time"),
        "{notes}"
    );
    // the header holds no device code: nothing is found in it, though it is part of the
    // translation unit the run reports on
    let files: Vec<&str> = out["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["at"]["file"].as_str())
        .collect();
    assert!(files.iter().all(|f| f.ends_with("k.cu")), "{files:?}");
    let text = common::run(&["check", &s(&dir.join("k.cu"))]);
    assert!(text.stdout.contains("in 2 files;"), "{}", text.stdout);
}

/// Findings of `audit --format json` as (file name, line, kernel, op).
/// The first access of an audit's JSON `pred` holds for (null where there is none).
fn access_where(
    out: &serde_json::Value,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    out["accesses"]
        .as_array()
        .and_then(|all| all.iter().find(|a| pred(a)))
        .cloned()
        .unwrap_or_default()
}

fn audited(args: &[&str]) -> (serde_json::Value, Vec<(String, u64, String, String)>) {
    let mut all = vec!["audit", "--format", "json"];
    all.extend_from_slice(args);
    let out = common::json(&all);
    let rows = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let f = a["file"].as_str().unwrap_or("");
            (
                f.rsplit('/').next().unwrap_or(f).to_string(),
                a["line"].as_u64().unwrap_or(0),
                a["kernel"].as_str().unwrap_or("").to_string(),
                a["op"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (out, rows)
}

#[test]
fn device_code_in_included_headers_is_analysed_and_reported_there() {
    let dir = scratch("headers");
    // a kernel and a helper in a .h next to main.cu, as many programs are laid out; the
    // header's stride comes from main.cu's definition above the #include
    std::fs::write(
        dir.join("kernel.h"),
        "#ifndef STRIDE
#define STRIDE 2
#endif
__device__ float helper(const float* p, int i) {
  return p[i * STRIDE];
}
__global__ void in_header(float* out, const float* in) {
  out[threadIdx.x * 2] = in[threadIdx.x];
}
",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.cu"),
        "#define STRIDE 8
#include \"kernel.h\"
__device__ float twice(const float* p, int i) { return helper(p, i) * 2; }
__global__ void k(float* out, const float* in) {
  out[threadIdx.x] = twice(in, threadIdx.x);
}
int main() { float *a, *b; k<<<4, 256>>>(a, b); in_header<<<4, 128>>>(a, b); }
",
    )
    .unwrap();
    let (out, rows) = audited(&[&s(&dir)]);
    let want = |f: &str, line: u64, kernel: &str, op: &str| {
        rows.contains(&(f.into(), line, kernel.into(), op.into()))
    };
    assert!(want("kernel.h", 5, "k", "load"), "{rows:?}");
    assert!(want("kernel.h", 8, "in_header", "store"), "{rows:?}");
    assert!(want("kernel.h", 8, "in_header", "load"), "{rows:?}");
    assert!(want("main.cu", 5, "k", "store"), "{rows:?}");
    // the helper's load, filed at its own line with the calls it was inlined through,
    // innermost first, and priced with the includer's STRIDE (8 floats: 32 bytes a lane)
    let helper = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["line"] == 5 && a["file"].as_str().unwrap().ends_with("kernel.h"))
        .unwrap();
    assert_eq!(helper["sectors_per_request"], 32.0, "{helper}");
    let chain: Vec<(u64, &str)> = helper["inlined_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["line"].as_u64().unwrap(), c["callee"].as_str().unwrap()))
        .collect();
    assert_eq!(chain, [(3, "helper"), (5, "twice")], "{helper}");
    assert_eq!(helper["end_line"], 5);
    // the finding points into the header and shows the chain as related locations
    let check = common::json(&["check", "--format", "json", &s(&dir)]);
    let d = check["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["at"]["line"] == 5 && d["at"]["file"].as_str().unwrap().ends_with("kernel.h"))
        .unwrap_or_else(|| panic!("no finding in the header: {check}"));
    let labels = d["labels"].to_string();
    assert!(
        labels.contains("`helper` inlined into `twice` here")
            && labels.contains("`twice` inlined into kernel `k` here"),
        "{labels}"
    );
}

#[test]
fn a_header_with_kernels_that_nothing_includes_is_analysed_on_its_own() {
    let dir = scratch("lone-header");
    std::fs::write(
        dir.join("lonely.hpp"),
        "__global__ void lonely(float* out) { out[threadIdx.x * 4] = 1.0f; }
",
    )
    .unwrap();
    // a header without kernels that nothing includes is not read at all
    std::fs::write(
        dir.join("util.h"),
        "#define UNUSED 1
",
    )
    .unwrap();
    let (_, rows) = audited(&[&s(&dir)]);
    assert_eq!(
        rows,
        [("lonely.hpp".into(), 1, "lonely".into(), "store".into())]
    );
    // a folder with neither .cu files nor a header with a kernel is still an error
    let empty = scratch("headers-only");
    std::fs::write(
        empty.join("util.h"),
        "#define UNUSED 1
",
    )
    .unwrap();
    let r = common::run(&["check", &s(&empty)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no .cu or .cuh files"), "{}", r.stderr);
}

/// GPUMD's `force/nep.cuh` includes "utilities/common.cuh", found in the folder above the
/// one checked (its build has `-I src`): what the header declares is what the kernel sees.
#[test]
fn a_header_found_above_the_checked_folder_is_seen() {
    let dir = scratch("header-above");
    std::fs::create_dir_all(dir.join("utilities")).unwrap();
    std::fs::create_dir_all(dir.join("force")).unwrap();
    std::fs::write(
        dir.join("utilities/common.cuh"),
        "#pragma once\nconst int STRIDE = 8;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("force/nep.cu"),
        "#include \"utilities/common.cuh\"\n__global__ void k(float* out) { out[threadIdx.x * STRIDE] = 1.0f; }\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["audit", "--format", "json", "--no-cache"];
        all.extend_from_slice(args);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cudalint"))
            .args(&all)
            .current_dir(&dir)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["accesses"][0]["sectors_per_request"].clone()
    };
    // 8 floats a lane apart: 32 sectors a request, from the folder and from above it alike
    assert_eq!(run(&["force"]), run(&["."]));
    assert_eq!(
        run(&["force"]),
        serde_json::json!(32.0),
        "{}",
        run(&["force"])
    );
}

/// gpu4pyscf's `lib/gvhf-rys/*.cu` include "gvhf-rys/vhf.cuh" (built with `-I lib`) and
/// launch through a macro of a header, `LAUNCH_JKMATRIX_KERNEL(rys_vjk_ip1_1111)`: checked
/// as `.` from inside the folder, the headers are found above it as they are from the folder
/// above, and the macro's invocation launches the kernel its argument names.
#[test]
fn headers_spelled_from_above_the_working_folder_and_launch_macros_are_seen() {
    let dir = scratch("header-above-cwd");
    std::fs::create_dir_all(dir.join("utilities")).unwrap();
    std::fs::create_dir_all(dir.join("force")).unwrap();
    std::fs::write(
        dir.join("utilities/common.cuh"),
        "#pragma once\nconst int STRIDE = 8;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("force/launch.cuh"),
        "#pragma once\n#define LAUNCH(KERNEL) \\\n  KERNEL<<<1, dim3(4, 8)>>>(out)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("force/nep.cu"),
        "#include \"utilities/common.cuh\"\n#include \"force/launch.cuh\"\n\
         __global__ void k(float* out) { out[threadIdx.x * STRIDE] = 1.0f; }\n\
         void run(float* out) { LAUNCH(k); }\n",
    )
    .unwrap();
    let run = |cwd: &Path, path: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cudalint"))
            .args(["audit", "--format", "json", "--no-cache", path])
            .current_dir(cwd)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let a = &v["accesses"][0];
        (a["sectors_per_request"].clone(), a["block"].clone())
    };
    // lanes 0-31 of a (4, 8) block: four distinct floats 32 bytes apart, four sectors
    let expected = (serde_json::json!(4.0), serde_json::json!([4, 8, 1]));
    assert_eq!(run(&dir, "force"), expected);
    assert_eq!(run(&dir.join("force"), "."), expected);
}

/// warp-ctc's `src/ctc_entrypoint.cu` is a link to `ctc_entrypoint.cpp`: nvcc compiles it,
/// so a folder walk reads it; a link to a `.cu` file the walk reaches anyway is not read twice.
#[cfg(unix)]
#[test]
fn a_linked_source_file_is_read_once() {
    let dir = scratch("linked-sources");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/entry.cpp"),
        "__global__ void entry(float* out) { out[threadIdx.x * 2] = 1.0f; }\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("entry.cpp", dir.join("src/entry.cu")).unwrap();
    std::fs::write(dir.join("src/k.cu"), GOOD).unwrap();
    std::os::unix::fs::symlink("k.cu", dir.join("src/alias.cu")).unwrap();
    let (_, rows) = audited(&[&s(&dir.join("src"))]);
    let mut files: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    files.sort();
    assert_eq!(files, ["entry.cu", "k.cu", "k.cu"], "{rows:?}");
}

#[test]
fn ignored_and_excluded_headers_are_read_but_not_reported() {
    let dir = scratch("excluded-headers");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(git, "git is needed for this test");
    std::fs::create_dir_all(dir.join("gen")).unwrap();
    std::fs::create_dir_all(dir.join("third_party")).unwrap();
    std::fs::write(dir.join(".gitignore"), "gen/\n").unwrap();
    // three helpers loading different elements (one address loaded twice is one load)
    let helper = |name: &str, k: usize| {
        format!("__device__ float {name}(const float* p) {{ return p[threadIdx.x * 8 + {k}]; }}\n")
    };
    std::fs::write(dir.join("gen/gen.h"), helper("generated", 0)).unwrap();
    std::fs::write(dir.join("third_party/lib.h"), helper("vendored", 1)).unwrap();
    std::fs::write(dir.join("own.h"), helper("own", 2)).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"gen/gen.h\"\n#include \"third_party/lib.h\"\n#include \"own.h\"\n__global__ void k(float* o, const float* a) {\n  o[threadIdx.x] = generated(a) + vendored(a) + own(a);\n}\n",
    )
    .unwrap();
    let files = |args: &[&str]| -> Vec<String> {
        let (_, rows) = audited(args);
        let mut f: Vec<String> = rows.into_iter().map(|r| r.0).collect();
        f.sort();
        f.dedup();
        f
    };
    let k = s(&dir.join("k.cu"));
    // the .gitignore'd header is not reported; the vendored one is, until excluded
    assert_eq!(files(&[&k]), ["k.cu", "lib.h", "own.h"]);
    assert_eq!(
        files(&["--exclude", "**/third_party/**", &k]),
        ["k.cu", "own.h"]
    );
    std::fs::write(
        dir.join("cudalint.toml"),
        "exclude = [\"third_party/**\"]\n",
    )
    .unwrap();
    assert_eq!(files(&[&k]), ["k.cu", "own.h"]);
    // excluded files found by a folder walk are not checked either
    std::fs::write(dir.join("third_party/vendored.cu"), GOOD).unwrap();
    assert_eq!(
        files(&["--exclude", "**/third_party/**", &s(&dir)]),
        ["k.cu", "own.h"]
    );
}

#[test]
fn cudalint_toml_is_found_per_file_and_its_options_apply() {
    let dir = scratch("config");
    std::fs::create_dir_all(dir.join("legacy")).unwrap();
    std::fs::create_dir_all(dir.join("tuned")).unwrap();
    // k: in[t * 2] is 8/4 (CL201); tile: a 32-way conflict on a [32][32] tile read by column
    let kernels = "__global__ void k(const float* in, float* out) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = in[t * 2];\n}\n\
                   __global__ void wide(const float* in, float* out, int W) { out[threadIdx.x] = in[threadIdx.y * W + threadIdx.x]; }\n";
    std::fs::write(dir.join("a.cu"), kernels).unwrap();
    std::fs::write(dir.join("legacy/old.cu"), kernels).unwrap();
    std::fs::write(dir.join("tuned/t.cu"), kernels).unwrap();
    std::fs::write(
        dir.join("cudalint.toml"),
        "fail-on = \"error\"\n[severity]\nCL201 = \"info\"\n[per-file-ignores]\n\"legacy/**\" = [\"CL2\"]\n",
    )
    .unwrap();
    // the nearest configuration wins for tuned/: a per-kernel block (16 wide) and a parameter
    std::fs::write(
        dir.join("tuned/cudalint.toml"),
        "[kernels.wide]\nblock = [16, 16]\n[params]\nW = 1024\n",
    )
    .unwrap();
    let out = common::json(&["check", "--format", "json", &s(&dir)]);
    let diags = out["diagnostics"].as_array().unwrap();
    let of = |file: &str| -> Vec<&serde_json::Value> {
        diags
            .iter()
            .filter(|d| d["at"]["file"].as_str().unwrap().ends_with(file))
            .collect()
    };
    // a.cu: CL201 made info by the root configuration
    assert!(
        of("/a.cu")
            .iter()
            .any(|d| d["code"] == "CL201" && d["severity"] == "info"),
        "{out}"
    );
    // legacy/: CL2 ignored by glob
    assert!(of("legacy/old.cu").is_empty(), "{out}");
    // tuned/: its own configuration (no severity override), and `wide` runs 16x16: a warp is
    // two rows of 16 lanes W apart: 4 sectors, coalesced, no finding for it
    let tuned = of("tuned/t.cu");
    assert!(
        tuned
            .iter()
            .all(|d| d["kernel"] == "k" && d["severity"] == "warning"),
        "{out}"
    );
    let audit = common::json(&["audit", "--format", "json", &s(&dir.join("tuned/t.cu"))]);
    let wide = audit["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kernel"] == "wide" && a["op"] == "load")
        .unwrap();
    assert_eq!(wide["block"], serde_json::json!([16, 16, 1]));
    assert!(
        wide["block_source"]
            .as_str()
            .unwrap()
            .contains("cudalint.toml"),
        "{wide}"
    );
    assert_eq!(wide["sectors_per_request"], 4.0);
    // fail-on = "error" in the root configuration: a warning-level finding does not fail a.cu
    assert_eq!(common::run(&["check", &s(&dir.join("a.cu"))]).code, 0);
    // --fail-on on the command line wins, and --config replaces discovery
    assert_eq!(
        common::run(&["check", "--fail-on", "info", &s(&dir.join("a.cu"))]).code,
        1
    );
    assert_eq!(
        common::run(&[
            "check",
            "--config",
            &s(&dir.join("tuned/cudalint.toml")),
            &s(&dir.join("a.cu"))
        ])
        .code,
        1
    );
}

#[test]
fn a_bad_cudalint_toml_names_its_file_line_and_key() {
    let dir = scratch("badconfig");
    std::fs::write(dir.join("k.cu"), GOOD).unwrap();
    std::fs::write(
        dir.join("cudalint.toml"),
        "select = [\"CL2\"]\n[analysis]\nblok = [256]\n",
    )
    .unwrap();
    let r = common::run(&["check", &s(&dir)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cudalint.toml:3:") && r.stderr.contains("blok"),
        "{}",
        r.stderr
    );
}

#[test]
fn folders_are_walked_respecting_gitignore() {
    let dir = scratch("walk");
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("git not available: skipping the .gitignore part");
        return;
    }
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(dir.join("build/gen.cu"), GOOD).unwrap();
    std::fs::write(dir.join("src/k.cuh"), GOOD).unwrap();
    std::fs::write(dir.join("src/readme.md"), "not CUDA").unwrap();
    let out = common::json(&["check", "--format", "json", &s(&dir)]);
    let files: Vec<&str> = out["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["at"]["file"].as_str())
        .collect();
    assert!(files.iter().any(|f| f.ends_with("src/k.cuh")), "{files:?}");
    assert!(
        !files.iter().any(|f| f.contains("build")),
        "ignored folder was checked: {files:?}"
    );
}

#[test]
fn json_findings_carry_the_numbers() {
    let out = common::json(&["check", "--format", "json", "fixtures/probe.cu"]);
    let diags = out["diagnostics"].as_array().unwrap();
    assert!(!diags.is_empty());
    for d in diags {
        for key in [
            "code", "name", "severity", "message", "at", "kernel", "labels", "notes", "fix",
        ] {
            assert!(d.get(key).is_some(), "missing {key} in {d}");
        }
        let notes: Vec<&str> = d["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .collect();
        assert!(
            notes.iter().any(|n| n.contains("block (")),
            "no block shape in {notes:?}"
        );
    }
    let conflict = diags
        .iter()
        .find(|d| d["code"] == "CL301" && d["at"]["line"] == 73)
        .expect("transpose_smem conflict");
    assert!(conflict["message"]
        .as_str()
        .unwrap()
        .contains("32-way bank conflict"));
    // the lane-dependent term of tile[threadIdx.x][threadIdx.y] is threadIdx.x: threadIdx.y is
    // uniform within a warp of a 32x32 block
    let label = conflict["labels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["message"].as_str().unwrap().contains("differs"))
        .unwrap();
    assert_eq!(label["at"]["line"], 73);
    assert_eq!(label["at"]["column"], 32, "{label}");
    let fix = &conflict["fix"];
    assert_eq!(fix["applicability"], "machine-applicable");
    assert_eq!(fix["edits"][0]["replacement"], "TD + 1");
    assert_eq!(fix["edits"][0]["at"]["line"], 68);
}

#[test]
fn audit_lists_every_access_with_its_fields() {
    let out = common::json(&["audit", "--format", "json", "fixtures/probe.cu"]);
    let acc = out["accesses"].as_array().unwrap();
    assert!(acc.len() >= 62);
    for a in acc {
        for key in [
            "file",
            "line",
            "column",
            "kernel",
            "space",
            "op",
            "bytes",
            "class",
            "sectors_per_request",
            "ideal_sectors_per_request",
            "wavefronts_per_request",
            "ideal_wavefronts_per_request",
            "block",
            "block_source",
            "text",
        ] {
            assert!(a.get(key).is_some(), "missing {key} in {a}");
        }
    }
    let text = common::run(&["audit", "fixtures/probe.cu"]);
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("strided(4096B)"));
}

#[test]
fn explain_prints_every_rule_in_fixed_sections() {
    let list = common::run(&["explain"]);
    assert_eq!(list.code, 0);
    for code in [
        "CL101", "CL102", "CL201", "CL202", "CL203", "CL204", "CL301",
    ] {
        assert!(list.stdout.contains(code));
        let r = common::run(&["explain", code]);
        assert_eq!(r.code, 0);
        for section in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Fix",
        ] {
            assert!(r.stdout.contains(section), "{code} lacks {section}");
        }
    }
    assert_eq!(common::run(&["explain", "CL999"]).code, 2);
}

#[test]
fn every_configuration_option_is_documented_in_the_readme() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    for (key, meaning) in cudalint_rules::config::OPTIONS {
        let row = format!("| `{key}` | {meaning} |");
        assert!(readme.contains(&row), "README.md lacks the row:\n{row}");
    }
}

#[test]
fn a_baseline_hides_known_findings_across_edits_and_shows_new_ones() {
    let dir = scratch("baseline");
    let k = dir.join("k.cu");
    std::fs::write(&k, GOOD).unwrap();
    let base = dir.join("cudalint-baseline.json");
    let w = common::run(&["check", "--write-baseline", &s(&base), &s(&k)]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert!(w.stderr.contains("wrote 1 finding"), "{}", w.stderr);
    // lines added above the finding: still matched (by code, file, kernel, access text)
    std::fs::write(&k, format!("// a comment\n// another\n{GOOD}")).unwrap();
    let r = common::run(&["check", "--baseline", &s(&base), &s(&k)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("0 findings"), "{}", r.stdout);
    // a new wasteful access is reported
    std::fs::write(&k, format!("{GOOD}__global__ void k2(const float* in, float* out) {{ out[threadIdx.x] = in[threadIdx.x * 8]; }}\n")).unwrap();
    let r = common::run(&["check", "--baseline", &s(&base), "--format", "json", &s(&k)]);
    assert_eq!(r.code, 1);
    let out: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let diags = out["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{out}");
    assert_eq!(diags[0]["kernel"], "k2");
    // a file that is not a baseline is refused
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let r = common::run(&["check", "--baseline", &s(&bad), &s(&k)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a cudalint baseline"), "{}", r.stderr);
}

#[test]
fn macros_from_the_command_line_and_the_config_pick_branches() {
    let dir = scratch("defines");
    let k = dir.join("k.cu");
    std::fs::write(
        &k,
        "#ifdef WIDE\n#define TILE 32\n#else\n#define TILE 16\n#endif\n\
         __global__ void k(float* out) {\n  __shared__ float tile[TILE][TILE];\n  \
         tile[threadIdx.x][0] = 1.0f;\n  out[threadIdx.x] = tile[0][threadIdx.x];\n}\n",
    )
    .unwrap();
    let ways = |args: &[&str]| -> f64 {
        let mut all = vec!["audit", "--format", "json", "--block", "32"];
        all.extend_from_slice(args);
        let p = s(&k);
        all.push(&p);
        let out = common::json(&all);
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["op"] == "store" && a["space"] == "shared")
            .and_then(|a| a["wavefronts_per_request"].as_f64())
            .unwrap()
    };
    // WIDE is named by nothing: the first branch, the 32-wide tile (a column: 32-way)
    assert_eq!(ways(&[]), 32.0);
    // undefined: the 16-wide tile, rows 64 bytes apart (lanes 0 and 2 share a bank: 16-way)
    assert_eq!(ways(&["-U", "WIDE"]), 16.0);
    std::fs::write(dir.join("cudalint.toml"), "undefines = [\"WIDE\"]\n").unwrap();
    assert_eq!(ways(&[]), 16.0);
    // the command line wins over the file
    assert_eq!(ways(&["-D", "WIDE"]), 32.0);
    let bad = common::run(&["check", "-D", "1X", &s(&k)]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("1X"), "{}", bad.stderr);
}

#[test]
fn a_macro_the_build_files_never_name_is_not_defined() {
    let dir = scratch("build-files");
    let k = dir.join("k.cu");
    std::fs::write(
        &k,
        "#ifdef SINGLE_PRECISION\ntypedef float real;\n#else\ntypedef double real;\n#endif\n\
         __global__ void k(const real* in, real* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x];\n}\n",
    )
    .unwrap();
    let bytes = || -> Vec<u64> {
        let out = common::json(&["audit", "--format", "json", &s(&k)]);
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["bytes"].as_u64().unwrap())
            .collect()
    };
    // no build file: the first branch is the guess
    assert_eq!(bytes(), [4, 4]);
    // a Makefile that passes no -D: the plain build's #else, double
    std::fs::write(
        dir.join("Makefile"),
        "main: k.cu\n\tnvcc -O3 -arch=sm_90 k.cu -o main\n",
    )
    .unwrap();
    assert_eq!(bytes(), [8, 8]);
    // a build file that names the macro may define it: the guess again
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "option(FP32 \"single\" OFF)\nif(FP32)\n  add_compile_definitions(SINGLE_PRECISION)\nendif()\n",
    )
    .unwrap();
    assert_eq!(bytes(), [4, 4]);
    // and the command line decides over both
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "-U",
        "SINGLE_PRECISION",
        &s(&k),
    ]);
    assert_eq!(out["accesses"][0]["bytes"], 8);
}

#[test]
fn a_header_may_see_what_the_build_files_of_its_includers_set() {
    // ginkgo: `common/config.hpp` tests `GKO_COMPILING_CUDA`, which only the CMakeLists.txt of
    // `cuda/`, whose files include it, names; the repository's top CMakeLists.txt does not
    let dir = scratch("includer-build-files");
    std::fs::create_dir_all(dir.join("common")).unwrap();
    std::fs::create_dir_all(dir.join("cuda")).unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "project(p CXX)\nadd_subdirectory(cuda)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cuda/CMakeLists.txt"),
        "add_library(k k.cu)\ntarget_compile_definitions(k PRIVATE GKO_COMPILING_CUDA)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("common/config.hpp"),
        "#if defined(GKO_COMPILING_CUDA)\n#define STRIDE 2\n#else\n#error \"no backend\"\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cuda/k.cu"),
        "#include \"common/config.hpp\"\n\
         __global__ void k(const float* in, float* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x * STRIDE];\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", "--no-cache", &s(&dir)]);
    let load = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["op"] == "load")
        .unwrap()
        .clone();
    assert_eq!(load["class"], "strided", "{load}");
    assert_eq!(load["sectors_per_request"], 8.0, "{load}");
}

#[test]
fn a_makefile_flag_given_in_every_build_defines_its_macro() {
    let dir = scratch("makefile-flags");
    let k = dir.join("k.cu");
    std::fs::write(
        &k,
        "#ifndef SINGLE_PRECISION\ntypedef double real;\n#else\ntypedef float real;\n#endif\n\
         __global__ void k(const real* in, real* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x];\n}\n",
    )
    .unwrap();
    let bytes = || -> Vec<u64> {
        let out = common::json(&["audit", "--format", "json", "--no-cache", &s(&k)]);
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["bytes"].as_u64().unwrap())
            .collect()
    };
    // a flag only a make variable switches on may be off: the first branch is the guess
    std::fs::write(
        dir.join("Makefile"),
        "ifeq ($(FP32),yes)\n  CFLAGS += -DSINGLE_PRECISION\nendif\nmain: k.cu\n\tnvcc $(CFLAGS) k.cu\n",
    )
    .unwrap();
    assert_eq!(bytes(), [8, 8]);
    // given in every build (a continued line of CFLAGS): defined, float
    std::fs::write(
        dir.join("Makefile"),
        "CFLAGS := -O3 \\\n  -DSINGLE_PRECISION -arch=sm_90\nmain: k.cu\n\tnvcc $(CFLAGS) k.cu\n",
    )
    .unwrap();
    assert_eq!(bytes(), [4, 4]);
    // the command line decides over it
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        "-U",
        "SINGLE_PRECISION",
        &s(&k),
    ]);
    assert_eq!(out["accesses"][0]["bytes"], 8);
}

#[test]
fn a_flag_macro_is_a_type_and_a_constant_as_a_define_would_be() {
    let dir = scratch("flag-macros");
    let k = dir.join("k.cu");
    std::fs::write(
        &k,
        "__global__ void k(const real* in, real* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x * STRIDE];\n}\n",
    )
    .unwrap();
    let figures = |extra: &[&str]| -> Vec<(u64, f64)> {
        let mut args = vec!["audit", "--format", "json", "--no-cache", "--block", "32"];
        args.extend(extra);
        let path = s(&k);
        args.push(&path);
        common::json(&args)["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["bytes"].as_u64().unwrap(),
                    a["sectors_per_request"].as_f64().unwrap_or(-1.0),
                )
            })
            .collect()
    };
    // from the command line: 8-byte elements 2 apart, 16 sectors for the load, 8 for the store
    assert_eq!(
        figures(&["-D", "real=double", "-D", "STRIDE=2"]),
        [(8, 8.0), (8, 16.0)]
    );
    // from the Makefile's flags, as nvcc would be given them
    std::fs::write(
        dir.join("Makefile"),
        "CFLAGS := -Dreal=double -DSTRIDE=4\nmain: k.cu\n\tnvcc $(CFLAGS) k.cu\n",
    )
    .unwrap();
    assert_eq!(figures(&[]), [(8, 8.0), (8, 32.0)]);
    // a #define in the file wins over the flag, as it does in the compiler
    std::fs::write(
        &k,
        "#define STRIDE 1\n__global__ void k(const real* in, real* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x * STRIDE];\n}\n",
    )
    .unwrap();
    assert_eq!(figures(&[]), [(8, 8.0), (8, 8.0)]);
}

#[test]
fn progress_shows_on_a_terminal_and_nowhere_else() {
    let dir = scratch("progress");
    let k = dir.join("k.cu");
    std::fs::write(&k, GOOD).unwrap();
    // stderr a pipe (CI logs, JSON piped on): the findings and nothing else
    let piped = common::run(&["check", &s(&k)]);
    assert!(piped.stderr.is_empty(), "{}", piped.stderr);
    // script(1) runs the command on a terminal and copies what it drew to its stdout (without
    // the cache, which the run above filled: a run that reads it has nothing to show)
    let on_terminal = |extra: &str| -> String {
        let command = format!(
            "{} check --no-cache {extra} {} > /dev/null",
            env!("CARGO_BIN_EXE_cudalint"),
            s(&k)
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .output()
            .expect("script(1), from util-linux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let drawn = on_terminal("");
    assert!(drawn.contains("parsing"), "{drawn:?}");
    assert!(drawn.contains("analysing"), "{drawn:?}");
    assert!(drawn.contains("1/1"), "{drawn:?}");
    let quiet = on_terminal("--quiet");
    assert!(!quiet.contains("parsing"), "{quiet:?}");
}

#[test]
fn audit_summary_counts_files_kernels_and_classes() {
    let out = common::run(&["audit", "--format", "summary", "fixtures/preprocessor.cu"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("files     1, 0 with parse-error regions (0.0%)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("kernels   4, 0 not analysed (CL101)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("findings  CL201 2, CL301 1"),
        "{}",
        out.stdout
    );
    // the unknown share is of global and shared accesses: a thread's own array is listed but
    // does not dilute it
    let dir = scratch("summary-local");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void k(const float* in, float* out, const int* idx) {\n  float w[4];\n  \
         for (int i = 0; i < 4; ++i) w[i] = in[threadIdx.x * 4 + i];\n  \
         out[threadIdx.x] = w[0] + w[1] + w[2] + w[3] + in[undefined_thing];\n}\n\
         void h(const float* in, float* out) { k<<<1, 128>>>(in, out, 0); }\n",
    )
    .unwrap();
    let out = common::run(&["audit", "--format", "summary", &s(&dir.join("t.cu"))]);
    assert!(
        out.stdout
            .contains("global and shared  3, 1 unknown (33.3%)"),
        "{}",
        out.stdout
    );
}

#[test]
fn headers_are_found_next_to_the_file_through_include_dirs_and_above_it() {
    let dir = std::env::temp_dir().join(format!("cudalint-test-{}-inc", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/kernels")).unwrap();
    std::fs::create_dir_all(dir.join("third/lib")).unwrap();
    // one folder up from the kernel, as `-I src` would find it
    std::fs::write(dir.join("src/common.h"), "#define TILE 32\n").unwrap();
    // only on an include path
    std::fs::write(dir.join("third/lib/defs.h"), "#define STRIDE 2\n").unwrap();
    let kernel = dir.join("src/kernels/k.cu");
    std::fs::write(
        &kernel,
        "#include \"common.h\"\n#include \"lib/defs.h\"\n__global__ void k(float* a, float* b) {\n  a[threadIdx.x * TILE] = 0;\n  b[threadIdx.x * STRIDE] = 0;\n}\n",
    )
    .unwrap();
    let sectors = |extra: &[&str]| -> Vec<serde_json::Value> {
        let k = s(&kernel);
        let mut args = vec!["audit", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(&k);
        let out = common::json(&args);
        let acc = out["accesses"].as_array().unwrap();
        [4, 5]
            .iter()
            .map(|line| {
                acc.iter()
                    .find(|a| a["line"] == *line)
                    .map(|a| a["sectors_per_request"].clone())
                    .unwrap_or_default()
            })
            .collect()
    };
    // TILE from the folder above; STRIDE nowhere: not priced
    assert_eq!(
        sectors(&[]),
        [serde_json::json!(32.0), serde_json::Value::Null]
    );
    let third = s(&dir.join("third"));
    assert_eq!(
        sectors(&["-I", &third]),
        [serde_json::json!(32.0), serde_json::json!(8.0)]
    );
    // the same folder from cudalint.toml, relative to it
    std::fs::write(dir.join("cudalint.toml"), "include-dirs = [\"third\"]\n").unwrap();
    assert_eq!(
        sectors(&[]),
        [serde_json::json!(32.0), serde_json::json!(8.0)]
    );
    std::fs::write(
        dir.join("cudalint.toml"),
        "\ninclude-dirs = [\"nowhere\"]\n",
    )
    .unwrap();
    let r = common::run(&["check", &s(&kernel)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cudalint.toml:2: `include-dirs`: no folder"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(dir.join("cudalint.toml")).unwrap();
    let r = common::run(&["check", "-I", "/no/such/folder", &s(&kernel)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("-I /no/such/folder: no such folder"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_template_tile_with_no_visible_instantiation_keeps_its_rank() {
    // cuda-samples' matrixMul shape: BS is only known where the kernel is instantiated, which
    // the run does not see. An unknown template value is a run-time value like any other: the
    // array keeps its two dimensions, the store stays a store, and reading the tile by column
    // is the 32-way conflict the probe measured for a [32][32] tile (any power of two >= 32
    // rows lands every lane on one bank).
    let dir = scratch("template-tile");
    std::fs::write(
        dir.join("mm.cu"),
        "template <int BS>\n__global__ void mm(float* C, const float* A, int wA) {\n  __shared__ float As[BS][BS];\n  int tx = threadIdx.x, ty = threadIdx.y;\n  As[ty][tx] = A[ty * wA + tx];\n  __syncthreads();\n  C[ty * wA + tx] = As[tx][ty];\n}\n",
    )
    .unwrap();
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--block",
        "32,32",
        &s(&dir.join("mm.cu")),
    ]);
    let shared: Vec<(u64, String, f64)> = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["space"] == "shared")
        .map(|a| {
            (
                a["line"].as_u64().unwrap(),
                a["op"].as_str().unwrap().to_string(),
                a["wavefronts_per_request"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    assert_eq!(
        shared,
        [(5, "store".to_string(), 1.0), (7, "load".to_string(), 32.0)],
        "{out}"
    );
}

#[test]
fn a_long_host_routine_given_a_launch_configuration_is_not_replayed() {
    // RELION's shape: a 1,000-line host routine takes the object a later launch reads by
    // reference; replaying it for every launch after it took 98 s of a 2 s program. A short
    // setup function is followed; after a long one the object's members are not known, and
    // the member set before it (16) must not be taken for what the launch reads.
    let dir = scratch("long-host");
    let mut body = String::from("  int acc = 0;\n");
    for i in 0..200 {
        body.push_str(&format!(
            "  acc += c.n * {i} + (acc >> 3);  // step {i} of a long routine\n"
        ));
    }
    std::fs::write(
        dir.join("t.cu"),
        format!(
            "struct Cfg {{ int n; }};\nvoid small(Cfg& c) {{ c.n = 64; }}\nvoid big(Cfg& c) {{\n{body}  c.n = 32;\n}}\n\
             __global__ void k1(float* x) {{ x[threadIdx.x] = 0; }}\n\
             __global__ void k2(float* x) {{ x[threadIdx.x] = 0; }}\n\
             void run(float* x) {{\n  Cfg a; a.n = 16; small(a); k1<<<1, a.n>>>(x);\n  \
             Cfg b; b.n = 16; big(b); k2<<<1, b.n>>>(x);\n}}\n"
        ),
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let block = |k: &str| {
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["kernel"] == k)
            .map(|a| a["block"].clone())
    };
    assert_eq!(block("k1"), Some(serde_json::json!([64, 1, 1])), "{out}");
    let k2 = block("k2").expect("k2 analysed");
    assert_ne!(k2, serde_json::json!([16, 1, 1]), "{out}");
}

#[test]
fn math_constants_without_their_header_are_floating_point_numbers() {
    // mmcv's rotated RoI kernels: `theta * num_orientations / (2 * M_PI)` with <math.h> not in
    // the run. The index is float arithmetic (data to cudalint), not an unknown name; a
    // project's own `#define M_PI` still wins.
    let dir = scratch("math-constants");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void bins(const float* theta, int* out, int n) {\n  \
         int t = blockIdx.x * blockDim.x + threadIdx.x;\n  \
         int b = (int)(theta[t] * n / (2 * M_PI));\n  out[b] += 1;\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let store = access_where(&out, |a| a["text"] == "out[b]" && a["op"] == "store");
    assert_eq!(store["class"], "data-dependent", "{out}");
    assert!(!out.to_string().contains("`M_PI` is not defined"), "{out}");
}

#[test]
fn a_traits_struct_built_in_a_host_template_reaches_the_kernel() {
    // HeCBench hadamard's shape: the host wrapper builds `Ktraits` from its own template
    // arguments and launches the kernel with it; the kernel reads Ktraits::kNThreads. Once this
    // recursed until the stack overflowed (kNThreads looked up in the traits struct whose
    // argument is kNThreads).
    let dir = scratch("traits");
    std::fs::write(
        dir.join("t.cu"),
        "template<int kNThreads_, typename input_t_>\nstruct traits {\n  static constexpr int kNThreads = kNThreads_;\n  using vec_t = float4;\n};\ntemplate<typename Ktraits>\n__global__ void k(float* x) {\n  constexpr int kNThreads = Ktraits::kNThreads;\n  using vec_t = typename Ktraits::vec_t;\n  x[threadIdx.x * kNThreads] = 0;\n}\ntemplate<int kNThreads, typename input_t>\nvoid launch(float* x) {\n  using Ktraits = traits<kNThreads, input_t>;\n  k<Ktraits><<<1, kNThreads>>>(x);\n}\nvoid run(float* x) { launch<128, float>(x); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let a = &out["accesses"][0];
    // 128 floats (512 bytes) between lanes, a block of 128 threads
    assert_eq!(a["sectors_per_request"], 32.0, "{out}");
    assert_eq!(a["stride_bytes"], 512, "{out}");
    assert_eq!(a["block"], serde_json::json!([128, 1, 1]), "{out}");
}

#[test]
fn a_constant_defined_through_itself_is_unknown_at_once() {
    // CUB's segmented radix sort: an enum in a kernel names its policy's member of the same
    // name, and the policy is a typedef cudalint cannot resolve. Each reading of
    // `BLOCK_THREADS` evaluated the enum again through itself until the expression was too deep
    // to evaluate (290,000 evaluations for one test file of CUB's, 4 s). Now the enum is
    // unknown for what it is: its policy's member is not found.
    let dir = scratch("self-defined");
    std::fs::write(
        dir.join("t.cu"),
        "template <bool C, typename A, typename B> struct If { typedef A Type; };\n\
         template <typename Chained, bool ALT>\n\
         __global__ void seg(const float* in, float* out) {\n  \
         typedef typename If<ALT, typename Chained::Active::Alt, typename Chained::Active::Seg>::Type P;\n  \
         enum { BLOCK_THREADS = P::BLOCK_THREADS, ITEMS = P::ITEMS, TILE = BLOCK_THREADS * ITEMS };\n  \
         for (int i = 0; i < ITEMS; ++i) out[threadIdx.x + i * BLOCK_THREADS] = in[threadIdx.x * TILE + i];\n\
         }\n\
         struct Tuning;\n\
         void host(const float* in, float* out) { seg<Tuning, false><<<1, 128>>>(in, out); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let reasons: Vec<String> = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["reason"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(reasons.len(), 2, "{out}");
    for r in &reasons {
        assert!(r.contains("`P::BLOCK_THREADS` is not defined"), "{out}");
    }
}

#[test]
fn a_member_template_defined_outside_its_class_template_binds_its_own_arguments() {
    // warp-ctc's `template <typename ProbT> template <int NT, int VT> ctcStatus_t
    // GpuCTC<ProbT>::launch_alpha_beta_kernels(...)`: the class's parameter comes first, then
    // the function's own. With only NT and VT listed, NT was taken for ProbT, VT was left a
    // run-time value (1024) and the block 256: a 32-way conflict in a program whose VT is 1
    // to 10.
    let dir = scratch("nested-template-heads");
    std::fs::write(
        dir.join("t.cu"),
        "template <int VT> __global__ void k(const float* in, float* out) {\n  \
         out[threadIdx.x] = in[threadIdx.x * VT];\n}\n\
         template <typename T> struct Runner {\n  \
         template <int NT, int VT> void launch(const float* in, float* out);\n  \
         void run(const float* in, float* out);\n};\n\
         template <typename T> template <int NT, int VT>\n\
         void Runner<T>::launch(const float* in, float* out) { k<VT><<<1, NT>>>(in, out); }\n\
         template <typename T>\n\
         void Runner<T>::run(const float* in, float* out) { launch<128, 2>(in, out); }\n\
         void go(const float* in, float* out) { Runner<float> r; r.run(in, out); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let load = access_where(&out, |a| a["op"] == "load");
    assert_eq!(load["block"], serde_json::json!([128, 1, 1]), "{out}");
    assert_eq!(load["sectors_per_request"], 8.0, "{out}");
}

#[test]
fn a_file_past_the_time_budget_is_reported_not_analysed_and_the_run_goes_on() {
    let dir = scratch("budget");
    // a generated kernel of 40,000 statements takes about two seconds to analyse
    let mut big = String::from("__global__ void big(float* o, const float* in) {\n");
    for i in 0..40_000 {
        big.push_str(&format!(
            "  o[threadIdx.x * {}] = in[threadIdx.x + {i}];\n",
            i % 7 + 1
        ));
    }
    big.push_str("}\n");
    std::fs::write(dir.join("big.cu"), big).unwrap();
    std::fs::write(dir.join("good.cu"), GOOD).unwrap();
    let r = common::run(&[
        "audit",
        "--format",
        "json",
        "--time-budget",
        "0.05",
        &s(&dir),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("big.cu: the analysis of kernel `big` ran past the time budget of 0.05 s per file and was stopped; not analysed (CL101)"),
        "{}",
        r.stderr
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let files = v["files"].as_array().unwrap();
    let file = |name: &str| {
        files
            .iter()
            .find(|f| f["file"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {}", r.stdout))
    };
    let cl101: Vec<&str> = file("big.cu")["not_analysed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        cl101,
        vec!["kernel `big` not analysed: the analysis ran past its time budget of 0.05 s per file (--time-budget) at line 1"]
    );
    // the other file is analysed as ever
    let good = v["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["file"].as_str().unwrap().ends_with("good.cu"))
        .count();
    assert_eq!((file("good.cu")["kernels"].as_u64(), good), (Some(1), 2));
    assert_eq!(
        common::run(&["check", "--time-budget", "-1", &s(&dir)]).code,
        2
    );
}

#[test]
fn a_second_run_reads_the_results_cache_and_says_when_it_cannot() {
    let dir = scratch("cache");
    std::fs::write(dir.join("a.cu"), GOOD).unwrap();
    std::fs::write(
        dir.join("cudalint.toml"),
        "[analysis]\nruntime-default = 2048\n",
    )
    .unwrap();
    let args = ["audit", "--format", "json", &s(&dir.join("a.cu"))];
    let cold = common::run(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        &s(&dir.join("a.cu")),
    ]);
    assert!(
        !dir.join(".cudalint_cache").exists(),
        "--no-cache wrote a cache"
    );
    let first = common::run(&args);
    // next to the cudalint.toml, ignoring itself as ruff's does
    let cache = dir.join(".cudalint_cache");
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore")).unwrap(),
        "# Automatically created by cudalint.\n*\n"
    );
    let second = common::run(&args);
    assert_eq!(
        (first.stdout.as_str(), second.stdout.as_str()),
        (cold.stdout.as_str(), cold.stdout.as_str())
    );
    // a corrupt entry is ignored, said once per entry, and the result is the same
    for e in std::fs::read_dir(cache.join("v3/reports"))
        .unwrap()
        .flatten()
    {
        std::fs::write(e.path(), "{\"key\": ").unwrap();
    }
    let third = common::run(&args);
    assert_eq!(third.stdout, cold.stdout);
    assert!(
        third.stderr.contains("cudalint: warning: results cache: ")
            && third.stderr.contains("not a cache entry cudalint can read"),
        "{}",
        third.stderr
    );
    // --cache-dir moves it
    let elsewhere = dir.join("elsewhere");
    let r = common::run(&[
        "check",
        "--cache-dir",
        &s(&elsewhere),
        &s(&dir.join("a.cu")),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(elsewhere.join("v3/reports").is_dir());
}

#[test]
fn a_header_anywhere_under_the_folder_given_is_found_though_no_checked_file_is_near_it() {
    // GROMACS: the kernels under src/, `#include "gromacs/utility/basedefinitions.h"` in
    // api/legacy/include, which the build adds with -I; not a git checkout (a release tarball)
    let dir = scratch("given-folder");
    let header = dir.join("api/legacy/include/gromacs/utility/basedefinitions.h");
    std::fs::create_dir_all(header.parent().unwrap()).unwrap();
    std::fs::write(
        &header,
        "#ifndef gmx_unused\n#  ifdef __GNUC__\n#    define gmx_unused __attribute__((unused))\n#  else\n#    define gmx_unused\n#  endif\n#endif\n",
    )
    .unwrap();
    let kernel = dir.join("src/ewald/k.cu");
    std::fs::create_dir_all(kernel.parent().unwrap()).unwrap();
    std::fs::write(
        &kernel,
        "#include \"gromacs/utility/basedefinitions.h\"\n__global__ void k(float3 gmx_unused a, float* out) { out[threadIdx.x * 32] = 2.0f; }\n",
    )
    .unwrap();
    assert_eq!(codes_of(&dir), ["CL201"]);
}

#[test]
fn an_angled_include_finds_a_library_header_under_an_include_folder_of_the_tree() {
    // PCL: gpu/kinfu/src/internal.h includes <pcl/gpu/containers/device_array.h>, which is in
    // gpu/containers/include (the build's -I); a system header of the same name is not looked
    // for in the tree (a bare <vector> or a name outside an include/ folder)
    let dir = scratch("angled-library");
    let header = dir.join("gpu/containers/include/pcl/gpu/ptr.h");
    std::fs::create_dir_all(header.parent().unwrap()).unwrap();
    std::fs::write(
        &header,
        "template <typename T> struct DevPtr { T* data; };\ntemplate <typename T> struct PtrStep : public DevPtr<T> {\n  size_t step;\n  __device__ T* ptr(int y) { return (T*)((char*)this->data + y * step); }\n};\n",
    )
    .unwrap();
    let kernel = dir.join("gpu/kinfu/src/cuda/maps.cu");
    std::fs::create_dir_all(kernel.parent().unwrap()).unwrap();
    std::fs::write(
        &kernel,
        "#include <vector>\n#include <pcl/gpu/ptr.h>\n__global__ void k(PtrStep<float> m) { m.ptr(blockIdx.y)[threadIdx.x * 32] = 0.f; }\n",
    )
    .unwrap();
    assert_eq!(codes_of(&dir), ["CL201"]);
}

#[test]
fn looking_for_an_operator_on_the_left_side_changes_nothing_it_does_not_call() {
    // a program with an `operator=` somewhere: every plain assignment's left side is looked at
    // for one, and that look once ran `next_slot`'s atomic as if it had happened, so the
    // `src[i]` nvcc keeps in a register (cuda-samples' warpAggregatedAtomicsCG: one LDG at the
    // `if`, none at the store) was priced as loaded again
    let dir = scratch("operator-look");
    std::fs::write(
        dir.join("f.cu"),
        "struct Pair {\n  int a;\n  __device__ Pair& operator=(const Pair& o) { a = o.a; return *this; }\n};\n__device__ int next_slot(int* n) { return atomicAdd(n, 1); }\n__global__ void filter(int* dst, int* n, const int* src) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (src[i] > 0)\n    dst[next_slot(n)] = src[i];\n}\n",
    )
    .unwrap();
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        &s(&dir.join("f.cu")),
    ]);
    let rows: Vec<(u64, &str)> = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["line"].as_u64().unwrap(), a["op"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [(5, "atomic"), (8, "load"), (9, "store")], "{out}");
}

#[test]
fn check_counts_the_accesses_that_audit_records_and_does_not_serve_an_audit_from_its_cache() {
    let dir = scratch("counted");
    std::fs::write(dir.join("a.cu"), GOOD).unwrap();
    let file = s(&dir.join("a.cu"));
    let cache = s(&dir.join("cache"));
    let cold = common::json(&["audit", "--format", "json", "--no-cache", &file]);
    let records = cold["accesses"].as_array().map_or(0, Vec::len);
    assert!(records > 0, "{cold}");
    for _ in 0..2 {
        // with --show-unanalysed, as audit runs: only what the reports keep tells them apart
        let r = common::run(&["check", "--show-unanalysed", "--cache-dir", &cache, &file]);
        assert!(
            r.stdout
                .contains(&format!("; {records} memory accesses analysed in ")),
            "{}",
            r.stdout
        );
    }
    // check's entries hold no records: the audit analyses again, and has them all
    let audit = common::json(&["audit", "--format", "json", "--cache-dir", &cache, &file]);
    assert_eq!(audit["accesses"], cold["accesses"]);
}

#[test]
fn a_launch_passing_null_pointers_keeps_the_unguarded_accesses() {
    // `k<<<1, 256>>>(0, 0, 32)`: the guard on `b` is decided (its load never runs), but the
    // store through `a` runs whatever the pointer is, and is priced as through any pointer:
    // lanes 4 bytes apart, 4 sectors. Once every access through a null argument was dropped.
    let dir = scratch("null-launch");
    std::fs::write(
        dir.join("z.cu"),
        "__global__ void k(float* a, const float* b, int n) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (b != nullptr) a[t] = b[t * 2];\n  a[t + n] = 1.0f;\n  float* row = a + 2 * t;\n  *row = 2.0f;\n  if (t < n) *(n + a + t) = 3.0f;\n}\nint main() { k<<<1, 256>>>(0, 0, 32); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("z.cu"))]);
    let rows: Vec<(u64, String, f64)> = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["line"].as_u64().unwrap(),
                a["op"].as_str().unwrap().to_string(),
                a["sectors_per_request"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    // a pointer stepped from it is the same array (lightgbm's `CUDASplitInfo* best =
    // cuda_best_split_info + i; *best = ...`): lanes 8 bytes apart, 8 sectors; a guard that
    // is not on the pointer is evaluated as any other
    assert_eq!(
        rows,
        [
            (4, "store".to_string(), 4.0),
            (6, "store".to_string(), 8.0),
            (7, "store".to_string(), 4.0)
        ],
        "{out}"
    );
}

/// transpose.cu's launches are 4,096 blocks of 16x16 (8 warps), and each access runs once per
/// thread: 32,768 requests, as ncu measured (fixtures/measured/transpose.json). The naive
/// store costs 16 sectors for an ideal 4 (12 excess), the shared read of the unpadded tile 8
/// wavefronts for 1 (7 excess), and the padded kernel's two accesses 2 for 1 each.
#[test]
fn audit_ranks_kernels_and_accesses_by_estimated_excess() {
    let v = common::json(&[
        "audit",
        "--format",
        "json",
        "--sort",
        "impact",
        "--no-cache",
        "fixtures/transpose.cu",
    ]);
    let kernels: Vec<(&str, f64)> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kernel"].as_str().unwrap(),
                k["excess_bytes"].as_f64().unwrap(),
            )
        })
        .collect();
    let requests = 32768.0;
    assert_eq!(
        kernels,
        [
            ("transpose_shared", 7.0 * requests * 128.0),
            ("transpose_naive", 12.0 * requests * 32.0),
            ("transpose", 2.0 * requests * 128.0),
        ]
    );
    let accesses = v["accesses"].as_array().unwrap();
    assert_eq!(accesses[0]["text"], "block[index_transpose]");
    assert_eq!(accesses[0]["impact"]["requests"], requests);
    assert_eq!(accesses[0]["impact"]["unit"], "wavefronts");
    let total: f64 = kernels.iter().map(|k| k.1).sum();
    let share = accesses[0]["share_of_run"].as_f64().unwrap();
    assert!((share - 7.0 * 128.0 / (7.0 * 128.0 + 12.0 * 32.0 + 2.0 * 128.0)).abs() < 1e-9);
    assert!((v["total_excess_bytes"].as_f64().unwrap() - total).abs() < 1e-6);
    // every ranked access is wasteful, costliest first
    let bytes: Vec<f64> = accesses
        .iter()
        .map(|a| a["impact"]["excess_bytes"].as_f64().unwrap())
        .collect();
    assert!(bytes.windows(2).all(|w| w[0] >= w[1]) && bytes.iter().all(|b| *b > 0.0));

    // the text ranking leads with the same kernel, and findings carry the estimate
    let text = common::run(&[
        "audit",
        "--sort",
        "impact",
        "--no-cache",
        "fixtures/transpose.cu",
    ]);
    let first = text
        .stdout
        .lines()
        .find(|l| l.starts_with("  1  "))
        .unwrap();
    assert!(first.contains("transpose_shared"), "{first}");
    let check = common::run(&["check", "--no-cache", "fixtures/transpose.cu"]);
    assert!(
        check
            .stdout
            .contains("impact: 393,216 excess sectors per launch (12.6 MB), 100% of kernel `transpose_naive`'s"),
        "{}",
        check.stdout
    );

    // SARIF: the rank is each finding's share of the run's estimated excess, in percent
    let sarif = common::json(&[
        "check",
        "--format",
        "sarif",
        "--no-cache",
        "fixtures/transpose.cu",
    ]);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let ranked: Vec<(String, f64)> = results
        .iter()
        .map(|r| {
            (
                r["properties"]["kernel"].as_str().unwrap().to_string(),
                r["rank"].as_f64().unwrap(),
            )
        })
        .collect();
    let top = ranked.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!(top.0, "transpose_shared");
    assert!((top.1 - share * 100.0).abs() < 0.01, "{ranked:?}");
    assert!((ranked.iter().map(|r| r.1).sum::<f64>() - 100.0).abs() < 0.01);
}

/// A project whose flags only its compile command knows: a macro with spaces in its value
/// (quoted), a branch picked by a response file, a header in a folder only `-I` names, and a
/// `-D` passed through to the host compiler that device code must not see.
fn compile_commands_project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("proj/src")).unwrap();
    std::fs::create_dir_all(dir.join("proj/vendor/cfg")).unwrap();
    std::fs::create_dir_all(dir.join("db")).unwrap();
    std::fs::write(dir.join("proj/vendor/cfg/base.h"), "#define BASE 0\n").unwrap();
    std::fs::write(
        dir.join("proj/src/k.cu"),
        "#include \"base.h\"\n\
         #ifdef USE_WIDE\n#define STEP STRIDE\n#else\n#define STEP 1\n#endif\n\
         __global__ void strided(float* out, const float* in) {\n  \
         int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = in[t * STEP];\n}\n\
         __global__ void host_flag(float* out) {\n  \
         int t = blockIdx.x * blockDim.x + threadIdx.x;\n\
         #ifdef HOST_ONLY\n  out[t * 16 + BASE] = 0.0f;\n#else\n  out[t + BASE] = 0.0f;\n#endif\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("proj/flags.rsp"),
        "\"-DUSE_WIDE\" -DNAME=\"a b\"\n",
    )
    .unwrap();
    let command = "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler '-DSTRIDE=(4 * 8)' \
                   -I vendor/cfg -Xcompiler -DHOST_ONLY @flags.rsp -DQUOTED=\\\"x\\\" \
                   --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu -c src/k.cu -o k.o";
    let db = serde_json::json!([{
        "directory": dir.join("proj"),
        "command": command,
        "file": "src/k.cu",
    }]);
    std::fs::write(dir.join("db/compile_commands.json"), db.to_string()).unwrap();
    dir
}

/// The strided load's stride in bytes, if it is strided, and every `unknown` access's reason.
fn stride_and_unknowns(args: &[&str]) -> (Option<i64>, Vec<String>) {
    let mut all = vec!["audit", "--no-cache", "--format", "json"];
    all.extend_from_slice(args);
    let out = common::json(&all);
    let accesses = out["accesses"].as_array().unwrap();
    let stride = accesses
        .iter()
        .find(|a| a["kernel"] == "strided" && a["op"] == "load")
        .and_then(|a| a["stride_bytes"].as_i64());
    let unknown = accesses
        .iter()
        .filter_map(|a| a["reason"].as_str().map(str::to_string))
        .collect();
    (stride, unknown)
}

#[test]
fn compile_commands_give_each_file_its_builds_flags() {
    let dir = compile_commands_project("compile-commands");
    let db = s(&dir.join("db/compile_commands.json"));
    let k = s(&dir.join("proj/src/k.cu"));
    // the response file's USE_WIDE picks the strided branch, STRIDE = (4 * 8) floats from the
    // quoted word, BASE comes from the header only -I finds, and -Xcompiler's HOST_ONLY is
    // the host compiler's: host_flag's store stays coalesced
    let r = common::run(&[
        "check",
        "--no-cache",
        "--format",
        "json",
        "--compile-commands",
        &db,
        &k,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let out: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let found: Vec<(&str, &str)> = out["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["kernel"].as_str().unwrap()))
        .collect();
    assert_eq!(found, [("CL201", "strided")], "{out}");
    assert_eq!(
        stride_and_unknowns(&["--compile-commands", &db, &k]),
        (Some(128), vec![])
    );
    // a folder holding the database will do
    assert_eq!(
        stride_and_unknowns(&["--compile-commands", &s(&dir.join("db")), &k]).0,
        Some(128)
    );
    // the command line wins over the database
    assert_eq!(
        stride_and_unknowns(&["--compile-commands", &db, "-U", "USE_WIDE", &k]).0,
        None
    );
    assert_eq!(
        stride_and_unknowns(&["--compile-commands", &db, "-D", "STRIDE=2", &k]).0,
        Some(8)
    );
    // without it: no USE_WIDE, and base.h is not found, so BASE is unknown
    let (stride, unknown) = stride_and_unknowns(&[&k]);
    assert_eq!(stride, None);
    assert!(unknown.iter().any(|r| r.contains("BASE")), "{unknown:?}");
    // cudalint.toml names it, relative to its folder; --no-compile-commands turns it off
    std::fs::write(
        dir.join("proj/cudalint.toml"),
        "compile-commands = \"../db\"\n",
    )
    .unwrap();
    assert_eq!(stride_and_unknowns(&[&k]).0, Some(128));
    assert_eq!(stride_and_unknowns(&["--no-compile-commands", &k]).0, None);
    // found by looking: in the project's build/ folder, above the file
    std::fs::remove_file(dir.join("proj/cudalint.toml")).unwrap();
    std::fs::create_dir_all(dir.join("proj/build")).unwrap();
    std::fs::rename(
        dir.join("db/compile_commands.json"),
        dir.join("proj/build/compile_commands.json"),
    )
    .unwrap();
    assert_eq!(stride_and_unknowns(&[&k]).0, Some(128));
}

#[test]
fn a_bad_compile_commands_names_the_file_and_what_is_wrong() {
    let dir = compile_commands_project("bad-compile-commands");
    let k = s(&dir.join("proj/src/k.cu"));
    let fails = |db: &str, text: Option<&str>| -> String {
        let path = dir.join(db);
        if let Some(text) = text {
            std::fs::write(&path, text).unwrap();
        }
        let r = common::run(&["check", "--compile-commands", &s(&path), &k]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(&s(&path)), "{}", r.stderr);
        r.stderr
    };
    assert!(fails("nowhere.json", None).contains("no such file"));
    assert!(fails("db/bad.json", Some("[{\"directory\": \"/\","))
        .contains("not a compilation database"));
    let e = fails(
        "db/nofile.json",
        Some("[{\"directory\": \"/\", \"arguments\": [\"nvcc\"]}]"),
    );
    assert!(e.contains("entry 1 has no `file`"), "{e}");
    let e = fails(
        "db/quote.json",
        Some("[{\"directory\": \"/\", \"file\": \"k.cu\", \"command\": \"nvcc '-DX\"}]"),
    );
    assert!(e.contains("single quote is not closed"), "{e}");
    // a cudalint.toml naming a database that is not there: its file, line and key
    std::fs::write(
        dir.join("proj/cudalint.toml"),
        "\ncompile-commands = \"gone.json\"\n",
    )
    .unwrap();
    let r = common::run(&["check", &k]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cudalint.toml:2:") && r.stderr.contains("compile-commands"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(dir.join("proj/cudalint.toml")).unwrap();
    // one found by looking that does not read: a warning, and the run goes on without it
    std::fs::create_dir_all(dir.join("proj/build")).unwrap();
    std::fs::write(dir.join("proj/build/compile_commands.json"), "{oops").unwrap();
    let r = common::run(&["check", "--no-cache", &k]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("warning")
            && r.stderr.contains("build/compile_commands.json")
            && r.stderr.contains("checked without its flags"),
        "{}",
        r.stderr
    );
    // a response file the command names that is not there: said, and the rest is used
    let db = serde_json::json!([{
        "directory": dir.join("proj"),
        "arguments": ["nvcc", "@missing.rsp", "-DUSE_WIDE", "-DSTRIDE=4", "-Ivendor/cfg", "src/k.cu"],
        "file": "src/k.cu",
    }]);
    std::fs::write(dir.join("proj/build/compile_commands.json"), db.to_string()).unwrap();
    let r = common::run(&["audit", "--no-cache", "--format", "json", &k]);
    assert!(r.stderr.contains("missing.rsp"), "{}", r.stderr);
    assert!(
        r.stdout.contains("\"stride_bytes\": 16") || r.stdout.contains("\"stride_bytes\":16"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_header_the_database_does_not_list_takes_its_includers_command() {
    // k.cuh is walked before main.cu includes it: it gets main.cu's USE_WIDE, and its own
    // include is looked for again along main.cu's -I
    let dir = scratch("compile-commands-header");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("deps/cfg")).unwrap();
    std::fs::write(dir.join("deps/cfg/step.h"), "#define WIDE_STEP 32\n").unwrap();
    std::fs::write(
        dir.join("src/k.cuh"),
        "#include \"step.h\"\n#ifdef USE_WIDE\n#define STEP WIDE_STEP\n#else\n#define STEP 1\n#endif\n\
         __global__ void k(float* out, const float* in) {\n  \
         int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = in[t * STEP];\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.cu"),
        "#include \"k.cuh\"\nvoid go(float* o, const float* i) { k<<<8, 256>>>(o, i); }\n",
    )
    .unwrap();
    let db = serde_json::json!([{
        "directory": dir,
        "arguments": ["nvcc", "-DUSE_WIDE", "-I", "deps/cfg", "-c", "src/main.cu"],
        "file": "src/main.cu",
    }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).unwrap();
    let out = common::json(&[
        "audit",
        "--no-cache",
        "--format",
        "json",
        &s(&dir.join("src")),
    ]);
    let load = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["op"] == "load")
        .cloned()
        .unwrap();
    assert!(load["file"].as_str().unwrap().ends_with("k.cuh"), "{load}");
    assert_eq!(load["stride_bytes"], 128, "{load}");
}

/// The pre-commit hook runs what it names: its `entry`, with the staged files after it, finds
/// the `cudalint` binary first on PATH and fails the commit on findings. pre-commit puts the
/// bin of the environment it pip-installed the repository into there (`language: python`,
/// which tests/wheel.rs builds and installs); here the binary just built stands in for it.
#[test]
fn the_pre_commit_hook_runs_the_binary_it_names() {
    let hooks = std::fs::read_to_string(common::root().join(".pre-commit-hooks.yaml")).unwrap();
    let field = |name: &str| {
        hooks
            .lines()
            .find_map(|l| {
                let l = l.trim();
                l.strip_prefix("- ")
                    .unwrap_or(l)
                    .strip_prefix(&format!("{name}: "))
            })
            .unwrap_or_else(|| panic!("the hook has no `{name}`"))
            .to_string()
    };
    assert_eq!(field("id"), "cudalint");
    assert_eq!(field("language"), "python");
    let entry = field("entry");
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_cudalint"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // pre-commit appends the staged file names to the entry and runs it without a shell
    let mut words = entry.split_whitespace();
    let program = words.next().unwrap();
    assert_eq!(program, "cudalint", "the hook names another binary");
    let out = std::process::Command::new(program)
        .args(words)
        .args([
            "--no-cache",
            "fixtures/transpose.cu",
            "fixtures/bank_conflicts.cu",
        ])
        .env("PATH", path)
        .current_dir(common::root())
        .output()
        .expect("the hook's entry runs with the binary on PATH");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("CL201") && stdout.contains("CL301"),
        "{stdout}"
    );
}

#[test]
fn library_searches_and_casts_to_a_deduced_type_are_values() {
    // a binary search over a pointer range (`thrust::upper_bound` in a block-mapped graph
    // advance, then `thrust::distance` back to an index) is a place the data decides: the
    // loads through the index it gives are data-dependent, not unknown; `OffsetT(0)` with
    // OffsetT deduced from an integer argument is a cast, and the search's `a[mid]` is priced
    let dir = scratch("library-searches");
    std::fs::write(
        dir.join("s.cu"),
        "#include <thrust/binary_search.h>\n#include <thrust/execution_policy.h>\ntemplate <typename OffsetT>\n__device__ OffsetT split(const int* a, OffsetT diagonal, OffsetT len) {\n  OffsetT lo = max(diagonal - len, OffsetT(0));\n  OffsetT hi = min(diagonal, len);\n  while (lo < hi) {\n    OffsetT mid = (lo + hi) >> 1;\n    if (a[mid] <= diagonal) lo = mid + 1; else hi = mid;\n  }\n  return lo;\n}\n__global__ void k(const int* degrees, const int* vertices, int* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  const int* it = thrust::upper_bound(thrust::seq, degrees, degrees + n, i);\n  int id = thrust::distance(degrees, it) - 1;\n  out[i] = vertices[id] + split(degrees, i, n);\n}\nint main() { int *d, *v, *o; k<<<64, 256>>>(d, v, o, 4096); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("s.cu"))]);
    let class_of = |text: &str| -> Vec<String> {
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["text"] == text)
            .map(|a| a["class"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(class_of("vertices[id]"), ["data-dependent"], "{out}");
    let mid = class_of("a[mid]");
    assert!(
        !mid.is_empty() && mid.iter().all(|c| c != "unknown"),
        "{out}"
    );
}

#[test]
fn a_header_redefining_cuda_keywords_for_another_compiler_leaves_the_kernels() {
    // NVIDIA Warp's `crt.h` includes `cuda_crt.h` only for a bare clang build, and that header
    // defines `__global__` as an attribute: nvcc never reads it, and every kernel of the
    // program stays a kernel
    let dir = scratch("cuda-keywords");
    std::fs::write(
        dir.join("cuda_crt.h"),
        "#pragma once\n#define __device__ __attribute__((device))\n#define __global__ __attribute__((global))\n#define __shared__ __attribute__((shared))\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("crt.h"),
        "#pragma once\n#if defined(__clang__)\n#include \"cuda_crt.h\"\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"crt.h\"\nnamespace wp {\n__global__ void fill(int* d, int n) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t < n) d[t * 2] = 0;\n}\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir)]);
    let texts: Vec<&str> = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["text"].as_str())
        .collect();
    assert_eq!(texts, ["d[t * 2]"], "{out}");
}

#[test]
fn vexing_subscripts_are_loads_and_enums_are_as_wide_as_their_type() {
    // `const R g(gamma[i]);` is a load the grammar reads as the declaration of a function
    // taking an array (TensorRT's layer norms, HOOMD's `quat<Scalar> q(d_orientation[idx])`);
    // an enum with an underlying type (`enum class E : uint8_t`, cuBQL's unnamed `typedef enum
    // : int8_t {...} NodeState;`) is as wide as that type
    let dir = scratch("vexing-and-enums");
    std::fs::write(
        dir.join("v.cu"),
        "#include <cstdint>\nenum class Mode : uint8_t { A, B };\ntypedef enum : int8_t { OPEN, DONE } NodeState;\nenum Wide : short { X };\ntemplate <typename R>\n__device__ R scaled(const R* gamma, int i) {\n  const R g(gamma[2 * i]);\n  return g;\n}\n__global__ void k(const float* gamma, float* out, Mode* m, NodeState* s, Wide* w) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = scaled<float>(gamma, t);\n  m[t] = Mode::B;\n  s[t] = DONE;\n  w[t] = X;\n}\nint main() { k<<<64, 256>>>(0, 0, 0, 0, 0); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("v.cu"))]);
    let bytes_of = |text: &str| -> Vec<i64> {
        out["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["text"] == text)
            .map(|a| a["bytes"].as_i64().unwrap_or_default())
            .collect()
    };
    assert_eq!(bytes_of("gamma[2 * i]"), [4], "{out}");
    assert_eq!(bytes_of("m[t]"), [1], "{out}");
    assert_eq!(bytes_of("s[t]"), [1], "{out}");
    assert_eq!(bytes_of("w[t]"), [2], "{out}");
}

#[test]
fn launch_sizes_kept_in_a_local_array_are_read_back_unless_a_call_is_given_the_array() {
    let dir = scratch("size-arrays");
    let kernel = "__global__ void k(float* out) { out[threadIdx.y * 64 + threadIdx.x] = 1.0f; }\n";
    let block_of = |host: &str| {
        let f = dir.join("k.cu");
        std::fs::write(&f, format!("{kernel}{host}")).unwrap();
        let out = common::json(&["audit", "--format", "json", "--no-cache", &s(&f)]);
        out["accesses"][0]["block"].clone()
    };
    // an element's value handed to printf leaves the array as the statements set it
    let read = block_of(
        "void run(float* o) {\n  size_t local[2];\n  local[0] = 64;\n  local[1] = 4;\n  printf(\"%zu\", local[0]);\n  k<<<1, dim3(local[0], local[1])>>>(o);\n}\n",
    );
    assert_eq!(read, serde_json::json!([64, 4, 1]));
    // the array itself handed to a function holds what that function wrote
    let handed = block_of(
        "void sizes(size_t* l);\nvoid run(float* o) {\n  size_t local[2];\n  local[0] = 64;\n  local[1] = 4;\n  sizes(local);\n  k<<<1, dim3(local[0], local[1])>>>(o);\n}\n",
    );
    assert_ne!(handed, serde_json::json!([64, 4, 1]));
}

#[test]
fn a_specialized_struct_for_an_unbound_type_parameter_is_the_float_one() {
    // apex's and ColossalAI's layer norm: `SharedMemory<U> shared; U* buf = shared.getPointer();`
    // with only `SharedMemory<float>` and `<double>` defined, in a kernel no launch binds. An
    // unbound type is taken as 4 bytes wide elsewhere; the `float` specialization agrees.
    let dir = scratch("unbound-specialization");
    std::fs::write(
        dir.join("t.cu"),
        "template <typename T>\nstruct SharedMemory;\n\
         template <>\nstruct SharedMemory<float> {\n  __device__ float* getPointer() {\n    \
         extern __shared__ float s_float[];\n    return s_float;\n  }\n};\n\
         template <>\nstruct SharedMemory<double> {\n  __device__ double* getPointer() {\n    \
         extern __shared__ double s_double[];\n    return s_double;\n  }\n};\n\
         template <typename U>\n__global__ void k(const U* in, U* out) {\n  \
         SharedMemory<U> shared;\n  U* buf = shared.getPointer();\n  \
         buf[threadIdx.x * 2] = in[threadIdx.x];\n  __syncthreads();\n  \
         out[threadIdx.x] = buf[threadIdx.x];\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let store = access_where(&out, |a| a["text"] == "buf[threadIdx.x * 2]");
    assert_eq!(store["space"], "shared", "{out}");
    // floats 8 bytes apart: two lanes per bank, 2 wavefronts where 1 would do
    assert_eq!(store["wavefronts_per_request"], 2.0, "{out}");
}

/// Class aliases that name each other (`using A = typename S<typename B::x>::x; using B =
/// S<typename A::x>;`, which no compiler accepts, and an editor shows while it is typed): the
/// lookups through them stop at the cycle and the run goes on, where they overflowed the stack.
#[test]
fn aliases_that_name_each_other_end_the_lookup_not_the_run() {
    let dir = scratch("alias-cycle");
    let file = dir.join("cycle.cu");
    std::fs::write(
        &file,
        "template <typename T> struct S { using x = T; };\n\
         template <typename T> struct C {\n\
         \x20 using A = typename S<typename B::x>::x;\n\
         \x20 using B = S<typename A::x>;\n\
         \x20 A* p;\n\
         \x20 __device__ C(T* q) { p = reinterpret_cast<A*>(q); }\n\
         \x20 __device__ A get(int i) { return p[i * 2]; }\n\
         };\n\
         __global__ void k(float* in, float* out) {\n\
         \x20 C<float> c(in);\n\
         \x20 out[threadIdx.x] = c.get(threadIdx.x);\n\
         }\n",
    )
    .unwrap();
    let (_, rows) = audited(&["--no-cache", &s(&file)]);
    assert!(
        rows.contains(&(
            "cycle.cu".to_string(),
            7,
            "k".to_string(),
            "load".to_string()
        )),
        "{rows:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn library_loop_macros_used_without_their_header_are_loops() {
    // FBGEMM's kernels loop with ATen's `CUDA_KERNEL_LOOP(i, n)`, whose header
    // (ATen/cuda/detail/KernelUtils.h) is not in the run: the loop variable is the grid-stride
    // index, not an unknown name. A project's own definition still wins.
    let dir = scratch("library-loops");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void invert(const int* permute, int* inverse, int n) {\n  \
         CUDA_KERNEL_LOOP(i, n) {\n    inverse[permute[i]] = i;\n  }\n}\n\
         __global__ void stride(float* out, long n) {\n  \
         CUDA_KERNEL_LOOP_TYPE(j, n, int64_t) {\n    out[2 * j] = 0;\n  }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("own.cu"),
        "#define CUDA_KERNEL_LOOP(i, n) for (int i = threadIdx.x * 4; i < (n); i += 4096)\n\
         __global__ void own(float* out, int n) {\n  CUDA_KERNEL_LOOP(i, n) { out[i] = 0; }\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir)]);
    let find = |text: &str| access_where(&out, |a| a["text"] == text);
    assert_eq!(find("permute[i]")["class"], "coalesced", "{out}");
    assert_eq!(find("out[2 * j]")["sectors_per_request"], 8.0, "{out}");
    assert_eq!(find("out[i]")["sectors_per_request"], 16.0, "{out}");
    assert!(!out.to_string().contains("is not defined"), "{out}");
}

#[test]
fn bases_that_lead_back_to_their_class_end_the_layout_not_the_run() {
    // A base found by its last name can be the class itself (`struct Foo : ns::Foo`), two
    // classes can derive from each other in a file that does not compile, and a template can
    // derive from its own instances: the layout gives up on them (unknown) and the run goes on.
    let dir = scratch("cyclic-bases");
    std::fs::write(
        dir.join("t.cu"),
        "namespace ns { struct Foo { float a; }; }\nstruct Foo : ns::Foo { float b; };\n\
         template <int N> struct R : R<N - 1> { float v; };\nstruct A : B { int x; };\n\
         struct B : A { int y; };\n\
         struct Base { float a; double d; };\nstruct Derived : Base { int x; };\n\
         __global__ void k(const Foo* p, const R<3>* r, const A* q, const Derived* d, float* o) {\n  \
         int i = threadIdx.x;\n  o[i] = p[i].b + r[i].v + q[i].x + q[i].y + d[i].x;\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let accesses = out["accesses"].as_array().unwrap();
    assert_eq!(accesses.len(), 6, "{out}");
    // the class that derives from a laid-out base: 24 bytes a lane
    let derived = accesses.iter().find(|a| a["text"] == "d[i].x").unwrap();
    assert_eq!(derived["stride_bytes"], 24, "{out}");
}

#[test]
fn launch_dims_set_in_a_comma_expression_are_the_launchs() {
    // ByteTransformer's launch macros set the configuration in one statement of commas:
    // `grid.x = heads, grid.y = rows, block.x = 128;`. The block was taken as 1x1x1.
    let dir = scratch("comma-dims");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void k(float* out) { out[threadIdx.x * 2] = 0; }\n\
         void run(float* out, int n) {\n  dim3 grid, block;\n  \
         grid.x = n / 128, block.x = 128;\n  k<<<grid, block>>>(out);\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    assert_eq!(
        out["accesses"][0]["block"],
        serde_json::json!([128, 1, 1]),
        "{out}"
    );
    assert_eq!(out["accesses"][0]["sectors_per_request"], 8.0, "{out}");
}

#[test]
fn an_assertion_macro_defined_as_nothing_reads_nothing() {
    // bladebit's `CUDA_ASSERT(expr)` is `assert(expr)` under `#if _DEBUG` and empty otherwise;
    // its `#if DBG_COUNT` block is switched on by a `#define` inside `#if 0`. A release build
    // compiles neither: no load of `a[i]`, no store to `c`.
    let dir = scratch("empty-assert");
    std::fs::write(
        dir.join("t.cu"),
        "#if _DEBUG\n#define CHECK(x) assert((x))\n#else\n#define CHECK(x)\n#endif\n\
         #if 0\n#define DBG_COUNT 1\n#endif\n\
         __global__ void k(const int* a, int* b, int* c) {\n  int i = threadIdx.x;\n  \
         CHECK(a[i] > 0);\n  b[i] = 1;\n#if DBG_COUNT\n  c[i] = 2;\n#endif\n}\n",
    )
    .unwrap();
    let (out, rows) = audited(&[&s(&dir.join("t.cu"))]);
    assert_eq!(
        rows,
        [("t.cu".to_string(), 12, "k".to_string(), "store".to_string())],
        "{out}"
    );
}

#[test]
fn a_loop_condition_on_loaded_data_reads_once_more_than_its_body_runs() {
    // rainflow counting's `while (pidx >= 2 && h[p[pidx]] > h[p[pidx - 1]])`: the condition's
    // loads run on every entry and every iteration, the body's only on iterations (measured in
    // fixtures/loop_state_branches.cu on an H200: 5.3 condition loads an entry, 1.75 bodies)
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        "fixtures/loop_state_branches.cu",
    ]);
    let cond = access_where(&out, |a| a["text"] == "history[points[pidx]]");
    let body = access_where(&out, |a| a["line"] == 13 && a["op"] == "store");
    let runs = |a: &serde_json::Value| a["impact"]["executions_per_warp"].as_f64().unwrap();
    assert_eq!(runs(&cond), runs(&body) + 64.0, "{cond}\n{body}");
    assert!(
        cond["impact"]["assumptions"]
            .to_string()
            .contains("read by the loop's condition"),
        "{cond}"
    );
    // a loop that counts to a bound leaves on its count: nothing more is read
    let dir = scratch("counted-condition");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void k(const float* in, float* out) {\n  int t = threadIdx.x;\n  \
         for (int i = 0; i < 4 && in[i * 32 + t] > 0.f; i++) out[i * 32 + t] = 1.f;\n}\n\
         int main() { k<<<1, 32>>>(0, 0); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let load = access_where(&out, |a| a["op"] == "load");
    assert_eq!(load["impact"]["executions_per_warp"], 4.0, "{out}");
    assert!(
        load["impact"]["assumptions"]
            .to_string()
            .contains("runs at most 4 times"),
        "{load}"
    );
}

#[test]
fn shared_excess_is_counted_over_nsight_computes_ideal() {
    // two doubles for the warp in one bank: 2 wavefronts where 1 would do, which the finding
    // names; ncu's ideal for a warp of 8-byte loads is 2 wavefronts, and its excessive
    // wavefronts, which the impact predicts, are 0 (fixtures/wide_shared.cu on an H200)
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        "fixtures/wide_shared.cu",
    ]);
    let pair = access_where(&out, |a| a["line"] == 21);
    assert_eq!(pair["wavefronts_per_request"], 2.0, "{pair}");
    assert_eq!(pair["ideal_wavefronts_per_request"], 1.0, "{pair}");
    assert_eq!(pair["impact"]["excess_per_request"], 0.0, "{pair}");
    // stride-2 doubles: 4 wavefronts where ncu's ideal is 2
    let strided = access_where(&out, |a| a["line"] == 30);
    assert_eq!(strided["impact"]["excess_per_request"], 2.0, "{strided}");
}

#[test]
fn a_wrappers_dim3_parameters_take_the_shape_its_callers_pass() {
    // Kaldi's `cudaF_comp_obj_deriv(dim3 Gr, dim3 Bl, ...)` launching `k<<<Gr, Bl>>>`, called
    // with `dim3(n / 256), dim3(256)`: 4,096 blocks of 256, not a shape assumed per block
    let out = common::json(&[
        "audit",
        "--format",
        "json",
        "--no-cache",
        "fixtures/loaded_structs.cu",
    ]);
    let a = access_where(&out, |a| a["kernel"] == "comp_obj_deriv");
    assert_eq!(a["block"], serde_json::json!([256, 1, 1]), "{a}");
    assert_eq!(a["impact"]["blocks"], 4096, "{a}");
    // callers that disagree leave it unknown
    let dir = scratch("dim3-wrapper");
    std::fs::write(
        dir.join("t.cu"),
        "__global__ void k(float* x) { x[threadIdx.x * 2] = 0; }\n\
         void w(dim3 g, dim3 b, float* x) { k<<<g, b>>>(x); }\n\
         void a(float* x) { w(dim3(8), dim3(128), x); }\n\
         void c(float* x) { w(dim3(8), dim3(64), x); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let a = &out["accesses"][0];
    assert!(
        a["block_source"].as_str().unwrap().contains("run time"),
        "{a}"
    );
}

#[test]
fn a_header_the_build_configures_from_a_template_is_read_from_the_template() {
    // gpuNUFFT's `configure_file(inc/config.hpp.cmake inc/config.hpp)`: a tree never built has
    // only the template, whose typedefs every kernel uses (69% of its accesses were unknown)
    let dir = scratch("configured-header");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "SET (DEBUG false)\nSET(GPU_DOUBLE_PREC OFF CACHE BOOL \"double\")\n\
         configure_file(inc/config.hpp.cmake inc/config.hpp)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inc/config.hpp.cmake"),
        "@WARNING@\n#define DEBUG @DEBUG@\n#cmakedefine GPU_DOUBLE_PREC\n\
         #ifdef GPU_DOUBLE_PREC\ntypedef double2 DType2;\n#else\ntypedef float2 DType2;\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"config.hpp\"\n__global__ void k(DType2* data, float* out) {\n  \
         int t = threadIdx.x;\n  if (DEBUG) out[0] = 0.f;\n  out[t] = data[t].x;\n}\n\
         int main() { k<<<1, 32>>>(0, 0); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", "--no-cache", &s(&dir)]);
    let x = access_where(&out, |a| a["text"] == "data[t].x");
    // float2, the precision a default build configures: 8-byte elements, 4 bytes read a lane
    assert_eq!(x["elem_type"], "float", "{out}");
    assert_eq!(x["sectors_per_request"], 8.0, "{x}");
    let files = out["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .all(|f| f["parse_errors"].as_array().unwrap().is_empty()),
        "{out}"
    );
}

#[test]
fn an_explicit_specialization_with_a_suffixed_argument_is_the_one_called() {
    // libSGM's `template <> __device__ void load_uint8_vector<16u>(...)`, called as
    // `load_uint8_vector<16u>(...)`: its 16-byte load was not reported
    let dir = scratch("suffixed-specialization");
    std::fs::write(
        dir.join("t.cu"),
        "template <unsigned N> __device__ void copy_vec(uint4* d, const uint4* s);\n\
         template <> __device__ void copy_vec<16u>(uint4* d, const uint4* s) { *d = *s; }\n\
         __global__ void k(const uint4* in, uint4* out) {\n  \
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n  copy_vec<16u>(out + i, in + i);\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let load = access_where(&out, |a| a["op"] == "load");
    assert_eq!(load["bytes"], 16, "{out}");
    assert_eq!(load["line"], 2, "{out}");
}

#[test]
fn a_template_structs_array_members_are_sized_by_the_instances_arguments() {
    // deepmd-kit's shared tiles: `auto& S = *reinterpret_cast<Smem<N, TILE>*>(smem_raw)` with
    // `float h[N][TILE + 4]`, N a kernel template value and TILE a constant local; the member
    // was not known as an array, its store read as a load of the member
    let dir = scratch("template-struct-arrays");
    std::fs::write(
        dir.join("t.cu"),
        "template <int N, int TILE>\nstruct Smem {\n  float h[N][TILE + 4];\n  float d[TILE];\n};\n\
         template <int N, int EPT>\n__global__ void bwd(const float* in, float* out) {\n  \
         constexpr int TILE = 16 * EPT;\n  extern __shared__ unsigned char smem_raw[];\n  \
         auto& S = *reinterpret_cast<Smem<N, TILE>*>(smem_raw);\n  \
         S.h[threadIdx.x % N][threadIdx.x / N] = in[threadIdx.x];\n  __syncthreads();\n  \
         out[threadIdx.x] = S.d[threadIdx.x % TILE];\n}\n\
         template <int N, int EPT>\nvoid launch(const float* in, float* out) {\n  \
         auto kernel = bwd<N, EPT>;\n  kernel<<<10, 128, 8192>>>(in, out);\n}\n\
         void run(const float* in, float* out) { launch<32, 2>(in, out); }\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    // rows of 36 floats, a lane a row: 8 banks, 4 lanes each
    let store = access_where(&out, |a| a["space"] == "shared" && a["op"] == "store");
    assert_eq!(store["wavefronts_per_request"], 4.0, "{out}");
    let load = access_where(&out, |a| a["space"] == "shared" && a["op"] == "load");
    assert_eq!(load["class"], "coalesced", "{out}");
}

#[test]
fn statement_macros_and_unrolled_loops_keep_every_access() {
    // d3q19's `SET_FLAG`, several `if` statements in one macro: all are read, not the first;
    // marchingCubes' `atomicAdd(triangles, ...)` in a loop of 3 nvcc unrolls is issued each
    // iteration, not taken for a value in a register
    let dir = scratch("macro-sequences");
    std::fs::write(
        dir.join("t.cu"),
        "#define SET2(v) if (v > 0) { a[t] = v; } if (b[t] < v) { b[t] = v; }\n\
         __global__ void k(int* a, int* b, unsigned long long* n, int v) {\n  \
         int t = threadIdx.x;\n  SET2(v)\n  \
         for (int c = 0; c < 3; ++c) atomicAdd(n, (unsigned long long)(a[t * 3 + c]));\n}\n",
    )
    .unwrap();
    let out = common::json(&["audit", "--format", "json", &s(&dir.join("t.cu"))]);
    let stores = out["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["line"] == 4 && a["op"] == "store")
        .count();
    assert_eq!(stores, 2, "{out}");
    let atomic = access_where(&out, |a| a["op"] == "atomic");
    assert_eq!(atomic["line"], 5, "{out}");
}

/// A corpus of programs, two of them with a kernel of one name (PolyBench's JACOBI1D and
/// JACOBI2D, each its own `runJacobiCUDA_kernel1`): each kernel takes its own program's
/// launch. Merged, the 2-D kernel ran under the 1-D block too, where no lane passed its
/// `i >= 1` and every access was unknown.
#[test]
fn kernels_of_one_name_in_two_programs_take_their_own_launches() {
    let dir = scratch("two-programs");
    for (folder, kernel, launch) in [
        (
            "jacobi1d",
            "__global__ void step(int n, float* A, float* B) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= 1 && i < n - 1) B[i] = A[i - 1] + A[i + 1];\n}\n",
            "void run(int n, float* A, float* B) {\n  step<<<n / 256, 256>>>(n, A, B);\n}\n",
        ),
        (
            "jacobi2d",
            "__global__ void step(int n, float* A, float* B) {\n  int i = blockIdx.y * blockDim.y + threadIdx.y;\n  int j = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= 1 && i < n - 1 && j < n) B[i * n + j] = A[i * n + j * 32];\n}\n",
            "void run(int n, float* A, float* B) {\n  dim3 block(32, 8);\n  dim3 grid(n / 32, n / 8);\n  step<<<grid, block>>>(n, A, B);\n}\n",
        ),
    ] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join("main.cu"), format!("{kernel}{launch}")).unwrap();
    }
    let out = common::json(&["audit", "--format", "json", &s(&dir)]);
    let accesses = out["accesses"].as_array().unwrap();
    let in_2d: Vec<_> = accesses
        .iter()
        .filter(|a| a["file"].as_str().unwrap().contains("jacobi2d"))
        .collect();
    assert_eq!(in_2d.len(), 2, "{in_2d:?}");
    for a in in_2d {
        assert_eq!(a["block"], serde_json::json!([32, 8, 1]), "{a}");
        assert_ne!(a["class"], "unknown", "{a}");
    }
    let in_1d = accesses
        .iter()
        .filter(|a| a["file"].as_str().unwrap().contains("jacobi1d"));
    for a in in_1d {
        assert_eq!(a["block"], serde_json::json!([256, 1, 1]), "{a}");
    }
}
