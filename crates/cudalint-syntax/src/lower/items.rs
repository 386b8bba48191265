//! Definitions: functions and kernels (with `__launch_bounds__` and launches in host code),
//! structs and unions with their members and static members, typedefs, `#define`s and
//! template declarations. Their declarations go through `decls.rs`, bodies through `stmts.rs`.

use super::{
    all_children, exprs::parse_expression_snippet, fid, first_error, named_children, span, Lowerer,
};
use crate::model::*;
use tree_sitter::Node;

impl<'s> Lowerer<'s> {
    pub(super) fn template_decl(&mut self, n: Node) {
        self.nested_template_decl(n, &[]);
    }

    /// `template <typename ProbT> template <int NT, int VT> ctcStatus_t
    /// GpuCTC<ProbT>::launch<NT, VT>(...)`: a member template defined outside its class takes
    /// the class's parameters first, then its own, as one defined in the class body does.
    fn nested_template_decl(&mut self, n: Node, outer: &[TemplateParam]) {
        let mut params = outer.to_vec();
        params.extend(self.template_params(n));
        for child in named_children(n) {
            match child.kind() {
                "function_definition" => self.function(child, &params),
                // (hoomd's `template <unsigned int group_size> union group_storage`)
                "struct_specifier" | "class_specifier" | "union_specifier" => {
                    self.struct_template = params.clone();
                    self.struct_def(child, None);
                    self.struct_template.clear();
                    if let Some(s) = self.model.structs.last_mut() {
                        s.template_params = params.iter().map(|p| p.name.clone()).collect();
                    }
                }
                "template_declaration" => self.nested_template_decl(child, &params),
                // an alias template: a typedef whose parameters a use fills in
                "alias_declaration" => {
                    let before = self.model.typedefs.len();
                    self.alias(child);
                    if let Some(t) = self
                        .model
                        .typedefs
                        .get_mut(before..)
                        .and_then(|t| t.last_mut())
                    {
                        t.params = params.iter().map(|p| p.name.clone()).collect();
                    }
                }
                _ => {}
            }
        }
    }

    /// The parameters a `template <...>` declaration lists.
    fn template_params(&mut self, n: Node) -> Vec<TemplateParam> {
        let mut params = Vec::new();
        if let Some(list) = n.child_by_field_id(fid().parameters.get()) {
            for p in named_children(list) {
                // `template <class> class Func` is named by its inner `class Func`: skipping
                // it would bind the next parameter to its argument
                let p = match p.kind() {
                    "template_template_parameter_declaration" => named_children(p)
                        .into_iter()
                        .rev()
                        .find(|c| c.kind().ends_with("type_parameter_declaration"))
                        .unwrap_or(p),
                    _ => p,
                };
                let is_type = matches!(
                    p.kind(),
                    "type_parameter_declaration" | "optional_type_parameter_declaration"
                );
                let name_node = p
                    .child_by_field_id(fid().declarator.get())
                    .or_else(|| p.child_by_field_id(fid().name.get()))
                    .or_else(|| {
                        named_children(p)
                            .into_iter()
                            .rev()
                            .find(|c| c.kind() == "type_identifier" || c.kind() == "identifier")
                    });
                let Some(name_node) = name_node else { continue };
                let default = p
                    .child_by_field_id(fid().default_value.get())
                    .map(|d| self.template_arg(d, 0))
                    .or_else(|| {
                        p.child_by_field_id(fid().default_type.get())
                            .map(|d| TemplateArg::Type(self.type_of(d, None)))
                    });
                params.push(TemplateParam {
                    name: self.text(name_node).into(),
                    is_type,
                    default,
                });
            }
        }
        params
    }

