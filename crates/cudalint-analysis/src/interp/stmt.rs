//! Statements: blocks, `if` with lane masks and the merge of what its branches left
//! different, declarations (arrays, `dim3`, vectors, pointers). Loops hand over to `loops.rs`,
//! expressions to `expr.rs`.

use super::{loops::collect_inductions, KernelRun, Ptr, Space, Val, LOCAL_OBJECT, MAX_STEPS};
use crate::sym::{self, Sym, UnaryOp};
use crate::types;
use crate::types::TrimLiteral;
use cudalint_syntax::{BinOp, Decl, Expr, ExprKind, Stmt, TypeRef, UnOp};
use std::rc::Rc;

impl KernelRun<'_> {
    pub(super) fn stmts(&mut self, body: &[Stmt]) {
        self.scopes.push(Vec::new());
        self.stmts_in_scope(body);
        self.scopes.pop();
    }

    /// `body`'s statements in the scope open now.
    fn stmts_in_scope(&mut self, body: &[Stmt]) {
        let mut i = 0;
        while i < body.len() {
            // `CUDA_KERNEL_LOOP(i, n) { ... }` (the preprocessing put a `;` after the
            // invocation): the macro's loop around the block after it
            if let Some(looped) = body
                .get(i + 1)
                .and_then(|next| self.loop_macro(&body[i], next))
            {
                self.stmt(&looped);
                i += 2;
            } else if let Some((expanded, span, sequence)) = self.statement_macro(&body[i]) {
                // `CADD(a->c[i], b->c[i], c->c[i]);`: the block the macro stands for, its
                // accesses filed at the invocation
                self.macro_depth += 1;
                if self.macro_depth <= 32 {
                    let saved = self.site_override;
                    let site = self.loc(span);
                    self.site_override = Some(saved.unwrap_or(site));
                    match &expanded {
                        Stmt::Block(run) if sequence => self.stmts_in_scope(run),
                        _ => self.stmt(&expanded),
                    }
                    self.site_override = saved;
                }
                self.macro_depth -= 1;
                i += 1;
            } else {
                self.stmt(&body[i]);
                i += 1;
            }
            if self.frames.len() > 1
                && self
                    .frames
                    .last()
                    .is_some_and(|f| f.ret.is_some() || f.returns.cut)
            {
                break;
            }
        }
    }

    /// The statement a statement macro's invocation stands for, the invocation's span, and
    /// whether it is a run of statements in the invoker's scope.
    fn statement_macro(&self, s: &Stmt) -> Option<(Stmt, cudalint_syntax::Span, bool)> {
        let Stmt::Expr(Expr {
            kind: ExprKind::Call { callee, args, .. },
            span,
        }) = s
        else {
            return None;
        };
        let (def, args) = self.statement_macro_def(callee, args)?;
        cudalint_syntax::substitute::expand_statement_macro(def, &args)
            .map(|s| (s, *span, def.sequence))
    }

    /// The statement macro an invocation of `callee` reaches, with the arguments it is given
    /// there: through macros that only forward to another (OneFlow's `#define
    /// XPU_1D_KERNEL_LOOP(i, n) CUDA_1D_KERNEL_LOOP(i, n)`), whose arguments are the
    /// invocation's written into the call they make.
    fn statement_macro_def(
        &self,
        callee: &str,
        args: &[Expr],
    ) -> Option<(&cudalint_syntax::Define, Vec<Expr>)> {
        let mut args = args.to_vec();
        let mut def = self
            .project
            .function_macro(callee, args.len(), self.file())?;
        for _ in 0..8 {
            if def.statement.is_some() {
                return Some((def, args));
            }
            let Some(Expr {
                kind:
                    ExprKind::Call {
                        callee: inner,
                        args: passed,
                        ..
                    },
                ..
            }) = &def.body
            else {
                return None;
            };
            let params = def.params.as_ref()?;
            args = passed
                .iter()
                .map(|a| cudalint_syntax::substitute::expand_expression_macro(params, a, &args))
                .collect();
            def = self
                .project
                .function_macro(inner, args.len(), self.file())?;
        }
        None
    }

    fn loop_macro(&self, s: &Stmt, next: &Stmt) -> Option<Stmt> {
        let (
            Stmt::Expr(Expr {
                kind: ExprKind::Call { callee, args, .. },
                ..
            }),
            Stmt::Block(block),
        ) = (s, next)
        else {
            return None;
        };
        let (def, args) = self.statement_macro_def(callee, args)?;
        cudalint_syntax::substitute::expand_loop_macro(def, &args, block.clone())
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return;
        }
        if self.steps.is_multiple_of(512) && self.deadline.is_some_and(|d| d.passed()) {
            // every statement after this one returns at once, as past MAX_STEPS
            self.out_of_time = true;
            self.steps = MAX_STEPS;
            return;
        }
        match s {
            Stmt::Decl(d) => self.decl(d),
            Stmt::Expr(e) => {
                self.rvalue(e);
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::If { cond, then, els } => {
                let c = self.rvalue(cond);
                let mut c = self.truth(c).sym();
                // (not where it tests what the loop around it changes: `if (pidx == 2)` after
                // `points[++pidx] = ...` holds in some iteration, whatever the first one saw)
                if c.as_const().is_some() && self.reads_carried(cond) {
                    c = sym::unknown("a condition on what the loop changes");
                }
                // a condition known at analysis time (a launch literal, NULL, a template
                // argument) leaves the other branch dead: its accesses never execute
                if let Some(v) = c.as_const() {
                    self.stmts(if v != 0 { then } else { els });
                    return;
                }
                let saved = self.mask.clone();
                let one = one_thread(&c);
                let maskable =
                    one.is_none() && c.lane_varying && !c.data && c.unknown_reason().is_none();
                if maskable {
                    self.mask = sym::and(saved.clone(), c.clone());
                } else if let Some(one) = one {
                    self.mask = sym::and(saved.clone(), one);
                }
                let before = self.scopes.clone();
                let outer_branch = self.branch;
                let not_c = sym::un(UnaryOp::Not, c.clone());
                let path = self.return_path();
                // what the thread held before the branch it holds in both arms; what one arm
                // loads or stores is not known to be in registers in the other, or after
                let held = self.in_registers.clone();
                // a condition read from memory lane by lane: some lanes take each arm
                let divergent = u32::from(c.lane_varying && c.data);
                self.divergent += divergent;
                self.enter_branch();
                self.set_return_path(path.clone(), Some(&c));
                self.stmts(then);
                let then_cut = self.take_cut();
                let then_returns = ends_with_return(then);
                let after_then = std::mem::replace(&mut self.scopes, before.clone());
                if maskable {
                    self.mask = sym::and(saved.clone(), not_c.clone());
                }
                let then_held = std::mem::replace(&mut self.in_registers, held);
                self.enter_branch();
                self.set_return_path(path.clone(), Some(&not_c));
                self.stmts(els);
                let else_cut = self.take_cut();
                self.divergent -= divergent;
                self.set_return_path(path, None);
                // after the `if`, what both arms that go on to it still hold; an arm that
                // leaves (`continue`, `break`, `return`) does not reach it
                let else_held = std::mem::take(&mut self.in_registers);
                self.in_registers = match (
                    !then_cut && !ends_with_jump(then),
                    !else_cut && !ends_with_jump(els),
                ) {
                    (true, true) => then_held
                        .into_iter()
                        .filter(|e| else_held.iter().any(|f| same_held(e, f)))
                        .collect(),
                    (true, false) => then_held,
                    (false, true) => else_held,
                    (false, false) => Vec::new(),
                };
                self.branch = outer_branch;
                self.mask = saved;
                self.merge_branches(&c, &before, &after_then);
                // in an inlined function, the lanes that returned in a branch skip the rest
                if self.frames.len() > 1 && (then_cut || else_cut) {
                    self.after_early_return(then_cut, else_cut, &c, &not_c, maskable);
                    return;
                }
                // `if (i >= n) return;` leaves only the other lanes running
                if maskable && then_returns && self.frames.len() == 1 {
                    self.mask = sym::and(self.mask.clone(), sym::un(UnaryOp::Not, c));
                } else if maskable
                    && ends_with_return(els)
                    && !els.is_empty()
                    && self.frames.len() == 1
                {
                    self.mask = sym::and(self.mask.clone(), c);
                }
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                span,
            } => {
                self.scopes.push(Vec::new());
                for s in init {
                    self.stmt(s);
                }
                let mut steps = Vec::new();
                if let Some(u) = update {
                    collect_inductions(u, &mut steps);
                }
                self.run_loop(cond.as_deref(), body, update.as_deref(), steps, *span);
                self.scopes.pop();
            }
            Stmt::While {
                cond,
                body,
                do_while,
            } => {
                self.scopes.push(Vec::new());
                // a `do`'s condition is read after every iteration's body, like a `for`'s
                // update (`} while (same[blockIdx.x] < CUTOFF);` loads each time round)
                if *do_while {
                    self.run_loop(None, body, Some(cond), Vec::new(), cond.span);
                } else {
                    self.run_loop(Some(cond), body, None, Vec::new(), cond.span);
                }
                self.scopes.pop();
            }
            Stmt::Return(e, _) => {
                let v = match e {
                    // `return *this;` ending an `operator=` or `+=`: the object, by reference
                    // (nothing is read)
                    Some(Expr {
                        kind:
                            ExprKind::Unary {
                                op: UnOp::Deref,
                                arg,
                            },
                        ..
                    }) if super::expr::is_this(arg) => Val::Unknown("`*this`".into()),
                    // the lvalue a `T& operator[]` names, where its caller stores to it
                    Some(e) if self.address_return == Some(self.frames.len()) => {
                        self.unary(UnOp::AddrOf, e)
                    }
                    Some(e) => {
                        let before = self.accesses.len();
                        let v = self.rvalue(e);
                        if super::place::is_memory_read(e) {
                            self.file_returned_vectors_at_call(before);
                        }
                        v
                    }
                    None => Val::Unknown("void".into()),
                };
                if self.frames.len() > 1 {
                    let held: Vec<Val> = self.frames.last().map_or(Vec::new(), |f| {
                        f.local_refs
                            .iter()
                            .map(|n| {
                                self.lookup_local(n)
                                    .cloned()
                                    .unwrap_or(Val::Unknown("reference parameter".into()))
                            })
                            .collect()
                    });
                    if let Some(f) = self.frames.last_mut() {
                        match &f.returns.path {
                            Some(p) => {
                                f.returns.early.push((p.clone(), v));
                                if !held.is_empty() {
                                    f.returns.early_locals.push((p.clone(), held));
                                }
                                f.returns.cut = true;
                            }
                            None if f.ret.is_none() => f.ret = Some(v),
                            None => {}
                        }
                    }
                }
            }
            Stmt::Break | Stmt::Continue | Stmt::Other(_) => {}
        }
    }

    fn return_path(&self) -> Option<Sym> {
        self.frames.last().and_then(|f| f.returns.path.clone())
    }

    /// The path a branch runs under: the enclosing path and `cond`.
    fn set_return_path(&mut self, path: Option<Sym>, cond: Option<&Sym>) {
        if self.frames.len() < 2 {
            return;
        }
        let new = match (path, cond) {
            (Some(p), Some(c)) => Some(sym::and(p, c.clone())),
            (None, Some(c)) => Some(c.clone()),
            (p, None) => p,
        };
        if let Some(f) = self.frames.last_mut() {
            f.returns.path = new;
        }
    }

    fn take_cut(&mut self) -> bool {
        self.frames
            .last_mut()
            .is_some_and(|f| std::mem::take(&mut f.returns.cut))
    }

    /// The statements after an `if` one of whose branches returned run only for the lanes of
    /// the other; when both returned, nothing after it runs.
    fn after_early_return(
        &mut self,
        then_cut: bool,
        else_cut: bool,
        c: &Sym,
        not_c: &Sym,
        maskable: bool,
    ) {
        if then_cut && else_cut {
            if let Some(f) = self.frames.last_mut() {
                f.returns.cut = true;
            }
            return;
        }
        let rest = if then_cut { not_c } else { c };
        let path = self.return_path();
        self.set_return_path(path, Some(rest));
        if maskable {
            self.mask = sym::and(self.mask.clone(), rest.clone());
        }
    }

    /// After an `if` whose condition is not known: a variable the two branches left different
    /// holds `cond ? then : else` (per lane for a lane condition, data-dependent for a
    /// condition read from memory, as in a binary search).
    /// Starts a branch of an `if`: its accesses are not merged with those outside it.
    fn enter_branch(&mut self) {
        self.branches += 1;
        self.branch = self.branches;
    }

    fn merge_branches(
        &mut self,
        c: &Sym,
        before: &[Vec<(Rc<str>, Val)>],
        after_then: &[Vec<(Rc<str>, Val)>],
    ) {
        for (si, scope) in before.iter().enumerate() {
            for bi in 0..scope.len() {
                let (Some(t), Some(e)) = (
                    after_then.get(si).and_then(|s| s.get(bi)),
                    self.scopes.get(si).and_then(|s| s.get(bi)),
                ) else {
                    continue;
                };
                let merged = match (&t.1, &e.1) {
                    (Val::Int(x), Val::Int(y)) if Rc::ptr_eq(x, y) => continue,
                    (Val::Int(x), Val::Int(y)) => {
                        Val::Int(sym::select(c.clone(), x.clone(), y.clone()))
                    }
                    (Val::Ptr(p), Val::Ptr(q))
                        if Rc::ptr_eq(&p.offset, &q.offset) && p.base == q.base =>
                    {
                        continue
                    }
                    (Val::Ptr(p), Val::Ptr(q)) => {
                        match super::either_ptr(c.clone(), p.clone(), q.clone()) {
                            Some(m) => Val::Ptr(m),
                            None => Val::Unknown("a pointer that differs between branches".into()),
                        }
                    }
                    // assigned on one side only, uninitialised on the other: reading it on the
                    // other side is undefined, so the assigned value is the one that matters
                    (v @ (Val::Int(_) | Val::Ptr(_)), Val::Unknown(_)) => v.clone(),
                    (a, b) => match super::pointer_or_null(a, b) {
                        Some(p) => p.clone(),
                        None => continue,
                    },
                };
                if let Some(slot) = self.scopes.get_mut(si).and_then(|s| s.get_mut(bi)) {
                    slot.1 = merged;
                }
            }
        }
    }

    /// `float (*rows)[33] = (float (*)[33]) base;`: a local pointer to rows of 33 (lowered as
    /// an array whose outermost dimension has no size, which a local array with no
    /// initialiser list cannot be), indexed as an array parameter `float rows[][33]` is.
    fn rows_pointer(&mut self, d: &Decl, ty: &cudalint_syntax::TypeRef) -> Option<Val> {
        let unsized_outer = d.dims.len() > 1 && d.dims[0].size.is_none();
        let list = matches!(d.init.as_ref().map(|e| &e.kind), Some(ExprKind::Init(_)));
        if !unsized_outer || list || d.shared || d.is_extern || d.constant || d.device {
            return None;
        }
        let rows: Vec<Sym> = d.dims[1..]
            .iter()
            .map(|x| match &x.size {
                Some(e) => self.pure_rvalue(e).sym(),
                None => sym::konst(0),
            })
            .collect();
        let v = match &d.init {
            Some(init) => self.pointer_value(init),
            None => Val::Ptr(Ptr {
                space: Space::Global,
                base: d.name.as_str().into(),
                offset: sym::unknown(format!("`{}` is not initialised", d.name)),
                elem: ty.clone(),
                dims: Rc::from(Vec::new()),
                decl: Some((self.file(), d.span)),
                path: None,
            }),
        };
        Some(match v {
            Val::Ptr(mut p) => {
                p.elem = ty.clone();
                p.dims = Rc::from(rows);
                Val::Ptr(p)
            }
            other => other,
        })
    }

    pub(super) fn decl(&mut self, d: &Decl) {
        let ty = self.resolve_type(&d.ty);
        if let Some(v) = self.rows_pointer(d, &ty) {
            self.declare(&d.name, v);
            return;
        }
        if !d.dims.is_empty() {
            let v = self.array_decl(d, ty);
            self.forget_elements(d.name.as_str());
            if let Some(init) = &d.init {
                let values = self.rvalue(init);
                let items: Vec<Val> = match &init.kind {
                    ExprKind::Init(items) => items.iter().map(|e| self.pure_rvalue(e)).collect(),
                    _ => vec![values],
                };
                if matches!(&v, Val::Ptr(p) if p.space == Space::Local)
                    && items.iter().any(super::differs_between_lanes)
                {
                    self.varying_locals.insert(d.name.as_str().into());
                }
            }
            self.declare(&d.name, v);
            return;
        }
        if let Some(v) = self.std_array_decl(d, &ty) {
            if let Some(init) = &d.init {
                self.rvalue(init);
            }
            self.declare(&d.name, v);
            return;
        }
        // `__shared__ unsigned int count;`: a place in shared memory; its value is what the
        // block last stored there
        if d.shared && !d.is_extern {
            let p = Ptr {
                space: Space::Shared,
                base: d.name.as_str().into(),
                offset: sym::konst(0),
                elem: ty.clone(),
                dims: Rc::from(Vec::new()),
                decl: Some((self.file(), d.span)),
                path: None,
            };
            let scope = self.scopes.len().saturating_sub(1);
            self.shared_scalars.push((d.name.as_str().into(), scope, p));
        }
        // `CRAtomics& atomics = p.atomics[img];`: a second name for a place in memory, read
        // member by member where it is used, not a copy of the whole struct made here
        let bound = match d.init.as_ref().filter(|e| d.is_reference && is_lvalue(e)) {
            Some(init) => match self.place(init) {
                Some(p) if !p.subarray && matches!(p.ptr.space, Space::Global | Space::Shared) => {
                    if let Some(frame) = self.frames.last_mut() {
                        let name: Rc<str> = d.name.as_str().into();
                        frame.refs.retain(|(n, _)| *n != name);
                        frame.refs.push((name, p));
                        return;
                    }
                    Some(Val::Unknown("a reference outside a function".into()))
                }
                Some(p) if p.subarray => Some(Val::Ptr(p.ptr)),
                Some(p) => Some(self.load(p, init)),
                // a name for a value not in memory (`int const& bid = blockIdx.x;`, a local):
                // that value
                None => None,
            },
            None => None,
        };
        let v = if let Some(v) = bound {
            v
        } else if ty.name == "dim3" && ty.pointer_depth == 0 {
            self.dim3_decl(d.init.as_ref())
        } else {
            self.initial_value(d, &ty)
        };
        // `x128 v = load128(p);`: a struct in registers; `v[k]` goes through its operator[]
        // to its own members, not to memory
        // `Reader r(ptr);`: one argument, given to the struct's own constructor (its value is
        // not the object's)
        let converting = matches!(&d.init, Some(Expr { kind: ExprKind::Init(args), .. }) if args.len() == 1)
            && self.local_object(&v).is_none()
            && !d.shared
            && self.has_constructor(&ty, 1);
        let v = match v {
            // (a `__shared__` one is the block's, in shared memory: its members are places)
            // (a struct loaded from memory whole is an object too, its members copied)
            v if converting
                || matches!(v, Val::Unknown(_) | Val::Int(_))
                    && self.is_object_type(&ty)
                    && !d.shared
                    && (matches!(v, Val::Unknown(_)) || d.init.as_ref().is_some_and(is_lvalue))
                // `Strides s = {1, 32};`: a struct's members braced in order, not a pair
                // (or one member: `CopyWithScaleOp<T> op{scale};`, a functor, `Reader r{in};`
                // over a pointer)
                || matches!(v, Val::Vector(_) | Val::Int(_) | Val::Ptr(_))
                    && matches!(&d.init, Some(Expr { kind: ExprKind::Init(_), .. }))
                    && self.is_struct(super::names::split_template(&self.through_typedefs(&ty.name)).0)
                    && !d.shared =>
            {
                let key = self.objects.len();
                // a copy of another local object (`Matrix sub = GetSubMatrix(A, r, c);`, the
                // struct a helper built and returned) holds what its members held
                let copied = self.local_object(&v).map(|(_, from)| from);
                self.objects.push((d.name.as_str().into(), ty.clone(), key));
                if let Some(from) = copied {
                    for (name, v) in self.fields.get(&from).cloned().unwrap_or_default() {
                        self.set_field(key, &name, v);
                    }
                }
                match &d.init {
                    _ if copied.is_some() => {}
                    // `BatchSlotAssignment a = params.d_slots[b];`: a copy of a struct in
                    // memory (loaded whole above) holds what its members held there
                    Some(init) if is_lvalue(init) => {
                        self.copy_members_from_memory(key, init);
                        self.loaded_objects.push(key);
                    }
                    Some(Expr {
                        kind: ExprKind::Init(args),
                        ..
                    }) => self.construct(&ty, key, args, d.span),
                    None => self.construct(&ty, key, &[], d.span),
                    _ => {}
                }
                Val::Unknown(format!("`{}` {LOCAL_OBJECT}", d.name).into())
            }
            v => v,
        };
        self.declare(&d.name, v);
    }

    /// The members of local object `key`, copied from the struct in memory `init` names: each
    /// the value its load gives (a pointer member points where the loaded pointer does). The
    /// copy's loads are the declaration's, already made.
    fn copy_members_from_memory(&mut self, key: usize, init: &Expr) {
        let place = self.place_unrecorded(init);
        let Some(place) =
            place.filter(|p| !p.subarray && matches!(p.ptr.space, Space::Global | Space::Shared))
        else {
            return;
        };
        let fields = self.member_names(&place.ty.name);
        for (field, _) in fields.into_iter().filter(|(_, array)| !array) {
            let member = self.member_place(place.clone(), &field);
            if member.subarray || member.ptr.offset.unknown_reason().is_some() {
                continue;
            }
            let v = self.loaded_value(&member);
            self.set_field(key, &field, v);
        }
    }

    /// An array: shared, constant, global (`__device__` and `__managed__` arrays, at file
    /// scope) or local by its qualifier. Its inner dimensions give the
    /// strides of its indices, even when the outer one is not known (`lut[K_TILE / 8][256]`
    /// with K_TILE a template parameter); the padding proof needs them all constant.
    fn array_decl(&mut self, d: &Decl, ty: TypeRef) -> Val {
        // (`float qmap[] = {...}`: as many elements as the braces hold)
        let braced = match &d.init {
            Some(Expr {
                kind: ExprKind::Init(items),
                ..
            }) if d.dims.len() == 1 => items.len() as i64,
            _ => 0,
        };
        let dims: Vec<Sym> = d
            .dims
            .iter()
            .map(|dim| match &dim.size {
                Some(e) => self.pure_rvalue(e).sym(),
                None => sym::konst(braced),
            })
            .collect();
        let space = if d.shared {
            Space::Shared
        } else if d.constant {
            Space::Constant
        } else if d.device {
            Space::Global
        } else {
            Space::Local
        };
        let inner: Vec<Sym> = dims.iter().skip(1).cloned().collect();
        let constant: Option<Vec<i64>> = inner.iter().map(|x| x.as_const()).collect();
        let path = constant.filter(|c| c.iter().all(|x| *x > 0)).map(|c| {
            let outer = dims.first().and_then(|x| x.as_const()).unwrap_or(0);
            let full: Vec<i64> = std::iter::once(outer).chain(c).collect();
            (Vec::new(), Rc::from(full))
        });
        Val::Ptr(Ptr {
            space,
            base: d.name.as_str().into(),
            offset: sym::konst(0),
            elem: ty,
            dims: Rc::from(inner),
            decl: Some((self.file(), d.span)),
            path,
        })
    }

    /// `std::array<float, 16> acc{};` (or `cuda::std::array`): a local array of its element
    /// type, so `acc[k]` and `acc.data()` are the thread's own memory, not an unknown object.
    fn std_array_decl(&mut self, d: &Decl, ty: &TypeRef) -> Option<Val> {
        if ty.pointer_depth > 0 {
            return None;
        }
        let full = self.through_typedefs(&ty.name);
        let (base, args) = super::names::split_template(&full);
        let base = base.trim_start_str("::");
        if !matches!(base, "std::array" | "cuda::std::array") || args.len() != 2 {
            return None;
        }
        let elem = self.resolve_type(&TypeRef::named(&args[0]));
        let len = match args[1].parse::<i64>() {
            Ok(n) => n,
            Err(_) => self.lookup(&args[1], d.span).sym().as_const().unwrap_or(0),
        };
        Some(Val::Ptr(Ptr {
            space: Space::Local,
            base: d.name.as_str().into(),
            offset: sym::konst(0),
            elem,
            dims: Rc::from(Vec::new()),
            decl: Some((self.file(), d.span)),
            path: Some((Vec::new(), Rc::from(vec![len]))),
        }))
    }

    /// `dim3 b(16, 16)`, `dim3 b = dim3(...)`, `dim3 b = n`, `dim3 b;`.
    fn dim3_decl(&mut self, init: Option<&Expr>) -> Val {
        match init {
            Some(Expr {
                kind: ExprKind::Init(args),
                ..
            }) => self.dim3_from(args),
            Some(Expr {
                kind: ExprKind::Call { callee, args, .. },
                ..
            }) if callee == "dim3" => self.dim3_from(args),
            Some(e) => match self.rvalue(e) {
                Val::Int(s) => Val::Dim3([s, sym::konst(1), sym::konst(1)]),
                other => other,
            },
            None => Val::Dim3([sym::konst(1), sym::konst(1), sym::konst(1)]),
        }
    }

    /// The value a scalar, vector or pointer declaration starts with.
    fn initial_value(&mut self, d: &Decl, ty: &TypeRef) -> Val {
        let width = types::vector_width(&ty.name).filter(|_| ty.pointer_depth == 0);
        // a constructor's arguments: an object in memory named whole (CUB's `Agent a(
        // temp_storage, in, out)`) is bound to its reference parameter, not loaded
        if let Some(Expr {
            kind: ExprKind::Init(args),
            ..
        }) = &d.init
        {
            let in_memory_object = |me: &mut Self, a: &Expr| match &a.kind {
                ExprKind::Ident(_) => me
                    .place_unrecorded(a)
                    .is_some_and(|p| p.is_object_in_memory() && me.is_object_type(&p.ty)),
                _ => false,
            };
            if ty.pointer_depth == 0
                && self.has_constructor(ty, args.len())
                && args.iter().any(|a| in_memory_object(self, a))
            {
                for a in args.iter() {
                    if !in_memory_object(self, a) {
                        self.rvalue(a);
                    }
                }
                return Val::Unknown("initializer list".into());
            }
        }
        match &d.init {
            Some(Expr {
                kind: ExprKind::Init(args),
                ..
            }) if width.is_some_and(|w| args.len() == w && w > 1) => {
                let c: Vec<Sym> = args.iter().map(|a| self.rvalue(a).sym()).collect();
                Val::Vector(c.into())
            }
            Some(Expr {
                kind: ExprKind::Init(args),
                ..
            }) if args.len() == 1 && ty.pointer_depth == 0 => {
                let kept = self.integer_bytes(ty);
                let v = self.rvalue_narrowed(&args[0], kept);
                self.as_integer(v, kept)
            }
            Some(e) => {
                let kept = self.integer_bytes(ty);
                let v = if ty.pointer_depth > 0 {
                    self.pointer_value(e)
                } else {
                    let v = self.rvalue_narrowed(e, kept);
                    self.as_integer(v, kept)
                };
                match v {
                    Val::Ptr(mut p) if ty.pointer_depth > 0 => {
                        // `const float4* v = (const float4*)p` or an alias of a different type
                        let mut elem = ty.clone();
                        elem.pointer_depth -= 1;
                        if p.dims.is_empty() && elem.name != "auto" {
                            p.elem = elem;
                        }
                        Val::Ptr(p)
                    }
                    other => other,
                }
            }
            // a pointer declared without a value still has its element type (a launch's
            // template arguments are deduced from it)
            None if ty.pointer_depth > 0 => {
                let mut elem = ty.clone();
                elem.pointer_depth -= 1;
                Val::Ptr(Ptr {
                    space: Space::Global,
                    base: d.name.as_str().into(),
                    offset: sym::unknown(format!("`{}` is not initialised", d.name)),
                    elem,
                    dims: Rc::from(Vec::new()),
                    decl: Some((self.file(), d.span)),
                    path: None,
                })
            }
            // a vector declared without a value is set member by member (`int4 t; t.x = a;
            // ... return t;`)
            None if width.is_some_and(|w| w > 1) => Val::Vector(
                ["x", "y", "z", "w"]
                    .iter()
                    .take(width.unwrap_or(0))
                    .map(|m| sym::unknown(format!("`{}.{m}` is not initialised", d.name)))
                    .collect(),
            ),
            None => Val::Unknown(format!("`{}` is not initialised", d.name).into()),
        }
    }

    pub(super) fn dim3_from(&mut self, args: &[Expr]) -> Val {
        let mut out = [sym::konst(1), sym::konst(1), sym::konst(1)];
        for (i, a) in args.iter().take(3).enumerate() {
            out[i] = self.rvalue(a).sym();
        }
        Val::Dim3(out)
    }
}

