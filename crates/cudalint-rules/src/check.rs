//! The one check function behind every frontend: parse all files (one parser per thread),
//! analyse every kernel (in parallel), turn facts into diagnostics.

use crate::diagnostic::{Diagnostic, Position};
use crate::found::Found;
use crate::rules;
use cudalint_analysis::{self as analysis, Access, Loc, Options};
use cudalint_syntax::{FileModel, LineIndex, ParsedFile};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A file to check: its path as the user should see it, and its text.
#[derive(Clone)]
pub struct Input {
    pub path: String,
    /// Shared, not copied, by the parts of a run that are analysed apart (the links the
    /// results cache did not have).
    pub text: std::sync::Arc<str>,
    /// Read only for what it defines (a header a checked file includes): not reported on.
    pub context: bool,
    /// The cudalint.toml that governs this file, if any.
    pub config: Option<std::sync::Arc<crate::config::Config>>,
    /// Bytes of the file that were not valid UTF-8 and are `?` in `text`
    /// (`cudalint_syntax::source::decode`): the text is not the file's, so it is never
    /// written back.
    pub replaced_bytes: usize,
    /// The build files that govern the file's folder, if any were found.
    pub build: Option<std::sync::Arc<crate::build_files::BuildFiles>>,
    /// The file's compile command from compile_commands.json, or its includer's for a header
    /// the database does not list.
    pub compile: Option<std::sync::Arc<crate::compile_commands::CompileCommand>>,
}

impl Input {
    pub fn new(path: impl Into<String>, text: impl Into<std::sync::Arc<str>>) -> Input {
        Input {
            path: path.into(),
            text: text.into(),
            context: false,
            config: None,
            replaced_bytes: 0,
            build: None,
            compile: None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub analysis: Options,
    /// Report CL1xx (what could not be analysed) in `check` too.
    pub show_unanalysed: bool,
    /// Given on the command line: these win over cudalint.toml.
    pub block_override: Option<[i64; 3]>,
    pub runtime_override: Option<i64>,
    /// `-D` flags: over cudalint.toml `defines`.
    pub defines: cudalint_syntax::Defines,
    /// Told where a run is, from the worker threads (the CLI's progress bar).
    pub progress: Progress,
    /// How long the kernels of one file may take to analyse, their times added up; those
    /// still running when it is spent are not analysed (CL101). None: no limit.
    pub time_budget: Option<std::time::Duration>,
    /// What a report keeps of the accesses analysed.
    pub accesses: Accesses,
}

/// What a report keeps of the accesses the analysis priced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accesses {
    /// Each one's record (the audit, the editor's hover).
    #[default]
    Recorded,
    /// Only how many there were (`check`, which reports the findings: the records of a 10 MB
    /// corpus were a third of a run's peak memory).
    Counted,
}

/// A step of a run, as [`Progress`] hears of it.
pub enum Step<'a> {
    /// Parsing begins: this many files.
    Parsing(usize),
    /// A file was parsed and lowered.
    Parsed(&'a str),
    /// Analysis begins: this many kernel analyses.
    Analysing(usize),
    /// A kernel of this file was analysed.
    Analysed(&'a str),
}

type Listener = dyn Fn(Step) + Send + Sync;

/// Where a long run is told where it is: nothing by default.
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::Arc<Listener>>);

impl Progress {
    pub fn new(f: impl Fn(Step) + Send + Sync + 'static) -> Progress {
        Progress(Some(std::sync::Arc::new(f)))
    }

    fn tell(&self, step: Step) {
        if let Some(f) = &self.0 {
            f(step);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(on)"
        } else {
            "Progress(off)"
        })
    }
}

impl Settings {
    /// The analysis options for kernels of a file: defaults and `--assume`, then the file's
    /// cudalint.toml, then `--block` / `--runtime-default`.
    pub fn options_for(&self, input: &Input) -> Options {
        let mut o = match &input.config {
            Some(c) => c.analysis(&self.analysis),
            None => self.analysis.clone(),
        };
        if let Some(b) = self.block_override {
            o.default_block = b;
        }
        if let Some(r) = self.runtime_override {
            o.runtime_default = r;
        }
        o.macros = self
            .defines_for(input)
            .integer_values()
            .into_iter()
            .collect();
        o
    }

    /// The macros a file is preprocessed with: its compile command's (or, without one, what
    /// its Makefile's flags define in every build), then cudalint.toml `defines`, then `-D`
    /// (each over the one before).
    pub fn defines_for(&self, input: &Input) -> cudalint_syntax::Defines {
        let toml = match &input.config {
            Some(c) => c.defines.overlay(&self.defines),
            None => self.defines.clone(),
        };
        match (&input.compile, &input.build) {
            (Some(c), _) => c.defines.overlay(&toml),
            (None, Some(b)) if !b.defines.is_empty() => {
                let mut d = cudalint_syntax::Defines::default();
                for flag in &b.defines {
                    let _ = d.insert_flag(flag);
                }
                d.overlay(&toml)
            }
            (None, _) => toml,
        }
    }
}

