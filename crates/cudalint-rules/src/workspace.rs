//! Reading a workspace as frontends need it: the headers checked files include, the
//! cudalint.toml that governs each file and the compile command it is built with. Shared by the CLI and the language server.

use crate::compile_commands::{self, Database, Source};
use crate::Input;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What becomes of the headers checked files include.
pub enum Headers<'a> {
    /// Part of the translation unit, as the compiler sees them: their kernels and the
    /// `__device__` functions the checked files call are analysed and reported in them,
    /// unless `skip` says the file is not the project's to report (a .gitignore'd or
    /// excluded path). The CLI.
    ///
    /// `folders`: the folders the run was given, whose whole tree a quoted include found
    /// nowhere else is looked for in (`ProjectHeaders`): their CUDA files may all sit in one
    /// part of it and their headers in another (GROMACS's `src/` and `api/legacy/include`).
    Reported {
        skip: &'a dyn Fn(&Path) -> bool,
        folders: &'a [PathBuf],
    },
    /// Read only for their macros, types and helpers: the language server reports on the
    /// document it is given.
    Context,
}

/// Everything the checked files need from their workspace: each file's cudalint.toml (the one
/// `given`, or the nearest above it), its compile command, and the headers they include.
/// Returns the warnings to show (a database found by discovery that cannot be read, a
/// response file a command names that is not there); an error is a configuration or a named
/// database that does not load.
pub fn prepare(
    inputs: &mut Vec<Input>,
    given: Option<&str>,
    include_dirs: &[PathBuf],
    compile: &Source,
    headers: Headers,
) -> Result<Vec<String>, String> {
    // the headers are added even when a configuration does not load: the language server
    // goes on with the defaults
    let configs = attach_configs(inputs, given);
    if let Headers::Reported { .. } = headers {
        // what a configuration excludes is not checked (nor read, unless something includes it)
        inputs.retain(|i| !i.config.as_ref().is_some_and(|c| c.excludes(&i.path)));
    }
    let checked = inputs.len();
    let mut warnings = Vec::new();
    let databases = attach_compile_commands(inputs, compile, &mut warnings);
    let named = databases.iter().find_map(|d| d.as_ref().err().cloned());
    let folders = match &headers {
        Headers::Reported { folders, .. } => folders,
        Headers::Context => &[][..],
    };
    add_included(inputs, include_dirs, folders, databases, &mut warnings);
    let configs = configs.and(attach_configs(&mut inputs[checked..], given));
    for input in &mut inputs[checked..] {
        input.context = match &headers {
            Headers::Context => true,
            Headers::Reported { skip, .. } => {
                skip(Path::new(&input.path))
                    || input
                        .config
                        .as_ref()
                        .is_some_and(|c| c.excludes(&input.path))
            }
        };
    }
    crate::build_files::attach(inputs);
    configs?;
    if let Some(e) = named {
        return Err(e);
    }
    warnings.dedup();
    Ok(warnings)
}

/// Per input, the database its compile command was looked up in, or the error of one that was
/// named (by `--compile-commands` or a cudalint.toml) and does not load.
type Databases = Vec<Result<Option<Arc<Database>>, String>>;

/// Gives each input the compile command its database has for it. A database named by the
/// command line or a cudalint.toml must load; one found by looking is skipped with a warning.
fn attach_compile_commands(
    inputs: &mut [Input],
    source: &Source,
    warnings: &mut Vec<String>,
) -> Databases {
    let mut found: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    let mut opened: HashMap<PathBuf, Result<Option<Arc<Database>>, String>> = HashMap::new();
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs.iter_mut() {
        let (path, named) = match source {
            Source::Off => (None, false),
            Source::Given(p) => (Some(p.clone()), true),
            Source::Discover { fallback } => match input
                .config
                .as_ref()
                .and_then(|c| c.compile_commands.clone())
            {
                Some(p) => (Some(p), true),
                None => {
                    let dir = Path::new(&input.path)
                        .parent()
                        .unwrap_or(Path::new(""))
                        .to_path_buf();
                    let p = found
                        .entry(dir)
                        .or_insert_with_key(|d| compile_commands::discover(d, fallback.as_deref()))
                        .clone();
                    (p, false)
                }
            },
        };
        let db = match path {
            None => Ok(None),
            Some(p) => opened
                .entry(p)
                .or_insert_with_key(|p| match Database::open(p) {
                    Ok(db) => Ok(Some(db)),
                    Err(e) if named => Err(e),
                    Err(e) => {
                        warnings.push(format!("{e}; checked without its flags"));
                        Ok(None)
                    }
                })
                .clone(),
        };
        if let Ok(Some(db)) = &db {
            if let Some((command, said)) = db.lookup(Path::new(&input.path)) {
                input.compile = Some(command);
                warnings.extend(said);
            }
        }
        out.push(db);
    }
    out
}

