//! One module per rule. Each turns the analysis' facts about one access into at most one
//! diagnostic; the helpers here phrase the numbers every diagnostic shares.

pub mod aos_field;
pub mod bank_conflict;
pub mod data_dependent;
pub mod misaligned_global;
pub mod not_analysed;
pub mod uncoalesced_global;

use crate::check::Ctx;
use crate::codes;
use crate::diagnostic::{Diagnostic, Fix, Label};
use cudalint_analysis::{Access, Class, ShapeSource, Space};

/// Runs every access rule; the first that fires owns the access.
/// `kernel` holds every access of the same kernel (a transpose is seen from its two sides),
/// `kernel_excess` their estimated excess bytes together.
pub fn check_access(
    a: &Access,
    kernel: &[Access],
    kernel_excess: f64,
    ctx: &Ctx,
) -> Option<Diagnostic> {
    // a copy split into several instructions is one finding, on its first
    if a.piece.is_some_and(|(k, _)| k > 0) {
        return None;
    }
    let mut d = not_analysed::check_access(a, ctx)
        .or_else(|| data_dependent::check(a, ctx))
        .or_else(|| aos_field::check(a, ctx))
        .or_else(|| uncoalesced_global::check(a, kernel, ctx))
        .or_else(|| misaligned_global::check(a, ctx))
        .or_else(|| bank_conflict::check(a, ctx))?;
    if let (Some(f), Some(impact)) = (
        d.figures.as_mut(),
        crate::impact::figures(a, kernel_excess, ctx).filter(|i| i.excess > 0.0),
    ) {
        d.notes.push(crate::impact::note(&impact, &a.kernel));
        f.impact = Some(impact);
    }
    Some(d)
}

pub(crate) fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}").trim_end_matches('0').to_string()
    }
}

pub(crate) fn ratio_text(cost: f64, ideal: f64) -> String {
    let r = cost / ideal.max(1e-9);
    if (r - r.round()).abs() < 0.05 {
        format!("{}x", r.round() as i64)
    } else {
        format!("{r:.1}x")
    }
}

pub(crate) fn block_text(b: [i64; 3]) -> String {
    format!("({}, {}, {})", b[0], b[1], b[2])
}

/// "block (32, 32, 1) from the launch at probe.cu:120"
pub(crate) fn shape_text(a: &Access, ctx: &Ctx) -> String {
    let b = block_text(a.shape.block);
    match &a.shape.source {
        ShapeSource::Launch(loc) => {
            let p = ctx.pos(*loc);
            format!("block {b} from the launch at {}:{}", p.file, p.line)
        }
        ShapeSource::LaunchBounds(n) => format!("block {b} from __launch_bounds__({n})"),
        ShapeSource::Configured => format!("block {b} from cudalint.toml ([kernels.{}])", a.kernel),
        ShapeSource::Unresolved(loc) => {
            let p = ctx.pos(*loc);
            format!(
                "block {b} assumed: the launch at {}:{} has a block shape known only at run time (set it with --block)",
                p.file, p.line
            )
        }
        ShapeSource::Default => format!(
            "block {b} assumed: no launch of `{}` in the analysed files",
            a.kernel
        ),
    }
}

/// How lanes map to threads in the first warp.
pub(crate) fn warp_text(a: &Access) -> String {
    let [bx, by, _] = a.shape.block;
    if bx >= 32 {
        "a warp is 32 consecutive threadIdx.x at one threadIdx.y".to_string()
    } else if bx * by >= 32 {
        format!("a warp spans {} rows of {} threadIdx.x", 32 / bx, bx)
    } else {
        format!(
            "a warp spans {} threadIdx.x by {} threadIdx.y by threadIdx.z",
            bx, by
        )
    }
}

