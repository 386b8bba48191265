//! Headers the build writes from a template: CMake's `configure_file(inc/config.hpp.cmake
//! inc/config.hpp)` turns `#cmakedefine GPU_DOUBLE_PREC` into a `#define` or an `#undef` and
//! `@DEBUG@` into the variable's value. A source tree that was never built has only the
//! template, and without it every type the header names is unknown (gpuNUFFT's `DType2`,
//! `IndType3` and `CufftType`: 69% of its global and shared accesses). Where nothing else
//! has the header a quoted `#include` names, its template is read as the build would write it,
//! with the values the build files `set()` or give an `option()`, else as CMake writes a
//! variable nothing set (empty, and `#cmakedefine` off).

use std::path::{Path, PathBuf};

/// The file names a template for the header `inc` has, most common first.
pub(crate) fn template_names(inc: &str) -> [String; 2] {
    [format!("{inc}.in"), format!("{inc}.cmake")]
}

/// The template's text as CMake would configure it, with the variables the build files'
/// text sets.
pub(crate) fn configure(template: &str, build: &str) -> String {
    let mut out = String::with_capacity(template.len());
    for line in template.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let newline = &line[body.len()..];
        let directive = body.trim_start().strip_prefix('#').map(str::trim_start);
        if let Some(rest) = directive.and_then(|d| d.strip_prefix("cmakedefine01")) {
            let name = first_word(rest);
            let on = value(build, name).is_some_and(|v| truthy(&v));
            out.push_str(&format!("#define {name} {}", u8::from(on)));
        } else if let Some(rest) = directive.and_then(|d| d.strip_prefix("cmakedefine")) {
            let name = first_word(rest);
            if value(build, name).is_some_and(|v| truthy(&v)) {
                out.push_str(&substitute(&format!("#define{rest}"), build));
            } else {
                // (CMake writes the `#undef` in a comment; said plainly, a name the build files
                // mention is not taken for defined)
                out.push_str(&format!("#undef {name}"));
            }
        } else {
            out.push_str(&substitute(body, build));
        }
        out.push_str(newline);
    }
    out
}

/// The nearest template of a header named by a quoted include, among `candidates` (the paths
/// the header itself was looked for at).
pub(crate) fn template_at(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find_map(|c| {
        let name = c.file_name()?.to_str()?;
        template_names(name)
            .into_iter()
            .map(|t| c.with_file_name(t))
            .find(|t| t.is_file())
    })
}

/// Whether a path is a header template (`config.hpp.in`, `config.hpp.cmake`).
pub(crate) fn is_template(path: &Path) -> bool {
    cudalint_analysis::project::configured_name(&path.to_string_lossy()).is_some()
}

fn first_word(s: &str) -> &str {
    s.trim_start()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
}

/// `@NAME@` and `${NAME}` replaced by the variable's value (empty when nothing sets it).
fn substitute(line: &str, build: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let at = rest.find(['@', '$']);
        let Some(at) = at else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (name, len) = if let Some(t) = tail.strip_prefix('@') {
            let n = t.find('@').filter(|&n| n > 0 && is_name(&t[..n]));
            (n.map(|n| &t[..n]), n.map_or(0, |n| n + 2))
        } else if let Some(t) = tail.strip_prefix("${") {
            let n = t.find('}').filter(|&n| n > 0 && is_name(&t[..n]));
            (n.map(|n| &t[..n]), n.map_or(0, |n| n + 3))
        } else {
            (None, 0)
        };
        match name {
            Some(name) => {
                out.push_str(&value(build, name).unwrap_or_default());
                rest = &tail[len..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
}

fn is_name(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What the build files give a variable: the first `set(NAME value...)` (its values before
/// `CACHE` or `PARENT_SCOPE`, joined by `;`) or `option(NAME "doc" ON)` (off when it says
/// nothing). The first, because a default is set before the branches that change it.
fn value(build: &str, name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let lower = build.to_ascii_lowercase();
    for command in ["set", "option"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(command).map(|a| a + from) {
            from = at + command.len();
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let Some(args) = lower[from..]
                .trim_start()
                .strip_prefix('(')
                .map(|_| &build[from..])
            else {
                continue;
            };
            let open = args.find('(').unwrap_or(0);
            let close = args.find(')').unwrap_or(args.len());
            if close <= open {
                continue;
            }
            let words = arguments(&args[open + 1..close]);
            if words.first().map(String::as_str) != Some(name) {
                continue;
            }
            return Some(if command == "option" {
                words.get(2).cloned().unwrap_or_else(|| "OFF".into())
            } else {
                words[1..]
                    .iter()
                    .take_while(|w| *w != "CACHE" && *w != "PARENT_SCOPE")
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(";")
            });
        }
    }
    None
}

/// A CMake command's arguments: words, quoted strings unquoted.
fn arguments(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            out.push(chars.by_ref().take_while(|&c| c != '"').collect());
        } else {
            let mut w = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                w.push(c);
                chars.next();
            }
            out.push(w);
        }
    }
    out
}

/// CMake's truth: off for `0`, `OFF`, `NO`, `FALSE`, `N`, `IGNORE`, `NOTFOUND`, `*-NOTFOUND`
/// and the empty string; on otherwise.
fn truthy(v: &str) -> bool {
    let u = v.trim().to_ascii_uppercase();
    !(u.is_empty()
        || u.ends_with("NOTFOUND")
        || matches!(u.as_str(), "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILD: &str = "SET (DEBUG false)\nif (WITH_DEBUG)\n SET (DEBUG true)\nendif()\n\
        SET(GPU_DOUBLE_PREC OFF CACHE BOOL \"double\")\noption(WITH_TEX \"textures\" ON)\n\
        set(VERSION_MAJOR 3)\n";

    #[test]
    fn a_template_is_configured_with_the_values_the_build_sets() {
        let t = "@WARNING@\n#cmakedefine GPU_DOUBLE_PREC\n#cmakedefine WITH_TEX 1\n\
            #cmakedefine01 WITH_TEX\n#cmakedefine01 MISSING\n#define DEBUG @DEBUG@\n\
            #define V ${VERSION_MAJOR}\nint a = 1; // mail@example.com\n";
        assert_eq!(
            configure(t, BUILD),
            "\n#undef GPU_DOUBLE_PREC\n#define WITH_TEX 1\n#define WITH_TEX 1\n\
             #define MISSING 0\n#define DEBUG false\n#define V 3\nint a = 1; // mail@example.com\n"
        );
    }

    #[test]
    fn cmake_truth() {
        for off in [
            "",
            "0",
            "OFF",
            "no",
            "False",
            "N",
            "IGNORE",
            "CUDA-NOTFOUND",
        ] {
            assert!(!truthy(off), "{off}");
        }
        for on in ["1", "ON", "yes", "TRUE", "Y", "2", "/usr/local"] {
            assert!(truthy(on), "{on}");
        }
    }
}
