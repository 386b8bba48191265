//! What nvcc issues where the source has several narrower accesses, as measured on sm_90:
//! fields of one small element loaded together become one vector load, neighbouring shared
//! words of one lane become `LDS.64`/`LDS.128`, and a shared load in an unrolled loop over
//! consecutive elements is loaded 2 or 4 iterations at once. `analyze_kernel` prices the
//! accesses these rules return instead of the scalar ones.

use crate::interp::{self, AccessOp, Space};
use crate::{lanes, sym, Shape};
use std::collections::HashMap;

/// What becomes of one source access under a rule.
#[derive(Clone, Debug)]
pub(crate) enum Widened {
    /// Priced as this access (the vector instruction it is part of).
    As(Box<interp::RawAccess>),
    /// Part of a vector instruction reported at another member of its group: nvcc files the
    /// one instruction under one line (a load under its first, a store under its last).
    Folded,
}

/// The accesses one vector instruction stands for, with what becomes of each.
pub(crate) type Merge = Vec<(usize, Widened)>;

/// The member of a group nvcc files the vector instruction under: a load issues when the
/// first scalar load would have, a store once the last value is known.
fn filed_under(run: &interp::KernelRun, members: &[usize]) -> usize {
    let key = |&m: &usize| {
        let (f, s) = run.accesses[m].loc;
        (f, s.start, s.end)
    };
    let pick = match run.accesses[members[0]].op {
        AccessOp::Load => members.iter().min_by_key(|m| key(m)),
        _ => members.iter().max_by_key(|m| key(m)),
    };
    pick.copied().unwrap_or(members[0])
}

/// One merge of `members`, each re-expressed by `widen`, all but the one filed folded.
fn merge_of(
    run: &interp::KernelRun,
    members: &[usize],
    widen: impl Fn(usize) -> interp::RawAccess,
) -> Merge {
    let primary = filed_under(run, members);
    members
        .iter()
        .map(|&m| {
            let w = if m == primary {
                Widened::As(Box::new(widen(m)))
            } else {
                Widened::Folded
            };
            (m, w)
        })
        .collect()
}

