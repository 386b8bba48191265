//! Walks one kernel under one launch configuration, substituting definitions as it goes,
//! and records every memory access with its byte address as a symbolic function of the lane.
//! Semantics are those of the first iteration of every loop, with induction variables bound
//! to `init + iteration * step` so the cost model can sample later iterations.
//!
//! This file holds the interpreter's state (`KernelRun`: frames, scopes, the lane mask, the
//! accesses recorded), its values (`Val`, `Ptr`, `Place`) and `run_kernel`. Each neighbour
//! holds one concern: `stmt.rs` statements and declarations, `loops.rs` loops and their
//! induction variables, `expr.rs` rvalues, `names.rs` name lookup and static members,
//! `place.rs` memory places, loads and stores, `lane_term.rs` the term a diagnostic
//! underlines, `call.rs` calls, `groups.rs` cooperative groups, `launch.rs` launch sites.

mod call;
mod closures;
mod cub;
mod expr;
mod groups;
mod lane_term;
mod launch;
mod loops;
mod names;
mod place;
mod stmt;
mod type_memo;

pub use launch::{block_of_form, LaunchValues};
pub use loops::trip_count;

use crate::project::Project;
use crate::sym::{self, Sym, Var};
use crate::types::{self, Layout};
use crate::Options;
use cudalint_syntax::{Expr, ExprKind, FileModel, Function, Name, Span, TemplateArg, TypeRef};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
    Unknown,
}

impl Space {
    pub fn as_str(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Constant => "constant",
            Space::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum AccessOp {
    Load,
    Store,
    Atomic,
}

impl AccessOp {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessOp::Load => "load",
            AccessOp::Store => "store",
            AccessOp::Atomic => "atomic",
        }
    }
}

/// A place in a file: which file of the project, which bytes.
pub type Loc = (usize, Span);

/// A call through which an access was inlined: where the call is, and what it calls.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineSite {
    pub loc: Loc,
    pub callee: String,
}

#[derive(Clone, Debug)]
pub struct FieldInfo {
    pub name: String,
    pub struct_name: String,
    pub struct_size: i64,
    /// The struct's alignment: nvcc widens field loads only up to it.
    pub struct_align: i64,
    pub offset: i64,
}

/// A direct index into a shared array with constant dimensions: what the padding fix needs.
#[derive(Clone, Debug)]
pub struct SharedIndex {
    pub indices: Vec<Sym>,
    pub dims: Vec<i64>,
    pub elem_size: i64,
    pub field_offset: i64,
}

#[derive(Clone, Debug)]
pub struct RawAccess {
    /// Its address reads a variable the enclosing loops assign (`val[node]` with `node =
    /// next[node]` at the end of the body): it moves between iterations even where the one
    /// evaluation of the body cannot tell.
    pub loop_carried: bool,
    pub loc: Loc,
    pub space: Space,
    pub op: AccessOp,
    pub bytes: i64,
    pub elem_type: String,
    pub base: String,
    pub decl: Option<Loc>,
    /// Byte offset from the base of the array or pointer.
    pub addr: Sym,
    pub mask: Sym,
    /// Enclosing loops, outermost first.
    pub loops: Vec<u32>,
    /// Read by the innermost loop's condition: once an iteration and once more to leave.
    pub in_condition: bool,
    pub field: Option<FieldInfo>,
    pub shared_index: Option<SharedIndex>,
    pub lane_term: Option<Loc>,
    pub assumptions: Vec<String>,
    /// Iterations of the innermost loop one instruction covers: 1, or the width of the
    /// vector load nvcc makes of an unrolled loop over consecutive elements.
    pub iter_step: i64,
    /// The calls of `__device__` functions the access was inlined through, innermost first:
    /// nvcc's line table files the access at its own line with this chain.
    pub inlined_at: Vec<InlineSite>,
    /// Which of the instructions a copy of a wider or less aligned value is split into this is,
    /// and how many there are (a `float3` is three 4-byte accesses).
    pub piece: Option<(u8, u8)>,
    /// The branch of an `if` the access sits in (0 outside any): nvcc merges neighbouring
    /// accesses into one vector access only within one branch, whatever the analysis knows of
    /// the condition.
    pub branch: u32,
    /// The bytes of the element when nvcc loads only its low part (`(int)offsets[i]` of a
    /// `long`): the ideal is what the declared elements cost, a narrower read being no waste.
    pub narrowed_from: Option<i64>,
    /// A load hoisted out of a loop: the loop's head. nvcc files the one load under a line
    /// from there to its own (a hoisted instruction loses its line and takes that of the code
    /// next to it: CTranslate2's layer norm reads `s_mean` and `s_variance` in its loop, one
    /// `LDS.64` filed under the `for`; in `fixtures/member_types_and_loop_steps.cu` under the
    /// body's first line).
    pub issued_at: Option<Loc>,
    /// The shared store of an asynchronous copy (`__pipeline_memcpy_async`, `LDGSTS`): the
    /// byte offset its data is read from in global memory, whose layout its cost follows.
    pub copied_from: Option<Sym>,
    /// The global load of an asynchronous copy.
    pub copy_source: bool,
    /// Through a `volatile` pointer or object: nvcc issues each access as written, never two
    /// members in one vector instruction (Barnes-Hut's four `posMassd[k].x = ...` stores to a
    /// `volatile float4*`, four `STG.E` on an H100).
    pub volatile: bool,
    /// The bytes of the whole array where its declaration fixes them (`__device__ const float
    /// qmap[16]`): a gather into it touches no more sectors than the array spans.
    pub extent: Option<i64>,
    /// An atomic sm_90 has no shared-memory instruction for (float, double and 64-bit
    /// integer `atomicAdd`, 64-bit `atomicMax`...): a compare-and-swap loop, `LDS` then
    /// `ATOMS.CAST.SPIN`, which ncu counts at twice the wavefronts of the width, whatever the
    /// banks (fixture shared_cas_atomics.cu on an H100).
    pub cas: bool,
}

#[derive(Clone, Debug)]
pub struct RuntimeVar {
    pub name: String,
    pub value: i64,
}

#[derive(Clone, Debug)]
pub struct LoopInfo {
    /// The trip count when start, bound and step are constants.
    pub trip: Option<i64>,
    /// The loop's statement (a `for`) or condition (a `while`): estimates name its line.
    pub at: Loc,
    /// The induction variable's start, bound and step, for a trip count under the values
    /// assumed for runtime quantities (`for (k = 0; k < K; k += 32)`).
    pub bounds: Option<LoopBounds>,
    /// The count is a bound the rest of the condition may cut short (`i < 4 && in[i] > 0`).
    pub at_most: bool,
}

/// `for (v = start; v <cmp> bound; v += step)`, or `v <<= k` / `v >>= k` when `shift` is set.
#[derive(Clone, Debug)]
pub struct LoopBounds {
    pub start: Sym,
    pub bound: Sym,
    pub step: Sym,
    pub cmp: cudalint_syntax::BinOp,
    pub shift: Option<(cudalint_syntax::BinOp, i64)>,
}

#[derive(Clone, Debug)]
struct Ptr {
    space: Space,
    base: Rc<str>,
    offset: Sym,
    elem: TypeRef,
    /// Dimensions of what the pointer points to beyond the element (`float[33]` for a
    /// decayed `float[32][33]`); a dimension only known at run time (a template parameter
    /// with no visible instantiation, `As[BS][BS]`) is a runtime value like any other.
    dims: Rc<[Sym]>,
    decl: Option<Loc>,
    /// Indices applied so far from the array's own name, with its full dims.
    path: Option<(Vec<Sym>, Rc<[i64]>)>,
}

