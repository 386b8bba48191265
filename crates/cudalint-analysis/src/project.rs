//! Name tables over all files of a run, built once: lookups of functions, macros, file-scope
//! declarations and launches are hash lookups, not scans of every file.

use crate::types::TrimLiteral;
use cudalint_syntax::{
    Decl, Define, Expr, ExprKind, FileModel, FnKind, Function, Instantiation, Launch, Name, Stmt,
    TemplateArg, TypeRef,
};
use std::collections::HashMap;

pub struct Project<'p> {
    pub files: &'p [&'p FileModel],
    /// Per file, the models of the files whose definitions it sees: itself, then what it
    /// includes (transitively), in include order, then what the files that include it see
    /// (rodinia's main.cu includes "define.c" and then "kernel.cu": the kernel sees
    /// define.c's macros). What type lookups (structs, typedefs) consult.
    visible_models: Vec<Vec<&'p FileModel>>,
    /// The same files, as each one's place in that order, sorted by file: a lookup by name
    /// ranks the name's few definitions instead of walking every seen file for each (under
    /// k2's hundred headers, a sixteenth of a run).
    visible_rank: Vec<Vec<(usize, u32)>>,
    functions: HashMap<&'p str, Vec<(usize, usize)>>,
    defines: HashMap<&'p str, Vec<(usize, usize)>>,
    globals: HashMap<&'p str, Vec<(usize, usize)>>,
    launches: HashMap<&'p str, Vec<(usize, usize)>>,
    /// Explicit instantiations of function templates, by the function's name.
    instantiations: HashMap<&'p str, Vec<(usize, usize)>>,
    /// Names of function templates with an explicit specialization defined
    /// (`template<> int get_ebits<double>()`: `get_ebits`).
    specialized: std::collections::HashSet<&'p str>,
    /// The calls in host functions by the name they call, in each caller's order: every
    /// launch's evaluation asks for its wrapper's callers, and walking the callers' bodies
    /// again each time was a fiftieth of a run.
    host_callers: HashMap<&'p str, Vec<(usize, usize, &'p Expr)>>,
    /// Launches made by invoking a launch macro in host code, with the invocation's
    /// arguments written in: with their files, in source order, and by kernel.
    macro_launches: Vec<(usize, Launch)>,
    macro_launches_of: HashMap<String, Vec<usize>>,
    /// Member functions defined outside their struct's body (`__device__ void Own::push(...)
    /// {...}`, `template <int k> void Fixed<k>::push(...)`), by the function's address: the
    /// struct each belongs to, where its qualifier names a struct of the program.
    out_of_class: HashMap<usize, &'p str>,
}

fn host_calls<'p>(files: &'p [&'p FileModel]) -> HashMap<&'p str, Vec<(usize, usize, &'p Expr)>> {
    let mut map: HashMap<&str, Vec<(usize, usize, &Expr)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        for (i, func) in f.functions.iter().enumerate() {
            let Some(body) = func.body.as_ref().filter(|_| func.kind == FnKind::Host) else {
                continue;
            };
            let mut found = Vec::new();
            calls_in(body, &mut found);
            for call in found {
                if let ExprKind::Call { callee, .. } = &call.kind {
                    map.entry(short(callee)).or_default().push((fi, i, call));
                }
            }
        }
    }
    map
}

