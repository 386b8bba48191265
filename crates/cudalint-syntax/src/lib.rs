//! CUDA source to kernel model: tree-sitter-cuda parsing, byte-stable preprocessing, and
//! lowering into the small AST in [`model`] that the analysis consumes.

mod incremental;
mod lines;
mod lower;
pub mod model;
pub mod preprocess;
mod reuse;
mod shift;
pub mod source;
pub mod substitute;

use std::cell::RefCell;

pub use lines::LineIndex;
pub use model::*;
pub use preprocess::{included_name, Defines, HeaderMacro, Specifier};

/// The tree-sitter-cuda language.
pub fn language() -> tree_sitter::Language {
    tree_sitter_cuda::LANGUAGE.into()
}

/// Checks once, at start-up, that the grammar loads into this tree-sitter runtime (the
/// grammar's ABI must be one the runtime supports) and knows the node kinds we rely on.
pub fn check_language() -> Result<(), String> {
    let lang = language();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang).map_err(|e| {
        format!(
            "cannot load the tree-sitter-cuda grammar (ABI {}) into tree-sitter {} (supports ABI {}..={}): {e}",
            lang.abi_version(),
            env!("CARGO_PKG_VERSION"),
            tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION,
            tree_sitter::LANGUAGE_VERSION
        )
    })?;
    for kind in [
        "function_definition",
        "subscript_expression",
        "field_expression",
        "kernel_call_syntax",
        "launch_bounds",
        "template_declaration",
        "preproc_function_def",
        "array_declarator",
        "for_statement",
        "call_expression",
    ] {
        if lang.id_for_node_kind(kind, true) == 0 {
            return Err(format!(
                "the tree-sitter-cuda grammar has no node kind `{kind}`"
            ));
        }
    }
    Ok(())
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's parser (one parser per thread, created on first use).
pub(crate) fn with_parser<R>(f: impl FnOnce(&mut tree_sitter::Parser) -> Option<R>) -> Option<R> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&language()).ok()?;
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        parser.reset();
        f(parser)
    })
}

/// A parsed file: the tree-sitter tree (kept for incremental re-parsing by editors) and its model.
pub struct ParsedFile {
    pub model: FileModel,
    pub tree: tree_sitter::Tree,
    /// What each top-level item lowered to: the next [`parse_incremental`] moves the
    /// lowering of the items its edit did not touch instead of lowering them again.
    pieces: Vec<reuse::Piece>,
    /// How many of `model.defines`, at its end, [`ParsedFile::add_flag_defines`] added.
    flag_defines: usize,
}

impl ParsedFile {
    /// Gives the model the macros the build's flags define (`-D`, cudalint.toml, a compile
    /// command, a Makefile: `defines`' own entries) as the `#define`s they stand for, where
    /// the file does not define the name itself (a `#define` after `-D` redefines it): then
    /// `-Ddfloat=double` is a type to the analysis and `-DBLOCK=256` a constant, as in the
    /// compiler. They are nowhere in the file: their spans are empty, at its start. A second
    /// call replaces what the first added.
    pub fn add_flag_defines(&mut self, defines: &Defines) {
        use shift::Shift;
        let own = self.model.defines.len() - self.flag_defines;
        self.model.defines.truncate(own);
        self.flag_defines = 0;
        let mut text = String::new();
        for (name, value) in defines.user() {
            let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain && !value.contains('\n') && !self.model.defines.iter().any(|d| d.name == name)
            {
                text.push_str(&format!("#define {name} {value}\n"));
            }
        }
        if text.is_empty() {
            return;
        }
        let Some(parsed) = parse_prepared(&text) else {
            return;
        };
        let mut added = parsed.model.defines;
        added.shift(-(text.len() as i64));
        self.flag_defines = added.len();
        self.model.defines.extend(added);
    }
}

/// Parses only (no lowering): the floor that the speed benchmark compares against.
pub fn parse_tree(src: &str) -> Option<tree_sitter::Tree> {
    let text = preprocess::prepare(src, &Defines::default());
    with_parser(|p| p.parse(text.as_ref(), None))
}

/// Parses and lowers a file with no macros defined beyond nvcc's own.
pub fn parse(src: &str) -> Option<ParsedFile> {
    parse_with(src, &Defines::default())
}

