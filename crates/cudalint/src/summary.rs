//! `audit --format summary`: what a folder of CUDA code looks like to cudalint, per path
//! given: files and parse-error regions, kernels analysed or not and why, accesses by class,
//! findings by code, and the most common reasons an access could not be priced. It is the
//! report we drive real-code coverage with, and the figures the README quotes.

use cudalint_rules::check::FileReport;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The reports under each path argument (a report belongs to the first path it starts with).
pub fn render(paths: &[String], reports: &[FileReport], top: usize) -> String {
    let mut groups: Vec<(String, Vec<&FileReport>)> =
        paths.iter().map(|p| (p.clone(), Vec::new())).collect();
    for r in reports {
        let at = paths
            .iter()
            .position(|p| {
                r.path == *p || r.path.starts_with(&format!("{}/", p.trim_end_matches('/')))
            })
            .unwrap_or(0);
        if let Some(g) = groups.get_mut(at) {
            g.1.push(r);
        }
    }
    let mut out = String::new();
    for (name, rs) in &groups {
        section(&mut out, name, rs, top);
    }
    if groups.len() > 1 {
        let all: Vec<&FileReport> = reports.iter().collect();
        section(&mut out, "all paths", &all, top);
    }
    out
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

fn section(out: &mut String, name: &str, rs: &[&FileReport], top: usize) {
    let files = rs.len();
    let broken: Vec<&&FileReport> = rs
        .iter()
        .filter(|r| !r.parse_error_lines.is_empty())
        .collect();
    let kernels: usize = rs.iter().map(|r| r.kernels).sum();
    let mut not_analysed: BTreeMap<&str, usize> = BTreeMap::new();
    let mut findings: BTreeMap<&str, usize> = BTreeMap::new();
    for d in rs.iter().flat_map(|r| &r.diagnostics) {
        if d.code == "CL101" {
            let reason = d.message.split_once(": ").map_or("", |(_, r)| r);
            let reason = reason.rsplit_once(" at line ").map_or(reason, |(r, _)| r);
            *not_analysed.entry(reason).or_default() += 1;
        } else {
            *findings.entry(d.code).or_default() += 1;
        }
    }
    let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unknown: BTreeMap<&str, usize> = BTreeMap::new();
    let accesses: usize = rs.iter().map(|r| r.accesses.len()).sum();
    // the share of `unknown` that says how much was not seen is of the accesses to global and
    // shared memory (and those of a space not known); a thread's own arrays and constant
    // memory, listed but not priced, would dilute it (TNN: 61% of its accesses are local)
    let (mut memory, mut memory_unknown) = (0usize, 0usize);
    for a in rs.iter().flat_map(|r| &r.accesses) {
        if matches!(a.space, "global" | "shared" | "unknown") {
            memory += 1;
            memory_unknown += (a.class == "unknown") as usize;
        }
        *classes.entry(a.class).or_default() += 1;
        if a.class == "unknown" {
            *unknown
                .entry(a.reason.as_deref().unwrap_or(""))
                .or_default() += 1;
        }
    }
    let _ = writeln!(out, "{name}");
    let _ = writeln!(
        out,
        "  files     {files}, {} with parse-error regions ({})",
        broken.len(),
        pct(broken.len(), files)
    );
    for r in &broken {
        let lines: Vec<String> = r
            .parse_error_lines
            .iter()
            .take(5)
            .map(|l| l.to_string())
            .collect();
        let _ = writeln!(out, "              {}: line {}", r.path, lines.join(", "));
    }
    let skipped: usize = not_analysed.values().sum();
    let _ = writeln!(out, "  kernels   {kernels}, {skipped} not analysed (CL101)");
    for (reason, n) in by_count(&not_analysed).into_iter().take(top) {
        let _ = writeln!(out, "            {n:>5}  {reason}");
    }
    let _ = writeln!(out, "  accesses  {accesses}");
    for (class, n) in by_count(&classes) {
        let _ = writeln!(
            out,
            "            {n:>5}  {class:<15} {:>6}",
            pct(n, accesses)
        );
    }
    let _ = writeln!(
        out,
        "  global and shared  {memory}, {memory_unknown} unknown ({})",
        pct(memory_unknown, memory)
    );
    let list: Vec<String> = findings.iter().map(|(c, n)| format!("{c} {n}")).collect();
    let _ = writeln!(
        out,
        "  findings  {}",
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(", ")
        }
    );
    if !unknown.is_empty() {
        let _ = writeln!(out, "  unknown: the {top} most common reasons");
        for (reason, n) in by_count(&unknown).into_iter().take(top) {
            let _ = writeln!(out, "            {n:>5}  {reason}");
        }
    }
    out.push('\n');
}

fn by_count<'a>(m: &BTreeMap<&'a str, usize>) -> Vec<(&'a str, usize)> {
    let mut v: Vec<(&str, usize)> = m.iter().map(|(k, n)| (*k, *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}
