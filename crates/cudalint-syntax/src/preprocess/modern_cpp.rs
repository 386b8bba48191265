//! Modern C++ and test-framework idioms that tree-sitter-cuda 0.21 has no rule for, found in
//! library-style CUDA code (cuDF, FAISS, CUTLASS, tiny-cuda-nn), rewritten in place so the
//! rest of the file parses:
//! - extended lambdas, `[out] __device__ (size_t i) { ... }`: the execution-space specifiers
//!   between the capture and the parameters are blanked (the body stays a lambda);
//! - `typename Gemm::Arguments(...)`, `typename Fprop::D{}`: a functional cast through a
//!   dependent type loses its `typename`, leaving the qualified call or braced initializer;
//! - `CHECK_CUDA_CALL(cudaFree(p), return false);`: a `return` given to a macro as an argument
//!   is blanked, so the invocation parses as the call it looks like;
//! - `template <typename T, CUDF_ENABLE_IF(is_integral<T>())>`: a macro standing for a whole
//!   SFINAE template parameter is blanked with the comma before it;
//! - `TEST_CASE("name", "[tag]") {`, `SECTION("...") {`: a test framework's block macro (an
//!   all-capitals name, a string among its arguments, a body after it) becomes `void _()` at
//!   file scope and disappears inside a function, leaving its body a block;
//! - `std::pair<std::unique_ptr<vec<int>>, ...>>>`: three closing angles outside a launch
//!   read as a launch's `>>>`, and a qualified template's `>>` before a comma as a shift; the
//!   innermost argument list becomes part of its name (`vec_int_`);
//! - `template <typename T, std::enable_if_t<C, T>* = nullptr>`: an unnamed pointer template
//!   parameter gets a name (`*_= nullptr`);
//! - `table_view const& t = {}`: a braced default argument becomes `0`;
//! - `__host__ __device__ inline friend bool operator<(...)`: `friend` moves to the front of the
//!   specifiers, where the grammar wants it;
//! - `vec_2d<T>& __host__ __device__ operator+=(...)`, `float& __device__ at(int i)`: execution
//!   space specifiers after a reference return type (nvcc takes them there, the grammar only
//!   before the `&`) trade places with the `&`;
//! - `RUN_TEST(this->template verify, a)`: `template` before a member named without template
//!   arguments is blanked; `TYPED_TEST(T, 500Points) {`: a test name led by digits gets
//!   underscores for them;
//! - `R S::operator()<cudf::list_view>(...)`: an explicit specialization's arguments after an
//!   operator's name are blanked;
//! - `DISPATCH_FLOAT_AND_HALF(t, 0, "name", using T = float; launch<T>(...);)`: a type-dispatch
//!   macro given statements as its last argument (apex, PyTorch extensions) becomes a block of
//!   those statements, `{ using T = float; launch<T>(...); }`, its leading arguments blanked;
//! - `CUDA_KERNEL_LOOP(i, n) {` in a function body: a loop macro's invocation before a block
//!   gets the `;` of a statement in the space before the `{`, so both parse; the analysis puts
//!   the macro's loop back around the block (`cudalint_syntax::substitute`);
//! - `NV_IF_TARGET(NV_IS_DEVICE, (a();), (b();))`, `NV_DISPATCH_TARGET(NV_IS_HOST, (...),
//!   NV_IS_DEVICE, (...))`: libcu++'s target dispatch keeps the code nvcc compiles for the
//!   device (sm_90), as a block; the rest is blanked;
//! - `T get_rmin() = delete;` outside a class: the `= delete` is blanked;
//! - `CHECK(cudaMalloc(&p, n), );`: a macro's empty last argument loses its comma;
//! - `ITERATE((k<<<g, b>>>(p));, w += c;)`: a macro given runs of statements as its arguments
//!   becomes a block of them.

pub(super) type Edit = (usize, usize, Option<u8>);

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

pub(super) fn skip_ws(b: &[u8], mask: &[bool], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_whitespace() || !mask[i]) {
        i += 1;
    }
    i
}

/// The last significant byte before `i` (whitespace and comments skipped).
fn before(b: &[u8], mask: &[bool], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&p| mask[p] && !b[p].is_ascii_whitespace())
}

pub(super) fn word_before(b: &[u8], end: usize) -> &[u8] {
    let mut s = end;
    while s > 0 && is_word(b[s - 1]) {
        s -= 1;
    }
    &b[s..end]
}

