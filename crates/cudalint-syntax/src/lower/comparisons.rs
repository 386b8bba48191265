//! Comparisons tree-sitter-cpp reads as templates. In `(r < n && c >= 0)` it takes
//! `r < n && c >` for the template `r<n && c>` and the rest for an assignment to it (`= 0`);
//! `r < n && c > (d)` becomes a call of that template and `r < n && c >> 2` a shift of it. A
//! stencil's bounds check `(row >= 0 && row < rows && col >= 0 && col < cols)` is one, and its
//! mask came out as a constant. Such an expression is re-read here from its tokens with C's
//! precedences.

use super::{fid, named_children, span, Lowerer};
use crate::model::*;
use crate::preprocess::condition::precedence;
use tree_sitter::Node;

enum Token {
    Operand(Expr),
    Op { text: String, start: u32, end: u32 },
}

/// Whether the operator spine under `n` (binary operators, assignments, a call of a template)
/// holds a template whose one argument is a `&&` or `||` expression: how the misreading looks.
fn misread(n: Node, src: &str) -> bool {
    match n.kind() {
        "binary_expression" | "assignment_expression" => {
            let l = n.child_by_field_id(fid().left.get());
            let r = n.child_by_field_id(fid().right.get());
            l.is_some_and(|l| misread(l, src)) || r.is_some_and(|r| misread(r, src))
        }
        "call_expression" => n
            .child_by_field_id(fid().function.get())
            .is_some_and(|f| f.kind() == "template_function" && misread(f, src)),
        "template_function" => template_operand(n).is_some_and(|a| {
            a.kind() == "binary_expression"
                && a.child_by_field_id(fid().operator.get())
                    .is_some_and(|o| matches!(&src[o.byte_range()], "&&" | "||"))
        }),
        _ => false,
    }
}

