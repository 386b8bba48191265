//! Evaluating `#if` / `#elif` conditions the way the C preprocessor does, in three values: a
//! condition that depends on a macro no analysed text defines (a value from a header we do not
//! read) is `None`, and the caller takes that branch as the first live one.

use super::{Defines, MacroState};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Ident(String),
    Op(&'static str),
}

const OPS: [&str; 24] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "-", "+", "*", "/", "%",
    "<", ">", "&", "^", "|", "?", ":",
];

fn tokens(text: &str) -> Option<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'next: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'\'') {
                i += 1;
            }
            let lit: String = text[start..i]
                .chars()
                .filter(|c| *c != '\'')
                .collect::<String>()
                .trim_end_matches(['u', 'U', 'l', 'L'])
                .to_string();
            let v = if let Some(h) = lit.strip_prefix("0x").or(lit.strip_prefix("0X")) {
                i64::from_str_radix(h, 16).ok()?
            } else if let Some(bin) = lit.strip_prefix("0b").or(lit.strip_prefix("0B")) {
                i64::from_str_radix(bin, 2).ok()?
            } else if lit.len() > 1 && lit.starts_with('0') {
                i64::from_str_radix(&lit[1..], 8).ok()?
            } else {
                lit.parse().ok()?
            };
            out.push(Tok::Num(v));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // C++'s alternative tokens, which `#if` reads too (SoftRas's `#if __CUDA_ARCH__ <
            // 600 and defined(__CUDA_ARCH__)`)
            let alternative = match &text[start..i] {
                "and" => Some("&&"),
                "or" => Some("||"),
                "not" => Some("!"),
                "not_eq" => Some("!="),
                "bitand" => Some("&"),
                "bitor" => Some("|"),
                "xor" => Some("^"),
                "compl" => Some("~"),
                _ => None,
            };
            match alternative.and_then(|a| OPS.iter().find(|op| **op == a)) {
                Some(op) => out.push(Tok::Op(op)),
                None => out.push(Tok::Ident(text[start..i].to_string())),
            }
            continue;
        }
        for op in OPS {
            if b[i..].starts_with(op.as_bytes()) {
                out.push(Tok::Op(op));
                i += op.len();
                continue 'next;
            }
        }
        // a character literal, a string, `#`: nothing we evaluate
        return None;
    }
    Some(out)
}

/// Where names get their definitions: the file's own `#define`s so far, then the flags.
pub(super) struct Scope<'a> {
    pub local: &'a HashMap<String, MacroState>,
    pub defines: &'a Defines,
}

impl Scope<'_> {
    /// `None` for a name nothing we read defines or undefines: the build may define it.
    pub fn is_defined(&self, name: &str) -> Option<bool> {
        match self.local.get(name) {
            Some(MacroState::Undefined) => Some(false),
            Some(_) => Some(true),
            None => self.defines.is_defined(name),
        }
    }

    /// The replacement text of an object-like macro; `Err` when the name is known not to be
    /// a macro, `Ok(None)` when nothing we read says.
    fn value(&self, name: &str) -> Result<Option<&str>, ()> {
        match self.local.get(name) {
            Some(MacroState::Object(v)) => Ok(Some(v)),
            Some(MacroState::Function | MacroState::Defined) => Ok(None),
            Some(MacroState::Undefined) => Err(()),
            None if self.defines.is_defined(name) == Some(false) => Err(()),
            None => Ok(self.defines.get(name)),
        }
    }
}

/// `Some(true/false)` when the condition is decided by what is known, `None` otherwise.
pub(super) fn evaluate(text: &str, scope: &Scope) -> Option<bool> {
    value(text, scope).map(|v| v != 0)
}

/// The integer value of a constant expression, when what is known decides it.
pub(super) fn value(text: &str, scope: &Scope) -> Option<i64> {
    let toks = tokens(text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        scope,
        depth: 0,
    };
    let v = p.ternary()?;
    if p.pos != p.toks.len() {
        return None;
    }
    v
}

struct Parser<'s, 'a> {
    toks: Vec<Tok>,
    pos: usize,
    scope: &'s Scope<'a>,
    depth: usize,
}

/// `None` = syntax we do not follow (give up on the whole condition); `Some(None)` = a
/// well-formed value we cannot know.
type Val = Option<Option<i64>>;