/// The bracket closing the one at `open` (`(`, `[`, `{` or `<` for template heads), skipping
/// string and character literals and comments; `None` past `limit` bytes.
fn closing(b: &[u8], mask: &[bool], open: usize, limit: usize) -> Option<usize> {
    let (o, c) = match b[open] {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        b'<' => (b'<', b'>'),
        _ => return None,
    };
    let mut depth = 0usize;
    let mut paren = 0usize;
    let mut i = open;
    while i < b.len() && i - open <= limit {
        if !mask[i] {
            i += 1;
            continue;
        }
        match b[i] {
            b'"' | b'\'' => {
                i = super::literal_end(b, i);
            }
            // inside a template head, `<`/`>` in parentheses are comparisons
            b'(' if o == b'<' => paren += 1,
            b')' if o == b'<' => paren = paren.saturating_sub(1),
            x if x == o && paren == 0 => depth += 1,
            x if x == c && paren == 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b';' if o != b'{' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The bracket paired with the one at `at`: forward from `(` or `[`, back from `)` or `]`,
/// within `limit` bytes, through anything but unbalanced brackets of its kind (`;` included,
/// unlike [`closing`]).
fn partner(b: &[u8], mask: &[bool], at: usize, limit: usize) -> Option<usize> {
    let (open, close, forward) = match b.get(at)? {
        b'(' => (b'(', b')', true),
        b'[' => (b'[', b']', true),
        b')' => (b'(', b')', false),
        b']' => (b'[', b']', false),
        _ => return None,
    };
    let (inner, outer) = if forward {
        (open, close)
    } else {
        (close, open)
    };
    let order: Box<dyn Iterator<Item = usize>> = if forward {
        Box::new(at..b.len().min(at.saturating_add(limit)))
    } else {
        Box::new((at.saturating_sub(limit)..=at).rev())
    };
    let mut depth = 0usize;
    for i in order {
        if !mask[i] {
            continue;
        }
        if b[i] == inner {
            depth += 1;
        } else if b[i] == outer {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Every whole-word occurrence of `word` in code.
fn words<'a>(b: &'a [u8], mask: &'a [bool], word: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let n = word.len();
    memchr::memmem::find_iter(b, word).filter(move |&i| {
        mask[i] && (i == 0 || !is_word(b[i - 1])) && b.get(i + n).is_none_or(|c| !is_word(*c))
    })
}

pub(super) fn rewrite(src: &str, b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    if src.contains("__device__") || src.contains("__host__") {
        lambda_specifiers(b, mask, edits);
    }
    if src.contains("] ") {
        lambda_specifier_macros(b, mask, edits);
    }
    if src.contains("typename") {
        typename_casts(b, mask, edits);
    }
    if src.contains("return") {
        return_arguments(b, mask, edits);
    }
    if src.contains("(unsigned") || src.contains("( unsigned") {
        unsigned_casts_in_parentheses(b, mask, edits);
    }
    if src.contains("template") {
        sfinae_macros(b, mask, edits);
    }
    // (`TEST`: gtest's blocks name their tests without strings)
    if src.contains('"') || src.contains("TEST") {
        test_blocks(b, mask, edits);
    }
    if src.contains(">>") {
        template_triple_angles(b, mask, edits);
    }
    if src.contains("NV_IF_") || src.contains("NV_DISPATCH_TARGET") {
        target_dispatch(b, mask, edits);
    }
    if src.contains("= {}") || src.contains("={}") {
        braced_defaults(b, mask, edits);
    }
    if src.contains(") {") || src.contains(" {") || src.contains("\t{") || src.contains("\n{") {
        loop_macro_blocks(b, mask, edits);
    }
    if src.contains("friend") {
        friend_first(b, mask, edits);
    }
    if src.contains("->template") || src.contains(".template") {
        member_templates_named(b, mask, edits);
    }
    if src.contains("& __") || src.contains("& [[") {
        specifiers_after_reference(b, mask, edits);
    }
    // a dispatch's name then its statements, or its statements as a block, `{ ... })`
    if src.contains("\",") || src.contains("})") || src.contains(";)") || src.contains("; )") {
        statement_arguments(b, mask, edits);
    }
    if src.contains("operator") {
        operator_specializations(b, mask, edits);
    }
    if src.contains("delete") {
        deleted_functions(b, mask, edits);
    }
    if src.contains(", )") || src.contains(",)") || src.contains(", ,") || src.contains(",,") {
        empty_last_arguments(b, mask, edits);
    }
    if src.contains(";)") || src.contains("; )") || src.contains(";\n") {
        statement_list_macros(b, mask, edits);
    }
}

/// Whether byte `s` starts a statement: nothing but a `;` or a brace before it.
fn at_statement(b: &[u8], mask: &[bool], s: usize) -> bool {
    before(b, mask, s).is_none_or(|p| matches!(b[p], b';' | b'{' | b'}'))
}

/// `RULEBOOKITERATOR((k<<<g, b>>>(...));, w += c; flops += n * c;)` in a function body
/// (SparseConvNet's rule-book loop): a macro, at a statement, each of whose arguments is a run
/// of statements (every comma between them at depth zero comes after a `;`, or after nothing).
/// It becomes a block of them, `{ (k<<<g, b>>>(...)); w += c; ... }`: the launches in it are
/// seen, and the loop it stands for is not.
fn statement_list_macros(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut blocks: Option<Vec<(usize, Option<Block>)>> = None;
    let mut resume = 0;
    for (s, end) in capital_words(b, mask) {
        let open = skip_ws(b, mask, end);
        if s < resume
            || !at_statement(b, mask, s)
            || !capitals(&b[s..end])
            || b.get(open) != Some(&b'(')
        {
            continue;
        }
        let (mut depth, mut commas, mut semicolon) = (0i32, Vec::new(), false);
        let mut close = None;
        let mut k = open + 1;
        while k < b.len().min(open + (1 << 16)) {
            if !mask[k] {
                k += 1;
                continue;
            }
            match b[k] {
                b'"' | b'\'' => {
                    k = super::literal_end(b, k) + 1;
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' if depth == 0 => {
                    close = Some(k);
                    break;
                }
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(k),
                b';' if depth == 0 => semicolon = true,
                _ => {}
            }
            k += 1;
        }
        let Some(close) = close else { continue };
        let separates =
            |c: usize| before(b, mask, c).is_none_or(|p| matches!(b[p], b';' | b'(' | b','));
        if !semicolon || !commas.iter().all(|&c| separates(c)) {
            continue;
        }
        let blocks = blocks.get_or_insert_with(|| enclosing_blocks(b, mask));
        if block_at(blocks, s) != Some(Block::Code) {
            continue;
        }
        edits.push((s, open, None));
        edits.push((open, open + 1, Some(b'{')));
        for c in commas {
            edits.push((c, c + 1, None));
        }
        edits.push((close, close + 1, Some(b'}')));
        resume = close + 1;
    }
}

/// `ncvAssertCUDAReturn(cudaMalloc(&p, n), );` (PCL's NCV, in a constructor that returns
/// nothing): a macro given an empty last argument; no call or parameter list ends in a comma,
/// so the comma is blanked and the invocation parses as the call it looks like. An empty
/// argument in the middle (`rtDeclareVariable(float3, cam_pos, , );`, OptiX's declarations
/// at file scope) likewise: no call has one either. Such an invocation is a macro's, so an
/// argument of two plain words in it (`attribute back_hit_point`, a semantic OptiX reads) is
/// no parameter declaration: its first word goes, and the invocation parses as a call.
fn empty_last_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for (i, &c) in b.iter().enumerate() {
        if c != b',' || !mask[i] {
            continue;
        }
        let next = skip_ws(b, mask, i + 1);
        if matches!(b.get(next), Some(b')' | b',')) {
            edits.push((i, i + 1, None));
            two_word_arguments(b, mask, i, edits);
        }
    }
}

/// In the macro invocation whose argument list holds the empty argument after `comma`: each
/// argument of exactly two plain words loses its first.
fn two_word_arguments(b: &[u8], mask: &[bool], comma: usize, edits: &mut Vec<Edit>) {
    // the invocation's `(`: the first unmatched one before the comma, on its line
    let mut depth = 0usize;
    let mut open = None;
    for k in (0..comma).rev() {
        if !mask[k] {
            continue;
        }
        match b[k] {
            b')' => depth += 1,
            b'(' if depth == 0 => {
                open = Some(k);
                break;
            }
            b'(' => depth -= 1,
            b'\n' | b';' | b'{' | b'}' => return,
            _ => {}
        }
    }
    let Some(open) = open else { return };
    if !before(b, mask, open).is_some_and(|p| is_word(b[p])) {
        return;
    }
    let mut k = open + 1;
    while k < b.len() && mask[k] && !matches!(b[k], b')' | b'\n' | b';') {
        let start = skip_ws(b, mask, k);
        let mut end = start;
        while end < b.len() && mask[end] && !matches!(b[end], b',' | b')' | b'\n' | b';') {
            end += 1;
        }
        let arg: Vec<&[u8]> = b[start..end]
            .split(|c| c.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        let plain = |w: &[u8]| w.iter().all(|c| is_word(*c)) && !w[0].is_ascii_digit();
        if arg.len() == 2 && arg.iter().all(|w| plain(w)) && !TYPE_WORDS.contains(&arg[0]) {
            edits.push((start, start + arg[0].len(), None));
        }
        if b.get(end) != Some(&b',') {
            break;
        }
        k = end + 1;
    }
}

/// Words that begin a type of two words (`unsigned x`, `struct S`): a parameter, not a
/// macro's argument.
const TYPE_WORDS: &[&[u8]] = &[
    b"const",
    b"unsigned",
    b"signed",
    b"struct",
    b"class",
    b"enum",
    b"union",
    b"volatile",
    b"long",
    b"short",
    b"typename",
];

/// `template <typename T> T magmablas_get_rmin() = delete;` (MAGMA's sort): the grammar
/// has `= delete` only in a class body; elsewhere it is blanked, leaving the declaration.
fn deleted_functions(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"delete") {
        let Some(eq) = before(b, mask, at).filter(|&q| b[q] == b'=') else {
            continue;
        };
        let after = skip_ws(b, mask, at + b"delete".len());
        let declarator_end = before(b, mask, eq).is_some_and(|q| b[q] == b')' || is_word(b[q]));
        if b.get(after) == Some(&b';') && declarator_end {
            edits.push((eq, at + b"delete".len(), None));
        }
    }
}

fn friend_first(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    const SPECIFIERS: &[&[u8]] = &[
        b"inline",
        b"__host__",
        b"__device__",
        b"__forceinline__",
        b"constexpr",
        b"static",
    ];
    for at in words(b, mask, b"friend") {
        // the specifiers before it, on its line or the lines above (gpu-voxels'
        // `__host__ __device__` on a line of its own; a rewritten `CUDF_HOST_DEVICE` leaves
        // spaces after its `__device__`); never into a directive's line
        let mut start = at;
        // (each specifier, the whitespace after it)
        let mut specifiers = Vec::new();
        loop {
            let mut e = start;
            while e > 0 && b[e - 1].is_ascii_whitespace() {
                e -= 1;
            }
            let w = word_before(b, e);
            let line_start = b[..e]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
            let directive = b[line_start..e].trim_ascii_start().starts_with(b"#");
            if e == start || !SPECIFIERS.contains(&w) || directive {
                break;
            }
            specifiers.push((w, &b[e..start]));
            start = e - w.len();
        }
        if specifiers.is_empty() {
            continue;
        }
        specifiers.reverse();
        // `friend`, then each gap followed by the specifier it came after: the same bytes,
        // the line breaks as many and between the same words
        let mut text = b"friend".to_vec();
        for (w, gap) in specifiers {
            text.extend_from_slice(gap);
            text.extend_from_slice(w);
        }
        debug_assert_eq!(text.len(), at + 6 - start);
        for (k, c) in text.iter().enumerate() {
            if b[start + k] != *c {
                edits.push((start + k, start + k + 1, Some(*c)));
            }
        }
    }
}

/// `this->template verify` given to a macro without arguments (a test's
/// `RUN_TEST(this->template verify, a, b)`): the grammar takes `template` after `->` only
/// before a template's arguments, so it is blanked there.
fn member_templates_named(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"template") {
        if !(b[..at].ends_with(b"->") || b[..at].ends_with(b".")) {
            continue;
        }
        let name = skip_ws(b, mask, at + 8);
        let end = name + b[name..].iter().take_while(|c| is_word(**c)).count();
        let operator = &b[name..end] == b"operator";
        if end > name && !operator && !matches!(b.get(skip_ws(b, mask, end)), Some(b'<')) {
            edits.push((at, at + 8, None));
        }
    }
}

fn specifiers_after_reference(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    const SPECIFIERS: &[&[u8]] = &[
        b"__host__",
        b"__device__",
        b"__global__",
        b"__forceinline__",
        b"__noinline__",
        b"__inline__",
        super::KERNEL_MARK.as_bytes(),
        super::DEVICE_MARK.as_bytes(),
    ];
    for amp in memchr::memchr_iter(b'&', b) {
        // the last `&` of a return type's `&` or `&&`, after a type (`T&`, `S<T>&`, `T*&`)
        if !mask[amp] || b.get(amp + 1) == Some(&b'&') || amp == 0 {
            continue;
        }
        let first = if b[amp - 1] == b'&' { amp - 1 } else { amp };
        let Some(&c) = first.checked_sub(1).and_then(|p| b.get(p)) else {
            continue;
        };
        if !(is_word(c) || matches!(c, b'>' | b'*' | b' ')) {
            continue;
        }
        let mut end = amp + 1;
        let mut specifiers_end = None;
        loop {
            let s = end
                + b[end..]
                    .iter()
                    .take_while(|c| matches!(c, b' ' | b'\t'))
                    .count();
            match SPECIFIERS.iter().find(|w| b[s..].starts_with(w)) {
                Some(w) if b.get(s + w.len()).is_none_or(|c| !is_word(*c)) => {
                    end = s + w.len();
                    specifiers_end = Some(end);
                }
                _ => break,
            }
        }
        let Some(end) = specifiers_end else {
            continue;
        };
        // `float& __device__ f(`: the specifiers first, then the ampersands before the name
        let amps = &b[first..=amp];
        let words = b[amp + 1..end].trim_ascii_start();
        let space = usize::from(is_word(c));
        if words.len() + space + amps.len() > end - first {
            continue;
        }
        let mut text = vec![b' '; space];
        text.extend_from_slice(words);
        text.resize(end - first - amps.len(), b' ');
        text.extend_from_slice(amps);
        for (k, c) in text.iter().enumerate() {
            if b[first + k] != *c {
                edits.push((first + k, first + k + 1, Some(*c)));
            }
        }
    }
}

fn operator_specializations(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"operator") {
        conversion_call(b, mask, at, edits);
        // a definition out of its class (`S::operator()<T>(`); a call through `.template
        // operator()<8>()` parses as it is
        if !b[..at].ends_with(b"::") {
            continue;
        }
        let mut i = skip_ws(b, mask, at + 8);
        if b[i..].starts_with(b"()") {
            i = skip_ws(b, mask, i + 2);
        } else {
            continue;
        }
        if b.get(i) != Some(&b'<') {
            continue;
        }
        let Some(close) = closing(b, mask, i, 256) else {
            continue;
        };
        if b.get(skip_ws(b, mask, close + 1)) == Some(&b'(') {
            edits.push((i, close + 1, None));
        }
    }
}

/// `p.operator bool()`, `q->operator unsigned int()`: a conversion operator called by name,
/// which the grammar has no rule for, becomes a member function's call (`operator_bool()`),
/// its spaces joined with `_`.
fn conversion_call(b: &[u8], mask: &[bool], at: usize, edits: &mut Vec<Edit>) {
    let mut p = at;
    while p > 0 && b[p - 1].is_ascii_whitespace() {
        p -= 1;
    }
    if !(b[..p].ends_with(b".") || b[..p].ends_with(b"->")) {
        return;
    }
    let mut gaps = Vec::new();
    let mut i = at + 8;
    loop {
        let word = skip_ws(b, mask, i);
        if word == i
            || !b
                .get(word)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            break;
        }
        gaps.push(i..word);
        i = word;
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
    }
    if gaps.is_empty() || b.get(skip_ws(b, mask, i)) != Some(&b'(') {
        return;
    }
    for gap in gaps {
        if b[gap.clone()]
            .iter()
            .any(|c| *c == b'\n' || !c.is_ascii_whitespace())
        {
            return;
        }
        for k in gap {
            edits.push((k, k + 1, Some(b'_')));
        }
    }
}

/// What a `{` opens.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    Namespace,
    Class,
    /// A function body, or a block inside one.
    Code,
}