/// One analysed access, as `audit` lists it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AccessRecord {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The last line of the access's expression: nvcc files a statement split over lines
    /// (`reinterpret_cast<float4*>(\n &C[i])[0] = v`) under a later one.
    pub end_line: usize,
    pub kernel: String,
    /// Where the kernel is defined: kernels of one name in two programs rank apart.
    #[serde(default)]
    pub kernel_file: String,
    #[serde(default)]
    pub kernel_line: usize,
    #[serde(deserialize_with = "known::space")]
    pub space: crate::diagnostic::Name,
    #[serde(deserialize_with = "known::op")]
    pub op: crate::diagnostic::Name,
    pub bytes: i64,
    /// The element type the width comes from, as the source names it.
    pub elem_type: String,
    #[serde(deserialize_with = "known::class")]
    pub class: crate::diagnostic::Name,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub sectors_per_request: Option<f64>,
    pub ideal_sectors_per_request: Option<f64>,
    pub wavefronts_per_request: Option<f64>,
    pub ideal_wavefronts_per_request: Option<f64>,
    pub block: [i64; 3],
    pub block_source: String,
    pub text: String,
    /// The calls of `__device__` functions the access was inlined through, innermost first.
    pub inlined_at: Vec<CallSite>,
    /// A load hoisted out of its loop: the loop's head. nvcc files the one load (and a profile
    /// counts it) under a line from there to the access's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<IssuedAt>,
    /// What the figures assume that the source does not say (an element size not known).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    /// Its estimated excess traffic per launch, where it is priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<crate::diagnostic::ImpactFigures>,
    /// Where the access is, as a byte range of the file (for editors).
    #[serde(skip)]
    pub span: std::ops::Range<usize>,
    /// The first sampled warp: (lane, byte offset from the base) of its active lanes.
    #[serde(skip)]
    pub lanes: crate::warp_lanes::WarpLanes,
    /// Bytes per sector and per bank of the target (to draw the warp's picture).
    #[serde(skip)]
    pub geometry: (i64, i64, i64),
    /// The same warp under the padding CL301 proved, where it proved one.
    #[serde(skip)]
    pub padded: Option<PaddedWarp>,
}

/// What an access keeps besides what `audit` prints (the editor's and the pictures' data):
/// the fields of [`AccessRecord`] that serde skips, for the forms that must keep them.
#[derive(Serialize, Deserialize)]
pub(crate) struct AccessExtra {
    span: std::ops::Range<usize>,
    lanes: crate::warp_lanes::WarpLanes,
    geometry: (i64, i64, i64),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    padded: Option<PaddedWarp>,
}

impl AccessRecord {
    pub(crate) fn extra(&self) -> AccessExtra {
        AccessExtra {
            span: self.span.clone(),
            lanes: self.lanes.clone(),
            geometry: self.geometry,
            padded: self.padded.clone(),
        }
    }

    pub(crate) fn restore(&mut self, x: AccessExtra) {
        (self.span, self.lanes, self.geometry, self.padded) =
            (x.span, x.lanes, x.geometry, x.padded);
    }
}

/// An access's warp after a proven padding of its shared array's innermost dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaddedWarp {
    /// Elements added to the innermost dimension.
    pub pad: i64,
    pub wavefronts: f64,
    /// (lane, byte offset in the padded array) of the active lanes.
    pub lanes: crate::warp_lanes::WarpLanes,
}

/// The head of the loop a load is hoisted out of.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IssuedAt {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// A call an access was inlined through.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallSite {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub callee: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FileReport {
    pub path: String,
    pub diagnostics: Vec<Diagnostic>,
    pub accesses: Vec<AccessRecord>,
    /// How many accesses were analysed: `accesses.len()` where they are recorded.
    #[serde(default)]
    pub accesses_analysed: usize,
    pub kernels: usize,
    /// Lines where the parser left an ERROR or MISSING region (after preprocessing).
    pub parse_error_lines: Vec<usize>,
    /// Set when the file could not be read or parsed at all.
    pub error: Option<String>,
    /// Kernels of the file whose analysis ran past the time budget.
    pub timed_out: Vec<String>,
}

/// Source text and line tables of the files of one run, for turning spans into positions.
pub struct Ctx<'a> {
    pub paths: Vec<&'a str>,
    pub texts: Vec<&'a str>,
    pub lines: Vec<LineIndex>,
}

