//! CL101 kernel-not-analysed and CL102 access-not-analysed: what cudalint could not see.
#![doc = include_str!("../../docs/CL102.md")]

use crate::check::Ctx;
use crate::diagnostic::{Diagnostic, Position};
use cudalint_analysis::{Access, Class, Skipped};

pub const KERNEL_DOC: &str = include_str!("../../docs/CL101.md");
pub const ACCESS_DOC: &str = include_str!("../../docs/CL102.md");

pub fn check_access(a: &Access, ctx: &Ctx) -> Option<Diagnostic> {
    let Class::Unknown(reason) = &a.cost.class else {
        return None;
    };
    let text = ctx.text(a.loc);
    Some(super::make(
        "CL102",
        a,
        ctx,
        format!(
            "{} {} `{}` not analysed: {reason}",
            a.space.as_str(),
            a.op.as_str(),
            text
        ),
        vec![super::shape_text(a, ctx)],
        None,
    ))
}

pub fn check_kernel(s: &Skipped, ctx: &Ctx) -> Diagnostic {
    let rule = crate::codes::rule("CL101").expect("code in the table");
    let at: Position = ctx.pos(s.loc);
    Diagnostic {
        code: rule.code,
        name: rule.name,
        severity: rule.severity,
        message: format!(
            "kernel `{}` not analysed: {} at line {}",
            s.kernel, s.reason, at.line
        ),
        at,
        kernel: s.kernel.clone(),
        labels: Vec::new(),
        notes: Vec::new(),
        fix: None,
        figures: None,
    }
}