/// After each `{` and `}` (by position), the innermost enclosing block that is not a namespace
/// or `extern "C"` body; `None` at file scope.
fn enclosing_blocks(b: &[u8], mask: &[bool]) -> Vec<(usize, Option<Block>)> {
    let mut out = Vec::new();
    let mut stack: Vec<Block> = Vec::new();
    let innermost = |stack: &[Block]| {
        stack
            .iter()
            .rev()
            .find(|k| **k != Block::Namespace)
            .copied()
    };
    let word_in = |head: &[u8], w: &[u8]| {
        head.windows(w.len()).enumerate().any(|(k, x)| {
            x == w
                && (k == 0 || !is_word(head[k - 1]))
                && head.get(k + w.len()).is_none_or(|c| !is_word(*c))
        })
    };
    let mut i = 0;
    while i < b.len() {
        if !mask[i] {
            i += 1;
            continue;
        }
        match b[i] {
            b'"' | b'\'' => {
                i = super::literal_end(b, i);
            }
            b'{' => {
                let head_start = (0..i)
                    .rev()
                    .find(|&p| mask[p] && matches!(b[p], b';' | b'{' | b'}'))
                    .map_or(0, |p| p + 1);
                // (from the line after the last directive: `#define RATIO (0.5)` above a
                // class is no part of its head)
                let head_start = {
                    let (mut at, mut after, mut continued) = (head_start, head_start, false);
                    for line in b[head_start..i].split(|c| *c == b'\n') {
                        let directive = continued || line.trim_ascii_start().starts_with(b"#");
                        continued = directive && line.trim_ascii_end().ends_with(b"\\");
                        at += line.len() + 1;
                        if directive {
                            after = at.min(i);
                        }
                    }
                    after
                };
                // (its code: a comment above a class may hold parentheses)
                let head: Vec<u8> = (head_start..i).filter(|&p| mask[p]).map(|p| b[p]).collect();
                let head = &head[..];
                let kind = if word_in(head, b"namespace") || word_in(head, b"extern") {
                    Block::Namespace
                } else if ["class", "struct", "union", "enum"]
                    .iter()
                    .any(|w| word_in(head, w.as_bytes()))
                    && !parens_outside_angles(head)
                {
                    Block::Class
                } else {
                    Block::Code
                };
                stack.push(kind);
                out.push((i, innermost(&stack)));
            }
            b'}' => {
                stack.pop();
                out.push((i, innermost(&stack)));
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether a block's head has parentheses outside template brackets: `struct S f(int a) {`
/// is a function, `class Callback<Ret(Args...)> {` a class.
fn parens_outside_angles(head: &[u8]) -> bool {
    let mut angles = 0i32;
    head.iter().any(|&c| {
        match c {
            b'<' => angles += 1,
            b'>' => angles = (angles - 1).max(0),
            _ => {}
        }
        c == b'(' && angles == 0
    })
}

/// The block enclosing byte `at`, from [`enclosing_blocks`]'s list.
fn block_at(blocks: &[(usize, Option<Block>)], at: usize) -> Option<Block> {
    let k = blocks.partition_point(|&(p, _)| p < at);
    if k == 0 {
        None
    } else {
        blocks[k - 1].1
    }
}

/// Each word in code that starts with a capital letter: where it starts and ends.
fn capital_words<'a>(b: &'a [u8], mask: &'a [bool]) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let s = i;
            i += 1;
            if mask[s] && b[s].is_ascii_uppercase() && (s == 0 || !is_word(b[s - 1])) {
                i = (s..b.len()).find(|&e| !is_word(b[e])).unwrap_or(b.len());
                return Some((s, i));
            }
        }
        None
    })
}

/// Every `NAME(...)` whose name is all capitals (a macro, by convention): where the name
/// starts, and its parentheses.
fn capital_calls(b: &[u8], mask: &[bool]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut resume = 0;
    for (s, end) in capital_words(b, mask) {
        let open = skip_ws(b, mask, end);
        if s < resume || !capitals(&b[s..end]) || b.get(open) != Some(&b'(') {
            continue;
        }
        // (Catch2's `TEMPLATE_TEST_CASE_SIG(...)` lists its instantiations: a few KB)
        if let Some(close) = closing(b, mask, open, 4096) {
            out.push((s, open, close));
            resume = close + 1;
        }
    }
    out
}

/// Whether `s` starts its line and the line above is a directive (`#pragma omp parallel for`).
fn after_directive(b: &[u8], s: usize) -> bool {
    let line_start = b[..s]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    if !b[line_start..s].iter().all(|c| *c == b' ' || *c == b'\t') || line_start == 0 {
        return false;
    }
    let prev_start = b[..line_start - 1]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    b[prev_start..line_start]
        .trim_ascii_start()
        .starts_with(b"#")
}

