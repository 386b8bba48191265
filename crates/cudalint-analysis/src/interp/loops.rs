//! Loops: the induction variables a `for` or `while` steps (`+=`, `<<=`, `*= 2^k`), bound to
//! `init + iteration * step` so the cost model can sample later iterations, and trip counts
//! when bound, start and step are constants. The body itself runs through `stmt.rs`.

use super::{KernelRun, LoopBounds, LoopInfo, Val};
use crate::sym::{self, UnaryOp, Var};
use cudalint_syntax::{BinOp, Expr, ExprKind, Span, Stmt, UnOp};

impl KernelRun<'_> {
    pub(super) fn run_loop(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        update: Option<&Expr>,
        mut steps: Vec<Induction>,
        at: Span,
    ) {
        for s in body {
            if let Stmt::Expr(e) = s {
                collect_inductions(e, &mut steps);
            }
        }
        let mut carried = std::collections::BTreeSet::new();
        super::launch::modified_before(body, u32::MAX, true, &mut carried);
        if let Some(u) = update {
            super::launch::modified_before(&[Stmt::Expr(u.clone())], u32::MAX, true, &mut carried);
        }
        for ind in &steps {
            carried.remove(&ind.name);
        }
        // a local the body declares starts afresh each iteration: what one iteration set it
        // to, the next does not see
        for s in body {
            if let Stmt::Decl(d) = s {
                carried.remove(d.name.as_str());
            }
        }
        let id = self.loops.len() as u32;
        let at = self.loc(at);
        self.loops.push(LoopInfo {
            trip: None,
            at,
            bounds: None,
            at_most: false,
        });
        let iter = sym::var(Var::LoopIter(id));
        let mut trip_inputs = None;
        for ind in &steps {
            // (or a member of the object a constructor sets up: `for (l_ = 0;; ++l_)` in
            // MNN's `DivModFast(int d)`, whose `l_` was taken as 0 after the loop)
            let member = || {
                let (key, ..) = self.this_member(&ind.name)?;
                self.field_value(key, &ind.name)
            };
            let Some(v0) = self.lookup_local(&ind.name).cloned().or_else(member) else {
                continue;
            };
            let step = match &ind.step {
                StepKind::Add(e, neg) => {
                    let s = self.pure_rvalue(e).sym();
                    if *neg {
                        sym::un(UnaryOp::Neg, s)
                    } else {
                        s
                    }
                }
                StepKind::Shift(..) => sym::konst(0),
            };
            if step.lane_varying || step.data {
                continue;
            }
            // a step the body computes (`warp_offset += __popc(poll)`, `poll` declared in the
            // body): the first iteration starts where the loop does, later ones are the body's
            // doing, as for a data-dependent step
            if step.unknown_reason().is_some() {
                carried.insert(ind.name.clone());
                continue;
            }
            let new = match (&ind.step, v0.clone()) {
                (StepKind::Add(..), Val::Int(s0)) => {
                    if trip_inputs.is_none() {
                        trip_inputs = Some((ind.name.clone(), s0.clone(), step.clone(), None));
                    }
                    Val::Int(sym::add(s0, sym::mul(iter.clone(), step)))
                }
                (StepKind::Add(..), Val::Ptr(mut p)) => {
                    let size = self.layout_of(&p.elem).map(|l| l.size).unwrap_or(4);
                    p.offset = sym::add(
                        p.offset,
                        sym::mul(sym::mul(iter.clone(), step), sym::konst(size)),
                    );
                    Val::Ptr(p)
                }
                (StepKind::Shift(op, k), Val::Int(s0)) => {
                    if trip_inputs.is_none() {
                        trip_inputs =
                            Some((ind.name.clone(), s0.clone(), sym::konst(0), Some((*op, *k))));
                    }
                    Val::Int(sym::binop(*op, s0, sym::mul(iter.clone(), sym::konst(*k))))
                }
                _ => continue,
            };
            self.assign_local(&ind.name, new);
        }
        if let (Some(c), Some((name, s0, step, shift))) = (cond, trip_inputs) {
            if let Some((cmp, bound, at_most)) = compared_to(c, &name) {
                let bound = self.pure_rvalue(bound).sym();
                let info = &mut self.loops[id as usize];
                info.at_most = at_most;
                if let (Some(s), Some(b)) = (s0.as_const(), bound.as_const()) {
                    info.trip = trip_count(cmp, s, b, step.as_const(), shift);
                }
                info.bounds = Some(LoopBounds {
                    start: s0,
                    bound,
                    step,
                    cmp,
                    shift,
                });
            }
        }
        let saved = self.mask.clone();
        // iterations after the first do not see the values held before the loop; they see
        // what the condition just loaded (`while (gid_[0] < m) { ... input[gid_[0] * b] }`)
        let held = std::mem::take(&mut self.in_registers);
        self.loop_stack.push(id);
        let (first, clobbers) = (self.accesses.len(), self.clobbers);
        self.carried.push(carried);
        // the condition is read before every iteration and once more to leave: its loads run
        // with the loop's, one more time than the body's (`while (pidx >= 2 && h[p[pidx]] >
        // h[p[pidx - 1]])`, 5.3 loads an entry where its body ran 4.3 times, on an H200)
        if let Some(c) = cond {
            let outer = self.loop_condition.replace(id);
            let c = self.rvalue(c).sym();
            self.loop_condition = outer;
            if c.lane_varying && !c.data && c.unknown_reason().is_none() {
                self.mask = sym::and(saved.clone(), c);
            }
        }
        self.stmts(body);
        if let Some(u) = update {
            self.loop_update(u);
        }
        self.carried.pop();
        self.in_registers.clear();
        if self.clobbers == clobbers {
            let body_mask = self.mask.clone();
            self.keep_in_registers(id, first, &held, &body_mask);
            self.unrolled_registers(id, first, held);
        }
        self.loop_stack.pop();
        self.mask = saved;
    }
}

