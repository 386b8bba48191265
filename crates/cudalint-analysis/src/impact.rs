//! How much an access's waste weighs in a launch: its excess per warp request times the
//! requests the launch issues. This is what Nsight Compute's SourceCounters call excessive
//! sectors (global) and excessive wavefronts (shared), predicted.

use crate::cost::{self, Cost, MaskCache};
use crate::interp::{LoopInfo, RawAccess, RuntimeVar, Space};
use crate::lanes::{WarpSample, WARP};
use crate::sym::{Sym, Var};
use crate::{Loc, Shape, ShapeSource};
use cudalint_syntax::BinOp;

/// Iterations assumed for a loop whose trip count nothing gives (a `while` on loaded data):
/// as many as the cost model samples of it.
pub const UNKNOWN_TRIP: f64 = 8.0;

/// Bytes one excess unit stands for, so that global and shared accesses rank together: a
/// sector is 32 bytes fetched; a wavefront is one pass of shared memory's 128-byte data path.
pub const SECTOR_WEIGHT: f64 = 32.0;
pub const WAVEFRONT_WEIGHT: f64 = 128.0;

#[derive(Clone, Debug, PartialEq)]
pub enum TripSource {
    /// Start, bound and step are constants.
    Constant,
    /// Computed with these runtime quantities at their assumed values.
    Assumed(Vec<(String, i64)>),
    /// Nothing gives it: [`UNKNOWN_TRIP`] is assumed.
    Unknown,
}

/// One enclosing loop: how many times one warp runs its body.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopCount {
    pub at: Loc,
    pub count: f64,
    pub source: TripSource,
    /// The count is the most the loop runs: its condition reads more than the count.
    pub at_most: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Impact {
    /// Excess sectors (global) or wavefronts (shared) of one warp request.
    pub excess_per_request: f64,
    /// Warps of a block with a lane on at the access: a mean over the innermost loop's
    /// iterations where its condition switches warps off from one iteration to the next.
    pub warps_per_block: f64,
    /// Enclosing loops, outermost first, with their counts.
    pub loops: Vec<LoopCount>,
    /// Read by the condition of the innermost loop, one whose trip count the run decides:
    /// once more an entry than the body runs, the last read deciding to leave.
    pub in_condition: bool,
    /// Loop iterations one instruction covers (a vector access of an unrolled loop).
    pub per_instruction: i64,
    /// Times a compare-and-swap loop runs per warp: as many as the most lanes that meet in
    /// one bank (one address or several), each round's losers retrying (1 for any other
    /// access).
    pub rounds: f64,
    /// Blocks of one launch: `None` when the launch's grid is not known (the estimate is
    /// then per block).
    pub blocks: Option<i64>,
    /// Where the grid comes from, when it is known.
    pub grid_from: Option<Loc>,
}

impl Impact {
    /// How many times one warp executes the access.
    pub fn executions_per_warp(&self) -> f64 {
        let last = self.loops.len().wrapping_sub(1);
        let n: f64 = self
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| l.count + f64::from(u8::from(self.in_condition && i == last)))
            .product();
        n / self.per_instruction.max(1) as f64 * self.rounds
    }

    /// Warp requests per block.
    pub fn requests_per_block(&self) -> f64 {
        self.warps_per_block * self.executions_per_warp()
    }

    /// Warp requests per launch (per block when the grid is not known).
    pub fn requests(&self) -> f64 {
        self.requests_per_block() * self.blocks.unwrap_or(1) as f64
    }

    /// Excess sectors or wavefronts per launch (per block when the grid is not known).
    pub fn excess(&self) -> f64 {
        self.excess_per_request * self.requests()
    }

    /// [`Self::excess`] in bytes: sectors at 32, wavefronts at 128.
    pub fn excess_bytes(&self, space: Space) -> f64 {
        let w = if space == Space::Shared {
            WAVEFRONT_WEIGHT
        } else {
            SECTOR_WEIGHT
        };
        self.excess() * w
    }
}

