//! Shared by the integration tests: where things are and how to run the binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

pub fn cudalint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cudalint"))
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Run {
    let out = cudalint()
        .args(args)
        .current_dir(root())
        .output()
        .expect("cudalint runs");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "cudalint panicked on {args:?}:\n{}",
        run.stderr
    );
    run
}

pub fn json(args: &[&str]) -> serde_json::Value {
    let r = run(args);
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{args:?} gave no JSON ({e}):\n{}\n{}", r.stdout, r.stderr))
}

/// A figure as an integer key (hundredths), so that 4.75 and 4.750001 compare equal.
pub fn key(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

/// The figures of a JSON array as a set of keys.
pub fn set(v: &serde_json::Value) -> std::collections::BTreeSet<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).map(key).collect())
        .unwrap_or_default()
}

pub fn show(s: &std::collections::BTreeSet<i64>) -> String {
    let v: Vec<String> = s
        .iter()
        .map(|x| {
            if x % 100 == 0 {
                format!("{}", x / 100)
            } else {
                format!("{:.2}", *x as f64 / 100.0)
            }
        })
        .collect();
    format!("{{{}}}", v.join(","))
}

/// Every finding for a target, CL1xx included, as JSON, whatever the exit code.
pub fn all_findings(target: &str) -> serde_json::Value {
    json(&[
        "check",
        "--format",
        "json",
        "--show-unanalysed",
        "--fail-on",
        "never",
        target,
    ])
}

/// Whether a missing tool should be a failure: on CI it must not skip silently.
pub fn on_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `why` on CI is a failure; here, the test is skipped with the reason printed.
pub fn missing(why: &str) -> bool {
    assert!(!on_ci(), "{why} (CI is set, so this is a failure)");
    eprintln!("skipped: {why}");
    true
}
