//! Macros that stand where the grammar expects syntax, not an expression:
//! - calling-convention and attribute macros the CUDA and host headers define as nothing or
//!   as an attribute the grammar does not know, blanked where they appear as whole words;
//! - statement macros written without a semicolon (`CUERR`, `CUDA_ERRCK`, `PERF_BEGIN`,
//!   `cudaCheckAsyncError("malloc")`), blanked when a line holds nothing else, follows the end
//!   of a statement or block, and is followed by the start of another: there, valid C++
//!   could only be a macro that supplies its own semicolon.

use super::{blank_range, Specifier};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Declaration-specifier macros of the libraries CUDA code builds on (PyTorch's c10, CUTLASS,
/// CuTe, CCCL), whose headers cudalint is rarely given.
const LIBRARY_SPECIFIERS: &[(&str, Specifier)] = &[
    ("C10_HOST_DEVICE", Specifier::Device),
    ("C10_DEVICE", Specifier::Device),
    ("C10_HOST", Specifier::Other),
    ("C10_ALWAYS_INLINE", Specifier::Other),
    ("CUTLASS_HOST_DEVICE", Specifier::Device),
    ("CUTLASS_DEVICE", Specifier::Device),
    ("CUTLASS_HOST", Specifier::Other),
    ("CUTE_HOST_DEVICE", Specifier::Device),
    ("CUTE_DEVICE", Specifier::Device),
    ("CUTE_HOST", Specifier::Other),
    // `__grid_constant__` where nvcc has it
    ("CUTE_GRID_CONSTANT", Specifier::Other),
    ("CUTLASS_GRID_CONSTANT", Specifier::Other),
    ("_CCCL_HOST_DEVICE", Specifier::Device),
    ("_CCCL_DEVICE", Specifier::Device),
    ("THRUST_HOST_DEVICE", Specifier::Device),
    ("CUB_RUNTIME_FUNCTION", Specifier::Other),
];

/// Function-like ones (the key is the name and its `(`): CuTe's `CUTE_ALIGNAS(n)`.
const LIBRARY_CALL_SPECIFIERS: &[(&str, Specifier)] = &[("CUTE_ALIGNAS(", Specifier::Align(0))];

/// Defined by the CUDA and host headers as empty, `__stdcall`, or an attribute.
const BLANKED: &[&str] = &[
    "CUDART_CB",
    "CUDA_CB",
    "CUDAAPI",
    "__stdcall",
    "__cdecl",
    "WINAPI",
    "VKAPI_ATTR",
    "VKAPI_CALL",
    "VKAPI_PTR",
    // CUDA's host_defines.h: an attribute of its own declarations, copied by programs that
    // redeclare builtins (`extern __device__ __device_builtin__ void __threadfence(void);`)
    "__device_builtin__",
];

/// Defined by the CUDA headers as a string the grammar must see as one: inline PTX operand
/// constraints (`: __LDG_PTR(ptr)` in an `asm` is `: "l"(ptr)`).
const SPELLED: &[(&str, &str)] = &[("__LDG_PTR", "\"l\"")];

pub fn blank<'a>(src: &'a str, specifiers: &BTreeMap<String, Specifier>) -> Cow<'a, str> {
    let src = match rewrite_specifiers(src, specifiers) {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(src),
    };
    let src = match super::spellings::respell(&src) {
        Cow::Borrowed(_) => src,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let words = match blank_words(&src) {
        Cow::Borrowed(_) => src,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let pragmas = match blank_pragma_operators(&words) {
        Cow::Borrowed(_) => words,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let arms = match blank_else_arm_macros(&pragmas) {
        Cow::Borrowed(_) => pragmas,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let statements = match blank_statement_macros(&arms) {
        Cow::Borrowed(_) => arms,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let mask = code_mask(statements.as_bytes());
    match super::grammar_gaps::rewrite(&statements, &mask) {
        Cow::Borrowed(_) => statements,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// Declaration-specifier macros in code (not in directives, comments or strings) become what
/// they stand for: `__global__` or `__device__` where the name is long enough to hold it,
/// spaces otherwise (a function the analysis then finds called from device code is taken as
/// callable from there, as nvcc would not have compiled the call otherwise).
fn rewrite_specifiers(src: &str, user: &BTreeMap<String, Specifier>) -> Option<String> {
    // (a program's headers define hundreds of these: most words are told apart from all of
    // them by their length and ends before the map is searched)
    let filter = WordFilter::new(
        user.keys()
            .map(|k| k.trim_end_matches('('))
            .chain(LIBRARY_SPECIFIERS.iter().map(|(n, _)| *n))
            .chain(
                LIBRARY_CALL_SPECIFIERS
                    .iter()
                    .map(|(n, _)| n.trim_end_matches('(')),
            ),
    );
    let found = |name: &str| {
        if !filter.may_hold(name) {
            return None;
        }
        user.get(name).copied().or_else(|| {
            LIBRARY_SPECIFIERS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| *s)
        })
    };
    // (one pass over the words: looking for each of the program's specifier macros in turn
    // scanned the file once per macro)
    let b = src.as_bytes();
    let mut call_key = String::new();
    let mut call_macro = |word: &str| {
        if !filter.may_hold(word) {
            return None;
        }
        call_key.clear();
        call_key.push_str(word);
        call_key.push('(');
        user.get(&call_key).copied().or_else(|| {
            LIBRARY_CALL_SPECIFIERS
                .iter()
                .find(|(n, _)| *n == call_key)
                .map(|(_, s)| *s)
        })
    };
    let present = words_of(b).any(|(s, e)| {
        let w = &src[s..e];
        found(w).is_some() || call_macro(w).is_some()
    });
    if !present {
        return None;
    }
    let mask = mask_of(b, true);
    let mut out = b.to_vec();
    let mut changed = false;
    let mut i = 0;
    let mut line_start = true;
    let mut directive = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            // a directive's backslash continuation keeps it going
            if !(directive && i > 0 && b[i - 1] == b'\\') {
                directive = false;
            }
            line_start = true;
            i += 1;
            continue;
        }
        if line_start && c == b'#' && mask[i] {
            directive = true;
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') || (i > 0 && is_word(b[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
        if directive || !mask[start] {
            continue;
        }
        // a function-like one (`LAUNCH_BOUNDS (T, B)` for `__launch_bounds__(T, B)`) goes with
        // its arguments
        let mut after = i;
        while after < b.len() && (b[after] == b' ' || b[after] == b'\t') {
            after += 1;
        }
        if b.get(after) == Some(&b'(') {
            if let Some(what) = call_macro(&src[start..i]) {
                let Some(close) = matching_paren(b, after) else {
                    continue;
                };
                rewrite_call(b, &mut out, start, after, close, what);
                changed = true;
                i = close + 1;
                continue;
            }
        }
        let Some(what) = found(&src[start..i]) else {
            continue;
        };
        // a restrict on a reference (`T& PX_RESTRICT r`): the grammar takes none there, and a
        // reference's aliasing is not read
        if what == Specifier::Restrict && b[..start].trim_ascii_end().ends_with(b"&") {
            blank_range(&mut out, start..i);
            changed = true;
            continue;
        }
        let with = match what {
            Specifier::Global => "__global__",
            Specifier::Device => "__device__",
            Specifier::Restrict => "restrict",
            Specifier::Tag => "struct",
            Specifier::Other | Specifier::Align(_) | Specifier::Wrap { .. } => "",
        };
        if with.len() > i - start {
            // too short to hold the keyword: a kernel's macro of five letters or more (pulsar's
            // `GLOBAL`, `KERNEL`) becomes the attribute `[[G]]`, which the lowering reads as
            // `__global__`; a shorter one stays as the grammar sees it; a device function loses
            // the word and is found by its calls
            if what == Specifier::Global {
                if i - start >= super::KERNEL_MARK.len() {
                    blank_range(&mut out, start..i);
                    out[start..start + super::KERNEL_MARK.len()]
                        .copy_from_slice(super::KERNEL_MARK.as_bytes());
                    changed = true;
                }
                continue;
            }
            if what == Specifier::Device && i - start >= super::DEVICE_MARK.len() {
                blank_range(&mut out, start..i);
                out[start..start + super::DEVICE_MARK.len()]
                    .copy_from_slice(super::DEVICE_MARK.as_bytes());
                changed = true;
                continue;
            }
            blank_range(&mut out, start..i);
        } else {
            blank_range(&mut out, start..i);
            out[start..start + with.len()].copy_from_slice(with.as_bytes());
        }
        changed = true;
    }
    changed.then(|| String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

/// A call of a function-like specifier macro, `name(` at `start`, its parentheses at `open`
/// and `close`: an alignment becomes `alignas(...)` where a member's or a class's declaration
/// starts and the words fit; a wrapped declaration is kept, with its alignment in front where
/// it fits; everything else is blanked.
fn rewrite_call(
    b: &[u8],
    out: &mut [u8],
    start: usize,
    open: usize,
    close: usize,
    what: Specifier,
) {
    let args = top_level_args(b, open, close);
    let arg = |i: Option<u8>| i.and_then(|i| args.get(usize::from(i)).cloned());
    let write_align = |out: &mut [u8], room: std::ops::Range<usize>, a: std::ops::Range<usize>| {
        let text = [b"alignas(", b[a].trim_ascii(), b")"].concat();
        if text.len() <= room.len() {
            out[room.start..room.start + text.len()].copy_from_slice(&text);
        }
    };
    match what {
        Specifier::Wrap { keep, align } => {
            let Some(kept) = arg(Some(keep)) else {
                blank_range(out, start..close + 1);
                return;
            };
            blank_range(out, start..kept.start);
            blank_range(out, kept.end..close + 1);
            if let Some(a) = arg(align) {
                write_align(out, start..kept.start, a);
            }
        }
        Specifier::Align(a) => {
            blank_range(out, start..close + 1);
            let before = b[..start].trim_ascii_end();
            let next = b[close + 1..].trim_ascii_start();
            let next_word = &next[..next.iter().take_while(|c| is_word(**c)).count()];
            // before a member's type, or a class's name (not before `struct` itself: the
            // grammar reads the alignment of a class only after its key)
            let member = (before.is_empty() || before.ends_with(b"{") || before.ends_with(b";"))
                && !matches!(next_word, b"struct" | b"class" | b"union");
            if member || super::declares_a_class(b, start) {
                if let Some(a) = arg(Some(a)) {
                    write_align(out, start..close + 1, a);
                }
            }
        }
        _ => blank_range(out, start..close + 1),
    }
}

/// The arguments of the call whose parentheses are at `open` and `close`, as ranges split at
/// its top-level commas.
fn top_level_args(b: &[u8], open: usize, close: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut from = open + 1;
    for (k, &c) in b[open + 1..close].iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                out.push(from..open + 1 + k);
                from = open + 2 + k;
            }
            _ => {}
        }
    }
    out.push(from..close);
    out
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A set of words as bits over their length and first and last bytes: a word it does not
/// hold is surely none of them.
struct WordFilter {
    bits: [u64; 64],
}

impl WordFilter {
    fn new<'a>(words: impl Iterator<Item = &'a str>) -> WordFilter {
        let mut f = WordFilter { bits: [0; 64] };
        for w in words {
            let h = Self::slot(w);
            f.bits[h / 64] |= 1 << (h % 64);
        }
        f
    }

    fn slot(w: &str) -> usize {
        let b = w.as_bytes();
        let (first, last) = (
            b.first().copied().unwrap_or(0),
            b.last().copied().unwrap_or(0),
        );
        (b.len().wrapping_mul(131) ^ (first as usize).wrapping_mul(31) ^ ((last as usize) * 7))
            % 4096
    }

    fn may_hold(&self, w: &str) -> bool {
        let h = Self::slot(w);
        self.bits[h / 64] & (1 << (h % 64)) != 0
    }
}

/// The identifiers of a text, as byte ranges (numbers' digits and suffixes are not).
fn words_of(b: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
                return Some((start, i));
            }
            i += 1;
            if c.is_ascii_digit() {
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
            }
        }
        None
    })
}

