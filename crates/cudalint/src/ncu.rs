//! `cudalint ncu`: holds cudalint's predictions against a user's own Nsight Compute profile.
//! Reads the per-source-line export (`ncu -i rep.ncu-rep --page source --csv --print-source
//! cuda,sass`, or the report itself when `ncu` is on PATH), lines each measured
//! (line, space, op) up with what cudalint predicts for the same line, and says where they
//! agree, where the hardware saw waste cudalint did not report, and where cudalint warned
//! about waste the hardware did not see.

use cudalint_rules::{AccessRecord, FileReport, Input, Settings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Per (file, line, space, op): instructions executed and the sums ncu reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    pub file: String,
    pub line: usize,
    pub space: String,
    pub op: String,
    pub bytes: i64,
    pub executed: f64,
    pub sectors: f64,
    pub ideal_sectors: f64,
    /// Σ n-way × requests (shared).
    pub nway_weighted: f64,
    /// Shared requests with a lane on: what `nway_weighted` is a sum over.
    pub shared_requests: f64,
    /// Whether any one instruction of the line is wasteful (two accesses on a line, one
    /// strided, must not average into "fine").
    pub any_waste: bool,
    /// Excessive sectors (global) or wavefronts (shared) per kernel that ran the line: ncu's
    /// own excess columns, or the theoretical minus the ideal where the export lacks them.
    pub excess_by_kernel: BTreeMap<String, f64>,
}

impl Measured {
    /// Global: sectors per request, ideal. Shared: wavefronts per request, ideal for the size.
    pub fn figures(&self) -> (f64, f64) {
        let n = self.executed.max(1.0);
        if self.space == "global" {
            (self.sectors / n, self.ideal_sectors / n)
        } else {
            let ideal = match self.bytes {
                0..=4 => 1.0,
                5..=8 => 2.0,
                _ => 4.0,
            };
            (self.nway_weighted / self.shared_requests.max(1.0), ideal)
        }
    }

    fn wasteful(&self) -> bool {
        self.any_waste
    }
}

const REQUIRED: &[&str] = &[
    "Address Space",
    "Access Operation",
    "Instructions Executed",
    "L2 Theoretical Sectors Global",
    "L2 Theoretical Sectors Global Ideal",
    "L1 Conflicts Shared N-Way",
];

const HOW: &str = "export it with: ncu -i REPORT.ncu-rep --page source --csv --print-source cuda,sass > lines.csv";

