//! Every fixture carries its expected findings inline (`//~ CL201 sectors=32/4`, `//~^` for the
//! line above). This test fails on any finding that is not annotated and on any annotation
//! that is not produced. CL1xx findings are included: what cannot be analysed is annotated too.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
struct Expect {
    line: usize,
    code: String,
    sectors: Option<(String, String)>,
    wavefronts: Option<(String, String)>,
}

fn parse_pair(v: &str) -> Option<(String, String)> {
    let (a, b) = v.split_once('/')?;
    Some((a.to_string(), b.to_string()))
}

fn annotations(text: &str) -> Vec<Expect> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for part in line.split("//~").skip(1) {
            let carets = part.chars().take_while(|c| *c == '^').count();
            let mut words = part[carets..].split_whitespace();
            let Some(code) = words.next() else { continue };
            // measurement exceptions belong to the hardware comparison (tests/measured.rs), and
            // the compiler's to the coverage check (tests/sass_coverage.rs)
            if code.starts_with("ncu-differs") || code.starts_with("sass-differs") {
                continue;
            }
            let mut e = Expect {
                line: i + 1 - carets,
                code: code.to_string(),
                sectors: None,
                wavefronts: None,
            };
            for w in words {
                match w.split_once('=') {
                    Some(("sectors", v)) => e.sectors = parse_pair(v),
                    Some(("wavefronts", v)) => e.wavefronts = parse_pair(v),
                    _ => {}
                }
            }
            out.push(e);
        }
    }
    out
}

fn fmt(v: &serde_json::Value) -> String {
    match v.as_f64() {
        Some(x) if (x - x.round()).abs() < 1e-9 => format!("{}", x.round() as i64),
        Some(x) => format!("{x:.2}").trim_end_matches('0').to_string(),
        None => "-".into(),
    }
}

fn cuda_files(dir: &Path) -> Vec<PathBuf> {
    files_with(dir, &["cu", "cuh"])
}

fn files_with(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
        })
        .collect();
    v.sort();
    v
}

/// Runs `check` on one unit (a file, or a folder whose files launch each other's kernels).
fn check_unit(target: &Path, files: &[PathBuf]) -> Vec<String> {
    let root = common::root();
    let rel = target
        .strip_prefix(&root)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = common::all_findings(&rel);
    let diags = out["diagnostics"].as_array().cloned().unwrap_or_default();
    let mut expected: BTreeMap<String, Vec<Expect>> = BTreeMap::new();
    for f in files {
        let key = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        expected.insert(key, annotations(&std::fs::read_to_string(f).unwrap()));
    }
    let mut problems = Vec::new();
    for d in &diags {
        let file = d["at"]["file"].as_str().unwrap_or("").to_string();
        let line = d["at"]["line"].as_u64().unwrap_or(0) as usize;
        let code = d["code"].as_str().unwrap_or("");
        let fig = &d["figures"];
        let sectors = (
            fmt(&fig["sectors_per_request"]),
            fmt(&fig["ideal_sectors_per_request"]),
        );
        let waves = (
            fmt(&fig["wavefronts_per_request"]),
            fmt(&fig["ideal_wavefronts_per_request"]),
        );
        let list = expected.entry(file.clone()).or_default();
        let pos = list.iter().position(|e| {
            e.line == line
                && e.code == code
                && e.sectors.as_ref().is_none_or(|s| *s == sectors)
                && e.wavefronts.as_ref().is_none_or(|w| *w == waves)
        });
        match pos {
            Some(i) => {
                list.remove(i);
            }
            None => problems.push(format!(
                "{file}:{line}: unexpected {code} (sectors={}/{} wavefronts={}/{}): {}",
                sectors.0,
                sectors.1,
                waves.0,
                waves.1,
                d["message"].as_str().unwrap_or("")
            )),
        }
    }
    for (file, left) in expected {
        for e in left {
            problems.push(format!(
                "{file}:{}: expected {} {:?} {:?} was not reported",
                e.line, e.code, e.sectors, e.wavefronts
            ));
        }
    }
    problems
}

#[test]
fn every_fixture_finding_is_annotated_and_every_annotation_found() {
    let root = common::root();
    let fixtures = root.join("fixtures");
    let mut problems = Vec::new();
    let mut units = 0;
    for f in cuda_files(&fixtures) {
        problems.extend(check_unit(&f, std::slice::from_ref(&f)));
        units += 1;
    }
    for entry in std::fs::read_dir(&fixtures).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "measured") {
            // a folder's headers carry expectations too: their device code is reported in them
            let files = files_with(&p, &["cu", "cuh", "h", "hpp"]);
            if files
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == "cu"))
            {
                problems.extend(check_unit(&p, &files));
                units += 1;
            }
        }
    }
    assert!(units >= 8, "expected the fixture set, found {units} units");
    assert!(
        problems.is_empty(),
        "{} fixture mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_annotation_parser_reads_carets_and_several_per_line() {
    let a = annotations("x\ny; //~ CL201 sectors=32/4 //~ CL301 wavefronts=2/1\n//~^^ CL203\n");
    assert_eq!(a.len(), 3);
    assert_eq!(a[0].line, 2);
    assert_eq!(a[0].sectors, Some(("32".into(), "4".into())));
    assert_eq!(a[1].code, "CL301");
    assert_eq!(a[2].line, 1);
}