/// Parses and lowers a file, selecting `#if` branches by `defines`. `None` only if
/// tree-sitter itself gives up (it does not on ordinary input; the caller reports it as an
/// error for that file).
pub fn parse_with(src: &str, defines: &Defines) -> Option<ParsedFile> {
    parse_prepared(&preprocess::prepare(src, defines))
}

/// Parses and lowers a text [`preprocess::prepare`] gave (for a caller that read it too).
pub fn parse_prepared(text: &str) -> Option<ParsedFile> {
    let tree = with_parser(|p| p.parse(text, None))?;
    contained(|| lower_tree(text, tree, None)).ok()
}

/// Runs `f`, turning a panic (a bug in cudalint) into its message, so that one file or one
/// kernel that trips a bug is reported as such and the run goes on with the others.
pub fn contained<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string())
    })
}

/// Parses and lowers a file like [`parse_with`], from its previous version: `old` is that
/// version's preprocessed text and parse, as an earlier call returned them. Tree-sitter
/// re-parses from the old tree, and the top-level items the edit did not touch keep their
/// lowering (moved out of the old model). Returns the parse and the preprocessed text to
/// keep for the next call.
///
/// The edit is the one range where the old and new *preprocessed* texts differ:
/// preprocessing can change bytes far from the user's edit (an `#if 0` typed above a kernel
/// blanks it), and only the texts tree-sitter actually saw keep the old tree valid.
pub fn parse_incremental(
    src: &str,
    defines: &Defines,
    old: Option<(&str, ParsedFile)>,
) -> Option<(ParsedFile, String)> {
    contained(|| parse_incremental_inner(src, defines, old))
        .ok()
        .flatten()
}

fn parse_incremental_inner(
    src: &str,
    defines: &Defines,
    old: Option<(&str, ParsedFile)>,
) -> Option<(ParsedFile, String)> {
    let text = preprocess::prepare(src, defines).into_owned();
    let Some((old_text, old)) = old else {
        let tree = with_parser(|p| p.parse(&text, None))?;
        return Some((lower_tree(&text, tree, None), text));
    };
    // nothing tree-sitter would see changed (a header, or an edit preprocessing blanks)
    if old_text == text {
        return Some((old, text));
    }
    let edit = incremental::edit_between(old_text, &text);
    let ParsedFile {
        mut model,
        mut tree,
        pieces,
        flag_defines,
    } = old;
    // the flags' defines are no top-level item of the text: the caller adds them again
    model.defines.truncate(model.defines.len() - flag_defines);
    tree.edit(&edit);
    let old_tree = tree;
    let tree = with_parser(|p| p.parse(&text, Some(&old_tree)))?;
    // tree-sitter may recover from an error differently when it reparses from an old tree
    // (nccl's anonymous-union fixture with a function's first line deleted): where an error
    // lies in what the edit changed, the text is parsed afresh, so the editor shows what
    // `check` shows; errors elsewhere (a file that always had some) keep the reuse
    if tree.root_node().has_error() {
        let errors = error_regions(tree.root_node());
        let touched = old_tree.changed_ranges(&tree).any(|r| {
            errors
                .iter()
                .any(|e| (e.start as usize) <= r.end_byte && r.start_byte <= e.end as usize)
        }) || errors
            .iter()
            .any(|e| (e.start as usize) <= edit.new_end_byte && edit.start_byte <= e.end as usize);
        if touched {
            let fresh = with_parser(|p| p.parse(&text, None))?;
            return Some((lower_tree(&text, fresh, None), text));
        }
    }
    let reuse = reuse::Reuse::new(model, pieces, &edit);
    Some((lower_tree(&text, tree, Some(reuse)), text))
}

fn lower_tree(text: &str, tree: tree_sitter::Tree, reuse: Option<reuse::Reuse>) -> ParsedFile {
    let mut lowerer = lower::Lowerer::new(text);
    lowerer.reuse = reuse;
    lowerer.top_level(tree.root_node(), 0);
    lowerer.model.error_regions = error_regions(tree.root_node());
    ParsedFile {
        model: lowerer.model,
        tree,
        pieces: lowerer.pieces,
        flag_defines: 0,
    }
}