/// The `)` matching the `(` at `open`, on the same logical line or a few after.
pub(super) fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b[open..].iter().enumerate().take(1024) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

fn blank_words(src: &str) -> Cow<'_, str> {
    let words = || {
        BLANKED
            .iter()
            .map(|m| (*m, ""))
            .chain(SPELLED.iter().copied())
    };
    if !words().any(|(m, _)| src.contains(m)) {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    for (m, with) in words() {
        let mut from = 0;
        while let Some(off) = src[from..].find(m) {
            let start = from + off;
            let end = start + m.len();
            let word = |i: Option<&u8>| i.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
            if !word(start.checked_sub(1).and_then(|i| b.get(i)))
                && !word(b.get(end))
                && !names_a_macro(b, start)
            {
                blank_range(&mut out, start..end);
                out[start..start + with.len()].copy_from_slice(with.as_bytes());
            }
            from = end;
        }
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

/// `_Pragma("unroll") for (...)` (and MSVC's `__pragma(...)`): a `#pragma` written as an
/// operator, in code or in what a macro stands for, which the grammar does not read. Blanked
/// with its argument, outside directives (a `#define` keeps its body).
fn blank_pragma_operators(src: &str) -> Cow<'_, str> {
    if !src.contains("_Pragma") && !src.contains("__pragma") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mask = mask_of(b, true);
    let mut out = b.to_vec();
    let mut changed = false;
    for (start, end) in words_of(b) {
        if !matches!(&b[start..end], b"_Pragma" | b"__pragma") || !mask[start] {
            continue;
        }
        if in_directive(b, start) {
            continue;
        }
        let open = end + b[end..].iter().take_while(|c| *c == &b' ').count();
        if b.get(open) != Some(&b'(') {
            continue;
        }
        let Some(len) = super::balanced_end(&src[open..]) else {
            continue;
        };
        blank_range(&mut out, start..open + len);
        changed = true;
    }
    if !changed {
        return Cow::Borrowed(src);
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

/// Whether byte `at` is on a directive's line.
fn in_directive(b: &[u8], at: usize) -> bool {
    let line_start = b[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    b[line_start..at].trim_ascii_start().starts_with(b"#")
}

/// Whether the word at `at` is the name a directive defines or tests (`#define __LDG_PTR "l"`,
/// `#ifndef CUDART_CB`, `defined(WINAPI)`): the name stays for the directive to read.
fn names_a_macro(b: &[u8], at: usize) -> bool {
    let line_start = b[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    let before = b[line_start..at].trim_ascii();
    let Some(directive) = before.strip_prefix(b"#") else {
        return false;
    };
    let directive = directive.trim_ascii();
    matches!(directive, b"define" | b"undef" | b"ifdef" | b"ifndef")
        || directive.ends_with(b"defined")
        || directive.ends_with(b"defined(")
}

/// Marks the bytes that are code (not inside a comment): what "the previous character"
/// means below.
fn code_mask(b: &[u8]) -> Vec<bool> {
    mask_of(b, false)
}

/// Comments, and string and character literals when `literals` is set, marked false.
pub(super) fn mask_of(b: &[u8], literals: bool) -> Vec<bool> {
    let mut mask = vec![true; b.len()];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    mask[i] = false;
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |p| i + 2 + p + 2);
                for m in &mut mask[i..end] {
                    *m = false;
                }
                i = end;
            }
            b'"' | b'\'' => {
                let start = i;
                i = super::literal_end(b, i);
                i += 1;
                if literals {
                    for m in &mut mask[start..i.min(b.len())] {
                        *m = false;
                    }
                }
            }
            _ => i += 1,
        }
    }
    mask
}

const KEYWORDS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "do",
    "else",
    "case",
    "default",
    "break",
    "continue",
    "goto",
    "throw",
    "delete",
    "new",
    "using",
    "typedef",
    "template",
    "public",
    "private",
    "protected",
    "static_assert",
    "decltype",
    "alignas",
    "asm",
];

