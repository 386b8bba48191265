//! The symbolic crate: models every memory access of a kernel as a function of the lane,
//! evaluates whole warps, and prices each access in the hardware's units.

pub mod cost;
mod divisors;
pub mod impact;
pub mod interp;
pub mod lanes;
mod padding;
pub mod param_macros;
pub mod project;
pub mod sym;
pub mod types;
mod widen;

use cudalint_syntax::{FileModel, FnKind, Function, Span};
use std::collections::HashMap;

pub use cost::{Class, Cost};
pub use impact::{Impact, LoopCount, TripSource};
pub use interp::{AccessOp, FieldInfo, InlineSite, Loc, Space, DIVERGENT};
pub use project::Project;

/// The memory system's geometry: H100/H200 by default (what the ground truth measured).
/// Warps are 32 lanes on every NVIDIA GPU, so the warp size is not a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub sector_bytes: i64,
    pub banks: i64,
    pub bank_bytes: i64,
}

impl Default for Target {
    fn default() -> Self {
        Target {
            sector_bytes: 32,
            banks: 32,
            bank_bytes: 4,
        }
    }
}

/// What the analysis assumes where the source does not say.
#[derive(Clone, Debug)]
pub struct Options {
    /// Value of a runtime quantity (kernel parameter, unbound template argument, value read
    /// from a uniform address): large, and a multiple of 32 so rows stay sector-aligned.
    pub runtime_default: i64,
    /// Configured values of named runtime quantities.
    pub params: HashMap<String, i64>,
    /// Block shape when neither a launch nor `__launch_bounds__` gives one.
    pub default_block: [i64; 3],
    /// Configured block shapes by kernel name: they take precedence over everything.
    pub kernel_blocks: HashMap<String, [i64; 3]>,
    pub target: Target,
    /// Integer macros from `-D` and cudalint.toml `defines`, for names no analysed file defines.
    pub macros: HashMap<String, i64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_default: 1024,
            params: HashMap::new(),
            default_block: [256, 1, 1],
            kernel_blocks: HashMap::new(),
            target: Target::default(),
            macros: HashMap::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ShapeSource {
    /// From a launch site `k<<<grid, block>>>` at this location.
    Launch(Loc),
    LaunchBounds(i64),
    /// Set for this kernel in cudalint.toml (`[kernels.NAME] block = [...]`).
    Configured,
    /// Launches exist, but none has a block shape known statically (the first is named).
    Unresolved(Loc),
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub block: [i64; 3],
    pub grid: [i64; 3],
    /// Whether the launch gives the grid (else `grid` is a runtime default).
    pub grid_known: bool,
    pub source: ShapeSource,
    /// The GPU geometry the kernel is priced for.
    pub target: Target,
}

/// A shared-array padding that lane evaluation proved removes the conflict.
#[derive(Clone, Debug)]
pub struct Padding {
    /// The innermost dimension's size expression in the declaration.
    pub dim: Loc,
    pub pad: i64,
    pub wavefronts_after: f64,
    /// The costliest sampled warp under the padding, as `Cost::lanes` gives the one before:
    /// the offsets are the padded array's, so a picture of it shows where the lanes go.
    pub lanes_after: Vec<(u8, i64)>,
}

#[derive(Clone, Debug)]
pub struct Access {
    pub loc: Loc,
    pub kernel: String,
    pub kernel_loc: Loc,
    pub space: Space,
    pub op: AccessOp,
    pub bytes: i64,
    pub elem_type: String,
    pub base: String,
    pub decl: Option<Loc>,
    pub lane_term: Option<Loc>,
    pub field: Option<FieldInfo>,
    pub cost: Cost,
    pub shape: Shape,
    /// Runtime quantities in the address, with the values assumed for them.
    pub runtime: Vec<(String, i64)>,
    pub assumptions: Vec<String>,
    pub padding: Option<Padding>,
    /// The calls the access was inlined through, innermost first.
    pub inlined_at: Vec<InlineSite>,
    /// Which of the instructions a wider value's copy is split into, of how many.
    pub piece: Option<(u8, u8)>,
    /// The element's own bytes where nvcc loads only its low `bytes` (`(int)offsets[i]`).
    pub narrowed_from: Option<i64>,
    /// A load hoisted out of a loop: the loop's head; nvcc files it under a line from there to
    /// its own.
    pub issued_at: Option<Loc>,
    /// The shared store of an asynchronous copy: its cost follows the global source's layout.
    pub copied: bool,
    /// A compare-and-swap loop standing for an atomic shared memory has no instruction for.
    pub cas: bool,
    /// Its excess traffic per launch, where the cost has figures.
    pub impact: Option<Impact>,
}

/// A kernel the analysis could not look into.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub loc: Loc,
    pub kernel: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Analysis {
    pub accesses: Vec<Access>,
    pub skipped: Vec<Skipped>,
}

/// The kernels of a project, as (file index, function index) pairs.
pub fn kernels(files: &[&FileModel]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for (ki, k) in f.functions.iter().enumerate() {
            if k.kind == FnKind::Global && k.body.is_some() {
                out.push((fi, ki));
            }
        }
    }
    out
}

