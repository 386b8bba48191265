//! `compile_commands.json`: the flags the build itself compiles each file with, as CMake
//! (`CMAKE_EXPORT_COMPILE_COMMANDS=ON`), Bear or Bazel's extractors write them and clangd,
//! clang-tidy and CodeChecker read them. A target's `-D` picks the `#if` branch cudalint
//! analyses, and its `-I` is where `#include "..."` headers are; without them cudalint guesses
//! both (the first branch, the folders above the file).
//!
//! Only what changes what cudalint reads is taken: `-D`/`-U` (nvcc's, gcc's and clang's
//! spellings), `-I`/`-isystem`, `-include` (the macros the forced header leaves defined) and
//! `-std` (as `__cplusplus`). Everything else (code generation, warnings, output) is skipped,
//! with its argument where it takes one as a separate word.

use cudalint_syntax::{Defines, HeaderMacro};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const FILE_NAME: &str = "compile_commands.json";

/// What one file's compile command says, resolved: what an [`crate::Input`] carries.
#[derive(Debug, Default, PartialEq)]
pub struct CompileCommand {
    /// `-std`, then `-D`/`-U` in order, then what the `-include` headers leave defined.
    pub defines: Defines,
    /// `-I`, then `-isystem`, absolute or relative to the current folder.
    pub include_dirs: Vec<PathBuf>,
    /// The database the command comes from (for messages and the results cache's key).
    pub database: PathBuf,
}

/// A `-D` or a `-U`, kept in order: the compiler applies them one after the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Macro {
    Define(String),
    Undefine(String),
}

/// The flags of one command line that cudalint uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Flags {
    pub macros: Vec<Macro>,
    pub include_dirs: Vec<PathBuf>,
    pub system_include_dirs: Vec<PathBuf>,
    /// As spelled: looked for in the directory, then along the include path.
    pub forced_includes: Vec<String>,
    pub std: Option<String>,
    /// Response files named with `@file` or `--options-file` that could not be read: CMake
    /// names some that only the build writes.
    pub unread: Vec<PathBuf>,
}

/// Options whose value is the next word and means nothing here: the value must not be read
/// as an option of its own (`-Xcompiler -DFOO` defines FOO for the host compiler only).
const SKIP_WITH_VALUE: &[&str] = &[
    "-Xcompiler",
    "--compiler-options",
    "-Xlinker",
    "--linker-options",
    "-Xptxas",
    "--ptxas-options",
    "-Xnvlink",
    "--nvlink-options",
    "-Xarchive",
    "--archive-options",
    "-Xcudafe",
    "-Xfatbin",
    "--fatbin-options",
    "-Xclang",
    "-Xarch_host",
    "-Xarch_device",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xassembler",
    "-Xpreprocessor",
    "-mllvm",
    "-o",
    "--output-file",
    "-x",
    "-ccbin",
    "--compiler-bindir",
    "-MF",
    "-MT",
    "-MQ",
    "-odir",
    "--output-directory",
];

/// What a flag that cudalint reads does with its value.
#[derive(Clone, Copy)]
enum Kind {
    Define,
    Undefine,
    Include,
    System,
    Forced,
    Std,
    OptionsFile,
}

/// Spellings that take their value as the next word, joined (`-DX`, only for the short
/// ones), or after `=`.
const TAKES_VALUE: &[(&str, Kind, bool)] = &[
    // (spelling, kind, may be joined without `=`)
    ("-D", Kind::Define, true),
    ("--define-macro", Kind::Define, false),
    ("-U", Kind::Undefine, true),
    ("--undefine-macro", Kind::Undefine, false),
    ("-I", Kind::Include, true),
    ("--include-path", Kind::Include, false),
    ("-iquote", Kind::Include, true),
    ("-isystem", Kind::System, true),
    ("--system-include", Kind::System, false),
    ("-idirafter", Kind::System, true),
    ("-include", Kind::Forced, false),
    ("--pre-include", Kind::Forced, false),
    ("-std", Kind::Std, false),
    ("--std", Kind::Std, false),
    ("--options-file", Kind::OptionsFile, false),
    ("-optf", Kind::OptionsFile, false),
];