/// `IDENT` (upper case) or `ident(...)` filling `line` (comments aside): its byte range.
fn lone_macro(line: &[u8], mask: &[bool]) -> Option<std::ops::Range<usize>> {
    let code: Vec<usize> = (0..line.len())
        .filter(|&i| mask[i] && !line[i].is_ascii_whitespace())
        .collect();
    let (&first, &last) = (code.first()?, code.last()?);
    let ident_end = (first..line.len())
        .find(|&i| !(line[i].is_ascii_alphanumeric() || line[i] == b'_'))
        .unwrap_or(line.len());
    let ident = std::str::from_utf8(&line[first..ident_end]).ok()?;
    if ident.is_empty() || ident.as_bytes()[0].is_ascii_digit() || KEYWORDS.contains(&ident) {
        return None;
    }
    let upper = |w: &[u8]| {
        w.iter().filter(|c| c.is_ascii_uppercase()).count() >= 2
            && !w.iter().any(|c| c.is_ascii_lowercase())
            && w.iter().all(|&c| is_word(c))
    };
    if ident_end > last {
        return upper(ident.as_bytes()).then_some(first..ident_end);
    }
    // several in a row (Altis's `ADD1_MOP20 ADD1_MOP20 ...`, each statements ending in `;`)
    let code_words = line[first..=last]
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    if (first..=last).all(|i| mask[i]) && code_words.clone().all(upper) && code_words.count() > 1 {
        return Some(first..last + 1);
    }
    // a call whose parentheses close at the end of the line
    let open = (ident_end..line.len()).find(|&i| !line[i].is_ascii_whitespace())?;
    if line[open] != b'(' || line[last] != b')' {
        return None;
    }
    let mut depth = 0i32;
    for i in open..=last {
        if !mask[i] {
            continue;
        }
        match line[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i != last {
                    return None;
                }
            }
            b'"' | b'\'' => {}
            _ => {}
        }
    }
    (depth == 0).then_some(first..last + 1)
}

/// A single identifier, not a keyword, alone on its line's code.
fn lone_word(line: &[u8], mask: &[bool]) -> Option<std::ops::Range<usize>> {
    let code: Vec<usize> = (0..line.len())
        .filter(|&i| mask[i] && !line[i].is_ascii_whitespace())
        .collect();
    let (&first, &last) = (code.first()?, code.last()?);
    let word = &line[first..=last];
    let ident = std::str::from_utf8(word).ok()?;
    let is_ident = !word[0].is_ascii_digit() && word.iter().all(|&c| is_word(c));
    (is_ident && !KEYWORDS.contains(&ident)).then_some(first..last + 1)
}

/// Whether the `)` ending the code before `line_start` closes a call or launch, not the head
/// of an `if`, loop or `switch` (whose body a lone macro would be).
fn ends_a_call(b: &[u8], mask: &[bool], line_start: usize) -> bool {
    let Some(close) = (0..line_start)
        .rev()
        .find(|&i| mask[i] && !b[i].is_ascii_whitespace())
    else {
        return false;
    };
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        if !mask[i] {
            continue;
        }
        match b[i] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    let mut e = i;
                    while e > 0 && b[e - 1].is_ascii_whitespace() {
                        e -= 1;
                    }
                    let mut s = e;
                    while s > 0 && is_word(b[s - 1]) {
                        s -= 1;
                    }
                    let head = &b[s..e];
                    return !matches!(
                        head,
                        b"if" | b"for" | b"while" | b"switch" | b"catch" | b"return"
                    ) && (e > s || b[..e].ends_with(b">"));
                }
            }
            b';' | b'{' | b'}' => return false,
            _ => {}
        }
    }
    false
}

