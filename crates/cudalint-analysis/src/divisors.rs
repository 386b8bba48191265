//! Run-time values the analysis assumes (1024 where nothing says otherwise) can make a divisor
//! zero that no run makes zero: Gpufit's `shared_size = blockDim.x / n_fits_per_block` with a
//! block of 256 and `n_fits_per_block` assumed 1024 divided every lane by zero, and its 54
//! accesses were `unknown`. Such a value is assumed 1 instead, the smallest that divides
//! anything, and the access says so as it says every assumed value.

use crate::interp::RawAccess;
use crate::lanes::WarpSample;
use crate::sym::{Sym, SymKind, Var};
use crate::Shape;
use cudalint_syntax::BinOp;
use std::collections::HashSet;

/// Sets to 1 each run-time value in `runtime` that makes the divisor of a division or
/// remainder in an access's address or condition zero in a warp that does not depend on the
/// lane, where that leaves fewer such divisors (TransformerEngine's `d_vec = D / N` is zero
/// with `D` taken as 1: a value another divisor needs large stays large); returns their
/// indices.
pub(crate) fn avoid_zero_divisors(
    accesses: &[RawAccess],
    shape: &Shape,
    runtime: &mut [i64],
) -> Vec<usize> {
    let mut changed = Vec::new();
    let (mut nodes, mut zero) = zero_divisors_of(accesses, shape, runtime);
    // a fix can uncover another divisor (`a / (b / c)`): a few rounds
    for _ in 0..4 {
        let before = changed.len();
        zero.sort_unstable();
        zero.dedup();
        for i in zero {
            if runtime.get(i).is_none_or(|v| *v == 1) || changed.contains(&i) {
                continue;
            }
            let old = runtime[i];
            runtime[i] = 1;
            // kept only where no divisor becomes zero that was not
            let (after, _) = zero_divisors_of(accesses, shape, runtime);
            if after.len() < nodes.len() && after.is_subset(&nodes) {
                nodes = after;
                changed.push(i);
            } else {
                runtime[i] = old;
            }
        }
        if changed.len() == before || nodes.is_empty() {
            break;
        }
        zero = zero_divisors_of(accesses, shape, runtime).1;
    }
    changed
}

/// The divisors that are zero (by node), and the run-time values they depend on.
fn zero_divisors_of(
    accesses: &[RawAccess],
    shape: &Shape,
    runtime: &[i64],
) -> (HashSet<usize>, Vec<usize>) {
    let ws = WarpSample::new(shape.block, shape.grid, 0, runtime, &[]);
    let mut seen = HashSet::new();
    let mut nodes = HashSet::new();
    let mut zero = Vec::new();
    for a in accesses {
        zero_divisors(&a.addr, &ws, &mut seen, &mut nodes, &mut zero);
        zero_divisors(&a.mask, &ws, &mut seen, &mut nodes, &mut zero);
    }
    (nodes, zero)
}

fn zero_divisors(
    s: &Sym,
    ws: &WarpSample,
    seen: &mut HashSet<usize>,
    nodes: &mut HashSet<usize>,
    out: &mut Vec<usize>,
) {
    let id = std::rc::Rc::as_ptr(s) as *const () as usize;
    if !seen.insert(id) {
        return;
    }
    match &s.kind {
        SymKind::Bin(op, a, b) => {
            let divides = matches!(
                op,
                crate::sym::Op::Bin(BinOp::Div) | crate::sym::Op::Bin(BinOp::Rem)
            );
            if divides && !b.lane_varying && !b.data && ws.eval(b).is_ok_and(|v| v[0] == 0) {
                nodes.insert(id);
                b.visit_vars(&mut |v| {
                    if let Var::Runtime(i) = v {
                        out.push(i as usize);
                    }
                });
            }
            zero_divisors(a, ws, seen, nodes, out);
            zero_divisors(b, ws, seen, nodes, out);
        }
        SymKind::Un(_, a) | SymKind::Loaded(a, _) => zero_divisors(a, ws, seen, nodes, out),
        SymKind::Select(c, a, b) => {
            zero_divisors(c, ws, seen, nodes, out);
            zero_divisors(a, ws, seen, nodes, out);
            zero_divisors(b, ws, seen, nodes, out);
        }
        _ => {}
    }
}