/// The configurations a kernel runs under: one per distinct launch seen in the project,
/// else one from `__launch_bounds__` or the default.
pub fn configurations(
    project: &Project,
    file: usize,
    kernel: &Function,
    options: &Options,
) -> Vec<(Shape, interp::Bindings)> {
    let mut out: Vec<(Shape, interp::Bindings)> = Vec::new();
    if let Some(&block) = options.kernel_blocks.get(kernel.name.as_str()) {
        let bindings = launches_of(project, file, kernel)
            .into_iter()
            .next()
            .and_then(|(fi, l)| {
                interp::KernelRun::new(project, options)
                    .eval_launch_all(fi, l, kernel)
                    .into_iter()
                    .next()
            })
            .map(|v| v.bindings)
            .unwrap_or_default();
        return vec![(
            Shape {
                block,
                grid: [options.runtime_default, 1, 1],
                grid_known: false,
                source: ShapeSource::Configured,
                target: options.target,
            },
            bindings,
        )];
    }
    let mut fallback_block = options.default_block;
    let mut fallback_source = ShapeSource::Default;
    if let Some(lb) = &kernel.launch_bounds {
        let mut run = interp::KernelRun::new(project, options);
        let launch = cudalint_syntax::Launch {
            kernel: kernel.name.clone(),
            template_args: Vec::new(),
            config: vec![lb.clone(), lb.clone()],
            args: Vec::new(),
            span: Span::default(),
            host_fn: None,
        };
        if let Some(b) = run.eval_launch(file, &launch, kernel).block {
            if b[0] > 0 {
                fallback_block = [b[0], 1, 1];
                fallback_source = ShapeSource::LaunchBounds(b[0]);
            }
        }
    }
    let mut unresolved = None;
    // the template arguments launches of a shape not known bind (`k<<<Gr, Bl>>>(x)` deducing
    // `Real` from `MatrixElement<float>* x`): the assumed shape runs with each
    let mut unresolved_bindings: Vec<interp::Bindings> = Vec::new();
    let mut form = None;
    let mut seen = std::collections::HashSet::new();
    {
        for (fi, l) in launches_of(project, file, kernel) {
            let mut run = interp::KernelRun::new(project, options);
            for v in run.eval_launch_all(fi, l, kernel) {
                let block = match v.block {
                    Some(b) if b.iter().all(|x| *x > 0) && b.iter().product::<i64>() <= 4096 => b,
                    _ => {
                        unresolved.get_or_insert((fi, l.span));
                        if form.is_none() {
                            form = v.block_form;
                        }
                        // (its types only: the values a launch passes are kept with a shape
                        // the launch gives)
                        let bindings = interp::Bindings {
                            template_args: v.bindings.template_args,
                            params: Vec::new(),
                            members: Vec::new(),
                            lambdas: v.bindings.lambdas,
                        };
                        let key = format!("{:?}", bindings.template_args);
                        // (an instantiation known whole: a parameter left unbound stays what
                        // it is with no launch seen)
                        // (what a parameter the launch leaves unbound, such as a functor
                        // type nothing deduces, is with no launch seen: qsim's
                        // `Reduce1Kernel<FP1>(n, op1, ...)` still fixes FP1)
                        let whole = !kernel.template_params.is_empty()
                            && bindings.template_args.iter().any(|a| a.is_some())
                            && bindings.template_args.iter().all(|a| match a {
                                // a type the program or the language names, a constant
                                Some(cudalint_syntax::TemplateArg::Type(t)) => {
                                    types::builtin(&t.name).is_some()
                                        || types::is_struct(&t.name, project.files)
                                }
                                Some(cudalint_syntax::TemplateArg::Expr(e)) => {
                                    matches!(e.kind, cudalint_syntax::ExprKind::Int(_))
                                }
                                None => true,
                            });
                        if whole
                            && !unresolved_bindings
                                .iter()
                                .any(|b| format!("{:?}", b.template_args) == key)
                        {
                            unresolved_bindings.push(bindings);
                        }
                        continue;
                    }
                };
                let known = v.grid.filter(|g| g.iter().all(|x| *x > 0));
                let shape = Shape {
                    block,
                    grid: known.unwrap_or([options.runtime_default, 1, 1]),
                    grid_known: known.is_some(),
                    source: ShapeSource::Launch((fi, l.span)),
                    target: options.target,
                };
                let lambdas = |b: &interp::Bindings| -> Vec<Option<String>> {
                    b.lambdas
                        .iter()
                        .map(|l| l.as_ref().map(|l| l.key()))
                        .collect()
                };
                // (each configuration's key is spelled once: dozens of launch sites, each
                // with its lambda variants, compared pairwise)
                let key = format!(
                    "{:?}{:?}{:?}{:?}{:?}",
                    shape.block,
                    v.bindings.template_args,
                    v.bindings.params,
                    v.bindings.members,
                    lambdas(&v.bindings)
                );
                if seen.insert(key) {
                    out.push((shape, v.bindings));
                }
            }
        }
    }
    if out.is_empty() {
        // the size assumed (or given by `__launch_bounds__`) in the launch's shape, unless a
        // shape was configured
        let configured_shape = fallback_block[1] * fallback_block[2] > 1;
        if let Some(b) = form
            .filter(|_| !configured_shape)
            .and_then(|f| interp::block_of_form(f, fallback_block[0]))
        {
            fallback_block = b;
        }
        if let (Some(loc), ShapeSource::Default) = (unresolved, &fallback_source) {
            fallback_source = ShapeSource::Unresolved(loc);
        }
        // a kernel template no launch instantiates, explicitly instantiated (`template
        // __global__ void k<short>(const short*, int);`, launched from code not analysed):
        // each instantiation
        if unresolved_bindings.is_empty() && unresolved.is_none() {
            for (_, inst) in project.instantiations_of(&kernel.name) {
                if inst.template_args.is_empty()
                    || inst.template_args.len() > kernel.template_params.len()
                {
                    continue;
                }
                let bindings = interp::Bindings {
                    template_args: inst.template_args.iter().cloned().map(Some).collect(),
                    ..Default::default()
                };
                let key = format!("{:?}", bindings.template_args);
                if !unresolved_bindings
                    .iter()
                    .any(|b| format!("{:?}", b.template_args) == key)
                {
                    unresolved_bindings.push(bindings);
                }
            }
        }
        if unresolved_bindings.is_empty() {
            unresolved_bindings.push(interp::Bindings::default());
        }
        for bindings in unresolved_bindings {
            out.push((
                Shape {
                    block: fallback_block,
                    grid: [options.runtime_default, 1, 1],
                    grid_known: false,
                    source: fallback_source.clone(),
                    target: options.target,
                },
                bindings,
            ));
        }
    }
    out
}

