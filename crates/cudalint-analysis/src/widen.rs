//! What nvcc issues where the source has several narrower accesses, as measured on sm_90:
//! fields of one small element loaded together become one vector load, neighbouring shared
//! words of one lane become `LDS.64`/`LDS.128`, and a shared load in an unrolled loop over
//! consecutive elements is loaded 2 or 4 iterations at once. `analyze_kernel` prices the
//! accesses these rules return instead of the scalar ones.

use crate::interp::{self, AccessOp, Space};
use crate::{lanes, sym, Shape};
use std::collections::HashMap;

/// Field accesses that nvcc turns into one vector access of the whole element, as measured:
/// loads widen as soon as the same lanes load two or more fields of one 2-, 4-, 8- or 16-byte
/// element (`LDG.E.64` for a float2's .x and .y); stores only when every byte of the element
/// is written (otherwise `st.v2.u8` + `st.u8`). Returns, per access index, the access
/// re-expressed as the element-wide one.
pub(crate) fn vector_merges(
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
pub(crate) fn adjacent_shared_merges(
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
pub(crate) fn unrolled_shared_loads(
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
