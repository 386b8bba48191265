//! Declarations and tokens tree-sitter-cuda 0.21 has no rule for, found in inference and
//! simulation libraries (TensorRT's plugins, FlashInfer, QUDA, NVIDIA Warp), rewritten in place:
//! - `using typename Base::index_t;`: a using-declaration of a dependent type loses its
//!   `typename` (what it names is the same);
//! - `uint16_t start : 14, : 2;`: an unnamed bit-field after a named one is blanked with its
//!   comma (padding the analysis does not read);
//! - `kV2 TRT_DEPRECATED_ENUM = 0,`: a macro (an all-capitals name) after an enumerator's name
//!   is an attribute, and is blanked;
//! - `double cap ADDITIONAL_FUNC_PARAMS PROFILER_FUNC_PARAMS) {`: macros after a function's
//!   last parameter stand for more parameters (FlashInfer's, filled in by a generated header);
//!   they are blanked where a parameter's type and name come before them and the function's
//!   body does not use them;
//! - `constexpr int n = @QUDA_MULTIGRID_NVEC@;`: a CMake `configure_file` placeholder in a
//!   `.in.cu` template is a name whose value the build fills in, read as an unknown name;
//! - `asm("..." : "=f"(r) : __PTR(buf));`: a macro standing for an operand's constraint string
//!   becomes an empty constraint, `""(buf)`;
//! - `uint8_t : 1, base_offset_ : 3;`: a leading unnamed bit-field is blanked too;
//! - `o_smem.template store_128b(o, p)`: `template` before a member called without template
//!   arguments is blanked;
//! - `decltype(tiled_mma){}` (a value of a type, CuTe's idiom) becomes `0`, and `decltype((void)
//!   T::k, void())` the type of its last operand, as the comma operator gives;
//! - `((outs = next()), ...);`: a fold over the comma operator keeps one expansion;
//! - `DG_STATIC_ASSERT(cond, "msg");`: a macro named for `static_assert` is blanked as one is;
//! - `printf("%" PRIu64, i)`: `<inttypes.h>`'s format macros next to a literal are literals,
//!   `""`;
//! - `void set(T*&... outs)`: a pack of pointers or references loses its `*`/`&` (host code's;
//!   the grammar takes `...` only right after the type or a `&&`).

use super::grammar_gaps::{
    declares_a_function, in_directive, is_word, macro_name_at, occurrences, skip_ws,
};

use super::modern_cpp::{skip_ws as skip_code_ws, Edit};

pub(super) fn rewrite(src: &str, b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    if src.contains("using") {
        for at in occurrences(b, mask, "using") {
            let next = skip_ws(b, at + 5);
            if b[next..].starts_with(b"typename") && b.get(next + 8).is_some_and(|c| !is_word(*c)) {
                edits.push((next, next + 8, None));
            }
        }
    }
    if src.contains(':') {
        unnamed_bit_fields(b, mask, edits);
    }
    if src.contains("enum") {
        enumerator_attributes(b, mask, edits);
        if src.contains('#') {
            directives_in_enums(b, mask, edits);
        }
    }
    if src.contains('_') && src.contains(')') {
        trailing_parameter_macros(b, mask, edits);
    }
    if src.contains('@') {
        configure_placeholders(b, mask, edits);
    }
    if src.contains("asm") {
        asm_constraint_macros(b, mask, edits);
    }
    if src.contains("template") {
        for kw in [".template", "->template"] {
            for (at, _) in src.match_indices(kw) {
                let t = at + kw.len() - 8;
                let name = skip_ws(b, t + 8);
                let mut e = name;
                while e < b.len() && is_word(b[e]) {
                    e += 1;
                }
                if mask[t] && e > name && b.get(skip_ws(b, e)) == Some(&b'(') {
                    edits.push((t, t + 8, None));
                }
            }
        }
    }
    if src.contains("decltype") {
        decltypes(b, mask, edits);
    }
    if src.contains("...") {
        for (at, _) in src.match_indices("...") {
            let comma = back_ws(b, mask, at);
            if comma == 0 || b[comma - 1] != b',' || !mask[at] || in_directive(b, at) {
                continue;
            }
            if b.get(skip_ws(b, at + 3)) == Some(&b')') {
                edits.push((comma - 1, at + 3, None));
            }
        }
    }
    if src.contains("PRI") || src.contains("SCN") {
        format_macros(src, b, mask, edits);
    }
    if src.contains("...") {
        for (at, _) in src.match_indices("...") {
            let mut p = at;
            while p > 0 && matches!(b[p - 1], b'*' | b'&' | b' ') {
                p -= 1;
            }
            let stars = &b[p..at];
            let typed = p > 0 && (is_word(b[p - 1]) || b[p - 1] == b'>');
            if typed && mask[at] && stars.contains(&b'*') && !in_directive(b, at) {
                edits.push((p, at, None));
            }
        }
    }
    if src.contains("extern \"C\"") {
        unmatched_linkage_braces(b, mask, edits);
    }
    if src.contains("::*)") {
        member_function_pointer_parameters(b, mask, edits);
    }
    if src.contains("STATIC_ASSERT") {
        for (at, _) in src.match_indices("STATIC_ASSERT") {
            let mut s = at;
            while s > 0 && is_word(b[s - 1]) {
                s -= 1;
            }
            let mut e = at + 13;
            while e < b.len() && is_word(b[e]) {
                e += 1;
            }
            if !mask[s] || in_directive(b, s) {
                continue;
            }
            let open = skip_ws(b, e);
            if let Some(end) = super::grammar_gaps::call_statement_end(b, open) {
                edits.push((s, end, None));
            }
        }
    }
}