/// The most launch sites of one kernel that are evaluated: each replays its host function up
/// to the launch, and a generated file with 10,000 launches of one kernel must not stall the
/// run. Real kernels have a handful.
pub const MAX_LAUNCH_SITES: usize = 64;

/// The launches of a kernel: those of its name that pass as many arguments as it takes, when
/// there are any (two kernels of one name, a key-only and a key-value `kern_copy`, each get
/// their own launches), else all of its name; the first [`MAX_LAUNCH_SITES`] of them.
fn launches_of<'a>(
    project: &'a Project<'_>,
    file: usize,
    kernel: &Function,
) -> Vec<(usize, &'a cudalint_syntax::Launch)> {
    let own = project.files[file];
    // a launch from a file that sees another kernel of this name, and not this one, is that
    // kernel's (a corpus of programs, two of them each with its `runJacobiCUDA_kernel1`)
    let elsewhere = |fi: usize| {
        let seen = project.visible_models(fi);
        !seen.iter().any(|m| std::ptr::eq(*m, own))
            && seen.iter().any(|m| {
                m.functions
                    .iter()
                    .any(|g| g.kind == cudalint_syntax::FnKind::Global && g.name == kernel.name)
            })
    };
    let all: Vec<_> = project
        .launches_of(&kernel.name)
        .filter(|(fi, _)| !elsewhere(*fi))
        .collect();
    let fitting: Vec<_> = all
        .iter()
        .copied()
        .filter(|(_, l)| kernel.takes(l.args.len()))
        .collect();
    let mut chosen = if fitting.is_empty() { all } else { fitting };
    chosen.truncate(MAX_LAUNCH_SITES);
    chosen
}

