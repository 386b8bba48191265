//! Evaluating a launch site `k<<<grid, block>>>(args)` in its host function: the block and
//! grid shapes, template arguments (given or deduced from pointer arguments) and constant
//! arguments, which `run_kernel` then binds.

use super::names::split_template;
use super::{Bindings, Frame, KernelRun, Ptr, Returns, TArg, Val};
use crate::types;
use cudalint_syntax::{BinOp, Expr, ExprKind, FnKind, Function, Name, Span, Stmt, TemplateArg};

/// Calls of a templated host function looked at for its instantiations.
const MAX_HOST_CALLS: usize = 8;

/// A host function this long (bytes of source) is not replayed for the state it leaves the
/// objects it is given by reference in (see [`KernelRun::long_host_call`]): a setup function
/// that fills a launch's configuration is a few lines; 8 KB is some 250 lines.
const LONG_HOST_FUNCTION: u32 = 8 * 1024;

/// Distinct lambdas a launching wrapper's callers pass that are each evaluated (the calls of
/// the wrapper looked at, too): xgboost's `dh::LaunchN` has about 50 in its `src/`.
const MAX_LAMBDA_VARIANTS: usize = 64;

/// What a launch site pins down, evaluated in its host function.
#[derive(Clone, Debug, Default)]
pub struct LaunchValues {
    pub block: Option<[i64; 3]>,
    pub grid: Option<[i64; 3]>,
    /// A block made of runtime values: the components that are known (`dim3 b(t, t)` is two
    /// unknown, `dim3 b(32, t)` one), so an assumed size can take the launch's shape.
    pub block_form: Option<[Option<i64>; 3]>,
    pub bindings: Bindings,
}

/// A block of `threads` threads shaped as a launch's `form`: its unknown components share
/// what the known ones leave, as equal powers of two (`dim3(t, t)` with 256 threads is
/// (16, 16, 1); `dim3(t, 4)` is (64, 4, 1)).
pub fn block_of_form(form: [Option<i64>; 3], threads: i64) -> Option<[i64; 3]> {
    let known: i64 = form.iter().flatten().product();
    let unknown = form.iter().filter(|c| c.is_none()).count() as u32;
    if known <= 0 {
        return None;
    }
    // (a shape known at its bounds: `min(ne0, 128)`)
    if unknown == 0 {
        return Some(form.map(|c| c.unwrap_or(1)));
    }
    let share = (threads / known).max(1);
    let mut each = 1i64;
    while (each * 2).pow(unknown) <= share {
        each *= 2;
    }
    Some(form.map(|c| c.unwrap_or(each)))
}