/// How deep response files may name other response files (clang stops cycles the same way).
const MAX_RESPONSE_DEPTH: usize = 8;

/// The flags of a command line (its first word, the compiler, included or not: a word that is
/// no option is skipped). Relative paths resolve against `directory`, as the build runs there.
pub fn parse_arguments(args: &[String], directory: &Path) -> Flags {
    let mut flags = Flags::default();
    parse_into(args, directory, &mut flags, 0);
    flags
}

fn parse_into(args: &[String], directory: &Path, flags: &mut Flags, depth: usize) {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if let Some(file) = arg.strip_prefix('@') {
            response_file(file, directory, flags, depth);
            continue;
        }
        if SKIP_WITH_VALUE.contains(&arg) {
            i += 1;
            continue;
        }
        let Some((kind, value)) = TAKES_VALUE.iter().find_map(|&(spelling, kind, joined)| {
            let rest = arg.strip_prefix(spelling)?;
            if rest.is_empty() {
                return Some((kind, None));
            }
            let value = rest
                .strip_prefix('=')
                .or(if joined { Some(rest) } else { None })?;
            Some((kind, Some(value.to_string())))
        }) else {
            continue;
        };
        let value = match value {
            Some(v) => v,
            None => match args.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => continue,
            },
        };
        let path = |v: &str| directory.join(v);
        match kind {
            Kind::Define => flags.macros.push(Macro::Define(value)),
            Kind::Undefine => flags.macros.push(Macro::Undefine(value)),
            // gcc's obsolete `-I-` splits the search path; there is no folder to add
            Kind::Include if value != "-" => flags.include_dirs.push(path(&value)),
            Kind::Include => {}
            Kind::System => flags.system_include_dirs.push(path(&value)),
            Kind::Forced => flags.forced_includes.push(value),
            Kind::Std => flags.std = Some(value),
            Kind::OptionsFile => response_file(&value, directory, flags, depth),
        }
    }
}

/// A response file's words, spliced in where it is named.
fn response_file(file: &str, directory: &Path, flags: &mut Flags, depth: usize) {
    let path = directory.join(file);
    let words = (depth < MAX_RESPONSE_DEPTH)
        .then(|| std::fs::read_to_string(&path).ok())
        .flatten()
        .and_then(|text| split_command(&text).ok());
    match words {
        Some(words) => parse_into(&words, directory, flags, depth + 1),
        None => flags.unread.push(path),
    }
}

/// A command line split into words as a POSIX shell does it: blanks separate words, single
/// quotes keep everything, double quotes keep everything but `\"`, `\\`, `\$` and `` \` ``,
/// and a backslash elsewhere keeps the next character (a backslash-newline joins lines).
/// CMake, Bear and Bazel quote `command` this way (`-DNAME=\"text\"`, `'-DX=a b'`).
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    // a word may be empty (`''`): whether one has begun is not whether it has characters
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => {
                    word.push(next);
                    in_word = true;
                }
                None => return Err("a backslash ends the command".into()),
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a single quote is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a double quote is not closed".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a double quote is not closed".into()),
                    }
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The value nvcc and the host compiler give `__cplusplus` for a `-std`: a header's
/// `#if __cplusplus >= 201703L` decides as in the build.
fn cplusplus(std: &str) -> Option<&'static str> {
    let version = std
        .strip_prefix("c++")
        .or_else(|| std.strip_prefix("gnu++"))?;
    Some(match version {
        "98" | "03" => "199711L",
        "11" | "0x" => "201103L",
        "14" | "1y" => "201402L",
        "17" | "1z" => "201703L",
        "20" | "2a" => "202002L",
        "23" | "2b" => "202302L",
        _ => return None,
    })
}

