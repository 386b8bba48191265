//! Checking the same inputs again and again as they are edited (an editor's open document):
//! every file is re-parsed from its previous tree, and kernels whose text and context did
//! not change keep their analysis. The reports are those [`crate::check`] gives for the same
//! inputs; the CLI, which checks once, does not need any of this.

use crate::check::{analyse_parsed, file_reports, FileReport, Input, Settings};
pub use crate::kernel_cache::Reuse;
use crate::kernel_cache::{KernelCache, Run};
use cudalint_syntax::{Defines, ParsedFile};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A file's last parse: what it was preprocessed with and into, and its tree and model.
struct KeptParse {
    defines: Defines,
    text: String,
    parsed: ParsedFile,
}

/// Where the last check's time went.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    /// Preprocessing, parsing and lowering every input.
    pub parse: Duration,
    /// The name tables and the kernels' analyses (those not reused).
    pub analyse: Duration,
    /// Everything else: rules, suppressions, positions, sorting.
    pub report: Duration,
    pub kernels: Reuse,
}

/// What one open document keeps between its checks.
#[derive(Default)]
pub struct Incremental {
    parses: HashMap<String, KeptParse>,
    kernels: KernelCache,
    pub last: Timings,
}

impl Incremental {
    /// The same reports as `check(inputs, settings)`, reusing what the previous call on
    /// (mostly) the same inputs parsed and analysed.
    pub fn check(&mut self, inputs: &[Input], settings: &Settings) -> Vec<FileReport> {
        match pool() {
            Some(pool) => pool.install(|| self.check_here(inputs, settings)),
            None => self.check_here(inputs, settings),
        }
    }

    fn check_here(&mut self, inputs: &[Input], settings: &Settings) -> Vec<FileReport> {
        let t0 = Instant::now();
        let mut kept = std::mem::take(&mut self.parses);
        // each file's last parse, handed over whole: its unchanged items' lowering moves on
        let olds: Vec<(Defines, Option<KeptParse>)> =
            crate::include_context::file_defines(inputs, settings)
                .into_iter()
                .zip(inputs)
                .map(|(defines, i)| {
                    let old = kept.remove(&i.path).filter(|k| k.defines == defines);
                    (defines, old)
                })
                .collect();
        // files no longer checked (a header no longer included) are forgotten
        drop(kept);
        let parses: Vec<Option<(ParsedFile, String, Defines)>> = inputs
            .par_iter()
            .zip(olds)
            .map(|(i, (defines, old))| {
                let (old_text, old) = match old {
                    Some(k) => (k.text, Some(k.parsed)),
                    None => (String::new(), None),
                };
                let old = old.map(|p| (old_text.as_str(), p));
                cudalint_syntax::parse_incremental(&i.text, &defines, old).map(|(mut p, text)| {
                    p.add_flag_defines(&defines);
                    (p, text, defines)
                })
            })
            .collect();
        let mut parsed: Vec<Option<ParsedFile>> = Vec::with_capacity(parses.len());
        // the preprocessed texts, kept (with the parses) for the next check
        let mut kept: Vec<Option<(String, Defines)>> = Vec::with_capacity(parses.len());
        for p in parses {
            match p {
                Some((p, text, defines)) => {
                    kept.push(Some((text, defines)));
                    parsed.push(Some(p));
                }
                None => {
                    kept.push(None);
                    parsed.push(None);
                }
            }
        }
        let t1 = Instant::now();
        let mut analysed_at = t1;
        let texts: Vec<&str> = kept
            .iter()
            .map(|k| k.as_ref().map_or("", |k| k.0.as_str()))
            .collect();
        let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
        let kernels = &mut self.kernels;
        let models: Vec<Option<&cudalint_syntax::FileModel>> = parsed
            .iter()
            .map(|p| p.as_ref().map(|p| &p.model))
            .collect();
        let (analysed, results) = analyse_parsed(
            inputs,
            &models,
            settings,
            false,
            |project, jobs, options, rules| {
                // the language server keeps every kernel's analysis for the next check
                let results = kernels.analyse(&Run {
                    project,
                    jobs,
                    options,
                    texts: &texts,
                    paths: &paths,
                });
                analysed_at = Instant::now();
                (results.par_iter().map(rules).collect(), results)
            },
        );
        let reports = file_reports(inputs, analysed, settings);
        self.kernels.keep(results);
        drop(texts);
        for ((i, k), parsed) in inputs.iter().zip(kept).zip(parsed) {
            if let (Some((text, defines)), Some(parsed)) = (k, parsed) {
                self.parses.insert(
                    i.path.clone(),
                    KeptParse {
                        defines,
                        text,
                        parsed,
                    },
                );
            }
        }
        let t2 = Instant::now();
        self.last = Timings {
            parse: t1 - t0,
            analyse: analysed_at.saturating_duration_since(t1),
            report: t2.saturating_duration_since(analysed_at),
            kernels: self.kernels.last,
        };
        reports
    }
}

/// Analysis recursion is bounded, but deep generated code still wants more than rayon's
/// default 2 MiB stacks (as in `check`); one pool serves every document.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(64 << 20)
            .build()
            .ok()
    })
    .as_ref()
}

#[cfg(test)]
mod tests;