/// The wavefronts Nsight Compute takes as ideal for a shared request: the bytes its active
/// lanes move, 128 a wavefront, whatever they share. Its excessive wavefronts are counted
/// above that, so a broadcast of two doubles that meet in one bank (2 wavefronts where 1
/// would do) is no excess to it: cudalint's estimate is the same quantity, predicted, while
/// the finding still names the conflict (`fixtures/wide_shared.cu`, on an H200).
fn ncu_ideal(c: &Cost, bytes: i64) -> f64 {
    let moved = c.lanes.len() as i64 * bytes.max(1);
    ((moved + 127) / 128).max(1) as f64
}

/// The impact of an access priced at `cost`; `None` where the cost has no figures.
pub fn estimate(
    a: &RawAccess,
    c: &Cost,
    shape: &Shape,
    runtime: &[RuntimeVar],
    values: &[i64],
    loops: &[LoopInfo],
    masks: &mut MaskCache,
) -> Option<Impact> {
    let excess_per_request = match a.space {
        Space::Shared if !a.cas => c.wavefronts? - c.ideal_wavefronts?.max(ncu_ideal(c, a.bytes)),
        Space::Shared => c.wavefronts? - c.ideal_wavefronts?,
        _ => c.sectors? - c.ideal_sectors?,
    }
    .max(0.0);
    let counts: Vec<LoopCount> = a
        .loops
        .iter()
        .filter_map(|&id| loops.get(id as usize))
        .map(|l| loop_count(l, shape, runtime, values))
        .collect();
    let warps_per_block = mean_active_warps(a, shape, values, counts.last(), masks);
    let (blocks, grid_from) = match &shape.source {
        ShapeSource::Launch(at) if shape.grid_known => (
            Some(
                blocks_running(a, c, shape, values, masks)
                    .unwrap_or_else(|| shape.grid.iter().product::<i64>().max(1)),
            ),
            Some(*at),
        ),
        _ => (None, None),
    };
    Some(Impact {
        excess_per_request,
        warps_per_block,
        // (a loop the run decides leaves when its condition reads so; one that counts to a
        // bound leaves on the count, and `i < n && a[i] > 0` reads nothing then)
        in_condition: a.in_condition
            && counts
                .last()
                .is_some_and(|l| l.source == TripSource::Unknown),
        loops: counts,
        per_instruction: a.iter_step.max(1),
        rounds: if a.cas {
            cas_rounds(&c.lanes, a.bytes)
        } else {
            1.0
        },
        blocks,
        grid_from,
    })
}

/// How many rounds a compare-and-swap loop takes for these lanes: in each phase (the warp for
/// 4-byte words, each half-warp for 8), the most lanes whose words fall in one bank
/// (shared_cas_atomics.cu on an H100: 32 at one address and over 32 words of one bank, 2 for
/// lane pairs on one word and for a stride of two words, 1 for consecutive words, floats or
/// doubles).
fn cas_rounds(lanes: &[(u8, i64)], bytes: i64) -> f64 {
    let phase = if bytes > 4 { 16 } else { 32 };
    let mut worst = 1;
    for first in (0..32).step_by(phase) {
        let mut per_bank = [0i64; 32];
        for &(l, addr) in lanes {
            if (l as usize) < first || l as usize >= first + phase {
                continue;
            }
            for w in 0..((bytes + 3) / 4).max(1) {
                per_bank[((addr / 4 + w) % 32) as usize] += 1;
            }
        }
        worst = worst.max(per_bank.into_iter().max().unwrap_or(1));
    }
    worst as f64
}

/// The blocks with a lane at an access that the middle block of the grid does not run, and
/// the first does (`if (blockIdx.x == 0 && threadIdx.x == 0)`: one block, not the grid), each
/// block's warps that run it in the first evaluated in turn; `None` for any other access
/// (every block runs it) and for grids too large to go through.
fn blocks_running(
    a: &RawAccess,
    c: &Cost,
    shape: &Shape,
    values: &[i64],
    masks: &mut MaskCache,
) -> Option<i64> {
    let fell_back = c.samples > 0 && c.block_idx == [0; 3] && cost::inner_block(shape) != [0; 3];
    if !fell_back {
        return None;
    }
    let key = std::rc::Rc::as_ptr(&a.mask) as usize;
    if let Some(n) = masks.blocks.get(&key) {
        return *n;
    }
    let n = blocks_running_condition(a, shape, values);
    masks.blocks.insert(key, n);
    n
}

