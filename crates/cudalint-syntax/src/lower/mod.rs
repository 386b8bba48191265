//! Lowering from the tree-sitter-cuda tree to the kernel model.

use crate::model::*;
use crate::reuse::{Counts, Item, Piece, Reuse};
use crate::shift::Shift;
use tree_sitter::Node;

/// Deeper nesting than this becomes `Unsupported`: it keeps recursion (here and in the
/// analysis) bounded on generated or hostile input.
pub const MAX_DEPTH: usize = 256;

pub(crate) struct Lowerer<'s> {
    pub src: &'s str,
    pub model: FileModel,
    current_fn: Option<usize>,
    /// How deep in nested struct and union definitions lowering is.
    struct_depth: usize,
    /// The template parameters of the struct `template_decl` is about to lower: its member
    /// functions take them.
    struct_template: Vec<TemplateParam>,
    /// What each top-level item lowered to, in order: what the next edit's lowering reuses.
    pub pieces: Vec<Piece>,
    /// The previous lowering of the same file, before an edit.
    pub reuse: Option<Reuse>,
}

/// Field ids resolved once: `child_by_field_name` would compare the name against every field
/// name of the grammar on each call.
pub(crate) struct Fields {
    pub path: std::num::NonZeroU16,
    pub alternative: std::num::NonZeroU16,
    pub argument: std::num::NonZeroU16,
    pub arguments: std::num::NonZeroU16,
    pub body: std::num::NonZeroU16,
    pub condition: std::num::NonZeroU16,
    pub consequence: std::num::NonZeroU16,
    pub declarator: std::num::NonZeroU16,
    pub default_type: std::num::NonZeroU16,
    pub default_value: std::num::NonZeroU16,
    pub field: std::num::NonZeroU16,
    pub function: std::num::NonZeroU16,
    pub index: std::num::NonZeroU16,
    pub indices: std::num::NonZeroU16,
    pub initializer: std::num::NonZeroU16,
    pub left: std::num::NonZeroU16,
    pub name: std::num::NonZeroU16,
    pub operator: std::num::NonZeroU16,
    pub parameters: std::num::NonZeroU16,
    pub right: std::num::NonZeroU16,
    pub size: std::num::NonZeroU16,
    pub r#type: std::num::NonZeroU16,
    pub update: std::num::NonZeroU16,
    pub value: std::num::NonZeroU16,
}

pub(crate) fn fid() -> &'static Fields {
    static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let lang = crate::language();
        let id = |n: &str| {
            lang.field_id_for_name(n)
                .unwrap_or(std::num::NonZeroU16::MAX)
        };
        Fields {
            path: id("path"),
            alternative: id("alternative"),
            argument: id("argument"),
            arguments: id("arguments"),
            body: id("body"),
            condition: id("condition"),
            consequence: id("consequence"),
            declarator: id("declarator"),
            default_type: id("default_type"),
            default_value: id("default_value"),
            field: id("field"),
            function: id("function"),
            index: id("index"),
            indices: id("indices"),
            initializer: id("initializer"),
            left: id("left"),
            name: id("name"),
            operator: id("operator"),
            parameters: id("parameters"),
            right: id("right"),
            size: id("size"),
            r#type: id("type"),
            update: id("update"),
            value: id("value"),
        }
    })
}

fn span(n: Node) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

fn last_named(n: Node) -> Option<Node> {
    n.named_child(n.named_child_count().checked_sub(1)?)
}

fn all_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

impl<'s> Lowerer<'s> {
    pub fn new(src: &'s str) -> Self {
        Lowerer {
            src,
            model: FileModel::default(),
            current_fn: None,
            struct_depth: 0,
            struct_template: Vec::new(),
            pieces: Vec::new(),
            reuse: None,
        }
    }

