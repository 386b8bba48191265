//! Between cudalint's byte offsets and LSP's (line, UTF-16 column) positions, and from the one
//! diagnostic type to LSP's.

use cudalint_rules::{AccessRecord, Diagnostic as CDiag, FileReport, Severity};
use std::str::FromStr;
use tower_lsp_server::ls_types::*;

pub fn position(text: &str, byte: usize) -> Position {
    Lines::new(text).position(byte)
}

/// A text's line starts, so that each of a report's many positions costs a search and its
/// line's length, not a scan from the start of a 5 MB document.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { text, starts }
    }

    pub fn position(&self, byte: usize) -> Position {
        let byte = floor_char(self.text, byte.min(self.text.len()));
        let line = self
            .starts
            .partition_point(|&s| s <= byte)
            .saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0).min(byte);
        let column = self
            .text
            .get(start..byte)
            .map_or(0, |t| t.encode_utf16().count());
        Position::new(line as u32, column as u32)
    }

    pub fn range(&self, bytes: std::ops::Range<usize>) -> Range {
        Range::new(self.position(bytes.start), self.position(bytes.end))
    }
}

fn floor_char(text: &str, mut b: usize) -> usize {
    while b > 0 && !text.is_char_boundary(b) {
        b -= 1;
    }
    b
}

/// Byte offset of an LSP position; positions past a line's end or the text's end are clamped.
pub fn offset(text: &str, p: Position) -> usize {
    let mut start = 0;
    for _ in 0..p.line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[start..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(text.len());
    let mut units = 0u32;
    for (i, c) in text[start..line_end].char_indices() {
        if units >= p.character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    line_end
}

pub fn range(text: &str, bytes: std::ops::Range<usize>) -> Range {
    Lines::new(text).range(bytes)
}

pub fn line_end(text: &str, line: usize) -> Position {
    let start = text
        .split_inclusive('\n')
        .take(line)
        .map(str::len)
        .sum::<usize>();
    let end = text[start.min(text.len())..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(text.len());
    position(text, end)
}

pub fn apply_change(text: &mut String, r: Range, new: &str) {
    let (a, b) = (offset(text, r.start), offset(text, r.end));
    let (a, b) = (a.min(b), a.max(b));
    text.replace_range(a..b, new);
}

pub fn diagnostic(d: &CDiag, uri: &Uri, lines: &Lines) -> Diagnostic {
    let mut message = d.message.clone();
    for n in &d.notes {
        message.push('\n');
        message.push_str(n);
    }
    if let Some(f) = &d.fix {
        message.push_str("\nhelp: ");
        message.push_str(&f.title);
    }
    let related = d
        .labels
        .iter()
        .filter(|l| l.at.file == d.at.file)
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), lines.range(l.at.bytes.clone())),
            message: l.message.clone(),
        })
        .collect::<Vec<_>>();
    Diagnostic {
        range: lines.range(d.at.bytes.clone()),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: cudalint_rules::codes::doc_location(d.code)
            .and_then(|href| Uri::from_str(&href).ok())
            .map(|href| CodeDescription { href }),
        source: Some("cudalint".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

pub fn diagnostics(r: &FileReport, uri: &Uri, text: &str) -> Vec<Diagnostic> {
    let lines = Lines::new(text);
    r.diagnostics
        .iter()
        .map(|d| diagnostic(d, uri, &lines))
        .collect()
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if (v - v.round()).abs() < 0.005 => format!("{}", v.round() as i64),
        Some(v) => format!("{v:.2}"),
        None => "-".into(),
    }
}

/// The warp's picture: every lane, its byte offset, and the sector or bank it lands in.
pub fn warp_picture(a: &AccessRecord) -> String {
    let shared = a.space == "shared";
    let mut s = format!(
        "**{} {}** `{}` — class `{}`\n\n",
        a.space, a.op, a.text, a.class
    );
    if shared {
        s.push_str(&format!(
            "{} wavefronts per request, ideal {}\n\n",
            num(a.wavefronts_per_request),
            num(a.ideal_wavefronts_per_request)
        ));
    } else {
        s.push_str(&format!(
            "{} sectors per request, ideal {}\n\n",
            num(a.sectors_per_request),
            num(a.ideal_sectors_per_request)
        ));
    }
    s.push_str(&format!("{}\n\n", a.block_source));
    if let Some(m) = cudalint_rules::warp_map::warp_map(a) {
        // the warp after a proven padding, lane by lane beside the one before
        let after = cudalint_rules::warp_map::padded_map(a);
        if let (Some(p), Some(after)) = (&a.padded, &after) {
            s.push_str(&format!(
                "after padding the innermost dimension by {}: {} wavefront{} per request, {} lanes conflict\n\n",
                p.pad,
                num(Some(p.wavefronts)),
                if p.wavefronts == 1.0 { "" } else { "s" },
                after.conflicting()
            ));
        }
        s.push_str(match (shared, after.is_some()) {
            (true, true) => "| lane | byte offset | bank | conflict | bank padded | conflict padded |\n|---:|---:|---:|:---|---:|:---|\n",
            (true, false) => "| lane | byte offset | bank | conflict |\n|---:|---:|---:|:---|\n",
            _ => "| lane | byte offset | sector |\n|---:|---:|---:|\n",
        });
        let mark = |c: bool| if c { "yes" } else { "" };
        for l in &m.lanes {
            if shared {
                s.push_str(&format!(
                    "| {} | {} | {} | {} |",
                    l.lane,
                    l.offset,
                    l.unit,
                    mark(l.conflict)
                ));
                if let Some(after) = &after {
                    match after.lanes.iter().find(|x| x.lane == l.lane) {
                        Some(x) => s.push_str(&format!(" {} | {} |", x.unit, mark(x.conflict))),
                        None => s.push_str(" | |"),
                    }
                }
                s.push('\n');
            } else {
                s.push_str(&format!("| {} | {} | {} |\n", l.lane, l.offset, l.unit));
            }
        }
    } else if let Some(r) = &a.reason {
        s.push_str(&format!("not evaluated: {r}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_through_utf16() {
        let text = "a\nµ x = 1;\n";
        let p = position(text, text.find('x').unwrap());
        assert_eq!(p, Position::new(1, 2));
        assert_eq!(offset(text, p), text.find('x').unwrap());
        // past the end of a line or the text: clamped, never a panic
        assert_eq!(offset(text, Position::new(0, 99)), 1);
        assert_eq!(offset(text, Position::new(99, 0)), text.len());
    }

    #[test]
    fn positions_from_the_line_table_match_a_scan() {
        let text = "ab\n\nµ€x\n𝄞y\nlast";
        let lines = Lines::new(text);
        for byte in 0..=text.len() + 2 {
            let b = floor_char(text, byte.min(text.len()));
            let before = &text[..b];
            let line = before.matches('\n').count() as u32;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let col = before[start..].encode_utf16().count() as u32;
            assert_eq!(
                lines.position(byte),
                Position::new(line, col),
                "byte {byte}"
            );
        }
    }
}