/// Parses the CSV export. A file that is not one is an error that says what it lacks.
pub fn parse(text: &str) -> Result<Vec<Measured>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out: BTreeMap<(String, usize, String, String, i64), Measured> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    let mut header: Option<BTreeMap<String, usize>> = None;
    let mut file = String::new();
    let mut function = String::new();
    let mut line: Option<usize> = None;
    let mut saw_file = false;
    for (n, record) in reader.records().enumerate() {
        let record = record.map_err(|e| format!("not a CSV file ({e})"))?;
        let first = record.get(0).unwrap_or("");
        match first {
            "File Path" => {
                file = record.get(1).unwrap_or("").to_string();
                saw_file = true;
                continue;
            }
            "Function Name" => {
                function = record.get(1).unwrap_or("").to_string();
                continue;
            }
            "Line No" => {
                let mut cols = BTreeMap::new();
                for (i, name) in record.iter().enumerate() {
                    cols.entry(name.to_string()).or_insert(i);
                }
                if let Some(missing) = REQUIRED.iter().find(|c| !cols.contains_key(**c)) {
                    return Err(format!(
                        "an ncu source export without the `{missing}` column: it needs the SourceCounters section and SASS rows; {HOW}"
                    ));
                }
                header = Some(cols);
                continue;
            }
            _ => {}
        }
        if !saw_file && n > 2 {
            return Err(format!(
                "not an ncu per-source-line CSV export (no `File Path` row); {HOW}"
            ));
        }
        let Some(cols) = &header else { continue };
        let get = |name: &str| cols.get(name).and_then(|&i| record.get(i)).unwrap_or("");
        if let Ok(l) = first.trim().parse::<usize>() {
            line = Some(l);
            continue;
        }
        let space = match get("Address Space") {
            "Global" => "global",
            "Shared" => "shared",
            _ => continue,
        };
        let Some(l) = line else { continue };
        let executed: f64 = get("Instructions Executed").parse().unwrap_or(0.0);
        if executed == 0.0 {
            continue;
        }
        // each kernel's block can appear twice in an export: count an instruction once
        if !seen.insert((function.clone(), l, get("Address").to_string())) {
            continue;
        }
        let op = match get("Access Operation").to_ascii_lowercase() {
            o if o.starts_with("load") || o == "read" => "load",
            o if o.starts_with("store") || o == "write" => "store",
            _ => "atomic",
        };
        // one record per access size too: a line with an LDS.128 and scalar LDS is two accesses
        let bytes = get("Access Size")
            .parse::<f64>()
            .map(|b| (b / 8.0) as i64)
            .unwrap_or(4);
        let m = out
            .entry((file.clone(), l, space.to_string(), op.to_string(), bytes))
            .or_insert_with(|| Measured {
                file: file.clone(),
                line: l,
                space: space.to_string(),
                op: op.to_string(),
                bytes,
                ..Measured::default()
            });
        let sectors = get("L2 Theoretical Sectors Global")
            .parse::<f64>()
            .unwrap_or(0.0);
        let ideal = get("L2 Theoretical Sectors Global Ideal")
            .parse::<f64>()
            .unwrap_or(0.0);
        let ideal_nway = match bytes {
            0..=4 => 1.0,
            5..=8 => 2.0,
            _ => 4.0,
        };
        // an atomic's wavefronts count its compare-and-swap retries, as its ideal does
        let (nway, requests) = shared_nway(
            get("L1 Conflicts Shared N-Way").parse().unwrap_or(0.0),
            get("L1 Wavefronts Shared").parse().unwrap_or(0.0),
            get("L1 Wavefronts Shared Ideal").parse().unwrap_or(0.0),
            ideal_nway,
            executed,
            op != "atomic",
        );
        let excess = match space {
            "global" => get("L2 Theoretical Sectors Global Excessive")
                .parse::<f64>()
                .unwrap_or((sectors - ideal).max(0.0)),
            _ => get("L1 Wavefronts Shared Excessive")
                .parse::<f64>()
                .unwrap_or(((nway - ideal_nway) * executed).max(0.0)),
        };
        *m.excess_by_kernel
            .entry(crate::impact_rank::kernel_name(&function))
            .or_insert(0.0) += excess;
        m.any_waste |= if space == "global" {
            sectors >= 2.0 * ideal - 0.01 * executed
        } else {
            nway > ideal_nway + 0.01
        };
        m.executed += executed;
        m.sectors += sectors;
        m.ideal_sectors += ideal;
        m.nway_weighted += nway * requests;
        m.shared_requests += requests;
    }
    if header.is_none() {
        return Err(format!(
            "not an ncu per-source-line CSV export (no `Line No` header); {HOW}"
        ));
    }
    Ok(out.into_values().collect())
}

/// A shared instruction's wavefronts per request and the requests it is an average over. An access nvcc
/// predicates in a loop it does not unroll (`if (index < n)` of a tree reduction) also runs in
/// warps with every lane off: ncu counts those as executed and leaves its n-way at 0, so the
/// figure is the wavefronts over the requests with a lane on (the ideal wavefronts over the
/// ideal of one request), as `tools/measure/csv2json.py` takes it for the fixtures.
fn shared_nway(
    nway: f64,
    wavefronts: f64,
    ideal: f64,
    ideal_nway: f64,
    executed: f64,
    exact: bool,
) -> (f64, f64) {
    // ncu's n-way column is the wavefronts per request rounded down (1 for minimod's 3D
    // stencil loads at 27,380 wavefronts over 14,060 requests): the quotient is exact. A
    // request of 4 bytes a lane or less is one wavefront at best however many lanes are on,
    // so its ideal counts the requests with a lane on; a wider one's ideal depends on them.
    if wavefronts > 0.0 && ideal > 0.0 && (nway == 0.0 || (exact && ideal_nway == 1.0)) {
        let requests = ideal / ideal_nway;
        (wavefronts / requests, requests)
    } else if exact && wavefronts > 0.0 && executed > 0.0 {
        (wavefronts / executed, executed)
    } else {
        (nway, executed)
    }
}

