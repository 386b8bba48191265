//! The compiler is the judge of where memory is accessed and how wide: for every fixture,
//! each global and shared memory instruction nvcc emits (`nvcc -cubin -lineinfo`, read with
//! `nvdisasm -g -gi`) must have an access of cudalint's of that space and operation on its
//! line or along its inline chain, each access of cudalint's in a kernel nvcc compiled must
//! have such an instruction, and the widths must be ones nvcc issues there. A difference the
//! fixture explains next to the line (`//~ sass-differs: reason`) is counted, not failed.
//! The work is `tools/coverage/sass_coverage.py`; nvcc and nvdisasm come from PyPI through
//! `tools/compile-fixtures.sh` (`.ci/run` runs it first).

mod common;

use std::process::Command;

fn tool(args: &[&str]) -> std::process::Output {
    let root = common::root();
    Command::new("python3")
        .arg(root.join("tools/coverage/sass_coverage.py"))
        .args(args)
        .current_dir(&root)
        .output()
        .expect("python3 is needed to run tools/coverage/sass_coverage.py")
}

#[test]
fn the_disassembly_reader_knows_chains_widths_and_folded_locations() {
    let out = tool(&["selftest"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_fixture_matches_what_nvcc_emits() {
    let out = tool(&["fixtures", "--cudalint", env!("CARGO_BIN_EXE_cudalint")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}{}\n(nvcc and nvdisasm: run tools/compile-fixtures.sh once, it installs them)",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("sass coverage of the fixtures:"),
        "no summary: {stdout}"
    );
}
