//! Names: locals, template arguments, the built-in variables (threadIdx, blockDim, ...),
//! file-scope declarations, object-like macros and `-D` values, and static members of
//! (template) structs through their typedefs and partial specializations. Calls are `call.rs`.

use super::{is_vector_type, Frame, KernelRun, Returns, TArg, Val, MAX_CALL_DEPTH};
use crate::sym::{self, Var};
use crate::types;
use crate::types::TrimLiteral;
use cudalint_syntax::{Decl, Span, TemplateArg, TypeRef};

impl KernelRun<'_> {
    pub(super) fn lookup(&mut self, name: &str, span: Span) -> Val {
        if let Some(v) = self.lookup_local(name) {
            return v.clone();
        }
        if let Some(v) = self.this_field(name) {
            return v;
        }
        if let Some(fr) = self.frames.last() {
            if let Some((_, arg)) = fr.template.iter().find(|(n, _)| n == name) {
                return match arg {
                    TArg::Val(v) => v.clone(),
                    TArg::Type(t) => {
                        Val::Unknown(format!("type `{}` used as a value", t.name).into())
                    }
                };
            }
        }
        if let Some(v) = builtin_variable(name) {
            return v;
        }
        // file-scope declarations: the kernel's file first, then the rest of the project
        let file = self.file();
        if let Some((fi, d)) = self.project.global(name, file) {
            if let Some(v) = self.file_scope(name, fi, d) {
                return v;
            }
        }
        if let Some((_, def)) = self.project.object_macro(name, file) {
            if self.macro_depth > 32 {
                return Val::Unknown("macro expansion too deep".into());
            }
            return match &def.body {
                Some(body) => {
                    self.macro_depth += 1;
                    let saved = self.site_override;
                    self.site_override = Some(saved.unwrap_or((file, span)));
                    let v = self.rvalue(body);
                    self.site_override = saved;
                    self.macro_depth -= 1;
                    v
                }
                None => Val::Unknown(format!("macro `{name}` is not an expression").into()),
            };
        }
        if let Some(v) = self.options.macros.get(name) {
            return Val::Int(sym::konst(*v));
        }
        if let Some((ty, member)) = name.rsplit_once("::") {
            if let Some(v) = self.static_member(ty, member) {
                return v;
            }
            // `DevPtr<T>::data` in a member function of a struct derived from `DevPtr<T>`
            // (PCL's `PtrStep<T>::ptr`): its own object's member, named through the base
            if let Some(v) = self.own_member(member) {
                return v;
            }
            // `cudf::detail::warp_size`: a namespace's constant (namespaces are not modelled:
            // the file-scope declaration of that name)
            if let Some((fi, d)) = self.project.global(member, file) {
                if let Some(v) = self.file_scope(member, fi, d) {
                    return v;
                }
            }
        }
        // in a member function: a static member of its struct (`I` in `tile<I_, J_, T>`)
        if let Some(owner) = self.frames.last().and_then(|f| f.owner.clone()) {
            if let Some(v) = self.static_member(&owner, name) {
                return v;
            }
        }
        // `<math.h>`'s and CUDA's `math_constants.h`'s constants, where the run does not have
        // the header: floating-point numbers, as a literal is
        if MATH_CONSTANTS.contains(&name) {
            return Val::Int(super::expr::floating(&[]));
        }
        Val::Unknown(format!("`{name}` is not defined in the analysed files").into())
    }

    /// A file-scope declaration `d` of file `fi`, declared as its own file would (its array
    /// dimensions and initialiser see that file's names).
    fn file_scope(&mut self, name: &str, fi: usize, d: &Decl) -> Option<Val> {
        // a constant's value is the same wherever it is read: declared once per run (k2's
        // `LogLevel`s, read by every `K2_CHECK`'s logger, were declared 27,000 times a file)
        let constant = d.is_const && d.dims.is_empty();
        if let Some(v) = self
            .file_constants
            .get(&fi)
            .and_then(|m| m.get(name))
            .filter(|_| constant)
        {
            return Some(v.clone());
        }
        // CUB's agents each declare `enum { BLOCK_THREADS = AgentPolicy::BLOCK_THREADS }`:
        // a name found at file scope is such a member, whose initialiser, with the policy not
        // bound, names itself again; unchecked, 290,000 evaluations for one launch
        let key = d as *const Decl as usize;
        if self.file_scope_active.contains(&key) {
            return None;
        }
        self.file_scope_active.push(key);
        let v = self.file_scope_declared(name, fi, d);
        self.file_scope_active.pop();
        let v = v?;
        if constant && matches!(&v, Val::Int(s) if s.as_const().is_some()) {
            self.file_constants
                .entry(fi)
                .or_default()
                .insert(name.into(), v.clone());
        }
        Some(v)
    }

    fn file_scope_declared(&mut self, name: &str, fi: usize, d: &Decl) -> Option<Val> {
        let saved = self.frames.last().map(|f| f.file);
        if let Some(f) = self.frames.last_mut() {
            f.file = fi;
        }
        self.scopes.push(Vec::new());
        self.decl(d);
        let v = self.lookup_local(name).cloned();
        self.scopes.pop();
        if let (Some(f), Some(s)) = (self.frames.last_mut(), saved) {
            f.file = s;
        }
        Some(match v? {
            // a `__constant__` struct of parameters (rodinia's d_common): its members are
            // runtime values like a struct kernel parameter's
            Val::Unknown(_)
                if d.dims.is_empty()
                    && d.ty.pointer_depth == 0
                    && self.is_struct(&d.ty.name)
                    && !is_vector_type(&d.ty.name) =>
            {
                Val::Aggregate {
                    name: name.into(),
                    ty: d.ty.clone(),
                }
            }
            Val::Unknown(_) if !d.is_const => Val::Int(self.runtime_value(name, &d.ty, None)),
            v => v,
        })
    }

    /// `x128::size`: a static member of a struct, through typedefs, evaluated with the
    /// struct's template parameters bound to the arguments the type names (`Packed128<floatX>`).
    fn static_member(&mut self, ty: &str, member: &str) -> Option<Val> {
        // statics defined through each other (`ne = I * J / 32`) nest frames, and a type's
        // template arguments can name the member being looked up (hadamard's `kNThreads` in a
        // struct whose arguments are `kNThreads`): both bounded
        if self.frames.len() > MAX_CALL_DEPTH || self.static_depth > MAX_CALL_DEPTH {
            return None;
        }
        self.static_depth += 1;
        let v = self.static_member_inner(ty, member);
        self.static_depth -= 1;
        v
    }

    fn static_member_inner(&mut self, ty: &str, member: &str) -> Option<Val> {
        let full = self.through_typedefs(ty);
        let (name, binds) = self.struct_instance(&full)?;
        let def = types::struct_named(&name, self.types())?;
        let Some(init) = def
            .statics
            .iter()
            .find(|(n, _)| n == member)
            .map(|s| s.1.clone())
        else {
            // a base class's (PCL's `Spfh : KernelBase` reads `KernelBase`'s enum `FSize`)
            let bases: Vec<TypeRef> = def.bases.iter().map(|b| bind_base(&binds, b)).collect();
            return bases
                .iter()
                .find_map(|b| self.static_member(&b.name, member));
        };
        // a static defined through the struct's others (`kNLoads = kNItems / kNElts`) is
        // evaluated in the frame already bound: the arguments' names belong to whoever wrote
        // the type, and read again here each named the struct's own statics, nine deep and
        // nine wide (mamba's selective scan: 80 s for one kernel)
        let own = self
            .frames
            .last()
            .filter(|f| f.owner.as_deref() == Some(full.as_str()))
            .map(|f| f.template.clone());
        let template = match own {
            Some(t) => t,
            None => {
                let mut template = Vec::new();
                for (p, a) in &binds {
                    let arg = self.template_arg_text(a);
                    template.push((p.as_str().into(), arg));
                }
                template
            }
        };
        let file = self.file();
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
            file,
            ret: None,
            returns: Returns::default(),
            refs: Vec::new(),
            local_refs: Vec::new(),
            template,
            owner: Some(full.clone()),
            this: None,
        });
        let v = self.pure_rvalue(&init);
        self.frames.pop();
        Some(v)
    }

    /// The struct definition a type names, and its template parameters bound to the type's
    /// arguments (as written): a partial specialization whose pattern the arguments fit
    /// (`tile<I_, J_, half2>` for `tile<16, 4, half2>`, I_ = 16, J_ = 4), else the primary
    /// template.
    pub(super) fn struct_instance(&self, full: &str) -> Option<(String, Vec<(String, String)>)> {
        self.struct_instance_named(full).or_else(|| {
            // `typedef struct nbnxn_sci { int sci; ... } nbnxn_sci_t;`: the struct it names
            let resolved = self.through_typedefs(full);
            (resolved != full)
                .then(|| self.struct_instance_named(&resolved))
                .flatten()
        })
    }

    /// [`Self::struct_instance`] by the name as written.
    fn struct_instance_named(&self, full: &str) -> Option<(String, Vec<(String, String)>)> {
        // `Table<long long>::Mapping`: a struct nested in a class template, whose members use
        // the class's parameters (DGL's `DeviceOrderedHashTable<IdType>::Mapping { IdType key;
        // ... }`): the nested struct, with the class's arguments bound
        if let Some((owner, member)) = full
            .rsplit_once("::")
            .filter(|(o, m)| o.trim_end().ends_with('>') && super::call::is_identifier(m.trim()))
        {
            let (owner_def, binds) = self.struct_instance_named(owner.trim())?;
            let (owner_base, _) = split_template(&owner_def);
            let def =
                types::struct_named(&format!("{owner_base}::{}", member.trim()), self.types())
                    .or_else(|| types::struct_named(member.trim(), self.types()))?;
            return Some((def.name.to_string(), binds));
        }
        let (base, args) = split_template(full);
        self.struct_instance_of(base, &args).or_else(|| {
            // namespaces are not modelled: `qsim::Complex<double>` is the program's `Complex`
            // where no struct nests one of that qualified name
            let short = super::call::unqualified(base);
            (short != base)
                .then(|| self.struct_instance_of(short, &args))
                .flatten()
        })
    }

    /// [`Self::struct_instance`] of a type split into its name and arguments.
    pub(super) fn struct_instance_scan(
        &self,
        base: &str,
        args: &[String],
    ) -> Option<(String, Vec<(String, String)>)> {
        let squeeze = |t: &str| t.split_whitespace().collect::<String>();
        let structs = || self.types().iter().flat_map(|f| f.structs.iter());
        if !args.is_empty() {
            for s in structs() {
                if !s
                    .name
                    .strip_prefix(base)
                    .is_some_and(|r| r.starts_with('<'))
                {
                    continue;
                }
                let (_, pattern) = split_template(&s.name);
                if pattern.len() != args.len() {
                    continue;
                }
                let mut binds: Vec<(String, String)> = Vec::new();
                let fits = pattern.iter().zip(args).all(|(p, a)| {
                    if !s.template_params.iter().any(|t| t == p) {
                        return squeeze(p) == squeeze(a);
                    }
                    match binds.iter().find(|(n, _)| n == p) {
                        Some((_, v)) => v == a,
                        None => {
                            binds.push((p.clone(), a.clone()));
                            true
                        }
                    }
                });
                if fits {
                    return Some((s.name.to_string(), binds));
                }
            }
        }
        // a kernel's type parameter no launch binds is taken as 4 bytes wide, a `float`: where
        // the template is only declared and its specializations defined (apex's and
        // ColossalAI's `SharedMemory<float>` and `<double>`, `SharedMemory<U> shared;` in a
        // kernel of `U`), the `float` one
        let primary = structs().find(|s| s.name == base);
        let unbound = args.iter().any(|a| self.unbound_types.contains(a.as_str()));
        if unbound && primary.is_none_or(|p| p.fields.is_empty()) {
            let assumed: Vec<String> = args
                .iter()
                .map(|a| {
                    if self.unbound_types.contains(a.as_str()) {
                        "float".to_string()
                    } else {
                        a.clone()
                    }
                })
                .collect();
            let name = format!("{base}<{}>", assumed.join(", "));
            let squeezed = squeeze(&name);
            if let Some(spec) = structs().find(|s| squeeze(&s.name) == squeezed) {
                return Some((spec.name.to_string(), Vec::new()));
            }
        }
        let def = primary?;
        let binds = def
            .template_params
            .iter()
            .map(|p| p.to_string())
            .zip(args.iter().cloned())
            .collect();
        Some((def.name.to_string(), binds))
    }

    /// A template argument as a type names it (`16`, `half2` in `tile<16, 8, half2>`; `ncols`
    /// in `tile<ncols, 8, half2>` inside a template is the caller's `ncols`, and a name with a
    /// constant value is that value).
    pub(super) fn template_arg_text(&mut self, a: &str) -> TArg {
        if let Ok(v) = a.parse::<i64>() {
            return TArg::Val(Val::Int(sym::konst(v)));
        }
        let bound = self
            .frames
            .last()
            .and_then(|f| f.template.iter().find(|(n, _)| n == a))
            .map(|(_, v)| v.clone());
        if let Some(v) = bound {
            return v;
        }
        let is_name = a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name && types::builtin(a).is_none() {
            if let Val::Int(s) = self.lookup(a, Span::default()) {
                // (or the kernel's own value parameter no launch binds, a runtime value:
                // Open3D's `BlockSelect<K, V, Dir, NumWarpQ, ...>` in a kernel of NumWarpQ)
                let runtime = matches!(s.kind, sym::SymKind::Var(Var::Runtime(_)));
                if s.as_const().is_some() || runtime {
                    return TArg::Val(Val::Int(s));
                }
            }
        }
        TArg::Type(self.resolve_type(&TypeRef::named(a)))
    }

    /// Whether values of `ty` are objects (structs, template instances), through typedefs.
    pub(super) fn is_object_type(&self, ty: &TypeRef) -> bool {
        if ty.pointer_depth > 0 {
            return false;
        }
        let full = self.through_typedefs(&ty.name);
        let (base, _) = split_template(&full);
        // (CUDA's launch configuration, whose `gridDim` and `blockDim` the host code sets
        // member by member for `cudaLaunchKernelEx`)
        full.contains('<') || self.is_struct(base) || base == LAUNCH_CONFIG
    }

    /// The type a (non-pointer) typedef chain ends at, template arguments bound.
    pub(super) fn through_typedefs(&self, ty: &str) -> String {
        let resolved = self.resolve_type(&TypeRef::named(ty));
        self.typedef_chain_end(&resolved.name)
    }

    /// A template argument as written at a call or launch, evaluated in the current frame.
    pub(super) fn template_arg(&mut self, a: &TemplateArg, is_type: bool) -> TArg {
        match a {
            TemplateArg::Type(t) if is_type => TArg::Type(self.resolve_type(t)),
            // `k<BLOCK>`: the grammar cannot tell a name from a type
            TemplateArg::Type(t) => TArg::Val(self.lookup(&t.name, Span::default())),
            TemplateArg::Expr(e) => TArg::Val(self.pure_rvalue(e)),
        }
    }
}