/// `template <typename Op, bool (Op::*)(const T &a, const T &b, int idx) const> struct
/// SFINAE5 {};` (CUB 1.8's `BinaryOpHasIdxParam`): an unnamed template parameter of
/// pointer-to-member-function type, whose parameter list the grammar cannot read there. It is
/// blanked with the comma before it; the template is a host-side trait the analysis does not
/// read.
fn member_function_pointer_parameters(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for star in memchr::memmem::find_iter(b, b"::*)") {
        if !mask[star] {
            continue;
        }
        // back to the `(` opening `(Op::*)`, then over the return type to the comma
        let Some(open) = b[..star].iter().rposition(|&c| c == b'(') else {
            continue;
        };
        if !b[open + 1..star]
            .iter()
            .all(|&c| is_word(c) || c == b':' || c == b' ')
        {
            continue;
        }
        let Some(comma) = b[..open]
            .iter()
            .rposition(|&c| matches!(c, b',' | b'<' | b';' | b'{' | b'}' | b'('))
        else {
            continue;
        };
        if b[comma] != b',' {
            continue;
        }
        let params = skip_ws(b, star + 4);
        if b.get(params) != Some(&b'(') {
            continue;
        }
        let Some(close) = super::syntax_macros::matching_paren(b, params) else {
            continue;
        };
        let mut end = skip_ws(b, close + 1);
        if b[end..].starts_with(b"const") && b.get(end + 5).is_some_and(|c| !is_word(*c)) {
            end = skip_ws(b, end + 5);
        }
        if b.get(end) == Some(&b'>') {
            edits.push((comma, end, None));
        }
    }
}

/// A header meant to be included twice, opening `extern "C" {` the first time and closing it
/// the second (BART's `cppwrap.h`, toggled by its own guard): read alone, its block never
/// closes, or its `}` closes nothing. The opener that is never closed is blanked, and so is a
/// `}` alone on its line that closes nothing; a file's other braces are left as written.
fn unmatched_linkage_braces(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let code = super::syntax_macros::mask_of(b, true);
    let mut open: Vec<(usize, Option<usize>)> = Vec::new();
    let mut stray = Vec::new();
    let mut directive = false;
    let mut line_start = 0;
    for i in 0..b.len() {
        let c = b[i];
        if c == b'\n' {
            directive = directive && i > 0 && b[i - 1] == b'\\';
            line_start = i + 1;
            continue;
        }
        if !code[i] {
            continue;
        }
        if c == b'#' && b[line_start..i].iter().all(u8::is_ascii_whitespace) {
            directive = true;
        }
        if directive {
            continue;
        }
        if c == b'{' {
            let before = back_ws(b, mask, i);
            let linkage = b[..before].ends_with(b"\"C\"").then(|| {
                let at = back_ws(b, mask, before - 3);
                at.checked_sub(6).filter(|&s| &b[s..at] == b"extern")
            });
            open.push((i, linkage.flatten()));
        } else if c == b'}' && open.pop().is_none() {
            let line_end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            let alone = b[line_start..i].iter().all(u8::is_ascii_whitespace)
                && b[i + 1..line_end].iter().all(u8::is_ascii_whitespace);
            if alone {
                stray.push(i);
            }
        }
    }
    for (brace, linkage) in open {
        if let Some(start) = linkage {
            edits.push((start, brace + 1, None));
        }
    }
    for at in stray {
        edits.push((at, at + 1, None));
    }
}