/// `c ? p : q` of two pointers: one of the same array, at the offset the lanes pick; of two
/// arrays of one space and element type (FasterTransformer's `data_ptr = qk_id == 0 ? Q : K`,
/// a ping-pong `cur = it & 1 ? buf1 : buf0`), an array standing for both (allocations start
/// equally aligned: the lanes' pattern is the same in either), named after both so that
/// neither's loads are taken for its.
/// Of a pointer on one side and null on the other (`float* out_buf = nullptr; if (pass == 1)
/// out_buf = bufs;`, `out_buf ? out_idx_buf : in_idx` with `in_idx` a launch's `nullptr`), the
/// pointer: where it is used, a test has found it set.
fn pointer_or_null<'v>(a: &'v Val, b: &'v Val) -> Option<&'v Val> {
    match (a, b) {
        (p @ Val::Ptr(_), Val::Int(z)) | (Val::Int(z), p @ Val::Ptr(_))
            if z.as_const() == Some(0) =>
        {
            Some(p)
        }
        _ => None,
    }
}

fn either_ptr(c: Sym, mut p: Ptr, q: Ptr) -> Option<Ptr> {
    if p.space != q.space {
        return None;
    }
    if p.base != q.base {
        if p.elem.name != q.elem.name || p.elem.pointer_depth != q.elem.pointer_depth {
            return None;
        }
        // a loop's merges meet the same arrays again: each is named once
        let mut names: Vec<&str> = p.base.split(" or ").collect();
        for n in q.base.split(" or ") {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        p.base = names.join(" or ").into();
        if p.dims.len() != q.dims.len() {
            p.dims = Rc::from(Vec::new());
        }
    }
    p.offset = sym::select(c, p.offset, q.offset);
    p.path = None;
    Some(p)
}

#[derive(Clone, Debug)]
enum Val {
    Int(Sym),
    Ptr(Ptr),
    Dim3([Sym; 3]),
    Aggregate {
        name: Rc<str>,
        ty: TypeRef,
    },
    /// A cooperative group: the thread block (0), the grid (-1), or a tile of N threads.
    Group(i64),
    /// A CUDA vector value held component by component (`uint4 i = {4*t, 4*t+1, ...}`).
    Vector(Rc<[Sym]>),
    /// A lambda, with what it captured where it was made.
    Closure(Rc<Closure>),
    Unknown(Rc<str>),
}

/// A lambda's definition and the state it captured: the locals visible where it was made (by
/// value; `[&]` ones are written back where the call is in the same frame), the file and
/// template bindings of the function that made it, and which frame that was.
#[derive(Debug)]
struct Closure {
    def: std::sync::Arc<cudalint_syntax::Lambda>,
    captured: Vec<(Rc<str>, Val)>,
    file: usize,
    template: Vec<(Name, TArg)>,
    frame_depth: usize,
    /// The invocation of the statement macro whose replacement wrote it, if one did.
    written_at: Option<Loc>,
}

impl Val {
    fn sym(&self) -> Sym {
        match self {
            Val::Int(s) => s.clone(),
            Val::Ptr(_) => sym::unknown("pointer used as an integer"),
            Val::Dim3(_) => sym::unknown("dim3 used as an integer"),
            Val::Aggregate { name, .. } => {
                sym::unknown(format!("struct `{name}` used as an integer"))
            }
            Val::Group(_) => sym::unknown("cooperative group used as an integer"),
            Val::Vector(_) => sym::unknown("vector value used as an integer"),
            Val::Closure(_) => sym::unknown("lambda used as an integer"),
            Val::Unknown(r) => sym::unknown(r.clone()),
        }
    }
}

#[derive(Clone)]
struct Place {
    ptr: Ptr,
    /// The place is a row of a multi-dimensional array, not an element: it decays, no access.
    subarray: bool,
    bytes: i64,
    ty: TypeRef,
    field: Option<FieldInfo>,
    assumption: Option<String>,
}

impl Place {
    /// A whole object (not a row, not a pointer) in global or shared memory: what a reference
    /// to it names, member by member.
    fn is_object_in_memory(&self) -> bool {
        !self.subarray
            && self.ty.pointer_depth == 0
            && matches!(self.ptr.space, Space::Global | Space::Shared)
    }
}

/// A template argument, evaluated where it was written (the caller's frame): a value for a
/// non-type parameter, a type for a type parameter.
#[derive(Clone, Debug)]
enum TArg {
    Type(TypeRef),
    Val(Val),
}

struct Frame {
    /// Index into `scopes` where this function's locals start.
    scope_base: usize,
    file: usize,
    ret: Option<Val>,
    template: Vec<(Name, TArg)>,
    /// For a member function, the struct it is called on with its template arguments
    /// (`tile<16, 8, half2>`): names the function does not define are its static members.
    owner: Option<String>,
    /// The local object a member function (or constructor) runs on, a key of `fields`: the
    /// names of its members are that object's.
    this: Option<usize>,
    /// Returns taken under a condition the analysis cannot decide.
    returns: Returns,
    /// Reference parameters bound to a place in memory (`Comparator(s_key[pos], ...)` with
    /// `uint& keyA`): assigning one stores there.
    refs: Vec<(Rc<str>, Place)>,
    /// Reference parameters bound to a local of the caller (`int& y_low` given `y_low`):
    /// the parameter's value when the function returns is the local's after the call.
    local_refs: Vec<Rc<str>>,
}

/// `if (n == 0) return 1; ... return n * 2;` in an inlined function: the lanes that take an
/// early return leave it, the others run on, and the call's value is a per-lane select.
#[derive(Default)]
struct Returns {
    /// Each early return's condition (all the undecided branches around it) and value, in
    /// the order they were met.
    early: Vec<(Sym, Val)>,
    /// The undecided branch conditions the current statement runs under; None: none.
    path: Option<Sym>,
    /// At each early return, with its condition, the values of the parameters bound to the
    /// caller's locals (`Frame::local_refs`).
    early_locals: Vec<(Sym, Vec<Val>)>,
    /// The current branch returned: its remaining statements do not run.
    cut: bool,
}

pub struct KernelRun<'p> {
    pub files: &'p [&'p FileModel],
    pub project: &'p Project<'p>,
    pub options: &'p Options,
    pub runtime: Vec<RuntimeVar>,
    /// The name of the value a uniform load reads, per array and address: two loads of one
    /// array at different addresses are two values (`it[0].pdf_id`, `it[1].pdf_id`).
    loaded_names: crate::HashMap<Rc<str>, crate::HashMap<String, usize>>,
    /// Where each name of `runtime` is in it.
    runtime_index: crate::HashMap<String, u32>,
    /// How many stores each array has taken: a load after one reads a new value.
    stores_to: crate::HashMap<Rc<str>, usize>,
    /// What the host code before a launch stored in its local arrays at constant indices
    /// (`size_t blockSize[2]; blockSize[0] = BLOCK_X;`, OpenCL ports' work sizes), per array,
    /// byte offset and width: read back by the launch's shape as nvcc reads registers.
    local_elements: crate::HashMap<(Rc<str>, i64, i64), Val>,
    /// Whether the statements being run are a host function's, before a launch.
    host_statements: bool,
    /// Thread-private arrays that were given values that differ between lanes (`uint32_t
    /// x[4] = {in[t], ...}`, `x[0] = y;` of such a value): one of their elements, read at an
    /// index the warp shares, is each thread's own value, not one for the warp.
    varying_locals: std::collections::HashSet<Rc<str>>,
    /// The kernel's type parameters no launch binds: sized 4 bytes where a `sizeof` asks, as
    /// their elements are priced (MXNet's `nvec = sizeof(LType) / sizeof(DType)` in kernels
    /// launched inside its type-switch macros).
    unbound_types: std::collections::HashSet<Rc<str>>,
    /// The template parameters of the host function whose launch is being evaluated.
    host_template_params: Vec<Name>,
    /// Which of the distinct lambdas a wrapper's callers pass (xgboost's `dh::LaunchN(n,
    /// [=] __device__ (size_t i) {...})`, dozens of them) the launch being evaluated takes,
    /// and how many there were: one configuration of the kernel each.
    lambda_variant: usize,
    lambda_variants: usize,
    /// The distinct lambdas found for a wrapper's parameter.
    lambda_cache: Vec<(LambdaSource, Vec<Rc<Closure>>)>,
    /// The constant a host function's callers pass for one of its parameters, per lambda
    /// variant: (function, parameter, depth, variant) and the value, if one.
    param_constants: Vec<(ParamSource, Option<i64>)>,
    /// The same for `dim3` parameters (a wrapper's grid and block).
    param_dims: Vec<(ParamSource, Option<[i64; 3]>)>,
    /// The same for the members of struct parameters callers pass by value.
    param_members: Vec<(ParamSource, Option<Members>)>,
    pub loops: Vec<LoopInfo>,
    pub accesses: Vec<RawAccess>,
    scopes: Vec<Vec<(Rc<str>, Val)>>,
    /// Local objects (`SharedMemory<float> shared;`), latest last: name, declared type (the
    /// struct whose member functions `shared.getPointer()` calls) and key in `fields`.
    objects: Vec<(Rc<str>, TypeRef, usize)>,
    /// Local objects copied whole from memory (`group_t g = d_group_table[i];`): what their
    /// array members hold, cudalint does not follow, is data.
    loaded_objects: Vec<usize>,
    /// The members of local objects that constructors and member functions have set, by
    /// object key (a map: host code builds thousands of temporaries, each with its members).
    fields: crate::HashMap<usize, Vec<(Rc<str>, Val)>>,
    /// Reference members of local objects bound to objects in memory (CUB's agents' `_TempStorage
    /// &temp_storage`, set from the shared storage their constructor is given), by object and
    /// member: the place each names.
    reference_members: crate::HashMap<(usize, Rc<str>), Place>,
    type_memo: type_memo::TypeMemo,
    /// File-scope constants already declared, by file and name.
    file_constants: crate::HashMap<usize, crate::HashMap<Box<str>, Val>>,
    /// The object the next inlined call runs on (set by a member call or a constructor).
    next_this: Option<usize>,
    /// The object in global or shared memory a member function is about to run on
    /// (`nodes[i].num_points()`, `node->points_begin()`).
    next_this_ptr: Option<Ptr>,
    /// The members of a struct value the next call is a member function of, by name.
    next_this_values: Vec<(String, Val)>,
    /// The places the next inlined call's arguments designate, where they designate one.
    next_refs: Vec<Option<Place>>,
    /// The types the next call's arguments are declared with, where the callee's name has
    /// overloads to choose among.
    next_arg_types: Vec<Option<TypeRef>>,
    /// The inlined call at this span is an lvalue (`t[i] = v` through a `T& operator[]`,
    /// `column(p, i) = v` through a function returning `float&`): its `return` gives the
    /// address of what it names, not the value there. With `true`, only where the function
    /// returns a reference. (A span, not a flag: a call among its arguments is not it.)
    next_returns_address: Option<(Span, bool)>,
    /// The frame depth whose `return` gives an address (see `next_returns_address`).
    address_return: Option<usize>,
    /// The caller's locals a call's arguments name, where the callee takes them by non-const
    /// reference and they are not in memory.
    next_local_refs: Vec<Option<(Rc<str>, bool)>>,
    /// `__umulhi(n, m)` results with a lane's `n` and a multiplier the launch fixes: the
    /// result, `n`, `m` (see `expr::fast_quotient`).
    fast_products: Vec<(Sym, Sym, Sym)>,
    /// `__shared__` scalars and structs declared in a body: name, the scope that holds the
    /// value the block last stored (what every thread reads after a barrier), and the place.
    shared_scalars: Vec<(Rc<str>, usize, Ptr)>,
    frames: Vec<Frame>,
    mask: Sym,
    loop_stack: Vec<u32>,
    /// The loop whose condition is being read: its accesses run once more than its body.
    loop_condition: Option<u32>,
    site_override: Option<Loc>,
    /// The class aliases being looked through: an alias naming itself through another
    /// (`using A = typename B::x; using B = S<A>;`) stops at its second visit, not the stack.
    alias_stack: std::cell::RefCell<Vec<String>>,
    /// The calls being inlined, outermost first.
    call_sites: Vec<InlineSite>,
    /// The functions being inlined (by address) and the struct instance each runs on: a call
    /// of one of them is recursion.
    active_calls: Vec<(usize, Option<String>)>,
    /// The functions found calling themselves (by the name the call used): how often their
    /// accesses run is not known.
    recursive: Vec<String>,
    macro_depth: usize,
    eval_depth: usize,
    /// Static members being evaluated, nested.
    static_depth: usize,
    /// The file-scope declarations being evaluated (by address), nested: one read again while
    /// its own initialiser is evaluated is a cycle, not a value.
    file_scope_active: Vec<usize>,
    steps: usize,
    /// Values this thread holds in registers: (space, base, address, bytes, mask) of the
    /// last loads and stores. A load of one is no memory access: nvcc reuses the register.
    in_registers: Vec<Held>,
    /// The arrays `__restrict__` pointers of the kernel and of the helpers being inlined point
    /// to: nothing else in their scope writes them, and nothing written through them is read
    /// through another pointer, so a store keeps the other's values in registers.
    restrict: Vec<Rc<str>>,
    /// How many branches on values read from memory (lane by lane) enclose what runs now.
    divergent: u32,
    /// The variables the loops being run assign other than by stepping an induction.
    carried: Vec<std::collections::BTreeSet<String>>,
    /// Barriers, fences and calls given pointers run so far: what may write memory behind
    /// this thread's back (a loop with none in its body may keep a value in a register).
    clobbers: u32,
    /// Pointer parameters the launch passes `0` or `nullptr` for: the value is 0 (so `if (p)`
    /// is decided), but an access through one that nothing guards is still the kernel's
    /// access, priced as through the pointer it stands for.
    null_at_launch: Vec<(Rc<str>, Ptr)>,
    /// The members of struct parameters the launch set (see [`Bindings::members`]).
    launch_members: crate::HashMap<String, i64>,
    /// The branch being evaluated, and how many have been entered.
    branch: u32,
    branches: u32,
    /// A load whose value only its low bytes are used of: (its expression's span, bytes).
    narrow: Option<(cudalint_syntax::Span, i64)>,
    /// How many loads have been recorded narrower than their type.
    narrowed_loads: usize,
    /// When to stop (checked every few hundred statements), and whether it was reached.
    pub deadline: Option<crate::Deadline>,
    pub out_of_time: bool,
}

