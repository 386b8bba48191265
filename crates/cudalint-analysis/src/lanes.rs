//! Evaluates a symbolic value for the 32 lanes of one warp at one sample of the uniform
//! values (which warp of the block, which block, which loop iteration).

use crate::sym::{apply_const, Op, Sym, SymKind, Var};

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
    /// Set when a value loaded at several addresses was given a value per address (lanes
    /// that read one address share it): the lanes are a worst case.
    pub gathered: std::cell::Cell<bool>,
    /// Per lane, which loaded values it holds (a hash of the addresses it read them at, or
    /// its own lane where a choice between loaded values may go either way): lanes of one
    /// group computed their address from the same values, so its relative placement holds;
    /// between groups nothing is known.
    pub groups: std::cell::Cell<[u64; WARP]>,
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
            gathered: std::cell::Cell::new(false),
            groups: std::cell::Cell::new([0; WARP]),
        }
    }

    pub fn eval(&self, s: &Sym) -> Result<Lanes, String> {
        let mut out = [0i64; WARP];
        self.eval_into(s, &mut out)?;
        Ok(out)
    }

    /// Evaluates into `out`: the left operand of a node is computed in place and only the
    /// right one needs a buffer, so lane arrays are not copied up the recursion.
    fn eval_into(&self, s: &Sym, out: &mut Lanes) -> Result<(), String> {
        // a part the same in every lane (`blockIdx.x * blockDim.x`, a loop's step) is
        // computed once, not 32 times: most of an address's nodes are
        if !s.lane_varying
            && matches!(
                s.kind,
                SymKind::Un(..) | SymKind::Bin(..) | SymKind::Select(..)
            )
        {
            out.fill(self.eval_uniform(s)?);
            return Ok(());
        }
        match &s.kind {
            SymKind::Const(v) => out.fill(*v),
            SymKind::Var(v) => match v {
                Var::Tid(d) => *out = self.tid[*d as usize],
                Var::LaneId => {
                    for (l, x) in out.iter_mut().enumerate() {
                        *x = l as i64;
                    }
                }
                Var::BlockIdx(d) => out.fill(self.block_idx[*d as usize]),
                Var::BlockDim(d) => out.fill(self.block[*d as usize]),
                Var::GridDim(d) => out.fill(self.grid[*d as usize]),
                Var::Runtime(i) => out.fill(self.runtime.get(*i as usize).copied().unwrap_or(0)),
                Var::LoopIter(id) => {
                    let it = self
                        .iters
                        .iter()
                        .find(|(l, _)| l == id)
                        .map(|(_, i)| *i)
                        .unwrap_or(0);
                    out.fill(it);
                }
            },
            SymKind::Un(op, a) => {
                self.eval_into(a, out)?;
                for x in out.iter_mut() {
                    *x = op.apply(*x);
                }
            }
            SymKind::Bin(op, a, b) => {
                self.eval_into(a, out)?;
                let mut y = [0i64; WARP];
                self.eval_into(b, &mut y)?;
                use cudalint_syntax::BinOp as B;
                // one match per node, then a plain loop over the lanes
                macro_rules! lanes {
                    ($f:expr) => {{
                        let f = $f;
                        for l in 0..WARP {
                            out[l] = f(out[l], y[l]);
                        }
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
                        for l in 0..WARP {
                            out[l] = match apply_const(*op, out[l], y[l]) {
                                Some(v) => v,
                                // a division by zero in an inactive lane is harmless
                                None if !self.active[l] => 0,
                                None => return Err(by_zero(*op, l)),
                            };
                        }
                    }
                }
            }
            SymKind::Select(c, a, b) => {
                self.eval_into(c, out)?;
                let mut x = [0i64; WARP];
                let mut y = [0i64; WARP];
                self.eval_into(a, &mut x)?;
                self.eval_into(b, &mut y)?;
                if c.data {
                    // a choice made on values read from memory: either arm, so a lane whose
                    // arms differ has a value of its own (a gather at worst)
                    for l in 0..WARP {
                        out[l] = if x[l] == y[l] {
                            x[l]
                        } else {
                            (x[l] ^ y[l].rotate_left(17)).wrapping_shl(12)
                        };
                        if x[l] != y[l] && self.active[l] {
                            self.gathered.set(true);
                            let mut g = self.groups.get();
                            g[l] = mix(g[l], 1 << 32 | l as u64);
                            self.groups.set(g);
                        }
                    }
                    return Ok(());
                }
                for l in 0..WARP {
                    out[l] = if out[l] != 0 { x[l] } else { y[l] };
                }
            }
            SymKind::Data(what) => return Err(format!("value read from memory ({what})")),
            SymKind::Loaded(from, what) => {
                // one address for the warp's running lanes: one value, whatever it is
                self.eval_into(from, out)?;
                let _ = what;
                let first = (0..WARP).find(|&l| self.active[l]).map(|l| out[l]);
                let uniform = (0..WARP).all(|l| !self.active[l] || Some(out[l]) == first);
                // lanes reading one address read one value; the values of different addresses
                // are unknown: far apart (a sector each, at worst), and the same wherever the
                // program reads that address again (`ptr[c + 1] - ptr[c]` is not zero)
                if !uniform {
                    self.gathered.set(true);
                    let mut g = self.groups.get();
                    for l in 0..WARP {
                        g[l] = mix(g[l], out[l] as u64);
                    }
                    self.groups.set(g);
                }
                for v in out.iter_mut() {
                    *v = v.wrapping_shl(12);
                }
            }
            SymKind::Unknown(r) => return Err(r.to_string()),
        }
        Ok(())
    }
}

