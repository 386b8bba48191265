//! The hardware's own arithmetic: 32-byte sectors per global request, wavefronts per shared
//! request (32 banks of 4 bytes; 8- and 16-byte accesses in half- and quarter-warp phases),
//! evaluated over sampled warps and loop iterations and averaged the way ncu averages.

use crate::interp::{LoopInfo, RawAccess, Space};
use crate::lanes::{Lanes, WarpSample, WARP};
use crate::sym::Sym;
use crate::Shape;

#[derive(Clone, Debug, PartialEq)]
pub enum Class {
    Coalesced,
    Broadcast,
    Misaligned,
    /// Stride between consecutive lanes, in bytes.
    Strided(i64),
    Uncoalesced,
    DataDependent(String),
    Unknown(String),
    /// Local arrays live in registers or local memory: not modelled.
    Local,
}

impl Class {
    pub fn name(&self) -> &'static str {
        match self {
            Class::Coalesced => "coalesced",
            Class::Broadcast => "broadcast",
            Class::Misaligned => "misaligned",
            Class::Strided(_) => "strided",
            Class::Uncoalesced => "uncoalesced",
            Class::DataDependent(_) => "data-dependent",
            Class::Unknown(_) => "unknown",
            Class::Local => "local",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cost {
    pub class: Class,
    pub sectors: Option<f64>,
    pub ideal_sectors: Option<f64>,
    pub wavefronts: Option<f64>,
    pub ideal_wavefronts: Option<f64>,
    /// First sampled warp: (lane, byte offset from the base) of its active lanes.
    pub lanes: Vec<(u8, i64)>,
    /// Bytes the address moves when threadIdx.x (resp. .y) grows by one.
    pub d_tx: Option<i64>,
    pub d_ty: Option<i64>,
    /// Bytes the address moves from one iteration of the innermost loop to the next.
    pub d_iter: Option<i64>,
    pub samples: u32,
    /// Whether the sampled warps and iterations disagreed (the figures are averages).
    pub varies: bool,
    /// The block the sampled warps (and `lanes`) are of.
    pub block_idx: [i64; 3],
}

impl Cost {
    fn not_evaluated(class: Class) -> Cost {
        Cost {
            class,
            sectors: None,
            ideal_sectors: None,
            wavefronts: None,
            ideal_wavefronts: None,
            lanes: Vec::new(),
            d_tx: None,
            d_ty: None,
            d_iter: None,
            samples: 0,
            block_idx: [0; 3],
            varies: false,
        }
    }

    /// How many times the ideal this access costs (1.0 when ideal or not evaluated).
    pub fn ratio(&self) -> f64 {
        match (
            self.sectors,
            self.ideal_sectors,
            self.wavefronts,
            self.ideal_wavefronts,
        ) {
            (Some(s), Some(i), _, _) if i > 0.0 => s / i,
            (_, _, Some(w), Some(i)) if i > 0.0 => w / i,
            _ => 1.0,
        }
    }
}

/// The samples one access is evaluated at: (warp, iteration of the innermost loop).
fn samples(
    a: &RawAccess,
    shape: &Shape,
    loops: &[LoopInfo],
    all_warps: bool,
) -> Vec<(i64, Option<(u32, i64)>)> {
    let threads = shape.block.iter().product::<i64>().max(1);
    let cap = if all_warps { 32 } else { 4 };
    let warps = ((threads + WARP as i64 - 1) / WARP as i64).clamp(1, cap);
    let iters: Vec<Option<(u32, i64)>> = match a.loops.last() {
        Some(&id) => {
            // known trip counts are sampled in full up to 32 iterations (a doubling or halving
            // loop has at most that many); unknown ones at their first 8
            let trip = loops
                .get(id as usize)
                .and_then(|l| l.trip)
                .map(|t| t.clamp(1, 32))
                .unwrap_or(8);
            (0..trip)
                .step_by(a.iter_step.max(1) as usize)
                .map(|i| Some((id, i)))
                .collect()
        }
        None => vec![None],
    };
    let mut out = Vec::new();
    for w in 0..warps {
        for it in &iters {
            out.push((w, *it));
        }
    }
    out
}

/// The block whose warps are sampled: the middle of a grid the launch gives, else the first.
pub(crate) fn inner_block(shape: &Shape) -> [i64; 3] {
    if shape.grid_known {
        shape.grid.map(|g| g / 2)
    } else {
        [0; 3]
    }
}

/// (warp 0, iteration 0), (warp 1, iteration 0), (warp 0, iteration 1), as far as the grid has them.
fn probe_samples(grid: &[(i64, Option<(u32, i64)>)]) -> Vec<(i64, Option<(u32, i64)>)> {
    let first = grid[0];
    let mut out = vec![first];
    if let Some(w) = grid.iter().find(|(w, it)| *w == 1 && *it == first.1) {
        out.push(*w);
    }
    if let Some(i) = grid
        .iter()
        .find(|(w, it)| *w == 0 && it.map(|x| x.1) == Some(1))
    {
        out.push(*i);
    }
    out
}

pub(crate) fn active_lanes(ws: &WarpSample, mask: &Sym) -> [bool; WARP] {
    let mut active = ws.active;
    if let Ok(m) = ws.eval(mask) {
        for l in 0..WARP {
            active[l] &= m[l] != 0;
        }
    }
    // A condition that switches every lane off only through assumed runtime values
    // (`threadIdx.x < end - start` with both read from memory) says nothing about the real
    // run: treat it as unknown, all lanes of the block running.
    if active.iter().all(|a| !a) && ws.active.iter().any(|a| *a) {
        let mut assumed = false;
        mask.visit_vars(&mut |v| assumed |= matches!(v, crate::sym::Var::Runtime(_)));
        if assumed {
            return ws.active;
        }
    }
    active
}

pub fn evaluate(
    a: &RawAccess,
    shape: &Shape,
    runtime: &[i64],
    loops: &[LoopInfo],
    masks: &mut MaskCache,
) -> Cost {
    evaluate_addr(a, &a.addr, shape, runtime, loops, masks)
}

/// Active lanes per (mask, sample): the accesses of one scope share their mask, so one
/// kernel run evaluates each mask once per sample.
/// (warp, iteration of the innermost loop) at which an access is evaluated.
type Sample = (i64, Option<(u32, i64)>);

#[derive(Default)]
pub struct MaskCache {
    map: std::collections::HashMap<(usize, [i64; 3], Sample), [bool; WARP]>,
    /// How many blocks of the grid run a condition (by its address): the accesses under one
    /// `if` share it.
    pub(crate) blocks: std::collections::HashMap<usize, Option<i64>>,
}

/// One evaluated sample: the lanes' byte offsets, which lanes run, and the cost.
struct SampleResult {
    addrs: Lanes,
    active: [bool; WARP],
    cost: f64,
    ideal: f64,
    /// Evaluated lane by lane (not the worst case a value read from memory is given).
    exact: bool,
    block: [i64; 3],
    sample: Sample,
}

fn eval_sample(
    a: &RawAccess,
    addr: &Sym,
    shape: &Shape,
    runtime: &[i64],
    sample: (i64, Option<(u32, i64)>),
    at: [i64; 3],
    masks: &mut MaskCache,
) -> Result<Option<SampleResult>, String> {
    let (ws, active) = sample_lanes(a, shape, runtime, &sample, at, masks);
    let count = active.iter().filter(|x| **x).count();
    if count == 0 {
        return Ok(None);
    }
    let bytes = a.bytes.max(1);
    let addrs = match ws.eval(addr) {
        Ok(addrs) if ws.gathered.get() => {
            let (cost, ideal) = match a.space {
                Space::Shared => {
                    // which banks lanes of different groups meet in is not known: the worst
                    let per_lane = ((bytes + 3) / 4).max(1) as f64;
                    (
                        count as f64 * per_lane,
                        ((count as i64 * bytes + 127) / 128).max(1) as f64,
                    )
                }
                _ => within_extent(
                    gathered_sectors(&addrs, &active, &ws.groups.get(), bytes, &shape.target),
                    a,
                    &shape.target,
                ),
            };
            return Ok(Some(SampleResult {
                addrs,
                active,
                cost,
                ideal,
                exact: false,
                block: at,
                sample,
            }));
        }
        Ok(addrs) => addrs,
        Err(_) if addr.data => {
            // Worst case for an index read from memory: every active lane its own sector.
            let per_lane = ((bytes + 31) / 32).max(1) as f64;
            let ideal = ((count as i64 * bytes + 31) / 32).max(1) as f64;
            let (cost, ideal) = match a.space {
                Space::Global => within_extent((count as f64 * per_lane, ideal), a, &shape.target),
                _ => (count as f64 * per_lane, ideal),
            };
            return Ok(Some(SampleResult {
                addrs: [0; WARP],
                active,
                cost,
                ideal,
                exact: false,
                block: at,
                sample,
            }));
        }
        Err(e) => return Err(e),
    };
    let (mut cost, mut ideal) = match a.space {
        Space::Shared => wavefronts(
            &addrs,
            &active,
            bytes,
            a.op == crate::interp::AccessOp::Load,
            &shape.target,
        ),
        _ => sectors(&addrs, &active, bytes, &shape.target),
    };
    // a compare-and-swap loop's `ATOMS.CAST.SPIN`: twice the width's wavefronts, conflicts
    // or not, and twice one where the warp meets at one address (shared_cas_atomics.cu on an
    // H100: 2 for a float at one address, in consecutive words or 32 words of one bank alike,
    // 4 for consecutive doubles; aop's doubles at one address 2)
    if a.cas && a.op == crate::interp::AccessOp::Atomic {
        let mut lanes = (0..WARP).filter(|&l| active[l]).map(|l| addrs[l]);
        let first = lanes.next();
        let one_address = lanes.all(|x| Some(x) == first);
        cost = 2.0 * if one_address { 1.0 } else { ideal };
    }
    // a 16-byte copy with lanes of the warp switched off reads one sector more than its
    // lines hold (tools/measure/probes/ldgsts_partial.cu on an H100: 8 lanes over one whole
    // line 5, 16 lanes over two 9, 2 lanes over 32 bytes 2; 4- and 8-byte copies do not), and
    // ncu counts it in the ideal too: no waste, the instruction's own cost
    if a.copy_source && bytes >= 16 && cost > 0.0 && active.iter().any(|on| !on) {
        cost += 1.0;
        ideal += 1.0;
    }
    if let Some(source) = &a.copied_from {
        if let Ok(from) = ws.eval(source) {
            cost = cost.max(copy_wavefronts(&from, &active, bytes));
        }
    }
    Ok(Some(SampleResult {
        addrs,
        active,
        cost,
        ideal,
        exact: true,
        block: at,
        sample,
    }))
}

/// The shared side of an asynchronous copy (`LDGSTS`) follows its global side, as measured
/// on an H100 (tools/measure/probes/ldgsts.cu and ldgsts_partial.cu; consecutive
/// destinations). 4- and 8-byte copies take one wavefront per 128-byte line of global memory
/// their sources touch (4 bytes from 4, 8, 32, 128 bytes apart: 1, 2, 8, 32; 8 bytes from 8
/// and 32 apart: 2, 8; 8 bytes, halves of 4 lines: 4; 8 lanes of 4 or 8 bytes: 1).
/// 16-byte copies take one per run of consecutive lanes whose sources follow each other
/// within one line, in either direction: whole lines 4 (reversed within the line too), first
/// or second halves of 8 lines 8, 32 bytes of 16 lines 16, a lane every 32 bytes 32, lines
/// dealt out lane by lane (`(l % 4) * 128 + (l / 4) * 16`) 32; and one more when some lanes
/// of the warp are off (16 lanes over 2 whole lines 3, 8 lanes over one line 2, 8 lanes over
/// halves of 2 lines 3, 4 lanes over 4 lines 5, 16 lanes a lane every 32 bytes 17). Where the
/// destinations conflict, the worse of this and the store's own wavefronts is taken (not
/// measured).
fn copy_wavefronts(from: &Lanes, active: &[bool; WARP], bytes: i64) -> f64 {
    let lanes = (0..WARP).filter(|&l| active[l]);
    if bytes < 16 {
        let mut lines: Vec<i64> = Vec::with_capacity(WARP);
        for l in lanes {
            let (start, end) = (from[l], from[l] + bytes.max(1) - 1);
            lines.extend((start.div_euclid(128)..=end.div_euclid(128)).take(WARP));
        }
        lines.sort_unstable();
        lines.dedup();
        return lines.len() as f64;
    }
    let mut runs = 0;
    let mut prev: Option<i64> = None;
    let mut step = 0;
    for l in lanes {
        let at = from[l];
        let follows = prev.is_some_and(|p| {
            let d = at - p;
            p.div_euclid(128) == at.div_euclid(128) && d.abs() == bytes && (step == 0 || d == step)
        });
        if follows {
            step = at - prev.unwrap_or(at);
        } else {
            runs += 1;
            step = 0;
        }
        prev = Some(at);
    }
    let partial = active.iter().any(|a| !a);
    if runs > 0 && partial {
        runs += 1;
    }
    runs as f64
}

pub fn evaluate_addr(
    a: &RawAccess,
    addr: &Sym,
    shape: &Shape,
    runtime: &[i64],
    loops: &[LoopInfo],
    masks: &mut MaskCache,
) -> Cost {
    if a.space == Space::Local {
        return Cost::not_evaluated(Class::Local);
    }
    if let Some(reason) = addr.unknown_reason() {
        // an index that mixes a value read from memory with one we cannot see (a float
        // computed from loaded positions, a member of a fetched struct) is a gather whatever
        // the other part is
        if let Some(src) = addr.data_source() {
            return Cost::not_evaluated(Class::DataDependent(src.to_string()));
        }
        return Cost::not_evaluated(Class::Unknown(reason.to_string()));
    }
    let all_warps = samples_every_warp(a, shape, runtime, masks);
    // a block inside the grid: ncu's figures are a mean over every block, and the first one
    // is where a stencil's bounds checks (`r >= 0 && c >= 0`) switch lanes off; the first
    // block still, for an access only it runs (`if (blockIdx.x == 0)`)
    let inner = inner_block(shape);
    let mut results =
        match sample_results(a, addr, shape, runtime, loops, (all_warps, inner), masks) {
            Ok(r) => r,
            Err(e) => return Cost::not_evaluated(Class::Unknown(e)),
        };
    if results.is_empty() && inner != [0; 3] {
        results = match sample_results(a, addr, shape, runtime, loops, (all_warps, [0; 3]), masks) {
            Ok(r) => r,
            Err(e) => return Cost::not_evaluated(Class::Unknown(e)),
        };
    }
    if let Err(e) = sample_blocks_apart(
        a,
        addr,
        shape,
        runtime,
        loops,
        all_warps,
        masks,
        &mut results,
    ) {
        return Cost::not_evaluated(Class::Unknown(e));
    }
    let Some(first) = results.first() else {
        return Cost::not_evaluated(Class::Unknown(
            "no lane of the sampled warps executes this access".into(),
        ));
    };
    let n = results.len() as f64;
    let cost = round2(results.iter().map(|r| r.cost).sum::<f64>() / n);
    let ideal = round2(results.iter().map(|r| r.ideal).sum::<f64>() / n);
    let varies = results
        .iter()
        .any(|r| (r.cost, r.ideal) != (first.cost, first.ideal));
    // an index through values the warp's lanes read at one address is priced as any other
    if addr.data && !results.iter().all(|r| r.exact) {
        let src = addr
            .data_source()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let mut c = Cost::not_evaluated(Class::DataDependent(src));
        if a.space != Space::Shared {
            c.sectors = Some(cost);
            c.ideal_sectors = Some(ideal);
        }
        c.samples = results.len() as u32;
        c.varies = varies;
        return c;
    }
    // the lanes shown, the class and the fixes come from the costliest sample: where loop
    // iterations differ (`a[t * s]` for s = 1, 2, 8) the first may be the one that is fine
    // (of the sampled block: the blocks beside it only average the figures in; of samples
    // that cost alike, one with the most lanes on, not a reduction's last step with one)
    let lanes_on = |r: &SampleResult| r.active.iter().filter(|x| **x).count();
    let shown = results
        .iter()
        .filter(|r| r.block == first.block)
        .max_by(|x, y| {
            (x.cost / x.ideal.max(1e-9))
                .total_cmp(&(y.cost / y.ideal.max(1e-9)))
                .then(lanes_on(x).cmp(&lanes_on(y)))
        })
        .unwrap_or(first);
    let mut out = describe(a, addr, shape, runtime, shown, cost, ideal);
    out.samples = results.len() as u32;
    out.varies = varies;
    out
}

/// ncu's figures are a mean over every block. Where the next block along a dimension puts
/// its warps at another offset within a sector (lid-driven-cavity's `v[col * 514 + row]` of
/// doubles, `col` from `blockIdx.y`: rows 4,112 bytes apart, 9 sectors a request in one block
/// and 8 in the next), the blocks that follow the sampled one are sampled too, as many as the
/// offset takes to come round (at most 8), and the figures are their mean.
#[allow(clippy::too_many_arguments)]
fn sample_blocks_apart(
    a: &RawAccess,
    addr: &Sym,
    shape: &Shape,
    runtime: &[i64],
    loops: &[LoopInfo],
    all_warps: bool,
    masks: &mut MaskCache,
    results: &mut Vec<SampleResult>,
) -> Result<(), String> {
    let Some(first) = results.first() else {
        return Ok(());
    };
    if a.space == Space::Shared || addr.data || !results.iter().all(|r| r.exact) {
        return Ok(());
    }
    let (at, sample, active, addrs) = (first.block, first.sample, first.active, first.addrs);
    let sector = shape.target.sector_bytes.max(1);
    // (the dimensions the address reads: another block along the others is the same warp)
    let mut reads = [false; 3];
    addr.visit_vars(&mut |v| {
        if let crate::sym::Var::BlockIdx(d) = v {
            if let Some(r) = reads.get_mut(d as usize) {
                *r = true;
            }
        }
    });
    let mut extra = Vec::new();
    for d in 0..3 {
        if !reads[d] || (shape.grid_known && shape.grid[d] < 2) {
            continue;
        }
        let block_at = |k: i64| {
            let mut b = at;
            b[d] = if shape.grid_known {
                (at[d] + k) % shape.grid[d]
            } else {
                at[d] + k
            };
            b
        };
        let Some(next) = eval_sample(a, addr, shape, runtime, sample, block_at(1), masks)? else {
            continue;
        };
        let lanes: Vec<usize> = (0..WARP).filter(|&l| active[l]).collect();
        let Some(&l0) = lanes.first() else { continue };
        let shift = next.addrs[l0] - addrs[l0];
        let translated =
            next.active == active && lanes.iter().all(|&l| next.addrs[l] - addrs[l] == shift);
        let cycle = if !translated {
            4
        } else if shift.rem_euclid(sector) == 0 {
            continue;
        } else {
            (sector / gcd(shift.rem_euclid(sector), sector)).min(8)
        };
        for k in 1..cycle {
            extra.extend(sample_results(
                a,
                addr,
                shape,
                runtime,
                loops,
                (all_warps, block_at(k)),
                masks,
            )?);
        }
    }
    results.extend(extra);
    Ok(())
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// Warps of the block with a lane on at the access, at iteration `iter` of its innermost loop
/// (the first when `None`).
pub fn active_warps(
    a: &RawAccess,
    shape: &Shape,
    runtime: &[i64],
    iter: Option<(u32, i64)>,
    masks: &mut MaskCache,
) -> i64 {
    let threads = shape.block.iter().product::<i64>().max(1);
    let warps = (threads + WARP as i64 - 1) / WARP as i64;
    if !a.mask.lane_varying {
        return warps;
    }
    let iters: Vec<(u32, i64)> = iter.into_iter().collect();
    (0..warps)
        .filter(|&w| {
            let ws = WarpSample::new(shape.block, shape.grid, w, runtime, &iters);
            let key = (std::rc::Rc::as_ptr(&a.mask) as usize, [0; 3], (w, iter));
            masks
                .map
                .entry(key)
                .or_insert_with(|| active_lanes(&ws, &a.mask))
                .iter()
                .any(|x| *x)
        })
        .count() as i64
}

/// Warps differ only by translation unless a lane-dependent condition switches some of them
/// off (`if (tid < d)`): then every warp of the block is sampled, as ncu counts requests.
/// A bounds check that leaves the first and last warps whole (`if (i < n)`) does not count.
fn samples_every_warp(
    a: &RawAccess,
    shape: &Shape,
    runtime: &[i64],
    masks: &mut MaskCache,
) -> bool {
    if !a.mask.lane_varying {
        return false;
    }
    let mut per_iteration = false;
    a.mask
        .visit_vars(&mut |v| per_iteration |= matches!(v, crate::sym::Var::LoopIter(_)));
    let threads = shape.block.iter().product::<i64>().max(1);
    let last = (threads - 1) / WARP as i64;
    per_iteration
        || [0, last].iter().any(|&w| {
            let ws = WarpSample::new(shape.block, shape.grid, w, runtime, &[]);
            let key = (std::rc::Rc::as_ptr(&a.mask) as usize, [0; 3], (w, None));
            let active = *masks
                .map
                .entry(key)
                .or_insert_with(|| active_lanes(&ws, &a.mask));
            active != ws.active
        })
}

/// The cost of every sample with a lane on: the probes first, then the rest of the grid
/// unless the probes prove the rest a translation of them.
fn sample_results(
    a: &RawAccess,
    addr: &Sym,
    shape: &Shape,
    runtime: &[i64],
    loops: &[LoopInfo],
    (all_warps, at): (bool, [i64; 3]),
    masks: &mut MaskCache,
) -> Result<Vec<SampleResult>, String> {
    let grid = samples(a, shape, loops, all_warps);
    let probes = probe_samples(&grid);
    let mut results: Vec<SampleResult> = Vec::with_capacity(grid.len());
    for &p in &probes {
        results.extend(eval_sample(a, addr, shape, runtime, p, at, masks)?);
    }
    // Affine addresses only translate from one warp or iteration to the next: if the probes
    // are full warps translated by whole 128-byte rows (which keep sector and bank counts),
    // so is the rest of the grid, and the probes stand for it.
    // (and only where every other sample runs all its lanes or none: a loop's last
    // iteration, where the bound switches some lanes off, costs what it costs)
    let shortcut = !addr.data
        && addr.is_affine()
        && results.len() == probes.len()
        && results.iter().all(|r| r.active.iter().all(|x| *x))
        && results.iter().all(|r| {
            let shift = r.addrs[0] - results[0].addrs[0];
            shift.rem_euclid(period(&shape.target)) == 0
                && (0..WARP).all(|l| r.addrs[l] - results[0].addrs[l] == shift)
        })
        && grid
            .iter()
            .filter(|g| !probes.contains(g))
            .all(|&g| whole_or_idle(a, shape, runtime, g, at, masks));
    if !shortcut {
        for &g in grid.iter().filter(|g| !probes.contains(g)) {
            results.extend(eval_sample(a, addr, shape, runtime, g, at, masks)?);
        }
    }
    Ok(results)
}

/// The warp a sample stands for, and which of its lanes run the access (the accesses of
/// one scope share their mask: evaluated once per sample).
fn sample_lanes<'s>(
    a: &RawAccess,
    shape: &Shape,
    runtime: &'s [i64],
    sample: &'s Sample,
    at: [i64; 3],
    masks: &mut MaskCache,
) -> (WarpSample<'s>, [bool; WARP]) {
    let mut ws = WarpSample::new(
        shape.block,
        shape.grid,
        sample.0,
        runtime,
        sample.1.as_slice(),
    );
    ws.block_idx = at;
    let key = (std::rc::Rc::as_ptr(&a.mask) as usize, at, *sample);
    let active = *masks
        .map
        .entry(key)
        .or_insert_with(|| active_lanes(&ws, &a.mask));
    (ws, active)
}

/// Whether the sample runs every lane of its warp or none.
fn whole_or_idle(
    a: &RawAccess,
    shape: &Shape,
    runtime: &[i64],
    sample: Sample,
    at: [i64; 3],
    masks: &mut MaskCache,
) -> bool {
    if !a.mask.lane_varying {
        return true;
    }
    let (ws, active) = sample_lanes(a, shape, runtime, &sample, at, masks);
    active == ws.active || active.iter().all(|x| !*x)
}

/// The figures of an evaluated access, with the lanes, class and address derivatives of the
/// sample `shown` (what messages and fixes speak of).
fn describe(
    a: &RawAccess,
    addr: &Sym,
    shape: &Shape,
    runtime: &[i64],
    shown: &SampleResult,
    cost: f64,
    ideal: f64,
) -> Cost {
    let bytes = a.bytes.max(1);
    let lanes: Vec<(u8, i64)> = (0..WARP)
        .filter(|l| shown.active[*l])
        .map(|l| (l as u8, shown.addrs[l]))
        .collect();
    let class = match classify(&lanes, bytes, cost, ideal) {
        // misalignment is about sectors: a shared access that costs more is a conflict
        Class::Misaligned if a.space == Space::Shared => Class::Uncoalesced,
        c => c,
    };
    // How the address moves with threadIdx.x, threadIdx.y and the loop: only the fix
    // suggestions need these, so only wasteful or row-wise accesses pay for them.
    let wasteful = cost > ideal;
    let d_tx = if shape.block[0] >= 2 && shown.active[0] && shown.active[1] {
        Some(shown.addrs[1] - shown.addrs[0])
    } else {
        None
    };
    let d_ty = if shape.block[1] > 1 {
        derivative_y(addr, shape, runtime)
    } else {
        None
    };
    let d_iter = if wasteful {
        a.loops.last().and_then(|&id| {
            let at = |it: i64| {
                let iters = [(id, it)];
                WarpSample::new(shape.block, shape.grid, 0, runtime, &iters)
                    .eval(addr)
                    .ok()
                    .map(|v| v[0])
            };
            Some(at(1)? - at(0)?)
        })
    } else {
        None
    };
    let mut out = Cost {
        class,
        sectors: None,
        ideal_sectors: None,
        wavefronts: None,
        ideal_wavefronts: None,
        lanes,
        d_tx,
        d_ty,
        d_iter,
        samples: 0,
        varies: false,
        block_idx: shown.block,
    };
    match a.space {
        Space::Shared => {
            out.wavefronts = Some(cost);
            out.ideal_wavefronts = Some(ideal);
        }
        Space::Global | Space::Unknown => {
            out.sectors = Some(cost);
            out.ideal_sectors = Some(ideal);
        }
        _ => {}
    }
    out
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn classify(lanes: &[(u8, i64)], bytes: i64, cost: f64, ideal: f64) -> Class {
    let Some(&(_, a0)) = lanes.first() else {
        return Class::Unknown("no active lane".into());
    };
    if lanes.iter().all(|(_, a)| *a == a0) {
        return Class::Broadcast;
    }
    if cost <= ideal {
        return Class::Coalesced;
    }
    let d0 = if lanes.len() > 1 {
        lanes[1].1 - lanes[0].1
    } else {
        0
    };
    if d0 == bytes {
        // runs of consecutive lanes at consecutive addresses (one per row of a block narrower
        // than a warp): when each is whole sectors long, only where they start wastes; rows
        // shorter than a sector (16 one-byte pixels of a 16x16 block) waste by being rows
        // (lanes switched off inside a run, `switch (threadIdx.x % 4)`'s other cases, waste
        // by their holes, not by where the run starts)
        let holes = lanes.windows(2).any(|w| w[1].0 > w[0].0 + 1);
        let (mut run, mut runs, mut whole_sectors) = (bytes, 1, true);
        for w in lanes.windows(2) {
            if w[1].1 - w[0].1 == bytes * (w[1].0 as i64 - w[0].0 as i64) {
                run += w[1].1 - w[0].1;
            } else {
                whole_sectors &= run % 32 == 0;
                (run, runs) = (bytes, runs + 1);
            }
        }
        return if !holes && (runs == 1 || whole_sectors && run % 32 == 0) {
            Class::Misaligned
        } else {
            Class::Uncoalesced
        };
    }
    if d0 != 0 {
        return Class::Strided(d0);
    }
    Class::Uncoalesced
}

/// Sectors touched, and the ideal as ncu counts it: the sectors the active lanes' bytes would
/// fill if packed, never more than the sectors touched (a broadcast is ideal at 1).
/// Translations by a multiple of this keep both sector and bank counts.
fn period(t: &crate::Target) -> i64 {
    let row = t.banks * t.bank_bytes;
    row / gcd(row, t.sector_bytes) * t.sector_bytes
}

/// A gather into an array whose declaration fixes its size (adamw's 16-entry `_exp_qmap`, 64
/// bytes: 2 sectors per request on an H200 where the worst case said 32) touches at most the
/// sectors the array spans.
fn within_extent((cost, ideal): (f64, f64), a: &RawAccess, t: &crate::Target) -> (f64, f64) {
    match a.extent {
        Some(e) if e > 0 => {
            let spans = ((e + t.sector_bytes - 1) / t.sector_bytes) as f64;
            let cost = cost.min(spans);
            (cost, ideal.min(cost))
        }
        _ => (cost, ideal),
    }
}

/// A gather's sectors at worst: each group of lanes that computed its address from the same
/// loaded values touches what its lanes' relative addresses touch, and no two groups share a
/// sector; the ideal is the requested bytes packed.
fn gathered_sectors(
    addrs: &Lanes,
    active: &[bool; WARP],
    groups: &[u64; WARP],
    bytes: i64,
    t: &crate::Target,
) -> (f64, f64) {
    let mut done = [false; WARP];
    let mut cost = 0.0;
    let mut count = 0i64;
    for l in 0..WARP {
        if !active[l] || done[l] {
            continue;
        }
        let mut mine = [false; WARP];
        for m in l..WARP {
            if active[m] && groups[m] == groups[l] {
                mine[m] = true;
                done[m] = true;
                count += 1;
            }
        }
        cost += sectors(addrs, &mine, bytes, t).0;
    }
    let ideal = ((count * bytes + t.sector_bytes - 1) / t.sector_bytes).max(1) as f64;
    (cost, ideal.min(cost))
}

fn sectors(addrs: &Lanes, active: &[bool; WARP], bytes: i64, t: &crate::Target) -> (f64, f64) {
    let sector = t.sector_bytes;
    // at most 9 sectors per lane are counted (accesses of up to 256 bytes): a stack buffer
    let mut buf = [0i64; WARP * 9];
    let mut n = 0;
    let mut count = 0i64;
    for l in 0..WARP {
        if !active[l] {
            continue;
        }
        let a = addrs[l];
        let (first, last) = (a.div_euclid(sector), (a + bytes - 1).div_euclid(sector));
        for s in first..=last.min(first + 8) {
            buf[n] = s;
            n += 1;
        }
        count += 1;
    }
    let secs = &mut buf[..n];
    secs.sort_unstable();
    let distinct = 1 + secs.windows(2).filter(|w| w[0] != w[1]).count() as i64;
    let distinct = if n == 0 { 0 } else { distinct };
    let packed = ((count * bytes + sector - 1) / sector).max(1);
    (distinct as f64, packed.min(distinct) as f64)
}

/// Lanes one phase of a shared access serves: the whole warp for accesses of up to a bank
/// word, half-warps for 8-byte ones and quarter-warps for 16-byte ones, doubled for a load
/// whose lanes pair up (every lane asks for the address of lane `l ^ 1`, or every lane for that
/// of `l ^ 2`, where both are on). Measured on an H100 (`fixtures/wide_shared.cu`, 41 wide
/// loads and stores): `sd[l / 2]` and `sd[l % 2 + l / 4 * 2]` are one wavefront, `sd[l % 16]`
/// two though both halves ask for the same 16 doubles, a float4 broadcast two, and stores never
/// pair (two lanes writing one double still take two). `lanes` are the active lanes with their
/// byte addresses.
pub fn shared_phase_lanes(bytes: i64, bank_bytes: i64, load: bool, lanes: &[(u8, i64)]) -> usize {
    let base = if bytes <= bank_bytes {
        return WARP;
    } else if bytes <= 2 * bank_bytes {
        WARP / 2
    } else {
        WARP / 4
    };
    let mut at = [None; WARP];
    for &(l, a) in lanes {
        at[l as usize % WARP] = Some(a);
    }
    let pair_up = |x: usize| {
        (0..WARP).all(|l| match (at[l], at[l ^ x]) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
    };
    if load && (pair_up(1) || pair_up(2)) {
        base * 2
    } else {
        base
    }
}

/// Wavefronts per request. Each phase (`shared_phase_lanes`) costs the largest number of
/// distinct 4-byte words any one bank must deliver to its lanes (lanes asking for one word
/// share it). Phases are never merged: two half-warps asking for the same 16 doubles take two
/// wavefronts. A load whose lanes pair up is served in one wavefront per doubled phase only
/// where that phase is conflict-free; otherwise its two halves are served apart (measured:
/// `s4[l / 4 + (l % 2) * 8]`, paired but 2-way, takes 8, not 4). The ideal is the number of
/// phases with a lane on.
fn wavefronts(
    addrs: &Lanes,
    active: &[bool; WARP],
    bytes: i64,
    load: bool,
    t: &crate::Target,
) -> (f64, f64) {
    let on: Vec<(u8, i64)> = (0..WARP)
        .filter(|&l| active[l])
        .map(|l| (l as u8, addrs[l]))
        .collect();
    let group = shared_phase_lanes(bytes, t.bank_bytes, load, &on);
    let base = shared_phase_lanes(bytes, t.bank_bytes, false, &on);
    let mut words = Vec::with_capacity(WARP * 4);
    let mut phases = 0i64;
    let mut total = 0i64;
    for phase in on.chunk_by(|a, b| a.0 as usize / group == b.0 as usize / group) {
        phases += 1;
        let worst = bank_max(phase, bytes, t, &mut words);
        total += if group == base || worst <= 1 {
            worst
        } else {
            phase
                .chunk_by(|a, b| a.0 as usize / base == b.0 as usize / base)
                .map(|half| bank_max(half, bytes, t, &mut words))
                .sum()
        };
    }
    (total as f64, phases.max(1) as f64)
}

/// The largest number of distinct bank words one bank must deliver to these lanes.
fn bank_max(
    lanes: &[(u8, i64)],
    bytes: i64,
    t: &crate::Target,
    words: &mut Vec<(i64, i64)>,
) -> i64 {
    let (banks, width) = (t.banks, t.bank_bytes);
    words.clear();
    for &(_, a) in lanes {
        let (w0, w1) = (a.div_euclid(width), (a + bytes - 1).div_euclid(width));
        for w in w0..=w1.min(w0 + 8) {
            words.push((w.rem_euclid(banks), w));
        }
    }
    words.sort_unstable();
    words.dedup();
    let mut worst = 0i64;
    let mut run = 0i64;
    let mut bank = -1i64;
    for (b, _) in words.iter() {
        if *b == bank {
            run += 1;
        } else {
            bank = *b;
            run = 1;
        }
        worst = worst.max(run);
    }
    worst
}

fn derivative_y(addr: &Sym, shape: &Shape, runtime: &[i64]) -> Option<i64> {
    let mut ws = WarpSample::new(shape.block, shape.grid, 0, runtime, &[]);
    ws.tid = [[0; WARP]; 3];
    ws.tid[1] = std::array::from_fn(|l| l as i64);
    ws.active = [true; WARP];
    let v = ws.eval(addr).ok()?;
    Some(v[1] - v[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_async_copys_shared_side_follows_its_source_as_measured() {
        // tools/measure/probes/ldgsts.cu on an H100: (bytes a lane, bytes between lanes,
        // shared wavefronts per request measured)
        let measured = [
            (4, 4, 1.0),
            (4, 8, 2.0),
            (4, 32, 8.0),
            (4, 128, 32.0),
            (8, 8, 2.0),
            (8, 32, 8.0),
            (16, 16, 4.0),
            (16, 32, 32.0),
            (16, 64, 32.0),
            (16, 128, 32.0),
        ];
        for (bytes, stride, wavefronts) in measured {
            let from: Lanes = std::array::from_fn(|l| l as i64 * stride);
            assert_eq!(
                copy_wavefronts(&from, &[true; WARP], bytes),
                wavefronts,
                "{bytes} bytes from {stride} apart"
            );
        }
    }

    #[test]
    fn partly_read_lines_and_lanes_switched_off_as_measured() {
        // tools/measure/probes/ldgsts_partial.cu on an H100: (bytes a lane, lanes on, the
        // source offset of lane l, shared wavefronts per request measured)
        type Src = fn(i64) -> i64;
        let measured: [(i64, usize, Src, f64); 19] = [
            (16, 32, |l| l * 16, 4.0),
            (16, 16, |l| l * 16, 3.0),
            (16, 8, |l| l * 16, 2.0),
            (16, 4, |l| l * 16, 2.0),
            (16, 8, |l| (l / 4) * 1024 + (l % 4) * 16, 3.0),
            (16, 32, |l| (l / 4) * 256 + (l % 4) * 16, 8.0),
            (16, 32, |l| (l / 2) * 128 + (l % 2) * 16, 16.0),
            (16, 32, |l| l * 32, 32.0),
            (16, 16, |l| l * 32, 17.0),
            (16, 32, |l| (l / 8) * 128 + (7 - l % 8) * 16, 4.0),
            (16, 32, |l| (l % 4) * 128 + (l / 4) * 16, 32.0),
            (16, 8, |l| l * 16 + 64, 3.0),
            (16, 32, |l| (l / 4) * 128 + (l % 4) * 16 + 64, 8.0),
            (16, 4, |l| l * 128, 5.0),
            (16, 2, |l| l * 16, 2.0),
            (16, 16, |l| (l / 2) * 128 + (l % 2) * 16, 9.0),
            (8, 32, |l| (l / 8) * 256 + (l % 8) * 8, 4.0),
            (8, 8, |l| l * 8, 1.0),
            (4, 8, |l| l * 4, 1.0),
        ];
        for (k, (bytes, on, src, wavefronts)) in measured.into_iter().enumerate() {
            let from: Lanes = std::array::from_fn(|l| src(l as i64));
            let active: [bool; WARP] = std::array::from_fn(|l| l < on);
            assert_eq!(
                copy_wavefronts(&from, &active, bytes),
                wavefronts,
                "probe case {k}: {bytes} bytes, {on} lanes"
            );
        }
    }

    const T: crate::Target = crate::Target {
        sector_bytes: 32,
        banks: 32,
        bank_bytes: 4,
    };

    fn lanes_of(f: impl Fn(i64) -> i64) -> Lanes {
        std::array::from_fn(|l| f(l as i64))
    }

    #[test]
    fn global_sectors_match_the_probe() {
        let all = [true; WARP];
        assert_eq!(sectors(&lanes_of(|t| 4 * t), &all, 4, &T), (4.0, 4.0));
        assert_eq!(sectors(&lanes_of(|t| 4 * (t + 1)), &all, 4, &T), (5.0, 4.0));
        assert_eq!(sectors(&lanes_of(|t| 8 * t), &all, 4, &T), (8.0, 4.0));
        assert_eq!(sectors(&lanes_of(|t| 128 * t), &all, 4, &T), (32.0, 4.0));
        assert_eq!(sectors(&lanes_of(|_| 0), &all, 4, &T), (1.0, 1.0));
        // few distinct addresses: ncu's ideal is the packed bytes of the active lanes
        assert_eq!(
            sectors(&lanes_of(|t| (t & 7) * 4096), &all, 4, &T),
            (8.0, 4.0)
        );
        assert_eq!(
            sectors(&lanes_of(|t| (t / 16) * 4096), &all, 4, &T),
            (2.0, 2.0)
        );
        assert_eq!(sectors(&lanes_of(|t| 12 * t), &all, 4, &T), (12.0, 4.0));
        assert_eq!(sectors(&lanes_of(|t| 16 * t), &all, 16, &T), (16.0, 16.0));
        assert_eq!(sectors(&lanes_of(|t| t), &all, 1, &T), (1.0, 1.0));
    }

    #[test]
    fn shared_wavefronts_match_the_probe() {
        let all = [true; WARP];
        assert_eq!(
            wavefronts(&lanes_of(|t| 4 * t), &all, 4, true, &T),
            (1.0, 1.0)
        );
        assert_eq!(
            wavefronts(&lanes_of(|t| 8 * t), &all, 4, true, &T),
            (2.0, 1.0)
        );
        assert_eq!(
            wavefronts(&lanes_of(|t| 16 * t), &all, 4, true, &T),
            (4.0, 1.0)
        );
        assert_eq!(
            wavefronts(&lanes_of(|t| 128 * t), &all, 4, true, &T),
            (32.0, 1.0)
        );
        assert_eq!(
            wavefronts(&lanes_of(|t| 132 * t), &all, 4, true, &T),
            (1.0, 1.0)
        );
        assert_eq!(wavefronts(&lanes_of(|_| 0), &all, 4, true, &T), (1.0, 1.0));
        assert_eq!(
            wavefronts(&lanes_of(|t| 8 * t), &all, 8, true, &T),
            (2.0, 2.0)
        );
        assert_eq!(wavefronts(&lanes_of(|_| 0), &all, 8, true, &T), (1.0, 1.0));
        assert_eq!(
            wavefronts(&lanes_of(|t| 16 * t), &all, 16, true, &T),
            (4.0, 4.0)
        );
        // 16x16 block reading Mds[ty][k..k+3]: two row addresses, one per half-warp
        assert_eq!(
            wavefronts(&lanes_of(|t| (t / 16) * 64), &all, 16, true, &T),
            (2.0, 2.0)
        );
    }
    #[test]
    fn wide_loads_pair_lanes_and_never_merge_phases() {
        let all = [true; WARP];
        let d = |f: fn(i64) -> i64, load| wavefronts(&lanes_of(|t| 8 * f(t)), &all, 8, load, &T).0;
        // both halves ask for the same 16 doubles: still a wavefront each
        assert_eq!(d(|t| t % 16, true), 2.0);
        // lanes l and l ^ 1 (or l ^ 2) ask for one double: the warp is one phase
        assert_eq!(d(|t| t / 2, true), 1.0);
        assert_eq!(d(|t| t % 2 + t / 4 * 2, true), 1.0);
        // a broadcast per half-warp, the two in different banks, then in one bank
        assert_eq!(d(|t| t / 16, true), 1.0);
        assert_eq!(d(|t| (t / 16) * 16, true), 2.0);
        // paired lanes whose doubles meet in a bank: 2-way over the whole warp
        assert_eq!(d(|t| (t / 2) * 2, true), 2.0);
        // stores do not pair
        assert_eq!(d(|t| t / 2, false), 2.0);
        let q = |f: fn(i64) -> i64| wavefronts(&lanes_of(|t| 16 * f(t)), &all, 16, true, &T).0;
        assert_eq!(q(|_| 0), 2.0);
        assert_eq!(q(|t| t % 8), 4.0);
        assert_eq!(q(|t| t % 2), 2.0);
        assert_eq!(q(|t| t / 8 + (t % 8 == 7) as i64), 4.0);
        // paired, but 2-way in each half: the quarters are served apart, 2-way each
        assert_eq!(q(|t| t / 4 + (t % 2) * 8), 8.0);
        // lanes 0-7 and 16-23 on, one double each: the two halves are two phases
        let mut some = [false; WARP];
        for l in (0..8).chain(16..24) {
            some[l] = true;
        }
        assert_eq!(
            wavefronts(&lanes_of(|t| 8 * (t % 16)), &some, 8, true, &T),
            (2.0, 2.0)
        );
    }
}