/// How many folders above the including file a header is looked for, when neither the
/// including file's folder nor an include directory has it: projects compile with `-I` at
/// their source root (llama.cpp's ggml-cuda/common.cuh includes "ggml-common.h", one up), or
/// at an `include/` folder there (cuDF's cpp/src/... includes <cudf/types.hpp> from
/// cpp/include).
const ANCESTORS: usize = 4;

/// Where `#include "inc"` (or `<inc>`, when `angled`) in a file of `dir` may be, in the order
/// searched: the file's own folder (quoted only), the include directories (`-I`, then the
/// file's cudalint.toml `include-dirs`, then its compile command's `-I` and `-isystem`), then
/// the folders above the file's and their `include/` folders. An angled include found
/// nowhere there is a system header; a quoted one is looked for last in the checked files'
/// tree (`ProjectHeaders`).
fn include_candidates(
    dir: &Path,
    inc: &str,
    angled: bool,
    dirs: &[PathBuf],
    config: &[PathBuf],
    command: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if !angled {
        out.push(dir.join(inc));
    }
    out.extend(
        dirs.iter()
            .chain(config)
            .chain(command)
            .map(|d| d.join(inc)),
    );
    for a in folders_above(dir)
        .into_iter()
        .skip(usize::from(!angled))
        .take(ANCESTORS)
    {
        out.push(a.join(inc));
        out.push(a.join("include").join(inc));
    }
    out
}

/// `dir` and the folders above it, nearest first. A relative `dir` goes on above the working
/// folder with `..` (`cudalint check .` in `lib/gvhf-rys/` finds `"gvhf-rys/vhf.cuh"` in `lib/`,
/// as `cudalint check gvhf-rys` from `lib/` does), so the paths shown stay relative.
fn folders_above(dir: &Path) -> Vec<PathBuf> {
    use std::path::Component;
    let mut cur: PathBuf = dir
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let mut out = Vec::new();
    while out.len() <= ANCESTORS {
        out.push(cur.clone());
        match cur.components().next_back() {
            Some(Component::Normal(_)) => {
                cur.pop();
            }
            None | Some(Component::ParentDir) => cur.push(".."),
            Some(_) => break,
        }
    }
    out
}

/// An include looked up: the including folder, the name, angled or quoted, the config, the
/// compile command.
type LookupKey = (PathBuf, String, bool, usize, usize);

