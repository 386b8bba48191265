//! `#if` groups: one branch of each is kept and the others are blanked, with every
//! conditional directive line, so that a group cutting a parameter list or an `if`/`else` in
//! half leaves one well-formed text behind.
//!
//! The branch kept is the one the compiler would take when the condition can be decided from
//! what we know: the file's own `#define`/`#undef` lines so far, `-D`/`-U` flags and
//! cudalint.toml `defines`/`undefines`, nvcc's predefined macros, and the platform macros a
//! Linux build does not define (`_WIN32`, `__APPLE__`, ...). A condition that needs anything
//! else (a name the build system may pass with `-D`, a value from a header we do not read)
//! keeps the first branch that could be live: in real code that is the one written first,
//! usually the configuration its authors build (rodinia's `#ifdef GPU`). The exception is a
//! branch that uses such a name as a value (`#ifdef RD_WG_SIZE` / `#define BLOCK_SIZE
//! RD_WG_SIZE` / `#else` / `#define BLOCK_SIZE 16`): it only means something with a value we
//! do not have, so the default that follows is kept instead.

use super::condition::{evaluate, Scope};
use super::{blank_range, Defines, HeaderMacro, MacroState};
use std::borrow::Cow;
use std::collections::HashMap;

struct Group {
    /// The enclosing text is live.
    parent_live: bool,
    /// A branch of this group has been kept.
    taken: bool,
    /// The current branch is kept.
    live: bool,
}

/// Keeps one branch of every `#if` group; see the module documentation.
pub fn select_branches<'a>(src: &'a str, defines: &Defines) -> Cow<'a, str> {
    if !src.contains('#') {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut stack: Vec<Group> = Vec::new();
    let mut local: HashMap<String, MacroState> = HashMap::new();
    let mut in_comment = false;
    let mut pos = 0;
    while pos < b.len() {
        let end = logical_line_end(b, pos);
        let starts_in_comment = in_comment;
        in_comment = comment_state_after(&b[pos..end], in_comment);
        let live = stack.last().is_none_or(|g| g.live);
        let directive = if starts_in_comment {
            None
        } else {
            directive(&src[pos..end])
        };
        let mut blank = !live;
        if let Some((name, rest)) = directive {
            let scope = Scope {
                local: &local,
                defines,
            };
            // only a branch that could be kept is worth looking past
            let could_keep = match name {
                "if" | "ifdef" | "ifndef" => live,
                "elif" | "elifdef" | "elifndef" => {
                    stack.last().is_some_and(|g| g.parent_live && !g.taken)
                }
                _ => false,
            };
            let decide = |cond: &str| -> Option<bool> {
                let named = || first_ident(cond).and_then(|n| scope.is_defined(n));
                let decided = match name {
                    "ifdef" | "elifdef" => named(),
                    "ifndef" | "elifndef" => named().map(|d| !d),
                    _ => evaluate(cond, &scope),
                };
                // a later branch of the group that is known to be taken beats a guess here:
                // `#if defined(DECL_C) ... #elif defined(DECL_CUDA)` with DECL_CUDA defined
                // (llama.cpp's ggml-common.h) is the CUDA branch
                if decided.is_none() && could_keep && later_branch_taken(src, end + 1, &scope) {
                    return Some(false);
                }
                // a branch with no device code before one with some: cudalint reads the
                // build that compiles the file's CUDA (Caffe's `#ifdef CPU_ONLY` stubs, then
                // its CUDA macros and includes under `#else`)
                if decided.is_none() && could_keep && cuda_only_later(src, end + 1) {
                    return Some(false);
                }
                if decided.is_none() && name != "ifndef" && name != "elifndef" {
                    let body = branch_body(src, end + 1);
                    let needs_value = identifiers(cond)
                        .filter(|n| *n != "defined" && scope.is_defined(n).is_none())
                        .any(|n| used_as_value(body, n));
                    if needs_value {
                        return Some(false);
                    }
                }
                decided
            };
            let conditional = matches!(
                name,
                "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef"
            );
            let decided = if conditional { decide(&rest) } else { None };
            // keeping `#ifdef X` on a guess is assuming X defined: a later `#ifndef X` must
            // agree (SobelFilter's FIXED_BLOCKWIDTH picks macros in one group and parameters
            // in the other)
            let guessed = decided
                .is_none()
                .then(|| first_ident(&rest))
                .flatten()
                .filter(|_| matches!(name, "ifdef" | "ifndef" | "elifdef" | "elifndef"));
            match name {
                "if" | "ifdef" | "ifndef" => {
                    // an undecided condition keeps this branch: the first live one
                    let keep = live && decided != Some(false);
                    if keep {
                        if let Some(x) = guessed {
                            let state = if name == "ifdef" {
                                MacroState::Defined
                            } else {
                                MacroState::Undefined
                            };
                            local.insert(x.to_string(), state);
                        }
                    }
                    stack.push(Group {
                        parent_live: live,
                        taken: keep || !live,
                        live: keep,
                    });
                    blank = true;
                }
                "elif" | "elifdef" | "elifndef" | "else" if !stack.is_empty() => {
                    let g = stack.last().expect("checked non-empty");
                    let keep =
                        g.parent_live && !g.taken && (name == "else" || decided != Some(false));
                    let g = stack.last_mut().expect("checked non-empty");
                    g.live = keep;
                    g.taken |= keep;
                    blank = true;
                }
                "endif" if !stack.is_empty() => {
                    stack.pop();
                    blank = true;
                }
                "define" if live => define(&rest, &mut local),
                // a name the file defines only where the compiler does not look (`#if 0`,
                // a disabled `#if _DEBUG` block: bladebit's `#define DBG_..._PRUNED 1`) is not
                // one the build passes with `-D`: undefined, until a live line defines it
                "define" => {
                    if let Some(n) = first_ident(&rest) {
                        if scope.is_defined(n).is_none() {
                            local.insert(n.to_string(), MacroState::Undefined);
                        }
                    }
                }
                "undef" if live => {
                    if let Some(n) = first_ident(&rest) {
                        local.insert(n.to_string(), MacroState::Undefined);
                    }
                }
                "include" if live => include(&rest, defines, &mut local),
                _ => {}
            }
        }
        if blank {
            let bytes = out.get_or_insert_with(|| b.to_vec());
            blank_range(bytes, pos..end);
        }
        pos = end + 1;
    }
    match out {
        // only whole lines were blanked, at ASCII boundaries
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())),
        None => Cow::Borrowed(src),
    }
}