impl Ctx<'_> {
    pub fn pos(&self, (file, span): Loc) -> Position {
        let lines = &self.lines[file];
        let text = self.texts[file];
        let start = (span.start as usize).min(text.len());
        let end = (span.end as usize).clamp(start, text.len());
        let (line, column) = lines.line_col(start);
        let (end_line, end_column) = lines.line_col(end);
        Position {
            file: self.paths[file].to_string(),
            bytes: start..end,
            line,
            column,
            end_line,
            end_column,
        }
    }

    /// The source text at a location, whitespace collapsed (for messages).
    pub fn text(&self, (file, span): Loc) -> String {
        let t = self.texts[file].get(span.range()).unwrap_or("");
        let collapsed = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if collapsed.len() > 120 {
            let mut cut = 117;
            while !collapsed.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}...", &collapsed[..cut])
        } else {
            collapsed
        }
    }
}

/// Parses every input, in parallel. Inputs tree-sitter cannot parse come back as `None`.
pub fn parse_all(inputs: &[Input], settings: &Settings) -> Vec<Option<ParsedFile>> {
    parse_each(inputs, settings, None, |p| p)
}

/// Parses every input and keeps what `keep` takes of each parse as it is made: a one-shot
/// check keeps the model and lets each syntax tree go at once (the trees of a 10 MB corpus
/// held together were most of the run's memory).
/// `defined` is what the whole run `#define`s when `inputs` are a part of it.
pub(crate) fn parse_each<T: Send>(
    inputs: &[Input],
    settings: &Settings,
    defined: Option<&std::collections::BTreeSet<&str>>,
    keep: impl Fn(ParsedFile) -> T + Sync,
) -> Vec<Option<T>> {
    use crate::include_context::{base_defines, base_defines_with, includer_defines, may_give};
    let base = match defined {
        Some(d) => base_defines_with(inputs, settings, d),
        None => base_defines(inputs, settings),
    };
    let prepared: Vec<std::borrow::Cow<str>> = inputs
        .par_iter()
        .zip(&base)
        .map(|(i, d)| cudalint_syntax::preprocess::prepare(&i.text, d))
        .collect();
    // the preprocessed texts are what includers' macros are read from; only a header that
    // gets some it mentions is preprocessed again
    let kept: Vec<Option<&str>> = inputs
        .iter()
        .zip(&prepared)
        .map(|(i, p)| may_give(&i.text).then_some(p.as_ref()))
        .collect();
    let from = includer_defines(inputs, &kept);
    settings.progress.tell(Step::Parsing(inputs.len()));
    inputs
        .par_iter()
        .zip(&prepared)
        .zip(base.par_iter().zip(&from))
        .map(|((i, p), (b, inc))| {
            let parsed = match inc {
                // as in the compiler, a `#define` after `-D` redefines the name
                Some(inc) if inc.names().any(|n| i.text.contains(n)) => {
                    cudalint_syntax::parse_with(&i.text, &b.overlay(inc))
                }
                _ => cudalint_syntax::parse_prepared(p),
            }
            .map(|mut p| {
                p.add_flag_defines(b);
                keep(p)
            });
            settings.progress.tell(Step::Parsed(&i.path));
            parsed
        })
        .collect()
}

pub fn check(inputs: &[Input], settings: &Settings) -> Vec<FileReport> {
    with_pool(|| {
        let owned = parse_each(inputs, settings, None, |p| p.model);
        let models: Vec<Option<&FileModel>> = owned.iter().map(Option::as_ref).collect();
        let analysed = analyse_all(inputs, &models, settings, pack_findings(inputs));
        drop(models);
        // gone before the findings are unpacked, and on every core: freeing every model of a
        // large run takes a few percent of it
        owned.into_par_iter().for_each(drop);
        file_reports(inputs, analysed, settings)
    })
}

/// Whether a run is large enough that its findings are packed while its models are alive
/// (see [`Found`]): packing costs about 5% of the run's CPU time and saves memory that
/// matters only on runs of megabytes (on a 10 MB corpus, peak RSS 503 MB -> 328 MB).
pub(crate) fn pack_findings(inputs: &[Input]) -> bool {
    const PACK_ABOVE: usize = 4 << 20;
    inputs.iter().map(|i| i.text.len()).sum::<usize>() > PACK_ABOVE
}

/// Runs `f` on a pool with large stacks: analysis recursion is bounded, but deep generated
/// code still wants more than rayon's default 2 MiB.
pub(crate) fn with_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().stack_size(64 << 20).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

pub fn check_parsed(
    inputs: &[Input],
    parsed: &[Option<&FileModel>],
    settings: &Settings,
) -> Vec<FileReport> {
    file_reports(
        inputs,
        analyse_all(inputs, parsed, settings, false),
        settings,
    )
}

