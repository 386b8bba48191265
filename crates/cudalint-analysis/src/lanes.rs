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
    pub fn new(block: [i64; 3], grid: [i64; 3], warp: i64, runtime: &'a [i64], iters: &'a [(u32, i64)]) -> Self {
        let threads = block[0] * block[1] * block[2];
        let mut tid = [[0i64; WARP]; 3];
        let mut active = [false; WARP];
        for lane in 0..WARP {
            let linear = warp * WARP as i64 + lane as i64;
            active[lane] = linear < threads;
            tid[0][lane] = linear % block[0];
            tid[1][lane] = (linear / block[0]) % block[1];
            tid[2][lane] = linear / (block[0] * block[1]);
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
                    let it = self.iters.iter().find(|(l, _)| l == id).map(|(_, i)| *i).unwrap_or(0);
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
                let mut out = [0i64; WARP];
                for l in 0..WARP {
                    out[l] = match apply_const(*op, x[l], y[l]) {
                        Some(v) => v,
                        // a division by zero in an inactive lane is harmless
                        None if !self.active[l] => 0,
                        None => {
                            let what = if matches!(op, Op::Bin(cudalint_syntax::BinOp::Rem)) { "modulo" } else { "division" };
                            return Err(format!("{what} by zero in lane {l}"));
                        }
                    };
                }
                out
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
