//! Baselines: `check --write-baseline FILE` records today's findings; `check --baseline FILE`
//! reports only findings that are not in it. A finding is matched by its code, file, kernel
//! and a hash of the access's text, never by line: edits elsewhere in the file keep it matched.
//! Each recorded finding excuses one finding (two identical accesses need two entries).

use cudalint_rules::{Diagnostic, FileReport, Input};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub code: String,
    pub file: String,
    pub kernel: String,
    pub access_hash: String,
    /// The access as written, for people reading the baseline.
    pub access: String,
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    findings: Vec<Entry>,
}

/// FNV-1a over the access text with whitespace collapsed: stable across formatting changes.
fn hash(text: &str) -> String {
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut h: u64 = 0xcbf29ce484222325;
    for b in collapsed.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

fn entry(d: &Diagnostic, inputs: &[Input]) -> Entry {
    let text = inputs
        .iter()
        .find(|i| i.path == d.at.file)
        .and_then(|i| i.text.get(d.at.bytes.clone()))
        .unwrap_or("");
    Entry {
        code: d.code.to_string(),
        file: d.at.file.trim_start_matches("./").to_string(),
        kernel: d.kernel.clone(),
        access_hash: hash(text),
        access: text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

pub fn write(path: &str, reports: &[FileReport], inputs: &[Input]) -> Result<usize, String> {
    let mut findings: Vec<Entry> = reports
        .iter()
        .flat_map(|r| &r.diagnostics)
        .map(|d| entry(d, inputs))
        .collect();
    findings.sort();
    let n = findings.len();
    let json = serde_json::to_string_pretty(&File {
        version: 1,
        findings,
    })
    .map_err(|e| e.to_string())?;
    std::fs::write(path, json + "\n").map_err(|e| format!("{path}: {e}"))?;
    Ok(n)
}

/// Drops from `reports` the findings the baseline records; returns how many were dropped.
pub fn apply(path: &str, reports: &mut [FileReport], inputs: &[Input]) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: File = serde_json::from_str(&text)
        .map_err(|e| format!("{path}: not a cudalint baseline ({e})"))?;
    if file.version != 1 {
        return Err(format!(
            "{path}: baseline version {} is not supported",
            file.version
        ));
    }
    let mut left = file.findings;
    let mut dropped = 0;
    for r in reports.iter_mut() {
        r.diagnostics.retain(|d| {
            let e = entry(d, inputs);
            let hit = left.iter().position(|b| {
                b.code == e.code
                    && b.file == e.file
                    && b.kernel == e.kernel
                    && b.access_hash == e.access_hash
            });
            match hit {
                Some(i) => {
                    left.swap_remove(i);
                    dropped += 1;
                    false
                }
                None => true,
            }
        });
    }
    Ok(dropped)
}
