//! Turning command-line paths into files to check: folders are walked for .cu/.cuh files
//! (respecting .gitignore as ripgrep does), each file is read and vetted, and every problem
//! becomes a one-line message naming the path while the other files go on. The headers they
//! include are added after (`cudalint_rules::workspace::prepare`).

use cudalint_rules::Input;
use std::path::Path;

pub const EXTENSIONS: &[&str] = &["cu", "cuh"];

/// Files larger than this are refused (generated files this large are not hand-written CUDA).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub struct Collected {
    pub inputs: Vec<Input>,
    pub errors: Vec<String>,
    /// Files checked all the same, with what was odd about them.
    pub warnings: Vec<String>,
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
    let read: Vec<Result<(Input, Option<String>), String>> = {
        use rayon::prelude::*;
        files.par_iter().map(|f| read(f)).collect()
    };
    let (mut inputs, mut warnings) = (Vec::new(), Vec::new());
    for r in read {
        match r {
            Ok((i, warning)) => {
                inputs.push(i);
                warnings.extend(warning);
            }
            Err(e) => errors.push(e),
        }
    }
    Collected {
        inputs,
        errors,
        warnings,
    }
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
