//! The macros a file is preprocessed with when another file includes it: what that file
//! defines before its `#include` line holds in the header, as the compiler reads them as one
//! text (`#define BLOCK 256` then `#include "kernel.cuh"`, whose `#ifndef BLOCK` default
//! then does not apply; llama.cpp's common.cuh defines `GGML_COMMON_DECL_CUDA` before
//! including ggml-common.h). A header included by several files takes its first includer's.
//! The other way, what a header defines holds in its includer below the include line (a
//! config.h's `#define ELEMENT_TYPE_UINT4` picks the includer's `#elif` typedef).

use crate::build_files::BuildFiles;
use crate::check::{Input, Settings};
use cudalint_syntax::{Defines, HeaderMacro, Specifier};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Per input, the macros to preprocess it with: `settings.defines_for(input)`, and over them
/// the object-like macros its first includer has defined (and not undefined) above the
/// include.
pub fn file_defines(inputs: &[Input], settings: &Settings) -> Vec<Defines> {
    let base = base_defines(inputs, settings);
    // per includer, the branches it keeps: a define in a dropped branch does not count
    let kept: Vec<Option<std::borrow::Cow<str>>> = inputs
        .par_iter()
        .zip(&base)
        .map(|(input, defines)| {
            may_give(&input.text)
                .then(|| cudalint_syntax::preprocess::select_branches(&input.text, defines))
        })
        .collect();
    let kept: Vec<Option<&str>> = kept.iter().map(|k| k.as_deref()).collect();
    let from = includer_defines(inputs, &kept);
    base.into_iter()
        .zip(from)
        .map(|(b, inc)| match inc {
            // as in the compiler, a `#define` after `-D` redefines the name
            Some(inc) => b.overlay(&inc),
            None => b,
        })
        .collect()
}

/// One directive of a text with its `#if` branches selected, in the order it comes.
enum Event {
    Define(String, HeaderMacro),
    Undef(String),
    Include(String, Option<usize>),
}

/// An `#include "..."` as spelled, with the macros the header it names leaves behind.
type IncludeGives = (String, Vec<(String, HeaderMacro)>);

