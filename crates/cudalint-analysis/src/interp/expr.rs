//! Rvalues: what an expression evaluates to (an integer symbol, a pointer, a dim3, a vector,
//! a struct), with arithmetic on pointers and integer casts. Loads and stores of memory
//! places are `place.rs`; calls are `call.rs`; names are `names.rs`.

use super::{unreachable_val, KernelRun, Ptr, Space, Val};
use crate::sym::{self, Sym, SymKind, UnaryOp, Var};
use crate::types;
use cudalint_syntax::{BinOp, Expr, ExprKind, TypeRef, UnOp};
use std::rc::Rc;

impl KernelRun<'_> {
    /// Evaluates without recording accesses (bounds, steps, sizes).
    pub(super) fn pure_rvalue(&mut self, e: &Expr) -> Val {
        // nor does it leave values in registers (a loop's step `s += val[node]` is evaluated
        // before the loop runs)
        let (n, held) = (self.accesses.len(), self.in_registers.len());
        let v = self.rvalue(e);
        self.accesses.truncate(n);
        self.in_registers.truncate(held);
        v
    }

    pub(super) fn rvalue(&mut self, e: &Expr) -> Val {
        // substitution (macros, helpers, template arguments) can nest deeper than the syntax
        if self.eval_depth > 400 {
            return Val::Unknown("expression nested too deeply to evaluate".into());
        }
        // past the time budget nothing more is evaluated (statements stop at once; an
        // expression whose calls nest could go on for long without reaching one)
        if self.out_of_time {
            return Val::Unknown("past the time budget".into());
        }
        self.eval_depth += 1;
        let v = self.rvalue_inner(e);
        self.eval_depth -= 1;
        v
    }

    fn rvalue_inner(&mut self, e: &Expr) -> Val {
        match &e.kind {
            ExprKind::Int(v) => Val::Int(sym::konst(*v)),
            ExprKind::Bool(b) => Val::Int(sym::konst(*b as i64)),
            ExprKind::Float => Val::Int(floating(&[])),
            ExprKind::Str => Val::Unknown("string".into()),
            ExprKind::Ident(name) => {
                // a reference parameter bound to memory is read there (once, while this
                // thread holds it)
                if let Some(place) = self.reference_place(name) {
                    self.record(&place, e.span, super::AccessOp::Load, None);
                    // a local reference (`T& r = a[i];`) has no value of its own
                    if self.lookup_local(name).is_none() {
                        return self.loaded_value(&place);
                    }
                }
                // a `__shared__` or `__device__` scalar is read from memory
                if let Some(place) = self.scalar_place(e) {
                    self.record(&place, e.span, super::AccessOp::Load, None);
                    // one place holds one value: what lanes stored there each of their own
                    // (`offset = atomicAdd(count, n)` by thread 0) is one value to its readers
                    let v = self.lookup(name, e.span);
                    let varying = matches!(&v, Val::Int(s) if s.lane_varying);
                    // (a shared pointer one thread set in a branch: the pointer the block
                    // reads there, one for all its lanes)
                    let unset_pointer = place.ty.pointer_depth > 0
                        && match &v {
                            Val::Ptr(p) => p.offset.unknown_reason().is_some(),
                            Val::Int(_) => false,
                            _ => true,
                        };
                    if (varying || unset_pointer) && self.shared_scalar(name).is_some() {
                        return self.loaded_value(&place);
                    }
                    return v;
                }
                self.lookup(name, e.span)
            }
            ExprKind::Field { base, field, arrow } => {
                // a member of what a reference member names (`temp_storage.total`): there
                let referenced = matches!(&base.kind, ExprKind::Ident(b) if self.reference_member_place(b).is_some());
                if referenced {
                    return match self.place(e) {
                        Some(p) if p.subarray => Val::Ptr(p.ptr),
                        Some(p) => self.load(p, e),
                        None => Val::Unknown(format!("member `{field}`").into()),
                    };
                }
                if is_this(base) {
                    if let Some(v) = self.own_member(field) {
                        return v;
                    }
                }
                // `p->current` where `p` is a local object's address (`gpu_first(&p)`)
                if let Some(v) = self.object_field(base, field) {
                    return v;
                }
                if !*arrow {
                    if let Some(v) = self.value_field(base, field) {
                        return v;
                    }
                }
                match self.place(e) {
                    Some(p) if p.subarray => Val::Ptr(p.ptr),
                    Some(p) => self.load(p, e),
                    None => Val::Unknown(format!("member `{field}`").into()),
                }
            }
            ExprKind::Index { base, index } if self.subscripts_an_object(base) => {
                self.object_subscript(base, index, e.span)
            }
            ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnOp::Deref, ..
            } if self.reinterpreted_local(e).is_some() => match self.reinterpreted_local(e) {
                Some((ty, local)) => self.cast(&ty, local),
                None => Val::Unknown("a local read as another type".into()),
            },
            ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnOp::Deref, ..
            } => match self.local_pointee(e) {
                Some(name) => self
                    .lookup_local(&name)
                    .cloned()
                    .unwrap_or(Val::Unknown("local given by address".into())),
                None => match self.loaded_object_element(e) {
                    Some(v) => v,
                    None => match self.place(e) {
                        Some(p) if p.subarray => Val::Ptr(p.ptr),
                        Some(p) => self.load(p, e),
                        None => Val::Unknown(
                            "subscript of something that is not an array or pointer".into(),
                        ),
                    },
                },
            },
            ExprKind::Unary { op, arg } => self.unary(*op, arg),
            ExprKind::Binary { op, lhs, rhs } => {
                // `id[i] & 0xFF` uses the low byte of the value
                let kept = |e: &Expr| match (op, &e.kind) {
                    (BinOp::BitAnd, ExprKind::Int(0xff)) => Some(1),
                    (BinOp::BitAnd, ExprKind::Int(0xffff)) => Some(2),
                    (BinOp::BitAnd, ExprKind::Int(0xffff_ffff)) => Some(4),
                    _ => None,
                };
                let a = self.rvalue_narrowed(lhs, kept(rhs));
                // `a || b`, `a && b`: b's loads happen only on some paths, so what they bring
                // into registers is not held after it (bitonic sort's `(!(flagA || flagB) &&
                // (keyA > keyB)) || ...` reloads keyA in the branch it guards)
                let held = matches!(op, BinOp::And | BinOp::Or).then(|| self.in_registers.clone());
                let b = self.rvalue_narrowed(rhs, kept(lhs));
                if let Some(held) = held {
                    self.in_registers = held;
                }
                self.arith(*op, a, b)
            }
            ExprKind::Assign { op, lhs, rhs } => {
                if op.is_none() {
                    if let Some(v) = self.assign_by_operator(lhs, rhs, e.span) {
                        return v;
                    }
                    if self.bind_reference_member(lhs, rhs) {
                        return Val::Unknown("a reference member bound".into());
                    }
                }
                let v = self.rvalue(rhs);
                match op {
                    None => self.store(lhs, v.clone()),
                    Some(op) => {
                        self.update(lhs, *op, v.clone(), false);
                    }
                }
                v
            }
            ExprKind::Cond { cond, then, els } => self.conditional(cond, then, els),
            ExprKind::Call {
                callee,
                template_args,
                args,
            } => self.call(callee, template_args, args, e.span),
            ExprKind::Cast { ty, arg } => self.cast(ty, arg),
            ExprKind::SizeofType(t) => match self.layout_of(t) {
                Some(l) => Val::Int(sym::konst(l.size)),
                None if self.assumed_four_bytes(t) => Val::Int(sym::konst(4)),
                None => Val::Unknown(format!("sizeof({})", t.name).into()),
            },
            ExprKind::SizeofExpr(inner) => self.sizeof_expr(inner),
            ExprKind::Comma(a, b) => {
                self.rvalue(a);
                self.rvalue(b)
            }
            ExprKind::Init(items) => {
                let values: Vec<Val> = items.iter().map(|i| self.rvalue(i)).collect();
                // two integers braced (`return {role, warp_id - 4};` of a function returning
                // a `std::pair`): a pair, its `first` and `second` the two values
                match values.as_slice() {
                    [Val::Int(a), Val::Int(b)] => Val::Vector(vec![a.clone(), b.clone()].into()),
                    _ => Val::Unknown("initializer list".into()),
                }
            }
            ExprKind::Lambda(def) => self.closure(def),
            ExprKind::Unsupported(what) => {
                Val::Unknown(format!("unsupported syntax: {what}").into())
            }
        }
    }

    /// Evaluates `e`, of whose value only the low `kept` bytes are used: when `e` is an integer
    /// load wider than that, nvcc loads only those bytes (`int start = offsets[i]` on a
    /// `long*` is a 32-bit `LDG.E`, `id[i] & 0xFF` an `LDG.E.U8`).
    pub(super) fn rvalue_narrowed(&mut self, e: &Expr, kept: Option<i64>) -> Val {
        let is_load = matches!(
            e.kind,
            ExprKind::Index { .. }
                | ExprKind::Field { .. }
                | ExprKind::Unary {
                    op: UnOp::Deref,
                    ..
                }
        );
        let Some(kept) = kept.filter(|_| is_load) else {
            return self.rvalue(e);
        };
        let outer = self.narrow.replace((e.span, kept));
        let v = self.rvalue(e);
        self.narrow = outer;
        v
    }

    /// Unary operators other than `*p` (a place): `&a[i]` is a pointer, `++i` an update.
    pub(super) fn unary(&mut self, op: UnOp, arg: &Expr) -> Val {
        match op {
            UnOp::AddrOf => {
                // a local object's address stands for the object: a helper's `p->f` is its
                // member (`gpu_first(&p)`)
                if let Some(obj) = self.local_object_named(arg) {
                    return obj;
                }
                // `&DEVICE_LINEAR_GET(y, i)`: the address of the lvalue the macro stands for
                if let Some((expanded, _)) = self.macro_lvalue(arg) {
                    return self.unary(UnOp::AddrOf, &expanded);
                }
                match self.place(arg) {
                    // `&(buf[i].cam_pos)`: a pointer to the member, a `float3` (its `->x` is
                    // the member's), not to the struct it sits in
                    Some(p) if p.field.is_some() && !p.subarray => Val::Ptr(Ptr {
                        elem: p.ty,
                        ..p.ptr
                    }),
                    Some(p) => Val::Ptr(p.ptr),
                    None => match self.whole_array(arg) {
                        // `(T*)&smem`: the address of an array is the address of its first
                        // element
                        Some(p) => Val::Ptr(p),
                        None => Val::Unknown("address of a local variable".into()),
                    },
                }
            }
            UnOp::Neg => Val::Int(sym::un(UnaryOp::Neg, self.rvalue(arg).sym())),
            UnOp::Plus => self.rvalue(arg),
            UnOp::Not => {
                let v = self.rvalue(arg);
                Val::Int(sym::un(UnaryOp::Not, self.truth(v).sym()))
            }
            UnOp::BitNot => Val::Int(sym::un(UnaryOp::BitNot, self.rvalue(arg).sym())),
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let delta = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    1
                } else {
                    -1
                };
                self.update(
                    arg,
                    BinOp::Add,
                    Val::Int(sym::konst(delta)),
                    matches!(op, UnOp::PostInc | UnOp::PostDec),
                )
            }
            UnOp::Deref => unreachable_val(),
        }
    }

    /// `*((unsigned*)&cel)`, `((T*)&x)[0]`: a scalar local's bits read as another type, which
    /// is the local converted (DualSPHysics' `DCEL_Cellx`, the cell of every neighbour
    /// search): the type read as and the local.
    fn reinterpreted_local<'e>(&self, e: &'e Expr) -> Option<(TypeRef, &'e Expr)> {
        let ExprKind::Cast { ty, arg } = &super::place::dereferenced(e)?.kind else {
            return None;
        };
        let ExprKind::Unary {
            op: UnOp::AddrOf,
            arg: local,
        } = &arg.kind
        else {
            return None;
        };
        let ExprKind::Ident(name) = &local.kind else {
            return None;
        };
        if ty.pointer_depth != 1 || !matches!(self.lookup_local(name), Some(Val::Int(_))) {
            return None;
        }
        let mut read_as = ty.clone();
        read_as.pointer_depth = 0;
        Some((read_as, &**local))
    }

    /// An array named by itself (`extern __shared__ T smem[]`, `float buf[8]`), as declared.
    fn whole_array(&self, e: &Expr) -> Option<Ptr> {
        let ExprKind::Ident(name) = &e.kind else {
            return None;
        };
        match self.lookup_local(name)? {
            Val::Ptr(p)
                if p.decl.is_some()
                    && &*p.base == name.as_str()
                    && p.offset.as_const() == Some(0) =>
            {
                Some(p.clone())
            }
            _ => None,
        }
    }

    /// `c ? a : b`: each arm under its part of the lane mask; the value is a per-lane select.
    fn conditional(&mut self, cond: &Expr, then: &Expr, els: &Expr) -> Val {
        let c = self.rvalue(cond);
        let c = self.truth(c).sym();
        // decided where it is compiled (`FAST ? in[t] : in[t * S]` with FAST a template
        // value): the other arm is no code, and none of its loads are issued
        if let Some(k) = c.as_const() {
            return self.rvalue(if k != 0 { then } else { els });
        }
        // `flip ? d[4 * i + 1] : d[4 * i]` on a flag the warp shares: nvcc loads one address,
        // the one the flag picks (TensorRT's allClassNMS), `*(flip ? &d[..] : &d[..])`; the
        // same two elements swapped on the next line are a load of their own
        if !c.lane_varying && matches!(cond.kind, ExprKind::Ident(_)) {
            if let Some(one) = self.one_of_two_elements(cond, then, els) {
                return one;
            }
        }
        let saved = self.mask.clone();
        let maskable = c.lane_varying && !c.data && c.unknown_reason().is_none();
        if maskable {
            self.mask = sym::and(saved.clone(), c.clone());
        }
        let a = self.rvalue(then);
        if maskable {
            self.mask = sym::and(saved.clone(), sym::un(UnaryOp::Not, c.clone()));
        }
        let b = self.rvalue(els);
        self.mask = saved;
        if let Some(p) = super::pointer_or_null(&a, &b) {
            return p.clone();
        }
        match (a, b) {
            (Val::Int(x), Val::Int(y)) => Val::Int(sym::select(c, x, y)),
            (Val::Ptr(p), Val::Ptr(q)) => match super::either_ptr(c, p, q) {
                Some(p) => Val::Ptr(p),
                None => Val::Unknown("conditional with arms of different kinds".into()),
            },
            _ => Val::Unknown("conditional with arms of different kinds".into()),
        }
    }

    /// `c ? a[i] : a[j]` of one array in memory, loaded as the element `c` picks.
    fn one_of_two_elements(&mut self, cond: &Expr, then: &Expr, els: &Expr) -> Option<Val> {
        let base_of = |e: &Expr| match &e.kind {
            ExprKind::Index { base, .. } => match &base.kind {
                ExprKind::Ident(n) => Some(n.clone()),
                _ => None,
            },
            _ => None,
        };
        let name = base_of(then)?;
        if base_of(els)? != name || self.local_pointee(then).is_some() {
            return None;
        }
        let in_memory =
            matches!(self.lookup_local(&name), Some(Val::Ptr(p)) if p.space != Space::Local);
        if !in_memory {
            return None;
        }
        let addr = |x: &Expr| Expr {
            kind: ExprKind::Unary {
                op: UnOp::AddrOf,
                arg: Box::new(x.clone()),
            },
            span: x.span,
        };
        let picked = Expr {
            kind: ExprKind::Unary {
                op: UnOp::Deref,
                arg: Box::new(Expr {
                    kind: ExprKind::Cond {
                        cond: Box::new(cond.clone()),
                        then: Box::new(addr(then)),
                        els: Box::new(addr(els)),
                    },
                    span: then.span,
                }),
            },
            span: then.span,
        };
        Some(self.rvalue(&picked))
    }

    /// `(T*)p` re-types what a pointer points to; `(T)i` narrows an integer.
    fn cast(&mut self, ty: &TypeRef, arg: &Expr) -> Val {
        let ty = self.resolve_type(ty);
        let kept = self.integer_bytes(&ty);
        let v = if ty.pointer_depth > 0 {
            // `reinterpret_cast<half2*>(x)` of a parameter the launch passed 0 for is still
            // the array an unguarded access reaches
            self.pointer_value(arg)
        } else {
            self.rvalue_narrowed(arg, kept)
        };
        match v {
            Val::Ptr(mut p) if ty.pointer_depth > 0 => {
                let mut elem = ty;
                elem.pointer_depth -= 1;
                p.elem = elem;
                p.dims = Rc::from(Vec::new());
                p.path = None;
                Val::Ptr(p)
            }
            Val::Int(s) if ty.pointer_depth == 0 => Val::Int(self.converted(&ty.name, s)),
            // a pointer's address as an integer (`(unsigned long)start_p | mask`): still that
            // place, counted in bytes, for the cast back to a pointer to find
            Val::Ptr(mut p) if ty.pointer_depth == 0 && kept.is_some_and(|k| k >= 4) => {
                p.elem = TypeRef::named("char");
                p.dims = Rc::from(Vec::new());
                p.path = None;
                Val::Ptr(p)
            }
            // an address held in an integer (RAFT's `uintptr_t bufs` workspace,
            // `reinterpret_cast<T*>(bufs + n * sizeof(T))`): global memory at that address,
            // which an allocation aligns as it does a pointer parameter's (a constant is a null
            // or fixed address, not an array)
            Val::Int(s) if ty.pointer_depth > 0 && s.as_const().is_none() => {
                let mut elem = ty;
                elem.pointer_depth -= 1;
                // named after the integer the address starts from, the bytes added to it its
                // offset
                let named = address_name(arg).and_then(|n| {
                    let Val::Int(start) = self.lookup(n, arg.span) else {
                        return None;
                    };
                    Some((n, bytes_after(&s, &start)?))
                });
                let (base, offset) = match named {
                    Some((n, offset)) => (n.to_string(), offset),
                    None => ("an address held in an integer".to_string(), s),
                };
                let mut p = Ptr::global(&base, elem, None);
                p.offset = offset;
                Val::Ptr(p)
            }
            other => other,
        }
    }

    /// Member of a value that is not in memory: `threadIdx.x`, a dim3 local, a struct parameter.
    /// A name for an object in memory, whose members are read where they are: a reference
    /// bound to memory, a `__shared__` object, a `__device__` one at file scope.
    fn object_in_memory(&self, name: &str) -> bool {
        self.reference_place(name).is_some()
            || self.shared_scalar(name).is_some()
            || self.global_scalar(name).is_some()
    }

    fn value_field(&mut self, base: &Expr, field: &str) -> Option<Val> {
        // `cu_data.matrix_dim.cols` is in memory where `cu_data` is (the walk to the root
        // leaves `base` alone: `plan.access.bin.bin_offset` is a member of `plan.access.bin`)
        let mut root = base;
        while let ExprKind::Field {
            base: inner,
            arrow: false,
            ..
        } = &root.kind
        {
            match &inner.kind {
                ExprKind::Ident(n) if self.object_in_memory(n) => return None,
                ExprKind::Field { .. } => root = inner,
                _ => break,
            }
        }
        let is_place = match &base.kind {
            ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnOp::Deref, ..
            }
            | ExprKind::Field { arrow: true, .. } => true,
            // a member of an object in memory (a reference bound to one, a `__shared__` or
            // `__device__` struct) is read on its own
            ExprKind::Ident(n) => self.object_in_memory(n),
            _ => false,
        };
        if is_place {
            return None;
        }
        if let ExprKind::Field {
            base: inner,
            arrow: false,
            ..
        } = &base.kind
        {
            if matches!(inner.kind, ExprKind::Index { .. }) {
                return None;
            }
        }
        let v = self.rvalue(base);
        Some(match v {
            // (a pair held as two values: `std::make_pair(a, b)`, a braced `{a, b}` returned
            // as a `std::pair`)
            Val::Vector(c) => {
                match ["x", "y", "z", "w"]
                    .iter()
                    .position(|f| *f == field)
                    .or(match field {
                        "first" => Some(0),
                        "second" => Some(1),
                        _ => None,
                    }) {
                    Some(k) if k < c.len() => Val::Int(c[k].clone()),
                    _ => Val::Unknown(format!("vector member `{field}`").into()),
                }
            }
            Val::Dim3(c) => match field {
                "x" => Val::Int(c[0].clone()),
                "y" => Val::Int(c[1].clone()),
                "z" => Val::Int(c[2].clone()),
                _ => Val::Unknown(format!("dim3 member `{field}`").into()),
            },
            Val::Aggregate { name, ty } => self.aggregate_member(&name, &ty, field),
            Val::Ptr(_) => return None,
            Val::Int(s) if s.data => {
                Val::Int(sym::data(format!("member `{field}` of a loaded value")))
            }
            // a member of a value the kernel is given (`p.fuStride.x` of a struct parameter
            // whose member the analysis holds as one value) is another such value
            Val::Int(s) if !s.lane_varying && s.unknown_reason().is_none() => match &s.kind {
                sym::SymKind::Var(Var::Runtime(i)) => {
                    let name = self.runtime.get(*i as usize).map(|r| r.name.clone());
                    match name {
                        Some(n) => Val::Int(self.runtime_var(&format!("{n}.{field}"), None)),
                        None => Val::Unknown(format!("member `{field}` of a scalar").into()),
                    }
                }
                _ => Val::Unknown(format!("member `{field}` of a scalar").into()),
            },
            _ => Val::Unknown(format!("member `{field}` of a local value").into()),
        })
    }

    /// Member `field` of a struct value not in memory (a struct parameter, or a member of
    /// one): a value the launch fixes, named by its path. An array member is in the kernel's
    /// parameter space, read as constant memory (`annmb.w0[t1]`, pointers one per element
    /// type); a pointer member points into global memory. For a scalar, pointer or struct
    /// member the declared type is enough, with the struct's template arguments put in
    /// (`LaneMatrixView<int>::data_` is an `int*`): where members before it have sizes
    /// cudalint does not know, its offset is not needed.
    pub(super) fn aggregate_member(&mut self, name: &str, ty: &TypeRef, field: &str) -> Val {
        let full = format!("{name}.{field}");
        let dims = types::field_dims(&ty.name, field, self.types());
        let laid_out = types::field(&ty.name, field, self.types()).map(|(_, _, t)| t);
        if !dims.is_empty() {
            // (only a struct whose layout is known: a `__shared__` object of one cudalint
            // cannot lay out comes here too, and is no parameter)
            if let Some(fty) = laid_out.clone() {
                let mut p = Ptr::global(full.as_str(), fty, None);
                p.space = Space::Constant;
                p.dims = dims[1..].iter().map(|d| sym::konst(*d)).collect();
                return Val::Ptr(p);
            }
        }
        // an array member of a struct template's instance, whose layout is not known (MXNet's
        // `DType* mean[N]` in a kernel parameter): still in the parameter space, one element
        // of the declared type a subscript
        if dims.is_empty() && laid_out.is_none() {
            if let (Some((true, ..)), Some(fty)) = (
                self.member_of(&ty.name, field),
                self.declared_member_type(&ty.name, field),
            ) {
                let mut p = Ptr::global(full.as_str(), fty, None);
                p.space = Space::Constant;
                return Val::Ptr(p);
            }
        }
        match laid_out.or_else(|| self.declared_member_type(&ty.name, field)) {
            Some(fty) if fty.pointer_depth > 0 => {
                let mut elem = fty;
                elem.pointer_depth -= 1;
                Val::Ptr(Ptr::global(full.as_str(), elem, None))
            }
            Some(fty)
                if self.is_struct(&fty.name)
                    || (fty.name.contains('<') && self.struct_instance(&fty.name).is_some()) =>
            {
                Val::Aggregate {
                    name: full.as_str().into(),
                    ty: fty,
                }
            }
            fty => {
                let launch = self.launch_members.get(&full).copied();
                let fty = fty.unwrap_or_else(|| TypeRef::named("int"));
                Val::Int(self.runtime_value(&full, &fty, launch))
            }
        }
    }

    /// A value tested for truth. Whether a pointer is null (an optional argument: `if
    /// (in_idx) in_idx += ...`, `out_buf ? out_buf : in`) is a value of the run the analysis
    /// does not know: both arms are analysed, and what they leave is the non-null arm's.
    pub(super) fn truth(&mut self, v: Val) -> Val {
        match v {
            Val::Ptr(_) => Val::Int(self.runtime_var("pointer != nullptr", None)),
            v => v,
        }
    }

    /// `sizeof x`, `sizeof(*out)`, `sizeof(buf[0])`: the size of the expression's type,
    /// nothing evaluated (a type's name parses as an expression too: `sizeof(T)`).
    fn sizeof_expr(&mut self, inner: &Expr) -> Val {
        let size = |run: &Self, t: &TypeRef| match run.layout_of(t) {
            Some(l) => Some(l.size),
            None if run.assumed_four_bytes(t) => Some(4),
            None => None,
        };
        let bytes = match &inner.kind {
            ExprKind::Ident(n) => size(self, &TypeRef::named(n))
                .or_else(|| matches!(self.lookup_local(n), Some(Val::Ptr(_))).then_some(8)),
            ExprKind::Unary {
                op: UnOp::Deref,
                arg: base,
            }
            | ExprKind::Index { base, .. } => match self.pure_rvalue(base) {
                Val::Ptr(p) => size(self, &p.elem),
                _ => None,
            },
            _ => None,
        };
        // a member or an object whose value is not known (gpu-voxels' `sizeof(m_child_low)`
        // in a member function): its declared type's
        let bytes = bytes.or_else(|| {
            let t = self.declared_type(inner, 0)?;
            match t.pointer_depth {
                0 => size(self, &t),
                _ => Some(8),
            }
        });
        match bytes {
            Some(b) => Val::Int(sym::konst(b)),
            None => Val::Unknown("sizeof expression".into()),
        }
    }

    /// A kernel's type parameter no launch binds, taken as 4 bytes wide as its elements are;
    /// also under another template's name (`sizeof(T)` in `Loader<DataType>::bytes`).
    fn assumed_four_bytes(&self, t: &TypeRef) -> bool {
        let unbound =
            |t: &TypeRef| t.pointer_depth == 0 && self.unbound_types.contains(t.name.as_str());
        unbound(t) || unbound(&self.resolve_type(t))
    }

    /// The type a struct declares its member with, the struct's template arguments put in
    /// for its parameters.
    fn declared_member_type(&mut self, struct_name: &str, field: &str) -> Option<TypeRef> {
        let (def_name, binds) = self.struct_instance(struct_name)?;
        let def = types::struct_named(&def_name, self.types())?;
        let Some(fd) = def.fields.iter().find(|f| f.name == field) else {
            // a member a base class declares
            return self.member_of(struct_name, field).map(|(_, t, _)| t);
        };
        let ty = super::names::bind_type(&binds, &fd.ty).unwrap_or_else(|| fd.ty.clone());
        Some(ty)
    }

    pub(super) fn arith(&mut self, op: BinOp, a: Val, b: Val) -> Val {
        if let (BinOp::Shr, Val::Int(x), Val::Int(s)) = (op, &a, &b) {
            if !s.lane_varying && !s.data {
                if let Some(q) = self.fast_quotient(x, s) {
                    return Val::Int(q);
                }
            }
        }
        match (a, b) {
            (Val::Ptr(mut p), Val::Int(i)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                let size = self.ptr_stride(&p);
                let i = if op == BinOp::Sub {
                    sym::un(UnaryOp::Neg, i)
                } else {
                    i
                };
                p.offset = sym::add(p.offset, sym::mul(i, size));
                p.path = None;
                if !p.dims.is_empty() {
                    p.dims = Rc::from(Vec::new());
                }
                Val::Ptr(p)
            }
            // (only an address cast to an integer meets a bitwise operator) its low bits
            // (`(size_t)address & 2`, which half of a word a `__half` is) are its offset's,
            // an allocation being aligned
            (Val::Ptr(p), Val::Int(i)) | (Val::Int(i), Val::Ptr(p))
                if op == BinOp::BitAnd && i.as_const().is_some_and(|m| (0..256).contains(&m)) =>
            {
                Val::Int(sym::binop(op, p.offset, i))
            }
            // and so is its remainder by a power of two up to that alignment (DGL's
            // `reinterpret_cast<std::uintptr_t>(indices + i) % GPU_CACHE_LINE_SIZE`, where in
            // its cache line a row starts)
            (Val::Ptr(p), Val::Int(i))
                if op == BinOp::Rem
                    && i.as_const()
                        .is_some_and(|m| m > 0 && m <= 256 && (m & (m - 1)) == 0) =>
            {
                Val::Int(sym::binop(op, p.offset, i))
            }
            (Val::Ptr(mut p), Val::Int(i)) | (Val::Int(i), Val::Ptr(mut p))
                if matches!(op, BinOp::BitOr | BinOp::BitAnd | BinOp::BitXor) =>
            {
                p.offset = sym::binop(op, p.offset, i);
                p.path = None;
                Val::Ptr(p)
            }
            (Val::Int(i), Val::Ptr(mut p)) if op == BinOp::Add => {
                let size = self.ptr_stride(&p);
                p.offset = sym::add(p.offset, sym::mul(i, size));
                p.path = None;
                Val::Ptr(p)
            }
            (Val::Ptr(p), Val::Ptr(q)) if op == BinOp::Sub && p.base == q.base => {
                let size = self.ptr_stride(&p);
                Val::Int(sym::binop(
                    BinOp::Div,
                    sym::binop(BinOp::Sub, p.offset, q.offset),
                    size,
                ))
            }
            // whether a pointer is null (`if (in_idx && k > 0)`, `p != nullptr`)
            (p @ Val::Ptr(_), Val::Int(z)) | (Val::Int(z), p @ Val::Ptr(_))
                if matches!(op, BinOp::Eq | BinOp::Ne) && z.as_const() == Some(0) =>
            {
                let set = self.truth(p).sym();
                Val::Int(if op == BinOp::Ne {
                    set
                } else {
                    sym::un(UnaryOp::Not, set)
                })
            }
            (a, b)
                if matches!(op, BinOp::And | BinOp::Or)
                    && (matches!(a, Val::Ptr(_)) || matches!(b, Val::Ptr(_))) =>
            {
                let (a, b) = (self.truth(a), self.truth(b));
                self.arith(op, a, b)
            }
            (Val::Ptr(_), _) | (_, Val::Ptr(_)) => Val::Unknown(
                if matches!(
                    op,
                    BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne
                ) {
                    "pointer comparison"
                } else {
                    "arithmetic on an address cast to an integer"
                }
                .into(),
            ),
            // CUDA's vector operators are component-wise (`tc0 *= p.channels` on an `int4`,
            // `tcOut += 6 * tz * w * h`: nvdiffrast's texel indices)
            (Val::Vector(x), Val::Vector(y)) if x.len() == y.len() => Val::Vector(
                x.iter()
                    .zip(y.iter())
                    .map(|(a, b)| self.component(op, a.clone(), b.clone()))
                    .collect(),
            ),
            (Val::Vector(x), Val::Int(k)) => Val::Vector(
                x.iter()
                    .map(|a| self.component(op, a.clone(), k.clone()))
                    .collect(),
            ),
            (Val::Int(k), Val::Vector(x)) => Val::Vector(
                x.iter()
                    .map(|a| self.component(op, k.clone(), a.clone()))
                    .collect(),
            ),
            (Val::Int(a), Val::Int(b)) if a.floating || b.floating => {
                Val::Int(floating(&[sym::konst(op as i64), a, b]))
            }
            // a value every lane holds alike but cudalint cannot see (a float rounded to an
            // integer) is a fine base for the lanes' offsets, but scaling, dividing or
            // masking a lane's value by it gives what it does not know: data, as the float
            // itself would be (`tid * (int)scale`, RELION's rotated coordinates)
            (Val::Int(a), Val::Int(b))
                if !matches!(op, BinOp::Add | BinOp::Sub)
                    && (opaque_uniform(&a) && b.lane_varying
                        || opaque_uniform(&b) && a.lane_varying) =>
            {
                Val::Int(rounded(sym::binop(op, a, b)))
            }
            (a, b) => Val::Int(sym::binop(op, a.sym(), b.sym())),
        }
    }

    /// `(__umulhi(n, m) + n) >> s` and `__umulhi(n, m) >> s` with `m` and `s` the launch's:
    /// Granlund and Montgomery's division by a divisor fixed at run time, as nvcc itself
    /// compiles `n / d`, so `n / d` it is, `d` a value the run gives (a size, as any other).
    /// Priced as the opaque function of `n` it looks like, every lane's quotient was its own
    /// sector, where neighbouring lanes share one quotient and read one row.
    fn fast_quotient(&mut self, x: &Sym, shift: &Sym) -> Option<Sym> {
        let product = |y: &Sym| {
            self.fast_products
                .iter()
                .find(|(r, ..)| Rc::ptr_eq(r, y))
                .map(|(_, n, m)| (n.clone(), m.clone()))
        };
        // (a plain `(magic * (uint64_t)n) >> shift`, FBGEMM's `FixedDivisor`, the same in
        // 64 bits)
        let opaque = |v: &Sym| !v.lane_varying && !v.data && v.as_const().is_none();
        let plain = |v: &Sym| v.lane_varying && !v.data && !v.floating;
        let (n, m) = match &x.kind {
            SymKind::Bin(sym::Op::Bin(BinOp::Add), y, z) => product(y)
                .filter(|(n, _)| sym::same(n, z))
                .or_else(|| product(z).filter(|(n, _)| sym::same(n, y)))?,
            SymKind::Bin(sym::Op::Bin(BinOp::Mul), y, z)
                if shift.as_const().is_none()
                    && (opaque(y) && plain(z) || opaque(z) && plain(y)) =>
            {
                if plain(y) {
                    (y.clone(), z.clone())
                } else {
                    (z.clone(), y.clone())
                }
            }
            _ => product(x)?,
        };
        // in a member function of the divider (`divisor`, `multiplier`, `shift`): the one
        // other member the launch fixes is the divisor, the one its `n - q * d` remainder uses
        let owner = self.frames.last().and_then(|f| f.owner.clone());
        let others: Vec<Sym> = owner
            .map(|o| self.member_names(&o))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(f, _)| match self.lookup_local(&f) {
                Some(Val::Int(v)) if !v.lane_varying && !v.data && v.unknown_reason().is_none() => {
                    Some(v.clone())
                }
                _ => None,
            })
            .filter(|v| !sym::same(v, &m) && !sym::same(v, shift))
            .collect();
        let d = match &others[..] {
            [d] => d.clone(),
            _ => {
                let divisor = match &m.kind {
                    SymKind::Var(Var::Runtime(i)) => {
                        format!("divisor of {}", self.runtime[*i as usize].name)
                    }
                    _ => "divisor of a fast division".to_string(),
                };
                self.runtime_var(&divisor, None)
            }
        };
        Some(sym::binop(BinOp::Div, n, d))
    }

    /// One component of a vector operation: integer arithmetic, floating-point arithmetic
    /// kept opaque as [`arith`](Self::arith) keeps it.
    fn component(&mut self, op: BinOp, a: Sym, b: Sym) -> Sym {
        match self.arith(op, Val::Int(a), Val::Int(b)) {
            Val::Int(s) => s,
            _ => sym::unknown("vector component"),
        }
    }

    /// Bytes between neighbouring elements (rows, for a pointer to rows) of what `p` points to.
    fn ptr_stride(&self, p: &Ptr) -> Sym {
        let elem = self.layout_of(&p.elem).map(|l| l.size).unwrap_or(4);
        p.dims
            .iter()
            .fold(sym::konst(elem), |acc, d| sym::mul(acc, d.clone()))
    }
}