impl KernelRun<'_> {
    /// Evaluates a launch once per instantiation of its host function: a templated host
    /// wrapper (`template <class K, class T> void sort(K* keys, T* vals)`) launches with the
    /// types each of its calls deduces; any other launch once.
    pub fn eval_launch_all(
        &mut self,
        file: usize,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
    ) -> Vec<LaunchValues> {
        // a wrapper given a different lambda by each caller launches once for each
        self.lambda_variant = 0;
        self.lambda_variants = 0;
        let mut all = self.eval_launch_instances(file, launch, kernel);
        for k in 1..self.lambda_variants.min(MAX_LAMBDA_VARIANTS) {
            self.lambda_variant = k;
            all.extend(self.eval_launch_instances(file, launch, kernel));
        }
        self.lambda_variant = 0;
        all
    }

    /// [`Self::eval_launch_all`] for the current lambda variant.
    fn eval_launch_instances(
        &mut self,
        file: usize,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
    ) -> Vec<LaunchValues> {
        let host = launch
            .host_fn
            .and_then(|i| self.files[file].functions.get(i))
            .filter(|h| !h.template_params.is_empty());
        let instantiations = host
            .map(|h| self.host_instantiations(h))
            .unwrap_or_default();
        if instantiations.is_empty() {
            return vec![self.eval_launch(file, launch, kernel)];
        }
        instantiations
            .into_iter()
            .map(|t| self.eval_launch_in(file, launch, kernel, t))
            .collect()
    }

    /// The template arguments a templated host function is called with in host code: given
    /// (`sort<int, float>(...)`) or deduced from pointer arguments, each call's evaluated in
    /// its caller's scope (itself instantiated the same way when it is a template too, up to
    /// a few levels: `main` -> `bb_segsort` -> `bb_segsort_run`). Distinct ones only.
    fn host_instantiations(&mut self, host: &Function) -> Vec<Vec<(Name, TArg)>> {
        self.instantiations_at(host, 0)
    }

    fn instantiations_at(&mut self, host: &Function, depth: usize) -> Vec<Vec<(Name, TArg)>> {
        const MAX_DEPTH: usize = 3;
        let mut out: Vec<Vec<(Name, TArg)>> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let calls = self.project.host_calls_of(&host.name);
        for (cfile, caller, call) in calls.into_iter().take(MAX_HOST_CALLS) {
            let ExprKind::Call {
                template_args,
                args,
                ..
            } = &call.kind
            else {
                continue;
            };
            if !host.takes(args.len()) || std::ptr::eq(caller, host) {
                continue;
            }
            let outer = if caller.template_params.is_empty() || depth >= MAX_DEPTH {
                vec![Vec::new()]
            } else {
                let mut o = self.instantiations_at(caller, depth + 1);
                if o.is_empty() {
                    o.push(Vec::new());
                }
                o
            };
            for caller_template in outer {
                let template = self.call_template(
                    host,
                    (cfile, caller, call),
                    template_args,
                    args,
                    caller_template,
                );
                push_distinct(&mut out, &mut seen, template);
            }
        }
        // what the template is explicitly instantiated with (`template void
        // scan_cuda<float, float>(Params &, cudaStream_t);`, its callers in code not analysed)
        for (ifile, inst) in self.project.instantiations_of(&host.name) {
            if inst.template_args.len() > host.template_params.len() || out.len() >= MAX_HOST_CALLS
            {
                continue;
            }
            let base = self.enter_host_caller(ifile, Vec::new());
            let mut template = Vec::new();
            for (a, tp) in inst.template_args.iter().zip(&host.template_params) {
                let arg = self.template_arg(a, tp.is_type);
                template.push((tp.name.clone(), arg));
            }
            self.scopes.truncate(base);
            self.frames.pop();
            push_distinct(&mut out, &mut seen, template);
        }
        out
    }

    /// A frame and scope for evaluating a call's arguments in its (host) caller, in `file`,
    /// with the caller's template parameters bound to `template`; the scope depth to truncate
    /// back to.
    fn enter_host_caller(&mut self, file: usize, template: Vec<(Name, TArg)>) -> usize {
        let base = self.scopes.len();
        self.frames.push(Frame {
            scope_base: base,
            file,
            ret: None,
            returns: Returns::default(),
            refs: Vec::new(),
            local_refs: Vec::new(),
            template,
            owner: None,
            this: None,
        });
        self.scopes.push(Vec::new());
        base
    }

    /// The template arguments of one call of `host`, evaluated in its caller's scope (the
    /// caller's own template parameters bound to `caller_template`).
    fn call_template(
        &mut self,
        host: &Function,
        (cfile, caller, call): (usize, &Function, &Expr),
        template_args: &[TemplateArg],
        args: &[Expr],
        caller_template: Vec<(Name, TArg)>,
    ) -> Vec<(Name, TArg)> {
        let base = self.enter_host_caller(cfile, caller_template);
        let mut needed = std::collections::HashSet::new();
        for a in args {
            names_read(a, &mut needed, 0);
        }
        for t in template_args {
            template_arg_names(t, &mut needed);
        }
        self.host_scope(caller, call.span.start, needed, 0);
        let template_args = self.expand_template_args(template_args).into_owned();
        let mut template = Vec::new();
        // a member function's own parameters follow its class's, which the call's template
        // arguments do not name (`Reduce<double, double, Op>(...)` in `StateSpaceCUDA<FP>`)
        let class_params = self.class_param_count(host);
        for (i, tp) in host.template_params.iter().enumerate().skip(class_params) {
            if let Some(a) = template_args.get(i - class_params) {
                let arg = self.template_arg(a, tp.is_type);
                template.push((tp.name.clone(), arg));
                continue;
            }
            let deduced = tp
                .is_type
                .then(|| self.deduce_from_pointers(&tp.name, &host.params, args))
                .flatten();
            if let Some(t) = deduced {
                template.push((tp.name.clone(), TArg::Type(t)));
            } else if let Some(d) = &tp.default {
                // `template <int ITEMS_PER_THREAD = 8, int BLOCK_THREADS = 256, typename L>
                // void LaunchN(size_t n, L lambda)` called as `LaunchN(n, [=] ...)`
                let arg = self.template_arg(d, tp.is_type);
                template.push((tp.name.clone(), arg));
            }
        }
        self.scopes.truncate(base);
        self.frames.pop();
        template
    }

    /// Evaluates a launch's configuration and arguments with the host function's earlier
    /// declarations in scope.
    pub fn eval_launch(
        &mut self,
        file: usize,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
    ) -> LaunchValues {
        self.eval_launch_in(file, launch, kernel, Vec::new())
    }

    /// [`Self::eval_launch`] with the host function's template parameters bound.
    fn eval_launch_in(
        &mut self,
        file: usize,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
        template: Vec<(Name, TArg)>,
    ) -> LaunchValues {
        self.frames.push(Frame {
            scope_base: 0,
            file,
            ret: None,
            returns: Returns::default(),
            refs: Vec::new(),
            local_refs: Vec::new(),
            template,
            owner: None,
            this: None,
        });
        self.scopes.push(Vec::new());
        self.host_template_params.clear();
        if let Some(host) = launch
            .host_fn
            .and_then(|i| self.files[file].functions.get(i))
        {
            self.host_template_params = host
                .template_params
                .iter()
                .map(|t| t.name.clone())
                .collect();
            // a launch in a member function sees its class's aliases and constants (qsim's
            // `d_i.xss`, an `idx_type*` that `using idx_type = uint64_t;` of the class makes)
            if let Some(fr) = self.frames.last_mut() {
                fr.owner = self.project.owner_of(host).map(str::to_string);
            }
            self.bind_class_defaults(host);
            // `k<Ktraits>` with `using Ktraits = Traits<kNThreads, kIsEvenLen>` reads those too
            let aliased: Vec<cudalint_syntax::TypeRef> = launch
                .template_args
                .iter()
                .filter_map(|t| match t {
                    TemplateArg::Type(ty) => {
                        let full = self.typedef_chain_end(&ty.name);
                        (full != ty.name).then(|| cudalint_syntax::TypeRef::named(&full))
                    }
                    TemplateArg::Expr(_) => None,
                })
                .collect();
            let mut needed = std::collections::HashSet::new();
            for e in launch.config.iter().chain(&launch.args) {
                names_read(e, &mut needed, 0);
            }
            for t in &launch.template_args {
                template_arg_names(t, &mut needed);
            }
            for a in &aliased {
                type_names(a, &mut needed);
            }
            self.host_scope(host, launch.span.start, needed, 0);
        }
        // each component, where known: `k<<<n, {32, 8, 1}>>>`'s braced list is a dim3 made in
        // place; `dim3 b(t, t)` of a runtime `t` keeps its shape for an assumed size
        let form = |run: &mut KernelRun, e: &Expr| -> Option<[Option<i64>; 3]> {
            let v = match &e.kind {
                ExprKind::Init(items) => run.dim3_from(items),
                _ => run.pure_rvalue(e),
            };
            match v {
                Val::Dim3(c) => Some(c.map(|s| s.as_const())),
                Val::Int(s) => Some([s.as_const(), Some(1), Some(1)]),
                _ => None,
            }
        };
        let known = |f: [Option<i64>; 3]| Some([f[0]?, f[1]?, f[2]?]);
        let grid = launch
            .config
            .first()
            .and_then(|e| form(self, e))
            .and_then(known);
        let block_shape = launch.config.get(1).and_then(|e| form(self, e));
        let block = block_shape.and_then(known);
        // a plain runtime count (`<<<g, threads>>>`) is no shape to keep; one sized to the
        // problem under a bound (`min(ne0, 128)`) is, at the bound
        let bounded = launch
            .config
            .get(1)
            .filter(|_| block.is_none())
            .and_then(|e| match self.pure_rvalue(e) {
                Val::Dim3(c) => Some(c.map(|s| s.bounded_value())),
                Val::Int(s) => Some([s.bounded_value(), Some(1), Some(1)]),
                _ => None,
            })
            .and_then(known)
            .filter(|b| b.iter().all(|x| *x > 0) && b.iter().product::<i64>() <= 1024);
        let block_form = match bounded {
            Some(b) => Some(b.map(Some)),
            None => block_shape.filter(|f| block.is_none() && f[1..] != [Some(1), Some(1)]),
        };
        let mut bindings = Bindings {
            template_args: self.launch_template_args(launch, kernel),
            params: Vec::new(),
            members: Vec::new(),
            lambdas: Vec::new(),
        };
        self.deduce_type_params(launch, kernel, &mut bindings.template_args);
        for (i, p) in kernel.params.iter().enumerate() {
            // an argument the launch leaves out is the parameter's default
            let arg = launch.args.get(i).or(p.default.as_deref());
            let value = arg.map(|e| self.pure_rvalue(e));
            bindings
                .lambdas
                .push(value.as_ref().and_then(|v| self.launch_lambda(v)));
            // a struct passed by value: the members the host set
            if let Some((_, key)) = value
                .as_ref()
                .filter(|_| p.ty.pointer_depth == 0)
                .and_then(|v| self.local_object(v))
            {
                for (name, c) in self.constant_members(key) {
                    bindings.members.push((format!("{}.{name}", p.name), c));
                }
            }
            let v = match value {
                Some(Val::Int(s)) if p.ty.pointer_depth == 0 => s.as_const(),
                // a null pointer passed for a pointer parameter
                Some(Val::Int(s)) if s.as_const() == Some(0) => Some(0),
                _ => None,
            };
            bindings.params.push(v);
        }
        self.scopes.clear();
        self.frames.clear();
        LaunchValues {
            block,
            grid,
            block_form,
            bindings,
        }
    }

    /// The host function's parameters, then its declarations and assignments before the launch
    /// at byte `before`, in order: what the launch's expressions can name.
    /// The host function's state at byte `before`, as far as the names `needed` (what a
    /// launch or call reads) depend on it: only those declarations and assignments are run (a
    /// 50,000-line `main` with 10,000 launches is not replayed whole for each).
    fn host_scope(
        &mut self,
        host: &Function,
        before: u32,
        needed: std::collections::HashSet<&str>,
        depth: usize,
    ) {
        let mut stmts = Vec::new();
        let mut modified = std::collections::BTreeSet::new();
        if let Some(body) = &host.body {
            collect_decls_before(body, before, &mut stmts);
            modified_before(body, before, false, &mut modified);
        }
        let (stmts, needed) = slice(&stmts, needed, &|callee, args, i| {
            self.takes_by_reference(callee, args, i)
        });
        if let Some(body) = &host.body {
            self.passed_by_reference(body, before, &needed, &mut modified);
        }
        // `switch (threads) { case 64: k<T, 64><<<grid, dim3(threads)>>>(...); }`: in the
        // branch the launch is in, what its condition tests equal is that value (each case's
        // block is its own, where a configuration of one case's template argument and another
        // case's block was a phantom misalignment); a name changed before the launch is not
        let mut tested = Vec::new();
        if let Some(body) = &host.body {
            branch_equalities(body, before, &mut tested, 0);
        }
        // (a name changed before the test does not matter: MAGMA's `for (jb = IB; jb < NB;
        // jb *= 2) switch (jb) { case 16: k16<<<...>>>(..., jb, ...); }` passes 16)
        let mut equal = std::collections::HashMap::new();
        for (name, e, arm) in tested {
            let mut changed = std::collections::BTreeSet::new();
            modified_before(arm, before, false, &mut changed);
            if !changed.contains(name) {
                if let Some(c) = self.pure_rvalue(e).sym().as_const() {
                    equal.insert(name, c);
                }
            }
        }
        // the host function's parameters shadow file-scope names of the same spelling
        for (i, p) in host.params.iter().enumerate() {
            // a pointer keeps its element type (template arguments are deduced from it), a
            // pointer typedef's too (MAGMA's `magmaDouble_ptr dwork`)
            let ty = if p.ty.pointer_depth == 0 && types::builtin(&p.ty.name).is_none() {
                self.resolve_type(&p.ty)
            } else {
                p.ty.clone()
            };
            let v = if ty.pointer_depth > 0 {
                let mut elem = ty;
                elem.pointer_depth -= 1;
                Val::Ptr(Ptr::global(p.name.as_str(), elem, None))
            } else if let Some(&c) = equal.get(p.name.as_str()) {
                Val::Int(crate::sym::konst(c))
            } else if let Some(c) = needed
                .contains(p.name.as_str())
                .then(|| self.host_param_value(host, i, depth))
                .flatten()
            {
                Val::Int(crate::sym::konst(c))
            } else if let Some(d) = (needed.contains(p.name.as_str()) && ty.name == "dim3")
                .then(|| self.callers_dim3(host, i, depth))
                .flatten()
            {
                // `cudaF_k(dim3 Gr, dim3 Bl, ...)` launching `k<<<Gr, Bl>>>`, called with
                // `dim3(n / 256), dim3(256)`: the shape its callers agree on
                Val::Dim3(d.map(crate::sym::konst))
            } else if let Some(c) = (needed.contains(p.name.as_str()) && may_take_lambda(p))
                .then(|| self.host_param_lambda(host, i, depth))
                .flatten()
            {
                c
            } else if let Some(members) = (needed.contains(p.name.as_str())
                && self.is_object_type(&ty))
            .then(|| self.callers_members(host, i, depth))
            .flatten()
            .filter(|m| !m.is_empty())
            {
                // a struct the callers pass by value, with the members they set
                let key = self.objects.len();
                self.objects.push((p.name.as_str().into(), ty.clone(), key));
                for (name, c) in members {
                    self.set_field(key, &name, Val::Int(crate::sym::konst(c)));
                }
                Val::Unknown(format!("`{}` {}", p.name, super::LOCAL_OBJECT).into())
            } else if self.is_struct_value_type(&ty) {
                // an object (thundergbm's `const SyncArray<float>& y`): its members and member
                // functions as a kernel's struct parameter has them (`y.device_data()`
                // captured by a lambda is device memory of its element type)
                Val::Aggregate {
                    name: p.name.as_str().into(),
                    ty,
                }
            } else {
                Val::Unknown(format!("`{}` is a parameter of `{}`", p.name, host.name).into())
            };
            self.declare(&p.name, v);
        }
        self.host_statements = true;
        for s in stmts {
            if self.long_host_call(s) {
                continue;
            }
            self.stmt(s);
            // a name a loop changes is a run-time value from the change on: what is computed
            // from it after (BART's `while (8 * bx < n) bx *= 2;` then `MIN(32, bx)` for the
            // block) must not take the one pass the statement was run for
            if let Stmt::Expr(e) = s {
                for name in changed_names(e) {
                    if modified.contains(name)
                        && !equal.contains_key(name)
                        && matches!(self.lookup_local(name), Some(Val::Int(_)))
                    {
                        let reason =
                            format!("`{name}` is changed before the launch in `{}`", host.name);
                        self.assign_local(name, Val::Unknown(reason.into()));
                    }
                }
            }
            if let Stmt::Decl(d) = s {
                if let Some(&c) = equal.get(d.name.as_str()) {
                    self.assign_local(&d.name, Val::Int(crate::sym::konst(c)));
                }
                // a pointer the host cannot follow (`Complex* d_res1 = (Complex*)
                // AllocScratch(n)`) keeps its element type, as a pointer parameter does
                let lost = !matches!(self.lookup_local(&d.name), Some(Val::Ptr(_)));
                if d.ty.pointer_depth > 0 && d.dims.is_empty() && !d.is_reference && lost {
                    let mut elem = self.resolve_type(&d.ty);
                    elem.pointer_depth = elem.pointer_depth.saturating_sub(1);
                    self.assign_local(&d.name, Val::Ptr(Ptr::global(d.name.as_str(), elem, None)));
                }
            }
        }
        self.host_statements = false;
        // an array handed to a function before the launch holds what that function wrote
        // (`getWorkSize(local)`): not what the statements kept here stored
        if let Some(body) = &host.body {
            let mut calls = Vec::new();
            crate::project::calls_in(body, &mut calls);
            for c in calls.into_iter().filter(|c| c.span.start < before) {
                if let ExprKind::Call { args, .. } = &c.kind {
                    // (the array itself or an element's address, not an element's value:
                    // `printf("%zu", local[0])` changes nothing)
                    for a in args {
                        let handed = match &a.kind {
                            ExprKind::Ident(n) => Some(n.as_str()),
                            ExprKind::Unary {
                                op: cudalint_syntax::UnOp::AddrOf,
                                arg,
                            } => root_name(arg),
                            _ => None,
                        };
                        if let Some(n) = handed {
                            self.forget_elements(n);
                        }
                    }
                }
            }
        }
        // a count built up in a loop (`int n = 0; for (...) n++;`) or written through a
        // pointer (`scanf("%d", &n)`) is a run-time value at the launch, not its first value
        // (a pointer keeps its element type: `cudaMalloc(&p, ...)` changes where it points)
        for name in modified {
            if let Some(&c) = equal.get(name.as_str()) {
                self.assign_local(&name, Val::Int(crate::sym::konst(c)));
                continue;
            }
            if matches!(self.lookup_local(&name), Some(Val::Int(_))) {
                let reason = format!("`{name}` is changed before the launch in `{}`", host.name);
                self.assign_local(&name, Val::Unknown(reason.into()));
            }
        }
    }

    /// Whether `s` calls a long host function (more than [`LONG_HOST_FUNCTION`] bytes) that
    /// takes some of its arguments by non-const reference: the state it leaves them in is
    /// not followed (RELION's 1,000-line `getFourierTransformsAndCtfs(part_id, op, ...)`,
    /// replayed for every launch after it, was most of the check of its program); the
    /// objects it is given lose the members known of them, and numbers become unknown.
    fn long_host_call(&mut self, s: &Stmt) -> bool {
        let Stmt::Expr(e) = s else {
            return false;
        };
        let ExprKind::Call { callee, args, .. } = &e.kind else {
            return false;
        };
        let long = self
            .project
            .device_functions(callee, args.len(), self.file())
            .iter()
            .any(|(_, f)| f.kind == FnKind::Host && f.span.end - f.span.start > LONG_HOST_FUNCTION);
        if !long {
            return false;
        }
        for (i, a) in args.iter().enumerate() {
            let ExprKind::Ident(n) = &a.kind else {
                continue;
            };
            if !self.takes_by_reference(callee, args.len(), i) {
                continue;
            }
            match self.lookup_local(n) {
                Some(v @ Val::Unknown(_)) => {
                    if let Some((_, key)) = self.local_object(v) {
                        self.fields.remove(&key);
                    }
                }
                Some(Val::Int(_)) => {
                    let reason = format!("`{n}` is changed by `{callee}`, which is not followed");
                    self.assign_local(n, Val::Unknown(reason.into()));
                }
                _ => {}
            }
        }
        true
    }

    /// Variables among `needed` a host function passes, before byte `before`, to a function that takes them
    /// by non-const reference (`setup(args, &ptr, allocation_size)` with `size_t&
    /// allocation_size`): what they hold at the launch is that function's doing.
    fn passed_by_reference(
        &self,
        body: &[Stmt],
        before: u32,
        needed: &std::collections::HashSet<&str>,
        out: &mut std::collections::BTreeSet<String>,
    ) {
        let mut calls = Vec::new();
        crate::project::calls_in(body, &mut calls);
        for call in calls.into_iter().filter(|c| c.span.start < before) {
            let ExprKind::Call { callee, args, .. } = &call.kind else {
                continue;
            };
            for (i, a) in args.iter().enumerate() {
                // only what the launch depends on: a host file of many launches and calls
                // looks up few callees
                let ExprKind::Ident(n) = &a.kind else {
                    continue;
                };
                if !needed.contains(n.as_str()) {
                    continue;
                }
                if self.takes_by_reference(callee, args.len(), i) {
                    out.insert(n.to_string());
                }
            }
        }
    }

    /// Whether a function `callee` names, called with `args` arguments, takes argument `i` by
    /// non-const reference.
    fn takes_by_reference(&self, callee: &str, args: usize, i: usize) -> bool {
        self.project
            .device_functions(callee, args, self.file())
            .iter()
            .any(|(_, f)| {
                f.params
                    .get(i)
                    .is_some_and(|p| p.is_reference && !p.ty.is_const)
            })
    }

    /// What each host call of `host` passes for its parameter `index`, evaluated in its
    /// caller's scope, up to a few callers deep; none when there are too many calls or one
    /// passes nothing for it.
    fn values_callers_pass(
        &mut self,
        host: &Function,
        index: usize,
        depth: usize,
        max_calls: usize,
    ) -> Option<Vec<Val>> {
        self.callers_pass(host, index, depth, max_calls, &mut |run, arg| {
            run.pure_rvalue(arg)
        })
    }

    /// The integer members every host call of `host` sets in the struct it passes by value
    /// for parameter `index` (`Strides s = {1, 32}; run(in, out, s);`), where the calls
    /// agree.
    fn callers_members(
        &mut self,
        host: &Function,
        index: usize,
        depth: usize,
    ) -> Option<super::Members> {
        let key = self.param_source(host, index, depth);
        if let Some((_, v)) = self.param_members.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let value = self.callers_agreed_members(host, index, depth);
        self.param_members.push((key, value.clone()));
        value
    }

    fn callers_agreed_members(
        &mut self,
        host: &Function,
        index: usize,
        depth: usize,
    ) -> Option<super::Members> {
        let each = self.callers_pass(host, index, depth, MAX_HOST_CALLS, &mut |run, arg| {
            let v = run.pure_rvalue(arg);
            let (_, key) = run.local_object(&v)?;
            Some(run.constant_members(key))
        })?;
        let mut each = each.into_iter();
        let mut agreed = each.next()??;
        for other in each {
            let other = other?;
            agreed.retain(|m| other.contains(m));
        }
        Some(agreed)
    }

    /// The members of local object `key` that hold constants.
    pub(super) fn constant_members(&self, key: usize) -> super::Members {
        self.fields
            .get(&key)
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| match v {
                Val::Int(s) => Some((name.clone(), s.as_const()?)),
                _ => None,
            })
            .collect()
    }

    /// `f` of the argument each host call of `host` passes for its parameter `index`, made
    /// in the caller's scope.
    fn callers_pass<T>(
        &mut self,
        host: &Function,
        index: usize,
        depth: usize,
        max_calls: usize,
        f: &mut dyn FnMut(&mut Self, &Expr) -> T,
    ) -> Option<Vec<T>> {
        const MAX_DEPTH: usize = 3;
        if depth >= MAX_DEPTH {
            return None;
        }
        let calls = self.project.host_calls_of(&host.name);
        if calls.len() > max_calls {
            return None;
        }
        let mut values = Vec::new();
        for (cfile, caller, call) in calls {
            let ExprKind::Call { args, .. } = &call.kind else {
                continue;
            };
            // another overload of the name, or the function calling itself
            if !host.takes(args.len()) || std::ptr::eq(caller, host) {
                continue;
            }
            let arg = args.get(index).or(host.params[index].default.as_deref())?;
            let base = self.enter_host_caller(cfile, Vec::new());
            let mut needed = std::collections::HashSet::new();
            names_read(arg, &mut needed, 0);
            self.host_scope(caller, call.span.start, needed, depth + 1);
            values.push(f(self, arg));
            self.scopes.truncate(base);
            self.frames.pop();
        }
        Some(values)
    }

    /// What the caches of the callers' values are keyed by: the function, the parameter, the
    /// depth and the lambda variant being evaluated.
    fn param_source(&self, host: &Function, index: usize, depth: usize) -> super::ParamSource {
        (
            std::ptr::from_ref(host) as usize,
            index,
            depth,
            self.lambda_variant,
        )
    }

    /// The constant every host call of `host` passes for its parameter `index` (`int
    /// filter_size = 9;` in `main`, passed to the wrapper that launches); none when the calls
    /// pass different values or one is not a constant.
    fn host_param_value(&mut self, host: &Function, index: usize, depth: usize) -> Option<i64> {
        // (every launch of the run, and every parameter the callers' own scopes need, asks
        // again: the callers are replayed once per lambda variant)
        let key = self.param_source(host, index, depth);
        if let Some((_, v)) = self.param_constants.iter().find(|(k, _)| *k == key) {
            return *v;
        }
        let value = self.callers_constant(host, index, depth);
        self.param_constants.push((key, value));
        value
    }

    fn callers_constant(&mut self, host: &Function, index: usize, depth: usize) -> Option<i64> {
        let mut value = None;
        for v in self.values_callers_pass(host, index, depth, MAX_HOST_CALLS)? {
            let v = match v {
                Val::Int(s) => s.as_const()?,
                _ => return None,
            };
            if value.is_some_and(|x| x != v) {
                return None;
            }
            value = Some(v);
        }
        value
    }

    /// The `dim3` every host call of `host` passes for its parameter `index`, each component a
    /// constant; none when the calls differ or one is not known.
    fn callers_dim3(&mut self, host: &Function, index: usize, depth: usize) -> Option<[i64; 3]> {
        let key = self.param_source(host, index, depth);
        if let Some((_, v)) = self.param_dims.iter().find(|(k, _)| *k == key) {
            return *v;
        }
        let mut value = None;
        for v in self
            .values_callers_pass(host, index, depth, MAX_HOST_CALLS)
            .unwrap_or_default()
        {
            let d = match v {
                Val::Dim3(c) => [c[0].as_const(), c[1].as_const(), c[2].as_const()],
                Val::Int(s) => [s.as_const(), Some(1), Some(1)],
                _ => [None; 3],
            };
            let agreed = match (d, value) {
                ([Some(x), Some(y), Some(z)], None) => Some([x, y, z]),
                ([Some(x), Some(y), Some(z)], Some(v)) if v == [x, y, z] => Some(v),
                _ => None,
            };
            if agreed.is_none() {
                value = None;
                break;
            }
            value = agreed;
        }
        self.param_dims.push((key, value));
        value
    }

    /// The lambda host calls of `host` pass for its parameter `index` (a wrapper `for_each(n,
    /// f)` that launches `apply<<<...>>>(n, f)`, called with `[=] __device__ (int i) {...}`),
    /// made in its caller's scope: where calls pass different ones, the current variant's
    /// (see `lambda_variant`); none when a call passes something else.
    fn host_param_lambda(&mut self, host: &Function, index: usize, depth: usize) -> Option<Val> {
        // (each variant's evaluation asks again: the callers are evaluated once)
        let key = (std::ptr::from_ref(host) as usize, index, depth);
        let distinct = match self.lambda_cache.iter().find(|(k, _)| *k == key) {
            Some((_, d)) => d.clone(),
            None => {
                let mut distinct: Vec<std::rc::Rc<super::Closure>> = Vec::new();
                let values = self.values_callers_pass(host, index, depth, MAX_LAMBDA_VARIANTS);
                for v in values.unwrap_or_default() {
                    let Val::Closure(c) = v else {
                        distinct.clear();
                        break;
                    };
                    if !distinct
                        .iter()
                        .any(|f| std::sync::Arc::ptr_eq(&f.def, &c.def))
                    {
                        distinct.push(c);
                    }
                }
                self.lambda_cache.push((key, distinct.clone()));
                distinct
            }
        };
        self.lambda_variants = self.lambda_variants.max(distinct.len());
        distinct.get(self.lambda_variant).cloned().map(Val::Closure)
    }

    /// A type as the current frame's template bindings make it: `Ktraits`, a host function's
    /// `using Ktraits = traits<kNThreads, input_t>;` with kNThreads = 128 and input_t = float,
    /// is `traits<128, float>` (the kernel's frame will not know the host's names).
    pub(super) fn instantiate_type(
        &mut self,
        t: &cudalint_syntax::TypeRef,
    ) -> cudalint_syntax::TypeRef {
        // (a pointer's element type too: `MatrixElement<Real>* x` with Real = float)
        let mut r = self.resolve_type(t);
        let full = self.typedef_chain_end(&r.name);
        // `typename Table<IdType>::Mapping`: a type nested in an instance, the instance's
        // arguments bound
        if !full.trim_end().ends_with('>') {
            if let Some((owner, member)) = full
                .rsplit_once("::")
                .filter(|(o, _)| o.trim_end().ends_with('>'))
            {
                let owner = owner.trim();
                let owner = owner.strip_prefix("typename ").unwrap_or(owner);
                let inst = self.instantiate_type(&cudalint_syntax::TypeRef::named(owner));
                r.name = compact_str::format_compact!("{}::{}", inst.name, member.trim());
            }
            return r;
        }
        let Some((base, _)) = full.split_once('<') else {
            return r;
        };
        let (_, args) = split_template(&full);
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                let bound = self
                    .frames
                    .last()
                    .and_then(|f| f.template.iter().find(|(n, _)| n == a))
                    .map(|(_, v)| v.clone());
                // or a constant of the host's own (`constexpr int kNRows = 1;` before `using
                // Ktraits = Traits<kNThreads, kNRows>`): the struct's statics are evaluated in
                // the struct's frame, where the host's names mean nothing
                let bound = bound.or_else(|| match self.lookup_local(a) {
                    Some(Val::Int(s)) if s.as_const().is_some() => {
                        Some(TArg::Val(Val::Int(s.clone())))
                    }
                    _ => None,
                });
                match bound {
                    Some(TArg::Type(t)) => t.name.to_string(),
                    Some(TArg::Val(Val::Int(s))) if s.as_const().is_some() => {
                        s.as_const().unwrap_or(0).to_string()
                    }
                    // `Acc<const D, n, true>`: the parameters inside an argument, bound
                    _ => self.bound_words(a),
                }
            })
            .collect();
        r.name = compact_str::format_compact!("{}<{}>", base.trim(), args.join(", "));
        r
    }

    /// `text` with each word the innermost frame's template binds to a type or a constant
    /// written as that type or constant.
    fn bound_words(&self, text: &str) -> String {
        let Some(fr) = self.frames.last().filter(|f| !f.template.is_empty()) else {
            return text.to_string();
        };
        crate::types::replace_words(text, |word| {
            match fr.template.iter().find(|(n, _)| *n == word) {
                Some((_, TArg::Type(t))) => Some(t.name.to_string()),
                Some((_, TArg::Val(Val::Int(s)))) => s.as_const().map(|v| v.to_string()),
                _ => None,
            }
        })
    }

    /// The template arguments the launch writes (`k<256, float><<<...>>>`), constants folded.
    /// Template arguments as written, with a macro that stands for several of them spelled
    /// out (MAGMA's `hemv_diag_template_batched<magmaDoubleComplex, ZHEMV_BATCHED_LOWER>` with
    /// `#define ZHEMV_BATCHED_LOWER 16, 4`: three arguments).
    pub(super) fn expand_template_args<'t>(
        &self,
        args: &'t [TemplateArg],
    ) -> std::borrow::Cow<'t, [TemplateArg]> {
        let file = self.file();
        let list = |a: &TemplateArg| {
            let name = match a {
                TemplateArg::Type(t) if t.pointer_depth == 0 => t.name.as_str(),
                TemplateArg::Expr(Expr {
                    kind: ExprKind::Ident(n),
                    ..
                }) => n.as_str(),
                _ => return None,
            };
            let (_, d) = self.project.object_macro(name, file)?;
            let body = d.body.as_ref()?;
            matches!(body.kind, ExprKind::Comma(..)).then_some(body)
        };
        if !args.iter().any(|a| list(a).is_some()) {
            return std::borrow::Cow::Borrowed(args);
        }
        fn operands(e: &Expr, out: &mut Vec<TemplateArg>) {
            match &e.kind {
                ExprKind::Comma(l, r) => {
                    operands(l, out);
                    operands(r, out);
                }
                _ => out.push(TemplateArg::Expr(e.clone())),
            }
        }
        let mut out = Vec::new();
        for a in args {
            match list(a) {
                Some(body) => operands(body, &mut out),
                None => out.push(a.clone()),
            }
        }
        std::borrow::Cow::Owned(out)
    }

    fn launch_template_args(
        &mut self,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
    ) -> Vec<Option<TemplateArg>> {
        let mut out = Vec::new();
        let written = self
            .expand_template_args(&launch.template_args)
            .into_owned();
        for (i, tp) in kernel.template_params.iter().enumerate() {
            // a value the host cannot fold (`stereoKernel<RADIUS>` in a host template only a
            // table of function pointers instantiates) is left unbound: in the kernel it is a
            // runtime value, as with no launch seen, not a name defined nowhere
            let arg = written.get(i).and_then(|a| match a {
                TemplateArg::Expr(e) => match self.pure_rvalue(e).sym().as_const() {
                    Some(v) => Some(TemplateArg::Expr(int_expr(v, e.span))),
                    // (or a local the host cannot fold: `constexpr int MB =
                    // decltype(tag)::value` in a lambda that launches)
                    None if self.host_template_param(&e.kind) || self.host_local(&e.kind) => None,
                    None => Some(a.clone()),
                },
                TemplateArg::Type(t) if !tp.is_type => {
                    match self.lookup(&t.name, Span::default()) {
                        Val::Int(s) if s.as_const().is_some() => Some(TemplateArg::Expr(int_expr(
                            s.as_const().unwrap_or(0),
                            Span::default(),
                        ))),
                        _ if self.host_template_param(&ExprKind::Ident(t.name.clone()))
                            || self.host_local(&ExprKind::Ident(t.name.clone())) =>
                        {
                            None
                        }
                        _ => Some(a.clone()),
                    }
                }
                // a type the host function names through its own template parameters
                TemplateArg::Type(t) => Some(TemplateArg::Type(self.instantiate_type(t))),
            });
            out.push(arg);
        }
        out
    }

    /// Whether `e` names a local of the host function the launch is in (whose value, were it
    /// known, would have been folded).
    fn host_local(&self, e: &ExprKind) -> bool {
        matches!(e, ExprKind::Ident(name) if self.lookup_local(name).is_some())
    }

    /// Whether `e` names a template parameter of the host function the launch is in that
    /// nothing binds.
    fn host_template_param(&self, e: &ExprKind) -> bool {
        let ExprKind::Ident(name) = e else {
            return false;
        };
        self.host_template_params.iter().any(|p| p == name)
            && self
                .frames
                .last()
                .is_none_or(|f| !f.template.iter().any(|(n, _)| n == name))
    }

    /// Type parameters the launch does not name, deduced from pointer arguments:
    /// `k<<<g, b>>>(p)` with `__nv_bfloat16* p` for `template <typename Tp> k(Tp* p)`.
    fn deduce_type_params(
        &mut self,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
        targs: &mut Vec<Option<TemplateArg>>,
    ) {
        for (ti, tp) in kernel.template_params.iter().enumerate() {
            if !tp.is_type || targs.get(ti).is_some_and(|a| a.is_some()) {
                continue;
            }
            if let Some(t) = self.deduce_from_pointers(&tp.name, &kernel.params, &launch.args) {
                while targs.len() <= ti {
                    targs.push(None);
                }
                targs[ti] = Some(TemplateArg::Type(t));
            }
        }
    }

    /// Type parameter `name` as the pointer arguments passed for `name*` parameters make it
    /// (the element type, as the current frame's template bindings resolve it, without const).
    fn deduce_from_pointers(
        &mut self,
        name: &str,
        params: &[cudalint_syntax::Param],
        args: &[Expr],
    ) -> Option<cudalint_syntax::TypeRef> {
        params.iter().zip(args).find_map(|(p, e)| {
            if p.ty.name != name || p.ty.pointer_depth == 0 {
                return None;
            }
            match self.pure_rvalue(e) {
                Val::Ptr(ptr) => self.deduced_from(name, &p.ty, &ptr),
                // a pointer the host cannot follow still has the type it is written with:
                // `(fp_type*) d_ws` of a buffer the class holds, `d_i.xss` of an object a
                // constructor fills (qsim's launches in its simulator class)
                _ => {
                    let mut elem = self.declared_type(e, 0)?;
                    elem.pointer_depth = elem.pointer_depth.checked_sub(1)?;
                    // (a type cudalint cannot size is no better than none: `sizeof` of an
                    // unbound parameter stays a runtime value)
                    if elem.pointer_depth == 0 && self.layout_of(&elem).is_none() {
                        return None;
                    }
                    let ptr = Ptr::global("deduced", elem, None);
                    self.deduced_from(name, &p.ty, &ptr)
                }
            }
        })
    }

    /// A launch in a member function of a class template that no instantiation reaches
    /// (`template <typename FP = float> class SimulatorCUDA`): the class's parameters nothing
    /// binds are their defaults, the instantiation the class's own declaration names.
    fn bind_class_defaults(&mut self, host: &Function) {
        let count = self.class_param_count(host);
        for p in &host.template_params[..count] {
            let bound = self
                .frames
                .last()
                .is_some_and(|f| f.template.iter().any(|(n, _)| *n == p.name));
            let Some(d) = p.default.as_ref().filter(|_| !bound) else {
                continue;
            };
            let arg = self.template_arg(d, p.is_type);
            if let Some(fr) = self.frames.last_mut() {
                fr.template.push((p.name.clone(), arg));
            }
            self.host_template_params.retain(|n| *n != p.name);
        }
    }

    /// How many of a member function's template parameters are its class's (they come
    /// first).
    pub(super) fn class_param_count(&self, f: &Function) -> usize {
        self.project.owner_of(f).map_or(0, |owner| {
            self.types()
                .iter()
                .find_map(|m| m.structs.iter().find(|s| s.name == owner))
                .map_or(0, |s| s.template_params.len())
                .min(f.template_params.len())
        })
    }

    /// The type `e` is declared with, where its value is not known: a cast's type, a local
    /// object's or a member's declared type (its class's aliases resolved), through `*`, `&`
    /// and subscripts.
    pub(super) fn declared_type(
        &mut self,
        e: &Expr,
        depth: usize,
    ) -> Option<cudalint_syntax::TypeRef> {
        if depth > 8 {
            return None;
        }
        let ty = match &e.kind {
            ExprKind::Cast { ty, .. } => ty.clone(),
            ExprKind::Ident(n) => match self.lookup_local(n).cloned() {
                Some(v) => self.local_object(&v)?.0,
                // a member of the class whose member function launches
                None => {
                    let owner = self.frames.last()?.owner.clone()?;
                    self.member_of(&owner, n)?.1
                }
            },
            ExprKind::Field { base, field, arrow } => {
                let mut base = self.declared_type(base, depth + 1)?;
                if *arrow {
                    base.pointer_depth = base.pointer_depth.checked_sub(1)?;
                }
                if base.pointer_depth > 0 {
                    return None;
                }
                let full = self.instantiate_type(&base).name;
                self.member_of(&full, field)?.1
            }
            ExprKind::Unary {
                op: cudalint_syntax::UnOp::Deref,
                arg,
            }
            | ExprKind::Index { base: arg, .. } => {
                let mut t = self.declared_type(arg, depth + 1)?;
                t.pointer_depth = t.pointer_depth.checked_sub(1)?;
                t
            }
            ExprKind::Unary {
                op: cudalint_syntax::UnOp::AddrOf,
                arg,
            } => {
                let mut t = self.declared_type(arg, depth + 1)?;
                t.pointer_depth += 1;
                t
            }
            _ => return None,
        };
        Some(self.resolve_type(&ty))
    }
}

