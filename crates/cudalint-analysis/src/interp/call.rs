//! Calls: memory intrinsics (`__ldg`, `atomicAdd`), built-in arithmetic, function-like
//! macros, `__device__` functions inlined at their call site (overloads, template arguments,
//! member functions of template structs), vector constructors, texture reads and
//! `SharedMemory<T>()`. Cooperative groups and warp intrinsics are `groups.rs`.

use super::{
    expr::is_this,
    groups::warp_intrinsic,
    place::{index_of, strip_addr},
    AccessOp, Frame, InlineSite, KernelRun, Loc, Place, Ptr, Returns, Space, TArg, Val,
    LOCAL_OBJECT, MAX_CALL_DEPTH,
};
use crate::sym::{self, Op, Sym, Var};
use crate::types;
use crate::types::TrimLiteral;
use cudalint_syntax::{BinOp, Expr, ExprKind, FnKind, Function, Name, Span, TemplateArg, TypeRef};
use std::rc::Rc;

/// A caller's local a call's argument names: its name, its value before the call, and whether
/// the argument was its address (`&x`).
type CallerLocal = (Rc<str>, Option<Val>, bool);

impl KernelRun<'_> {
    /// A call, tried family by family in the order the names could clash: memory intrinsics,
    /// built-ins, functional casts, cooperative groups and warp intrinsics, vector
    /// constructors and texture reads, function-like macros, `__device__` functions, then
    /// `SharedMemory<T>()`; anything else is a call cudalint cannot see into.
    pub(super) fn call(
        &mut self,
        callee: &str,
        targs: &[TemplateArg],
        args: &[Expr],
        span: Span,
    ) -> Val {
        if callee == cudalint_syntax::IMMEDIATE_CALL {
            if let Some((
                Expr {
                    kind: ExprKind::Lambda(def),
                    ..
                },
                rest,
            )) = args.split_first()
            {
                let argv: Vec<Val> = rest.iter().map(|a| self.rvalue(a)).collect();
                if let Val::Closure(c) = self.closure(def) {
                    return self.call_closure(&c, argv, span);
                }
            }
            return Val::Unknown("result of a lambda called where it is written".into());
        }
        if callee == cudalint_syntax::TEMPORARY_CALL {
            if let [object, Expr {
                kind: ExprKind::Ident(written),
                ..
            }, rest @ ..] = args
            {
                if let Some(v) = self.cub_block_reduce(written, rest, span) {
                    return v;
                }
                // (`nodes[i].f`, `stack[l]->f`: whichever comes last)
                let method = match (written.rfind('.'), written.rfind("->")) {
                    (Some(d), Some(a)) if a > d => &written[a + 2..],
                    (Some(d), _) => &written[d + 1..],
                    (None, Some(a)) => &written[a + 2..],
                    (None, None) => "",
                };
                // an object of a type the program does not define (CUB's own `BlockLoadT(
                // temp_storage.load)`, the toolkit's): nothing to run, its arguments not read
                // (the shared storage it is given is bound, not loaded)
                if let ExprKind::Call {
                    callee,
                    template_args,
                    args: cargs,
                } = &object.kind
                {
                    let ty = self
                        .instance_type(callee, template_args)
                        .unwrap_or_else(|| TypeRef::named(callee));
                    let defined = self.constructed_struct(&ty).is_some()
                        || !self
                            .project
                            .device_functions(unqualified(callee), cargs.len(), self.file())
                            .is_empty();
                    if !defined {
                        return self.call(written, targs, rest, span);
                    }
                }
                let name = format!("__temporary_{}", span.start);
                // an object in memory (`nodes[i].key_bits()`, `stack[l]->hasStatus(s)`): a
                // reference to it, so the call loads the members it reads where it reads them
                if matches!(
                    object.kind,
                    ExprKind::Index { .. }
                        | ExprKind::Unary {
                            op: cudalint_syntax::UnOp::Deref,
                            ..
                        }
                ) {
                    let in_memory = self.place(object).filter(Place::is_object_in_memory);
                    if let (Some(place), true) = (in_memory, !self.frames.is_empty()) {
                        if let Some(frame) = self.frames.last_mut() {
                            frame.refs.push((name.as_str().into(), place));
                        }
                        return self.call(&format!("{name}.{method}"), targs, rest, span);
                    }
                }
                // the object, under a name of its own for the call, as `Agent<BT> a(...);
                // a.Process(off);` would have it
                let object = match &object.kind {
                    ExprKind::Call {
                        callee,
                        template_args,
                        args,
                    } => self.temporary_aggregate(callee, template_args, args, span),
                    _ => None,
                }
                .unwrap_or_else(|| self.rvalue(object));
                self.declare(&name, object);
                return self.call(&format!("{name}.{method}"), targs, rest, span);
            }
            return Val::Unknown("result of a member function of a temporary".into());
        }
        if callee == cudalint_syntax::BASE_INIT {
            self.base_constructor(args, span);
            return Val::Unknown("result of a base class's constructor".into());
        }
        if let Some(v) = self.cub_block_reduce(callee, args, span) {
            return v;
        }
        let name = unqualified(callee);
        // CUDA's own, unless the program defines a function of that name (an `atomicAdd` for
        // doubles on old architectures): that one is what the call runs
        if let Some(kind) = memory_intrinsic(name) {
            // (one for the type the call points to: MXNet's `atomicAdd(double*, double)`
            // leaves `atomicAdd(&count, 1)` on an int to CUDA)
            let target = args.first().map(|a| self.pure_rvalue(a));
            let own = self
                .project
                .device_functions(name, args.len(), self.file())
                .iter()
                .any(|(_, f)| {
                    f.kind != FnKind::Host
                        && target
                            .as_ref()
                            .is_none_or(|t| self.takes_pointee(f, std::slice::from_ref(t)))
                });
            if !own {
                return self.memory_intrinsic_call(name, kind, args);
            }
        }
        if name == "__pipeline_memcpy_async" && (3..=4).contains(&args.len()) {
            let own = !self
                .project
                .device_functions(name, args.len(), self.file())
                .is_empty();
            if !own {
                return self.async_copy(&args[0], &args[1], &args[2], span);
            }
        }
        // libcu++'s per-thread form with a pipeline, `cuda::memcpy_async(dst, src, size,
        // pipe)`, is the same LDGSTS. With a `cuda::barrier` nvcc 13 emits no LDGSTS for it on
        // sm_90 (cuda-samples' globalToShmemAsyncCopy), and cooperative groups'
        // `memcpy_async(group, ...)` spreads a block of bytes over the group's lanes as the
        // library sees fit: neither is modelled.
        if name == "memcpy_async"
            && args.len() == 4
            && !callee.starts_with("cg::")
            && !callee.starts_with("cooperative_groups::")
            && self
                .project
                .device_functions(name, args.len(), self.file())
                .is_empty()
            && !self.is_barrier(&args[3])
            && matches!(self.pure_rvalue(&args[0]), Val::Ptr(_))
        {
            return self.async_copy(&args[0], &args[1], &args[2], span);
        }
        // `alignof(T)`, also as the grammar may read it, a call of `alignof` with T as argument
        if matches!(name, "alignof" | "__alignof__" | "_Alignof") {
            let ty = match (targs.first(), args.first()) {
                (Some(TemplateArg::Type(t)), _) => Some(t.clone()),
                (
                    None,
                    Some(Expr {
                        kind: ExprKind::Ident(n),
                        ..
                    }),
                ) => Some(TypeRef::named(n)),
                _ => None,
            };
            return match ty.and_then(|t| self.layout_of(&t)) {
                Some(l) => Val::Int(sym::konst(l.align)),
                None => Val::Unknown("alignof of a type not known".into()),
            };
        }
        // `cuda::aligned_size_t<16>(16)`: a size, with the alignment a copy may assume
        if name.starts_with("aligned_size_t") && args.len() == 1 {
            return self.rvalue(&args[0]);
        }
        if let Some(v) = self.builtin_call(name, args) {
            return v;
        }
        let library = ["thrust::", "std::", "cuda::std::", "::std::"]
            .iter()
            .any(|q| callee.starts_with(q));
        // `thrust::upper_bound(thrust::seq, first, last, v)` over pointers: a place in the
        // range that the values there decide (a binary search, its own loads not modelled)
        if library && matches!(name, "upper_bound" | "lower_bound") && args.len() >= 3 {
            let argv: Vec<Val> = args.iter().map(|a| self.rvalue(a)).collect();
            if let Some(Val::Ptr(first)) = argv.iter().find(|v| matches!(v, Val::Ptr(_))) {
                let found = sym::data(format!("the place `{callee}` finds"));
                return self.arith(BinOp::Add, Val::Ptr(first.clone()), Val::Int(found));
            }
            return Val::Unknown(format!("result of `{callee}`").into());
        }
        // `cuda::std::swap(cur, next)` of two locals (a double buffer's pointers): each holds
        // what the other held
        if library && name == "swap" && args.len() == 2 {
            if let (ExprKind::Ident(a), ExprKind::Ident(b)) = (&args[0].kind, &args[1].kind) {
                if let (Some(va), Some(vb)) =
                    (self.lookup_local(a).cloned(), self.lookup_local(b).cloned())
                {
                    self.assign_local(a, vb);
                    self.assign_local(b, va);
                    return Val::Unknown("`swap` returns no value".into());
                }
            }
        }
        // `thrust::distance(first, last)` (or std's) over pointers: how far apart they are
        if name == "distance" && args.len() == 2 && library {
            let (first, last) = (self.rvalue(&args[0]), self.rvalue(&args[1]));
            if let (Val::Ptr(_), Val::Ptr(_)) = (&first, &last) {
                return self.arith(BinOp::Sub, last, first);
            }
            return Val::Unknown(format!("result of `{callee}`").into());
        }
        if let Some(v) = self.functional_cast(callee, targs, args) {
            return v;
        }
        // a macro that takes its argument's address, or assigns to it, stands for its body
        // with the argument written in it, as the preprocessor makes it: `FLOAT4(a[i])`, that
        // is `(reinterpret_cast<float4*>(&(a[i]))[0])`, is one 16-byte load, not a 4-byte one
        // of a[i] and an unknown address; `FASI(f[t], idx)`, `(idx) = __float_as_int(f[t])`,
        // sets the caller's `idx` (other macros take their arguments' values, evaluated once,
        // which is what nvcc makes of them too and keeps nested macros linear)
        let file = self.file();
        let macro_def = self.project.function_macro(name, args.len(), file);
        if let Some(def) = macro_def {
            if let (Some(params), Some(body)) = (&def.params, &def.body) {
                if def.pastes || cudalint_syntax::substitute::param_is_a_place(params, body) {
                    let expanded =
                        cudalint_syntax::substitute::expand_expression_macro(params, body, args);
                    return self.expand_macro(&[], &expanded, Vec::new(), (file, span));
                }
            }
        }
        // a macro defined as nothing (`#define CUDA_ASSERT(expr)` in a release build): its
        // arguments are not compiled, so nothing in them is read
        if let Some(def) = macro_def {
            if def.params.is_some() && def.empty {
                return Val::Unknown(format!("macro `{name}` expands to nothing").into());
            }
        }
        let refs = self.argument_places(name, args);
        let argv: Vec<Val> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match refs.get(i).and_then(|p| p.as_ref()) {
                Some(p) => self.loaded_value(p),
                None => self.rvalue(a),
            })
            .collect();
        if let Some(Val::Closure(c)) = self.lookup_local(callee).cloned() {
            return self.call_closure(&c, argv, span);
        }
        if let Some(v) = self.cooperative_groups(name, targs, span) {
            return v;
        }
        if let Some(v) = warp_intrinsic(name, &argv, span) {
            return v;
        }
        if let Some(v) = value_builtin(name, &argv) {
            return v;
        }
        if let Some(def) = macro_def {
            let (Some(params), Some(body)) = (&def.params, &def.body) else {
                return Val::Unknown(format!("macro `{name}` is not an expression").into());
            };
            return self.expand_macro(params, body, argv, (file, span));
        }
        // a caller's local the callee takes by reference (`int& y_low`) or by address
        // (`decompose_3dim(idx, d1, d2, &b, &s, &d)` with `int* id0`), not in memory
        let by_address = args.iter().any(|a| {
            matches!(&a.kind, ExprKind::Unary { op: cudalint_syntax::UnOp::AddrOf, arg }
                if matches!(arg.kind, ExprKind::Ident(_)))
        });
        self.next_local_refs = if refs.is_empty() && !by_address {
            Vec::new()
        } else {
            args.iter()
                .enumerate()
                .map(
                    |(i, a)| match (&a.kind, refs.get(i).and_then(|p| p.as_ref())) {
                        (ExprKind::Ident(n), None)
                            if self.lookup_local(n).is_some()
                                && self.reference_place(n).is_none() =>
                        {
                            Some((Rc::from(n.as_str()), false))
                        }
                        (
                            ExprKind::Unary {
                                op: cudalint_syntax::UnOp::AddrOf,
                                arg,
                            },
                            None,
                        ) => match &arg.kind {
                            // (a `__shared__` scalar's address points into memory: AutoDock's
                            // `REDUCEFLOATSUM(value, pAccumulator)` stores and reloads it)
                            ExprKind::Ident(n)
                                if self.shared_scalar(n).is_none()
                                    && self.lookup_local(n).is_some_and(|v| {
                                        matches!(v, Val::Int(_) | Val::Unknown(_))
                                    }) =>
                            {
                                Some((Rc::from(n.as_str()), true))
                            }
                            _ => None,
                        },
                        _ => None,
                    },
                )
                .collect()
        };
        let functor_refs = refs.clone();
        let member_local_refs = self.next_local_refs.clone();
        // overloads are told apart by their arguments' declared types too
        if self.project.overloaded(name) {
            self.next_arg_types = args.iter().map(|a| self.arg_type(a, 0)).collect();
        }
        self.next_refs = refs;
        let called = self.device_call(callee, name, targs, argv, span);
        self.next_refs.clear();
        self.next_local_refs.clear();
        let argv = match called {
            Ok(v) => return v,
            Err(argv) => argv,
        };
        // (a reference parameter of its constructor names the object it is given: CUB's
        // `BlockLoadT(temp_storage).Load(...)`)
        self.next_refs = functor_refs.clone();
        let temporary = self.temporary_object(name, targs, &argv, span);
        self.next_refs.clear();
        if let Some(v) = temporary {
            return v;
        }
        // `shared.getPointer()`, `acc->add(x)`: a member function of the object's struct
        self.next_refs = functor_refs.clone();
        self.next_local_refs = member_local_refs.clone();
        let called = self.member_call(name, targs, argv, span);
        self.next_refs.clear();
        self.next_local_refs.clear();
        let argv = match called {
            Ok(v) => return v,
            Err(argv) => argv,
        };
        // `cli(t, 3)` on an object: its struct's `operator()` (hoomd's `Index2D` indexers)
        let argv = if is_identifier(name) && self.lookup_local(name).is_some() {
            self.next_refs = functor_refs;
            self.next_local_refs = member_local_refs;
            let called = self.member_call(&format!("{name}.operator()"), targs, argv, span);
            self.next_refs.clear();
            self.next_local_refs.clear();
            match called {
                Ok(v) => return v,
                Err(argv) => argv,
            }
        } else {
            argv
        };
        if let Some(v) = self.parameter_method(name, &argv) {
            return v;
        }
        if name == "abs" {
            if let [Val::Int(s)] = &argv[..] {
                if let Some(c) = s.as_const() {
                    return Val::Int(sym::konst(c.abs()));
                }
            }
        }
        if let Some(p) = self.shared_memory_object(callee, targs) {
            return Val::Ptr(p);
        }
        // a call cudalint cannot see into may write memory through the pointers it is given;
        // one given none (`sqrt(x)`, `__expf(y)`, `__float2half(z)`) leaves what this thread
        // holds in registers alone
        // the device runtime's calls (`cudaGraphSetConditional`, `cudaLaunchDevice`) are
        // functions nvcc cannot see into either
        if argv.iter().any(|v| matches!(v, Val::Ptr(_))) || name.starts_with("cuda") {
            self.in_registers.clear();
            self.clobbers += 1;
        }
        // `frexp((float)n, &e)`, `sincosf(x, &s, &c)`: a local passed by address is what the
        // call made it; for frexp of an integer that is its bit length
        for (i, a) in args.iter().enumerate() {
            let mut a = a;
            while let ExprKind::Cast { arg, .. } = &a.kind {
                a = arg;
            }
            let ExprKind::Unary {
                op: cudalint_syntax::UnOp::AddrOf,
                arg,
            } = &a.kind
            else {
                continue;
            };
            // `cudaMalloc((void**)&d_ptr_, n)` in a member function, `&buf.ptr`: the member
            // is what the call made it, no longer what the object was built with
            let set_by = || Val::Unknown(format!("set by `{name}`").into());
            match &arg.kind {
                ExprKind::Ident(m) if self.lookup_local(m).is_none() => {
                    self.assign_member(m, set_by());
                    continue;
                }
                ExprKind::Field { base, field, .. } => {
                    if is_this(base) {
                        self.assign_member(field, set_by());
                    } else {
                        self.assign_object_field(base, field, set_by());
                    }
                    continue;
                }
                _ => {}
            }
            let ExprKind::Ident(local) = &arg.kind else {
                continue;
            };
            if !matches!(
                self.lookup_local(local),
                Some(Val::Int(_) | Val::Unknown(_))
            ) {
                continue;
            }
            // the integer a float was made of (`(float)n`)
            let whole = match args.first().map(|a| &a.kind) {
                Some(ExprKind::Cast { arg, .. }) => self.pure_rvalue(arg),
                _ => argv
                    .first()
                    .cloned()
                    .unwrap_or(Val::Unknown("no argument".into())),
            };
            let set = match (name, i, whole) {
                ("frexp" | "frexpf", 1, Val::Int(n)) => Val::Int(sym::add(
                    sym::konst(32),
                    sym::un(sym::UnaryOp::Neg, sym::un(sym::UnaryOp::Clz(32), n.clone())),
                )),
                // a value the program learns at run time (`cudaDeviceGetAttribute(&n, ...)`)
                _ => Val::Int(self.runtime_var(&format!("{local} set by `{name}`"), None)),
            };
            self.assign_local(local, set);
        }
        function_of(name, &argv, false)
    }

    /// `__ldg(p)`, `atomicAdd(&a[i], v)`: an access of the place the first argument points to.
    fn memory_intrinsic_call(&mut self, name: &str, kind: AccessOp, args: &[Expr]) -> Val {
        let Some(first) = args.first() else {
            return Val::Unknown("intrinsic without arguments".into());
        };
        let target = self.rvalue(first);
        let operands: Vec<Val> = args[1..].iter().map(|a| self.rvalue(a)).collect();
        if let Val::Ptr(p) = target {
            let place = self.index_ptr(p, sym::konst(0));
            let place_span = first.span;
            let idx = index_of(strip_addr(first));
            let cas = kind == AccessOp::Atomic
                && place.ptr.space == Space::Shared
                && self.is_cas_atomic(name, &place.ty);
            let from = self.accesses.len();
            if cas {
                // the loop's read of the word, again each round
                self.record(&place, place_span, AccessOp::Load, idx);
            }
            self.record(&place, place_span, kind, idx);
            if cas {
                for a in &mut self.accesses[from..] {
                    a.cas = true;
                    a.assumptions.push(CAS_NOTE.to_string());
                }
            }
            return match kind {
                AccessOp::Store => Val::Unknown("void".into()),
                AccessOp::Atomic => self.atomic_result(name, &place, &operands),
                _ => self.loaded_value(&place),
            };
        }
        Val::Unknown(format!("`{name}` on something that is not a pointer").into())
    }

    /// Whether sm_90 compiles atomic `name` on a shared `ty` to a compare-and-swap loop: it
    /// has `ATOMS.ADD` for 32-bit integers only, and no 64-bit arithmetic but exchange and
    /// compare-and-swap (`__half2` and `__nv_bfloat162` adds go to a generic `ATOM`).
    fn is_cas_atomic(&self, name: &str, ty: &TypeRef) -> bool {
        if ty.pointer_depth > 0 {
            return false;
        }
        let op = name.trim_end_matches("_block").trim_end_matches("_system");
        let full = self.through_typedefs(&ty.name);
        let floating = matches!(full.as_str(), "float" | "double");
        let wide_integer = types::is_integer(&full)
            && self
                .layout_of(&TypeRef::named(&full))
                .is_some_and(|l| l.size == 8);
        match op {
            "atomicAdd" => floating || wide_integer,
            "atomicMax" | "atomicMin" | "atomicAnd" | "atomicOr" | "atomicXor" => wide_integer,
            _ => false,
        }
    }

    /// What an atomic returns to each lane: the value its own operation found. Where the
    /// warp's lanes all add one constant at one address (`pos = atomicAdd(&count, 1)`, stream
    /// compaction), they get consecutive values, one per lane in some order: the addresses
    /// they then index are those of consecutive slots, priced as base + lane; anything else
    /// is data.
    fn atomic_result(&mut self, name: &str, place: &Place, operands: &[Val]) -> Val {
        let step = match operands.first() {
            Some(Val::Int(s)) if name == "atomicAdd" => s.as_const(),
            _ => None,
        };
        match step {
            Some(c)
                if !place.ptr.offset.lane_varying
                    && place.ptr.offset.unknown_reason().is_none() =>
            {
                // (the count it starts from is data the warp shares: a branch on it is priced
                // as taken, as on any value read from memory)
                let base = sym::loaded(
                    place.ptr.offset.clone(),
                    format!("the value `{name}` returns"),
                );
                let rank = sym::mul(sym::var(Var::LaneId), sym::konst(c));
                Val::Int(sym::add(base, rank))
            }
            _ => Val::Int(sym::data(format!("the value `{name}` returns"))),
        }
    }

    /// `__pipeline_memcpy_async(dst, src, n)` and `cuda::memcpy_async(dst, src, n, pipe)`, what
    /// `cp.async` is: each lane copies `n` bytes (4, 8 or 16) from global memory at `src` to
    /// shared memory at `dst` in one instruction (`LDGSTS`), a load of the one and a store of
    /// the other, `n` bytes wide whatever the pointers' element type.
    fn async_copy(&mut self, dst: &Expr, src: &Expr, size: &Expr, call: Span) -> Val {
        let d = self.rvalue(dst);
        let s = self.rvalue(src);
        let width = match self.rvalue(size).sym().as_const() {
            Some(4) => Some("int"),
            Some(8) => Some("int2"),
            Some(16) => Some("int4"),
            _ => None,
        };
        let mut source = None;
        for (v, e, op) in [(s, src, AccessOp::Load), (d, dst, AccessOp::Store)] {
            if let Val::Ptr(mut p) = v {
                if let Some(t) = width {
                    p.elem = TypeRef::named(t);
                }
                let place = self.index_ptr(p, sym::konst(0));
                let before = self.accesses.len();
                // nvcc files the copy under the call's first line, where a call written over
                // several lines starts (cuda-samples' globalToShmemAsyncCopy)
                let saved = self.site_override;
                self.site_override = Some(saved.unwrap_or_else(|| self.loc(call)));
                self.record(&place, e.span, op, index_of(strip_addr(e)));
                self.site_override = saved;
                match op {
                    AccessOp::Load if place.ptr.space == Space::Global => {
                        source = Some(place.ptr.offset.clone());
                        for a in &mut self.accesses[before..] {
                            a.copy_source = true;
                        }
                    }
                    AccessOp::Store => {
                        for a in &mut self.accesses[before..] {
                            a.copied_from = source.clone();
                        }
                    }
                    _ => {}
                }
            }
        }
        Val::Unknown("void".into())
    }

    /// Integer built-ins (`min`, `__mul24`, `dim3(...)`, the lane id), barriers and fences
    /// (after which nothing is known to be in registers), `__builtin_assume_aligned`.
    fn builtin_call(&mut self, name: &str, args: &[Expr]) -> Option<Val> {
        Some(match name {
            "min" | "max" | "umin" | "umax" | "imin" | "imax" | "llmin" | "llmax" | "ullmin"
            | "ullmax"
                if args.len() == 2 =>
            {
                let a = self.rvalue(&args[0]).sym();
                let b = self.rvalue(&args[1]).sym();
                let op = if name.ends_with("min") {
                    Op::Min
                } else {
                    Op::Max
                };
                Val::Int(sym::bin(op, a, b))
            }
            "__mul24" | "__umul24" if args.len() == 2 => {
                let a = self.rvalue(&args[0]).sym();
                let b = self.rvalue(&args[1]).sym();
                Val::Int(sym::mul(a, b))
            }
            "dim3" => self.dim3_from(args),
            // the shared-window address of a generic pointer, as cp.async's operand: the same
            // place
            "__cvta_generic_to_shared" | "__cvta_generic_to_global" if args.len() == 1 => {
                self.rvalue(&args[0])
            }
            "__syncthreads"
            | "__syncwarp"
            | "__threadfence"
            | "__threadfence_block"
            | "printf"
            | "assert" => {
                // the arguments are read first; then other threads' writes become visible (or
                // printf's own), so nothing is known to be in registers
                for a in args {
                    self.rvalue(a);
                }
                self.in_registers.clear();
                self.clobbers += 1;
                Val::Unknown("void".into())
            }
            // `cg::sync(cta)`, and the barriers that also reduce a predicate over the block
            n if n == "sync" || n.ends_with("::sync") || n.starts_with("__syncthreads_") => {
                for a in args {
                    self.rvalue(a);
                }
                self.in_registers.clear();
                self.clobbers += 1;
                Val::Int(sym::data(format!("result of `{n}`")))
            }
            "__lane_id" | "laneid" => Val::Int(sym::var(Var::LaneId)),
            // an inline-PTX output the lowering does not follow (`mul.hi`, `lop3`, the parts
            // of a vector load): a value of the data, whose cost the data decides
            "__asm" => Val::Int(sym::data("set by inline PTX")),
            // a tuple is its elements (`std::make_tuple(n_loop_, c_loop_)`), which a
            // structured binding takes apart (the lowering's `__element(v, i)`)
            "make_tuple" | "make_pair" if !args.is_empty() => {
                let argv: Vec<Val> = args.iter().map(|a| self.rvalue(a)).collect();
                if !argv.iter().all(|v| matches!(v, Val::Int(_))) {
                    return Some(Val::Unknown(format!("a `{name}` of non-integers").into()));
                }
                Val::Vector(argv.iter().map(Val::sym).collect())
            }
            "__element" if args.len() == 2 => {
                let whole = self.rvalue(&args[0]);
                let i = self.rvalue(&args[1]).sym().as_const().unwrap_or(-1);
                let part = usize::try_from(i).ok();
                match (whole, part) {
                    (Val::Vector(c), Some(i)) if i < c.len() => Val::Int(c[i].clone()),
                    (Val::Dim3(c), Some(i)) if i < 3 => Val::Int(c[i].clone()),
                    (Val::Unknown(r), _) => Val::Unknown(r),
                    _ => Val::Unknown("an element of a structured binding not followed".into()),
                }
            }
            // bit intrinsics are exact functions of their argument, lane by lane
            "__clz" | "__clzll" | "__popc" | "__popcll" | "__ffs" | "__ffsll" | "__brev"
            | "__brevll"
                if args.len() == 1 =>
            {
                let w = if name.ends_with("ll") { 64 } else { 32 };
                let op = match name.trim_start_str("__").trim_end_str("ll") {
                    "clz" => sym::UnaryOp::Clz(w),
                    "popc" => sym::UnaryOp::Popc(w),
                    "ffs" => sym::UnaryOp::Ffs(w),
                    _ => sym::UnaryOp::Brev(w),
                };
                let a = self.rvalue(&args[0]).sym();
                let a = match op {
                    sym::UnaryOp::Popc(_) => super::groups::lane_rank(&a).unwrap_or(a),
                    _ => a,
                };
                Val::Int(sym::un(op, a))
            }
            // integer intrinsics with no memory behind them: exact where their selector or
            // shift is known, else a function of their arguments
            n if PURE_INTRINSICS.contains(&n) => {
                let argv: Vec<Val> = args.iter().map(|a| self.rvalue(a)).collect();
                // a value read at a uniform address is one variable for its whole array
                // (`state[6].x` and `state[5].y` alike): exact results of it would make
                // different lookups one address, and the second a load held in a register
                let whole_array = argv.iter().any(|v| match v {
                    Val::Int(s) => self.reads_array_wide_value(s),
                    _ => false,
                });
                if let Some(v) = self.high_product(n, &argv) {
                    return Some(v);
                }
                (!whole_array)
                    .then(|| exact_intrinsic(n, &argv))
                    .flatten()
                    .unwrap_or_else(|| function_of(n, &argv, true))
            }
            // rounding a floating-point value: an integer's own value where the argument is
            // one (`ceilf(n)`), else a function of what the value was made of
            n if ROUNDING.contains(&n) && args.len() == 1 => {
                if let Some(q) = self.integer_quotient(n, &args[0]) {
                    return Some(q);
                }
                let v = self.rvalue(&args[0]);
                match &v {
                    Val::Int(s) if !s.data => v,
                    Val::Int(s) if s.floating => Val::Int(super::expr::rounded(s.clone())),
                    _ => function_of(n, &[v], true),
                }
            }
            "__builtin_assume_aligned" if !args.is_empty() => {
                for a in &args[1..] {
                    self.rvalue(a);
                }
                self.rvalue(&args[0])
            }
            _ => return None,
        })
    }

    /// `ceil((float)n / 16)`, `floorf(a / (float)b)`: an integer division written in
    /// floating point to round up or down, the idiom of a grid's or a tile's count. Where
    /// both operands are integers (one made a float to divide), the integer quotient rounded
    /// the function's way; None where the argument is not such a division.
    fn integer_quotient<'e>(&mut self, name: &str, arg: &'e Expr) -> Option<Val> {
        let ExprKind::Binary {
            op: BinOp::Div,
            lhs,
            rhs,
        } = &arg.kind
        else {
            return None;
        };
        // (`(XFLOAT)pixel`: a typedef or a macro of `float`)
        let uncast = |me: &Self, e: &'e Expr| -> Option<&'e Expr> {
            match &e.kind {
                ExprKind::Cast { ty, arg }
                    if ty.pointer_depth == 0
                        && types::is_floating(&me.through_typedefs(&ty.name)) =>
                {
                    Some(arg)
                }
                _ => None,
            }
        };
        let (a, b) = match (uncast(self, lhs), uncast(self, rhs)) {
            (None, None) => return None,
            (a, b) => (a.unwrap_or(lhs), b.unwrap_or(rhs)),
        };
        let (a, b) = (self.rvalue(a), self.rvalue(b));
        let (Val::Int(a), Val::Int(b)) = (a, b) else {
            return Some(Val::Unknown(format!("result of `{name}`").into()));
        };
        if a.floating || b.floating || a.data || b.data {
            let q = super::expr::floating(&[sym::konst(BinOp::Div as i64), a, b]);
            return Some(Val::Int(super::expr::rounded(q)));
        }
        let up = name.starts_with("ceil");
        let nearest = name.contains("round") || name.contains("rint") || name.ends_with("_rn");
        let numerator = if up {
            sym::binop(BinOp::Sub, sym::add(a, b.clone()), sym::konst(1))
        } else if nearest {
            sym::add(sym::mul(a, sym::konst(2)), b.clone())
        } else {
            a
        };
        let denominator = if nearest {
            sym::mul(b, sym::konst(2))
        } else {
            b
        };
        Some(Val::Int(sym::binop(BinOp::Div, numerator, denominator)))
    }

    /// The memory places a call's arguments designate (`s_key[pos]`, `p->x`, a reference
    /// parameter passed on) where a function of that name takes the parameter by (non-const)
    /// reference: the parameter is that place, read and written where the callee uses it.
    /// Evaluating a place records the loads its indices need, not the element's own.
    fn argument_places(&mut self, name: &str, args: &[Expr]) -> Vec<Option<Place>> {
        let mut candidates = self.project.device_functions(name, args.len(), self.file());
        // `scalar_op(out[i], in[i])` on a functor object: its struct's `operator()(OutT& dst,
        // const InT src)` stores through its first argument
        if candidates.is_empty() && is_identifier(name) {
            if let Some(ty) = self.functor_struct(name) {
                let qualified = format!("{}::operator()", super::names::split_template(&ty).0);
                candidates = self
                    .project
                    .device_functions("operator()", args.len(), self.file())
                    .into_iter()
                    .filter(|(_, f)| f.name == qualified)
                    .collect();
            }
        }
        // `d_oc.divmod(index, tmp1, oz_2)`, `p->split(i, &q, r)`: a member function (of
        // whichever struct defines one by that name) sets the caller's `int& quo`
        if candidates.is_empty() {
            let split = name
                .rsplit_once("->")
                .or_else(|| name.rsplit_once('.'))
                .filter(|(o, m)| is_identifier(o.trim()) && is_identifier(m));
            if let Some((object, method)) = split {
                // (only the struct the object is: an object whose type cudalint cannot tell,
                // a template's `Pooler pooler`, is not given a callee's signature)
                let ty = match self.lookup_local(object.trim()).cloned() {
                    Some(Val::Aggregate { ty, .. }) => Some(ty),
                    Some(Val::Ptr(p)) => Some(p.elem.clone()),
                    Some(v) => self.local_object(&v).map(|(ty, _)| ty),
                    None => None,
                };
                let qualified = ty
                    .and_then(|ty| self.constructed_struct(&TypeRef::named(&ty.name)))
                    .map(|(_, def)| format!("{def}::{method}"));
                if let Some(qualified) = qualified {
                    candidates = self
                        .project
                        .device_functions(method, args.len(), self.file())
                        .into_iter()
                        .filter(|(_, f)| f.name == qualified)
                        .collect();
                }
            }
        }
        // `BlockLoadT(temp_storage.load)`, a struct built where it is used: its constructor's
        // (a `TempStorage&` binds the shared storage, it does not load it)
        if candidates.is_empty() && is_identifier(name) {
            if let Some((_, def)) = self.constructed_struct(&TypeRef::named(name)) {
                let base = def.split('<').next().unwrap_or(&def).trim();
                let ctor = unqualified(base).to_string();
                let qualified = format!("{base}::{ctor}");
                candidates = self
                    .project
                    .device_functions(&ctor, args.len(), self.file())
                    .into_iter()
                    .filter(|(_, f)| f.name == qualified)
                    .collect();
            }
        }
        // overloads (ppl.cv's `mulAdd(float4&, float4&, float4&)` beside `mulAdd(float4&,
        // float4&, float)`): the one the arguments' types choose says which are references
        if candidates.len() > 1 && self.project.overloaded(name) {
            let types: Vec<Option<TypeRef>> = args.iter().map(|a| self.arg_type(a, 0)).collect();
            let values: Vec<Val> = args
                .iter()
                .map(|a| match &a.kind {
                    ExprKind::Ident(n) => self.lookup_local(n).cloned(),
                    _ => None,
                })
                .map(|v| v.unwrap_or_else(|| Val::Unknown("an argument".into())))
                .collect();
            if let Some(c) = pick_overload(&candidates, &values, &types, true) {
                candidates = vec![c];
            }
        }
        let mut by_reference: Vec<bool> = (0..args.len())
            .map(|i| {
                candidates.iter().any(|(_, f)| {
                    f.params.get(i).is_some_and(|p| {
                        p.is_reference && (!p.ty.is_const || p.ty.pointer_depth > 0)
                    })
                })
            })
            .collect();
        // a struct taken by `const S&` is its object too: nvcc reads the members the callee
        // uses, where it uses them, never the whole struct at the call
        for (i, by_ref) in by_reference.iter_mut().enumerate() {
            let const_ref = candidates.iter().find_map(|(_, f)| {
                f.params
                    .get(i)
                    .filter(|p| p.is_reference && p.ty.is_const && p.ty.pointer_depth == 0)
                    .map(|p| p.ty.clone())
            });
            if let Some(ty) = const_ref.filter(|_| !*by_ref) {
                *by_ref = self.constructed_struct(&ty).is_some();
            }
        }
        if !by_reference.contains(&true) {
            return Vec::new();
        }
        args.iter()
            .zip(by_reference)
            .map(|(a, by_ref)| {
                if !by_ref {
                    return None;
                }
                match &a.kind {
                    // a reference, or an object in memory by its name (`__shared__ Storage s;`
                    // given to `reduce(..., s)`)
                    ExprKind::Ident(n) => self.reference_place(n).or_else(|| {
                        self.place(a).filter(|p| {
                            !p.subarray && matches!(p.ptr.space, Space::Global | Space::Shared)
                        })
                    }),
                    ExprKind::Index { .. }
                    | ExprKind::Field { .. }
                    | ExprKind::Unary {
                        op: cudalint_syntax::UnOp::Deref,
                        ..
                    } => self.place(a).filter(|p| {
                        !p.subarray && matches!(p.ptr.space, Space::Global | Space::Shared)
                    }),
                    _ => None,
                }
            })
            .collect()
    }

    /// The type an argument is declared with, for choosing among overloads: a pointer's
    /// elements' through subscripts, else what [`Self::declared_type`] finds.
    fn arg_type(&mut self, e: &Expr, depth: usize) -> Option<TypeRef> {
        match &e.kind {
            ExprKind::Ident(n) => match self.lookup_local(n) {
                Some(Val::Ptr(p)) => {
                    let mut t = p.elem.clone();
                    t.pointer_depth += 1;
                    Some(t)
                }
                _ => self.declared_type(e, depth),
            },
            ExprKind::Index { base, .. } if depth < 8 => {
                let mut t = self.arg_type(base, depth + 1)?;
                t.pointer_depth = t.pointer_depth.checked_sub(1)?;
                Some(t)
            }
            _ => self.declared_type(e, depth),
        }
    }

    /// The struct a local object (or a reference to one) named `name` is an instance of.
    fn functor_struct(&mut self, name: &str) -> Option<String> {
        let value = self.lookup_local(name)?.clone();
        let ty = match value {
            Val::Aggregate { ty, .. } if ty.pointer_depth == 0 => ty.name,
            v => self.local_object(&v)?.0.name,
        };
        Some(self.constructed_struct(&TypeRef::named(&ty))?.0)
    }

    /// A functional cast, `int64_t(i) * ne00` (llama.cpp): the argument, converted.
    fn functional_cast(
        &mut self,
        callee: &str,
        targs: &[TemplateArg],
        args: &[Expr],
    ) -> Option<Val> {
        if args.len() != 1 || !targs.is_empty() {
            return None;
        }
        let ty = self.through_typedefs(callee);
        if types::builtin(&ty).is_none() || types::vector_width(&ty).is_some() {
            return None;
        }
        Some(match self.rvalue(&args[0]) {
            Val::Int(s) => Val::Int(self.converted(&ty, s)),
            other => other,
        })
    }

    /// A function-like macro's body, its parameters bound to the arguments' values (or
    /// written in it already, `params` empty); its accesses are filed at the macro's use, as
    /// the compiler's line table files them.
    fn expand_macro(&mut self, params: &[Name], body: &Expr, argv: Vec<Val>, site: Loc) -> Val {
        if self.macro_depth > 32 {
            return Val::Unknown("macro expansion too deep".into());
        }
        self.macro_depth += 1;
        self.scopes.push(
            params
                .iter()
                .map(|p| (Rc::from(p.as_str()), Val::Unknown("".into())))
                .collect(),
        );
        for (p, v) in params.iter().zip(argv) {
            self.assign_local(p, v);
        }
        let saved = self.site_override;
        self.site_override = Some(saved.unwrap_or(site));
        let v = self.rvalue(body);
        self.site_override = saved;
        self.scopes.pop();
        self.macro_depth -= 1;
        v
    }

    /// A `__device__` function defined in the project, inlined: `tile_B::get_i(l)` is a static
    /// member function of the struct the qualifier names (through its typedef); an unqualified
    /// call names one only inside a member function of the same struct. Gives the arguments back when no
    /// function of that name and arity is visible.
    fn device_call(
        &mut self,
        callee: &str,
        name: &str,
        targs: &[TemplateArg],
        argv: Vec<Val>,
        span: Span,
    ) -> Result<Val, Vec<Val>> {
        let this = self.next_this.take();
        let this_ptr = self.next_this_ptr.take();
        let this_values = std::mem::take(&mut self.next_this_values);
        // an unqualified call inside a member function finds its struct's members first
        let mut owner = callee
            .rsplit_once("::")
            .map(|(q, _)| self.through_typedefs(q.trim()))
            .or_else(|| self.frames.last().and_then(|f| f.owner.clone()))
            // `cudf::detail::grid_1d`: namespaces are not modelled, the struct's own name is
            .map(|o| {
                if self.struct_instance(&o).is_none() && o.contains("::") {
                    self.through_typedefs(unqualified(&o))
                } else {
                    o
                }
            });
        // `get_ebits<Scalar>()` with Scalar = double: the explicit specialization
        // `template<> int get_ebits<double>()` where the program has one
        let specialized = (!targs.is_empty() && self.project.has_specialization(name))
            .then(|| self.template_args_text(targs))
            .flatten()
            .map(|t| format!("{name}<{t}>"))
            .map(|spec| {
                self.project
                    .device_functions(&spec, argv.len(), self.file())
            })
            .filter(|c| c.iter().any(|(_, f)| f.body.is_some()));
        let targs = if specialized.is_some() {
            &[][..]
        } else {
            targs
        };
        let candidates = specialized
            .unwrap_or_else(|| self.project.device_functions(name, argv.len(), self.file()));
        let mut owner_base = owner
            .as_deref()
            .and_then(|o| self.struct_instance(o))
            .map(|(def, _)| def);
        // a member function its struct inherits (PCL's `PtrStepSz<T>` calls `ptr` of its
        // base `PtrStep<T>`): the base's, with the base's template arguments
        let project = self.project;
        let members = || candidates.iter().filter_map(|(_, f)| project.owner_of(f));
        if owner_base.is_some()
            && members().next().is_some()
            && !members().any(|o| Some(o) == owner_base.as_deref())
        {
            let defines = |def: &str| members().any(|o| o == def);
            if let Some(base) = owner
                .as_deref()
                .and_then(|o| self.base_defining(o, defines))
            {
                owner_base = self.struct_instance(&base).map(|(def, _)| def);
                owner = Some(base);
            }
        }
        let of_owner = |f: &Function| {
            let o = project.owner_of(f);
            o.is_some() && o == owner_base.as_deref()
        };
        let candidates: Vec<_> = if candidates.iter().any(|(_, f)| of_owner(f)) {
            candidates
                .into_iter()
                .filter(|(_, f)| of_owner(f))
                .collect()
        } else {
            candidates
                .into_iter()
                .filter(|(_, f)| project.owner_of(f).is_none())
                .collect()
        };
        let arg_types = std::mem::take(&mut self.next_arg_types);
        let Some((fi, f)) = pick_overload(&candidates, &argv, &arg_types, targs.is_empty()) else {
            return Err(argv);
        };
        // a program's own overload of a CUDA atomic for another type (MXNet's `void
        // atomicAdd(double*, double)`) is not the one an `int*` calls: CUDA's is
        if name.starts_with("atomic") && !self.takes_pointee(f, &argv) {
            return Err(argv);
        }
        if self.frames.len() > MAX_CALL_DEPTH {
            return Ok(Val::Unknown(
                format!("call depth over {MAX_CALL_DEPTH} at `{name}`").into(),
            ));
        }
        let member_of = self.project.owner_of(f).and(owner);
        // recursion: nvcc does not inline it, so the body's accesses are one set of
        // instructions, met at the first call; inlined again at every level, a function
        // calling itself three times stood for 3^8 copies of each access (logic-rewrite's
        // minatoIsop5Rec: 2,090 accesses of one line, 6,440 findings, 3.7 s). A template's
        // recursion through other arguments (`Unroll<N - 1>::run`) makes other functions,
        // which nvcc does inline, and is followed as before.
        let identity = (f as *const Function as usize, member_of.clone());
        if f.template_params.is_empty() && self.active_calls.contains(&identity) {
            if !self.recursive.iter().any(|r| r == name) {
                self.recursive.push(name.to_string());
            }
            return Ok(Val::Unknown(
                format!("result of the recursive call of `{name}`").into(),
            ));
        }
        let template = self.callee_template(f, member_of.as_deref(), targs, &argv);
        // `run()` inside a member function (a constructor's body calling its struct's own
        // work): the same object
        let own = this_ptr.is_none() && !callee.contains("::") && of_owner(f);
        let this = this.or_else(|| {
            own.then(|| self.frames.last().and_then(|fr| fr.this))
                .flatten()
        });
        // `fetch(i)` inside the `operator()` of a struct the kernel was given by value (PCL's
        // `NormalsEstimator`): the same members, as the caller holds them
        let mut this_values = this_values;
        if own && this.is_none() && this_values.is_empty() {
            if let Some(owner) = member_of.as_deref() {
                this_values = self
                    .member_names(owner)
                    .into_iter()
                    .filter_map(|(m, _)| Some((m.clone(), self.lookup_local(&m)?.clone())))
                    .collect();
            }
        }
        // the caller's locals given by reference or address, with their values before the call
        // (with whether the caller wrote its address: only then is it a pointer's pointee)
        let locals: Vec<Option<CallerLocal>> = std::mem::take(&mut self.next_local_refs)
            .into_iter()
            .map(|l| {
                l.map(|(n, address)| {
                    let v = self.lookup_local(&n).cloned();
                    (n, v, address)
                })
            })
            .collect();
        // the call is in the caller's file (or at the use of the macro it is written in)
        let site = self.loc(span);
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
            file: fi,
            ret: None,
            returns: Returns::default(),
            refs: Vec::new(),
            local_refs: Vec::new(),
            template,
            owner: member_of,
            this,
        });
        self.scopes.push(Vec::new());
        let returns_address = match self.next_returns_address {
            Some((at, only_reference))
                if at == span && (f.returns_reference || !only_reference) =>
            {
                self.next_returns_address = None;
                Some(self.frames.len())
            }
            _ => None,
        };
        let address_return = std::mem::replace(&mut self.address_return, returns_address);
        let given = argv.len();
        let places = std::mem::take(&mut self.next_refs);
        let mut written_back: Vec<(Rc<str>, Rc<str>)> = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            let place = places.get(i).cloned().flatten();
            // a `const T&` is bound to its object only where the caller gives one (a struct's
            // `operator=`); elsewhere it is its value. (A `const T*&` is a pointer the callee
            // may set: its `const` is the pointee's.)
            if !p.is_reference || (p.ty.is_const && p.ty.pointer_depth == 0 && place.is_none()) {
                continue;
            }
            if let Some(place) = place {
                if let Some(fr) = self.frames.last_mut() {
                    fr.refs.push((p.name.as_str().into(), place));
                }
            } else if let Some(Some((local, _, _))) = locals.get(i) {
                let param: Rc<str> = p.name.as_str().into();
                written_back.push((param.clone(), local.clone()));
                if let Some(fr) = self.frames.last_mut() {
                    fr.local_refs.push(param);
                }
            }
        }
        // a pointer parameter given a local's address: `*p` is the local, held under the name
        // `*p` while the function runs
        let mut pointees = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            // (a pointer the caller passes as it is, `assemble_R(m, sums, smem_svds)`, is
            // not: its writes are to memory, where writing them to the caller's variable made
            // the pointer `smem_svds` the value stored at `smem_svds[0]`)
            if let (false, 1, Some(Some((local, Some(v), true)))) =
                (p.is_reference, p.ty.pointer_depth, locals.get(i))
            {
                let proxy: Rc<str> = format!("*{}", p.name).into();
                written_back.push((proxy.clone(), local.clone()));
                pointees.push((proxy, v.clone()));
            }
        }
        if let Some(fr) = self.frames.last_mut() {
            fr.local_refs
                .extend(pointees.iter().map(|(proxy, _)| proxy.clone()));
        }
        let restrict_before = self.restrict.len();
        for (p, v) in f.params.iter().zip(argv) {
            let v = match v {
                Val::Ptr(mut ptr) if p.ty.pointer_depth > 0 => {
                    if p.is_restrict && ptr.space == Space::Global {
                        self.restrict.push(ptr.base.clone());
                    }
                    let mut elem = self.resolve_type(&p.ty);
                    elem.pointer_depth -= 1;
                    if !p.dims.is_empty() {
                        // the callee's view of the rows: `float a[][24]`
                        ptr.dims = self.param_dims(p);
                        ptr.elem = elem;
                        ptr.path = None;
                    } else if ptr.dims.is_empty()
                        && !f.template_params.iter().any(|t| t.name == p.ty.name)
                    {
                        ptr.elem = elem;
                    }
                    Val::Ptr(ptr)
                }
                v => v,
            };
            self.declare(&p.name, v);
        }
        for (proxy, v) in pointees {
            self.declare(&proxy, v);
        }
        if let Some(ptr) = this_ptr {
            self.bind_members_in_memory(ptr);
        }
        for (member, v) in this_values {
            self.declare(&member, v);
        }
        // the arguments left out take their defaults (`viewmat_rs = nullptr`), so a branch
        // on them is decided as the compiler decides it
        for p in f.params.iter().skip(given) {
            let v = match &p.default {
                Some(d) => self.pure_rvalue(d),
                None => Val::Unknown(format!("argument `{}` not given", p.name).into()),
            };
            self.declare(&p.name, v);
        }
        // the callee's accesses are filed at its own lines, with this call on their chain
        // (a call written inside a macro is at the macro's use)
        self.call_sites.push(InlineSite {
            loc: site,
            callee: name.to_string(),
        });
        self.active_calls.push(identity);
        let site_override = self.site_override.take();
        // an accessor returning a reference (`T& operator[](int i) { return b_[i]; }`) gives
        // its caller an address: nvcc files the load or store through it at the call
        let accessor = f.returns_reference
            && matches!(
                f.body.as_deref(),
                Some([cudalint_syntax::Stmt::Return(Some(_), _)])
            );
        if accessor {
            self.site_override = Some(site_override.unwrap_or(site));
        }
        let mask = self.mask.clone();
        if let Some(body) = &f.body {
            self.stmts(body);
        }
        self.mask = mask;
        self.site_override = site_override;
        self.address_return = address_return;
        self.call_sites.pop();
        self.active_calls.pop();
        self.restrict.truncate(restrict_before);
        // what the reference parameters hold where the function returns: at its end, or
        // at an early return for the lanes that took it
        let at_end: Vec<Val> = written_back
            .iter()
            .map(|(param, _)| {
                self.lookup_local(param)
                    .cloned()
                    .unwrap_or(Val::Unknown("reference parameter".into()))
            })
            .collect();
        // (in the callee's terms: `T*` of `SyncArray<T>::device_data` with its T; a host
        // function's only: a device function's pointer cudalint cannot follow may be to a
        // local, `reinterpret_cast<io_t*>(val.data)` of a vector in registers)
        let returns_pointer = f
            .returns_pointer
            .as_ref()
            .filter(|_| f.kind == FnKind::Host)
            .map(|t| self.resolve_type(t));
        let Some(mut frame) = self.frames.pop() else {
            return Ok(Val::Unknown(format!("`{name}` returns no value").into()));
        };
        self.scopes.truncate(frame.scope_base);
        let early_locals = std::mem::take(&mut frame.returns.early_locals);
        for (k, ((_, local), last)) in written_back.iter().zip(at_end).enumerate() {
            let v = early_locals
                .iter()
                .rev()
                .fold(last, |rest, (c, vals)| match vals.get(k) {
                    Some(v) => select_val(c.clone(), v.clone(), rest),
                    None => rest,
                });
            self.assign_local(local, v);
        }
        let last = frame
            .ret
            .unwrap_or_else(|| Val::Unknown(format!("`{name}` returns no value").into()));
        // the early returns first: each holds where its condition does
        let v = frame
            .returns
            .early
            .into_iter()
            .rev()
            .fold(last, |rest, (c, v)| select_val(c, v, rest));
        // a pointer the body hands back from somewhere cudalint does not see (thundergbm's
        // `SyncArray<T>::device_data()` returning its buffer's): a pointer to its type still,
        // which a lambda capturing it takes to the kernel as device memory
        Ok(match (v, returns_pointer) {
            (Val::Unknown(reason), Some(ty)) if opaque_result(&reason) => {
                let mut elem = ty;
                elem.pointer_depth -= 1;
                let mut p = super::unknown_pointer(&format!("result of `{name}`"));
                p.elem = elem;
                Val::Ptr(p)
            }
            (v, _) => v,
        })
    }

    /// Whether `f`'s first parameter, a pointer, points to what the first argument points to
    /// (a template parameter takes anything; so does an argument whose type is not known).
    fn takes_pointee(&self, f: &Function, argv: &[Val]) -> bool {
        let (Some(p), Some(Val::Ptr(a))) = (f.params.first(), argv.first()) else {
            return true;
        };
        if p.ty.pointer_depth == 0 || f.template_params.iter().any(|t| t.name == p.ty.name) {
            return true;
        }
        let mut want = p.ty.clone();
        want.pointer_depth -= 1;
        let want = self.resolve_type(&want);
        let have = self.resolve_type(&a.elem);
        // (signedness too: MXNet's `atomicAdd(int64_t*, int64_t)` calls CUDA's on an
        // `unsigned long long*`, not itself)
        let unsigned = |t: &TypeRef| {
            let n = t.name.trim_start_matches("const ");
            n.starts_with("unsigned") || n.starts_with("uint") || n == "size_t"
        };
        match (self.layout_of(&want), self.layout_of(&have)) {
            (Some(w), Some(h)) => {
                w.size == h.size
                    && types::is_integer(&want.name) == types::is_integer(&have.name)
                    && unsigned(&want) == unsigned(&have)
                    && want.pointer_depth == have.pointer_depth
            }
            _ => true,
        }
    }

    /// The template bindings of a called function: for a member function, the struct's
    /// template parameters first, bound to the arguments its type names (`member_of`); then
    /// the function's own, evaluated here in the caller's frame (`g<N>` inside `k<N>` means
    /// the caller's N).
    fn callee_template(
        &mut self,
        f: &Function,
        member_of: Option<&str>,
        targs: &[TemplateArg],
        argv: &[Val],
    ) -> Vec<(Name, TArg)> {
        let mut template = Vec::new();
        let mut own = &f.template_params[..];
        if let (Some(_), Some(full)) = (self.project.owner_of(f), member_of) {
            let count = self.class_param_count(f);
            let binds = self
                .struct_instance(full)
                .map(|(_, b)| b)
                .unwrap_or_default();
            for p in &own[..count] {
                if let Some((_, a)) = binds.iter().find(|(n, _)| *n == p.name) {
                    let arg = self.template_arg_text(a);
                    template.push((p.name.clone(), arg));
                } else if let Some(d) = &p.default {
                    // `Hash<int>` of `template <typename K, int WARP_SIZE = 32> struct Hash`
                    let arg = self.template_arg(d, p.is_type);
                    template.push((p.name.clone(), arg));
                }
            }
            own = &own[count..];
        }
        for (p, a) in own.iter().zip(targs.iter()) {
            let arg = self.template_arg(a, p.is_type);
            template.push((p.name.clone(), arg));
        }
        // type parameters the call does not name, deduced from pointer arguments as the
        // compiler does: `apply(in, out)` with `float* out` for `U* out` binds U = float
        for tp in own.iter().skip(targs.len()).filter(|tp| tp.is_type) {
            let deduced = f.params.iter().zip(argv).find_map(|(p, v)| match v {
                Val::Ptr(ptr) => self.deduced_from(&tp.name, &p.ty, ptr),
                _ => None,
            });
            // else from an integer passed by value (`OffsetT diagonal` given an `int`: gunrock's
            // merge-path search), so `OffsetT(0)` is a cast; an `int`, as a literal would be
            let deduced = deduced.or_else(|| {
                f.params.iter().zip(argv).find_map(|(p, v)| match v {
                    Val::Int(s)
                        if p.ty.name == tp.name && p.ty.pointer_depth == 0 && !s.floating =>
                    {
                        Some(TypeRef::named("int"))
                    }
                    _ => None,
                })
            });
            if let Some(t) = deduced {
                template.push((tp.name.clone(), TArg::Type(t)));
            }
        }
        // a parameter the call leaves to its default (`unsigned warp_size = 32` of qsim's
        // `BlockReduce1<FP1>(...)`), where the default does not name the other parameters
        for tp in own.iter().skip(targs.len()) {
            if template.iter().any(|(n, _)| *n == tp.name) {
                continue;
            }
            let Some(d) = &tp.default else { continue };
            let mut named = std::collections::HashSet::new();
            match d {
                TemplateArg::Expr(e) => super::launch::names_read(e, &mut named, 0),
                TemplateArg::Type(t) => named.extend(
                    t.name
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty()),
                ),
            }
            if f.template_params
                .iter()
                .any(|p| named.contains(p.name.as_str()))
            {
                continue;
            }
            let arg = self.template_arg(d, tp.is_type);
            template.push((tp.name.clone(), arg));
        }
        template
    }

    /// Type parameter `name` as a pointer argument `ptr` passed for a parameter of type
    /// `param` (`name*`, `const name*`, `name**`) makes it: the argument's element type, as the
    /// current frame's template bindings resolve it, without const.
    pub(super) fn deduced_from(&self, name: &str, param: &TypeRef, ptr: &Ptr) -> Option<TypeRef> {
        if param.name != name
            || param.pointer_depth == 0
            || ptr.elem.pointer_depth + 1 < param.pointer_depth
        {
            return None;
        }
        let mut t = self.resolve_type(&ptr.elem);
        t.pointer_depth = t.pointer_depth + 1 - param.pointer_depth;
        t.is_const = false;
        Some(t)
    }

    /// An object declared as a `cuda::barrier` (a local or `__shared__` one, by its type).
    fn is_barrier(&self, e: &Expr) -> bool {
        let ExprKind::Ident(n) = &e.kind else {
            return false;
        };
        let barrier = |t: &str| unqualified(t).starts_with("barrier");
        // a `__shared__ cuda::barrier<...> bar;` is the block's, not a local object
        if let Some(p) = self.shared_scalar(n) {
            return barrier(&p.elem.name);
        }
        self.objects
            .iter()
            .rev()
            .find(|(o, ..)| &**o == n.as_str())
            .is_some_and(|(_, t, _)| barrier(&t.name))
    }

    /// The local object a value stands for (itself, or passed on by reference): its declared
    /// type and its key in `fields`.
    pub(super) fn local_object(&self, v: &Val) -> Option<(TypeRef, usize)> {
        let Val::Unknown(r) = v else {
            return None;
        };
        let name = r
            .strip_suffix(LOCAL_OBJECT)?
            .trim_end()
            .strip_prefix('`')?
            .strip_suffix('`')?;
        self.objects
            .iter()
            .rev()
            .find(|(n, ..)| &**n == name)
            .map(|(_, t, k)| (t.clone(), *k))
    }

    /// The type `ty` names as the struct's instance (`BitonicSort::Warp32<float>`: namespaces
    /// are not modelled, the struct's own name is) and the struct definition's name.
    fn constructed_struct(&mut self, ty: &TypeRef) -> Option<(String, String)> {
        let full = self.instantiate_type(ty).name.to_string();
        if let Some((def, _)) = self.struct_instance(&full) {
            return Some((full, def));
        }
        let bare = unqualified(&full);
        if bare.len() == full.len() {
            return None;
        }
        let bare = bare.to_string();
        let (def, _) = self.struct_instance(&bare)?;
        Some((bare, def))
    }

    /// Whether the struct `ty` names has a constructor of `arity` parameters with a body.
    pub(super) fn has_constructor(&mut self, ty: &TypeRef, arity: usize) -> bool {
        if ty.pointer_depth > 0 {
            return false;
        }
        // most names asked about are no struct's (`sqrtf(x)`, `int n(4)`): the constructors
        // are found by name first, a hash lookup, before any struct is looked for
        // (a template parameter the frame binds to a struct, `R r(p)` with R = Reader, is
        // looked for by that struct's name; a typedef's name is not followed: following one
        // probes every visible file, and this runs for every call nothing else resolves)
        let bound = self.frames.last().and_then(|f| {
            f.template.iter().find_map(|(n, a)| match a {
                TArg::Type(t) if *n == ty.name => Some(t.name.clone()),
                _ => None,
            })
        });
        let name = bound.as_deref().unwrap_or(&ty.name);
        let bare = unqualified(name.split('<').next().unwrap_or(name).trim());
        let named = self.project.device_functions(bare, arity, self.file());
        if !named
            .iter()
            .any(|(_, f)| self.project.owner_of(f).is_some())
        {
            return false;
        }
        let Some((_, def)) = self.constructed_struct(ty) else {
            return false;
        };
        let ctor = unqualified(def.split('<').next().unwrap_or(&def).trim());
        let candidates = if ctor == bare {
            named
        } else {
            self.project.device_functions(ctor, arity, self.file())
        };
        candidates
            .iter()
            .any(|(_, f)| self.project.owner_of(f) == Some(def.as_str()))
    }

    /// Whether `base[i]` is a call of an `operator[]` the program defines: `base` a local
    /// object or a temporary one (`FastBuffer<T> b{p}; b[i]`, `LdgIterator<T>(p)[i]`) of a
    /// struct with one.
    pub(super) fn subscripts_an_object(&mut self, base: &Expr) -> bool {
        let ty = match &base.kind {
            ExprKind::Ident(n) => match self.lookup_local(n) {
                // a struct the kernel is given (xgboost's `common::Span<T> sorted_idx`)
                Some(Val::Aggregate { ty, .. }) => ty.clone(),
                Some(v) => match self.local_object(v) {
                    Some((ty, _)) => ty,
                    None => return false,
                },
                None => return false,
            },
            ExprKind::Call { callee, .. } => TypeRef::named(unqualified(callee)),
            _ => return false,
        };
        let operators = self.project.device_functions("operator[]", 1, self.file());
        if operators.is_empty() {
            return false;
        }
        let Some((_, def)) = self.constructed_struct(&ty) else {
            return false;
        };
        operators
            .iter()
            .any(|(_, f)| self.project.owner_of(f) == Some(def.as_str()))
    }

    /// `base[i]` through the `operator[]` of the object `base` is: what the operator returns
    /// (its accesses at its own lines, as nvcc files them).
    pub(super) fn object_subscript(&mut self, base: &Expr, index: &Expr, span: Span) -> Val {
        let object = self.rvalue(base);
        let i = self.rvalue(index);
        let object = match object {
            Val::Aggregate { name, ty } => self.object_of_aggregate(&name, &ty),
            other => other,
        };
        let Some((ty, key)) = self.local_object(&object) else {
            return Val::Unknown("subscript of an object built by a call".into());
        };
        let ty = match self.constructed_struct(&ty) {
            Some((full, _)) => full,
            None => self.instantiate_type(&ty).name.to_string(),
        };
        self.next_this = Some(key);
        let called = self.device_call(
            &format!("{ty}::operator[]"),
            "operator[]",
            &[],
            vec![i],
            span,
        );
        self.next_this = None;
        called.unwrap_or_else(|_| Val::Unknown(format!("`{ty}::operator[]`").into()))
    }

    /// `base[i]` written where an lvalue goes (`out[j] = v`, `out[j] += v`) through a
    /// `T& operator[]`: the element it returns a reference to.
    pub(super) fn object_subscript_place(
        &mut self,
        base: &Expr,
        index: &Expr,
        span: Span,
    ) -> Option<Place> {
        self.next_returns_address = Some((span, false));
        let v = self.object_subscript(base, index, span);
        self.next_returns_address = None;
        match v {
            Val::Ptr(p) => Some(self.index_ptr(p, sym::konst(0))),
            _ => None,
        }
    }

    /// A struct the kernel is given, as a local object whose members hold what the launch
    /// passed (a pointer member points into global memory): what its member functions run on.
    fn object_of_aggregate(&mut self, name: &str, ty: &TypeRef) -> Val {
        let key = self.objects.len();
        self.objects.push((name.into(), ty.clone(), key));
        for (field, array) in self.member_names(&ty.name) {
            if array {
                continue;
            }
            let v = self.aggregate_member(name, ty, &field);
            self.set_field(key, &field, v);
        }
        Val::Unknown(format!("`{name}` {LOCAL_OBJECT}").into())
    }

    /// `: VectorizedAccessor<const DType, nvec, aligned>(ptr, N)` in a constructor
    /// (TransformerEngine's vectorized loaders): the base's constructor, its arguments bound as
    /// the class's instance binds them, run on the object under construction, so the members
    /// it sets are what the base's member functions read. A member's initialiser names no base
    /// and is left to its assignment.
    fn base_constructor(&mut self, args: &[Expr], span: Span) {
        let Some((
            Expr {
                kind: ExprKind::Ident(written),
                ..
            },
            rest,
        )) = args.split_first()
        else {
            return;
        };
        let Some((Some(key), Some(owner))) =
            self.frames.last().map(|fr| (fr.this, fr.owner.clone()))
        else {
            return;
        };
        let bare = |n: &str| unqualified(n.split('<').next().unwrap_or(n).trim()).to_string();
        let written = bare(written);
        let Some((def, binds)) = self.struct_instance(&owner) else {
            return;
        };
        let base = types::struct_named(&def, self.types()).and_then(|s| {
            s.bases
                .iter()
                .find(|b| bare(&b.name) == written)
                .map(|b| super::names::bind_base(&binds, b))
        });
        if let Some(base) = base {
            let argv = rest.iter().map(|a| self.rvalue(a)).collect();
            self.construct_from(&base, key, argv, span);
        }
    }

    /// The base class of struct `ty` (its template arguments bound) whose definition
    /// `defines` a member function, where `ty`'s own does not: bases first to last, bases of
    /// bases a few deep.
    fn base_defining(&self, ty: &str, defines: impl Fn(&str) -> bool) -> Option<String> {
        let mut ty = ty.to_string();
        for _ in 0..4 {
            let (def, binds) = self.struct_instance(&ty)?;
            let s = types::struct_named(&def, self.types())?;
            let bases: Vec<TypeRef> = s
                .bases
                .iter()
                .map(|b| super::names::bind_base(&binds, b))
                .collect();
            if let Some(b) = bases.iter().find(|b| {
                self.struct_instance(&b.name)
                    .is_some_and(|(d, _)| defines(&d))
            }) {
                return Some(b.name.to_string());
            }
            ty = bases.first()?.name.to_string();
        }
        None
    }

    /// Template arguments as the current frame binds them, written out (`double`, `4`), or
    /// None where one is not known.
    fn template_args_text(&mut self, targs: &[TemplateArg]) -> Option<String> {
        let texts: Option<Vec<String>> = targs
            .iter()
            .map(|a| match a {
                // `get_perm<BlockSize>()`: the grammar cannot tell a name from a type
                TemplateArg::Type(t)
                    if t.pointer_depth == 0 && self.template_value(&t.name).is_some() =>
                {
                    self.template_value(&t.name).map(|v| v.to_string())
                }
                TemplateArg::Type(t) => {
                    let t = self.resolve_type(t);
                    Some(format!(
                        "{}{}",
                        t.name,
                        "*".repeat(t.pointer_depth as usize)
                    ))
                }
                TemplateArg::Expr(e) => match self.pure_rvalue(e) {
                    Val::Int(s) => s.as_const().map(|v| v.to_string()),
                    _ => None,
                },
            })
            .collect();
        Some(texts?.join(", "))
    }

    /// `Scan<Reader, Writer>(n, r, w);`, `Reader(p)`: a temporary object of a struct the
    /// program defines, built by its constructor (whose body may do the work: popsift's
    /// prefix sum runs in one).
    fn temporary_object(
        &mut self,
        name: &str,
        targs: &[TemplateArg],
        argv: &[Val],
        span: Span,
    ) -> Option<Val> {
        if !is_identifier(name) {
            return None;
        }
        let ty = self.instance_type(name, targs)?;
        if !self.has_constructor(&ty, argv.len()) {
            return None;
        }
        let key = self.objects.len();
        let label: Rc<str> = format!("{name}(...)").into();
        self.objects.push((label.clone(), ty.clone(), key));
        // (the call evaluated the arguments already: evaluating them again for the
        // constructor doubled the work at each temporary nested in another's arguments)
        self.construct_from(&ty, key, argv.to_vec(), span);
        Some(Val::Unknown(format!("`{label}` {LOCAL_OBJECT}").into()))
    }

    /// `Name<args>` as a type: the template arguments written out (`None` where one cannot be).
    fn instance_type(&mut self, name: &str, targs: &[TemplateArg]) -> Option<TypeRef> {
        if targs.is_empty() {
            return Some(TypeRef::named(name));
        }
        let args = self.template_args_text(targs)?;
        Some(TypeRef::named(&format!("{name}<{args}>")))
    }

    /// `Scale{out}` of a struct with no constructor: its members set from the braces in the
    /// order they are declared, the items' accesses made where they are written.
    fn temporary_aggregate(
        &mut self,
        name: &str,
        targs: &[TemplateArg],
        args: &[Expr],
        span: Span,
    ) -> Option<Val> {
        if !is_identifier(name) || args.is_empty() {
            return None;
        }
        let ty = self.instance_type(name, targs)?;
        if self.has_constructor(&ty, args.len()) || self.constructed_struct(&ty).is_none() {
            return None;
        }
        for a in args {
            self.rvalue(a);
        }
        let key = self.objects.len();
        let label: Rc<str> = format!("{name}{{...}}").into();
        self.objects.push((label.clone(), ty.clone(), key));
        self.construct(&ty, key, args, span);
        Some(Val::Unknown(format!("`{label}` {LOCAL_OBJECT}").into()))
    }

    /// `S s(a, b);`, `S s;`: the struct's constructor of that many arguments, inlined on the
    /// new object, so the members it sets are what its member functions read.
    pub(super) fn construct(&mut self, ty: &TypeRef, key: usize, args: &[Expr], span: Span) {
        if ty.name == super::names::LAUNCH_CONFIG {
            // `cudaLaunchConfig_t cfg = {grid, block, smem, stream, attrs, n}`: its members
            // in the CUDA runtime's order
            let members = ["gridDim", "blockDim", "dynamicSmemBytes", "stream"];
            for (name, a) in members.iter().zip(args) {
                let v = self.pure_rvalue(a);
                self.set_field(key, name, v);
            }
            return;
        }
        let Some(found) = self.constructed_struct(ty) else {
            return;
        };
        // the declaration evaluated the arguments already, accesses and all
        let argv: Vec<Val> = args.iter().map(|a| self.pure_rvalue(a)).collect();
        if !argv.is_empty() && !self.has_constructor(ty, argv.len()) {
            // an aggregate (`Strides s = {1, 32};`): its members in the order they are declared
            let members: Option<Vec<Name>> = self
                .types()
                .iter()
                .flat_map(|f| f.structs.iter())
                .find(|s| s.name == found.1)
                .map(|s| s.fields.iter().map(|f| f.name.clone()).collect());
            if let Some(members) = members.filter(|m| m.len() >= argv.len()) {
                for (name, v) in members.iter().zip(argv) {
                    self.set_field(key, name, v);
                }
                return;
            }
        }
        // an object in memory given to a reference parameter (CUB's `Agent(TempStorage&
        // temp_storage, ...)`): the parameter names it, nothing is loaded
        let (n, held) = (self.accesses.len(), self.in_registers.len());
        let refs = self.argument_places(&ty.name, args);
        self.accesses.truncate(n);
        self.in_registers.truncate(held);
        self.next_refs = refs;
        self.call_constructor(found, key, argv, span);
        self.next_refs.clear();
    }

    /// [`Self::construct`] with the arguments' values.
    fn construct_from(&mut self, ty: &TypeRef, key: usize, argv: Vec<Val>, span: Span) {
        if let Some(found) = self.constructed_struct(ty) {
            self.call_constructor(found, key, argv, span);
        }
    }

    /// The constructor of struct `def` (instance `full`), inlined on object `key`.
    fn call_constructor(
        &mut self,
        (full, def): (String, String),
        key: usize,
        argv: Vec<Val>,
        span: Span,
    ) {
        let ctor = unqualified(def.split('<').next().unwrap_or(&def).trim()).to_string();
        self.next_this = Some(key);
        let _ = self.device_call(&format!("{full}::{ctor}"), &ctor, &[], argv, span);
        self.next_this = None;
    }

    /// `object.method(args)` or `object->method(args)` where the object is a struct (or a
    /// pointer to one) of a type the program defines: the struct's member function, inlined as
    /// a call qualified by that type, on that object: the members it reads and sets are the
    /// object's (a struct parameter's stay unknown).
    fn member_call(
        &mut self,
        name: &str,
        targs: &[TemplateArg],
        argv: Vec<Val>,
        span: Span,
    ) -> Result<Val, Vec<Val>> {
        let split = name
            .rsplit_once("->")
            .or_else(|| name.rsplit_once('.'))
            .filter(|(object, method)| {
                (is_identifier(method) || *method == "operator()")
                    && object.split('.').all(|p| is_identifier(p.trim()))
            });
        let Some((object, method)) = split else {
            return Err(argv);
        };
        let object = object.trim();
        // `node.num_points()` on a local reference to memory: the object is there
        let value = match self.reference_place(object) {
            Some(place) if self.lookup_local(object).is_none() => Val::Ptr(place.ptr),
            _ => self.lookup(object, span),
        };
        // `p.d_hist.lane(i)`: a member of a struct value is a struct value too
        let value = match value {
            Val::Unknown(_) if object.contains('.') => {
                let mut parts = object.split('.').map(str::trim);
                let first = Expr {
                    kind: ExprKind::Ident(parts.next().unwrap_or_default().into()),
                    span,
                };
                let path = parts.fold(first, |base, field| Expr {
                    kind: ExprKind::Field {
                        base: Box::new(base),
                        field: field.into(),
                        arrow: false,
                    },
                    span,
                });
                match self.pure_rvalue(&path) {
                    v @ Val::Aggregate { .. } => v,
                    _ => value,
                }
            }
            v => v,
        };
        // `acc.data()` on a `std::array` local: the array itself
        if let Val::Ptr(p) = &value {
            if p.space == Space::Local && p.decl.is_some() && matches!(method, "data" | "begin") {
                return Ok(value);
            }
        }
        let mut this = None;
        let mut this_ptr = None;
        let mut members = None;
        let ty = match value {
            Val::Aggregate { name, ty } if ty.pointer_depth == 0 => {
                members = Some((name, ty.clone()));
                ty.name
            }
            Val::Ptr(p) if p.elem.pointer_depth == 0 => {
                let name = p.elem.name.clone();
                if matches!(p.space, Space::Global | Space::Shared) {
                    this_ptr = Some(p);
                }
                name
            }
            v => match self.local_object(&v) {
                Some((ty, key)) => {
                    this = Some(key);
                    ty.name
                }
                None => return Err(argv),
            },
        };
        // `SharedMemory<U>` in a template the call bound U = float for
        let Some((ty, _)) = self.constructed_struct(&TypeRef::named(&ty)) else {
            return Err(argv);
        };
        // (the members of the struct as found: `hashtable32::device_view` is `device_view`)
        let members = members.map(|(name, _)| (name, TypeRef::named(&ty)));
        let qualified = format!("{ty}::{method}");
        // a struct passed by value (`cst_dev_params.d_main_q_info.lane(ilane)`, a member of a
        // kernel's parameter): its members are values the launch fixes, named by their path
        self.next_this_values = members
            .map(|(name, ty)| {
                self.member_names(&ty.name)
                    .into_iter()
                    .map(|(f, _)| {
                        let v = self.aggregate_member(&name, &ty, &f);
                        (f, v)
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.next_this = this;
        self.next_this_ptr = this_ptr;
        let called = self.device_call(&qualified, method, targs, argv, span);
        self.next_this = None;
        self.next_this_ptr = None;
        self.next_this_values.clear();
        called
    }

    /// `*best = *candidate` on objects in memory of a struct with its own `operator=`
    /// (LightGBM's `CUDASplitInfo`): the operator, called on the object the left side is with
    /// the right side's object as its `const T&` argument, copies member by member, each at
    /// its own width and line, as nvcc compiles it; not one copy of the whole struct.
    pub(super) fn assign_by_operator(&mut self, lhs: &Expr, rhs: &Expr, span: Span) -> Option<Val> {
        let in_memory =
            |p: &Place| !p.subarray && matches!(p.ptr.space, Space::Global | Space::Shared);
        // every plain assignment comes here: the left side's place is worked out only where
        // the program defines an `operator=` at all
        let operators = self.project.device_functions("operator=", 1, self.file());
        if operators.is_empty() {
            return None;
        }
        // looked at without recording anything, nor counting a call in the left side
        // (`dst[atomicAggInc(nres)] = src[i]`) as one that may write memory: that made the
        // `src[i]` nvcc keeps in a register a load again
        let (n, held, clobbers) = (
            self.accesses.len(),
            self.in_registers.clone(),
            self.clobbers,
        );
        let target = self.place(lhs);
        self.accesses.truncate(n);
        self.in_registers = held;
        self.clobbers = clobbers;
        let target = target.filter(|p| in_memory(p) && p.ty.pointer_depth == 0)?;
        let ty = self.instantiate_type(&target.ty).name;
        let (def, _) = self.struct_instance(&ty)?;
        let qualified = format!("{def}::operator=");
        if !operators.iter().any(|(_, f)| f.name == qualified) {
            return None;
        }
        let target = self.place(lhs)?;
        let source = self.place(rhs).filter(in_memory);
        let argv = vec![match &source {
            Some(p) => self.loaded_value(p),
            None => self.rvalue(rhs),
        }];
        self.next_refs = vec![source];
        self.next_this_ptr = Some(target.ptr);
        let called = self.device_call(&qualified, "operator=", &[], argv, span);
        self.next_refs.clear();
        self.next_this_ptr = None;
        called.ok()
    }

    /// In a member function called on an object in global or shared memory: `this` points
    /// there, and each member's name is its place in the object (`m_begin` in
    /// `points_begin()` is a load of the node's member where the function reads it; an array
    /// member is a pointer to its elements).
    fn bind_members_in_memory(&mut self, ptr: Ptr) {
        // members of a struct whose layout is not known (a template's instance) have no place
        if self.layout_of(&ptr.elem).is_none() {
            return;
        }
        let fields = self.member_names(&ptr.elem.name);
        let object = self.index_ptr(ptr.clone(), sym::konst(0));
        self.declare("this", Val::Ptr(ptr));
        for (field, _) in fields {
            let place = self.member_place(object.clone(), &field);
            if place.subarray {
                self.declare(&field, Val::Ptr(place.ptr));
            } else if let Some(frame) = self.frames.last_mut() {
                frame.refs.push((field.as_str().into(), place));
            }
        }
    }

    /// `boxes.size(0)`, `acc.stride(1)` on a kernel's object parameter whose class cudalint
    /// does not see (PyTorch's `PackedTensorAccessor64`): given constants, a value the launch
    /// fixes, one for the whole grid, as a scalar parameter is.
    fn parameter_method(&mut self, name: &str, argv: &[Val]) -> Option<Val> {
        let (object, method) = name.rsplit_once('.')?;
        if !is_identifier(object) || !is_identifier(method) {
            return None;
        }
        let uniform = match self.lookup(object, Span::default()) {
            Val::Aggregate { .. } => true,
            Val::Ptr(p) => !p.offset.lane_varying && !p.offset.data && p.space == Space::Global,
            _ => false,
        };
        let consts: Option<Vec<String>> = argv
            .iter()
            .map(|v| match v {
                Val::Int(s) => s.as_const().map(|c| c.to_string()),
                _ => None,
            })
            .collect();
        let consts = consts?;
        uniform.then(|| Val::Int(self.runtime_var(&format!("{name}({})", consts.join(", ")), None)))
    }

    /// `SharedMemory<T>()`: an object whose conversion operator hands out the block's dynamic
    /// shared memory (cuda-samples' reductions).
    fn shared_memory_object(&mut self, callee: &str, targs: &[TemplateArg]) -> Option<Ptr> {
        let bare = callee.split('<').next().unwrap_or(callee).trim();
        let array = self.types().iter().find_map(|f| {
            f.structs
                .iter()
                .find(|s| s.name == bare)
                .and_then(|s| s.extern_shared.clone())
        })?;
        let elem = match targs.first() {
            Some(TemplateArg::Type(t)) => self.resolve_type(t),
            _ => TypeRef::named("int"),
        };
        Some(Ptr {
            space: Space::Shared,
            base: array.as_str().into(),
            offset: sym::konst(0),
            elem,
            dims: Rc::from(Vec::new()),
            decl: None,
            path: None,
        })
    }
}

/// Values built from the arguments alone: `make_uint4(a, b, c, d)` is a vector held
/// component by component; texture and surface reads are values from memory, fetched through
/// the texture path.
fn value_builtin(name: &str, argv: &[Val]) -> Option<Val> {
    if let Some(w) = name.strip_prefix("make_").and_then(types::vector_width) {
        if argv.len() == w && w > 1 {
            return Some(Val::Vector(
                argv.iter().map(Val::sym).collect::<Vec<_>>().into(),
            ));
        }
    }
    const TEXTURE_READS: [&str; 7] = [
        "tex1D",
        "tex2D",
        "tex3D",
        "texCubemap",
        "surf1Dread",
        "surf2Dread",
        "surf3Dread",
    ];
    TEXTURE_READS
        .iter()
        .any(|p| name.starts_with(p))
        .then(|| Val::Int(sym::data(format!("value fetched by `{name}`"))))
}

/// CUDA's integer intrinsics that compute their result from their arguments alone.
/// Functions that round a floating-point value to an integral one.
/// Said on a compare-and-swap atomic: what nvcc makes of it and what ncu counts.
const CAS_NOTE: &str = "sm_90 has no shared-memory instruction for this atomic: nvcc makes it a compare-and-swap loop, an `LDS` of the word then `ATOMS.CAST.SPIN`, which ncu counts at 2 wavefronts per request for 4 bytes (4 for 8) whatever the banks, and which runs again for every lane another lane beat to the word";

const ROUNDING: &[&str] = &[
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "trunc",
    "truncf",
    "round",
    "roundf",
    "rint",
    "rintf",
    "nearbyint",
    "nearbyintf",
    "lrint",
    "lrintf",
    "lround",
    "lroundf",
    "llrint",
    "llrintf",
    "llround",
    "llroundf",
    "__float2int_rd",
    "__float2int_rn",
    "__float2int_ru",
    "__float2int_rz",
    "__float2uint_rd",
    "__float2uint_rn",
    "__float2uint_ru",
    "__float2uint_rz",
    "__double2int_rd",
    "__double2int_rn",
    "__double2int_ru",
    "__double2int_rz",
    "__float2ll_rd",
    "__float2ll_rn",
    "__float2ll_ru",
    "__float2ll_rz",
];

const PURE_INTRINSICS: &[&str] = &[
    "__byte_perm",
    "__funnelshift_l",
    "__funnelshift_lc",
    "__funnelshift_r",
    "__funnelshift_rc",
    "__umulhi",
    "__mulhi",
    "__umul64hi",
    "__mul64hi",
    "__sad",
    "__usad",
    "__dp4a",
    "__dp2a_lo",
    "__dp2a_hi",
];

impl KernelRun<'_> {
    /// `__umulhi(n, m)`, the high word of a lane's index times a multiplier: exact where the
    /// multiplier is a constant; where the launch fixes it (the magic number of a division
    /// by a runtime divisor, MNN's `DivModFast`, PyTorch's `IntDivider`, cutlass's
    /// `FastDivmod`) a function of `n`, remembered so the shift that follows reads as the
    /// quotient it is (`expr::fast_quotient`).
    fn high_product(&mut self, name: &str, argv: &[Val]) -> Option<Val> {
        if !matches!(name, "__umulhi" | "__mulhi") {
            return None;
        }
        let [Val::Int(a), Val::Int(b)] = argv else {
            return None;
        };
        let plain = |s: &Sym| !s.data && !s.floating;
        let (n, m) = match (a.lane_varying, b.lane_varying) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => return None,
        };
        if !plain(n) || !plain(m) {
            return None;
        }
        if let Some(k) = m.as_const() {
            // (a 32-bit index times a 32-bit multiplier fits in i64)
            return (0..1 << 32).contains(&k).then(|| {
                Val::Int(sym::binop(
                    BinOp::Shr,
                    sym::mul(n.clone(), sym::konst(k)),
                    sym::konst(32),
                ))
            });
        }
        let v = function_of(name, argv, true);
        if let Val::Int(r) = &v {
            self.fast_products.push((r.clone(), n.clone(), m.clone()));
        }
        Some(v)
    }
}

/// `__byte_perm(x, y, s)` and the funnel shifts with a known selector or shift, as the
/// shifts and masks they are (`__byte_perm(x, 0, 0x4440)` is `x & 0xff`); `None` otherwise,
/// or where the result is too large an expression to evaluate.
fn exact_intrinsic(name: &str, argv: &[Val]) -> Option<Val> {
    let [Val::Int(x), Val::Int(y), Val::Int(sel)] = argv else {
        return None;
    };
    let sel = sel.as_const()?;
    let k = sym::konst;
    let word = |s: &Sym| sym::binop(BinOp::BitAnd, s.clone(), k(0xffff_ffff));
    let result = match name {
        "__byte_perm" => {
            let byte = |i: i64| {
                let src = if i < 4 { x } else { y };
                let shifted = sym::binop(BinOp::Shr, word(src), k(8 * (i % 4)));
                sym::binop(BinOp::BitAnd, shifted, k(0xff))
            };
            (0..4).fold(k(0), |acc, out| {
                let from = (sel >> (4 * out)) & 7;
                if from >= 4 && y.as_const() == Some(0) {
                    return acc;
                }
                let placed = sym::binop(BinOp::Shl, byte(from), k(8 * out));
                sym::binop(BinOp::BitOr, acc, placed)
            })
        }
        "__funnelshift_l" | "__funnelshift_lc" | "__funnelshift_r" | "__funnelshift_rc" => {
            let s = if name.ends_with('c') {
                sel.clamp(0, 32)
            } else {
                sel & 31
            };
            let (lo, hi) = (word(x), word(y));
            let left = name.starts_with("__funnelshift_l");
            let v = match (left, s) {
                (true, 0) | (false, 32) => hi,
                (true, 32) | (false, 0) => lo,
                (true, s) => sym::binop(
                    BinOp::BitOr,
                    sym::binop(BinOp::Shl, hi, k(s)),
                    sym::binop(BinOp::Shr, lo, k(32 - s)),
                ),
                (false, s) => sym::binop(
                    BinOp::BitOr,
                    sym::binop(BinOp::Shr, lo, k(s)),
                    sym::binop(BinOp::Shl, hi, k(32 - s)),
                ),
            };
            word(&v)
        }
        _ => return None,
    };
    result
        .unknown_reason()
        .is_none()
        .then_some(Val::Int(result))
}

/// What a call cudalint cannot see into returns, as a function of its integer arguments
/// (never an address a later access could find held in a register): where a lane's
/// arguments come from memory (`__byte_perm(x, 0, 0x4440)` on a hash's state), or vary
/// by lane and the function is `pure` (no memory behind it), what a value loaded at an
/// address made of the arguments is: lanes given the same arguments get the same result,
/// different arguments unrelated results (a gather at worst). Unknown otherwise.
pub(super) fn function_of(name: &str, argv: &[Val], pure: bool) -> Val {
    let unknown = || Val::Unknown(format!("result of `{name}`").into());
    let ints: Vec<&Sym> = argv
        .iter()
        .filter_map(|v| match v {
            Val::Int(s) => Some(s),
            _ => None,
        })
        .collect();
    if ints.is_empty() || ints.len() != argv.len() {
        return unknown();
    }
    let data = ints.iter().any(|s| s.data);
    let varying = ints.iter().any(|s| s.lane_varying);
    if !(data || pure) {
        return unknown();
    }
    // what made an argument unknown says more than the call does
    if let Some(r) = ints.iter().find_map(|s| s.unknown_reason()) {
        return Val::Unknown(r);
    }
    // (a math function of a floating-point value is another: `fabsf(w[i])` of a value
    // every lane read at one address is the same in every lane)
    let what = if ints.iter().any(|s| s.floating) {
        sym::FLOATING.to_string()
    } else {
        format!("result of `{name}`")
    };
    let salt = name.bytes().fold(0x517c_c1b7_2722_0a95_i64, |h, c| {
        h.rotate_left(5) ^ i64::from(c)
    });
    let size: u32 = ints.iter().map(|s| s.size).sum();
    if size > sym::MAX_SYM_SIZE / 2 {
        return if varying {
            Val::Int(sym::data(what))
        } else {
            Val::Unknown(what.into())
        };
    }
    let key = ints.iter().enumerate().fold(sym::konst(salt), |k, (i, s)| {
        let shifted = sym::binop(BinOp::Shl, (*s).clone(), sym::konst(13 * i as i64));
        sym::binop(BinOp::BitXor, k, shifted)
    });
    Val::Int(sym::loaded(key, what))
}

pub(super) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `f` of `ns::f`, `tiled_partition<ns::warp_size>` of `cg::tiled_partition<ns::warp_size>`:
/// the last name, `::` inside template arguments not counted.
pub(super) fn unqualified(callee: &str) -> &str {
    let b = callee.as_bytes();
    let mut depth = 0i32;
    let mut start = 0;
    for i in 0..b.len() {
        match b[i] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    &callee[start.min(callee.len())..]
}

/// The overload whose pointer parameters best match the arguments' element types (template
/// type parameters match anything), not a template whose arguments a call without any could
/// not deduce; the nearest definition on a tie.
fn pick_overload<'a>(
    candidates: &[(usize, &'a Function)],
    args: &[Val],
    arg_types: &[Option<TypeRef>],
    no_template_args: bool,
) -> Option<(usize, &'a Function)> {
    // a built-in type the argument is declared with against the parameter's (ppl.cv's
    // `mulAdd(float4&, float4&, float4&)` and `mulAdd(float4&, float4&, float)`): a scalar
    // converts to another scalar, not to or from a vector
    let builtin_match = |p: &TypeRef, a: &TypeRef| -> i32 {
        let name = |t: &TypeRef| {
            let n = t.name.trim_start_matches("const ").trim();
            types::builtin(n).map(|_| n.to_string())
        };
        let (Some(pn), Some(an)) = (name(p), name(a)) else {
            return 0;
        };
        let scalar = |n: &str| !n.ends_with(|c: char| c.is_ascii_digit());
        if p.pointer_depth != a.pointer_depth {
            0
        } else if pn == an {
            2
        } else if scalar(&pn) && scalar(&an) {
            0
        } else {
            -3
        }
    };
    let score = |f: &Function| -> i32 {
        let mut s = 0;
        // `global_thread_id()` is not `template <int N> global_thread_id()`: N could not be
        // deduced
        let undeducible = f
            .template_params
            .iter()
            .any(|t| !f.params.iter().any(|p| p.ty.name.contains(t.name.as_str())));
        if no_template_args && undeducible {
            s -= 5;
        }
        for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
            let generic = f.template_params.iter().any(|t| t.name == p.ty.name);
            if let (false, Some(Some(at))) = (generic, arg_types.get(k)) {
                s += builtin_match(&p.ty, at);
            }
            // (a value's lanes where its declaration is not at hand: a local `float4`)
            let lanes = |t: &TypeRef| {
                let n = t.name.trim_start_matches("const ").trim();
                (t.pointer_depth == 0 && types::builtin(n).is_some())
                    .then(|| n.ends_with(|c: char| c.is_ascii_digit()))
            };
            match (generic, lanes(&p.ty), a) {
                (false, Some(true), Val::Int(_)) | (false, Some(false), Val::Vector(_)) => s -= 3,
                _ => {}
            }
            match (p.ty.pointer_depth > 0, a) {
                (true, Val::Ptr(ptr)) if generic || ptr.elem.name == p.ty.name => s += 2,
                (true, Val::Ptr(_)) => s -= 3,
                (true, Val::Int(_)) | (false, Val::Ptr(_)) => s -= 3,
                _ => {}
            }
        }
        s
    };
    let mut best: Option<((usize, &'a Function), i32)> = None;
    for &c in candidates {
        let sc = score(c.1);
        if best.as_ref().is_none_or(|(_, b)| sc > *b) {
            best = Some((c, sc));
        }
    }
    best.map(|(c, _)| c)
}

/// CUDA's memory intrinsics: `atomicAdd` and its family (an `atomic` followed by a capital:
/// `atomic_add` is a program's own function), the cache-hint loads and stores.
fn memory_intrinsic(name: &str) -> Option<AccessOp> {
    let atomic = name
        .strip_prefix("atomic")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()));
    if atomic {
        return Some(AccessOp::Atomic);
    }
    match name {
        "__ldg" | "__ldcs" | "__ldcg" | "__ldca" | "__ldlu" | "__ldcv" => Some(AccessOp::Load),
        "__stcs" | "__stcg" | "__stwb" | "__stwt" => Some(AccessOp::Store),
        // CUDA 12.8's scoped atomics (`__nv_atomic_load_n(p, __NV_ATOMIC_RELAXED)`)
        "__nv_atomic_load_n" | "__nv_atomic_load" => Some(AccessOp::Load),
        "__nv_atomic_store_n" | "__nv_atomic_store" => Some(AccessOp::Store),
        n if n.starts_with("__nv_atomic_") => Some(AccessOp::Atomic),
        _ => None,
    }
}

/// `c ? a : b` of two values: per lane for numbers, and for pointers into the same array.
pub(super) fn select_val(c: Sym, a: Val, b: Val) -> Val {
    if let Some(p) = super::pointer_or_null(&a, &b) {
        return p.clone();
    }
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Val::Int(sym::select(c, x, y)),
        // a vector value (`int4& tcOut` set whole on one path, member by member on another)
        (Val::Vector(x), Val::Vector(y)) if x.len() == y.len() => Val::Vector(
            x.iter()
                .zip(y.iter())
                .map(|(a, b)| sym::select(c.clone(), a.clone(), b.clone()))
                .collect(),
        ),
        (Val::Ptr(p), Val::Ptr(q)) if p.space == q.space => match super::either_ptr(c, p, q) {
            Some(p) => Val::Ptr(p),
            None => Val::Unknown("a value that differs between a function's returns".into()),
        },
        // a function that returns no value on its last path (`void`, or falls off the end)
        (a, Val::Unknown(r)) if &*r == "void" || r.ends_with("returns no value") => a,
        (Val::Unknown(r), _) | (_, Val::Unknown(r)) => Val::Unknown(r),
        _ => Val::Unknown("a value that differs between a function's returns".into()),
    }
}

/// Whether a function's unknown result is a value it could not be followed to (a call it
/// makes, a member it reads), not one that went wrong (a division by zero).
fn opaque_result(reason: &str) -> bool {
    reason.starts_with("result of")
        || reason.starts_with("member ")
        || reason.starts_with("value loaded")
        || reason.ends_with("is not defined in the analysed files")
}
