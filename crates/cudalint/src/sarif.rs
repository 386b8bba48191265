//! SARIF 2.1.0 output for code scanning (GitHub and others): the tool with every rule, and
//! per finding its location, related locations, machine-applicable fixes and figures.

use cudalint_rules::{Applicability, Diagnostic, FileReport, Input, Position, Severity, RULES};
use serde_json::{json, Value};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as SARIF wants it: relative to the repository root (the current folder), with `/`.
fn uri(path: &str) -> String {
    let p = std::path::Path::new(path);
    let rel = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(|r| r.to_path_buf()))
        .unwrap_or_else(|| p.to_path_buf());
    let s = rel.to_string_lossy().replace('\\', "/");
    s.trim_start_matches("./").to_string()
}

/// Columns in code points (the run declares `unicodeCodePoints`): our positions are bytes.
fn region(p: &Position, inputs: &[Input]) -> Value {
    let text = inputs
        .iter()
        .find(|i| i.path == p.file)
        .map(|i| i.text.as_ref())
        .unwrap_or("");
    let col = |byte: usize, line_col: usize| -> usize {
        let start = byte.saturating_sub(line_col - 1);
        text.get(start..byte)
            .map(|s| s.chars().count() + 1)
            .unwrap_or(line_col)
    };
    let end_byte = p.bytes.end;
    json!({
        "startLine": p.line,
        "startColumn": col(p.bytes.start, p.column),
        "endLine": p.end_line,
        "endColumn": col(end_byte, p.end_column),
    })
}

fn location(p: &Position, inputs: &[Input]) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(&p.file), "uriBaseId": "%SRCROOT%" },
            "region": region(p, inputs),
        }
    })
}

/// `total`: the estimated excess bytes of every finding of the run, for each one's `rank`.
fn result(d: &Diagnostic, inputs: &[Input], total: f64) -> Value {
    let rule_index = RULES.iter().position(|r| r.code == d.code).unwrap_or(0);
    let related: Vec<Value> = d
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut loc = location(&l.at, inputs);
            loc["id"] = json!(i + 1);
            loc["message"] = json!({ "text": l.message });
            loc
        })
        .collect();
    let mut text = d.message.clone();
    for n in &d.notes {
        text.push('\n');
        text.push_str(n);
    }
    let mut r = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": { "text": text },
        "locations": [location(&d.at, inputs)],
        "properties": { "kernel": d.kernel },
    });
    if !related.is_empty() {
        r["relatedLocations"] = json!(related);
    }
    if let Some(f) = &d.figures {
        r["properties"]["figures"] = serde_json::to_value(f).unwrap_or(Value::Null);
        // SARIF's rank is 0 to 100: the finding's share of the run's estimated excess, so
        // that code scanning lists the costliest first
        if let Some(i) = f.impact.as_ref().filter(|_| total > 0.0) {
            r["rank"] = json!((i.excess_bytes / total * 100_000.0).round() / 1000.0);
            r["properties"]["excessBytes"] = json!(i.excess_bytes);
        }
    }
    if let Some(fix) = &d.fix {
        r["properties"]["help"] = json!(fix.title);
        if fix.applicability == Applicability::MachineApplicable && !fix.edits.is_empty() {
            let changes: Vec<Value> = fix
                .edits
                .iter()
                .map(|e| {
                    json!({
                        "artifactLocation": { "uri": uri(&e.at.file), "uriBaseId": "%SRCROOT%" },
                        "replacements": [{
                            "deletedRegion": region(&e.at, inputs),
                            "insertedContent": { "text": e.replacement },
                        }],
                    })
                })
                .collect();
            r["fixes"] =
                json!([{ "description": { "text": fix.title }, "artifactChanges": changes }]);
        }
    }
    r
}

pub fn render(reports: &[FileReport], inputs: &[Input]) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            let mut rule = json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": r.doc.lines().skip_while(|l| !l.starts_with("## What it does")).skip(1).take_while(|l| !l.starts_with("## ")).collect::<Vec<_>>().join(" ").trim() },
                "help": { "text": r.doc, "markdown": r.doc },
                "defaultConfiguration": { "level": level(r.severity), "enabled": r.default_enabled },
            });
            // a log is read on other machines: only a published page, never a local file
            if let Some(url) = cudalint_rules::codes::doc_url(r.code) {
                rule["helpUri"] = json!(url);
            }
            rule
        })
        .collect();
    let total: f64 = reports
        .iter()
        .flat_map(|r| &r.diagnostics)
        .filter_map(|d| Some(d.figures.as_ref()?.impact.as_ref()?.excess_bytes))
        .sum();
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|r| &r.diagnostics)
        .map(|d| result(d, inputs, total))
        .collect();
    let root = std::env::current_dir()
        .ok()
        .map(|p| format!("file://{}/", p.to_string_lossy().trim_end_matches('/')))
        .unwrap_or_else(|| "file:///".into());
    let mut driver = json!({
        "name": "cudalint",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    let home = env!("CARGO_PKG_REPOSITORY");
    if !home.is_empty() {
        driver["informationUri"] = json!(home);
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "originalUriBaseIds": { "%SRCROOT%": { "uri": root } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

/// GitHub Actions workflow commands: one annotation per finding.
pub fn github(reports: &[FileReport]) -> String {
    // workflow-command values escape %, CR, LF (and , and : in properties)
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut msg = d.message.clone();
        for n in &d.notes {
            msg.push('\n');
            msg.push_str(n);
        }
        out.push_str(&format!(
            "::{kind} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            prop(&uri(&d.at.file)),
            d.at.line,
            d.at.column,
            d.at.end_line,
            d.at.end_column,
            prop(&format!("{} {}", d.code, d.name)),
            data(&msg)
        ));
    }
    out
}
