//! Expressions: literals, names, operators, subscripts, members, casts, `sizeof`, calls
//! (with template arguments and launches `k<<<grid, block>>>(...)`), and macro bodies
//! parsed as expressions.

use super::{all_children, fid, first_named, named_children, span, Lowerer, MAX_DEPTH};
use crate::model::*;
use crate::shift::Shift;
use tree_sitter::Node;

impl<'s> Lowerer<'s> {
    pub(super) fn template_arg(&mut self, n: Node, depth: usize) -> TemplateArg {
        if n.kind() == "type_descriptor" {
            TemplateArg::Type(self.type_of(n, None))
        } else {
            TemplateArg::Expr(self.expr(n, depth + 1))
        }
    }

    pub(super) fn template_args(&mut self, n: Option<Node>, depth: usize) -> Vec<TemplateArg> {
        let Some(n) = n else { return Vec::new() };
        named_children(n)
            .into_iter()
            .map(|a| self.template_arg(a, depth))
            .collect()
    }

    fn boxed(&mut self, n: Option<Node>, parent: Node, depth: usize) -> Box<Expr> {
        Box::new(match n {
            Some(n) => {
                self.operand_of_operator =
                    matches!(parent.kind(), "binary_expression" | "assignment_expression");
                self.expr(n, depth + 1)
            }
            None => Expr::unsupported("missing operand", span(parent)),
        })
    }

