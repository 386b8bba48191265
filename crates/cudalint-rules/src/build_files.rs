//! What a program's build files say about its macros, read without running them: a name the
//! Makefile or CMakeLists.txt never mentions is not defined by a `-D` flag, so `#ifdef X`
//! takes the branch a plain build takes (HeCBench fft's `#ifdef SINGLE_PRECISION`, whose
//! Makefile passes no -D: double). Where no build file is found, or it names X, the
//! preprocessor's first-branch guess stands (conditional.rs). What the nearest Makefile's
//! flags define for every build (`CFLAGS := -Ddfloat=double`, outside any `ifeq` block) is
//! defined, where no compile command says otherwise.

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
    /// `NAME` or `NAME=VALUE` for each macro the nearest folder's Makefiles define with `-D`
    /// in every build (as `Defines::insert_flag` takes them).
    pub(crate) defines: Vec<String>,
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

/// The build files of a folder, read once however many folders below it ask: their text, the
/// macros its Makefiles define in every build, and whether the folder is a repository's root
/// (where the walk up stops).
type Level = Arc<(String, Vec<String>, bool)>;

fn level(dir: &Path, seen: &mut HashMap<PathBuf, Level>) -> Level {
    if let Some(l) = seen.get(dir) {
        return l.clone();
    }
    let mut text = String::new();
    let mut makefiles = String::new();
    let mut has_cmake_lists = false;
    for f in build_files_in(dir) {
        has_cmake_lists |= f.file_name().is_some_and(|n| n == "CMakeLists.txt");
        if let Ok(bytes) = std::fs::read(&f) {
            let t = String::from_utf8_lossy(&bytes);
            if is_makefile(&f.file_name().unwrap_or_default().to_string_lossy()) {
                makefiles.push_str(&t);
                makefiles.push('\n');
            }
            push_code(&mut text, &t);
        }
    }
    if has_cmake_lists {
        for f in cmake_modules(dir) {
            if let Ok(bytes) = std::fs::read(&f) {
                push_code(&mut text, &String::from_utf8_lossy(&bytes));
            }
        }
    }
    let l = Arc::new((
        text,
        makefile_defines(&makefiles),
        dir.join(".git").exists(),
    ));
    seen.insert(dir.to_path_buf(), l.clone());
    l
}

/// A build file's lines without their comments (CMake's and make's run from `#` to the end of
/// the line): cudaKDTree's `# SPATIAL k-d tree, with planes at arbitrary locations` names no
/// macro a build defines, and `#if SPATIAL` takes the `#else` a build takes.
fn push_code(text: &mut String, file: &str) {
    for line in file.lines() {
        text.push_str(line.split('#').next().unwrap_or(""));
        text.push('\n');
    }
}

/// The CMake modules a project keeps beside its CMakeLists.txt (`cmake/cuda.cmake`, which
/// `include(cuda)` reads): OneFlow's `add_definitions(-DWITH_CUDA)` is there, and a name they
/// mention may be defined by the build as much as one the CMakeLists.txt mentions.
fn cmake_modules(dir: &Path) -> Vec<PathBuf> {
    const MAX_DEPTH: usize = 3;
    const MAX_FILES: usize = 200;
    let mut out = Vec::new();
    let mut todo: Vec<(PathBuf, usize)> = ["cmake", "CMake", "cmake_modules"]
        .iter()
        .map(|n| (dir.join(n), 0))
        .filter(|(p, _)| p.is_dir())
        .collect();
    while let Some((d, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && depth < MAX_DEPTH {
                todo.push((e.path(), depth + 1));
            } else if t.is_file() && e.file_name().to_string_lossy().ends_with(".cmake") {
                out.push(e.path());
            }
        }
        if out.len() >= MAX_FILES {
            out.truncate(MAX_FILES);
            break;
        }
    }
    out
}

fn is_makefile(name: &str) -> bool {
    matches!(name, "Makefile" | "makefile" | "GNUmakefile") || name.ends_with(".mk")
}

