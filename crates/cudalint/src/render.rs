//! Rendering: codespan-reporting text, JSON, and the audit table. Nothing here decides anything.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor};
use cudalint_rules::{AccessRecord, Diagnostic, FileReport, Input, Severity};
use serde::Serialize;

pub fn text(
    reports: &[FileReport],
    inputs: &[Input],
    out: &mut dyn WriteColor,
) -> std::io::Result<()> {
    let mut files = SimpleFiles::new();
    let ids: Vec<usize> = inputs
        .iter()
        .map(|i| files.add(i.path.as_str(), i.text.as_ref()))
        .collect();
    let id_of = |path: &str| inputs.iter().position(|i| i.path == path).map(|i| ids[i]);
    let config = term::Config::default();
    for r in reports {
        for d in &r.diagnostics {
            let Some(id) = id_of(&d.at.file) else {
                continue;
            };
            let severity = match d.severity {
                Severity::Error => CsSeverity::Error,
                Severity::Warning => CsSeverity::Warning,
                Severity::Info => CsSeverity::Note,
            };
            let mut labels = vec![Label::primary(id, d.at.bytes.clone())
                .with_message(format!("{} `{}`", d.name, d.kernel))];
            for l in &d.labels {
                if let Some(lid) = id_of(&l.at.file) {
                    labels.push(
                        Label::secondary(lid, l.at.bytes.clone()).with_message(l.message.clone()),
                    );
                }
            }
            let mut notes = d.notes.clone();
            if let Some(fix) = &d.fix {
                let mut help = format!("help: {}", fix.title);
                for e in &fix.edits {
                    help.push_str(&format!(
                        "\n  {}:{}:{}: replace with `{}`",
                        e.at.file, e.at.line, e.at.column, e.replacement
                    ));
                }
                if let Some(s) = &fix.sketch {
                    help.push_str("\n  ");
                    help.push_str(&s.replace('\n', "\n  "));
                }
                notes.push(help);
            }
            let diag = CsDiagnostic::new(severity)
                .with_code(d.code)
                .with_message(&d.message)
                .with_labels(labels)
                .with_notes(notes);
            if let Err(e) = term::emit_to_write_style(out, &config, &files, &diag) {
                writeln!(
                    out,
                    "{}:{}: {}: {} ({e})",
                    d.at.file, d.at.line, d.code, d.message
                )?;
            }
        }
    }
    Ok(())
}

pub fn summary(reports: &[FileReport]) -> String {
    let count = |s: Severity| {
        reports
            .iter()
            .flat_map(|r| &r.diagnostics)
            .filter(|d| d.severity == s)
            .count()
    };
    let (e, w, i) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    let kernels: usize = reports.iter().map(|r| r.kernels).sum();
    let accesses: usize = reports.iter().map(|r| r.accesses_analysed).sum();
    format!(
        "cudalint: {} finding{} ({w} warning{}, {i} info{}) in {} file{}; {accesses} memory accesses analysed in {kernels} kernel{}",
        e + w + i,
        plural(e + w + i),
        plural(w),
        if e > 0 { format!(", {e} error{}", plural(e)) } else { String::new() },
        reports.len(),
        plural(reports.len()),
        plural(kernels)
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[derive(Serialize)]
struct CheckJson<'a> {
    version: u32,
    diagnostics: Vec<&'a Diagnostic>,
    errors: &'a [String],
}

/// Written as it is serialized: a large run's JSON is several times its input, and a string
/// of it all would be the run's peak.
pub fn check_json(
    reports: &[FileReport],
    errors: &[String],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let json = CheckJson {
        version: 1,
        diagnostics: reports.iter().flat_map(|r| &r.diagnostics).collect(),
        errors,
    };
    serde_json::to_writer_pretty(&mut *out, &json)?;
    writeln!(out)
}

#[derive(Serialize)]
struct AuditJson<'a> {
    version: u32,
    files: Vec<AuditFile<'a>>,
    accesses: Vec<&'a AccessRecord>,
    errors: &'a [String],
}

#[derive(Serialize)]
struct AuditFile<'a> {
    file: &'a str,
    kernels: usize,
    /// Lines where the parser left an error region.
    parse_errors: &'a [usize],
    /// Kernels that could not be analysed (CL101), with the reason.
    not_analysed: Vec<NotAnalysed<'a>>,
}

#[derive(Serialize)]
struct NotAnalysed<'a> {
    kernel: &'a str,
    line: usize,
    message: &'a str,
}

pub fn audit_json(reports: &[FileReport], errors: &[String]) -> String {
    let out = AuditJson {
        version: 1,
        files: reports
            .iter()
            .map(|r| AuditFile {
                file: &r.path,
                kernels: r.kernels,
                parse_errors: &r.parse_error_lines,
                not_analysed: r
                    .diagnostics
                    .iter()
                    .filter(|d| d.code == "CL101")
                    .map(|d| NotAnalysed {
                        kernel: &d.kernel,
                        line: d.at.line,
                        message: &d.message,
                    })
                    .collect(),
            })
            .collect(),
        accesses: reports.iter().flat_map(|r| &r.accesses).collect(),
        errors,
    };
    serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| {
        if (v - v.round()).abs() < 1e-9 {
            format!("{}", v.round() as i64)
        } else {
            format!("{v:.2}")
        }
    })
    .unwrap_or_else(|| "-".into())
}

pub fn audit_text(reports: &[FileReport]) -> String {
    let mut s = String::new();
    s.push_str("location                  kernel               space   op      B  class           sectors  wavefronts  block         access\n");
    for r in reports {
        for a in &r.accesses {
            let loc = format!("{}:{}:{}", short(&a.file), a.line, a.column);
            let sectors = match (a.sectors_per_request, a.ideal_sectors_per_request) {
                (Some(x), Some(i)) => format!("{}/{}", opt(Some(x)), opt(Some(i))),
                _ => "-".into(),
            };
            let waves = match (a.wavefronts_per_request, a.ideal_wavefronts_per_request) {
                (Some(x), Some(i)) => format!("{}/{}", opt(Some(x)), opt(Some(i))),
                _ => "-".into(),
            };
            let class = match (a.class, a.stride_bytes) {
                ("strided", Some(st)) => format!("strided({st}B)"),
                (c, _) => c.to_string(),
            };
            let block = format!("{}x{}x{}", a.block[0], a.block[1], a.block[2]);
            s.push_str(&format!(
                "{loc:<25} {:<20} {:<7} {:<6} {:>2}  {class:<15} {sectors:>7}  {waves:>10}  {block:<12}  {}",
                trunc(&a.kernel, 20),
                a.space,
                a.op,
                a.bytes,
                a.text
            ));
            if let Some(r) = &a.reason {
                s.push_str(&format!("  [{r}]"));
            }
            s.push('\n');
        }
    }
    s
}

fn short(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}~", s.chars().take(n - 1).collect::<String>())
    }
}
