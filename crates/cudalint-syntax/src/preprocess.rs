//! Byte-offset-preserving rewrites applied before parsing: constructs the grammar does not
//! know are blanked to spaces of the same length, so every span still points into the file.

/// Blank `__align__(N)` (the grammar has no rule for it).
pub fn blank_unknown_syntax(src: &str) -> std::borrow::Cow<'_, str> {
    const KEYWORD: &str = "__align__";
    if !src.contains(KEYWORD) {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut bytes = src.as_bytes().to_vec();
    let mut from = 0;
    while let Some(pos) = src[from..].find(KEYWORD) {
        let start = from + pos;
        let mut end = start + KEYWORD.len();
        let rest = &src.as_bytes()[end..];
        let ws = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if rest.get(ws) == Some(&b'(') {
            let mut depth = 0usize;
            for (i, &b) in rest[ws..].iter().enumerate() {
                match b {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end += ws + i + 1;
                            break;
                        }
                    }
                    b'\n' => break,
                    _ => {}
                }
            }
        }
        for b in &mut bytes[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = end.max(start + 1);
    }
    // Only ASCII bytes were replaced by ASCII spaces, so UTF-8 validity is preserved.
    std::borrow::Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_align_keeping_length() {
        let src = "struct __align__(16) P { float x; };";
        let out = blank_unknown_syntax(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out, "struct               P { float x; };");
    }
}
