//! The hardware is the judge, for every fixture: `cudalint audit` of each fixture must give,
//! for every (line, space, op) that Nsight Compute measured (fixtures/measured/<name>.json,
//! made by tools/measure/), the same sectors per request and ideal (global) and the same
//! wavefronts per request (shared). A fixture changed since its measurement fails until it is
//! measured again. Where the compiler does what the model does not (vectorising an unrolled
//! loop, filing an inlined access under the call line), the fixture says so next to the line:
//! `//~ ncu-differs: reason`; those records are counted and printed, not compared.

mod common;

use common::{key, set, show};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// An unrolled loop is one instruction per iteration, each with its own figure; cudalint
/// prices the source access as the mean over iterations. One prediction equal to the line's
/// per-request mean (weighted by instructions executed) agrees with it.
fn matches_mean(predicted: &BTreeSet<i64>, record: &serde_json::Value) -> bool {
    match (predicted.len(), record["mean_per_request"].as_f64()) {
        (1, Some(m)) => predicted.iter().all(|p| (p - key(m)).abs() <= 1),
        _ => false,
    }
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The sha256 of a source with its `//~` annotations left out, as csv2json.py computes it:
/// an expectation written next to a line is not code, and needs no new measurement.
fn code_digest(text: &str) -> String {
    let code: String = text
        .split_inclusive('\n')
        .map(|line| match line.find("//~") {
            Some(at) => {
                let nl = if line.ends_with('\n') { "\n" } else { "" };
                format!("{}{nl}", line[..at].trim_end_matches([' ', '\t']))
            }
            None => line.to_string(),
        })
        .collect();
    hex(code.as_bytes())
}

/// Lines carrying `//~ ncu-differs: reason` (or `//~^ ncu-differs` for the line above).
fn exceptions(text: &str) -> BTreeMap<u64, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        for part in line.split("//~").skip(1) {
            let carets = part.chars().take_while(|c| *c == '^').count();
            if let Some(reason) = part[carets..].trim_start().strip_prefix("ncu-differs:") {
                out.insert((i + 1 - carets) as u64, reason.trim().to_string());
            }
        }
    }
    out
}

