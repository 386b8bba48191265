//! A real build's flags: CMake configures a small CUDA project of two targets, one built with
//! `-DUSE_WIDE_STRIDE` and one without, and writes compile_commands.json
//! (`CMAKE_EXPORT_COMPILE_COMMANDS=ON`); cudalint, run in the project, finds it and reads each
//! file with its own target's flags. CMake comes from Debian (`.ci/run` installs it) and nvcc,
//! which CMake needs to enable the CUDA language, from PyPI through
//! `tools/compile-fixtures.sh --print-nvcc`. On CI (`CI` set) a missing tool fails the test;
//! elsewhere the test says so and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::missing;

fn nvcc() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(common::root().join("tools/compile-fixtures.sh"))
        .arg("--print-nvcc")
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || path.is_empty() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(PathBuf::from(path))
}

const CMAKE_LISTS: &str = "cmake_minimum_required(VERSION 3.18)
project(strides LANGUAGES CUDA)
# the tuning header is in a folder only -I names: cudalint must take it from the build
add_library(wide OBJECT src/wide.cu)
target_compile_definitions(wide PRIVATE USE_WIDE_STRIDE)
target_include_directories(wide PRIVATE third_party/tuning)
add_library(narrow OBJECT src/narrow.cu)
target_include_directories(narrow PRIVATE third_party/tuning)
";

const TUNING: &str = "#pragma once\n#define WIDE_STRIDE 32\n";

/// A kernel whose access is strided by 32 floats (uncoalesced) in one branch and contiguous in
/// the other.
fn kernel(name: &str) -> String {
    format!(
        "#include \"tuning.cuh\"\n\
         #ifdef USE_WIDE_STRIDE\n#define STRIDE WIDE_STRIDE\n#else\n#define STRIDE 1\n#endif\n\
         __global__ void {name}(float* out, const float* in) {{\n  \
         int t = blockIdx.x * blockDim.x + threadIdx.x;\n  \
         out[t] = 2.0f * in[t * STRIDE];\n}}\n\
         void launch_{name}(float* out, const float* in) {{ {name}<<<64, 256>>>(out, in); }}\n"
    )
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// (file name, code, message) of every finding of `cudalint check` run in `dir`.
fn findings(dir: &Path, extra: &[&str]) -> Vec<(String, String, String)> {
    let out = common::cudalint()
        .args([
            "check",
            "--no-cache",
            "--format",
            "json",
            "--fail-on",
            "never",
        ])
        .args(extra)
        .arg("src")
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["at"]["file"].as_str().unwrap();
            let name = Path::new(file).file_name().unwrap().to_string_lossy();
            (
                name.into_owned(),
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn each_file_follows_the_branch_its_cmake_target_compiles() {
    let cmake = Command::new("cmake").arg("--version").output();
    if !cmake.is_ok_and(|o| o.status.success())
        && missing("cmake is needed for this test: apt-get install cmake (.ci/run does)")
    {
        return;
    }
    let Some(nvcc) = nvcc() else {
        missing("nvcc is needed for CMake's CUDA language: tools/compile-fixtures.sh installs it from PyPI");
        return;
    };
    let dir = std::env::temp_dir().join(format!("cudalint-cmake-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir, "CMakeLists.txt", CMAKE_LISTS);
    write(&dir, "third_party/tuning/tuning.cuh", TUNING);
    write(&dir, "src/wide.cu", &kernel("wide_k"));
    write(&dir, "src/narrow.cu", &kernel("narrow_k"));
    let configure = Command::new("cmake")
        .arg("-S")
        .arg(&dir)
        .arg("-B")
        .arg(dir.join("build"))
        .arg("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
        .arg(format!("-DCMAKE_CUDA_COMPILER={}", nvcc.display()))
        .output()
        .unwrap();
    assert!(
        configure.status.success(),
        "cmake could not configure the CUDA project:\n{}{}",
        String::from_utf8_lossy(&configure.stdout),
        String::from_utf8_lossy(&configure.stderr)
    );
    // what CMake wrote for CUDA: nvcc's command lines, the define on one target only
    let db = std::fs::read_to_string(dir.join("build/compile_commands.json")).unwrap();
    let entries: serde_json::Value = serde_json::from_str(&db).unwrap();
    let command = |file: &str| -> String {
        entries
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["file"].as_str().unwrap().ends_with(file))
            .map(|e| e["command"].as_str().unwrap_or_default().to_string())
            .unwrap_or_else(|| panic!("no entry for {file}: {db}"))
    };
    assert!(command("wide.cu").contains("-DUSE_WIDE_STRIDE"), "{db}");
    assert!(!command("narrow.cu").contains("USE_WIDE_STRIDE"), "{db}");

    // found in the run's build/ folder: the strided branch only where the target defines it,
    // with the stride of the header found through the target's -I (32 floats, 128 bytes)
    let found = findings(&dir, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let (file, code, message) = &found[0];
    assert_eq!(
        (file.as_str(), code.as_str()),
        ("wide.cu", "CL201"),
        "{found:?}"
    );
    assert!(message.contains("32 sectors per request"), "{message}");
    let audit = common::cudalint()
        .args(["audit", "--no-cache", "--format", "json", "src/wide.cu"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let audit: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
    let strides: Vec<i64> = audit["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["stride_bytes"].as_i64())
        .collect();
    assert_eq!(strides, [128], "{audit}");

    // named, from elsewhere: the same
    let named = common::cudalint()
        .args([
            "check",
            "--no-cache",
            "--format",
            "json",
            "--fail-on",
            "never",
        ])
        .arg("--compile-commands")
        .arg(dir.join("build"))
        .arg(dir.join("src"))
        .output()
        .unwrap();
    let named: serde_json::Value = serde_json::from_slice(&named.stdout).unwrap();
    let files: Vec<&str> = named["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["at"]["file"].as_str().unwrap())
        .collect();
    assert!(files.len() == 1 && files[0].ends_with("wide.cu"), "{named}");

    // without the database, CMakeLists.txt names the macro, so both files keep the first
    // branch on a guess, and the header only -I finds is not read: both loads are unknown
    let guessed = common::cudalint()
        .args([
            "audit",
            "--no-cache",
            "--format",
            "json",
            "--no-compile-commands",
            "src",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let guessed: serde_json::Value = serde_json::from_slice(&guessed.stdout).unwrap();
    let unknown: Vec<&str> = guessed["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| {
            a["reason"]
                .as_str()
                .is_some_and(|r| r.contains("WIDE_STRIDE"))
        })
        .map(|a| a["file"].as_str().unwrap())
        .collect();
    assert_eq!(unknown, ["src/narrow.cu", "src/wide.cu"], "{guessed}");
    let _ = std::fs::remove_dir_all(&dir);
}
