//! The cache folder: one entry per key (JSON in an LZ4 frame: a 10 MB corpus's reports were
//! 150 MB of JSON, 14 MB packed), written whole or not at all (a temporary file renamed into
//! place), read back only when it names the key it is filed under.

use super::key::{hex, Key};
use crate::check::{AccessExtra, AccessRecord};
use crate::FileReport;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file's report as the cache holds it.
#[derive(Serialize, Deserialize)]
pub struct CachedReport {
    report: FileReport,
    extra: Vec<AccessExtra>,
}

/// A file's report as the cache writes it: the run's own report, not a copy, its accesses'
/// extras made one at a time as they are written (all of them at once were a tenth of a large
/// run's peak).
#[derive(Serialize)]
pub struct CachingReport<'a> {
    report: &'a FileReport,
    extra: Extras<'a>,
}

struct Extras<'a>(&'a [AccessRecord]);

impl Serialize for Extras<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(AccessRecord::extra))
    }
}

impl CachingReport<'_> {
    pub fn new(report: &FileReport) -> CachingReport<'_> {
        CachingReport {
            report,
            extra: Extras(&report.accesses),
        }
    }
}

impl CachedReport {
    pub fn into_report(self) -> Option<FileReport> {
        let mut report = self.report;
        if report.accesses.len() != self.extra.len() {
            return None;
        }
        for (a, x) in report.accesses.iter_mut().zip(self.extra) {
            a.restore(x);
        }
        Some(report)
    }
}

/// An entry's first line: the key it was written for and how many items follow, a line each.
#[derive(Serialize, Deserialize)]
struct Head {
    key: String,
    items: usize,
}

/// Where the entries are: a format this build cannot read is in another folder.
const FORMAT: &str = "v3";

pub struct Store {
    root: PathBuf,
    /// Said once: the run goes on without writing.
    unwritable: Mutex<Option<String>>,
    pub warnings: Mutex<Vec<String>>,
}

const GITIGNORE: &str = "# Automatically created by cudalint.\n*\n";
const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cudalint.\n# For information about cache directory tags see https://bford.info/cachedir/\n";

impl Store {
    pub fn new(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
            unwritable: Mutex::new(None),
            warnings: Mutex::new(Vec::new()),
        }
    }

    fn path(&self, kind: &str, key: &Key) -> PathBuf {
        self.root
            .join(FORMAT)
            .join(kind)
            .join(format!("{}.json", hex(key)))
    }

    fn warn(&self, w: String) {
        if let Ok(mut list) = self.warnings.lock() {
            list.push(w);
        }
    }

    /// The entry filed under `key`, if there is one that can be trusted: an unreadable one
    /// or one written for another key is ignored with a warning.
    pub fn read<T: DeserializeOwned>(&self, kind: &str, key: &Key, len: usize) -> Option<Vec<T>> {
        let path = self.path(kind, key);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                self.warn(format!("{}: {e}; ignored", path.display()));
                return None;
            }
        };
        // an item a line, each read as it is decoded: the entry of a large link is 150 MB of
        // JSON, and serde_json reads a stream at half the speed of a slice
        let mut lines = std::io::BufReader::with_capacity(
            1 << 16,
            lz4_flex::frame::FrameDecoder::new(std::io::BufReader::new(file)),
        );
        let unreadable = |e: String| {
            self.warn(format!(
                "{}: not a cache entry cudalint can read ({e}); ignored",
                path.display()
            ));
            None
        };
        let mut line = String::new();
        let mut next = |line: &mut String| {
            line.clear();
            std::io::BufRead::read_line(&mut lines, line).map_err(|e| e.to_string())
        };
        if let Err(e) = next(&mut line) {
            return unreadable(e);
        }
        let head: Head = match serde_json::from_str(&line) {
            Ok(h) => h,
            Err(e) => return unreadable(e.to_string()),
        };
        if head.key != hex(key) || head.items != len {
            self.warn(format!(
                "{}: a cache entry written for something else; ignored",
                path.display()
            ));
            return None;
        }
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            match next(&mut line)
                .and_then(|_| serde_json::from_str(&line).map_err(|e| e.to_string()))
            {
                Ok(item) => items.push(item),
                Err(e) => return unreadable(e),
            }
        }
        Some(items)
    }

    pub fn write<T: Serialize>(&self, kind: &str, key: &Key, items: &[T]) {
        if self.unwritable.lock().map_or(true, |u| u.is_some()) {
            return;
        }
        let path = self.path(kind, key);
        if let Err(e) = self.write_file(&path, &hex(key), items) {
            let message = format!(
                "cannot write the cache in {} ({e}); going on without it",
                self.root.display()
            );
            if let Ok(mut u) = self.unwritable.lock() {
                if u.is_none() {
                    self.warn(message.clone());
                    *u = Some(message);
                }
            }
        }
    }

    fn write_file<T: Serialize>(&self, path: &Path, key: &str, items: &[T]) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(&self.root);
        if !dir.is_dir() {
            std::fs::create_dir_all(dir)?;
            // as ruff does: the folder ignores itself and tells backup tools what it is
            let _ = std::fs::write(self.root.join(".gitignore"), GITIGNORE);
            let _ = std::fs::write(self.root.join("CACHEDIR.TAG"), CACHEDIR_TAG);
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        // written as it is serialized: a string of it all was a large run's peak
        let written = std::fs::File::create(&tmp).and_then(|f| {
            let mut out =
                lz4_flex::frame::FrameEncoder::new(std::io::BufWriter::with_capacity(1 << 16, f));
            let head = Head {
                key: key.to_string(),
                items: items.len(),
            };
            serde_json::to_writer(&mut out, &head).map_err(std::io::Error::other)?;
            // compact JSON never holds a newline: one ends each item
            for item in items {
                std::io::Write::write_all(&mut out, b"\n")?;
                serde_json::to_writer(&mut out, item).map_err(std::io::Error::other)?;
            }
            std::io::Write::write_all(&mut out, b"\n")?;
            let mut buffered = out.finish().map_err(std::io::Error::other)?;
            std::io::Write::flush(&mut buffered)
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