/// Whether a branch leaves rather than going on after its `if`.
fn ends_with_jump(body: &[Stmt]) -> bool {
    match body.last() {
        Some(Stmt::Return(..) | Stmt::Break | Stmt::Continue) => true,
        Some(Stmt::Block(b)) => ends_with_jump(b),
        _ => false,
    }
}

/// One value held in a register, the same in two states: same place, same lanes.
fn same_held(a: &super::Held, b: &super::Held) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.3 == b.3 && sym::same(&a.2, &b.2) && sym::same(&a.4, &b.4)
}

fn ends_with_return(body: &[Stmt]) -> bool {
    match body.last() {
        Some(Stmt::Return(..)) => true,
        Some(Stmt::Block(b)) => ends_with_return(b),
        _ => false,
    }
}

/// `a[i]`, `s.m`, `p->m`, `*p`: an expression that names a place a reference can bind to.
fn is_lvalue(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Index { .. }
            | ExprKind::Field { .. }
            | ExprKind::Unary {
                op: cudalint_syntax::UnOp::Deref,
                ..
            }
    )
}

/// `if (sbest[blockIdx.x] == threadIdx.x)`: a thread index against a value the whole warp
/// shares and the analysis does not know (read from memory, a kernel argument): one thread
/// of the block takes the branch, and which one does not change what an access costs.
/// Thread 0 stands for it (an assumed value would leave no lane of most warps running).
fn one_thread(c: &Sym) -> Option<Sym> {
    let sym::SymKind::Bin(sym::Op::Bin(BinOp::Eq), a, b) = &c.kind else {
        return None;
    };
    let is_index = |s: &Sym| {
        matches!(
            s.kind,
            sym::SymKind::Var(sym::Var::Tid(_) | sym::Var::LaneId)
        )
    };
    let (index, other) = if is_index(a) { (a, b) } else { (b, a) };
    // (a value the launch fixes, `blockDim.x - 1`, is evaluated lane by lane as it is)
    let mut opaque = other.data || other.unknown_reason().is_some();
    other.visit_vars(&mut |v| opaque |= matches!(v, sym::Var::Runtime(_)));
    (is_index(index) && !other.lane_varying && opaque)
        .then(|| sym::binop(BinOp::Eq, index.clone(), sym::konst(0)))
}
