//! The warp's picture for the HTML report: 32 lanes on top, the sectors (global) or banks
//! (shared) they touch below, a line from each lane to its unit, and lanes that conflict
//! (sharing a bank at different words) in red. The grouping is `cudalint_rules::warp_map`'s,
//! the one the editor's hover shows. Kept compact for runs of thousands of kernels: the lane
//! and bank rows are drawn once ([`DEFS`]) and reused, each picture is a few paths whose
//! colours come from CSS classes.

use cudalint_rules::warp_map::WarpMap;
use std::fmt::Write;

// The picture is drawn in small units (a lane box is 2 wide, 3 apart) so that coordinates
// are one or two digits; CSS scales it up.
const W: i64 = 104;
const H: i64 = 18;
/// Lane and bank boxes: `STEP` apart, `BOX` wide, from `LEFT`.
const STEP: i64 = 3;
const BOX: i64 = 2;
const LEFT: i64 = 1;
/// The lanes' row (top edge), the units' row (top edge), boxes `BOX` high.
const LANE_Y: i64 = 3;
const UNIT_Y: i64 = 12;

fn x_of(i: i64) -> i64 {
    LEFT + i * STEP
}

/// Boxes drawn as one thick stroke per box (`BOX` wide), at increasing `xs`, each move
/// relative to the last box's end.
fn boxes(xs: impl IntoIterator<Item = i64>, y_mid: i64, w: i64) -> String {
    let mut d = String::new();
    let mut at: Option<i64> = None;
    for x in xs {
        match at {
            None => {
                let _ = write!(d, "M{x} {y_mid}h{w}");
            }
            Some(end) => {
                let _ = write!(d, "m{} 0h{w}", x - end);
            }
        }
        at = Some(x + w);
    }
    d
}

fn labels(y: i64, word: &str) -> String {
    let mut s = String::new();
    for i in [0, 8, 16, 24, 31] {
        let _ = write!(s, "<text x=\"{}\" y=\"{y}\">{i}</text>", x_of(i));
    }
    let _ = write!(s, "<text x=\"{}\" y=\"{y}\">{word}</text>", x_of(32));
    s
}

/// The labels' font, as attributes: Chromium does not apply the page's `svg text` rule to the
/// copies `<use>` makes, but they inherit from the group.
const FONT: &str = "font-size=\"2.2\" font-family=\"sans-serif\" fill=\"#555\"";

/// The rows every picture shares, drawn once per report: the 32 lanes (`#L`) and the 32 banks
/// (`#B`), with a few labels.
pub fn defs() -> String {
    let outline = |y: i64| {
        let mut d = String::new();
        for i in 0..32 {
            let _ = write!(d, "M{} {y}h{BOX}v{BOX}h-{BOX}z", x_of(i));
        }
        d
    };
    format!(
        "<svg class=\"defs\" aria-hidden=\"true\"><defs><g id=\"L\" {FONT}><path class=\"ln\" d=\"{}\"/>{}</g><g id=\"B\" {FONT}><path class=\"bk\" d=\"{}\"/>{}</g></defs></svg>",
        outline(LANE_Y),
        labels(LANE_Y - 1, "lane"),
        outline(UNIT_Y),
        labels(UNIT_Y + BOX + 3, "bank"),
    )
}

/// The pictures of one page. A picture whose paths were drawn before (the same lanes on the
/// same units: every coalesced row of a run looks alike) is drawn as a `<use>` of the first
/// one's group: a 1,000-kernel report drew 2.3 of its 5.1 MB as pictures.
#[derive(Default)]
pub struct Pictures {
    drawn: std::collections::HashMap<String, usize>,
}

impl Pictures {
    /// One access's picture.
    pub fn warp(&mut self, m: &WarpMap) -> String {
        self.picture(m, "warp")
    }

    /// The same access's picture after a proven padding (classed apart, so that a page's
    /// pictures still count one per priced access).
    pub fn padded(&mut self, m: &WarpMap) -> String {
        self.picture(m, "warp pad")
    }

    fn picture(&mut self, m: &WarpMap, class: &str) -> String {
        let (mut s, paths) = draw(m, class);
        let next = self.drawn.len();
        match self.drawn.entry(paths) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let _ = write!(s, "<use href=\"#w{}\"/>", e.get());
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                let _ = write!(s, "<g id=\"w{next}\">{}</g>", e.key());
                e.insert(next);
            }
        }
        s.push_str("</svg>");
        s
    }
}