/// A name without its qualifiers (`ns::k` is `k`): how launches and calls are looked up.
pub fn short(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// See [`Project::owner_of`]: a function named `Q::f` whose qualifier's last component, its
/// template arguments taken off, is the name of a struct the program defines. (A function of
/// a namespace defined outside it, `void ns::f()`, names no struct and keeps none.)
fn out_of_class<'p>(files: &'p [&'p FileModel]) -> HashMap<usize, &'p str> {
    let mut qualified = Vec::new();
    for f in files.iter().flat_map(|m| &m.functions) {
        if f.owner.is_some() {
            continue;
        }
        let Some(q) = f.name.rfind("::").map(|at| &f.name[..at]) else {
            continue;
        };
        // the last component at depth zero: `cukd::Fixed<k>`, `A<ns::T>`
        let mut depth = 0i32;
        let mut start = 0;
        let b = q.as_bytes();
        for i in 0..b.len() {
            match b[i] {
                b'<' => depth += 1,
                b'>' => depth -= 1,
                b':' if depth == 0 && i + 1 < b.len() && b[i + 1] == b':' => start = i + 2,
                _ => {}
            }
        }
        let last = q[start..].split('<').next().unwrap_or("").trim();
        if !last.is_empty() {
            qualified.push((f as *const Function as usize, last));
        }
    }
    if qualified.is_empty() {
        return HashMap::new();
    }
    let structs: std::collections::HashSet<&str> = files
        .iter()
        .flat_map(|m| &m.structs)
        .map(|s| s.name.as_str())
        .collect();
    qualified
        .into_iter()
        .filter_map(|(at, last)| structs.get(last).map(|name| (at, *name)))
        .collect()
}

/// Entries of `file` first (the last definition wins there, as the preprocessor's would),
/// then those of the files it includes, in include order. Files the current one does not
/// include are never consulted: a `BLOCK_SIZE` of an unrelated program must not leak in.
fn pick<T>(
    list: Option<&Vec<(usize, usize)>>,
    rank: &[(usize, u32)],
    get: impl Fn(usize, usize) -> Option<T>,
    ok: impl Fn(&T) -> bool,
) -> Option<(usize, T)> {
    let mut best: Option<(u32, usize, T)> = None;
    for &(f, i) in list?.iter().rev() {
        let Some(r) = rank_of(rank, f) else {
            continue;
        };
        if best.as_ref().is_some_and(|b| b.0 <= r) {
            continue;
        }
        if let Some(t) = get(f, i).filter(|t| ok(t)) {
            best = Some((r, f, t));
        }
    }
    best.map(|(_, f, t)| (f, t))
}

/// Where file `f` comes in a file's view, if it is in it.
fn rank_of(rank: &[(usize, u32)], f: usize) -> Option<u32> {
    rank.binary_search_by_key(&f, |&(x, _)| x)
        .ok()
        .map(|i| rank[i].1)
}

/// Whether `path` ends with `include`: a header found through an include path (`-I`).
fn ends_with_include(include: &str, path: &str) -> bool {
    let include = include.trim_start_str("./");
    // a header found above the run's folder (`cudalint check force/` reading
    // "utilities/common.cuh" from the folder it is in) has a path no longer than the include
    path.trim_start_str("./") == include
        || (path.len() > include.len()
            && path.ends_with(include)
            && path.as_bytes()[path.len() - include.len() - 1] == b'/')
}

fn normalize(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else {
                    parts.push("..");
                }
            }
            c => parts.push(c),
        }
    }
    parts.join("/")
}

fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The header a build writes from a template at `path` (`inc/config.hpp.cmake`, `config.h.in`
/// become `inc/config.hpp`, `config.h`): what an `#include` of the header reads where the tree
/// was never built (see cudalint-rules' `configured_headers`).
pub fn configured_name(path: &str) -> Option<&str> {
    let header = path
        .strip_suffix(".in")
        .or_else(|| path.strip_suffix(".cmake"))?;
    let ext = file_name(header).rsplit_once('.')?.1;
    matches!(ext, "h" | "hpp" | "hh" | "hxx" | "cuh" | "inl").then_some(header)
}

/// The files of a run by normalized path and by file name, built once, so that resolving an
/// `#include` is a lookup, not a scan of every path (a run of thousands of files resolves
/// thousands of includes).
pub struct IncludeIndex<'a> {
    /// the paths from the root, normalized: `cudalint check .` in `lib/rys/` gives
    /// `./x.cu`, whose `#include "rys/vhf.cuh"` names `./vhf.cuh` only by way of the folder
    /// the run is in
    paths: Vec<String>,
    by_path: HashMap<String, Vec<usize>>,
    by_name: HashMap<&'a str, Vec<usize>>,
}