/// The index of the newline that ends the logical line starting at `start` (backslash
/// continuations joined), or the end of the text.
pub(super) fn logical_line_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    loop {
        match b[i..].iter().position(|&c| c == b'\n') {
            None => return b.len(),
            Some(off) => {
                let nl = i + off;
                let before = if nl > start && b[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                if before > start && b[before - 1] == b'\\' {
                    i = nl + 1;
                    if i >= b.len() {
                        return b.len();
                    }
                } else {
                    return nl;
                }
            }
        }
    }
}

/// Whether a `/* */` comment is open after `line`, given whether one was open before it.
fn comment_state_after(line: &[u8], mut in_comment: bool) -> bool {
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < line.len() {
        let c = line[i];
        if in_comment {
            if c == b'*' && line.get(i + 1) == Some(&b'/') {
                in_comment = false;
                i += 2;
                continue;
            }
        } else if let Some(q) = quote {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q || c == b'\n' {
                quote = None;
            }
        } else {
            match c {
                b'/' if line.get(i + 1) == Some(&b'*') => {
                    in_comment = true;
                    i += 2;
                    continue;
                }
                // a line comment ends the line (a continued one ends the logical line)
                b'/' if line.get(i + 1) == Some(&b'/') => return false,
                b'"' | b'\'' => quote = Some(c),
                _ => {}
            }
        }
        i += 1;
    }
    in_comment
}

