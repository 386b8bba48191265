//! The symbolic crate: models every memory access of a kernel as a function of the lane,
//! evaluates whole warps, and prices each access in the hardware's units.

pub mod cost;
pub mod interp;
pub mod lanes;
pub mod project;
pub mod sym;
pub mod types;

use cudalint_syntax::{FileModel, FnKind, Function, Span};
use std::collections::HashMap;

pub use cost::{Class, Cost};
pub use interp::{AccessOp, FieldInfo, Loc, Space};
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
    if let Some(&block) = options.kernel_blocks.get(&kernel.name) {
        let bindings = project
            .launches_of(&kernel.name)
            .next()
            .map(|(fi, l)| {
                interp::KernelRun::new(project, options)
                    .eval_launch(fi, l, kernel)
                    .bindings
            })
            .unwrap_or_default();
        return vec![(
            Shape {
                block,
                grid: [options.runtime_default, 1, 1],
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
    {
        for (fi, l) in project.launches_of(&kernel.name) {
            let mut run = interp::KernelRun::new(project, options);
            let v = run.eval_launch(fi, l, kernel);
            let block = match v.block {
                Some(b) if b.iter().all(|x| *x > 0) && b.iter().product::<i64>() <= 4096 => b,
                _ => {
                    unresolved.get_or_insert((fi, l.span));
                    continue;
                }
            };
            let grid = v.grid.filter(|g| g.iter().all(|x| *x > 0)).unwrap_or([
                options.runtime_default,
                1,
                1,
            ]);
            let shape = Shape {
                block,
                grid,
                source: ShapeSource::Launch((fi, l.span)),
                target: options.target,
            };
            let dup = out.iter().any(|(s, b)| {
                s.block == shape.block
                    && format!("{:?}{:?}", b.template_args, b.params)
                        == format!("{:?}{:?}", v.bindings.template_args, v.bindings.params)
            });
            if !dup {
                out.push((shape, v.bindings));
            }
        }
    }
    if out.is_empty() {
        if let (Some(loc), ShapeSource::Default) = (unresolved, &fallback_source) {
            fallback_source = ShapeSource::Unresolved(loc);
        }
        out.push((
            Shape {
                block: fallback_block,
                grid: [options.runtime_default, 1, 1],
                source: fallback_source,
                target: options.target,
            },
            interp::Bindings::default(),
        ));
    }
    out
}

/// Analyses one kernel under every configuration; per access the worst configuration is kept.
pub fn analyze_kernel(project: &Project, file: usize, index: usize, options: &Options) -> Analysis {
    let kernel = &project.files[file].functions[index];
    let kernel_loc = (file, kernel.name_span);
    if let Some(err) = kernel.parse_error {
        return Analysis {
            accesses: Vec::new(),
            skipped: vec![Skipped {
                loc: (file, err),
                kernel: kernel.name.clone(),
                reason: "a parse error inside the kernel".into(),
            }],
        };
    }
    let mut best: Vec<Access> = Vec::new();
    let mut slot: HashMap<(Loc, AccessOp, usize), usize> = HashMap::new();
    for (shape, bindings) in configurations(project, file, kernel, options) {
        let mut run = interp::KernelRun::new(project, options);
        run.run_kernel(file, kernel, &bindings);
        let runtime: Vec<i64> = run.runtime.iter().map(|r| r.value).collect();
        let mut seen: HashMap<(Loc, AccessOp), usize> = HashMap::new();
        let mut masks = cost::MaskCache::default();
        let mut merged = vector_merges(&run, &shape, &runtime);
        for (i, w) in adjacent_shared_merges(&run, &shape, &runtime) {
            merged.entry(i).or_insert(w);
        }
        for (i, w) in unrolled_shared_loads(&run, &shape, &runtime) {
            merged.entry(i).or_insert(w);
        }
        for (ri, raw) in run.accesses.iter().enumerate() {
            // a field access nvcc widens into one vector access of the element is priced as that
            let widened;
            let raw = match merged.get(&ri) {
                Some(w) => {
                    widened = w.clone();
                    &widened
                }
                None => raw,
            };
            let cost = cost::evaluate(raw, &shape, &runtime, &run.loops, &mut masks);
            let mut names = Vec::new();
            raw.addr.visit_vars(&mut |v| {
                if let sym::Var::Runtime(i) = v {
                    if let Some(r) = run.runtime.get(i as usize) {
                        if !names.iter().any(|(n, _): &(String, i64)| *n == r.name) {
                            names.push((r.name.clone(), r.value));
                        }
                    }
                }
            });
            let padding = if raw.space == Space::Shared && cost.ratio() > 1.0 {
                prove_padding(raw, &run, &shape, &runtime, &mut masks)
            } else {
                None
            };
            let access = Access {
                loc: raw.loc,
                kernel: kernel.name.clone(),
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
                assumptions: raw.assumptions.clone(),
                padding,
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

/// Field accesses that nvcc turns into one vector access of the whole element, as measured:
/// loads widen as soon as the same lanes load two or more fields of one 2-, 4-, 8- or 16-byte
/// element (`LDG.E.64` for a float2's .x and .y); stores only when every byte of the element
/// is written (otherwise `st.v2.u8` + `st.u8`). Returns, per access index, the access
/// re-expressed as the element-wide one.
fn vector_merges(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
) -> HashMap<usize, interp::RawAccess> {
    let element = |a: &interp::RawAccess| -> Option<(i64, sym::Sym, lanes::Lanes)> {
        let f = a.field.as_ref()?;
        // a vector access needs the element aligned to its size: float2/float4/uchar4 are, a
        // struct of four floats is only 4-byte aligned and stays four scalar loads
        if !matches!(f.struct_size, 2 | 4 | 8 | 16)
            || f.struct_align < f.struct_size
            || a.bytes >= f.struct_size
            || a.addr.data
        {
            return None;
        }
        let addr = sym::add(a.addr.clone(), sym::konst(-f.offset));
        let lanes = lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &[])
            .eval(&addr)
            .ok()?;
        Some((f.struct_size, addr, lanes))
    };
    let candidates: Vec<(usize, i64, sym::Sym, lanes::Lanes)> = run
        .accesses
        .iter()
        .enumerate()
        .filter_map(|(i, a)| element(a).map(|(size, addr, lanes)| (i, size, addr, lanes)))
        .collect();
    let mut out = HashMap::new();
    for (i, size, addr, lanes) in &candidates {
        let a = &run.accesses[*i];
        let mut spans: Vec<(i64, i64)> = candidates
            .iter()
            .filter(|(j, s, _, l)| {
                let b = &run.accesses[*j];
                s == size
                    && l == lanes
                    && b.op == a.op
                    && b.base == a.base
                    && b.decl == a.decl
                    && b.loops == a.loops
            })
            .filter_map(|(j, ..)| {
                let b = &run.accesses[*j];
                b.field.as_ref().map(|f| (f.offset, f.offset + b.bytes))
            })
            .collect();
        spans.sort_unstable();
        spans.dedup();
        let widened = if a.op == AccessOp::Load {
            spans.len() >= 2
        } else {
            let mut end = 0;
            spans.iter().all(|&(s, e)| {
                let ok = s <= end;
                end = end.max(e);
                ok
            }) && end >= *size
        };
        if widened {
            let mut w = a.clone();
            w.addr = addr.clone();
            w.bytes = *size;
            out.insert(*i, w);
        }
    }
    out
}

/// Scalar shared-memory accesses of one lane at consecutive, suitably aligned addresses that
/// nvcc issues as one vector access, as measured on sm_90: `s[2*t]` and `s[2*t + 1]` become
/// `ld.shared.v2.f32` (shared arrays have a known alignment; global pointers do not, and nvcc
/// leaves those scalar). Runs of 2 or 4 elements, up to 16 bytes, the first aligned to the
/// run's size in every lane, in the same loop and under the same condition.
fn adjacent_shared_merges(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
) -> Vec<(usize, interp::RawAccess)> {
    let ws = lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &[]);
    let cands: Vec<(usize, lanes::Lanes)> = run
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            a.space == Space::Shared
                && a.field.is_none()
                && !a.addr.data
                && matches!(a.bytes, 1 | 2 | 4 | 8)
        })
        .filter_map(|(i, a)| ws.eval(&a.addr).ok().map(|l| (i, l)))
        .collect();
    let same_group = |a: &interp::RawAccess, b: &interp::RawAccess| {
        a.op == b.op
            && a.decl == b.decl
            && a.base == b.base
            && a.bytes == b.bytes
            && a.loops == b.loops
            && std::rc::Rc::ptr_eq(&a.mask, &b.mask)
    };
    let mut out = Vec::new();
    for &(i, ref li) in &cands {
        let a = &run.accesses[i];
        // i starts a run when nothing in its group sits one element below it
        let below = cands.iter().any(|(j, lj)| {
            *j != i
                && same_group(a, &run.accesses[*j])
                && (0..lanes::WARP).all(|l| lj[l] + a.bytes == li[l])
        });
        if below {
            continue;
        }
        let mut members = vec![i];
        let mut cur = *li;
        while members.len() < 4 {
            let next = cands.iter().find(|(j, lj)| {
                !members.contains(j)
                    && same_group(a, &run.accesses[*j])
                    && (0..lanes::WARP).all(|l| lj[l] == cur[l] + a.bytes)
            });
            match next {
                Some((j, lj)) => {
                    members.push(*j);
                    cur = *lj;
                }
                None => break,
            }
        }
        let width = match members.len() {
            4 if a.bytes * 4 <= 16 => 4,
            2 | 3 if a.bytes * 2 <= 16 => 2,
            _ => continue,
        };
        let vbytes = a.bytes * width as i64;
        if !li.iter().all(|x| x.rem_euclid(vbytes) == 0) {
            continue;
        }
        // nvcc pairs them only if they are neighbours in every iteration of the loops around
        // them: `sdata[index]` and `sdata[index + s]` are while s = 1 and no longer when s = 2
        // (cuda-samples' reduce1)
        let steady = a.loops.is_empty()
            || (1..=2).all(|it| {
                let iters: Vec<_> = a.loops.iter().map(|&id| (id, it)).collect();
                let later = lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &iters);
                let run_lanes: Option<Vec<lanes::Lanes>> = members[..width]
                    .iter()
                    .map(|&m| later.eval(&run.accesses[m].addr).ok())
                    .collect();
                run_lanes.is_some_and(|ls| {
                    ls.windows(2)
                        .all(|p| (0..lanes::WARP).all(|l| p[1][l] == p[0][l] + a.bytes))
                        && ls[0].iter().all(|x| x.rem_euclid(vbytes) == 0)
                })
            });
        if !steady {
            continue;
        }
        for &m in &members[..width] {
            let mut w = a.clone();
            w.loc = run.accesses[m].loc;
            w.bytes = vbytes;
            out.push((m, w));
        }
    }
    out
}

/// A shared load in a loop of constant trip count that walks consecutive elements, aligned in
/// every lane: nvcc unrolls the loop and loads 2 or 4 iterations at once (`LDS.128` for
/// `Mds[ty][k]` over k < 16 in PMPP's tiled matmul, and for SGEMM_CUDA's `As[... + i]` over
/// i < TM, as measured). Priced as that vector load, one per `width` iterations.
fn unrolled_shared_loads(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
) -> Vec<(usize, interp::RawAccess)> {
    let mut out = Vec::new();
    for (i, a) in run.accesses.iter().enumerate() {
        if a.space != Space::Shared
            || a.op != AccessOp::Load
            || a.field.is_some()
            || a.addr.data
            || !matches!(a.bytes, 4 | 8)
        {
            continue;
        }
        let Some(&id) = a.loops.last() else { continue };
        let Some(trip) = run.loops.get(id as usize).and_then(|l| l.trip) else {
            continue;
        };
        if trip > 64 {
            continue;
        }
        let at = |it: i64| {
            let iters = [(id, it)];
            lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &iters)
                .eval(&a.addr)
                .ok()
        };
        let (Some(first), Some(second)) = (at(0), at(1)) else {
            continue;
        };
        if (0..lanes::WARP).any(|l| second[l] - first[l] != a.bytes) {
            continue;
        }
        let width = [4i64, 2].into_iter().find(|w| {
            trip % w == 0
                && w * a.bytes <= 16
                && first.iter().all(|x| x.rem_euclid(w * a.bytes) == 0)
        });
        let Some(width) = width else { continue };
        let mut w = a.clone();
        w.bytes = a.bytes * width;
        w.iter_step = width;
        out.push((i, w));
    }
    out
}

/// Tries padding the innermost dimension of the shared array by 1..=4 elements and keeps the
/// smallest padding under which this access is conflict-free and no other access of the same
/// array in the kernel gets worse.
fn prove_padding(
    raw: &interp::RawAccess,
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
    masks: &mut cost::MaskCache,
) -> Option<Padding> {
    let si = raw.shared_index.as_ref()?;
    let decl = raw.decl?;
    if si.dims.len() < 2 {
        return None;
    }
    let same: Vec<&interp::RawAccess> = run
        .accesses
        .iter()
        .filter(|a| a.decl == Some(decl) && a.shared_index.is_some())
        .collect();
    // every access of the array must be a direct index, or a padding could break an alias
    let all_direct = run
        .accesses
        .iter()
        .filter(|a| a.decl == Some(decl))
        .all(|a| a.shared_index.is_some());
    if !all_direct {
        return None;
    }
    for pad in 1..=4 {
        let mut dims = si.dims.clone();
        *dims.last_mut()? += pad;
        let mut ok = true;
        let mut after_this = 0.0;
        for a in &same {
            let s = a.shared_index.as_ref()?;
            let addr = padded_addr(s, &dims);
            let before = cost::evaluate(a, shape, runtime, &run.loops, masks);
            let after = cost::evaluate_addr(a, &addr, shape, runtime, &run.loops, masks);
            let (Some(b), Some(w), Some(ideal)) =
                (before.wavefronts, after.wavefronts, after.ideal_wavefronts)
            else {
                ok = false;
                break;
            };
            if w > b {
                ok = false;
                break;
            }
            if std::ptr::eq(*a, raw) {
                if w > ideal {
                    ok = false;
                    break;
                }
                after_this = w;
            }
        }
        if ok {
            return Some(Padding {
                dim: (decl.0, dim_span_of(run, decl)?),
                pad,
                wavefronts_after: after_this,
            });
        }
    }
    None
}

fn padded_addr(s: &interp::SharedIndex, dims: &[i64]) -> sym::Sym {
    let mut addr = sym::konst(s.field_offset);
    for (k, idx) in s.indices.iter().enumerate() {
        let inner: i64 = dims[k + 1..].iter().product::<i64>().max(1);
        addr = sym::add(addr, sym::mul(idx.clone(), sym::konst(inner * s.elem_size)));
    }
    addr
}

fn dim_span_of(run: &interp::KernelRun, decl: Loc) -> Option<Span> {
    let file = run.files.get(decl.0)?;
    let find = |d: &cudalint_syntax::Decl| {
        (d.span == decl.1)
            .then(|| d.dims.last().map(|x| x.span))
            .flatten()
    };
    for g in &file.globals {
        if let Some(s) = find(g) {
            return Some(s);
        }
    }
    for f in &file.functions {
        if let Some(body) = &f.body {
            if let Some(s) = find_decl(body, &find) {
                return Some(s);
            }
        }
    }
    None
}

fn find_decl(
    body: &[cudalint_syntax::Stmt],
    find: &dyn Fn(&cudalint_syntax::Decl) -> Option<Span>,
) -> Option<Span> {
    use cudalint_syntax::Stmt;
    for s in body {
        let r = match s {
            Stmt::Decl(d) => find(d),
            Stmt::Block(b) | Stmt::While { body: b, .. } => find_decl(b, find),
            Stmt::For { init, body, .. } => find_decl(init, find).or_else(|| find_decl(body, find)),
            Stmt::If { then, els, .. } => find_decl(then, find).or_else(|| find_decl(els, find)),
            _ => None,
        };
        if r.is_some() {
            return r;
        }
    }
    None
}