fn int_expr(v: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Int(v),
        span,
    }
}

/// Declarations and expression statements (`block.x = 256;`) that precede a launch, in order.
/// The statements of `stmts` (in order) that what `needed` names depends on: walking back
/// from the end, a declaration or assignment of a needed name is kept and the names it reads
/// become needed. With them, every name needed in the end (the host function's parameters
/// among them).
fn slice<'a>(
    stmts: &[&'a Stmt],
    mut needed: std::collections::HashSet<&'a str>,
    by_reference: &dyn Fn(&str, usize, usize) -> bool,
) -> (Vec<&'a Stmt>, std::collections::HashSet<&'a str>) {
    let mut keep = vec![false; stmts.len()];
    for (i, s) in stmts.iter().enumerate().rev() {
        match s {
            Stmt::Decl(d) if needed.contains(d.name.as_str()) => {
                keep[i] = true;
                type_names(&d.ty, &mut needed);
                if let Some(init) = &d.init {
                    names_read(init, &mut needed, 0);
                }
                for size in d.dims.iter().filter_map(|dim| dim.size.as_ref()) {
                    names_read(size, &mut needed, 0);
                }
            }
            Stmt::Expr(e)
                if assigns_needed(e, &needed) || passes_needed(e, &needed, by_reference) =>
            {
                keep[i] = true;
                names_read(e, &mut needed, 0);
            }
            // `int smem = get_sm_size(sizes, H, W, block);` sets `block` through a reference
            Stmt::Decl(d) => {
                if let Some(init) = d
                    .init
                    .as_ref()
                    .filter(|e| passes_needed(e, &needed, by_reference))
                {
                    keep[i] = true;
                    names_read(init, &mut needed, 0);
                }
            }
            _ => {}
        }
    }
    let kept = stmts
        .iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(*s))
        .collect();
    (kept, needed)
}