fn blocks_running_condition(a: &RawAccess, shape: &Shape, values: &[i64]) -> Option<i64> {
    const MAX_BLOCKS: i64 = 1 << 16;
    let total = shape.grid.iter().product::<i64>();
    if total > MAX_BLOCKS {
        return None;
    }
    let threads = shape.block.iter().product::<i64>().max(1);
    let warps = (threads + WARP as i64 - 1) / WARP as i64;
    let on = |w: i64, at: [i64; 3]| {
        let mut ws = WarpSample::new(shape.block, shape.grid, w, values, &[]);
        ws.block_idx = at;
        cost::active_lanes(&ws, &a.mask).iter().any(|on| *on)
    };
    // the warps that run it in the first block stand for every block's (`threadIdx.x == 0`
    // is warp 0 wherever): one evaluation a block, not one a warp
    let lead: Vec<i64> = (0..warps).filter(|&w| on(w, [0; 3])).collect();
    if lead.is_empty() || total * lead.len() as i64 > MAX_BLOCKS {
        return None;
    }
    // a block runs it or not by the blockIdx components its condition reads: the others'
    // blocks are counted, not evaluated (a 64 x 64 grid whose condition reads none was 4,096
    // evaluations of every such access, three quarters of a dense run)
    let mut reads = [false; 3];
    a.mask.visit_vars(&mut |v| {
        if let Var::BlockIdx(d) = v {
            reads[(d as usize).min(2)] = true;
        }
    });
    let grid = shape.grid.map(|g| g.max(1));
    let span = |d: usize| if reads[d] { grid[d] } else { 1 };
    let (sx, sy, sz) = (span(0), span(1), span(2));
    let repeats: i64 = (0..3).filter(|&d| !reads[d]).map(|d| grid[d]).product();
    // (each lead warp's lanes made once, moved from block to block)
    let mut samples: Vec<WarpSample> = lead
        .iter()
        .map(|&w| WarpSample::new(shape.block, shape.grid, w, values, &[]))
        .collect();
    let mut runs = |b: i64| {
        let at = [b % sx, (b / sx) % sy, b / (sx * sy)];
        samples.iter_mut().any(|ws| {
            ws.block_idx = at;
            ws.gathered.set(false);
            ws.groups.set([0; WARP]);
            cost::active_lanes(ws, &a.mask).iter().any(|on| *on)
        })
    };
    let count = (0..sx * sy * sz).filter(|&b| runs(b)).count() as i64 * repeats;
    Some(count.max(1))
}

/// Active warps per block, averaged over the innermost loop's iterations when the access's
/// condition changes with them (a reduction's `if (tid < s)`), as ncu counts the requests.
fn mean_active_warps(
    a: &RawAccess,
    shape: &Shape,
    values: &[i64],
    innermost: Option<&LoopCount>,
    masks: &mut MaskCache,
) -> f64 {
    let first = cost::active_warps(a, shape, values, None, masks) as f64;
    let (Some(&id), Some(l)) = (a.loops.last(), innermost) else {
        return first;
    };
    let mut per_iteration = false;
    a.mask
        .visit_vars(&mut |v| per_iteration |= v == Var::LoopIter(id));
    let n = l.count as i64;
    if !per_iteration || l.source == TripSource::Unknown || !(1..=256).contains(&n) {
        return first;
    }
    let total: i64 = (0..n)
        .map(|i| cost::active_warps(a, shape, values, Some((id, i)), masks))
        .sum();
    total as f64 / n as f64
}