impl<'a> IncludeIndex<'a> {
    pub fn new(paths: &[&'a str]) -> Self {
        let cwd = std::env::current_dir().ok();
        let cwd = cwd.as_ref().and_then(|d| d.to_str()).unwrap_or("");
        let rooted: Vec<String> = paths
            .iter()
            .map(|p| {
                if p.starts_with('/') {
                    normalize(p)
                } else {
                    normalize(&format!("{cwd}/{p}"))
                }
            })
            .collect();
        let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_name: HashMap<&'a str, Vec<usize>> = HashMap::new();
        let mut rooted = rooted;
        let mut templates = Vec::new();
        for (i, (p, r)) in paths.iter().zip(&mut rooted).enumerate() {
            // (a template answers for its header after the files of the run: a header the
            // build wrote, where there is one, is the one read)
            if let Some(header) = configured_name(p) {
                *r = configured_name(r).unwrap_or(r).to_string();
                templates.push((i, header, r.clone()));
                continue;
            }
            by_path.entry(r.clone()).or_default().push(i);
            by_name.entry(file_name(p)).or_default().push(i);
        }
        for (i, header, r) in templates {
            by_path.entry(r).or_default().push(i);
            by_name.entry(file_name(header)).or_default().push(i);
        }
        IncludeIndex {
            paths: rooted,
            by_path,
            by_name,
        }
    }

    /// The file that `#include "include"` in file `from` reads: the one next to the
    /// includer first (in a corpus of many programs, every one has its own "define.c"), else
    /// through an include path, the nearest such header by common path prefix.
    pub fn resolve(&self, from: usize, include: &str) -> Option<usize> {
        let me = self.paths.get(from).map_or("", String::as_str);
        let dir = me.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let joined = if dir.is_empty() {
            include.to_string()
        } else {
            format!("{dir}/{include}")
        };
        let next_to = self
            .by_path
            .get(&normalize(&joined))
            .and_then(|v| v.iter().copied().find(|&o| o != from));
        next_to.or_else(|| {
            self.by_name
                .get(file_name(include))?
                .iter()
                .copied()
                .filter(|&o| o != from && ends_with_include(include, &self.paths[o]))
                .max_by_key(|&o| {
                    self.paths[o]
                        .bytes()
                        .zip(me.bytes())
                        .take_while(|(a, b)| a == b)
                        .count()
                })
        })
    }
}

impl<'p> Project<'p> {
    /// `paths` are the files' paths, as given, parallel to `files` (used to resolve includes).
    pub fn new(files: &'p [&'p FileModel], paths: &[&str]) -> Self {
        let index = IncludeIndex::new(paths);
        let direct: Vec<Vec<usize>> = files
            .iter()
            .enumerate()
            .map(|(fi, f)| {
                f.includes
                    .iter()
                    .filter_map(|inc| index.resolve(fi, inc).filter(|&o| o < files.len()))
                    .collect()
            })
            .collect();
        let down: Vec<Vec<usize>> = (0..files.len())
            .map(|fi| {
                let mut seen = vec![fi];
                let mut i = 0;
                while i < seen.len() && seen.len() < 4096 {
                    for &d in &direct[seen[i]] {
                        if !seen.contains(&d) {
                            seen.push(d);
                        }
                    }
                    i += 1;
                }
                seen
            })
            .collect();
        let mut includers: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
        for (fi, ds) in direct.iter().enumerate() {
            for &d in ds {
                includers[d].push(fi);
            }
        }
        // what a file sees of itself and its includes comes first; its includers' names only
        // answer what those do not define
        let visible: Vec<Vec<usize>> = (0..files.len())
            .map(|fi| {
                let mut seen = down[fi].clone();
                let mut up = includers[fi].clone();
                let mut i = 0;
                while i < up.len() && seen.len() < 4096 {
                    let u = up[i];
                    for &x in &down[u] {
                        if !seen.contains(&x) {
                            seen.push(x);
                        }
                    }
                    for &w in &includers[u] {
                        if !up.contains(&w) {
                            up.push(w);
                        }
                    }
                    i += 1;
                }
                seen
            })
            .collect();
        let visible_models = visible
            .iter()
            .map(|v: &Vec<usize>| v.iter().map(|&i| files[i]).collect())
            .collect();
        let visible_rank = visible
            .iter()
            .map(|v| {
                let mut r: Vec<(usize, u32)> =
                    v.iter().enumerate().map(|(k, &f)| (f, k as u32)).collect();
                r.sort_unstable();
                r
            })
            .collect();
        let mut p = Project {
            files,
            visible_models,
            visible_rank,
            functions: HashMap::new(),
            defines: HashMap::new(),
            globals: HashMap::new(),
            launches: HashMap::new(),
            instantiations: HashMap::new(),
            specialized: std::collections::HashSet::new(),
            host_callers: host_calls(files),
            macro_launches: Vec::new(),
            macro_launches_of: HashMap::new(),
            out_of_class: HashMap::new(),
        };
        for (fi, f) in files.iter().enumerate() {
            for (i, x) in f.functions.iter().enumerate() {
                p.functions.entry(short(&x.name)).or_default().push((fi, i));
                if let Some((base, _)) = short(&x.name).split_once('<') {
                    p.specialized.insert(base);
                }
            }
            for (i, x) in f.defines.iter().enumerate() {
                p.defines.entry(x.name.as_str()).or_default().push((fi, i));
            }
            for (i, x) in f.globals.iter().enumerate() {
                p.globals.entry(x.name.as_str()).or_default().push((fi, i));
            }
            for (i, x) in f.instantiations.iter().enumerate() {
                p.instantiations
                    .entry(short(&x.function))
                    .or_default()
                    .push((fi, i));
            }
            for (i, x) in f.launches.iter().enumerate() {
                p.launches
                    .entry(x.kernel.as_str())
                    .or_default()
                    .push((fi, i));
            }
        }
        p.out_of_class = out_of_class(files);
        p.macro_launches = p.launches_through_macros();
        for (i, (_, l)) in p.macro_launches.iter().enumerate() {
            p.macro_launches_of
                .entry(short(&l.kernel).to_string())
                .or_default()
                .push(i);
        }
        p
    }