/// When the analysis of a file gives up: a generated kernel must not stall a run over
/// thousands of files. Its kernels become "not analysed" (CL101) instead.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    pub at: std::time::Instant,
    /// The budget the deadline was set from, for the message.
    pub budget: std::time::Duration,
}

impl Deadline {
    pub fn passed(&self) -> bool {
        std::time::Instant::now() >= self.at
    }

    fn skipped(&self, loc: Loc, kernel: &str) -> Analysis {
        Analysis {
            accesses: Vec::new(),
            skipped: vec![Skipped {
                loc,
                kernel: kernel.to_string(),
                reason: format!(
                    "{OUT_OF_TIME} of {} s per file (--time-budget)",
                    self.budget.as_secs_f64()
                ),
            }],
        }
    }
}

/// How a [`Skipped`] reason for a kernel that ran out of time begins.
pub const OUT_OF_TIME: &str = "the analysis ran past its time budget";

/// Analyses one kernel under every configuration; per access the worst configuration is kept.
pub fn analyze_kernel(project: &Project, file: usize, index: usize, options: &Options) -> Analysis {
    analyze_kernel_until(project, file, index, options, None)
}

/// [`analyze_kernel`], giving up when `deadline` passes.
pub fn analyze_kernel_until(
    project: &Project,
    file: usize,
    index: usize,
    options: &Options,
    deadline: Option<Deadline>,
) -> Analysis {
    let kernel = &project.files[file].functions[index];
    // a bug in the analysis costs this kernel, not the run
    cudalint_syntax::contained(|| analyze_kernel_inner(project, file, index, options, deadline))
        .unwrap_or_else(|message| Analysis {
            accesses: Vec::new(),
            skipped: vec![Skipped {
                loc: (file, kernel.name_span),
                kernel: kernel.name.to_string(),
                reason: format!(
                    "an internal error in cudalint's analysis ({message}); please report it"
                ),
            }],
        })
}