/// `PRId64`, `PRIu32`, `PRIxPTR`, `SCNd64`: a literal in `<inttypes.h>`.
fn format_macros(src: &str, b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for prefix in ["PRI", "SCN"] {
        for (at, _) in src.match_indices(prefix) {
            if !mask[at] || (at > 0 && is_word(b[at - 1])) {
                continue;
            }
            let mut e = at + 3;
            while e < b.len() && is_word(b[e]) {
                e += 1;
            }
            let rest = &b[at + 3..e];
            let conversion = rest.first().is_some_and(|c| b"diouxX".contains(c));
            let width = rest.get(1..).is_some_and(|w| {
                matches!(w, b"8" | b"16" | b"32" | b"64" | b"PTR" | b"MAX")
                    || w.starts_with(b"LEAST")
                    || w.starts_with(b"FAST")
            });
            let before = back_ws(b, mask, at);
            let by_literal =
                (before > 0 && b[before - 1] == b'"') || b.get(skip_ws(b, e)) == Some(&b'"');
            if conversion && width && by_literal && e - at >= 2 {
                edits.push((at, at + 1, Some(b'"')));
                edits.push((at + 1, e, Some(b'"')));
            }
        }
    }
}

fn decltypes(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in occurrences(b, mask, "decltype") {
        let open = skip_ws(b, at + 8);
        if b.get(open) != Some(&b'(') {
            continue;
        }
        let Some(close) = super::grammar_gaps::matching_close(b, mask, open, (b'(', b')')) else {
            continue;
        };
        let brace = skip_ws(b, close + 1);
        if b.get(brace) == Some(&b'{') && b.get(skip_ws(b, brace + 1)) == Some(&b'}') {
            let end = skip_ws(b, brace + 1) + 1;
            edits.push((at, end, Some(b'0')));
            continue;
        }
        // the last comma outside brackets
        let mut depth = 0i32;
        let mut last = None;
        for k in open + 1..close {
            if !mask[k] {
                continue;
            }
            match b[k] {
                b'(' | b'[' | b'{' | b'<' => depth += 1,
                b')' | b']' | b'}' | b'>' => depth -= 1,
                b',' if depth == 0 => last = Some(k),
                _ => {}
            }
        }
        if let Some(comma) = last {
            edits.push((open + 1, comma + 1, None));
        }
    }
}

/// The previous byte of code before `at` that is not whitespace.
fn back_ws(b: &[u8], mask: &[bool], mut at: usize) -> usize {
    while at > 0 && (b[at - 1].is_ascii_whitespace() || !mask[at - 1]) {
        at -= 1;
    }
    at
}