/// The `-D` flags a Makefile gives in every build: those outside `ifeq`, `ifneq`, `ifdef` and
/// `ifndef` blocks (a flag a make variable switches on is not known to be on), whose value
/// names no make variable. A name given two different values (two targets) is left out.
fn makefile_defines(text: &str) -> Vec<String> {
    let mut depth = 0usize;
    let mut found: Vec<(String, Option<String>)> = Vec::new();
    let mut clash: BTreeSet<String> = BTreeSet::new();
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    for line in joined.lines() {
        let code = line.split('#').next().unwrap_or("");
        let head = code.trim_start();
        let word = head.split_whitespace().next().unwrap_or("");
        match word {
            "ifeq" | "ifneq" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > 0 {
            continue;
        }
        let mut tokens = code.split_whitespace();
        while let Some(tok) = tokens.next() {
            let Some(rest) = tok.strip_prefix("-D") else {
                continue;
            };
            let flag = if rest.is_empty() {
                tokens.next().unwrap_or("")
            } else {
                rest
            };
            let flag = flag.trim_matches(|c| c == '\'' || c == '"');
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n, Some(v.trim_matches(|c| c == '\'' || c == '"'))),
                None => (flag, None),
            };
            let ident = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident || value.is_some_and(|v| v.contains('$')) {
                continue;
            }
            let value = value.map(str::to_string);
            match found.iter().find(|(n, _)| n == name) {
                Some((_, v)) if *v != value => {
                    clash.insert(name.to_string());
                }
                Some(_) => {}
                None => found.push((name.to_string(), value)),
            }
        }
    }
    found
        .into_iter()
        .filter(|(n, _)| !clash.contains(n))
        .map(|(n, v)| match v {
            Some(v) => format!("{n}={v}"),
            None => n,
        })
        .collect()
}

fn governing(dir: &Path, seen: &mut HashMap<PathBuf, Level>) -> Option<BuildFiles> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let mut text = String::new();
    let mut defines = None;
    for d in dir.ancestors().take(MAX_LEVELS) {
        let l = level(d, seen);
        if !l.0.is_empty() {
            text.push_str(&l.0);
            // the nearest folder with build files builds this one: a Makefile higher up may
            // build other programs with other flags
            defines.get_or_insert_with(|| l.1.clone());
        }
        if l.2 {
            break;
        }
    }
    defines.map(|defines| BuildFiles { text, defines })
}

/// The text of the build files that govern `dir` (empty where there are none).
pub(crate) fn governing_text(dir: &Path) -> String {
    governing(dir, &mut HashMap::new()).map_or_else(String::new, |b| b.text)
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
    use rayon::prelude::*;
    let each: Vec<Vec<&str>> = inputs
        .par_iter()
        .map(|i| defined_in(&i.text).collect())
        .collect();
    each.into_iter().flatten().collect()
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
            defines: Vec::new(),
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

    #[test]
    fn makefile_flags_outside_conditionals_define() {
        let t = "CC = nvcc\nCFLAGS := $(EXTRA_CFLAGS) -Ddfloat=double -Ddlong=int \\\n  -DUSE_GPU -D WARP=32\n\
                 ifeq ($(DEBUG),yes)\n  CFLAGS += -g -DDEBUG\nelse\n  CFLAGS += -DFAST\nendif\n\
                 CFLAGS += -Dp_N=$(N) -DVALUE='\"x\"' # -DCOMMENTED\n\
                 a.o: a.cu\n\t$(CC) -DMODE=1 -c a.cu\nb.o: b.cu\n\t$(CC) -DMODE=2 -c b.cu\n";
        assert_eq!(
            makefile_defines(t),
            [
                "dfloat=double",
                "dlong=int",
                "USE_GPU",
                "WARP=32",
                "VALUE=x"
            ]
        );
    }

    #[test]
    fn a_cmake_module_beside_the_cmake_lists_is_read() {
        let root = std::env::temp_dir().join(format!("cudalint-cmake-{}", std::process::id()));
        let src = root.join("src").join("kernels");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(root.join("cmake").join("third_party")).unwrap();
        std::fs::write(
            root.join("CMakeLists.txt"),
            "include(cuda)\n# SPATIAL k-d tree, with planes\nset(X 1) # USE_TILES too\n",
        )
        .unwrap();
        std::fs::write(
            root.join("cmake/cuda.cmake"),
            "add_definitions(-DWITH_CUDA)\n",
        )
        .unwrap();
        std::fs::write(
            root.join("cmake/third_party/nccl.cmake"),
            "set(USE_NCCL ON)\n",
        )
        .unwrap();
        // a module folder under a folder with no CMakeLists.txt is not the build's
        std::fs::create_dir_all(src.join("cmake")).unwrap();
        std::fs::write(src.join("cmake/other.cmake"), "add_definitions(-DSTRAY)\n").unwrap();
        let b = governing(&src, &mut HashMap::new()).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert!(b.mentions("WITH_CUDA"));
        assert!(b.mentions("USE_NCCL"));
        assert!(!b.mentions("STRAY"));
        // what a comment says names no macro of the build
        assert!(!b.mentions("SPATIAL"));
        assert!(!b.mentions("USE_TILES"));
    }
}