    pub(super) fn define(&mut self, n: Node) {
        let Some(name) = n.child_by_field_id(fid().name.get()) else {
            return;
        };
        // (a variadic macro's `...` is a parameter named `__VA_ARGS__`, as its body uses it)
        let params = n.child_by_field_id(fid().parameters.get()).map(|p| {
            let mut names: Vec<Name> = named_children(p)
                .into_iter()
                .map(|c| Name::from(self.text(c)))
                .collect();
            if self
                .text(p)
                .trim_end_matches([')', ' ', '\t'])
                .ends_with("...")
                && !names.last().is_some_and(|l| l.ends_with("..."))
            {
                names.push(Name::from("__VA_ARGS__"));
            }
            names
        });
        let value = n.child_by_field_id(fid().value.get());
        let replacement = |v: Node| match &params {
            Some(params) => infix_params(self.text(v), params),
            None => std::borrow::Cow::Borrowed(self.text(v)),
        };
        let body = value.and_then(|v| {
            // `#define xor4_32(a,b,c,d) ((a ^ b) ^ (c ^ d));` (ccminer): used as `y0 =
            // xor4_32(...);`, the `;` only ends the statement early; the body is the expression
            let raw = &*replacement(v);
            let trimmed = raw.trim_end();
            let single_end = trimmed.ends_with(';') && raw.matches(';').count() == 1;
            let owned;
            let text = if single_end {
                owned = format!(
                    "{} {}",
                    &trimmed[..trimmed.len() - 1],
                    &raw[trimmed.len()..]
                );
                owned.as_str()
            } else {
                raw
            };
            let gnu = super::statement_exprs::as_expression(text);
            let text = gnu.as_deref().unwrap_or(text);
            match &params {
                Some(params) => {
                    let text = unparenthesize_params(&crate::substitute::mark_pastes(text), params);
                    parse_expression_snippet(&text, v.start_byte())
                }
                None => parse_expression_snippet(text, v.start_byte()),
            }
        });
        // `#define su3_vector dsu3_vector`: a name that may be a type; the analysis takes it as
        // one where it names a typedef or struct of the program
        let as_type = value.filter(|_| params.is_none()).and_then(|v| {
            type_text(self.text(v)).or_else(|| match &body {
                Some(Expr {
                    kind: ExprKind::Ident(x),
                    ..
                }) => Some(TypeRef::named(x)),
                _ => None,
            })
        });
        let statement = value.filter(|_| params.is_some()).and_then(|v| {
            let replaced = replacement(v);
            let text = crate::substitute::mark_pastes(&replaced);
            super::stmts::parse_statement_snippet(&text, v.start_byte())
        });
        // not an expression and not one statement, but statements: a run of them
        let sequence = value
            .filter(|v| {
                statement.is_none()
                    && body.is_none()
                    && params.is_some()
                    && self.text(*v).contains(';')
            })
            .and_then(|v| {
                let replaced = replacement(v);
                let text = crate::substitute::mark_pastes(&replaced);
                super::stmts::parse_sequence_snippet(&text, v.start_byte())
            });
        let launches = value
            .filter(|v| params.is_some() && self.text(*v).contains(">>>"))
            .map(|v| {
                let text = crate::substitute::mark_pastes(self.text(v));
                super::stmts::launches_in_snippet(&text, v.start_byte())
            })
            .unwrap_or_default();
        let as_params = value
            .filter(|v| params.is_none() && body.is_none() && self.text(*v).contains(' '))
            .and_then(|v| parameter_list_snippet(self.text(v), v.start_byte()));
        let pastes = params.is_some() && value.is_some_and(|v| self.text(v).contains("##"));
        let empty = value.is_none_or(|v| self.text(v).trim().is_empty());
        self.model.defines.push(Define {
            pastes,
            empty,
            name: self.text(name).into(),
            params,
            body,
            as_type,
            sequence: sequence.is_some(),
            statement: statement.or(sequence).map(Box::new),
            launches,
            as_params,
            span: span(n),
        });
    }

