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
    Some(super::make(
        "CL203",
        a,
        ctx,
        format!(
            "global {} `{text}` is contiguous but starts {first} bytes into a {}-byte sector: {} sectors per request where {} would do",
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
