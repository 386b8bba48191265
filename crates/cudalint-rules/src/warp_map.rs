//! Which sector (global) or bank (shared) each lane of an access's first sampled warp lands
//! in, and which lanes conflict: the one grouping the editor's hover and the HTML report both
//! draw, so that they cannot disagree.

use crate::check::AccessRecord;

/// One active lane of the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneSlot {
    pub lane: u8,
    /// Byte offset from the base, as the analysis evaluated it.
    pub offset: i64,
    /// The sector (global: offset / sector bytes) or bank (shared: its first word modulo
    /// the banks) of the lane's first byte.
    pub unit: i64,
    /// Shared only: another lane of its phase asks the same bank for a different word.
    pub conflict: bool,
}

/// A warp's lanes grouped by the unit of memory they touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpMap {
    pub shared: bool,
    /// Bytes per sector (global) or per bank word (shared).
    pub unit_bytes: i64,
    /// Banks of the target (shared); the number of distinct sectors (global).
    pub banks: i64,
    pub lanes: Vec<LaneSlot>,
    /// The distinct units touched, ascending.
    pub units: Vec<i64>,
}

impl WarpMap {
    pub fn conflicting(&self) -> usize {
        self.lanes.iter().filter(|l| l.conflict).count()
    }
}

/// The grouping of an access's lanes, or `None` where no lanes were evaluated (or the target's
/// geometry is unknown).
pub fn warp_map(a: &AccessRecord) -> Option<WarpMap> {
    map_of(a, &a.lanes.to_vec())
}

/// The same access's warp under the padding CL301 proved, where it proved one: the lanes'
/// offsets in the padded array, grouped as `warp_map` groups them.
pub fn padded_map(a: &AccessRecord) -> Option<WarpMap> {
    map_of(a, &a.padded.as_ref()?.lanes.to_vec())
}

fn map_of(a: &AccessRecord, evaluated: &[(u8, i64)]) -> Option<WarpMap> {
    let (sector, banks, width) = a.geometry;
    if evaluated.is_empty() {
        return None;
    }
    let shared = a.space == "shared";
    if (shared && (banks <= 0 || width <= 0)) || (!shared && sector <= 0) {
        return None;
    }
    let unit_bytes = if shared { width } else { sector };
    let per_phase = if shared {
        cudalint_analysis::cost::shared_phase_lanes(a.bytes, width, a.op == "load", evaluated) as u8
    } else {
        32
    };
    let mut lanes: Vec<LaneSlot> = evaluated
        .iter()
        .map(|&(lane, offset)| LaneSlot {
            lane,
            offset,
            unit: if shared {
                offset.div_euclid(width).rem_euclid(banks)
            } else {
                offset.div_euclid(sector)
            },
            conflict: false,
        })
        .collect();
    if shared {
        let words: Vec<i64> = lanes.iter().map(|l| l.offset.div_euclid(width)).collect();
        for i in 0..lanes.len() {
            lanes[i].conflict = (0..lanes.len()).any(|j| {
                lanes[j].lane / per_phase == lanes[i].lane / per_phase
                    && lanes[j].unit == lanes[i].unit
                    && words[j] != words[i]
            });
        }
    }
    let mut units: Vec<i64> = lanes.iter().map(|l| l.unit).collect();
    units.sort_unstable();
    units.dedup();
    Some(WarpMap {
        shared,
        unit_bytes,
        banks: if shared { banks } else { units.len() as i64 },
        lanes,
        units,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(space: &'static str, bytes: i64, lanes: Vec<(u8, i64)>) -> AccessRecord {
        AccessRecord {
            file: "a.cu".into(),
            line: 1,
            column: 1,
            end_line: 1,
            kernel: "k".into(),
            kernel_file: "a.cu".into(),
            kernel_line: 1,
            space,
            op: "load",
            bytes,
            elem_type: "float".into(),
            class: "coalesced",
            stride_bytes: None,
            reason: None,
            sectors_per_request: None,
            ideal_sectors_per_request: None,
            wavefronts_per_request: None,
            ideal_wavefronts_per_request: None,
            block: [32, 1, 1],
            block_source: String::new(),
            text: "x".into(),
            inlined_at: Vec::new(),
            issued_at: None,
            assumptions: Vec::new(),
            impact: None,
            span: 0..1,
            lanes: crate::warp_lanes::WarpLanes::new(&lanes),
            padded: None,
            geometry: (32, 32, 4),
        }
    }

    #[test]
    fn a_column_of_a_32_wide_tile_conflicts_on_one_bank() {
        // tile[threadIdx.x][0] of float tile[32][32]: every lane in bank 0, each its own word
        let a = record(
            "shared",
            4,
            (0..32).map(|l| (l as u8, l as i64 * 128)).collect(),
        );
        let m = warp_map(&a).unwrap();
        assert_eq!(m.units, vec![0]);
        assert_eq!(m.conflicting(), 32);
    }

    #[test]
    fn a_broadcast_and_a_row_do_not_conflict() {
        let row = record(
            "shared",
            4,
            (0..32).map(|l| (l as u8, l as i64 * 4)).collect(),
        );
        let m = warp_map(&row).unwrap();
        assert_eq!(m.units.len(), 32);
        assert_eq!(m.conflicting(), 0);
        let same = record("shared", 4, (0..32).map(|l| (l as u8, 64)).collect());
        assert_eq!(warp_map(&same).unwrap().conflicting(), 0);
    }

    #[test]
    fn doubles_conflict_only_within_their_half_warp() {
        // lanes 0..16 and 16..32 read the same banks at different words: no conflict, since
        // 8-byte accesses are served per half warp
        let a = record(
            "shared",
            8,
            (0..32).map(|l| (l as u8, (l as i64) * 8)).collect(),
        );
        assert_eq!(warp_map(&a).unwrap().conflicting(), 0);
    }

    #[test]
    fn the_padded_warp_is_drawn_from_the_padded_offsets() {
        // tile[threadIdx.x][0]: float tile[32][32] puts every lane in bank 0; [32][33] puts
        // lane l in bank l
        let mut a = record(
            "shared",
            4,
            (0..32).map(|l| (l as u8, l as i64 * 128)).collect(),
        );
        assert!(padded_map(&a).is_none());
        a.padded = Some(crate::check::PaddedWarp {
            pad: 1,
            wavefronts: 1.0,
            lanes: crate::warp_lanes::WarpLanes::new(
                &(0..32)
                    .map(|l| (l as u8, l as i64 * 132))
                    .collect::<Vec<_>>(),
            ),
        });
        let after = padded_map(&a).unwrap();
        assert_eq!(after.units, (0..32).collect::<Vec<i64>>());
        assert_eq!(after.conflicting(), 0);
        assert_eq!(warp_map(&a).unwrap().conflicting(), 32);
    }

    #[test]
    fn global_lanes_group_by_sector() {
        let a = record(
            "global",
            4,
            (0..32).map(|l| (l as u8, l as i64 * 4)).collect(),
        );
        let m = warp_map(&a).unwrap();
        assert_eq!(m.units, vec![0, 1, 2, 3]);
        assert!(m.lanes.iter().all(|l| !l.conflict));
        assert!(warp_map(&record("global", 4, Vec::new())).is_none());
    }
}