    fn text(&self, n: Node) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub fn top_level(&mut self, root: Node, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for child in named_children(root) {
            let before = Counts::of(&self.model);
            let item = Item::of(child);
            let is_item = matches!(
                child.kind(),
                "function_definition"
                    | "template_declaration"
                    | "declaration"
                    | "struct_specifier"
                    | "class_specifier"
                    | "union_specifier"
                    | "type_definition"
                    | "preproc_def"
                    | "preproc_function_def"
                    | "preproc_include"
            );
            if is_item {
                if let (Some(item), Some(reuse)) = (item, self.reuse.as_mut()) {
                    if reuse.take(item, &mut self.model) {
                        self.pieces.push(Piece {
                            item: Some(item),
                            counts: Counts::of(&self.model).since(before),
                        });
                        continue;
                    }
                }
            }
            match child.kind() {
                "function_definition" => self.function(child, &[]),
                "template_declaration" => self.template_decl(child),
                "declaration" => self.file_declaration(child),
                "struct_specifier" | "class_specifier" | "union_specifier" => {
                    self.struct_def(child, None)
                }
                "type_definition" => self.typedef(child),
                "preproc_def" | "preproc_function_def" => self.define(child),
                "preproc_include" => {
                    if let Some(path) = child.child_by_field_id(fid().path.get()) {
                        let t = self.text(path);
                        if path.kind() == "string_literal" {
                            self.model.includes.push(t.trim_matches('"').to_string());
                        }
                    }
                }
                "ERROR" => {
                    self.model.stray_errors.push(span(child));
                    self.pieces.push(Piece {
                        item: None,
                        counts: Counts::of(&self.model).since(before),
                    });
                    self.top_level(child, depth + 1);
                    continue;
                }
                "linkage_specification"
                | "namespace_definition"
                | "declaration_list"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "preproc_elifdef" => {
                    self.top_level(child, depth + 1);
                    continue;
                }
                _ => {
                    if child.is_missing() {
                        self.model.stray_errors.push(span(child));
                    }
                }
            }
            // containers' own children are the items; whatever else lowered anything is one
            let counts = Counts::of(&self.model).since(before);
            if is_item || counts != Counts::default() {
                self.pieces.push(Piece {
                    item: item.filter(|_| is_item),
                    counts,
                });
            }
        }
    }

