//! Turning command-line paths into files to check: folders are walked for .cu/.cuh files, and
//! for headers that hold kernels (respecting .gitignore as ripgrep does, and `--exclude`),
//! each file is read and vetted, and every problem becomes a one-line message naming the path
//! while the other files go on. The headers they include are added after
//! (`cudalint_rules::workspace::prepare`).

use cudalint_rules::Input;
use std::path::Path;

pub const EXTENSIONS: &[&str] = &["cu", "cuh"];

/// Headers a folder walk looks into: one that holds `__global__` code and that no checked file
/// includes is analysed on its own, as clangd does for a header with no compile command (an
/// included one is part of its includer's translation unit either way).
pub const HEADER_EXTENSIONS: &[&str] = &["h", "hpp", "hh", "hxx", "inl", "cuinl"];

/// Files larger than this are refused (generated files this large are not hand-written CUDA).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub struct Collected {
    pub inputs: Vec<Input>,
    pub errors: Vec<String>,
    /// Files checked all the same, with what was odd about them.
    pub warnings: Vec<String>,
}

/// Whether a path is a CUDA source a folder walk checks (`.cu`, `.cuh`, and their spellings).
pub fn is_source(path: &Path) -> bool {
    has_extension(path, EXTENSIONS)
}

/// CUDA sources by their last extension, and Bazel's and TensorFlow's spelling of them
/// (`spmm.cu.cc`, `kernel.cu.cpp`: a C++ extension after `.cu` for the build's rules).
fn has_extension(path: &Path, list: &[&str]) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let last = name.rsplit_once('.');
    match last {
        Some((_, e)) if list.contains(&e) => true,
        Some((stem, "cc" | "cpp" | "cxx")) => {
            list.contains(&"cu") && stem.rsplit_once('.').is_some_and(|(_, e)| e == "cu")
        }
        _ => false,
    }
}

/// `--exclude` globs, matched against a path as walked or given (`./` dropped).
#[derive(Default)]
pub struct Excludes(Option<globset::GlobSet>);

impl Excludes {
    pub fn new(globs: &[String]) -> Result<Excludes, String> {
        if globs.is_empty() {
            return Ok(Excludes(None));
        }
        let mut b = globset::GlobSetBuilder::new();
        for g in globs {
            b.add(globset::Glob::new(g).map_err(|e| format!("--exclude {g}: {e}"))?);
        }
        b.build()
            .map(|s| Excludes(Some(s)))
            .map_err(|e| format!("--exclude: {e}"))
    }

    pub fn matches(&self, path: &Path) -> bool {
        let Some(set) = &self.0 else { return false };
        let p = path.strip_prefix(".").unwrap_or(path);
        set.is_match(p)
    }
}

