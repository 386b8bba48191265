//! A statement macro used where it is invoked: `#define CUDA_KERNEL_LOOP(i, n) for (int i =
//! ...; i < (n); i += ...)` then `CUDA_KERNEL_LOOP(index, nthreads) { body }`, or `#define
//! CADD(a, b, c) { (c).real = (a).real + (b).real; ... }` then `CADD(x[i], y[i], z[i]);`. The
//! macro's parameters become the invocation's arguments: a parameter given a plain name
//! renames a variable the macro declares and is that name where used, any other is replaced
//! by the argument's expression.

use crate::model::*;

/// The head of `def` (a loop macro) with `args` in place of its parameters, and `body` as its
/// body; `None` when `def` is not a loop macro of that arity.
pub fn expand_loop_macro(def: &Define, args: &[Expr], body: Vec<Stmt>) -> Option<Stmt> {
    let mut s = substituted(def, args)?;
    *open_body(&mut s)? = body;
    Some(s)
}

/// The body a loop head without one leaves open: the loop's, or where loops nest (mmcv's
/// `#define CUDA_2D_KERNEL_LOOP(i, n, j, m) for (...) for (...)`) the innermost's.
fn open_body(s: &mut Stmt) -> Option<&mut Vec<Stmt>> {
    match s {
        Stmt::For { body, .. } | Stmt::While { body, .. } => {
            if body.is_empty() {
                return Some(body);
            }
            match body.as_mut_slice() {
                [inner @ (Stmt::For { .. } | Stmt::While { .. })] => open_body(inner),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The statement `def` stands for (a block, `do ... while (0)`, a loop with its body) with
/// `args` in place of its parameters; `None` for a loop head without a body, or another arity.
pub fn expand_statement_macro(def: &Define, args: &[Expr]) -> Option<Stmt> {
    let mut s = substituted(def, args)?;
    match open_body(&mut s) {
        Some(_) => None,
        None => Some(s),
    }
}

/// Stands for `##` in a macro's replacement, so that `LD##A` parses as one name, `LDµA`, whose
/// parts the invocation's arguments replace. Two bytes, as `##` is.
pub const PASTE: char = '\u{b5}';

/// A macro replacement with each `a ## b` written `aµb` (MAGMA's `#define fetch(A, m, n, bound)
/// A[min(n*LD##A+m, bound)]`), spaces around the `##` moved after the joined name so that
/// every other token keeps its offset.
pub fn mark_pastes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("##") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut pending = 0usize;
    let mut rest = text;
    while let Some(at) = rest.find("##") {
        let (before, after) = rest.split_at(at);
        let kept = before.trim_end();
        pending += before.len() - kept.len();
        out.push_str(kept);
        out.push(PASTE);
        let after = &after[2..];
        let next = after.trim_start();
        pending += after.len() - next.len();
        // the spaces go after the next token
        let end = next
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(next.len());
        out.push_str(&next[..end]);
        rest = &next[end..];
        // (`a ## b ## c`: `b` is joined on to the next name too, the spaces go after `c`)
        if !rest.trim_start().starts_with("##") {
            out.extend(std::iter::repeat_n(' ', pending));
            pending = 0;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// `LDµA` with parameter `A` given `dA`: the name the invocation pastes together, `LDdA`.
fn pasted(name: &str, params: &[Name], args: &[Expr]) -> Option<Name> {
    if !name.contains(PASTE) {
        return None;
    }
    let mut out = String::new();
    for part in name.split(PASTE) {
        match params
            .iter()
            .position(|p| p == part)
            .and_then(|k| args.get(k))
        {
            Some(Expr {
                kind: ExprKind::Ident(n),
                ..
            }) => out.push_str(n),
            Some(Expr {
                kind: ExprKind::Int(v),
                ..
            }) => out.push_str(&v.to_string()),
            Some(_) => return None,
            None => out.push_str(part),
        }
    }
    Some(out.into())
}

/// A function-like macro's expression body with `args` written in place of its parameters.
pub fn expand_expression_macro(params: &[Name], body: &Expr, args: &[Expr]) -> Expr {
    let mut e = body.clone();
    walk_expr(&mut e, &|x: &mut Expr| {
        if let ExprKind::Ident(name) = &x.kind {
            if let Some(k) = params.iter().position(|p| p == name) {
                if let Some(a) = args.get(k) {
                    *x = a.clone();
                }
            } else if let Some(n) = pasted(name, params, args) {
                x.kind = ExprKind::Ident(n);
            }
        }
    });
    e
}

/// Whether a macro's body uses one of its parameters as a place, not a value: takes its
/// address (`&(value)`), assigns to it or to a member of it, or steps it (pytorch3d's
/// `#define FASI(a, loc) (loc) = __float_as_int(a)`). The argument must then be written in,
/// for the caller to see what the body did to it.
pub fn param_is_a_place(params: &[Name], body: &Expr) -> bool {
    fn mentions(e: &Expr, params: &[Name]) -> bool {
        let found = std::cell::Cell::new(false);
        let mut copy = e.clone();
        walk_expr(&mut copy, &|x: &mut Expr| {
            if let ExprKind::Ident(n) = &x.kind {
                if params.iter().any(|p| p == n) {
                    found.set(true);
                }
            }
        });
        found.get()
    }
    fn names_param(e: &Expr, params: &[Name]) -> bool {
        match &e.kind {
            ExprKind::Ident(n) => params.iter().any(|p| p == n),
            ExprKind::Field {
                base, arrow: false, ..
            } => names_param(base, params),
            _ => false,
        }
    }
    fn visit(e: &Expr, params: &[Name]) -> bool {
        match &e.kind {
            ExprKind::Unary {
                op: UnOp::AddrOf,
                arg,
            } => mentions(arg, params),
            ExprKind::Unary {
                op: UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec,
                arg,
            } => names_param(arg, params) || visit(arg, params),
            ExprKind::Assign { lhs, rhs, .. } => {
                names_param(lhs, params) || visit(lhs, params) || visit(rhs, params)
            }
            ExprKind::Field { base, .. } => visit(base, params),
            ExprKind::Index { base, index } => visit(base, params) || visit(index, params),
            ExprKind::Unary { arg, .. }
            | ExprKind::Cast { arg, .. }
            | ExprKind::SizeofExpr(arg) => visit(arg, params),
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Comma(lhs, rhs) => {
                visit(lhs, params) || visit(rhs, params)
            }
            ExprKind::Cond { cond, then, els } => {
                visit(cond, params) || visit(then, params) || visit(els, params)
            }
            ExprKind::Call { args, .. } => args.iter().any(|a| visit(a, params)),
            ExprKind::Init(args) => args.iter().any(|a| visit(a, params)),
            _ => false,
        }
    }
    visit(body, params)
}

fn substituted(def: &Define, args: &[Expr]) -> Option<Stmt> {
    let head = def.statement.as_deref()?;
    let params = def.params.as_ref()?;
    if params.len() != args.len() {
        return None;
    }
    let mut s = head.clone();
    let subst = |e: &mut Expr| match &mut e.kind {
        ExprKind::Ident(name) => {
            if let Some(k) = params.iter().position(|p| p == name) {
                *e = args[k].clone();
            } else if let Some(n) = pasted(name, params, args) {
                *name = n;
            }
        }
        // `op(mine, load(i))` with `op` given `sum`: the function the argument names
        ExprKind::Call { callee, .. } => {
            if let Some(k) = params.iter().position(|p| p == callee) {
                if let ExprKind::Ident(to) = &args[k].kind {
                    *callee = to.clone();
                }
            }
        }
        _ => {}
    };
    let renamed = |name: &mut Name| {
        if let Some(k) = params.iter().position(|p| p == name) {
            if let ExprKind::Ident(to) = &args[k].kind {
                *name = to.clone();
            }
        }
    };
    walk_stmt(&mut s, &subst, &renamed);
    Some(s)
}

fn walk_stmt(s: &mut Stmt, f: &dyn Fn(&mut Expr), rename: &dyn Fn(&mut Name)) {
    match s {
        Stmt::Decl(d) => {
            rename(&mut d.name);
            for dim in &mut d.dims {
                if let Some(size) = &mut dim.size {
                    walk_expr(size, f);
                }
            }
            if let Some(init) = &mut d.init {
                walk_expr(init, f);
            }
        }
        Stmt::Expr(e) => walk_expr(e, f),
        Stmt::If { cond, then, els } => {
            walk_expr(cond, f);
            then.iter_mut().for_each(|s| walk_stmt(s, f, rename));
            els.iter_mut().for_each(|s| walk_stmt(s, f, rename));
        }
        Stmt::For {
            init,
            cond,
            update,
            body,
            span: _,
        } => {
            init.iter_mut().for_each(|s| walk_stmt(s, f, rename));
            if let Some(c) = cond {
                walk_expr(c, f);
            }
            if let Some(u) = update {
                walk_expr(u, f);
            }
            body.iter_mut().for_each(|s| walk_stmt(s, f, rename));
        }
        Stmt::While { cond, body, .. } => {
            walk_expr(cond, f);
            body.iter_mut().for_each(|s| walk_stmt(s, f, rename));
        }
        Stmt::Block(body) => body.iter_mut().for_each(|s| walk_stmt(s, f, rename)),
        Stmt::Return(Some(e), _) => walk_expr(e, f),
        Stmt::Return(None, _) | Stmt::Break | Stmt::Continue | Stmt::Other(_) => {}
    }
}

/// Calls `f` on every identifier and every call (before its arguments) of `e`.
fn walk_expr(e: &mut Expr, f: &dyn Fn(&mut Expr)) {
    if let ExprKind::Ident(_) = e.kind {
        f(e);
        return;
    }
    if let ExprKind::Call { .. } = e.kind {
        f(e);
    }
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Float
        | ExprKind::Bool(_)
        | ExprKind::Str
        | ExprKind::Ident(_)
        | ExprKind::SizeofType(_)
        | ExprKind::Unsupported(_) => {}
        // a lambda the replacement writes (`auto load = [&](int k) { return row[k * (stride)];
        // }`): the arguments go into its body too, as the preprocessor puts them
        ExprKind::Lambda(def) => {
            let def = std::sync::Arc::make_mut(def);
            def.body.iter_mut().for_each(|s| walk_stmt(s, f, &|_| {}));
        }
        ExprKind::Field { base, .. } => walk_expr(base, f),
        ExprKind::Index { base, index } => {
            walk_expr(base, f);
            walk_expr(index, f);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } | ExprKind::SizeofExpr(arg) => {
            walk_expr(arg, f)
        }
        ExprKind::Binary { lhs, rhs, .. }
        | ExprKind::Assign { lhs, rhs, .. }
        | ExprKind::Comma(lhs, rhs) => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        ExprKind::Cond { cond, then, els } => {
            walk_expr(cond, f);
            walk_expr(then, f);
            walk_expr(els, f);
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| walk_expr(a, f)),
        ExprKind::Init(args) => args.iter_mut().for_each(|a| walk_expr(a, f)),
    }
}

/// `text` with each whole-word `word` replaced by `with`.
pub fn replace_word(text: &str, word: &str, with: &str) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.match_indices(word) {
        let before = text[..i].chars().last();
        let after = text[i + word.len()..].chars().next();
        if before.is_some_and(ident) || after.is_some_and(ident) {
            continue;
        }
        out.push_str(&text[last..i]);
        out.push_str(with);
        last = i + word.len();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_names_keep_every_other_offset() {
        let text = "A[min(n*LD##A+m, bound)] + x ## y - B + p ## q ## r";
        let marked = mark_pastes(text);
        assert_eq!(marked.len(), text.len());
        assert_eq!(
            marked,
            "A[min(n*LD\u{b5}A+m, bound)] + x\u{b5}y   - B + p\u{b5}q\u{b5}r    "
        );
        assert_eq!(mark_pastes("a + b"), "a + b");
    }

    #[test]
    fn an_invocation_pastes_its_arguments_in() {
        // MAGMA's `#define fetch(A, m, n, bound) A[min(n*LD##A+m, bound)]`, `fetch(dA, i, 0, b)`
        let m = crate::parse("#define fetch(A, m, n, bound) A[min(n*LD##A+m, bound)]\n")
            .unwrap()
            .model;
        let def = &m.defines[0];
        assert!(def.pastes);
        let arg = |name: &str| Expr {
            kind: ExprKind::Ident(name.into()),
            span: Span::default(),
        };
        let args = [arg("dA"), arg("i"), arg("j"), arg("b")];
        let params = def.params.as_ref().unwrap();
        let e = expand_expression_macro(params, def.body.as_ref().unwrap(), &args);
        let text = format!("{e:?}");
        assert!(text.contains("Ident(\"LDdA\")"), "{text}");
    }
}