/// Field accesses that nvcc turns into one vector access of the whole element, as measured:
/// loads widen as soon as the same lanes load two or more fields of one 2-, 4-, 8- or 16-byte
/// element (`LDG.E.64` for a float2's .x and .y); stores only when every byte of the element
/// is written (otherwise `st.v2.u8` + `st.u8`); all in one branch of the code. Returns, per
/// access index, the access
/// re-expressed as the element-wide one.
pub(crate) fn vector_merges(run: &interp::KernelRun, shape: &Shape, runtime: &[i64]) -> Vec<Merge> {
    let element = |a: &interp::RawAccess| -> Option<(i64, sym::Sym, lanes::Lanes)> {
        let f = a.field.as_ref()?;
        // a vector access needs the element aligned to its size: float2/float4/uchar4 are, a
        // struct of four floats is only 4-byte aligned and stays four scalar loads
        if !matches!(f.struct_size, 2 | 4 | 8 | 16)
            || f.struct_align < f.struct_size
            || a.bytes >= f.struct_size
            || a.addr.data
            || a.piece.is_some()
            || a.volatile
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
    let mut grouped = vec![false; candidates.len()];
    let mut out = Vec::new();
    for (ci, (i, size, addr, lanes)) in candidates.iter().enumerate() {
        if grouped[ci] {
            continue;
        }
        let a = &run.accesses[*i];
        // the fields of the same element, loaded (or stored) by the same lanes
        let group: Vec<usize> = (ci..candidates.len())
            .filter(|&cj| {
                let (j, s, _, l) = &candidates[cj];
                let b = &run.accesses[*j];
                !grouped[cj]
                    && s == size
                    && l == lanes
                    && b.op == a.op
                    && b.base == a.base
                    && b.decl == a.decl
                    && b.loops == a.loops
                    // `c[i].x = re; if (im) c[i].y = im[i];` stays two stores
                    && b.branch == a.branch
                    && std::rc::Rc::ptr_eq(&b.mask, &a.mask)
            })
            .collect();
        let mut spans: Vec<(i64, i64)> = group
            .iter()
            .filter_map(|&cj| {
                let b = &run.accesses[candidates[cj].0];
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
        if !widened {
            continue;
        }
        for &cj in &group {
            grouped[cj] = true;
        }
        let members: Vec<usize> = group.iter().map(|&cj| candidates[cj].0).collect();
        out.push(merge_of(run, &members, |m| {
            let mut w = run.accesses[m].clone();
            w.addr = addr.clone();
            w.bytes = *size;
            w
        }));
    }
    out
}

/// Scalar shared-memory accesses of one lane at consecutive, suitably aligned addresses that
/// nvcc issues as one vector access, as measured on sm_90: `s[2*t]` and `s[2*t + 1]` become
/// `ld.shared.v2.f32` (shared arrays have a known alignment; global pointers do not, and nvcc
/// leaves those scalar). Runs of 2 or 4 elements of 4 or 8 bytes, up to 16 bytes, the first
/// aligned to the run's size in every lane, in the same loop and under the same condition.
/// Bytes and halves stay scalar, as nvcc leaves them (`STS.U8` for SobelFilter's four
/// `LocalBlock[SharedIdx + 4 * ib + k]`, `LDS.U16` for neighbouring `__half`s).
pub(crate) fn adjacent_shared_merges(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
) -> Vec<Merge> {
    let ws = lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &[]);
    let cands: Vec<(usize, lanes::Lanes)> = run
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            // (members too: qsim's `partial[t].re` and `.im` of a 16-byte complex are one
            // STS.128; a 12-byte struct's members stay scalar, as their alignment says)
            a.space == Space::Shared
                && a.op != AccessOp::Atomic
                && a.piece.is_none()
                && !a.addr.data
                && !a.volatile
                && matches!(a.bytes, 4 | 8)
        })
        .filter_map(|(i, a)| ws.eval(&a.addr).ok().map(|l| (i, l)))
        .collect();
    let same_group = |a: &interp::RawAccess, b: &interp::RawAccess| {
        a.op == b.op
            && a.decl == b.decl
            && a.base == b.base
            && a.bytes == b.bytes
            && a.loops == b.loops
            && a.branch == b.branch
            && std::rc::Rc::ptr_eq(&a.mask, &b.mask)
    };
    // the candidates by lane 0's address, in order: a neighbour is looked for among those one
    // element away, not among every shared access of the kernel (ccminer's kernels have
    // thousands, and comparing each with each was a tenth of a run)
    let mut at: HashMap<i64, Vec<usize>> = HashMap::new();
    for (k, (_, l)) in cands.iter().enumerate() {
        at.entry(l[0]).or_default().push(k);
    }
    let near = |addr: i64| at.get(&addr).into_iter().flatten().map(|&k| &cands[k]);
    let mut out = Vec::new();
    for &(i, ref li) in &cands {
        let a = &run.accesses[i];
        // i starts a run when nothing in its group sits one element below it
        let below = near(li[0] - a.bytes).any(|(j, lj)| {
            *j != i
                && same_group(a, &run.accesses[*j])
                && (0..lanes::WARP).all(|l| lj[l] + a.bytes == li[l])
        });
        if below {
            continue;
        }
        let mut members = vec![(i, *li)];
        while members.len() < 64 {
            let cur = members[members.len() - 1].1;
            let next = near(cur[0] + a.bytes).find(|(j, lj)| {
                !members.iter().any(|(m, _)| m == j)
                    && same_group(a, &run.accesses[*j])
                    && (0..lanes::WARP).all(|l| lj[l] == cur[l] + a.bytes)
            });
            match next {
                Some(&(j, lj)) => members.push((j, lj)),
                None => break,
            }
        }
        // the run is issued in vector pieces of up to 16 bytes, each aligned to its size
        let mut k = 0;
        while k < members.len() {
            let piece = [4usize, 2].into_iter().find(|&w| {
                k + w <= members.len()
                    && a.bytes * w as i64 <= 16
                    && steady_piece(run, shape, runtime, &members[k..k + w], a.bytes)
            });
            let Some(w) = piece else {
                k += 1;
                continue;
            };
            let vbytes = a.bytes * w as i64;
            let idx: Vec<usize> = members[k..k + w].iter().map(|(m, _)| *m).collect();
            out.push(merge_of(run, &idx, |m| {
                let mut v = a.clone();
                v.loc = run.accesses[m].loc;
                v.inlined_at = run.accesses[m].inlined_at.clone();
                v.bytes = vbytes;
                v
            }));
            k += w;
        }
    }
    out
}

