//! `audit --format html`: one self-contained page (inline CSS, no script, nothing fetched) to
//! read offline or attach to a CI run. A summary first: kernels ranked by estimated excess
//! traffic (`ranking::rank`, the order of `--sort impact`), findings by rule, and what was not
//! seen (files with parse-error regions or not read, kernels past the time budget, accesses
//! left `unknown`). Then a `<details>` section per kernel, ranked ones first, the others after:
//! its accesses in source order with their figures, the impact estimate and what it assumes,
//! the finding on the access with its fix, and a picture of the warp (`svg.rs`) for every
//! priced access with lanes (all but the data-dependent ones, priced at their worst case
//! without addresses). It renders `FileReport`s and decides nothing.
//!
//! Where CL301 proved a padding, the same warp after it is drawn beside it: the analysis
//! evaluated the access again on the padded array (`AccessRecord::padded`), so the picture is
//! the proof's, not a re-mapping of offsets guessed here.

use crate::ranking::{rank, Ranking};
use crate::svg;
use cudalint_rules::impact::{bytes, count};
use cudalint_rules::warp_map::{padded_map, warp_map};
use cudalint_rules::{AccessRecord, Diagnostic, FileReport};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Kernel sections open when the page loads.
const OPEN: usize = 3;
/// Accesses listed by name in the summary's `unknown` list; the rest are counted.
const UNKNOWN_LISTED: usize = 50;

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right}code,pre{font:12px ui-monospace,monospace;background:#f6f6f6}
pre{padding:4px;overflow-x:auto}details.k{border:1px solid #ccc;border-radius:4px;margin:.6em 0;padding:.2em .8em}
details.k>summary{cursor:pointer;padding:.3em 0}.a{border-top:1px solid #eee;padding:.4em 0}
.a.w{border-left:4px solid #d33;padding-left:.6em}.m{color:#666}.fd{background:#fff4f4;padding:.3em .6em;margin:.3em 0}
.fix{color:#070}ul{margin:.2em 0}.u0{color:#a60}
svg.defs{position:absolute;width:0;height:0}svg.warp{display:block;width:624px;max-width:100%;height:auto}
svg text{font:2.2px sans-serif;fill:#555}.ln{fill:#dbe8f6;stroke:#4a6b8a;stroke-width:.15}.bk{fill:#f4f4f4;stroke:#aaa;stroke-width:.15}
.u,.off,.xl{stroke-width:2;fill:none}.u{stroke:#ecc860}.off{stroke:#eee}.xl{stroke:#f08080}
.e{stroke:#4a6b8a;stroke-width:.15;fill:none}.x{stroke:#c00;stroke-width:.3;fill:none}";

/// `&`, `<`, `>`, `"` and `'` as entities: safe in text and in quoted attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn num(x: Option<f64>) -> String {
    x.map(count).unwrap_or_else(|| "-".into())
}

type KernelKey<'a> = (&'a str, &'a str, usize);

fn key(a: &AccessRecord) -> KernelKey<'_> {
    (&a.kernel, &a.kernel_file, a.kernel_line)
}

/// Whether the access has a cost figure (and so gets a picture where it has lanes).
pub fn priced(a: &AccessRecord) -> bool {
    a.sectors_per_request.is_some() || a.wavefronts_per_request.is_some()
}

pub fn render(reports: &[FileReport], errors: &[String]) -> String {
    let ranking = rank(reports);
    let mut by_kernel: HashMap<KernelKey, Vec<&AccessRecord>> = HashMap::new();
    for a in reports.iter().flat_map(|r| &r.accesses) {
        by_kernel.entry(key(a)).or_default().push(a);
    }
    // ranked kernels first, in the ranking's order, then the others by place
    let mut order: Vec<KernelKey> = ranking
        .kernels
        .iter()
        .map(|k| (k.kernel, k.file, k.line))
        .collect();
    let mut rest: Vec<KernelKey> = by_kernel
        .keys()
        .copied()
        .filter(|k| !order.contains(k))
        .collect();
    rest.sort_by(|a, b| (a.1, a.2, a.0).cmp(&(b.1, b.2, b.0)));
    order.extend(rest);
    let mut findings: HashMap<(&str, usize, usize), Vec<&Diagnostic>> = HashMap::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        findings
            .entry((&d.at.file, d.at.line, d.at.column))
            .or_default()
            .push(d);
    }

    let mut s = String::with_capacity(64 * 1024);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cudalint audit</title><style>");
    s.push_str(CSS);
    s.push_str("</style></head><body>\n");
    s.push_str(&svg::defs());
    s.push_str("<h1>cudalint audit</h1>\n");
    summary(&mut s, reports, &ranking, errors);
    s.push_str("<h2>Kernels</h2>\n");
    let mut pictures = svg::Pictures::default();
    for (i, k) in order.iter().enumerate() {
        let mut accesses = by_kernel.remove(k).unwrap_or_default();
        accesses.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        let ranked = ranking
            .kernels
            .iter()
            .find(|r| (r.kernel, r.file, r.line) == *k);
        kernel(&mut s, &mut pictures, i, *k, ranked, &accesses, &findings);
    }
    s.push_str("</body></html>\n");
    s
}

fn summary(s: &mut String, reports: &[FileReport], r: &Ranking, errors: &[String]) {
    let accesses: usize = reports.iter().map(|f| f.accesses.len()).sum();
    let kernels: usize = reports.iter().map(|f| f.kernels).sum();
    let diagnostics: usize = reports.iter().map(|f| f.diagnostics.len()).sum();
    let _ = writeln!(
        s,
        "<p>{} files, {kernels} kernels, {accesses} accesses, {diagnostics} findings. Estimated excess traffic: <b>{}</b> in all (sectors at 32 B, shared wavefronts at 128 B), per launch where the launch's grid is known, else per block.</p>",
        reports.len(),
        bytes(r.total)
    );
    s.push_str("<h2>Kernels by estimated excess traffic</h2>\n");
    if r.kernels.is_empty() {
        s.push_str("<p>No kernel has an estimated excess.</p>\n");
    } else {
        s.push_str("<table class=\"rank\"><tr><th class=\"n\">#</th><th class=\"n\">excess</th><th class=\"n\">of run</th><th>per</th><th>kernel</th><th class=\"n\">accesses</th></tr>\n");
        for (i, k) in r.kernels.iter().enumerate() {
            let _ = writeln!(
                s,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td><a href=\"#k{i}\"><code>{}</code></a> <span class=\"m\">{}:{}</span></td><td class=\"n\">{}</td></tr>",
                k.rank,
                bytes(k.excess_bytes),
                pct(k.share_of_run),
                k.per,
                esc(k.kernel),
                esc(k.file),
                k.line,
                k.accesses
            );
        }
        s.push_str("</table>\n");
    }
    let _ = writeln!(
        s,
        "<p class=\"m\">{} accesses with an estimated excess; {} priced without excess; {} not priced.</p>",
        r.accesses.len(),
        r.without_excess,
        r.unpriced
    );

    s.push_str("<h2>Findings by rule</h2>\n");
    let mut by_code: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for d in reports.iter().flat_map(|f| &f.diagnostics) {
        by_code.entry(d.code).or_insert((d.name, 0)).1 += 1;
    }
    if by_code.is_empty() {
        s.push_str("<p>No findings.</p>\n");
    } else {
        s.push_str("<table class=\"rules\"><tr><th>code</th><th>rule</th><th class=\"n\">findings</th></tr>\n");
        for (code, (name, n)) in &by_code {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{n}</td></tr>",
                esc(code),
                esc(name)
            );
        }
        s.push_str("</table>\n");
    }

    s.push_str("<h2>Not seen</h2>\n");
    let mut none = true;
    let broken: Vec<&FileReport> = reports
        .iter()
        .filter(|f| !f.parse_error_lines.is_empty())
        .collect();
    if !broken.is_empty() {
        none = false;
        s.push_str("<p>Files with parse-error regions (what they cover was not analysed):</p><ul class=\"parse\">\n");
        for f in broken {
            let lines: Vec<String> = f
                .parse_error_lines
                .iter()
                .take(20)
                .map(|l| l.to_string())
                .collect();
            let more = f.parse_error_lines.len().saturating_sub(20);
            let _ = writeln!(
                s,
                "<li><code>{}</code>: lines {}{}</li>",
                esc(&f.path),
                lines.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        s.push_str("</ul>\n");
    }
    let unread: Vec<(&str, &str)> = reports
        .iter()
        .filter_map(|f| f.error.as_deref().map(|e| (f.path.as_str(), e)))
        .chain(errors.iter().map(|e| ("", e.as_str())))
        .collect();
    if !unread.is_empty() {
        none = false;
        s.push_str("<p>Not read:</p><ul>\n");
        for (p, e) in unread {
            let _ = writeln!(s, "<li><code>{}</code> {}</li>", esc(p), esc(e));
        }
        s.push_str("</ul>\n");
    }
    let timed: Vec<(&str, &str)> = reports
        .iter()
        .flat_map(|f| f.timed_out.iter().map(|k| (f.path.as_str(), k.as_str())))
        .collect();
    if !timed.is_empty() {
        none = false;
        s.push_str("<p>Kernels past the time budget:</p><ul>\n");
        for (p, k) in timed {
            let _ = writeln!(s, "<li><code>{}</code> in {}</li>", esc(k), esc(p));
        }
        s.push_str("</ul>\n");
    }
    let unknown: Vec<&AccessRecord> = reports
        .iter()
        .flat_map(|f| &f.accesses)
        .filter(|a| a.class == "unknown")
        .collect();
    if !unknown.is_empty() {
        none = false;
        let _ = writeln!(
            s,
            "<p>{} accesses left <code>unknown</code> (their cost is not known):</p><ul class=\"unknown\">",
            unknown.len()
        );
        for a in unknown.iter().take(UNKNOWN_LISTED) {
            let _ = writeln!(
                s,
                "<li><span class=\"m\">{}:{}:{}</span> <code>{}</code> {}</li>",
                esc(&a.file),
                a.line,
                a.column,
                esc(&a.text),
                esc(a.reason.as_deref().unwrap_or(""))
            );
        }
        if unknown.len() > UNKNOWN_LISTED {
            let _ = writeln!(
                s,
                "<li>and {} more (in their kernels below)</li>",
                unknown.len() - UNKNOWN_LISTED
            );
        }
        s.push_str("</ul>\n");
    }
    if none {
        s.push_str("<p>Every file parsed, every kernel finished, no access left unknown.</p>\n");
    }
}

fn kernel(
    s: &mut String,
    pictures: &mut svg::Pictures,
    i: usize,
    k: KernelKey,
    ranked: Option<&crate::ranking::RankedKernel>,
    accesses: &[&AccessRecord],
    findings: &HashMap<(&str, usize, usize), Vec<&Diagnostic>>,
) {
    let (name, file, line) = k;
    let headline = match ranked {
        Some(r) => format!(
            "#{} <code>{}</code> <span class=\"m\">{}:{line}</span> {} excess per {} ({} of run)",
            r.rank,
            esc(name),
            esc(file),
            bytes(r.excess_bytes),
            r.per,
            pct(r.share_of_run)
        ),
        None => format!(
            "<code>{}</code> <span class=\"m\">{}:{line}</span> no estimated excess",
            esc(name),
            esc(file)
        ),
    };
    let _ = writeln!(
        s,
        "<details class=\"k\" id=\"k{i}\" data-kernel=\"{}\" data-file=\"{}\" data-line=\"{line}\"{}><summary>{headline}, {} accesses</summary>",
        esc(name),
        esc(file),
        if i < OPEN && ranked.is_some() {
            " open"
        } else {
            ""
        },
        accesses.len()
    );
    for a in accesses {
        access(
            s,
            pictures,
            a,
            findings.get(&(a.file.as_str(), a.line, a.column)),
        );
    }
    s.push_str("</details>\n");
}

fn access(
    s: &mut String,
    pictures: &mut svg::Pictures,
    a: &AccessRecord,
    found: Option<&Vec<&Diagnostic>>,
) {
    let found: Vec<&Diagnostic> = found
        .map(|v| v.iter().copied().filter(|d| d.kernel == a.kernel).collect())
        .unwrap_or_default();
    let _ = write!(
        s,
        "<div class=\"a{}\"><div><span class=\"m\">{}{}:{}</span> <code>{}</code> <span class=\"m\">{} {}, {} B {}, <span class=\"{}\">{}</span></span></div>",
        if found.is_empty() { "" } else { " w" },
        // the file only where it is not the kernel's (an inlined or included function)
        if a.file == a.kernel_file {
            String::new()
        } else {
            format!("{}:", esc(&a.file))
        },
        a.line,
        a.column,
        esc(&a.text),
        a.space,
        a.op,
        a.bytes,
        esc(&a.elem_type),
        if a.class == "unknown" { "u0" } else { "c" },
        a.class
    );
    let mut figures = Vec::new();
    if a.sectors_per_request.is_some() {
        figures.push(format!(
            "{} sectors per request, ideal {}",
            num(a.sectors_per_request),
            num(a.ideal_sectors_per_request)
        ));
    }
    if a.wavefronts_per_request.is_some() {
        figures.push(format!(
            "{} wavefronts per request, ideal {}",
            num(a.wavefronts_per_request),
            num(a.ideal_wavefronts_per_request)
        ));
    }
    match &a.impact {
        Some(i) if i.excess > 0.0 => {
            let per = if i.blocks.is_some() {
                "launch"
            } else {
                "block"
            };
            let mut how = format!(
                "{} per request x {} warps x {} executions",
                count(i.excess_per_request),
                i.warps_per_block,
                count(i.executions_per_warp)
            );
            if let Some(b) = i.blocks {
                how.push_str(&format!(" x {} blocks", count(b as f64)));
            }
            figures.push(format!(
                "excess {} {} ({}) per {per}: {how}; {} of the kernel",
                count(i.excess),
                i.unit,
                bytes(i.excess_bytes),
                pct(i.share_of_kernel)
            ));
        }
        Some(_) => figures.push("no excess".into()),
        None => {}
    }
    if !figures.is_empty() {
        let _ = write!(s, "<div>{}</div>", esc(&figures.join("; ")));
    }
    if let Some(r) = &a.reason {
        let _ = write!(s, "<div class=\"m\">{}</div>", esc(r));
    }
    let assumed: Vec<&String> = a
        .assumptions
        .iter()
        .chain(
            a.impact
                .iter()
                .filter(|i| i.excess > 0.0)
                .flat_map(|i| &i.assumptions),
        )
        .collect();
    if !assumed.is_empty() {
        s.push_str("<ul class=\"m\">");
        for x in assumed {
            let _ = write!(s, "<li>{}</li>", esc(x));
        }
        s.push_str("</ul>");
    }
    if priced(a) {
        if let Some(m) = warp_map(a) {
            s.push_str(&pictures.warp(&m));
            if m.shared && m.conflicting() > 0 {
                let _ = write!(
                    s,
                    "<div class=\"m\">{} lanes conflict (red): they share a bank at different words</div>",
                    m.conflicting()
                );
            }
            if let (Some(after), Some(p)) = (padded_map(a), &a.padded) {
                let _ = write!(
                    s,
                    "<div class=\"m pad\">after padding the innermost dimension by {}: {} wavefront{} per request, {} lanes conflict</div>",
                    p.pad,
                    count(p.wavefronts),
                    if p.wavefronts == 1.0 { "" } else { "s" },
                    after.conflicting()
                );
                s.push_str(&pictures.padded(&after));
            }
        } else {
            // a data-dependent access is priced at its worst case, without addresses
            s.push_str("<div class=\"m\">no picture: the lanes' addresses are not known</div>");
        }
    }
    for d in found {
        let _ = write!(
            s,
            "<div class=\"fd\"><b>{}</b> {} <span class=\"m\">({})</span><div>{}</div>",
            esc(d.code),
            esc(d.name),
            d.severity.as_str(),
            esc(&d.message)
        );
        if !d.notes.is_empty() {
            s.push_str("<ul>");
            // the impact note says what the figures line above says
            for n in d.notes.iter().filter(|n| !n.starts_with("impact: ")) {
                let _ = write!(s, "<li>{}</li>", esc(n));
            }
            s.push_str("</ul>");
        }
        if let Some(f) = &d.fix {
            let _ = write!(s, "<div class=\"fix\">fix: {}</div>", esc(&f.title));
            if let Some(sk) = &f.sketch {
                let _ = write!(s, "<pre>{}</pre>", esc(sk));
            }
        }
        s.push_str("</div>");
    }
    s.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_text_is_escaped() {
        assert_eq!(
            esc("a<b && c>\"d\"'"),
            "a&lt;b &amp;&amp; c&gt;&quot;d&quot;&#39;"
        );
    }
}
