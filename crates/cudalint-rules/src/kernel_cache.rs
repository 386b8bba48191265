//! Kernels' analyses kept from one check to the next of the same inputs (an editor's open
//! document): typing inside one kernel re-analyses that kernel only.
//!
//! A kernel's analysis reads its own text and what the rest of the run defines: macros,
//! helpers, structs, launch sites, the other files. So a result is keyed on the hash of the
//! kernel's text, the hash of the run's text with every kernel's text cut out (the context),
//! and the hash of its options; it is reused when all three match, its spans moved to where
//! the same text now lies (see [`crate::relocate`]). Hashed texts are the preprocessed ones:
//! they, not what the user typed, decide the model.
//!
//! A kernel body can itself define something the others see (a `#define`, a struct, a
//! typedef) or launch another kernel (dynamic parallelism: the launch is evaluated in it); the
//! text of such a kernel is part of the context.

use crate::relocate::{FileMoves, Moves};
use cudalint_analysis::{self as analysis, Analysis, Options, Project};
use cudalint_syntax::Span;
use rayon::prelude::*;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// How many kernels the last call analysed and how many it reused.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reuse {
    pub analysed: usize,
    pub reused: usize,
}

struct Entry {
    file: usize,
    span: Span,
    text: u64,
    options: u64,
    result: Analysis,
}

/// What the kept results were computed from.
struct Kept {
    context: u64,
    entries: Vec<Entry>,
}

/// The layout and keys of the run being checked, until its results are kept.
struct Pending {
    context: u64,
    keys: Vec<(usize, Span, u64, u64)>,
}

#[derive(Default)]
pub(crate) struct KernelCache {
    kept: Option<Kept>,
    pending: Option<Pending>,
    pub last: Reuse,
}

/// What a run is made of, as far as the cache is concerned.
pub(crate) struct Run<'a> {
    pub project: &'a Project<'a>,
    pub jobs: &'a [(usize, usize)],
    pub options: &'a [Options],
    /// The preprocessed text of every file, parallel to `paths`.
    pub texts: &'a [&'a str],
    pub paths: &'a [&'a str],
}

impl KernelCache {
    /// Every kernel's analysis, in `run.jobs` order: reused where its keys match, else computed.
    /// Call [`KernelCache::keep`] with the results to keep them for the next call.
    pub fn analyse(&mut self, run: &Run) -> Vec<Analysis> {
        let kept = self.kept.take();
        self.pending = None;
        let Some(spans) = kernel_spans(run) else {
            self.last = Reuse {
                analysed: run.jobs.len(),
                reused: 0,
            };
            return analyse_all(run, vec![None; run.jobs.len()]);
        };
        let options: Vec<u64> = run.options.iter().map(options_hash).collect();
        let keys: Vec<(usize, Span, u64, u64)> = run
            .jobs
            .iter()
            .zip(&spans)
            .map(|(&(f, _), &s)| {
                let text = run.texts[f].get(s.range()).unwrap_or("");
                (f, s, hash_bytes(text), options.get(f).copied().unwrap_or(0))
            })
            .collect();
        let context = context_hash(run, &spans);
        let mut reused: Vec<Option<Analysis>> = Vec::new();
        if let Some(kept) = kept.filter(|k| {
            k.context == context
                && k.entries.len() == keys.len()
                && k.entries.iter().zip(&keys).all(|(e, k)| e.file == k.0)
        }) {
            let moves = moves(&kept.entries, &keys, run.texts.len());
            reused = kept
                .entries
                .into_iter()
                .zip(&keys)
                .map(|(e, &(_, _, text, opts))| {
                    let mut result = e.result;
                    (e.text == text && e.options == opts)
                        .then(|| moves.analysis(&mut result))
                        .flatten()
                        .map(|()| result)
                })
                .collect();
        }
        reused.resize_with(keys.len(), || None);
        let hits = reused.iter().filter(|r| r.is_some()).count();
        self.last = Reuse {
            analysed: keys.len() - hits,
            reused: hits,
        };
        self.pending = Some(Pending { context, keys });
        analyse_all(run, reused)
    }

