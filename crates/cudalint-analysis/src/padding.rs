//! The padding fix for a shared-array bank conflict, proved by lane evaluation: the smallest
//! padding of the innermost dimension under which the access is conflict-free and no other
//! access of the array gets worse. `analyze_kernel` asks for it on conflicting accesses.

use crate::interp;
use crate::{cost, sym, Loc, Padding, Shape};
use cudalint_syntax::Span;
use std::collections::HashMap;

/// What the padding trials of one kernel configuration have evaluated, by the access's index
/// in the run: each access's wavefronts as declared and under each padded shape tried. Every
/// conflicting access of an array asks about the same accesses under the same paddings (ppl.cv's
/// filters: 40% of a run went to evaluating them again).
#[derive(Default)]
pub(crate) struct Trials {
    before: HashMap<usize, Option<f64>>,
    after: HashMap<(usize, Vec<i64>), Option<After>>,
}

/// An access's cost under a padding: wavefronts, the ideal, and the costliest warp's lanes.
type After = (f64, f64, Vec<(u8, i64)>);

/// Tries padding the innermost dimension of the shared array by 1..=4 elements and keeps the
/// smallest padding under which this access is conflict-free and no other access of the same
/// array in the kernel gets worse.
pub(crate) fn prove_padding(
    raw: &interp::RawAccess,
    run: &interp::KernelRun,
    shape: &Shape,
    runtime: &[i64],
    masks: &mut cost::MaskCache,
    trials: &mut Trials,
) -> Option<Padding> {
    let si = raw.shared_index.as_ref()?;
    let decl = raw.decl?;
    if si.dims.len() < 2 {
        return None;
    }
    // every access of the array must be a direct index, or a padding could break an alias
    let all_direct = run
        .accesses
        .iter()
        .filter(|a| a.decl == Some(decl))
        .all(|a| a.shared_index.is_some());
    if !all_direct {
        return None;
    }
    // the access being fixed first: a padding that leaves it conflicting is rejected before
    // the others are priced
    let mut same: Vec<(usize, &interp::RawAccess)> = run
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| a.decl == Some(decl) && a.shared_index.is_some())
        .collect();
    same.sort_by_key(|(_, a)| !std::ptr::eq(*a, raw));
    for pad in 1..=4 {
        let mut dims = si.dims.clone();
        *dims.last_mut()? += pad;
        let mut ok = true;
        let mut after_this = (0.0, Vec::new());
        for &(i, a) in &same {
            let before = *trials
                .before
                .entry(i)
                .or_insert_with(|| cost::evaluate(a, shape, runtime, &run.loops, masks).wavefronts);
            let after = trials.after.entry((i, dims.clone())).or_insert_with(|| {
                let s = a.shared_index.as_ref()?;
                let c = cost::evaluate_addr(
                    a,
                    &padded_addr(s, &dims),
                    shape,
                    runtime,
                    &run.loops,
                    masks,
                );
                Some((c.wavefronts?, c.ideal_wavefronts?, c.lanes))
            });
            let (Some(b), Some((w, ideal, lanes))) = (before, after.as_ref()) else {
                ok = false;
                break;
            };
            if *w > b {
                ok = false;
                break;
            }
            if std::ptr::eq(a, raw) {
                if w > ideal {
                    ok = false;
                    break;
                }
                after_this = (*w, lanes.clone());
            }
        }
        if ok {
            return Some(Padding {
                dim: (decl.0, dim_span_of(run, decl)?),
                pad,
                wavefronts_after: after_this.0,
                lanes_after: after_this.1,
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