    /// `using key_t = int;`: a typedef by another spelling.
    pub(super) fn alias(&mut self, n: Node) {
        let (Some(name), Some(ty)) = (
            n.child_by_field_id(fid().name.get()),
            n.child_by_field_id(fid().r#type.get()),
        ) else {
            return;
        };
        let ty = self.type_of(ty, None);
        let name = self.typedef_name(self.text(name));
        self.model.typedefs.push(Typedef {
            name: name.into(),
            ty,
            params: Vec::new(),
        });
    }

    pub(super) fn typedef(&mut self, n: Node) {
        let ty_node = n.child_by_field_id(fid().r#type.get());
        if let Some(t) = ty_node.filter(|t| t.kind() == "enum_specifier") {
            self.enum_def(t);
        }
        // `typedef struct { ... } block_q4_0;`: the struct is known by the typedef's name
        let mut anonymous_as = None;
        if let Some(t) = ty_node {
            if matches!(
                t.kind(),
                "struct_specifier" | "class_specifier" | "union_specifier"
            ) && t.child_by_field_id(fid().body.get()).is_some()
            {
                let alias = n
                    .child_by_field_id(fid().declarator.get())
                    .and_then(|d| self.declarator_parts(d).0)
                    .map(|d| self.text(d).to_string());
                if t.child_by_field_id(fid().name.get()).is_none() {
                    anonymous_as = alias.clone();
                }
                self.struct_def(t, alias);
            }
        }
        let mut c = n.walk();
        for d in n.children_by_field_id(fid().declarator, &mut c) {
            let (name, ptr, _, _) = self.declarator_parts(d);
            if let (Some(name), Some(t)) = (name, ty_node) {
                let name = self.text(name).to_string();
                let mut ty = match &anonymous_as {
                    // the struct itself, not a typedef of it
                    Some(s) if *s == name && ptr == 0 => continue,
                    Some(s) => TypeRef::named(s),
                    None => self.type_of(t, Some(n)),
                };
                ty.pointer_depth += ptr;
                let name = self.typedef_name(&name);
                self.model.typedefs.push(Typedef {
                    name: name.into(),
                    ty,
                    params: Vec::new(),
                });
            }
        }
    }

    /// `template <> struct IndPrecisionMap<AMGX_indInt> { typedef int Type; };`: the type is
    /// filed as `IndPrecisionMap<AMGX_indInt>::Type`, the name code outside the struct uses
    /// (`typedef typename IndPrecisionMap<AMGX_indInt>::Type INDEX_TYPE;`). A struct defined
    /// in the typedef itself is left out: it would be filed under its own name, unqualified.
    fn member_typedef(&mut self, f: Node, owner: &str) {
        let defines_struct = f
            .child_by_field_id(fid().r#type.get())
            .is_some_and(|t| t.child_by_field_id(fid().body.get()).is_some());
        if defines_struct {
            return;
        }
        let before = self.model.typedefs.len();
        if f.kind() == "alias_declaration" {
            self.alias(f);
        } else {
            self.typedef(f);
        }
        let owner = crate::model::compact_type_name(owner);
        for t in &mut self.model.typedefs[before..] {
            t.name = compact_str::format_compact!("{owner}::{}", t.name);
        }
    }

    pub(super) fn struct_def(&mut self, n: Node, alias: Option<String>) {
        let Some(body) = n.child_by_field_id(fid().body.get()) else {
            return;
        };
        // nested struct and union members are lowered as structs of their own: bounded
        if self.struct_depth > 32 {
            return;
        }
        let name = n
            .child_by_field_id(fid().name.get())
            .map(|x| self.text(x).to_string())
            .or(alias.clone());
        let Some(name) = name else { return };
        let template = std::mem::take(&mut self.struct_template);
        let mut fields = Vec::new();
        let mut statics = Vec::new();
        let mut extern_shared = None;
        for f in named_children(body) {
            if f.kind() == "function_definition" && extern_shared.is_none() {
                extern_shared = self.extern_shared_in(f);
            }
            if f.kind() == "function_definition" {
                self.member_function(f, &name, &template);
                continue;
            }
            if f.kind() == "template_declaration" {
                self.member_template(f, &name, &template);
                continue;
            }
            if matches!(f.kind(), "type_definition" | "alias_declaration") {
                self.member_typedef(f, &name);
                continue;
            }
            if f.kind() != "field_declaration" {
                continue;
            }
            let is_static = named_children(f)
                .iter()
                .any(|c| c.kind() == "storage_class_specifier" && self.text(*c) == "static");
            if is_static {
                let mut c = f.walk();
                let names: Vec<Node> = f.children_by_field_id(fid().declarator, &mut c).collect();
                if let (Some(d), Some(v)) = (
                    names.first(),
                    f.child_by_field_id(fid().default_value.get()),
                ) {
                    statics.push((self.text(*d).into(), self.expr(v, 0)));
                }
                continue;
            }
            let Some(t) = f.child_by_field_id(fid().r#type.get()) else {
                continue;
            };
            // `enum { CTA_SIZE = 256, WARPS = CTA_SIZE / 32 };` in a struct (PCL's functors):
            // its enumerators are the struct's constants, named unqualified by its member
            // functions and `Est::CTA_SIZE` outside; a scoped enum's are named by their enum
            if t.kind() == "enum_specifier" {
                let scoped = all_children(t)
                    .iter()
                    .any(|c| matches!(c.kind(), "class" | "struct"));
                match t.child_by_field_id(fid().body.get()) {
                    Some(body) if !scoped => {
                        for (n, init, _, _) in self.enumerators(body, "") {
                            statics.push((n, init));
                        }
                    }
                    _ => self.enum_def(t),
                }
                if f.child_by_field_id(fid().declarator.get()).is_none() {
                    continue;
                }
            }
            let mut base = self.type_of(t, Some(f));
            let nested = matches!(
                t.kind(),
                "struct_specifier" | "class_specifier" | "union_specifier"
            ) && t.child_by_field_id(fid().body.get()).is_some();
            if nested {
                // `union { struct { half d, dmin; }; half2 dm; };` (llama.cpp's quant blocks)
                let inner = match t.child_by_field_id(fid().name.get()) {
                    Some(x) => self.text(x).to_string(),
                    None => format!("{name}::<anonymous {}>", fields.len()),
                };
                self.struct_depth += 1;
                let before = self.model.structs.len();
                self.struct_def(t, Some(inner.clone()));
                self.struct_depth -= 1;
                // `NEP::ANN` names this one where several classes nest an `ANN` of their own
                if t.child_by_field_id(fid().name.get()).is_some() {
                    if let Some(def) = self.model.structs[before..]
                        .iter()
                        .rev()
                        .find(|d| d.name == inner)
                    {
                        let mut qualified = def.clone();
                        qualified.name = compact_str::format_compact!("{name}::{inner}");
                        self.model.structs.push(qualified);
                    }
                }
                base = TypeRef::named(&inner);
                if f.child_by_field_id(fid().declarator.get()).is_none() {
                    // `struct ParaMB { ... };` in a class declares a type, no member; only an
                    // unnamed one's members are the enclosing struct's
                    if t.child_by_field_id(fid().name.get()).is_some() {
                        continue;
                    }
                    fields.push(FieldDef {
                        name: Name::default(),
                        ty: base,
                        array_len: None,
                        inner_dims: Vec::new(),
                        align: None,
                        is_reference: false,
                    });
                    continue;
                }
            }
            let align = named_children(f)
                .into_iter()
                .filter(|q| q.kind() == "type_qualifier")
                .flat_map(named_children)
                .find(|q| q.kind() == "alignas_qualifier")
                .and_then(|q| q.named_child(0))
                .map(|e| self.expr(e, 0));
            let mut c = f.walk();
            for d in f.children_by_field_id(fid().declarator, &mut c) {
                // a member function's declaration (`void compute(int n);`, `const T&
                // occupancy() const;`, `T* data();`) takes no room
                let mut f = d;
                while matches!(f.kind(), "reference_declarator" | "pointer_declarator") {
                    match f
                        .child_by_field_id(fid().declarator.get())
                        .or_else(|| f.named_children(&mut f.walk()).last())
                    {
                        Some(inner) => f = inner,
                        None => break,
                    }
                }
                if f.kind() == "function_declarator"
                    && f.child_by_field_id(fid().declarator.get())
                        .is_some_and(|n| matches!(n.kind(), "field_identifier" | "identifier"))
                {
                    continue;
                }
                let (name_node, ptr, dims, _) = self.declarator_parts(d);
                let Some(name_node) = name_node else { continue };
                let mut ty = base.clone();
                ty.pointer_depth += ptr;
                let array_len = dims.first().and_then(|d| d.size.clone());
                let inner_dims = dims.iter().skip(1).filter_map(|d| d.size.clone()).collect();
                fields.push(FieldDef {
                    name: self.text(name_node).into(),
                    ty,
                    array_len,
                    inner_dims,
                    align: align.clone(),
                    is_reference: names_a_reference(d),
                });
            }
        }
        if let Some(alias) = alias {
            if alias != name {
                self.model.typedefs.push(Typedef {
                    name: alias.into(),
                    ty: TypeRef::named(&name),
                    params: Vec::new(),
                });
            }
        }
        let align = named_children(n)
            .into_iter()
            .find(|c| c.kind() == "alignas_qualifier")
            .and_then(|q| named_children(q).into_iter().next())
            .map(|e| self.expr(e, 0));
        let bases = named_children(n)
            .into_iter()
            .filter(|c| c.kind() == "base_class_clause")
            .flat_map(named_children)
            .filter(|c| c.kind() != "access_specifier")
            .map(|c| self.type_of(c, None))
            .collect();
        self.model.structs.push(StructDef {
            name: name.into(),
            bases,
            fields,
            template_params: Vec::new(),
            statics,
            extern_shared,
            is_union: n.kind() == "union_specifier",
            align,
            span: span(n),
        });
    }

    /// A member function defined in the body of struct `owner` (llama.cpp's
    /// `tile<I, J, T>::get_i`), as `owner::name` with the struct's template parameters first.
    fn member_function(&mut self, f: Node, owner: &str, template: &[TemplateParam]) {
        let before = self.model.functions.len();
        self.function(f, template);
        if self.model.functions.len() > before {
            if let Some(func) = self.model.functions.last_mut() {
                func.name = compact_str::format_compact!("{owner}::{}", func.name);
                func.owner = Some(owner.to_string());
            }
        }
    }

    /// A template in the body of struct `owner`: a member function template (qsim's
    /// `template <unsigned G> void ApplyGateH(...)`, whose launches are host code like any
    /// other) takes the struct's parameters first, then its own; a nested struct template
    /// (`template <unsigned G> struct IndicesH`) is a struct of its own, also filed under
    /// `owner::` as a nested struct is.
    fn member_template(&mut self, f: Node, owner: &str, template: &[TemplateParam]) {
        if self.struct_depth > 32 {
            return;
        }
        let own = self.template_params(f);
        for child in named_children(f) {
            match child.kind() {
                "function_definition" => {
                    let all: Vec<TemplateParam> = template.iter().chain(&own).cloned().collect();
                    self.member_function(child, owner, &all);
                }
                "struct_specifier" | "class_specifier" | "union_specifier" => {
                    let before = self.model.structs.len();
                    self.struct_template = own.clone();
                    self.struct_depth += 1;
                    self.struct_def(child, None);
                    self.struct_depth -= 1;
                    self.struct_template.clear();
                    let Some(def) = self
                        .model
                        .structs
                        .get_mut(before..)
                        .and_then(|s| s.last_mut())
                    else {
                        continue;
                    };
                    def.template_params = own.iter().map(|p| p.name.clone()).collect();
                    let mut qualified = def.clone();
                    qualified.name = compact_str::format_compact!("{owner}::{}", def.name);
                    self.model.structs.push(qualified);
                }
                _ => {}
            }
        }
    }

    /// The name of an `extern __shared__` array declared in a member function's body.
    fn extern_shared_in(&mut self, f: Node) -> Option<String> {
        let mut stack = vec![f.child_by_field_id(fid().body.get())?];
        let mut guard = 0;
        while let Some(x) = stack.pop() {
            guard += 1;
            if guard > 4096 {
                return None;
            }
            if x.kind() == "declaration" {
                let text = self.text(x);
                if text.contains("extern") && text.contains("__shared__") {
                    let d = x.child_by_field_id(fid().declarator.get())?;
                    let (name, _, _, _) = self.declarator_parts(d);
                    return name.map(|n| self.text(n).to_string());
                }
            }
            stack.extend(named_children(x));
        }
        None
    }

    pub(super) fn function(&mut self, n: Node, template_params: &[TemplateParam]) {
        let mut kind = FnKind::Host;
        let mut device = false;
        let mut host = false;
        let mut launch_bounds = None;
        for c in all_children(n) {
            match c.kind() {
                "__global__" => kind = FnKind::Global,
                "__device__" => device = true,
                "__host__" => host = true,
                "launch_bounds" => {
                    launch_bounds = c.named_child(0).map(|e| self.expr(e, 0));
                }
                _ => match self.text(c) {
                    "__global__" | crate::preprocess::KERNEL_MARK => kind = FnKind::Global,
                    "__device__" | crate::preprocess::DEVICE_MARK => device = true,
                    "__host__" => host = true,
                    _ => {}
                },
            }
        }
        if kind != FnKind::Global {
            kind = match (device, host) {
                (true, true) => FnKind::HostDevice,
                (true, false) => FnKind::Device,
                _ => FnKind::Host,
            };
        }
        let Some(mut decl) = n.child_by_field_id(fid().declarator.get()) else {
            return;
        };
        let mut guard = 0;
        let mut returns_reference = false;
        let mut pointers = 0u8;
        while decl.kind() != "function_declarator" {
            guard += 1;
            returns_reference |= decl.kind() == "reference_declarator";
            pointers += u8::from(decl.kind() == "pointer_declarator");
            // `__device__ T& at(int i)`, `S& operator=(const S&)`: the grammar's reference
            // declarator names no field for what it wraps
            let inner = decl.child_by_field_id(fid().declarator.get()).or_else(|| {
                (decl.kind() == "reference_declarator")
                    .then(|| decl.named_child(0))
                    .flatten()
            });
            match inner {
                Some(d) if guard < 16 => decl = d,
                _ => return,
            }
        }
        let Some(name_node) = decl.child_by_field_id(fid().declarator.get()) else {
            return;
        };
        let name = match name_node.kind() {
            "template_function" => specialization_name(self.text(name_node)),
            _ => self.text(name_node).to_string(),
        };
        let plist = decl.child_by_field_id(fid().parameters.get());
        let params = plist.map(|p| self.params_of(p)).unwrap_or_default();
        let param_macro = plist.and_then(|p| self.parameter_macro(p));
        let parse_error = if n.has_error() { first_error(n) } else { None };
        let returns_pointer = n
            .child_by_field_id(fid().r#type.get())
            .filter(|_| pointers > 0 && !returns_reference)
            .map(|t| {
                let mut ty = self.type_of(t, Some(n));
                ty.pointer_depth += pointers;
                ty
            });
        let index = self.model.functions.len();
        self.model.functions.push(Function {
            name: name.into(),
            name_span: span(name_node),
            span: span(n),
            kind,
            template_params: template_params.to_vec(),
            params,
            body: None,
            launch_bounds,
            parse_error,
            owner: None,
            returns_reference,
            returns_pointer,
            param_macro,
        });
        // Host code is lowered too: its launches, the calls through which a templated host
        // wrapper is instantiated (`bb_segsort(keys, vals, n)` deduces the K and T its launches
        // pass on), and functions whose device specifier is a macro too short to rewrite (`HD
        // float f()` with `#define HD __host__ __device__`), which device code calls.
        let outer = self.current_fn.replace(index);
        let outer_pointers = std::mem::take(&mut self.kernel_pointers);
        let outer_typedefs = self.local_typedefs.len();
        let mut body = n
            .child_by_field_id(fid().body.get())
            .map(|b| self.block(b, 0));
        // a constructor's member initialisers (`: buf(b), free_index(t)`) run before its
        // body, as assignments to the members
        let inits = self.member_initialisers(n);
        if let (Some(b), false) = (&mut body, inits.is_empty()) {
            b.splice(0..0, inits);
        }
        self.current_fn = outer;
        self.kernel_pointers = outer_pointers;
        self.local_typedefs.truncate(outer_typedefs);
        self.model.functions[index].body = body;
    }

    /// The one parameter that is a bare type name with no declarator, `k(KARGS)` or `k(KARGS,
    /// int n)`: an object-like macro standing for parameters, with how many named parameters
    /// come before it.
    fn parameter_macro(&self, plist: Node) -> Option<(usize, Name)> {
        let declared: Vec<Node> = named_children(plist)
            .into_iter()
            .filter(|p| {
                matches!(
                    p.kind(),
                    "parameter_declaration" | "optional_parameter_declaration"
                )
            })
            .collect();
        let bare = |p: &Node| {
            p.child_by_field_id(fid().declarator.get()).is_none()
                && p.child_by_field_id(fid().r#type.get())
                    .is_some_and(|t| t.kind() == "type_identifier")
        };
        let mut found = declared.iter().enumerate().filter(|(_, p)| bare(p));
        let (at, p) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        let t = p.child_by_field_id(fid().r#type.get())?;
        Some((at, Name::from(self.text(t))))
    }

    /// A parameter list's parameters, of a function or a lambda.
    pub(super) fn params_of(&mut self, plist: Node) -> Vec<Param> {
        let mut params = Vec::new();
        for p in named_children(plist) {
            let optional = p.kind() == "optional_parameter_declaration";
            if p.kind() != "parameter_declaration" && !optional {
                continue;
            }
            let Some(t) = p.child_by_field_id(fid().r#type.get()) else {
                continue;
            };
            let mut ty = self.type_of(t, Some(p));
            // an unnamed parameter (CUB's tags, `Int2Type<false> /*is_keys_only*/`, `int)`)
            // still takes an argument: without it no call has the function's arity. Not
            // `(void)`, nor a bare type name alone, which may be a macro standing for
            // parameters (`k(KARGS)`, see `parameter_macro`)
            let unnamed = || Name::from(format!("__unnamed_{}", params.len()));
            let Some(d) = p.child_by_field_id(fid().declarator.get()) else {
                let void = t.kind() == "primitive_type" && self.text(t) == "void";
                if !void && t.kind() != "type_identifier" {
                    params.push(Param {
                        name: unnamed(),
                        ty,
                        is_reference: false,
                        is_restrict: false,
                        dims: Vec::new(),
                        default: None,
                        span: span(p),
                    });
                }
                continue;
            };
            let (pname, ptr, mut dims, _) = self.declarator_parts(d);
            let pname = pname
                .map(|n| Name::from(self.text(n)))
                .unwrap_or_else(unnamed);
            if pointer_to_rows(d) {
                // `float (*rows)[33]`: a pointer to rows of 33, as `float rows[][33]` is
                ty.pointer_depth += ptr;
            } else {
                // an array parameter is a pointer to its first dimension's elements
                ty.pointer_depth += ptr + u8::from(!dims.is_empty());
                if !dims.is_empty() {
                    dims.remove(0);
                }
            }
            let default = optional
                .then(|| p.child_by_field_id(fid().default_value.get()))
                .flatten()
                .map(|v| self.expr(v, 0));
            params.push(Param {
                name: pname,
                ty,
                is_reference: names_a_reference(d),
                is_restrict: self.restrict_pointer(d),
                dims,
                default: default.map(Box::new),
                span: span(p),
            });
        }
        params.shrink_to_fit();
        params
    }

    fn member_initialisers(&mut self, n: Node) -> Vec<Stmt> {
        let mut out = Vec::new();
        for list in named_children(n) {
            if list.kind() != "field_initializer_list" {
                continue;
            }
            for init in named_children(list) {
                let parts = named_children(init);
                let (Some(field), Some(args)) = (parts.first(), parts.get(1)) else {
                    continue;
                };
                let values = named_children(*args);
                // `Base<const T>(p, n)`, `Base(p)`: a base class's constructor, when the name is
                // one (a member's name is no base: the analysis tells them apart)
                let mut call = vec![Expr {
                    kind: ExprKind::Ident(self.text(*field).into()),
                    span: span(*field),
                }];
                call.extend(values.iter().map(|v| self.expr(*v, 0)));
                out.push(Stmt::Expr(Expr {
                    kind: ExprKind::Call {
                        callee: crate::model::BASE_INIT.into(),
                        template_args: Default::default(),
                        args: call.into(),
                    },
                    span: span(init),
                }));
                // `tos(-1)` or `tos{-1}`: one value; several build an object, not modelled
                let [value] = values.as_slice() else {
                    continue;
                };
                if field.kind() != "field_identifier" {
                    continue;
                }
                let value = self.expr(*value, 0);
                // `this->buf`: `buf(buf)` sets the member from the parameter of its name
                let this = Expr {
                    kind: ExprKind::Ident("this".into()),
                    span: span(*field),
                };
                let lhs = Expr {
                    kind: ExprKind::Field {
                        base: Box::new(this),
                        field: self.text(*field).into(),
                        arrow: true,
                    },
                    span: span(*field),
                };
                out.push(Stmt::Expr(Expr {
                    kind: ExprKind::Assign {
                        op: None,
                        lhs: Box::new(lhs),
                        rhs: Box::new(value),
                    },
                    span: span(init),
                }));
            }
        }
        out
    }
}

/// A macro's replacement read as a function's parameter list (`RysIntEnvVars envs, JKMatrix
/// jk, float *q_cond_ij`), each parameter named; `None` when it is not one.
fn parameter_list_snippet(text: &str, offset: usize) -> Option<Vec<Param>> {
    const PREFIX: &str = "void __cudalint_p(";
    if text.len() > 4096 {
        return None;
    }
    let text = super::stmts::joined_lines(text);
    let src = format!("{PREFIX}{text}\n);");
    let tree = crate::with_parser(|p| p.parse(&src, None))?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let decl = root
        .named_child(0)?
        .child_by_field_id(fid().declarator.get())?;
    let plist = decl.child_by_field_id(fid().parameters.get())?;
    let declared = named_children(plist).len();
    let mut l = Lowerer::new(&src);
    let mut params = l.params_of(plist);
    if params.is_empty() || params.len() != declared {
        return None;
    }
    crate::shift::Shift::shift(&mut params, offset as i64 - PREFIX.len() as i64);
    Some(params)
}

/// A macro body with its parameters' parentheses dropped, in place (`a_u[base + (i) + ni *
/// (j)]` -> `a_u[base +  i  + ni *  j ]`): the grammar reads `(i) + ni` as a cast of `+ni` to
/// a type `i`, and the analysis binds each parameter to its argument's value, so the
/// parentheses that protect the expansion's precedence are not needed. Parentheses of a
/// call or a subscript (`f(i)`) are kept.
/// A macro's replacement with each parameter that stands between two operands, as an
/// operator does (gpu-voxels' `#define REDUCE(shared, idx, nThreads, op) ... shared[idx] =
/// shared[idx] op shared[idx + r]`), written as `+`: the replacement parses, with the
/// accesses where they are; which operator the invocation gives does not move an address.
/// Only after `]` or `)`, where no declaration's type can end (`const T x`).
fn infix_params<'a>(text: &'a str, params: &[Name]) -> std::borrow::Cow<'a, str> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < b.len() {
        if !word(b[i]) || (i > 0 && word(b[i - 1])) {
            i += 1;
            continue;
        }
        let mut e = i;
        while e < b.len() && word(b[e]) {
            e += 1;
        }
        let is_param = params.iter().any(|p| p.as_bytes() == &b[i..e]);
        let before = b[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
        let after = b[e..]
            .iter()
            .find(|c| !c.is_ascii_whitespace() && **c != b'\\');
        if is_param
            && matches!(before, Some(b']' | b')'))
            && after.is_some_and(|&c| word(c) || c == b'(')
        {
            let o = out.get_or_insert_with(|| b.to_vec());
            o[i] = b'+';
            o[i + 1..e].fill(b' ');
        }
        i = e;
    }
    match out {
        Some(o) => std::borrow::Cow::Owned(String::from_utf8(o).unwrap_or_else(|_| text.into())),
        None => std::borrow::Cow::Borrowed(text),
    }
}

fn unparenthesize_params(text: &str, params: &[Name]) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'(' {
            i += 1;
            continue;
        }
        let mut p = i;
        while p > 0 && b[p - 1].is_ascii_whitespace() {
            p -= 1;
        }
        let called = p > 0 && (word(b[p - 1]) || matches!(b[p - 1], b')' | b']'));
        let mut s = i + 1;
        while s < b.len() && b[s].is_ascii_whitespace() {
            s += 1;
        }
        let mut e = s;
        while e < b.len() && word(b[e]) {
            e += 1;
        }
        let mut close = e;
        while close < b.len() && b[close].is_ascii_whitespace() {
            close += 1;
        }
        let is_param = params.iter().any(|p| p.as_bytes() == &b[s..e]);
        if !called && is_param && b.get(close) == Some(&b')') {
            out[i] = b' ';
            out[close] = b' ';
            i = close + 1;
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// A macro replacement that spells a type: C's type keywords (`double`, `unsigned long long`,
/// `const float`), or one name that ends in a type's usual suffix or is a CUDA scalar
/// (`__half`, `uint64_t`, `my_real_t`), either followed by `*`s. A name alone that could be a
/// value (`#define N M`) is not read as a type.
pub(super) fn type_text(text: &str) -> Option<TypeRef> {
    const KEYWORDS: &[&str] = &[
        "void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    ];
    const SCALARS: &[&str] = &[
        "half",
        "__half",
        "half2",
        "__half2",
        "__nv_bfloat16",
        "__nv_bfloat162",
        "nv_bfloat16",
        "size_t",
        "ptrdiff_t",
        "float2",
        "float4",
        "double2",
        "int2",
        "int4",
        "uint",
        "ulong",
        "uchar",
        "ushort",
    ];
    let text = text.split("//").next()?.split("/*").next()?.trim();
    let stars = text
        .chars()
        .rev()
        .take_while(|c| *c == '*' || c.is_whitespace());
    let pointer_depth = stars.filter(|c| *c == '*').count();
    let words: Vec<&str> = text
        .trim_end_matches(|c: char| c == '*' || c.is_whitespace())
        .split_whitespace()
        .collect();
    let is_const = words.first() == Some(&"const");
    let is_volatile = words.contains(&"volatile");
    let words: Vec<&str> = words
        .into_iter()
        .filter(|w| !matches!(*w, "const" | "volatile"))
        .collect();
    let ident = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if words.is_empty() || pointer_depth > 3 || !words.iter().all(|w| ident(w)) {
        return None;
    }
    let typelike = if words.len() > 1 {
        words.iter().all(|w| KEYWORDS.contains(w))
    } else {
        let w = words[0];
        KEYWORDS.contains(&w)
            || SCALARS.contains(&w)
            || w.ends_with("_t")
            || w.ends_with("int8")
            || w.ends_with("int16")
            || w.ends_with("int32")
            || w.ends_with("int64")
    };
    typelike.then(|| TypeRef {
        name: words.join(" ").into(),
        pointer_depth: pointer_depth as u8,
        is_const,
        is_volatile,
    })
}

/// Whether a parameter's declarator declares a reference: `T& r`, or a reference to a pointer
/// (`const T*& p`, whose `*` the grammar puts around the `&`).
fn names_a_reference(mut d: Node) -> bool {
    loop {
        match d.kind() {
            "reference_declarator" => return true,
            "pointer_declarator" => match d.child_by_field_id(fid().declarator.get()) {
                Some(inner) => d = inner,
                None => return false,
            },
            _ => return false,
        }
    }
}

/// Whether a declarator declares a pointer to arrays (`(*rows)[33]`, `(*p)[4][4]`): a pointer
/// in parentheses with array dimensions outside them.
pub(super) fn pointer_to_rows(d: Node) -> bool {
    let mut cur = Some(d);
    let mut under_array = false;
    for _ in 0..crate::lower::MAX_DEPTH {
        let Some(n) = cur else { return false };
        match n.kind() {
            "array_declarator" => {
                under_array = true;
                cur = n.child_by_field_id(fid().declarator.get());
            }
            "parenthesized_declarator" => {
                return under_array
                    && n.named_child(0)
                        .is_some_and(|p| p.kind() == "pointer_declarator");
            }
            "init_declarator" => cur = n.child_by_field_id(fid().declarator.get()),
            _ => return false,
        }
    }
    false
}

/// An explicit specialization's name as a call spells what it instantiates (`copy_vec<16u>`
/// is looked for as `copy_vec<16>`, libSGM's `load_uint8_vector<16u>`): integer arguments in
/// decimal without suffixes, arguments separated by `, `.
fn specialization_name(text: &str) -> String {
    let Some((base, rest)) = text.split_once('<') else {
        return text.to_string();
    };
    let Some(args) = rest.trim_end().strip_suffix('>') else {
        return text.to_string();
    };
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    let args: Vec<String> = parts
        .iter()
        .map(|a| {
            let a = a.trim();
            let digits = a.trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                Some(hex) => i64::from_str_radix(hex, 16).ok(),
                None => digits.parse::<i64>().ok(),
            };
            value.map_or_else(
                || a.split_whitespace().collect::<Vec<_>>().join(" "),
                |v| v.to_string(),
            )
        })
        .collect();
    format!("{}<{}>", base.trim(), args.join(", "))
}