/// Whether `e` calls a function that takes a needed name by non-const reference
/// (`pick(h, block)` with `dim3 &block`): what the name holds after is the callee's doing.
fn passes_needed(
    e: &Expr,
    needed: &std::collections::HashSet<&str>,
    by_reference: &dyn Fn(&str, usize, usize) -> bool,
) -> bool {
    let mut calls = Vec::new();
    crate::project::calls_in_expr(e, &mut calls);
    calls.iter().any(|c| {
        let ExprKind::Call { callee, args, .. } = &c.kind else {
            return false;
        };
        args.iter().enumerate().any(|(i, a)| {
            matches!(&a.kind, ExprKind::Ident(n) if needed.contains(n.as_str()))
                && by_reference(callee, args.len(), i)
        })
    })
}

/// Whether `e` assigns a needed name, itself or as an operand of a comma (ByteTransformer's
/// launch macros: `grid.x = head_num, grid.y = ..., block.x = 32 * warps;`).
fn assigns_needed(e: &Expr, needed: &std::collections::HashSet<&str>) -> bool {
    match &e.kind {
        ExprKind::Assign { lhs, .. } => root_name(lhs).is_some_and(|n| needed.contains(n)),
        ExprKind::Comma(a, b) => assigns_needed(a, needed) || assigns_needed(b, needed),
        _ => false,
    }
}