/// Every kernel analysed, in parallel, each within the file's time budget.
pub(crate) fn analyse_all<'a>(
    inputs: &'a [Input],
    parsed: &[Option<&FileModel>],
    settings: &Settings,
    pack: bool,
) -> Analysed<'a> {
    // each kernel's analysis goes to the rules as soon as it is done and is dropped there:
    // a run holds its findings, never every kernel's analysis at once
    let analyse_all =
        |project: &analysis::Project,
         jobs: &[(usize, usize)],
         options: &[Options],
         rules: &(dyn Fn(&analysis::Analysis) -> Found + Sync)| {
            settings.progress.tell(Step::Analysing(jobs.len()));
            // a file's budget is the time its own kernels take, added up: measured from its
            // first kernel's start, it also counted the other files' kernels the threads ran
            // in between, so a loaded machine stopped kernels of a few seconds (AMGX's
            // geo_selector, 1.8 s alone, past 10 s in a run beside a build)
            let spent: Vec<std::sync::atomic::AtomicU64> =
                (0..inputs.len()).map(|_| Default::default()).collect();
            let found = jobs
                .par_iter()
                .map(|&(f, k)| {
                    let start = std::time::Instant::now();
                    let deadline = settings.time_budget.map(|budget| {
                        let used = std::time::Duration::from_nanos(
                            spent[f].load(std::sync::atomic::Ordering::Relaxed),
                        );
                        analysis::Deadline {
                            at: start + budget.saturating_sub(used),
                            budget,
                        }
                    });
                    let a = analysis::analyze_kernel_until(project, f, k, &options[f], deadline);
                    let took = start.elapsed().as_nanos().min(u64::MAX as u128) as u64;
                    spent[f].fetch_add(took, std::sync::atomic::Ordering::Relaxed);
                    settings.progress.tell(Step::Analysed(&inputs[f].path));
                    rules(&a)
                })
                .collect();
            (found, ())
        };
    analyse_parsed(inputs, parsed, settings, pack, analyse_all).0
}

/// The rules' findings on one kernel's analysis, filed under the files they are in.
fn kernel_findings(
    result: &analysis::Analysis,
    inputs: &[Input],
    ctx: &Ctx,
    keep: Accesses,
) -> KernelFindings {
    let reported = |f: usize| !inputs[f].context;
    let mut diagnostics = Vec::new();
    let mut records = Vec::new();
    let mut timed_out = Vec::new();
    let mut counted: Vec<(usize, usize)> = Vec::new();
    for s in &result.skipped {
        if reported(s.loc.0) && s.reason.starts_with(analysis::OUT_OF_TIME) {
            timed_out.push((s.loc.0, s.kernel.clone()));
        }
        if reported(s.loc.0) {
            diagnostics.push((s.loc.0, rules::not_analysed::check_kernel(s, ctx)));
        }
    }
    let excess = crate::impact::kernel_excess(&result.accesses);
    for a in &result.accesses {
        if !reported(a.loc.0) {
            continue;
        }
        if let Some(d) = rules::check_access(a, &result.accesses, excess, ctx) {
            diagnostics.push((a.loc.0, d));
        }
        match keep {
            Accesses::Recorded => records.push((a.loc.0, record(a, excess, ctx))),
            Accesses::Counted => match counted.iter_mut().find(|c| c.0 == a.loc.0) {
                Some(c) => c.1 += 1,
                None => counted.push((a.loc.0, 1)),
            },
        }
    }
    (diagnostics, records, timed_out, counted)
}

/// What the analysis of a run leaves for its reports: nothing of the models, so they can go
/// before the findings are unpacked.
pub(crate) struct Analysed<'a> {
    ctx: Ctx<'a>,
    /// Each file's report before its findings: its kernels, its parse errors.
    reports: Vec<FileReport>,
    found: Vec<Found>,
    /// Kernels the parser lost in a parse error region, filed after the findings.
    lost: Vec<(usize, Diagnostic)>,
}

