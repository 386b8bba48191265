//! The key of a unit: everything its files' results can depend on besides the other units of
//! its link. Each part is written with its length, so no two different inputs hash alike.

use crate::{Input, Settings};
use std::collections::BTreeSet;

pub type Key = [u8; 32];

pub fn hex(k: &Key) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

struct Writer(blake3::Hasher);

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
    }

    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn int(&mut self, x: i64) {
        self.0.update(&x.to_le_bytes());
    }
}

/// The run-wide facts every unit's key holds: the tool and the settings that are not per file.
pub fn run_prefix(tool: &str, settings: &Settings) -> Key {
    // per-file settings (options, defines) are keyed per file; the rest is here
    let Settings {
        analysis: _,
        show_unanalysed,
        block_override: _,
        runtime_override: _,
        defines: _,
        progress: _,
        time_budget: _,
        accesses,
    } = settings;
    let mut w = Writer(blake3::Hasher::new());
    w.str("cudalint results cache 1");
    w.str(tool);
    w.int(*show_unanalysed as i64);
    // a report that only counts its accesses is not an audit's
    w.int((*accesses == crate::Accesses::Counted) as i64);
    *w.0.finalize().as_bytes()
}

/// What the settings make of a file's configuration, build files and compile command: its
/// options and macros, its build files' text and where its command comes from. Many files
/// share one configuration, one folder's build files and one command: the caller keeps one
/// per triple.
pub fn setup_key(settings: &Settings, input: &Input) -> Key {
    let mut w = Writer(blake3::Hasher::new());
    // the language server's kernel cache hashes options the same way (maps in order)
    w.int(crate::kernel_cache::options_hash(&settings.options_for(input)) as i64);
    w.str(&format!("{:?}", settings.defines_for(input)));
    match &input.build {
        Some(b) => w.str(&b.text),
        None => w.str("no build files"),
    }
    // its macros are in `defines_for`; that there is one at all changes what is undefined
    match &input.compile {
        Some(c) => w.str(&format!("{:?} {:?}", c.database, c.include_dirs)),
        None => w.str("no compile command"),
    }
    *w.0.finalize().as_bytes()
}

/// What one unit's results depend on: per file in order, its path, role, text, setup (see
/// [`setup_key`]), rule configuration, where its includes lead, and which of the macros it
/// tests some file of the run defines.
pub fn unit_key(
    prefix: &Key,
    inputs: &[Input],
    unit: &[usize],
    resolved: &[Vec<(String, Option<usize>)>],
    setups: &[Key],
    tested: &[BTreeSet<&str>],
    defined: &BTreeSet<&str>,
) -> Key {
    let mut w = Writer(blake3::Hasher::new());
    w.bytes(prefix);
    for &fi in unit {
        let input = &inputs[fi];
        w.str(&input.path);
        w.int(input.context as i64);
        w.int(input.replaced_bytes as i64);
        w.bytes(blake3::hash(input.text.as_bytes()).as_bytes());
        w.bytes(&setups[fi]);
        for rule in crate::RULES {
            let (on, severity) = match &input.config {
                Some(c) => (
                    c.enabled(rule.code, &input.path, rule.default_enabled),
                    c.severity.get(rule.code).map(|s| s.as_str()),
                ),
                None => (rule.default_enabled, None),
            };
            w.int(on as i64);
            w.str(severity.unwrap_or("-"));
        }
        for (inc, to) in &resolved[fi] {
            w.str(inc);
            w.str(to.map_or("-", |t| inputs[t].path.as_str()));
        }
        w.str("tested");
        for name in &tested[fi] {
            if defined.contains(name) {
                w.str(name);
            }
        }
    }
    *w.0.finalize().as_bytes()
}

/// A link's key: its units' keys, in order, and how their files interleave in the run (the
/// order launches are found in across files decides which of them are evaluated, and which
/// configuration's figures an access keeps on a tie). `order` gives, per file of the link in
/// run order, the place of its unit in the link.
pub fn link_key(unit_keys: &[&Key], order: &[usize]) -> Key {
    let mut w = Writer(blake3::Hasher::new());
    for k in unit_keys {
        w.bytes(*k);
    }
    for &o in order {
        w.int(o as i64);
    }
    *w.0.finalize().as_bytes()
}