    pub fn expr(&mut self, n: Node, depth: usize) -> Expr {
        let operand_of_operator = std::mem::take(&mut self.operand_of_operator);
        let sp = span(n);
        if depth > MAX_DEPTH {
            return Expr::unsupported(
                format!("expression nested deeper than {MAX_DEPTH} levels"),
                sp,
            );
        }
        if n.is_error() || n.is_missing() {
            return Expr::unsupported("parse error", sp);
        }
        if matches!(
            n.kind(),
            "binary_expression" | "assignment_expression" | "call_expression"
        ) {
            if let Some(e) = self.misread_comparison(n, depth, !operand_of_operator) {
                return e;
            }
        }
        let kind = match n.kind() {
            "number_literal" => parse_number(self.text(n)).unwrap_or(ExprKind::Float),
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "null" | "nullptr" => ExprKind::Int(0),
            "char_literal" => {
                let t = self.text(n);
                t.chars()
                    .nth(1)
                    .map(|c| ExprKind::Int(c as i64))
                    .unwrap_or(ExprKind::Str)
            }
            "string_literal" | "concatenated_string" | "raw_string_literal" => ExprKind::Str,
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "namespace_identifier"
            | "this" => {
                let name: String = self.text(n).split_whitespace().collect();
                ExprKind::Ident(self.local_alias(&name).unwrap_or(name).into())
            }
            "parenthesized_expression" => {
                return match first_named(n) {
                    Some(inner) => {
                        let mut e = self.expr(inner, depth + 1);
                        e.span = sp;
                        e
                    }
                    None => Expr::unsupported("empty parentheses", sp),
                };
            }
            "field_expression" => self.field(n, depth),
            "subscript_expression" => return self.subscript(n, depth),
            "binary_expression"
            | "unary_expression"
            | "pointer_expression"
            | "update_expression"
            | "assignment_expression" => return self.operator(n, depth),
            "conditional_expression" => {
                let cond = self.boxed(n.child_by_field_id(fid().condition.get()), n, depth);
                let then = self.boxed(n.child_by_field_id(fid().consequence.get()), n, depth);
                let els = self.boxed(n.child_by_field_id(fid().alternative.get()), n, depth);
                ExprKind::Cond { cond, then, els }
            }
            "cast_expression" => {
                let ty = n
                    .child_by_field_id(fid().r#type.get())
                    .map(|t| self.type_of(t, None))
                    .unwrap_or_else(|| TypeRef::named("?"));
                let arg = self.boxed(n.child_by_field_id(fid().value.get()), n, depth);
                ExprKind::Cast { ty, arg }
            }
            "sizeof_expression" => {
                if let Some(t) = n.child_by_field_id(fid().r#type.get()) {
                    ExprKind::SizeofType(self.type_of(t, None))
                } else {
                    ExprKind::SizeofExpr(self.boxed(
                        n.child_by_field_id(fid().value.get()),
                        n,
                        depth,
                    ))
                }
            }
            // `alignof(T)`: a call the analysis answers from T's layout
            "alignof_expression" => match n.child_by_field_id(fid().r#type.get()) {
                Some(t) => ExprKind::Call {
                    callee: "alignof".into(),
                    template_args: vec![TemplateArg::Type(self.type_of(t, None))].into(),
                    args: Box::default(),
                },
                None => ExprKind::Unsupported("alignof".into()),
            },
            "comma_expression" => {
                let l = self.boxed(n.child_by_field_id(fid().left.get()), n, depth);
                let r = self.boxed(n.child_by_field_id(fid().right.get()), n, depth);
                ExprKind::Comma(l, r)
            }
            "initializer_list" | "argument_list" => ExprKind::Init(
                named_children(n)
                    .into_iter()
                    .map(|c| self.expr(c, depth + 1))
                    .collect(),
            ),
            "call_expression" => return self.call(n, depth),
            "lambda_expression" => {
                let params = n
                    .child_by_field_id(fid().declarator.get())
                    .and_then(|d| d.child_by_field_id(fid().parameters.get()))
                    .map(|p| self.params_of(p))
                    .unwrap_or_default();
                let by_reference = n
                    .child_by_field_id(fid().captures.get())
                    .is_some_and(|c| self.text(c).contains('&'));
                let body = n
                    .child_by_field_id(fid().body.get())
                    .map(|b| self.block(b, depth + 1))
                    .unwrap_or_default();
                ExprKind::Lambda(std::sync::Arc::new(Lambda {
                    params,
                    body,
                    by_reference,
                }))
            }
            "gnu_asm_expression" => return self.asm(n, depth),
            // `Packed128<T>{__ldcs(p)}`, `float2{a[i], b[i]}`: an object built from its
            // elements, which are evaluated (and their loads issued) as a list's are
            "compound_literal_expression" => match n.child_by_field_id(fid().value.get()) {
                // `idx_type{blockId}`, `uint64_t{1}`: one value converted to a named scalar
                // type is a cast (a template's `Packed128<T>{...}` stays an object)
                Some(v) if v.kind() == "initializer_list" && named_children(v).len() == 1 => {
                    let scalar = n.child_by_field_id(fid().r#type.get()).filter(|t| {
                        matches!(
                            t.kind(),
                            "primitive_type" | "sized_type_specifier" | "type_identifier"
                        )
                    });
                    let item = self.expr(named_children(v)[0], depth + 1);
                    match scalar {
                        Some(t) => ExprKind::Cast {
                            ty: self.type_of(t, None),
                            arg: Box::new(item),
                        },
                        None => ExprKind::Init(vec![item]),
                    }
                }
                Some(v) if v.kind() == "initializer_list" => ExprKind::Init(
                    named_children(v)
                        .into_iter()
                        .map(|c| self.expr(c, depth + 1))
                        .collect(),
                ),
                _ => ExprKind::Unsupported(format!("`{}`", n.kind())),
            },
            _ => ExprKind::Unsupported(format!("`{}`", n.kind())),
        };
        Expr { kind, span: sp }
    }