/// `#name rest` of a directive line, with comments and continuations removed from `rest`.
fn directive(line: &str) -> Option<(&'static str, String)> {
    let t = line.trim_start();
    let t = t.strip_prefix('#')?.trim_start();
    let word_end = t
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(t.len());
    let name = match &t[..word_end] {
        "if" => "if",
        "ifdef" => "ifdef",
        "ifndef" => "ifndef",
        "elif" => "elif",
        "elifdef" => "elifdef",
        "elifndef" => "elifndef",
        "else" => "else",
        "endif" => "endif",
        "define" => "define",
        "undef" => "undef",
        "include" => "include",
        _ => return None,
    };
    Some((name, strip_comments(&t[word_end..])))
}

fn strip_comments(text: &str) -> String {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |e| &after[e + 2..]);
            out.push(' ');
        } else if rest.starts_with("//") {
            break;
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The text of a branch starting at `from`: up to its group's next `#elif`/`#else`/`#endif`.
fn branch_body(src: &str, from: usize) -> &str {
    let mut end = src.len();
    group_directives(src, from, |pos, _, _| {
        end = pos;
        true
    });
    &src[from.min(end)..end]
}

/// Whether the branch starting at `from` has no mark of CUDA in it and a later branch of its
/// group has: a kernel, a device or shared declaration, a thread index, a launch, a CUDA
/// header, type or call (`cuda...`), a `CUDA_...` macro.
fn cuda_only_later(src: &str, from: usize) -> bool {
    fn marked(t: &str) -> bool {
        const MARKS: [&str; 7] = [
            "__global__",
            "__device__",
            "__shared__",
            "threadIdx",
            "blockIdx",
            "<<<",
            "cuda",
        ];
        MARKS.iter().any(|m| t.contains(m)) || t.contains("CUDA_")
    }
    let mut this_end = None;
    let mut group_end = src.len();
    group_directives(src, from, |pos, _, _| {
        this_end.get_or_insert(pos);
        group_end = pos;
        false
    });
    let Some(this_end) = this_end else {
        return false;
    };
    marked(&src[this_end..group_end.max(this_end)]) && !marked(&src[from.min(this_end)..this_end])
}

/// Whether a later `#elif`/`#elifdef`/`#elifndef` of the group whose branch starts at `from`
/// is known to be taken.
fn later_branch_taken(src: &str, from: usize, scope: &Scope) -> bool {
    let mut taken = false;
    group_directives(src, from, |_, name, cond| {
        let named = || first_ident(cond).and_then(|n| scope.is_defined(n));
        taken = match name {
            "elif" => evaluate(cond, scope) == Some(true),
            "elifdef" => named() == Some(true),
            "elifndef" => named() == Some(false),
            _ => false,
        };
        taken
    });
    taken
}

/// Calls `visit(position, directive, condition)` for the directives that continue or close
/// the group whose branch starts at `from` (`#elif...`, `#else`, `#endif`, skipping nested
/// groups), in order, until it returns true or the group ends.
fn group_directives(src: &str, from: usize, mut visit: impl FnMut(usize, &str, &str) -> bool) {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut pos = from;
    let mut in_comment = false;
    while pos < b.len() {
        let end = logical_line_end(b, pos);
        let starts_in_comment = in_comment;
        in_comment = comment_state_after(&b[pos..end], in_comment);
        if !starts_in_comment {
            if let Some((name, cond)) = directive(&src[pos..end]) {
                match name {
                    "if" | "ifdef" | "ifndef" => depth += 1,
                    "endif" if depth > 0 => depth -= 1,
                    "elif" | "elifdef" | "elifndef" | "else" | "endif"
                        if depth == 0 && (visit(pos, name, &cond) || name == "endif") =>
                    {
                        return;
                    }
                    _ => {}
                }
            }
        }
        pos = end + 1;
    }
}

/// Whether `name` appears in `body` other than as the name a directive defines or tests.
fn used_as_value(body: &str, name: &str) -> bool {
    let mut prev = "";
    for w in identifiers(body) {
        let named = matches!(prev, "define" | "undef" | "ifdef" | "ifndef" | "defined");
        if w == name && !named {
            return true;
        }
        prev = w;
    }
    false
}

/// The names a condition reads: not the words of a header's name (`__has_include
/// ("cuda_device_attr.h")`, whose `cuda_device_attr` is no macro).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let text = match text.find(['"', '<']) {
        Some(q) if text[..q].trim_end().ends_with('(') && text[..q].contains("__has_include") => {
            &text[..q]
        }
        _ => text,
    };
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
}