/// How many times the first warp runs a loop's body: its longest-running lane's trip count
/// with the loops around it at their first iteration.
fn loop_count(l: &LoopInfo, shape: &Shape, runtime: &[RuntimeVar], values: &[i64]) -> LoopCount {
    if let Some(t) = l.trip {
        return LoopCount {
            at: l.at,
            count: t as f64,
            source: TripSource::Constant,
            at_most: l.at_most,
        };
    }
    let unknown = LoopCount {
        at: l.at,
        count: UNKNOWN_TRIP,
        source: TripSource::Unknown,
        at_most: false,
    };
    let Some(b) = &l.bounds else {
        return unknown;
    };
    let ws = WarpSample::new(shape.block, shape.grid, 0, values, &[]);
    let (Ok(start), Ok(bound), Ok(step)) = (ws.eval(&b.start), ws.eval(&b.bound), ws.eval(&b.step))
    else {
        return unknown;
    };
    let mut most: Option<f64> = None;
    for lane in (0..WARP).filter(|l| ws.active[*l]) {
        let n = match b.shift {
            Some(shift) => {
                crate::interp::trip_count(b.cmp, start[lane], bound[lane], None, Some(shift))
                    .map(|n| n as f64)
            }
            None => closed_form(b.cmp, start[lane], bound[lane], step[lane]),
        };
        let Some(n) = n else {
            return unknown;
        };
        most = Some(most.map_or(n, |m: f64| m.max(n)));
    }
    let Some(count) = most else {
        return unknown;
    };
    let mut named: Vec<(String, i64)> = Vec::new();
    for s in [&b.start, &b.bound, &b.step] {
        collect_runtime(s, runtime, &mut named);
    }
    LoopCount {
        at: l.at,
        count,
        source: if named.is_empty() {
            TripSource::Constant
        } else {
            TripSource::Assumed(named)
        },
        at_most: l.at_most,
    }
}

/// Iterations of `v = start; v <cmp> bound; v += step`, without running them.
fn closed_form(cmp: BinOp, start: i64, bound: i64, step: i64) -> Option<f64> {
    let (start, bound, step) = (start as i128, bound as i128, step as i128);
    let n = match cmp {
        BinOp::Lt | BinOp::Le | BinOp::Ne if step > 0 => {
            let end = if cmp == BinOp::Le { bound + 1 } else { bound };
            if start >= end {
                0
            } else {
                (end - start + step - 1) / step
            }
        }
        BinOp::Gt | BinOp::Ge | BinOp::Ne if step < 0 => {
            let end = if cmp == BinOp::Ge { bound - 1 } else { bound };
            if start <= end {
                0
            } else {
                (start - end + (-step) - 1) / (-step)
            }
        }
        // a condition that holds from the start and a step that never ends it
        _ => {
            let holds = match cmp {
                BinOp::Lt => start < bound,
                BinOp::Le => start <= bound,
                BinOp::Gt => start > bound,
                BinOp::Ge => start >= bound,
                _ => start != bound,
            };
            if holds {
                return None;
            }
            0
        }
    };
    Some(n as f64)
}

fn collect_runtime(s: &Sym, runtime: &[RuntimeVar], out: &mut Vec<(String, i64)>) {
    s.visit_vars(&mut |v| {
        if let Var::Runtime(i) = v {
            if let Some(r) = runtime.get(i as usize) {
                if !out.iter().any(|(n, _)| *n == r.name) {
                    out.push((r.name.clone(), r.value));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_counts_as_the_loop_runs() {
        assert_eq!(closed_form(BinOp::Lt, 0, 1024, 32), Some(32.0));
        assert_eq!(closed_form(BinOp::Lt, 5, 1024, 256), Some(4.0));
        assert_eq!(closed_form(BinOp::Le, 0, 10, 1), Some(11.0));
        assert_eq!(closed_form(BinOp::Gt, 10, 0, -1), Some(10.0));
        assert_eq!(closed_form(BinOp::Ge, 10, 0, -2), Some(6.0));
        assert_eq!(closed_form(BinOp::Lt, 2000, 1024, 1), Some(0.0));
        assert_eq!(closed_form(BinOp::Lt, 0, 1024, 0), None);
        assert_eq!(closed_form(BinOp::Lt, 0, 1024, -1), None);
    }
}