    /// The struct whose member function `f` is: the one whose body defines it, or the one
    /// its qualified name names where it is defined outside.
    pub fn owner_of<'f>(&self, f: &'f Function) -> Option<&'f str>
    where
        'p: 'f,
    {
        f.owner.as_deref().or_else(|| {
            self.out_of_class
                .get(&(f as *const Function as usize))
                .copied()
        })
    }

    /// The launches that host code makes by invoking a macro whose replacement launches
    /// (`LAUNCH_JKMATRIX_KERNEL(rys_vjk_ip1_1111);`): the macro seen from the invoking file,
    /// its parameters given the invocation's arguments, the kernel the argument names.
    fn launches_through_macros(&self) -> Vec<(usize, Launch)> {
        let mut out = Vec::new();
        for calls in self.host_callers.values() {
            for &(fi, host, call) in calls {
                let ExprKind::Call { callee, args, .. } = &call.kind else {
                    continue;
                };
                let Some(def) = self
                    .function_macro(callee, args.len(), fi)
                    .or_else(|| self.variadic_macro(callee, args.len(), fi).map(|(_, d)| d))
                    .filter(|d| !d.launches.is_empty())
                else {
                    continue;
                };
                let params = def.params.as_deref().unwrap_or(&[]);
                let written = |e: &Expr| {
                    cudalint_syntax::substitute::expand_expression_macro(params, e, args)
                };
                // `Func<T, 1, 128><<<grid, block>>>(__VA_ARGS__)`: the invocation's trailing
                // arguments, however many
                let fixed = params.len().saturating_sub(1);
                let launch_args = |list: &[Expr]| -> Vec<Expr> {
                    list.iter()
                        .flat_map(|a| match &a.kind {
                            ExprKind::Ident(n)
                                if n == "__VA_ARGS__"
                                    && params.last().is_some_and(|p| p == "__VA_ARGS__") =>
                            {
                                args.get(fixed..).unwrap_or(&[]).to_vec()
                            }
                            _ => vec![written(a)],
                        })
                        .collect()
                };
                for l in &def.launches {
                    let kernel = match params.iter().position(|p| *p == l.kernel) {
                        Some(k) => match args.get(k).map(|a| &a.kind) {
                            Some(ExprKind::Ident(name)) => name.clone(),
                            _ => continue,
                        },
                        None => l.kernel.clone(),
                    };
                    out.push((
                        fi,
                        Launch {
                            kernel,
                            template_args: l
                                .template_args
                                .iter()
                                .map(|t| macro_template_arg(t, params, args))
                                .collect(),
                            config: l.config.iter().map(written).collect(),
                            args: launch_args(&l.args),
                            span: call.span,
                            host_fn: Some(host),
                        },
                    ));
                }
            }
        }
        out.sort_by_key(|(fi, l)| (*fi, l.span.start));
        out
    }

    /// The models `file` sees (itself first, then its includes): where its types are defined.
    pub fn visible_models(&self, file: usize) -> &[&'p FileModel] {
        self.visible_models
            .get(file)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    pub fn object_macro(&self, name: &str, file: usize) -> Option<(usize, &'p Define)> {
        let files = self.files;
        pick(
            self.defines.get(name),
            &self.visible_rank[file],
            |f, i| files[f].defines.get(i),
            |d| d.params.is_none(),
        )
    }

    pub fn function_macro(&self, name: &str, arity: usize, file: usize) -> Option<&'p Define> {
        let files = self.files;
        let arity_is = |d: &Define| d.params.as_ref().is_some_and(|p| p.len() == arity);
        pick(
            self.defines.get(name),
            &self.visible_rank[file],
            |f, i| files[f].defines.get(i),
            |d| arity_is(d),
        )
        .map(|(_, d)| d)
        .or_else(|| {
            library_macros()
                .iter()
                .find(|d| d.name == name && arity_is(d))
        })
    }

    /// A variadic macro (`#define DISPATCH(size, Func, ...)`) an invocation with `arity`
    /// arguments can call: at least its named parameters.
    fn variadic_macro(&self, name: &str, arity: usize, file: usize) -> Option<(usize, &'p Define)> {
        let files = self.files;
        pick(
            self.defines.get(name),
            &self.visible_rank[file],
            |f, i| files[f].defines.get(i),
            |d| {
                d.params.as_ref().is_some_and(|p| {
                    p.last().is_some_and(|l| l == "__VA_ARGS__") && arity + 1 >= p.len()
                })
            },
        )
    }

    pub fn global(&self, name: &str, file: usize) -> Option<(usize, &'p Decl)> {
        let files = self.files;
        pick(
            self.globals.get(name),
            &self.visible_rank[file],
            |f, i| files[f].globals.get(i),
            |_| true,
        )
    }

    /// Whether the program defines an explicit specialization of function template `name`.
    pub fn has_specialization(&self, name: &str) -> bool {
        self.specialized.contains(short(name))
    }

    /// Whether more than one function of the program has this (unqualified) name.
    pub fn overloaded(&self, name: &str) -> bool {
        self.functions.get(short(name)).is_some_and(|l| l.len() > 1)
    }

    /// The `__device__` functions with a body taking `arity` arguments that `file` sees
    /// (overloads included), nearest first. When there is none, the functions the files show
    /// as host functions: a kernel can only call one the compiler knows as device code, so its
    /// specifier was a macro cudalint could not read (`DI`, `HD` defined as `__device__`).
    pub fn device_functions(
        &self,
        name: &str,
        arity: usize,
        file: usize,
    ) -> Vec<(usize, &'p Function)> {
        let Some(list) = self.functions.get(short(name)) else {
            return Vec::new();
        };
        let rank = &self.visible_rank[file];
        let mut device = Vec::new();
        let mut host = Vec::new();
        for &(f, i) in list {
            let Some(r) = rank_of(rank, f) else {
                continue;
            };
            let Some(x) = self.files[f].functions.get(i) else {
                continue;
            };
            if !x.takes(arity) || x.body.is_none() {
                continue;
            }
            match x.kind {
                FnKind::Device | FnKind::HostDevice => device.push((r, f, x)),
                FnKind::Host => host.push((r, f, x)),
                FnKind::Global => {}
            }
        }
        // nearest first; a file's own in its order (the sort is stable)
        device.sort_by_key(|&(r, ..)| r);
        host.sort_by_key(|&(r, ..)| r);
        let strip =
            |v: Vec<(u32, usize, &'p Function)>| v.into_iter().map(|(_, f, x)| (f, x)).collect();
        if device.is_empty() {
            strip(host)
        } else {
            strip(device)
        }
    }

    /// The calls of `name` in host code (outside kernels and device functions), with the
    /// file and function each is in.
    pub fn host_calls_of(&self, name: &str) -> Vec<(usize, &'p Function, &'p Expr)> {
        self.host_callers
            .get(short(name))
            .into_iter()
            .flatten()
            .map(|&(fi, i, call)| (fi, &self.files[fi].functions[i], call))
            .collect()
    }

    /// The explicit instantiations of function template `name` (`template void f<float>(...);`),
    /// with the file each is in.
    pub fn instantiations_of(&self, name: &str) -> Vec<(usize, &'p Instantiation)> {
        self.instantiations
            .get(short(name))
            .into_iter()
            .flatten()
            .map(|&(fi, i)| (fi, &self.files[fi].instantiations[i]))
            .collect()
    }

    pub fn launches_of(&self, kernel: &str) -> impl Iterator<Item = (usize, &Launch)> + '_ {
        let files = self.files;
        self.launches
            .get(short(kernel))
            .into_iter()
            .flatten()
            .filter_map(move |&(f, i)| files[f].launches.get(i).map(|l| (f, l)))
            .chain(
                self.macro_launches_of
                    .get(short(kernel))
                    .into_iter()
                    .flatten()
                    .map(|&i| (self.macro_launches[i].0, &self.macro_launches[i].1)),
            )
    }
}