/// Per input, the macros each of its `#include "..."` lines brings: what the header it
/// names leaves defined or undefined at its end, with what that header includes in turn.
/// A header's branches are selected with `base` alone, not with its includer's macros.
fn included_macros(inputs: &[Input], base: &[Defines]) -> Vec<Vec<IncludeGives>> {
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
    let index = cudalint_analysis::project::IncludeIndex::new(&paths);
    let events: Vec<Vec<Event>> = inputs
        .par_iter()
        .zip(base)
        .enumerate()
        .map(|(fi, (input, defines))| {
            let t = &input.text;
            if !t.contains('#') || !(t.contains("define") || t.contains("include")) {
                return Vec::new();
            }
            let kept = cudalint_syntax::preprocess::select_branches(t, defines);
            directive_events(&kept, |inc| index.resolve(fi, inc))
        })
        .collect();
    let mut memo: Vec<Option<std::rc::Rc<BTreeMap<String, HeaderMacro>>>> =
        vec![None; inputs.len()];
    let mut visiting = vec![false; inputs.len()];
    (0..inputs.len())
        .map(|fi| {
            events[fi]
                .iter()
                .filter_map(|e| match e {
                    Event::Include(spelled, Some(to)) => {
                        let given = leaves(*to, &events, &mut memo, &mut visiting);
                        (!given.is_empty()).then(|| {
                            let macros = given.iter().map(|(k, v)| (k.clone(), v.clone()));
                            (spelled.clone(), macros.collect())
                        })
                    }
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// What input `fi` leaves defined at its end, with its includes; an include cycle brings
/// nothing the second time round, as an include guard would.
fn leaves(
    fi: usize,
    events: &[Vec<Event>],
    memo: &mut [Option<std::rc::Rc<BTreeMap<String, HeaderMacro>>>],
    visiting: &mut [bool],
) -> std::rc::Rc<BTreeMap<String, HeaderMacro>> {
    if let Some(m) = &memo[fi] {
        return m.clone();
    }
    if visiting[fi] {
        return Default::default();
    }
    visiting[fi] = true;
    let mut out = BTreeMap::new();
    for e in &events[fi] {
        match e {
            Event::Define(name, m) => {
                out.insert(name.clone(), m.clone());
            }
            Event::Undef(name) => {
                out.insert(name.clone(), HeaderMacro::Undefined);
            }
            Event::Include(_, Some(to)) => {
                let inner = leaves(*to, events, memo, visiting);
                out.extend(inner.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Event::Include(_, None) => {}
        }
    }
    visiting[fi] = false;
    let out = std::rc::Rc::new(out);
    memo[fi] = Some(out.clone());
    out
}

/// What a text leaves defined or undefined at its end, its `#if` branches selected with
/// `defines`: a forced include's (`-include config.h`) macros, which hold from the first line
/// of the file. What it includes in turn is not followed.
pub(crate) fn macros_left(text: &str, defines: &Defines) -> Vec<(String, HeaderMacro)> {
    let kept = cudalint_syntax::preprocess::select_branches(text, defines);
    let mut out: BTreeMap<String, HeaderMacro> = BTreeMap::new();
    for e in directive_events(&kept, |_| None) {
        match e {
            Event::Define(name, m) => {
                out.insert(name, m);
            }
            Event::Undef(name) => {
                out.insert(name, HeaderMacro::Undefined);
            }
            Event::Include(..) => {}
        }
    }
    out.into_iter().collect()
}

/// Each preprocessor directive of a text, after its `#`, with whether its line is continued
/// with a backslash; the continuation lines themselves are not directives.
pub(crate) fn directive_lines(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut continued = false;
    // ASCII whitespace only, as the preprocessor's: a byte-wise trim, where the Unicode one
    // decoded every line end (this runs over every text of a run, several times)
    text.lines().filter_map(move |line| {
        let was_continued = continued;
        continued = line.trim_ascii_end().ends_with('\\');
        if was_continued {
            return None;
        }
        let directive = line
            .trim_ascii_start()
            .strip_prefix('#')?
            .trim_ascii_start();
        Some((directive, continued))
    })
}

/// The `#define`, `#undef` and `#include "..."` lines of a branch-selected text.
fn directive_events(text: &str, resolve: impl Fn(&str) -> Option<usize>) -> Vec<Event> {
    let mut out = Vec::new();
    for (directive, continued) in directive_lines(text) {
        if let Some(rest) = directive.strip_prefix("define") {
            let t = rest.trim_start();
            let end = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(t.len());
            if end == 0 || !rest.starts_with([' ', '\t']) {
                continue;
            }
            let m = match object_like(rest) {
                Some((_, v)) if !continued => HeaderMacro::Object(v.to_string()),
                _ => HeaderMacro::Defined,
            };
            out.push(Event::Define(t[..end].to_string(), m));
        } else if let Some(rest) = directive.strip_prefix("undef") {
            let name = rest
                .trim_start()
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if !name.is_empty() && rest.starts_with([' ', '\t']) {
                out.push(Event::Undef(name.to_string()));
            }
        } else if let Some(rest) = directive.strip_prefix("include") {
            if let Some(inc) = cudalint_syntax::included_name(rest) {
                out.push(Event::Include(inc.to_string(), resolve(inc)));
            }
        }
    }
    out
}

/// Per input, what it is preprocessed with before its includer's macros: `-D`/`-U` and
/// cudalint.toml (`Settings::defines_for`), the declaration-specifier macros of the
/// program it is part of, and what the headers it includes define.
pub fn base_defines(inputs: &[Input], settings: &Settings) -> Vec<Defines> {
    base_defines_with(inputs, settings, &crate::build_files::defined_names(inputs))
}

/// [`base_defines`] with the names some file of the run `#define`s given: a part of a run
/// (the results cache analyses what changed) sees the whole run's.
pub fn base_defines_with(
    inputs: &[Input],
    settings: &Settings,
    set_by_program: &std::collections::BTreeSet<&str>,
) -> Vec<Defines> {
    let specifiers = program_specifiers(inputs);
    let up = includer_builds(inputs);
    let mut base: Vec<Defines> = inputs
        .par_iter()
        .zip(specifiers)
        .zip(&up)
        .map(|((i, spec), up)| {
            let mut d = settings.defines_for(i);
            for (name, what) in spec {
                d.insert_specifier(&name, what);
            }
            if i.build.is_some() || i.compile.is_some() {
                // a name neither the program nor its build files set is not defined in a
                // plain build; reserved names (`_WIN32`, `__CUDA_ARCH__`) are the compiler's.
                // A compile command is the build's own word: what it does not define, the
                // build does not, whatever the build files mention
                // (a header is compiled as part of the files that include it: what their
                // build files set, it may see: ginkgo's `common/` headers test
                // `GKO_COMPILING_CUDA`, which only `cuda/CMakeLists.txt` names)
                let may_set = |name: &str| {
                    i.compile.is_none() && i.build.iter().chain(up).any(|b| b.mentions(name))
                };
                for name in crate::build_files::tested_names(&i.text) {
                    if !name.starts_with('_')
                        && d.is_defined(name).is_none()
                        && !set_by_program.contains(name)
                        && !may_set(name)
                    {
                        let _ = d.undefine(name);
                    }
                }
            }
            d
        })
        .collect();
    let brought = included_macros(inputs, &base);
    for (defines, brought) in base.iter_mut().zip(brought) {
        for (spelled, macros) in brought {
            defines.insert_included(&spelled, macros);
        }
    }
    base
}

/// Per input, the build files of the files that include it, directly or through other
/// headers (its own folder's excepted), each once.
fn includer_builds(inputs: &[Input]) -> Vec<Vec<Arc<BuildFiles>>> {
    if inputs.iter().all(|i| i.build.is_none()) {
        return vec![Vec::new(); inputs.len()];
    }
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
    let index = cudalint_analysis::project::IncludeIndex::new(&paths);
    let edges: Vec<Vec<usize>> = inputs
        .par_iter()
        .enumerate()
        .map(|(fi, input)| {
            if !input.text.contains("include") {
                return Vec::new();
            }
            directives(&input.text)
                .into_iter()
                .filter_map(|(_, _, inc)| index.resolve(fi, &inc?))
                .collect()
        })
        .collect();
    let mut includers = vec![Vec::new(); inputs.len()];
    for (from, to) in edges.iter().enumerate() {
        for &t in to {
            if t != from {
                includers[t].push(from);
            }
        }
    }
    (0..inputs.len())
        .into_par_iter()
        .map(|f| {
            let own = inputs[f].build.as_ref().map(Arc::as_ptr);
            let mut order = vec![f];
            let mut seen = std::collections::HashSet::from([f]);
            let mut out: Vec<Arc<BuildFiles>> = Vec::new();
            let mut i = 0;
            while i < order.len() && order.len() < 4096 {
                for &u in &includers[order[i]] {
                    if !seen.insert(u) {
                        continue;
                    }
                    order.push(u);
                    if let Some(b) = &inputs[u].build {
                        let p = Arc::as_ptr(b);
                        if Some(p) != own && !out.iter().any(|x| Arc::as_ptr(x) == p) {
                            out.push(b.clone());
                        }
                    }
                }
                i += 1;
            }
            out
        })
        .collect()
}

/// Per input, the object-like macros its program defines as declaration specifiers (or as
/// nothing): a program is the files connected by `#include "..."`, as a macro of a header is
/// used in the file that includes it and the other way round. A name some file of the
/// program also defines as anything else is left out.
pub fn program_specifiers(inputs: &[Input]) -> Vec<BTreeMap<String, Specifier>> {
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
    let index = cudalint_analysis::project::IncludeIndex::new(&paths);
    // the program each input belongs to: union-find over resolved includes
    let mut parent: Vec<usize> = (0..inputs.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let each: Vec<_> = inputs
        .par_iter()
        .enumerate()
        .map(|(fi, input)| {
            let mut defs = Vec::new();
            let mut to = Vec::new();
            if input.text.contains("define") || input.text.contains("include") {
                for (name, value, include) in directives(&input.text) {
                    match include {
                        Some(inc) => to.extend(index.resolve(fi, &inc)),
                        None => defs.push((name, value)),
                    }
                }
            }
            (defs, to)
        })
        .collect();
    let mut found: Vec<Vec<(String, Option<String>)>> = Vec::with_capacity(inputs.len());
    for (fi, (defs, to)) in each.into_iter().enumerate() {
        for to in to {
            let (a, b) = (root(&mut parent, fi), root(&mut parent, to));
            parent[a] = b;
        }
        found.push(defs);
    }
    let mut by_program: BTreeMap<usize, Vec<(String, Option<String>)>> = BTreeMap::new();
    for (fi, defs) in found.into_iter().enumerate() {
        by_program
            .entry(root(&mut parent, fi))
            .or_default()
            .extend(defs);
    }
    let mut specifiers: BTreeMap<usize, BTreeMap<String, Specifier>> = BTreeMap::new();
    for (program, defs) in by_program {
        let mut spec: BTreeMap<String, Specifier> = BTreeMap::new();
        let mut other: std::collections::BTreeSet<String> = Default::default();
        // chains (`#define HDI HD inline`) resolve in a few rounds
        for _ in 0..3 {
            for (name, value) in &defs {
                let Some(value) = value else {
                    other.insert(name.clone());
                    continue;
                };
                let known = |w: &str| spec.get(w).copied();
                // a function-like one is recorded as `NAME(` with what follows its `(`
                let what = if name.ends_with('(') {
                    cudalint_syntax::preprocess::call_specifier_of(value, &known)
                } else {
                    cudalint_syntax::preprocess::specifier_of(value, &known)
                };
                match what {
                    // `#ifdef __CUDACC__ #define K __global__ static #else #define K static`:
                    // nvcc reads the first, whichever comes last
                    Some(s) => {
                        let e = spec.entry(name.clone()).or_insert(s);
                        *e = (*e).max(s);
                    }
                    None => {
                        other.insert(name.clone());
                    }
                }
            }
        }
        spec.retain(|name, s| !other.contains(name) || *s != Specifier::Other);
        specifiers.insert(program, spec);
    }
    (0..inputs.len())
        .map(|fi| {
            specifiers
                .get(&root(&mut parent, fi))
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// The `#define NAME VALUE` (value `None` for a function-like macro) and `#include "..."`
/// lines of a text, as (name, value, include).
fn directives(text: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for (directive, continued) in directive_lines(text) {
        if let Some(rest) = directive.strip_prefix("define") {
            let rest_trim = rest.trim_start();
            let end = rest_trim
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest_trim.len());
            let name = &rest_trim[..end];
            if name.is_empty() || !rest.starts_with([' ', '\t']) {
                continue;
            }
            let value = match object_like(rest) {
                Some((_, v)) if !continued => Some(v.to_string()),
                // a function-like macro is recorded as `NAME(` with its body, for the ones
                // that stand for an attribute (`#define LAUNCH_BOUNDS(t, b)
                // __launch_bounds__(t, b)`, or nothing); a reserved name defined as nothing
                // stubs out a builtin for another compiler (`#define __threadfence_block()`,
                // which one header of ccminer defines and another file of the program
                // declares: `extern __device__ void __threadfence_block(void);`)
                None if !continued => function_like_body(rest_trim).map(|body| {
                    if !body.is_empty() || !name.starts_with("__") {
                        let after_open = &rest_trim[name.len() + 1..];
                        out.push((format!("{name}("), Some(after_open.to_string()), None));
                    }
                    String::new()
                }),
                // `#define MGPU_LAUNCH_BOUNDS(lb) \` with `__launch_bounds__(...)` on the next
                // line: the body, its lines joined
                None if rest_trim[name.len()..].starts_with('(') => {
                    let whole = continued_directive(text, rest_trim);
                    if function_like_body(&whole).is_some_and(|b| !b.is_empty()) {
                        let after_open = &whole[name.len() + 1..];
                        out.push((format!("{name}("), Some(after_open.to_string()), None));
                    }
                    None
                }
                _ => None,
            };
            if value.as_deref() == Some("") && rest_trim[name.len()..].starts_with('(') {
                continue;
            }
            out.push((name.to_string(), value, None));
        } else if let Some(rest) = directive.strip_prefix("include") {
            if let Some(inc) = cudalint_syntax::included_name(rest) {
                out.push((String::new(), None, Some(inc.to_string())));
            }
        }
    }
    out
}

/// A directive continued over lines, from `start` (a slice of `text`) to its last line, the
/// backslash-newlines joined into spaces.
fn continued_directive(text: &str, start: &str) -> String {
    let at = (start.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let mut out = String::new();
    for line in text.get(at..).unwrap_or("").lines() {
        let line = line.trim_ascii_end();
        match line.strip_suffix('\\') {
            Some(part) => {
                out.push_str(part);
                out.push(' ');
            }
            None => {
                out.push_str(line);
                break;
            }
        }
    }
    out
}

/// The body of a function-like `#define` (`NAME(a, b) body`, the part after `define`,
/// trimmed), comments dropped; `None` for anything else.
fn function_like_body(rest: &str) -> Option<&str> {
    let open = rest.find('(')?;
    let name = &rest[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let close = rest[open..].find(')')? + open;
    let body = rest[close + 1..].split("//").next().unwrap_or("");
    Some(body.split("/*").next().unwrap_or("").trim())
}

/// Whether `text` can give a header anything: it has a `#define` and an `#include`.
pub fn may_give(text: &str) -> bool {
    text.contains("define") && includes_a_file(text)
}

/// Per input, the object-like macros its first includer defined (and did not undefine) above
/// the include, if any; `kept[i]` is input i's text with its `#if` branches selected, for the
/// inputs that [`may_give`] macros.
pub fn includer_defines(inputs: &[Input], kept: &[Option<&str>]) -> Vec<Option<Defines>> {
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
    let index = cudalint_analysis::project::IncludeIndex::new(&paths);
    let mut from_includer: Vec<Option<Defines>> = vec![None; inputs.len()];
    for (fi, text) in kept.iter().enumerate() {
        let Some(text) = text else { continue };
        let mut defined = Defines::default();
        let mut continued = false;
        for line in text.lines() {
            let was_continued = continued;
            continued = line.trim_end().ends_with('\\');
            if was_continued {
                continue;
            }
            let Some(directive) = line.trim_start().strip_prefix('#') else {
                continue;
            };
            let directive = directive.trim_start();
            if let Some(rest) = directive.strip_prefix("define") {
                if let Some((name, value)) = object_like(rest) {
                    // a multi-line body is not a value this reads
                    if !continued {
                        let _ = defined.insert_flag(&format!("{name}={value}"));
                    }
                }
            } else if let Some(rest) = directive.strip_prefix("undef") {
                let _ = defined.undefine(rest.trim());
            } else if let Some(rest) = directive.strip_prefix("include") {
                if defined.is_empty() {
                    continue;
                }
                let Some(inc) = cudalint_syntax::included_name(rest) else {
                    continue;
                };
                if let Some(to) = index.resolve(fi, inc) {
                    if from_includer[to].is_none() {
                        from_includer[to] = Some(defined.clone());
                    }
                }
            }
        }
    }
    from_includer
}

/// Whether some line is `#include "..."` or `#include <...>`.
fn includes_a_file(text: &str) -> bool {
    text.match_indices("include").any(|(at, _)| {
        let before = text[..at].trim_end_matches([' ', '\t']);
        let after = text[at + "include".len()..].trim_start_matches([' ', '\t']);
        before.ends_with('#') && (after.starts_with('"') || after.starts_with('<'))
    })
}

/// `NAME value` of an object-like `#define` (the part after `define`): `None` for a
/// function-like macro (`NAME(` with no space) or no name.
fn object_like(rest: &str) -> Option<(&str, &str)> {
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    if name.is_empty() || after.starts_with('(') {
        return None;
    }
    // a comment after the value is not part of it
    let value = after.split("//").next().unwrap_or("").trim();
    let value = value.split("/*").next().unwrap_or("").trim();
    Some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, text: &str) -> Input {
        Input::new(path, text)
    }

    #[test]
    fn a_header_sees_what_its_includer_defined_above_the_include() {
        let inputs = [
            input(
                "app/main.cu",
                "#define BLOCK 256 // threads\n#define SQUARE(x) ((x)*(x))\n#ifdef _WIN32\n#define WIN 1\n#endif\n#define GONE\n#undef GONE\n#include \"kernel.cuh\"\n#define LATE 1\n",
            ),
            input("app/kernel.cuh", "#ifndef BLOCK\n#define BLOCK 64\n#endif\n"),
            input("app/other.cuh", ""),
        ];
        let defines = file_defines(&inputs, &Settings::default());
        let d = &defines[1];
        assert_eq!(d.get("BLOCK"), Some("256"));
        // function-like macros, dropped branches, undefined and later names do not hold
        assert_eq!(d.get("SQUARE"), None);
        assert_eq!(d.get("WIN"), None);
        assert_eq!(d.get("GONE"), None);
        assert_eq!(d.get("LATE"), None);
        // nothing for files no one includes
        assert_eq!(defines[2].get("BLOCK"), None);
        assert_eq!(defines[0].get("BLOCK"), None);
    }

    #[test]
    fn the_includer_redefines_what_the_command_line_defined() {
        let inputs = [
            input("m.cu", "#define BLOCK 256\n#include \"k.cuh\"\n"),
            input("k.cuh", ""),
        ];
        let mut settings = Settings::default();
        settings.defines.insert_flag("BLOCK=32").unwrap();
        assert_eq!(
            file_defines(&inputs, &settings)[1].get("BLOCK"),
            Some("256")
        );
        assert_eq!(file_defines(&inputs, &settings)[0].get("BLOCK"), Some("32"));
    }

    #[test]
    fn what_a_header_defines_picks_the_includers_branch_below_the_include() {
        // Learn-CUDA's config.h: the element type is chosen by a macro a header defines,
        // through a header that includes it in turn
        let kernel = "#include \"common.h\"\n\
            #if defined(ELEMENT_FLOAT)\ntypedef float T;\n#elif defined(ELEMENT_DOUBLE)\ntypedef double T;\n#endif\n\
            #ifndef OWN\n#define OWN 2\n#endif\n\
            __global__ void k(T* o) { o[threadIdx.x * OWN] = 1; }\n";
        let mut inputs = [
            input("app/k.cu", kernel),
            input("app/common.h", "#include \"config.h\"\n#define OWN 1\n"),
            input(
                "app/config.h",
                "#define ELEMENT_DOUBLE\n#define GONE\n#undef GONE\n",
            ),
        ];
        inputs[1].context = true;
        inputs[2].context = true;
        let reports = crate::check::check(&inputs, &Settings::default());
        let a = &reports[0].accesses[0];
        assert_eq!((a.elem_type.as_str(), a.bytes), ("T", 8));
        // the header's OWN 1 holds below the include: 32 lanes x 8 bytes back to back are
        // 8 sectors (with the includer's own default of 2 they would be 16)
        assert_eq!(a.sectors_per_request, Some(8.0));
        // without the headers, the first branch is the guess
        let alone = crate::check::check(&[input("app/k.cu", kernel)], &Settings::default());
        assert_eq!(alone[0].accesses[0].bytes, 4);
    }
}

#[cfg(test)]
mod specifier_tests {
    use super::*;

    #[test]
    fn declaration_specifier_macros_are_found_per_program() {
        let inputs = [
            Input::new(
                "a/main.cu",
                "#define HD __host__ __device__\n#define HDI HD inline\n#define N 4\n#define EMPTY\n#define RESTRICT __restrict__\n#define LB(t, b) __launch_bounds__(t, b)\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define A(x) __align__(x)\n#define __f()\n#define LB0(t, b)\n#define W(a, decl) decl __attribute__((aligned(a)))\n#define W(a, decl)\n#define ID(x) x\n#include \"k.h\"\n",
            ),
            Input::new("a/k.h", "#define KERNEL __global__\n"),
            Input::new("b/other.cu", "#define HD 1\n"),
        ];
        let s = program_specifiers(&inputs);
        let names = |i: usize| {
            s[i].iter()
                .map(|(k, v)| format!("{k}:{v:?}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(0),
            [
                "A(:Align(0)",
                "EMPTY:Other",
                "HD:Device",
                "HDI:Device",
                "ID(:Wrap { keep: 0, align: None }",
                "KERNEL:Global",
                "LB(:Other",
                "LB0(:Other",
                "RESTRICT:Restrict",
                // (the definition that keeps the declaration wins over another compiler's
                // empty one)
                "W(:Wrap { keep: 1, align: Some(0) }"
            ]
        );
        assert_eq!(names(1), names(0));
        // another program's HD is a value there
        assert!(names(2).is_empty(), "{:?}", names(2));
    }
}
