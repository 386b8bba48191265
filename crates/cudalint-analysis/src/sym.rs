//! Symbolic integer values: expressions over lane-varying symbols (threadIdx, lane id) and
//! warp-uniform ones (blockIdx, blockDim, runtime values, loop iterations). Nodes are shared
//! (`Rc`) so substituting a definition many times does not copy it.

use cudalint_syntax::BinOp;
use std::rc::Rc;

/// Past this many nodes (counted as a tree) an expression becomes `Unknown`: evaluation cost
/// is bounded by it.
pub const MAX_SYM_SIZE: u32 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    Tid(u8),
    LaneId,
    BlockIdx(u8),
    BlockDim(u8),
    GridDim(u8),
    /// A warp-uniform value the analysis cannot see (kernel parameter, template argument,
    /// value loaded from a uniform address): index into the kernel's runtime table.
    Runtime(u32),
    /// Iteration number of a loop: index into the kernel's loop table.
    LoopIter(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
    BitNot,
    /// `__clz` and `__clzll`: leading zeros of the 32- or 64-bit value
    Clz(u8),
    /// `__popc`, `__popcll`
    Popc(u8),
    /// `__ffs`, `__ffsll`: 1 + the lowest set bit's position, 0 for 0
    Ffs(u8),
    /// `__brev`, `__brevll`
    Brev(u8),
}