    /// The object's text, the method's name and its template argument list of a field
    /// expression naming a member template (`u.Extract<true>`, `this->template Tile<true>`).
    fn called_member_template<'t>(
        &self,
        f: Node<'t>,
    ) -> Option<(String, String, Option<Node<'t>>)> {
        if f.kind() != "field_expression" {
            return None;
        }
        let object = f.child_by_field_id(fid().argument.get())?;
        let mut field = f.child_by_field_id(fid().field.get())?;
        if field.kind() == "dependent_name" {
            field = named_children(field)
                .into_iter()
                .find(|c| c.kind() == "template_method")?;
        }
        if field.kind() != "template_method" {
            return None;
        }
        let name = self
            .text(field.child_by_field_id(fid().name.get())?)
            .to_string();
        let object: String = self.text(object).split_whitespace().collect();
        Some((object, name, field.child_by_field_id(fid().arguments.get())))
    }

    /// `BlockReduce{temp_storage}`, `Agent<BT>{ts, p}`: the type's constructor called with
    /// the braces' items; `None` where the type is not a plain or template name.
    fn braced_construction(&mut self, n: Node, depth: usize) -> Option<Expr> {
        let ty = n.child_by_field_id(fid().r#type.get())?;
        let value = n.child_by_field_id(fid().value.get())?;
        let (callee, template_args) = match ty.kind() {
            "type_identifier" | "qualified_identifier" => (self.text(ty).to_string(), Vec::new()),
            "template_type" => (
                self.text(ty.child_by_field_id(fid().name.get())?)
                    .to_string(),
                self.template_args(ty.child_by_field_id(fid().arguments.get()), depth),
            ),
            _ => return None,
        };
        let args = named_children(value)
            .into_iter()
            .map(|c| self.expr(c, depth + 1))
            .collect::<Vec<_>>();
        Some(Expr {
            kind: ExprKind::Call {
                callee: callee.into(),
                template_args: template_args.into(),
                args: args.into(),
            },
            span: span(n),
        })
    }

    /// `a.f`, `p->f`.
    fn field(&mut self, n: Node, depth: usize) -> ExprKind {
        let base = self.boxed(n.child_by_field_id(fid().argument.get()), n, depth);
        let field = n
            .child_by_field_id(fid().field.get())
            .map(|f| self.text(f).to_string())
            .unwrap_or_default();
        let arrow = n
            .child_by_field_id(fid().operator.get())
            .map(|o| self.text(o) == "->")
            .unwrap_or_else(|| {
                all_children(n)
                    .iter()
                    .any(|c| !c.is_named() && self.text(*c) == "->")
            });
        ExprKind::Field {
            base,
            field: field.into(),
            arrow,
        }
    }

    /// `a[i]`, and `a[i, j]` as `a[i][j]` (each inner subscript spans up to its `]`).
    fn subscript(&mut self, n: Node, depth: usize) -> Expr {
        let sp = span(n);
        let mut base = self.boxed(n.child_by_field_id(fid().argument.get()), n, depth);
        let indices = n
            .child_by_field_id(fid().indices.get())
            .or_else(|| n.child_by_field_id(fid().index.get()));
        let idx: Vec<Node> = match indices {
            Some(i) if i.kind() == "subscript_argument_list" => named_children(i),
            Some(i) => vec![i],
            None => Vec::new(),
        };
        if idx.is_empty() {
            return Expr::unsupported("subscript without index", sp);
        }
        let count = idx.len();
        for (k, i) in idx.into_iter().enumerate() {
            let index = Box::new(self.expr(i, depth + 1));
            let s = if k + 1 == count {
                sp
            } else {
                Span::new(n.start_byte(), i.end_byte() + 1)
            };
            base = Box::new(Expr {
                kind: ExprKind::Index { base, index },
                span: s,
            });
        }
        *base
    }

    /// Binary, unary, increment and assignment operators (an operator the model has no
    /// variant for is `Unsupported`).
    fn operator(&mut self, n: Node, depth: usize) -> Expr {
        let sp = span(n);
        let op_node = n.child_by_field_id(fid().operator.get());
        let op_text = op_node.map(|o| self.text(o));
        let kind = match n.kind() {
            "binary_expression" => {
                let op_text = op_text.unwrap_or("");
                let Some(op) = BinOp::from_token(op_text) else {
                    return Expr::unsupported(format!("operator `{op_text}`"), sp);
                };
                let lhs = self.boxed(n.child_by_field_id(fid().left.get()), n, depth);
                let rhs = self.boxed(n.child_by_field_id(fid().right.get()), n, depth);
                ExprKind::Binary { op, lhs, rhs }
            }
            "update_expression" => {
                let arg_node = n.child_by_field_id(fid().argument.get());
                let prefix = match (op_node, arg_node) {
                    (Some(o), Some(a)) => o.start_byte() < a.start_byte(),
                    _ => true,
                };
                let inc = op_text.map(|t| t == "++").unwrap_or(true);
                let op = match (prefix, inc) {
                    (true, true) => UnOp::PreInc,
                    (true, false) => UnOp::PreDec,
                    (false, true) => UnOp::PostInc,
                    (false, false) => UnOp::PostDec,
                };
                let arg = self.boxed(arg_node, n, depth);
                ExprKind::Unary { op, arg }
            }
            "assignment_expression" => {
                let op_text = op_text.unwrap_or("=");
                let op = if op_text == "=" {
                    None
                } else {
                    match BinOp::from_token(op_text.trim_end_matches('=')) {
                        Some(op) => Some(op),
                        None => return Expr::unsupported(format!("operator `{op_text}`"), sp),
                    }
                };
                let lhs = self.boxed(n.child_by_field_id(fid().left.get()), n, depth);
                let rhs = self.boxed(n.child_by_field_id(fid().right.get()), n, depth);
                ExprKind::Assign { op, lhs, rhs }
            }
            // "unary_expression" | "pointer_expression"
            _ => {
                let op = match op_text.unwrap_or("") {
                    "-" => UnOp::Neg,
                    "+" => UnOp::Plus,
                    "!" | "not" => UnOp::Not,
                    "~" => UnOp::BitNot,
                    "*" => UnOp::Deref,
                    "&" => UnOp::AddrOf,
                    other => return Expr::unsupported(format!("operator `{other}`"), sp),
                };
                let arg = self.boxed(n.child_by_field_id(fid().argument.get()), n, depth);
                ExprKind::Unary { op, arg }
            }
        };
        Expr { kind, span: sp }
    }

    fn call(&mut self, n: Node, depth: usize) -> Expr {
        let sp = span(n);
        let func = n.child_by_field_id(fid().function.get());
        // `wt::loadFromGmem<BM, BN>(...)`: the template function is the qualified name's last
        // part; the call is to `wt::loadFromGmem` with those template arguments
        let mut template_fn = func;
        while let Some(q) = template_fn.filter(|f| f.kind() == "qualified_identifier") {
            template_fn = q.child_by_field_id(fid().name.get());
        }
        let (callee, template_args) = match (func, template_fn) {
            (Some(f), Some(t)) if t.kind() == "template_function" => {
                let name = t
                    .child_by_field_id(fid().name.get())
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default();
                let scope: String = self.text(f)[..t.start_byte() - f.start_byte()]
                    .split_whitespace()
                    .collect();
                let targs = self.template_args(t.child_by_field_id(fid().arguments.get()), depth);
                (scope + &name, targs)
            }
            // `u.Extract<true>(c, 1)`, `this->template Tile<true>(2)`, `s.template get<T>()`:
            // a member template with its arguments, on the object (on `this`, the member itself)
            (Some(f), _) if self.called_member_template(f).is_some() => {
                let (object, method, arguments) =
                    self.called_member_template(f).unwrap_or_default();
                let targs = self.template_args(arguments, depth);
                let callee = if object == "this" {
                    method
                } else {
                    let arrow = self.text(f).contains("->");
                    format!("{object}{}{method}", if arrow { "->" } else { "." })
                };
                (callee, targs)
            }
            (Some(f), _) => (
                self.text(f).split_whitespace().collect::<String>(),
                Vec::new(),
            ),
            (None, _) => (String::new(), Vec::new()),
        };
        let mut args: Vec<Expr> = n
            .child_by_field_id(fid().arguments.get())
            .map(|a| {
                named_children(a)
                    .into_iter()
                    .map(|c| self.expr(c, depth + 1))
                    .collect()
            })
            .unwrap_or_default();
        // `[=]() -> std::pair<Role, int> { ... }()`: a lambda called where it is written, the
        // lambda its first argument
        let mut lambda = func;
        while let Some(p) = lambda.filter(|f| f.kind() == "parenthesized_expression") {
            lambda = p.named_child(0);
        }
        if let Some(l) = lambda.filter(|f| f.kind() == "lambda_expression") {
            args.insert(0, self.expr(l, depth + 1));
            return Expr {
                kind: ExprKind::Call {
                    callee: IMMEDIATE_CALL.into(),
                    template_args: Vec::new().into(),
                    args: args.into(),
                },
                span: sp,
            };
        }
        // a member function of a temporary object, which the call's text cannot name: the
        // object's expression travels with it (a constructor's call, or a type's braces)
        if let Some(object) = func
            .filter(|f| f.kind() == "field_expression" && !self.text(*f).contains("->"))
            .and_then(|f| f.child_by_field_id(fid().argument.get()))
        {
            let constructed = match object.kind() {
                "call_expression" => Some(self.expr(object, depth + 1)),
                "compound_literal_expression" => self.braced_construction(object, depth),
                // an element's member function (`nodes[i].key_bits()`): the object is in
                // memory, where the call reads its members
                "subscript_expression" => Some(self.expr(object, depth + 1)),
                _ => None,
            };
            if let Some(constructed) = constructed {
                return temporary_call(constructed, &callee, args, template_args, sp);
            }
        }
        // `stack[level]->hasStatus(s)`: the object an element points to
        if let Some(object) = func
            .filter(|f| f.kind() == "field_expression")
            .filter(|f| {
                f.child_by_field_id(fid().operator.get())
                    .is_some_and(|o| o.kind() == "->")
            })
            .and_then(|f| f.child_by_field_id(fid().argument.get()))
            .filter(|o| o.kind() == "subscript_expression")
        {
            let pointer = self.expr(object, depth + 1);
            let span = pointer.span;
            let pointee = Expr {
                kind: ExprKind::Unary {
                    op: UnOp::Deref,
                    arg: Box::new(pointer),
                },
                span,
            };
            return temporary_call(pointee, &callee, args, template_args, sp);
        }
        // `Kernel{}(params)`, `Op<T>{}(a, b)`: the call operator of a temporary functor
        if let Some(f) = func.filter(|f| f.kind() == "compound_literal_expression") {
            if let Some(constructed) = self.braced_construction(f, depth) {
                let written = "[functor].operator()";
                return temporary_call(constructed, written, args, Vec::new(), sp);
            }
        }
        // only a launch has more than the function and argument children
        let launch = if n.named_child_count() > 2 {
            named_children(n)
                .into_iter()
                .find(|c| c.kind() == "kernel_call_syntax")
        } else {
            None
        };
        if let Some(launch) = launch {
            let config = named_children(launch)
                .into_iter()
                .map(|c| self.expr(c, depth + 1))
                .collect();
            let (kernel, kernel_targs) =
                self.through_kernel_pointer(callee.clone(), template_args.clone());
            self.model.launches.push(Launch {
                kernel: kernel.rsplit("::").next().unwrap_or(&kernel).into(),
                template_args: kernel_targs,
                config,
                args: args.clone(),
                span: sp,
                host_fn: self.current_fn,
            });
        }
        let short = callee.rsplit("::").next().unwrap_or(&callee);
        if matches!(short, "cudaLaunchCooperativeKernel" | "cudaLaunchKernel") && args.len() >= 3 {
            self.runtime_launch(n, 0, args[1..3].to_vec(), Vec::new(), depth);
        }
        // `cudaLaunchKernelEx(&config, kernel, args...)` (the C++ overload, which takes the
        // kernel's arguments as they are): the shapes are the configuration's `gridDim` and
        // `blockDim`, as the host code set them
        if short == "cudaLaunchKernelEx" && args.len() >= 2 {
            let (config, arrow) = match &args[0].kind {
                ExprKind::Unary {
                    op: UnOp::AddrOf,
                    arg,
                } => ((**arg).clone(), false),
                _ => (args[0].clone(), true),
            };
            let field = |name: &str| Expr {
                kind: ExprKind::Field {
                    base: Box::new(config.clone()),
                    field: name.into(),
                    arrow,
                },
                span: config.span,
            };
            let shapes = vec![field("gridDim"), field("blockDim")];
            self.runtime_launch(n, 1, shapes, args[2..].to_vec(), depth);
        }
        // HIP's `hipLaunchKernelGGL(k, grid, block, smem, stream, args...)`, which code written
        // for both vendors (hoomd-blue) uses for CUDA too: the chevrons' four and the kernel's
        // arguments as they are
        if short == "hipLaunchKernelGGL" && args.len() >= 5 {
            self.runtime_launch(n, 0, args[1..5].to_vec(), args[5..].to_vec(), depth);
        }
        if matches!(
            short,
            "static_cast" | "reinterpret_cast" | "const_cast" | "dynamic_cast"
        ) && args.len() == 1
        {
            let ty = match template_args.first() {
                Some(TemplateArg::Type(t)) => t.clone(),
                _ => TypeRef::named("?"),
            };
            let arg = Box::new(
                args.into_iter()
                    .next()
                    .unwrap_or_else(|| Expr::unsupported("missing operand", sp)),
            );
            return Expr {
                kind: ExprKind::Cast { ty, arg },
                span: sp,
            };
        }
        let call = Expr {
            kind: ExprKind::Call {
                callee: callee.into(),
                template_args: template_args.into(),
                args: args.into(),
            },
            span: sp,
        };
        // `(*world)->hit(r, rec)`, `list[i]->hit(r)`: the pointer the method is called through
        // is loaded before the call, whatever the call turns out to be (a virtual function
        // cudalint cannot resolve, say); a receiver named by identifiers is looked up whole by
        // the call itself
        let receiver = func
            .filter(|f| f.kind() == "field_expression")
            .filter(|f| {
                f.child_by_field_id(fid().operator.get())
                    .is_some_and(|o| self.text(o) == "->")
            })
            .and_then(|f| f.child_by_field_id(fid().argument.get()))
            .filter(|r| !is_name_path(*r));
        match receiver {
            Some(r) => Expr {
                kind: ExprKind::Comma(Box::new(self.expr(r, depth + 1)), Box::new(call)),
                span: sp,
            },
            None => call,
        }
    }
}