/// What a floating-point value is to the analysis: not followed (rounding makes its integer
/// parts inexact), but a function of what it is made of, so that lanes computing it from the
/// same values hold the same value and lanes computing it from different ones different
/// values (`floorf(roi_start + ph * bin)` in a bilinear interpolation: a gather at worst),
/// and a branch on it is a branch on data. A literal is one such value, the same in every lane.
pub(super) fn floating(parts: &[Sym]) -> Sym {
    let size: u32 = parts.iter().map(|s| s.size).sum();
    if size > sym::MAX_SYM_SIZE / 2 {
        return if parts.iter().any(|s| s.lane_varying) {
            sym::data(sym::FLOATING)
        } else {
            sym::loaded(sym::konst(0x6a09_e667), sym::FLOATING)
        };
    }
    let key = parts
        .iter()
        .enumerate()
        .fold(sym::konst(0x6a09_e667), |k, (i, s)| {
            let shifted = sym::binop(BinOp::Shl, s.clone(), sym::konst(11 * i as i64 + 3));
            sym::binop(BinOp::BitXor, k, shifted)
        });
    sym::loaded(key, sym::FLOATING)
}

impl KernelRun<'_> {
    /// A value converted to type `ty`. An integer made a float is the same number, but what
    /// is done with it next is floating-point arithmetic (`(float)n / 2`, a host's
    /// `(float)src / dst` scale is 0.5, not 0): it is a floating value from there on.
    pub(super) fn converted(&self, ty: &str, s: Sym) -> Sym {
        let to_float = !s.floating
            && match types::builtin(ty) {
                Some(_) => types::is_floating(ty),
                None => types::is_floating(&self.through_typedefs(ty)),
            };
        if to_float {
            return floating(&[s]);
        }
        if s.floating && self.integer_bytes(&TypeRef::named(ty)).is_some() {
            return rounded(s);
        }
        cast_int(ty, s)
    }

    /// A value stored into an integer of `kept` bytes (a declaration's `int i = x;`): a
    /// floating-point one is rounded.
    pub(super) fn as_integer(&self, v: Val, kept: Option<i64>) -> Val {
        match v {
            Val::Int(s) if s.floating && kept.is_some() => Val::Int(rounded(s)),
            v => v,
        }
    }
}