    fn template_decl(&mut self, n: Node) {
        let mut params = Vec::new();
        if let Some(list) = n.child_by_field_id(fid().parameters.get()) {
            for p in named_children(list) {
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
                    name: self.text(name_node).to_string(),
                    is_type,
                    default,
                });
            }
        }
        for child in named_children(n) {
            match child.kind() {
                "function_definition" => self.function(child, &params),
                "struct_specifier" | "class_specifier" => {
                    self.struct_template = params.clone();
                    self.struct_def(child, None);
                    self.struct_template.clear();
                    if let Some(s) = self.model.structs.last_mut() {
                        s.template_params = params.iter().map(|p| p.name.clone()).collect();
                    }
                }
                "template_declaration" => self.template_decl(child),
                _ => {}
            }
        }
    }

    fn define(&mut self, n: Node) {
        let Some(name) = n.child_by_field_id(fid().name.get()) else {
            return;
        };
        let params = n.child_by_field_id(fid().parameters.get()).map(|p| {
            named_children(p)
                .into_iter()
                .map(|c| self.text(c).to_string())
                .collect::<Vec<_>>()
        });
        let body = n.child_by_field_id(fid().value.get()).and_then(|v| {
            let text = self.text(v);
            parse_expression_snippet(text, v.start_byte())
        });
        self.model.defines.push(Define {
            name: self.text(name).to_string(),
            params,
            body,
            span: span(n),
        });
    }

    fn typedef(&mut self, n: Node) {
        let ty_node = n.child_by_field_id(fid().r#type.get());
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
                self.model.typedefs.push(Typedef { name, ty });
            }
        }
    }

    fn struct_def(&mut self, n: Node, alias: Option<String>) {
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
                    statics.push((self.text(*d).to_string(), self.expr(v, 0)));
                }
                continue;
            }
            let Some(t) = f.child_by_field_id(fid().r#type.get()) else {
                continue;
            };
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
                self.struct_def(t, Some(inner.clone()));
                self.struct_depth -= 1;
                base = TypeRef::named(&inner);
                if f.child_by_field_id(fid().declarator.get()).is_none() {
                    fields.push(FieldDef {
                        name: String::new(),
                        ty: base,
                        array_len: None,
                    });
                    continue;
                }
            }
            let mut c = f.walk();
            for d in f.children_by_field_id(fid().declarator, &mut c) {
                let (name_node, ptr, dims, _) = self.declarator_parts(d);
                let Some(name_node) = name_node else { continue };
                let mut ty = base.clone();
                ty.pointer_depth += ptr;
                let array_len = dims.first().and_then(|d| d.size.clone());
                fields.push(FieldDef {
                    name: self.text(name_node).to_string(),
                    ty,
                    array_len,
                });
            }
        }
        if let Some(alias) = alias {
            if alias != name {
                self.model.typedefs.push(Typedef {
                    name: alias,
                    ty: TypeRef::named(&name),
                });
            }
        }
        self.model.structs.push(StructDef {
            name,
            fields,
            template_params: Vec::new(),
            statics,
            extern_shared,
            is_union: n.kind() == "union_specifier",
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
                func.name = format!("{owner}::{}", func.name);
                func.owner = Some(owner.to_string());
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

    /// Type of a declaration: its `type` node plus qualifiers found on the declaration node.
    fn type_of(&self, t: Node, decl: Option<Node>) -> TypeRef {
        let name = match t.kind() {
            "struct_specifier" | "class_specifier" | "enum_specifier" | "union_specifier" => t
                .child_by_field_id(fid().name.get())
                .map(|x| self.text(x))
                .unwrap_or("<anonymous>")
                .to_string(),
            _ => self
                .text(t)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        };
        let mut is_const = false;
        if let Some(d) = decl {
            for c in named_children(d) {
                if c.kind() == "type_qualifier" && matches!(self.text(c), "const" | "constexpr") {
                    is_const = true;
                }
            }
        }
        // `type_descriptor` carries its own pointer declarator
        let mut pointer_depth = 0;
        if t.kind() == "type_descriptor" {
            let inner = t
                .child_by_field_id(fid().r#type.get())
                .map(|x| self.type_of(x, Some(t)));
            let mut d = t.child_by_field_id(fid().declarator.get());
            while let Some(x) = d {
                if x.kind() == "abstract_pointer_declarator" {
                    pointer_depth += 1;
                }
                d = x.child_by_field_id(fid().declarator.get());
            }
            if let Some(mut inner) = inner {
                inner.pointer_depth += pointer_depth;
                inner.is_const |= is_const;
                return inner;
            }
        }
        TypeRef {
            name,
            pointer_depth,
            is_const,
        }
    }

    /// Walks a declarator: (name node, pointer depth, array dims outermost first, init value).
    fn declarator_parts<'t>(
        &mut self,
        d: Node<'t>,
    ) -> (Option<Node<'t>>, u8, Vec<Dim>, Option<Node<'t>>) {
        let mut ptr = 0u8;
        let mut dims = Vec::new();
        let mut init = None;
        let mut cur = Some(d);
        let mut guard = 0;
        while let Some(n) = cur {
            guard += 1;
            if guard > MAX_DEPTH {
                break;
            }
            match n.kind() {
                "identifier" | "field_identifier" | "type_identifier" => {
                    return (Some(n), ptr, dims, init)
                }
                "init_declarator" => {
                    init = n.child_by_field_id(fid().value.get());
                    cur = n.child_by_field_id(fid().declarator.get());
                }
                "pointer_declarator" => {
                    ptr = ptr.saturating_add(1);
                    cur = n.child_by_field_id(fid().declarator.get());
                }
                "reference_declarator" => {
                    cur = last_named(n);
                }
                "array_declarator" => {
                    let size = n.child_by_field_id(fid().size.get());
                    let dim = Dim {
                        size: size.map(|s| self.expr(s, 0)),
                        span: size
                            .map(span)
                            .unwrap_or_else(|| Span::new(n.end_byte() - 1, n.end_byte() - 1)),
                    };
                    // inner declarators are the outer dimensions: `a[R][C]` is array(array(a, R), C)
                    dims.insert(0, dim);
                    cur = n.child_by_field_id(fid().declarator.get());
                }
                "parenthesized_declarator" => cur = n.named_child(0),
                _ => cur = n.child_by_field_id(fid().declarator.get()),
            }
        }
        (None, ptr, dims, init)
    }

    fn declaration(&mut self, n: Node, depth: usize) -> Vec<Decl> {
        let Some(t) = n.child_by_field_id(fid().r#type.get()) else {
            return Vec::new();
        };
        let base = self.type_of(t, Some(n));
        let mut shared = false;
        let mut constant = false;
        let mut is_extern = false;
        for c in all_children(n) {
            match self.text(c) {
                "__shared__" => shared = true,
                "__constant__" => constant = true,
                "extern" => is_extern = true,
                _ => {}
            }
        }
        let mut out = Vec::new();
        let mut c = n.walk();
        let mut declarators: Vec<Node> = n.children_by_field_id(fid().declarator, &mut c).collect();
        if declarators.is_empty() {
            // with a qualified template type (`cg::thread_block_tile<16> t = ...`) the grammar
            // leaves the declarator untagged: take the declarator-shaped children
            declarators = named_children(n)
                .into_iter()
                .filter(|d| {
                    d.start_byte() >= t.end_byte()
                        && matches!(
                            d.kind(),
                            "init_declarator"
                                | "identifier"
                                | "array_declarator"
                                | "pointer_declarator"
                        )
                })
                .collect();
        }
        for d in declarators {
            let (name_node, ptr, dims, init) = self.declarator_parts(d);
            let Some(name_node) = name_node else { continue };
            let mut ty = base.clone();
            ty.pointer_depth += ptr;
            // `dim3 b(TD, TD);` parses as a function declarator when the arguments look like
            // types (the most vexing parse): inside a function it is a constructor call.
            let ctor = (depth > 0 && init.is_none())
                .then(|| self.vexing_ctor(d))
                .flatten();
            let is_reference =
                self.text(d).trim_start().starts_with('&') || d.kind() == "reference_declarator";
            out.push(Decl {
                name: self.text(name_node).to_string(),
                name_span: span(name_node),
                ty,
                dims,
                init: init.map(|v| self.expr(v, depth + 1)).or(ctor),
                shared,
                constant,
                is_extern,
                is_const: base.is_const,
                is_reference,
                span: span(n),
            });
        }
        out
    }

    fn vexing_ctor(&mut self, d: Node) -> Option<Expr> {
        let mut cur = d;
        while cur.kind() == "init_declarator" || cur.kind() == "pointer_declarator" {
            cur = cur.child_by_field_id(fid().declarator.get())?;
        }
        if cur.kind() != "function_declarator" {
            return None;
        }
        let params = cur.child_by_field_id(fid().parameters.get())?;
        let args = named_children(params)
            .into_iter()
            .map(|p| Expr {
                kind: ExprKind::Ident(self.text(p).split_whitespace().collect()),
                span: span(p),
            })
            .collect();
        Some(Expr {
            kind: ExprKind::Init(args),
            span: span(params),
        })
    }

    fn file_declaration(&mut self, n: Node) {
        // a prototype `__global__ void k(...);` is a declaration with a function declarator: skip
        let decls = self.declaration(n, 0);
        self.model.globals.extend(decls);
    }

    fn function(&mut self, n: Node, template_params: &[TemplateParam]) {
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
                    "__global__" => kind = FnKind::Global,
                    "__device__" => device = true,
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
        while decl.kind() != "function_declarator" {
            guard += 1;
            match decl.child_by_field_id(fid().declarator.get()) {
                Some(d) if guard < 16 => decl = d,
                _ => return,
            }
        }
        let Some(name_node) = decl.child_by_field_id(fid().declarator.get()) else {
            return;
        };
        let name = self.text(name_node).to_string();
        let mut params = Vec::new();
        if let Some(plist) = decl.child_by_field_id(fid().parameters.get()) {
            for p in named_children(plist) {
                if p.kind() != "parameter_declaration" {
                    continue;
                }
                let Some(t) = p.child_by_field_id(fid().r#type.get()) else {
                    continue;
                };
                let mut ty = self.type_of(t, Some(p));
                let Some(d) = p.child_by_field_id(fid().declarator.get()) else {
                    continue;
                };
                let (pname, ptr, dims, _) = self.declarator_parts(d);
                let Some(pname) = pname else { continue };
                ty.pointer_depth += ptr + dims.len() as u8;
                params.push(Param {
                    name: self.text(pname).to_string(),
                    ty,
                    is_reference: d.kind() == "reference_declarator",
                    span: span(p),
                });
            }
        }
        let parse_error = if n.has_error() { first_error(n) } else { None };
        let index = self.model.functions.len();
        self.model.functions.push(Function {
            name,
            name_span: span(name_node),
            span: span(n),
            kind,
            template_params: template_params.to_vec(),
            params,
            body: None,
            launch_bounds,
            parse_error,
            owner: None,
        });
        // Host code is read only for its launches: a host function without `<<<` is not lowered.
        let needed = kind != FnKind::Host || self.text(n).contains("<<<");
        let outer = self.current_fn.replace(index);
        let body = if needed {
            n.child_by_field_id(fid().body.get())
                .map(|b| self.block(b, 0))
        } else {
            None
        };
        self.current_fn = outer;
        self.model.functions[index].body = body;
    }

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
        let decl = |name: String, name_span: Span, ty: TypeRef, init: Expr| Decl {
            name,
            name_span,
            ty,
            dims: Vec::new(),
            init: Some(init),
            shared: false,
            constant: false,
            is_extern: false,
            is_const: false,
            is_reference: false,
            span: span(n),
        };
        let mut ty = self.type_of(t, Some(n));
        ty.pointer_depth += ptr;
        let element = decl(self.text(name).to_string(), span(name), ty, element);
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

    fn block(&mut self, n: Node, depth: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for c in named_children(n) {
            self.stmt_into(c, depth + 1, &mut out);
        }
        out
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

    fn stmt_into(&mut self, n: Node, depth: usize, out: &mut Vec<Stmt>) {
        if depth > MAX_DEPTH {
            out.push(Stmt::Other(span(n)));
            return;
        }
        match n.kind() {
            "declaration" => {
                for d in self.declaration(n, depth) {
                    out.push(Stmt::Decl(d));
                }
            }
            "expression_statement" => {
                if let Some(e) = n.named_child(0) {
                    out.push(Stmt::Expr(self.expr(e, depth)));
                }
            }
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
                        let inner = e.named_child(0);
                        self.body_of(inner, depth)
                    })
                    .unwrap_or_default();
                out.push(Stmt::If { cond, then, els });
            }
            "for_statement" => {
                let mut init = Vec::new();
                if let Some(i) = n.child_by_field_id(fid().initializer.get()) {
                    if i.kind() == "declaration" {
                        init.extend(self.declaration(i, depth).into_iter().map(Stmt::Decl));
                    } else {
                        init.push(Stmt::Expr(self.expr(i, depth)));
                    }
                }
                let cond = n
                    .child_by_field_id(fid().condition.get())
                    .map(|c| self.expr(c, depth));
                let update = n
                    .child_by_field_id(fid().update.get())
                    .map(|c| self.expr(c, depth));
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
                    cond,
                    body,
                    do_while: n.kind() == "do_statement",
                });
            }
            "for_range_loop" => {
                let body = self.body_of(n.child_by_field_id(fid().body.get()), depth);
                match self.range_over_list(n, depth) {
                    Some((init, cond, update, element)) => {
                        let mut inner = vec![Stmt::Decl(element)];
                        inner.extend(body);
                        out.push(Stmt::For {
                            init: vec![Stmt::Decl(init)],
                            cond: Some(cond),
                            update: Some(update),
                            body: inner,
                            span: span(n),
                        });
                    }
                    None => out.push(Stmt::Block(body)),
                }
            }
            "return_statement" => {
                let e = n.named_child(0).map(|e| self.expr(e, depth));
                out.push(Stmt::Return(e, span(n)));
            }
            "break_statement" => out.push(Stmt::Break),
            "continue_statement" => out.push(Stmt::Continue),
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
            "struct_specifier" | "class_specifier" | "union_specifier" => self.struct_def(n, None),
            _ => out.push(Stmt::Other(span(n))),
        }
    }

    fn template_arg(&mut self, n: Node, depth: usize) -> TemplateArg {
        if n.kind() == "type_descriptor" {
            TemplateArg::Type(self.type_of(n, None))
        } else {
            TemplateArg::Expr(self.expr(n, depth + 1))
        }
    }

    fn template_args(&mut self, n: Option<Node>, depth: usize) -> Vec<TemplateArg> {
        let Some(n) = n else { return Vec::new() };
        named_children(n)
            .into_iter()
            .map(|a| self.template_arg(a, depth))
            .collect()
    }

    fn boxed(&mut self, n: Option<Node>, parent: Node, depth: usize) -> Box<Expr> {
        Box::new(match n {
            Some(n) => self.expr(n, depth + 1),
            None => Expr::unsupported("missing operand", span(parent)),
        })
    }

    pub fn expr(&mut self, n: Node, depth: usize) -> Expr {
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
            | "namespace_identifier" => {
                ExprKind::Ident(self.text(n).split_whitespace().collect::<String>())
            }
            "parenthesized_expression" => {
                return match n.named_child(0) {
                    Some(inner) => {
                        let mut e = self.expr(inner, depth + 1);
                        e.span = sp;
                        e
                    }
                    None => Expr::unsupported("empty parentheses", sp),
                };
            }
            "field_expression" => {
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
                ExprKind::Field { base, field, arrow }
            }
            "subscript_expression" => {
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
                return *base;
            }
            "binary_expression" => {
                let op_text = n
                    .child_by_field_id(fid().operator.get())
                    .map(|o| self.text(o))
                    .unwrap_or("");
                let Some(op) = BinOp::from_token(op_text) else {
                    return Expr::unsupported(format!("operator `{op_text}`"), sp);
                };
                let lhs = self.boxed(n.child_by_field_id(fid().left.get()), n, depth);
                let rhs = self.boxed(n.child_by_field_id(fid().right.get()), n, depth);
                ExprKind::Binary { op, lhs, rhs }
            }
            "unary_expression" | "pointer_expression" => {
                let op_text = n
                    .child_by_field_id(fid().operator.get())
                    .map(|o| self.text(o))
                    .unwrap_or("");
                let op = match op_text {
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
            "update_expression" => {
                let arg_node = n.child_by_field_id(fid().argument.get());
                let op_node = n.child_by_field_id(fid().operator.get());
                let prefix = match (op_node, arg_node) {
                    (Some(o), Some(a)) => o.start_byte() < a.start_byte(),
                    _ => true,
                };
                let inc = op_node.map(|o| self.text(o) == "++").unwrap_or(true);
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
                let op_text = n
                    .child_by_field_id(fid().operator.get())
                    .map(|o| self.text(o))
                    .unwrap_or("=");
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
            _ => ExprKind::Unsupported(format!("`{}`", n.kind())),
        };
        Expr { kind, span: sp }
    }

    fn call(&mut self, n: Node, depth: usize) -> Expr {
        let sp = span(n);
        let func = n.child_by_field_id(fid().function.get());
        let (callee, template_args) = match func {
            Some(f) if f.kind() == "template_function" => {
                let name = f
                    .child_by_field_id(fid().name.get())
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default();
                let targs = self.template_args(f.child_by_field_id(fid().arguments.get()), depth);
                (name, targs)
            }
            Some(f) => (
                self.text(f).split_whitespace().collect::<String>(),
                Vec::new(),
            ),
            None => (String::new(), Vec::new()),
        };
        let args: Vec<Expr> = n
            .child_by_field_id(fid().arguments.get())
            .map(|a| {
                named_children(a)
                    .into_iter()
                    .map(|c| self.expr(c, depth + 1))
                    .collect()
            })
            .unwrap_or_default();
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
            self.model.launches.push(Launch {
                kernel: callee.rsplit("::").next().unwrap_or(&callee).to_string(),
                template_args: template_args.clone(),
                config,
                args: args.clone(),
                span: sp,
                host_fn: self.current_fn,
            });
        }
        let short = callee.rsplit("::").next().unwrap_or(&callee);
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
        Expr {
            kind: ExprKind::Call {
                callee,
                template_args,
                args,
            },
            span: sp,
        }
    }
}

fn first_error(n: Node) -> Option<Span> {
    let mut c = n.walk();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.is_error() || x.is_missing() {
            return Some(span(x));
        }
        if x.has_error() {
            let kids: Vec<Node> = x.children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
    }
    None
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
fn parse_expression_snippet(text: &str, offset: usize) -> Option<Expr> {
    const PREFIX: &str = "void __cudalint_m() { (void)(";
    let trimmed = text.trim_end();
    if trimmed.is_empty() || trimmed.len() > 4096 {
        return None;
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
