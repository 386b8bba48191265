//! `cudalint.toml`: found by walking up from each checked file (the nearest wins) or given with
//! `--config`. Unknown keys and bad values are errors that name the file, line and key.

use crate::codes::RULES;
use crate::diagnostic::Severity;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

pub const FILE_NAME: &str = "cudalint.toml";

/// Every option, documented once: the README's table is checked against this list.
pub const OPTIONS: &[(&str, &str)] = &[
    ("select", "codes or prefixes to report (default: every rule that is on by default)"),
    ("ignore", "codes or prefixes never to report"),
    ("fail-on", "`error`, `warning`, `info` or `never`: the lowest severity that makes `check` exit 1"),
    ("[severity] CODE", "the severity of a rule: `error`, `warning` or `info`"),
    ("[per-file-ignores] \"GLOB\"", "codes or prefixes not reported in files matching the glob (relative to the config's folder)"),
    ("exclude", "files never checked or reported, as globs relative to the config's folder: [\"third_party/**\"]; an excluded header a checked file includes is still read for its macros, types and helpers"),
    ("[analysis] block", "block shape for kernels with no visible launch and no __launch_bounds__, e.g. [256] or [16, 16]"),
    ("[analysis] runtime-default", "value assumed for runtime quantities with no configured value (default 1024)"),
    ("defines", "macros defined for every file, as `-D` takes them: [\"USE_FP16\", \"TILE=32\"]; they pick `#if` branches and give values to names the files do not define"),
    ("undefines", "macros the build does not define, as `-U` takes them: [\"ENABLE_FP32\"] (an `#ifdef` on a name nothing defines or undefines, and that a build file names, keeps its first branch)"),
    ("include-dirs", "folders searched for `#include \"...\"` headers after the including file's own, as `-I` takes them, relative to this file's folder: [\"src\", \"third_party/include\"]"),
    ("compile-commands", "the compilation database whose flags (`-D`, `-U`, `-I`, `-isystem`, `-include`, `-std`) each file is read with, relative to this file's folder: \"build/compile_commands.json\" (a folder holding one will do); without it, one is looked for above each file"),
    ("[kernels.NAME] block", "the block shape of kernel NAME, over anything cudalint infers"),
    ("[params] NAME", "the value of a runtime quantity (kernel parameter, template argument), e.g. Width = 4096"),
    ("[target] sector-size", "bytes per global-memory sector (default 32, as on H100/H200)"),
    ("[target] banks", "shared-memory banks (default 32)"),
    ("[target] bank-width", "bytes per shared-memory bank, 4 or 8 (default 4)"),
    ("[target] warp-size", "32: every NVIDIA GPU has 32-lane warps, and cudalint models only those"),
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    select: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    fail_on: Option<Spanned<String>>,
    #[serde(default)]
    severity: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    per_file_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    analysis: RawAnalysis,
    #[serde(default)]
    kernels: BTreeMap<String, RawKernel>,
    #[serde(default)]
    params: BTreeMap<String, i64>,
    #[serde(default)]
    defines: Vec<Spanned<String>>,
    #[serde(default)]
    undefines: Vec<Spanned<String>>,
    #[serde(default)]
    include_dirs: Vec<Spanned<String>>,
    compile_commands: Option<Spanned<String>>,
    #[serde(default)]
    target: RawTarget,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTarget {
    sector_size: Option<Spanned<i64>>,
    banks: Option<Spanned<i64>>,
    bank_width: Option<Spanned<i64>>,
    warp_size: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawAnalysis {
    block: Option<Spanned<Vec<i64>>>,
    runtime_default: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    block: Spanned<Vec<i64>>,
}

/// A loaded, validated configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub path: PathBuf,
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    pub fail_on: Option<Option<Severity>>,
    pub severity: BTreeMap<String, Severity>,
    per_file_ignores: Vec<(globset::GlobMatcher, Vec<String>)>,
    exclude: Vec<globset::GlobMatcher>,
    pub default_block: Option<[i64; 3]>,
    pub runtime_default: Option<i64>,
    pub kernel_blocks: BTreeMap<String, [i64; 3]>,
    pub params: BTreeMap<String, i64>,
    pub defines: cudalint_syntax::Defines,
    /// `include-dirs`, resolved against the configuration's folder.
    pub include_dirs: Vec<PathBuf>,
    /// `compile-commands`, resolved against the configuration's folder.
    pub compile_commands: Option<PathBuf>,
    pub target: Option<cudalint_analysis::Target>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

fn known_code(c: &str) -> bool {
    !c.is_empty() && RULES.iter().any(|r| r.code.starts_with(c))
}

fn block(v: &[i64]) -> Option<[i64; 3]> {
    if v.is_empty() || v.len() > 3 || v.iter().any(|x| *x <= 0) || v.iter().product::<i64>() > 1024
    {
        return None;
    }
    Some([v[0], *v.get(1).unwrap_or(&1), *v.get(2).unwrap_or(&1)])
}

/// The `[target]` table: the GPU geometry, every size a power of two in its range.
fn target(
    t: &RawTarget,
    at: &dyn Fn(std::ops::Range<usize>, String) -> String,
) -> Result<Option<cudalint_analysis::Target>, String> {
    if let Some(w) = &t.warp_size {
        if *w.get_ref() != 32 {
            return Err(at(w.span(), format!("`target.warp-size`: {} is not 32; every NVIDIA GPU has 32-lane warps and cudalint models only those", w.get_ref())));
        }
    }
    if t.sector_size.is_none() && t.banks.is_none() && t.bank_width.is_none() {
        return Ok(None);
    }
    let mut target = cudalint_analysis::Target::default();
    let pow2 = |v: &Spanned<i64>, key: &str, lo: i64, hi: i64| -> Result<i64, String> {
        let x = *v.get_ref();
        if x >= lo && x <= hi && x & (x - 1) == 0 {
            Ok(x)
        } else {
            Err(at(
                v.span(),
                format!("`target.{key}`: {x} is not a power of two between {lo} and {hi}"),
            ))
        }
    };
    if let Some(v) = &t.sector_size {
        target.sector_bytes = pow2(v, "sector-size", 8, 128)?;
    }
    if let Some(v) = &t.banks {
        target.banks = pow2(v, "banks", 1, 64)?;
    }
    if let Some(v) = &t.bank_width {
        target.bank_bytes = pow2(v, "bank-width", 4, 8)?;
    }
    Ok(Some(target))
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Config::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, String> {
        let at = |span: std::ops::Range<usize>, msg: String| {
            format!("{}:{}: {msg}", path.display(), line_of(text, span.start))
        };
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            format!("{}:{line}: {}", path.display(), e.message().trim())
        })?;
        let codes = |list: &[Spanned<String>], key: &str| -> Result<Vec<String>, String> {
            list.iter()
                .map(|c| {
                    let v = c.get_ref().trim().to_ascii_uppercase();
                    if known_code(&v) {
                        Ok(v)
                    } else {
                        Err(at(c.span(), format!("`{key}`: `{}` is not a rule code or prefix (see `cudalint explain`)", c.get_ref())))
                    }
                })
                .collect()
        };
        let mut cfg = Config {
            path: path.to_path_buf(),
            ..Config::default()
        };
        if let Some(s) = &raw.select {
            cfg.select = Some(codes(s, "select")?);
        }
        cfg.ignore = codes(&raw.ignore, "ignore")?;
        if let Some(f) = &raw.fail_on {
            cfg.fail_on = Some(match f.get_ref().as_str() {
                "never" => None,
                s => Some(Severity::parse(s).ok_or_else(|| {
                    at(
                        f.span(),
                        format!("`fail-on`: `{s}` is not one of error, warning, info, never"),
                    )
                })?),
            });
        }
        for (k, v) in &raw.severity {
            let code = k.get_ref().to_ascii_uppercase();
            if !RULES.iter().any(|r| r.code == code) {
                return Err(at(
                    k.span(),
                    format!("`severity`: `{}` is not a rule code", k.get_ref()),
                ));
            }
            let s = Severity::parse(v.get_ref()).ok_or_else(|| {
                at(
                    v.span(),
                    format!(
                        "`severity.{code}`: `{}` is not one of error, warning, info",
                        v.get_ref()
                    ),
                )
            })?;
            cfg.severity.insert(code, s);
        }
        for (glob, list) in &raw.per_file_ignores {
            let g = globset::Glob::new(glob.get_ref()).map_err(|e| {
                at(
                    glob.span(),
                    format!("`per-file-ignores`: bad glob `{}`: {e}", glob.get_ref()),
                )
            })?;
            cfg.per_file_ignores
                .push((g.compile_matcher(), codes(list, "per-file-ignores")?));
        }
        for glob in &raw.exclude {
            let g = globset::Glob::new(glob.get_ref()).map_err(|e| {
                at(
                    glob.span(),
                    format!("`exclude`: bad glob `{}`: {e}", glob.get_ref()),
                )
            })?;
            cfg.exclude.push(g.compile_matcher());
        }
        if let Some(b) = &raw.analysis.block {
            cfg.default_block = Some(block(b.get_ref()).ok_or_else(|| {
                at(
                    b.span(),
                    "`analysis.block`: 1 to 3 positive sizes, at most 1024 threads".into(),
                )
            })?);
        }
        if let Some(r) = raw.analysis.runtime_default {
            if r <= 0 {
                return Err(format!(
                    "{}: `analysis.runtime-default` must be positive",
                    path.display()
                ));
            }
            cfg.runtime_default = Some(r);
        }
        for (name, k) in &raw.kernels {
            let b = block(k.block.get_ref()).ok_or_else(|| {
                at(
                    k.block.span(),
                    format!("`kernels.{name}.block`: 1 to 3 positive sizes, at most 1024 threads"),
                )
            })?;
            cfg.kernel_blocks.insert(name.clone(), b);
        }
        cfg.params = raw.params;
        for d in &raw.defines {
            cfg.defines
                .insert_flag(d.get_ref())
                .map_err(|e| at(d.span(), format!("`defines`: {e}")))?;
        }
        for u in &raw.undefines {
            cfg.defines
                .undefine(u.get_ref())
                .map_err(|e| at(u.span(), format!("`undefines`: {e}")))?;
        }
        let folder = path.parent().unwrap_or(Path::new(""));
        for d in &raw.include_dirs {
            let dir = folder.join(d.get_ref());
            if !dir.is_dir() {
                return Err(at(
                    d.span(),
                    format!("`include-dirs`: no folder `{}`", dir.display()),
                ));
            }
            cfg.include_dirs.push(dir);
        }
        if let Some(c) = &raw.compile_commands {
            let db = crate::compile_commands::named(&folder.join(c.get_ref()));
            if !db.is_file() {
                return Err(at(
                    c.span(),
                    format!("`compile-commands`: no file `{}`", db.display()),
                ));
            }
            cfg.compile_commands = Some(db);
        }
        cfg.target = target(&raw.target, &at)?;
        Ok(cfg)
    }

    /// Whether findings of `code` are reported in `file` (`default` is the rule's own default).
    pub fn enabled(&self, code: &str, file: &str, default: bool) -> bool {
        let on = match &self.select {
            Some(list) => list.iter().any(|c| code.starts_with(c.as_str())),
            None => default,
        };
        if !on || self.ignore.iter().any(|c| code.starts_with(c.as_str())) {
            return false;
        }
        let rel = self.relative(file);
        !self.per_file_ignores.iter().any(|(g, codes)| {
            g.is_match(&rel) && codes.iter().any(|c| code.starts_with(c.as_str()))
        })
    }

    /// Whether `exclude` names the file: it is neither checked nor reported.
    pub fn excludes(&self, file: &str) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        let rel = self.relative(file);
        self.exclude.iter().any(|g| g.is_match(&rel))
    }

    /// `file` relative to the configuration's folder (as its globs are written).
    fn relative(&self, file: &str) -> PathBuf {
        let dir = self.path.parent().unwrap_or(Path::new(""));
        let abs = std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file));
        let canon_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        abs.strip_prefix(&canon_dir)
            .map(Path::to_path_buf)
            .unwrap_or(abs.clone())
    }

    /// The analysis options of files under this configuration, over `base`.
    pub fn analysis(&self, base: &cudalint_analysis::Options) -> cudalint_analysis::Options {
        let mut o = base.clone();
        if let Some(b) = self.default_block {
            o.default_block = b;
        }
        if let Some(r) = self.runtime_default {
            o.runtime_default = r;
        }
        for (k, v) in &self.params {
            o.params.entry(k.clone()).or_insert(*v);
        }
        for (k, v) in &self.kernel_blocks {
            o.kernel_blocks.insert(k.clone(), *v);
        }
        if let Some(t) = self.target {
            o.target = t;
        }
        o
    }
}