/// `a`, `this`, `a.b`, `a->b.c`: a receiver the call looks up by name.
fn is_name_path(n: Node) -> bool {
    match n.kind() {
        "identifier" | "this" | "field_identifier" | "qualified_identifier" => true,
        "field_expression" => n
            .child_by_field_id(fid().argument.get())
            .is_some_and(is_name_path),
        _ => false,
    }
}

impl Lowerer<'_> {
    /// `cudaLaunchCooperativeKernel((void*)k<T>, grid, block, args, smem, stream)` and
    /// `cudaLaunchKernel(...)`: a launch of `k` with that grid and block (its arguments go
    /// through an array of pointers and are not bound); `hipLaunchKernelGGL`'s and
    /// `cudaLaunchKernelEx`'s are given. The kernel, argument `kernel_at` of the call, may be
    /// wrapped (`HIP_KERNEL_NAME(k<2>)`, `(void*)k`).
    fn runtime_launch(
        &mut self,
        call: Node,
        kernel_at: usize,
        config: Vec<Expr>,
        args: Vec<Expr>,
        depth: usize,
    ) {
        let Some(first) = call
            .child_by_field_id(fid().arguments.get())
            .and_then(|a| named_children(a).into_iter().nth(kernel_at))
        else {
            return;
        };
        let Some((name, template_args)) = self.function_named(first, depth) else {
            return;
        };
        let (name, template_args) = self.through_kernel_pointer(name, template_args);
        self.model.launches.push(Launch {
            kernel: name.rsplit("::").next().unwrap_or(&name).into(),
            template_args,
            config,
            args,
            span: span(call),
            host_fn: self.current_fn,
        });
    }

    /// The function a kernel operand names, through the wrappers code puts around it
    /// (`(void*)k<T>`, `&k<T>`, `HIP_KERNEL_NAME(k<2>)`, `reinterpret_cast<void*>(k)`): its
    /// name as written and its template arguments.
    pub(super) fn function_named(
        &mut self,
        first: Node,
        depth: usize,
    ) -> Option<(String, Vec<TemplateArg>)> {
        let mut k = first;
        loop {
            k = match k.kind() {
                "cast_expression" => k.child_by_field_id(fid().value.get())?,
                "parenthesized_expression" | "pointer_expression" => super::last_named(k)?,
                // `reinterpret_cast<void*>(k)`
                "call_expression" => k
                    .child_by_field_id(fid().arguments.get())
                    .and_then(|a| named_children(a).into_iter().next())?,
                _ => break,
            };
        }
        let (name, template_args) = match k.kind() {
            "identifier" | "qualified_identifier" => (self.text(k).to_string(), Vec::new()),
            "template_function" => {
                let name = k.child_by_field_id(fid().name.get())?;
                let targs = self.template_args(k.child_by_field_id(fid().arguments.get()), depth);
                (self.text(name).to_string(), targs)
            }
            _ => return None,
        };
        Some((name.split_whitespace().collect(), template_args))
    }

    /// The kernel a launch names through a variable that holds its address (`auto kernel =
    /// &k<Ktraits>; kernel<<<grid, block>>>(...)`, the form `cudaFuncSetAttribute` needs):
    /// the variable's initialiser, the latest declaration of that name in the function so far.
    /// Any other name is the kernel's own.
    pub(super) fn through_kernel_pointer(
        &self,
        name: String,
        template_args: Vec<TemplateArg>,
    ) -> (String, Vec<TemplateArg>) {
        if !template_args.is_empty() {
            return (name, template_args);
        }
        match self.kernel_pointers.iter().rev().find(|(v, ..)| *v == name) {
            Some((_, k, targs)) => (k.clone(), targs.clone()),
            None => (name, template_args),
        }
    }
}

