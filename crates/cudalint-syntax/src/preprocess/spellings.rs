//! Spellings of C and C++ that tree-sitter-cuda 0.21 reads wrongly or not at all, written as
//! the tokens it knows, each in the bytes the word took (every offset stays):
//! - C++'s alternative tokens (`and`, `or`, `not`, `bitand`, ...): the grammar knows some of
//!   them in some places, and loses a template argument list where `or` follows `or`
//!   (heFFTe's `enable_if<... and (... or ... or ...)>`); `&&`, `||`, `!` it always reads;
//! - C99's complex types (BART's `_Complex float *dst` in the launchers a C header declares,
//!   nvcc accepting them as GCC's extension): `_Complex float` becomes `float2`, as wide, and a
//!   lone `_Complex`/`__complex__` is blanked;
//! - C11's `_Bool`, `_Alignas`, `_Alignof`, `_Thread_local` as C++'s words, `_Noreturn` blanked.

use super::grammar_gaps::{in_directive, is_word, occurrences, skip_ws};
use super::modern_cpp::Edit;
use std::borrow::Cow;

/// Each alternative token with the operator it spells.
const ALTERNATIVE_TOKENS: &[(&str, &str)] = &[
    ("and", "&&"),
    ("or", "||"),
    ("not", "!"),
    ("bitand", "&"),
    ("bitor", "|"),
    ("xor", "^"),
    ("compl", "~"),
    ("and_eq", "&="),
    ("or_eq", "|="),
    ("xor_eq", "^="),
    ("not_eq", "!="),
];

/// `src` with every alternative token and complex type spelled as the grammar reads it. Runs
/// before the statement-macro pass, which would take `or (a)` on a line of its own for a
/// macro's invocation.
/// C's keywords for what C++ spells otherwise, in the C headers CUDA files include (BART's
/// `_Bool periodic;` in a struct a kernel takes by value: unread, the struct had no layout).
const C11_KEYWORDS: &[(&str, &str)] = &[
    ("_Bool", "bool"),
    ("_Alignas", "alignas"),
    ("_Alignof", "alignof"),
    ("_Thread_local", "thread_local"),
    ("_Noreturn", ""),
];