/// [`check_parsed`]'s analysis with the kernels' analyses left to `analyse`: given the
/// project, the kernels as [`analysis::kernels`] lists them, every file's options and the
/// rules, it returns the rules' findings on each kernel, in that order, and whatever it keeps
/// of the analyses. `pack`: pack each kernel's findings as they come (see [`Found`]).
/// [`file_reports`] makes the reports of what it returns.
pub(crate) fn analyse_parsed<'a, Kept>(
    inputs: &'a [Input],
    parsed: &[Option<&FileModel>],
    settings: &Settings,
    pack: bool,
    analyse: impl FnOnce(
        &analysis::Project,
        &[(usize, usize)],
        &[Options],
        &(dyn Fn(&analysis::Analysis) -> Found + Sync),
    ) -> (Vec<Found>, Kept),
) -> (Analysed<'a>, Kept) {
    let empty = cudalint_syntax::FileModel::default();
    let models: Vec<&cudalint_syntax::FileModel> =
        parsed.iter().map(|p| p.unwrap_or(&empty)).collect();
    let ctx = Ctx {
        paths: inputs.iter().map(|i| i.path.as_str()).collect(),
        texts: inputs.iter().map(|i| i.text.as_ref()).collect(),
        lines: inputs.par_iter().map(|i| LineIndex::new(&i.text)).collect(),
    };
    // parameter lists written as a macro another file defines, written in
    let expanded = analysis::param_macros::expand(&models, &ctx.paths);
    let models: Vec<&cudalint_syntax::FileModel> = models
        .iter()
        .zip(&expanded)
        .map(|(m, e)| e.as_ref().unwrap_or(m))
        .collect();
    let jobs = analysis::kernels(&models);
    let project = analysis::Project::new(&models, &ctx.paths);
    let options: Vec<Options> = inputs.iter().map(|i| settings.options_for(i)).collect();
    // the rules run per kernel in parallel; their findings are filed in kernel order, as if
    // they had run one after the other
    let rules = |result: &analysis::Analysis| {
        let file = (result.accesses.first().map(|a| a.kernel_loc.0))
            .or(result.skipped.first().map(|s| s.loc.0))
            .unwrap_or(0);
        Found::new(
            kernel_findings(result, inputs, &ctx, settings.accesses),
            file,
            pack,
        )
    };
    let (found, kept) = analyse(&project, &jobs, &options, &rules);
    drop(project);

    let mut reports: Vec<FileReport> = inputs
        .iter()
        .zip(parsed)
        .map(|(i, p)| FileReport {
            path: i.path.clone(),
            error: p.is_none().then(|| {
                "could not be parsed (tree-sitter gave up, or cudalint hit an internal error: \
                     please report it)"
                    .to_string()
            }),
            ..FileReport::default()
        })
        .collect();
    for &(f, _) in &jobs {
        reports[f].kernels += 1;
    }
    let mut lost = Vec::new();
    for (fi, p) in parsed.iter().enumerate() {
        if let Some(p) = p {
            reports[fi].parse_error_lines = p
                .error_regions
                .iter()
                .map(|s| ctx.lines[fi].line_col(s.start as usize).0)
                .collect();
            reports[fi].parse_error_lines.dedup();
            // kernels whose definition the parser lost entirely
            for e in &p.stray_errors {
                if ctx.texts[fi]
                    .get(e.range())
                    .is_some_and(|t| t.contains("__global__"))
                {
                    let s = analysis::Skipped {
                        loc: (fi, *e),
                        kernel: "<unknown>".into(),
                        reason: "a parse error region that contains a kernel".into(),
                    };
                    lost.push((fi, rules::not_analysed::check_kernel(&s, &ctx)));
                }
            }
        }
    }
    let analysed = Analysed {
        ctx,
        reports,
        found,
        lost,
    };
    (analysed, kept)
}

/// The reports of an [`analyse_parsed`]: the findings filed under their files, the
/// suppressions and the configuration applied.
pub(crate) fn file_reports(
    inputs: &[Input],
    analysed: Analysed,
    settings: &Settings,
) -> Vec<FileReport> {
    let Analysed {
        ctx,
        mut reports,
        found,
        lost,
    } = analysed;
    // each file's findings in vectors of their size, made once: grown a push at a time, they
    // were a third larger than what they held on the 10 MB monorepo
    let mut sizes = vec![(0, 0); reports.len()];
    for k in &found {
        for &(f, d, r) in k.filed().iter() {
            sizes[f].0 += d;
            sizes[f].1 += r;
        }
    }
    for (report, (d, r)) in reports.iter_mut().zip(sizes) {
        report.diagnostics.reserve_exact(d);
        report.accesses.reserve_exact(r);
    }
    // unpacked a slice at a time, each filed before the next: never all of them at once
    let mut found = found.into_iter();
    loop {
        let part: Vec<Found> = found.by_ref().take(256).collect();
        if part.is_empty() {
            break;
        }
        let part: Vec<Result<KernelFindings, usize>> =
            part.into_par_iter().map(Found::unpack).collect();
        for kernel in part {
            let (diagnostics, records, timed_out, counted) = match kernel {
                Ok(k) => k,
                Err(f) => {
                    reports[f].error = Some(
                        "cudalint hit an internal error: the findings of one of its kernels \
                         were lost (please report it)"
                            .to_string(),
                    );
                    continue;
                }
            };
            for (f, k) in timed_out {
                reports[f].timed_out.push(k);
            }
            for (f, d) in diagnostics {
                reports[f].diagnostics.push(d);
            }
            for (f, r) in records {
                reports[f].accesses.push(r);
                reports[f].accesses_analysed += 1;
            }
            for (f, n) in counted {
                reports[f].accesses_analysed += n;
            }
        }
    }
    for (f, d) in lost {
        reports[f].diagnostics.push(d);
    }
    // suppressions see every finding (a suppressed CL102 is used even while CL1xx is off);
    // then what is not enabled is dropped, and the suppressions' own findings are added
    for (fi, r) in reports.iter_mut().enumerate() {
        let sups = crate::suppress::parse(ctx.texts[fi]);
        let mut meta = crate::suppress::apply(&mut r.diagnostics, &sups, |b| {
            ctx.pos((fi, cudalint_syntax::Span::new(b.start, b.end)))
        });
        let config = inputs[fi].config.as_deref();
        r.diagnostics.retain(|d| {
            let default = crate::codes::rule(d.code).is_some_and(|x| x.default_enabled);
            let on = config.map_or(default, |c| c.enabled(d.code, &inputs[fi].path, default));
            on || (settings.show_unanalysed && d.code.starts_with("CL1"))
        });
        if let Some(c) = config {
            for d in &mut r.diagnostics {
                if let Some(s) = c.severity.get(d.code) {
                    d.severity = *s;
                }
            }
        }
        r.diagnostics.append(&mut meta);
    }
    let mut reports: Vec<FileReport> = reports
        .into_iter()
        .zip(inputs)
        .filter(|(_, i)| !i.context)
        .map(|(r, _)| r)
        .collect();
    for r in &mut reports {
        r.diagnostics
            .sort_by(|a, b| (a.at.bytes.start, a.code).cmp(&(b.at.bytes.start, b.code)));
        r.accesses
            .sort_by(|a, b| (a.line, a.column, a.op).cmp(&(b.line, b.column, b.op)));
        r.diagnostics.shrink_to_fit();
        r.accesses.shrink_to_fit();
    }
    reports
}

