//! The term of an access's index that makes lanes differ (`threadIdx.x * 32` in
//! `in[threadIdx.x * 32]`): what a diagnostic underlines. Evaluation itself is `expr.rs`.

use super::{KernelRun, Val};
use crate::sym::{Sym, Var};
use cudalint_syntax::{Expr, ExprKind, Span, UnOp};

impl KernelRun<'_> {
    /// The first sub-expression of an index that makes it differ between lanes.
    /// The term of an access's indices that makes lanes differ, preferring one that follows
    /// threadIdx.x or the lane id (threadIdx.y is uniform within a warp of a wide block).
    pub(super) fn access_lane_term(&mut self, access: &Expr) -> Option<Span> {
        let mut indices = Vec::new();
        let mut cur = access;
        loop {
            match &cur.kind {
                ExprKind::Index { base, index } => {
                    indices.push(&**index);
                    cur = base;
                }
                ExprKind::Field { base, .. } => cur = base,
                ExprKind::Unary {
                    op: UnOp::Deref,
                    arg,
                } => {
                    indices.push(&**arg);
                    break;
                }
                _ => break,
            }
        }
        indices.reverse();
        for want_x in [true, false] {
            for i in &indices {
                if let Some(s) = self.lane_term(i, 0, want_x) {
                    return Some(s);
                }
            }
        }
        None
    }

    fn lane_term(&mut self, e: &Expr, depth: usize, want_x: bool) -> Option<Span> {
        if depth > 64 {
            return None;
        }
        let varies = |s: &Sym| {
            if !want_x {
                return s.lane_varying;
            }
            let mut x = s.data;
            s.visit_vars(&mut |v| x |= matches!(v, Var::Tid(0) | Var::LaneId));
            x
        };
        match &e.kind {
            ExprKind::Field { base, field, .. } => match &base.kind {
                ExprKind::Ident(n) if n == "threadIdx" => {
                    (!want_x || field == "x").then_some(e.span)
                }
                _ => None,
            },
            ExprKind::Ident(n) => match self.lookup_local(n) {
                Some(Val::Int(s)) if varies(s) => Some(e.span),
                _ => None,
            },
            ExprKind::Index { .. } | ExprKind::Call { .. } => {
                let v = self.pure_rvalue(e);
                match v {
                    Val::Int(s) if varies(&s) => Some(e.span),
                    _ => None,
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => self
                .lane_term(lhs, depth + 1, want_x)
                .or_else(|| self.lane_term(rhs, depth + 1, want_x)),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => {
                self.lane_term(arg, depth + 1, want_x)
            }
            ExprKind::Cond { cond, then, els } => self
                .lane_term(then, depth + 1, want_x)
                .or_else(|| self.lane_term(els, depth + 1, want_x))
                .or_else(|| self.lane_term(cond, depth + 1, want_x)),
            _ => None,
        }
    }
}
