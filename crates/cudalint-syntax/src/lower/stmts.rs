//! Statements: blocks, `if`, loops (a range-for over a braced list is the counted loop it
//! is), returns and declarations in bodies. Expressions are `exprs.rs`.

use super::{fid, first_named, last_named, named_children, span, Lowerer, MAX_DEPTH};
use crate::model::*;
use tree_sitter::Node;

impl<'s> Lowerer<'s> {
    /// `for (int s : {32, 16, 8}) body` (llama.cpp's flash attention) as the counted loop it is:
    /// `for (int i = 0; i < 3; ++i) { int s = i == 0 ? 32 : i == 1 ? 16 : 8; body }`. Returns
    /// the counter's declaration, the condition, the update and the element's declaration;
    /// `None` for a range over anything but a braced list.
    fn range_over_list(&mut self, n: Node, depth: usize) -> Option<(Decl, Expr, Expr, Decl)> {
        const COUNTER: &str = "__cudalint_range_index";
        let list = n
            .child_by_field_id(fid().right.get())
            .filter(|r| r.kind() == "initializer_list")?;
        let t = n.child_by_field_id(fid().r#type.get())?;
        let d = n.child_by_field_id(fid().declarator.get())?;
        let (name, ptr, _, _) = self.declarator_parts(d);
        let name = name?;
        let values: Vec<Expr> = named_children(list)
            .into_iter()
            .map(|v| self.expr(v, depth + 1))
            .collect();
        let last = values.last()?.clone();
        let at = span(list);
        let int = |v: i64| Expr {
            kind: ExprKind::Int(v),
            span: at,
        };
        let counter = || Expr {
            kind: ExprKind::Ident(COUNTER.into()),
            span: at,
        };
        let element = values
            .iter()
            .enumerate()
            .rev()
            .skip(1)
            .fold(last, |els, (k, v)| {
                let cond = Expr {
                    kind: ExprKind::Binary {
                        op: BinOp::Eq,
                        lhs: Box::new(counter()),
                        rhs: Box::new(int(k as i64)),
                    },
                    span: at,
                };
                Expr {
                    kind: ExprKind::Cond {
                        cond: Box::new(cond),
                        then: Box::new(v.clone()),
                        els: Box::new(els),
                    },
                    span: at,
                }
            });
        let decl = |name: Name, name_span: Span, ty: TypeRef, init: Expr| {
            Decl::local(name, name_span, ty, Vec::new(), Some(init), span(n))
        };
        let mut ty = self.type_of(t, Some(n));
        ty.pointer_depth += ptr;
        let element = decl(self.text(name).into(), span(name), ty, element);
        let init = decl(COUNTER.into(), at, TypeRef::named("int"), int(0));
        let cond = Expr {
            kind: ExprKind::Binary {
                op: BinOp::Lt,
                lhs: Box::new(counter()),
                rhs: Box::new(int(values.len() as i64)),
            },
            span: at,
        };
        let update = Expr {
            kind: ExprKind::Unary {
                op: UnOp::PreInc,
                arg: Box::new(counter()),
            },
            span: at,
        };
        Some((init, cond, update, element))
    }

    /// `__half (*s_kv)[N + SKEW] = (__half (*)[N + SKEW]) base;` (ByteTransformer's shared
    /// tiles), which the grammar reads as an assignment to a functional cast's element: the
    /// declaration of a pointer to rows, as `float (*t)[33];` without a value is read. The
    /// type must be one a cast could not be a call of: a built-in or CUDA type, or one the file
    /// declares.
    fn rows_pointer_declaration(&mut self, stmt: Node, e: Node, depth: usize) -> Option<Decl> {
        // (`float (*t)[33];` with no value is a subscript alone)
        let (mut left, value) = match e.kind() {
            "assignment_expression" if self.text(e).contains("==") => return None,
            "assignment_expression" => (
                e.child_by_field_id(fid().left.get())?,
                Some(e.child_by_field_id(fid().right.get())?),
            ),
            "subscript_expression" => (e, None),
            _ => return None,
        };
        let mut dims = Vec::new();
        while left.kind() == "subscript_expression" {
            let index = left
                .child_by_field_id(fid().indices.get())
                .or_else(|| left.child_by_field_id(fid().index.get()))?;
            let index = match index.kind() {
                "subscript_argument_list" => first_named(index)?,
                _ => index,
            };
            dims.insert(
                0,
                Dim {
                    size: Some(self.expr(index, depth + 1)),
                    span: span(index),
                },
            );
            left = left.child_by_field_id(fid().argument.get())?;
        }
        if dims.is_empty() || left.kind() != "call_expression" {
            return None;
        }
        let ty_node = left.child_by_field_id(fid().function.get())?;
        let args = left.child_by_field_id(fid().arguments.get())?;
        let [star] = named_children(args)[..] else {
            return None;
        };
        let name = (star.kind() == "pointer_expression" && self.text(star).starts_with('*'))
            .then(|| star.child_by_field_id(fid().argument.get()))
            .flatten()
            .filter(|n| n.kind() == "identifier")?;
        let ty_name = self.text(ty_node).to_string();
        let known_type = ty_node.kind() == "primitive_type"
            || super::items::type_text(&ty_name).is_some_and(|t| t.pointer_depth == 0)
            || self
                .model
                .structs
                .iter()
                .any(|s| s.name == ty_name.as_str())
            || self
                .model
                .typedefs
                .iter()
                .any(|t| t.name == ty_name.as_str());
        if !known_type {
            return None;
        }
        // the pointer's outermost dimension is unsized: what it points at is rows of `dims`
        dims.insert(
            0,
            Dim {
                size: None,
                span: span(name),
            },
        );
        Some(Decl::local(
            self.text(name).into(),
            span(name),
            TypeRef::named(&ty_name),
            dims,
            value.map(|v| self.expr(v, depth + 1)),
            span(stmt),
        ))
    }

    pub(super) fn block(&mut self, n: Node, depth: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for c in named_children(n) {
            self.stmt_into(c, depth + 1, &mut out);
        }
        // a model lives for the whole run: grown a push at a time, the statements' vectors
        // were a quarter larger than what they held
        out.shrink_to_fit();
        out
    }

    /// `switch (v) { case A: ...; break; case B: case C: ...; default: ... }` as the `if`
    /// chain it runs as (`v == A`, `v == B || v == C`, else the default), so which lanes
    /// reach a case follows from `v` like any branch. A case that falls through into the next
    /// keeps only its own statements. False when the body is not a list of cases (then its
    /// statements are kept unguarded, as before).
    fn switch_into(&mut self, n: Node, depth: usize, out: &mut Vec<Stmt>) -> bool {
        let Some(value) = n.child_by_field_id(fid().condition.get()).and_then(|c| {
            c.child_by_field_id(fid().value.get())
                .or_else(|| last_named(c))
        }) else {
            return false;
        };
        let Some(body) = n.child_by_field_id(fid().body.get()) else {
            return false;
        };
        let cases: Vec<_> = named_children(body)
            .into_iter()
            .filter(|c| c.kind() != "comment")
            .collect();
        if cases.is_empty() || cases.iter().any(|c| c.kind() != "case_statement") {
            return false;
        }
        let value = self.expr(value, depth);
        let mut arms: Vec<(Option<Expr>, Vec<Stmt>)> = Vec::new();
        let mut pending: Option<Expr> = None;
        let mut default = Vec::new();
        for c in cases {
            let label = c.child_by_field_id(fid().value.get());
            let mut stmts = Vec::new();
            let own = named_children(c)
                .into_iter()
                .filter(|s| s.kind() != "comment")
                .count();
            for s in named_children(c) {
                if Some(s) != label
                    && (s.kind().ends_with("statement") || s.kind() == "declaration")
                {
                    self.stmt_into(s, depth + 1, &mut stmts);
                }
            }
            while matches!(stmts.last(), Some(Stmt::Break)) {
                stmts.pop();
            }
            let Some(label) = label else {
                default = stmts;
                pending = None;
                continue;
            };
            let at = span(label);
            let test = Expr {
                kind: ExprKind::Binary {
                    op: BinOp::Eq,
                    lhs: Box::new(value.clone()),
                    rhs: Box::new(self.expr(label, depth)),
                },
                span: at,
            };
            let test = match pending.take() {
                Some(p) => Expr {
                    kind: ExprKind::Binary {
                        op: BinOp::Or,
                        lhs: Box::new(p),
                        rhs: Box::new(test),
                    },
                    span: at,
                },
                None => test,
            };
            if stmts.is_empty() && own <= 1 {
                pending = Some(test);
                continue;
            }
            arms.push((Some(test), stmts));
        }
        let mut chain = default;
        for (test, then) in arms.into_iter().rev() {
            let Some(cond) = test else { continue };
            chain = vec![Stmt::If {
                cond: Box::new(cond),
                then,
                els: chain,
            }];
        }
        out.push(Stmt::Block(chain));
        true
    }

    fn body_of(&mut self, n: Option<Node>, depth: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        if let Some(n) = n {
            if n.kind() == "compound_statement" {
                return self.block(n, depth);
            }
            self.stmt_into(n, depth + 1, &mut out);
        }
        out
    }

    /// `union { uint8_t part[sizeof(T)]; T ret; };` in a function body (NCCL's `loadConst`):
    /// an anonymous union's or struct's members are locals of the enclosing scope.
    fn anonymous_members(&mut self, spec: Node) -> Vec<Stmt> {
        let anonymous = matches!(spec.kind(), "union_specifier" | "struct_specifier")
            && spec.child_by_field_id(fid().name.get()).is_none();
        let Some(body) = spec
            .child_by_field_id(fid().body.get())
            .filter(|_| anonymous)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in named_children(body) {
            let Some(t) = f.child_by_field_id(fid().r#type.get()) else {
                continue;
            };
            let base = self.type_of(t, Some(f));
            let mut c = f.walk();
            let declarators: Vec<Node> = f.children_by_field_id(fid().declarator, &mut c).collect();
            for d in declarators {
                let (name_node, ptr, dims, _) = self.declarator_parts(d);
                let Some(name_node) = name_node else { continue };
                let mut ty = base.clone();
                ty.pointer_depth += ptr;
                out.push(Stmt::Decl(Box::new(Decl::local(
                    self.text(name_node).into(),
                    span(name_node),
                    ty,
                    dims,
                    None,
                    span(f),
                ))));
            }
        }
        out
    }

    pub(super) fn stmt_into(&mut self, n: Node, depth: usize, out: &mut Vec<Stmt>) {
        if depth > MAX_DEPTH {
            out.push(Stmt::Other(span(n)));
            return;
        }
        match n.kind() {
            "declaration" => {
                let decls = self.declaration(n, depth);
                if decls.is_empty() {
                    if let Some(t) = n.child_by_field_id(fid().r#type.get()) {
                        out.extend(self.anonymous_members(t));
                    }
                }
                for d in decls {
                    out.push(Stmt::Decl(Box::new(d)));
                }
            }
            "expression_statement" => {
                if let Some(e) = first_named(n) {
                    match self.rows_pointer_declaration(n, e, depth) {
                        Some(d) => out.push(Stmt::Decl(Box::new(d))),
                        None => out.push(Stmt::Expr(self.expr(e, depth))),
                    }
                }
            }
            // an enum a function declares (DeepEP's `enum class WarpRole { ... };` in its
            // kernels): its constants, as a file-scope enum's are
            "enum_specifier" => self.enum_def(n),
            "compound_statement" => out.push(Stmt::Block(self.block(n, depth))),
            "if_statement" => {
                let cond = n
                    .child_by_field_id(fid().condition.get())
                    .map(|c| {
                        let inner = c
                            .child_by_field_id(fid().value.get())
                            .or_else(|| last_named(c));
                        inner
                            .map(|i| self.expr(i, depth))
                            .unwrap_or_else(|| Expr::unsupported("empty condition", span(c)))
                    })
                    .unwrap_or_else(|| Expr::unsupported("missing condition", span(n)));
                let then = self.body_of(n.child_by_field_id(fid().consequence.get()), depth);
                let els = n
                    .child_by_field_id(fid().alternative.get())
                    .map(|e| {
                        let inner = first_named(e);
                        self.body_of(inner, depth)
                    })
                    .unwrap_or_default();
                out.push(Stmt::If {
                    cond: Box::new(cond),
                    then,
                    els,
                });
            }
            "for_statement" => {
                let mut init = Vec::new();
                if let Some(i) = n.child_by_field_id(fid().initializer.get()) {
                    if i.kind() == "declaration" {
                        init.extend(
                            self.declaration(i, depth)
                                .into_iter()
                                .map(|d| Stmt::Decl(Box::new(d))),
                        );
                    } else {
                        init.push(Stmt::Expr(self.expr(i, depth)));
                    }
                }
                let cond = n
                    .child_by_field_id(fid().condition.get())
                    .map(|c| Box::new(self.expr(c, depth)));
                let update = n
                    .child_by_field_id(fid().update.get())
                    .map(|c| Box::new(self.expr(c, depth)));
                let body = self.body_of(n.child_by_field_id(fid().body.get()), depth);
                out.push(Stmt::For {
                    init,
                    cond,
                    update,
                    body,
                    span: span(n),
                });
            }
            "while_statement" | "do_statement" => {
                let cond = n
                    .child_by_field_id(fid().condition.get())
                    .map(|c| {
                        let inner = if c.kind() == "parenthesized_expression"
                            || c.kind() == "condition_clause"
                        {
                            last_named(c).unwrap_or(c)
                        } else {
                            c
                        };
                        self.expr(inner, depth)
                    })
                    .unwrap_or_else(|| Expr::unsupported("missing condition", span(n)));
                let body = self.body_of(n.child_by_field_id(fid().body.get()), depth);
                out.push(Stmt::While {
                    cond: Box::new(cond),
                    body,
                    do_while: n.kind() == "do_statement",
                });
            }
            "for_range_loop" => {
                let body = self.body_of(n.child_by_field_id(fid().body.get()), depth);
                match self.range_over_list(n, depth) {
                    Some((init, cond, update, element)) => {
                        let mut inner = vec![Stmt::Decl(Box::new(element))];
                        inner.extend(body);
                        out.push(Stmt::For {
                            init: vec![Stmt::Decl(Box::new(init))],
                            cond: Some(Box::new(cond)),
                            update: Some(Box::new(update)),
                            body: inner,
                            span: span(n),
                        });
                    }
                    None => out.push(Stmt::Block(body)),
                }
            }
            "return_statement" => {
                let e = first_named(n).map(|e| self.expr(e, depth));
                out.push(Stmt::Return(e, span(n)));
            }
            "break_statement" => out.push(Stmt::Break),
            "continue_statement" => out.push(Stmt::Continue),
            "switch_statement" if self.switch_into(n, depth, out) => {}
            "labeled_statement"
            | "case_statement"
            | "switch_statement"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "attributed_statement" => {
                // statements nested in these are kept; their guards are not modelled
                for c in named_children(n) {
                    if c.kind() == "compound_statement" {
                        out.push(Stmt::Block(self.block(c, depth)));
                    } else if c.kind().ends_with("statement")
                        || c.kind() == "declaration"
                        || c.kind().starts_with("preproc_")
                    {
                        self.stmt_into(c, depth + 1, out);
                    }
                }
            }
            "preproc_def" | "preproc_function_def" => self.define(n),
            "type_definition" => self.typedef(n),
            "alias_declaration" => self.alias(n),
            "struct_specifier" | "class_specifier" | "union_specifier" => {
                let members = self.anonymous_members(n);
                if members.is_empty() {
                    self.struct_def(n, None)
                }
                out.extend(members);
            }
            _ => out.push(Stmt::Other(span(n))),
        }
    }
}

/// A macro's replacement that is a statement: a loop head (`for (...)`, `while (...)`, no body,
/// lowered with an empty one), a block or a `do ... while (0)`; its spans at `offset`, where
/// the replacement is in the file.
/// A macro's replacement that is statements one after another (`int tid = threadIdx.x;
/// sdata[tid] = x; __syncthreads();`), lowered as a block of them; `None` unless it parses
/// whole as such.
pub(super) fn parse_sequence_snippet(text: &str, offset: usize) -> Option<Stmt> {
    const PREFIX: &str = "void __cudalint_m() { ";
    if text.len() > 16384 {
        return None;
    }
    let text = joined_lines(text);
    // (the invocation's `;` ends the last statement: `INIT(...);` of a replacement ending in
    // `auto f = [&](int i) { ... }` leaves it to the caller)
    let src = format!("{PREFIX}{text}\n;}}");
    let tree = crate::with_parser(|p| p.parse(&src, None))?;
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 {
        return None;
    }
    let f = root.named_child(0)?;
    let body = f.child_by_field_id(fid().body.get())?;
    // (the `;` added above is no statement of the macro's)
    let statements = named_children(body)
        .into_iter()
        .filter(|c| c.kind() != "expression_statement" || c.named_child_count() > 0)
        .count();
    if statements < 2 {
        return None;
    }
    let mut l = Lowerer::new(&src);
    let mut out = Vec::new();
    let mut c = body.walk();
    for stmt in body.named_children(&mut c) {
        l.stmt_into(stmt, 0, &mut out);
    }
    let mut s = Stmt::Block(out);
    crate::shift::Shift::shift(&mut s, offset as i64 - PREFIX.len() as i64);
    Some(s)
}

/// A macro's replacement with its continued lines joined, each backslash and line end
/// blanked so that offsets stay the file's.
pub(super) fn joined_lines(text: &str) -> String {
    text.replace("\\\n", "  ").replace("\\\r\n", "   ")
}

/// The launches a function-like macro's replacement makes (gpu4pyscf's `#define
/// LAUNCH_JKMATRIX_KERNEL(KERNEL) KERNEL<<<workers, threads, buflen>>>(*envs, ...)`), with its
/// parameters as names: each invocation in host code launches them with its arguments
/// written in.
pub(super) fn launches_in_snippet(text: &str, offset: usize) -> Vec<Launch> {
    const PREFIX: &str = "void __cudalint_m() { ";
    if text.len() > 16384 {
        return Vec::new();
    }
    let text = joined_lines(text);
    let src = format!("{PREFIX}{text}\n; }}");
    let Some(tree) = crate::with_parser(|p| p.parse(&src, None)) else {
        return Vec::new();
    };
    let root = tree.root_node();
    let Some(body) = root
        .named_child(0)
        .and_then(|f| f.child_by_field_id(fid().body.get()))
    else {
        return Vec::new();
    };
    let mut l = Lowerer::new(&src);
    let mut out = Vec::new();
    let mut c = body.walk();
    for stmt in body.named_children(&mut c) {
        l.stmt_into(stmt, 0, &mut out);
    }
    let mut launches = std::mem::take(&mut l.model.launches);
    for x in &mut launches {
        crate::shift::Shift::shift(x, offset as i64 - PREFIX.len() as i64);
        x.host_fn = None;
    }
    launches
}

pub(super) fn parse_statement_snippet(text: &str, offset: usize) -> Option<Stmt> {
    const PREFIX: &str = "void __cudalint_m() { ";
    let text = joined_lines(text.trim_end());
    let head = text.trim_start();
    // (`#define MAYBE_ADD_LINK(u, val) if (links[u] >= 0) { atomicAdd(...); }`, svox2's
    // trilinear gradients: a bare `if` is a statement as a `do { } while (0)` is)
    let keyword = |k: &str| {
        head.strip_prefix(k)
            .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    };
    let statement = ["for", "while", "do", "if", "switch"]
        .into_iter()
        .any(keyword)
        || head.starts_with('{');
    if !statement || text.len() > 4096 {
        return None;
    }
    let src = format!("{PREFIX}{text}\n; }}");
    let tree = crate::with_parser(|p| p.parse(&src, None))?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let f = root.named_child(0)?;
    let body = f.child_by_field_id(fid().body.get())?;
    // one statement, not the first of several (d3q19's `SET_FLAG` is `if (...) {...} if (...)
    // {...} else if ...`: a sequence, read as one)
    let statements = named_children(body)
        .into_iter()
        .filter(|c| !(c.kind() == "expression_statement" && c.named_child_count() == 0))
        .count();
    if statements != 1 {
        return None;
    }
    let stmt = body.named_child(0)?;
    if !matches!(
        stmt.kind(),
        "for_statement"
            | "while_statement"
            | "compound_statement"
            | "do_statement"
            | "if_statement"
            | "switch_statement"
    ) {
        return None;
    }
    let mut l = Lowerer::new(&src);
    let mut out = Vec::new();
    l.stmt_into(stmt, 0, &mut out);
    let mut s = out.into_iter().next()?;
    crate::shift::Shift::shift(&mut s, offset as i64 - PREFIX.len() as i64);
    Some(s)
}
