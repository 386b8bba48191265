//! The padding fix for a shared-array bank conflict, proved by lane evaluation: the smallest
//! padding of the innermost dimension under which the access is conflict-free and no other
//! access of the array gets worse. `analyze_kernel` asks for it on conflicting accesses.

use crate::interp;
use crate::{cost, sym, Loc, Padding, Shape};
use cudalint_syntax::Span;

/// Tries padding the innermost dimension of the shared array by 1..=4 elements and keeps the
/// smallest padding under which this access is conflict-free and no other access of the same
/// array in the kernel gets worse.
pub(crate) fn prove_padding(
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
        let mut after_this = (0.0, Vec::new());
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
                after_this = (w, after.lanes);
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
