//! CL301 shared-bank-conflict.
#![doc = include_str!("../../docs/CL301.md")]

use crate::check::Ctx;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::rules::fmt_num;
use cudalint_analysis::{Access, Class, Space};

pub const DOC: &str = include_str!("../../docs/CL301.md");

pub fn check(a: &Access, ctx: &Ctx) -> Option<Diagnostic> {
    if a.space != Space::Shared
        || matches!(a.cost.class, Class::DataDependent(_) | Class::Unknown(_))
    {
        return None;
    }
    let (w, i) = (a.cost.wavefronts?, a.cost.ideal_wavefronts?);
    if w <= i {
        return None;
    }
    let text = ctx.text(a.loc);
    if a.copied {
        return Some(copy_finding(a, ctx, &text, w, i));
    }
    if a.cas && a.op == cudalint_analysis::AccessOp::Atomic {
        return Some(cas_finding(a, ctx, &text, w, i));
    }
    let ways = w / i;
    let width = a.shape.target.bank_bytes;
    let group = cudalint_analysis::cost::shared_phase_lanes(
        a.bytes,
        width,
        a.op == cudalint_analysis::AccessOp::Load,
        &a.cost.lanes,
    );
    let phase = match (a.bytes <= width, a.bytes <= 2 * width, group) {
        (true, _, _) => "",
        (_, true, 32) => " (an 8-byte load whose lanes pair up on one address, lane l with l ^ 1 or l ^ 2, is served in one phase for the whole warp)",
        (_, true, _) => " (8-byte accesses are served in two half-warp phases)",
        (_, _, 16) => " (a 16-byte load whose lanes pair up on one address, lane l with l ^ 1 or l ^ 2, is served in two half-warp phases)",
        _ => " (16-byte accesses are served in four quarter-warp phases)",
    };
    let message = format!(
        "shared {} `{text}`: {}-way bank conflict, {} wavefronts per request where {} would do{phase}",
        super::op_word(a),
        fmt_num(ways),
        fmt_num(w),
        fmt_num(i)
    );
    let fix = match &a.padding {
        Some(p) => {
            let dim_text = ctx.text(p.dim);
            let replacement = match dim_text.trim().parse::<i64>() {
                Ok(n) => (n + p.pad).to_string(),
                Err(_) => format!("{dim_text} + {}", p.pad),
            };
            Fix {
                title: format!(
                    "pad the innermost dimension of `{}`: [{dim_text}] -> [{replacement}] ({} wavefront{} per request, checked for every access of `{}`)",
                    a.base,
                    fmt_num(p.wavefronts_after),
                    if p.wavefronts_after == 1.0 { "" } else { "s" },
                    a.base
                ),
                applicability: Applicability::MachineApplicable,
                edits: vec![Edit {
                    at: ctx.pos(p.dim),
                    replacement,
                }],
                sketch: None,
            }
        }
        None => Fix {
            title: "spread the lanes over the banks: swizzle the column index (e.g. `col ^ row`), or change which thread reads which word".into(),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        },
    };
    Some(super::make(
        "CL301",
        a,
        ctx,
        message,
        super::standard_notes(a, ctx),
        Some(fix),
    ))
}

/// An atomic shared memory has no instruction for is a compare-and-swap loop: its cost is the
/// loop's, not the banks' (the note on the access says what nvcc makes of it).
fn cas_finding(a: &Access, ctx: &Ctx, text: &str, w: f64, i: f64) -> Diagnostic {
    let message = format!(
        "shared atomic `{text}` is a compare-and-swap loop on sm_90: {} wavefronts per request where a native atomic takes {}, and again for every lane another lane beat to the word",
        fmt_num(w),
        fmt_num(i)
    );
    advice_finding(a, ctx, message, "reduce within the warp first (`__shfl_down_sync`, `cooperative_groups::reduce`) and let one lane do the atomic, or accumulate a 32-bit integer (fixed point) with a native `atomicAdd`")
}

/// The shared side of an asynchronous copy costs what its global source's layout makes it
/// cost (`LDGSTS` writes shared memory as the global data arrives): the waste is the source's.
fn copy_finding(a: &Access, ctx: &Ctx, text: &str, w: f64, i: f64) -> Diagnostic {
    let message = format!(
        "shared side of the asynchronous copy `{text}`: {} wavefronts per request where {} would do (the copy writes shared memory as its global side arrives: a wavefront per 128-byte line its lanes read; for 16-byte copies one per run of lanes reading one line in order, and one more when lanes of the warp are off; and no fewer than its destinations' banks allow)",
        fmt_num(w),
        fmt_num(i)
    );
    advice_finding(a, ctx, message, "make the copy's global source contiguous (neighbouring lanes copying neighbouring bytes; its global load is on the same line) and its destinations conflict-free")
}

/// A CL301 finding whose fix is advice to follow by hand, not an edit.
fn advice_finding(a: &Access, ctx: &Ctx, message: String, advice: &str) -> Diagnostic {
    let fix = Fix {
        title: advice.into(),
        applicability: Applicability::DisplayOnly,
        edits: Vec::new(),
        sketch: None,
    };
    super::make(
        "CL301",
        a,
        ctx,
        message,
        super::standard_notes(a, ctx),
        Some(fix),
    )
}