impl UnaryOp {
    pub fn apply(self, v: i64) -> i64 {
        let bits = |w: u8| if w == 32 { v as u32 as u64 } else { v as u64 };
        match self {
            UnaryOp::Neg => v.wrapping_neg(),
            UnaryOp::Not => (v == 0) as i64,
            UnaryOp::BitNot => !v,
            UnaryOp::Clz(w) => (bits(w).leading_zeros() - (64 - w as u32)) as i64,
            UnaryOp::Popc(w) => bits(w).count_ones() as i64,
            UnaryOp::Ffs(w) => match bits(w) {
                0 => 0,
                x => x.trailing_zeros() as i64 + 1,
            },
            UnaryOp::Brev(32) => (v as u32).reverse_bits() as i64,
            UnaryOp::Brev(_) => (v as u64).reverse_bits() as i64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Bin(BinOp),
    Min,
    Max,
}

#[derive(Debug)]
pub enum SymKind {
    Const(i64),
    Var(Var),
    Un(UnaryOp, Sym),
    Bin(Op, Sym, Sym),
    Select(Sym, Sym, Sym),
    /// A value read from memory at a lane-varying address: differs per lane, unknowably.
    Data(Rc<str>),
    /// A value read from memory at an address that depends on the thread index but may be
    /// the same for every lane of a warp (`csrPtr[row]` with `row` from threadIdx.z in an
    /// 8x4x8 block): where the warp's lanes read one address, one value, the same for all of
    /// them; where they do not, data as `Data` is.
    Loaded(Sym, Rc<str>),
    Unknown(Rc<str>),
}

#[derive(Debug)]
pub struct SymNode {
    pub kind: SymKind,
    pub size: u32,
    pub lane_varying: bool,
    pub data: bool,
    /// It holds a floating-point value (a `Loaded` or `Data` of [`FLOATING`] not under another
    /// load's address), kept as a flag: every arithmetic step asks.
    pub floating: bool,
}

pub type Sym = Rc<SymNode>;

/// What a floating-point value is said to be read from (see `interp::expr::floating`).
pub const FLOATING: &str = "floating-point arithmetic";

/// What an integer made from a floating-point value (`(int)x`, `floorf(x)`, `int i = x;`) is
/// said to be read from: integer arithmetic again from there on (`floorf(x0) + threadIdx.x`
/// is a uniform start and a lane's offset, as a runtime integer plus a lane is).
pub const ROUNDED: &str = "a floating-point value rounded to an integer";

fn node(kind: SymKind) -> Sym {
    let (size, lane, data) = match &kind {
        SymKind::Const(_) | SymKind::Unknown(_) => (1, false, false),
        SymKind::Var(v) => (1, matches!(v, Var::Tid(_) | Var::LaneId), false),
        SymKind::Data(_) => (1, true, true),
        // (a floating-point value computed from what every lane holds alike, a literal or
        // a parameter, is the same in every lane: only one made from lane values differs)
        SymKind::Loaded(a, what) if &**what == FLOATING || &**what == ROUNDED => {
            (1 + a.size, a.lane_varying, true)
        }
        SymKind::Loaded(a, _) => (1 + a.size, true, true),
        SymKind::Un(_, a) => (1 + a.size, a.lane_varying, a.data),
        SymKind::Bin(_, a, b) => (
            1 + a.size + b.size,
            a.lane_varying || b.lane_varying,
            a.data || b.data,
        ),
        SymKind::Select(c, a, b) => (
            1 + c.size + a.size + b.size,
            c.lane_varying || a.lane_varying || b.lane_varying,
            c.data || a.data || b.data,
        ),
    };
    let floating = match &kind {
        SymKind::Loaded(_, what) | SymKind::Data(what) => &**what == FLOATING,
        SymKind::Un(_, a) => a.floating,
        SymKind::Bin(_, a, b) => a.floating || b.floating,
        SymKind::Select(c, a, b) => c.floating || a.floating || b.floating,
        SymKind::Const(_) | SymKind::Var(_) | SymKind::Unknown(_) => false,
    };
    if size > MAX_SYM_SIZE {
        // made of values read per lane (a hash's rounds over its state: ccminer's lookups),
        // it is one of them: it differs per lane as they do, unknowably
        if data && lane {
            return Rc::new(SymNode {
                kind: SymKind::Data("a value computed from memory, too large to follow".into()),
                size: 1,
                lane_varying: true,
                data: true,
                floating: false,
            });
        }
        return unknown("index expression too large to evaluate");
    }
    Rc::new(SymNode {
        kind,
        size,
        lane_varying: lane,
        data,
        floating,
    })
}

/// Structural equality (the same expression built twice), bounded by the size cap.
pub fn same(a: &Sym, b: &Sym) -> bool {
    if Rc::ptr_eq(a, b) {
        return true;
    }
    if a.size != b.size {
        return false;
    }
    match (&a.kind, &b.kind) {
        (SymKind::Const(x), SymKind::Const(y)) => x == y,
        (SymKind::Var(x), SymKind::Var(y)) => x == y,
        (SymKind::Un(o, x), SymKind::Un(p, y)) => o == p && same(x, y),
        (SymKind::Bin(o, x1, x2), SymKind::Bin(p, y1, y2)) => {
            o == p && same(x1, y1) && same(x2, y2)
        }
        (SymKind::Select(c, x1, x2), SymKind::Select(d, y1, y2)) => {
            same(c, d) && same(x1, y1) && same(x2, y2)
        }
        _ => false,
    }
}

/// A number every value of the expression is a multiple of, as a compiler can prove it from the
/// expression alone (0: the expression is 0). `8 * t + 16` is a multiple of 8; `x + (x >> k)`
/// of nothing but 1, whatever values x takes in a sampled warp.
pub fn known_multiple(s: &Sym) -> i64 {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a.abs()
        } else {
            gcd(b, a % b)
        }
    }
    const CAP: i64 = 1 << 20;
    match &s.kind {
        SymKind::Const(c) => c.abs().min(CAP),
        SymKind::Var(_) | SymKind::Data(_) | SymKind::Loaded(..) | SymKind::Unknown(_) => 1,
        SymKind::Un(UnaryOp::Neg, a) => known_multiple(a),
        SymKind::Un(..) => 1,
        SymKind::Select(_, a, b) => gcd(known_multiple(a), known_multiple(b)),
        SymKind::Bin(op, a, b) => {
            let (ma, mb) = (known_multiple(a), known_multiple(b));
            match op {
                Op::Bin(BinOp::Add | BinOp::Sub) | Op::Min | Op::Max => gcd(ma, mb),
                Op::Bin(BinOp::Mul) => {
                    if ma == 0 || mb == 0 {
                        0
                    } else {
                        ma.saturating_mul(mb).min(CAP)
                    }
                }
                Op::Bin(BinOp::Shl) => match b.as_const() {
                    Some(k) if (0..31).contains(&k) => {
                        if ma == 0 {
                            0
                        } else {
                            (ma << k).min(CAP)
                        }
                    }
                    _ => 1,
                },
                // `x & ~15` is a multiple of 16, whatever x
                Op::Bin(BinOp::BitAnd) => match (a.as_const(), b.as_const()) {
                    (_, Some(c)) | (Some(c), _) if c != 0 => (c & c.wrapping_neg()).clamp(1, CAP),
                    _ => 1,
                },
                _ => 1,
            }
        }
    }
}

