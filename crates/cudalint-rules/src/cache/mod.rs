//! The results cache: what a run learned, kept for the next (as ruff keeps its cache). A file's
//! reports are reused when nothing they depend on changed: the files it is compiled with
//! (includes, both ways), the files whose launches or host calls reach its kernels, the
//! run-wide facts the analysis reads (which macros some file defines, where includes lead),
//! its options and configuration, and the tool itself. What changed is parsed and analysed
//! again together with everything it is linked to, so the result is the cold run's.

mod key;
mod store;
#[cfg(test)]
mod tests;
mod units;

use crate::check::{analyse_all, file_reports, pack_findings, parse_each, with_pool};
use crate::{FileReport, Input, Settings};
use key::Key;
use rayon::prelude::*;
use std::path::Path;
use store::{CachedReport, CachingReport, Store};
use units::Names;

/// The name of the cache folder, next to the nearest cudalint.toml or in the run's folder.
pub const FOLDER: &str = ".cudalint_cache";

pub struct Cache {
    store: Store,
    /// Which build of cudalint wrote it: another build's entries are never read.
    tool: String,
}

/// What a cached run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheStats {
    /// Reported files whose reports came from the cache.
    pub reused: usize,
    /// Reported files parsed and analysed again.
    pub analysed: usize,
    /// Files parsed (reported ones and the headers read with them).
    pub parsed: usize,
    /// Entries that could not be read or written, each ignored.
    pub warnings: Vec<String>,
}

impl Cache {
    /// A cache in `dir`, for the build of cudalint `tool` names (its version and a hash of
    /// the program).
    pub fn new(dir: &Path, tool: &str) -> Cache {
        Cache {
            store: Store::new(dir),
            tool: tool.to_string(),
        }
    }
}

/// [`crate::check`], reusing the reports of files nothing changed for, and keeping what it
/// learns for the next run. The reports are those `check` gives.
pub fn check_cached(
    inputs: &[Input],
    settings: &Settings,
    cache: &Cache,
) -> (Vec<FileReport>, CacheStats) {
    with_pool(|| run(inputs, settings, cache))
}

