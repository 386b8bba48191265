//! Cooperative groups (`this_thread_block`, `tiled_partition<N>`, `this_grid` and their rank
//! and size methods) in terms of threadIdx and the block shape, and warp-wide intrinsics
//! whose results are data (`__shfl_*`, `__ballot_sync`). `call.rs` asks here first.

use super::{KernelRun, Val};
use crate::sym::{self, Sym, Var};
use cudalint_syntax::{BinOp, Span, TemplateArg};

impl KernelRun<'_> {
    /// `cg::this_thread_block()`, `cg::tiled_partition<32>(block)`, `cg::this_grid()`, and the
    /// rank and size methods of those groups, in terms of threadIdx and the block shape.
    pub(super) fn cooperative_groups(
        &mut self,
        name: &str,
        targs: &[TemplateArg],
        span: Span,
    ) -> Option<Val> {
        let (base, angle) = match name.split_once('<') {
            Some((b, rest)) => {
                let text = rest.trim_end_matches('>').trim();
                // `tiled_partition<cudf::detail::warp_size>`: a named constant
                let n = text
                    .parse::<i64>()
                    .ok()
                    .or_else(|| match self.lookup(text, span) {
                        Val::Int(s) => s.as_const(),
                        _ => None,
                    });
                (b, n)
            }
            None => (name, None),
        };
        match base {
            "this_thread_block" => return Some(Val::Group(0)),
            "this_grid" => return Some(Val::Group(-1)),
            "tiled_partition" => {
                let n = angle.or_else(|| match targs.first() {
                    Some(TemplateArg::Expr(e)) => self.pure_rvalue(e).sym().as_const(),
                    // `tiled_partition<cudf::detail::warp_size>` reads as a type: the name of
                    // a constant
                    Some(TemplateArg::Type(t)) if t.pointer_depth == 0 => {
                        match self.lookup(&t.name, span) {
                            Val::Int(s) => s.as_const(),
                            _ => None,
                        }
                    }
                    _ => None,
                });
                return Some(match n {
                    Some(n) if n > 0 => Val::Group(n),
                    _ => Val::Unknown("a tiled_partition of run-time size".into()),
                });
            }
            _ => {}
        }
        let (object, method) = name.rsplit_once('.')?;
        // `cg::this_grid().thread_rank()`: the group made where it is asked
        let g = match object.rsplit("::").next().unwrap_or(object) {
            "this_grid()" => -1,
            "this_thread_block()" => 0,
            _ => match self.lookup(object, span) {
                Val::Group(g) => g,
                _ => return None,
            },
        };
        let d = |v| sym::var(v);
        let linear = linear3(
            [Var::Tid(0), Var::Tid(1), Var::Tid(2)],
            [Var::BlockDim(0), Var::BlockDim(1)],
        );
        let threads = sym::mul(
            d(Var::BlockDim(0)),
            sym::mul(d(Var::BlockDim(1)), d(Var::BlockDim(2))),
        );
        let block_linear = linear3(
            [Var::BlockIdx(0), Var::BlockIdx(1), Var::BlockIdx(2)],
            [Var::GridDim(0), Var::GridDim(1)],
        );
        let int = |s| Some(Val::Int(s));
        match (method, g) {
            ("thread_rank", 0) => int(linear),
            ("thread_rank", -1) => int(sym::add(sym::mul(block_linear, threads), linear)),
            ("thread_rank", n) => int(sym::binop(BinOp::Rem, linear, sym::konst(n))),
            ("meta_group_rank", n) if n > 0 => int(sym::binop(BinOp::Div, linear, sym::konst(n))),
            ("meta_group_size", n) if n > 0 => int(sym::binop(BinOp::Div, threads, sym::konst(n))),
            ("size" | "num_threads", 0) => int(threads),
            ("size" | "num_threads", -1) => {
                let blocks = sym::mul(
                    d(Var::GridDim(0)),
                    sym::mul(d(Var::GridDim(1)), d(Var::GridDim(2))),
                );
                int(sym::mul(blocks, threads))
            }
            ("size" | "num_threads", n) if n > 0 => int(sym::konst(n)),
            ("block_rank", -1) => int(block_linear),
            ("num_blocks", -1) => int(sym::mul(
                d(Var::GridDim(0)),
                sym::mul(d(Var::GridDim(1)), d(Var::GridDim(2))),
            )),
            ("block_index" | "group_index", _) => Some(self.lookup("blockIdx", span)),
            ("dim_blocks", -1) => Some(self.lookup("gridDim", span)),
            ("thread_index", _) => Some(self.lookup("threadIdx", span)),
            ("group_dim" | "dim_threads", _) => Some(self.lookup("blockDim", span)),
            // a barrier: what other threads wrote is visible, nothing is known held
            ("sync", _) => {
                self.in_registers.clear();
                self.clobbers += 1;
                Some(Val::Unknown("void".into()))
            }
            (m, _)
                if m.starts_with("shfl")
                    || m.starts_with("ballot")
                    || m.starts_with("any")
                    || m.starts_with("all") =>
            {
                Some(Val::Int(sym::data(format!("result of `{name}`"))))
            }
            _ => None,
        }
    }
}