fn analyze_kernel_inner(
    project: &Project,
    file: usize,
    index: usize,
    options: &Options,
    deadline: Option<Deadline>,
) -> Analysis {
    let kernel = &project.files[file].functions[index];
    let kernel_loc = (file, kernel.name_span);
    if let Some(err) = kernel.parse_error {
        return Analysis {
            accesses: Vec::new(),
            skipped: vec![Skipped {
                loc: (file, err),
                kernel: kernel.name.to_string(),
                reason: "a parse error inside the kernel".into(),
            }],
        };
    }
    let mut best: Vec<Access> = Vec::new();
    let mut slot: HashMap<(Loc, AccessOp, usize), usize> = HashMap::new();
    for (shape, bindings) in configurations(project, file, kernel, options) {
        if let Some(d) = deadline.filter(Deadline::passed) {
            return d.skipped(kernel_loc, &kernel.name);
        }
        let mut run = interp::KernelRun::new(project, options);
        run.deadline = deadline;
        run.run_kernel(file, kernel, &bindings);
        if let Some(d) = deadline.filter(|_| run.out_of_time) {
            return d.skipped(kernel_loc, &kernel.name);
        }
        let mut runtime: Vec<i64> = run.runtime.iter().map(|r| r.value).collect();
        let ones = divisors::avoid_zero_divisors(&run.accesses, &shape, &mut runtime);
        let mut seen: HashMap<(Loc, AccessOp), usize> = HashMap::new();
        let mut masks = cost::MaskCache::default();
        let mut trials = padding::Trials::default();
        // what nvcc issues as one wider access: the first rule to claim an access owns it
        let mut merged: HashMap<usize, widen::Widened> = HashMap::new();
        let merges = widen::vector_merges(&run, &shape, &runtime)
            .into_iter()
            .chain(widen::adjacent_shared_merges(&run, &shape, &runtime))
            .chain(widen::unrolled_shared_loads(&run, &shape, &runtime));
        for m in merges {
            if m.iter().all(|(i, _)| !merged.contains_key(i)) {
                merged.extend(m);
            }
        }
        for (ri, raw) in run.accesses.iter().enumerate() {
            if let Some(d) = deadline.filter(|d| (ri + 1).is_multiple_of(64) && d.passed()) {
                return d.skipped(kernel_loc, &kernel.name);
            }
            let raw = match merged.get(&ri) {
                Some(widen::Widened::As(w)) => &**w,
                // issued by the vector instruction filed under another member
                Some(widen::Widened::Folded) => continue,
                None => raw,
            };
            let cost = cost::evaluate(raw, &shape, &runtime, &run.loops, &mut masks);
            let mut names = Vec::new();
            let mut one_for = Vec::new();
            raw.addr.visit_vars(&mut |v| {
                if let sym::Var::Runtime(i) = v {
                    if let Some(r) = run.runtime.get(i as usize) {
                        if !names.iter().any(|(n, _): &(String, i64)| *n == r.name) {
                            let value = runtime.get(i as usize).copied().unwrap_or(r.value);
                            names.push((r.name.clone(), value));
                        }
                    }
                    if ones.contains(&(i as usize)) {
                        one_for.push(i as usize);
                    }
                }
            });
            let impact = impact::estimate(
                raw,
                &cost,
                &shape,
                &run.runtime,
                &runtime,
                &run.loops,
                &mut masks,
            );
            let padding = if raw.space == Space::Shared && cost.ratio() > 1.0 {
                padding::prove_padding(raw, &run, &shape, &runtime, &mut masks, &mut trials)
            } else {
                None
            };
            let access = Access {
                loc: raw.loc,
                kernel: kernel.name.to_string(),
                kernel_loc,
                space: raw.space,
                op: raw.op,
                bytes: raw.bytes,
                elem_type: raw.elem_type.clone(),
                base: raw.base.clone(),
                decl: raw.decl,
                lane_term: raw.lane_term,
                field: raw.field.clone(),
                cost,
                shape: shape.clone(),
                runtime: names,
                assumptions: {
                    let mut a = raw.assumptions.clone();
                    one_for.dedup();
                    for i in one_for {
                        if let Some(r) = run.runtime.get(i) {
                            a.push(format!(
                                "`{}` taken as 1, not {}: the larger value makes a divisor zero",
                                r.name, r.value
                            ));
                        }
                    }
                    a
                },
                padding,
                inlined_at: raw.inlined_at.clone(),
                piece: raw.piece,
                narrowed_from: raw.narrowed_from,
                issued_at: raw.issued_at,
                copied: raw.copied_from.is_some(),
                cas: raw.cas,
                impact,
            };
            // the same access reached twice in one run (inlined helpers, macros) is kept once
            // per occurrence index so two calls of one helper stay two accesses
            let occurrence = seen.entry((raw.loc, raw.op)).or_insert(0);
            let key = (raw.loc, raw.op, *occurrence);
            *occurrence += 1;
            match slot.get(&key) {
                Some(&i) => {
                    if access.cost.ratio() > best[i].cost.ratio() {
                        best[i] = access;
                    }
                }
                None => {
                    slot.insert(key, best.len());
                    best.push(access);
                }
            }
        }
    }
    Analysis {
        accesses: best,
        skipped: Vec::new(),
    }
}