/// C integer literal (decimal, hex, octal, binary, with `'` separators and u/l suffixes).
/// Floating literals give `None`.
pub fn parse_number(text: &str) -> Option<ExprKind> {
    let t: String = text.chars().filter(|c| *c != '\'').collect();
    let lower = t.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if !is_hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f')) {
        return None;
    }
    if lower.contains('.') || lower.contains('p') && is_hex {
        return None;
    }
    let digits = lower.trim_end_matches(['u', 'l', 'z']);
    let value = if let Some(h) = digits.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(b) = digits.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse::<i64>().ok()
    };
    value.map(ExprKind::Int)
}

/// Parses a macro replacement text as an expression; spans are shifted to `offset`.
/// A macro body that is one decimal number or one capitalised name (`256`, `BLOCK_SIZE`):
/// most `#define`s of a header are, and parsing each as a snippet was a seventh of lowering.
/// (Lower-case words may be keywords, `NULL` is a null pointer: they go through the parser.)
fn plain_operand(text: &str) -> Option<ExprKind> {
    let b = text.as_bytes();
    let first = *b.first()?;
    if first.is_ascii_digit() {
        return b
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| parse_number(text))
            .flatten();
    }
    let word =
        first.is_ascii_alphabetic() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    (word && b.iter().any(u8::is_ascii_uppercase) && text != "NULL")
        .then(|| ExprKind::Ident(text.into()))
}