impl Parser<'_, '_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> Val {
        let c = self.binary(0)?;
        if !self.eat("?") {
            return Some(c);
        }
        let a = self.ternary()?;
        if !self.eat(":") {
            return None;
        }
        let b = self.ternary()?;
        Some(match c {
            Some(c) if c != 0 => a,
            Some(_) => b,
            None if a == b => a,
            None => None,
        })
    }

    fn binary(&mut self, min_prec: u8) -> Val {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_op() {
            let Some(prec) = precedence(op) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = apply(op, lhs, rhs);
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Val {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Val {
        let tok = self.toks.get(self.pos)?.clone();
        self.pos += 1;
        match tok {
            Tok::Num(n) => Some(Some(n)),
            Tok::Op("(") => {
                let v = self.ternary()?;
                self.eat(")").then_some(v)
            }
            Tok::Op("!") => Some(self.unary()?.map(|v| (v == 0) as i64)),
            Tok::Op("~") => Some(self.unary()?.map(|v| !v)),
            Tok::Op("-") => Some(self.unary()?.map(i64::wrapping_neg)),
            Tok::Op("+") => self.unary(),
            Tok::Ident(name) if name == "defined" => {
                let paren = self.eat("(");
                let Some(Tok::Ident(n)) = self.toks.get(self.pos).cloned() else {
                    return None;
                };
                self.pos += 1;
                if paren && !self.eat(")") {
                    return None;
                }
                // the preprocessor's own operators, which GCC and Clang report as defined
                // (Altis's `#if defined __has_include` around its generated header's include)
                if matches!(
                    n.as_str(),
                    "__has_include"
                        | "__has_include_next"
                        | "__has_attribute"
                        | "__has_cpp_attribute"
                        | "__has_builtin"
                ) {
                    return Some(Some(1));
                }
                Some(self.scope.is_defined(&n).map(i64::from))
            }
            Tok::Ident(name) => {
                // `__has_include(...)`, `FOO(x)`: an invocation we do not expand
                if self.peek_op() == Some("(") {
                    let mut depth = 0;
                    while let Some(t) = self.toks.get(self.pos) {
                        self.pos += 1;
                        match t {
                            Tok::Op("(") => depth += 1,
                            Tok::Op(")") => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    return Some(None);
                }
                match name.as_str() {
                    "true" => return Some(Some(1)),
                    "false" => return Some(Some(0)),
                    _ => {}
                }
                Some(match self.scope.value(&name) {
                    // explicitly #undef'd: the preprocessor reads it as 0
                    Err(()) => Some(0),
                    Ok(None) => None,
                    Ok(Some(text)) => {
                        if self.depth > 32 {
                            return Some(None);
                        }
                        let toks = tokens(text)?;
                        let mut sub = Parser {
                            toks,
                            pos: 0,
                            scope: self.scope,
                            depth: self.depth + 8,
                        };
                        let v = sub.ternary()?;
                        if sub.pos != sub.toks.len() {
                            None
                        } else {
                            v
                        }
                    }
                })
            }
            Tok::Op(_) => None,
        }
    }
}

fn apply(op: &str, a: Option<i64>, b: Option<i64>) -> Option<i64> {
    // `||` and `&&` are decided by one known side
    match (op, a, b) {
        ("||", Some(x), _) | ("||", _, Some(x)) if x != 0 => return Some(1),
        ("&&", Some(0), _) | ("&&", _, Some(0)) => return Some(0),
        _ => {}
    }
    let (a, b) = (a?, b?);
    Some(match op {
        "||" => (a != 0 || b != 0) as i64,
        "&&" => (a != 0 && b != 0) as i64,
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => (a == b) as i64,
        "!=" => (a != b) as i64,
        "<" => (a < b) as i64,
        ">" => (a > b) as i64,
        "<=" => (a <= b) as i64,
        ">=" => (a >= b) as i64,
        "<<" => a.checked_shl(u32::try_from(b).ok()?)?,
        ">>" => a.checked_shr(u32::try_from(b).ok()?)?,
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        _ => return None,
    })
}

/// C's binary operators, loosest first: what `#if` conditions and the comparisons
/// tree-sitter misreads as templates (`lower/comparisons.rs`) are parsed with.
pub(crate) fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, flags: &[&str]) -> Option<bool> {
        let mut d = Defines::default();
        for f in flags {
            d.insert_flag(f).unwrap();
        }
        let local = HashMap::new();
        evaluate(
            text,
            &Scope {
                local: &local,
                defines: &d,
            },
        )
    }

    #[test]
    fn decides_what_is_known() {
        assert_eq!(eval("0", &[]), Some(false));
        assert_eq!(eval("1", &[]), Some(true));
        assert_eq!(
            eval("defined(_WIN32) || defined(__APPLE__)", &[]),
            Some(false)
        );
        assert_eq!(eval("defined X", &["X"]), Some(true));
        assert_eq!(eval("!defined(__CUDACC__) && 1", &[]), Some(false));
        assert_eq!(eval("N >= 4", &["N=8"]), Some(true));
        assert_eq!(eval("(N << 2) == 32 ? 1 : 0", &["N=8"]), Some(true));
        assert_eq!(eval("__CUDA_ARCH__ >= 800", &[]), Some(true));
        assert_eq!(eval("CUDART_VERSION >= 11000", &[]), Some(true));
        assert_eq!(
            eval("__CUDA_ARCH__ < 600 and defined(__CUDA_ARCH__)", &[]),
            Some(false)
        );
        assert_eq!(eval("not defined(__CUDACC__) or N", &["N=1"]), Some(true));
        assert_eq!(eval("defined __has_include", &[]), Some(true));
    }

    #[test]
    fn unknown_values_stay_unknown_unless_a_side_decides() {
        assert_eq!(eval("SOME_HEADER_VALUE > 2", &[]), None);
        // the build may define it: neither branch can be ruled out
        assert_eq!(eval("defined(X)", &[]), None);
        assert_eq!(eval("!defined(X)", &[]), None);
        assert_eq!(eval("defined(X) || SOME_HEADER_VALUE", &["X"]), Some(true));
        assert_eq!(eval("SOME_HEADER_VALUE && 0", &[]), Some(false));
        assert_eq!(eval("__has_include(<cuda_fp8.h>)", &[]), None);
        assert_eq!(eval("'a' == 97", &[]), None);
        assert_eq!(eval("1 +", &[]), None);
        assert_eq!(eval("1 / 0", &[]), None);
    }
}
