//! C++ that tree-sitter-cuda 0.21 has no rule for, found in real CUDA files, rewritten in
//! place to something it parses with the same meaning for the analysis (all of it is host
//! code or declarations the analysis does not read):
//! - `typeid(double)`: a type keyword as `typeid`'s operand becomes `typeid(0     )`;
//! - `new const float *[n]`: the qualifiers and pointer stars of an array-new are blanked;
//! - `template class X<float>;`: explicit instantiations are blanked; a function's
//!   (`template void f<float>(float*);`) only as far as its `template`, the rest a declaration
//!   the lowering reads as what the template is instantiated with;
//! - `"node ("fNID"): "`, `"%" PRId64 "\n"`: a macro between two string literals is blanked,
//!   leaving the literals to concatenate;
//! - `static_assert(cond, "...");` is blanked: inside a function body (llama.cpp's `if
//!   constexpr` chains end in one) the grammar has no rule for it, and it costs nothing at run
//!   time;
//! - `extern DECL_CASE(64, 8);`: an explicit instantiation declared through a macro (an
//!   all-capitals name) is blanked;
//! - `CMP_SWP(K, a, b, int, c, d);`, `m = talloc(int, k * m);`: a macro given a type keyword
//!   as an argument (no function can take one) gets `0` in its place, so the invocation
//!   parses as the call it looks like;
//! - `typedef enum : uint8_t { ... } T;`: an unnamed enum's underlying type loses its colon,
//!   naming the enum after it (`enum uint8_t`, as wide), or is blanked where it is several
//!   words (a
//!   named one's, `enum E : int`, the grammar reads).

use super::blank_range;
use std::borrow::Cow;
use std::collections::HashSet;

const TYPE_WORDS: &[&str] = &[
    "double", "float", "int", "char", "short", "long", "unsigned", "signed", "bool", "void",
    "const", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
    "uint64_t", "size_t",
];

/// The type keywords a macro's argument keeps as an identifier (see `type_arguments`).
pub(super) const KEYWORD_ARGUMENTS: &[&str] = &[
    "double", "float", "int", "char", "short", "long", "unsigned", "bool",
];

pub(super) fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every whole-word occurrence of `word` in code (not comments, not strings).
pub(super) fn occurrences<'a>(
    b: &'a [u8],
    mask: &'a [bool],
    word: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    let w = word.as_bytes();
    memchr::memmem::find_iter(b, w).filter(move |&i| {
        mask[i] && (i == 0 || !is_word(b[i - 1])) && b.get(i + w.len()).is_none_or(|c| !is_word(*c))
    })
}

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn words_end(b: &[u8], mut i: usize) -> (usize, Vec<&str>) {
    let mut words = Vec::new();
    loop {
        let s = skip_ws(b, i);
        let mut e = s;
        while e < b.len() && is_word(b[e]) {
            e += 1;
        }
        if e == s {
            return (i, words);
        }
        words.push(std::str::from_utf8(&b[s..e]).unwrap_or(""));
        i = e;
    }
}

pub fn rewrite<'a>(src: &'a str, mask: &[bool]) -> Cow<'a, str> {
    let b = src.as_bytes();
    let mut edits: Vec<(usize, usize, Option<u8>)> = Vec::new();
    // declarations whose types no rewrite may turn into values (a function's explicit
    // instantiation: `int &` is a parameter's type, not a macro's argument)
    let mut declarations: Vec<(usize, usize)> = Vec::new();
    if src.contains("typeid") {
        for at in occurrences(b, mask, "typeid") {
            let open = skip_ws(b, at + 6);
            if b.get(open) != Some(&b'(') {
                continue;
            }
            let (end, words) = words_end(b, open + 1);
            // `typeid(void *)`, `typeid(const char*)`
            let mut close = skip_ws(b, end);
            while matches!(b.get(close), Some(b'*' | b'&')) {
                close = skip_ws(b, close + 1);
            }
            if !words.is_empty()
                && words.iter().all(|w| TYPE_WORDS.contains(w))
                && b.get(close) == Some(&b')')
            {
                edits.push((open + 1, close, Some(b'0')));
            }
        }
    }
    if src.contains("new") {
        for at in occurrences(b, mask, "new") {
            let (end, words) = words_end(b, at + 3);
            if words.is_empty() {
                continue;
            }
            let mut i = skip_ws(b, end);
            let stars = i;
            while i < b.len() && (b[i] == b'*' || b[i].is_ascii_whitespace()) {
                i += 1;
            }
            if i > stars && b[stars] == b'*' && b.get(i) == Some(&b'[') {
                edits.push((stars, i, None));
                let after_new = skip_ws(b, at + 3);
                if words.first() == Some(&"const") {
                    edits.push((after_new, after_new + 5, None));
                }
            }
        }
    }
    if src.contains("template") {
        let mut literals: Option<Vec<bool>> = None;
        for at in occurrences(b, mask, "template") {
            let next = skip_ws(b, at + 8);
            let (_, words) = words_end(b, next);
            let instantiation = matches!(words.first(), Some(&"class" | &"struct"))
                || (words.len() >= 2 && b.get(next) != Some(&b'<'));
            // a macro's body (`#define INST(T) template void f(T*)`, then `INST(float);`) is
            // not one: its `;` is the invocation's
            if !instantiation || b.get(next) == Some(&b'<') || in_directive(b, at) {
                continue;
            }
            // nor is a word of a message (`<< "... this template only supports ..."`)
            let literals = literals.get_or_insert_with(|| super::syntax_macros::mask_of(b, true));
            if !literals[at] {
                continue;
            }
            // up to the `;` on the same statement, with no body on the way
            let Some(semi) = b[at..].iter().position(|&c| c == b';' || c == b'{') else {
                continue;
            };
            if b[at + semi] == b';' {
                let start = if src[..at].trim_end().ends_with("extern") {
                    src[..at].trim_end().len() - 6
                } else {
                    at
                };
                // a function's (`template void f<float>(float*, int);`) is left a declaration
                // the grammar reads, which says what the template is instantiated with
                let function = !matches!(words.first(), Some(&"class" | &"struct" | &"union"))
                    && readable_instantiation(&b[at + 8..at + semi]);
                let end = if function { at + 8 } else { at + semi + 1 };
                edits.push((start, end, None));
                if function {
                    declarations.push((end, at + semi + 1));
                }
            }
        }
    }
    if src.contains("static_assert") {
        for at in occurrences(b, mask, "static_assert") {
            let open = skip_ws(b, at + "static_assert".len());
            if let Some(end) = call_statement_end(b, open) {
                edits.push((at, end, None));
            }
        }
    }
    if src.contains("extern") {
        for at in occurrences(b, mask, "extern") {
            let name_at = skip_ws(b, at + 6);
            let (name_end, words) = words_end(b, name_at);
            let macro_like = words.len() == 1
                && words[0].len() > 1
                && words[0]
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
            if !macro_like {
                continue;
            }
            if let Some(end) = call_statement_end(b, skip_ws(b, name_end)) {
                edits.push((at, end, None));
            }
        }
    }
    if src.contains("enum") {
        for at in occurrences(b, mask, "enum") {
            let colon = skip_ws(b, at + 4);
            if b.get(colon) != Some(&b':') || b.get(colon + 1) == Some(&b':') {
                continue;
            }
            let (mut end, words) = words_end(b, colon + 1);
            // `std::uint8_t`
            let qualified = b[end..].starts_with(b"::");
            while b[end..].starts_with(b"::") {
                end = words_end(b, end + 2).0;
            }
            if !words.is_empty() && b.get(skip_ws(b, end)) == Some(&b'{') {
                // one word (`enum : int8_t {`): only the colon goes, and the enum is named
                // after its underlying type, which gives its values their width
                // (cuBQL's `typedef enum : int8_t {...} NodeState;` arrays are bytes)
                let end = if words.len() == 1 && !qualified {
                    colon + 1
                } else {
                    end
                };
                edits.push((colon, end, None));
            }
        }
    }
    if src.contains('"') {
        string_macros(b, mask, &mut edits);
    }
    if src.contains("pragma") {
        pragmas_before_bodies(b, mask, &mut edits);
    }
    if src.contains("try") {
        try_without_catch(b, mask, &mut edits);
    }
    if src.contains('_') {
        undefined_specifier_macros(b, mask, &mut edits);
    }
    if src.contains("operator") {
        // `friend std::ostream & operator << <> (...)` (Kaldi): a friend's specialization, its
        // empty argument list blanked
        for at in occurrences(b, mask, "operator") {
            let op = skip_ws(b, at + 8);
            let mut k = op;
            while k < b.len() && b"<>=!+-*/%&|^~[]".contains(&b[k]) && k - op < 3 {
                k += 1;
            }
            // `operator( )(...)` (AMGX's functors): the call operator's name with a space in it
            if b.get(op) == Some(&b'(') {
                let close = skip_ws(b, op + 1);
                if close > op + 1 && b.get(close) == Some(&b')') {
                    edits.push((op + 1, close + 1, Some(b')')));
                }
            }
            let args = skip_ws(b, k);
            if k > op && b[args..].starts_with(b"<>") && b.get(skip_ws(b, args + 2)) == Some(&b'(')
            {
                edits.push((args, args + 2, None));
            }
            // `operator++();` as a statement (CUTLASS's iterators, whose postfix operator
            // calls the prefix one), which the grammar cannot call unqualified: blanked
            let mut p = at;
            while p > 0 && b[p - 1].is_ascii_whitespace() {
                p -= 1;
            }
            let statement = p > 0 && matches!(b[p - 1], b';' | b'{' | b'}');
            let rest = &b[op..];
            if statement && (rest.starts_with(b"++();") || rest.starts_with(b"--();")) {
                edits.push((at, op + 5, None));
            }
        }
    }
    if src.contains('{') {
        braced_default_arguments(b, mask, &mut edits);
    }
    if src.contains('=') {
        unnamed_defaults(b, mask, &mut edits);
    }
    if src.contains("break") || src.contains("return") || src.contains("continue") {
        macros_before_jumps(b, mask, &mut edits);
    }
    if src.contains("enable_if") {
        comparisons_in_enable_if(b, mask, &mut edits);
    }
    if src.contains(',') {
        operator_arguments(b, mask, &mut edits);
    }
    if src.contains(";)") || src.contains("; )") {
        statements_as_last_arguments(b, mask, &mut edits);
    }
    type_arguments(b, mask, &mut edits);
    super::modern_cpp::rewrite(src, b, mask, &mut edits);
    super::declaration_gaps::rewrite(src, b, mask, &mut edits);
    if edits.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = b.to_vec();
    // a rewrite inside what another blanks whole (an explicit instantiation's parameter
    // types) leaves nothing
    let blanked: Vec<(usize, usize)> = edits
        .iter()
        .filter(|(.., first)| first.is_none())
        .map(|&(s, e, _)| (s, e))
        .chain(declarations)
        .collect();
    for &(s, e, first) in &edits {
        if first.is_some() && blanked.iter().any(|&(bs, be)| bs <= s && e <= be) {
            continue;
        }
        blank_range(&mut out, s..e);
        if let Some(c) = first {
            out[s] = c;
        }
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

/// An operator given to a macro as an argument (gpu-voxels' `REDUCE(shared, tid, n, +)`,
/// whose replacement writes `shared[idx] op shared[idx + r]`): no expression, so the
/// invocation could not parse; it becomes `0`, an argument the replacement no longer names
/// (the definition's operator parameter is an operator there, see `lower::items`). A pointer
/// or reference declarator, `(*)` or `(&)`, is left alone.
fn operator_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    const OPERATORS: &[&[u8]] = &[
        b"||", b"&&", b"<<", b">>", b"==", b"!=", b"<=", b">=", b"+", b"-", b"*", b"/", b"%", b"|",
        b"&", b"^", b"<", b">",
    ];
    for (at, &c) in b.iter().enumerate() {
        if !(c == b',' || c == b'(') || !mask[at] {
            continue;
        }
        let op = skip_ws(b, at + 1);
        let Some(w) = OPERATORS.iter().find(|w| b[op..].starts_with(w)) else {
            continue;
        };
        let close = skip_ws(b, op + w.len());
        if !matches!(b.get(close), Some(b',' | b')')) || !mask[op] {
            continue;
        }
        let declarator = matches!(*w, b"*" | b"&" | b"&&") && c == b'(' && b[close] == b')';
        if !declarator {
            edits.push((op, op + w.len(), Some(b'0')));
        }
    }
}