/// A picture's opening (its rows and label) and its paths, apart.
fn draw(m: &WarpMap, class: &str) -> (String, String) {
    let n = m.units.len().max(1) as i64;
    // the left edge of the k-th unit (a bank's number, or the k-th distinct sector), and the
    // width units are drawn at
    let step = if m.shared || n <= 32 {
        STEP as f64
    } else {
        (32 * STEP) as f64 / n as f64
    };
    let pad = if m.shared || n >= 32 {
        0
    } else {
        (32 - n) * STEP / 2
    };
    let unit_w = if step >= STEP as f64 { BOX } else { 1 };
    let unit_x = |k: i64| LEFT + pad + (k as f64 * step) as i64;
    let index = |unit: i64| -> i64 {
        if m.shared {
            unit
        } else {
            m.units.binary_search(&unit).unwrap_or(0) as i64
        }
    };
    let touched = boxes(
        m.units.iter().map(|&u| unit_x(index(u))),
        UNIT_Y + BOX / 2,
        unit_w,
    );
    let mut active = [false; 32];
    for l in &m.lanes {
        if let Some(a) = active.get_mut(l.lane as usize) {
            *a = true;
        }
    }
    let off = boxes(
        (0..32).filter(|&i| !active[i as usize]).map(x_of),
        LANE_Y + BOX / 2,
        BOX,
    );
    let clash_lanes = boxes(
        m.lanes
            .iter()
            .filter(|l| l.conflict)
            .map(|l| x_of(l.lane as i64)),
        LANE_Y + BOX / 2,
        BOX,
    );
    // each line from the bottom of its lane's box down to its unit, moving from the end of
    // the path's last line where that is shorter
    let (mut edges, mut clash) = (String::new(), String::new());
    let (mut edges_end, mut clash_end) = (None, None);
    let drop = UNIT_Y - LANE_Y - BOX;
    for l in &m.lanes {
        let x0 = x_of(l.lane as i64) + BOX / 2;
        let x1 = unit_x(index(l.unit)) + unit_w / 2;
        let (d, end) = if l.conflict {
            (&mut clash, &mut clash_end)
        } else {
            (&mut edges, &mut edges_end)
        };
        let abs = format!("M{x0} {}", LANE_Y + BOX);
        let mv = match *end {
            Some(e) => {
                let rel = format!("m{}-{drop}", x0 - e);
                if rel.len() < abs.len() {
                    rel
                } else {
                    abs
                }
            }
            None => abs,
        };
        let _ = write!(d, "{mv}l{} {drop}", x1 - x0);
        *end = Some(x1);
    }
    let mut s = format!("<svg class=\"{class}\" viewBox=\"0 0 {W} {H}\"><use href=\"#L\"/>");
    if m.shared {
        s.push_str("<use href=\"#B\"/>");
    } else {
        let first = m.units.first().copied().unwrap_or(0);
        let _ = write!(
            s,
            "<text x=\"{LEFT}\" y=\"{}\">{} sector{} from {first}</text>",
            UNIT_Y + BOX + 3,
            m.units.len(),
            if m.units.len() == 1 { "" } else { "s" }
        );
    }
    let mut paths = String::new();
    for (class, d) in [
        ("u", &touched),
        ("off", &off),
        ("xl", &clash_lanes),
        ("e", &edges),
        ("x", &clash),
    ] {
        if !d.is_empty() {
            let _ = write!(paths, "<path class=\"{class}\" d=\"{d}\"/>");
        }
    }
    (s, paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudalint_rules::warp_map::LaneSlot;

    #[test]
    fn conflicting_lanes_get_their_own_paths() {
        let m = WarpMap {
            shared: true,
            unit_bytes: 4,
            banks: 32,
            lanes: (0..32)
                .map(|l| LaneSlot {
                    lane: l,
                    offset: l as i64 * 128,
                    unit: 0,
                    conflict: true,
                })
                .collect(),
            units: vec![0],
        };
        let mut pictures = Pictures::default();
        let s = pictures.warp(&m);
        assert!(s.starts_with("<svg class=\"warp\""));
        assert!(s.contains("class=\"x\"") && s.contains("class=\"xl\""));
        assert!(!s.contains("class=\"e\""));
        assert!(s.len() < 1000, "{}", s.len());
        // drawn again: the first one's group, used
        let again = pictures.padded(&m);
        assert!(
            again.starts_with("<svg class=\"warp pad\"") && again.contains("<use href=\"#w0\"/>")
        );
        assert!(!again.contains("class=\"x\""));
    }
}