fn first_ident(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let end = t
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(t.len());
    (end > 0).then(|| &t[..end])
}

fn define(rest: &str, local: &mut HashMap<String, MacroState>) {
    let t = rest.trim_start();
    let Some(name) = first_ident(t) else {
        return;
    };
    let after = &t[name.len()..];
    let state = if after.starts_with('(') {
        MacroState::Function
    } else {
        MacroState::Object(after.trim().to_string())
    };
    local.insert(name.to_string(), state);
}

/// What an `#include "..."` of a header we read brings: its macros hold below the line.
fn include(rest: &str, defines: &Defines, local: &mut HashMap<String, MacroState>) {
    let Some(spelled) = super::included_name(rest) else {
        return;
    };
    for (name, m) in defines.included(spelled).unwrap_or_default() {
        let state = match m {
            HeaderMacro::Object(v) => MacroState::Object(v.clone()),
            HeaderMacro::Defined => MacroState::Defined,
            HeaderMacro::Undefined => MacroState::Undefined,
        };
        // what the includer defined itself above the include is what the header's
        // `#ifndef X` default deferred to
        local.entry(name.clone()).or_insert(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(src: &str, flags: &[&str]) -> String {
        let mut d = Defines::default();
        for f in flags {
            d.insert_flag(f).unwrap();
        }
        let out = select_branches(src, &d).into_owned();
        assert_eq!(out.len(), src.len());
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        out
    }

    fn live(src: &str, flags: &[&str]) -> Vec<String> {
        select(src, flags)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_name_defined_only_in_a_dead_branch_is_undefined() {
        let src = "#if 0\n#define EXTRA 1\n#endif\n#if EXTRA\na\n#endif\n#ifdef EXTRA\nb\n#else\nc\n#endif\n#define EXTRA 1\n#if EXTRA\nd\n#endif\n";
        assert_eq!(live(src, &[]), ["c", "#define EXTRA 1", "d"]);
        // a `-D` flag still decides it
        assert_eq!(
            live("#if 0\n#define X 1\n#endif\n#ifdef X\na\n#endif\n", &["X"]),
            ["a"]
        );
    }

    #[test]
    fn a_header_found_by_has_include_is_included() {
        let src = "#if defined __has_include\n#  if __has_include (\"cuda_device_attr.h\")\n#    include \"cuda_device_attr.h\"\n#  else\n#    error \"not found\"\n#  endif\n#endif\n";
        assert_eq!(live(src, &[]), ["#    include \"cuda_device_attr.h\""]);
    }

    #[test]
    fn if_zero_is_dead_and_else_is_kept() {
        let src = "a\n#if 0\nb\n#else\nc\n#endif\nd\n";
        assert_eq!(live(src, &[]), ["a", "c", "d"]);
    }

    #[test]
    fn ifdef_follows_flags_and_the_files_own_defines() {
        let src = "#ifdef USE_F\nf\n#else\ng\n#endif\n";
        // the build may pass -DUSE_F: the first branch
        assert_eq!(live(src, &[]), ["f"]);
        assert_eq!(live(src, &["USE_F"]), ["f"]);
        assert_eq!(live(src, &["!USE_F"]), ["g"]);
        let src = "#ifdef _WIN32\nw\n#else\nl\n#endif\n";
        assert_eq!(live(src, &[]), ["l"]);
        let src = "#define USE_F\n#ifdef USE_F\nf\n#endif\n#undef USE_F\n#ifdef USE_F\nh\n#endif\n";
        assert_eq!(live(src, &[]), ["#define USE_F", "f", "#undef USE_F"]);
    }

    #[test]
    fn a_later_branch_known_taken_beats_the_first_branch_guess() {
        // llama.cpp's ggml-common.h, included after `#define GGML_COMMON_DECL_CUDA`
        let src = "#if defined(DECL_C)\nc\n#elif defined(DECL_CUDA)\ndev\n#else\nother\n#endif\n";
        assert_eq!(live(src, &[]), ["c"]);
        assert_eq!(live(src, &["DECL_CUDA"]), ["dev"]);
        let src = "#ifdef A\na\n#elifdef B\nb\n#elifndef C\nnot_c\n#endif\n";
        assert_eq!(live(src, &["B"]), ["b"]);
        assert_eq!(live(src, &["!C"]), ["not_c"]);
        // nested groups in between are skipped
        let src = "#if X\n#if Y\ny\n#elif 1\none\n#endif\n#elif defined(Z)\nz\n#endif\n";
        assert_eq!(live(src, &["Z"]), ["z"]);
    }

    #[test]
    fn undecidable_conditions_keep_the_first_branch_only() {
        let src = "#if HEADER_VALUE > 3\na\n#elif HEADER_VALUE > 1\nb\n#else\nc\n#endif\n";
        assert_eq!(live(src, &[]), ["a"]);
        assert_eq!(live(src, &["HEADER_VALUE=2"]), ["b"]);
    }

    #[test]
    fn a_read_headers_macros_hold_below_its_include_only() {
        let src = "#if defined(USE_F)\nf\n#elif defined(USE_D)\nd\n#endif\n\
                   #include \"config.h\"\n\
                   #if defined(USE_F)\nf\n#elif defined(USE_D)\nd\n#endif\n\
                   #define OWN 1\n#include \"own.h\"\n#if OWN == 2\ntwo\n#else\none\n#endif\n";
        let mut defines = Defines::default();
        defines.insert_included(
            "config.h",
            vec![
                ("USE_D".into(), HeaderMacro::Defined),
                ("USE_F".into(), HeaderMacro::Undefined),
            ],
        );
        // the includer's own definition wins over the header's `#define OWN 2` default
        defines.insert_included(
            "own.h",
            vec![("OWN".into(), HeaderMacro::Object("2".into()))],
        );
        let kept: Vec<String> = select_branches(src, &defines)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect();
        // above the include the first branch is the guess; below it the header decides
        assert_eq!(kept, ["f", "d", "one"]);
    }

    #[test]
    fn elif_chains_like_llm_c_precision_switch() {
        let src = "#if defined(ENABLE_FP32)\ntypedef float floatX;\n#elif defined(ENABLE_FP16)\ntypedef half floatX;\n#else\ntypedef __nv_bfloat16 floatX;\n#endif\n";
        assert_eq!(live(src, &[]), ["typedef float floatX;"]);
        assert_eq!(
            live(src, &["!ENABLE_FP32", "ENABLE_FP16"]),
            ["typedef half floatX;"]
        );
        assert_eq!(
            live(src, &["!ENABLE_FP32", "!ENABLE_FP16"]),
            ["typedef __nv_bfloat16 floatX;"]
        );
    }

    #[test]
    fn a_branch_that_needs_an_unknown_value_yields_to_the_default() {
        let src = "#ifdef RD_WG_SIZE_0_0\n#define BLOCK_SIZE RD_WG_SIZE_0_0\n#elif defined(RD_WG_SIZE)\n#define BLOCK_SIZE RD_WG_SIZE\n#else\n#define BLOCK_SIZE 16\n#endif\n";
        assert_eq!(live(src, &[]), ["#define BLOCK_SIZE 16"]);
        assert_eq!(
            live(src, &["RD_WG_SIZE=64"]),
            ["#define BLOCK_SIZE RD_WG_SIZE"]
        );
        // defining the name it tests is not using its value (PolyBench's dataset sizes)
        let src = "# if !defined(NI)\n# define NI 1024\n# endif\n";
        assert_eq!(live(src, &[]), ["# define NI 1024"]);
    }

    #[test]
    fn a_branch_without_device_code_yields_to_one_with_some() {
        // Caffe's stubs for a CPU-only build, then its CUDA macros
        let src = "#ifdef CPU_ONLY
#define NO_GPU LOG(FATAL)
#else
#include <cuda_runtime.h>
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x; i < (n); ++i)
#endif
";
        assert_eq!(
            live(src, &[]),
            [
                "#include <cuda_runtime.h>",
                "#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x; i < (n); ++i)"
            ]
        );
        assert_eq!(live(src, &["CPU_ONLY"]), ["#define NO_GPU LOG(FATAL)"]);
        // a HIP build's includes before CUDA's (Kaldi)
        let src = "#ifdef __IS_HIP_COMPILE__
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime_api.h>
#endif
";
        assert_eq!(live(src, &[]), ["#include <cuda_runtime_api.h>"]);
        // neither branch with device code: the first, as before
        let src = "#ifdef USE_MPI
int a;
#else
int b;
#endif
";
        assert_eq!(live(src, &[]), ["int a;"]);
        // another platform's switch is not defined in a CUDA build (MAGMA); HIP's may be
        // (HOOMD-blue builds for CUDA with `ENABLE_HIP`), so that group is still a guess
        let src = "#if defined(MAGMA_HAVE_OPENCL) || defined(USE_ROCM)
typedef cl_mem dptr;
#else
typedef double* dptr;
#endif
#ifdef ENABLE_HIP
int hip;
#endif
";
        assert_eq!(live(src, &[]), ["typedef double* dptr;", "int hip;"]);
        // a debugging, tracing or deprecated-style switch is off unless the build says so
        // (CUTLASS's synclog, icl_core's deprecated style); NDEBUG is none
        let src = "#if defined(CUTLASS_ENABLE_SYNCLOG)
#define __syncthreads() synclog()
#endif
#ifdef _IC_BUILDER_DEPRECATED_STYLE_
bool Old();
#endif
#ifndef NDEBUG
int checked;
#endif
#ifdef CUB_IGNORE_DEPRECATED_CPP11
int quiet;
#endif
";
        assert_eq!(live(src, &[]), ["int checked;", "int quiet;"]);
        assert_eq!(
            live(src, &["CUTLASS_ENABLE_SYNCLOG"]),
            [
                "#define __syncthreads() synclog()",
                "int checked;",
                "int quiet;"
            ]
        );
    }

    #[test]
    fn a_guess_is_kept_consistently() {
        let src = "#ifdef FIXED\n#define W 80\n#endif\nvoid k(\n#ifndef FIXED\nshort W,\n#endif\nint h);\n";
        assert_eq!(live(src, &[]), ["#define W 80", "void k(", "int h);"]);
        assert_eq!(live(src, &["!FIXED"]), ["void k(", "short W,", "int h);"]);
    }

    #[test]
    fn nested_groups_in_dead_branches_stay_dead() {
        let src = "#if 0\n#if 1\na\n#else\nb\n#endif\n#else\nc\n#endif\n";
        assert_eq!(live(src, &[]), ["c"]);
    }

    #[test]
    fn a_group_cutting_a_parameter_list_leaves_one_list() {
        let src = "void f(int a,\n#ifdef WIDE\n  long b)\n#else\n  int b)\n#endif\n{ }\n";
        assert_eq!(live(src, &[]), ["void f(int a,", "long b)", "{ }"]);
        let src = "void f(int a,\n#if 0\n  long b)\n#else\n  int b)\n#endif\n{ }\n";
        assert_eq!(live(src, &[]), ["void f(int a,", "int b)", "{ }"]);
    }

    #[test]
    fn directives_in_comments_and_continued_lines() {
        let src = "/*\n#if 0\n*/\nx\n#if defined(A) || \\\n    1\ny\n#endif\n";
        assert_eq!(live(src, &[]), ["/*", "#if 0", "*/", "x", "y"]);
        let src = "#if 0 // a comment\nz\n#endif /* done */\nw";
        assert_eq!(live(src, &[]), ["w"]);
    }

    #[test]
    fn stray_else_and_unterminated_groups_do_not_panic() {
        let src = "#else\na\n#endif\n#if 0\nb";
        assert_eq!(live(src, &[]), ["#else", "a", "#endif"]);
    }

    #[test]
    fn multibyte_text_in_dead_branches_keeps_its_length() {
        let src = "#if 0\n// größe — 幅\n#endif\nk";
        assert_eq!(live(src, &[]), ["k"]);
    }
}
