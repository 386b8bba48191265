//! The kernel model: a small, owned AST of what the analysis needs from a CUDA file.
//! Spans are byte offsets into the original source (preprocessing keeps offsets stable).

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// An identifier or a type's spelling: up to 24 bytes (nearly every name in CUDA code) it is
/// held inline, where a `String` allocated for each one was a fifth of a large run's models.
pub type Name = compact_str::CompactString;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeRef {
    /// Base type spelled as in the source, whitespace-normalised (`unsigned int`, `float4`, `P3`, `T`).
    pub name: Name,
    pub pointer_depth: u8,
    pub is_const: bool,
    /// `volatile`: every read and write goes to memory, none is kept in a register.
    pub is_volatile: bool,
}

impl TypeRef {
    pub fn named(name: &str) -> TypeRef {
        TypeRef {
            name: name.into(),
            pointer_depth: 0,
            is_const: false,
            is_volatile: false,
        }
    }
}

/// A type's spelling without the spaces that do not separate two words (`Map< P_int >` and
/// `Map<P_int>` are one type), and without a leading `typename`: the key a struct's member
/// typedef is filed and looked up under.
pub fn compact_type_name(name: &str) -> String {
    let name = name.trim().trim_start_matches("typename ");
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(name.len());
    let mut pending_space = false;
    for c in name.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && word(c) && out.chars().last().is_some_and(word) {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl BinOp {
    pub fn from_token(t: &str) -> Option<BinOp> {
        Some(match t {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "&&" => BinOp::And,
            "||" => BinOp::Or,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplateArg {
    Type(TypeRef),
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    Float,
    Bool(bool),
    Str,
    Ident(Name),
    Field {
        base: Box<Expr>,
        field: Name,
        arrow: bool,
    },
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `op` is `None` for plain `=`, the arithmetic operator for `+=` and friends.
    Assign {
        op: Option<BinOp>,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    // boxed slices, 16 bytes where a vector takes 24 (an empty one allocates nothing): a call
    // is the largest expression, and every expression is as large as it
    Call {
        callee: Name,
        template_args: TemplateArgs,
        args: Box<[Expr]>,
    },
    /// C-style casts and `static_cast` / `reinterpret_cast` / `const_cast`.
    Cast {
        ty: TypeRef,
        arg: Box<Expr>,
    },
    SizeofType(TypeRef),
    SizeofExpr(Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    /// `{a, b}` or constructor arguments `dim3 b(16, 16)`.
    Init(Vec<Expr>),
    /// `[&](int i) { ... }`, `[=] __device__ (int i) { ... }`: a function object, called
    /// where it is passed to.
    Lambda(std::sync::Arc<Lambda>),
    /// Something the model does not represent; the text says what.
    Unsupported(String),
}

/// A call's explicit template arguments (`load<float4>(p)`), in one pointer: most calls have
/// none, and a call's size is every expression's size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TemplateArgs(Option<Box<Box<[TemplateArg]>>>);

impl From<Vec<TemplateArg>> for TemplateArgs {
    fn from(args: Vec<TemplateArg>) -> TemplateArgs {
        TemplateArgs((!args.is_empty()).then(|| Box::new(args.into_boxed_slice())))
    }
}

impl std::ops::Deref for TemplateArgs {
    type Target = [TemplateArg];
    fn deref(&self) -> &[TemplateArg] {
        self.0.as_deref().map_or(&[], |b| &b[..])
    }
}

impl std::ops::DerefMut for TemplateArgs {
    fn deref_mut(&mut self) -> &mut [TemplateArg] {
        self.0.as_deref_mut().map_or(&mut [], |b| &mut b[..])
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    /// `[&]` or `[&x]`: what the body assigns to a captured name is the enclosing function's.
    pub by_reference: bool,
}

impl Expr {
    pub fn unsupported(what: impl Into<String>, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Unsupported(what.into()),
            span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    /// `None` for `[]` (extern shared arrays, arrays sized by their initializer).
    pub size: Option<Expr>,
    /// Span of the size text inside the brackets (empty at `[` for `[]`).
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub name: Name,
    pub name_span: Span,
    pub ty: TypeRef,
    pub dims: Vec<Dim>,
    pub init: Option<Expr>,
    pub shared: bool,
    pub constant: bool,
    /// `__device__` or `__managed__`: at file scope, an object in global memory.
    pub device: bool,
    pub is_extern: bool,
    pub is_const: bool,
    pub is_reference: bool,
    pub span: Span,
}

impl Decl {
    /// A plain local variable: no memory-space qualifier, not extern, const or a reference.
    pub fn local(
        name: Name,
        name_span: Span,
        ty: TypeRef,
        dims: Vec<Dim>,
        init: Option<Expr>,
        span: Span,
    ) -> Decl {
        Decl {
            name,
            name_span,
            ty,
            dims,
            init,
            shared: false,
            constant: false,
            device: false,
            is_extern: false,
            is_const: false,
            is_reference: false,
            span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Decl(Box<Decl>),
    Expr(Expr),
    // conditions are boxed so that a statement is no larger than an expression statement:
    // the statements of a large corpus were a third of a run's memory
    If {
        cond: Box<Expr>,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    For {
        init: Vec<Stmt>,
        cond: Option<Box<Expr>>,
        update: Option<Box<Expr>>,
        body: Vec<Stmt>,
        span: Span,
    },
    While {
        cond: Box<Expr>,
        body: Vec<Stmt>,
        do_while: bool,
    },
    Block(Vec<Stmt>),
    Return(Option<Expr>, Span),
    Break,
    Continue,
    Other(Span),
}

/// Every expression a list of statements holds at statement level (initialisers, expression
/// statements, conditions, loop updates, returned values), nested statements included, in
/// source order.
pub fn statement_exprs<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Expr)) {
    for s in body {
        match s {
            Stmt::Decl(d) => {
                if let Some(init) = &d.init {
                    f(init);
                }
            }
            Stmt::Expr(e) | Stmt::Return(Some(e), _) => f(e),
            Stmt::If { cond, then, els } => {
                f(cond);
                statement_exprs(then, f);
                statement_exprs(els, f);
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                statement_exprs(init, f);
                for e in cond.iter().chain(update.iter()) {
                    f(e);
                }
                statement_exprs(body, f);
            }
            Stmt::While { cond, body, .. } => {
                f(cond);
                statement_exprs(body, f);
            }
            Stmt::Block(b) => statement_exprs(b, f),
            Stmt::Return(None, _) | Stmt::Break | Stmt::Continue | Stmt::Other(_) => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    Global,
    Device,
    HostDevice,
    Host,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TemplateParam {
    pub name: Name,
    pub is_type: bool,
    pub default: Option<TemplateArg>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Name,
    pub ty: TypeRef,
    pub is_reference: bool,
    /// `float* __restrict__ p`: nothing else the function reaches aliases what `p` points to,
    /// so nvcc keeps values loaded through it (or through others past stores to it) in
    /// registers.
    pub is_restrict: bool,
    /// An array parameter's dimensions after the first, which decays to the pointer
    /// (`float a[6][24][24]` is a pointer to `float[24][24]`).
    pub dims: Vec<Dim>,
    /// `const float* rs = nullptr`: the value a call that leaves the argument out passes.
    pub default: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: Name,
    pub name_span: Span,
    pub span: Span,
    pub kind: FnKind,
    pub template_params: Vec<TemplateParam>,
    pub params: Vec<Param>,
    pub body: Option<Vec<Stmt>>,
    /// `__launch_bounds__(max_threads, ...)`: the first argument.
    pub launch_bounds: Option<Expr>,
    /// First parse-error region inside the function, if any.
    pub parse_error: Option<Span>,
    /// The struct whose body defines it (`tile::get_i`, named `tile::get_i`); its template
    /// parameters come first in `template_params`.
    pub owner: Option<String>,
    /// It returns a reference (`T& operator[](int i)`): what it returns is a place, read or
    /// written by the caller.
    pub returns_reference: bool,
    /// The pointer type it returns (`T* device_data() const`): where the analysis cannot
    /// follow what it returns, a pointer to that type all the same.
    pub returns_pointer: Option<TypeRef>,
    /// A parameter written as one object-like macro (gpu4pyscf's `rys_vjk_ip1_1111(
    /// JKMATRIX_KERNEL_ARGS)`, the macro in a header), with how many parameters come before
    /// it: `params` lacks the macro's until the run finds it (`Define::as_params`) and writes
    /// them in there.
    pub param_macro: Option<(usize, Name)>,
}

impl Function {
    /// Whether a call with `n` arguments can call it: trailing parameters with defaults may be
    /// left out.
    pub fn takes(&self, n: usize) -> bool {
        let required = self
            .params
            .iter()
            .take_while(|p| p.default.is_none())
            .count();
        (required..=self.params.len()).contains(&n)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDef {
    /// Empty for an anonymous struct or union member, whose fields are the outer struct's.
    pub name: Name,
    pub ty: TypeRef,
    pub array_len: Option<Expr>,
    /// The dimensions after the first of an array member (`dcomplex e[3][3]`: `[3]`).
    pub inner_dims: Vec<Expr>,
    /// `alignas(128) IdxT filter_cnt;`: an alignment above its type's (RAFT's counters, each
    /// on its own 128 bytes).
    pub align: Option<Expr>,
    /// `TempStorage& temp_storage;` (CUB's agents): the member names an object elsewhere.
    pub is_reference: bool,
}

/// The callee of a lambda called where it is written (`[=]() { ... }()`), whose first
/// argument is the lambda.
pub const IMMEDIATE_CALL: &str = "[lambda]";

/// The callee of a member function called on a temporary object (`Agent<BT>(ts, in,
/// out).Process(off)`, `BlockLoad(temp_storage.load).Load(p, v)`): the first argument is the
/// object's expression, the second the callee as written (an identifier; `[functor].operator()`
/// for `Kernel{}(params)`), the rest the call's arguments.
pub const TEMPORARY_CALL: &str = "[temporary]";

/// The callee of a constructor's initialiser that may name a base class (`: Base<const T>(p,
/// n)`), whose first argument is the name as written and the rest its arguments: the analysis
/// runs the base's constructor on the object when the name is one of the class's bases.
pub const BASE_INIT: &str = "[base]";

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: Name,
    /// Non-static data members, in order: the layout.
    pub fields: Vec<FieldDef>,
    /// `template <class T> struct S`: the parameters' names.
    pub template_params: Vec<Name>,
    /// `static constexpr size_t size = sizeof(int4) / sizeof(T);`: name and initializer.
    pub statics: Vec<(Name, Expr)>,
    /// The `extern __shared__` array a member function hands out (cuda-samples'
    /// `SharedMemory<T>`, whose `operator T*()` returns it): constructing one is a pointer to
    /// the block's dynamic shared memory.
    pub extern_shared: Option<String>,
    /// A `union`: every field at offset 0, as large as its largest.
    pub is_union: bool,
    /// `struct __align__(4 * sizeof(T)) BoxCorner`, `struct alignas(16) P`: an alignment above
    /// its members' (nvcc then copies it whole in 8- or 16-byte pieces).
    pub align: Option<Expr>,
    /// `struct IndicesL : public IndicesH<G>`: the base classes as written, whose members
    /// are found through this one (their layout is not modelled).
    pub bases: Vec<TypeRef>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Define {
    pub name: Name,
    pub params: Option<Vec<Name>>,
    /// The replacement parsed as an expression; `None` when it is empty or not an expression.
    pub body: Option<Expr>,
    /// The replacement read as a type, when it is one (`#define float_sw4 double`,
    /// `#define real_t unsigned long long`, `#define fptr float*`): the macro is then a type
    /// alias wherever a type is expected.
    pub as_type: Option<TypeRef>,
    /// A function-like macro whose replacement is a statement: a loop head (`#define
    /// CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i +=
    /// blockDim.x * gridDim.x)`, lowered with an empty body), a block (`#define CADD(a, b, c)
    /// { (c).real = (a).real + (b).real; ... }`) or `do { ... } while (0)`.
    pub statement: Option<Box<Stmt>>,
    /// The statement is a run of statements with no braces around them (mumax's `#define
    /// reduce(load, op, atomicOp) __shared__ float sdata[512]; int tid = ...; ...`): they run
    /// in the invoker's scope, what they declare visible after the invocation.
    pub sequence: bool,
    /// The replacement is empty (`#define CUDA_ASSERT(expr)` in a release build): an
    /// invocation compiles to nothing, its arguments included.
    pub empty: bool,
    /// The replacement pastes names together (`A[n*LD##A+m]`): an invocation is its body with
    /// the arguments written in, as the preprocessor makes it.
    pub pastes: bool,
    /// The launches the replacement makes, its parameters left as names (`#define
    /// LAUNCH(KERNEL) KERNEL<<<grid, block>>>(args)`): an invocation in host code launches
    /// them with its arguments written in.
    pub launches: Vec<Launch>,
    /// The replacement read as a parameter list (`#define KARGS float* in, float* out, int
    /// n`): a function declared `k(KARGS)` takes these.
    pub as_params: Option<Vec<Param>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub kernel: Name,
    pub template_args: Vec<TemplateArg>,
    /// `<<<grid, block, smem, stream>>>`
    pub config: Vec<Expr>,
    pub args: Vec<Expr>,
    pub span: Span,
    /// Index into `FileModel::functions` of the function that contains the launch.
    pub host_fn: Option<usize>,
}

/// An explicit instantiation of a function template (`template void scan_cuda<float,
/// float>(Params &, cudaStream_t);`, in the file of each dtype a library splits its kernels
/// into): where nothing calls the template, what its launches are instantiated with.
#[derive(Clone, Debug, PartialEq)]
pub struct Instantiation {
    /// As written, qualified where it is (`Config::get`).
    pub function: String,
    pub template_args: Vec<TemplateArg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Typedef {
    pub name: Name,
    pub ty: TypeRef,
    /// An alias template's parameters (`template <typename T> using cuda_complex =
    /// typename std::conditional<...T...>::type;`): `ty` names them, and `cuda_complex<float>`
    /// is `ty` with `float` put in for `T`.
    pub params: Vec<Name>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileModel {
    pub functions: Vec<Function>,
    pub structs: Vec<StructDef>,
    pub typedefs: Vec<Typedef>,
    pub defines: Vec<Define>,
    /// File-scope declarations: `__shared__`/`__constant__` arrays, `const int N = ...`.
    pub globals: Vec<Decl>,
    pub launches: Vec<Launch>,
    pub instantiations: Vec<Instantiation>,
    /// Parse-error regions outside any function definition.
    pub stray_errors: Vec<Span>,
    /// `#include "path"` targets as written (angle-bracket includes are system headers).
    pub includes: Vec<String>,
    /// Every outermost ERROR or MISSING region of the parse, inside functions or not.
    pub error_regions: Vec<Span>,
    pub type_names: TypeNames,
    pub struct_names: StructNames,
}

/// Where a file typedefs and `#define`s each name, made the first time a type is looked up in
/// it: each lookup scanned every typedef and macro of every file it could see, a third of the
/// time of a file under AMGX's headers. Filed by the name's hash, which a lookup computes once
/// for all the files it asks. Made from the model's own items, so no part of its equality; a
/// model is not changed once it is lowered (an edited file's is made anew).
#[derive(Clone, Debug, Default)]
pub struct TypeNames(std::sync::OnceLock<HashMap<u64, (u32, u32), PassHash>>);

/// Where a file defines each struct, by the name's hash, made as [`TypeNames`] is and for the
/// same reason: a struct lookup scanned every struct of every visible file (a sixth of a run
/// over k2, whose host code asks for its `Array1<T>`s under a hundred headers).
#[derive(Clone, Debug, Default)]
pub struct StructNames(std::sync::OnceLock<HashMap<u64, u32, PassHash>>);

impl PartialEq for StructNames {
    fn eq(&self, _: &StructNames) -> bool {
        true
    }
}

type PassHash = std::hash::BuildHasherDefault<PassHasher>;

/// The key is a hash already.
#[derive(Default)]
pub struct PassHasher(u64);

impl std::hash::Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

impl PartialEq for TypeNames {
    fn eq(&self, _: &TypeNames) -> bool {
        true
    }
}

use std::collections::HashMap;

/// Neither a typedef nor a macro.
const NONE: u32 = u32::MAX;
/// Two names of the file have the hash: the file is scanned.
const SHARED: u32 = u32::MAX - 1;

/// A name a type lookup asks every visible file for, hashed once.
pub struct TypeKey<'a> {
    name: &'a str,
    hash: u64,
}

impl TypeKey<'_> {
    pub fn new(name: &str) -> TypeKey<'_> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        // the same on every thread: a file's index is made on one and read on all
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(name);
        TypeKey { name, hash }
    }
}

impl FileModel {
    /// The file's first struct named `key`.
    pub fn struct_named(&self, key: &TypeKey) -> Option<&StructDef> {
        let index = self.struct_names.0.get_or_init(|| {
            let mut index: HashMap<u64, u32, PassHash> = HashMap::default();
            let mut names: HashMap<u64, &str, PassHash> = HashMap::default();
            for (i, st) in self.structs.iter().enumerate() {
                let hash = TypeKey::new(&st.name).hash;
                let first = *names.entry(hash).or_insert(&st.name);
                let e = index.entry(hash).or_insert(i as u32);
                if first != st.name {
                    *e = SHARED;
                }
            }
            index
        });
        match *index.get(&key.hash)? {
            SHARED => self.structs.iter().find(|st| st.name == key.name),
            i => self
                .structs
                .get(i as usize)
                .filter(|st| st.name == key.name),
        }
    }

    /// The type the first typedef of `name` stands for (not `typedef struct S S`'s), and the
    /// type the last `#define` of `name` spells where it spells one.
    pub fn type_named(&self, key: &TypeKey) -> (Option<&TypeRef>, Option<&TypeRef>) {
        let index = self.type_names.0.get_or_init(|| {
            fn file<'m, 'i>(
                index: &'i mut HashMap<u64, (u32, u32), PassHash>,
                names: &mut HashMap<u64, &'m str, PassHash>,
                name: &'m str,
            ) -> &'i mut (u32, u32) {
                let hash = TypeKey::new(name).hash;
                let first = *names.entry(hash).or_insert(name);
                let e = index.entry(hash).or_insert((NONE, NONE));
                if first != name {
                    *e = (SHARED, SHARED);
                }
                e
            }
            let mut index: HashMap<u64, (u32, u32), PassHash> = HashMap::default();
            let mut names: HashMap<u64, &str, PassHash> = HashMap::default();
            for (i, t) in self.typedefs.iter().enumerate() {
                if t.ty.name != t.name {
                    let e = file(&mut index, &mut names, &t.name);
                    if e.0 == NONE {
                        e.0 = i as u32;
                    }
                }
            }
            for (i, d) in self.defines.iter().enumerate() {
                let e = file(&mut index, &mut names, &d.name);
                if e.1 != SHARED {
                    // a later definition that is not a type hides an earlier one that is
                    e.1 = if d.as_type.is_some() { i as u32 } else { NONE };
                }
            }
            index
        });
        let name = key.name;
        match index.get(&key.hash) {
            None => (None, None),
            Some(&(SHARED, _)) => (
                self.typedefs
                    .iter()
                    .find(|t| t.name == name && t.ty.name != name)
                    .map(|t| &t.ty),
                self.defines
                    .iter()
                    .rev()
                    .find(|d| d.name == name)
                    .and_then(|d| d.as_type.as_ref()),
            ),
            Some(&(t, d)) => {
                let typedef = self.typedefs.get(t as usize);
                let define = self.defines.get(d as usize);
                // the file's one name of this hash may not be the one asked for
                let ours = typedef.map(|t| &t.name).or(define.map(|d| &d.name));
                if ours.is_none_or(|n| n != name) {
                    return (None, None);
                }
                (
                    typedef.map(|t| &t.ty),
                    define.and_then(|d| d.as_type.as_ref()),
                )
            }
        }
    }
}