/// Statements visited per kernel, inlined calls included: a bound on work for generated input.
const MAX_STEPS: usize = 200_000;
const MAX_CALL_DEPTH: usize = 8;

/// Integer members of a struct value, by name, with their constants.
pub(crate) type Members = Vec<(Rc<str>, i64)>;

/// Launch-time bindings of one kernel configuration.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    pub template_args: Vec<Option<TemplateArg>>,
    pub params: Vec<Option<i64>>,
    /// The integer members of struct parameters the launch passes by value, as the host set
    /// them (`Strides s = {1, 32}; k<<<g, b>>>(s)`: `s.row` = 1, `s.col` = 32), by the
    /// parameter's name and the member's.
    pub members: Vec<(String, i64)>,
    /// A lambda a launch passes for a parameter (`for_each<<<g, b>>>(n, [=] __device__ (int
    /// i) { ... })`), with what it captured there.
    pub lambdas: Vec<Option<LaunchLambda>>,
}

/// A lambda passed at a launch: its definition, the file it is written in, and the host
/// values it captured that the kernel can use: pointers (device memory, by their element
/// type), constants, and values the host does not fold (run-time values in the kernel).
#[derive(Clone, Debug)]
pub struct LaunchLambda {
    def: std::sync::Arc<cudalint_syntax::Lambda>,
    file: usize,
    pointers: Vec<(String, TypeRef)>,
    constants: Vec<(String, i64)>,
    runtime: Vec<String>,
}

impl LaunchLambda {
    /// Which lambda it is, for telling configurations apart.
    pub fn key(&self) -> String {
        format!("{}:{:?}", self.file, self.def.body.first().map(stmt_span))
    }
}

