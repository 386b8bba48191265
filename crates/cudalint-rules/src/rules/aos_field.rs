//! CL202 array-of-structs-field-access.
#![doc = include_str!("../../docs/CL202.md")]

use crate::check::Ctx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::rules::{fmt_num, ratio_text};
use cudalint_analysis::{Access, Class, Space};

pub const DOC: &str = include_str!("../../docs/CL202.md");

pub fn check(a: &Access, ctx: &Ctx) -> Option<Diagnostic> {
    if a.space != Space::Global {
        return None;
    }
    let f = a.field.as_ref()?;
    let Class::Strided(stride) = a.cost.class else {
        return None;
    };
    let (s, i) = (a.cost.sectors?, a.cost.ideal_sectors?);
    if stride != f.struct_size || f.struct_size <= a.bytes || s < 2.0 * i {
        return None;
    }
    let text = ctx.text(a.loc);
    let sketch = format!(
        "struct {n}SoA {{ /* one array per field of {n} */ {t}* {field}; ... }};\n// kernel: take {n}SoA by value and read `soa.{field}[i]` instead of `aos[i].{field}`",
        n = f.struct_name,
        t = a.elem_type,
        field = f.name
    );
    Some(super::make(
        "CL202",
        a,
        ctx,
        format!(
            "global {} `{text}` uses field `{}` ({} of {} bytes) of `{}` per lane: {} sectors per request where {} would do ({} the memory traffic)",
            super::op_word(a),
            f.name,
            a.bytes,
            f.struct_size,
            f.struct_name,
            fmt_num(s),
            fmt_num(i),
            ratio_text(s, i)
        ),
        super::standard_notes(a, ctx),
        Some(Fix {
            title: format!("store the fields of `{}` as a structure of arrays", f.struct_name),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: Some(sketch),
        }),
    ))
}
