//! How the files of a run depend on each other, as the analysis follows them: by `#include`
//! (macros, types and helpers a file sees) and by name across files (a kernel's launches and
//! the host calls that reach them are looked up by name in every file of the run).
//!
//! A *unit* is a set of files connected by includes; a *link* is a set of units connected by
//! launches and host calls. A link's reports depend on nothing outside it but the run-wide
//! facts its key holds (see `key.rs`), so a link whose key is unchanged keeps its reports.

use crate::Input;
use cudalint_analysis::project::{callees, host_callees, short, IncludeIndex};
use cudalint_syntax::FileModel;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What the directives of a text say that the cache keys on, read in one pass.
#[derive(Default)]
pub struct Scan<'t> {
    /// Every `#include`, quoted or angled, in any branch: more than the compiler follows, so
    /// a unit holds at least the files the analysis connects.
    pub includes: Vec<&'t str>,
    /// The names it `#define`s.
    pub defines: Vec<&'t str>,
    /// The names it tests (`#ifdef`, `defined(...)`).
    pub tested: std::collections::BTreeSet<&'t str>,
}

pub fn scan(text: &str) -> Scan<'_> {
    let mut out = Scan::default();
    for (d, _) in crate::include_context::directive_lines(text) {
        if let Some(inc) = include_target(d) {
            out.includes.push(inc);
        } else if let Some(name) = crate::build_files::define_name(d) {
            out.defines.push(name);
        } else {
            crate::build_files::tested_in(d, &mut out.tested);
        }
    }
    out
}

/// What an `#include` directive (after its `#`) names, quoted or angled.
fn include_target(d: &str) -> Option<&str> {
    cudalint_syntax::included_name(d.strip_prefix("include")?)
}

/// Union-find over indices.
pub struct Sets(Vec<usize>);

impl Sets {
    pub fn new(n: usize) -> Sets {
        Sets((0..n).collect())
    }

    pub fn root(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }

    pub fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        if a != b {
            // the smaller index is the root: groups come out in the order of their first member
            self.0[a.max(b)] = a.min(b);
        }
    }

    /// The groups, each in index order, ordered by their first member.
    pub fn groups(mut self) -> Vec<Vec<usize>> {
        let n = self.0.len();
        let mut at: HashMap<usize, usize> = HashMap::new();
        let mut out: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            let r = self.root(i);
            let g = *at.entry(r).or_insert_with(|| {
                out.push(Vec::new());
                out.len() - 1
            });
            out[g].push(i);
        }
        out
    }
}

/// Per input, each include with what it resolves to (an index into `inputs`), and the units.
pub struct Units {
    pub resolved: Vec<Vec<(String, Option<usize>)>>,
    pub units: Vec<Vec<usize>>,
}

/// `includes`: each input's includes, as [`scan`] finds them.
pub fn include_units(inputs: &[Input], includes: &[Vec<&str>]) -> Units {
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
    let index = IncludeIndex::new(&paths);
    let resolved: Vec<Vec<(String, Option<usize>)>> = includes
        .iter()
        .enumerate()
        .map(|(fi, incs)| {
            incs.iter()
                .map(|inc| (inc.to_string(), index.resolve(fi, inc)))
                .collect()
        })
        .collect();
    let mut sets = Sets::new(inputs.len());
    for (fi, incs) in resolved.iter().enumerate() {
        for (_, to) in incs {
            if let Some(to) = to {
                sets.join(fi, *to);
            }
        }
    }
    Units {
        resolved,
        units: sets.groups(),
    }
}

/// What a file offers to and asks of other files by name: what `Project::launches_of` and
/// `Project::host_calls_of` look up across the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Names {
    /// Kernels it defines (with a body: the ones analysed).
    pub kernels: Vec<String>,
    /// Kernels it launches.
    pub launches: Vec<String>,
    /// Every function it defines or declares.
    pub functions: Vec<String>,
    /// Templated functions of it that launch a kernel: their calls in host code are where
    /// the launch's template arguments come from.
    pub launching_templates: Vec<String>,
    /// Its templated host functions, with the names they call (their own calls are looked up
    /// in turn when they call a launching template).
    pub templated_callers: Vec<(String, Vec<String>)>,
    /// The names its host functions call.
    pub host_calls: Vec<String>,
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

