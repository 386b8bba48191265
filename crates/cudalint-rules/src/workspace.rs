//! Reading a workspace as frontends need it: the headers checked files include (as context)
//! and the cudalint.toml that governs each file. Shared by the CLI and the language server.

use crate::Input;
use std::path::Path;

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
    use crate::config::{discover, Config};
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

fn read(path: &str) -> Result<Input, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(format!("{path}: binary file"));
    }
    let decoded = cudalint_syntax::source::decode(bytes);
    let mut input = Input::new(path, decoded.text);
    input.replaced_bytes = decoded.replaced;
    Ok(input)
}