fn stmt_span(s: &cudalint_syntax::Stmt) -> Option<Span> {
    use cudalint_syntax::Stmt;
    match s {
        Stmt::Decl(d) => Some(d.span),
        Stmt::Expr(e) => Some(e.span),
        Stmt::For { span, .. } | Stmt::Return(_, span) | Stmt::Other(span) => Some(*span),
        Stmt::If { cond, .. } | Stmt::While { cond, .. } => Some(cond.span),
        Stmt::Block(b) => b.first().and_then(stmt_span),
        Stmt::Break | Stmt::Continue => None,
    }
}

impl<'p> KernelRun<'p> {
    pub fn new(project: &'p Project<'p>, options: &'p Options) -> Self {
        KernelRun {
            files: project.files,
            project,
            options,
            runtime: Vec::new(),
            loaded_names: Default::default(),
            runtime_index: Default::default(),
            stores_to: Default::default(),
            local_elements: Default::default(),
            host_statements: false,
            varying_locals: Default::default(),
            unbound_types: Default::default(),
            host_template_params: Vec::new(),
            lambda_variant: 0,
            lambda_variants: 0,
            lambda_cache: Vec::new(),
            param_constants: Vec::new(),
            param_dims: Vec::new(),
            param_members: Vec::new(),
            loops: Vec::new(),
            accesses: Vec::new(),
            scopes: Vec::new(),
            frames: Vec::new(),
            mask: sym::konst(1),
            loop_stack: Vec::new(),
            loop_condition: None,
            site_override: None,
            alias_stack: Default::default(),
            call_sites: Vec::new(),
            active_calls: Vec::new(),
            recursive: Vec::new(),
            macro_depth: 0,
            eval_depth: 0,
            static_depth: 0,
            file_scope_active: Vec::new(),
            steps: 0,
            in_registers: Vec::new(),
            restrict: Vec::new(),
            carried: Vec::new(),
            divergent: 0,
            clobbers: 0,
            objects: Vec::new(),
            loaded_objects: Vec::new(),
            fields: Default::default(),
            reference_members: Default::default(),
            type_memo: Default::default(),
            file_constants: Default::default(),
            next_this: None,
            next_this_ptr: None,
            next_this_values: Vec::new(),
            next_refs: Vec::new(),
            next_arg_types: Vec::new(),
            next_returns_address: None,
            address_return: None,
            next_local_refs: Vec::new(),
            fast_products: Vec::new(),
            shared_scalars: Vec::new(),
            null_at_launch: Vec::new(),
            launch_members: crate::HashMap::default(),
            branch: 0,
            branches: 0,
            narrow: None,
            narrowed_loads: 0,
            deadline: None,
            out_of_time: false,
        }
    }

    pub fn run_kernel(&mut self, file: usize, f: &Function, bind: &Bindings) {
        // launch-site arguments are constants or types: evaluate them before the kernel's
        // frame exists, so a name in them cannot refer back to the parameter itself
        let mut template = Vec::new();
        for (i, tp) in f.template_params.iter().enumerate() {
            let Some(arg) = bind.template_args.get(i).cloned().flatten() else {
                continue;
            };
            let v = self.template_arg(&arg, tp.is_type);
            // a value the launch names but cudalint cannot evaluate (a parameter of a host
            // template no call binds: `kernel<DIM, NGROUPS>` in a wrapper of `DIM`) is a
            // runtime value, as an unbound parameter is, not an unknown
            if matches!(&v, TArg::Val(Val::Unknown(_))) && !tp.is_type {
                continue;
            }
            template.push((tp.name.clone(), v));
        }
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
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
        self.null_at_launch.clear();
        self.launch_members = bind.members.iter().cloned().collect();
        for (i, p) in f.params.iter().enumerate() {
            // `interval_gpu<T>* buffer` with T = float: the template's own arguments bound too
            let ty = if p.ty.name.contains('<') {
                self.instantiate_type(&p.ty)
            } else {
                self.resolve_type(&p.ty)
            };
            let null_at_launch =
                ty.pointer_depth > 0 && bind.params.get(i).copied().flatten() == Some(0);
            let lambda = bind.lambdas.get(i).cloned().flatten();
            let v = if let Some(l) = lambda {
                self.launched_closure(l)
            } else if ty.pointer_depth > 0 {
                let mut elem = ty.clone();
                elem.pointer_depth -= 1;
                let mut ptr = Ptr::global(p.name.as_str(), elem, Some((file, p.span)));
                ptr.dims = self.param_dims(p);
                if p.is_restrict {
                    self.restrict.push(ptr.base.clone());
                }
                if null_at_launch {
                    self.null_at_launch.push((p.name.as_str().into(), ptr));
                    Val::Int(sym::konst(0))
                } else {
                    Val::Ptr(ptr)
                }
            } else if let Some(ptr) = self.tensor_accessor(p.name.as_str(), &ty, file, p.span) {
                Val::Ptr(ptr)
            } else if self.is_struct_value_type(&ty) {
                Val::Aggregate {
                    name: p.name.as_str().into(),
                    ty,
                }
            } else {
                let launch = bind.params.get(i).copied().flatten();
                Val::Int(self.runtime_value(&p.name, &ty, launch))
            };
            self.declare(&p.name, v);
        }
        // template parameters without a binding: their defaults, in the kernel's terms (a
        // default may name the parameters before it: DeepEP's `int kNumChannels =
        // kNumScaleoutWarps * kNumSMs`); value parameters without one are runtime values
        for tp in &f.template_params {
            let mut bound = self
                .frames
                .last()
                .is_some_and(|fr| fr.template.iter().any(|(n, _)| *n == tp.name));
            if let Some(d) = tp.default.as_ref().filter(|_| !bound) {
                let v = self.template_arg(d, tp.is_type);
                if let Some(fr) = self.frames.last_mut() {
                    fr.template.push((tp.name.clone(), v));
                }
                bound = true;
            }
            if !tp.is_type && !bound {
                let v = self.runtime_var(&tp.name, None);
                self.declare(&tp.name, Val::Int(v));
            }
            // (or bound to a name no file defines: `k<DType>` launched from a host template
            // whose DType nothing binds either)
            let no_size = tp.is_type
                && self.layout_of(&TypeRef::named(&tp.name)).is_none()
                && !self.is_object_type(&TypeRef::named(&tp.name));
            if no_size {
                self.unbound_types.insert(tp.name.as_str().into());
                if let Some(TArg::Type(t)) = self.frames.last().and_then(|fr| {
                    fr.template
                        .iter()
                        .find(|(n, _)| *n == tp.name)
                        .map(|(_, a)| a.clone())
                }) {
                    self.unbound_types.insert(t.name.as_str().into());
                }
            }
        }
        if let Some(body) = &f.body {
            self.stmts(body);
        }
        self.scopes
            .truncate(self.frames.last().map(|f| f.scope_base).unwrap_or(0));
        self.frames.pop();
        self.mark_recursive_accesses();
    }

    /// `return q[i];` of a `uint4` or `float2` in an inlined function: nvcc loads the vector
    /// where the caller takes the value, and files the load under the call's line (measured:
    /// `fixtures/type_switch_macros.cu`, an accessor's `LDG.E.128` filed under the caller). A
    /// scalar or a struct of scalars returned stays under the callee's line.
    pub(super) fn file_returned_vectors_at_call(&mut self, since: usize) {
        // CUDA's own vector types: a component type and a count (`uint32` is no `uint3`)
        let is_vector = |name: &str| {
            const COMPONENTS: &[&str] = &[
                "char",
                "uchar",
                "short",
                "ushort",
                "int",
                "uint",
                "long",
                "ulong",
                "longlong",
                "ulonglong",
                "float",
                "double",
            ];
            let elem = name.trim_start_matches("const ").trim();
            elem.strip_suffix(['2', '3', '4'])
                .is_some_and(|base| COMPONENTS.contains(&base))
        };
        let vectors: Vec<bool> = self.accesses[since..]
            .iter()
            .map(|a| {
                is_vector(&a.elem_type)
                    || is_vector(&self.typedef_chain_end(&a.elem_type.replace("const ", "")))
            })
            .collect();
        for (a, vector) in self.accesses[since..].iter_mut().zip(vectors) {
            if a.op == AccessOp::Load
                && a.space == Space::Global
                && vector
                && !a.inlined_at.is_empty()
            {
                let site = a.inlined_at.remove(0);
                a.loc = site.loc;
            }
        }
    }

