//! GNU statement expressions in macro bodies (BART's and the Linux kernel's `#define MIN(x, y)
//! ({ __typeof(x) __x = (x); __typeof(y) __y = (y); (__x < __y) ? __x : __y; })`), which
//! the grammar has no rule for. One whose statements only declare names with initialisers,
//! its value the last, is the value with each name replaced by its initialiser: the same
//! value where the initialisers have no side effects, which is what such a macro is for (it
//! evaluates each argument once; the analysis reads values, not how often they are computed).

/// The expression `({ T a = e1; U b = e2; f(a, b); })` stands for, as text: `f((e1), (e2))`.
pub(super) fn as_expression(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix("({")?.strip_suffix("})")?.trim();
    let mut parts = top_level_split(inner, b';');
    if parts.last().is_some_and(|p| p.trim().is_empty()) {
        parts.pop();
    }
    let (value, declarations) = parts.split_last()?;
    let mut out = value.trim().to_string();
    for decl in declarations.iter().rev() {
        let (name, init) = declared(decl)?;
        out = crate::substitute::replace_word(&out, name, &format!("({})", init.trim()));
    }
    (!out.is_empty()).then_some(out)
}

/// `__typeof(x) __x = (x)`: the name declared and its initialiser.
fn declared(decl: &str) -> Option<(&str, &str)> {
    let eq = top_level_split(decl, b'=');
    if eq.len() != 2 {
        return None;
    }
    let head = eq[0].trim_end();
    let name_start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |p| p + 1);
    let name = &head[name_start..];
    let ty = head[..name_start].trim();
    let named = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    // a type: words and stars, or `__typeof(x)` (`if (a) b = 1` is a statement)
    let typed = if ty.contains('(') {
        ["__typeof__", "__typeof", "typeof", "decltype"]
            .iter()
            .any(|k| ty.starts_with(k))
    } else {
        ty.split_whitespace().next().is_some_and(|w| {
            !matches!(
                w,
                "if" | "for" | "while" | "return" | "switch" | "do" | "else"
            )
        })
    };
    (named && typed && !ty.ends_with([',', '['])).then_some((name, eq[1]))
}

/// `text` cut at each `sep` outside brackets; `==`, `<=`, `>=`, `!=` are no `=`.
fn top_level_split(text: &str, sep: u8) -> Vec<&str> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if c == sep && depth == 0 => {
                let compound = sep == b'='
                    && (b.get(i + 1) == Some(&b'=')
                        || (i > 0 && matches!(b[i - 1], b'=' | b'<' | b'>' | b'!')));
                if !compound {
                    parts.push(&text[start..i]);
                    start = i + 1;
                }
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::as_expression;

    #[test]
    fn declarations_then_a_value_become_the_value() {
        assert_eq!(
            as_expression(
                "({ __typeof(x) __x = (x); __typeof(y) __y = (y); (__x < __y) ? __x : __y; })"
            )
            .as_deref(),
            Some("(((x)) < ((y))) ? ((x)) : ((y))")
        );
        assert_eq!(
            as_expression("({ int a = f(1, 2); a == 3; })").as_deref(),
            Some("(f(1, 2)) == 3")
        );
    }

    #[test]
    fn other_statements_are_no_expression() {
        assert_eq!(as_expression("({ x++; x; })"), None);
        assert_eq!(as_expression("({ if (a) b = 1; b; })"), None);
        assert_eq!(as_expression("(a + b)"), None);
    }
}