fn unnamed_bit_fields(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for i in memchr::memchr_iter(b',', b) {
        if !mask[i] {
            continue;
        }
        let colon = skip_ws(b, i + 1);
        if b.get(colon) != Some(&b':') || b.get(colon + 1) == Some(&b':') {
            continue;
        }
        let width = skip_ws(b, colon + 1);
        let mut end = width;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end > width && matches!(b.get(skip_ws(b, end)), Some(b';' | b',')) {
            edits.push((i, end, None));
        }
    }
    // leading: `uint8_t : 1, name : 3;`
    for i in memchr::memchr_iter(b':', b) {
        if !mask[i] || b.get(i + 1) == Some(&b':') || (i > 0 && b[i - 1] == b':') {
            continue;
        }
        let t_end = back_ws(b, mask, i);
        let mut t = t_end;
        while t > 0 && is_word(b[t - 1]) {
            t -= 1;
        }
        if !INTEGER_TYPES.contains(&&b[t..t_end]) {
            continue;
        }
        let width = skip_ws(b, i + 1);
        let mut end = width;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        let comma = skip_ws(b, end);
        if end > width && b.get(comma) == Some(&b',') {
            edits.push((i, comma + 1, None));
        }
        // alone: `uint32_t : 16;` (lmdeploy's and cute's descriptors), the whole member, at a
        // member's start (not `case 1 : ...` nor a label)
        let mut start = t;
        while start > 0 && (is_word(b[start - 1]) || b[start - 1].is_ascii_whitespace()) {
            start -= 1;
        }
        let words_are_types = b[start..t_end]
            .split(|c| c.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .all(|w| INTEGER_TYPES.contains(&w) || w == b"const" || w == b"signed");
        if end > width
            && b.get(comma) == Some(&b';')
            && start > 0
            && matches!(b[start - 1], b';' | b'{' | b'}')
            && words_are_types
        {
            edits.push((t, comma + 1, None));
        }
    }
}

const INTEGER_TYPES: &[&[u8]] = &[
    b"int",
    b"unsigned",
    b"char",
    b"short",
    b"long",
    b"uint8_t",
    b"uint16_t",
    b"uint32_t",
    b"uint64_t",
    b"int8_t",
    b"int16_t",
    b"int32_t",
    b"int64_t",
];

/// The opening brace of each `enum ... {` body.
fn enum_bodies<'a>(b: &'a [u8], mask: &'a [bool]) -> impl Iterator<Item = usize> + 'a {
    occurrences(b, mask, "enum").filter_map(|at| {
        let open = b[at..]
            .iter()
            .take(512)
            .position(|&c| c == b'{' || c == b';' || c == b'(')
            .map(|p| at + p)?;
        (b[open] == b'{').then_some(open)
    })
}

/// `#undef NO_ERROR` between an enum's braces (MNN's `ErrorCode`, making room for its own
/// `NO_ERROR` after Windows' macro): the grammar has no directive among enumerators; the
/// preprocessor has already read it.
fn directives_in_enums(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for open in enum_bodies(b, mask) {
        let Some(close) = (open + 1..b.len()).find(|&i| mask[i] && matches!(b[i], b'{' | b'}'))
        else {
            continue;
        };
        if b[close] != b'}' {
            continue;
        }
        let mut line = open + 1;
        while line < close {
            let end = b[line..close]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(close, |p| line + p);
            let first = skip_ws(b, line).min(end);
            if first < end && b[first] == b'#' && mask[first] {
                edits.push((first, end, None));
            }
            line = end + 1;
        }
    }
}

/// Each enumerator of each `enum ... { }` body: an all-capitals name after the enumerator's
/// name, before its `=`, `,` or the closing brace.
fn enumerator_attributes(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for open in enum_bodies(b, mask) {
        let mut i = open + 1;
        while i < b.len() && b[i] != b'}' {
            if !mask[i] {
                i += 1;
                continue;
            }
            // an enumerator starts after `{` or `,`
            let s = skip_code_ws(b, mask, i);
            let mut e = s;
            while e < b.len() && is_word(b[e]) {
                e += 1;
            }
            if e == s {
                break;
            }
            let m = skip_code_ws(b, mask, e);
            if let Some(m_end) = macro_name_at(b, mask, m) {
                if matches!(
                    b.get(skip_code_ws(b, mask, m_end)),
                    Some(b'=' | b',' | b'}')
                ) {
                    edits.push((m, m_end, None));
                }
            }
            // on to the next enumerator, past the value
            let mut depth = 0i32;
            let mut j = e;
            while j < b.len() {
                if mask[j] {
                    match b[j] {
                        b'(' | b'[' => depth += 1,
                        b')' | b']' => depth -= 1,
                        b',' if depth == 0 => break,
                        b'}' if depth == 0 => break,
                        b'{' | b';' => return,
                        _ => {}
                    }
                }
                j += 1;
            }
            if b.get(j) != Some(&b',') {
                break;
            }
            i = j + 1;
        }
    }
}

fn trailing_parameter_macros(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for close in memchr::memchr_iter(b')', b) {
        if !mask[close] {
            continue;
        }
        // the macros right before the `)`, last first
        let mut macros = Vec::new();
        let mut end = back_ws(b, mask, close);
        loop {
            let mut start = end;
            while start > 0 && is_word(b[start - 1]) {
                start -= 1;
            }
            if start == end || macro_name_at(b, mask, start) != Some(end) {
                break;
            }
            macros.push((start, end));
            end = back_ws(b, mask, start);
        }
        let Some(&(first, _)) = macros.last() else {
            continue;
        };
        // a parameter's name before them, and its type (a word or a declarator's `*`, `&`,
        // `>`) before that
        let name_end = back_ws(b, mask, first);
        let mut name_start = name_end;
        while name_start > 0 && is_word(b[name_start - 1]) {
            name_start -= 1;
        }
        if name_start == name_end || b[name_start].is_ascii_digit() {
            continue;
        }
        let before = back_ws(b, mask, name_start);
        if before == 0 || !(is_word(b[before - 1]) || matches!(b[before - 1], b'*' | b'&' | b'>')) {
            continue;
        }
        if !declares_a_function(b, mask, close) {
            continue;
        }
        // a name the body reads is the parameter's own, spelled in capitals
        let after = skip_code_ws(b, mask, close + 1);
        let body = if b.get(after) == Some(&b'{') {
            let end = super::grammar_gaps::matching_brace(b, mask, after).unwrap_or(b.len());
            &b[after..end]
        } else {
            &b[..0]
        };
        for (s, e) in macros {
            let name = &b[s..e];
            if memchr::memmem::find(body, name).is_none() {
                edits.push((s, e, None));
            }
        }
    }
}

fn configure_placeholders(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'@' && mask[i] {
            let mut e = i + 1;
            while e < b.len() && is_word(b[e]) {
                e += 1;
            }
            if e > i + 1 && !b[i + 1].is_ascii_digit() && b.get(e) == Some(&b'@') {
                edits.push((i, i + 1, None));
                edits.push((e, e + 1, None));
                i = e + 1;
                continue;
            }
        }
        i += 1;
    }
}