/// The variable an assignment's target belongs to: `cfg` of `cfg.block.x` or `dims[0]`.
fn root_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Field { base, .. } | ExprKind::Index { base, .. } => root_name(base),
        ExprKind::Unary { arg, .. } => root_name(arg),
        _ => None,
    }
}

/// The words of a type's spelling (`traits<kNThreads, input_t>`): any may be a host alias or
/// constant.
/// Adds a host template's instantiation to `out` unless it is empty or already there.
fn push_distinct(
    out: &mut Vec<Vec<(Name, TArg)>>,
    seen: &mut Vec<String>,
    template: Vec<(Name, TArg)>,
) {
    let key = format!("{template:?}");
    if !template.is_empty() && !seen.contains(&key) {
        seen.push(key);
        out.push(template);
    }
}

fn type_names<'a>(t: &'a cudalint_syntax::TypeRef, out: &mut std::collections::HashSet<&'a str>) {
    out.extend(
        t.name
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty()),
    );
}

fn template_arg_names<'a>(t: &'a TemplateArg, out: &mut std::collections::HashSet<&'a str>) {
    match t {
        TemplateArg::Type(ty) => type_names(ty, out),
        TemplateArg::Expr(e) => names_read(e, out, 0),
    }
}

/// Every name an expression reads, types spelled in it included.
pub(super) fn names_read<'a>(
    e: &'a Expr,
    out: &mut std::collections::HashSet<&'a str>,
    depth: usize,
) {
    if depth > 256 {
        return;
    }
    let d = depth + 1;
    match &e.kind {
        ExprKind::Ident(n) => {
            // `Ktraits::kNThreads` reads the alias `Ktraits` too
            out.insert(n);
            out.extend(n.split("::").filter(|w| !w.is_empty()));
        }
        ExprKind::Field { base: a, .. }
        | ExprKind::Unary { arg: a, .. }
        | ExprKind::SizeofExpr(a) => names_read(a, out, d),
        ExprKind::Cast { ty, arg } => {
            type_names(ty, out);
            names_read(arg, out, d);
        }
        ExprKind::SizeofType(ty) => type_names(ty, out),
        ExprKind::Index { base: a, index: b }
        | ExprKind::Binary { lhs: a, rhs: b, .. }
        | ExprKind::Assign { lhs: a, rhs: b, .. }
        | ExprKind::Comma(a, b) => {
            names_read(a, out, d);
            names_read(b, out, d);
        }
        ExprKind::Cond { cond, then, els } => {
            names_read(cond, out, d);
            names_read(then, out, d);
            names_read(els, out, d);
        }
        ExprKind::Call {
            args,
            template_args,
            ..
        } => {
            for t in template_args.iter() {
                template_arg_names(t, out);
            }
            for a in args {
                names_read(a, out, d);
            }
        }
        ExprKind::Init(args) => {
            for a in args {
                names_read(a, out, d);
            }
        }
        // what a lambda captures: every name its body reads
        ExprKind::Lambda(l) => {
            cudalint_syntax::statement_exprs(&l.body, &mut |e| names_read(e, out, d));
        }
        _ => {}
    }
}

