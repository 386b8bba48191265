//! The impact estimate of an access in the figures every frontend shows: excess sectors or
//! wavefronts per launch, the requests they come from, and what the count assumes.

use crate::check::Ctx;
use crate::diagnostic::{ImpactFigures, Name};
use cudalint_analysis::{Access, Space, TripSource};

/// The estimate for `a`; `kernel` holds every access of its kernel (for its share).
/// The estimated excess bytes of a kernel's accesses together: what each access's share of
/// its kernel is of (summed once per kernel, not once per access: a generated kernel of
/// 100,000 accesses made that quadratic).
pub fn kernel_excess(kernel: &[Access]) -> f64 {
    kernel
        .iter()
        .filter_map(|k| Some(k.impact.as_ref()?.excess_bytes(k.space)))
        .sum()
}

pub fn figures(a: &Access, kernel_excess: f64, ctx: &Ctx) -> Option<ImpactFigures> {
    let i = a.impact.as_ref()?;
    let total = kernel_excess;
    let bytes = i.excess_bytes(a.space);
    let mut assumptions = Vec::new();
    for l in &i.loops {
        let p = ctx.pos(l.at);
        let at = if p.file == ctx.pos(a.loc).file {
            format!("line {}", p.line)
        } else {
            format!("{}:{}", p.file, p.line)
        };
        // (a count its condition's data may cut short is the most it runs)
        let runs = if l.at_most { "runs at most" } else { "runs" };
        assumptions.push(match &l.source {
            TripSource::Constant => format!("the loop at {at} {runs} {} times", count(l.count)),
            TripSource::Assumed(names) => format!(
                "the loop at {at} {runs} {} times with {}",
                count(l.count),
                names
                    .iter()
                    .map(|(n, v)| format!("`{n}` = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TripSource::Unknown => format!(
                "the loop at {at} runs an unknown number of times: {} assumed",
                count(l.count)
            ),
        });
    }
    if i.in_condition {
        assumptions.push(
            "read by the loop's condition: once more an entry than its body runs".to_string(),
        );
    }
    if i.rounds > 1.0 {
        assumptions.push(format!(
            "the compare-and-swap loop runs {} times a warp: in each round one lane of those meeting in a bank succeeds",
            crate::rules::fmt_num(i.rounds)
        ));
    }
    if i.per_instruction > 1 {
        assumptions.push(format!(
            "one instruction covers {} iterations of the innermost loop",
            i.per_instruction
        ));
    }
    let threads = a.shape.block.iter().product::<i64>().max(1);
    let warps = (threads + 31) / 32;
    if i.warps_per_block < warps as f64 {
        assumptions.push(format!(
            "{} of the block's {warps} warps have a lane at it",
            crate::rules::fmt_num(i.warps_per_block)
        ));
    }
    match (i.blocks, i.grid_from) {
        (Some(b), Some(at)) => {
            let p = ctx.pos(at);
            assumptions.push(format!(
                "{} blocks from the launch at {}:{}",
                count(b as f64),
                p.file,
                p.line
            ));
        }
        _ => assumptions.push("per block: the launch's grid is not known".into()),
    }
    Some(ImpactFigures {
        unit: unit(a.space),
        excess_per_request: i.excess_per_request,
        warps_per_block: i.warps_per_block,
        executions_per_warp: i.executions_per_warp(),
        blocks: i.blocks,
        requests: i.requests(),
        excess: i.excess(),
        excess_bytes: bytes,
        share_of_kernel: if total > 0.0 { bytes / total } else { 0.0 },
        assumptions,
    })
}

fn unit(space: Space) -> Name {
    if space == Space::Shared {
        "wavefronts"
    } else {
        "sectors"
    }
}

pub(crate) fn deserialize_unit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
    let s = <std::borrow::Cow<str> as serde::Deserialize>::deserialize(d)?;
    [unit(Space::Global), unit(Space::Shared)]
        .into_iter()
        .find(|u| *u == s)
        .ok_or_else(|| serde::de::Error::custom(format!("unexpected unit `{s}`")))
}

/// "impact: 7,340,032 excess sectors per launch (235 MB), 62% of kernel `k`'s: 28 per request
/// x 8 warps x 32 executions x 1,024 blocks; the loop at line 12 runs 32 times"
pub fn note(f: &ImpactFigures, kernel: &str) -> String {
    let per = if f.blocks.is_some() {
        "launch"
    } else {
        "block"
    };
    let weighed = if f.unit == "wavefronts" {
        format!("{} at 128 B a wavefront", bytes(f.excess_bytes))
    } else {
        bytes(f.excess_bytes)
    };
    let mut s = format!(
        "impact: {} excess {} per {per} ({weighed}), {:.0}% of kernel `{kernel}`'s: {} per request x {} warps x {} executions",
        count(f.excess),
        f.unit,
        f.share_of_kernel * 100.0,
        crate::rules::fmt_num(f.excess_per_request),
        crate::rules::fmt_num(f.warps_per_block),
        count(f.executions_per_warp),
    );
    if let Some(b) = f.blocks {
        s.push_str(&format!(" x {} blocks", count(b as f64)));
    }
    for a in &f.assumptions {
        s.push_str("; ");
        s.push_str(a);
    }
    s
}

/// A count with thousands separators, to two decimals when not whole.
pub fn count(x: f64) -> String {
    if (x - x.round()).abs() > 0.005 && x < 1000.0 {
        return format!("{x:.2}");
    }
    let n = x.round() as i128;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// Bytes in the largest unit that keeps a whole number in front: 235 MB, 12 KB, 96 B.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 || v >= 100.0 {
        format!("{} {}", v.round() as i64, UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_bytes_read_as_written_by_hand() {
        assert_eq!(count(7340032.0), "7,340,032");
        assert_eq!(count(32.0), "32");
        assert_eq!(count(0.5), "0.50");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(1000.0), "1,000");
        assert_eq!(bytes(96.0), "96 B");
        assert_eq!(bytes(12_345.0), "12.3 KB");
        assert_eq!(bytes(234_881_024.0), "235 MB");
    }
}