/// The names (without qualifiers) that the host functions of a file call: what
/// [`Project::host_calls_of`] looks them up by.
pub fn host_callees(file: &FileModel) -> std::collections::BTreeSet<&str> {
    file.functions
        .iter()
        .filter(|f| f.kind == FnKind::Host)
        .flat_map(callees)
        .collect()
}

/// The names (without qualifiers) a function's body calls.
pub fn callees(func: &Function) -> std::collections::BTreeSet<&str> {
    let mut found = Vec::new();
    calls_in(func.body.as_deref().unwrap_or(&[]), &mut found);
    found
        .into_iter()
        .filter_map(|call| match &call.kind {
            ExprKind::Call { callee, .. } => Some(short(callee)),
            _ => None,
        })
        .collect()
}

/// Every call expression in statements, outermost first.
pub(crate) fn calls_in<'a>(body: &'a [Stmt], out: &mut Vec<&'a Expr>) {
    cudalint_syntax::statement_exprs(body, &mut |e| calls_in_expr(e, out));
}

/// Every call expression in an expression, outermost first.
pub(crate) fn calls_in_expr<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    fn expr<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>, depth: usize) {
        if depth > 64 {
            return;
        }
        let d = depth + 1;
        match &e.kind {
            ExprKind::Call { args, .. } => {
                out.push(e);
                for a in args {
                    expr(a, out, d);
                }
            }
            ExprKind::Field { base, .. } => expr(base, out, d),
            ExprKind::Index { base, index } => {
                expr(base, out, d);
                expr(index, out, d);
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => expr(arg, out, d),
            ExprKind::SizeofExpr(a) => expr(a, out, d),
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } => {
                expr(lhs, out, d);
                expr(rhs, out, d);
            }
            ExprKind::Comma(a, b) => {
                expr(a, out, d);
                expr(b, out, d);
            }
            ExprKind::Cond { cond, then, els } => {
                expr(cond, out, d);
                expr(then, out, d);
                expr(els, out, d);
            }
            ExprKind::Init(items) => {
                for i in items {
                    expr(i, out, d);
                }
            }
            _ => {}
        }
    }
    expr(e, out, 0)
}