/// A call starting the line `start..end` (`NAME(` after indentation) whose `)` closes a later
/// line and is the last code there: where that `)` is.
fn spanning_call(b: &[u8], mask: &[bool], start: usize, end: usize) -> Option<usize> {
    let first = (start..end).find(|&i| !b[i].is_ascii_whitespace())?;
    if !mask[first] || !(b[first].is_ascii_alphabetic() || b[first] == b'_') {
        return None;
    }
    let mut i = first;
    while i < end && (is_word(b[i]) || b[i..].starts_with(b"::")) {
        i += if b[i] == b':' { 2 } else { 1 };
    }
    if KEYWORDS.contains(&std::str::from_utf8(&b[first..i]).ok()?) {
        return None;
    }
    while i < end && b[i] == b' ' {
        i += 1;
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let j = call_close(b, mask, i)?;
    if j <= end {
        return None;
    }
    let line_end = b[j..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| j + p);
    (j + 1..line_end)
        .all(|k| !mask[k] || b[k].is_ascii_whitespace())
        .then_some(j)
}

/// The `)` that closes a call's `(` at `open`, within 4 KB and with no `;` or brace inside:
/// a macro invocation's argument list, not a body.
fn call_close(b: &[u8], mask: &[bool], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = open;
    while j < b.len() && j - open < 4096 {
        if mask[j] {
            match b[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                b';' | b'{' | b'}' => return None,
                b'"' | b'\'' => j = super::literal_end(b, j),
                _ => {}
            }
        }
        j += 1;
    }
    None
}

/// Two or more calls `NAME(...)` one after another from the line at `start`, nothing but
/// spaces between them, the last ending its line: where each one's `)` ends.
fn call_run(b: &[u8], mask: &[bool], start: usize) -> Option<Vec<usize>> {
    let mut i = start;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let mut calls = Vec::new();
    loop {
        let name = i;
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
        if i == name || b[name].is_ascii_digit() || !mask[name] {
            break;
        }
        if KEYWORDS.contains(&std::str::from_utf8(&b[name..i]).ok()?) {
            return None;
        }
        if b.get(i) != Some(&b'(') {
            return None;
        }
        i = call_close(b, mask, i)? + 1;
        calls.push(i);
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t' || b[i] == b'\r') {
            i += 1;
        }
        if i >= b.len() || b[i] == b'\n' || !mask[i] {
            return (calls.len() >= 2).then_some(calls);
        }
    }
    None
}

/// Invocations of a macro whose replacement starts with `else` (OneFlow's `#define
/// DEFINE_ONE_ELIF(w) else if (cols <= (w)*pack_size) { ... }`, one arm of a dispatch chain
/// per invocation): unexpanded, they leave the chain's last `else` with no `if` before it. Each
/// invocation becomes a statement of its own (the `;` it lacks put after it, or the call moved
/// a byte left into its indentation to make room), where the host code's reading expands it
/// and finds the launches its arms make; the `else` after the last is blanked, its block
/// left as a block.
fn blank_else_arm_macros(src: &str) -> Cow<'_, str> {
    if !src.contains("else") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut firsts: Vec<(&[u8], &[u8])> = Vec::new();
    for at in memchr::memmem::find_iter(b, b"define") {
        let line_start = b[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let head = b[line_start..at].trim_ascii();
        if !(head == b"#" || (head.starts_with(b"#") && head[1..].trim_ascii().is_empty())) {
            continue;
        }
        let name_start = skip_spaces(b, at + 6);
        let mut name_end = name_start;
        while name_end < b.len() && is_word(b[name_end]) {
            name_end += 1;
        }
        if name_end == name_start || b.get(name_end) != Some(&b'(') {
            continue;
        }
        // (the parameters may run over continued lines)
        let Some(close) = (name_end..b.len())
            .find(|&k| b[k] == b')' || (b[k] == b'\n' && b[k - 1] != b'\\' && b[k - 1] != b'\r'))
            .filter(|&k| b[k] == b')')
        else {
            continue;
        };
        let mut i = close + 1;
        // the replacement, past spaces and line continuations
        while i < b.len() && (matches!(b[i], b' ' | b'\t' | b'\r') || b[i..].starts_with(b"\\\n")) {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        let mut first_end = i;
        while first_end < b.len() && is_word(b[first_end]) {
            first_end += 1;
        }
        firsts.push((&b[name_start..name_end], &b[i..first_end]));
    }
    // a macro whose replacement starts with another's invocation is an arm too (Marlin's
    // `CALL_IF(...)`, a run of `__CALL_IF(...)`, each `else if (...) { launch }`)
    let mut names: Vec<&[u8]> = Vec::new();
    loop {
        let before = names.len();
        for &(name, first) in &firsts {
            if !names.contains(&name) && (first == b"else" || names.contains(&first)) {
                names.push(name);
            }
        }
        if names.len() == before {
            break;
        }
    }
    if names.is_empty() {
        return Cow::Borrowed(src);
    }
    let mask = code_mask(b);
    let mut out: Option<Vec<u8>> = None;
    for name in names {
        for at in memchr::memmem::find_iter(b, name) {
            let whole = (at == 0 || !is_word(b[at - 1]))
                && b.get(at + name.len()).is_some_and(|c| !is_word(*c));
            if !whole || !mask[at] || super::grammar_gaps::in_directive(b, at) {
                continue;
            }
            let open = skip_spaces(b, at + name.len());
            if b.get(open) != Some(&b'(') {
                continue;
            }
            let Some(close) = call_close(b, &mask, open) else {
                continue;
            };
            let bytes = out.get_or_insert_with(|| b.to_vec());
            if matches!(b.get(close + 1), Some(b' ' | b'\t')) {
                bytes[close + 1] = b';';
            } else if at > 0 && matches!(b[at - 1], b' ' | b'\t') {
                bytes.copy_within(at..close + 1, at - 1);
                bytes[close] = b';';
            } else {
                blank_range(bytes, at..close + 1);
            }
            // past blank lines, comments and directives (`#undef DEFINE_ONE_ELIF`), the
            // chain's own `else`
            let mut i = close + 1;
            loop {
                while i < b.len() && (b[i].is_ascii_whitespace() || !mask[i]) {
                    i += 1;
                }
                if b.get(i) == Some(&b'#') {
                    i = super::conditional::logical_line_end(b, i);
                    continue;
                }
                break;
            }
            if b[i..].starts_with(b"else") && b.get(i + 4).is_none_or(|c| !is_word(*c)) {
                blank_range(bytes, i..i + 4);
            }
        }
    }
    match out {
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())),
        None => Cow::Borrowed(src),
    }
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The braces open before each byte (code only), a namespace's and an `extern "C"` block's
/// not counted: their insides are file scope, where registration macros stand (OneFlow's
/// `OF_PP_SEQ_PRODUCT_FOR_EACH_TUPLE(...)` lines inside `namespace oneflow {`).
fn brace_depths(b: &[u8], mask: &[bool]) -> Vec<u32> {
    let mut depth = 0u32;
    let mut counted: Vec<bool> = Vec::new();
    b.iter()
        .zip(mask)
        .enumerate()
        .map(|(i, (&c, &code))| {
            let here = depth;
            if code && c == b'{' {
                let scope = opens_a_scope(b, mask, i);
                counted.push(!scope);
                if !scope {
                    depth += 1;
                }
            } else if code && c == b'}' && counted.pop().unwrap_or(true) {
                depth = depth.saturating_sub(1);
            }
            here
        })
        .collect()
}

