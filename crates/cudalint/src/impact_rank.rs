//! How cudalint's impact estimate ranks against a profile: per kernel, the Spearman rank
//! correlation between each line's estimated and measured excess; per program, the same
//! between the kernels' totals. Excess is weighed in bytes (32 a sector, 128 a wavefront) on
//! both sides, so global and shared lines rank together.

use crate::ncu::Row;
use cudalint_analysis::impact::{SECTOR_WEIGHT, WAVEFRONT_WEIGHT};
use cudalint_rules::FileReport;
use std::collections::BTreeMap;

/// The kernel a profile's `Function Name` names: `void ns::k<(int)64>(const int *, int)` is `k`.
pub fn kernel_name(function: &str) -> String {
    let head = function.split(['(', '<']).next().unwrap_or(function);
    let last = head.split_whitespace().last().unwrap_or(head);
    last.rsplit("::").next().unwrap_or(last).to_string()
}

fn weight(space: &str) -> f64 {
    if space == "shared" {
        WAVEFRONT_WEIGHT
    } else {
        SECTOR_WEIGHT
    }
}

/// Spearman's rho with tied values given their mean rank; `None` under three values or when
/// one side does not vary (nothing to rank).
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let ranks = |v: Vec<f64>| -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
                j += 1;
            }
            let mean = (i + j) as f64 / 2.0 + 1.0;
            for k in &idx[i..=j] {
                r[*k] = mean;
            }
            i = j + 1;
        }
        r
    };
    let a = ranks(pairs.iter().map(|p| p.0).collect());
    let b = ranks(pairs.iter().map(|p| p.1).collect());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

pub struct KernelRank {
    pub kernel: String,
    /// Lines of the kernel that both the profile and cudalint price.
    pub lines: usize,
    pub rho: Option<f64>,
}

pub struct Ranking {
    pub kernels: Vec<KernelRank>,
    /// Kernels both sides price, and the correlation of their totals.
    pub across: (usize, Option<f64>),
}

/// Pairs (estimated, measured) excess bytes per line of each kernel, and per kernel.
pub fn rank(rows: &[Row], reports: &[FileReport]) -> Ranking {
    let mut per_kernel: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for r in rows {
        for (k, measured) in &r.measured.excess_by_kernel {
            let mine: Vec<f64> = r
                .impacts
                .iter()
                .filter(|(kernel, _)| kernel == k)
                .map(|(_, e)| *e)
                .collect();
            if mine.is_empty() {
                continue;
            }
            per_kernel
                .entry(k)
                .or_default()
                .push((mine.iter().sum(), measured * weight(&r.measured.space)));
        }
    }
    let kernels = per_kernel
        .iter()
        .map(|(k, pairs)| KernelRank {
            kernel: k.to_string(),
            lines: pairs.len(),
            rho: spearman(pairs),
        })
        .collect();
    // whole kernels: everything cudalint estimates in them against everything measured
    let mut estimated: BTreeMap<&str, f64> = BTreeMap::new();
    for a in reports.iter().flat_map(|r| &r.accesses) {
        if let Some(i) = &a.impact {
            *estimated.entry(a.kernel.as_str()).or_insert(0.0) += i.excess_bytes;
        }
    }
    let mut measured: BTreeMap<&str, f64> = BTreeMap::new();
    for r in rows {
        for (k, e) in &r.measured.excess_by_kernel {
            *measured.entry(k.as_str()).or_insert(0.0) += e * weight(&r.measured.space);
        }
    }
    let totals: Vec<(f64, f64)> = measured
        .iter()
        .filter(|(k, _)| per_kernel.contains_key(*k))
        .filter_map(|(k, m)| Some((*estimated.get(k)?, *m)))
        .collect();
    Ranking {
        kernels,
        across: (totals.len(), spearman(&totals)),
    }
}

pub fn render(r: &Ranking) -> String {
    let rho = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
    let mut s = String::from(
        "impact ranking (Spearman rho between estimated and measured excess bytes per line):\n",
    );
    for k in &r.kernels {
        s.push_str(&format!(
            "  kernel {:<40} {:>3} lines  rho {}\n",
            k.kernel,
            k.lines,
            rho(k.rho)
        ));
    }
    s.push_str(&format!(
        "  across {} kernels (their totals): rho {}\n",
        r.across.0,
        rho(r.across.1)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_lose_their_signature_and_namespace() {
        assert_eq!(
            kernel_name("void BlockAdjDiffKernel<(int)64>(const int *, int *, bool)"),
            "BlockAdjDiffKernel"
        );
        assert_eq!(kernel_name("ns::k(float *)"), "k");
        assert_eq!(kernel_name("transpose_naive"), "transpose_naive");
    }

    #[test]
    fn spearman_ranks_ties_together() {
        assert_eq!(
            spearman(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]),
            Some(1.0)
        );
        assert_eq!(
            spearman(&[(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)]),
            Some(-1.0)
        );
        // one side constant: nothing to rank
        assert_eq!(spearman(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]), None);
        let r = spearman(&[(0.0, 0.0), (0.0, 0.0), (5.0, 7.0), (9.0, 8.0)]).unwrap();
        assert!((r - 1.0).abs() < 1e-9);
    }
}