/// One entry of the database, as written.
#[derive(Deserialize)]
#[serde(expecting = "an entry: an object with `directory`, `file` and `arguments` or `command`")]
struct RawEntry {
    directory: Option<String>,
    file: Option<String>,
    arguments: Option<Vec<String>>,
    command: Option<String>,
}

/// One entry, read: where the build ran and its words.
struct Entry {
    directory: PathBuf,
    arguments: Vec<String>,
}

/// A compilation database, read once and resolved per file as files ask.
pub struct Database {
    pub path: PathBuf,
    entries: Vec<Entry>,
    /// Each file's first entry: a file two targets compile takes the first target's flags,
    /// as clangd does when it has to pick one.
    by_file: HashMap<PathBuf, usize>,
    resolved: Mutex<HashMap<usize, Arc<CompileCommand>>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Database({}, {} entries)",
            self.path.display(),
            self.entries.len()
        )
    }
}

/// A path with `.` and `..` taken out without asking the file system (for files that do not
/// exist: a database may name a generated file before the build writes it).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The key a file is looked up by: its real path where it exists, through links, so that a
/// database written with one spelling of a folder finds the files given with another.
fn file_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(path)
        };
        lexical(&abs)
    })
}

impl Database {
    /// Reads a database. Errors name the file and the entry at fault.
    pub fn parse(text: &str, path: &Path) -> Result<Database, String> {
        let raw: Vec<RawEntry> = serde_json::from_str(text).map_err(|e| {
            format!(
                "{}: not a compilation database (a JSON array of entries): {e}",
                path.display()
            )
        })?;
        let mut entries = Vec::with_capacity(raw.len());
        let mut by_file = HashMap::new();
        for (n, e) in raw.into_iter().enumerate() {
            let at = |what: &str| format!("{}: entry {} {what}", path.display(), n + 1);
            let Some(file) = e.file else {
                return Err(at("has no `file`"));
            };
            let Some(directory) = e.directory else {
                return Err(at(&format!("(`{file}`) has no `directory`")));
            };
            let arguments = match (e.arguments, e.command) {
                (Some(a), _) => a,
                (None, Some(c)) => split_command(&c).map_err(|why| {
                    at(&format!("(`{file}`): its `command` cannot be split: {why}"))
                })?,
                (None, None) => {
                    return Err(at(&format!(
                        "(`{file}`) has neither `arguments` nor `command`"
                    )))
                }
            };
            // a relative `directory` is relative to the database's own folder, as clangd reads it
            let directory = path.parent().unwrap_or(Path::new("")).join(directory);
            by_file
                .entry(file_key(&directory.join(&file)))
                .or_insert(entries.len());
            entries.push(Entry {
                directory,
                arguments,
            });
        }
        Ok(Database {
            path: path.to_path_buf(),
            entries,
            by_file,
            resolved: Mutex::default(),
        })
    }