/// A value the same in every lane that cudalint does not know (see `arith`).
fn opaque_uniform(s: &Sym) -> bool {
    s.data && !s.lane_varying
}

/// A floating-point value made an integer: a function of the value, the same in every lane
/// where the value is, and integer arithmetic from there on (see [`sym::ROUNDED`]).
pub(super) fn rounded(s: Sym) -> Sym {
    sym::loaded(s, sym::ROUNDED)
}

/// Integer casts that narrow: `(char)x` keeps the low byte. Wider or same-width casts are identity.
pub(super) fn cast_int(ty: &str, s: Sym) -> Sym {
    match ty {
        "char" | "signed char" | "int8_t" => s,
        "unsigned char" | "uint8_t" => sym::binop(BinOp::BitAnd, s, sym::konst(0xff)),
        "unsigned short" | "uint16_t" => sym::binop(BinOp::BitAnd, s, sym::konst(0xffff)),
        // an integer made a float keeps its value
        _ => s,
    }
}

/// `this` in `this->field`.
pub(super) fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == "this")
}

/// The integer an address computed in integers starts from: `bufs` in `bufs`,
/// `bufs + sizeof(T) * n`, `(uintptr_t)(bufs) + off`.
fn address_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Cast { arg: inner, .. } => address_name(inner),
        ExprKind::Binary {
            op: BinOp::Add,
            lhs,
            ..
        } => address_name(lhs),
        _ => None,
    }
}

/// `address - start` where `address` is `start` plus terms: what was added to it.
fn bytes_after(address: &Sym, start: &Sym) -> Option<Sym> {
    if sym::same(address, start) {
        return Some(sym::konst(0));
    }
    match &address.kind {
        sym::SymKind::Bin(sym::Op::Bin(BinOp::Add), l, r) => {
            bytes_after(l, start).map(|x| sym::add(x, r.clone()))
        }
        _ => None,
    }
}