/// Whether the `{` at `open` opens a namespace (`namespace a::b {`, `namespace {`) or an
/// `extern "C" {` block.
fn opens_a_scope(b: &[u8], mask: &[bool], open: usize) -> bool {
    let mut i = open;
    let back_ws = |mut i: usize| {
        while i > 0 && (b[i - 1].is_ascii_whitespace() || !mask[i - 1]) {
            i -= 1;
        }
        i
    };
    i = back_ws(i);
    if b[..i].ends_with(b"\"C\"") {
        return b[..back_ws(i - 3)].ends_with(b"extern");
    }
    // the namespace's name, maybe qualified
    while i > 0 && (is_word(b[i - 1]) || b[i - 1] == b':') {
        i -= 1;
    }
    let name = &b[i..back_ws(open)];
    if name == b"namespace" {
        return i == 0 || !is_word(b[i - 1]);
    }
    let j = back_ws(i);
    b[..j].ends_with(b"namespace") && (j < 10 || !is_word(b[j - 10]))
}

/// Whether the `:` at `colon` closes a conditional expression's first branch: a `?` comes
/// before it in the same statement, and it is no `::`.
fn ends_a_ternary_branch(b: &[u8], mask: &[bool], colon: usize) -> bool {
    if colon > 0 && b[colon - 1] == b':' {
        return false;
    }
    let from = colon.saturating_sub(4096);
    (from..colon)
        .rev()
        .filter(|&k| mask[k])
        .take_while(|&k| !matches!(b[k], b';' | b'{' | b'}'))
        .any(|k| b[k] == b'?')
}

