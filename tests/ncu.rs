//! `cudalint ncu` against real Nsight Compute exports: the H100 profile of
//! fixtures/examples/tile_transpose.cu, and a copy doctored to disagree in both directions.

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
    // the doctored copy says the column read has no conflict (cudalint warns: a false alarm)
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