    /// An access in a function that calls itself runs once per call, and the calls depend on
    /// the run: it is counted for the first call only, and says so.
    fn mark_recursive_accesses(&mut self) {
        if self.recursive.is_empty() {
            return;
        }
        for a in &mut self.accesses {
            let Some(site) = a
                .inlined_at
                .iter()
                .find(|s| self.recursive.contains(&s.callee))
            else {
                continue;
            };
            let note = format!(
                "in `{}`, which calls itself: counted for its first call, as it runs an unknown number of times",
                site.callee
            );
            if !a.assumptions.contains(&note) {
                a.assumptions.push(note);
            }
        }
    }

    /// The dimensions an array parameter's pointer points to (`float a[6][24][24]`: 24, 24).
    fn param_dims(&mut self, p: &cudalint_syntax::Param) -> Rc<[Sym]> {
        let dims: Vec<Sym> = p
            .dims
            .iter()
            .map(|d| match &d.size {
                Some(e) => self.pure_rvalue(e).sym(),
                None => sym::konst(0),
            })
            .collect();
        Rc::from(dims)
    }

    /// The models whose structs and typedefs the current function sees.
    fn types(&self) -> &'p [&'p FileModel] {
        self.project.visible_models(self.file())
    }

    fn file(&self) -> usize {
        self.frames.last().map(|f| f.file).unwrap_or(0)
    }

    fn loc(&self, span: Span) -> Loc {
        self.site_override.unwrap_or((self.file(), span))
    }

    /// A tensor accessor passed by value or reference (FAISS's `Tensor<float, 2, true>`,
    /// PyTorch's `PackedTensorAccessor32<scalar_t, 4>`, `TensorAccessor<T, N>`): a class
    /// template over an element type and a rank, whose `t[i][j]` reads element (i, j) of a
    /// row-major array with its last dimension contiguous. It is that array: a pointer to the
    /// element type, each dimension after the first a run-time size of its own.
    fn tensor_accessor(
        &mut self,
        name: &str,
        ty: &TypeRef,
        file: usize,
        span: Span,
    ) -> Option<Ptr> {
        if ty.pointer_depth > 0 {
            return None;
        }
        let full = self.through_typedefs(&ty.name);
        let (base, args) = names::split_template(&full);
        let family = call::unqualified(base);
        if !(family.contains("Tensor") || family.contains("Accessor")) || args.len() < 2 {
            return None;
        }
        let rank = match self.template_arg_text(&args[1]) {
            TArg::Val(Val::Int(s)) => s.as_const()?,
            _ => return None,
        };
        if !(1..=8).contains(&rank) {
            return None;
        }
        let elem = self.resolve_type(&TypeRef::named(&args[0]));
        if types::builtin(&elem.name).is_none() && self.layout_of(&elem).is_none() {
            return None;
        }
        let mut ptr = Ptr::global(name, elem, Some((file, span)));
        let dims: Vec<Sym> = (1..rank)
            .map(|k| self.runtime_var(&format!("{name}.size({k})"), None))
            .collect();
        ptr.dims = Rc::from(dims);
        Some(ptr)
    }

    /// Whether `s` reads a value loaded at a uniform address (a variable that stands for every
    /// element of its array).
    fn reads_array_wide_value(&self, s: &Sym) -> bool {
        match &s.kind {
            sym::SymKind::Var(Var::Runtime(i)) => self
                .runtime
                .get(*i as usize)
                .is_some_and(|r| r.name.ends_with("[...]")),
            sym::SymKind::Un(_, a) | sym::SymKind::Loaded(a, _) => self.reads_array_wide_value(a),
            sym::SymKind::Bin(_, a, b) => {
                self.reads_array_wide_value(a) || self.reads_array_wide_value(b)
            }
            sym::SymKind::Select(c, a, b) => {
                self.reads_array_wide_value(c)
                    || self.reads_array_wide_value(a)
                    || self.reads_array_wide_value(b)
            }
            _ => false,
        }
    }

    fn runtime_var(&mut self, name: &str, launch_value: Option<i64>) -> Sym {
        if let Some(v) = self.options.params.get(name) {
            return sym::konst(*v);
        }
        if let Some(v) = launch_value {
            return sym::konst(v);
        }
        if let Some(&i) = self.runtime_index.get(name) {
            return sym::var(Var::Runtime(i));
        }
        self.runtime.push(RuntimeVar {
            name: name.to_string(),
            value: self.options.runtime_default,
        });
        let i = self.runtime.len() as u32 - 1;
        self.runtime_index.insert(name.to_string(), i);
        sym::var(Var::Runtime(i))
    }

    /// A value the run gives the kernel (a parameter, a member of one, an element read at a
    /// uniform address) named `name`, of type `ty`. A floating-point one is no size or
    /// stride: a scale, an angle's cosine, a rotation matrix's entry could be 0.5 as well as
    /// 1,000, so no assumed value stands for it; it is kept opaque, the same value wherever
    /// the name is read (see `expr::floating`), and an index made from it is data. A value
    /// the launch or the user fixes is that value.
    fn runtime_value(&mut self, name: &str, ty: &TypeRef, launch_value: Option<i64>) -> Sym {
        let fixed = launch_value.is_some() || self.options.params.contains_key(name);
        // (a built-in name needs no typedef followed: most are `int`)
        let floating = |me: &Self| match types::builtin(&ty.name) {
            Some(_) => types::is_floating(&ty.name),
            None => types::is_floating(&me.through_typedefs(&ty.name)),
        };
        if !fixed && ty.pointer_depth == 0 && floating(self) {
            let id = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
            });
            return expr::floating(&[sym::konst((id >> 2) as i64)]);
        }
        self.runtime_var(name, launch_value)
    }

    // ----- scopes -----

    fn declare(&mut self, name: &str, v: Val) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.into(), (v)));
        }
    }

    fn lookup_local(&self, name: &str) -> Option<&Val> {
        let base = self.frames.last().map(|f| f.scope_base).unwrap_or(0);
        for scope in self.scopes[base..].iter().rev() {
            if let Some((_, v)) = scope.iter().rev().find(|(n, _)| &**n == name) {
                return Some(v);
            }
        }
        None
    }

    fn assign_local(&mut self, name: &str, v: Val) -> bool {
        let base = self.frames.last().map(|f| f.scope_base).unwrap_or(0);
        for scope in self.scopes[base..].iter_mut().rev() {
            if let Some(slot) = scope.iter_mut().rev().find(|(n, _)| &**n == name) {
                slot.1 = match (&slot.1, v) {
                    // a pointer to rows (`float (*t)[33]; t = (float (*)[33]) base;`) keeps
                    // its declared rows whatever it is set to
                    (Val::Ptr(old), Val::Ptr(mut new)) if new.dims.is_empty() => {
                        if !old.dims.is_empty() {
                            new.dims = old.dims.clone();
                            new.elem = old.elem.clone();
                        }
                        Val::Ptr(new)
                    }
                    (_, v) => v,
                };
                return true;
            }
        }
        // a member of the object a member function runs on
        self.assign_member(name, v)
    }

    /// `field = v` or `this->field = v` in a member function or constructor: the object's.
    /// `this->temp_storage = ts` (a constructor's `temp_storage(ts)`) for a member declared as
    /// a reference, given an object in global or shared memory: the member names that object,
    /// whose members are then places, as they are to the compiler.
    fn bind_reference_member(&mut self, lhs: &Expr, rhs: &Expr) -> bool {
        let field = match &lhs.kind {
            ExprKind::Field { base, field, .. } if matches!(&base.kind, ExprKind::Ident(t) if t == "this") => {
                field
            }
            ExprKind::Ident(f) => f,
            _ => return false,
        };
        let Some((key, false, _)) = self.this_member(field) else {
            return false;
        };
        let declared_reference = self
            .frames
            .last()
            .and_then(|f| f.owner.clone())
            .and_then(|o| self.struct_instance(&o))
            .and_then(|(def, _)| types::struct_named(&def, self.types()))
            .and_then(|s| s.fields.iter().find(|f| f.name == *field))
            .is_some_and(|f| f.is_reference && f.ty.pointer_depth == 0);
        if !declared_reference {
            return false;
        }
        // `temp_storage(ts.Alias())`: CUB's storage handed out as the type it holds, by a
        // member function that returns `*this` as a reference to it
        let rhs = match &rhs.kind {
            ExprKind::Call { callee, args, .. } if args.is_empty() => {
                match callee
                    .rsplit_once('.')
                    .filter(|(o, m)| call::is_identifier(o) && self.returns_itself(m))
                {
                    Some((object, _)) => Expr {
                        kind: ExprKind::Ident(object.into()),
                        span: rhs.span,
                    },
                    None => rhs.clone(),
                }
            }
            _ => rhs.clone(),
        };
        let place = self.place_unrecorded(&rhs);
        // (the member's type, not the storage's: `_TempStorage`, not `Uninitialized<...>`)
        let member_ty = self
            .declared_member_type_of_this(field)
            .map(|t| self.resolve_type(&t));
        let place = place.map(|mut p| {
            if let Some(t) = member_ty.filter(|t| t.pointer_depth == 0) {
                p.ptr.elem = t.clone();
                p.ty = t;
            }
            p
        });
        let Some(place) = place.filter(Place::is_object_in_memory) else {
            return false;
        };
        self.reference_members
            .insert((key, field.as_str().into()), place);
        true
    }

    /// Whether a member function of this name (of any struct) takes nothing and returns the
    /// object itself as a reference, through casts (`T& Alias() { return
    /// reinterpret_cast<T&>(*this); }`).
    fn returns_itself(&self, method: &str) -> bool {
        fn is_self(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Cast { arg, .. } => is_self(arg),
                ExprKind::Unary {
                    op: cudalint_syntax::UnOp::Deref,
                    arg,
                } => matches!(&arg.kind, ExprKind::Ident(t) if t == "this"),
                _ => false,
            }
        }
        self.project
            .device_functions(method, 0, self.file())
            .iter()
            .any(|(_, f)| {
                f.returns_reference
                    && matches!(f.body.as_deref(), Some([cudalint_syntax::Stmt::Return(Some(e), _)]) if is_self(e))
            })
    }

    /// The type the struct the current member function runs on declares member `field` with.
    fn declared_member_type_of_this(&mut self, field: &str) -> Option<TypeRef> {
        let owner = self.frames.last()?.owner.clone()?;
        self.member_of(&owner, field).map(|(_, t, _)| t)
    }

    /// The place a reference member of the object the current member function runs on names.
    fn reference_member_place(&self, name: &str) -> Option<Place> {
        let key = self.frames.last()?.this?;
        self.reference_members.get(&(key, Rc::from(name))).cloned()
    }

    fn assign_member(&mut self, name: &str, v: Val) -> bool {
        let Some((key, false, _)) = self.this_member(name) else {
            return false;
        };
        self.set_field(key, name, v);
        true
    }

    /// The object key when `name` is a member of the struct the current member function runs
    /// on, whether the member is an array, and its type.
    fn this_member(&self, name: &str) -> Option<(usize, bool, TypeRef)> {
        let frame = self.frames.last()?;
        let key = frame.this?;
        let (array, ty, _) = self.member_of(frame.owner.as_deref()?, name)?;
        Some((key, array, ty))
    }

    /// Member `name` of the struct (or union) `full` names: whether it is an array, its type,
    /// and whether the struct is a union.
    pub(super) fn member_of(&self, full: &str, name: &str) -> Option<(bool, TypeRef, bool)> {
        if full == names::LAUNCH_CONFIG {
            // (a CUDA runtime struct, not in the program's files: its shapes are dim3s)
            let ty = match name {
                "gridDim" | "blockDim" => "dim3",
                _ => "int",
            };
            return Some((false, TypeRef::named(ty), false));
        }
        self.member_through_bases(full, name, 0)
    }

    /// [`Self::member_of`], looking in the base classes (`d_i.ms` of an `IndicesL<G>` that
    /// inherits `ms` from `IndicesH<G>`) where the struct does not declare the member.
    fn member_through_bases(
        &self,
        full: &str,
        name: &str,
        depth: usize,
    ) -> Option<(bool, TypeRef, bool)> {
        let (def, binds) = self.struct_instance(full)?;
        let s = self
            .types()
            .iter()
            .flat_map(|f| f.structs.iter())
            .find(|s| s.name == def)?;
        if let Some(field) = s.fields.iter().find(|f| f.name == name) {
            return Some((field.array_len.is_some(), field.ty.clone(), s.is_union));
        }
        if depth >= 4 {
            return None;
        }
        s.bases.iter().find_map(|b| {
            let base = names::bind_base(&binds, b);
            self.member_through_bases(&base.name, name, depth + 1)
        })
    }

    /// `g.tag[i]` where `g` is a local object copied whole from memory (hoomd's `group_t g =
    /// d_group_table[group_idx]`, a union of arrays): an element of what was loaded, data.
    fn loaded_object_element(&self, e: &Expr) -> Option<Val> {
        let ExprKind::Index { base, .. } = &e.kind else {
            return None;
        };
        let ExprKind::Field {
            base: obj,
            field,
            arrow: false,
        } = &base.kind
        else {
            return None;
        };
        let ExprKind::Ident(name) = &obj.kind else {
            return None;
        };
        let (ty, key) = self.local_object(self.lookup_local(name)?)?;
        // an array member (a pointer member points into memory: `batch.d_ivectors[i]` is a
        // load), or a member of a struct whose definition the run does not have (hoomd's
        // `group_storage` is defined under `#ifdef __HIPCC__`, declared only otherwise)
        let ty = self.resolve_type(&ty);
        let is_array = self.member_of(&ty.name, field).is_none_or(|m| m.0);
        (is_array && self.loaded_objects.contains(&key)).then(|| {
            Val::Int(sym::data(format!(
                "`{name}.{field}[...]` of a struct loaded from memory"
            )))
        })
    }

    /// The value a local object's name holds (what stands for the object), if `e` names one.
    fn local_object_named(&self, e: &Expr) -> Option<Val> {
        let ExprKind::Ident(name) = &e.kind else {
            return None;
        };
        let v = self.lookup_local(name)?;
        self.local_object(v).map(|_| v.clone())
    }

    /// `s.field` where `s` is a local object (`bt ran; ran.data = ...`): the object's key and
    /// the member's kind as `member_of` gives it.
    fn object_member(&mut self, base: &Expr, name: &str) -> Option<(usize, bool, TypeRef, bool)> {
        let ExprKind::Ident(obj) = &base.kind else {
            return None;
        };
        let v = self.lookup_local(obj)?.clone();
        let (ty, key) = self.local_object(&v)?;
        let full = self.instantiate_type(&ty).name;
        let (array, fty, union) = self.member_of(&full, name)?;
        Some((key, array, fty, union))
    }

    /// What a member of a local object holds: an array member is the object's own local
    /// array, any other what was last stored to it.
    fn object_field(&mut self, base: &Expr, name: &str) -> Option<Val> {
        let (key, array, ty, _) = self.object_member(base, name)?;
        if array {
            let ExprKind::Ident(obj) = &base.kind else {
                return None;
            };
            return Some(self.member_array(&format!("{obj}.{name}"), &ty));
        }
        Some(self.field_value(key, name).unwrap_or_else(|| {
            Val::Unknown(format!("member `{name}` read before it is set").into())
        }))
    }

    /// An array member of a local object: the object's own local array.
    fn member_array(&self, name: &str, ty: &TypeRef) -> Val {
        let mut p = Ptr::global(name, self.resolve_type(ty), None);
        p.space = Space::Local;
        Val::Ptr(p)
    }

    /// What member `name` of object `key` was last set to.
    fn field_value(&self, key: usize, name: &str) -> Option<Val> {
        self.fields
            .get(&key)?
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v.clone())
    }

    fn set_field(&mut self, key: usize, name: &str, v: Val) {
        let members = self.fields.entry(key).or_default();
        match members.iter_mut().find(|(n, _)| &**n == name) {
            Some(slot) => slot.1 = v,
            None => members.push((name.into(), v)),
        }
    }

    /// `s.field = v` on a local object; a union's other members no longer hold a value.
    fn assign_object_field(&mut self, base: &Expr, name: &str, v: Val) -> bool {
        let Some((key, false, _, union)) = self.object_member(base, name) else {
            return false;
        };
        if union {
            if let Some(members) = self.fields.get_mut(&key) {
                members.retain(|(n, _)| &**n == name);
            }
        }
        self.set_field(key, name, v);
        true
    }

    /// A member of the object the current member function runs on: an array member is the
    /// object's own (local) array; any other is what its constructor and member functions
    /// last set it to.
    fn this_field(&self, name: &str) -> Option<Val> {
        let (key, array, ty) = self.this_member(name)?;
        if array {
            return Some(self.member_array(name, &ty));
        }
        Some(self.field_value(key, name).unwrap_or_else(|| {
            Val::Unknown(format!("result of a constructor: member `{name}`").into())
        }))
    }

    /// `this->name` in a member function: a member of the object it runs on, or of the struct
    /// passed by value it was called on (whose members the call declares as locals).
    fn own_member(&self, name: &str) -> Option<Val> {
        if let Some(v) = self.this_field(name) {
            return Some(v);
        }
        let frame = self.frames.last()?;
        self.member_of(frame.owner.as_deref()?, name)?;
        self.lookup_local(name).cloned()
    }

    /// The compile-time value the innermost frame's template binds `name` to.
    /// The value a template instance's argument text stands for in this frame: a number, a
    /// template value, or a constant local (`Smem<N, TILE>` with `constexpr int TILE = 16 *
    /// EPT;` in the kernel).
    fn argument_value(&self, text: &str) -> Option<i64> {
        let text = text.trim();
        text.parse::<i64>()
            .ok()
            .or_else(|| self.template_value(text))
            .or_else(|| match self.lookup_local(text) {
                Some(Val::Int(s)) => s.as_const(),
                _ => None,
            })
    }

    fn template_value(&self, name: &str) -> Option<i64> {
        let fr = self.frames.last()?;
        match fr.template.iter().find(|(n, _)| n == name) {
            Some((_, TArg::Val(Val::Int(s)))) => s.as_const(),
            _ => None,
        }
    }

    fn resolve_type(&self, ty: &TypeRef) -> TypeRef {
        if let Some(fr) = self.frames.last() {
            if let Some((_, TArg::Type(t))) = fr.template.iter().find(|(n, _)| *n == ty.name) {
                let mut out = t.clone();
                out.pointer_depth += ty.pointer_depth;
                out.is_const |= ty.is_const;
                return out;
            }
            // in a member function, a type its struct nests is that one (`Storage` in
            // `Seg<NT>::pre` is `Seg::Storage`, where other structs nest a `Storage` too)
            // (a built-in type never is: most lookups are of those, no file needs scanning)
            let nestable = !ty.name.contains("::") && types::builtin(&ty.name).is_none();
            if let Some(owner) = fr.owner.as_deref().filter(|_| nestable) {
                let base = owner.split('<').next().unwrap_or(owner).trim();
                match self.nested_type(base, &ty.name) {
                    Some(type_memo::Nested::Struct(nested)) => {
                        return TypeRef {
                            name: (*nested).into(),
                            ..ty.clone()
                        };
                    }
                    // a type its struct declares (`typedef T value_type;`), in this instance's terms
                    Some(type_memo::Nested::Typedef(t)) => {
                        let mut out = self.resolve_type(&t);
                        out.pointer_depth += ty.pointer_depth;
                        out.is_const |= ty.is_const;
                        return out;
                    }
                    None => {}
                }
            }
            // `StorageType::LType` in a member of a class whose `using StorageType =
            // VectorizedStorage<DType, nvec>;` (TransformerEngine's vectorized accessors): the
            // member type of what the class's own alias names in this instance
            let qualified = ty.name.strip_prefix("typename ").unwrap_or(&ty.name);
            if let Some((head, rest)) = qualified.split_once("::").filter(|(h, _)| !h.contains('<'))
            {
                let owner = fr
                    .owner
                    .as_deref()
                    .map(|o| o.split('<').next().unwrap_or(o).trim());
                if let Some(type_memo::Nested::Typedef(t)) =
                    owner.and_then(|o| self.nested_type(o, head.trim()))
                {
                    let key = format!("member {qualified}");
                    if let Some(r) = self.through_alias(&key, |run| {
                        let outer = run.resolve_type(&t);
                        (outer.pointer_depth == 0 && outer.name.as_str() != head.trim()).then(
                            || {
                                let named = TypeRef {
                                    name: format!("{}::{}", outer.name, rest).into(),
                                    ..ty.clone()
                                };
                                run.resolve_type(&named)
                            },
                        )
                    }) {
                        return r;
                    }
                }
            }
        }
        // a function's own alias of a type its template parameters name (`using T2 = typename
        // TypeConverter<T>::Type;` in a kernel for T = float): the alias in this instance's
        // terms, where the lookup by name alone found it with `T` unbound (4 bytes assumed)
        if let Some(bound) = self.alias_in_frame(ty) {
            return bound;
        }
        // typedefs of pointer types (`typedef float* fptr;`, `#define fptr float*`)
        if let Some(mut out) = self.typedef_of(&ty.name).filter(|t| t.pointer_depth > 0) {
            out.pointer_depth += ty.pointer_depth;
            return out;
        }
        ty.clone()
    }

    /// `ty`, a typedef or alias whose target names the current frame's template parameters
    /// (or a member type named through them), with their arguments written in (`typename`
    /// dropped): `TypeConverter<float>::Type`.
    fn alias_in_frame(&self, ty: &TypeRef) -> Option<TypeRef> {
        let fr = self.frames.last()?;
        if fr.template.is_empty() || types::builtin(&ty.name).is_some() {
            return None;
        }
        // (the class's own aliases among its arguments first: what the trait is given)
        if let Some(written) = self.class_alias_paths(&ty.name) {
            let named = TypeRef {
                name: written.as_str().into(),
                ..ty.clone()
            };
            return Some(self.resolve_type(&named));
        }
        // (or a member type named through them: `(typename TypeConverter<T>::Type*)out`)
        let t = match self.typedef_of(&ty.name) {
            Some(t) => t,
            None if ty.name.contains("::") => TypeRef {
                pointer_depth: 0,
                is_const: false,
                ..ty.clone()
            },
            None => return None,
        };
        let target = t.name.strip_prefix("typename ").unwrap_or(&t.name).trim();
        // (`select_const<DType, typename StorageType::LType>::type`: a member type of the
        // class's own alias among the arguments, resolved first)
        let nested_args = self.class_alias_paths(target);
        let target = nested_args.as_deref().unwrap_or(target);
        let mut out = String::with_capacity(target.len() + 8);
        let mut bound_any = nested_args.is_some();
        let mut word = String::new();
        // (only inside a template's arguments: `KT::Params`, its qualifier a parameter bound
        // to a struct, is the nested type the lookups of members find already)
        let mut flush = |word: &mut String, out: &mut String, depth: usize| {
            let arg = (depth > 0)
                .then(|| fr.template.iter().find(|(n, _)| *n == word.as_str()))
                .flatten();
            match arg.map(|(_, a)| a) {
                Some(TArg::Type(b)) if b.name != *word => {
                    out.push_str(&b.name);
                    out.push_str(&"*".repeat(b.pointer_depth as usize));
                    bound_any = true;
                }
                Some(TArg::Val(Val::Int(v))) if v.as_const().is_some() => {
                    out.push_str(&v.as_const().unwrap_or_default().to_string());
                    bound_any = true;
                }
                _ => out.push_str(word),
            }
            word.clear();
        };
        let mut depth = 0usize;
        for c in target.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out, depth);
                out.push(c);
                match c {
                    '<' => depth += 1,
                    '>' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        flush(&mut word, &mut out, depth);
        if !bound_any {
            return None;
        }
        let mut r = t;
        r.name = out.replace("typename ", "").into();
        r.pointer_depth += ty.pointer_depth;
        r.is_const |= ty.is_const;
        Some(r)
    }

    /// `f`, looking through the class alias `key`; `None` when that lookup is already under way
    /// (a cycle) or 6 are.
    fn through_alias<T>(&self, key: &str, f: impl FnOnce(&Self) -> Option<T>) -> Option<T> {
        {
            let stack = self.alias_stack.borrow();
            if stack.len() >= 6 || stack.iter().any(|k| k == key) {
                return None;
            }
        }
        self.alias_stack.borrow_mut().push(key.to_string());
        let out = f(self);
        self.alias_stack.borrow_mut().pop();
        out
    }

    /// `text` with each `Alias::Member` inside its template arguments, where `Alias` is a type
    /// the current member function's class declares, written as the type it resolves to;
    /// `None` when there is none.
    fn class_alias_paths(&self, text: &str) -> Option<String> {
        let owner = self.frames.last()?.owner.as_deref()?;
        let owner = owner.split('<').next().unwrap_or(owner).trim();
        let lt = text.find('<')?;
        if !text[lt..].contains("::") {
            return None;
        }
        let (mut out, mut changed) = (String::with_capacity(text.len()), false);
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
            let at_word = ident(b[i]) && (i == 0 || !ident(b[i - 1]));
            if i > lt && at_word {
                // a path `A::B::C` starting here
                let mut e = i;
                loop {
                    while e < b.len() && ident(b[e]) {
                        e += 1;
                    }
                    if text[e..].starts_with("::") && b.get(e + 2).is_some_and(|&c| ident(c)) {
                        e += 2;
                    } else {
                        break;
                    }
                }
                let path = &text[i..e];
                if let Some((head, _)) = path.split_once("::") {
                    if let Some(type_memo::Nested::Typedef(_)) = self.nested_type(owner, head) {
                        let resolved = self
                            .through_alias(&format!("argument {path}"), |run| {
                                Some(run.resolve_type(&TypeRef::named(path)))
                            })
                            .unwrap_or_else(|| TypeRef::named(path));
                        if resolved.name.as_str() != path && !resolved.name.contains(head) {
                            out.push_str(&resolved.name);
                            out.push_str(&"*".repeat(resolved.pointer_depth as usize));
                            changed = true;
                            i = e;
                            continue;
                        }
                    }
                }
                out.push_str(path);
                i = e;
                continue;
            }
            out.push(b[i] as char);
            i += 1;
        }
        changed.then(|| out.replace("typename ", ""))
    }

    /// Whether a parameter of type `ty` is an object whose members the analysis reads: a
    /// struct the program defines, or an instance of a struct template (MXNet's
    /// `MultiLAMBKernelParam<DType, MPDType>`, its arguments unbound where no launch is seen);
    /// not a vector type.
    pub(super) fn is_struct_value_type(&self, ty: &TypeRef) -> bool {
        ty.pointer_depth == 0
            && (self.is_struct(&ty.name)
                || (ty.name.contains('<') && self.struct_instance(&ty.name).is_some())
                || self.std_array_element(&ty.name).is_some())
            && !is_vector_type(&ty.name)
    }

    pub(super) fn layout_of(&self, ty: &TypeRef) -> Option<Layout> {
        self.layout_with(ty, &|_| None)
    }

    /// [`Self::layout_of`], with a type not known here (a template's argument left open:
    /// `Counter<T, IdxT>` in a kernel no launch instantiates) laid out as 4 bytes, as an
    /// element of a type not known is; and the first such type's name.
    pub(super) fn layout_assuming(&self, ty: &TypeRef) -> Option<(Layout, Option<String>)> {
        let assumed = std::cell::RefCell::new(None::<String>);
        let unknown = |n: &str| {
            assumed.borrow_mut().get_or_insert_with(|| n.to_string());
            Some(Layout { size: 4, align: 4 })
        };
        let l = self.layout_with(ty, &unknown)?;
        Some((l, assumed.into_inner()))
    }

    fn layout_with(
        &self,
        ty: &TypeRef,
        unknown: &dyn Fn(&str) -> Option<Layout>,
    ) -> Option<Layout> {
        let ty = self.resolve_type(ty);
        types::layout(&ty, self.types()).or_else(|| {
            // an instance of a template struct, laid out with its arguments
            let (def, binds) = ty
                .name
                .contains('<')
                .then(|| self.struct_instance(&ty.name))??;
            let bound = |t: &TypeRef| names::bind_type(&binds, t).unwrap_or_else(|| t.clone());
            // `unsigned int tag[group_size]` of `group_storage<2>`
            let value = |n: &str| {
                binds
                    .iter()
                    .find(|(p, _)| p == n)
                    .and_then(|(_, a)| self.argument_value(a))
            };
            let bind = types::Bind {
                ty: &bound,
                unknown,
                value: &value,
            };
            types::layout_of_template(&def, self.types(), &bind)
        })
    }

    /// The size of an integer type other than a pointer: what a value converted to it keeps.
    fn integer_bytes(&self, ty: &TypeRef) -> Option<i64> {
        let ty = self.resolve_type(ty);
        let name = self.typedef_chain_end(&ty.name);
        (ty.pointer_depth == 0 && types::is_integer(&name))
            .then(|| self.layout_of(&ty).map(|l| l.size))
            .flatten()
    }
}