pub(super) fn parse_expression_snippet(text: &str, offset: usize) -> Option<Expr> {
    const PREFIX: &str = "void __cudalint_m() { (void)(";
    let trimmed = text.trim_end();
    if trimmed.is_empty() || trimmed.len() > 4096 {
        return None;
    }
    if let Some(kind) = plain_operand(trimmed) {
        let end = offset + trimmed.len();
        return Some(Expr {
            kind,
            span: Span {
                start: offset as u32,
                end: end as u32,
            },
        });
    }
    let src = format!("{PREFIX}{trimmed}\n); }}");
    let tree = crate::with_parser(|p| p.parse(&src, None))?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    // function_definition > compound_statement > expression_statement > cast_expression > value
    let f = root.named_child(0)?;
    let body = f.child_by_field_id(fid().body.get())?;
    let stmt = body.named_child(0)?;
    let cast = stmt.named_child(0)?;
    let value = cast.child_by_field_id(fid().value.get())?;
    let inner = if value.kind() == "parenthesized_expression" {
        value.named_child(0)?
    } else {
        value
    };
    let mut l = Lowerer::new(&src);
    let mut e = l.expr(inner, 0);
    e.shift(offset as i64 - PREFIX.len() as i64);
    Some(e)
}

/// `cp.async.cg.shared.global [%0], [%1], 16;` (with an optional cache hint and source size):
/// the destination's and the source's operand numbers and the bytes copied.
pub(super) fn parse_cp_async(code: &str) -> Option<(usize, usize, i64)> {
    let at = code.find("cp.async.")?;
    let rest = &code[at..];
    let head = &rest[..rest.find(char::is_whitespace)?];
    if !head.contains(".shared") || !head.contains(".global") {
        return None;
    }
    let operand = |s: &str| -> Option<(usize, usize)> {
        let open = s.find("[%")?;
        let close = open + s[open..].find(']')?;
        Some((s[open + 2..close].trim().parse().ok()?, close + 1))
    };
    let (dst, after) = operand(rest)?;
    let (src, after2) = operand(&rest[after..])?;
    let tail = rest[after + after2..]
        .trim_start()
        .strip_prefix(',')?
        .trim_start();
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    let bytes: i64 = digits.parse().ok()?;
    matches!(bytes, 4 | 8 | 16).then_some((dst, src, bytes))
}