fn loop_macro_blocks(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut blocks: Option<Vec<(usize, Option<Block>)>> = None;
    // (names not all capitals too: RELION's `FOR_ALL_DIRECT_ELEMENTS_IN_MULTIDIMARRAY_ptr(v,
    // n, ptr)`; a call before a block at a statement's start in code is no C++)
    let mut calls = capital_calls(b, mask);
    // (a name with an underscore and a capital: a constructor, `Callback(Callback &&cb) {`,
    // is neither, where a class the analysis took for code holds one)
    let macro_like = |w: &[u8]| w.contains(&b'_') && w.iter().any(u8::is_ascii_uppercase);
    calls.extend(
        calls_before_blocks(b, mask)
            .filter(|&(s, o, _)| !capitals(&b[s..o]) && macro_like(&b[s..o])),
    );
    for (s, open, close) in calls {
        let brace = skip_ws(b, mask, close + 1);
        let at_statement = before(b, mask, s)
            .is_none_or(|p| matches!(b[p], b';' | b'{' | b'}' | b')'))
            || b[..s].trim_ascii_end().ends_with(b"else")
            || after_directive(b, s);
        if b.get(brace) != Some(&b'{') || !at_statement || b[open..close].contains(&b'"') {
            continue;
        }
        // a space or tab of the line the `{` is on, so no line moves
        let Some(slot) = (close + 1..brace)
            .rev()
            .find(|&k| matches!(b[k], b' ' | b'\t'))
        else {
            continue;
        };
        if b[slot..brace].contains(&b'\n') {
            continue;
        }
        let blocks = blocks.get_or_insert_with(|| enclosing_blocks(b, mask));
        if block_at(blocks, s) == Some(Block::Code) {
            edits.push((slot, slot + 1, Some(b';')));
        }
    }
}

/// Every `name(...)` directly before a `{` whose name is no keyword that takes parentheses
/// before a block (`if`, `for`, `while`, `switch`, `catch`, ...): where the name starts, its
/// end and the closing parenthesis.
fn calls_before_blocks<'a>(
    b: &'a [u8],
    mask: &'a [bool],
) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
    const KEYWORDS: &[&[u8]] = &[
        b"if",
        b"for",
        b"while",
        b"switch",
        b"catch",
        b"constexpr",
        b"__launch_bounds__",
        b"noexcept",
        b"decltype",
        b"requires",
        b"throw",
        b"alignas",
        b"operator",
    ];
    memchr::memchr_iter(b'{', b).filter_map(move |brace| {
        if !mask[brace] {
            return None;
        }
        let close = before(b, mask, brace)?;
        if b[close] != b')' {
            return None;
        }
        // the `(` that opens it, within 4 KB, no string inside
        let open = super::grammar_gaps::opening_paren(b, mask, close, b"\";{}")?;
        let end = before(b, mask, open).filter(|&p| is_word(b[p]))? + 1;
        let name = word_before(b, end);
        let s = end - name.len();
        let plain = !name.is_empty() && !name[0].is_ascii_digit() && !KEYWORDS.contains(&name);
        plain.then_some((s, end, close))
    })
}

/// An all-capitals macro at the start of a statement whose arguments hold statements (a `;`
/// outside any bracket, or another such macro: dispatches nest) after a string (the
/// dispatch's name): from the name to the comma after the string becomes `{`, the closing
/// parenthesis `}`.
fn statement_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut blocks: Option<Vec<(usize, Option<Block>)>> = None;
    let mut resume = 0;
    // the commas after which a dispatch's statements start: a dispatch may follow one
    let mut statement_commas = Vec::new();
    for (s, _) in capital_words(b, mask) {
        let after_comma = || before(b, mask, s).is_some_and(|p| statement_commas.contains(&p));
        if s < resume || !(at_statement(b, mask, s) || after_comma()) {
            continue;
        }
        let mut mine = Vec::new();
        let Some((end, body)) = dispatch_block(b, mask, s, &mut mine) else {
            continue;
        };
        let blocks = blocks.get_or_insert_with(|| enclosing_blocks(b, mask));
        match block_at(blocks, s) {
            Some(Block::Code) => {
                edits.append(&mut mine);
                // statements without a string before them are read on for nested dispatches
                if body < end {
                    statement_commas.push(body);
                    resume = body + 1;
                } else {
                    resume = end + 1;
                }
            }
            // `REGISTER_LOGITS_TRANSFORM(params, logits, ..., { return logits; })` in a class
            // (FlashInfer's variants): a macro that defines a member from the block it is
            // given; the block stays as the body of a member `void _()`
            Some(Block::Class) if b[end] == b'{' && end - s >= 8 => {
                // (the name and arguments are blanked after the eight bytes written over them)
                for e in mine.iter_mut().filter(|e| e.0 == s && e.2.is_none()) {
                    e.0 = s + 8;
                }
                edits.append(&mut mine);
                for (k, c) in b"void _()".iter().enumerate() {
                    edits.push((s + k, s + k + 1, Some(*c)));
                }
                resume = end + 1;
            }
            _ => {}
        }
    }
}

