//! The hardware is the judge: `cudalint audit` on the ground-truth probe must predict, for every
//! (line, space, op) that Nsight Compute measured on an H200, the same sectors per request
//! (global) and the same wavefronts per request (shared: ncu's n-way column).

mod common;

use common::{key, set, show};
use std::collections::BTreeSet;

#[test]
fn audit_agrees_with_every_ncu_record_of_the_probe() {
    let root = common::root();
    // the measured copy in the repository must be the ground truth's, when that is beside us
    let shared = root.join("../shared/groundtruth/probe.measured.json");
    let measured_text = std::fs::read_to_string(root.join("fixtures/measured/probe.json")).unwrap();
    if let Ok(s) = std::fs::read_to_string(&shared) {
        assert_eq!(
            s, measured_text,
            "fixtures/measured/probe.json differs from ../shared/groundtruth/probe.measured.json"
        );
    }
    let measured: serde_json::Value = serde_json::from_str(&measured_text).unwrap();
    let audit = common::json(&["audit", "--format", "json", "fixtures/probe.cu"]);
    let accesses = audit["accesses"].as_array().unwrap();
    let records = measured.as_array().unwrap();
    let mut agree = 0;
    let mut table = vec![format!(
        "{:<18} {:>4} {:<6} {:<5} {:>14} {:>14}  verdict",
        "kernel", "line", "space", "op", "predicted", "measured"
    )];
    for r in records {
        let line = r["line"].as_u64().unwrap();
        let space = r["space"].as_str().unwrap();
        let op = r["op"].as_str().unwrap();
        let mine: Vec<&serde_json::Value> = accesses
            .iter()
            .filter(|a| a["line"].as_u64() == Some(line) && a["space"] == space && a["op"] == op)
            .collect();
        let (pred, pred_ideal, meas, meas_ideal) = if space == "global" {
            (
                mine.iter()
                    .filter_map(|a| a["sectors_per_request"].as_f64())
                    .map(key)
                    .collect::<BTreeSet<_>>(),
                mine.iter()
                    .filter_map(|a| a["ideal_sectors_per_request"].as_f64())
                    .map(key)
                    .collect::<BTreeSet<_>>(),
                set(&r["sectors_per_request"]),
                set(&r["ideal_sectors_per_request"]),
            )
        } else {
            let waves: BTreeSet<i64> = mine
                .iter()
                .filter_map(|a| a["wavefronts_per_request"].as_f64())
                .map(key)
                .collect();
            (waves.clone(), waves, set(&r["nway"]), set(&r["nway"]))
        };
        let ok = pred == meas && (space != "global" || pred_ideal == meas_ideal);
        agree += ok as usize;
        table.push(format!(
            "{:<18} {:>4} {:<6} {:<5} {:>14} {:>14}  {}",
            r["function"].as_str().unwrap_or(""),
            line,
            space,
            op,
            show(&pred),
            show(&meas),
            if ok { "agree" } else { "DISAGREE" }
        ));
    }
    println!("{}", table.join("\n"));
    println!(
        "agreement with the hardware: {agree}/{} ncu records of probe.cu",
        records.len()
    );
    assert_eq!(records.len(), 62);
    assert_eq!(
        agree,
        records.len(),
        "predictions disagree with ncu:\n{}",
        table.join("\n")
    );
}