/// "lanes 0..3 load byte offsets 0, 4096, 8192, 12288 of `A`"
pub(crate) fn lanes_text(a: &Access) -> Option<String> {
    let lanes = &a.cost.lanes;
    if lanes.is_empty() {
        return None;
    }
    let shown: Vec<_> = lanes.iter().take(4).collect();
    let first = shown.first()?.0;
    let last = shown.last()?.0;
    let offs: Vec<String> = shown.iter().map(|(_, o)| o.to_string()).collect();
    let verb = match a.op {
        cudalint_analysis::AccessOp::Load => "read",
        cudalint_analysis::AccessOp::Store => "write",
        cudalint_analysis::AccessOp::Atomic => "update",
    };
    let block = match a.cost.block_idx {
        [0, 0, 0] => String::new(),
        [x, y, z] => format!(" of block ({x}, {y}, {z})"),
    };
    let mut s = format!(
        "lanes {first}..{last}{block} {verb} byte offsets {} of `{}`",
        offs.join(", "),
        a.base
    );
    match a.space {
        Space::Shared => {
            let banks: Vec<String> = shown
                .iter()
                .map(|(_, o)| {
                    (o.div_euclid(a.shape.target.bank_bytes) % a.shape.target.banks).to_string()
                })
                .collect();
            s.push_str(&format!(" (banks {})", banks.join(", ")));
        }
        _ => {
            let secs: Vec<String> = shown
                .iter()
                .map(|(_, o)| o.div_euclid(a.shape.target.sector_bytes).to_string())
                .collect();
            s.push_str(&format!(" (sectors {})", secs.join(", ")));
        }
    }
    if let Class::Strided(stride) = a.cost.class {
        if stride % a.bytes.max(1) == 0 {
            s.push_str(&format!(
                ": {} elements ({stride} bytes) between neighbouring lanes",
                stride / a.bytes.max(1)
            ));
        } else {
            s.push_str(&format!(": {stride} bytes between neighbouring lanes"));
        }
    }
    Some(s)
}

pub(crate) fn runtime_notes(a: &Access) -> Vec<String> {
    a.runtime
        .iter()
        .map(|(n, v)| {
            // (1 where the large default would make a divisor zero: the access says so)
            let large = if *v == 1 { "" } else { " (large)" };
            format!(
                "`{n}` is a runtime value: assumed {v}{large}; configure the real value to refine"
            )
        })
        .collect()
}

/// The notes every finding carries: lanes, warp shape, runtime assumptions.
pub(crate) fn standard_notes(a: &Access, ctx: &Ctx) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(l) = lanes_text(a) {
        notes.push(l);
    }
    notes.push(format!("{}; {}", shape_text(a, ctx), warp_text(a)));
    notes.extend(runtime_notes(a));
    notes.extend(a.assumptions.iter().cloned());
    if let Some((_, n)) = a.piece {
        notes.push(format!(
            "the {}-byte `{}` is copied as {n} accesses of {} bytes (its alignment allows no wider); the figures are the first's",
            a.bytes * n as i64,
            a.elem_type,
            a.bytes
        ));
    }
    if a.cost.varies {
        notes.push(format!(
            "the figures are the mean over {} sampled warps and loop iterations that differ, as ncu averages",
            a.cost.samples
        ));
    }
    notes
}

pub(crate) fn standard_labels(a: &Access, ctx: &Ctx) -> Vec<Label> {
    let mut labels = Vec::new();
    if let Some(t) = a.lane_term {
        if t != a.loc {
            labels.push(Label {
                at: ctx.pos(t),
                message: "this term differs between the lanes of a warp".into(),
            });
        }
    }
    if let Some(d) = a.decl {
        labels.push(Label {
            at: ctx.pos(d),
            message: format!("`{}` declared here", a.base),
        });
    }
    // the call chain the access was inlined through, innermost first
    for (i, s) in a.inlined_at.iter().enumerate() {
        let into = match a.inlined_at.get(i + 1) {
            Some(outer) => format!("`{}`", outer.callee),
            None => format!("kernel `{}`", a.kernel),
        };
        labels.push(Label {
            at: ctx.pos(s.loc),
            message: format!("`{}` inlined into {into} here", s.callee),
        });
    }
    labels
}

pub(crate) fn make(
    code: &'static str,
    a: &Access,
    ctx: &Ctx,
    message: String,
    notes: Vec<String>,
    fix: Option<Fix>,
) -> Diagnostic {
    let rule = codes::rule(code).expect("code in the table");
    Diagnostic {
        code: rule.code,
        name: rule.name,
        severity: rule.severity,
        message,
        at: ctx.pos(a.loc),
        kernel: a.kernel.clone(),
        labels: standard_labels(a, ctx),
        notes,
        fix,
        figures: Some(crate::diagnostic::Figures {
            sectors_per_request: a.cost.sectors,
            ideal_sectors_per_request: a.cost.ideal_sectors,
            wavefronts_per_request: a.cost.wavefronts,
            ideal_wavefronts_per_request: a.cost.ideal_wavefronts,
            block: a.shape.block,
            impact: None,
        }),
    }
}

pub(crate) fn op_word(a: &Access) -> &'static str {
    a.op.as_str()
}