fn blank_statement_macros(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    let mask = code_mask(b);
    let significant = |i: usize| mask[i] && !b[i].is_ascii_whitespace();
    let mut out: Option<Vec<u8>> = None;
    let mut start = 0;
    let mut prev_sig: Option<u8> = None;
    let mut depth: Option<Vec<u32>> = None;
    // the line after a directive's line that ends in a backslash is the directive's too (a
    // `#define`'s body: `RND(S[i], ...)` there is no statement)
    let mut continued = false;
    while start < b.len() {
        let end = b[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| start + p);
        let line = &b[start..end];
        let directive = continued || line.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'#');
        continued =
            directive && line.iter().rev().find(|c| !c.is_ascii_whitespace()) == Some(&b'\\');
        if !directive && matches!(prev_sig, None | Some(b';' | b'{' | b'}')) {
            // `MAKE(ADAM, half) MAKE(ADAM, float) ...` at file scope: instantiation macros
            // written one after another with nothing between them, which no C++ declaration
            // is; blanked
            if let Some(calls) = call_run(b, &mask, start) {
                let depth = depth.get_or_insert_with(|| brace_depths(b, &mask));
                let run_end = calls[calls.len() - 1];
                let next_line = b[run_end..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| run_end + p + 1);
                if depth[start] == 0 {
                    blank_range(out.get_or_insert_with(|| b.to_vec()), start..run_end);
                    start = next_line;
                    continue;
                }
                // in a function body (TransformerEngine's `callranks(2) callranks(4) ...`, each
                // an `if` that launches): statement macros, each given the `;` it lacks in the
                // space after it, for the analysis to expand
                let last_room = (run_end..b.len())
                    .take_while(|&i| !significant(i))
                    .find(|&i| mask[i] && (b[i] == b' ' || b[i] == b'\t') && !in_directive(b, i));
                let first = (start..run_end).find(|&i| significant(i)).unwrap_or(start);
                if let Some(last_room) = last_room {
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    for &close in &calls[..calls.len() - 1] {
                        bytes[close] = b';';
                    }
                    bytes[last_room] = b';';
                    prev_sig = Some(b';');
                    start = next_line;
                    continue;
                } else if first > start && matches!(b[first - 1], b' ' | b'\t') {
                    // no space after the last: the run moves left a byte into its indentation
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    bytes.copy_within(first..run_end, first - 1);
                    for &close in &calls {
                        bytes[close - 1] = b';';
                    }
                    prev_sig = Some(b';');
                    start = next_line;
                    continue;
                }
            }
        }
        if !directive {
            if let Some(r) = lone_macro(line, &mask[start..end]) {
                let after_statement = matches!(prev_sig, None | Some(b';' | b'{' | b'}' | b':'));
                let next = (end..b.len()).find(|&i| significant(i)).map(|i| b[i]);
                let before_statement = match next {
                    None => true,
                    Some(c) => c.is_ascii_alphabetic() || c == b'_' || c == b'}' || c == b'#',
                };
                if after_statement && before_statement {
                    // a call in a function body is kept, for the analysis to expand where the
                    // program defines it (mumax's `reduce(load, sum, atomicAdd)`, a kernel's
                    // whole body), with the semicolon it lacks; elsewhere, or with no room for
                    // one, it is blanked
                    let call = line[r.end - 1] == b')';
                    let in_body = call && {
                        let depth = depth.get_or_insert_with(|| brace_depths(b, &mask));
                        depth[start] > 0
                    };
                    let (s, e) = (start + r.start, start + r.end);
                    let room = (e..b.len()).take_while(|&i| !significant(i)).find(|&i| {
                        mask[i] && (b[i] == b' ' || b[i] == b'\t') && !in_directive(b, i)
                    });
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    if in_body && room.is_some() {
                        bytes[room.unwrap_or(e)] = b';';
                    } else if in_body && s > start && matches!(b[s - 1], b' ' | b'\t') {
                        // no space after it: the call moves left a byte into its indentation
                        bytes.copy_within(s..e, s - 1);
                        bytes[e - 1] = b';';
                    } else {
                        blank_range(bytes, s..e);
                    }
                    prev_sig = Some(b';');
                    start = end + 1;
                    continue;
                }
                // `k<<<g, b>>>(p)` then `CHECK_CUDA(, debug)`: the macro supplies the
                // statement's semicolon, which takes its place
                if prev_sig == Some(b')') && before_statement && ends_a_call(b, &mask, start) {
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    blank_range(bytes, start + r.start..start + r.end);
                    bytes[start + r.start] = b';';
                    prev_sig = Some(b';');
                    start = end + 1;
                    continue;
                }
                // `for (...)` then `SWAP(a, b)` (a macro that is a block): the body of the loop
                // or branch, kept, with the semicolon it lacks put in the first space after it
                if matches!(prev_sig, Some(b')' | b'e'))
                    && before_statement
                    && super::grammar_gaps::ends_a_header(b, &mask, start)
                {
                    let room = (start + r.end..b.len())
                        .take_while(|&i| !significant(i))
                        .find(|&i| {
                            mask[i] && (b[i] == b' ' || b[i] == b'\t') && !in_directive(b, i)
                        });
                    if let Some(at) = room {
                        out.get_or_insert_with(|| b.to_vec())[at] = b';';
                        prev_sig = Some(b';');
                        start = end + 1;
                        continue;
                    }
                }
            } else if let Some(r) = lone_word(line, &mask[start..end]) {
                // `p[0] = 0;` then `fallthrough_` then `case 1:` (zfp's `[[fallthrough]];`
                // macro): a word alone on its line, after a statement and before a keyword
                // no type name can precede, is a macro supplying its own semicolon
                let after_statement = matches!(prev_sig, None | Some(b';' | b'{' | b'}' | b':'));
                let next = (end..b.len()).find(|&i| significant(i));
                let next_word = next.map(|i| {
                    let e = (i..b.len()).find(|&j| !is_word(b[j])).unwrap_or(b.len());
                    &b[i..e]
                });
                let closes = next.is_some_and(|i| b[i] == b'}');
                let keyword = next_word.is_some_and(|w| {
                    matches!(w, b"case" | b"default" | b"break" | b"return" | b"continue")
                });
                if after_statement && (closes || keyword) {
                    blank_range(
                        out.get_or_insert_with(|| b.to_vec()),
                        start + r.start..start + r.end,
                    );
                    prev_sig = Some(b';');
                    start = end + 1;
                    continue;
                }
            } else if let Some(close) = spanning_call(b, &mask, start, end) {
                // `CHECK_CUDA(render(...,\n ...), debug)` over several lines, no semicolon: the
                // call is kept and a semicolon put in the indentation of the next line
                let after_statement = matches!(prev_sig, None | Some(b';' | b'{' | b'}' | b':'));
                let next = (close + 1..b.len()).find(|&i| significant(i));
                let before_statement = next.is_none_or(|i| {
                    let c = b[i];
                    c.is_ascii_alphabetic() || c == b'_' || c == b'}' || c == b'#'
                });
                let indent = next.and_then(|i| {
                    let line_start = b[..i].iter().rposition(|&c| c == b'\n')? + 1;
                    (line_start < i && line_start > close).then_some(line_start)
                });
                if after_statement && before_statement {
                    let resume = b[close..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |p| close + p + 1);
                    if let Some(at) = indent {
                        out.get_or_insert_with(|| b.to_vec())[at] = b';';
                        prev_sig = Some(b';');
                        start = resume;
                        continue;
                    }
                    // no indentation to put it in: at file scope, where such a call is
                    // registration glue (`TORCH_BINDING_REDUCE(f16, f32, torch::kHalf, half,\n
                    // 2, float)` line after line), or as the last statement of a block closed
                    // at the start of the next line, the call is blanked
                    let depth = depth.get_or_insert_with(|| brace_depths(b, &mask));
                    let closes_block = next.is_some_and(|i| b[i] == b'}');
                    if depth[start] == 0 || closes_block {
                        // from the call's first byte: the indentation before it may hold the
                        // semicolon of the line above
                        let first = (start..close).find(|&i| significant(i)).unwrap_or(start);
                        blank_range(out.get_or_insert_with(|| b.to_vec()), first..close + 1);
                        start = resume;
                        continue;
                    }
                }
            }
            if let Some(i) = (start..end).rev().find(|&i| significant(i)) {
                // a conditional expression's `:` at the end of a line (CUB's `SELECT_METHOD =
                // c ? A :\n (d) ? B :\n C` in an enum) is no label's: what follows is its operand
                prev_sig = Some(if b[i] == b':' && ends_a_ternary_branch(b, &mask, i) {
                    b'?'
                } else {
                    b[i]
                });
            }
        } else {
            // a directive ends whatever came before it
            prev_sig = Some(b';');
        }
        start = end + 1;
    }
    match out {
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())),
        None => Cow::Borrowed(src),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_macro_a_directive_names_is_kept() {
        let src =
            "#define __LDG_PTR \"l\"\n#ifndef CUDART_CB\nasm(\"ld\" : \"=r\"(r) : __LDG_PTR(p));\n";
        let out = super::blank(src, &Default::default());
        assert_eq!(
            out,
            "#define __LDG_PTR \"l\"\n#ifndef CUDART_CB\nasm(\"ld\" : \"=r\"(r) : \"l\"      (p));\n"
        );
    }

    #[test]
    fn callback_macro_is_blanked_as_a_word() {
        let src = "void CUDART_CB done(cudaStream_t s); int CUDART_CBX;";
        let out = super::blank(src, &Default::default());
        assert_eq!(out, "void           done(cudaStream_t s); int CUDART_CBX;");
    }

    fn kept(src: &str) -> Vec<String> {
        let out = super::blank(src, &Default::default());
        assert_eq!(out.len(), src.len());
        out.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn runs_of_statement_macros_in_a_body_get_their_semicolons() {
        // TransformerEngine's `callranks(2) callranks(4)`, each an `if` that launches, two
        // lines of them, the last line with no space after it
        let src =
            "void f() {\n  if (c) {\n    call(2) call(4) call(8)\n      call(16) call(32)\n}\n}\n";
        let out = super::blank_statement_macros(src);
        assert_eq!(
            out,
            "void f() {\n  if (c) {\n    call(2);call(4);call(8)\n;    call(16);call(32);\n}\n}\n"
        );
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
    }

    #[test]
    fn registration_macros_spanning_lines_at_file_scope_are_blanked() {
        let src = "__global__ void k(float* x) { x[0] = 1; }\nBIND(k, torch::kFloat32, float, 1,\n     4)\nBIND(k2, torch::kFloat32,\nfloat, 4, 1)\nvoid g() {\nCHECK(f(a,\nb), 1)\nx = 1;\n  EXT(a)\n  EXT(\n    b)\n}\n";
        assert_eq!(
            kept(src),
            [
                "__global__ void k(float* x) { x[0] = 1; }",
                "void g() {",
                "CHECK(f(a,",
                "b), 1)",
                "x = 1;",
                "EXT(a)",
                ";",
                "}"
            ]
        );
    }

    #[test]
    fn a_namespace_is_file_scope_for_registration_macros() {
        let src = "namespace of {\nnamespace {\n__global__ void k(float* x) { x[0] = 1; }\n}\nBIND(k, float,\n     4)\nBIND(k2,\n     float)\nvoid g() {\n  EXT(\n    b)\n}\n}  // namespace of\nextern \"C\" {\nREG(a,\n    b)\n}\n";
        assert_eq!(
            kept(src),
            [
                "namespace of {",
                "namespace {",
                "__global__ void k(float* x) { x[0] = 1; }",
                "}",
                "void g() {",
                "}",
                "}  // namespace of",
                "extern \"C\" {",
                "}"
            ]
        );
    }

    #[test]
    fn else_arm_macros_become_statements() {
        let src = "int f(int c) {\n  if (c <= 0) { return 1; }\n#define ELIF(w) \\\n  else if (c <= (w)) { return g<w>(c); }\n  ELIF(4)\n  ELIF(8)\n#undef ELIF\n  else {\n    return 0;\n  }\n}\n";
        assert_eq!(
            kept(src),
            [
                "int f(int c) {",
                "if (c <= 0) { return 1; }",
                "#define ELIF(w) \\",
                "else if (c <= (w)) { return g<w>(c); }",
                "ELIF(4);",
                "ELIF(8);",
                "#undef ELIF",
                "{",
                "return 0;",
                "}",
                "}"
            ]
        );
    }

    #[test]
    fn a_kernel_body_that_is_one_macro_call_is_kept() {
        let src = "__global__ void k(float* src, int n) {\n    reduce(load, sum, atomicAdd)\n}\nREGISTER(k)\n";
        let out = super::blank_statement_macros(src);
        assert_eq!(
            out,
            "__global__ void k(float* src, int n) {\n   reduce(load, sum, atomicAdd);\n}\n           \n"
        );
    }

    #[test]
    fn statement_macros_without_semicolons_are_blanked() {
        let src = "void f() {\n  cudaMalloc(&p, n);\n  CUERR // check\n  PERF_BEGIN\n  k<<<1, 1>>>(p);\n  PERF_END(\"k\", a, b)\n  cudaCheckAsyncError(\"Cuda malloc\")\n  x = 1;\n}\n";
        assert_eq!(
            kept(src),
            [
                "void f() {",
                "cudaMalloc(&p, n);",
                "// check",
                "k<<<1, 1>>>(p);",
                "PERF_END(\"k\", a, b)",
                "; cudaCheckAsyncError(\"Cuda malloc\")",
                "; x = 1;",
                "}"
            ]
        );
    }

    #[test]
    fn a_macro_made_of_else_arm_macros_is_an_arm_too() {
        let src = "#define __CALL_IF(BITS, M,   \\\n                  N)         \\\n  else if (bits == BITS && m == M) { k<M, N><<<1, 32>>>(p); }\n#define CALL_IF(BITS, N) __CALL_IF(BITS, 1, N) __CALL_IF(BITS, 2, N)\nvoid f(int bits, int m, float* p) {\n  if (false) {\n  }\n  CALL_IF(4, 8)\n  CALL_IF(8, 8)\n  else {\n    return;\n  }\n}\n";
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
    }

    #[test]
    fn a_conditional_expression_s_last_operand_is_no_statement_macro() {
        let src = "template <typename F, typename S> struct A {\n  enum {\n    M = (!Equals<S, NullType>::VALUE) ?\n      USE_SELECT_OP :\n      (!Equals<F, NullType>::VALUE) ?\n        USE_SELECT_FLAGS :\n        USE_DISCONTINUITY\n  };\n};\n";
        assert_eq!(super::blank_statement_macros(src), src);
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
    }

    #[test]
    fn runs_of_statement_macros_are_blanked() {
        let src = "__global__ void k(float* d, int n) {\n  float s = d[0];\n  for (int j = 0; j < n; ++j) {\n    ADD1_MOP20 ADD1_MOP20 ADD1_MOP20\n        ADD1_MOP20 ADD1_MOP20\n  }\n  d[0] = s;\n}\n";
        assert_eq!(
            kept(src),
            [
                "__global__ void k(float* d, int n) {",
                "float s = d[0];",
                "for (int j = 0; j < n; ++j) {",
                "}",
                "d[0] = s;",
                "}"
            ]
        );
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
    }

    #[test]
    fn a_lone_word_before_a_label_is_a_statement_macro() {
        let src = "void f(int n, int* p) {\n  switch (n) {\n    case 0:\n      p[0] = 0;\n      fallthrough_\n    case 1:\n      p[1] = 1;\n      fallthrough_\n  }\n  size_t\n  m = 4;\n}\n";
        assert_eq!(
            kept(src),
            [
                "void f(int n, int* p) {",
                "switch (n) {",
                "case 0:",
                "p[0] = 0;",
                "case 1:",
                "p[1] = 1;",
                "}",
                "size_t",
                "m = 4;",
                "}"
            ]
        );
    }

    #[test]
    fn instantiation_macros_one_after_another_are_blanked() {
        let src = "#define M(a, b) template void f<a, b>();\nM(A, half) M(A, float) M(\n    B, half\n) M(B, float)\nvoid g() { F(x) G(y) }\n";
        // the macro's own body is left as written: it is the directive's text
        assert_eq!(
            kept(src),
            [
                "#define M(a, b) template void f<a, b>();",
                "void g() { F(x) G(y) }"
            ]
        );
    }

    #[test]
    fn a_macro_as_a_loop_body_gets_its_semicolon() {
        let src = "void f() {\n  for (m = 0;m < 2;++m)\n    SWAP(x[m],y[m])\n\n  /* c */\n#pragma unroll\n  for (;;)\n    SWAP(x[0],y[0])\n  if (a) g(); else\n    CUERR\n  x = 1;\n}\n";
        let out = super::blank_statement_macros(src);
        assert_eq!(
            out,
            "void f() {\n  for (m = 0;m < 2;++m)\n    SWAP(x[m],y[m])\n\n; /* c */\n#pragma unroll\n  for (;;)\n    SWAP(x[0],y[0])\n; if (a) g(); else\n    CUERR\n; x = 1;\n}\n"
        );
    }

    #[test]
    fn a_continued_define_body_is_no_statement_macro() {
        let src = "#define R(S, i) \\\n\tRND(S[i], \\\n\t\tS[i + 1])\n\nstatic const int k[3] = {\n\t1, 0, 0\n};\n";
        assert_eq!(super::blank_statement_macros(src), src);
    }

    #[test]
    fn macros_that_supply_a_semicolon() {
        let src = "void f() {\n  k<<<g, b>>>(\n    p,\n    q)\n  CHECK_CUDA(, debug)\n\n  CHECK_CUDA(sort(\n    a, b), debug)\n\n  x = 1;\n  if (c)\n    FOO(x)\n  else y();\n}\n";
        let out = super::blank_statement_macros(src);
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        assert_eq!(
            lines,
            [
                "void f() {",
                "k<<<g, b>>>(",
                "p,",
                "q)",
                ";",
                "",
                "CHECK_CUDA(sort(",
                "a, b), debug)",
                "",
                "; x = 1;",
                "if (c)",
                "FOO(x)",
                "; else y();",
                "}"
            ]
        );
    }

    #[test]
    fn lines_that_are_part_of_a_statement_are_kept() {
        // continued expressions, declarations split over lines, function headers, conditions
        let src = "int a = 1 +\n  OFFSET\n  + 2;\nx = 3;\nREAL\n*p = q;\n__global__ void\nKERNEL(float* a)\n{ }\nif (c)\n  FOO(x)\nelse y();\nz = 0;\nBAR(x)\n{ }\n";
        assert_eq!(kept(src).len(), 15);
    }
}

