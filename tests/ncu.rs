//! `cudalint ncu` against real Nsight Compute exports: the H100 profile of
//! fixtures/examples/tile_transpose.cu, a copy doctored to disagree in both directions, and an
//! H200 profile of a kernel file another file includes (tests/data/ncu/included).

mod common;

#[test]
fn a_real_profile_agrees_line_by_line() {
    let r = common::run(&["ncu", "tests/data/ncu/tile_transpose.csv"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("4 measured lines: 4 agree"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("32/1") && r.stdout.contains("tile[threadIdx.x][threadIdx.y + j]"),
        "{}",
        r.stdout
    );
}

#[test]
fn disagreements_are_named_both_ways() {
    // the doctored copy says the column read has no conflict, its n-way 1 and one wavefront
    // a request (cudalint warns: a false alarm)
    // and the row-wise store costs 16 sectors (cudalint says 4: waste it missed)
    let r = common::run(&["ncu", "tests/data/ncu/tile_transpose.doctored.csv"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("FALSE ALARM"), "{}", r.stdout);
    assert!(r.stdout.contains("MISSED"), "{}", r.stdout);
    assert!(
        r.stdout.contains("1 missed") && r.stdout.contains("1 false alarms"),
        "{}",
        r.stdout
    );
}

#[test]
fn what_is_not_an_export_is_refused_with_the_command_to_make_one() {
    let r = common::run(&["ncu", "README.md"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("README.md") && r.stderr.contains("--page source --csv"),
        "{}",
        r.stderr
    );
    let r = common::run(&["ncu", "no/such/report.csv"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no/such/report.csv"), "{}", r.stderr);
}

#[test]
fn a_kernel_file_another_includes_is_priced_with_its_includers_macros() {
    // the profile names only kernels.cu; its `TILE` and its launch are main.cu's, which
    // includes it: each of the eight lines is priced, where seven were "not priced"
    let r = common::run(&[
        "ncu",
        "tests/data/ncu/included.csv",
        "--root",
        "tests/data/ncu/included",
        "--no-cache",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("8 measured lines: 8 agree"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("src[TILE / 2]"), "{}", r.stdout);
}