/// The names an [`AccessRecord`] takes its `&'static str` fields from, for reading one back
/// (the results cache): a name the analysis does not give is an error.
mod known {
    use analysis::{AccessOp, Class, Space};
    use cudalint_analysis as analysis;
    use serde::de::{Deserializer, Error};

    fn one_of<'de, D: Deserializer<'de>>(
        d: D,
        names: &[&'static str],
    ) -> Result<&'static str, D::Error> {
        let s = <std::borrow::Cow<str> as serde::Deserialize>::deserialize(d)?;
        names
            .iter()
            .find(|n| **n == s)
            .copied()
            .ok_or_else(|| D::Error::custom(format!("unexpected `{s}`")))
    }

    pub fn space<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let all = [
            Space::Global,
            Space::Shared,
            Space::Local,
            Space::Constant,
            Space::Unknown,
        ];
        one_of(d, &all.map(Space::as_str))
    }

    pub fn op<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let all = [AccessOp::Load, AccessOp::Store, AccessOp::Atomic];
        one_of(d, &all.map(AccessOp::as_str))
    }

    pub fn class<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let all = [
            Class::Coalesced,
            Class::Broadcast,
            Class::Misaligned,
            Class::Strided(0),
            Class::Uncoalesced,
            Class::DataDependent(String::new()),
            Class::Unknown(String::new()),
            Class::Local,
        ];
        one_of(d, &all.each_ref().map(Class::name))
    }
}

/// One kernel's diagnostics, analysed accesses (records, or how many where they are only
/// counted) and whether it ran out of time, each with the file it is filed under.
pub(crate) type KernelFindings = (
    Vec<(usize, Diagnostic)>,
    Vec<(usize, AccessRecord)>,
    Vec<(usize, String)>,
    Vec<(usize, usize)>,
);

