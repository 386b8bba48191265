//! The last place a quoted `#include` is looked for: the project's own tree. A build adds its
//! include folders with `-I` (mmcv's `common/cuda`, DeepSpeed's `csrc/includes`), which a run
//! without the build's flags does not know; a header named by a file of the tree being checked
//! is most likely the one of that tree, when the tree has one file of that name nearest the
//! includer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The files under a folder, by file name: walked once, on the first include that nothing
/// else found.
pub(crate) struct ProjectHeaders {
    root: PathBuf,
    by_name: Option<HashMap<String, Vec<PathBuf>>>,
}

/// A tree this large is not walked further (a home folder given by mistake).
const MAX_FILES: usize = 200_000;

impl ProjectHeaders {
    /// The tree of the checked files: the git work tree they are in, else the deepest folder
    /// that holds them all and the `folders` the run was given.
    pub(crate) fn new<'a>(
        paths: impl Iterator<Item = &'a str>,
        folders: &[PathBuf],
    ) -> ProjectHeaders {
        let mut root: Option<PathBuf> = None;
        let dirs = paths
            .map(|p| Path::new(p).parent().unwrap_or(Path::new("")))
            .chain(folders.iter().map(PathBuf::as_path));
        for dir in dirs {
            root = Some(match root {
                None => dir.to_path_buf(),
                Some(r) => common_ancestor(&r, dir),
            });
        }
        let root = root.unwrap_or_default();
        ProjectHeaders {
            root: work_tree(&root).unwrap_or(root),
            by_name: None,
        }
    }

    /// The file `inc` names for a file of folder `dir`: of the tree's files whose path ends
    /// with `inc`, the one whose folder shares the most of `dir`'s path, then the shallowest;
    /// none when two are equally near.
    pub(crate) fn find(&mut self, dir: &Path, inc: &str) -> Option<PathBuf> {
        let wanted = Path::new(inc);
        if wanted.is_absolute() || inc.contains("..") {
            return None;
        }
        let name = wanted.file_name()?.to_str()?;
        let root = &self.root;
        let by_name = self.by_name.get_or_insert_with(|| walk(root));
        let mut best: Option<(usize, usize, &PathBuf)> = None;
        let mut tied = false;
        for c in by_name.get(name)?.iter().filter(|c| c.ends_with(wanted)) {
            let shared = shared_components(c.parent().unwrap_or(Path::new("")), dir);
            let depth = c.components().count();
            let better = match best {
                None => true,
                Some((s, d, _)) => {
                    if (shared, depth) == (s, d) {
                        tied = true;
                    }
                    shared > s || (shared == s && depth < d)
                }
            };
            if better {
                tied = false;
                best = Some((shared, depth, c));
            }
        }
        best.filter(|_| !tied).map(|(_, _, c)| c.clone())
    }
}

/// The top of the git work tree `dir` is in, if any: where a `.git` is, named as `dir` is
/// (relative to the working folder when `dir` is).
fn work_tree(dir: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let abs = cwd.join(dir);
    let top = abs.ancestors().take(16).find(|a| a.join(".git").exists())?;
    if dir.is_absolute() {
        return Some(top.to_path_buf());
    }
    if let Ok(below) = top.strip_prefix(&cwd) {
        return Some(below.to_path_buf());
    }
    let ups = cwd.strip_prefix(top).ok()?.components().count();
    Some((0..ups).map(|_| "..").collect())
}

fn walk(root: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut out: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let start = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let walker = ignore::WalkBuilder::new(start)
        .follow_links(false)
        .require_git(true)
        .build();
    for entry in walker.flatten().take(MAX_FILES) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.into_path();
        let path = match (root.as_os_str().is_empty(), path.strip_prefix("./")) {
            (true, Ok(p)) => p.to_path_buf(),
            _ => path,
        };
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            out.entry(name.to_string()).or_default().push(path);
        }
    }
    out
}

fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

fn shared_components(a: &Path, b: &Path) -> usize {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempdir::Dir {
        let d = tempdir::Dir::new();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        d
    }

    mod tempdir {
        pub struct Dir(std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "cudalint-project-headers-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
            pub fn path(&self) -> &std::path::Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_header_in_a_sibling_include_folder_is_found() {
        // DeepSpeed: csrc/transformer/*.cu include "custom_cuda_layers.h" of csrc/includes
        let d = tree(&[
            "csrc/transformer/dropout_kernels.cu",
            "csrc/includes/custom_cuda_layers.h",
            "csrc/includes/context.h",
            "csrc/fp_quantizer/includes/context.h",
        ]);
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        let file = d.path().join("csrc/transformer/dropout_kernels.cu");
        // one file checked: its work tree is looked in
        let mut h = ProjectHeaders::new(std::iter::once(file.to_str().unwrap()), &[]);
        let dir = file.parent().unwrap();
        assert_eq!(
            h.find(dir, "custom_cuda_layers.h"),
            Some(d.path().join("csrc/includes/custom_cuda_layers.h"))
        );
        // two of one name: the one nearest the includer, then the shallowest
        assert_eq!(
            h.find(dir, "context.h"),
            Some(d.path().join("csrc/includes/context.h"))
        );
        let quantizer = d.path().join("csrc/fp_quantizer");
        assert_eq!(
            h.find(&quantizer, "context.h"),
            Some(d.path().join("csrc/fp_quantizer/includes/context.h"))
        );
        assert_eq!(h.find(dir, "cuda_runtime.h"), None);
        // a path's folders must match as well as its name
        assert_eq!(h.find(dir, "other/context.h"), None);
    }

    #[test]
    fn two_equally_near_headers_are_neither() {
        let d = tree(&["src/k.cu", "a/inc/util.h", "b/inc/util.h"]);
        let file = d.path().join("src/k.cu");
        let mut h = ProjectHeaders::new(std::iter::once(file.to_str().unwrap()), &[]);
        // outside a work tree, the tree is the checked files' folder: nothing above it
        assert_eq!(h.find(file.parent().unwrap(), "util.h"), None);
        let other = d.path().join("a/x.cu");
        let mut h = ProjectHeaders::new(
            [file.to_str().unwrap(), other.to_str().unwrap()].into_iter(),
            &[],
        );
        assert_eq!(h.find(file.parent().unwrap(), "util.h"), None);
        // the folder the run was given is the tree, though no checked file is beside `a/`
        let mut h = ProjectHeaders::new(
            std::iter::once(file.to_str().unwrap()),
            &[d.path().to_path_buf()],
        );
        assert_eq!(h.find(file.parent().unwrap(), "util.h"), None);
        assert_eq!(
            h.find(file.parent().unwrap(), "a/inc/util.h"),
            Some(d.path().join("a/inc/util.h"))
        );
    }
}