pub(super) fn respell(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    // (`or` is in nearly every file, inside `for` and `error`: only a whole word is worth the
    // mask of comments)
    let whole = |w: &str| {
        memchr::memmem::find_iter(b, w.as_bytes()).any(|i| {
            (i == 0 || !is_word(b[i - 1])) && b.get(i + w.len()).is_none_or(|c| !is_word(*c))
        })
    };
    if !ALTERNATIVE_TOKENS.iter().any(|(w, _)| whole(w))
        && !C11_KEYWORDS.iter().any(|(w, _)| src.contains(w))
        && !src.contains("_Complex")
        && !src.contains("__complex__")
    {
        return Cow::Borrowed(src);
    }
    let mask = super::syntax_macros::mask_of(b, false);
    let mut edits = Vec::new();
    rewrite(src, b, &mask, &mut edits);
    if edits.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = b.to_vec();
    for (s, e, first) in edits {
        super::blank_range(&mut out, s..e);
        if let Some(c) = first {
            out[s] = c;
        }
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

fn rewrite(src: &str, b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    // a message's words (`"a and b"`) are no operators
    let mut literals: Option<Vec<bool>> = None;
    for &(word, op) in ALTERNATIVE_TOKENS {
        if !src.contains(word) {
            continue;
        }
        let unary = matches!(word, "not" | "compl");
        for at in occurrences(b, mask, word) {
            let end = at + word.len();
            if in_directive(b, at) || !starts_operand(b, skip_ws(b, end)) {
                continue;
            }
            // a binary operator follows a value, a unary one anything but a value: a word
            // in a C header's declaration (`int not;`) or a comment's prose is neither
            if ends_value(b, mask, at) == unary {
                continue;
            }
            if !literals.get_or_insert_with(|| super::syntax_macros::mask_of(b, true))[at] {
                continue;
            }
            spell(at, end, op.as_bytes(), edits);
        }
    }
    for &(word, standard) in C11_KEYWORDS {
        if src.contains(word) {
            for at in occurrences(b, mask, word) {
                if standard.is_empty() {
                    edits.push((at, at + word.len(), None));
                } else {
                    spell(at, at + word.len(), standard.as_bytes(), edits);
                }
            }
        }
    }
    for word in ["_Complex", "__complex__"] {
        if !src.contains(word) {
            continue;
        }
        for at in occurrences(b, mask, word) {
            let end = at + word.len();
            let after = skip_ws(b, end);
            let next = word_at(b, after);
            let before = word_before(b, at);
            let (from, to, width) = match (next, before) {
                (Some(t @ ("float" | "double")), _) => (at, after + t.len(), t),
                (_, Some((s, t @ ("float" | "double")))) => (s, end, t),
                _ => (at, end, ""),
            };
            let spelled = match width {
                "float" => "float2",
                "double" => "double2",
                _ => "",
            };
            if spelled.is_empty() {
                edits.push((from, to, None));
            } else {
                spell(from, to, spelled.as_bytes(), edits);
            }
        }
    }
}

/// Writes `with` over the first bytes of `from..to` and blanks the rest, as single-byte edits.
fn spell(from: usize, to: usize, with: &[u8], edits: &mut Vec<Edit>) {
    edits.push((from, to, Some(with[0])));
    for (k, &c) in with.iter().enumerate().skip(1) {
        edits.push((from + k, from + k + 1, Some(c)));
    }
}

fn starts_operand(b: &[u8], at: usize) -> bool {
    b.get(at)
        .is_some_and(|&c| is_word(c) || matches!(c, b'(' | b'!' | b'~' | b'-' | b'*' | b'&'))
}

/// Whether the code before `at` ends with a value: a name, a literal, `)` or `]`, or a
/// template argument list's `>` (`is_same<T, float>::value` ends in a name).
fn ends_value(b: &[u8], mask: &[bool], at: usize) -> bool {
    let mut i = at;
    while i > 0 && (b[i - 1].is_ascii_whitespace() || !mask[i - 1]) {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let c = b[i - 1];
    if c == b')' || c == b']' {
        return true;
    }
    if !is_word(c) {
        return false;
    }
    let mut s = i;
    while s > 0 && is_word(b[s - 1]) {
        s -= 1;
    }
    // `return not x`, `case`: keywords that take an operand
    !matches!(
        &b[s..i],
        b"return" | b"case" | b"and" | b"or" | b"not" | b"xor" | b"bitand" | b"bitor" | b"compl"
    )
}

fn word_at(b: &[u8], at: usize) -> Option<&str> {
    let mut e = at;
    while e < b.len() && is_word(b[e]) {
        e += 1;
    }
    (e > at)
        .then(|| std::str::from_utf8(&b[at..e]).ok())
        .flatten()
}

/// The word ending right before `at` (spaces between), with where it starts.
fn word_before(b: &[u8], at: usize) -> Option<(usize, &str)> {
    let mut e = at;
    while e > 0 && b[e - 1].is_ascii_whitespace() {
        e -= 1;
    }
    let mut s = e;
    while s > 0 && is_word(b[s - 1]) {
        s -= 1;
    }
    (s < e)
        .then(|| std::str::from_utf8(&b[s..e]).ok().map(|w| (s, w)))
        .flatten()
}

#[cfg(test)]
mod tests {
    fn code(src: &str) -> String {
        super::respell(src).into_owned()
    }

    #[test]
    fn alternative_tokens_become_operators_in_place() {
        let src = "bool f(int a, int b) { return a and b or not a; }";
        let out = code(src);
        assert_eq!(out, "bool f(int a, int b) { return a &&  b || !   a; }");
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn words_that_are_no_operator_stay() {
        for src in [
            "// read and write\nint x;",
            "int not;",
            "printf(\"a and b\");",
            "#if defined(A) and defined(B)\n#endif\n",
        ] {
            assert_eq!(code(src), src, "{src}");
        }
    }

    #[test]
    fn complex_types_keep_their_width() {
        assert_eq!(
            code("void f(_Complex float* d, double _Complex x);"),
            "void f(float2        * d, double2         x);"
        );
        assert_eq!(code("_Complex long double z;"), "         long double z;");
        assert_eq!(code("struct c { _Bool p; };"), "struct c { bool  p; };");
    }
}