fn collect_decls_before<'a>(body: &'a [Stmt], before: u32, out: &mut Vec<&'a Stmt>) {
    for s in body {
        // a launch inside a lambda (`auto launch = [&](auto tag) { constexpr int MB = ...;
        // k<T, MB><<<...>>>(...); }`) reads the lambda's declarations before it
        let around = match s {
            Stmt::Decl(d) if d.span.start < before && before < d.span.end => d.init.as_ref(),
            Stmt::Expr(e) if e.span.start < before && before < e.span.end => Some(e),
            _ => None,
        };
        for l in around.map(lambdas_in).unwrap_or_default() {
            collect_decls_before(&l.body, before, out);
        }
        match s {
            Stmt::Decl(d) if d.span.end <= before => out.push(s),
            Stmt::Expr(e)
                if e.span.end <= before
                    && matches!(
                        e.kind,
                        ExprKind::Assign { .. } | ExprKind::Call { .. } | ExprKind::Comma(..)
                    ) =>
            {
                out.push(s)
            }
            Stmt::Block(b) => collect_decls_before(b, before, out),
            Stmt::For {
                init, body, span, ..
            } if span.start < before => {
                for i in init {
                    if let Stmt::Decl(d) = i {
                        if d.span.end <= before {
                            out.push(i);
                        }
                    }
                }
                collect_decls_before(body, before, out)
            }
            Stmt::If { then, els, .. } => {
                collect_decls_before(then, before, out);
                collect_decls_before(els, before, out)
            }
            Stmt::While { body, .. } => collect_decls_before(body, before, out),
            _ => {}
        }
    }
}

