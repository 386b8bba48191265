//! CL203 misaligned-global-access.
#![doc = include_str!("../../docs/CL203.md")]

use crate::check::Ctx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::rules::fmt_num;
use cudalint_analysis::{Access, Class, Space};

pub const DOC: &str = include_str!("../../docs/CL203.md");

pub fn check(a: &Access, ctx: &Ctx) -> Option<Diagnostic> {
    if a.space != Space::Global || a.cost.class != Class::Misaligned {
        return None;
    }
    let (s, i) = (a.cost.sectors?, a.cost.ideal_sectors?);
    if s <= i {
        return None;
    }
    let first = a
        .cost
        .lanes
        .first()
        .map(|(_, o)| o.rem_euclid(a.shape.target.sector_bytes))
        .unwrap_or(0);
    let text = ctx.text(a.loc);
    // a pitch that is not a whole number of sectors moves the offset from block to block
    let (where_, mean) = if a.cost.varies {
        let [x, y, z] = a.cost.block_idx;
        (
            format!(" in block ({x}, {y}, {z}), at other offsets in other warps or blocks"),
            " on average",
        )
    } else {
        (String::new(), "")
    };
    Some(super::make(
        "CL203",
        a,
        ctx,
        format!(
            "global {} `{text}` is contiguous but starts {first} bytes into a {}-byte sector{where_}: {} sectors per request{mean} where {} would do",
            super::op_word(a),
            a.shape.target.sector_bytes,
            fmt_num(s),
            fmt_num(i)
        ),
        super::standard_notes(a, ctx),
        Some(Fix {
            title: "align each warp's segment to 32 bytes (pitched rows, or an offset that is a multiple of 32 bytes)".into(),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        }),
    ))
}
