//! The macros a file is preprocessed with when another file includes it: what that file
//! defines before its `#include` line holds in the header, as the compiler reads them as one
//! text (`#define BLOCK 256` then `#include "kernel.cuh"`, whose `#ifndef BLOCK` default
//! then does not apply; llama.cpp's common.cuh defines `GGML_COMMON_DECL_CUDA` before
//! including ggml-common.h). A header included by several files takes its first includer's.

use crate::check::{Input, Settings};
use cudalint_syntax::Defines;
use rayon::prelude::*;

/// Per input, the macros to preprocess it with: `settings.defines_for(input)`, and over them
/// the object-like macros its first includer has defined (and not undefined) above the
/// include.
pub fn file_defines(inputs: &[Input], settings: &Settings) -> Vec<Defines> {
    let base: Vec<Defines> = inputs.iter().map(|i| settings.defines_for(i)).collect();
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

/// Whether `text` can give a header anything: it has a `#define` and an `#include "..."`.
pub fn may_give(text: &str) -> bool {
    text.contains("define") && includes_a_quoted_file(text)
}

/// Per input, the object-like macros its first includer defined (and did not undefine) above
/// the include, if any; `kept[i]` is input i's text with its `#if` branches selected, for the
/// inputs that [`may_give`] macros.
pub fn includer_defines(inputs: &[Input], kept: &[Option<&str>]) -> Vec<Option<Defines>> {
    let paths: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
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
                let Some(inc) = rest
                    .trim()
                    .strip_prefix('"')
                    .and_then(|r| r.split('"').next())
                else {
                    continue;
                };
                if let Some(to) = cudalint_analysis::project::resolve_include(&paths, fi, inc) {
                    if from_includer[to].is_none() {
                        from_includer[to] = Some(defined.clone());
                    }
                }
            }
        }
    }
    from_includer
}

/// Whether some line is `#include "..."`.
fn includes_a_quoted_file(text: &str) -> bool {
    text.match_indices("include").any(|(at, _)| {
        let before = text[..at].trim_end_matches([' ', '\t']);
        let after = text[at + "include".len()..].trim_start_matches([' ', '\t']);
        before.ends_with('#') && after.starts_with('"')
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
}