#[cfg(test)]
mod specifier_tests {
    use super::*;

    #[test]
    fn a_linkage_macro_is_a_specifier() {
        let none = |_: &str| None;
        assert_eq!(
            super::super::specifier_of("extern \"C\"", &none),
            Some(Specifier::Other)
        );
        assert_eq!(super::super::specifier_of("\"C\" + 1", &none), None);
        // a namespace qualifier, blanked before the name it qualifies
        for prefix in ["fbgemm_gpu::", "::a::b_2::"] {
            assert_eq!(
                super::super::specifier_of(prefix, &none),
                Some(Specifier::Other)
            );
        }
        for not in ["::", "a::b", "2a::", "a:::"] {
            assert_eq!(super::super::specifier_of(not, &none), None, "{not}");
        }
    }

    #[test]
    fn a_kernel_macro_may_hold_its_return_type() {
        let none = |_: &str| None;
        let of = |body| super::super::specifier_of(body, &none);
        assert_eq!(of("static __global__ void"), Some(Specifier::Global));
        assert_eq!(of("__global__ void"), Some(Specifier::Global));
        // anywhere else `void` may be a type the declaration needs
        assert_eq!(of("void"), None);
        assert_eq!(of("static void"), None);
        assert_eq!(of("__device__ void"), None);
    }