    /// The database at `path`, read once per process while it is unchanged: the language
    /// server asks on every keystroke.
    pub fn open(path: &Path) -> Result<Arc<Database>, String> {
        type Stamp = (Option<std::time::SystemTime>, u64);
        static OPENED: Mutex<Vec<(PathBuf, Stamp, Arc<Database>)>> = Mutex::new(Vec::new());
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let stamp = (meta.modified().ok(), meta.len());
        let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, db)) = opened.iter().find(|(p, s, _)| p == path && *s == stamp) {
            return Ok(db.clone());
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let db = Arc::new(Database::parse(&text, path)?);
        opened.retain(|(p, _, _)| p != path);
        opened.push((path.to_path_buf(), stamp, db.clone()));
        Ok(db)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The compile command of `file`, if the database has one, with what could not be read
    /// of it (said once: later asks get the same command without them).
    pub fn lookup(&self, file: &Path) -> Option<(Arc<CompileCommand>, Vec<String>)> {
        let n = *self.by_file.get(&file_key(file))?;
        let mut resolved = self.resolved.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = resolved.get(&n) {
            return Some((c.clone(), Vec::new()));
        }
        let (command, warnings) = self.resolve(&self.entries[n], file);
        let command = Arc::new(command);
        resolved.insert(n, command.clone());
        Some((command, warnings))
    }

    fn resolve(&self, entry: &Entry, file: &Path) -> (CompileCommand, Vec<String>) {
        let flags = parse_arguments(&entry.arguments, &entry.directory);
        let mut warnings: Vec<String> = flags
            .unread
            .iter()
            .map(|p| {
                format!(
                    "{}: the compile command of {} names the response file {}, which cannot be read; its flags are not used",
                    self.path.display(),
                    file.display(),
                    p.display()
                )
            })
            .collect();
        let mut defines = Defines::default();
        if let Some(value) = flags.std.as_deref().and_then(cplusplus) {
            let _ = defines.insert_flag(&format!("__cplusplus={value}"));
        }
        for m in &flags.macros {
            // a function-like `-D'F(x)=x'` has no place among object-like values: skipped
            let _ = match m {
                Macro::Define(d) => defines.insert_flag(d),
                Macro::Undefine(u) => defines.undefine(u),
            };
        }
        let include_dirs: Vec<PathBuf> = flags
            .include_dirs
            .iter()
            .chain(&flags.system_include_dirs)
            .cloned()
            .collect();
        // a forced include is read as the first line of the file: its object-like macros hold
        // there (its types and functions are not seen, nor what it includes in turn)
        for forced in &flags.forced_includes {
            let found = std::iter::once(&entry.directory)
                .chain(&include_dirs)
                .map(|d| d.join(forced))
                .find(|p| p.is_file());
            match found.and_then(|p| std::fs::read_to_string(p).ok()) {
                Some(text) => {
                    for (name, m) in crate::include_context::macros_left(&text, &defines) {
                        let _ = match m {
                            HeaderMacro::Object(v) => defines.insert_flag(&format!("{name}={v}")),
                            HeaderMacro::Undefined => defines.undefine(&name),
                            HeaderMacro::Defined => Ok(()),
                        };
                    }
                }
                None => warnings.push(format!(
                    "{}: the compile command of {} force-includes {}, which cannot be read; its macros are not used",
                    self.path.display(),
                    file.display(),
                    entry.directory.join(forced).display()
                )),
            }
        }
        let command = CompileCommand {
            defines,
            include_dirs,
            database: self.path.clone(),
        };
        (command, warnings)
    }
}

/// Where the flags of a run's files come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// The nearest `compile_commands.json` (or `build/compile_commands.json`) in the file's
    /// folder or above it, up to the repository's top; else the one in `fallback` (the
    /// current folder, or the editor's workspace) or its `build/`. A cudalint.toml's
    /// `compile-commands` comes before both.
    Discover { fallback: Option<PathBuf> },
    /// One database for every file (`--compile-commands`).
    Given(PathBuf),
    /// None at all (`--no-compile-commands`).
    Off,
}

/// The database named as `path`: the file, or a folder holding one (as `clang-tidy -p build`).
pub fn named(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(FILE_NAME)
    } else {
        path.to_path_buf()
    }
}

/// A database in `dir` or its `build/`.
fn in_folder(dir: &Path) -> Option<PathBuf> {
    [dir.join(FILE_NAME), dir.join("build").join(FILE_NAME)]
        .into_iter()
        .find(|p| p.is_file())
}