impl Names {
    pub fn of(model: &FileModel) -> Names {
        use cudalint_syntax::FnKind;
        let name = |f: &cudalint_syntax::Function| short(&f.name).to_string();
        let fns = &model.functions;
        Names {
            kernels: sorted(
                fns.iter()
                    .filter(|f| f.kind == FnKind::Global && f.body.is_some())
                    .map(name)
                    .collect(),
            ),
            launches: sorted(
                model
                    .launches
                    .iter()
                    .map(|l| short(&l.kernel).to_string())
                    .collect(),
            ),
            functions: sorted(fns.iter().map(name).collect()),
            launching_templates: sorted(
                model
                    .launches
                    .iter()
                    .filter_map(|l| fns.get(l.host_fn?))
                    .filter(|f| !f.template_params.is_empty())
                    .map(name)
                    .collect(),
            ),
            templated_callers: fns
                .iter()
                .filter(|f| f.kind == FnKind::Host && !f.template_params.is_empty())
                .map(|f| {
                    let calls = callees(f).into_iter().map(str::to_string).collect();
                    (name(f), calls)
                })
                .collect(),
            host_calls: host_callees(model)
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}

/// Units connected by the names the analysis looks up across files: a kernel's launches,
/// and the host calls of a templated function that launches one (and of templated callers of
/// those, in turn). Groups of unit indices.
pub fn links(names: &[Vec<Names>]) -> Vec<Vec<usize>> {
    let by_name = |pick: &dyn Fn(&Names) -> &Vec<String>| {
        let mut map: HashMap<&str, Vec<usize>> = HashMap::new();
        for (u, files) in names.iter().enumerate() {
            for n in files.iter().flat_map(pick) {
                let list = map.entry(n.as_str()).or_default();
                if list.last() != Some(&u) {
                    list.push(u);
                }
            }
        }
        map
    };
    let kernels = by_name(&|n| &n.kernels);
    let functions = by_name(&|n| &n.functions);
    // the names whose host calls are looked up: launching templates, then templated callers
    // of those, until nothing is added
    let mut looked_up: std::collections::HashSet<&str> = names
        .iter()
        .flatten()
        .flat_map(|n| n.launching_templates.iter().map(String::as_str))
        .collect();
    loop {
        let before = looked_up.len();
        for (caller, calls) in names.iter().flatten().flat_map(|n| &n.templated_callers) {
            if calls.iter().any(|c| looked_up.contains(c.as_str())) {
                looked_up.insert(caller.as_str());
            }
        }
        if looked_up.len() == before {
            break;
        }
    }
    let mut sets = Sets::new(names.len());
    for (u, files) in names.iter().enumerate() {
        for f in files {
            for k in &f.launches {
                for &d in kernels.get(k.as_str()).into_iter().flatten() {
                    sets.join(u, d);
                }
            }
            for c in f
                .host_calls
                .iter()
                .filter(|c| looked_up.contains(c.as_str()))
            {
                for &d in functions.get(c.as_str()).into_iter().flatten() {
                    sets.join(u, d);
                }
            }
        }
    }
    sets.groups()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_of_every_branch_and_both_spellings() {
        let t = "#include \"a.h\"\n#if 0\n# include <b/c.cuh>\n#endif\n// #include \"no.h\"\n#include MACRO\n#if defined(X) && Y\n#define Z 1\n";
        let s = scan(t);
        assert_eq!(s.includes, vec!["a.h", "b/c.cuh"]);
        assert_eq!(s.defines, vec!["Z"]);
        assert_eq!(s.tested.into_iter().collect::<Vec<_>>(), vec!["X"]);
    }

    #[test]
    fn groups_come_in_the_order_of_their_first_member() {
        let mut s = Sets::new(5);
        s.join(4, 1);
        s.join(3, 2);
        s.join(2, 4);
        assert_eq!(s.groups(), vec![vec![0], vec![1, 2, 3, 4]]);
    }
}