pub(super) use crate::types::split_template;

/// The CUDA runtime's configuration of a `cudaLaunchKernelEx` launch.
pub(super) const LAUNCH_CONFIG: &str = "cudaLaunchConfig_t";

/// The names CUDA gives every kernel: `threadIdx`, `blockIdx`, `blockDim`, `gridDim`,
/// `warpSize`, and `NULL`.
/// Floating-point constants of `<math.h>` (POSIX) and CUDA's `math_constants.h`.
const MATH_CONSTANTS: &[&str] = &[
    "M_E",
    "M_LOG2E",
    "M_LOG10E",
    "M_LN2",
    "M_LN10",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_1_PI",
    "M_2_PI",
    "M_2_SQRTPI",
    "M_SQRT2",
    "M_SQRT1_2",
    "CUDART_PI",
    "CUDART_PI_F",
    "CUDART_PIO2",
    "CUDART_PIO2_F",
    "CUDART_2_OVER_PI",
    "CUDART_SQRT_2PI",
    "CUDART_INF",
    "CUDART_INF_F",
    "CUDART_NAN",
    "CUDART_NAN_F",
];

fn builtin_variable(name: &str) -> Option<Val> {
    let dim3 = |v: fn(u8) -> Var| Val::Dim3([sym::var(v(0)), sym::var(v(1)), sym::var(v(2))]);
    Some(match name {
        "warpSize" => Val::Int(sym::konst(32)),
        "NULL" => Val::Int(sym::konst(0)),
        "threadIdx" => dim3(Var::Tid),
        "blockIdx" => dim3(Var::BlockIdx),
        "blockDim" => dim3(Var::BlockDim),
        "gridDim" => dim3(Var::GridDim),
        _ => return None,
    })
}