/// The nearest `cudalint.toml` above `file` (its own folder first).
pub fn discover(file: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(file).ok()?;
    let mut dir = start.parent();
    while let Some(d) = dir {
        let c = d.join(FILE_NAME);
        if c.is_file() {
            return Some(c);
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, String> {
        Config::parse(s, Path::new("cudalint.toml"))
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let e = parse("select = [\"CL2\"]\n\n[analysis]\nblok = [256]\n").unwrap_err();
        assert!(
            e.starts_with("cudalint.toml:4:") && e.contains("blok"),
            "{e}"
        );
        let e = parse("ignore = [\"CL9\"]\n").unwrap_err();
        assert!(e.contains("cudalint.toml:1:") && e.contains("CL9"), "{e}");
        let e = parse("[severity]\nCL201 = \"loud\"\n").unwrap_err();
        assert!(e.contains(":2:") && e.contains("loud"), "{e}");
        let e = parse("[kernels.k]\nblock = [0, 4]\n").unwrap_err();
        assert!(e.contains(":2:") && e.contains("kernels.k.block"), "{e}");
        assert!(parse("fail-on = \"sometimes\"\n")
            .unwrap_err()
            .contains("fail-on"));
        let e = parse("[target]\nwarp-size = 64\n").unwrap_err();
        assert!(e.contains(":2:") && e.contains("warp-size"), "{e}");
        assert!(parse("[target]\nsector-size = 48\n")
            .unwrap_err()
            .contains("sector-size"));
        assert_eq!(
            parse("[target]\nsector-size = 64\n")
                .unwrap()
                .target
                .map(|t| t.sector_bytes),
            Some(64)
        );
    }

    #[test]
    fn selects_ignores_and_globs() {
        let c = parse("select = [\"CL2\", \"CL301\"]\nignore = [\"CL203\"]\n[per-file-ignores]\n\"legacy/**\" = [\"CL3\"]\n").unwrap();
        assert!(c.enabled("CL201", "a.cu", false));
        assert!(!c.enabled("CL203", "a.cu", true));
        assert!(!c.enabled("CL102", "a.cu", true));
        assert!(c.enabled("CL301", "src/a.cu", true));
        assert!(!c.enabled("CL301", "legacy/old/a.cu", true));
    }
}