/// The one expression a template's argument list holds, if that is what it holds.
fn template_operand(n: Node) -> Option<Node> {
    let args = n.child_by_field_id(fid().arguments.get())?;
    match named_children(args).as_slice() {
        [a] if a.kind() != "type_descriptor" => Some(*a),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// `n` re-read from its tokens when tree-sitter took a comparison for a template (see the
    /// module's comment); `None` for every other expression. Called at the top of an operator
    /// spine only, so a long chain is looked at once.
    pub(super) fn misread_comparison(&mut self, n: Node, depth: usize, top: bool) -> Option<Expr> {
        if !top || !misread(n, self.src) {
            return None;
        }
        let mut tokens = Vec::new();
        self.tokens(n, depth, &mut tokens)?;
        // `>` then `=` with nothing between them was `>=`, `>` `>` was `>>`
        let mut merged: Vec<Token> = Vec::with_capacity(tokens.len());
        for t in tokens {
            if let (
                Some(Token::Op {
                    text: prev,
                    end: prev_end,
                    ..
                }),
                Token::Op { text, start, end },
            ) = (merged.last_mut(), &t)
            {
                if *prev_end == *start && prev == ">" && matches!(text.as_str(), "=" | ">" | ">=") {
                    prev.push_str(text);
                    *prev_end = *end;
                    continue;
                }
            }
            merged.push(t);
        }
        let mut at = 0;
        let e = assignment(&mut merged, &mut at)?;
        (at == merged.len()).then_some(e)
    }

    fn tokens(&mut self, n: Node, depth: usize, out: &mut Vec<Token>) -> Option<()> {
        let op = |out: &mut Vec<Token>, o: Node, text: &str| {
            out.push(Token::Op {
                text: text.to_string(),
                start: o.start_byte() as u32,
                end: o.end_byte() as u32,
            })
        };
        match n.kind() {
            "binary_expression" | "assignment_expression" => {
                let o = n.child_by_field_id(fid().operator.get())?;
                self.tokens(n.child_by_field_id(fid().left.get())?, depth, out)?;
                op(out, o, self.src.get(o.byte_range())?);
                self.tokens(n.child_by_field_id(fid().right.get())?, depth, out)?;
            }
            "call_expression"
                if n.child_by_field_id(fid().function.get())
                    .is_some_and(|f| f.kind() == "template_function") =>
            {
                // `c > (d)`: the call's one argument is the comparison's right side
                let args = n.child_by_field_id(fid().arguments.get())?;
                let [arg] = named_children(args)[..] else {
                    return None;
                };
                self.tokens(n.child_by_field_id(fid().function.get())?, depth, out)?;
                let mut e = self.expr(arg, depth + 1);
                e.span = span(args);
                out.push(Token::Operand(e));
            }
            "template_function" => {
                let name = n.child_by_field_id(fid().name.get())?;
                let args = n.child_by_field_id(fid().arguments.get())?;
                let inner = template_operand(n)?;
                out.push(Token::Operand(self.expr(name, depth + 1)));
                let open = args.child(0)?;
                let close = args.child(args.child_count().checked_sub(1)?)?;
                op(out, open, "<");
                self.tokens(inner, depth, out)?;
                op(out, close, ">");
            }
            _ => out.push(Token::Operand(self.expr(n, depth + 1))),
        }
        Some(())
    }
}

/// Assignments bind last and to the right.
fn assignment(t: &mut [Token], at: &mut usize) -> Option<Expr> {
    let lhs = binary(t, at, 1)?;
    let Some(Token::Op { text, .. }) = t.get(*at) else {
        return Some(lhs);
    };
    if precedence(text).is_some() || !text.ends_with('=') {
        return Some(lhs);
    }
    let op = match text.as_str() {
        "=" => None,
        o => Some(BinOp::from_token(o.trim_end_matches('='))?),
    };
    *at += 1;
    let rhs = assignment(t, at)?;
    let span = Span {
        start: lhs.span.start,
        end: rhs.span.end,
    };
    Some(Expr {
        kind: ExprKind::Assign {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    })
}

/// Precedence climbing over the binary operators.
fn binary(t: &mut [Token], at: &mut usize, min: u8) -> Option<Expr> {
    let mut lhs = match t.get_mut(*at)? {
        Token::Operand(e) => std::mem::replace(e, Expr::unsupported("taken", e.span)),
        Token::Op { .. } => return None,
    };
    *at += 1;
    while let Some(Token::Op { text, .. }) = t.get(*at) {
        let Some(p) = precedence(text).filter(|p| *p >= min) else {
            break;
        };
        let op = BinOp::from_token(text)?;
        *at += 1;
        let rhs = binary(t, at, p + 1)?;
        let span = Span {
            start: lhs.span.start,
            end: rhs.span.end,
        };
        lhs = Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span,
        };
    }
    Some(lhs)
}

#[cfg(test)]
mod tests {
    use crate::model::{BinOp, ExprKind, Stmt};

    fn condition(src: &str) -> ExprKind {
        let model = crate::parse(src).unwrap().model;
        let body = model.functions[0].body.as_ref().unwrap();
        let Stmt::Decl(d) = &body[0] else {
            panic!("{body:?}")
        };
        d.init.as_ref().unwrap().kind.clone()
    }

    fn ops(e: &ExprKind, out: &mut Vec<BinOp>) {
        if let ExprKind::Binary { op, lhs, rhs } = e {
            ops(&lhs.kind, out);
            out.push(*op);
            ops(&rhs.kind, out);
        }
    }

    #[test]
    fn bounds_checks_misread_as_templates_are_comparisons() {
        use BinOp::*;
        for (src, want) in [
            (
                "void k(int r, int c, int n) { bool v = (r >= 0 && r < n && c >= 0 && c < n); }",
                vec![Ge, And, Lt, And, Ge, And, Lt],
            ),
            (
                "void k(int r, int c, int n) { bool v = (r < n && c >= 0); }",
                vec![Lt, And, Ge],
            ),
            (
                "void k(int r, int c, int n, int d) { bool v = r < n && c > (d); }",
                vec![Lt, And, Gt],
            ),
            (
                "void k(int r, int c, int n) { bool v = r < n && c >> 2; }",
                vec![Lt, And, Shr],
            ),
        ] {
            let mut got = Vec::new();
            ops(&condition(src), &mut got);
            assert_eq!(got, want, "{src}");
        }
    }

    #[test]
    fn the_tree_of_a_reread_comparison_follows_precedence() {
        // ((r < n) && (c >= 0)): `&&` at the top, each side one comparison
        let e = condition("void k(int r, int c, int n) { bool v = (r < n && c >= 0); }");
        let ExprKind::Binary { op, lhs, rhs } = e else {
            panic!("{e:?}")
        };
        assert_eq!(op, BinOp::And);
        assert!(matches!(lhs.kind, ExprKind::Binary { op: BinOp::Lt, .. }));
        assert!(matches!(rhs.kind, ExprKind::Binary { op: BinOp::Ge, .. }));
    }
}
