//! Suppression comments: `// cudalint-ignore CL301: reason` on the line of a finding or the
//! line above it, `// cudalint-ignore-file CL2: reason` for a whole file. Codes may be given
//! as prefixes (`CL3`) and separated by commas. A suppression without a reason (CL001) or one
//! that suppresses nothing (CL002) is itself reported.

use crate::diagnostic::{Diagnostic, Position};

#[derive(Clone, Debug, PartialEq)]
pub struct Suppression {
    /// 1-based line of the comment.
    pub line: usize,
    pub codes: Vec<String>,
    pub reason: Option<String>,
    pub file_wide: bool,
    /// Byte range of the directive text (for the position of CL001 / CL002).
    pub bytes: std::ops::Range<usize>,
    /// Whether the comment stands alone on its line (then it covers the next line).
    pub own_line: bool,
}

impl Suppression {
    pub fn covers(&self, code: &str, line: usize) -> bool {
        let named = self.codes.iter().any(|c| code.starts_with(c.as_str()));
        named && (self.file_wide || line == self.line || (self.own_line && line == self.line + 1))
    }
}

/// Finds the suppression comments of a file.
pub fn parse(text: &str) -> Vec<Suppression> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if let Some(pos) = line.find("//") {
            let comment = &line[pos + 2..];
            // a directive ends where another `//` comment starts on the same line
            let comment = comment.split("//").next().unwrap_or("");
            let trimmed = comment.trim_start();
            let rest = trimmed
                .strip_prefix("cudalint-ignore-file")
                .map(|r| (true, r))
                .or_else(|| trimmed.strip_prefix("cudalint-ignore").map(|r| (false, r)));
            if let Some((file_wide, rest)) = rest {
                if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                    let (codes, reason) = match rest.split_once(':') {
                        Some((c, r)) => (c, Some(r.trim().to_string()).filter(|r| !r.is_empty())),
                        None => (rest, None),
                    };
                    let codes: Vec<String> = codes
                        .split([',', ' ', '\t'])
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(str::to_ascii_uppercase)
                        .collect();
                    let start = offset + pos;
                    out.push(Suppression {
                        line: i + 1,
                        codes,
                        reason,
                        file_wide,
                        bytes: start..offset + line.trim_end().len(),
                        own_line: line[..pos].trim().is_empty(),
                    });
                }
            }
        }
        offset += line.len();
    }
    out
}

fn meta(code: &'static str, at: Position, message: String) -> Diagnostic {
    let rule = crate::codes::rule(code).expect("code in the table");
    Diagnostic {
        code: rule.code,
        name: rule.name,
        severity: rule.severity,
        message,
        at,
        kernel: String::new(),
        labels: Vec::new(),
        notes: Vec::new(),
        fix: None,
        figures: None,
    }
}

/// Removes suppressed findings from `diags` (all findings produced, enabled or not) and
/// returns the suppressions' own findings (missing reasons, unused suppressions).
pub fn apply(
    diags: &mut Vec<Diagnostic>,
    sups: &[Suppression],
    pos: impl Fn(std::ops::Range<usize>) -> Position,
) -> Vec<Diagnostic> {
    let mut used = vec![false; sups.len()];
    diags.retain(|d| {
        let hit = sups.iter().position(|s| s.covers(d.code, d.at.line));
        if let Some(i) = hit {
            used[i] = true;
        }
        hit.is_none()
    });
    let mut out = Vec::new();
    for (s, used) in sups.iter().zip(used) {
        let at = pos(s.bytes.clone());
        let what = if s.codes.is_empty() {
            "no code".to_string()
        } else {
            s.codes.join(", ")
        };
        if s.codes.is_empty() {
            out.push(meta("CL002", at.clone(), "cudalint-ignore names no code: it suppresses nothing (write `cudalint-ignore CL301: reason`)".into()));
            continue;
        }
        if s.reason.is_none() {
            out.push(meta(
                "CL001",
                at.clone(),
                format!("suppression of {what} gives no reason: say why after a colon"),
            ));
        }
        if !used {
            let scope = if s.file_wide {
                "in this file"
            } else if s.own_line {
                "on this line or the next"
            } else {
                "on this line"
            };
            out.push(meta(
                "CL002",
                at,
                format!("suppression of {what} suppresses nothing: no such finding {scope}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_codes_reasons_and_scope() {
        let s = parse("a[i] = 0; // cudalint-ignore CL201, CL3: stride is the point\n  // cudalint-ignore-file CL2\nx; // cudalint-ignorance\n");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].codes, vec!["CL201", "CL3"]);
        assert_eq!(s[0].reason.as_deref(), Some("stride is the point"));
        assert!(!s[0].own_line && !s[0].file_wide);
        assert!(s[0].covers("CL301", 1) && !s[0].covers("CL301", 2));
        assert!(s[1].file_wide && s[1].reason.is_none() && s[1].covers("CL203", 40));
    }
}