impl KernelRun<'_> {
    /// Whether an expression reads a variable an enclosing loop assigns.
    pub(super) fn reads_carried(&self, e: &Expr) -> bool {
        if self.carried.iter().all(|c| c.is_empty()) {
            return false;
        }
        let mut names = std::collections::HashSet::new();
        super::launch::names_read(e, &mut names, 0);
        names
            .iter()
            .any(|n| self.carried.iter().any(|c| c.contains(*n)))
    }

    /// What a `for`'s update does besides stepping its inductions (bound above): the loads
    /// and calls of `e = next[e]`, `t = gpu_next(&p)` run after every iteration's body.
    fn loop_update(&mut self, u: &Expr) {
        if let ExprKind::Comma(a, b) = &u.kind {
            self.loop_update(a);
            self.loop_update(b);
            return;
        }
        let mut stepped = Vec::new();
        collect_inductions(u, &mut stepped);
        if stepped.is_empty() {
            self.rvalue(u);
        }
    }

    /// After a loop nvcc unrolls whole (a few iterations, counted by constants), what each
    /// iteration loaded or stored is still in registers, as after straight-line code (svox2's
    /// `SingleRaySpec::set` stores `origin[i]` and `dir[i]` for i < 3 into the block's shared
    /// rays; the code after it reads them and nvcc issues no load). The view before the loop
    /// is replayed through each iteration's accesses, in order.
    fn unrolled_registers(&mut self, id: u32, first: usize, held: Vec<super::Held>) {
        const MAX_UNROLLED: i64 = 8;
        let Some(trip) = self.loops[id as usize]
            .trip
            .filter(|t| (1..=MAX_UNROLLED).contains(t) && !self.loops[id as usize].at_most)
        else {
            return;
        };
        let body: Vec<usize> = (first..self.accesses.len())
            .filter(|&i| self.accesses[i].loops.last() == Some(&id))
            .collect();
        let var = Var::LoopIter(id);
        let mut view = held;
        // loads every iteration of which finds its value held (`ray.dir[i] *= 2` after the
        // loop that stored `dir[i]`): nvcc issues none of them
        let mut found: Vec<bool> = vec![true; body.len()];
        for k in 0..trip {
            for (n, &i) in body.iter().enumerate() {
                let a = &self.accesses[i];
                let addr = sym::substitute(&a.addr, var, k);
                if a.volatile || a.loop_carried || addr.data || addr.unknown_reason().is_some() {
                    found[n] = false;
                    // a store the view cannot place may land on anything it holds
                    if a.op != super::AccessOp::Load {
                        view.retain(|e| !super::place::unplaced_store_reaches(e, a.space, &a.base));
                    }
                    continue;
                }
                if a.op != super::AccessOp::Load {
                    found[n] = false;
                    let at = sym::split_constant(&addr);
                    view.retain(|e| {
                        !super::place::store_reaches(
                            e,
                            a.space,
                            &a.base,
                            &at,
                            a.bytes,
                            &self.restrict,
                        )
                    });
                    if a.op == super::AccessOp::Atomic {
                        continue;
                    }
                }
                let mask = sym::substitute(&a.mask, var, k);
                let same = |e: &super::Held| {
                    e.0 == a.space && *e.1 == *a.base && e.3 == a.bytes && sym::same(&e.2, &addr)
                };
                let held_here = view.iter().any(|e| same(e) && sym::within(&mask, &e.4));
                found[n] &= held_here;
                if !view.iter().any(same) {
                    view.push((a.space, a.base.as_str().into(), addr, a.bytes, mask));
                }
            }
        }
        for (n, &i) in body.iter().enumerate().rev() {
            if found[n] {
                self.accesses.remove(i);
            }
        }
        let excess = view.len().saturating_sub(super::place::MAX_IN_REGISTERS);
        view.drain(..excess);
        self.in_registers = view;
    }

    /// A load in a loop whose address the loop does not move, stored back later in the body
    /// with nothing else in it writing where it may be (`c[i] += a[i * n + k] * b[k * n + j]`,
    /// `sdata[tid] += in[idx]` in a grid-stride loop), is kept in a register by nvcc: the
    /// next iteration reads what this one stored. It is not issued in the loop at all: never,
    /// when the thread held the value before the loop (`c[i] = 0;` above it), else once, before
    /// it (measured on an H100: CoffeeBeforeArch's matrix multiply issues no load of `c`). The
    /// store, too, goes after the loop when nothing else in the body may read the place.
    fn keep_in_registers(
        &mut self,
        id: u32,
        first: usize,
        held: &[super::Held],
        body_mask: &sym::Sym,
    ) {
        let body = &self.accesses[first..];
        let same_place = |a: &super::RawAccess, b: &super::RawAccess| {
            a.space == b.space
                && a.base == b.base
                && a.bytes == b.bytes
                && sym::same(&a.addr, &b.addr)
        };
        let mut kept: Vec<(usize, bool)> = Vec::new();
        let mut sunk: Vec<usize> = Vec::new();
        let mut stored: Vec<usize> = Vec::new();
        for (i, load) in body.iter().enumerate() {
            // a load under a condition of its own in the body (`if (tid < d) g[tid] += ...` of a
            // halving loop) is issued where the condition holds: nvcc does not carry it over
            if load.op != super::AccessOp::Load
                || load.loop_carried
                || !std::rc::Rc::ptr_eq(&load.mask, body_mask)
                || !matches!(load.space, crate::Space::Global | crate::Space::Shared)
                || load.addr.data
                || load.addr.unknown_reason().is_some()
            {
                continue;
            }
            let mut moves = false;
            load.addr
                .visit_vars(&mut |v| moves |= matches!(v, Var::LoopIter(l) if l >= id));
            if moves {
                continue;
            }
            let stored_back = body[i + 1..].iter().any(|s| {
                s.op == super::AccessOp::Store
                    && same_place(load, s)
                    && (std::rc::Rc::ptr_eq(&load.mask, &s.mask)
                        || sym::within(&load.mask, &s.mask))
            });
            // global pointers may alias each other unless one is `__restrict__`; shared arrays
            // do not
            let restrict = &self.restrict;
            let may_alias = |s: &super::RawAccess| {
                s.base == load.base
                    || load.space == crate::Space::Global
                        && !restrict.iter().any(|r| **r == *s.base || **r == *load.base)
            };
            let written_elsewhere = body.iter().any(|s| {
                s.op != super::AccessOp::Load
                    && s.space == load.space
                    && !same_place(load, s)
                    && may_alias(s)
            });
            // a load nothing in the loop writes is hoisted out of it (`model_param[0]` read
            // in every iteration of a loop that stores nothing)
            let written = body
                .iter()
                .any(|s| s.op != super::AccessOp::Load && s.space == load.space && may_alias(s));
            if written_elsewhere || (!stored_back && written) {
                continue;
            }
            let before_loop = held.iter().any(|(space, base, addr, bytes, _)| {
                *space == load.space
                    && **base == *load.base
                    && *bytes == load.bytes
                    && sym::same(addr, &load.addr)
            });
            kept.push((first + i, before_loop));
            if stored_back {
                stored.push(first + i);
            }
            // and the store goes after the loop when nothing else in the body may read it
            // (shared arrays do not alias each other; any global load may be the same memory)
            let read_elsewhere = body.iter().any(|l| {
                l.op == super::AccessOp::Load
                    && l.space == load.space
                    && !same_place(load, l)
                    && (load.space == crate::Space::Global || l.base == load.base)
            });
            if !read_elsewhere {
                sunk.extend(
                    (i + 1..body.len())
                        .filter(|&j| {
                            body[j].op == super::AccessOp::Store && same_place(load, &body[j])
                        })
                        .map(|j| first + j),
                );
            }
        }
        for &at in &sunk {
            let a = &mut self.accesses[at];
            a.loops.retain(|&l| l < id);
            a.in_condition = false;
            a.assumptions.push(
                "issued once after the loop: nvcc keeps the value in a register through it".into(),
            );
        }
        let head = self.loops[id as usize].at;
        for &(at, before_loop) in kept.iter().rev() {
            if before_loop {
                self.accesses.remove(at);
            } else {
                let a = &mut self.accesses[at];
                a.loops.retain(|&l| l < id);
                a.in_condition = false;
                a.issued_at = Some(head);
                a.assumptions.push(
                    if stored.contains(&at) {
                        "issued once before the loop: nvcc keeps the value in a register, each \
                     iteration reading what the last one stored"
                    } else {
                        "issued once before the loop: nothing in the loop writes it"
                    }
                    .into(),
                );
            }
        }
    }
}