#[test]
fn audit_agrees_with_ncu_on_every_measured_fixture() {
    let root = common::root();
    let mut measured: Vec<_> = std::fs::read_dir(root.join("fixtures/measured"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_stem().is_some_and(|s| s != "probe")
        })
        .collect();
    measured.sort();
    assert!(
        measured.len() >= 10,
        "expected measurements of the fixtures, found {}",
        measured.len()
    );
    let (mut total, mut agree, mut excused) = (0, 0, 0);
    let mut table = Vec::new();
    let mut stale = Vec::new();
    for m in &measured {
        let data: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(m).unwrap()).unwrap();
        let fixture = data["fixture"].as_str().unwrap();
        let source = std::fs::read(root.join(fixture))
            .unwrap_or_else(|_| panic!("{} names a missing fixture {fixture}", m.display()));
        let text = String::from_utf8_lossy(&source);
        let same = data["source_sha256"].as_str() == Some(hex(&source).as_str())
            || data["code_sha256"].as_str() == Some(code_digest(&text).as_str());
        // the headers whose lines were measured too (a kernel or helper in `kernels.h`)
        let folder = root.join(fixture);
        let folder = folder.parent().unwrap();
        let headers_same = data["headers"].as_object().is_none_or(|h| {
            h.iter().all(|(name, digest)| {
                std::fs::read_to_string(folder.join(name))
                    .is_ok_and(|t| digest.as_str() == Some(code_digest(&t).as_str()))
            })
        });
        if !same || !headers_same {
            stale.push(format!(
                "{fixture} changed since {} was measured: re-measure (tools/measure/)",
                m.display()
            ));
            continue;
        }
        let excepted = exceptions(&String::from_utf8_lossy(&source));
        let audit = common::json(&["audit", "--format", "json", fixture]);
        let accesses = audit["accesses"].as_array().unwrap();
        for r in data["records"].as_array().unwrap() {
            let line = r["line"].as_u64().unwrap();
            let (space, op) = (r["space"].as_str().unwrap(), r["op"].as_str().unwrap());
            total += 1;
            if let Some(reason) = excepted.get(&line) {
                excused += 1;
                table.push(format!(
                    "{fixture}:{line} {space} {op}: excepted ({reason})"
                ));
                continue;
            }
            let file = r["file"].as_str().unwrap_or("");
            let kind = |a: &&serde_json::Value| {
                a["space"] == space
                    && a["op"] == op
                    && a["file"].as_str().is_some_and(|f| f.ends_with(file))
            };
            let mut mine: Vec<&serde_json::Value> = accesses
                .iter()
                .filter(kind)
                .filter(|a| a["line"].as_u64() == Some(line))
                .collect();
            // a load hoisted out of its loop is filed under a line from the loop's head to
            // its own
            if mine.is_empty() {
                mine = accesses
                    .iter()
                    .filter(kind)
                    .filter(|a| {
                        let head = a["issued_at"]["line"].as_u64().unwrap_or(u64::MAX);
                        head <= line && Some(line) < a["line"].as_u64()
                    })
                    .collect();
            }
            let ok = if space == "global" {
                let p: BTreeSet<i64> = mine
                    .iter()
                    .filter_map(|a| a["sectors_per_request"].as_f64())
                    .map(key)
                    .collect();
                let pi: BTreeSet<i64> = mine
                    .iter()
                    .filter_map(|a| a["ideal_sectors_per_request"].as_f64())
                    .map(key)
                    .collect();
                let ok = (p == set(&r["sectors_per_request"]) || matches_mean(&p, r))
                    && pi == set(&r["ideal_sectors_per_request"]);
                if !ok {
                    table.push(format!(
                        "{fixture}:{line} {space} {op}: predicted {}/{} measured {}/{}",
                        show(&p),
                        show(&pi),
                        show(&set(&r["sectors_per_request"])),
                        show(&set(&r["ideal_sectors_per_request"]))
                    ));
                }
                ok
            } else {
                let p: BTreeSet<i64> = mine
                    .iter()
                    .filter_map(|a| a["wavefronts_per_request"].as_f64())
                    .map(key)
                    .collect();
                let ok = p == set(&r["nway"]) || matches_mean(&p, r);
                if !ok {
                    table.push(format!(
                        "{fixture}:{line} {space} {op}: predicted {} measured {}",
                        show(&p),
                        show(&set(&r["nway"]))
                    ));
                }
                ok
            };
            agree += ok as usize;
        }
    }
    println!("{}", table.join("\n"));
    println!(
        "agreement with the hardware: {agree}/{} measured records of {} fixtures agree ({excused} excepted by the fixtures, with reasons)",
        total - excused,
        measured.len()
    );
    assert!(stale.is_empty(), "{}", stale.join("\n"));
    assert_eq!(
        agree,
        total - excused,
        "predictions disagree with ncu:\n{}",
        table.join("\n")
    );
}

#[test]
fn the_code_digest_leaves_annotations_out() {
    assert_eq!(
        code_digest("a[t] = 0; //~ CL201 sectors=8/4\nb;\n"),
        code_digest("a[t] = 0;\nb;\n")
    );
    assert_ne!(code_digest("a[t] = 0;\n"), code_digest("a[t] = 1;\n"));
}

#[test]
fn exceptions_are_read_from_the_fixture() {
    let e = exceptions(
        "a;\nb; //~ CL201 //~ ncu-differs: vectorised by nvcc\nc;\n//~^ ncu-differs: inlined\n",
    );
    assert_eq!(e.get(&2).map(String::as_str), Some("vectorised by nvcc"));
    assert_eq!(e.get(&3).map(String::as_str), Some("inlined"));
}