/// A stream given to a logging macro as its last argument, its `;` inside the parentheses
/// (icl_core's `LOGGING_INFO_C(Log, Class, "Read " << n << endl;);`): no call's argument ends
/// in `;`, so the `;` is blanked and the invocation parses as the call it looks like. Only a
/// stream (`<<`, no launch's `<<<`): statements given to a dispatch macro are made a block
/// (`modern_cpp`), and a `for` header's `(;;)` is left alone.
fn statements_as_last_arguments(
    b: &[u8],
    mask: &[bool],
    edits: &mut Vec<(usize, usize, Option<u8>)>,
) {
    for (at, &c) in b.iter().enumerate() {
        if c != b';' || !mask[at] {
            continue;
        }
        let close = skip_ws(b, at + 1);
        if b.get(close) != Some(&b')') || !mask[close] {
            continue;
        }
        let Some(open) = opening_paren(b, mask, close, b"{}") else {
            continue;
        };
        let name = super::modern_cpp::word_before(b, b[..open].trim_ascii_end().len());
        let called = !name.is_empty() && !matches!(name, b"for" | b"while" | b"if" | b"switch");
        // (a `for` header's `;` are at its top level too: `(i = 0; i < n;)`)
        let inside = &b[open + 1..at];
        let stream = memchr::memmem::find(inside, b"<<").is_some()
            && memchr::memmem::find(inside, b"<<<").is_none();
        if called && stream && !inside.contains(&b';') {
            edits.push((at, at + 1, None));
        }
    }
}

/// Whether a function's explicit instantiation, after its `template` (`void f<float, 2>(const
/// float*, int)`), is a declaration the grammar reads and the lowering takes as one: a free
/// function named with its template arguments, no macro among its specifiers (stdgpu's
/// `STDGPU_DEVICE_ONLY`, defined through token pasting; a member's `atomic<T>::fetch_add` is no
/// host launcher either). Others are blanked whole.
fn readable_instantiation(decl: &[u8]) -> bool {
    let Some(open) = decl.iter().position(|&c| c == b'(') else {
        return false;
    };
    let head = decl[..open].trim_ascii_end();
    if !head.ends_with(b">") {
        return false;
    }
    // the name's own template arguments, then the name and what precedes it
    let mut depth = 0i32;
    let mut name_end = head.len();
    for (i, &c) in head.iter().enumerate().rev() {
        match c {
            b'>' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    name_end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let before = &head[..name_end];
    let name_start = before
        .iter()
        .rposition(|&c| !(is_word(c) || c == b':'))
        .map_or(0, |p| p + 1);
    let macro_word = before[..name_start].split(|&c| !is_word(c)).any(|w| {
        w.len() > 1
            && w.iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
    });
    !before[name_start..].contains(&b':') && name_end > name_start && !macro_word
}

/// Where the expression or type starting at `from` ends: the first `,`, `)` or `>` outside
/// brackets, within 256 bytes.
fn default_end(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, &c) in b.iter().enumerate().skip(from).take(256) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b')' | b'>' if depth == 0 => return Some(k),
            b';' => return None,
            _ => {}
        }
    }
    None
}

