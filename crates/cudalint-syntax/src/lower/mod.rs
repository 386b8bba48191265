//! Lowering from the tree-sitter-cuda tree to the kernel model.
//!
//! This file holds the `Lowerer` (the model being built, the reuse of an earlier lowering),
//! the grammar's field ids resolved once, and the walk over top-level items. `items.rs`
//! lowers definitions (functions, structs, typedefs, `#define`s, templates), `decls.rs`
//! declarations and types, `stmts.rs` statements, `exprs.rs` expressions and calls.

mod comparisons;
mod decls;
mod exprs;
mod inline_asm;
mod items;
mod statement_exprs;
mod stmts;

use crate::model::*;
use crate::reuse::{Counts, Item, Piece, Reuse};
use tree_sitter::Node;

/// Deeper nesting than this becomes `Unsupported`: it keeps recursion (here and in the
/// analysis) bounded on generated or hostile input.
pub const MAX_DEPTH: usize = 256;

pub(crate) struct Lowerer<'s> {
    pub src: &'s str,
    pub model: FileModel,
    current_fn: Option<usize>,
    /// Variables of the current function initialised with a function's address (`auto kernel
    /// = &k<T>;`): name, function, template arguments; a launch through one launches `k<T>`.
    kernel_pointers: Vec<(String, String, Vec<TemplateArg>)>,
    /// How deep in nested struct and union definitions lowering is.
    struct_depth: usize,
    /// The template parameters of the struct `template_decl` is about to lower: its member
    /// functions take them.
    struct_template: Vec<TemplateParam>,
    /// What each top-level item lowered to, in order: what the next edit's lowering reuses.
    pub pieces: Vec<Piece>,
    /// The previous lowering of the same file, before an edit.
    pub reuse: Option<Reuse>,
    /// Whether the expression `expr` is about to lower is an operand of a binary operator or
    /// an assignment: what `Node::parent` would say, without its walk down from the root.
    operand_of_operator: bool,
    /// Typedefs and aliases of the function bodies being lowered whose name an earlier one
    /// of the file took, innermost last, with the name each is filed under: typedefs are
    /// found by name, first come first served, and another kernel's `typedef B AgentT;` is
    /// another type than the first's (cub's dispatch kernels).
    local_typedefs: Vec<(String, String)>,
}

/// Field ids resolved once: `child_by_field_name` would compare the name against every field
/// name of the grammar on each call.
pub(crate) struct Fields {
    pub path: std::num::NonZeroU16,
    pub alternative: std::num::NonZeroU16,
    pub argument: std::num::NonZeroU16,
    pub arguments: std::num::NonZeroU16,
    pub body: std::num::NonZeroU16,
    pub captures: std::num::NonZeroU16,
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
    pub scope: std::num::NonZeroU16,
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
            captures: id("captures"),
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
            scope: id("scope"),
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

/// The named children that are code: a comment is a named node wherever it is written
/// (`k<float, /*FAST=*/true>` has three template arguments to the grammar).
fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// The last named child that is code: `if (x /* why */)` ends in a comment node.
fn last_named(n: Node) -> Option<Node> {
    (0..n.named_child_count())
        .rev()
        .filter_map(|i| n.named_child(i))
        .find(|c| c.kind() != "comment")
}

/// The first named child that is code: `else // why` puts a comment node before the block,
/// `( /* why */ x)` and `return /* why */ x;` before the expression.
fn first_named(n: Node) -> Option<Node> {
    (0..n.named_child_count())
        .filter_map(|i| n.named_child(i))
        .find(|c| c.kind() != "comment")
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
            kernel_pointers: Vec::new(),
            struct_depth: 0,
            struct_template: Vec::new(),
            pieces: Vec::new(),
            reuse: None,
            operand_of_operator: false,
            local_typedefs: Vec::new(),
        }
    }

    /// `AgentT`, `AgentT::TempStorage`, `typename AgentT::X` where a body being lowered
    /// declares its own `AgentT`: the name that one is filed under.
    pub(super) fn local_alias(&self, name: &str) -> Option<String> {
        if self.local_typedefs.is_empty() {
            return None;
        }
        let (prefix, bare) = match name.strip_prefix("typename ") {
            Some(b) => ("typename ", b),
            None => ("", name),
        };
        let (head, rest) = match bare.find("::") {
            Some(i) => (&bare[..i], &bare[i..]),
            None => (bare, ""),
        };
        let (_, filed) = self.local_typedefs.iter().rev().find(|(n, _)| n == head)?;
        Some(format!("{prefix}{filed}{rest}"))
    }

    /// The name a typedef declared here is filed under: its own, unless a body's typedef
    /// takes a name the file already has.
    pub(super) fn typedef_name(&mut self, name: &str) -> String {
        if self.current_fn.is_none() || !self.model.typedefs.iter().any(|t| t.name == name) {
            return name.to_string();
        }
        let taken = self
            .model
            .typedefs
            .iter()
            .filter(|t| t.name.starts_with(name))
            .count();
        let filed = format!("{name}__{taken}");
        self.local_typedefs.push((name.to_string(), filed.clone()));
        filed
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
                    | "alias_declaration"
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
                "enum_specifier" => self.enum_def(child),
                "type_definition" => self.typedef(child),
                "alias_declaration" => self.alias(child),
                "preproc_def" | "preproc_function_def" => self.define(child),
                "preproc_include" => {
                    if let Some(path) = child.child_by_field_id(fid().path.get()) {
                        let t = self.text(path);
                        // an angled one counts when it names a file of the run
                        if matches!(path.kind(), "string_literal" | "system_lib_string") {
                            let name = t.trim_matches(['"', '<', '>']);
                            self.model.includes.push(name.to_string());
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
}

/// The type tree-sitter-cuda finds missing before a braced block shape in a launch
/// (`k<<<grid, {32, 8, 1}, 0, stream>>>`, NVIDIA's multi-GPU Jacobi samples): it reads the
/// braces as a compound literal without its type, which is what the launch means (a `dim3`
/// made in place), so it is no parse error.
pub(crate) fn braced_launch_shape(n: Node) -> bool {
    n.is_missing()
        && n.parent().is_some_and(|p| {
            p.kind() == "compound_literal_expression"
                && p.parent().is_some_and(|g| g.kind() == "kernel_call_syntax")
        })
}

fn first_error(n: Node) -> Option<Span> {
    let mut c = n.walk();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if braced_launch_shape(x) {
            continue;
        }
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