    #[test]
    fn a_class_key_macro_is_written_back() {
        // SUNDIALS' `#define _SUNDIALS_STRUCT_ struct` before its forward typedefs
        let none = |_: &str| None;
        assert_eq!(
            super::super::specifier_of("struct", &none),
            Some(Specifier::Tag)
        );
        let mut user = BTreeMap::new();
        user.insert("_SUNDIALS_STRUCT_".to_string(), Specifier::Tag);
        let src = "typedef _SUNDIALS_STRUCT_ _generic_Ops* Ops;";
        assert_eq!(
            rewrite_specifiers(src, &user).as_deref(),
            Some("typedef struct            _generic_Ops* Ops;")
        );
    }

    #[test]
    fn specifier_macros_become_what_they_stand_for() {
        let mut user = BTreeMap::new();
        user.insert("HD".to_string(), Specifier::Device);
        user.insert("GLOBAL_FUNC".to_string(), Specifier::Global);
        user.insert("KERNEL".to_string(), Specifier::Global);
        user.insert("LB(".to_string(), Specifier::Other);
        user.insert("HOST_DEVICE".to_string(), Specifier::Device);
        user.insert("PX_RESTRICT".to_string(), Specifier::Restrict);
        let src = "#define HD __host__ __device__\nHD float f();\nHOST_DEVICE int g(); // HD\nGLOBAL_FUNC void k();\nKERNEL void k2();\nconst char* s = \"HD\";\nC10_HOST_DEVICE int h();\n__global__ void LB (T, B) k3();\nvoid f(T& PX_RESTRICT r, T* PX_RESTRICT p);\n";
        let out = rewrite_specifiers(src, &user).unwrap();
        assert_eq!(out.len(), src.len());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "#define HD __host__ __device__",
                "   float f();",
                "__device__  int g(); // HD",
                "__global__  void k();",
                // too short to hold `__global__`: the attribute that stands for it
                "[[G]]  void k2();",
                "const char* s = \"HD\";",
                "__device__      int h();",
                "__global__ void           k3();",
                "void f(T&             r, T* restrict    p);",
            ]
        );
    }

    #[test]
    fn alignment_and_wrapping_macros_keep_the_declaration_and_its_alignment() {
        let mut user = BTreeMap::new();
        user.insert(
            "PX_ALIGN(".to_string(),
            Specifier::Wrap {
                keep: 1,
                align: Some(0),
            },
        );
        user.insert("PX_ALIGN_PREFIX(".to_string(), Specifier::Align(0));
        user.insert(
            "EXPAND(".to_string(),
            Specifier::Wrap {
                keep: 0,
                align: None,
            },
        );
        let src = "PX_ALIGN_PREFIX(16)\nstruct P {\n  PX_ALIGN(128, PxNodeIndex a[32]);\n  CUTE_ALIGNAS(16) float b[4];\n};\nstruct PX_ALIGN_PREFIX(16) Q { int x; };\nint v = EXPAND(p[i]) + PX_ALIGN_PREFIX(4);\n";
        let out = rewrite_specifiers(src, &user).unwrap();
        assert_eq!(out.len(), src.len());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                // before the class key: nowhere the grammar reads an alignment
                "                   ",
                "struct P {",
                "  alignas(128)  PxNodeIndex a[32] ;",
                "  alignas(16)      float b[4];",
                "};",
                "struct alignas(16)         Q { int x; };",
                // in an expression: the argument as it is, an alignment nothing
                "int v =        p[i]  +                   ;",
            ]
        );
    }
}