#[cfg(test)]
mod asm_tests {
    #[test]
    fn cp_async_templates_give_their_operands_and_size() {
        assert_eq!(
            super::parse_cp_async("\"cp.async.cg.shared.global [%0], [%1], 16;\\n\""),
            Some((0, 1, 16))
        );
        assert_eq!(
            super::parse_cp_async("\"cp.async.ca.shared.global.L2::128B [%1], [%0], 4, %2;\""),
            Some((1, 0, 4))
        );
        assert_eq!(super::parse_cp_async("\"cp.async.commit_group;\""), None);
        assert_eq!(
            super::parse_cp_async("\"ld.global.nc.v4.f32 {%0}, [%1];\""),
            None
        );
    }
}

#[cfg(test)]
mod receiver_tests {
    use crate::model::{ExprKind, Stmt};

    fn first_expr(src: &str) -> ExprKind {
        let f = crate::parse(src).unwrap();
        let body = f.model.functions[0].body.clone().unwrap();
        match &body[0] {
            Stmt::Expr(e) => e.kind.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_method_called_through_a_loaded_pointer_loads_it_first() {
        // the pointer `(*world)` is evaluated, then the call
        let ExprKind::Comma(recv, call) =
            first_expr("__device__ void f(S** world) { (*world)->hit(1); }")
        else {
            panic!("not a comma");
        };
        assert!(matches!(recv.kind, ExprKind::Unary { .. }), "{recv:?}");
        assert!(matches!(call.kind, ExprKind::Call { .. }), "{call:?}");
        // a receiver named by identifiers is the call's own business
        assert!(matches!(
            first_expr("__device__ void f(S* s) { s->hit(1); }"),
            ExprKind::Call { .. }
        ));
    }
}

#[cfg(test)]
mod comment_tests {
    #[test]
    fn comments_among_arguments_are_not_arguments() {
        let f = crate::parse(
            "void h(float* p) { k<float, /*FAST=*/true><<<1, 32>>>(p /* in */, /* n */ 4); }",
        )
        .unwrap();
        let l = &f.model.launches[0];
        assert_eq!(l.template_args.len(), 2);
        assert_eq!(l.args.len(), 2);
    }

    #[test]
    fn a_launch_through_a_variable_launches_the_kernel_it_holds() {
        let f = crate::parse(
            "void h(float* p) {\n\
             auto kernel = &k<Traits<128, 4>>;\n\
             cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);\n\
             kernel<<<1, 128>>>(p);\n\
             auto plain = k2<float>;\n\
             plain<<<1, 64>>>(p);\n\
             int n = 0; int* q = &n;\n\
             other<<<1, 32>>>(p);\n\
             }\n\
             void g(float* p) { kernel<<<1, 32>>>(p); }",
        )
        .unwrap();
        let l = &f.model.launches;
        let named: Vec<(&str, usize)> = l
            .iter()
            .map(|l| (l.kernel.as_str(), l.template_args.len()))
            .collect();
        // the variable is the function's own: `g`'s `kernel` is a kernel of that name
        assert_eq!(
            named,
            [("k", 1), ("k2", 1), ("other", 0), ("kernel", 0)],
            "{l:?}"
        );
    }
}

/// A call of member `written` on the temporary `constructed` (see [`TEMPORARY_CALL`]).
fn temporary_call(
    constructed: Expr,
    written: &str,
    mut args: Vec<Expr>,
    template_args: Vec<TemplateArg>,
    sp: Span,
) -> Expr {
    let written = Expr {
        kind: ExprKind::Ident(written.into()),
        span: sp,
    };
    args.splice(0..0, [constructed, written]);
    Expr {
        kind: ExprKind::Call {
            callee: TEMPORARY_CALL.into(),
            template_args: template_args.into(),
            args: args.into(),
        },
        span: sp,
    }
}