/// Defaults of parameters with no name, which the grammar takes only after a name:
/// `void* = nullptr` (cuSZ's `float* time, void* = nullptr`), and a template's default type
/// that is a pointer (`typename CompactNum = uint32_t*>`). The default is blanked; it is host
/// code's, and the parameter keeps its type.
fn unnamed_defaults(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    for eq in 1..b.len() {
        if b[eq] != b'=' || !mask[eq] || b.get(eq + 1) == Some(&b'=') {
            continue;
        }
        // `T* = v`: a star or ampersand, then space, then `=` (never an operator: `*=` has
        // no space, and `a * = b` is no C++)
        if !b[eq - 1].is_ascii_whitespace() {
            continue;
        }
        let mut p = eq;
        while p > 0 && b[p - 1].is_ascii_whitespace() {
            p -= 1;
        }
        if p == 0 || !matches!(b[p - 1], b'*' | b'&') || !mask[p - 1] {
            continue;
        }
        let mut q = p - 1;
        while q > 0 && matches!(b[q - 1], b'*' | b'&' | b' ') {
            q -= 1;
        }
        if q == 0 || !(is_word(b[q - 1]) || b[q - 1] == b'>') {
            continue;
        }
        // a macro's body (`#define ENABLE_IF(...) std::enable_if_t<(__VA_ARGS__)>* = nullptr`)
        // is no declaration, and its default would run on into the next line's
        if in_directive(b, eq) {
            continue;
        }
        if let Some(end) = default_end(b, eq + 1).filter(|&e| b[e] != b'>') {
            edits.push((eq, end, None));
        }
    }
    for at in occurrences(b, mask, "template") {
        let open = skip_ws(b, at + 8);
        if b.get(open) != Some(&b'<') {
            continue;
        }
        // the head's parameters, split at commas outside brackets, up to its `>`
        let (mut depth, mut seg, mut eq) = (0i32, open + 1, None);
        let mut k = open + 1;
        while k < b.len() && k - open < 1024 {
            match b[k] {
                b'(' | b'[' | b'{' | b'<' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'=' if depth == 0 && b.get(k + 1) != Some(&b'=') => eq = Some(k),
                b'>' if depth > 0 => depth -= 1,
                b',' | b'>' if depth == 0 => {
                    let body = b[seg..k].trim_ascii_end();
                    // a pointer, or a function pointer (`typename Map = uint32_t (*)(uint32_t)`)
                    let pointer = match (eq, body.last()) {
                        (Some(_), Some(b'*' | b'&')) => true,
                        (Some(e), Some(b')')) => {
                            b[e..seg + body.len()].windows(3).any(|w| w == b"(*)")
                        }
                        _ => false,
                    };
                    if let (true, Some(e)) = (pointer, eq) {
                        edits.push((e, seg + body.len(), None));
                    }
                    if b[k] == b'>' {
                        break;
                    }
                    seg = k + 1;
                    eq = None;
                }
                b';' => break,
                _ => {}
            }
            k += 1;
        }
    }
}

/// `case 0: KERNEL_RUN(0) break;` (FasterTransformer's top-p sampling): a macro that supplies
/// its own semicolon, followed on its line by a jump; the space before the jump becomes the
/// `;` the macro's expansion ends with.
fn macros_before_jumps(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    for word in ["break", "return", "continue"] {
        for at in occurrences(b, mask, word) {
            if at < 2 || b[at - 1] != b' ' {
                continue;
            }
            let mut close = at - 1;
            while close > 0 && b[close - 1] == b' ' {
                close -= 1;
            }
            if close == 0 || b[close - 1] != b')' {
                continue;
            }
            let Some(open) = opening_paren(b, mask, close - 1, b"\n;{}") else {
                continue;
            };
            let Some(name_end) = macro_name_at_end(b, open) else {
                continue;
            };
            // at a statement's start: after a label, `;` or a brace
            let mut s = name_end;
            while s > 0 && b[s - 1].is_ascii_whitespace() {
                s -= 1;
            }
            if s > 0 && matches!(b[s - 1], b':' | b';' | b'{' | b'}') {
                edits.push((close, close + 1, Some(b';')));
            }
        }
    }
}

/// `enable_if<Arch::kMinComputeCapability >= 80>` (CUTLASS's and FasterTransformer's
/// specializations): a comparison in template arguments, which the grammar reads as the
/// argument list's end; `>=` and `<=` become `==`, which parses (the condition picks a host-side
/// specialization, which the analysis does not read).
fn comparisons_in_enable_if(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    for word in ["enable_if", "enable_if_t"] {
        for at in occurrences(b, mask, word) {
            let open = skip_ws(b, at + word.len());
            if b.get(open) != Some(&b'<') {
                continue;
            }
            let mut depth = 0i32;
            for k in open + 1..b.len().min(open + 512) {
                match b[k] {
                    b'(' | b'[' => depth += 1,
                    b')' | b']' => depth -= 1,
                    b';' | b'{' => break,
                    b'>' | b'<' if depth == 0 && b.get(k + 1) == Some(&b'=') && mask[k] => {
                        edits.push((k, k + 1, Some(b'=')));
                    }
                    // the argument list ends at a `>` that is no comparison
                    b'>' if depth == 0 => break,
                    _ => {}
                }
            }
        }
    }
}