impl WarpSample<'_> {
    /// A value no lane differs in (no thread index, nothing read from memory), as
    /// [`Self::eval_into`] would give it in every lane.
    fn eval_uniform(&self, s: &Sym) -> Result<i64, String> {
        use cudalint_syntax::BinOp as B;
        Ok(match &s.kind {
            SymKind::Const(v) => *v,
            SymKind::Var(Var::BlockIdx(d)) => self.block_idx[*d as usize],
            SymKind::Var(Var::BlockDim(d)) => self.block[*d as usize],
            SymKind::Var(Var::GridDim(d)) => self.grid[*d as usize],
            SymKind::Var(Var::Runtime(i)) => self.runtime.get(*i as usize).copied().unwrap_or(0),
            SymKind::Var(Var::LoopIter(id)) => self
                .iters
                .iter()
                .find(|(l, _)| l == id)
                .map(|(_, i)| *i)
                .unwrap_or(0),
            SymKind::Un(op, a) => op.apply(self.eval_uniform(a)?),
            SymKind::Bin(op, a, b) => {
                let (p, q) = (self.eval_uniform(a)?, self.eval_uniform(b)?);
                match op {
                    Op::Bin(B::Add) => p.wrapping_add(q),
                    Op::Bin(B::Sub) => p.wrapping_sub(q),
                    Op::Bin(B::Mul) => p.wrapping_mul(q),
                    Op::Bin(B::Shl) => p.wrapping_shl((q & 63) as u32),
                    Op::Bin(B::BitAnd) => p & q,
                    Op::Bin(B::BitXor) => p ^ q,
                    Op::Bin(B::Lt) => (p < q) as i64,
                    _ => match apply_const(*op, p, q) {
                        Some(v) => v,
                        None => match (0..WARP).find(|&l| self.active[l]) {
                            // a division by zero in inactive lanes is harmless
                            None => 0,
                            Some(l) => return Err(by_zero(*op, l)),
                        },
                    },
                }
            }
            SymKind::Select(c, a, b) => {
                let c = self.eval_uniform(c)?;
                let (x, y) = (self.eval_uniform(a)?, self.eval_uniform(b)?);
                if c != 0 {
                    x
                } else {
                    y
                }
            }
            SymKind::Unknown(r) => return Err(r.to_string()),
            // (lane-varying, never asked here)
            SymKind::Var(Var::Tid(_) | Var::LaneId) | SymKind::Data(_) | SymKind::Loaded(..) => {
                let mut lanes = [0i64; WARP];
                self.eval_into(s, &mut lanes)?;
                lanes[0]
            }
        })
    }
}

/// The error of a division or modulo by zero in lane `l`.
fn by_zero(op: Op, l: usize) -> String {
    let what = if matches!(op, Op::Bin(cudalint_syntax::BinOp::Rem)) {
        "modulo"
    } else {
        "division"
    };
    format!("{what} by zero in lane {l}")
}

/// One step of a hash of the loaded values a lane holds.
fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}