#[test]
fn every_fixture_with_a_kernel_is_measured() {
    let root = common::root();
    let mut measured = BTreeSet::new();
    for e in std::fs::read_dir(root.join("fixtures/measured"))
        .unwrap()
        .flatten()
    {
        let data: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
        if let Some(f) = data["fixture"].as_str() {
            measured.insert(f.trim_start_matches("./").to_string());
        }
    }
    // the probe's measurement is the shared ground truth, in its own format (tests/probe.rs)
    if root.join("fixtures/measured/probe.json").exists() {
        measured.insert("fixtures/probe.cu".to_string());
    }
    let mut missing = Vec::new();
    let mut stack = vec![root.join("fixtures")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                let text = std::fs::read_to_string(&p).unwrap();
                let rel = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if text.contains("__global__") && !measured.contains(&rel) {
                    missing.push(rel);
                }
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "fixtures with kernels and no measurement in fixtures/measured (tools/measure/): {missing:?}"
    );
}

/// The impact estimate's request count (warps with a lane at the access x executions per warp
/// x blocks) is what ncu counts as the line's Instructions Executed, wherever the fixture's
/// launch gives the grid and one instruction carries the line's access.
#[test]
fn estimated_requests_are_the_instructions_ncu_counts() {
    let root = common::root();
    let (mut checked, mut misses) = (0, Vec::new());
    for m in std::fs::read_dir(root.join("fixtures/measured"))
        .unwrap()
        .flatten()
    {
        let data: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(m.path()).unwrap()).unwrap();
        let Some(fixture) = data["fixture"].as_str() else {
            continue;
        };
        let audit = common::json(&["audit", "--format", "json", "--no-cache", fixture]);
        let excepted = exceptions(&std::fs::read_to_string(root.join(fixture)).unwrap());
        for r in data["records"].as_array().unwrap() {
            if r["sass"].as_array().map(Vec::len) != Some(1) {
                continue;
            }
            // (a line the fixture says ncu counts otherwise: lanes a data-dependent branch
            // leaves off change the warps that issue it as much as its figure)
            if r["line"]
                .as_u64()
                .is_some_and(|l| excepted.contains_key(&l))
            {
                continue;
            }
            let mine: Vec<f64> = audit["accesses"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| {
                    a["kernel"] == r["function"]
                        && a["line"] == r["line"]
                        && a["space"] == r["space"]
                        && a["op"] == r["op"]
                        && a["impact"]["blocks"].is_u64()
                })
                .filter_map(|a| a["impact"]["requests"].as_f64())
                .collect();
            // (a loop whose trip count the run decides, `do { ... } while (same[b] < CUTOFF)`,
            // is priced at an assumed count the impact names, and an access in a function
            // that calls itself at its first call's: not estimates to hold ncu to)
            let assumed_trips = audit["accesses"].as_array().unwrap().iter().any(|a| {
                a["kernel"] == r["function"]
                    && a["line"] == r["line"]
                    && ["assumptions", "impact"].iter().any(|k| {
                        let list = match *k {
                            "impact" => &a["impact"]["assumptions"],
                            _ => &a["assumptions"],
                        };
                        list.as_array().is_some_and(|v| {
                            v.iter().any(|t| {
                                t.as_str()
                                    .is_some_and(|t| t.contains("runs an unknown number of times"))
                            })
                        })
                    })
            });
            if assumed_trips {
                continue;
            }
            let [requests] = mine[..] else { continue };
            let executed = r["executed"].as_f64().unwrap();
            checked += 1;
            if (requests - executed).abs() > 0.01 * executed {
                misses.push(format!(
                    "{fixture}:{} {} {} in {}: {requests} requests estimated, {executed} executed",
                    r["line"], r["space"], r["op"], r["function"]
                ));
            }
        }
    }
    println!(
        "requests: {} of {checked} measured lines as ncu counts them; differ:\n  {}",
        checked - misses.len(),
        misses.join("\n  ")
    );
    assert!(checked >= 300, "only {checked} lines compared");
    // the misses are stores nvcc predicates rather than branches around (a reduction's
    // `if (tid < s) sdata[tid] += ...`): ncu counts every warp's instruction, 8 warps x 8
    // iterations x 64 blocks = 4,096, lanes on or not; the estimate counts the warps with a
    // lane on, which are the requests that move data, so the excess is the same
    assert!(
        misses.len() * 50 <= checked,
        "more than 2% of request counts differ from ncu's"
    );
}