/// The start of the all-capitals name (with an underscore or digit) that ends at `end`.
fn macro_name_at_end(b: &[u8], end: usize) -> Option<usize> {
    let mut s = end;
    while s > 0 && is_word(b[s - 1]) {
        s -= 1;
    }
    let name = &b[s..end];
    (!name.is_empty()
        && name[0].is_ascii_uppercase()
        && name
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_'))
    .then_some(s)
}

/// Whether `at` is in a preprocessor directive: its logical line (joined at backslash-newlines)
/// starts with `#`.
pub(super) fn in_directive(b: &[u8], at: usize) -> bool {
    let mut start = at;
    loop {
        let Some(nl) = b[..start].iter().rposition(|&c| c == b'\n') else {
            start = 0;
            break;
        };
        let before = b[..nl].strip_suffix(b"\r").unwrap_or(&b[..nl]);
        if before.last() == Some(&b'\\') {
            start = nl;
            continue;
        }
        start = nl + 1;
        break;
    }
    b[start..at].trim_ascii_start().first() == Some(&b'#')
}

/// The `}` that closes the `{` at `open`, in code, within 64 KB.
pub(super) fn matching_brace(b: &[u8], mask: &[bool], open: usize) -> Option<usize> {
    matching_close(b, mask, open, (b'{', b'}'))
}

/// What closes the bracket at `open` (`(o, c)` its pair), in code, within 64 KB.
pub(super) fn matching_close(
    b: &[u8],
    mask: &[bool],
    open: usize,
    (o, c): (u8, u8),
) -> Option<usize> {
    let mut depth = 0usize;
    for k in open..b.len().min(open + (64 << 10)) {
        if !mask[k] {
            continue;
        }
        match b[k] {
            x if x == o => depth += 1,
            x if x == c => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `b[at..]` is a name all in capitals with an underscore (`CV_EXPORTS_W`,
/// `__GOMP_NOTHROW`), the spelling of a macro; its end.
pub(super) fn macro_name_at(b: &[u8], mask: &[bool], at: usize) -> Option<usize> {
    // (`at` may be the end of the text: an enumerator cut off by an edit in the editor)
    if at >= b.len() {
        return None;
    }
    let first = at + b[at..].iter().take_while(|&&c| c == b'_').count();
    if !mask[at]
        || (at > 0 && is_word(b[at - 1]))
        || !b.get(first).is_some_and(u8::is_ascii_uppercase)
    {
        return None;
    }
    let mut e = at;
    while e < b.len() && is_word(b[e]) {
        e += 1;
    }
    let name = &b[at..e];
    let capitals = name
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
    (capitals && name.len() >= 4 && name.contains(&b'_')).then_some(e)
}

/// A short name all in capitals (`DI`, `HDI`, `FI`), perhaps the spelling of a specifier
/// macro; its end.
fn short_macro_name_at(b: &[u8], mask: &[bool], at: usize) -> Option<usize> {
    if !mask[at] || (at > 0 && is_word(b[at - 1])) {
        return None;
    }
    let len = b[at..].iter().take_while(|c| is_word(**c)).count();
    let name = &b[at..at + len];
    ((2..=4).contains(&len) && name.iter().all(u8::is_ascii_uppercase)).then_some(at + len)
}

/// Whether a function's declaration follows `end`: a type (not a qualifier), perhaps
/// qualified or a pointer or reference, then a name and `(`.
fn declares_a_function_after(
    b: &[u8],
    end: usize,
    word_after: &dyn Fn(usize) -> Option<(usize, usize)>,
) -> bool {
    let Some((s, e)) = word_after(end) else {
        return false;
    };
    if matches!(&b[s..e], b"const" | b"volatile" | b"operator") {
        return false;
    }
    let (words, k) = declared_words(b, end, word_after);
    let next = skip_ws(b, k);
    if words >= 2 && b.get(next) == Some(&b'(') {
        return true;
    }
    // an operator (`HDI SplitT& operator=(const SplitT& o)`): its symbols, then `(`
    let operator = words >= 2 && b[..k].trim_ascii_end().ends_with(b"operator") && {
        let sym = if b[next..].starts_with(b"()") {
            next + 2
        } else {
            next + b[next..]
                .iter()
                .take_while(|c| b"=+-*/%<>!&|^~[]".contains(c))
                .count()
        };
        sym > next && b.get(skip_ws(b, sym)) == Some(&b'(')
    };
    // a constructor's definition (`HDI Bin(int c) : count(c) {}`): a name, its parameters,
    // then an initializer list or a body (a statement `X v(1);` ends at its `;`)
    let constructor = words == 1 && b.get(next) == Some(&b'(') && {
        let mut depth = 0i32;
        let close = b[next..b.len().min(next + 4096)].iter().position(|c| {
            depth += i32::from(*c == b'(') - i32::from(*c == b')');
            depth == 0
        });
        close.is_some_and(|c| matches!(b.get(skip_ws(b, next + c + 1)), Some(b':' | b'{')))
    };
    operator || constructor
}

/// The names after `end` (a type, perhaps qualified, a pointer or reference, and the declared
/// name; `ns::T` is one) and where they end.
fn declared_words(
    b: &[u8],
    end: usize,
    word_after: &dyn Fn(usize) -> Option<(usize, usize)>,
) -> (usize, usize) {
    let mut words = 0;
    let mut k = end;
    while let Some((_, e)) = word_after(k) {
        words += 1;
        k = e;
        if b[k..].starts_with(b"::") {
            k += 2;
            words -= 1;
            continue;
        }
        let after = skip_ws(b, k);
        k = after
            + b[after..]
                .iter()
                .take_while(|c| matches!(c, b'*' | b'&'))
                .count();
    }
    (words, k)
}

/// Macros that stand for declaration specifiers or annotations, defined in a header the run
/// does not have (OpenCV's `CV_EXPORTS_W void add(...)`, `CV_PROP_RW uint32_t qp;`,
/// `class CV_EXPORTS_W StereoBM : ...`, `void f() const CV_OVERRIDE;`): a capitals name with an
/// underscore where a declaration starts and two more names follow (a type and the declared
/// name), after `class` or `struct` before the class's name, or after a parameter list
/// before its `;` or body, is blanked. (A type spelled in capitals declares one name:
/// `CUDA_ARRAY_DESCRIPTOR desc;` is left.)
fn undefined_specifier_macros(
    b: &[u8],
    mask: &[bool],
    edits: &mut Vec<(usize, usize, Option<u8>)>,
) {
    let word_after = |i: usize| -> Option<(usize, usize)> {
        let s = skip_ws(b, i);
        let mut e = s;
        while e < b.len() && is_word(b[e]) {
            e += 1;
        }
        (e > s && !b[s].is_ascii_digit()).then_some((s, e))
    };
    for at in 0..b.len() {
        let (end, short) = match macro_name_at(b, mask, at) {
            Some(end) => (end, false),
            None => match short_macro_name_at(b, mask, at) {
                Some(end) => (end, true),
                None => continue,
            },
        };
        let mut p = at;
        while p > 0 && (b[p - 1].is_ascii_whitespace() || !mask[p - 1]) {
            p -= 1;
        }
        let before = p.checked_sub(1).map(|x| b[x]);
        let line_start = b[..p]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |x| x + 1);
        // (a directive line above, not the one the name is on: `#define NAME VALUE`)
        let after_directive =
            b[p..at].contains(&b'\n') && b[line_start..p].trim_ascii_start().starts_with(b"#");
        let statement_start = matches!(before, None | Some(b';' | b'{' | b'}'))
            || after_directive
            || (before == Some(b'>') && ends_a_template_head(b, p - 1))
            || (before == Some(b':') && ends_with_access_specifier(&b[..p - 1]));
        // after a specifier keyword: `constexpr RAFT_INLINE_FUNCTION QuantI operator()(...)`,
        // `constexpr __forceinline__ _RAFT_HOST_DEVICE bool f(...)`, `explicit HD op(T g)`
        let keyword_before = {
            let w = b[..p].iter().rev().take_while(|c| is_word(**c)).count();
            &b[p - w..p]
        };
        let after_specifier = matches!(
            keyword_before,
            b"constexpr"
                | b"__forceinline__"
                | b"inline"
                | b"static"
                | b"explicit"
                | b"virtual"
                | b"friend"
                | b"__device__"
                | b"__host__"
        );
        let after_class = b[..p].ends_with(b"class") || b[..p].ends_with(b"struct");
        // between a kernel's `void` and its name: `__global__ void LAUNCH_BOUNDS k(...)`
        let after_kernel_void = b[..p].ends_with(b"void")
            && b[..p - 4].trim_ascii_end().ends_with(b"__global__")
            && word_after(end).is_some_and(|(_, e)| b.get(skip_ws(b, e)) == Some(&b'('));
        let blank = if keyword_before == b"explicit" {
            // a constructor: its name and `(`
            word_after(end).is_some_and(|(_, e)| b.get(skip_ws(b, e)) == Some(&b'('))
        } else if short || after_specifier {
            // `DI void core(...)`, `HDI T f(...)` (RAFT's and cuVS's `DI`, `HDI`): a short
            // capitals name is taken for a macro only before a function's return type and
            // name (`HALF h(1.0)` declares `h`)
            (statement_start || after_specifier) && declares_a_function_after(b, end, &word_after)
        } else if after_kernel_void {
            true
        } else if statement_start {
            // a type (perhaps qualified, perhaps a pointer or reference, perhaps after
            // `virtual` or before `inline`) and a name
            let (words, k) = declared_words(b, end, &word_after);
            words >= 2
                && b.get(skip_ws(b, k))
                    .is_some_and(|c| matches!(c, b'(' | b';' | b'=' | b'[' | b','))
        } else if after_class {
            // `struct XGBOOST_ALIGNAS(16) GradStats {`: the macro's arguments go with it
            let args_end = (b.get(skip_ws(b, end)) == Some(&b'('))
                .then(|| matching_close(b, mask, skip_ws(b, end), (b'(', b')')))
                .flatten();
            if let Some(close) = args_end.filter(|&c| word_after(c + 1).is_some()) {
                edits.push((at, close + 1, None));
                continue;
            }
            word_after(end).is_some()
        } else {
            // after a declared function's parameter list (`void f(int x) CV_OVERRIDE;`,
            // `int g() const CV_OVERRIDE;`, `what() const SPDLOG_NOEXCEPT override`, a
            // constructor's `async_msg(async_msg&& other) SPDLOG_NOEXCEPT : ...`), not a cast
            // (`(float)RAND_MAX;`)
            let q = if b[..p].ends_with(b"const") { p - 5 } else { p };
            let close = b[..q].trim_ascii_end().len();
            let next = skip_ws(b, end);
            let ends_declarator = matches!(b.get(next), Some(b';' | b'{' | b':' | b'='))
                && !b[next..].starts_with(b"::")
                || [&b"override"[..], b"final", b"const", b"noexcept"]
                    .iter()
                    .any(|w| {
                        b[next..].starts_with(w)
                            && !b.get(next + w.len()).is_some_and(|c| is_word(*c))
                    });
            close > 0
                && b[close - 1] == b')'
                && declares_a_function(b, mask, close - 1)
                && ends_declarator
        };
        if blank {
            edits.push((at, end, None));
        }
    }
}

/// Whether the `>` at `close` ends a template head (`template <typename real_t>`).
fn ends_a_template_head(b: &[u8], close: usize) -> bool {
    let mut depth = 0usize;
    for i in (close.saturating_sub(512)..=close).rev() {
        match b[i] {
            b'>' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    return b[..i].trim_ascii_end().ends_with(b"template");
                }
            }
            b';' | b'{' | b'}' => return false,
            _ => {}
        }
    }
    false
}

/// Whether the `)` at `close` ends the parameter list of a function declared with a type
/// before its name (`void transform(...)`, `T* get(...)`), rather than a cast or a call.
pub(super) fn declares_a_function(b: &[u8], mask: &[bool], close: usize) -> bool {
    let Some(open) = opening_paren(b, mask, close, b";{}") else {
        return false;
    };
    let name_end = b[..open].trim_ascii_end().len();
    let mut name_start = name_end;
    while name_start > 0 && is_word(b[name_start - 1]) {
        name_start -= 1;
    }
    if name_start == name_end || b[name_start].is_ascii_digit() {
        return false;
    }
    let type_end = b[..name_start].trim_ascii_end();
    // a constructor in its class's body: no type, the name where a member starts
    // a statement or an operator, not a declared name (`return (int)NVTX_NO_TRACKING;`,
    // `case (int)NCCL_GIN_PROXY:`)
    const KEYWORDS: &[&[u8]] = &[
        b"if",
        b"while",
        b"for",
        b"switch",
        b"return",
        b"sizeof",
        b"catch",
        b"case",
        b"else",
        b"do",
        b"throw",
        b"new",
        b"delete",
        b"decltype",
        b"alignof",
        b"typeid",
        b"co_return",
    ];
    if KEYWORDS.contains(&&b[name_start..name_end]) {
        return false;
    }
    let constructor = type_end
        .last()
        .is_some_and(|c| matches!(c, b';' | b'{' | b'}'))
        || type_end.ends_with(b"explicit")
        || type_end
            .strip_suffix(b":")
            .is_some_and(ends_with_access_specifier);
    constructor
        || type_end
            .last()
            .is_some_and(|c| is_word(*c) || matches!(c, b'*' | b'&' | b'>'))
            && !type_end.ends_with(b"return")
}

/// `try { ... } THRUST_CATCH;` (MinkowskiEngine): the handlers are a macro's, so the block has
/// no `catch` the grammar can see; without its `try` the block is a plain one.
fn try_without_catch(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    for at in occurrences(b, mask, "try") {
        let open = skip_ws(b, at + 3);
        if b.get(open) != Some(&b'{') {
            continue;
        }
        let Some(close) = matching_brace(b, mask, open) else {
            continue;
        };
        let (_, words) = words_end(b, close + 1);
        if words.first() != Some(&"catch") {
            edits.push((at, at + 3, None));
        }
    }
}

/// A default argument given in braces (`stride_type const stride = {1}`, MinkowskiEngine's
/// constructors), which the grammar does not take: in parentheses it is an expression of the
/// same value.
fn braced_default_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    for i in 0..b.len() {
        if b[i] != b'=' || !mask[i] {
            continue;
        }
        let plain = i > 0
            && !b"=!<>+-*/%&|^".contains(&b[i - 1])
            && b.get(i + 1).is_some_and(|c| *c != b'=');
        let open = skip_ws(b, i + 1);
        if !plain || b.get(open) != Some(&b'{') {
            continue;
        }
        // the innermost bracket open before the `=` is a parameter list's `(`
        let mut depth = 0i32;
        let mut in_parens = false;
        for k in (i.saturating_sub(4096)..i).rev() {
            if !mask[k] {
                continue;
            }
            match b[k] {
                b')' | b']' | b'}' => depth += 1,
                b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
                b'(' => {
                    in_parens = true;
                    break;
                }
                b'[' | b'{' | b';' => break,
                _ => {}
            }
        }
        if !in_parens {
            continue;
        }
        let Some(close) = matching_brace(b, mask, open) else {
            continue;
        };
        if b[open..close].contains(&b';') {
            continue;
        }
        edits.push((open, open + 1, Some(b'(')));
        edits.push((close, close + 1, Some(b')')));
    }
}

/// Arguments that are only type keywords (`int`, `unsigned long`, `float *`) in what can only be
/// a macro invocation: a name called where an expression or a statement starts (after `=`,
/// `(`, `,`, `return`, or, for an all-capitals name, at the start of a statement). Each such
/// argument becomes `0` and spaces.
fn type_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    let mut classes: Option<HashSet<&[u8]>> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'(' || !mask[i] {
            i += 1;
            continue;
        }
        let open = i;
        i += 1;
        // the name before the parenthesis
        let mut e = open;
        while e > 0 && b[e - 1] == b' ' {
            e -= 1;
        }
        let mut s = e;
        while s > 0 && is_word(b[s - 1]) {
            s -= 1;
        }
        if s == e || b[s].is_ascii_digit() {
            continue;
        }
        let name = &b[s..e];
        if TYPE_WORDS.iter().any(|w| w.as_bytes() == name)
            || matches!(
                name,
                b"sizeof"
                    | b"alignof"
                    | b"decltype"
                    | b"typeid"
                    | b"__alignof__"
                    | b"if"
                    | b"for"
                    | b"while"
                    | b"switch"
                    | b"return"
                    | b"static_assert"
                    | b"__launch_bounds__"
            )
        {
            continue;
        }
        // what precedes, past whitespace and comments
        let mut p = s;
        while p > 0 && (b[p - 1].is_ascii_whitespace() || !mask[p - 1]) {
            p -= 1;
        }
        let before = p.checked_sub(1).map(|x| b[x]);
        let all_capitals = name
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
        // `MAKE_optimizer32bit(float, ADAM);` is a macro's name too, where a statement or
        // declaration ends right after it (a constructor, `Params_T(const P&, int) { }`, goes
        // on to its body)
        let mixed =
            !all_capitals && name.contains(&b'_') && name.iter().any(u8::is_ascii_uppercase);
        let capitals = all_capitals || mixed;
        let after_return = b[..p].ends_with(b"return");
        // `public:` starts a member's declaration (`Force(void);`), not an expression
        let after_access = before == Some(b':') && ends_with_access_specifier(&b[..p - 1]);
        let expression_start = (matches!(before, Some(b'=' | b'(' | b',' | b'?' | b':'))
            && !after_access)
            || after_return;
        // a statement starts after `;`, a block's brace, an `if (...)` or loop head, `else`, `do`
        let statement_start = matches!(before, None | Some(b';' | b'{' | b'}' | b')'))
            || after_access
            || b[..p].ends_with(b"else")
            || b[..p].ends_with(b"do");
        // a name in other spellings at a statement's start is a macro's only where an argument
        // is empty (`rtDeclareVariable(int, max_depth, , );`): no call or parameter list has one
        let macro_like = expression_start || (capitals && statement_start);
        if !macro_like && !statement_start {
            continue;
        }
        // a class's own name called is its constructor (`EAM(FILE*, char*, int n);`)
        if classes
            .get_or_insert_with(|| class_names(b, mask))
            .contains(name)
        {
            continue;
        }
        // the arguments, split at top-level commas, up to the matching parenthesis
        let mut args = Vec::new();
        let (mut depth, mut arg_start, mut j) = (0usize, open + 1, open);
        let close = loop {
            if j >= b.len() || j - open > 4096 {
                break None;
            }
            match b[j] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push((arg_start, j));
                        break Some(j);
                    }
                }
                b',' if depth == 1 => {
                    args.push((arg_start, j));
                    arg_start = j + 1;
                }
                b';' => break None,
                b'"' | b'\'' => {
                    j = super::literal_end(b, j);
                }
                _ => {}
            }
            j += 1;
        };
        let Some(close) = close else {
            continue;
        };
        let empty_argument =
            args.len() > 1 && args.iter().any(|&(a, z)| b[a..z].trim_ascii().is_empty());
        if !macro_like && !empty_argument {
            continue;
        }
        if mixed && b.get(skip_ws(b, close + 1)) != Some(&b';') {
            continue;
        }
        // `(void)` is a parameter list: no macro is given a lone `void`
        if b[open + 1..close].trim_ascii() == b"void" {
            continue;
        }
        for (a, z) in args {
            let text = &b[a..z];
            let words: Vec<&[u8]> = text
                .split(|c| c.is_ascii_whitespace() || *c == b'*' || *c == b'&')
                .filter(|w| !w.is_empty())
                .collect();
            let only_types = !words.is_empty()
                && words
                    .iter()
                    .all(|w| TYPE_WORDS.iter().any(|t| t.as_bytes() == *w))
                && text
                    .iter()
                    .all(|c| is_word(*c) || c.is_ascii_whitespace() || *c == b'*' || *c == b'&');
            if only_types || (capitals && is_sequence(text)) {
                let first = a + text.iter().take_while(|c| c.is_ascii_whitespace()).count();
                edits.push((first, z, Some(b'0')));
                // one keyword (`short`, `float`) keeps its name, spelled as an identifier
                // (`_hort`): a launch in the macro instantiates a kernel with it
                // (`RUN_KERNELS(uchar, short, Border)`, see `type_keyword_argument`)
                if let [w] = words.as_slice() {
                    if KEYWORD_ARGUMENTS.contains(&std::str::from_utf8(w).unwrap_or("")) {
                        edits.push((first, first + 1, Some(b'_')));
                        for (k, c) in w.iter().enumerate().skip(1) {
                            edits.push((first + k, first + k + 1, Some(*c)));
                        }
                    }
                }
            }
        }
    }
}