fn run(inputs: &[Input], settings: &Settings, cache: &Cache) -> (Vec<FileReport>, CacheStats) {
    let store = &cache.store;
    // one pass over each text's directives, on every core
    let scanned: Vec<units::Scan> = inputs.par_iter().map(|i| units::scan(&i.text)).collect();
    let defined: std::collections::BTreeSet<&str> = scanned
        .iter()
        .flat_map(|s| s.defines.iter().copied())
        .collect();
    let (includes, tested): (Vec<_>, Vec<_>) =
        scanned.into_iter().map(|s| (s.includes, s.tested)).unzip();
    let units::Units { resolved, units } = units::include_units(inputs, &includes);
    let prefix = key::run_prefix(&cache.tool, settings);
    let mut setup_of: std::collections::HashMap<(usize, usize, usize), Key> = Default::default();
    let setups: Vec<Key> = inputs
        .iter()
        .map(|i| {
            let ptr = |a: Option<usize>| a.unwrap_or(0);
            let config = ptr(i
                .config
                .as_ref()
                .map(|c| std::sync::Arc::as_ptr(c) as usize));
            let build = ptr(i.build.as_ref().map(|b| std::sync::Arc::as_ptr(b) as usize));
            let compile = ptr(i
                .compile
                .as_ref()
                .map(|c| std::sync::Arc::as_ptr(c) as usize));
            *setup_of
                .entry((config, build, compile))
                .or_insert_with(|| key::setup_key(settings, i))
        })
        .collect();
    let unit_keys: Vec<Key> = units
        .par_iter()
        .map(|u| key::unit_key(&prefix, inputs, u, &resolved, &setups, &tested, &defined))
        .collect();

    // what each unit's files offer and ask by name: from the cache, else from a parse
    let mut names: Vec<Option<Vec<Names>>> = units
        .par_iter()
        .zip(&unit_keys)
        .map(|(u, k)| store.read("names", k, u.len()))
        .collect();
    let mut models: Vec<Option<Option<cudalint_syntax::FileModel>>> =
        (0..inputs.len()).map(|_| None).collect();
    let unnamed: Vec<usize> = (0..units.len()).filter(|&u| names[u].is_none()).collect();
    parse_units(inputs, settings, &defined, &units, &unnamed, &mut models);
    for &u in &unnamed {
        let found: Vec<Names> = units[u]
            .iter()
            .map(|&f| {
                models[f]
                    .as_ref()
                    .and_then(|m| m.as_ref())
                    .map(Names::of)
                    .unwrap_or_default()
            })
            .collect();
        store.write("names", &unit_keys[u], &found);
        names[u] = Some(found);
    }
    let names: Vec<Vec<Names>> = names.into_iter().map(Option::unwrap_or_default).collect();

    let links = units::links(&names);
    let mut unit_of = vec![0; inputs.len()];
    for (u, files) in units.iter().enumerate() {
        for &f in files {
            unit_of[f] = u;
        }
    }
    let mut link_of_file = vec![usize::MAX; inputs.len()];
    let mut place_in_link = vec![0; units.len()];
    for (li, l) in links.iter().enumerate() {
        for (place, &u) in l.iter().enumerate() {
            place_in_link[u] = place;
            for &f in &units[u] {
                link_of_file[f] = li;
            }
        }
    }
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
    for f in 0..inputs.len() {
        order[link_of_file[f]].push(place_in_link[unit_of[f]]);
    }
    let link_keys: Vec<Key> = links
        .iter()
        .zip(&order)
        .map(|(l, o)| {
            let keys: Vec<&Key> = l.iter().map(|&u| &unit_keys[u]).collect();
            key::link_key(&keys, o)
        })
        .collect();
    let reported = |u: usize| units[u].iter().filter(|&&f| !inputs[f].context).count();
    let mut found: Vec<Option<Vec<FileReport>>> = links
        .par_iter()
        .zip(&link_keys)
        .map(|(l, k)| {
            let len = l.iter().map(|&u| reported(u)).sum();
            let cached: Vec<CachedReport> = store.read("reports", k, len)?;
            cached.into_iter().map(CachedReport::into_report).collect()
        })
        .collect();

    // every link not found is analysed again, all of them in one run (they share nothing)
    let missed: Vec<usize> = (0..links.len()).filter(|&l| found[l].is_none()).collect();
    let missed_units: Vec<usize> = missed.iter().flat_map(|&l| links[l].clone()).collect();
    let unparsed: Vec<usize> = missed_units
        .iter()
        .copied()
        .filter(|&u| units[u].iter().any(|&f| models[f].is_none()))
        .collect();
    parse_units(inputs, settings, &defined, &units, &unparsed, &mut models);
    let mut files: Vec<usize> = missed_units
        .iter()
        .flat_map(|&u| units[u].iter().copied())
        .collect();
    files.sort_unstable();
    let parsed = models.iter().filter(|m| m.is_some()).count();
    let part: Vec<Input> = files.iter().map(|&f| inputs[f].clone()).collect();
    let part_models: Vec<Option<&cudalint_syntax::FileModel>> = files
        .iter()
        .map(|&f| models[f].as_ref().and_then(|m| m.as_ref()))
        .collect();
    let analysed = analyse_all(&part, &part_models, settings, pack_findings(&part));
    drop(part_models);
    // gone before the findings are unpacked (see `check`)
    models.into_par_iter().for_each(drop);
    let mut fresh = file_reports(&part, analysed, settings).into_iter();
    // the reports come in file order, reported files only: deal them out to their links
    let mut by_link: Vec<Vec<FileReport>> = vec![Vec::new(); links.len()];
    for &f in files.iter().filter(|&&f| !inputs[f].context) {
        if let Some(r) = fresh.next() {
            by_link[link_of_file[f]].push(r);
        }
    }
    let mut stats = CacheStats {
        parsed,
        ..CacheStats::default()
    };
    for &l in &missed {
        let reports = std::mem::take(&mut by_link[l]);
        stats.analysed += reports.len();
        // a report cut short by the time budget is not the cold run's on a quiet machine
        if reports.iter().all(|r| r.timed_out.is_empty()) {
            store.write(
                "reports",
                &link_keys[l],
                &reports.iter().map(CachingReport::new).collect::<Vec<_>>(),
            );
        }
        found[l] = Some(reports);
    }

    // back in the order of the inputs
    let mut next: Vec<std::vec::IntoIter<FileReport>> = found
        .into_iter()
        .map(|r| r.unwrap_or_default().into_iter())
        .collect();
    let mut out = Vec::new();
    for f in (0..inputs.len()).filter(|&f| !inputs[f].context) {
        if let Some(r) = next[link_of_file[f]].next() {
            out.push(r);
        }
    }
    stats.reused = out.len() - stats.analysed;
    stats.warnings = store.warnings.lock().map(|w| w.clone()).unwrap_or_default();
    (out, stats)
}

/// Parses the files of `which` units that are not parsed yet, as one part of the run.
fn parse_units(
    inputs: &[Input],
    settings: &Settings,
    defined: &std::collections::BTreeSet<&str>,
    units: &[Vec<usize>],
    which: &[usize],
    models: &mut [Option<Option<cudalint_syntax::FileModel>>],
) {
    let mut files: Vec<usize> = which
        .iter()
        .flat_map(|&u| units[u].iter().copied())
        .filter(|&f| models[f].is_none())
        .collect();
    if files.is_empty() {
        return;
    }
    files.sort_unstable();
    let part: Vec<Input> = files.iter().map(|&f| inputs[f].clone()).collect();
    let parsed = parse_each(&part, settings, Some(defined), |p| p.model);
    for (f, m) in files.into_iter().zip(parsed) {
        models[f] = Some(m);
    }
}