/// The database found for the files of folder `dir` (see [`Source::Discover`]).
pub fn discover(dir: &Path, fallback: Option<&Path>) -> Option<PathBuf> {
    let start = std::fs::canonicalize(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    })
    .ok();
    for d in start.iter().flat_map(|s| s.ancestors()) {
        if let Some(found) = in_folder(d) {
            return Some(found);
        }
        // a database above the repository describes some other project
        if d.join(".git").exists() {
            break;
        }
    }
    fallback.and_then(in_folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn commands_split_as_a_shell_splits_them() {
        assert_eq!(words("nvcc  -c\ta.cu\n"), ["nvcc", "-c", "a.cu"]);
        assert_eq!(
            words(r#"nvcc "-DNAME=\"a b\"" '-DQ=it'\''s' -DP=a\ b -D"X=1" ''"#),
            ["nvcc", "-DNAME=\"a b\"", "-DQ=it's", "-DP=a b", "-DX=1", ""]
        );
        // a backslash in double quotes keeps itself before an ordinary character
        assert_eq!(words(r#""C:\dir" "a\$b""#), [r"C:\dir", "a$b"]);
        assert_eq!(words("a\\\nb c"), ["ab", "c"]);
        assert_eq!(words(""), Vec::<String>::new());
        assert!(split_command("nvcc '-DX")
            .unwrap_err()
            .contains("single quote"));
        assert!(split_command("nvcc \"-DX")
            .unwrap_err()
            .contains("double quote"));
        assert!(split_command("nvcc \\").is_err());
    }

    #[test]
    fn every_spelling_of_a_macro_flag() {
        let f = parse_arguments(
            &args(&[
                "nvcc",
                "-DA",
                "-D",
                "B=2",
                "--define-macro",
                "C",
                "--define-macro=D=4",
                "-D=E",
                "-UF",
                "-U",
                "G",
                "--undefine-macro",
                "H",
                "--undefine-macro=I",
                "-c",
                "a.cu",
            ]),
            Path::new("/b"),
        );
        use Macro::*;
        let d = |s: &str| Define(s.into());
        let u = |s: &str| Undefine(s.into());
        assert_eq!(
            f.macros,
            [
                d("A"),
                d("B=2"),
                d("C"),
                d("D=4"),
                d("E"),
                u("F"),
                u("G"),
                u("H"),
                u("I")
            ]
        );
    }

    #[test]
    fn include_folders_resolve_against_the_directory() {
        let f = parse_arguments(
            &args(&[
                "clang++",
                "-Iinc",
                "-I",
                "/abs",
                "--include-path",
                "../up",
                "--include-path=eq",
                "-I-",
                "-iquote",
                "q",
                "-isystem",
                "sys",
                "-isystem/sys2",
                "--system-include=sys3",
                "-include",
                "pre.h",
                "--pre-include",
                "/p2.h",
                "--pre-include=p3.h",
                "-std=c++20",
            ]),
            Path::new("/b"),
        );
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            f.include_dirs,
            p(&["/b/inc", "/abs", "/b/../up", "/b/eq", "/b/q"])
        );
        assert_eq!(f.system_include_dirs, p(&["/b/sys", "/sys2", "/b/sys3"]));
        assert_eq!(f.forced_includes, ["pre.h", "/p2.h", "p3.h"]);
        assert_eq!(f.std.as_deref(), Some("c++20"));
        // nvcc's spelling with the value as the next word
        let f = parse_arguments(&args(&["nvcc", "--std", "c++14"]), Path::new("/b"));
        assert_eq!(f.std.as_deref(), Some("c++14"));
    }

    #[test]
    fn passthroughs_and_outputs_are_skipped_with_their_argument() {
        let f = parse_arguments(
            &args(&[
                "nvcc",
                "-Xcompiler",
                "-DHOST_ONLY",
                "--compiler-options",
                "-I/host",
                "-Xcompiler=-DJOINED",
                "-o",
                "-DNOT_A_FLAG.o",
                "-x",
                "cu",
                "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                "-DKEPT",
                // an `-include...` or `-Ddir` that is something else
                "-includes",
                "-std",
            ]),
            Path::new("/b"),
        );
        assert_eq!(f.macros, [Macro::Define("KEPT".into())]);
        assert!(f.include_dirs.is_empty() && f.forced_includes.is_empty());
        assert_eq!(f.std, None);
    }

    #[test]
    fn response_files_are_spliced_in_where_they_are_named() {
        let dir = std::env::temp_dir().join(format!("cudalint-cc-unit-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.rsp"), "-DFROM_RSP '-DSPACED=a b' @sub/b.rsp\n").unwrap();
        std::fs::write(dir.join("sub/b.rsp"), "-Inested").unwrap();
        std::fs::write(dir.join("loop.rsp"), "@loop.rsp").unwrap();
        let f = parse_arguments(
            &args(&[
                "nvcc",
                "-DBEFORE",
                "@a.rsp",
                "--options-file",
                "missing.rsp",
                "@loop.rsp",
                "-DAFTER",
            ]),
            &dir,
        );
        let d = |s: &str| Macro::Define(s.into());
        assert_eq!(
            f.macros,
            [d("BEFORE"), d("FROM_RSP"), d("SPACED=a b"), d("AFTER")]
        );
        // relative to the entry's directory, not to the response file
        assert_eq!(f.include_dirs, [dir.join("nested")]);
        assert_eq!(f.unread[0], dir.join("missing.rsp"));
        assert_eq!(f.unread.len(), 2, "{:?}", f.unread);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_database_resolves_each_file_and_names_its_faults() {
        let dir = std::env::temp_dir().join(format!("cudalint-cc-db-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.cu"), "").unwrap();
        std::fs::write(dir.join("src/b.cu"), "").unwrap();
        std::fs::write(
            dir.join("pre.h"),
            "#define FORCED 7\n#ifdef USE_X\n#define WITH_X 1\n#endif\n#undef NOPE\n",
        )
        .unwrap();
        let db_path = dir.join(FILE_NAME);
        let text = format!(
            r#"[
  {{"directory": "{d}", "file": "src/a.cu",
    "arguments": ["nvcc", "-DUSE_X", "-UNOPE", "-include", "pre.h", "-std=c++20", "-Iinc", "-c", "src/a.cu"]}},
  {{"directory": "{d}/src", "file": "b.cu", "command": "nvcc -DB=\"two words\" -c b.cu"}},
  {{"directory": "{d}", "file": "src/a.cu", "arguments": ["nvcc", "-DSECOND_TARGET"]}}
]"#,
            d = dir.display()
        );
        let db = Database::parse(&text, &db_path).unwrap();
        assert_eq!(db.len(), 3);
        let (a, warnings) = db.lookup(&dir.join("src/../src/a.cu")).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(a.defines.get("USE_X"), Some("1"));
        assert_eq!(a.defines.get("FORCED"), Some("7"));
        assert_eq!(a.defines.get("WITH_X"), Some("1"));
        assert_eq!(a.defines.is_defined("NOPE"), Some(false));
        assert_eq!(a.defines.get("__cplusplus"), Some("202002L"));
        assert_eq!(a.defines.get("SECOND_TARGET"), None);
        assert_eq!(a.include_dirs, [dir.join("inc")]);
        let (b, _) = db.lookup(&dir.join("src/b.cu")).unwrap();
        assert_eq!(b.defines.get("B"), Some("two words"));
        assert!(db.lookup(&dir.join("pre.h")).is_none());

        let fault = |text: &str| Database::parse(text, Path::new("db.json")).unwrap_err();
        let e = fault(r#"[{"directory": "/", "arguments": []}]"#);
        assert!(e.starts_with("db.json: entry 1 has no `file`"), "{e}");
        let e = fault(r#"[{"directory": "/", "file": "a.cu"}]"#);
        assert!(e.contains("neither `arguments` nor `command`"), "{e}");
        let e = fault(r#"[{"directory": "/", "file": "a.cu", "command": "nvcc 'x"}]"#);
        assert!(
            e.contains("entry 1 (`a.cu`)") && e.contains("single quote"),
            "{e}"
        );
        let e = fault(r#"{"directory": "/"}"#);
        assert!(e.starts_with("db.json: not a compilation database"), "{e}");
        let e = fault("[{\"file\": \"a.cu\",");
        assert!(e.contains("db.json") && e.contains("line 1"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn std_values_are_the_compilers_cplusplus() {
        assert_eq!(cplusplus("c++17"), Some("201703L"));
        assert_eq!(cplusplus("gnu++2a"), Some("202002L"));
        assert_eq!(cplusplus("c11"), None);
    }
}
