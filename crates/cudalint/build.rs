//! Names the sources this build of cudalint was made from, so that its results cache never
//! trusts entries another build wrote: a hash of every crate's sources and documentation and
//! of the locked dependency versions.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let crates = manifest.join("..");
    let mut list = Vec::new();
    for krate in [
        "cudalint",
        "cudalint-syntax",
        "cudalint-analysis",
        "cudalint-rules",
        "cudalint-lsp",
    ] {
        for part in ["src", "docs", "Cargo.toml"] {
            let p = crates.join(krate).join(part);
            // a path that does not exist makes cargo rerun this script and rebuild cudalint on
            // every build (not every crate has docs/): watch the crate's folder instead, which
            // changes when the missing part appears
            let watched = if p.exists() {
                p.clone()
            } else {
                crates.join(krate)
            };
            println!("cargo:rerun-if-changed={}", watched.display());
            if p.is_dir() {
                files(&p, &mut list);
            } else if p.is_file() {
                list.push(p);
            }
        }
    }
    let lock = crates.join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    list.push(lock);
    list.sort();
    // SipHash with fixed keys: stable for one toolchain, and another toolchain's build is
    // another build anyway
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in &list {
        p.strip_prefix(&crates).unwrap_or(p).hash(&mut h);
        std::fs::read(p).unwrap_or_default().hash(&mut h);
    }
    println!("cargo:rustc-env=CUDALINT_SOURCE_HASH={:016x}", h.finish());
}
