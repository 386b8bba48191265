//! Evaluates a symbolic value for the 32 lanes of one warp at one sample of the uniform
//! values (which warp of the block, which block, which loop iteration).

use crate::sym::{apply_const, Op, Sym, SymKind, UnaryOp, Var};

pub const WARP: usize = 32;
pub type Lanes = [i64; WARP];

/// Bindings for one warp sample.
pub struct WarpSample<'a> {
    pub tid: [Lanes; 3],
    pub active: [bool; WARP],
    pub block: [i64; 3],
    pub grid: [i64; 3],
    pub block_idx: [i64; 3],
    pub runtime: &'a [i64],
    /// (loop id, iteration) pairs; loops not listed are at iteration 0.
    pub iters: &'a [(u32, i64)],
}

impl<'a> WarpSample<'a> {
    /// Lanes of warp `warp` of a block of shape `block`: linear thread id is
    /// x + y*bx + z*bx*by, and lanes past the block's thread count are inactive.
    pub fn new(
        block: [i64; 3],
        grid: [i64; 3],
        warp: i64,
        runtime: &'a [i64],
        iters: &'a [(u32, i64)],
    ) -> Self {
        let threads = block[0] * block[1] * block[2];
        let mut tid = [[0i64; WARP]; 3];
        let mut active = [false; WARP];
        let base = warp * WARP as i64;
        // counters instead of a division per lane
        let (bx, by) = (block[0].max(1), block[1].max(1));
        let (mut x, mut y, mut z) = (base % bx, (base / bx) % by, base / (bx * by));
        for lane in 0..WARP {
            active[lane] = base + (lane as i64) < threads;
            tid[0][lane] = x;
            tid[1][lane] = y;
            tid[2][lane] = z;
            x += 1;
            if x == bx {
                x = 0;
                y += 1;
                if y == by {
                    y = 0;
                    z += 1;
                }
            }
        }
        WarpSample {
            tid,
            active,
            block,
            grid,
            block_idx: [0; 3],
            runtime,
            iters,
        }
    }

    pub fn eval(&self, s: &Sym) -> Result<Lanes, String> {
        Ok(match &s.kind {
            SymKind::Const(v) => [*v; WARP],
            SymKind::Var(v) => match v {
                Var::Tid(d) => self.tid[*d as usize],
                Var::LaneId => std::array::from_fn(|l| l as i64),
                Var::BlockIdx(d) => [self.block_idx[*d as usize]; WARP],
                Var::BlockDim(d) => [self.block[*d as usize]; WARP],
                Var::GridDim(d) => [self.grid[*d as usize]; WARP],
                Var::Runtime(i) => [self.runtime.get(*i as usize).copied().unwrap_or(0); WARP],
                Var::LoopIter(id) => {
                    let it = self
                        .iters
                        .iter()
                        .find(|(l, _)| l == id)
                        .map(|(_, i)| *i)
                        .unwrap_or(0);
                    [it; WARP]
                }
            },
            SymKind::Un(op, a) => {
                let mut v = self.eval(a)?;
                for x in &mut v {
                    *x = match op {
                        UnaryOp::Neg => x.wrapping_neg(),
                        UnaryOp::Not => (*x == 0) as i64,
                        UnaryOp::BitNot => !*x,
                    };
                }
                v
            }
            SymKind::Bin(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                use cudalint_syntax::BinOp as B;
                // one match per node, then a plain loop over the lanes
                macro_rules! lanes {
                    ($f:expr) => {{
                        let f = $f;
                        std::array::from_fn(|l| f(x[l], y[l]))
                    }};
                }
                match op {
                    Op::Bin(B::Add) => lanes!(|p: i64, q: i64| p.wrapping_add(q)),
                    Op::Bin(B::Sub) => lanes!(|p: i64, q: i64| p.wrapping_sub(q)),
                    Op::Bin(B::Mul) => lanes!(|p: i64, q: i64| p.wrapping_mul(q)),
                    Op::Bin(B::Shl) => lanes!(|p: i64, q: i64| p.wrapping_shl((q & 63) as u32)),
                    Op::Bin(B::BitAnd) => lanes!(|p: i64, q: i64| p & q),
                    Op::Bin(B::BitXor) => lanes!(|p: i64, q: i64| p ^ q),
                    Op::Bin(B::Lt) => lanes!(|p: i64, q: i64| (p < q) as i64),
                    _ => {
                        let mut out = [0i64; WARP];
                        for l in 0..WARP {
                            out[l] = match apply_const(*op, x[l], y[l]) {
                                Some(v) => v,
                                // a division by zero in an inactive lane is harmless
                                None if !self.active[l] => 0,
                                None => {
                                    let what = if matches!(op, Op::Bin(B::Rem)) {
                                        "modulo"
                                    } else {
                                        "division"
                                    };
                                    return Err(format!("{what} by zero in lane {l}"));
                                }
                            };
                        }
                        out
                    }
                }
            }
            SymKind::Select(c, a, b) => {
                let c = self.eval(c)?;
                let a = self.eval(a)?;
                let b = self.eval(b)?;
                std::array::from_fn(|l| if c[l] != 0 { a[l] } else { b[l] })
            }
            SymKind::Data(what) => return Err(format!("value read from memory ({what})")),
            SymKind::Unknown(r) => return Err(r.to_string()),
        })
    }
}