/// `t` with a template struct's parameter put in as its instance binds it (`Real` is
/// `double` in `MatrixElement<double>`; `float*`, `const int` as written); `None` when `t`
/// names no parameter of it.
pub(super) fn bind_type(binds: &[(String, String)], t: &TypeRef) -> Option<TypeRef> {
    let (_, arg) = binds.iter().find(|(p, _)| *p == t.name)?;
    let stars = arg.matches('*').count() as u8;
    let bare = arg.trim_end_matches(|c: char| c == '*' || c.is_whitespace());
    Some(TypeRef {
        name: bare.trim_start_str("const ").trim().into(),
        pointer_depth: t.pointer_depth + stars,
        is_const: t.is_const || bare.starts_with("const "),
        ..t.clone()
    })
}

/// A base class as an instance names it: `PtrStep<T>` of `PtrStepSz<float>` is
/// `PtrStep<float>` (each template argument that is a parameter of the instance, bound).
pub(super) fn bind_base(binds: &[(String, String)], b: &TypeRef) -> TypeRef {
    if let Some(t) = bind_type(binds, b) {
        return t;
    }
    let (name, args) = types::split_template(&b.name);
    if args.is_empty() {
        return b.clone();
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| match binds.iter().find(|(p, _)| p == a) {
            Some((_, v)) => v.clone(),
            None => bind_base(binds, &TypeRef::named(a)).name.to_string(),
        })
        .collect();
    TypeRef {
        name: format!("{name}<{}>", args.join(", ")).into(),
        ..b.clone()
    }
}

impl KernelRun<'_> {
    /// The named data members of the struct `ty` names (a template's instance through its
    /// definition), with whether each is an array.
    pub(super) fn member_names(&self, ty: &str) -> Vec<(String, bool)> {
        self.member_names_through_bases(ty, 0)
    }

    /// [`Self::member_names`] with those of the base classes first (PCL's `PtrStep<T>`, whose
    /// `data` is its base `DevPtr<T>`'s), bases of bases a few deep.
    fn member_names_through_bases(&self, ty: &str, depth: usize) -> Vec<(String, bool)> {
        let Some((name, binds)) = self.struct_instance(ty) else {
            return Vec::new();
        };
        let Some(def) = types::struct_named(&name, self.types()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if depth < 4 {
            for b in &def.bases {
                let base = bind_base(&binds, b);
                out.extend(self.member_names_through_bases(&base.name, depth + 1));
            }
        }
        out.extend(
            def.fields
                .iter()
                .filter(|f| !f.name.is_empty())
                .map(|f| (f.name.to_string(), f.array_len.is_some())),
        );
        out
    }
}
