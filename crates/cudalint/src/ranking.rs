//! `audit --sort impact`: kernels and accesses ranked by estimated excess traffic per launch,
//! each with its share of its kernel's and of the run's total, so an audit starts with the
//! few accesses that matter.

use cudalint_rules::impact::{bytes, count};
use cudalint_rules::{AccessRecord, FileReport};
use serde::Serialize;

#[derive(Serialize)]
pub struct RankedKernel<'a> {
    pub rank: usize,
    pub kernel: &'a str,
    pub file: &'a str,
    pub line: usize,
    pub excess_bytes: f64,
    pub share_of_run: f64,
    /// `launch`, or `block` where the grid of a launch is not known.
    pub per: &'static str,
    pub accesses: usize,
}

#[derive(Serialize)]
pub struct RankedAccess<'a> {
    pub rank: usize,
    pub share_of_run: f64,
    #[serde(flatten)]
    pub access: &'a AccessRecord,
}

pub struct Ranking<'a> {
    pub total: f64,
    pub kernels: Vec<RankedKernel<'a>>,
    /// Accesses with an estimated excess, costliest first.
    pub accesses: Vec<RankedAccess<'a>>,
    /// Priced accesses with no excess, and accesses with no estimate.
    pub without_excess: usize,
    pub unpriced: usize,
}

fn excess(a: &AccessRecord) -> Option<f64> {
    a.impact.as_ref().map(|i| i.excess_bytes)
}

pub fn rank(reports: &[FileReport]) -> Ranking<'_> {
    let all: Vec<&AccessRecord> = reports.iter().flat_map(|r| &r.accesses).collect();
    let total: f64 = all.iter().filter_map(|a| excess(a)).sum();
    let share = |x: f64| if total > 0.0 { x / total } else { 0.0 };
    let mut costly: Vec<&AccessRecord> = all
        .iter()
        .copied()
        .filter(|a| excess(a).is_some_and(|e| e > 0.0))
        .collect();
    costly.sort_by(|a, b| {
        excess(b)
            .unwrap_or(0.0)
            .total_cmp(&excess(a).unwrap_or(0.0))
            .then((&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)))
    });
    let mut kernels: Vec<RankedKernel> = Vec::new();
    for a in &all {
        let Some(e) = excess(a) else { continue };
        let k = match kernels
            .iter_mut()
            .find(|k| (k.kernel, k.file, k.line) == (&a.kernel, &a.kernel_file, a.kernel_line))
        {
            Some(k) => k,
            None => {
                kernels.push(RankedKernel {
                    rank: 0,
                    kernel: &a.kernel,
                    file: &a.kernel_file,
                    line: a.kernel_line,
                    excess_bytes: 0.0,
                    share_of_run: 0.0,
                    per: "launch",
                    accesses: 0,
                });
                kernels.last_mut().expect("just pushed")
            }
        };
        k.excess_bytes += e;
        k.accesses += 1;
        if a.impact.as_ref().is_some_and(|i| i.blocks.is_none()) {
            k.per = "block";
        }
    }
    kernels.retain(|k| k.excess_bytes > 0.0);
    kernels.sort_by(|a, b| {
        b.excess_bytes
            .total_cmp(&a.excess_bytes)
            .then((a.file, a.line).cmp(&(b.file, b.line)))
    });
    for (i, k) in kernels.iter_mut().enumerate() {
        k.rank = i + 1;
        k.share_of_run = share(k.excess_bytes);
    }
    let accesses = costly
        .iter()
        .enumerate()
        .map(|(i, a)| RankedAccess {
            rank: i + 1,
            share_of_run: share(excess(a).unwrap_or(0.0)),
            access: a,
        })
        .collect();
    Ranking {
        total,
        kernels,
        accesses,
        without_excess: all
            .iter()
            .filter(|a| excess(a).is_some_and(|e| e <= 0.0))
            .count(),
        unpriced: all.iter().filter(|a| excess(a).is_none()).count(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub fn text(r: &Ranking) -> String {
    let mut s = format!(
        "estimated excess traffic: {} in all (sectors at 32 B, shared wavefronts at 128 B), per launch where the launch's grid is known, else per block\n\nkernels\n  #  excess      run    per     kernel\n",
        bytes(r.total)
    );
    for k in &r.kernels {
        s.push_str(&format!(
            "{:>3}  {:<10} {:>6}  {:<6}  {} ({}:{})\n",
            k.rank,
            bytes(k.excess_bytes),
            pct(k.share_of_run),
            k.per,
            k.kernel,
            k.file,
            k.line
        ));
    }
    s.push_str("\naccesses\n  #  excess      run  kernel  location                      space  op      per request   excess units                 access\n");
    for ra in &r.accesses {
        let a = ra.access;
        let Some(i) = &a.impact else { continue };
        let per_request = match i.unit {
            "wavefronts" => format!(
                "{}/{} wf",
                opt(a.wavefronts_per_request),
                opt(a.ideal_wavefronts_per_request)
            ),
            _ => format!(
                "{}/{} sec",
                opt(a.sectors_per_request),
                opt(a.ideal_sectors_per_request)
            ),
        };
        s.push_str(&format!(
            "{:>3}  {:<10} {:>6} {:>6}  {:<29} {:<6} {:<6} {:>12}   {:<28} {}\n",
            ra.rank,
            bytes(i.excess_bytes),
            pct(ra.share_of_run),
            pct(i.share_of_kernel),
            format!("{}:{}:{}", a.file, a.line, a.column),
            a.space,
            a.op,
            per_request,
            format!("{} {}", count(i.excess), i.unit),
            a.text
        ));
    }
    s.push_str(&format!(
        "\n{} accesses with an estimated excess; {} priced without excess; {} not priced (unknown or data-dependent figures)\n",
        r.accesses.len(),
        r.without_excess,
        r.unpriced
    ));
    s
}

fn opt(x: Option<f64>) -> String {
    x.map(cudalint_rules::impact::count)
        .unwrap_or_else(|| "-".into())
}

#[derive(Serialize)]
struct Json<'a> {
    version: u32,
    sort: &'static str,
    total_excess_bytes: f64,
    kernels: &'a [RankedKernel<'a>],
    accesses: &'a [RankedAccess<'a>],
    errors: &'a [String],
}

pub fn json(r: &Ranking, errors: &[String]) -> String {
    let out = Json {
        version: 1,
        sort: "impact",
        total_excess_bytes: r.total,
        kernels: &r.kernels,
        accesses: &r.accesses,
        errors,
    };
    serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
