//! `check --fix` on every fixture, in a copy: fixtures with a proven padding fix must come out
//! exactly as tests/data/fixed/<name>.fixed.cu (written by hand from the padding that lane
//! evaluation proves, not from cudalint's output); every other fixture must be left byte for
//! byte as it was. The fixed files must still parse and lose their conflicts.

mod common;

use std::path::PathBuf;

fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![common::root().join("fixtures")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn fix_every_fixture_matches_the_fixed_expectations() {
    let root = common::root();
    let work = std::env::temp_dir().join(format!("cudalint-fix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let mut fixed = 0;
    for f in fixtures() {
        let rel = f.strip_prefix(root.join("fixtures")).unwrap();
        let copy = work.join(rel);
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        // the folder's other files (headers, launches) travel along
        for sib in std::fs::read_dir(f.parent().unwrap()).unwrap().flatten() {
            if sib.path().is_file() {
                std::fs::copy(sib.path(), copy.parent().unwrap().join(sib.file_name())).unwrap();
            }
        }
        let before = std::fs::read_to_string(&copy).unwrap();
        let r = common::run(&[
            "check",
            "--fix",
            "--fail-on",
            "never",
            copy.to_str().unwrap(),
        ]);
        assert!(
            !r.stderr.contains("not fixed"),
            "{}: {}",
            f.display(),
            r.stderr
        );
        let after = std::fs::read_to_string(&copy).unwrap();
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let expected = root
            .join("tests/data/fixed")
            .join(format!("{name}.fixed.cu"));
        if expected.exists() {
            assert_eq!(
                after,
                std::fs::read_to_string(&expected).unwrap(),
                "{} fixed differently than expected",
                f.display()
            );
            assert!(r.stderr.contains("cudalint: fixed"), "{}", r.stderr);
            // fixed: no bank conflict is left on the padded tile, and it still parses
            let out = common::all_findings(copy.to_str().unwrap());
            let conflicts = out["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["code"] == "CL301" || d["code"] == "CL101")
                .count();
            let before_conflicts = common::json(&[
                "check",
                "--format",
                "json",
                "--fail-on",
                "never",
                f.to_str().unwrap(),
            ])["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["code"] == "CL301")
                .count();
            assert!(
                conflicts < before_conflicts,
                "{}: the fix removed no conflict",
                f.display()
            );
            fixed += 1;
        } else {
            assert_eq!(
                after,
                before,
                "{} changed without a .fixed.cu expectation",
                f.display()
            );
        }
    }
    assert_eq!(
        fixed, 6,
        "bank_conflicts, tile_transpose, probe, preprocessor, wrapper_objects and \
         inherited_members have proven paddings"
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn diff_shows_the_fix_without_writing() {
    let r = common::run(&["check", "--diff", "fixtures/examples/tile_transpose.cu"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("-  __shared__ float tile[TILE_DIM][TILE_DIM];"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("+  __shared__ float tile[TILE_DIM][TILE_DIM + 1];"),
        "{}",
        r.stdout
    );
    let still = std::fs::read_to_string(common::root().join("fixtures/examples/tile_transpose.cu"))
        .unwrap();
    assert!(still.contains("tile[TILE_DIM][TILE_DIM];"));
}

#[test]
fn a_file_that_is_not_utf8_is_checked_but_never_written() {
    let dir = std::env::temp_dir().join(format!("cudalint-fix-latin1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.cu");
    // a Latin-1 comment above a transpose whose padding is proven
    let mut src = b"// r\xe9sultat transpos\xe9\n".to_vec();
    src.extend_from_slice(
        b"__global__ void t(const float* in, float* out) {\n  __shared__ float tile[32][32];\n  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];\n  __syncthreads();\n  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\nvoid go(const float* i, float* o) { t<<<1, dim3(32, 32)>>>(i, o); }\n",
    );
    std::fs::write(&path, &src).unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = common::run(&["check", "--fail-on", "never", &p]);
    assert!(
        r.stdout.contains("CL301"),
        "checked all the same:\n{}",
        r.stdout
    );
    let r = common::run(&["check", "--fix", "--fail-on", "never", &p]);
    assert!(
        r.stderr.contains("not fixed: ") && r.stderr.contains("2 bytes are not valid UTF-8"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), src, "the file was written");
    let _ = std::fs::remove_dir_all(&dir);
}
