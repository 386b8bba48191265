//! The cache folder: one JSON entry per key, written whole or not at all (a temporary file
//! renamed into place), read back only when it names the key it is filed under.

use super::key::{hex, Key};
use crate::check::AccessRecord;
use crate::FileReport;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What an access keeps besides what `audit` prints (the editor's and the pictures' data).
#[derive(Serialize, Deserialize)]
struct AccessExtra {
    span: std::ops::Range<usize>,
    lanes: crate::warp_lanes::WarpLanes,
    geometry: (i64, i64, i64),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    padded: Option<crate::check::PaddedWarp>,
}

/// A file's report as the cache holds it.
#[derive(Serialize, Deserialize)]
pub struct CachedReport {
    report: FileReport,
    extra: Vec<AccessExtra>,
}

impl CachedReport {
    pub fn new(report: FileReport) -> CachedReport {
        let extra = report
            .accesses
            .iter()
            .map(|a| AccessExtra {
                span: a.span.clone(),
                lanes: a.lanes.clone(),
                geometry: a.geometry,
                padded: a.padded.clone(),
            })
            .collect();
        CachedReport { report, extra }
    }

    pub fn into_report(self) -> Option<FileReport> {
        let mut report = self.report;
        if report.accesses.len() != self.extra.len() {
            return None;
        }
        for (a, x) in report.accesses.iter_mut().zip(self.extra) {
            let AccessRecord {
                span,
                lanes,
                geometry,
                padded,
                ..
            } = a;
            (*span, *lanes, *geometry, *padded) = (x.span, x.lanes, x.geometry, x.padded);
        }
        Some(report)
    }
}

#[derive(Serialize, Deserialize)]
struct Entry<T> {
    key: String,
    items: Vec<T>,
}

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
            .join("v1")
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
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                self.warn(format!("{}: {e}; ignored", path.display()));
                return None;
            }
        };
        match serde_json::from_slice::<Entry<T>>(&bytes) {
            Ok(e) if e.key == hex(key) && e.items.len() == len => Some(e.items),
            Ok(_) => {
                self.warn(format!(
                    "{}: a cache entry written for something else; ignored",
                    path.display()
                ));
                None
            }
            Err(e) => {
                self.warn(format!(
                    "{}: not a cache entry cudalint can read ({e}); ignored",
                    path.display()
                ));
                None
            }
        }
    }

    pub fn write<T: Serialize>(&self, kind: &str, key: &Key, items: Vec<T>) {
        if self.unwritable.lock().map_or(true, |u| u.is_some()) {
            return;
        }
        let path = self.path(kind, key);
        let entry = Entry {
            key: hex(key),
            items,
        };
        if let Err(e) = self.write_file(&path, &entry) {
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

    fn write_file<T: Serialize>(&self, path: &Path, entry: &Entry<T>) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(&self.root);
        if !dir.is_dir() {
            std::fs::create_dir_all(dir)?;
            // as ruff does: the folder ignores itself and tells backup tools what it is
            let _ = std::fs::write(self.root.join(".gitignore"), GITIGNORE);
            let _ = std::fs::write(self.root.join("CACHEDIR.TAG"), CACHEDIR_TAG);
        }
        let json = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
