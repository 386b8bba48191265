//! Name tables over all files of a run, built once: lookups of functions, macros, file-scope
//! declarations and launches are hash lookups, not scans of every file.

use cudalint_syntax::{Decl, Define, FileModel, FnKind, Function, Launch};
use std::collections::HashMap;

pub struct Project<'p> {
    pub files: &'p [&'p FileModel],
    functions: HashMap<&'p str, Vec<(usize, usize)>>,
    defines: HashMap<&'p str, Vec<(usize, usize)>>,
    globals: HashMap<&'p str, Vec<(usize, usize)>>,
    launches: HashMap<&'p str, Vec<(usize, usize)>>,
}

fn short(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// Entries of `file` first (the last definition wins there, as the preprocessor's would),
/// then other files in order.
fn pick<T>(
    list: Option<&Vec<(usize, usize)>>,
    file: usize,
    get: impl Fn(usize, usize) -> Option<T>,
    ok: impl Fn(&T) -> bool,
) -> Option<(usize, T)> {
    let list = list?;
    let same = list.iter().rev().filter(|(f, _)| *f == file);
    let others = list.iter().filter(|(f, _)| *f != file);
    same.chain(others)
        .find_map(|&(f, i)| get(f, i).filter(|t| ok(t)).map(|t| (f, t)))
}

impl<'p> Project<'p> {
    pub fn new(files: &'p [&'p FileModel]) -> Self {
        let mut p = Project {
            files,
            functions: HashMap::new(),
            defines: HashMap::new(),
            globals: HashMap::new(),
            launches: HashMap::new(),
        };
        for (fi, f) in files.iter().enumerate() {
            for (i, x) in f.functions.iter().enumerate() {
                p.functions.entry(short(&x.name)).or_default().push((fi, i));
            }
            for (i, x) in f.defines.iter().enumerate() {
                p.defines.entry(x.name.as_str()).or_default().push((fi, i));
            }
            for (i, x) in f.globals.iter().enumerate() {
                p.globals.entry(x.name.as_str()).or_default().push((fi, i));
            }
            for (i, x) in f.launches.iter().enumerate() {
                p.launches
                    .entry(x.kernel.as_str())
                    .or_default()
                    .push((fi, i));
            }
        }
        p
    }

    pub fn object_macro(&self, name: &str, file: usize) -> Option<(usize, &'p Define)> {
        let files = self.files;
        pick(
            self.defines.get(name),
            file,
            |f, i| files[f].defines.get(i),
            |d| d.params.is_none(),
        )
    }

    pub fn function_macro(
        &self,
        name: &str,
        arity: usize,
        file: usize,
    ) -> Option<(usize, &'p Define)> {
        let files = self.files;
        pick(
            self.defines.get(name),
            file,
            |f, i| files[f].defines.get(i),
            |d| d.params.as_ref().is_some_and(|p| p.len() == arity),
        )
    }

    pub fn global(&self, name: &str, file: usize) -> Option<(usize, &'p Decl)> {
        let files = self.files;
        pick(
            self.globals.get(name),
            file,
            |f, i| files[f].globals.get(i),
            |_| true,
        )
    }

    /// A `__device__` function with a body taking `arity` arguments.
    pub fn device_function(
        &self,
        name: &str,
        arity: usize,
        file: usize,
    ) -> Option<(usize, &'p Function)> {
        let files = self.files;
        pick(
            self.functions.get(short(name)),
            file,
            |f, i| files[f].functions.get(i),
            |x| {
                matches!(x.kind, FnKind::Device | FnKind::HostDevice)
                    && x.params.len() == arity
                    && x.body.is_some()
            },
        )
    }

    pub fn launches_of(&self, kernel: &str) -> impl Iterator<Item = (usize, &'p Launch)> + '_ {
        let files = self.files;
        self.launches
            .get(short(kernel))
            .into_iter()
            .flatten()
            .filter_map(move |&(f, i)| files[f].launches.get(i).map(|l| (f, l)))
    }
}