/// What the conditions of the branches a position `pos` is in test names equal to (`x == 4`,
/// `4 == x`, the parts of an `&&`; a `switch`'s cases are lowered to such tests): the then-arm
/// of an `if` only; each with the arm, where what runs before the launch may change it.
fn branch_equalities<'a>(
    body: &'a [Stmt],
    pos: u32,
    out: &mut Vec<(&'a str, &'a Expr, &'a [Stmt])>,
    depth: usize,
) {
    if depth > 64 {
        return;
    }
    for s in body {
        match s {
            Stmt::If { cond, then, els } => {
                if contains(then, pos) {
                    let mut tests = Vec::new();
                    equalities(cond, &mut tests, 0);
                    out.extend(tests.into_iter().map(|(n, e)| (n, e, &then[..])));
                    branch_equalities(then, pos, out, depth + 1);
                } else if contains(els, pos) {
                    branch_equalities(els, pos, out, depth + 1);
                }
            }
            Stmt::Block(b) | Stmt::While { body: b, .. } | Stmt::For { body: b, .. }
                if contains(b, pos) =>
            {
                branch_equalities(b, pos, out, depth + 1);
            }
            Stmt::Decl(d) if d.span.start < pos && pos < d.span.end => {
                for l in d.init.as_ref().map(lambdas_in).unwrap_or_default() {
                    branch_equalities(&l.body, pos, out, depth + 1);
                }
            }
            Stmt::Expr(e) if e.span.start < pos && pos < e.span.end => {
                for l in lambdas_in(e) {
                    branch_equalities(&l.body, pos, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

fn equalities<'a>(cond: &'a Expr, out: &mut Vec<(&'a str, &'a Expr)>, depth: usize) {
    if depth > 16 {
        return;
    }
    if let ExprKind::Binary { op, lhs, rhs } = &cond.kind {
        match op {
            BinOp::And => {
                equalities(lhs, out, depth + 1);
                equalities(rhs, out, depth + 1);
            }
            BinOp::Eq => match (&lhs.kind, &rhs.kind) {
                (ExprKind::Ident(n), _) if !n.contains("::") => out.push((n, rhs)),
                (_, ExprKind::Ident(n)) if !n.contains("::") => out.push((n, lhs)),
                _ => {}
            },
            _ => {}
        }
    }
}

/// Whether a statement of `body`, nested ones included, holds byte `pos`.
fn contains(body: &[Stmt], pos: u32) -> bool {
    body.iter().any(|s| match s {
        Stmt::Decl(d) => d.span.start <= pos && pos < d.span.end,
        Stmt::Expr(e) => e.span.start <= pos && pos < e.span.end,
        Stmt::If { then, els, .. } => contains(then, pos) || contains(els, pos),
        Stmt::For { span, .. } => span.start <= pos && pos < span.end,
        Stmt::While { body, .. } | Stmt::Block(body) => contains(body, pos),
        Stmt::Return(Some(e), _) => e.span.start <= pos && pos < e.span.end,
        _ => false,
    })
}

/// The lambdas an expression is or passes (`[&](...) {...}`, `f(n, [=] (int i) {...})`).
fn lambdas_in(e: &Expr) -> Vec<&cudalint_syntax::Lambda> {
    match &e.kind {
        ExprKind::Lambda(l) => vec![l.as_ref()],
        ExprKind::Call { args, .. } => args.iter().flat_map(lambdas_in).collect(),
        ExprKind::Assign { rhs, .. } => lambdas_in(rhs),
        _ => Vec::new(),
    }
}

/// Names a host function changes before byte `before` in ways the declarations and plain
/// assignments run for a launch do not follow: increments, compound assignments, assignments
/// in loops (anywhere in a loop that started before the launch), and variables whose address
/// is taken.
pub(super) fn modified_before(
    body: &[Stmt],
    before: u32,
    in_loop: bool,
    out: &mut std::collections::BTreeSet<String>,
) {
    fn expr(e: &Expr, in_loop: bool, out: &mut std::collections::BTreeSet<String>, depth: usize) {
        if depth > 64 {
            return;
        }
        let mut name = |e: &Expr| {
            if let ExprKind::Ident(n) = &e.kind {
                if !out.contains(n.as_str()) {
                    out.insert(n.to_string());
                }
            }
        };
        let d = depth + 1;
        match &e.kind {
            ExprKind::Unary { op, arg } => {
                if matches!(
                    op,
                    cudalint_syntax::UnOp::PreInc
                        | cudalint_syntax::UnOp::PreDec
                        | cudalint_syntax::UnOp::PostInc
                        | cudalint_syntax::UnOp::PostDec
                        | cudalint_syntax::UnOp::AddrOf
                ) {
                    name(arg);
                }
                expr(arg, in_loop, out, d);
            }
            ExprKind::Assign { op, lhs, rhs } => {
                if op.is_some() || in_loop {
                    name(lhs);
                }
                expr(lhs, in_loop, out, d);
                expr(rhs, in_loop, out, d);
            }
            ExprKind::Call { args, .. } => {
                for a in args {
                    expr(a, in_loop, out, d);
                }
            }
            ExprKind::Init(args) => {
                for a in args {
                    expr(a, in_loop, out, d);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Comma(lhs, rhs) => {
                expr(lhs, in_loop, out, d);
                expr(rhs, in_loop, out, d);
            }
            ExprKind::Cond { cond, then, els } => {
                expr(cond, in_loop, out, d);
                expr(then, in_loop, out, d);
                expr(els, in_loop, out, d);
            }
            ExprKind::Cast { arg, .. } | ExprKind::SizeofExpr(arg) => expr(arg, in_loop, out, d),
            ExprKind::Field { base, .. } => expr(base, in_loop, out, d),
            ExprKind::Index { base, index } => {
                expr(base, in_loop, out, d);
                expr(index, in_loop, out, d);
            }
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::Decl(d) if d.span.start < before => {
                if let Some(init) = &d.init {
                    expr(init, in_loop, out, 0);
                }
            }
            Stmt::Expr(e) if e.span.start < before => expr(e, in_loop, out, 0),
            Stmt::Block(b) => modified_before(b, before, in_loop, out),
            Stmt::If { cond, then, els } => {
                if cond.span.start < before {
                    expr(cond, in_loop, out, 0);
                }
                modified_before(then, before, in_loop, out);
                modified_before(els, before, in_loop, out);
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                span,
            } if span.start < before => {
                // a loop started before the launch changes what it changes before the launch:
                // it ran to its end, or the launch is inside it and sees the last iteration's
                modified_before(init, before, in_loop, out);
                for e in cond.iter().chain(update) {
                    expr(e, true, out, 0);
                }
                modified_before(body, u32::MAX, true, out);
            }
            Stmt::While { cond, body, .. } if cond.span.start < before => {
                expr(cond, true, out, 0);
                modified_before(body, u32::MAX, true, out);
            }
            _ => {}
        }
    }
}

/// The names an expression statement assigns or steps (`bx *= 2`, `n++`, `a = b = 0`).
fn changed_names(e: &Expr) -> Vec<&str> {
    match &e.kind {
        ExprKind::Assign { lhs, rhs, .. } => {
            let mut out = changed_names(rhs);
            if let ExprKind::Ident(n) = &lhs.kind {
                out.push(n.as_str());
            }
            out
        }
        ExprKind::Unary {
            op:
                cudalint_syntax::UnOp::PreInc
                | cudalint_syntax::UnOp::PreDec
                | cudalint_syntax::UnOp::PostInc
                | cudalint_syntax::UnOp::PostDec,
            arg,
        } => match &arg.kind {
            ExprKind::Ident(n) => vec![n.as_str()],
            _ => Vec::new(),
        },
        ExprKind::Comma(a, b) => {
            let mut out = changed_names(a);
            out.extend(changed_names(b));
            out
        }
        _ => Vec::new(),
    }
}

/// Whether a host function's parameter can hold a lambda its callers pass: not a pointer, not
/// a number or a `dim3` (`int n`, `size_t bytes`, `float* p`). Those are never asked for one,
/// which would replay every caller of the function again; a template type (`F f`, `Lambda&&
/// f`), a `std::function`, a member function's class parameter or a typedef are.
fn may_take_lambda(p: &cudalint_syntax::Param) -> bool {
    p.ty.pointer_depth == 0
        && p.dims.is_empty()
        && p.ty.name != "dim3"
        && crate::types::builtin(&p.ty.name).is_none()
}
