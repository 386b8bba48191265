//! Declarations: types as written (qualifiers, pointers, template arguments), declarators
//! (arrays and their dimensions, initialisers), and the most vexing parse of a constructor
//! call (`dim3 block(16, 16)`).

use super::{all_children, fid, last_named, named_children, span, Lowerer, MAX_DEPTH};
use crate::model::*;
use tree_sitter::Node;

impl<'s> Lowerer<'s> {
    /// Type of a declaration: its `type` node plus qualifiers found on the declaration node.
    pub(super) fn type_of(&self, t: Node, decl: Option<Node>) -> TypeRef {
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
        let (mut is_const, mut is_volatile) = (false, false);
        if let Some(d) = decl {
            for c in named_children(d) {
                if c.kind() == "type_qualifier" {
                    match self.text(c) {
                        "const" | "constexpr" => is_const = true,
                        "volatile" => is_volatile = true,
                        _ => {}
                    }
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
                inner.is_volatile |= is_volatile;
                return inner;
            }
        }
        let name = self.local_alias(&name).unwrap_or(name);
        TypeRef {
            name: name.into(),
            pointer_depth,
            is_const,
            is_volatile,
        }
    }

    /// Walks a declarator: (name node, pointer depth, array dims outermost first, init value).
    /// Whether a declarator's outermost pointer is `restrict` (`* __restrict__ p`, `* restrict
    /// p`, MSVC's `* __restrict p`).
    pub(super) fn restrict_pointer(&self, d: Node) -> bool {
        let mut cur = Some(d);
        let mut guard = 0;
        while let Some(n) = cur {
            guard += 1;
            if guard > MAX_DEPTH {
                return false;
            }
            match n.kind() {
                "pointer_declarator" => {
                    return named_children(n).into_iter().any(|c| {
                        matches!(c.kind(), "type_qualifier" | "ms_pointer_modifier")
                            && self.text(c).contains("restrict")
                    })
                }
                "init_declarator" | "parenthesized_declarator" => {
                    cur = n
                        .child_by_field_id(fid().declarator.get())
                        .or_else(|| last_named(n))
                }
                _ => return false,
            }
        }
        false
    }

    pub(super) fn declarator_parts<'t>(
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

    pub(super) fn declaration(&mut self, n: Node, depth: usize) -> Vec<Decl> {
        let Some(t) = n.child_by_field_id(fid().r#type.get()) else {
            return Vec::new();
        };
        let mut base = self.type_of(t, Some(n));
        // `__shared__ union { float2 a[N][V]; struct { ... } b; } smem;`: the type defined in
        // the declaration is a struct of the model, an unnamed one named after its object
        // and its function (not its offset: an edit above it must leave the lowered item as it
        // was)
        if matches!(
            t.kind(),
            "struct_specifier" | "class_specifier" | "union_specifier"
        ) && t.child_by_field_id(fid().body.get()).is_some()
        {
            if t.child_by_field_id(fid().name.get()).is_none() {
                let object = n
                    .child_by_field_id(fid().declarator.get())
                    .and_then(|d| self.declarator_parts(d).0)
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default();
                // two kernels of a file each declaring `__shared__ struct { ... } shmem;`
                // (cuSZ's) are two types: the function's name tells them apart
                base.name = match self.current_fn {
                    Some(f) => compact_str::format_compact!(
                        "<anonymous {object} in {}>",
                        self.model.functions[f].name
                    ),
                    None => compact_str::format_compact!("<anonymous {object}>"),
                };
            }
            self.struct_def(t, Some(base.name.to_string()));
        }
        let mut shared = false;
        let mut constant = false;
        let mut device = false;
        let mut is_extern = false;
        for c in all_children(n) {
            match self.text(c) {
                "__shared__" => shared = true,
                "__constant__" => constant = true,
                "__device__" | "__managed__" | crate::preprocess::DEVICE_MARK => device = true,
                "extern" => is_extern = true,
                _ => {}
            }
        }
        // `cuda::std::array<int, 3> ijk{i, j, k};` in a function: an array of three ints, as
        // `int ijk[3]` would be (libcu++ and the standard library are not in the run)
        let std_array = (self.current_fn.is_some() && depth > 0)
            .then(|| self.std_array(t, n, depth))
            .flatten();
        if let Some((elem, _)) = &std_array {
            base = elem.clone();
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
            let (name_node, mut ptr, mut dims, init) = self.declarator_parts(d);
            let Some(name_node) = name_node else {
                self.structured_binding(n, d, &base, depth, &mut out);
                continue;
            };
            if super::items::pointer_to_rows(d) && ptr > 0 {
                // `float (*t)[33];`: a pointer to rows of 33, its outermost dimension unsized
                ptr -= 1;
                dims.insert(
                    0,
                    Dim {
                        size: None,
                        span: span(name_node),
                    },
                );
            }
            if let Some((_, size)) = &std_array {
                dims.push(size.clone());
            }
            let mut ty = base.clone();
            ty.pointer_depth += ptr;
            // `dim3 b(TD, TD);` parses as a function declarator when the arguments look like
            // types (the most vexing parse): inside a function it is a constructor call.
            let ctor = (depth > 0 && init.is_none())
                .then(|| self.vexing_ctor(d))
                .flatten();
            let is_reference =
                self.text(d).trim_start().starts_with('&') || d.kind() == "reference_declarator";
            // `auto kernel = &k<T>;` in host code: what a launch through `kernel` launches
            if let (Some(v), Some(_)) = (init, self.current_fn) {
                let address = matches!(v.kind(), "pointer_expression" | "template_function");
                if address || (ptr > 0 && v.kind() == "identifier") {
                    if let Some((k, targs)) = self.function_named(v, depth + 1) {
                        let name = self.text(name_node).to_string();
                        self.kernel_pointers.push((name, k, targs));
                    }
                }
            }
            out.push(Decl {
                name: self.text(name_node).into(),
                name_span: span(name_node),
                ty,
                dims,
                init: init.map(|v| self.expr(v, depth + 1)).or(ctor),
                shared,
                constant,
                device,
                is_extern,
                is_const: base.is_const,
                is_reference,
                span: span(n),
            });
        }
        out
    }

    /// `std::array<T, N>` or `cuda::std::array<T, N>` named by type node `t`: the element type
    /// and the dimension.
    fn std_array(&mut self, t: Node, decl: Node, depth: usize) -> Option<(TypeRef, Dim)> {
        let mut q = t;
        let mut qualifier = String::new();
        while q.kind() == "qualified_identifier" {
            if let Some(scope) = q.child_by_field_id(fid().scope.get()) {
                qualifier.push_str(self.text(scope));
                qualifier.push_str("::");
            }
            q = q.child_by_field_id(fid().name.get())?;
        }
        let qualifier = qualifier.trim_start_matches("::");
        if q.kind() != "template_type" || !matches!(qualifier, "std::" | "cuda::std::") {
            return None;
        }
        let name = q.child_by_field_id(fid().name.get())?;
        if self.text(name) != "array" {
            return None;
        }
        let args = named_children(q.child_by_field_id(fid().arguments.get())?);
        let [elem, size] = args.as_slice() else {
            return None;
        };
        if elem.kind() != "type_descriptor" {
            return None;
        }
        let mut elem_ty = self.type_of(*elem, Some(decl));
        elem_ty.is_const |= self.type_of(t, Some(decl)).is_const;
        Some((
            elem_ty,
            Dim {
                size: Some(self.expr(*size, depth + 1)),
                span: span(*size),
            },
        ))
    }

    /// `auto [n_loop, c_loop] = sched.get_nc();`: the value once, in a variable of its own,
    /// and each name an element of it (`__element(v, i)`, which the analysis reads from a
    /// tuple or vector value).
    fn structured_binding(
        &mut self,
        decl: Node,
        d: Node,
        base: &TypeRef,
        depth: usize,
        out: &mut Vec<Decl>,
    ) {
        let mut cur = Some(d);
        let mut init = None;
        while let Some(n) = cur {
            match n.kind() {
                "init_declarator" => {
                    init = n.child_by_field_id(fid().value.get());
                    cur = n.child_by_field_id(fid().declarator.get());
                }
                "reference_declarator" => cur = n.named_child(0),
                "structured_binding_declarator" => break,
                _ => return,
            }
        }
        let Some(binding) = cur else { return };
        let names: Vec<Node> = named_children(binding)
            .into_iter()
            .filter(|c| c.kind() == "identifier")
            .collect();
        let Some(first) = names.first() else { return };
        let whole = compact_str::format_compact!("__binding_{}", self.text(*first));
        let plain = |name: Name, name_span: Span, init: Option<Expr>| Decl {
            name,
            name_span,
            ty: base.clone(),
            dims: Vec::new(),
            init,
            shared: false,
            constant: false,
            device: false,
            is_extern: false,
            is_const: base.is_const,
            is_reference: false,
            span: span(decl),
        };
        let value = init.map(|v| self.expr(v, depth + 1));
        out.push(plain(whole.clone(), span(binding), value));
        for (i, n) in names.iter().enumerate() {
            let at = span(*n);
            let element = Expr {
                kind: ExprKind::Call {
                    callee: "__element".into(),
                    template_args: TemplateArgs::default(),
                    args: vec![
                        Expr {
                            kind: ExprKind::Ident(whole.clone()),
                            span: at,
                        },
                        Expr {
                            kind: ExprKind::Int(i as i64),
                            span: at,
                        },
                    ]
                    .into(),
                },
                span: at,
            };
            out.push(plain(self.text(*n).into(), at, Some(element)));
        }
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
            .map(|p| self.vexing_argument(p))
            .collect();
        Some(Expr {
            kind: ExprKind::Init(args),
            span: span(params),
        })
    }

    /// What the grammar read as a parameter of a vexing declaration, as the argument it is:
    /// a name, or `gamma[i]` (`const R g(gamma[i]);`, TensorRT's layer norms: a subscript the
    /// grammar took for a parameter `gamma` of array type), the element it reads.
    fn vexing_argument(&mut self, p: Node) -> Expr {
        let ty = p.child_by_field_id(fid().r#type.get());
        let array = p
            .child_by_field_id(fid().declarator.get())
            .filter(|d| d.kind() == "abstract_array_declarator");
        if let (Some(ty), Some(array)) = (ty, array) {
            if let Some(size) = array.child_by_field_id(fid().size.get()) {
                let index = self.expr(size, 0);
                return Expr {
                    kind: ExprKind::Index {
                        base: Box::new(Expr {
                            kind: ExprKind::Ident(self.text(ty).into()),
                            span: span(ty),
                        }),
                        index: Box::new(index),
                    },
                    span: span(p),
                };
            }
        }
        Expr {
            kind: ExprKind::Ident(self.text(p).split_whitespace().collect()),
            span: span(p),
        }
    }

    /// `enum { MODE_SUSD = 0, MODE_FUSD = 1 };` (mmcv's filter modes, `enum { BLOCK = 256 }`
    /// in older CUDA): each enumerator is an `int` constant of the file, one more than the
    /// one before where it has no value of its own. A scoped enum's (`enum class
    /// ThreadsPerAtom { Order, OrderSquared }`, GROMACS's kernels' template parameter) are
    /// named by their enum, `ThreadsPerAtom::Order`, not by themselves.
    pub(super) fn enum_def(&mut self, n: Node) {
        let Some(body) = n.child_by_field_id(fid().body.get()) else {
            return;
        };
        let scoped = all_children(n)
            .iter()
            .any(|c| matches!(c.kind(), "class" | "struct"));
        // `enum class Op : uint8_t { ... }`: the enum is as wide as its underlying type
        if let (Some(name), Some(base)) = (
            n.child_by_field_id(fid().name.get()),
            n.child_by_field_name("base"),
        ) {
            let ty = self.type_of(base, None);
            self.model.typedefs.push(crate::model::Typedef {
                name: self.text(name).into(),
                ty,
                params: Vec::new(),
            });
        }
        let scope = match (scoped, n.child_by_field_id(fid().name.get())) {
            (false, _) => String::new(),
            (true, Some(name)) => format!("{}::", self.text(name)),
            (true, None) => return,
        };
        for (full, init, at, whole) in self.enumerators(body, &scope) {
            let mut d = Decl::local(
                full,
                at,
                TypeRef::named("int"),
                Vec::new(),
                Some(init),
                whole,
            );
            d.is_const = true;
            self.model.globals.push(d);
        }
    }

    /// The enumerators of an enum's body, each named `{scope}{name}` with its value: its own,
    /// else one more than the one before (0 for the first). Also the spans of the name and
    /// of the whole enumerator.
    pub(super) fn enumerators(&mut self, body: Node, scope: &str) -> Vec<(Name, Expr, Span, Span)> {
        let mut out = Vec::new();
        let mut previous: Option<Expr> = None;
        for e in named_children(body) {
            if e.kind() != "enumerator" {
                continue;
            }
            let Some(name) = e.child_by_field_id(fid().name.get()) else {
                continue;
            };
            let init = match e.child_by_field_id(fid().value.get()) {
                Some(v) => self.expr(v, 0),
                None => match previous.take() {
                    None => Expr {
                        kind: ExprKind::Int(0),
                        span: span(name),
                    },
                    Some(p) => Expr {
                        kind: ExprKind::Binary {
                            op: BinOp::Add,
                            lhs: Box::new(p),
                            rhs: Box::new(Expr {
                                kind: ExprKind::Int(1),
                                span: span(name),
                            }),
                        },
                        span: span(name),
                    },
                },
            };
            let full: Name = format!("{scope}{}", self.text(name)).into();
            previous = Some(Expr {
                kind: ExprKind::Ident(full.clone()),
                span: span(name),
            });
            out.push((full, init, span(name), span(e)));
        }
        out
    }

    pub(super) fn file_declaration(&mut self, n: Node) {
        if let Some(t) = n
            .child_by_field_id(fid().r#type.get())
            .filter(|t| t.kind() == "enum_specifier")
        {
            self.enum_def(t);
        }
        if let Some(i) = self.instantiation(n) {
            self.model.instantiations.push(i);
            return;
        }
        // a prototype `__global__ void k(...);` is a declaration with a function declarator: skip
        let decls = self.declaration(n, 0);
        self.model.globals.extend(decls);
    }

    /// `void scan_cuda<float, float>(Params &, cudaStream_t);` at file scope: an explicit
    /// instantiation, whose `template` the preprocessing blanks (the grammar reads the rest as
    /// this declaration).
    fn instantiation(&mut self, n: Node) -> Option<Instantiation> {
        let mut d = n.child_by_field_id(fid().declarator.get())?;
        while matches!(d.kind(), "pointer_declarator" | "reference_declarator") {
            d = d
                .child_by_field_id(fid().declarator.get())
                .or_else(|| last_named(d))?;
        }
        if d.kind() != "function_declarator" {
            return None;
        }
        let f = d.child_by_field_id(fid().declarator.get())?;
        let mut t = f;
        while t.kind() == "qualified_identifier" {
            t = t.child_by_field_id(fid().name.get())?;
        }
        if t.kind() != "template_function" {
            return None;
        }
        let name = t.child_by_field_id(fid().name.get())?;
        let scope: String = self.text(f)[..t.start_byte() - f.start_byte()]
            .split_whitespace()
            .collect();
        let function = scope + self.text(name);
        let template_args = self.template_args(t.child_by_field_id(fid().arguments.get()), 0);
        Some(Instantiation {
            function,
            template_args,
            span: span(n),
        })
    }
}