/// A preprocessor sequence given to a macro (OneFlow's `OF_PP_SEQ_PRODUCT_FOR_EACH_TUPLE(INST,
/// ARITHMETIC_DATA_TYPE_SEQ BOOL_DATA_TYPE_SEQ, ...)`, Boost.PP's `(a)(b)` kin): two or more
/// names in capitals, each maybe with its arguments, side by side with nothing between them.
/// No expression is two names side by side, and no type is written in capitals throughout.
fn is_sequence(text: &[u8]) -> bool {
    let mut items = 0;
    let mut i = skip_ws(text, 0);
    while i < text.len() {
        let start = i;
        while i < text.len() && is_word(text[i]) {
            i += 1;
        }
        let name = &text[start..i];
        let capitals = name.iter().any(u8::is_ascii_uppercase)
            && name
                .iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
            && !name[0].is_ascii_digit();
        if !capitals {
            return false;
        }
        let after = skip_ws(text, i);
        if text.get(after) == Some(&b'(') {
            let mut depth = 0usize;
            let mut j = after;
            loop {
                match text.get(j) {
                    None => return false,
                    Some(b'(') => depth += 1,
                    Some(b')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Some(_) => {}
                }
                j += 1;
            }
            i = j + 1;
        }
        items += 1;
        let next = skip_ws(text, i);
        if next < text.len() && next == i {
            return false;
        }
        i = next;
    }
    items >= 2
}

fn ends_with_access_specifier(b: &[u8]) -> bool {
    let t = b.trim_ascii_end();
    [&b"public"[..], b"private", b"protected"]
        .iter()
        .any(|w| t.ends_with(w) && (t.len() == w.len() || !is_word(t[t.len() - w.len() - 1])))
}

/// The names a `class` or `struct` keyword introduces in the file (outside comments and
/// literals): a call of one of them is a constructor, whatever its case.
fn class_names<'a>(b: &'a [u8], mask: &[bool]) -> HashSet<&'a [u8]> {
    let mut names = HashSet::new();
    let mut i = 0;
    while i < b.len() {
        if !mask[i] || !is_word(b[i]) || (i > 0 && is_word(b[i - 1])) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
        if matches!(&b[s..i], b"class" | b"struct") {
            let n = skip_ws(b, i);
            let mut e = n;
            while e < b.len() && is_word(b[e]) {
                e += 1;
            }
            if e > n {
                names.insert(&b[n..e]);
            }
        }
    }
    names
}

