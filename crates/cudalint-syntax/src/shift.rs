//! Moving a lowered piece of the model by a byte offset: an item that an edit before it only
//! pushed along keeps its lowering, with every span moved (see `reuse`). Every type is taken
//! apart field by field, so a new field with a span does not compile until it is moved here.

use crate::model::*;

pub(crate) trait Shift {
    fn shift(&mut self, by: i64);
}

impl Shift for Span {
    fn shift(&mut self, by: i64) {
        self.start = (self.start as i64 + by).max(0) as u32;
        self.end = (self.end as i64 + by).max(0) as u32;
    }
}

impl<T: Shift> Shift for Option<T> {
    fn shift(&mut self, by: i64) {
        if let Some(x) = self {
            x.shift(by);
        }
    }
}

impl<T: Shift> Shift for [T] {
    fn shift(&mut self, by: i64) {
        self.iter_mut().for_each(|x| x.shift(by));
    }
}

impl<T: Shift> Shift for Vec<T> {
    fn shift(&mut self, by: i64) {
        self.as_mut_slice().shift(by);
    }
}

impl<T: Shift + ?Sized> Shift for Box<T> {
    fn shift(&mut self, by: i64) {
        (**self).shift(by);
    }
}

impl Shift for TemplateArg {
    fn shift(&mut self, by: i64) {
        match self {
            TemplateArg::Type(_) => {}
            TemplateArg::Expr(e) => e.shift(by),
        }
    }
}

impl Shift for Expr {
    fn shift(&mut self, by: i64) {
        let Expr { kind, span } = self;
        span.shift(by);
        match kind {
            ExprKind::Int(_)
            | ExprKind::Float
            | ExprKind::Bool(_)
            | ExprKind::Str
            | ExprKind::Ident(_)
            | ExprKind::SizeofType(_)
            | ExprKind::Unsupported(_) => {}
            ExprKind::Lambda(l) => {
                let l = std::sync::Arc::make_mut(l);
                for p in &mut l.params {
                    p.shift(by);
                }
                for s in &mut l.body {
                    s.shift(by);
                }
            }
            ExprKind::Field {
                base,
                field: _,
                arrow: _,
            } => base.shift(by),
            ExprKind::Index { base, index } => {
                base.shift(by);
                index.shift(by);
            }
            ExprKind::Unary { op: _, arg }
            | ExprKind::Cast { ty: _, arg }
            | ExprKind::SizeofExpr(arg) => arg.shift(by),
            ExprKind::Binary { op: _, lhs, rhs }
            | ExprKind::Assign { op: _, lhs, rhs }
            | ExprKind::Comma(lhs, rhs) => {
                lhs.shift(by);
                rhs.shift(by);
            }
            ExprKind::Cond { cond, then, els } => {
                cond.shift(by);
                then.shift(by);
                els.shift(by);
            }
            ExprKind::Call {
                callee: _,
                template_args,
                args,
            } => {
                template_args.shift(by);
                args.shift(by);
            }
            ExprKind::Init(args) => args.shift(by),
        }
    }
}

impl Shift for Dim {
    fn shift(&mut self, by: i64) {
        let Dim { size, span } = self;
        size.shift(by);
        span.shift(by);
    }
}

impl Shift for Decl {
    fn shift(&mut self, by: i64) {
        let Decl {
            name: _,
            name_span,
            ty: _,
            dims,
            init,
            shared: _,
            constant: _,
            device: _,
            is_extern: _,
            is_const: _,
            is_reference: _,
            span,
        } = self;
        name_span.shift(by);
        dims.shift(by);
        init.shift(by);
        span.shift(by);
    }
}

impl Shift for Stmt {
    fn shift(&mut self, by: i64) {
        match self {
            Stmt::Decl(d) => d.shift(by),
            Stmt::Expr(e) => e.shift(by),
            Stmt::If { cond, then, els } => {
                cond.shift(by);
                then.shift(by);
                els.shift(by);
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                span,
            } => {
                init.shift(by);
                cond.shift(by);
                update.shift(by);
                body.shift(by);
                span.shift(by);
            }
            Stmt::While {
                cond,
                body,
                do_while: _,
            } => {
                cond.shift(by);
                body.shift(by);
            }
            Stmt::Block(body) => body.shift(by),
            Stmt::Return(value, span) => {
                value.shift(by);
                span.shift(by);
            }
            Stmt::Break | Stmt::Continue => {}
            Stmt::Other(span) => span.shift(by),
        }
    }
}

impl Shift for TemplateParam {
    fn shift(&mut self, by: i64) {
        let TemplateParam {
            name: _,
            is_type: _,
            default,
        } = self;
        default.shift(by);
    }
}

impl Shift for Param {
    fn shift(&mut self, by: i64) {
        let Param {
            name: _,
            ty: _,
            is_reference: _,
            is_restrict: _,
            dims,
            default,
            span,
        } = self;
        dims.shift(by);
        if let Some(d) = default {
            d.shift(by);
        }
        span.shift(by);
    }
}

impl Shift for Function {
    fn shift(&mut self, by: i64) {
        let Function {
            name: _,
            name_span,
            span,
            kind: _,
            template_params,
            params,
            body,
            launch_bounds,
            parse_error,
            owner: _,
            returns_reference: _,
            returns_pointer: _,
            param_macro: _,
        } = self;
        name_span.shift(by);
        span.shift(by);
        template_params.shift(by);
        params.shift(by);
        body.shift(by);
        launch_bounds.shift(by);
        parse_error.shift(by);
    }
}

impl Shift for FieldDef {
    fn shift(&mut self, by: i64) {
        let FieldDef {
            name: _,
            ty: _,
            array_len,
            inner_dims,
            align,
            is_reference: _,
        } = self;
        array_len.shift(by);
        inner_dims.shift(by);
        align.shift(by);
    }
}

impl Shift for StructDef {
    fn shift(&mut self, by: i64) {
        let StructDef {
            name: _,
            fields,
            template_params: _,
            statics,
            extern_shared: _,
            is_union: _,
            align,
            bases: _,
            span,
        } = self;
        fields.shift(by);
        statics.iter_mut().for_each(|(_, e)| e.shift(by));
        align.iter_mut().for_each(|e| e.shift(by));
        span.shift(by);
    }
}

impl Shift for Typedef {
    fn shift(&mut self, _by: i64) {
        let Typedef {
            name: _,
            ty: _,
            params: _,
        } = self;
    }
}

impl Shift for Define {
    fn shift(&mut self, by: i64) {
        let Define {
            name: _,
            params: _,
            body,
            as_type: _,
            statement,
            sequence: _,
            empty: _,
            pastes: _,
            launches,
            as_params,
            span,
        } = self;
        body.shift(by);
        statement.shift(by);
        launches.iter_mut().for_each(|l| l.shift(by));
        as_params.shift(by);
        span.shift(by);
    }
}

/// `host_fn` is an index, not a position: `reuse` renumbers it.
impl Shift for Launch {
    fn shift(&mut self, by: i64) {
        let Launch {
            kernel: _,
            template_args,
            config,
            args,
            span,
            host_fn: _,
        } = self;
        template_args.shift(by);
        config.shift(by);
        args.shift(by);
        span.shift(by);
    }
}

impl Shift for Instantiation {
    fn shift(&mut self, by: i64) {
        let Instantiation {
            function: _,
            template_args,
            span,
        } = self;
        template_args.shift(by);
        span.shift(by);
    }
}

impl Shift for String {
    fn shift(&mut self, _by: i64) {}
}