/// Headers that checked files include with `#include "..."` are read too: their macros,
/// constants and helpers are what the kernels see, and their device code is part of the
/// includer's translation unit. An include found nowhere (see `include_candidates`) is
/// skipped silently: it may be a system or generated header.
///
/// A header the includer's database does not list is compiled with the includer's command,
/// as it is in the build: it takes the first includer's that has one, and its own includes
/// are looked for again along that command's `-I`.
fn add_included(
    inputs: &mut Vec<Input>,
    include_dirs: &[PathBuf],
    folders: &[PathBuf],
    mut databases: Databases,
    warnings: &mut Vec<String>,
) {
    const MAX_CONTEXT_FILES: usize = 2000;
    let mut known: HashMap<FileId, usize> = inputs
        .iter()
        .enumerate()
        .filter_map(|(n, i)| Some((file_id(Path::new(&i.path))?, n)))
        .collect();
    // whether a file's command is its own entry's (else it may take an includer's)
    let mut own: Vec<bool> = inputs.iter().map(|i| i.compile.is_some()).collect();
    // the files of a folder include the same headers: each is looked for once
    let mut looked: HashMap<LookupKey, Option<(PathBuf, FileId)>> = HashMap::new();
    let mut project = crate::project_headers::ProjectHeaders::new(
        inputs
            .iter()
            .filter(|i| !i.context)
            .map(|i| i.path.as_str()),
        folders,
    );
    let mut queue: std::collections::VecDeque<usize> = (0..inputs.len()).collect();
    let mut added = 0;
    while let Some(i) = queue.pop_front() {
        if added >= MAX_CONTEXT_FILES {
            break;
        }
        let dir = Path::new(&inputs[i].path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let includes: Vec<(String, bool)> = inputs[i]
            .text
            .lines()
            .filter_map(|l| {
                let rest = l
                    .trim_start()
                    .strip_prefix('#')?
                    .trim_start()
                    .strip_prefix("include")?;
                let angled = rest.trim_start().starts_with('<');
                Some((cudalint_syntax::included_name(rest)?.to_string(), angled))
            })
            .collect();
        let config = inputs[i].config.clone();
        let config_dirs = config.as_ref().map_or(&[][..], |c| &c.include_dirs[..]);
        let config_key = config.as_ref().map_or(0, |c| Arc::as_ptr(c) as usize);
        let compile = inputs[i].compile.clone();
        let command_dirs = compile.as_ref().map_or(&[][..], |c| &c.include_dirs[..]);
        let compile_key = compile.as_ref().map_or(0, |c| Arc::as_ptr(c) as usize);
        let database = databases[i].clone();
        for (inc, angled) in includes {
            // the first that exists is the one the compiler reads
            let found = looked
                .entry((dir.clone(), inc.clone(), angled, config_key, compile_key))
                .or_insert_with(|| {
                    include_candidates(&dir, &inc, angled, include_dirs, config_dirs, command_dirs)
                        .into_iter()
                        .find_map(|c| Some((c.clone(), file_id(&c)?)))
                        .or_else(|| {
                            // the build's `-I` this run does not have: the project's own
                            // header of that name, for a quoted include; for an angled one,
                            // a library's public header under an `include/` folder of the
                            // tree (PCL's kinfu includes `<pcl/gpu/containers/device_array.h>`
                            // of `gpu/containers/include`), where a system header never is
                            if angled && !inc.contains('/') {
                                return None;
                            }
                            let c = project.find(&dir, &inc)?;
                            if angled && !c.ends_with(Path::new("include").join(&inc)) {
                                return None;
                            }
                            Some((c.clone(), file_id(&c)?))
                        })
                        .or_else(|| {
                            // a header the build writes from a template, never built here
                            if angled {
                                return None;
                            }
                            let candidates = include_candidates(
                                &dir,
                                &inc,
                                false,
                                include_dirs,
                                config_dirs,
                                command_dirs,
                            );
                            let t = crate::configured_headers::template_at(&candidates).or_else(
                                || {
                                    crate::configured_headers::template_names(&inc)
                                        .into_iter()
                                        .find_map(|t| project.find(&dir, &t))
                                },
                            )?;
                            Some((t.clone(), file_id(&t)?))
                        })
                })
                .clone();
            let Some((candidate, canon)) = found else {
                continue;
            };
            if let Some(&j) = known.get(&canon) {
                if !own[j] && inputs[j].compile.is_none() && compile.is_some() {
                    inputs[j].compile = compile.clone();
                    databases[j] = database.clone();
                    queue.push_back(j);
                }
                continue;
            }
            let path = candidate.to_string_lossy().into_owned();
            if let Ok(mut input) = read(&path) {
                if crate::configured_headers::is_template(&candidate) {
                    let build = crate::build_files::governing_text(
                        candidate.parent().unwrap_or(Path::new(".")),
                    );
                    input.text = crate::configured_headers::configure(&input.text, &build).into();
                }
                let entry = match &database {
                    Ok(Some(db)) => db.lookup(&candidate),
                    _ => None,
                };
                own.push(entry.is_some());
                input.compile = match entry {
                    Some((command, said)) => {
                        warnings.extend(said);
                        Some(command)
                    }
                    None => compile.clone(),
                };
                known.insert(canon, inputs.len());
                queue.push_back(inputs.len());
                databases.push(database.clone());
                inputs.push(input);
                added += 1;
            }
        }
    }
}

/// Attaches to every input its configuration: the one given, or the nearest cudalint.toml
/// above it. A configuration that does not load is an error naming its file and line.
fn attach_configs(inputs: &mut [Input], given: Option<&str>) -> Result<(), String> {
    use crate::config::{discover, Config};
    use std::collections::HashMap;
    use std::sync::Arc;
    if let Some(path) = given {
        let c = Arc::new(Config::load(Path::new(path))?);
        for i in inputs.iter_mut() {
            i.config = Some(c.clone());
        }
        return Ok(());
    }
    let mut loaded: HashMap<std::path::PathBuf, Arc<Config>> = HashMap::new();
    // the files of a folder share its answer: one walk up per folder
    let mut by_dir: HashMap<std::path::PathBuf, Option<std::path::PathBuf>> = HashMap::new();
    for i in inputs.iter_mut() {
        let path = Path::new(&i.path);
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let found = by_dir.entry(dir).or_insert_with(|| discover(path)).clone();
        let Some(found) = found else {
            continue;
        };
        let c = match loaded.get(&found) {
            Some(c) => c.clone(),
            None => {
                let c = Arc::new(Config::load(&found)?);
                loaded.insert(found, c.clone());
                c
            }
        };
        i.config = Some(c);
    }
    Ok(())
}

/// A file's identity: two paths to one file (`a/../b.h`, a link) are one file. One `stat`,
/// where canonicalizing took one per folder of the path.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

#[cfg(unix)]
fn file_id(p: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(p: &Path) -> Option<FileId> {
    std::fs::canonicalize(p).ok().filter(|c| c.is_file())
}

fn read(path: &str) -> Result<Input, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(format!("{path}: binary file"));
    }
    let decoded = cudalint_syntax::source::decode(bytes);
    let mut input = Input::new(path, decoded.text);
    input.replaced_bytes = decoded.replaced;
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_above_a_relative_folder_go_on_past_the_working_folder() {
        let above = |d: &str| -> Vec<String> {
            folders_above(Path::new(d))
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(above("."), ["", "..", "../..", "../../..", "../../../.."]);
        assert_eq!(above("lib/rys"), ["lib/rys", "lib", "", "..", "../.."]);
        assert_eq!(
            above("../src"),
            ["../src", "..", "../..", "../../..", "../../../.."]
        );
        assert_eq!(above("/a/b"), ["/a/b", "/a", "/"]);
    }
}
