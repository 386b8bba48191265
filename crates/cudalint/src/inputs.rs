//! Turning command-line paths into files to check: folders are walked for .cu/.cuh files
//! (respecting .gitignore as ripgrep does), each file is read and vetted, and every problem
//! becomes a one-line message naming the path while the other files go on.

use cudalint_rules::Input;
use std::path::Path;

pub const EXTENSIONS: &[&str] = &["cu", "cuh"];

/// Files larger than this are refused (generated files this large are not hand-written CUDA).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub struct Collected {
    pub inputs: Vec<Input>,
    pub errors: Vec<String>,
}

fn is_cuda(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e))
}

pub fn collect(paths: &[String]) -> Collected {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        let path = Path::new(p);
        match std::fs::metadata(path) {
            Err(e) => errors.push(format!("{p}: {}", io_message(&e))),
            Ok(m) if m.is_dir() => {
                let before = files.len();
                for entry in ignore::WalkBuilder::new(path).hidden(true).build() {
                    match entry {
                        Ok(e)
                            if e.file_type().is_some_and(|t| t.is_file()) && is_cuda(e.path()) =>
                        {
                            files.push(e.path().to_string_lossy().into_owned())
                        }
                        Ok(_) => {}
                        Err(e) => errors.push(format!("{p}: {e}")),
                    }
                }
                if files.len() == before {
                    errors.push(format!("{p}: no .cu or .cuh files in this folder"));
                }
            }
            Ok(_) => files.push(p.clone()),
        }
    }
    files.sort();
    files.dedup();
    let read: Vec<Result<Input, String>> = {
        use rayon::prelude::*;
        files.par_iter().map(|f| read(f)).collect()
    };
    let mut inputs = Vec::new();
    for r in read {
        match r {
            Ok(i) => inputs.push(i),
            Err(e) => errors.push(e),
        }
    }
    add_included(&mut inputs);
    Collected { inputs, errors }
}

/// Headers that checked files include with `#include "..."` (relative to the including file)
/// are read too, as context: their macros, constants and helpers are what the kernels see.
/// An include that cannot be found or read is skipped silently: it may live on an include
/// path cudalint is not told about.
pub fn add_included(inputs: &mut Vec<Input>) {
    const MAX_CONTEXT_FILES: usize = 2000;
    let mut known: std::collections::HashSet<std::path::PathBuf> = inputs
        .iter()
        .filter_map(|i| std::fs::canonicalize(&i.path).ok())
        .collect();
    let mut i = 0;
    let mut added = 0;
    while i < inputs.len() && added < MAX_CONTEXT_FILES {
        let dir = Path::new(&inputs[i].path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let includes: Vec<String> = inputs[i]
            .text
            .lines()
            .filter_map(|l| {
                let rest = l
                    .trim_start()
                    .strip_prefix('#')?
                    .trim_start()
                    .strip_prefix("include")?
                    .trim_start();
                let rest = rest.strip_prefix('"')?;
                Some(rest[..rest.find('"')?].to_string())
            })
            .collect();
        for inc in includes {
            let candidate = dir.join(&inc);
            let Ok(canon) = std::fs::canonicalize(&candidate) else {
                continue;
            };
            if !canon.is_file() || !known.insert(canon) {
                continue;
            }
            let path = candidate.to_string_lossy().into_owned();
            if let Ok(mut input) = read(&path) {
                input.context = true;
                inputs.push(input);
                added += 1;
            }
        }
        i += 1;
    }
}

/// Attaches to every input its configuration: the one given, or the nearest cudalint.toml
/// above it. A configuration that does not load is an error naming its file and line.
pub fn attach_configs(inputs: &mut [Input], given: Option<&str>) -> Result<(), String> {
    use cudalint_rules::config::{discover, Config};
    use std::collections::HashMap;
    use std::sync::Arc;
    if let Some(path) = given {
        let c = Arc::new(Config::load(Path::new(path))?);
        for i in inputs.iter_mut() {
            i.config = Some(c.clone());
        }
        return Ok(());
    }
    let mut loaded: HashMap<std::path::PathBuf, Arc<Config>> = HashMap::new();
    for i in inputs.iter_mut() {
        let Some(found) = discover(Path::new(&i.path)) else {
            continue;
        };
        let c = match loaded.get(&found) {
            Some(c) => c.clone(),
            None => {
                let c = Arc::new(Config::load(&found)?);
                loaded.insert(found, c.clone());
                c
            }
        };
        i.config = Some(c);
    }
    Ok(())
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

pub fn read(path: &str) -> Result<Input, String> {
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
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("{path}: not valid UTF-8 (invalid byte at offset {at}); skipped")
    })?;
    Ok(Input::new(path, text))
}