impl Ptr {
    /// A pointer into global memory at offset 0 of `base`, to elements of `elem`.
    fn global(base: &str, elem: TypeRef, decl: Option<Loc>) -> Ptr {
        Ptr {
            space: Space::Global,
            base: base.into(),
            offset: sym::konst(0),
            elem,
            dims: Rc::from(Vec::new()),
            decl,
            path: None,
        }
    }
}

/// A wrapper's lambda parameter, as its callers are looked up: (the wrapper's address,
/// parameter index, depth of the caller chain).
type LambdaSource = (usize, usize, usize);
/// A host function's parameter asked for at a depth of callers, under a lambda variant.
type ParamSource = (usize, usize, usize, usize);

/// A value held in a register: (space, base, address, bytes, the lanes that hold it).
type Held = (Space, Rc<str>, Sym, i64, Sym);

/// The assumption an access under a branch on values read from memory carries: which lanes
/// take the branch is not known, and the price is every lane's.
pub const DIVERGENT: &str =
    "under a branch on values read from memory, priced as if every lane of the warp takes it";

/// How an unknown value says it is a local object (a struct in registers).
const LOCAL_OBJECT: &str = "is a local object";

/// Unknown values that are most likely pointers into memory: a name the analysed files do not
/// define (a global array of a header cudalint was not given) or the result of a call it
/// cannot see into. Indexing one is an access of unknown cost, not a silent nothing.
/// A value some lanes of a warp hold differently from others (data read at lane-dependent
/// places among them).
fn differs_between_lanes(v: &Val) -> bool {
    match v {
        Val::Int(s) => s.lane_varying || s.data,
        Val::Vector(c) => c.iter().any(|s| s.lane_varying || s.data),
        _ => false,
    }
}

fn opaque_pointer(reason: &str) -> bool {
    reason.starts_with("result of") || reason.ends_with("is not defined in the analysed files")
}

fn unknown_pointer(reason: &str) -> Ptr {
    Ptr {
        space: Space::Unknown,
        base: "?".into(),
        offset: sym::unknown(format!("the array or pointer is unknown: {reason}")),
        elem: TypeRef::named("?"),
        dims: Rc::from(Vec::new()),
        decl: None,
        path: None,
    }
}

fn unreachable_val() -> Val {
    Val::Unknown("dereference".into())
}

fn is_vector_type(name: &str) -> bool {
    types::builtin(name).is_some()
}
