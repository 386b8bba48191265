//! A kernel's findings while the run still analyses the others. On a large run the findings
//! (a 10 MB corpus: 29,000 diagnostics and 79,000 analysed accesses, about 220 MB as structs)
//! and every file's model (180 MB) were alive together when the last kernel finished: the
//! run's peak. Packed (JSON, then LZ4) they take about a tenth of that, and they are unpacked
//! once the models are gone.

use crate::check::{AccessExtra, AccessRecord, KernelFindings};
use crate::diagnostic::{Figures, ImpactFigures};
use crate::Diagnostic;
use serde::{Deserialize, Serialize};

/// What a kernel's packed findings are compressed against: one kernel's findings on a
/// fixture (`async_copy.cu`), keys and phrases the others repeat. A kernel's findings are a few
/// KB, too little for LZ4 to find much to repeat within them (on the 10 MB monorepo, 151 MB of
/// JSON packs to 43 MB alone and 29 MB against this).
const DICTIONARY: &[u8] = include_bytes!("found_dictionary.json");

pub(crate) enum Found {
    Plain(KernelFindings),
    /// `file`: the kernel's own file, where a failure to unpack is told; `filed`: how many
    /// diagnostics and records it files under which file (so the reports are sized once).
    Packed {
        file: usize,
        filed: Box<[Filed]>,
        bytes: Vec<u8>,
    },
}

/// (file, diagnostics, records)
pub(crate) type Filed = (usize, usize, usize);

#[derive(Serialize, Deserialize)]
struct Packed {
    diagnostics: Vec<(usize, Diagnostic)>,
    records: Vec<(usize, AccessRecord, AccessExtra)>,
    timed_out: Vec<(usize, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    counted: Vec<(usize, usize)>,
}

impl Found {
    /// `file`: the file of the kernel the findings are of.
    pub fn new(findings: KernelFindings, file: usize, pack: bool) -> Found {
        // JSON writes a NaN or an infinity as null, which does not read back as the number
        if !pack || !finite(&findings) {
            return Found::Plain(findings);
        }
        let filed = filed(&findings);
        let (diagnostics, records, timed_out, counted) = findings;
        let records = records
            .into_iter()
            .map(|(f, r)| {
                let x = r.extra();
                (f, r, x)
            })
            .collect();
        let packed = Packed {
            diagnostics,
            records,
            timed_out,
            counted,
        };
        match serde_json::to_vec(&packed) {
            Ok(json) => Found::Packed {
                file,
                filed,
                bytes: lz4_flex::block::compress_prepend_size_with_dict(&json, DICTIONARY),
            },
            Err(_) => Found::Plain(unpacked(packed)),
        }
    }

    /// How many diagnostics and records the kernel files under each file.
    pub fn filed(&self) -> std::borrow::Cow<'_, [Filed]> {
        match self {
            Found::Plain(f) => filed(f).into_vec().into(),
            Found::Packed { filed, .. } => filed[..].into(),
        }
    }

    /// The findings, or the file to tell that they were lost.
    pub fn unpack(self) -> Result<KernelFindings, usize> {
        match self {
            Found::Plain(f) => Ok(f),
            Found::Packed { file, bytes, .. } => {
                lz4_flex::block::decompress_size_prepended_with_dict(&bytes, DICTIONARY)
                    .ok()
                    .and_then(|json| serde_json::from_slice::<Packed>(&json).ok())
                    .map(unpacked)
                    .ok_or(file)
            }
        }
    }
}

fn filed((diagnostics, records, ..): &KernelFindings) -> Box<[Filed]> {
    fn at(out: &mut Vec<Filed>, f: usize) -> &mut Filed {
        let i = match out.iter().position(|x| x.0 == f) {
            Some(i) => i,
            None => {
                out.push((f, 0, 0));
                out.len() - 1
            }
        };
        &mut out[i]
    }
    let mut out: Vec<Filed> = Vec::new();
    for (f, _) in diagnostics {
        at(&mut out, *f).1 += 1;
    }
    for (f, _) in records {
        at(&mut out, *f).2 += 1;
    }
    out.into_boxed_slice()
}

fn unpacked(p: Packed) -> KernelFindings {
    let records = p
        .records
        .into_iter()
        .map(|(f, mut r, x)| {
            r.restore(x);
            (f, r)
        })
        .collect();
    (p.diagnostics, records, p.timed_out, p.counted)
}

fn finite((diagnostics, records, ..): &KernelFindings) -> bool {
    let ok = |x: &Option<f64>| x.is_none_or(f64::is_finite);
    let impact = |i: &Option<ImpactFigures>| {
        i.as_ref().is_none_or(|i| {
            [
                i.excess_per_request,
                i.warps_per_block,
                i.executions_per_warp,
                i.requests,
                i.excess,
                i.excess_bytes,
                i.share_of_kernel,
            ]
            .iter()
            .all(|x| x.is_finite())
        })
    };
    let figures = |f: &Figures| {
        [
            f.sectors_per_request,
            f.ideal_sectors_per_request,
            f.wavefronts_per_request,
            f.ideal_wavefronts_per_request,
        ]
        .iter()
        .all(ok)
            && impact(&f.impact)
    };
    diagnostics
        .iter()
        .all(|(_, d)| d.figures.as_ref().is_none_or(figures))
        && records.iter().all(|(_, r)| {
            [
                r.sectors_per_request,
                r.ideal_sectors_per_request,
                r.wavefronts_per_request,
                r.ideal_wavefronts_per_request,
            ]
            .iter()
            .all(ok)
                && impact(&r.impact)
                && r.padded.as_ref().is_none_or(|p| p.wavefronts.is_finite())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_findings_as_they_are_packed_today() {
        let p: Packed = serde_json::from_slice(DICTIONARY).expect(
            "found_dictionary.json no longer reads as packed findings: write one kernel's \
             findings as `Found::new` serializes them (with diagnostics and records) there",
        );
        assert!(!p.diagnostics.is_empty() && !p.records.is_empty());
    }
}