/// Row-major linear index `x + dx * (y + dy * z)`: a thread's rank in its block, a block's in
/// the grid.
fn linear3(xyz: [Var; 3], dims: [Var; 2]) -> Sym {
    let v = sym::var;
    sym::add(
        v(xyz[0]),
        sym::mul(
            v(dims[0]),
            sym::add(v(xyz[1]), sym::mul(v(dims[1]), v(xyz[2]))),
        ),
    )
}

/// Warp-wide intrinsics (`__shfl_*`, `__ballot_sync`, `__any_sync`, `__all_sync`): their results
/// are values other lanes held, data as far as an address is concerned. But
/// `__shfl_sync(mask, v, src)` over the whole warp with `src` the same in every lane hands
/// every lane one value: `v` itself when `v` is the same in every lane, else one unknown value
/// for the warp (a lane's page number broadcast from lane 0, `page_number * per_page + lane`,
/// is a warp's contiguous run, not a gather).
pub(super) fn warp_intrinsic(name: &str, args: &[Val], span: Span) -> Option<Val> {
    if name == "__shfl_sync" && matches!(args.len(), 3 | 4) {
        let whole_warp = args.get(3).is_none_or(|w| w.sym().as_const() == Some(32));
        let src = args[2].sym();
        if whole_warp && !src.lane_varying && !src.data && src.unknown_reason().is_none() {
            let v = args[1].sym();
            if !v.lane_varying && v.unknown_reason().is_none() {
                return Some(Val::Int(v));
            }
            // one value for the warp, its own for each call site
            let site = sym::konst((1 << 40) + i64::from(span.start));
            return Some(Val::Int(sym::loaded(
                site,
                "a value broadcast by `__shfl_sync`",
            )));
        }
    }
    // a vote is the warp's: every lane it reaches gets the same value (one for each call
    // site, as a broadcast is)
    if name.starts_with("__ballot") || name.starts_with("__any") || name.starts_with("__all") {
        let site = sym::konst((1 << 40) + i64::from(span.start));
        let what = if name.starts_with("__ballot") {
            WARP_VOTE
        } else {
            "the warp's vote"
        };
        return Some(Val::Int(sym::loaded(site, what)));
    }
    name.starts_with("__shfl")
        .then(|| Val::Int(sym::data(format!("result of `{name}`"))))
}

/// What a `__ballot_sync` result is said to be read from: [`lane_rank`] recognises it.
pub(super) const WARP_VOTE: &str = "the warp's vote of `__ballot_sync`";

/// `__popc(vote & lanemask_lt)` (a warp's stream compaction: `out[base + __popc(ballot &
/// ((1 << lane) - 1))]`): the lane's rank among the lanes that voted, taken as if every lane
/// did, so the voting lanes' places are the run they write, `__popc` of the mask alone.
pub(super) fn lane_rank(arg: &sym::Sym) -> Option<sym::Sym> {
    let sym::SymKind::Bin(sym::Op::Bin(cudalint_syntax::BinOp::BitAnd), a, b) = &arg.kind else {
        return None;
    };
    let is_vote = |s: &sym::Sym| matches!(&s.kind, sym::SymKind::Loaded(_, w) if &**w == WARP_VOTE);
    let mask = match (is_vote(a), is_vote(b)) {
        (true, false) => b,
        (false, true) => a,
        _ => return None,
    };
    (mask.lane_varying && !mask.data && mask.unknown_reason().is_none()).then(|| mask.clone())
}
