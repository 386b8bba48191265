//! A warp's evaluated lanes as an access record keeps them for the pictures and the editor.
//!
//! Most warps are lanes 0, 1, 2, ... at a constant stride: those are kept as the run's first
//! lane, count, first offset and stride (24 bytes), where a list of (lane, offset) pairs took
//! 512 bytes on the heap for every access of a run (a third of a large run's records). The
//! cache writes them the same way: `[first lane, count, first offset, stride]` or pairs.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Debug, PartialEq)]
pub enum WarpLanes {
    /// `count` lanes from `first`, lane `first + i` at `offset + i * step` (count >= 2).
    Run {
        first: u8,
        count: u8,
        offset: i64,
        step: i64,
    },
    /// Any other set of (lane, byte offset) pairs, in lane order; empty where no lane was
    /// evaluated.
    Pairs(Box<[(u8, i64)]>),
}

impl Default for WarpLanes {
    fn default() -> WarpLanes {
        WarpLanes::Pairs(Box::default())
    }
}

impl WarpLanes {
    pub fn new(lanes: &[(u8, i64)]) -> WarpLanes {
        if let [(l0, o0), (l1, o1), ..] = *lanes {
            let step = o1 - o0;
            let run = lanes.len() <= u8::MAX as usize
                && l1 == l0.wrapping_add(1)
                && lanes
                    .windows(2)
                    .all(|w| w[1].0 == w[0].0.wrapping_add(1) && w[1].1 - w[0].1 == step);
            if run {
                return WarpLanes::Run {
                    first: l0,
                    count: lanes.len() as u8,
                    offset: o0,
                    step,
                };
            }
        }
        WarpLanes::Pairs(lanes.into())
    }

    pub fn len(&self) -> usize {
        match self {
            WarpLanes::Run { count, .. } => *count as usize,
            WarpLanes::Pairs(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (lane, byte offset) of each lane, in lane order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, i64)> + '_ {
        let run = match *self {
            WarpLanes::Run {
                first,
                count,
                offset,
                step,
            } => Some((first, count, offset, step)),
            WarpLanes::Pairs(_) => None,
        };
        let pairs: &[(u8, i64)] = match self {
            WarpLanes::Pairs(p) => p,
            WarpLanes::Run { .. } => &[],
        };
        let from_run = run.into_iter().flat_map(|(first, count, offset, step)| {
            (0..count).map(move |i| (first.wrapping_add(i), offset + i as i64 * step))
        });
        from_run.chain(pairs.iter().copied())
    }

    pub fn to_vec(&self) -> Vec<(u8, i64)> {
        self.iter().collect()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Written {
    Run([i64; 4]),
    Pairs(Vec<(u8, i64)>),
}

impl Serialize for WarpLanes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WarpLanes::Run {
                first,
                count,
                offset,
                step,
            } => Written::Run([*first as i64, *count as i64, *offset, *step]).serialize(s),
            WarpLanes::Pairs(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for WarpLanes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WarpLanes, D::Error> {
        Ok(match Written::deserialize(d)? {
            Written::Pairs(p) => WarpLanes::Pairs(p.into()),
            Written::Run([l0, n, o0, step]) => {
                if !(2..=32).contains(&n) || !(0..32).contains(&l0) || l0 + n > 32 {
                    return Err(serde::de::Error::custom("not a warp's lanes"));
                }
                WarpLanes::Run {
                    first: l0 as u8,
                    count: n as u8,
                    offset: o0,
                    step,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strided_warp_is_a_run_and_reads_back_lane_by_lane() {
        let lanes: Vec<(u8, i64)> = (0..32).map(|l| (l, l as i64 * 128)).collect();
        let w = WarpLanes::new(&lanes);
        assert!(matches!(w, WarpLanes::Run { count: 32, .. }));
        assert_eq!(w.to_vec(), lanes);
        assert_eq!(w.len(), 32);
    }

    #[test]
    fn gaps_and_single_lanes_stay_pairs() {
        let gather = [(0u8, 8i64), (1, 0), (2, 64)];
        let odd = [(1u8, 4i64), (3, 12), (5, 20)];
        for lanes in [&gather[..], &odd[..], &[(7u8, 0i64)][..], &[][..]] {
            let w = WarpLanes::new(lanes);
            assert!(matches!(w, WarpLanes::Pairs(_)), "{lanes:?}");
            assert_eq!(w.to_vec(), lanes);
        }
    }

    #[test]
    fn the_cache_writes_runs_and_pairs_and_refuses_what_is_not_a_warp() {
        let run = WarpLanes::new(&(0..4).map(|l| (l, l as i64 * -8 + 100)).collect::<Vec<_>>());
        let text = serde_json::to_string(&run).unwrap();
        assert_eq!(text, "[0,4,100,-8]");
        assert_eq!(serde_json::from_str::<WarpLanes>(&text).unwrap(), run);
        let pairs = WarpLanes::new(&[(0, 8), (2, 0)]);
        let text = serde_json::to_string(&pairs).unwrap();
        assert_eq!(text, "[[0,8],[2,0]]");
        assert_eq!(serde_json::from_str::<WarpLanes>(&text).unwrap(), pairs);
        assert!(serde_json::from_str::<WarpLanes>("[30,4,0,4]").is_err());
    }
}