/// The edits that make the dispatch macro named at `s` a block, where it closes (where its
/// block opens, when its last argument is one), and the comma its statements follow when they
/// are to be read for nested dispatches (else the close again).
fn dispatch_block(
    b: &[u8],
    mask: &[bool],
    s: usize,
    edits: &mut Vec<Edit>,
) -> Option<(usize, usize)> {
    let mut i = s;
    while i < b.len() && is_word(b[i]) {
        i += 1;
    }
    let open = skip_ws(b, mask, i);
    if !capitals(&b[s..i]) || b.get(open) != Some(&b'(') {
        return None;
    }
    // the comma after the first string at depth zero, a `;` at depth zero after it, and the
    // closing parenthesis (`closing` stops at a `;`); without a string, the commas at depth
    // zero (template arguments and launch configurations skipped) and the first `;`
    let (mut depth, mut string_seen, mut start, mut statements) = (0i32, false, None, false);
    let (mut commas, mut first_semicolon) = (Vec::new(), None);
    let mut close = None;
    let mut k = open + 1;
    let limit = b.len().min(open + (1 << 16));
    while k < limit {
        if !mask[k] {
            k += 1;
            continue;
        }
        match b[k] {
            b'"' | b'\'' => {
                string_seen |= depth == 0 && b[k] == b'"';
                k = super::literal_end(b, k) + 1;
                continue;
            }
            b'<' if depth == 0 => {
                if let Some(end) = angle_end(b, mask, k, limit) {
                    k = end + 1;
                    continue;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' if depth == 0 => {
                close = Some(k);
                break;
            }
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 && !string_seen => commas.push(k),
            b',' if depth == 0 && string_seen && start.is_none() => {
                start = Some(k);
                // the statement argument may itself be a dispatch
                let next = skip_ws(b, mask, k + 1);
                if b.get(next).is_some_and(u8::is_ascii_uppercase) {
                    let mut inner = Vec::new();
                    if let Some((end, _)) =
                        dispatch_block(b, mask, next, &mut inner).filter(|&(end, _)| b[end] == b')')
                    {
                        edits.append(&mut inner);
                        statements = true;
                        k = end + 1;
                        continue;
                    }
                }
            }
            b';' if depth == 0 => {
                first_semicolon.get_or_insert(k);
                statements |= start.is_some();
            }
            _ => {}
        }
        k += 1;
    }
    let close = close?;
    let mut body = close;
    // (the statements end as statements do: `CALL(a, b; c)` is no dispatch)
    // (or in a nested dispatch: `SW(a, T, dim3 g(1); COND(c, k, f(););)`)
    let ends_a_statement = before(b, mask, close).is_some_and(|p| match b[p] {
        b';' | b'}' => true,
        b')' => partner(b, mask, p, 1 << 16)
            .and_then(|o| before(b, mask, o))
            .filter(|&e| is_word(b[e]))
            .is_some_and(|e| {
                let name = word_before(b, e + 1);
                let start = e + 1 - name.len();
                dispatch_block(b, mask, start, &mut Vec::new()).is_some()
            }),
        _ => false,
    });
    if start.is_none() && !string_seen {
        if let Some(comma) =
            leading_arguments_end(b, mask, &commas, first_semicolon, ends_a_statement)
        {
            start = Some(comma);
            statements = true;
            body = comma;
        }
    }
    let (Some(comma), true) = (start, statements) else {
        // `DISPATCH_GRAN_K(granK, GRAN_K, { launch<GRAN_K>(...); })`: the last argument is
        // already a block, which stays; the name and the other arguments are blanked
        let end = b[..close].trim_ascii_end().len();
        if end == 0 || b[end - 1] != b'}' {
            return None;
        }
        let mut depth = 0i32;
        let mut k = end;
        while k > open {
            k -= 1;
            if !mask[k] {
                continue;
            }
            match b[k] {
                b'}' | b')' | b']' => depth += 1,
                b'{' | b'(' | b'[' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if b[k] != b'{' || b[..k].trim_ascii_end().last() != Some(&b',') {
            return None;
        }
        // a block holds statements; `{{0.0}}` is a braced list (`RUN_TEST(f, {{1, 2}}, {{0.0}})`)
        if !(k..end).any(|p| mask[p] && b[p] == b';') {
            return None;
        }
        edits.push((s, k, None));
        edits.push((close, close + 1, None));
        // what the block holds is read on from its `{`: dispatches nest
        return Some((k, k));
    };
    edits.push((s, comma + 1, Some(b'{')));
    edits.push((close, close + 1, Some(b'}')));
    Some((close, body))
}

/// `TYPE_SWITCH(dtype, T, using C = float; launch<T, C><<<g, b>>>(...);)` (TransformerEngine's
/// type switches): no string names the dispatch, so its statements start after the last comma
/// at depth zero before its first `;` at depth zero, or, with no such `;`, after the last
/// comma when a nested dispatch or an `if`/`for`/`while`/`switch` follows it; statements end
/// in a `;` or a `}` (`CALL(a, b; c)` is no dispatch). The comma must
/// end a leading argument (a macro whose every argument is statements is
/// [`statement_list_macros`]'s). A nested dispatch is rewritten when the statements are read.
fn leading_arguments_end(
    b: &[u8],
    mask: &[bool],
    commas: &[usize],
    first_semicolon: Option<usize>,
    ends_a_statement: bool,
) -> Option<usize> {
    let comma = match first_semicolon {
        Some(semi) => *commas.iter().rev().find(|&&c| c < semi)?,
        None => *commas.last()?,
    };
    if before(b, mask, comma).is_none_or(|p| matches!(b[p], b';' | b'(' | b',')) {
        return None;
    }
    let next = skip_ws(b, mask, comma + 1);
    if first_semicolon.is_some() && ends_a_statement
        || b.get(next).is_some_and(u8::is_ascii_uppercase)
            && dispatch_block(b, mask, next, &mut Vec::new()).is_some()
    {
        return Some(comma);
    }
    if !ends_a_statement {
        return None;
    }
    const STATEMENTS: &[&[u8]] = &[b"if", b"for", b"while", b"switch", b"do"];
    let word_end = (next..b.len()).find(|&e| !is_word(b[e])).unwrap_or(b.len());
    STATEMENTS.contains(&&b[next..word_end]).then_some(comma)
}

/// Where the template argument list opened by the `<` at `at` closes, when it is one: the `<`
/// follows a name with no space between, and its `>` comes before any `;`, brace or unbalanced
/// parenthesis. A launch's `<<<` closes at its `>>>`.
fn angle_end(b: &[u8], mask: &[bool], at: usize, limit: usize) -> Option<usize> {
    if b[at..].starts_with(b"<<<") {
        let end = memchr::memmem::find(&b[at..limit], b">>>")?;
        return Some(at + end + 2);
    }
    if at == 0 || !is_word(b[at - 1]) || matches!(b.get(at + 1), Some(b'<' | b'=')) {
        return None;
    }
    let (mut angles, mut parens) = (0usize, 0usize);
    for k in at..limit {
        if !mask[k] {
            continue;
        }
        match b[k] {
            b'(' | b'[' => parens += 1,
            b')' | b']' => parens = parens.checked_sub(1)?,
            b'<' if parens == 0 => angles += 1,
            b'>' if parens == 0 => {
                angles -= 1;
                if angles == 0 {
                    return Some(k);
                }
            }
            b';' | b'{' | b'}' | b'"' => return None,
            _ => {}
        }
    }
    None
}

fn template_triple_angles(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut i = 0;
    while i + 3 <= b.len() {
        // `>>>`, and `>>` where only a template can close (`std::unique_ptr<A<B>>,`: the
        // grammar reads a qualified template's `>>` before a comma as a shift)
        let closes = &b[i..i + 2] == b">>"
            && (b[i + 2] == b'>' || {
                let n = skip_ws(b, mask, i + 2);
                matches!(b.get(n), Some(b',' | b')'))
            });
        if !(mask[i] && closes) || (i > 0 && b[i - 1] == b'>') {
            i += 1;
            continue;
        }
        // a launch's `<<<` earlier in the statement makes it a launch
        let stmt_start = (0..i)
            .rev()
            .find(|&p| mask[p] && matches!(b[p], b';' | b'{' | b'}'))
            .map_or(0, |p| p + 1);
        let launch = b[stmt_start..i].windows(3).any(|w| w == b"<<<");
        if !launch {
            // the `<` the first `>` closes, and what is between
            let mut p = i;
            let mut ok = false;
            while p > stmt_start {
                p -= 1;
                match b[p] {
                    b'<' => {
                        ok = true;
                        break;
                    }
                    // (and constant arithmetic: CuTe's `cute::Int<tN / kVec>>>{}`)
                    c if is_word(c)
                        || matches!(
                            c,
                            b':' | b',' | b' ' | b'*' | b'&' | b'/' | b'+' | b'-' | b'(' | b')'
                        ) => {}
                    _ => break,
                }
            }
            if ok && p > 0 && is_word(b[p - 1]) {
                for (k, c) in b.iter().enumerate().take(i + 1).skip(p) {
                    if !is_word(*c) {
                        edits.push((k, k + 1, Some(b'_')));
                    }
                }
            }
        }
        i += 2;
    }
}

fn braced_defaults(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for i in 0..b.len() {
        if !(mask[i] && b[i] == b'=')
            || matches!(b.get(i.wrapping_sub(1)), Some(b'=' | b'!' | b'<' | b'>'))
        {
            continue;
        }
        let open = skip_ws(b, mask, i + 1);
        if b.get(open) != Some(&b'{') {
            continue;
        }
        let Some(close) = closing(b, mask, open, 256) else {
            continue;
        };
        if matches!(b.get(skip_ws(b, mask, close + 1)), Some(b',' | b')')) {
            edits.push((open, close + 1, Some(b'0')));
        }
    }
}

fn lambda_specifiers(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for word in [&b"__device__"[..], b"__host__"] {
        for at in words(b, mask, word) {
            // back over other specifiers to the capture's `]`
            let mut p = at;
            while let Some(q) = before(b, mask, p) {
                let w = word_before(b, q + 1);
                if w == b"__device__" || w == b"__host__" {
                    p = q + 1 - w.len();
                    continue;
                }
                p = q;
                break;
            }
            if b.get(p) != Some(&b']') {
                continue;
            }
            // `a[i] __device__` is never C++; a capture is followed by `(` or `{`
            let mut next = skip_ws(b, mask, at + word.len());
            while b[next..].starts_with(b"__device__") || b[next..].starts_with(b"__host__") {
                next = skip_ws(b, mask, next + if b[next + 2] == b'd' { 10 } else { 8 });
            }
            if matches!(b.get(next), Some(b'(' | b'{')) {
                edits.push((at, at + word.len(), None));
            }
        }
    }
}

/// `[=] MGPU_DEVICE(int index) {...}` where the header defining the macro is not read: a
/// capitals name between a lambda's capture and its parameters or body can only be a
/// specifier macro, and is blanked. A capture is a `[...]` where an expression starts (after
/// `(`, `,`, `=`, `{`, `;` or `return`).
fn lambda_specifier_macros(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for close in (0..b.len()).filter(|&i| mask[i] && b[i] == b']') {
        let w = skip_ws(b, mask, close + 1);
        let mut e = w;
        while e < b.len() && is_word(b[e]) {
            e += 1;
        }
        if e == w || !capitals(&b[w..e]) || !matches!(b.get(skip_ws(b, mask, e)), Some(b'(' | b'{'))
        {
            continue;
        }
        // the capture's `[`, at most a few hundred bytes back, and what comes before it
        let Some(open) = partner(b, mask, close, 256) else {
            continue;
        };
        let starts_expression = match before(b, mask, open) {
            None => false,
            Some(p) => {
                matches!(b[p], b'(' | b',' | b'=' | b'{' | b';')
                    || (b[p] == b'n' && word_before(b, p + 1) == b"return")
            }
        };
        if starts_expression {
            edits.push((w, e, None));
        }
    }
}

fn typename_casts(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"typename") {
        // a qualified name, template arguments allowed
        let mut i = skip_ws(b, mask, at + 8);
        let mut qualified = false;
        loop {
            let s = i;
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            if s == i {
                break;
            }
            i = skip_ws(b, mask, i);
            if b.get(i) == Some(&b'<') {
                match closing(b, mask, i, 512) {
                    Some(c) => i = skip_ws(b, mask, c + 1),
                    None => break,
                }
            }
            if b[i..].starts_with(b"::") {
                qualified = true;
                i = skip_ws(b, mask, i + 2);
                if b[i..].starts_with(b"template") && b.get(i + 8).is_some_and(|c| !is_word(*c)) {
                    i = skip_ws(b, mask, i + 8);
                }
                continue;
            }
            break;
        }
        if !qualified || !matches!(b.get(i), Some(b'(' | b'{')) {
            continue;
        }
        // `(*fp)` after a type is a declarator, not a cast
        if b[i] == b'(' && matches!(b.get(skip_ws(b, mask, i + 1)), Some(b'*' | b'&')) {
            continue;
        }
        edits.push((at, at + 8, None));
    }
}

fn return_arguments(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"return") {
        let Some(p) = before(b, mask, at) else {
            continue;
        };
        if b[p] != b',' {
            continue;
        }
        // inside a call's parentheses: the next `)` at depth zero comes before any `;`
        let mut depth = 0i32;
        let mut inside = false;
        for &c in b[at..].iter().take(512) {
            match c {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    inside = true;
                    break;
                }
                b')' => depth -= 1,
                b';' | b'{' | b'}' => break,
                _ => {}
            }
        }
        if inside {
            edits.push((at, at + 6, None));
        }
    }
}

