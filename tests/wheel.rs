//! The Python wheel, as CUDA developers install tools: maturin (from PyPI, at the version
//! pyproject.toml's `[build-system]` asks for) builds the `cudalint` wheel from pyproject.toml,
//! the wheel goes into a fresh virtual environment, and the `cudalint` it puts on that
//! environment's PATH prints the crate's version and finds a fixture's finding. Then the
//! pre-commit hook as pre-commit runs a `language: python` hook: `pip install` of the
//! repository into another fresh environment (maturin as the build backend), and the hook's
//! `entry` with the staged file names after it, that environment's bin first on PATH.
//!
//! The builds reuse the test's target folder (`CARGO_TARGET_DIR`, else the workspace's
//! `target/`), so only the first run compiles. Python 3 with its venv module comes from the
//! system (`.ci/run` installs Debian's python3-venv where it is missing) and maturin from PyPI.
//! On CI (`CI` set) a missing tool fails the test; elsewhere the test says so and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::missing;

/// The target folder cargo builds this test in, which maturin and pip's build reuse.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| common::root().join("target"))
}

fn output(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"))
}

/// Runs `cmd`, failing the test with its output when it fails.
fn ok(cmd: &mut Command) -> Output {
    let out = output(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} exited with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh virtual environment at `dir`, or why there is none.
fn venv(dir: &Path) -> Result<PathBuf, String> {
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(dir)
        .output()
        .map_err(|e| format!("python3 is needed for this test ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "python3's venv module is needed for this test: apt-get install python3-venv \
             (.ci/run does): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(dir.join("bin"))
}

/// `pip install ARGS` in the environment whose bin is `bin`, with the test's target folder.
fn pip_install(bin: &Path, args: &[&std::ffi::OsStr]) -> Output {
    output(
        Command::new(bin.join("pip"))
            .args(["install", "--disable-pip-version-check"])
            .args(args)
            .env("CARGO_TARGET_DIR", target_dir())
            .current_dir(common::root()),
    )
}

/// The requirements of pyproject.toml's `[build-system]` (`requires = [...]` on one line).
fn build_requires(pyproject: &str) -> Vec<String> {
    let line = pyproject
        .lines()
        .skip_while(|l| l.trim() != "[build-system]")
        .find_map(|l| l.trim().strip_prefix("requires = "))
        .expect("pyproject.toml's [build-system] has `requires = [...]` on one line");
    // the quoted strings (a requirement holds commas: "maturin>=1.5,<2")
    let reqs: Vec<String> = line
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(!reqs.is_empty(), "empty [build-system] requires: {line}");
    reqs
}

/// A field of the one hook in .pre-commit-hooks.yaml (`key: value` lines).
fn hook_field(hooks: &str, name: &str) -> String {
    hooks
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("- ")
                .unwrap_or(l)
                .strip_prefix(&format!("{name}: "))
        })
        .unwrap_or_else(|| panic!(".pre-commit-hooks.yaml's hook has no `{name}`"))
        .trim()
        .to_string()
}

#[test]
fn the_wheel_installs_a_cudalint_that_runs_and_the_python_hook_uses_it() {
    let root = common::root();
    let version = env!("CARGO_PKG_VERSION");
    let dir = std::env::temp_dir().join(format!("cudalint-wheel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // 1. maturin from PyPI into a fresh environment, as pyproject.toml's build system names it
    let build = match venv(&dir.join("build")) {
        Ok(bin) => bin,
        Err(why) => {
            missing(&why);
            return;
        }
    };
    let pyproject = std::fs::read_to_string(root.join("pyproject.toml")).unwrap();
    let requires = build_requires(&pyproject);
    assert!(
        requires.iter().any(|r| r.starts_with("maturin")),
        "the build system is not maturin: {requires:?}"
    );
    let got = pip_install(
        &build,
        &requires
            .iter()
            .map(std::ffi::OsStr::new)
            .collect::<Vec<_>>(),
    );
    if !got.status.success() {
        missing(&format!(
            "maturin could not be installed from PyPI ({requires:?}): {}",
            String::from_utf8_lossy(&got.stderr).trim()
        ));
        return;
    }

    // 2. the wheel, built from pyproject.toml in the repository root (in the profile it names,
    // as pip's build is)
    let dist = dir.join("dist");
    ok(Command::new(build.join("maturin"))
        .args(["build", "--out"])
        .arg(&dist)
        .env("CARGO_TARGET_DIR", target_dir())
        .current_dir(&root));
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel expected: {wheels:?}");
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("cudalint-{version}-")),
        "the wheel is not cudalint {version}: {name}"
    );

    // 3. the wheel alone (no index) into a second fresh environment
    let app = venv(&dir.join("app")).unwrap();
    ok(Command::new(app.join("pip")).args([
        std::ffi::OsStr::new("install"),
        "--disable-pip-version-check".as_ref(),
        "--no-index".as_ref(),
        wheel.as_os_str(),
    ]));
    let cudalint = app.join("cudalint");
    assert!(
        cudalint.is_file(),
        "the wheel put no {}",
        cudalint.display()
    );
    // the shipped binary carries no debug info (the release profile's made it 84 MB)
    let size = std::fs::metadata(&cudalint).unwrap().len();
    assert!(
        size < 40 << 20,
        "the installed binary is {} MB: built with debug info?",
        size >> 20
    );

    // (a) the crate's version
    let out = ok(Command::new(&cudalint).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("cudalint {version}")
    );

    // (b) a fixture's known finding, with the findings exit code (1, README "Exit codes")
    let out = output(
        Command::new(&cudalint)
            .args(["check", "--no-cache", "fixtures/transpose.cu"])
            .current_dir(&root),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("warning[CL201]") && stdout.contains("fixtures/transpose.cu"),
        "{stdout}"
    );

    // (c) the pre-commit hook: a `language: python` hook is pre-commit's `pip install .` of
    // the repository into an environment of its own, then the hook's `entry` with the staged
    // file names after it (no shell), that environment's bin first on PATH
    let hooks = std::fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap();
    assert_eq!(hook_field(&hooks, "id"), "cudalint");
    assert_eq!(hook_field(&hooks, "language"), "python");
    let files = hook_field(&hooks, "files");
    assert_eq!(files, r"\.(cu|cuh)$", "the hook checks other files");
    let entry = hook_field(&hooks, "entry");
    let hook = venv(&dir.join("hook")).unwrap();
    let got = pip_install(&hook, &[root.as_os_str()]);
    assert!(
        got.status.success(),
        "pip install of the repository failed:\n{}\n{}",
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(&got.stderr)
    );
    let mut words = entry.split_whitespace();
    let program = words.next().unwrap();
    assert!(
        hook.join(program).is_file(),
        "the hook's entry names `{program}`, which pip install of the repository did not put in {}",
        hook.display()
    );
    // a project of the user's, with two staged CUDA files
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    for f in ["transpose.cu", "bank_conflicts.cu"] {
        std::fs::copy(root.join("fixtures").join(f), project.join("src").join(f)).unwrap();
    }
    let path = format!(
        "{}:{}",
        hook.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = output(
        Command::new(program)
            .args(words)
            .args(["src/transpose.cu", "src/bank_conflicts.cu"])
            .env("PATH", path)
            .current_dir(&project),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the hook must fail the commit on findings:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("warning[CL201]") && stdout.contains("warning[CL301]"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