pub(super) struct Induction {
    name: String,
    step: StepKind,
}

pub(super) enum StepKind {
    /// `+= e` (or `-= e` when the flag is set)
    Add(Expr, bool),
    /// `<<= k` / `>>= k`, and `*= 2^k` / `/= 2^k`: shift by k bits each iteration
    Shift(BinOp, i64),
}

pub(super) fn collect_inductions(e: &Expr, out: &mut Vec<Induction>) {
    let one = || Expr {
        kind: ExprKind::Int(1),
        span: e.span,
    };
    match &e.kind {
        ExprKind::Comma(a, b) => {
            collect_inductions(a, out);
            collect_inductions(b, out);
        }
        ExprKind::Unary { op, arg } => {
            if let ExprKind::Ident(n) = &arg.kind {
                let neg = match op {
                    UnOp::PreInc | UnOp::PostInc => false,
                    UnOp::PreDec | UnOp::PostDec => true,
                    _ => return,
                };
                push_induction(out, n, StepKind::Add(one(), neg));
            }
        }
        ExprKind::Assign { op, lhs, rhs } => {
            let ExprKind::Ident(n) = &lhs.kind else {
                return;
            };
            let c = match rhs.kind {
                ExprKind::Int(v) => Some(v),
                _ => None,
            };
            match (op, c) {
                (Some(BinOp::Add), _) => {
                    push_induction(out, n, StepKind::Add((**rhs).clone(), false))
                }
                (Some(BinOp::Sub), _) => {
                    push_induction(out, n, StepKind::Add((**rhs).clone(), true))
                }
                (Some(BinOp::Shl), Some(k)) if (1..32).contains(&k) => {
                    push_induction(out, n, StepKind::Shift(BinOp::Shl, k))
                }
                (Some(BinOp::Shr), Some(k)) if (1..32).contains(&k) => {
                    push_induction(out, n, StepKind::Shift(BinOp::Shr, k))
                }
                (Some(BinOp::Mul), Some(c)) if c > 1 && c & (c - 1) == 0 => push_induction(
                    out,
                    n,
                    StepKind::Shift(BinOp::Shl, c.trailing_zeros() as i64),
                ),
                (Some(BinOp::Div), Some(c)) if c > 1 && c & (c - 1) == 0 => push_induction(
                    out,
                    n,
                    StepKind::Shift(BinOp::Shr, c.trailing_zeros() as i64),
                ),
                (None, _) => {
                    // `i = i + step`
                    if let ExprKind::Binary {
                        op: BinOp::Add,
                        lhs: l,
                        rhs: r,
                    } = &rhs.kind
                    {
                        if matches!(&l.kind, ExprKind::Ident(x) if x == n) {
                            push_induction(out, n, StepKind::Add((**r).clone(), false));
                        }
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

fn push_induction(out: &mut Vec<Induction>, name: &str, step: StepKind) {
    if !out.iter().any(|i| i.name == name) {
        out.push(Induction {
            name: name.to_string(),
            step,
        });
    }
}

/// `v <cmp> bound` for the induction variable `v`: the comparison and the bound.
fn compared_to<'e>(cond: &'e Expr, name: &str) -> Option<(BinOp, &'e Expr, bool)> {
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
        return None;
    };
    // `i < 4 && in[i] > 0.f`: the count bounds the loop, which the data may end sooner
    if *op == BinOp::And {
        let (cmp, bound, _) = compared_to(lhs, name).or_else(|| compared_to(rhs, name))?;
        return Some((cmp, bound, true));
    }
    if !matches!(&lhs.kind, ExprKind::Ident(n) if n == name) {
        return None;
    }
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Ne
    )
    .then_some((*op, &**rhs, false))
}

/// Trip count of `for (v = v0; v <cmp> bound; v += step)` (or a shift each iteration), up to
/// 4096 iterations; `None` past that or when the loop never ends.
pub fn trip_count(
    cmp: BinOp,
    v0: i64,
    bound: i64,
    step: Option<i64>,
    shift: Option<(BinOp, i64)>,
) -> Option<i64> {
    let mut v = v0;
    let mut n = 0i64;
    while n < 4096 {
        let holds = match cmp {
            BinOp::Lt => v < bound,
            BinOp::Le => v <= bound,
            BinOp::Gt => v > bound,
            BinOp::Ge => v >= bound,
            BinOp::Ne => v != bound,
            _ => return None,
        };
        if !holds {
            return Some(n);
        }
        n += 1;
        if let Some((op, k)) = shift {
            let next = if op == BinOp::Shl {
                v.checked_shl(k as u32)?
            } else {
                v >> k
            };
            if next == v {
                return None;
            }
            v = next;
            continue;
        }
        let s = step?;
        if s == 0 {
            return None;
        }
        v += s;
    }
    None
}