fn asm_constraint_macros(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for kw in ["asm", "__asm__", "__asm"] {
        for at in occurrences(b, mask, kw) {
            let mut open = skip_ws(b, at + kw.len());
            for q in ["volatile", "__volatile__"] {
                if b[open..].starts_with(q.as_bytes()) {
                    open = skip_ws(b, open + q.len());
                }
            }
            if b.get(open) != Some(&b'(') {
                continue;
            }
            let Some(close) = super::grammar_gaps::matching_close(b, mask, open, (b'(', b')'))
            else {
                continue;
            };
            let mut depth = 0;
            let mut operands = false;
            let mut prev = b'(';
            let mut i = open + 1;
            while i < close {
                if !mask[i] {
                    if b[i] == b'"' {
                        prev = b'"';
                    }
                    i += 1;
                    continue;
                }
                match b[i] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    b':' if depth == 0 => operands = true,
                    c if is_word(c) && depth == 0 && operands && matches!(prev, b':' | b',') => {
                        let s = i;
                        while i < close && is_word(b[i]) {
                            i += 1;
                        }
                        if i - s >= 2 && b.get(skip_ws(b, i)) == Some(&b'(') {
                            edits.push((s, s + 1, Some(b'"')));
                            edits.push((s + 1, i, Some(b'"')));
                        }
                        prev = b'w';
                        continue;
                    }
                    _ => {}
                }
                if !b[i].is_ascii_whitespace() {
                    prev = b[i];
                }
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::prepare;

    fn parses(src: &str) -> bool {
        let out = prepare(src, &Default::default());
        let mut p = tree_sitter::Parser::new();
        p.set_language(&crate::language()).unwrap();
        !p.parse(out.as_bytes(), None)
            .unwrap()
            .root_node()
            .has_error()
    }

    #[test]
    fn a_member_function_pointer_template_parameter_is_blanked() {
        let src = "template <typename T> struct H {\n  template <typename Op, bool (Op::*)(const T &a, const T &b, int idx) const> struct S5 {};\n  template <typename Op, bool (Op::*)(T a, T b, int idx)> struct S8 {};\n};\n";
        assert!(parses(src));
    }

    #[test]
    fn a_linkage_block_a_second_inclusion_closes_is_read_alone() {
        let src = "#ifndef WRAP\n#define WRAP\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n#define VLA(x)\n#else\n#undef WRAP\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
        assert!(parses(src));
        // a block closed in the same file, or a `}` sharing its line, is left as written
        let closed = "extern \"C\" {\nint f(int);\n}\n";
        assert_eq!(prepare(closed, &Default::default()), closed);
        assert!(!parses("int f() { return 0; } }\n"));
    }

    #[test]
    fn an_enum_cut_off_at_the_end_of_the_text_is_prepared() {
        // (what an editor holds mid-edit: the enumerator's name ends the text)
        for src in [
            "enum E { A",
            "enum E { A = 1, B",
            "enum class E : int { kA  ",
        ] {
            let b = src.as_bytes();
            let mut edits = Vec::new();
            super::enumerator_attributes(b, &vec![true; b.len()], &mut edits);
            assert!(edits.is_empty());
            let _ = prepare(src, &Default::default());
        }
    }

    #[test]
    fn using_typename_unnamed_bit_fields_and_enumerator_attributes_parse() {
        assert!(parses(
            "template <class B> struct D : B { using typename B::index_t; index_t x; };"
        ));
        assert!(parses(
            "struct Desc { unsigned short start_ : 14, : 2; unsigned short lead_ : 14, : 2; };"
        ));
        assert!(parses(
            "struct Desc { uint32_t a : 8;\n  uint32_t : 16;\n  unsigned   :4; int x:2; };"
        ));
        assert!(parses(
            "enum ErrorCode {\n#ifdef NO_ERROR\n#undef NO_ERROR\n#endif\n  NO_ERROR = 0,\n  OUT = 1\n};"
        ));
        let src = "void f(int k) { switch (k) { case 1 : g(); } lbl : k = 3; }";
        let mut edits = Vec::new();
        super::unnamed_bit_fields(src.as_bytes(), &vec![true; src.len()], &mut edits);
        assert!(edits.is_empty());
        assert!(parses(
            "enum class E : int { kA DEPRECATED_ENUM = 0, kB = 1, kC DEPRECATED_ENUM };"
        ));
    }

    #[test]
    fn parameter_macros_placeholders_and_constraint_macros_parse() {
        assert!(parses(
            "__global__ void k(float* a, double cap ADDITIONAL_FUNC_PARAMS PROFILER_PARAMS) { a[0] = cap; }\nvoid run(float* a, bool pdl ADDITIONAL_FUNC_PARAMS);"
        ));
        assert!(parses(
            "__global__ void k(float* a) { constexpr int n = @CONF_NVEC@; a[n] = 0; }"
        ));
        assert!(parses(
            "__device__ float add(float* buf, float v) { float r; asm volatile(\"atom.add.f32 %0,[%1],%2;\" : \"=f\"(r) : __PTR(buf), \"f\"(v) : \"memory\"); return r; }"
        ));
    }

    #[test]
    fn folds_packs_decltypes_format_macros_and_launch_attributes_parse() {
        for src in [
            "struct D { uint8_t : 1, base_offset_ : 3, : 4; uint8_t : 6, layout_type_ : 2; };",
            "template <class T, typename Map = unsigned (*)(unsigned)> struct X {};",
            "template <class S, class = void> struct Is {};\ntemplate <class S> struct Is<S, decltype((void)S::k, void())> {};",
            "template <class... T> void outs(T*&... p) { ((p = nullptr), ...); }",
            "template <class... V> bool des(int s, V*... values) { return true; }",
            "void f(long i) { printf(\"%\" PRIu64 \" items\", i); printf(\"%\" PRId64, i); }",
            "__global__ __maxnreg__(64) void k(float* a) { a[threadIdx.x] = 0; }",
            "template <int N> __global__ void __cluster_dims__(N, 1, 1) k(float* a) { a[0] = 0; }",
            "struct M { template <int N> __device__ void store(float* p) {} };\n__global__ void k(float* a, M m) { m.template store(a); }",
            "__device__ int f() { constexpr int n = cute::size<1>(decltype(mma){}); return n; }",
            "DG_STATIC_ASSERT(sizeof(int) == 4,\n    \"int\");\nvoid g();",
        ] {
            assert!(parses(src), "{src}");
        }
    }

    #[test]
    fn a_template_in_a_message_is_a_word() {
        let src = "void f(int a, int b) {\n  CHECK_EQ(a, b)\n      << \"this template only supports \"\n         \"equal dims\";\n}";
        assert!(parses(src));
        assert!(prepare(src, &Default::default()).contains("equal dims"));
    }

    #[test]
    fn a_capitals_parameter_the_body_reads_is_kept() {
        let out = prepare(
            "__global__ void k(const float* in, float* OUT_BUF) { OUT_BUF[0] = in[0]; }",
            &Default::default(),
        );
        assert!(out.contains("float* OUT_BUF)"));
    }
}