/// `return(unsigned(List.size()));`, `if(unsigned(ct)<n)` (DualSPHysics' headers): after an
/// opening parenthesis the grammar takes `unsigned` for the start of a C cast and fails on
/// the functional cast that follows. `uint32_t(...)`, the same conversion under a name of the
/// same length, parses.
fn unsigned_casts_in_parentheses(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"unsigned") {
        let open = super::grammar_gaps::skip_ws(b, at + 8);
        if b.get(open) != Some(&b'(') || before(b, mask, at).map(|p| b[p]) != Some(b'(') {
            continue;
        }
        for (k, &c) in b"uint32_t".iter().enumerate() {
            edits.push((at + k, at + k + 1, Some(c)));
        }
    }
}

fn capitals(name: &[u8]) -> bool {
    name.len() > 1
        && name.iter().any(u8::is_ascii_uppercase)
        && name.iter().enumerate().all(|(k, c)| {
            c.is_ascii_uppercase()
                || c.is_ascii_digit()
                || *c == b'_'
                // `SWITCH_FP4x2_ONLY`: a digit's `x`
                || (*c == b'x' && k > 0 && name[k - 1].is_ascii_digit())
        })
}

fn sfinae_macros(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for at in words(b, mask, b"template") {
        let open = skip_ws(b, mask, at + 8);
        if b.get(open) != Some(&b'<') {
            continue;
        }
        let Some(close) = closing(b, mask, open, 2048) else {
            continue;
        };
        // top-level commas of the head
        let mut parts = Vec::new();
        let (mut depth, mut s) = (0i32, open + 1);
        for (i, c) in b.iter().enumerate().take(close).skip(open + 1) {
            match c {
                b'(' | b'[' | b'{' | b'<' => depth += 1,
                b')' | b']' | b'}' | b'>' => depth -= 1,
                b',' if depth == 0 => {
                    parts.push((s, i));
                    s = i + 1;
                }
                _ => {}
            }
        }
        parts.push((s, close));
        for (k, &(s, e)) in parts.iter().enumerate().skip(1) {
            let name_at = skip_ws(b, mask, s);
            let mut n = name_at;
            while n < e && is_word(b[n]) {
                n += 1;
            }
            let paren = skip_ws(b, mask, n);
            if !capitals(&b[name_at..n]) || b.get(paren) != Some(&b'(') {
                continue;
            }
            let whole = closing(b, mask, paren, 2048)
                .is_some_and(|c| b[c + 1..e].iter().all(u8::is_ascii_whitespace));
            if whole {
                // the comma before it too
                edits.push((parts[k - 1].1, e, None));
            }
        }
        // `std::enable_if_t<C, T>* = nullptr`: the grammar wants the parameter named
        for &(s, e) in &parts {
            if let Some(star) = (s..e).rev().find(|&j| b[j] == b'*') {
                let eq = skip_ws(b, mask, star + 1);
                if eq > star + 1 && eq < e && b[eq] == b'=' && b[star + 1] == b' ' {
                    edits.push((star + 1, star + 2, Some(b'_')));
                }
            }
        }
    }
}

/// Whether device code for sm_90 takes the branch of libcu++'s target query `q`.
fn device_takes(q: &[u8]) -> bool {
    let q: Vec<u8> = q
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let q = q.as_slice();
    let sm = |prefix: &[u8]| {
        q.strip_prefix(prefix)
            .and_then(|r| std::str::from_utf8(r).ok())
            .and_then(|r| r.trim_end_matches(')').parse::<u32>().ok())
    };
    match q {
        b"NV_IS_DEVICE" | b"NV_ANY_TARGET" => true,
        b"NV_IS_HOST" | b"NV_NO_TARGET" => false,
        _ => {
            if let Some(v) = sm(b"NV_PROVIDES_SM_") {
                v <= 90
            } else if let Some(v) = sm(b"NV_IS_EXACTLY_SM_") {
                v == 90
            } else {
                false
            }
        }
    }
}