/// Whether consecutive shared accesses `piece` start aligned to their joint size in every
/// lane, and stay neighbours so aligned in every iteration of the loops around them: nvcc
/// pairs `sdata[index]` and `sdata[index + s]` only while s = 1 (cuda-samples' reduce1).
fn steady_piece(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
    piece: &[(usize, lanes::Lanes)],
    bytes: i64,
) -> bool {
    let vbytes = bytes * piece.len() as i64;
    if !piece[0].1.iter().all(|x| x.rem_euclid(vbytes) == 0) {
        return false;
    }
    // aligned in the sampled lanes is not enough: nvcc pairs them only when the index proves
    // it (`2 * t`: yes; Parboil sort's `x + (x >> (LNB + x))`: no, four scalar STS)
    let multiple = sym::known_multiple(&run.accesses[piece[0].0].addr);
    if multiple != 0 && multiple % vbytes != 0 {
        return false;
    }
    let a = &run.accesses[piece[0].0];
    a.loops.is_empty()
        || (1..=2).all(|it| {
            let iters: Vec<_> = a.loops.iter().map(|&id| (id, it)).collect();
            let later = lanes::WarpSample::new(shape.block, shape.grid, 0, runtime, &iters);
            let run_lanes: Option<Vec<lanes::Lanes>> = piece
                .iter()
                .map(|(m, _)| later.eval(&run.accesses[*m].addr).ok())
                .collect();
            run_lanes.is_some_and(|ls| {
                ls.windows(2)
                    .all(|p| (0..lanes::WARP).all(|l| p[1][l] == p[0][l] + bytes))
                    && ls[0].iter().all(|x| x.rem_euclid(vbytes) == 0)
            })
        })
}

/// A shared load in a loop of constant trip count that walks consecutive elements, aligned in
/// every lane: nvcc unrolls the loop and loads 2 or 4 iterations at once (`LDS.128` for
/// `Mds[ty][k]` over k < 16 in PMPP's tiled matmul, for SGEMM_CUDA's `As[... + i]` over
/// i < TM, and for darknet's `local[i]` over i < 512, as measured). Priced as that vector
/// load, one per `width` iterations.
pub(crate) fn unrolled_shared_loads(
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
) -> Vec<Merge> {
    let mut out = Vec::new();
    for (i, a) in run.accesses.iter().enumerate() {
        if a.space != Space::Shared
            || a.op != AccessOp::Load
            || a.field.is_some()
            || a.piece.is_some()
            || a.addr.data
            || a.volatile
            || !matches!(a.bytes, 4 | 8)
        {
            continue;
        }
        let Some(&id) = a.loops.last() else { continue };
        // (a loop its data may leave early is not unrolled into wider accesses)
        let Some(trip) = run
            .loops
            .get(id as usize)
            .filter(|l| !l.at_most)
            .and_then(|l| l.trip)
        else {
            continue;
        };
        // a longer loop is unrolled by 4, not whole (darknet's one-thread sums over a
        // 512-float shared array: `LDS.128`, measured): only 4 iterations at once fit it
        let widths: &[i64] = if trip > 64 { &[4] } else { &[4, 2] };
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
        let width = widths.iter().copied().find(|w| {
            trip % w == 0
                && w * a.bytes <= 16
                && first.iter().all(|x| x.rem_euclid(w * a.bytes) == 0)
        });
        let Some(width) = width else { continue };
        let mut w = a.clone();
        w.bytes = a.bytes * width;
        w.iter_step = width;
        out.push(vec![(i, Widened::As(Box::new(w)))]);
    }
    out
}