/// Where `(...);` starting at `open` ends (after the `;`), skipping string and character
/// literals; `None` if `open` is not `(` or no `;` follows the matching `)`.
pub(super) fn call_statement_end(b: &[u8], open: usize) -> Option<usize> {
    if b.get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    let semi = skip_ws(b, i + 1);
                    return (b.get(semi) == Some(&b';')).then_some(semi + 1);
                }
            }
            b'"' | b'\'' => {
                i = super::literal_end(b, i);
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `for (j = 0; j < 2; ++j)` then `#pragma unroll 2` then the body: the grammar takes a
/// directive only between statements, so one between a loop's or branch's header and its
/// body is blanked (the analysis reads no pragma).
fn pragmas_before_bodies(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    let mut line = 0;
    while line < b.len() {
        let end = b[line..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| line + p);
        let first = skip_ws(b, line).min(end);
        if mask.get(first) == Some(&true)
            && b[first..end].starts_with(b"#")
            && b[skip_ws(b, first + 1).min(end)..end].starts_with(b"pragma")
            && ends_a_header(b, mask, line)
        {
            edits.push((first, end, None));
        }
        line = end + 1;
    }
}

/// The `(` that opens the `)` at `close`, in code, within 4 KB before it; `None` where one of
/// `stops` comes first.
pub(super) fn opening_paren(b: &[u8], mask: &[bool], close: usize, stops: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for p in (close.saturating_sub(4096)..=close).rev() {
        if !mask[p] {
            continue;
        }
        match b[p] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(p);
                }
            }
            c if stops.contains(&c) => return None,
            _ => {}
        }
    }
    None
}

/// Whether the code before `at` (a line's start), skipping blank lines, comments and other
/// directives, ends in the `)` of an `if`, `for`, `while` or `switch` header, or in `else`.
pub(super) fn ends_a_header(b: &[u8], mask: &[bool], at: usize) -> bool {
    let mut i = at;
    // a run of directives is short where it sits between a header and its body; the bounds
    // keep generated files of thousands of pragmas linear
    let mut directives = 0;
    let close = loop {
        let Some(p) = (0..i)
            .rev()
            .find(|&p| mask[p] && !b[p].is_ascii_whitespace())
        else {
            return false;
        };
        let line_start = b[..p]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |s| s + 1);
        if b[skip_ws(b, line_start)] == b'#' {
            directives += 1;
            if directives > 16 {
                return false;
            }
            i = line_start;
            continue;
        }
        break p;
    };
    if b[close] != b')' {
        return b[..=close].ends_with(b"else")
            && (close < 4 || !is_word(b[close - 4]))
            && b.get(close + 1).is_none_or(|c| !is_word(*c));
    }
    let Some(open) = opening_paren(b, mask, close, b"") else {
        return false;
    };
    let word_end = (0..open)
        .rev()
        .find(|&p| !b[p].is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    let word_start = (0..word_end)
        .rev()
        .find(|&p| !is_word(b[p]))
        .map_or(0, |p| p + 1);
    matches!(
        &b[word_start..word_end],
        b"if" | b"for" | b"while" | b"switch"
    )
}