/// The outermost ERROR and MISSING nodes of a tree.
fn error_regions(root: tree_sitter::Node) -> Vec<Span> {
    let mut out = Vec::new();
    if !root.has_error() {
        return out;
    }
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if lower::braced_launch_shape(n) {
            continue;
        }
        if n.is_error() || n.is_missing() {
            out.push(Span::new(n.start_byte(), n.end_byte()));
        } else if n.has_error() {
            stack.extend(n.children(&mut cursor));
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restrict_and_volatile_qualifiers_are_kept() {
        // (`#define RESTRICT __restrict__` is read by the run's specifier macros:
        // fixtures/register_reuse.cu)
        let src = "__global__ void k(const float* __restrict__ a, float* restrict b,\n\
                   float* __restrict c, volatile float* s, float* d) {\n\
                   volatile __shared__ int flag[1];\n\
                   }\n";
        let parsed = parse(src).unwrap();
        let k = &parsed.model.functions[0];
        let restrict: Vec<_> = k.params.iter().map(|p| p.is_restrict).collect();
        assert_eq!(restrict, [true, true, true, false, false]);
        assert!(k.params[3].ty.is_volatile && !k.params[4].ty.is_volatile);
        let Some(Stmt::Decl(flag)) = k.body.as_ref().and_then(|b| b.first()) else {
            panic!("{:?}", k.body);
        };
        assert!(flag.ty.is_volatile && flag.shared);
    }

    #[test]
    fn a_braced_block_shape_in_a_launch_is_no_parse_error() {
        // NVIDIA's multi-GPU Jacobi samples: every file had a parse-error region here
        let src = "template <int X, int Y> __global__ void k(float* a) {}\n\
                   void f(float* a, cudaStream_t s) {\n\
                   k<32, 8><<<4, {32, 8, 1}, 0, s>>>(a);\n\
                   }\n";
        let parsed = parse(src).unwrap();
        assert!(
            parsed.model.error_regions.is_empty(),
            "{:?}",
            parsed.model.error_regions
        );
        assert_eq!(parsed.model.launches.len(), 1);
        assert!(matches!(
            parsed.model.launches[0].config[1].kind,
            ExprKind::Init(_)
        ));
        // a type missing anywhere else still is one
        assert!(!parse("void f() { int x = (int){1}; float y = ; }")
            .unwrap()
            .model
            .error_regions
            .is_empty());
    }

    #[test]
    fn a_statement_macro_may_end_in_a_lambda_whose_body_takes_the_arguments() {
        // FlashInfer's `INIT_BASIC_VARIABLES(...)`: the invocation's `;` ends the lambda
        let src = "#define INIT(stride) \\\n  int const& tid = threadIdx.x; \\\n  auto load = [&](int k) { return row[tid * (stride) + k]; }\n";
        let parsed = parse(src).unwrap();
        let def = &parsed.model.defines[0];
        assert!(def.sequence, "{def:?}");
        let arg = Expr {
            kind: ExprKind::Int(2),
            span: Span::default(),
        };
        let Some(Stmt::Block(run)) = substitute::expand_statement_macro(def, &[arg]) else {
            panic!("not expanded");
        };
        let Some(Stmt::Decl(load)) = run.last() else {
            panic!("{run:?}");
        };
        let Some(Expr {
            kind: ExprKind::Lambda(l),
            ..
        }) = &load.init
        else {
            panic!("{load:?}");
        };
        assert!(!format!("{:?}", l.body).contains("stride"), "{:?}", l.body);
    }

    #[test]
    fn parameter_list_macros_and_launch_macros_are_read() {
        let src = "#define ARGS float* in, \\\n  int n\n\
                   #define LAUNCH(K) K<<<4, dim3(8, 32)>>>(a, 2)\n\
                   #define SIZE 4 * 8\n\
                   __global__ void k(ARGS) {}\n";
        let parsed = parse(src).unwrap();
        let m = &parsed.model;
        let names: Vec<&str> = m.defines[0]
            .as_params
            .iter()
            .flatten()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["in", "n"]);
        assert_eq!(m.defines[1].launches.len(), 1, "{:?}", m.defines[1]);
        assert_eq!(&*m.defines[1].launches[0].kernel, "K");
        assert!(m.defines[2].as_params.is_none());
        assert!(m.functions[0].params.is_empty());
        assert_eq!(m.functions[0].param_macro, Some((0, Name::from("ARGS"))));
    }

    #[test]
    fn launch_configurations_and_lambdas_called_in_place_are_lowered() {
        let src = "__global__ void k(float* a) {}\n\
                   void f(float* a) {\n\
                   cudaLaunchConfig_t cfg = {dim3(4), dim3(64), 0, 0, nullptr, 0};\n\
                   cudaLaunchKernelEx(&cfg, k, a);\n\
                   int r = [=]() { return 1; }();\n\
                   }\n";
        let parsed = parse(src).unwrap();
        let launch = &parsed.model.launches[0];
        assert_eq!(&*launch.kernel, "k");
        assert_eq!(launch.args.len(), 1);
        assert!(matches!(
            &launch.config[1].kind,
            ExprKind::Field { field, arrow: false, .. } if &**field == "blockDim"
        ));
        assert!(format!("{:?}", parsed.model.functions[1].body).contains(IMMEDIATE_CALL));
    }

    #[test]
    fn flag_defines_are_added_once_and_survive_an_edit() {
        let mut d = Defines::default();
        d.insert_flag("real=double").unwrap();
        d.insert_flag("TD=64").unwrap();
        let src = "#define TD 32\n__global__ void k(real* o) { o[threadIdx.x] = TD; }\n";
        let names = |p: &ParsedFile| -> Vec<(String, u32)> {
            p.model
                .defines
                .iter()
                .map(|x| (x.name.to_string(), x.span.end))
                .collect()
        };
        let (mut p, text) = parse_incremental(src, &d, None).unwrap();
        p.add_flag_defines(&d);
        p.add_flag_defines(&d);
        // the file's own TD wins; the flag's real is added once, spanning nothing
        assert_eq!(names(&p), [("TD".to_string(), 14), ("real".to_string(), 0)]);
        assert!(p.model.defines[1].as_type.is_some());
        let edited = src.replace("= TD", "= TD + 1");
        let (mut q, _) = parse_incremental(&edited, &d, Some((&text, p))).unwrap();
        q.add_flag_defines(&d);
        assert_eq!(names(&q), [("TD".to_string(), 14), ("real".to_string(), 0)]);
    }

    #[test]
    fn language_loads() {
        check_language().unwrap();
    }

    #[test]
    fn lowers_kernel_shared_and_launch() {
        let src = r#"
#define TD 32
template <int BS>
__global__ void __launch_bounds__(256) k(const float* __restrict__ in, float* out, int n) {
  __shared__ float tile[TD][TD + 1];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[t];
}
int main() { dim3 b(16, 16); k<64><<<g, b>>>(in, out, n); }
"#;
        let f = parse(src).unwrap().model;
        assert_eq!(f.defines[0].name, "TD");
        let k = &f.functions[0];
        assert_eq!(k.kind, FnKind::Global);
        assert_eq!(k.template_params[0].name, "BS");
        assert_eq!(k.params[0].ty.pointer_depth, 1);
        assert!(k.params[0].ty.is_const);
        assert!(k.launch_bounds.is_some());
        let body = k.body.as_ref().unwrap();
        match &body[0] {
            Stmt::Decl(d) => {
                assert!(d.shared);
                assert_eq!(d.dims.len(), 2);
                assert_eq!(&src[d.dims[1].span.range()], "TD + 1");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(f.launches.len(), 1);
        assert_eq!(f.launches[0].kernel, "k");
        assert_eq!(f.launches[0].config.len(), 2);
        assert_eq!(f.launches[0].host_fn, Some(1));
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let depth = 10_000;
        let src = format!(
            "__global__ void k(float* a) {{ a[{}0{}] = 1; }}",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let f = parse(&src).unwrap();
        assert_eq!(f.model.functions.len(), 1);
    }
}

#[cfg(test)]
mod struct_tests {
    #[test]
    fn enums_in_structs_are_their_constants_and_this_is_a_name() {
        // PCL's functors: block size and extents from an enum in the struct's body
        let src = "struct Est {\n\
                   enum { CTA = 256, WARPS = CTA / 32, NEXT };\n\
                   enum class Mode { A, B };\n\
                   float* p;\n\
                   __device__ float get(int i) const { return this->p[i]; }\n\
                   };\n";
        let m = super::parse(src).unwrap().model;
        let est = m.structs.iter().find(|s| s.name == "Est").unwrap();
        let statics: Vec<_> = est.statics.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(statics, ["CTA", "WARPS", "NEXT"]);
        assert_eq!(est.fields.len(), 1);
        assert!(m.globals.iter().any(|g| g.name == "Mode::B"));
        let get = m.functions.iter().find(|f| f.name == "Est::get").unwrap();
        let text = format!("{:?}", get.body);
        assert!(text.contains("Ident(\"this\")"), "{text}");
    }

    #[test]
    fn member_templates_are_member_functions_and_nested_structs() {
        // qsim's simulator: the launches are in member function templates of a class template
        let src = "template <typename FP = float> class Sim {\n\
                   using idx_type = unsigned long long;\n\
                   public:\n\
                   template <unsigned G> struct IndicesH { idx_type* xss; };\n\
                   template <unsigned G> struct IndicesL : public IndicesH<G> { unsigned* qis; };\n\
                   template <unsigned G> void Apply(FP* s) const { k<G><<<1, 64>>>(s); }\n\
                   };\n";
        let m = super::parse(src).unwrap().model;
        let apply = m.functions.iter().find(|f| f.name == "Sim::Apply").unwrap();
        let params: Vec<_> = apply
            .template_params
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(params, ["FP", "G"]);
        assert_eq!(apply.owner.as_deref(), Some("Sim"));
        assert_eq!(m.launches.len(), 1);
        let nested = m
            .structs
            .iter()
            .find(|s| s.name == "Sim::IndicesL")
            .unwrap();
        assert_eq!(nested.template_params, ["G"]);
        assert_eq!(nested.bases.len(), 1);
        assert_eq!(nested.bases[0].name, "IndicesH<G>");
        assert!(m.structs.iter().any(|s| s.name == "IndicesH"));
    }

    #[test]
    fn a_scalar_type_braced_around_one_value_is_a_cast() {
        let src = "__global__ void k(unsigned long long* p) {\n\
                   p[idx_type{threadIdx.x} * 2] = 0;\n\
                   p[0] = Packed<T>{p[1]}.x;\n\
                   }\n";
        let m = super::parse(src).unwrap().model;
        let text = format!("{:?}", m.functions[0].body);
        assert!(
            text.contains("Cast { ty: TypeRef { name: \"idx_type\""),
            "{text}"
        );
        assert!(text.contains("Init("), "{text}");
    }

    #[test]
    fn a_pragma_operator_is_no_syntax() {
        let src = "__global__ void k(float* p) {\n\
                   _Pragma(\"unroll 2\") for (int i = 0; i < 4; ++i) p[i] = 1;\n\
                   }\n";
        let parsed = super::parse(src).unwrap();
        assert!(parsed.model.functions[0].parse_error.is_none());
        // (a macro that stands for one, `#define CUDA_UNROLL _Pragma("unroll")`, is a
        // specifier macro of nothing, blanked where it is used)
        let none = |_: &str| None;
        assert_eq!(
            crate::preprocess::specifier_of("_Pragma(\"unroll\")", &none),
            Some(crate::Specifier::Other)
        );
    }

    #[test]
    fn template_structs_keep_statics_and_their_shared_conversion() {
        let src = "template<class E>\nstruct alignas(16) P { static constexpr const size_t size = sizeof(int4) / sizeof(E); E payload[size]; };\ntemplate <class T> struct SharedMemory { __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; } };\n";
        let m = super::parse(src).unwrap().model;
        let p = m.structs.iter().find(|s| s.name == "P").unwrap();
        assert_eq!(p.template_params, ["E"]);
        assert_eq!(p.statics.len(), 1);
        assert_eq!(p.statics[0].0, "size");
        assert_eq!(p.fields.len(), 1);
        let s = m.structs.iter().find(|s| s.name == "SharedMemory").unwrap();
        assert_eq!(s.extern_shared.as_deref(), Some("__smem"));
    }

    #[test]
    fn template_unions_and_member_types() {
        let src = "template <unsigned int N> union group_storage { unsigned int tag[N]; unsigned int idx[N]; };\n\
                   template <> struct Map<P_int> { typedef int Type; using Wide = long long; };\n";
        let m = super::parse(src).unwrap().model;
        let u = m
            .structs
            .iter()
            .find(|s| s.name == "group_storage")
            .unwrap();
        assert!(u.is_union);
        assert_eq!(u.template_params, ["N"]);
        assert_eq!(u.fields.len(), 2);
        let names: Vec<&str> = m.typedefs.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Map<P_int>::Type", "Map<P_int>::Wide"]);
    }
}

#[cfg(test)]
mod contained_tests {
    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(super::contained(|| 7), Ok(7));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let caught = super::contained(|| -> i32 { panic!("bad byte {}", 3) });
        std::panic::set_hook(hook);
        assert_eq!(caught, Err("bad byte 3".to_string()));
    }
}
