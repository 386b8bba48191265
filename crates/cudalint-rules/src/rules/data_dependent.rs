//! CL204 data-dependent-global-access.
#![doc = include_str!("../../docs/CL204.md")]

use crate::check::Ctx;
use crate::diagnostic::Diagnostic;
use crate::rules::fmt_num;
use cudalint_analysis::{Access, Class, Space};

pub const DOC: &str = include_str!("../../docs/CL204.md");

pub fn check(a: &Access, ctx: &Ctx) -> Option<Diagnostic> {
    let Class::DataDependent(src) = &a.cost.class else {
        return None;
    };
    if a.space != Space::Global {
        return None;
    }
    let (s, i) = (a.cost.sectors?, a.cost.ideal_sectors?);
    // lanes that read their index at one address share it: a gather through a few addresses
    // whose worst case is the ideal wastes nothing
    if s <= i {
        return None;
    }
    let text = ctx.text(a.loc);
    let mut notes = vec![format!(
        "the index comes from {src}: priced at the worst case, every lane (or every group of lanes that read the index at one address) in its own sector; contiguous indices would cost {}",
        fmt_num(i)
    )];
    notes.push(format!(
        "{}; {}",
        super::shape_text(a, ctx),
        super::warp_text(a)
    ));
    Some(super::make(
        "CL204",
        a,
        ctx,
        format!(
            "global {} `{text}` gathers through an index read from memory: up to {} sectors per request where {} would do",
            super::op_word(a),
            fmt_num(s),
            fmt_num(i)
        ),
        notes,
        None,
    ))
}