pub fn konst(v: i64) -> Sym {
    node(SymKind::Const(v))
}
pub fn var(v: Var) -> Sym {
    node(SymKind::Var(v))
}
pub fn unknown(reason: impl Into<Rc<str>>) -> Sym {
    Rc::new(SymNode {
        kind: SymKind::Unknown(reason.into()),
        size: 1,
        lane_varying: false,
        data: false,
        floating: false,
    })
}
pub fn data(what: impl Into<Rc<str>>) -> Sym {
    node(SymKind::Data(what.into()))
}

/// The value loaded from `addr` (see [`SymKind::Loaded`]).
pub fn loaded(addr: Sym, what: impl Into<Rc<str>>) -> Sym {
    node(SymKind::Loaded(addr, what.into()))
}

impl SymNode {
    pub fn as_const(&self) -> Option<i64> {
        match self.kind {
            SymKind::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The value with every unknown a `min` bounds taken at its bound: `min(n, 128)` is 128
    /// and `128 / min(n, 128)` is 1. A block shape sized to the problem (llama.cpp's
    /// `block.x = min(ne0 / 2, 128); block.y = min(ne1, 128 / block.x)`) is the one a large
    /// problem launches with.
    pub fn bounded_value(&self) -> Option<i64> {
        match &self.kind {
            SymKind::Const(v) => Some(*v),
            SymKind::Bin(Op::Min, a, b) => match (a.bounded_value(), b.bounded_value()) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
            SymKind::Bin(op, a, b) => apply_const(*op, a.bounded_value()?, b.bounded_value()?),
            SymKind::Un(op, a) => Some(op.apply(a.bounded_value()?)),
            _ => None,
        }
    }

    /// The first reason this value cannot be evaluated, if any part of it is unknown.
    pub fn unknown_reason(&self) -> Option<Rc<str>> {
        match &self.kind {
            SymKind::Unknown(r) => Some(r.clone()),
            SymKind::Un(_, a) => a.unknown_reason(),
            SymKind::Bin(_, a, b) => a.unknown_reason().or_else(|| b.unknown_reason()),
            SymKind::Select(c, a, b) => c
                .unknown_reason()
                .or_else(|| a.unknown_reason())
                .or_else(|| b.unknown_reason()),
            _ => None,
        }
    }

    pub fn data_source(&self) -> Option<Rc<str>> {
        if !self.data {
            return None;
        }
        match &self.kind {
            SymKind::Data(r) | SymKind::Loaded(_, r) => Some(r.clone()),
            SymKind::Un(_, a) => a.data_source(),
            SymKind::Bin(_, a, b) => a.data_source().or_else(|| b.data_source()),
            SymKind::Select(c, a, b) => c
                .data_source()
                .or_else(|| a.data_source())
                .or_else(|| b.data_source()),
            _ => None,
        }
    }

    /// Whether the value is affine in its variables (sums, differences, products, shifts left
    /// by constants): then moving to another warp or iteration only translates the addresses.
    pub fn is_affine(&self) -> bool {
        match &self.kind {
            SymKind::Const(_) | SymKind::Var(_) => true,
            SymKind::Un(UnaryOp::Neg, a) => a.is_affine(),
            SymKind::Bin(Op::Bin(BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                a.is_affine() && b.is_affine()
            }
            SymKind::Bin(Op::Bin(BinOp::Shl), a, b) => a.is_affine() && b.as_const().is_some(),
            _ => false,
        }
    }

    /// Calls `f` on every variable in the expression.
    pub fn visit_vars(&self, f: &mut impl FnMut(Var)) {
        match &self.kind {
            SymKind::Var(v) => f(*v),
            SymKind::Un(_, a) => a.visit_vars(f),
            SymKind::Bin(_, a, b) => {
                a.visit_vars(f);
                b.visit_vars(f)
            }
            SymKind::Select(c, a, b) => {
                c.visit_vars(f);
                a.visit_vars(f);
                b.visit_vars(f)
            }
            _ => {}
        }
    }
}

pub fn apply_const(op: Op, a: i64, b: i64) -> Option<i64> {
    use BinOp::*;
    Some(match op {
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::Bin(op) => match op {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div => a.checked_div(b)?,
            Rem => a.checked_rem(b)?,
            Shl => a.wrapping_shl((b & 63) as u32),
            Shr => a.wrapping_shr((b & 63) as u32),
            BitAnd => a & b,
            BitOr => a | b,
            BitXor => a ^ b,
            And => ((a != 0) && (b != 0)) as i64,
            Or => ((a != 0) || (b != 0)) as i64,
            Lt => (a < b) as i64,
            Le => (a <= b) as i64,
            Gt => (a > b) as i64,
            Ge => (a >= b) as i64,
            Eq => (a == b) as i64,
            Ne => (a != b) as i64,
        },
    })
}

/// Builds `a op b`, folding constants and the identities that keep indices small.
pub fn bin(op: Op, a: Sym, b: Sym) -> Sym {
    if let SymKind::Unknown(_) = a.kind {
        return a;
    }
    if let SymKind::Unknown(_) = b.kind {
        return b;
    }
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        return match apply_const(op, x, y) {
            Some(v) => konst(v),
            None => unknown("division by zero"),
        };
    }
    use BinOp::*;
    match (op, a.as_const(), b.as_const()) {
        (Op::Bin(Add), Some(0), _) => return b,
        (Op::Bin(Add | Sub | Shl | Shr | BitOr | BitXor), _, Some(0)) => return a,
        (Op::Bin(Mul), Some(1), _) => return b,
        (Op::Bin(Mul | Div), _, Some(1)) => return a,
        (Op::Bin(Mul | BitAnd), Some(0), _) | (Op::Bin(Mul | BitAnd), _, Some(0)) => {
            return konst(0)
        }
        _ => {}
    }
    node(SymKind::Bin(op, a, b))
}

pub fn binop(op: BinOp, a: Sym, b: Sym) -> Sym {
    bin(Op::Bin(op), a, b)
}

pub fn un(op: UnaryOp, a: Sym) -> Sym {
    if let SymKind::Unknown(_) = a.kind {
        return a;
    }
    if let Some(v) = a.as_const() {
        return konst(op.apply(v));
    }
    node(SymKind::Un(op, a))
}

pub fn select(c: Sym, a: Sym, b: Sym) -> Sym {
    if let Some(v) = c.as_const() {
        return if v != 0 { a } else { b };
    }
    if Rc::ptr_eq(&a, &b) {
        return a;
    }
    node(SymKind::Select(c, a, b))
}

pub fn add(a: Sym, b: Sym) -> Sym {
    binop(BinOp::Add, a, b)
}
pub fn mul(a: Sym, b: Sym) -> Sym {
    binop(BinOp::Mul, a, b)
}
pub fn and(a: Sym, b: Sym) -> Sym {
    if a.as_const() == Some(1) {
        return b;
    }
    if b.as_const() == Some(1) {
        return a;
    }
    binop(BinOp::And, a, b)
}

/// `s` with the variable `v` given the value `k` (an unrolled loop's iteration), folded.
pub fn substitute(s: &Sym, v: Var, k: i64) -> Sym {
    let mut uses = false;
    s.visit_vars(&mut |x| uses |= x == v);
    if !uses {
        return s.clone();
    }
    match &s.kind {
        SymKind::Var(x) if *x == v => konst(k),
        SymKind::Un(op, a) => un(*op, substitute(a, v, k)),
        SymKind::Bin(op, a, b) => bin(*op, substitute(a, v, k), substitute(b, v, k)),
        SymKind::Select(c, a, b) => select(
            substitute(c, v, k),
            substitute(a, v, k),
            substitute(b, v, k),
        ),
        SymKind::Loaded(a, what) => loaded(substitute(a, v, k), what.clone()),
        _ => s.clone(),
    }
}

/// `x + c` as `(x, c)`, the constants added at the top summed (`(24 * t + 12) + 4` is
/// `(24 * t, 16)`); `(s, 0)` for anything else.
pub fn split_constant(s: &Sym) -> (Sym, i64) {
    let mut at = s.clone();
    let mut sum = 0i64;
    loop {
        let next = match &at.kind {
            SymKind::Const(c) => {
                return (konst(0), sum.saturating_add(*c));
            }
            SymKind::Bin(Op::Bin(BinOp::Add), a, b) => match (a.as_const(), b.as_const()) {
                (_, Some(c)) => Some((a.clone(), c)),
                (Some(c), _) => Some((b.clone(), c)),
                _ => None,
            },
            _ => None,
        };
        match next {
            Some((rest, c)) => {
                sum = sum.saturating_add(c);
                at = rest;
            }
            None => return (at, sum),
        }
    }
}

/// Whether lane mask `narrow` is `wide` further restricted (`and(wide, c)`, nested): every
/// lane on in `narrow` is on in `wide`.
pub fn within(narrow: &Sym, wide: &Sym) -> bool {
    if Rc::ptr_eq(narrow, wide) || wide.as_const() == Some(1) {
        return true;
    }
    match &narrow.kind {
        SymKind::Bin(Op::Bin(BinOp::And), a, _) => within(a, wide),
        _ => false,
    }
}

#[cfg(test)]
mod multiple_tests {
    use super::*;

    #[test]
    fn a_floating_value_varies_by_lane_only_where_its_parts_do() {
        let uniform = loaded(var(Var::Runtime(0)), FLOATING);
        assert!(uniform.floating && uniform.data && !uniform.lane_varying);
        let per_lane = loaded(mul(var(Var::Tid(0)), konst(3)), FLOATING);
        assert!(per_lane.floating && per_lane.lane_varying);
        // a value loaded from memory at a uniform key stays the warp's: a vote is a branch
        // on data all the same
        let vote = loaded(konst(7), "the warp's vote");
        assert!(vote.lane_varying && !vote.floating);
    }

    #[test]
    fn known_multiples_follow_what_a_compiler_can_prove() {
        let t = var(Var::Tid(0));
        let k = var(Var::Runtime(0));
        let m = |s: Sym| known_multiple(&s);
        assert_eq!(m(mul(konst(8), t.clone())), 8);
        assert_eq!(m(add(mul(konst(8), t.clone()), konst(16))), 8);
        assert_eq!(m(add(mul(konst(8), t.clone()), konst(4))), 4);
        // a run-time base breaks what the index proves
        assert_eq!(m(add(k.clone(), mul(konst(8), t.clone()))), 1);
        // Parboil sort's CONFLICT_FREE_OFFSET: x + (x >> (5 + x)) proves nothing
        let x = mul(konst(4), t.clone());
        let shifted = binop(BinOp::Shr, x.clone(), add(konst(5), x.clone()));
        assert_eq!(m(mul(add(x, shifted), konst(4))), 4);
        assert_eq!(m(binop(BinOp::Shl, t.clone(), konst(4))), 16);
        assert_eq!(m(binop(BinOp::BitAnd, t, konst(!15))), 16);
    }
}