/// The sources under `root` that `#include` a file of the profile: a kernel file that is part
/// of another file's translation unit (cuda-samples' `bitonicSort.cu` defines
/// `LOCAL_SIZE_LIMIT` and then includes `bitonicSort_kernels.cu`, whose kernels the profile
/// names) is checked with the macros and launches of its includer, as a folder's `check` does.
fn includers(root: &Path, profiled: &[Input]) -> Vec<Input> {
    let names: Vec<&str> = profiled
        .iter()
        .filter_map(|i| Path::new(&i.path).file_name()?.to_str())
        .collect();
    let taken: std::collections::HashSet<PathBuf> = profiled
        .iter()
        .filter_map(|i| std::fs::canonicalize(&i.path).ok())
        .collect();
    let includes_one = |text: &str| {
        text.lines().any(|l| {
            let l = l.trim_start();
            l.strip_prefix('#')
                .map(str::trim_start)
                .and_then(|l| l.strip_prefix("include"))
                .and_then(cudalint_syntax::included_name)
                .is_some_and(|spelled| {
                    let base = spelled.rsplit('/').next().unwrap_or(spelled);
                    names.contains(&base)
                })
        })
    };
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(root)
        .hidden(true)
        .build()
        .flatten()
    {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !crate::inputs::is_source(path)
            || std::fs::canonicalize(path).is_ok_and(|c| taken.contains(&c))
        {
            continue;
        }
        if let Ok((input, _)) = crate::inputs::read(&path.to_string_lossy()) {
            if includes_one(&input.text) {
                out.push(input);
            }
        }
    }
    out
}

