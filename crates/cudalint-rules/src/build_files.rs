//! What a program's build files say about its macros, read without running them: a name the
//! Makefile or CMakeLists.txt never mentions is not defined by a `-D` flag, so `#ifdef X`
//! takes the branch a plain build takes (HeCBench fft's `#ifdef SINGLE_PRECISION`, whose
//! Makefile passes no -D: double). Where no build file is found, or it names X, the
//! preprocessor's first-branch guess stands (conditional.rs).

use crate::Input;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The text of the build files that govern a folder: the nearest folder above it that has
/// any, and every folder above that up to the repository root (a top-level CMakeLists.txt's
/// `add_compile_definitions` holds below it).
#[derive(Debug, Default)]
pub struct BuildFiles {
    /// The build files' texts, one after the other.
    pub(crate) text: String,
}

impl BuildFiles {
    /// Whether the name appears in the build files, as a word or after `-D`/`-U` (a longer
    /// name that starts with it does not count).
    pub fn mentions(&self, name: &str) -> bool {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        self.text.match_indices(name).any(|(at, _)| {
            let after = self.text[at + name.len()..].chars().next();
            !after.is_some_and(ident)
        })
    }
}

/// How far above a file build files are looked for, when no repository root stops the walk.
const MAX_LEVELS: usize = 8;

fn is_build_file(name: &str) -> bool {
    matches!(
        name,
        "Makefile" | "makefile" | "GNUmakefile" | "CMakeLists.txt" | "meson.build" | "BUILD"
    ) || name.ends_with(".mk")
        || name.ends_with(".cmake")
        || name == "BUILD.bazel"
}

/// The build files directly in `dir`, in name order.
fn build_files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| is_build_file(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The build files of a folder, read once however many folders below it ask: their text, and
/// whether the folder is a repository's root (where the walk up stops).
type Level = Arc<(String, bool)>;

fn level(dir: &Path, seen: &mut HashMap<PathBuf, Level>) -> Level {
    if let Some(l) = seen.get(dir) {
        return l.clone();
    }
    let mut text = String::new();
    for f in build_files_in(dir) {
        if let Ok(bytes) = std::fs::read(&f) {
            text.push_str(&String::from_utf8_lossy(&bytes));
            text.push('\n');
        }
    }
    let l = Arc::new((text, dir.join(".git").exists()));
    seen.insert(dir.to_path_buf(), l.clone());
    l
}

fn governing(dir: &Path, seen: &mut HashMap<PathBuf, Level>) -> Option<BuildFiles> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let mut text = String::new();
    let mut found = false;
    for d in dir.ancestors().take(MAX_LEVELS) {
        let l = level(d, seen);
        if !l.0.is_empty() {
            text.push_str(&l.0);
            found = true;
        }
        if l.1 {
            break;
        }
    }
    found.then_some(BuildFiles { text })
}

/// Attaches to every input the build files that govern its folder, read once per folder.
pub fn attach(inputs: &mut [Input]) {
    let mut by_dir: HashMap<PathBuf, Option<Arc<BuildFiles>>> = HashMap::new();
    let mut seen = HashMap::new();
    for input in inputs {
        let dir = Path::new(&input.path)
            .parent()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    p
                }
            })
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let build = by_dir
            .entry(dir)
            .or_insert_with_key(|d| governing(d, &mut seen).map(Arc::new))
            .clone();
        input.build = build;
    }
}

/// The names a text tests with `#ifdef`, `#ifndef`, `#elifdef`, `#elifndef` or `defined(...)`.
pub fn tested_names(text: &str) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for (d, _) in crate::include_context::directive_lines(text) {
        tested_in(d, &mut out);
    }
    out
}

/// The names one directive (after its `#`) tests.
pub(crate) fn tested_in<'t>(d: &'t str, out: &mut BTreeSet<&'t str>) {
    fn word(s: &str) -> Option<&str> {
        let s = s.trim_start();
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (end > 0).then(|| &s[..end])
    }
    for form in ["ifdef", "ifndef", "elifdef", "elifndef"] {
        if let Some(rest) = d.strip_prefix(form) {
            if rest.starts_with([' ', '\t']) {
                out.extend(word(rest));
            }
        }
    }
    if d.starts_with("if") || d.starts_with("elif") {
        for (at, _) in d.match_indices("defined") {
            let rest = d[at + "defined".len()..].trim_start();
            out.extend(word(rest.strip_prefix('(').unwrap_or(rest)));
        }
    }
}

/// The names some input `#define`s: those the program sets itself (a config.h, an include
/// guard) are left to the preprocessor.
pub fn defined_names(inputs: &[Input]) -> BTreeSet<&str> {
    inputs.iter().flat_map(|i| defined_in(&i.text)).collect()
}

/// The names a text `#define`s.
pub fn defined_in(text: &str) -> impl Iterator<Item = &str> {
    crate::include_context::directive_lines(text).filter_map(|(d, _)| define_name(d))
}

/// The name one directive (after its `#`) defines, if it is a `#define`.
pub(crate) fn define_name(d: &str) -> Option<&str> {
    let rest = d.strip_prefix("define")?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_whole_names_after_flags_or_in_words() {
        let b = BuildFiles {
            text: "CFLAGS += -DSINGLE_PRECISION -UNDEBUG\nadd_compile_definitions(USE_TILES=1)\n"
                .into(),
        };
        assert!(b.mentions("SINGLE_PRECISION"));
        assert!(b.mentions("NDEBUG"));
        assert!(b.mentions("USE_TILES"));
        // a name another starts with is not mentioned by it
        assert!(!b.mentions("SINGLE"));
        assert!(!b.mentions("DOUBLE"));
    }

    #[test]
    fn tested_names_are_the_defined_forms() {
        let t = "#ifdef A\n#ifndef B_H\n#if defined(C) && !defined D\n# elif defined (E)\n#if F > 2\n#define G\n";
        let names: Vec<&str> = tested_names(t).into_iter().collect();
        assert_eq!(names, ["A", "B_H", "C", "D", "E"]);
    }
}