    /// Keeps the results of the last [`KernelCache::analyse`] for the next one.
    pub fn keep(&mut self, results: Vec<Analysis>) {
        self.kept = self
            .pending
            .take()
            .filter(|p| p.keys.len() == results.len())
            .map(|p| Kept {
                context: p.context,
                entries: p
                    .keys
                    .into_iter()
                    .zip(results)
                    .map(|((file, span, text, options), result)| Entry {
                        file,
                        span,
                        text,
                        options,
                        result,
                    })
                    .collect(),
            });
    }
}

fn analyse_all(run: &Run, reused: Vec<Option<Analysis>>) -> Vec<Analysis> {
    run.jobs
        .par_iter()
        .zip(reused)
        .map(|(&(f, k), r)| {
            r.unwrap_or_else(|| analysis::analyze_kernel(run.project, f, k, &run.options[f]))
        })
        .collect()
}

/// The kernels' spans, in job order, if they lie in their texts in order without overlapping
/// (the segments the cache cuts a file into); `None` turns the cache off for the run.
fn kernel_spans(run: &Run) -> Option<Vec<Span>> {
    let mut out = Vec::with_capacity(run.jobs.len());
    let mut last: Option<(usize, u32)> = None;
    for &(f, k) in run.jobs {
        let s = run.project.files.get(f)?.functions.get(k)?.span;
        run.texts.get(f)?.get(s.range())?;
        if let Some((lf, end)) = last {
            if lf > f || (lf == f && s.start < end) {
                return None;
            }
        }
        last = Some((f, s.end));
        out.push(s);
    }
    Some(out)
}

/// Whether a kernel's text makes something the other kernels see: the model takes macros,
/// structs and typedefs from function bodies, and evaluates a launch in the function it is in.
fn exports(text: &str) -> bool {
    ["#", "<<<", "typedef", "struct", "class", "union", "using"]
        .iter()
        .any(|t| text.contains(t))
}

fn context_hash(run: &Run, spans: &[Span]) -> u64 {
    let mut h = DefaultHasher::new();
    run.paths.len().hash(&mut h);
    let mut kernels = run.jobs.iter().map(|j| j.0).zip(spans).peekable();
    for (f, (text, path)) in run.texts.iter().zip(run.paths).enumerate() {
        path.hash(&mut h);
        let mut at = 0usize;
        while let Some((_, s)) = kernels.next_if(|(kf, _)| *kf == f) {
            let gap = text.get(at..s.start as usize).unwrap_or("");
            gap.hash(&mut h);
            let body = text.get(s.range()).unwrap_or("");
            if exports(body) {
                body.hash(&mut h);
            } else {
                // a kernel cut out still leaves its mark: the gaps around it stay apart
                0xC0DE_u32.hash(&mut h);
            }
            at = s.end as usize;
        }
        text.get(at..).unwrap_or("").hash(&mut h);
    }
    h.finish()
}

fn hash_bytes(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The options, independent of hash map order. Listed in full on purpose: an option added to
/// [`Options`] must be hashed here too, or a result computed under another value would be
/// reused.
pub(crate) fn options_hash(o: &Options) -> u64 {
    let Options {
        runtime_default,
        params,
        default_block,
        kernel_blocks,
        target,
        macros,
    } = o;
    let analysis::Target {
        sector_bytes,
        banks,
        bank_bytes,
    } = target;
    let mut h = DefaultHasher::new();
    runtime_default.hash(&mut h);
    let mut p: Vec<_> = params.iter().collect();
    p.sort();
    p.hash(&mut h);
    default_block.hash(&mut h);
    let mut b: Vec<_> = kernel_blocks.iter().collect();
    b.sort();
    b.hash(&mut h);
    (sector_bytes, banks, bank_bytes).hash(&mut h);
    let mut m: Vec<_> = macros.iter().collect();
    m.sort();
    m.hash(&mut h);
    h.finish()
}

/// The segment map from the kept layout to the new one (same kernels per file, in order).
fn moves(entries: &[Entry], keys: &[(usize, Span, u64, u64)], files: usize) -> Moves {
    let mut out: Vec<FileMoves> = (0..files)
        .map(|_| FileMoves {
            old: Vec::new(),
            new: Vec::new(),
            same: Vec::new(),
        })
        .collect();
    for (e, k) in entries.iter().zip(keys) {
        if let Some(m) = out.get_mut(k.0) {
            m.old.push(e.span);
            m.new.push(k.1);
            m.same.push(e.text == k.2);
        }
    }
    Moves { files: out }
}