fn record(a: &Access, kernel_excess: f64, ctx: &Ctx) -> AccessRecord {
    let p = ctx.pos(a.loc);
    let (stride, reason) = match &a.cost.class {
        analysis::Class::Strided(s) => (Some(*s), None),
        analysis::Class::Unknown(r) | analysis::Class::DataDependent(r) => (None, Some(r.clone())),
        _ => (None, None),
    };
    let source = rules::shape_text(a, ctx);
    let inlined_at = a
        .inlined_at
        .iter()
        .map(|s| {
            let c = ctx.pos(s.loc);
            CallSite {
                file: c.file,
                line: c.line,
                column: c.column,
                callee: s.callee.clone(),
            }
        })
        .collect();
    let k = ctx.pos(a.kernel_loc);
    AccessRecord {
        file: p.file,
        line: p.line,
        column: p.column,
        end_line: p.end_line,
        kernel: a.kernel.clone(),
        kernel_file: k.file,
        kernel_line: k.line,
        space: a.space.as_str(),
        op: a.op.as_str(),
        bytes: a.bytes,
        elem_type: a.elem_type.clone(),
        class: a.cost.class.name(),
        stride_bytes: stride,
        reason,
        sectors_per_request: a.cost.sectors,
        ideal_sectors_per_request: a.cost.ideal_sectors,
        wavefronts_per_request: a.cost.wavefronts,
        ideal_wavefronts_per_request: a.cost.ideal_wavefronts,
        block: a.shape.block,
        block_source: source,
        text: ctx.text(a.loc),
        inlined_at,
        issued_at: a.issued_at.map(|l| {
            let p = ctx.pos(l);
            IssuedAt {
                file: p.file,
                line: p.line,
                column: p.column,
            }
        }),
        assumptions: a.assumptions.clone(),
        span: p.bytes.clone(),
        lanes: crate::warp_lanes::WarpLanes::new(&a.cost.lanes),
        padded: a.padding.as_ref().map(|p| PaddedWarp {
            pad: p.pad,
            wavefronts: p.wavefronts_after,
            lanes: crate::warp_lanes::WarpLanes::new(&p.lanes_after),
        }),
        impact: crate::impact::figures(a, kernel_excess, ctx),
        geometry: (
            a.shape.target.sector_bytes,
            a.shape.target.banks,
            a.shape.target.bank_bytes,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(src: &str) -> Vec<&'static str> {
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        reports[0].diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn findings_packed_while_the_models_are_alive_unpack_to_the_same_reports() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut inputs: Vec<Input> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cu" || x == "cuh"))
            .map(|p| {
                Input::new(
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        inputs.sort_by(|a, b| a.path.cmp(&b.path));
        let settings = Settings::default();
        let run = |pack| {
            with_pool(|| {
                let owned = parse_each(&inputs, &settings, None, |p| p.model);
                let models: Vec<Option<&FileModel>> = owned.iter().map(Option::as_ref).collect();
                let analysed = analyse_all(&inputs, &models, &settings, pack);
                drop(models);
                drop(owned);
                // every field, those the JSON formats skip too
                format!("{:?}", file_reports(&inputs, analysed, &settings))
            })
        };
        let (plain, packed) = (run(false), run(true));
        assert!(
            inputs.len() > 50 && plain.contains("CL201") && plain.contains("CL301"),
            "{} inputs",
            inputs.len()
        );
        let first = plain.bytes().zip(packed.bytes()).position(|(a, b)| a != b);
        assert!(
            plain == packed,
            "they part at byte {first:?}: {:?}",
            first.map(|i| &plain[i.saturating_sub(200)..(i + 200).min(plain.len())])
        );
    }

    #[test]
    fn a_mask_false_only_through_assumed_values_does_not_hide_the_access() {
        // mergeSort's `threadIdx.x < lenSrcA` with lenSrcA = end - start, both read from memory:
        // the assumed values make the difference 0, which says nothing about the real run
        let src = "__global__ void k(const unsigned* lim, float* o, const float* in) {\n\
                   __shared__ unsigned len;\n\
                   if (threadIdx.x == 0) len = lim[blockIdx.x + 1] - lim[blockIdx.x];\n\
                   __syncthreads();\n\
                   if (threadIdx.x < len) o[threadIdx.x * 2] = in[threadIdx.x];\n}\n";
        assert_eq!(codes(src), vec!["CL201"]);
    }

    fn assert_no_unknown(report: &FileReport) {
        let unknown: Vec<_> = report
            .accesses
            .iter()
            .filter(|a| a.class == "unknown")
            .map(|a| (a.line, a.reason.clone()))
            .collect();
        assert!(unknown.is_empty(), "{unknown:?}");
    }

    #[test]
    fn a_template_value_only_a_host_template_passes_is_a_runtime_value() {
        // OpenCV's stereoKernel<RADIUS>, launched from kernel_caller<RADIUS>, which only a
        // table of function pointers instantiates
        let src = "template <int R> __global__ void k(const float* in, float* out) {\n\
                   __shared__ float s[128 + 2 * R];\n\
                   s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];\n\
                   __syncthreads();\n\
                   float a = 0;\n\
                   a = s[threadIdx.x + R];\n\
                   out[blockIdx.x * 128 + threadIdx.x] = a;\n}\n\
                   template <int R> void caller(const float* in, float* out, int n) {\n\
                   k<R><<<n / 128, 128>>>(in, out);\n}\n\
                   typedef void (*caller_t)(const float*, float*, int);\n\
                   static const caller_t callers[] = {caller<1>, caller<2>, caller<3>};\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        assert_no_unknown(&reports[0]);
        assert_eq!(reports[0].accesses[0].block, [128, 1, 1]);
    }

    #[test]
    fn a_host_template_only_explicitly_instantiated_launches_with_those_arguments() {
        // mamba's `template void selective_scan_fwd_cuda<float, float>(SSMParamsBase &,
        // cudaStream_t);`, in a file of its own per dtype, called from code not analysed
        let src = "template <int N> __global__ void k(const float* in, float* out) {\n\
                   out[blockIdx.x * 64 + threadIdx.x] = in[(blockIdx.x * 64 + threadIdx.x) * N];\n}\n\
                   template <typename T, int N> void run(const T* in, T* out, int blocks) {\n\
                   auto kernel = &k<N>;\n\
                   kernel<<<blocks, 64>>>(in, out);\n}\n\
                   template void run<float, 2>(const float*, float*, int);\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        assert_no_unknown(&reports[0]);
        let load = reports[0].accesses.iter().find(|a| a.op == "load").unwrap();
        assert_eq!(load.block, [64, 1, 1]);
        assert_eq!(
            (load.sectors_per_request, load.ideal_sectors_per_request),
            (Some(8.0), Some(4.0))
        );
    }

    #[test]
    fn a_launch_inside_a_lambda_reads_the_lambda_and_leaves_what_it_cannot_fold_unbound() {
        // bitsandbytes' `auto launch = [&](auto tag) { constexpr int MB = ...; k<MB><<<>>> }`
        let src = "template <int MB> __global__ void k(const float* in, float* out) {\n\
                   int t = blockIdx.x * 128 + threadIdx.x;\n\
                   out[t] = in[t * MB];\n}\n\
                   void host(const float* in, float* out, int n, int m) {\n\
                   auto launch = [&](auto tag) {\n\
                   constexpr int MB = decltype(tag)::value;\n\
                   const int threads = 64 * 2;\n\
                   k<MB><<<n / 128, threads>>>(in, out);\n\
                   };\n\
                   launch(m);\n}\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        assert_no_unknown(&reports[0]);
        // the lambda's own declaration gives the block
        assert_eq!(reports[0].accesses[0].block, [128, 1, 1]);
    }

    #[test]
    fn a_launch_bounds_macro_continued_over_lines_is_a_specifier() {
        // moderngpu's `#define MGPU_LAUNCH_BOUNDS(launch_box) \ __launch_bounds__(...)`
        let src = "#define BOUNDS(lb) \\\n  __launch_bounds__(lb::nt, lb::occ)\n\
                   struct box { static const int nt = 128, occ = 4; };\n\
                   template <typename lb>\n__global__ BOUNDS(lb)\nvoid k(float* a) { a[threadIdx.x * 2] = 0; }\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        assert!(
            reports[0].parse_error_lines.is_empty(),
            "{:?}",
            reports[0].parse_error_lines
        );
        assert_eq!(reports[0].kernels, 1);
        assert_eq!(reports[0].accesses.len(), 1);
    }

    #[test]
    fn structured_bindings_take_a_tuple_apart() {
        // apex's `auto [n_loop, c_loop] = nc_scheduler.get_nc();`
        let src = "#include <tuple>\n\
                   __device__ auto rc(int t) { return std::make_pair(t / 32, t % 32); }\n\
                   __global__ void k(const float* in, float* out) {\n\
                   auto [r, c] = rc(threadIdx.x);\n\
                   out[threadIdx.x] = in[c * 64 + r];\n}\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        let load = reports[0]
            .accesses
            .iter()
            .find(|a| a.op == "load")
            .expect("the load");
        // lanes 64 floats apart: a sector each
        assert_eq!(
            (load.class, load.sectors_per_request),
            ("strided", Some(32.0)),
            "{load:?}"
        );
    }

    #[test]
    fn a_mask_false_for_real_still_switches_lanes_off() {
        // warp 0 of a 64-thread block never runs the access: only warp 1 is priced
        let src = "__global__ void k(float* o) { if (threadIdx.x >= 32) o[(threadIdx.x - 32) * 2] = 0; }\n\
                   void go(float* o) { k<<<1, 64>>>(o); }\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        let a = &reports[0].accesses[0];
        assert_eq!(
            (a.sectors_per_request, a.ideal_sectors_per_request),
            (Some(8.0), Some(4.0))
        );
    }

    #[test]
    fn blocks_running_a_condition_count_the_components_it_does_not_read() {
        // the middle block (2, 1) runs neither store: the first block stands for them, and
        // the blocks that run each are counted over the grid of 4 x 3
        let src = "__global__ void k(float* o) {\n\
                   if (blockIdx.x == 0 && threadIdx.x == 0) o[blockIdx.y] = 0;\n\
                   if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x < 32) o[threadIdx.x * 8] = 1;\n}\n\
                   void go(float* o) { k<<<dim3(4, 3), 64>>>(o); }\n";
        let reports = check(&[Input::new("t.cu", src)], &Settings::default());
        let blocks: Vec<(usize, Option<i64>)> = reports[0]
            .accesses
            .iter()
            .map(|a| (a.line, a.impact.as_ref().and_then(|i| i.blocks)))
            .collect();
        assert_eq!(blocks, vec![(2, Some(3)), (3, Some(1))], "{blocks:?}");
    }
}