/// `NV_IF_TARGET(q, (a), (b))`, `NV_IF_ELSE_TARGET(q, (a), (b))` and `NV_DISPATCH_TARGET(q1,
/// (a), q2, (b), ...)`: the branch device code takes becomes a block `{ a }`, the rest is
/// blanked (none taken: all of it).
fn target_dispatch(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    for word in [
        &b"NV_IF_TARGET"[..],
        b"NV_IF_ELSE_TARGET",
        b"NV_DISPATCH_TARGET",
    ] {
        for at in words(b, mask, word) {
            let open = skip_ws(b, mask, at + word.len());
            if b.get(open) != Some(&b'(') {
                continue;
            }
            // (its arguments are statements: `;` does not end it, as it does a call)
            let Some(close) = partner(b, mask, open, 1 << 16) else {
                continue;
            };
            // the arguments at depth one
            let mut args = Vec::new();
            let (mut depth, mut start) = (0usize, open + 1);
            for i in open + 1..close {
                if !mask[i] {
                    continue;
                }
                match b[i] {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    b',' if depth == 0 => {
                        args.push((start, i));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            args.push((start, close));
            let trim = |(s, e): (usize, usize)| {
                let s = skip_ws(b, mask, s);
                let mut e = e;
                while e > s && b[e - 1].is_ascii_whitespace() {
                    e -= 1;
                }
                (s, e)
            };
            let args: Vec<(usize, usize)> = args.into_iter().map(trim).collect();
            // which code argument is kept
            let kept = if word == b"NV_DISPATCH_TARGET" {
                args.chunks(2)
                    .find(|p| p.len() == 2 && device_takes(&b[p[0].0..p[0].1]))
                    .map(|p| p[1])
            } else {
                match (args.first(), args.get(1), args.get(2)) {
                    (Some(q), Some(a), _) if device_takes(&b[q.0..q.1]) => Some(*a),
                    (Some(_), _, Some(e)) => Some(*e),
                    _ => None,
                }
            };
            let kept = kept.filter(|(s, e)| e > s && b[*s] == b'(' && b[*e - 1] == b')');
            match kept {
                Some((s, e)) => {
                    edits.push((at, s, None));
                    edits.push((s, s + 1, Some(b'{')));
                    edits.push((e - 1, e, Some(b'}')));
                    edits.push((e, close + 1, None));
                }
                None => edits.push((at, close + 1, None)),
            }
        }
    }
}

/// Whether byte `p` is on a preprocessor directive's line.
fn on_directive_line(b: &[u8], p: usize) -> bool {
    let start = b[..p]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |x| x + 1);
    b[start..p].trim_ascii_start().starts_with(b"#")
}

fn test_blocks(b: &[u8], mask: &[bool], edits: &mut Vec<Edit>) {
    let mut blocks: Option<Vec<(usize, Option<Block>)>> = None;
    for (s, open, close) in capital_calls(b, mask) {
        let body = skip_ws(b, mask, close + 1);
        let has_string = b[open..close].contains(&b'"');
        // (after a directive line: `#include <catch2/catch_test_macros.hpp>` then the first
        // test)
        let at_statement = before(b, mask, s)
            .is_none_or(|p| matches!(b[p], b';' | b'{' | b'}') || on_directive_line(b, p));
        if b.get(body) != Some(&b'{') || !at_statement {
            continue;
        }
        if !has_string {
            // `TYPED_TEST(HausdorffTest, 500Spaces100Points) {`: gtest pastes the name into
            // identifiers, so it may start with a digit; the grammar reads a malformed number
            digit_led_names(b, mask, open..close, edits);
            continue;
        }
        let blocks = blocks.get_or_insert_with(|| enclosing_blocks(b, mask));
        if block_at(blocks, s).is_some() {
            edits.push((s, close + 1, None));
        } else if close + 1 - s >= 8 {
            // `void _()` and spaces, as long as the invocation was
            edits.push((s, close + 1, None));
            for (k, c) in b"void _()".iter().enumerate() {
                edits.push((s + k, s + k + 1, Some(*c)));
            }
        }
    }
}

/// Words in `range` that start with a digit and are no number (three letters or more, not
/// hexadecimal): their leading digits become underscores.
fn digit_led_names(b: &[u8], mask: &[bool], range: std::ops::Range<usize>, edits: &mut Vec<Edit>) {
    let mut k = range.start;
    while k < range.end {
        if !(mask[k] && b[k].is_ascii_digit() && (k == 0 || !is_word(b[k - 1]))) {
            k += 1;
            continue;
        }
        let end = k + b[k..range.end].iter().take_while(|c| is_word(**c)).count();
        let word = &b[k..end];
        let letters = word.iter().filter(|c| c.is_ascii_alphabetic()).count();
        let hex = word.len() > 1 && word[0] == b'0' && matches!(word[1], b'x' | b'X' | b'b' | b'B');
        if letters >= 3 && !hex {
            for p in k..k + word.iter().take_while(|c| c.is_ascii_digit()).count() {
                edits.push((p, p + 1, Some(b'_')));
            }
        }
        k = end;
    }
}

#[cfg(test)]
mod tests {
    fn rewrite(src: &str) -> String {
        let mask = vec![true; src.len()];
        let mut edits = Vec::new();
        super::rewrite(src, src.as_bytes(), &mask, &mut edits);
        let mut out = src.as_bytes().to_vec();
        for (s, e, first) in edits {
            crate::preprocess::blank_range(&mut out, s..e);
            if let Some(c) = first {
                out[s] = c;
            }
        }
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out.len(), src.len());
        out
    }

    #[test]
    fn unsigned_functional_casts_after_a_parenthesis_are_spelled_uint32_t() {
        assert_eq!(
            rewrite("unsigned F()const{ return(unsigned(List.size())); } if(unsigned(ct)<n)"),
            "unsigned F()const{ return(uint32_t(List.size())); } if(uint32_t(ct)<n)"
        );
        let kept = "return unsigned(x); f((unsigned)x); unsigned (*fp)(int);";
        assert_eq!(rewrite(kept), kept);
        let parsed = crate::parse("int f(float x) { return(unsigned(x)+1); }").unwrap();
        assert!(parsed.model.error_regions.is_empty());
    }

    #[test]
    fn extended_lambdas_lose_their_specifiers() {
        assert_eq!(
            rewrite("f(n, [out=p] __device__ (size_t i) { out[i] = 0; }, [] __host__ __device__(int a) {});"),
            "f(n, [out=p]            (size_t i) { out[i] = 0; }, []                    (int a) {});"
        );
        let kept = "a[i] = 1; __device__ int x; int b[4] __device__;";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn specifier_macros_of_lambdas_defined_nowhere_are_blanked() {
        assert_eq!(
            rewrite("auto k = [=] MGPU_DEVICE(int i) { out[i] = 0; }; f(n, [] HD { g(); });"),
            "auto k = [=]            (int i) { out[i] = 0; }; f(n, []    { g(); });"
        );
        // a subscript before a macro call is no capture
        let kept = "x = a[i] + B(3); int v[N] ALIGN(16);";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn functional_casts_through_dependent_types() {
        assert_eq!(
            rewrite("return typename G::Arguments(a, b); auto D = typename F::D{}; x = typename L::template C<2>(1);"),
            "return          G::Arguments(a, b); auto D =          F::D{}; x =          L::template C<2>(1);"
        );
        let kept = "template <typename T, typename U = typename T::V> void f(typename T::W w, typename T::X (*fp)(int));";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn statements_given_to_dispatch_macros_become_a_block() {
        assert_eq!(
            rewrite("void f() { DS(t, \"n\", using T = float; g<T, int>(p, \"s;\");); }"),
            "void f() { {          using T = float; g<T, int>(p, \"s;\");}; }"
        );
        // a lambda's statements are inside braces, a call outside a function is no statement
        assert_eq!(
            rewrite("void f() { AB(t, 0, \"n\", CD(u, 1, \"n\", g<T, U>(p, q);)) }"),
            "void f() { {             {             g<T, U>(p, q);}} }"
        );
        let kept = "void f() { D(t, \"n\", [&] { g(); }); } X(a, \"b\", c;);";
        assert_eq!(rewrite(kept), kept);
        let parsed = crate::parse(
            "void f(int t) {\n  DISPATCH(\n    t, \"n\",\n    launch<T, float>(\n      reinterpret_cast<T*>(p), x););\n}\n",
        )
        .unwrap();
        assert!(parsed.model.error_regions.is_empty());
    }

    #[test]
    fn type_switches_without_a_name_become_blocks() {
        // TransformerEngine's `TYPE_SWITCH(dtype, T, ...)`: the statements start after the last
        // comma before the first `;` (template arguments and launch configurations skipped);
        // switches nest, also as a block or an `if`
        let src = "void f() {\n  SW(a, T,\n    SW(b, U, k<T, U><<<g, 4, 0, s>>>(p, n);\n      using C = T;););\n}";
        assert_eq!(
            rewrite(src),
            "void f() {\n  {       \n    {        k<T, U><<<g, 4, 0, s>>>(p, n);\n      using C = T;};};\n}"
        );
        let src = "void f() {\n  SW(a, T, dim3 g(1); COND(c, kC, k<<<g, 1>>>(p);))\n}";
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
        let src = "void f() { SW(a, T, COND(c, kC, if (kC) { g<T>(); })); }";
        assert_eq!(
            rewrite(src),
            "void f() { {        {           if (kC) { g<T>(); }}}; }"
        );
        for src in [
            "void f() {\n  SW(x.t, T, SW_FP4x2_ONLY(y, 2, U, dim3 g(1, 2); k<<<g, 1>>>(p);););\n}",
            "void f() {\n  COND(c, kC, { using Cfg = K<kC>; SW(t, T, h<Cfg, T>(p, q);); });\n}",
        ] {
            let parsed = crate::parse(src).unwrap();
            assert!(parsed.model.error_regions.is_empty(), "{src}");
        }
        // a call's arguments with a `<` comparison and no statements stay a call
        let kept = "void f() { CHECK(a < b, c); SW(a, T, g(x)); }";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn blocks_given_to_dispatch_macros_stay_blocks() {
        let out = rewrite(
            "void run(float* a, int g) {\n  DISPATCH_GRAN_K(g, GRAN_K, {\n    DISPATCH_N(n, N, {\n      launch<GRAN_K, N>(a);\n    })\n  })\n}\nstruct V {\n  REGISTER_TRANSFORM(params, logits, {\n    return logits;\n  })\n};",
        );
        assert!(!out.contains("DISPATCH"), "{out}");
        assert!(out.contains("launch<GRAN_K, N>(a);"), "{out}");
        assert!(out.contains("void _()"), "{out}");
        assert_eq!(out.matches('{').count(), out.matches('}').count());
        let braced_lists = "void t() {\n  RUN_TEST((this->template f<int>), {{1, 2}}, {{0.0}});\n}";
        assert_eq!(rewrite(braced_lists), braced_lists);
    }

    #[test]
    fn returns_given_to_macros() {
        assert_eq!(
            rewrite("CHECK(cudaFree(p), return false); if (x) return f(a, b);"),
            "CHECK(cudaFree(p),        false); if (x) return f(a, b);"
        );
    }

    #[test]
    fn sfinae_macros_in_template_heads() {
        assert_eq!(
            rewrite("template <typename T, CUDF_ENABLE_IF(std::is_integral_v<T> && (N > 2))>\nvoid f();"),
            "template <typename T                                                  >\nvoid f();"
        );
        let kept = "template <typename T, int N = MAX(2, 3)> void g();";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn triple_angles_closing_templates() {
        assert_eq!(
            rewrite("std::pair<std::unique_ptr<ns::vec<size_type>>, std::unique_ptr<ns::vec<size_type>>>\nf(int a); k<<<g, b>>>(p);"),
            "std::pair<std::unique_ptr<ns::vec_size_type_>, std::unique_ptr<ns::vec_size_type_>>\nf(int a); k<<<g, b>>>(p);"
        );
    }

    #[test]
    fn triple_angles_around_arithmetic() {
        assert_eq!(
            rewrite("f(c::L<c::S<c::I<t>, c::I<8>>, c::S<c::_1, c::I<t / (k + 1)>>>{});"),
            "f(c::L<c::S<c::I<t>, c::I_8_>, c::S<c::_1, c::I_t____k___1__>>{});"
        );
    }

    #[test]
    fn deleted_free_functions() {
        assert_eq!(
            rewrite("template <typename T> T rmin() = delete; void g(int) const = delete; void h() { delete p; delete[] q; }"),
            "template <typename T> T rmin()         ; void g(int) const         ; void h() { delete p; delete[] q; }"
        );
    }

    #[test]
    fn empty_last_macro_arguments() {
        assert_eq!(
            rewrite("void f() { CHECK(cudaMalloc(&p, n), ); g(a,b); }"),
            "void f() { CHECK(cudaMalloc(&p, n)  ); g(a,b); }"
        );
        // OptiX's declarations: empty arguments in the middle, a semantic of two words
        assert_eq!(
            rewrite(
                "rtDeclareVariable(float3, p, , );\nrtDeclareVariable(float3, h, attribute h, );"
            ),
            "rtDeclareVariable(float3, p    );\nrtDeclareVariable(float3, h,           h  );"
        );
        // a parameter of two words is no macro's argument where nothing is empty
        let kept = "void g(unsigned x, float y); T(int a, S b);";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn macros_given_statement_lists() {
        assert_eq!(
            rewrite("void f() {\n  ITER((k<<<g, b>>>(p, n));\n       , w += c; n += 1;)\n  LOG(a, b);\n}"),
            "void f() {\n      {(k<<<g, b>>>(p, n));\n         w += c; n += 1;}\n  LOG(a, b);\n}"
        );
        // an expression's commas, or a macro outside a function body, are left alone
        let kept = "void f() { CALL(a, b; c); } ITER(x;, y;)";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn shifts_are_left_alone() {
        let kept = "x = a >> 2, y = (b >> c); f(a >> 1, v<w<T>> (0)); z = t >> (s);";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn unnamed_pointer_parameters_and_braced_defaults() {
        assert_eq!(
            rewrite("template <typename T, std::enable_if_t<C<T>, T>* = nullptr> void f(X const& x = {}, int y = {1}) { a = {}; if (a == {}) {} }"),
            "template <typename T, std::enable_if_t<C<T>, T>*_= nullptr> void f(X const& x = 0 , int y = 0  ) { a = {}; if (a == {}) {} }"
        );
    }

    #[test]
    fn loop_macros_before_a_block() {
        assert_eq!(
            rewrite("__global__ void k(float* o, int n) {\n  KERNEL_LOOP(i, n) {\n    o[i] = 0;\n  }\n  if (n) LOOP2(j, n)\n  {\n  }\n}"),
            "__global__ void k(float* o, int n) {\n  KERNEL_LOOP(i, n);{\n    o[i] = 0;\n  }\n  if (n) LOOP2(j, n)\n ;{\n  }\n}"
        );
        // a constructor in a class body, a function definition at file scope: left alone
        let kept = "struct S {\n  S() {}\n};\nMY_API(int) {\n}\n";
        assert_eq!(rewrite(kept), kept);
        assert_eq!(
            rewrite("void f(T* p) {\n  FOR_ALL_ptr(*this, n, p)\n  {\n  }\n}"),
            "void f(T* p) {\n  FOR_ALL_ptr(*this, n, p)\n ;{\n  }\n}"
        );
        // a constructor in a class below a directive with parentheses
        let kept =
            "#define R (0.5)\n#define S(a) \\\n  (a)\nclass C\n{\npublic:\n\tC()\n\t{\n\t}\n};";
        assert_eq!(rewrite(kept), kept);
        let kept = "template <class R, class... A>\nclass Callback<R(A...)>\n{\n    Callback(Callback &&cb)\n    {\n    }\n};";
        assert_eq!(rewrite(kept), kept);
        // (or a comment with them)
        let parsed =
            crate::parse("/* an atom (or more) */\nclass C\n{\npublic:\n\tC()\n\t{\n\t}\n};")
                .unwrap();
        assert!(parsed.model.error_regions.is_empty());
        // indented with tabs, every brace on its own line
        assert_eq!(
            rewrite("class C\n{\n\tvoid r()\n\t{\n\t\tFOR_ALL(d)\n\t\t{\n\t\t}\n\t}\n};"),
            "class C\n{\n\tvoid r()\n\t{\n\t\tFOR_ALL(d)\n\t;{\n\t\t}\n\t}\n};"
        );
        let kept = "void g() {\n  if (a) {\n  } else if (b) {\n  }\n  for (;;) {\n  }\n  auto l = [](int i) {\n  };\n  while (x) {\n  }\n}\nvoid h(int i) {\n}\n";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn specifiers_after_a_reference_return_type() {
        assert_eq!(
            rewrite("struct V { friend V& __host__ __device__ operator+=(V& a, V b); };\nfloat&& __device__ f(float* a);\nauto& [[D]] g(int i);"),
            "struct V { friend V __host__ __device__& operator+=(V& a, V b); };\nfloat __device__&& f(float* a);\nauto [[D]]& g(int i);"
        );
        let kept = "a = b & __ldg(p); V& operator+=(V& a); float* __device__ h();";
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn friends_first_and_operator_specializations() {
        assert_eq!(
            rewrite("struct A { __host__ __device__ inline friend bool operator>(A a, A b); __device__    constexpr friend A f(); };\ntemplate <> int S::operator()<ns::list_view>(int a) const;"),
            "struct A { friend __host__ __device__ inline bool operator>(A a, A b); friend    __device__ constexpr A f(); };\ntemplate <> int S::operator()               (int a) const;"
        );
        // (gpu-voxels: the specifiers on a line of their own; a directive's line is not one)
        assert_eq!(
            rewrite("  __host__ __device__\n  friend bool operator<(V a, V b);\n#define D __device__\nfriend V g();"),
            "  friend __host__\n  __device__ bool operator<(V a, V b);\n#define D __device__\nfriend V g();"
        );
        let kept = "friend class B; x = f.operator()(1); bool operator<(A a) const; fn.template operator()<0>();";
        assert_eq!(
            rewrite("CHECK(shape_.operator bool()); u = p->operator unsigned int();"),
            "CHECK(shape_.operator_bool()); u = p->operator_unsigned_int();"
        );
        assert_eq!(rewrite(kept), kept);
    }

    #[test]
    fn target_dispatch_keeps_the_device_branch() {
        let src = "void f() {\n  NV_DISPATCH_TARGET(\n    NV_IS_HOST, (check(a);),\n    NV_IS_DEVICE, (if (a) { x[i] = 0; }))\n  NV_IF_TARGET(NV_PROVIDES_SM_80, (y[i] = 1;), (y[i] = 2;));\n  NV_IF_ELSE_TARGET(NV_IS_HOST, (h();), (z[i] = 3;))\n}";
        let out = rewrite(src);
        assert!(!out.contains("check") && !out.contains("h()"), "{out}");
        assert!(out.contains("{if (a) { x[i] = 0; }}"), "{out}");
        assert!(
            out.contains("{y[i] = 1;}") && !out.contains("y[i] = 2"),
            "{out}"
        );
        assert!(out.contains("{z[i] = 3;}"), "{out}");
        let parsed = crate::parse(&format!("__device__ {src}")).unwrap();
        assert!(parsed.model.error_regions.is_empty(), "{out}");
    }

    #[test]
    fn a_test_block_after_an_include_line_is_one_too() {
        let src =
            "#include <catch2/catch_test_macros.hpp>\n\nTEST_CASE(\"Size\", \"\")\n{\n  f();\n}\n";
        let out = rewrite(src);
        assert!(out.contains("void _()"), "{out}");
    }

    #[test]
    fn test_framework_blocks() {
        let src = "namespace t {\nTEST_CASE(\"grid\", \"[enc]\") {\n  SECTION(fmt::format(\"{}\", n)) {\n    f();\n  }\n}\n}";
        let out = rewrite(src);
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "namespace t {",
                "void _()                   {",
                "                                {",
                "    f();",
                "  }",
                "}",
                "}"
            ]
        );
        let kept = "void f() { if (ok) { printf(\"x\"); } CHECK(\"y\"); }";
        assert_eq!(rewrite(kept), kept);
        assert_eq!(
            rewrite("TYPED_TEST(T, 500Spaces1e5) { f(0x1Fabc, 1e5f); }\nTEST(T, 32Bits) {}"),
            "TYPED_TEST(T, ___Spaces1e5) { f(0x1Fabc, 1e5f); }\nTEST(T, __Bits) {}"
        );
        assert_eq!(
            rewrite("RUN(this->template verify, a); b.template f<int>(x);"),
            "RUN(this->         verify, a); b.template f<int>(x);"
        );
    }
}