/// Whether a file found through an `#include` is ignored by the .gitignore files of its
/// repository, as a folder walk would have skipped it (applied only inside a git work tree,
/// as ripgrep does).
pub fn gitignored(path: &Path) -> bool {
    let Ok(abs) = std::fs::canonicalize(path) else {
        return false;
    };
    let dirs: Vec<&Path> = abs.ancestors().skip(1).collect();
    let Some(top) = dirs.iter().position(|d| d.join(".git").exists()) else {
        return false;
    };
    // the nearest .gitignore that says anything about the path decides
    for dir in &dirs[..=top] {
        let file = dir.join(".gitignore");
        if !file.is_file() {
            continue;
        }
        let (gi, _) = ignore::gitignore::Gitignore::new(&file);
        match gi.matched_path_or_any_parents(&abs, false) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The folders among the paths a run was given.
pub fn folders(paths: &[String]) -> Vec<std::path::PathBuf> {
    paths
        .iter()
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir())
        .collect()
}

pub fn collect(paths: &[String], excludes: &Excludes) -> Collected {
    let mut files = Vec::new();
    let mut headers = Vec::new();
    let mut errors = Vec::new();
    let mut bare_folders = Vec::new();
    for p in paths {
        let path = Path::new(p);
        match std::fs::metadata(path) {
            Err(e) => errors.push(format!("{p}: {}", io_message(&e))),
            Ok(m) if m.is_dir() => {
                let before = (files.len(), headers.len());
                let root = std::fs::canonicalize(path).ok();
                for entry in ignore::WalkBuilder::new(path).hidden(true).build() {
                    match entry {
                        Ok(e)
                            if e.file_type().is_some_and(|t| t.is_file())
                                || linked_file_outside(e.path(), root.as_deref()) =>
                        {
                            if excludes.matches(e.path()) {
                                continue;
                            }
                            let f = e.path().to_string_lossy().into_owned();
                            if has_extension(e.path(), EXTENSIONS) {
                                files.push(f);
                            } else if has_extension(e.path(), HEADER_EXTENSIONS) {
                                headers.push(f);
                            }
                        }
                        Ok(_) => {}
                        Err(e) => errors.push(format!("{p}: {e}")),
                    }
                }
                if files.len() == before.0 {
                    // unless one of its headers holds a kernel (checked once they are read)
                    bare_folders.push((p.clone(), before.1..headers.len()));
                }
            }
            Ok(_) => files.push(p.clone()),
        }
    }
    for (p, range) in &bare_folders {
        let has_kernel = headers[range.clone()]
            .iter()
            .any(|h| std::fs::read(h).is_ok_and(|b| b.windows(10).any(|w| w == b"__global__")));
        if !has_kernel {
            errors.push(format!("{p}: no .cu or .cuh files in this folder"));
        }
    }
    files.sort();
    files.dedup();
    headers.sort();
    headers.dedup();
    headers.retain(|h| files.binary_search(h).is_err());
    let results: Vec<Result<(Input, Option<String>), String>> = {
        use rayon::prelude::*;
        files.par_iter().map(|f| read(f)).collect()
    };
    let (mut inputs, mut warnings) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok((i, warning)) => {
                inputs.push(i);
                warnings.extend(warning);
            }
            Err(e) => errors.push(e),
        }
    }
    // a header with kernels is checked like a .cu file; the others come in through the
    // files that include them, and a header nothing includes and with no kernel is left alone
    let kernels: Vec<(Input, Option<String>)> = {
        use rayon::prelude::*;
        headers
            .par_iter()
            .filter_map(|f| read(f).ok())
            .filter(|(i, _)| i.text.contains("__global__"))
            .collect()
    };
    for (i, warning) in kernels {
        inputs.push(i);
        warnings.extend(warning);
    }
    Collected {
        inputs,
        errors,
        warnings,
    }
}

/// Whether a walked path is a link to a file that the walk does not reach as itself: warp-ctc's
/// `src/ctc_entrypoint.cu -> ctc_entrypoint.cpp`, which nvcc compiles, is read; a link to a
/// `.cu` file of the same folder tree is not read twice. Links to folders are not followed.
fn linked_file_outside(path: &Path, root: Option<&Path>) -> bool {
    if !path.is_symlink() || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(target) = std::fs::canonicalize(path) else {
        return false;
    };
    let walked = root.is_some_and(|r| target.starts_with(r))
        && (has_extension(&target, EXTENSIONS) || has_extension(&target, HEADER_EXTENSIONS));
    !walked
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// The file as an input, with a warning if it was not all valid UTF-8.
pub fn read(path: &str) -> Result<(Input, Option<String>), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {}", io_message(&e)))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{path}: file is {} MB, over the {} MB limit; skipped",
            meta.len() >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {}", io_message(&e)))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(format!("{path}: binary file (contains NUL bytes); skipped"));
    }
    let decoded = cudalint_syntax::source::decode(bytes);
    let warning = decoded.first_replaced.map(|first| {
        let line = decoded.text[..first].matches('\n').count() + 1;
        let n = decoded.replaced;
        format!(
            "{path}: not valid UTF-8: {n} byte{} (the first on line {line}) read as `?`; checked, but not fixed",
            if n == 1 { "" } else { "s" }
        )
    });
    let mut input = Input::new(path, decoded.text);
    input.replaced_bytes = decoded.replaced;
    Ok((input, warning))
}
