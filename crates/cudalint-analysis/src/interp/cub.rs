//! CUB's block reduction, `BlockReduce(temp_storage).Sum(x)` with `using BlockReduce =
//! cub::BlockReduce<T, THREADS>`: nvcc inlines it at the call, so its shared-memory traffic is
//! the call line's. With the default algorithm (warp reductions) each warp's first lane stores
//! its warp's partial to the temporary storage, and thread 0 reads the partials back, in as
//! few loads as their bytes allow (`LDS.128` for four floats).

use super::{KernelRun, Val};
use crate::interp::AccessOp;
use crate::sym;
use crate::types;
use cudalint_syntax::{Expr, ExprKind, Span, TypeRef};

impl KernelRun<'_> {
    /// The accesses and value of a call of a CUB block reduction's `Sum` or `Reduce`; `None`
    /// for any other call (and for the raking algorithms, which move their data otherwise).
    pub(super) fn cub_block_reduce(
        &mut self,
        callee: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<Val> {
        // (or braced: `BlockReduce{temp_storage}.Sum(x)`)
        let (head, method) = callee
            .rsplit_once(").")
            .or_else(|| callee.rsplit_once("}."))?;
        if !matches!(method, "Sum" | "Reduce") {
            return None;
        }
        let (ty, storage) = head.split_once(['(', '{'])?;
        let full = self.through_typedefs(ty);
        let full = full.trim_start_matches("::");
        let (base, targs) = types::split_template(full);
        if !matches!(base, "cub::BlockReduce" | "BlockReduce") || targs.len() < 2 {
            return None;
        }
        if targs.get(2).is_some_and(|a| a.contains("RAKING")) {
            return None;
        }
        let elem = self.resolve_type(&TypeRef::named(&targs[0]));
        // (a type or block size the instance leaves open: 4 bytes, 256 threads, as elsewhere)
        let size = self.layout_of(&elem).map_or(4, |l| l.size);
        let threads: i64 = [1usize, 3, 4]
            .iter()
            .map(|&k| targs.get(k).map_or(Some(1), |a| self.constant_text(a)))
            .try_fold(1i64, |acc, d| Some(acc * d?))
            .unwrap_or(256);
        let place_of = |this: &mut Self| {
            let mut parts = storage.split('.');
            let first = Expr {
                kind: ExprKind::Ident(parts.next()?.into()),
                span,
            };
            let path = parts.fold(first, |b, field| Expr {
                kind: ExprKind::Field {
                    base: Box::new(b),
                    field: field.into(),
                    arrow: false,
                },
                span,
            });
            let p = this.place(&path)?;
            (p.ptr.space == super::Space::Shared).then_some(p.ptr)
        };
        let ptr = place_of(self)?;
        for a in args {
            self.rvalue(a);
        }
        // each warp's lane 0 stores its partial
        let mut store = ptr.clone();
        store.elem = elem.clone();
        let place = self.index_ptr(store, sym::konst(0));
        self.record(&place, span, AccessOp::Store, None);
        // (behind the reduction's barrier: nothing of the store is held in a register)
        self.in_registers.clear();
        self.clobbers += 1;
        // thread 0 reads the other warps' partials, 16 bytes at a time where they fill them
        let partials = ((threads + 31) / 32 - 1).max(1) * size;
        let width = match partials {
            b if b >= 16 => 16,
            b if b >= 8 => 8,
            _ => size,
        };
        let mut load = ptr;
        load.elem = match width {
            16 if size < 16 => TypeRef::named("float4"),
            8 if size < 8 => TypeRef::named("float2"),
            _ => elem,
        };
        let place = self.index_ptr(load, sym::konst(0));
        self.record(&place, span, AccessOp::Load, None);
        Some(Val::Int(sym::data("the block reduction's result")))
    }

    /// A template argument's text as a constant: a number, or a name bound to one.
    fn constant_text(&mut self, text: &str) -> Option<i64> {
        if let Ok(v) = text.trim().parse::<i64>() {
            return Some(v);
        }
        let e = Expr {
            kind: ExprKind::Ident(text.trim().into()),
            span: Span::default(),
        };
        self.pure_rvalue(&e).sym().as_const()
    }
}
