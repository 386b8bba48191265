//! The `cudalint` command: a thin frontend over `cudalint_rules::check`.

mod baseline;
mod fix;
mod html;
mod impact_rank;
mod inputs;
mod ncu;
mod ranking;
mod render;
mod sarif;
mod summary;
mod svg;

use clap::{Parser, Subcommand, ValueEnum};
use codespan_reporting::term::termcolor::{BufferedStandardStream, ColorChoice};
use cudalint_rules::{Settings, Severity};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cudalint",
    version,
    about = "Predicts, per warp, what the GPU's memory system does for every global and shared access in CUDA source"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    /// Counts per path: files with parse errors, kernels not analysed and why, accesses by
    /// class, findings by code, the most common reasons for `unknown`
    Summary,
    /// One self-contained HTML page: kernels ranked by estimated excess, findings by rule,
    /// what was not seen, and per kernel its accesses with figures, fixes and the warp's
    /// picture (kernels come in `--sort impact` order whatever `--sort` says)
    Html,
}

#[derive(Clone, Copy, ValueEnum)]
enum Sort {
    /// By file, line and column.
    Location,
    /// By estimated excess traffic, costliest first.
    Impact,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    /// codespan-reporting diagnostics
    Text,
    /// the diagnostics as JSON (stable fields, see the README)
    Json,
    /// SARIF 2.1.0, for code scanning
    Sarif,
    /// GitHub Actions workflow commands (annotations)
    Github,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Color {
    /// When standard output is a terminal and NO_COLOR is not set.
    Auto,
    Always,
    Never,
}

impl Color {
    fn choice(self) -> ColorChoice {
        use std::io::IsTerminal;
        match self {
            Color::Always => ColorChoice::Always,
            Color::Never => ColorChoice::Never,
            Color::Auto
                if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() =>
            {
                ColorChoice::Auto
            }
            Color::Auto => ColorChoice::Never,
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(clap::Args)]
struct AnalysisArgs {
    /// Block shape for kernels with no visible launch and no __launch_bounds__ (e.g. 256 or 16,16).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    block: Option<String>,
    /// Value of a runtime quantity (kernel parameter, template argument), e.g. --assume Width=4096.
    #[arg(long, value_name = "NAME=VALUE")]
    assume: Vec<String>,
    /// Value assumed for runtime quantities with no configured value (default 1024).
    #[arg(long, value_name = "N")]
    runtime_default: Option<i64>,
    /// Define a macro, as nvcc's -D does: it picks `#if`/`#ifdef` branches, and an integer
    /// value is used where the files do not define the name (e.g. -D USE_FP16 -D TILE=32).
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Declare a macro undefined, as nvcc's -U does (e.g. -U ENABLE_FP32): `#ifdef` on a name
    /// nothing defines or undefines, and that a build file names, keeps its first branch.
    #[arg(short = 'U', long = "undefine", value_name = "NAME")]
    undefine: Vec<String>,
    /// Look for `#include "..."` headers in this folder too, as nvcc's -I does (after the
    /// including file's folder; before the folders above it, which are tried last).
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    include_dir: Vec<std::path::PathBuf>,
    /// Read each file with the flags its build compiles it with (-D, -U, -I, -isystem,
    /// -include, -std) from this compile_commands.json (or a folder holding one, e.g. `build`).
    /// Without it, cudalint.toml's `compile-commands` is used, else the nearest
    /// compile_commands.json or build/compile_commands.json in the file's folder or above it
    /// (up to the repository's top), else the one in the current folder or its build/.
    /// -D, -U, -I and cudalint.toml win over it.
    #[arg(long, value_name = "PATH", conflicts_with = "no_compile_commands")]
    compile_commands: Option<std::path::PathBuf>,
    /// Read no compile_commands.json (neither found nor named in cudalint.toml).
    #[arg(long)]
    no_compile_commands: bool,
    /// Use this configuration for every file instead of the nearest cudalint.toml.
    #[arg(long, value_name = "PATH")]
    config: Option<String>,
    /// Neither check nor report files matching this glob (e.g. --exclude 'third_party/**'); an
    /// excluded header that a checked file includes is still read for its definitions.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Show no progress on stderr (it is shown only when stderr is a terminal).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Neither read nor write the results cache.
    #[arg(long)]
    no_cache: bool,
    /// Where the results cache is (default: `.cudalint_cache` next to the nearest
    /// cudalint.toml, else in the current folder).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<std::path::PathBuf>,
    /// Seconds the kernels of one file may take to analyse; the kernels still running then
    /// are reported not analysed (CL101) and the run goes on. 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    time_budget: f64,
}

/// What `cudalint check` takes.
#[derive(clap::Args)]
struct CheckArgs {
    /// Files and folders (folders are walked for .cu/.cuh, respecting .gitignore).
    #[arg(default_value = ".")]
    paths: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// Exit 1 when a finding at or above this severity is reported (default: cudalint.toml's
    /// `fail-on`, else warning).
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// Also report what could not be analysed (CL1xx).
    #[arg(long)]
    show_unanalysed: bool,
    /// Apply machine-applicable fixes in place (each checked by re-analysis), then report
    /// what remains.
    #[arg(long, conflicts_with = "diff")]
    fix: bool,
    /// Print the machine-applicable fixes as a diff instead of applying them.
    #[arg(long)]
    diff: bool,
    /// Record today's findings in FILE (and exit 0): adopt cudalint without fixing them first.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<String>,
    /// Report only findings that FILE (written by --write-baseline) does not record.
    #[arg(long, value_name = "FILE")]
    baseline: Option<String>,
    #[arg(long, value_enum, default_value = "auto")]
    color: Color,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Report wasteful memory accesses in .cu/.cuh files and folders (and in the headers they
    /// include).
    Check(CheckArgs),
    /// List every memory access analysed, with its predicted cost.
    Audit {
        #[arg(required = true)]
        paths: Vec<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// `impact`: kernels and accesses ranked by estimated excess traffic per launch
        /// (excess sectors x 32 B, excess shared wavefronts x 128 B), with each one's share of
        /// its kernel's and of the run's total
        #[arg(long, value_enum, default_value = "location")]
        sort: Sort,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Hold the predictions against your own Nsight Compute profile: REPORT is the CSV of
    /// `ncu -i rep.ncu-rep --page source --csv --print-source cuda,sass` (or the .ncu-rep when
    /// ncu is on PATH). Exits 1 when the hardware and cudalint disagree about waste.
    Ncu {
        report: String,
        /// Where the profiled sources are (paths in the report are matched by their suffix).
        #[arg(long, default_value = ".")]
        root: String,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Serve the Language Server Protocol on stdin/stdout (diagnostics, quick fixes, hover).
    Lsp {
        /// Accepted and ignored: stdio is the only transport, and many clients pass this flag.
        #[arg(long)]
        stdio: bool,
    },
    /// Print the documentation of a rule (e.g. `cudalint explain CL301`), or list the rules.
    Explain { code: Option<String> },
}

fn settings(a: &AnalysisArgs, show_unanalysed: bool) -> Result<Settings, String> {
    let mut s = Settings {
        show_unanalysed,
        ..Settings::default()
    };
    if let Some(r) = a.runtime_default {
        if r <= 0 {
            return Err(format!(
                "--runtime-default {r}: expected a positive integer"
            ));
        }
        s.runtime_override = Some(r);
    }
    if !(a.time_budget >= 0.0 && a.time_budget.is_finite()) {
        return Err(format!(
            "--time-budget {}: expected a number of seconds (0: no limit)",
            a.time_budget
        ));
    }
    s.time_budget =
        (a.time_budget > 0.0).then(|| std::time::Duration::from_secs_f64(a.time_budget));
    for d in &a.define {
        s.defines.insert_flag(d).map_err(|e| format!("-D {e}"))?;
    }
    for u in &a.undefine {
        s.defines.undefine(u).map_err(|e| format!("-U {e}"))?;
    }
    if let Some(b) = &a.block {
        let parts: Result<Vec<i64>, _> = b.split(',').map(|x| x.trim().parse::<i64>()).collect();
        match parts {
            Ok(p) if !p.is_empty() && p.len() <= 3 && p.iter().all(|x| *x > 0) && p.iter().product::<i64>() <= 1024 => {
                s.block_override = Some([p[0], *p.get(1).unwrap_or(&1), *p.get(2).unwrap_or(&1)]);
            }
            _ => return Err(format!("--block {b}: expected 1 to 3 positive integers (at most 1024 threads), e.g. 256 or 16,16")),
        }
    }
    for kv in &a.assume {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(format!("--assume {kv}: expected NAME=VALUE"));
        };
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--assume {kv}: `{v}` is not an integer"))?;
        s.analysis.params.insert(k.trim().to_string(), v);
    }
    Ok(s)
}

/// A progress bar on stderr, when it is a terminal and `--quiet` is not given: CI logs and
/// output piped to a file stay clean.
fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        None,
        indicatif::ProgressDrawTarget::stderr_with_hz(10),
    );
    let style =
        indicatif::ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {wide_msg}")
            .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    Some(bar)
}

/// What a run tells its bar: files parsed of all, then kernels analysed of all, with the file
/// last worked on (the one a slow run is stuck in).
fn progress(bar: indicatif::ProgressBar) -> cudalint_rules::Progress {
    use cudalint_rules::Step;
    cudalint_rules::Progress::new(move |step| match step {
        Step::Parsing(n) | Step::Analysing(n) => {
            bar.set_prefix(if matches!(step, Step::Parsing(_)) {
                "parsing"
            } else {
                "analysing"
            });
            bar.set_length(n as u64);
            bar.set_position(0);
        }
        Step::Parsed(path) | Step::Analysed(path) => {
            bar.inc(1);
            bar.set_message(path.to_string());
        }
    })
}

/// Collects the inputs, checks them, and prints each input error as one line on stderr.
/// What one run of the checks produced.
type Checked = (
    inputs::Collected,
    Vec<cudalint_rules::FileReport>,
    Vec<String>,
    Settings,
);

fn run(
    paths: &[String],
    analysis: &AnalysisArgs,
    show_unanalysed: bool,
    accesses: cudalint_rules::Accesses,
) -> Result<Checked, ExitCode> {
    let mut settings = settings(analysis, show_unanalysed).map_err(|e| {
        eprintln!("cudalint: error: {e}");
        ExitCode::from(2)
    })?;
    settings.accesses = accesses;
    let excludes = inputs::Excludes::new(&analysis.exclude).map_err(|e| {
        eprintln!("cudalint: error: {e}");
        ExitCode::from(2)
    })?;
    let timing = Timing::new();
    let mut collected = inputs::collect(paths, &excludes);
    timing.say("collect");
    if let Some(d) = analysis.include_dir.iter().find(|d| !d.is_dir()) {
        eprintln!("cudalint: error: -I {}: no such folder", d.display());
        return Err(ExitCode::from(2));
    }
    let skip = |p: &std::path::Path| excludes.matches(p) || inputs::gitignored(p);
    let compile = compile_source(analysis)?;
    match cudalint_rules::workspace::prepare(
        &mut collected.inputs,
        analysis.config.as_deref(),
        &analysis.include_dir,
        &compile,
        cudalint_rules::workspace::Headers::Reported {
            skip: &skip,
            folders: &inputs::folders(paths),
        },
    ) {
        Ok(warnings) => collected.warnings.extend(warnings),
        Err(e) => {
            eprintln!("cudalint: error: {e}");
            return Err(ExitCode::from(2));
        }
    }
    timing.say("prepare");
    let bar = progress_bar(analysis.quiet);
    let mut settings = settings;
    if let Some(bar) = &bar {
        settings.progress = progress(bar.clone());
    }
    let reports = if analysis.no_cache {
        cudalint_rules::check(&collected.inputs, &settings)
    } else {
        let dir = cache_dir(analysis, &collected.inputs);
        let cache = cudalint_rules::Cache::new(&dir, &tool_id());
        let (reports, stats) = cudalint_rules::check_cached(&collected.inputs, &settings, &cache);
        for w in &stats.warnings {
            eprintln!("cudalint: warning: results cache: {w}");
        }
        timing.note(&format!(
            "cache {}: {} files reused, {} analysed, {} parsed",
            dir.display(),
            stats.reused,
            stats.analysed,
            stats.parsed
        ));
        reports
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    settings.progress = Default::default();
    timing.say("check");
    let mut errors = collected.errors.clone();
    errors.extend(
        reports
            .iter()
            .filter_map(|r| r.error.as_ref().map(|e| format!("{}: {e}", r.path))),
    );
    for e in &errors {
        eprintln!("cudalint: error: {e}");
    }
    for w in &collected.warnings {
        eprintln!("cudalint: warning: {w}");
    }
    for r in reports.iter().filter(|r| !r.timed_out.is_empty()) {
        eprintln!(
            "cudalint: warning: {}: the analysis of {} ran past the time budget of {} s per file and was stopped; not analysed (CL101)",
            r.path,
            names(&r.timed_out),
            analysis.time_budget
        );
    }
    Ok((collected, reports, errors, settings))
}

/// Where the run's compile commands come from: `--compile-commands`, none, or looked for
/// (falling back on the current folder).
fn compile_source(a: &AnalysisArgs) -> Result<cudalint_rules::compile_commands::Source, ExitCode> {
    use cudalint_rules::compile_commands::{named, Source};
    if a.no_compile_commands {
        return Ok(Source::Off);
    }
    match &a.compile_commands {
        Some(p) => {
            let db = named(p);
            if !db.is_file() {
                eprintln!(
                    "cudalint: error: --compile-commands {}: no such file{}",
                    p.display(),
                    if p.is_dir() {
                        format!(
                            " (the folder has no {})",
                            cudalint_rules::compile_commands::FILE_NAME
                        )
                    } else {
                        String::new()
                    }
                );
                return Err(ExitCode::from(2));
            }
            Ok(Source::Given(db))
        }
        None => Ok(Source::Discover {
            fallback: std::env::current_dir().ok(),
        }),
    }
}

/// Where a run's time goes, on stderr when CUDALINT_TIMING is set (as the language server's
/// CUDALINT_LSP_TIMING): reading the files, reading their headers and configuration, checking.
struct Timing(Option<std::cell::Cell<std::time::Instant>>);

impl Timing {
    fn new() -> Timing {
        Timing(
            std::env::var_os("CUDALINT_TIMING")
                .map(|_| std::cell::Cell::new(std::time::Instant::now())),
        )
    }

    fn note(&self, what: &str) {
        if self.0.is_some() {
            eprintln!("cudalint: timing: {what}");
        }
    }

    fn say(&self, step: &str) {
        if let Some(t) = &self.0 {
            let now = std::time::Instant::now();
            eprintln!(
                "cudalint: timing: {step} {:.1} ms",
                (now - t.get()).as_secs_f64() * 1e3
            );
            t.set(now);
        }
    }
}

/// The results cache's folder: `--cache-dir`, else next to the cudalint.toml of the first
/// checked file, else in the current folder.
fn cache_dir(a: &AnalysisArgs, inputs: &[cudalint_rules::Input]) -> std::path::PathBuf {
    if let Some(d) = &a.cache_dir {
        return d.clone();
    }
    let config = inputs
        .iter()
        .find(|i| !i.context)
        .and_then(|i| i.config.as_ref())
        .and_then(|c| c.path.parent().map(|p| p.to_path_buf()));
    config
        .unwrap_or_default()
        .join(cudalint_rules::cache::FOLDER)
}

/// This build of cudalint, as its results cache knows it.
fn tool_id() -> String {
    format!(
        "cudalint {} {}",
        env!("CARGO_PKG_VERSION"),
        env!("CUDALINT_SOURCE_HASH")
    )
}

/// `a`, `a` and `b`, `a`, `b` and 3 more kernels: names for a one-line message.
fn names(kernels: &[String]) -> String {
    let quoted: Vec<String> = kernels.iter().take(3).map(|k| format!("`{k}`")).collect();
    let more = kernels.len().saturating_sub(3);
    let word = if kernels.len() == 1 {
        "kernel"
    } else {
        "kernels"
    };
    match (quoted.as_slice(), more) {
        ([one], _) => format!("{word} {one}"),
        (_, 0) => format!(
            "{word} {} and {}",
            quoted[..quoted.len() - 1].join(", "),
            quoted[quoted.len() - 1]
        ),
        _ => format!("{word} {} and {more} more", quoted.join(", ")),
    }
}

fn main() -> ExitCode {
    // a bug met on one file or kernel is caught there (that file's or kernel's report says
    // so) and the run goes on: one line on stderr, not a backtrace
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "cudalint: internal error, the run goes on without it (please report it): {info}"
        );
    }));
    let cli = Cli::parse();
    if let Err(e) = cudalint_syntax::check_language() {
        eprintln!("cudalint: error: {e}");
        return ExitCode::from(2);
    }
    match cli.command {
        Command::Explain { code } => explain(code.as_deref()),
        Command::Lsp { .. } => {
            cudalint_lsp::serve_stdio();
            ExitCode::SUCCESS
        }
        Command::Ncu {
            report,
            root,
            analysis,
        } => {
            let settings = match settings(&analysis, false) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("cudalint: error: {e}");
                    return ExitCode::from(2);
                }
            };
            let compile = match compile_source(&analysis) {
                Ok(c) => c,
                Err(code) => return code,
            };
            match ncu::run(&report, std::path::Path::new(&root), &settings, &compile) {
                Ok((text, clean)) => {
                    print!("{text}");
                    ExitCode::from(if clean { 0 } else { 1 })
                }
                Err(e) => {
                    eprintln!("cudalint: error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Check(args) => check_command(args),
        Command::Audit {
            paths,
            format,
            sort,
            analysis,
        } => {
            let (_, reports, errors, _) =
                match run(&paths, &analysis, true, cudalint_rules::Accesses::Recorded) {
                    Ok(r) => r,
                    Err(code) => return code,
                };
            match (format, sort) {
                (Format::Text, Sort::Location) => print!("{}", render::audit_text(&reports)),
                (Format::Json, Sort::Location) => {
                    println!("{}", render::audit_json(&reports, &errors))
                }
                (Format::Text, Sort::Impact) => {
                    print!("{}", ranking::text(&ranking::rank(&reports)))
                }
                (Format::Json, Sort::Impact) => {
                    println!("{}", ranking::json(&ranking::rank(&reports), &errors))
                }
                (Format::Summary, _) => print!("{}", summary::render(&paths, &reports, 20)),
                (Format::Html, _) => print!("{}", html::render(&reports, &errors)),
            }
            ExitCode::from(if errors.is_empty() { 0 } else { 2 })
        }
    }
}

/// `cudalint check`: collect, check, fix or diff, baseline, render, and the exit code.
fn check_command(args: CheckArgs) -> ExitCode {
    let CheckArgs {
        paths,
        format,
        fail_on,
        show_unanalysed,
        fix,
        diff,
        write_baseline,
        baseline,
        color,
        analysis,
    } = args;
    let (mut collected, mut reports, errors, settings) = match run(
        &paths,
        &analysis,
        show_unanalysed,
        cudalint_rules::Accesses::Counted,
    ) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if fix || diff {
        let outcome = fix::run(&collected.inputs, &reports, &settings, diff);
        for (file, why) in &outcome.refused {
            eprintln!("cudalint: not fixed: {file}: {why}");
        }
        if diff {
            print!("{}", outcome.diff);
            return ExitCode::from(if outcome.refused.is_empty() { 0 } else { 1 });
        }
        for (file, what) in &outcome.applied {
            eprintln!("cudalint: fixed {file}: {what}");
        }
        // report what remains, from the files as they are now
        for input in collected.inputs.iter_mut() {
            if let Ok(t) = std::fs::read_to_string(&input.path) {
                input.text = t.into();
            }
        }
        reports = cudalint_rules::check(&collected.inputs, &settings);
    }
    if let Some(path) = write_baseline {
        return match baseline::write(&path, &reports, &collected.inputs) {
            Ok(n) => {
                eprintln!(
                    "cudalint: wrote {n} finding{} to {path}",
                    if n == 1 { "" } else { "s" }
                );
                ExitCode::from(if errors.is_empty() { 0 } else { 2 })
            }
            Err(e) => {
                eprintln!("cudalint: error: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(path) = baseline {
        match baseline::apply(&path, &mut reports, &collected.inputs) {
            Ok(n) if n > 0 => eprintln!(
                "cudalint: {n} finding{} recorded in {path} not shown",
                if n == 1 { "" } else { "s" }
            ),
            Ok(_) => {}
            Err(e) => {
                eprintln!("cudalint: error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match format {
        CheckFormat::Text => {
            // buffered: a run with tens of thousands of findings wrote each fragment with its
            // own system call
            let mut out = BufferedStandardStream::stdout(color.choice());
            let _ = render::text(&reports, &collected.inputs, &mut out);
            let _ = writeln!(out, "{}", render::summary(&reports));
            let _ = out.flush();
        }
        CheckFormat::Json => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            if let Err(e) =
                render::check_json(&reports, &errors, &mut out).and_then(|_| out.flush())
            {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("cudalint: error: writing the JSON output: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        CheckFormat::Sarif => println!("{}", sarif::render(&reports, &collected.inputs)),
        CheckFormat::Github => print!("{}", sarif::github(&reports)),
    }
    if !errors.is_empty() {
        return ExitCode::from(2);
    }
    let threshold = match fail_on {
        Some(FailOn::Error) => Some(Severity::Error),
        Some(FailOn::Warning) => Some(Severity::Warning),
        Some(FailOn::Info) => Some(Severity::Info),
        Some(FailOn::Never) => None,
        // the configuration of the first checked file, else warning
        None => collected
            .inputs
            .iter()
            .find(|i| !i.context)
            .and_then(|i| i.config.as_ref())
            .and_then(|c| c.fail_on)
            .unwrap_or(Some(Severity::Warning)),
    };
    let failing = threshold.is_some_and(|t| {
        reports
            .iter()
            .flat_map(|r| &r.diagnostics)
            .any(|d| d.severity >= t)
    });
    ExitCode::from(if failing { 1 } else { 0 })
}

fn explain(code: Option<&str>) -> ExitCode {
    match code {
        None => {
            for r in cudalint_rules::RULES {
                println!(
                    "{}  {:<32} {:<8} {}",
                    r.code,
                    r.name,
                    r.severity.as_str(),
                    r.summary
                );
            }
            ExitCode::SUCCESS
        }
        Some(c) => match cudalint_rules::codes::rule(c) {
            Some(r) => {
                println!("{}", r.doc.trim_end());
                println!("\nDefault severity: {}.", r.severity.as_str());
                if let Some(page) = cudalint_rules::codes::doc_location(r.code) {
                    println!("{page}");
                }
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("cudalint: error: unknown rule `{c}`; `cudalint explain` lists them");
                ExitCode::from(2)
            }
        },
    }
}