/// `"a"MACRO"b"` and `"a" MACRO "b"`: the macro is blanked.
fn string_macros(b: &[u8], mask: &[bool], edits: &mut Vec<(usize, usize, Option<u8>)>) {
    let mut i = 0;
    let mut last_close: Option<usize> = None;
    while i < b.len() {
        if !mask[i] {
            i += 1;
            continue;
        }
        match b[i] {
            b'"' => {
                // skip the literal
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= b.len() || b[j] != b'"' {
                    last_close = None;
                    i = j;
                    continue;
                }
                last_close = Some(j);
                i = j + 1;
            }
            c if is_word(c) && !c.is_ascii_digit() => {
                let s = i;
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
                // on the same line: a literal ending a line (an #include) is not next to a word
                // starting the next
                let between = last_close
                    .is_some_and(|q| b[q + 1..s].iter().all(|c| *c == b' ' || *c == b'\t'));
                let next = skip_ws(b, i);
                // a string prefix (`u8"..."`, `L"..."`) touches its quote: not a macro
                let prefix = next == i && matches!(&b[s..i], b"L" | b"u" | b"U" | b"u8" | b"R");
                if between && b.get(next) == Some(&b'"') && !prefix {
                    edits.push((s, i, None));
                }
                last_close = None;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                last_close = None;
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    fn rewrite(src: &str) -> String {
        let mask = vec![true; src.len()];
        let out = super::rewrite(src, &mask).into_owned();
        assert_eq!(out.len(), src.len());
        out
    }

    #[test]
    fn a_statement_given_to_a_macro_loses_its_semicolon() {
        assert_eq!(
            rewrite("LOG_C(L, C, \"n \" << n << endl;);\nfor (;;) {}\nfor (i = 0; i < n;) {}"),
            "LOG_C(L, C, \"n \" << n << endl );\nfor (;;) {}\nfor (i = 0; i < n;) {}"
        );
        let kept = "DISPATCH(t, \"name\", launch<T>(x);)\nD2(t, k<<<g, b>>>(x);)";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn an_operator_given_to_a_macro_is_an_argument() {
        assert_eq!(
            rewrite("REDUCE(s, tid, n, +)\nR2(a, b, ||, &&);\nvoid (*f)(int); g(int (&)[3]);"),
            "REDUCE(s, tid, n, 0)\nR2(a, b, 0 , 0 );\nvoid (*f)(int); g(int (&)[3]);"
        );
    }

    #[test]
    fn a_pragma_between_a_header_and_its_body_is_blanked() {
        let src = "for (j = 0;j < 2;++j)\n#pragma unroll 2\n  for (k = 0;k < 2;++k)\n  #pragma unroll\n    x[j][k] += 1;\n#pragma unroll\nfor (;;) {}\nif (a)\n#pragma unroll\n  f();\nelse\n#pragma unroll\n  g();\n";
        let out = rewrite(src);
        let pragmas: Vec<&str> = out.lines().filter(|l| l.contains("pragma")).collect();
        assert_eq!(pragmas, ["#pragma unroll"]);
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn a_try_whose_handlers_are_a_macro_is_a_plain_block() {
        assert_eq!(
            rewrite("try { f(); } THRUST_CATCH; try { g(); } catch (int e) { h(); }"),
            "    { f(); } THRUST_CATCH; try { g(); } catch (int e) { h(); }"
        );
    }

    #[test]
    fn a_braced_default_argument_is_parenthesized() {
        assert_eq!(
            rewrite("Map(int n, stride_type const stride = {1}) { int a[2] = {1, 2}; }"),
            "Map(int n, stride_type const stride = (1)) { int a[2] = {1, 2}; }"
        );
    }

    #[test]
    fn specifier_macros_defined_nowhere_are_blanked() {
        let src = [
            "CV_EXPORTS_W void add(InputArray a, int d = -1);",
            "class CV_EXPORTS_W StereoBM : public B {",
            "public:",
            "  CV_PROP_RW uint32_t qp;",
            "  void f(int x) CV_OVERRIDE;",
            "  int g() const CV_OVERRIDE;",
            "};",
            "CUDA_ARRAY_DESCRIPTOR desc;",
            "REAL_T value = 0;",
            "#define MPI_REAL_TYPE MPI_DOUBLE",
            "#include \"x.h\"",
            "API_CALL int f(int a);",
            "__global__ void KERNEL_BOUNDS k(float* a) {}",
            "template <typename T>",
            "HOST_DEVICE T f(T x) { return x; }",
            "const char* what() const SPDLOG_NOEXCEPT override {}",
            "async_msg(async_msg&& other) SPDLOG_NOEXCEPT: a(1) {}",
            "inline int omp_get_thread_limit() __GOMP_NOTHROW { return 1; }",
            "if (x) CHECK_LAST_ERR;",
            "switch (k) { case (int)GIN_PROXY: return (int)NO_TRACKING; }",
            "struct XGB_ALIGNAS(16) GradStats {",
            "  float operator( )( const T &t ) const;",
            "DI void core(float& acc) const {}",
            "template <typename P>",
            "HDI T epilog(T* acc) {}",
            "HALF h(1.0);",
            "REAL const x(2);",
            "constexpr RAFT_INLINE_FUNCTION QuantI operator()(const T& x) const {}",
            "constexpr __forceinline__ _RAFT_HOST_DEVICE bool f(int i) {}",
            "explicit HD rbf_fin_op(OutT gain_) noexcept : gain(gain_) {}",
            "inline REAL f(int x);",
            "HDI Bin(int c) : count(c) {}",
            "DI Lookback(void* w) { f = w; }",
            "HDI SplitT& operator=(const SplitT& o) {}",
            "HDI void operator+=(const P& o) {}",
            "HALF g(2) + 1;",
        ]
        .join("\n");
        let out = rewrite(&src);
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        assert_eq!(
            lines,
            [
                "void add(InputArray a, int d = -1);",
                "class              StereoBM : public B {",
                "public:",
                "uint32_t qp;",
                "void f(int x)            ;",
                "int g() const            ;",
                "};",
                "CUDA_ARRAY_DESCRIPTOR desc;",
                "REAL_T value = 0;",
                "#define MPI_REAL_TYPE MPI_DOUBLE",
                "#include \"x.h\"",
                "int f(int a);",
                "__global__ void               k(float* a) {}",
                "template <typename T>",
                "T f(T x) { return x; }",
                "const char* what() const                 override {}",
                "async_msg(async_msg&& other)                : a(1) {}",
                "inline int omp_get_thread_limit()                { return 1; }",
                "if (x) CHECK_LAST_ERR;",
                "switch (k) { case (int)GIN_PROXY: return (int)NO_TRACKING; }",
                "struct                 GradStats {",
                "float operator() ( const T &t ) const;",
                "void core(float& acc) const {}",
                "template <typename P>",
                "T epilog(T* acc) {}",
                "HALF h(1.0);",
                "REAL const x(2);",
                "constexpr                      QuantI operator()(const T& x) const {}",
                "constexpr __forceinline__                   bool f(int i) {}",
                "explicit    rbf_fin_op(OutT gain_) noexcept : gain(gain_) {}",
                "inline REAL f(int x);",
                "Bin(int c) : count(c) {}",
                "Lookback(void* w) { f = w; }",
                "SplitT& operator=(const SplitT& o) {}",
                "void operator+=(const P& o) {}",
                "HALF g(2) + 1;",
            ]
        );
    }

    #[test]
    fn a_friend_operators_empty_template_arguments() {
        assert_eq!(
            rewrite("friend std::ostream & operator << <> (std::ostream & out, const M &m);"),
            "friend std::ostream & operator <<    (std::ostream & out, const M &m);"
        );
    }

    #[test]
    fn a_macro_given_a_fixed_width_integer_type() {
        assert_eq!(
            rewrite("constexpr int S = CALC_SIZE(uint8_t);"),
            "constexpr int S = CALC_SIZE(0      );"
        );
    }

    #[test]
    fn typeid_of_a_type_keyword() {
        assert_eq!(
            rewrite("if (typeid(Real) == typeid(double)) {}"),
            "if (typeid(Real) == typeid(0     )) {}"
        );
        assert_eq!(
            rewrite("t != &typeid(void *) && t != &typeid(const char*)"),
            "t != &typeid(0     ) && t != &typeid(0          )"
        );
    }

    #[test]
    fn array_new_of_pointers() {
        assert_eq!(
            rewrite("p = new const float *[n]; w = new int*[r]; q = new T[n];"),
            "p = new       float  [n]; w = new int [r]; q = new T[n];"
        );
    }

    #[test]
    fn defaults_of_unnamed_parameters() {
        assert_eq!(
            rewrite("void f(float* t, void* = nullptr);"),
            "void f(float* t, void*          );"
        );
        assert_eq!(
            rewrite("template <typename T, typename C = uint32_t*, int N = 4> void g();"),
            "template <typename T, typename C            , int N = 4> void g();"
        );
        // operators and named parameters are left
        let src = "void h(int* p = 0) { x *= 2; y = a & b; }";
        assert_eq!(rewrite(src), src);
        let define = "#define ENABLE_IF(...) std::enable_if_t<(__VA_ARGS__)>* = nullptr\ntemplate <typename T, typename... Ts> bool f();";
        assert_eq!(rewrite(define), define);
    }

    #[test]
    fn a_prefix_operator_called_as_a_statement_is_blanked() {
        assert_eq!(
            rewrite("I operator++(int) { I s(*this); operator++(); return s; }"),
            "I operator++(int) { I s(*this);               return s; }"
        );
    }

    #[test]
    fn comparisons_in_enable_if_arguments() {
        assert_eq!(
            rewrite("struct L<half_t, A, typename platform::enable_if<A::kMin >= 75>::type> {};"),
            "struct L<half_t, A, typename platform::enable_if<A::kMin == 75>::type> {};"
        );
        let src = "if (a >= b) x = enable_if_t<true>{};";
        assert_eq!(rewrite(src), src);
    }

    #[test]
    fn a_macro_before_a_jump_gets_its_semicolon() {
        assert_eq!(
            rewrite("switch (a) { case 0: KERNEL_RUN(0) break; }"),
            "switch (a) { case 0: KERNEL_RUN(0);break; }"
        );
        let src = "if (ok(x)) return;";
        assert_eq!(rewrite(src), src);
    }

    #[test]
    fn explicit_instantiations() {
        let out = rewrite(
            "template class P<float>;\nextern template struct Q<int>;\ntemplate <class T> class R;",
        );
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        assert_eq!(lines, ["", "", "template <class T> class R;"]);
        // one in a macro's body is the macro's (FasterTransformer's INSTANTIATE_... macros):
        // the invocation after it stays, its type argument made a value
        let src = "#define INST(T) \\\n    template void f(T* out)\nINST(float);\n";
        let out = rewrite(src);
        assert!(out.contains("template void f(T* out)"), "{out}");
        assert!(out.contains("INST(_loat);"), "{out}");
        // of a member function, of a class template's specialization
        // of a member function, of a class template's specialization, or with a macro among
        // its specifiers: blanked whole
        let src = "template void Config::get(const std::string &, int &) const;\n\
                   extern template void prims<Device::CUDA>::convert(const float*, dim_t);\n\
                   template STDGPU_DEVICE_ONLY unsigned int f<unsigned int>(const unsigned int);\n";
        assert_eq!(rewrite(src).trim(), "");
        // a free function's keeps its declaration, which names the template arguments
        let src = "template void reduce<int>(int size, int *d_idata);\n\
                   extern template __global__ void k<float, 2>(const float*, int);\n";
        let lines: Vec<String> = rewrite(src).lines().map(|l| l.trim().to_string()).collect();
        assert_eq!(
            lines,
            [
                "void reduce<int>(int size, int *d_idata);",
                "__global__ void k<float, 2>(const float*, int);"
            ]
        );
    }

    #[test]
    fn static_asserts_and_macro_instantiations() {
        let src = "} else {\n  static_assert(I == -1, \"not (yet) \\\" here\");\n}\nextern DECL_CASE( 64,  8);\nextern int f(int);\nextern \"C\" int g();\n";
        let out = rewrite(src);
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        assert_eq!(
            lines,
            [
                "} else {",
                "",
                "}",
                "",
                "extern int f(int);",
                "extern \"C\" int g();"
            ]
        );
        assert_eq!(
            rewrite("{ static_assert(std::is_same_v<std::remove_cv_t<T>, U>); }").trim(),
            "{                                                        }"
        );
        // one without its `;` (a macro's body) is left alone
        assert_eq!(rewrite("static_assert(x)"), "static_assert(x)");
    }

    #[test]
    fn preprocessor_sequences_given_to_a_macro_become_a_value() {
        assert_eq!(
            rewrite("OF_PP_SEQ_PRODUCT_FOR_EACH_TUPLE(INST, A_SEQ B_SEQ,\n    OF_PP_MAKE_TUPLE_SEQ(\"x\", X)\n        C_SEQ);\nf(a_b, MAX(a, b) MIN);\n"),
            "OF_PP_SEQ_PRODUCT_FOR_EACH_TUPLE(INST, 0          ,\n    0                           \n             );\nf(a_b, MAX(a, b) MIN);\n"
        );
        // one name, or a name in lower case, is no sequence
        assert_eq!(rewrite("FOO(A_SEQ, x y);\n"), "FOO(A_SEQ, x y);\n");
    }

    #[test]
    fn type_keywords_given_to_macros() {
        assert_eq!(
            rewrite("  CMP_SWP(K,rg_k0 ,rg_k1 ,int,rg_v0 ,rg_v1 );\n  m = talloc(unsigned int, k*m);\n  if (b) SWP(K, a, int, c);"),
            "  CMP_SWP(K,rg_k0 ,rg_k1 ,_nt,rg_v0 ,rg_v1 );\n  m = talloc(0           , k*m);\n  if (b) SWP(K, a, _nt, c);"
        );
        // (one keyword keeps its name, spelled as an identifier: ppl.cv's
        // `RUN_KERNELS(uchar, short, Border)` launches `k<uchar, short, Border>`)
        assert_eq!(crate::preprocess::type_keyword_argument("_nt"), Some("int"));
        assert_eq!(
            crate::preprocess::type_keyword_argument("_hort"),
            Some("short")
        );
        assert_eq!(crate::preprocess::type_keyword_argument("_x"), None);
        // declarations and keywords keep their types
        let kept = "void f(int, float*);\nFoo(int);\nx = sizeof(int) + (float)y;\nint g(int a);";
        assert_eq!(rewrite(kept), kept);
        // members after an access specifier, constructors of a class named in capitals
        let members = "class EAM {\npublic:\n  Force(void);\n  EAM(FILE*, char*, int n);\n};";
        assert_eq!(rewrite(members), members);
        // a macro named in mixed case ends its statement; a constructor goes on to its body
        assert_eq!(
            rewrite("MAKE_opt32(float, ADAM);\nstruct S { No_Params(const P &, int) { } };"),
            "MAKE_opt32(_loat, ADAM);\nstruct S { No_Params(const P &, int) { } };"
        );
        // a name in camel case given an empty argument is a macro's too (OptiX's
        // `rtDeclareVariable(unsigned int, sample, , );` at file scope)
        assert_eq!(
            rewrite("rtDeclareVariable(unsigned int, s, , );\nrtDeclareVariable(int, d, , );\ndeclare(int, d);"),
            "rtDeclareVariable(0           , s    );\nrtDeclareVariable(_nt, d    );\ndeclare(int, d);"
        );
    }

    #[test]
    fn a_literal_ending_a_line_is_not_next_to_the_word_after_it() {
        let src = "#include \"a.cuh\"\n\nextern \"C\" int f();";
        assert_eq!(rewrite(src), src);
    }

    #[test]
    fn macros_between_string_literals() {
        assert_eq!(
            rewrite(r#"printf("node ("fNID"): %d", n); printf("%" PRId64 "\n", x); s = u8"x";"#),
            r#"printf("node ("    "): %d", n); printf("%"        "\n", x); s = u8"x";"#
        );
    }
}