/// Reads a report: the CSV export, or a `.ncu-rep` through `ncu` when it is on PATH.
pub fn read_report(path: &str) -> Result<String, String> {
    if path.ends_with(".ncu-rep") {
        let out = std::process::Command::new("ncu")
            .args([
                "-i",
                path,
                "--page",
                "source",
                "--csv",
                "--print-source",
                "cuda,sass",
            ])
            .output()
            .map_err(|e| {
                format!("{path}: reading a .ncu-rep needs `ncu` on PATH ({e}); or {HOW}")
            })?;
        if !out.status.success() {
            return Err(format!(
                "{path}: ncu could not export it: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        return String::from_utf8(out.stdout)
            .map_err(|_| format!("{path}: ncu's export is not UTF-8"));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("{path}: not a text file; {HOW}"))
}

/// The local file for a path recorded on the profiling machine: the longest suffix of it that
/// exists under `root`, else the path as written.
pub fn locate(recorded: &str, root: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = recorded.split('/').filter(|s| !s.is_empty()).collect();
    (0..parts.len())
        .map(|k| root.join(parts[k..].join("/")))
        .find(|c| c.is_file())
        .or_else(|| Some(PathBuf::from(recorded)).filter(|p| p.is_file()))
}

#[derive(Debug, PartialEq)]
pub enum Verdict {
    Agree,
    /// The hardware saw waste cudalint did not report.
    Missed,
    /// cudalint reported waste the hardware did not see.
    FalseAlarm,
    /// Both call it wasteful (or not) but the figures differ by more than 10%.
    Differs,
    /// No access of cudalint's on that line (inlined from elsewhere, not analysed).
    Unpredicted,
    /// cudalint sees the access but gives no figure (data-dependent, unknown).
    Unpriced,
}

pub struct Row {
    pub measured: Measured,
    pub local: String,
    pub predicted: Option<(f64, f64)>,
    pub verdict: Verdict,
    pub text: String,
    /// The estimated excess bytes of cudalint's accesses on the line, with their kernel.
    pub impacts: Vec<(String, f64)>,
}

pub fn compare(
    measured: &[Measured],
    reports: &[FileReport],
    locals: &BTreeMap<String, String>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let widths: std::collections::HashSet<_> = measured
        .iter()
        .map(|m| (&m.file, m.line, &m.space, &m.op, m.bytes))
        .collect();
    for m in measured {
        let Some(local) = locals.get(&m.file) else {
            continue;
        };
        let mut mine = measured_accesses(m, local, reports);
        if mine.iter().any(|a| a.bytes == m.bytes) {
            mine.retain(|a| a.bytes == m.bytes);
        }
        // a finding on one of those accesses (messages start "global load ...")
        let kind = format!("{} {}", m.space, m.op);
        let flagged = mine.iter().any(|a| {
            reports
                .iter()
                .filter(|r| r.path == a.file)
                .flat_map(|r| &r.diagnostics)
                .any(|d| {
                    (d.at.line, d.at.column) == (a.line, a.column)
                        && matches!(d.code, "CL201" | "CL202" | "CL204" | "CL301")
                        && d.message.starts_with(&kind)
                })
        });
        let figures: Vec<(f64, f64)> = mine
            .iter()
            .filter_map(|a| match m.space.as_str() {
                "global" => Some((a.sectors_per_request?, a.ideal_sectors_per_request?)),
                _ => Some((a.wavefronts_per_request?, a.ideal_wavefronts_per_request?)),
            })
            .collect();
        let predicted = (!figures.is_empty()).then(|| {
            let n = figures.len() as f64;
            (
                figures.iter().map(|f| f.0).sum::<f64>() / n,
                figures.iter().map(|f| f.1).sum::<f64>() / n,
            )
        });
        let (meas, _) = m.figures();
        let verdict = match predicted {
            None if !mine.is_empty() => Verdict::Unpriced,
            None => Verdict::Unpredicted,
            Some(_) if m.wasteful() && !flagged => Verdict::Missed,
            Some(_) if !m.wasteful() && flagged => Verdict::FalseAlarm,
            Some((p, _)) if (p - meas).abs() > 0.1 * meas.max(1.0) => Verdict::Differs,
            Some(_) => Verdict::Agree,
        };
        let text = mine
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        // an access stands for the measured instructions of its own width when the line has
        // some: a 4-byte load ncu files beside the 8-byte one cudalint sees is another access
        // (its vector form, when nvcc merged it and the line has no instruction of its width)
        let impacts = mine
            .iter()
            .filter(|a| {
                a.bytes == m.bytes || !widths.contains(&(&m.file, m.line, &m.space, &m.op, a.bytes))
            })
            .filter_map(|a| Some((a.kernel.clone(), a.impact.as_ref()?.excess_bytes)))
            .collect();
        rows.push(Row {
            measured: m.clone(),
            local: local.clone(),
            predicted,
            verdict,
            text,
            impacts,
        });
    }
    rows
}

/// cudalint's accesses of the measured kind that ncu files under this line: those on the line,
/// else one whose expression ends on it (ncu files `reinterpret_cast<float4*>(\n &C[i])[0]`
/// under the later line), else a load hoisted out of a loop between whose head and the load
/// the line is, else one inlined through a call on it (an access of a helper that
/// ncu files under the call line).
fn measured_accesses<'r>(
    m: &Measured,
    local: &str,
    reports: &'r [FileReport],
) -> Vec<&'r AccessRecord> {
    let kind = |a: &&AccessRecord| a.space == m.space && a.op == m.op;
    let all = || reports.iter().flat_map(|r| &r.accesses).filter(kind);
    let on_line: Vec<_> = all()
        .filter(|a| a.file == local && a.line == m.line)
        .collect();
    if !on_line.is_empty() {
        return on_line;
    }
    let in_statement: Vec<_> = all()
        .filter(|a| a.file == local && a.line < m.line && m.line <= a.end_line)
        .collect();
    if !in_statement.is_empty() {
        return in_statement;
    }
    // a load hoisted out of its loop, filed under a line from the loop's head to its own
    let hoisted: Vec<_> = all()
        .filter(|a| {
            a.file == local
                && a.issued_at
                    .as_ref()
                    .is_some_and(|i| i.file == local && i.line <= m.line && m.line < a.line)
        })
        .collect();
    if !hoisted.is_empty() {
        return hoisted;
    }
    all()
        .filter(|a| {
            a.inlined_at
                .iter()
                .any(|c| c.file == local && c.line == m.line)
        })
        .collect()
}

fn num(x: f64) -> String {
    if (x - x.round()).abs() < 0.005 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

pub fn render(rows: &[Row]) -> String {
    let mut s = String::from("location                       space  op      measured    predicted  verdict      access\n");
    for r in rows {
        let (m, mi) = r.measured.figures();
        let pred = r
            .predicted
            .map(|(p, i)| format!("{}/{}", num(p), num(i)))
            .unwrap_or_else(|| "-".into());
        let verdict = match r.verdict {
            Verdict::Agree => "agree",
            Verdict::Missed => "MISSED",
            Verdict::FalseAlarm => "FALSE ALARM",
            Verdict::Differs => "differs",
            Verdict::Unpredicted => "no access",
            Verdict::Unpriced => "not priced",
        };
        let loc = format!(
            "{}:{}",
            r.local.rsplit('/').next().unwrap_or(&r.local),
            r.measured.line
        );
        s.push_str(&format!(
            "{loc:<30} {:<6} {:<6} {:>9}  {:>11}  {verdict:<11}  {}\n",
            r.measured.space,
            r.measured.op,
            format!("{}/{}", num(m), num(mi)),
            pred,
            r.text
        ));
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    s.push_str(&format!(
        "{} measured lines: {} agree, {} differ in figure, {} missed (waste the hardware saw, not reported), {} false alarms (reported, not seen), {} not priced by cudalint, {} with no access of cudalint's\n",
        rows.len(),
        count(Verdict::Agree),
        count(Verdict::Differs),
        count(Verdict::Missed),
        count(Verdict::FalseAlarm),
        count(Verdict::Unpriced),
        count(Verdict::Unpredicted)
    ));
    s
}

/// The whole command. Returns the exit code: 0 when nothing was missed or falsely reported,
/// 1 otherwise, 2 when the report cannot be read.
pub fn run(
    report: &str,
    root: &Path,
    settings: &Settings,
    compile: &cudalint_rules::compile_commands::Source,
) -> Result<(String, bool), String> {
    let text = read_report(report)?;
    let measured = parse(&text).map_err(|e| format!("{report}: {e}"))?;
    let mut locals = BTreeMap::new();
    let mut inputs = Vec::new();
    let mut unfound = Vec::new();
    for m in &measured {
        if locals.contains_key(&m.file) || unfound.contains(&m.file) {
            continue;
        }
        match locate(&m.file, root) {
            Some(p) => {
                let path = p.to_string_lossy().into_owned();
                if let Ok(t) = std::fs::read_to_string(&p) {
                    inputs.push(Input::new(path.clone(), t));
                }
                locals.insert(m.file.clone(), path);
            }
            None => unfound.push(m.file.clone()),
        }
    }
    inputs.extend(includers(root, &inputs));
    // the profile's lines in headers are matched against the accesses reported there
    let skip = |_: &Path| false;
    let warnings = cudalint_rules::workspace::prepare(
        &mut inputs,
        None,
        &[],
        compile,
        cudalint_rules::workspace::Headers::Reported {
            skip: &skip,
            folders: &[root.to_path_buf()],
        },
    )?;
    for w in warnings {
        eprintln!("cudalint: warning: {w}");
    }
    if inputs.is_empty() {
        return Err(format!(
            "{report}: none of its source files is under {} (recorded as {})",
            root.display(),
            unfound.join(", ")
        ));
    }
    let reports = cudalint_rules::check(&inputs, settings);
    let rows = compare(&measured, &reports, &locals);
    let mut out = render(&rows);
    out.push_str(&crate::impact_rank::render(&crate::impact_rank::rank(
        &rows, &reports,
    )));
    for f in unfound {
        out.push_str(&format!(
            "note: {f} (a file of the profile) is not under {}: its lines are left out\n",
            root.display()
        ));
    }
    let clean = rows
        .iter()
        .all(|r| !matches!(r.verdict, Verdict::Missed | Verdict::FalseAlarm));
    Ok((out, clean))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CoffeeBeforeArch's tree reduction, `partial_sum[index] += partial_sum[index + s]` under
    /// `if (index < blockDim.x)`, as an H100 measured its LDS: 16,384 executed, n-way 0, 12,032
    /// wavefronts against 3,072 ideal: 3.92 a request with a lane on, not 0.
    #[test]
    fn a_predicated_shared_access_is_priced_over_the_requests_with_a_lane_on() {
        let (n, requests) = shared_nway(0.0, 12032.0, 3072.0, 1.0, 16384.0, true);
        assert_eq!(requests, 3072.0);
        assert!((n - 3.917).abs() < 0.01);
        assert_eq!(
            shared_nway(2.0, 4096.0, 2048.0, 1.0, 2048.0, true),
            (2.0, 2048.0)
        );
    }

    /// minimod's `s_u[sui][suj+1][suk]` on an H100: ncu's n-way column says 1 (it rounds
    /// down), its wavefronts say 1.95 a request, most warps 2-way and the last ones with
    /// fewer rows of lanes on; and an 8-byte load's figure is its wavefronts per request.
    #[test]
    fn the_n_way_is_the_wavefronts_per_request_not_the_rounded_column() {
        let (n, requests) = shared_nway(1.0, 27380.0, 14060.0, 1.0, 14060.0, true);
        assert_eq!(requests, 14060.0);
        assert!((n - 1.947).abs() < 0.01);
        let (n, _) = shared_nway(2.0, 3000.0, 2048.0, 2.0, 1024.0, true);
        assert!((n - 2.93).abs() < 0.01);
    }

    /// One measured global load of `file` at `line`: 32 sectors a request, 4 ideal.
    fn strided_load(file: &str, line: usize) -> Measured {
        Measured {
            file: file.into(),
            line,
            space: "global".into(),
            op: "load".into(),
            bytes: 4,
            executed: 10.0,
            sectors: 320.0,
            ideal_sectors: 40.0,
            nway_weighted: 0.0,
            shared_requests: 0.0,
            any_waste: true,
            excess_by_kernel: BTreeMap::new(),
        }
    }

    #[test]
    fn lines_match_through_the_statement_and_the_inline_chain() {
        // helper's load is on line 2; ncu may file it under the call (line 6), and the
        // two-line access of line 7 under its second line
        let src = "__device__ float helper(const float* p, int i) {\n  return p[i * 8];\n}\n__global__ void k(float* o, const float* p, const float* q) {\n  int t = threadIdx.x;\n  o[t] = helper(p, t) +\n    reinterpret_cast<const float*>(\n      q)[t * 8];\n}\n";
        let inputs = [Input::new("k.cu", src)];
        let reports = cudalint_rules::check(&inputs, &Settings::default());
        let locals: BTreeMap<String, String> = [("k.cu".to_string(), "k.cu".to_string())].into();
        let rows = compare(
            &[
                strided_load("k.cu", 2),
                strided_load("k.cu", 6),
                strided_load("k.cu", 8),
                strided_load("k.cu", 4),
            ],
            &reports,
            &locals,
        );
        let verdicts: Vec<(usize, &Verdict, &str)> = rows
            .iter()
            .map(|r| (r.measured.line, &r.verdict, r.text.as_str()))
            .collect();
        assert_eq!(verdicts[0].1, &Verdict::Agree, "{verdicts:?}");
        assert_eq!(verdicts[1].1, &Verdict::Agree, "{verdicts:?}");
        assert!(verdicts[1].2.contains("p[i * 8]"), "{verdicts:?}");
        assert_eq!(verdicts[2].1, &Verdict::Agree, "{verdicts:?}");
        assert_eq!(verdicts[3].1, &Verdict::Unpredicted, "{verdicts:?}");
    }

    #[test]
    fn rejects_what_is_not_an_ncu_export() {
        assert!(parse("a,b,c\n1,2,3\n4,5,6\n7,8,9\n")
            .unwrap_err()
            .contains("not an ncu"));
        let no_sass = "\"File Path\",\"/x.cu\"\n\"Function Name\",\"k()\"\n\"Line No\",\"Source\"\n\"1\",\"x\"\n";
        assert!(parse(no_sass).unwrap_err().contains("Address Space"));
    }

    #[test]
    fn locates_a_recorded_path_by_its_suffix() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let found = locate("/elsewhere/machine/src/main.rs", root).unwrap();
        assert!(found.ends_with("src/main.rs"));
        assert!(locate("/nowhere/at/all.cu", root).is_none());
    }
}
