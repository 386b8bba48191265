//! `check --fix` and `--diff`: applies machine-applicable fixes (today: shared-array padding
//! that lane evaluation proved). Every fixed file is re-parsed and re-analysed with the rest of
//! the run; a file whose fixes add a parse error or leave a fixed finding in place is left
//! untouched. Files are written atomically (a temporary file renamed over the original, its
//! permissions kept).

use cudalint_rules::{Applicability, Diagnostic, Edit, FileReport, Input, Settings};
use std::collections::BTreeMap;

pub struct Outcome {
    /// (file, description) of every applied change.
    pub applied: Vec<(String, String)>,
    /// (file, reason) of every refused one.
    pub refused: Vec<(String, String)>,
    pub diff: String,
}

fn parse_errors(text: &str) -> usize {
    let Some(tree) = cudalint_syntax::parse_tree(text) else {
        return usize::MAX;
    };
    let mut n = 0;
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            n += 1;
        }
        if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    n
}

/// The finding as something that survives edits: code, kernel and the access's text.
fn identity(d: &Diagnostic, text: &str) -> (String, String, String) {
    let access = text
        .get(d.at.bytes.clone())
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (d.code.to_string(), d.kernel.clone(), access)
}

fn apply_edits(text: &str, edits: &[&Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.at.bytes.start));
    let mut out = text.to_string();
    let mut limit = usize::MAX;
    for e in sorted {
        let r = e.at.bytes.clone();
        if r.end > limit
            || r.end > out.len()
            || !out.is_char_boundary(r.start)
            || !out.is_char_boundary(r.end)
        {
            return None;
        }
        out.replace_range(r.clone(), &e.replacement);
        limit = r.start;
    }
    Some(out)
}

fn diff(path: &str, old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut s = format!("--- {path}\n+++ {path} (fixed)\n");
    // fixes change lines in place: pair the lines up
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            s.push_str(&format!("@@ -{n},1 +{n},1 @@\n-{x}\n+{y}\n", n = i + 1));
        }
    }
    s
}

/// Computes and (unless `dry`) writes the fixes; `reports` are the findings of `inputs`.
pub fn run(inputs: &[Input], reports: &[FileReport], settings: &Settings, dry: bool) -> Outcome {
    let mut out = Outcome {
        applied: Vec::new(),
        refused: Vec::new(),
        diff: String::new(),
    };
    // per file: the findings with a machine-applicable fix, and their edits (deduplicated:
    // several conflicts on one array propose the same padding)
    let mut per_file: BTreeMap<&str, (Vec<&Diagnostic>, Vec<&Edit>)> = BTreeMap::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        let Some(fix) = &d.fix else { continue };
        if fix.applicability != Applicability::MachineApplicable || fix.edits.is_empty() {
            continue;
        }
        let entry = per_file.entry(d.at.file.as_str()).or_default();
        entry.0.push(d);
        for e in &fix.edits {
            if !entry
                .1
                .iter()
                .any(|x| x.at.bytes == e.at.bytes && x.replacement == e.replacement)
            {
                entry.1.push(e);
            }
        }
    }
    for (path, (fixed, edits)) in per_file {
        let Some(idx) = inputs.iter().position(|i| i.path == path) else {
            continue;
        };
        if inputs[idx].replaced_bytes > 0 {
            // writing the text back would turn those bytes into `?`
            out.refused.push((
                path.to_string(),
                format!(
                    "{} bytes are not valid UTF-8 and were read as `?`",
                    inputs[idx].replaced_bytes
                ),
            ));
            continue;
        }
        let old = &inputs[idx].text;
        let Some(new) = apply_edits(old, &edits) else {
            out.refused
                .push((path.to_string(), "its fixes overlap".into()));
            continue;
        };
        if parse_errors(&new) > parse_errors(old) {
            out.refused.push((
                path.to_string(),
                "the fixed file would not parse as before".into(),
            ));
            continue;
        }
        // re-analyse the run with the fixed text in place of the file
        let trial: Vec<Input> = inputs
            .iter()
            .map(|i| Input {
                path: i.path.clone(),
                text: if i.path == path {
                    new.as_str().into()
                } else {
                    i.text.clone()
                },
                context: i.context,
                config: i.config.clone(),
                replaced_bytes: i.replaced_bytes,
                build: i.build.clone(),
                compile: i.compile.clone(),
            })
            .collect();
        let after = cudalint_rules::check(&trial, settings);
        let remaining: Vec<(String, String, String)> = after
            .iter()
            .filter(|r| r.path == path)
            .flat_map(|r| &r.diagnostics)
            .map(|d| identity(d, &new))
            .collect();
        let survivors: Vec<String> = fixed
            .iter()
            .map(|d| identity(d, old))
            .filter(|id| remaining.contains(id))
            .map(|(c, _, a)| format!("{c} at `{a}`"))
            .collect();
        if !survivors.is_empty() {
            out.refused.push((
                path.to_string(),
                format!("the fix does not remove {}", survivors.join(", ")),
            ));
            continue;
        }
        out.diff.push_str(&diff(path, old, &new));
        if !dry {
            if let Err(e) = write_atomically(path, &new) {
                out.refused.push((path.to_string(), e));
                continue;
            }
        }
        for e in &edits {
            let was = old.get(e.at.bytes.clone()).unwrap_or("");
            out.applied.push((
                path.to_string(),
                format!("line {}: [{was}] -> [{}]", e.at.line, e.replacement),
            ));
        }
    }
    out
}

fn write_atomically(path: &str, text: &str) -> Result<(), String> {
    let target = std::path::Path::new(path);
    let perms = std::fs::metadata(target)
        .map_err(|e| format!("{e}"))?
        .permissions();
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.cudalint-fix.{}", std::process::id()));
    let result = (|| {
        std::fs::write(&tmp, text)?;
        std::fs::set_permissions(&tmp, perms)?;
        std::fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| format!("could not write: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "__global__ void k(float* out) {\n  __shared__ float tile[32][32];\n  tile[threadIdx.y][threadIdx.x] = 1;\n  __syncthreads();\n  out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\nvoid go(float* o) { k<<<1, dim3(32, 32)>>>(o); }\n";

    fn with_edit(replacement: &str) -> Outcome {
        let inputs = vec![Input::new("t.cu", SRC)];
        let settings = Settings::default();
        let mut reports = cudalint_rules::check(&inputs, &settings);
        let d = reports[0]
            .diagnostics
            .iter_mut()
            .find(|d| d.code == "CL301")
            .expect("the conflict");
        let fix = d.fix.as_mut().expect("a padding fix");
        assert_eq!(fix.applicability, Applicability::MachineApplicable);
        fix.edits[0].replacement = replacement.to_string();
        run(&inputs, &reports, &settings, true)
    }

    #[test]
    fn the_proven_padding_is_applied() {
        let o = with_edit("33");
        assert!(o.refused.is_empty(), "{:?}", o.refused);
        assert!(
            o.diff.contains("+  __shared__ float tile[32][33];"),
            "{}",
            o.diff
        );
    }

    #[test]
    fn a_fix_that_breaks_the_parse_is_refused() {
        let o = with_edit("33]]]; {{");
        assert!(o.applied.is_empty());
        assert!(
            o.refused[0].1.contains("would not parse"),
            "{:?}",
            o.refused
        );
    }

    #[test]
    fn a_fix_that_leaves_its_finding_is_refused() {
        let o = with_edit("32 + 32");
        assert!(o.applied.is_empty());
        assert!(
            o.refused[0].1.contains("does not remove CL301"),
            "{:?}",
            o.refused
        );
    }
}