/// A template argument of a launch a macro's replacement makes, with the invocation's
/// arguments written in for the macro's parameters: `packed_copy<width><<<...>>>` invoked with
/// `4` launches `packed_copy<4>` (the grammar reads a lone name there as a type).
fn macro_template_arg(t: &TemplateArg, params: &[Name], args: &[Expr]) -> TemplateArg {
    // an argument's name, a type keyword as preprocessing spelled it (`_hort`) the keyword
    let named = |k: usize| match args.get(k).map(|a| &a.kind) {
        Some(ExprKind::Ident(n)) => Some(
            cudalint_syntax::preprocess::type_keyword_argument(n)
                .map(Name::from)
                .unwrap_or_else(|| n.clone()),
        ),
        _ => None,
    };
    match t {
        // `Tdst ## 4` given `float`: `float4` (CUDA's vector types are named so)
        TemplateArg::Type(ty) if ty.name.contains(cudalint_syntax::substitute::PASTE) => {
            let parts: Option<Vec<Name>> = ty
                .name
                .split(cudalint_syntax::substitute::PASTE)
                .map(|part| match params.iter().position(|p| p == part) {
                    Some(k) => named(k),
                    None => Some(Name::from(part)),
                })
                .collect();
            match parts {
                Some(parts) => TemplateArg::Type(TypeRef {
                    name: parts.concat().into(),
                    ..ty.clone()
                }),
                None => t.clone(),
            }
        }
        TemplateArg::Type(ty) => {
            let k = params.iter().position(|p| *p == ty.name);
            let given = k.and_then(|k| args.get(k));
            match (k.and_then(named), given) {
                (Some(n), _) => TemplateArg::Type(TypeRef {
                    name: n,
                    ..ty.clone()
                }),
                (None, Some(a)) if ty.pointer_depth == 0 && !ty.is_const => {
                    TemplateArg::Expr(a.clone())
                }
                _ => t.clone(),
            }
        }
        TemplateArg::Expr(e) => TemplateArg::Expr(
            cudalint_syntax::substitute::expand_expression_macro(params, e, args),
        ),
    }
}

/// Loop macros of the libraries CUDA code builds on, whose headers cudalint is rarely given
/// (PyTorch's ATen/cuda/detail/KernelUtils.h, Caffe2's common_gpu.h): what they stand for, for a
/// program that uses them without defining them (FBGEMM's kernels are written with ATen's).
/// ATen steps a 64-bit copy of the index and assigns it to `i`, the same values.
const LIBRARY_MACROS: &str = "\
#define CUDA_KERNEL_LOOP_TYPE(i, n, index_type) for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
#define CUDA_1D_KERNEL_LOOP(i, n) for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
";

fn library_macros() -> &'static [Define] {
    static MACROS: std::sync::OnceLock<Vec<Define>> = std::sync::OnceLock::new();
    MACROS.get_or_init(|| {
        cudalint_syntax::parse(LIBRARY_MACROS)
            .map(|p| p.model.defines)
            .unwrap_or_default()
    })
}
