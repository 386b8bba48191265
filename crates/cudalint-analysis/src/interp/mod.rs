//! Walks one kernel under one launch configuration, substituting definitions as it goes,
//! and records every memory access with its byte address as a symbolic function of the lane.
//! Semantics are those of the first iteration of every loop, with induction variables bound
//! to `init + iteration * step` so the cost model can sample later iterations.

use crate::project::Project;
use crate::sym::{self, Op, Sym, UnaryOp, Var};
use crate::types::{self, Layout};
use crate::Options;
use cudalint_syntax::{
    BinOp, Decl, Expr, ExprKind, FileModel, Function, Span, Stmt, TemplateArg, TypeRef, UnOp,
};
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
    pub field: Option<FieldInfo>,
    pub shared_index: Option<SharedIndex>,
    pub lane_term: Option<Loc>,
    pub assumptions: Vec<String>,
    /// Iterations of the innermost loop one instruction covers: 1, or the width of the
    /// vector load nvcc makes of an unrolled loop over consecutive elements.
    pub iter_step: i64,
}

#[derive(Clone, Debug)]
pub struct RuntimeVar {
    pub name: String,
    pub value: i64,
}

#[derive(Clone, Debug)]
pub struct LoopInfo {
    pub trip: Option<i64>,
}

#[derive(Clone, Debug)]
struct Ptr {
    space: Space,
    base: Rc<str>,
    offset: Sym,
    elem: TypeRef,
    /// Dimensions of what the pointer points to beyond the element (`float[33]` for a
    /// decayed `float[32][33]`).
    dims: Rc<[i64]>,
    decl: Option<Loc>,
    /// Indices applied so far from the array's own name, with its full dims.
    path: Option<(Vec<Sym>, Rc<[i64]>)>,
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
    Unknown(Rc<str>),
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
            Val::Unknown(r) => sym::unknown(r.clone()),
        }
    }
}

struct Place {
    ptr: Ptr,
    /// The place is a row of a multi-dimensional array, not an element: it decays, no access.
    subarray: bool,
    bytes: i64,
    ty: TypeRef,
    field: Option<FieldInfo>,
    assumption: Option<String>,
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
    template: Vec<(String, TArg)>,
    /// For a member function, the struct it is called on with its template arguments
    /// (`tile<16, 8, half2>`): names the function does not define are its static members.
    owner: Option<String>,
}

pub struct KernelRun<'p> {
    pub files: &'p [&'p FileModel],
    pub project: &'p Project<'p>,
    pub options: &'p Options,
    pub runtime: Vec<RuntimeVar>,
    pub loops: Vec<LoopInfo>,
    pub accesses: Vec<RawAccess>,
    scopes: Vec<Vec<(Rc<str>, Val)>>,
    frames: Vec<Frame>,
    mask: Sym,
    loop_stack: Vec<u32>,
    site_override: Option<Loc>,
    macro_depth: usize,
    eval_depth: usize,
    steps: usize,
    /// Values this thread holds in registers: (space, base, address, bytes, mask) of the
    /// last loads and stores. A load of one is no memory access: nvcc reuses the register.
    in_registers: Vec<(Space, Rc<str>, Sym, i64, Sym)>,
}

/// Statements visited per kernel, inlined calls included: a bound on work for generated input.
const MAX_STEPS: usize = 200_000;
const MAX_CALL_DEPTH: usize = 8;

/// Launch-time bindings of one kernel configuration.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    pub template_args: Vec<Option<TemplateArg>>,
    pub params: Vec<Option<i64>>,
}

impl<'p> KernelRun<'p> {
    pub fn new(project: &'p Project<'p>, options: &'p Options) -> Self {
        KernelRun {
            files: project.files,
            project,
            options,
            runtime: Vec::new(),
            loops: Vec::new(),
            accesses: Vec::new(),
            scopes: Vec::new(),
            frames: Vec::new(),
            mask: sym::konst(1),
            loop_stack: Vec::new(),
            site_override: None,
            macro_depth: 0,
            eval_depth: 0,
            steps: 0,
            in_registers: Vec::new(),
        }
    }

    pub fn run_kernel(&mut self, file: usize, f: &Function, bind: &Bindings) {
        // launch-site arguments are constants or types: evaluate them before the kernel's
        // frame exists, so a name in them cannot refer back to the parameter itself
        let mut template = Vec::new();
        for (i, tp) in f.template_params.iter().enumerate() {
            let Some(arg) = bind
                .template_args
                .get(i)
                .cloned()
                .flatten()
                .or_else(|| tp.default.clone())
            else {
                continue;
            };
            let v = self.template_arg(&arg, tp.is_type);
            template.push((tp.name.clone(), v));
        }
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
            file,
            ret: None,
            template,
            owner: None,
        });
        self.scopes.push(Vec::new());
        for (i, p) in f.params.iter().enumerate() {
            let ty = self.resolve_type(&p.ty);
            let null_at_launch =
                ty.pointer_depth > 0 && bind.params.get(i).copied().flatten() == Some(0);
            let v = if null_at_launch {
                Val::Int(sym::konst(0))
            } else if ty.pointer_depth > 0 {
                let mut elem = ty.clone();
                elem.pointer_depth -= 1;
                Val::Ptr(Ptr::global(p.name.as_str(), elem, Some((file, p.span))))
            } else if types::is_struct(&ty.name, self.types()) && !is_vector_type(&ty.name) {
                Val::Aggregate {
                    name: p.name.as_str().into(),
                    ty,
                }
            } else {
                let launch = bind.params.get(i).copied().flatten();
                Val::Int(self.runtime_var(&p.name, launch))
            };
            self.declare(&p.name, v);
        }
        // template value parameters without a binding are runtime values too
        for tp in &f.template_params {
            if !tp.is_type
                && !self
                    .frames
                    .last()
                    .is_some_and(|fr| fr.template.iter().any(|(n, _)| *n == tp.name))
            {
                let v = self.runtime_var(&tp.name, None);
                self.declare(&tp.name, Val::Int(v));
            }
        }
        if let Some(body) = &f.body {
            self.stmts(body);
        }
        self.scopes
            .truncate(self.frames.last().map(|f| f.scope_base).unwrap_or(0));
        self.frames.pop();
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

    fn runtime_var(&mut self, name: &str, launch_value: Option<i64>) -> Sym {
        if let Some(v) = self.options.params.get(name) {
            return sym::konst(*v);
        }
        if let Some(v) = launch_value {
            return sym::konst(v);
        }
        if let Some(i) = self.runtime.iter().position(|r| r.name == name) {
            return sym::var(Var::Runtime(i as u32));
        }
        self.runtime.push(RuntimeVar {
            name: name.to_string(),
            value: self.options.runtime_default,
        });
        sym::var(Var::Runtime(self.runtime.len() as u32 - 1))
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
                slot.1 = v;
                return true;
            }
        }
        false
    }

    fn resolve_type(&self, ty: &TypeRef) -> TypeRef {
        if let Some(fr) = self.frames.last() {
            if let Some((_, TArg::Type(t))) = fr.template.iter().find(|(n, _)| *n == ty.name) {
                let mut out = t.clone();
                out.pointer_depth += ty.pointer_depth;
                out.is_const |= ty.is_const;
                return out;
            }
        }
        // typedefs of pointer types (`typedef float* fptr;`)
        for f in self.types() {
            if let Some(t) = f
                .typedefs
                .iter()
                .find(|t| t.name == ty.name && t.ty.pointer_depth > 0)
            {
                let mut out = t.ty.clone();
                out.pointer_depth += ty.pointer_depth;
                return out;
            }
        }
        ty.clone()
    }

    fn layout_of(&self, ty: &TypeRef) -> Option<Layout> {
        types::layout(&self.resolve_type(ty), self.types())
    }

    // ----- statements -----

    fn stmts(&mut self, body: &[Stmt]) {
        self.scopes.push(Vec::new());
        for s in body {
            self.stmt(s);
            if self.frames.last().is_some_and(|f| f.ret.is_some()) && self.frames.len() > 1 {
                break;
            }
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return;
        }
        match s {
            Stmt::Decl(d) => self.decl(d),
            Stmt::Expr(e) => {
                self.rvalue(e);
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::If { cond, then, els } => {
                let c = self.rvalue(cond).sym();
                // a condition known at analysis time (a launch literal, NULL, a template
                // argument) leaves the other branch dead: its accesses never execute
                if let Some(v) = c.as_const() {
                    self.stmts(if v != 0 { then } else { els });
                    return;
                }
                let saved = self.mask.clone();
                let maskable = c.lane_varying && !c.data && c.unknown_reason().is_none();
                if maskable {
                    self.mask = sym::and(saved.clone(), c.clone());
                }
                let before = self.scopes.clone();
                // what a branch loads or stores is not known to be in registers after it
                self.in_registers.clear();
                self.stmts(then);
                let then_returns = ends_with_return(then);
                let after_then = std::mem::replace(&mut self.scopes, before.clone());
                if maskable {
                    self.mask = sym::and(saved.clone(), sym::un(UnaryOp::Not, c.clone()));
                }
                self.in_registers.clear();
                self.stmts(els);
                self.in_registers.clear();
                self.mask = saved;
                self.merge_branches(&c, &before, &after_then);
                // `if (i >= n) return;` leaves only the other lanes running
                if maskable && then_returns && self.frames.len() == 1 {
                    self.mask = sym::and(self.mask.clone(), sym::un(UnaryOp::Not, c));
                } else if maskable
                    && ends_with_return(els)
                    && !els.is_empty()
                    && self.frames.len() == 1
                {
                    self.mask = sym::and(self.mask.clone(), c);
                }
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                self.scopes.push(Vec::new());
                for s in init {
                    self.stmt(s);
                }
                let mut steps = Vec::new();
                if let Some(u) = update {
                    collect_inductions(u, &mut steps);
                }
                self.run_loop(cond.as_ref(), body, steps);
                self.scopes.pop();
            }
            Stmt::While {
                cond,
                body,
                do_while,
            } => {
                self.scopes.push(Vec::new());
                let c = if *do_while { None } else { Some(cond) };
                self.run_loop(c, body, Vec::new());
                self.scopes.pop();
            }
            Stmt::Return(e, _) => {
                let v = e
                    .as_ref()
                    .map(|e| self.rvalue(e))
                    .unwrap_or(Val::Unknown("void".into()));
                if self.frames.len() > 1 {
                    if let Some(f) = self.frames.last_mut() {
                        if f.ret.is_none() {
                            f.ret = Some(v);
                        }
                    }
                }
            }
            Stmt::Break | Stmt::Continue | Stmt::Other(_) => {}
        }
    }

    /// After an `if` whose condition is not known: a variable the two branches left different
    /// holds `cond ? then : else` (per lane for a lane condition, data-dependent for a
    /// condition read from memory, as in a binary search).
    fn merge_branches(
        &mut self,
        c: &Sym,
        before: &[Vec<(Rc<str>, Val)>],
        after_then: &[Vec<(Rc<str>, Val)>],
    ) {
        for (si, scope) in before.iter().enumerate() {
            for bi in 0..scope.len() {
                let (Some(t), Some(e)) = (
                    after_then.get(si).and_then(|s| s.get(bi)),
                    self.scopes.get(si).and_then(|s| s.get(bi)),
                ) else {
                    continue;
                };
                let merged = match (&t.1, &e.1) {
                    (Val::Int(x), Val::Int(y)) if Rc::ptr_eq(x, y) => continue,
                    (Val::Int(x), Val::Int(y)) => {
                        Val::Int(sym::select(c.clone(), x.clone(), y.clone()))
                    }
                    (Val::Ptr(p), Val::Ptr(q))
                        if Rc::ptr_eq(&p.offset, &q.offset) && p.base == q.base =>
                    {
                        continue
                    }
                    (Val::Ptr(p), Val::Ptr(q)) if p.base == q.base && p.space == q.space => {
                        let mut m = q.clone();
                        m.offset = sym::select(c.clone(), p.offset.clone(), q.offset.clone());
                        m.path = None;
                        Val::Ptr(m)
                    }
                    (Val::Ptr(_), Val::Ptr(_)) => {
                        Val::Unknown("a pointer that differs between branches".into())
                    }
                    // assigned on one side only, uninitialised on the other: reading it on the
                    // other side is undefined, so the assigned value is the one that matters
                    (v @ (Val::Int(_) | Val::Ptr(_)), Val::Unknown(_)) => v.clone(),
                    _ => continue,
                };
                if let Some(slot) = self.scopes.get_mut(si).and_then(|s| s.get_mut(bi)) {
                    slot.1 = merged;
                }
            }
        }
    }

    fn run_loop(&mut self, cond: Option<&Expr>, body: &[Stmt], mut steps: Vec<Induction>) {
        for s in body {
            if let Stmt::Expr(e) = s {
                collect_inductions(e, &mut steps);
            }
        }
        let id = self.loops.len() as u32;
        self.loops.push(LoopInfo { trip: None });
        let iter = sym::var(Var::LoopIter(id));
        let mut trip_inputs = None;
        for ind in &steps {
            let Some(v0) = self.lookup_local(&ind.name).cloned() else {
                continue;
            };
            let step = match &ind.step {
                StepKind::Add(e, neg) => {
                    let s = self.pure_rvalue(e).sym();
                    if *neg {
                        sym::un(UnaryOp::Neg, s)
                    } else {
                        s
                    }
                }
                StepKind::Shift(..) => sym::konst(0),
            };
            if step.lane_varying || step.data {
                continue;
            }
            let new = match (&ind.step, v0.clone()) {
                (StepKind::Add(..), Val::Int(s0)) => {
                    if trip_inputs.is_none() {
                        trip_inputs = Some((ind.name.clone(), s0.clone(), step.clone(), None));
                    }
                    Val::Int(sym::add(s0, sym::mul(iter.clone(), step)))
                }
                (StepKind::Add(..), Val::Ptr(mut p)) => {
                    let size = self.layout_of(&p.elem).map(|l| l.size).unwrap_or(4);
                    p.offset = sym::add(
                        p.offset,
                        sym::mul(sym::mul(iter.clone(), step), sym::konst(size)),
                    );
                    Val::Ptr(p)
                }
                (StepKind::Shift(op, k), Val::Int(s0)) => {
                    if trip_inputs.is_none() {
                        trip_inputs =
                            Some((ind.name.clone(), s0.clone(), sym::konst(0), Some((*op, *k))));
                    }
                    Val::Int(sym::binop(*op, s0, sym::mul(iter.clone(), sym::konst(*k))))
                }
                _ => continue,
            };
            self.assign_local(&ind.name, new);
        }
        if let (Some(c), Some((name, s0, step, shift))) = (cond, trip_inputs) {
            self.loops[id as usize].trip =
                trip_count(c, &name, s0.as_const(), step.as_const(), shift, self);
        }
        let saved = self.mask.clone();
        if let Some(c) = cond {
            let c = self.rvalue(c).sym();
            if c.lane_varying && !c.data && c.unknown_reason().is_none() {
                self.mask = sym::and(saved.clone(), c);
            }
        }
        self.loop_stack.push(id);
        // iterations after the first do not see the values held before the loop
        self.in_registers.clear();
        self.stmts(body);
        self.in_registers.clear();
        self.loop_stack.pop();
        self.mask = saved;
    }

    fn decl(&mut self, d: &Decl) {
        let ty = self.resolve_type(&d.ty);
        if !d.dims.is_empty() {
            let dims: Vec<i64> = d
                .dims
                .iter()
                .map(|dim| {
                    dim.size
                        .as_ref()
                        .and_then(|e| self.pure_rvalue(e).sym().as_const())
                        .unwrap_or(0)
                })
                .collect();
            let space = if d.shared {
                Space::Shared
            } else if d.constant {
                Space::Constant
            } else {
                Space::Local
            };
            let known = dims.iter().all(|x| *x > 0);
            let full: Rc<[i64]> = Rc::from(if known { dims.clone() } else { Vec::new() });
            let inner: Rc<[i64]> = Rc::from(if known && dims.len() > 1 {
                dims[1..].to_vec()
            } else {
                Vec::new()
            });
            let v = Val::Ptr(Ptr {
                space,
                base: d.name.as_str().into(),
                offset: sym::konst(0),
                elem: ty,
                dims: inner,
                decl: Some((self.file(), d.span)),
                path: if known {
                    Some((Vec::new(), full))
                } else {
                    None
                },
            });
            if let Some(init) = &d.init {
                self.rvalue(init);
            }
            self.declare(&d.name, v);
            return;
        }
        let v = if ty.name == "dim3" && ty.pointer_depth == 0 {
            match &d.init {
                Some(Expr {
                    kind: ExprKind::Init(args),
                    ..
                }) => self.dim3_from(args),
                Some(Expr {
                    kind: ExprKind::Call { callee, args, .. },
                    ..
                }) if callee == "dim3" => self.dim3_from(args),
                Some(e) => match self.rvalue(e) {
                    Val::Int(s) => Val::Dim3([s, sym::konst(1), sym::konst(1)]),
                    other => other,
                },
                None => Val::Dim3([sym::konst(1), sym::konst(1), sym::konst(1)]),
            }
        } else {
            let width = types::vector_width(&ty.name).filter(|_| ty.pointer_depth == 0);
            match &d.init {
                Some(Expr {
                    kind: ExprKind::Init(args),
                    ..
                }) if width.is_some_and(|w| args.len() == w && w > 1) => {
                    let c: Vec<Sym> = args.iter().map(|a| self.rvalue(a).sym()).collect();
                    Val::Vector(c.into())
                }
                Some(Expr {
                    kind: ExprKind::Init(args),
                    ..
                }) if args.len() == 1 && ty.pointer_depth == 0 => self.rvalue(&args[0]),
                Some(e) => {
                    let v = self.rvalue(e);
                    match v {
                        Val::Ptr(mut p) if ty.pointer_depth > 0 => {
                            // `const float4* v = (const float4*)p` or an alias of a different type
                            let mut elem = ty.clone();
                            elem.pointer_depth -= 1;
                            if p.dims.is_empty() && elem.name != "auto" {
                                p.elem = elem;
                            }
                            Val::Ptr(p)
                        }
                        other => other,
                    }
                }
                // a pointer declared without a value still has its element type (a launch's
                // template arguments are deduced from it)
                None if ty.pointer_depth > 0 => {
                    let mut elem = ty.clone();
                    elem.pointer_depth -= 1;
                    Val::Ptr(Ptr {
                        space: Space::Global,
                        base: d.name.as_str().into(),
                        offset: sym::unknown(format!("`{}` is not initialised", d.name)),
                        elem,
                        dims: Rc::from(Vec::new()),
                        decl: Some((self.file(), d.span)),
                        path: None,
                    })
                }
                None => Val::Unknown(format!("`{}` is not initialised", d.name).into()),
            }
        };
        // `x128 v = load128(p);`: a struct in registers; `v[k]` goes through its operator[]
        // to its own members, not to memory
        let v = match v {
            Val::Unknown(_) if self.is_object_type(&ty) => {
                Val::Unknown(format!("`{}` {LOCAL_OBJECT}", d.name).into())
            }
            v => v,
        };
        self.declare(&d.name, v);
    }

    fn dim3_from(&mut self, args: &[Expr]) -> Val {
        let mut out = [sym::konst(1), sym::konst(1), sym::konst(1)];
        for (i, a) in args.iter().take(3).enumerate() {
            out[i] = self.rvalue(a).sym();
        }
        Val::Dim3(out)
    }

    // ----- expressions -----

    /// Evaluates without recording accesses (bounds, steps, sizes).
    fn pure_rvalue(&mut self, e: &Expr) -> Val {
        let n = self.accesses.len();
        let v = self.rvalue(e);
        self.accesses.truncate(n);
        v
    }

    fn lookup(&mut self, name: &str, span: Span) -> Val {
        if let Some(v) = self.lookup_local(name) {
            return v.clone();
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
        match name {
            "warpSize" => return Val::Int(sym::konst(32)),
            "NULL" => return Val::Int(sym::konst(0)),
            "threadIdx" => {
                return Val::Dim3([
                    sym::var(Var::Tid(0)),
                    sym::var(Var::Tid(1)),
                    sym::var(Var::Tid(2)),
                ])
            }
            "blockIdx" => {
                return Val::Dim3([
                    sym::var(Var::BlockIdx(0)),
                    sym::var(Var::BlockIdx(1)),
                    sym::var(Var::BlockIdx(2)),
                ])
            }
            "blockDim" => {
                return Val::Dim3([
                    sym::var(Var::BlockDim(0)),
                    sym::var(Var::BlockDim(1)),
                    sym::var(Var::BlockDim(2)),
                ])
            }
            "gridDim" => {
                return Val::Dim3([
                    sym::var(Var::GridDim(0)),
                    sym::var(Var::GridDim(1)),
                    sym::var(Var::GridDim(2)),
                ])
            }
            _ => {}
        }
        // file-scope declarations: the kernel's file first, then the rest of the project
        let file = self.file();
        if let Some((fi, d)) = self.project.global(name, file) {
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
            if let Some(v) = v {
                return match v {
                    // a `__constant__` struct of parameters (rodinia's d_common): its members
                    // are runtime values like a struct kernel parameter's
                    Val::Unknown(_)
                        if d.dims.is_empty()
                            && d.ty.pointer_depth == 0
                            && types::is_struct(&d.ty.name, self.types())
                            && !is_vector_type(&d.ty.name) =>
                    {
                        Val::Aggregate {
                            name: name.into(),
                            ty: d.ty.clone(),
                        }
                    }
                    Val::Unknown(_) if !d.is_const => Val::Int(self.runtime_var(name, None)),
                    v => v,
                };
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
        }
        // in a member function: a static member of its struct (`I` in `tile<I_, J_, T>`)
        if let Some(owner) = self.frames.last().and_then(|f| f.owner.clone()) {
            if let Some(v) = self.static_member(&owner, name) {
                return v;
            }
        }
        Val::Unknown(format!("`{name}` is not defined in the analysed files").into())
    }

    /// `x128::size`: a static member of a struct, through typedefs, evaluated with the
    /// struct's template parameters bound to the arguments the type names (`Packed128<floatX>`).
    fn static_member(&mut self, ty: &str, member: &str) -> Option<Val> {
        // statics defined through each other (`ne = I * J / 32`) nest frames: bounded
        if self.frames.len() > MAX_CALL_DEPTH {
            return None;
        }
        let full = self.through_typedefs(ty);
        let (name, binds) = self.struct_instance(&full)?;
        let def = self
            .types()
            .iter()
            .find_map(|f| f.structs.iter().find(|s| s.name == name))?;
        let init = def.statics.iter().find(|(n, _)| n == member)?.1.clone();
        let mut template = Vec::new();
        for (p, a) in &binds {
            let arg = self.template_arg_text(a);
            template.push((p.clone(), arg));
        }
        let file = self.file();
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
            file,
            ret: None,
            template,
            owner: Some(full.clone()),
        });
        let v = self.pure_rvalue(&init);
        self.frames.pop();
        Some(v)
    }

    /// The struct definition a type names, and its template parameters bound to the type's
    /// arguments (as written): a partial specialization whose pattern the arguments fit
    /// (`tile<I_, J_, half2>` for `tile<16, 4, half2>`, I_ = 16, J_ = 4), else the primary
    /// template.
    fn struct_instance(&self, full: &str) -> Option<(String, Vec<(String, String)>)> {
        let (base, args) = split_template(full);
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
                let fits = pattern.iter().zip(&args).all(|(p, a)| {
                    if !s.template_params.contains(p) {
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
                    return Some((s.name.clone(), binds));
                }
            }
        }
        let def = structs().find(|s| s.name == base)?;
        let binds = def.template_params.iter().cloned().zip(args).collect();
        Some((def.name.clone(), binds))
    }

    /// A template argument as a type names it (`16`, `half2` in `tile<16, 8, half2>`; `ncols`
    /// in `tile<ncols, 8, half2>` inside a template is the caller's `ncols`, and a name with a
    /// constant value is that value).
    fn template_arg_text(&mut self, a: &str) -> TArg {
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
                if s.as_const().is_some() {
                    return TArg::Val(Val::Int(s));
                }
            }
        }
        TArg::Type(self.resolve_type(&TypeRef::named(a)))
    }

    /// Whether values of `ty` are objects (structs, template instances), through typedefs.
    fn is_object_type(&self, ty: &TypeRef) -> bool {
        if ty.pointer_depth > 0 {
            return false;
        }
        let full = self.through_typedefs(&ty.name);
        let (base, _) = split_template(&full);
        full.contains('<') || types::is_struct(base, self.types())
    }

    /// The type a (non-pointer) typedef chain ends at, template arguments bound.
    fn through_typedefs(&self, ty: &str) -> String {
        let resolved = self.resolve_type(&TypeRef::named(ty));
        types::through_typedefs(&resolved.name, self.types())
    }

    fn rvalue(&mut self, e: &Expr) -> Val {
        // substitution (macros, helpers, template arguments) can nest deeper than the syntax
        if self.eval_depth > 400 {
            return Val::Unknown("expression nested too deeply to evaluate".into());
        }
        self.eval_depth += 1;
        let v = self.rvalue_inner(e);
        self.eval_depth -= 1;
        v
    }

    /// A template argument as written at a call or launch, evaluated in the current frame.
    fn template_arg(&mut self, a: &TemplateArg, is_type: bool) -> TArg {
        match a {
            TemplateArg::Type(t) if is_type => TArg::Type(self.resolve_type(t)),
            // `k<BLOCK>`: the grammar cannot tell a name from a type
            TemplateArg::Type(t) => TArg::Val(self.lookup(&t.name, Span::default())),
            TemplateArg::Expr(e) => TArg::Val(self.pure_rvalue(e)),
        }
    }

    fn rvalue_inner(&mut self, e: &Expr) -> Val {
        match &e.kind {
            ExprKind::Int(v) => Val::Int(sym::konst(*v)),
            ExprKind::Bool(b) => Val::Int(sym::konst(*b as i64)),
            ExprKind::Float => Val::Unknown("floating-point value".into()),
            ExprKind::Str => Val::Unknown("string".into()),
            ExprKind::Ident(name) => self.lookup(name, e.span),
            ExprKind::Field { base, field, arrow } => {
                if !*arrow {
                    if let Some(v) = self.value_field(base, field) {
                        return v;
                    }
                }
                match self.place(e) {
                    Some(p) => self.load(p, e),
                    None => Val::Unknown(format!("member `{field}`").into()),
                }
            }
            ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnOp::Deref, ..
            } => match self.place(e) {
                Some(p) if p.subarray => Val::Ptr(p.ptr),
                Some(p) => self.load(p, e),
                None => {
                    Val::Unknown("subscript of something that is not an array or pointer".into())
                }
            },
            ExprKind::Unary { op, arg } => match op {
                UnOp::AddrOf => match self.place(arg) {
                    Some(p) => Val::Ptr(p.ptr),
                    None => Val::Unknown("address of a local variable".into()),
                },
                UnOp::Neg => Val::Int(sym::un(UnaryOp::Neg, self.rvalue(arg).sym())),
                UnOp::Plus => self.rvalue(arg),
                UnOp::Not => Val::Int(sym::un(UnaryOp::Not, self.rvalue(arg).sym())),
                UnOp::BitNot => Val::Int(sym::un(UnaryOp::BitNot, self.rvalue(arg).sym())),
                UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                    let delta = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                        1
                    } else {
                        -1
                    };
                    self.update(
                        arg,
                        BinOp::Add,
                        Val::Int(sym::konst(delta)),
                        matches!(op, UnOp::PostInc | UnOp::PostDec),
                    )
                }
                UnOp::Deref => unreachable_val(),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.rvalue(lhs);
                let b = self.rvalue(rhs);
                self.arith(*op, a, b)
            }
            ExprKind::Assign { op, lhs, rhs } => {
                let v = self.rvalue(rhs);
                match op {
                    None => self.store(lhs, v.clone()),
                    Some(op) => {
                        self.update(lhs, *op, v.clone(), false);
                    }
                }
                v
            }
            ExprKind::Cond { cond, then, els } => {
                let c = self.rvalue(cond).sym();
                let saved = self.mask.clone();
                let maskable = c.lane_varying && !c.data && c.unknown_reason().is_none();
                if maskable {
                    self.mask = sym::and(saved.clone(), c.clone());
                }
                let a = self.rvalue(then);
                if maskable {
                    self.mask = sym::and(saved.clone(), sym::un(UnaryOp::Not, c.clone()));
                }
                let b = self.rvalue(els);
                self.mask = saved;
                match (a, b) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(sym::select(c, x, y)),
                    (Val::Ptr(mut p), Val::Ptr(q)) if p.base == q.base && p.space == q.space => {
                        p.offset = sym::select(c, p.offset, q.offset);
                        Val::Ptr(p)
                    }
                    (Val::Ptr(p), _) | (_, Val::Ptr(p)) if c.as_const().is_some() => Val::Ptr(p),
                    _ => Val::Unknown("conditional with arms of different kinds".into()),
                }
            }
            ExprKind::Call {
                callee,
                template_args,
                args,
            } => self.call(callee, template_args, args, e.span),
            ExprKind::Cast { ty, arg } => {
                let ty = self.resolve_type(ty);
                let v = self.rvalue(arg);
                match v {
                    Val::Ptr(mut p) if ty.pointer_depth > 0 => {
                        let mut elem = ty;
                        elem.pointer_depth -= 1;
                        p.elem = elem;
                        p.dims = Rc::from(Vec::new());
                        p.path = None;
                        Val::Ptr(p)
                    }
                    Val::Int(s) if ty.pointer_depth == 0 => Val::Int(cast_int(&ty.name, s)),
                    other => other,
                }
            }
            ExprKind::SizeofType(t) => match self.layout_of(t) {
                Some(l) => Val::Int(sym::konst(l.size)),
                None => Val::Unknown(format!("sizeof({})", t.name).into()),
            },
            ExprKind::SizeofExpr(inner) => match &inner.kind {
                ExprKind::Ident(n) => {
                    let t = TypeRef::named(n);
                    match self.layout_of(&t) {
                        Some(l) => Val::Int(sym::konst(l.size)),
                        None => Val::Unknown("sizeof expression".into()),
                    }
                }
                _ => Val::Unknown("sizeof expression".into()),
            },
            ExprKind::Comma(a, b) => {
                self.rvalue(a);
                self.rvalue(b)
            }
            ExprKind::Init(items) => {
                for i in items {
                    self.rvalue(i);
                }
                Val::Unknown("initializer list".into())
            }
            ExprKind::Unsupported(what) => {
                Val::Unknown(format!("unsupported syntax: {what}").into())
            }
        }
    }

    /// Member of a value that is not in memory: `threadIdx.x`, a dim3 local, a struct parameter.
    fn value_field(&mut self, base: &Expr, field: &str) -> Option<Val> {
        let is_place = matches!(
            base.kind,
            ExprKind::Index { .. }
                | ExprKind::Unary {
                    op: UnOp::Deref,
                    ..
                }
                | ExprKind::Field { arrow: true, .. }
        );
        if is_place {
            return None;
        }
        if let ExprKind::Field {
            base: inner,
            arrow: false,
            ..
        } = &base.kind
        {
            if matches!(inner.kind, ExprKind::Index { .. }) {
                return None;
            }
        }
        let v = self.rvalue(base);
        Some(match v {
            Val::Vector(c) => match ["x", "y", "z", "w"].iter().position(|f| *f == field) {
                Some(k) if k < c.len() => Val::Int(c[k].clone()),
                _ => Val::Unknown(format!("vector member `{field}`").into()),
            },
            Val::Dim3(c) => match field {
                "x" => Val::Int(c[0].clone()),
                "y" => Val::Int(c[1].clone()),
                "z" => Val::Int(c[2].clone()),
                _ => Val::Unknown(format!("dim3 member `{field}`").into()),
            },
            Val::Aggregate { name, ty } => {
                let full = format!("{name}.{field}");
                match types::field(&ty.name, field, self.types()) {
                    Some((_, _, fty)) if fty.pointer_depth > 0 => {
                        let mut elem = fty.clone();
                        elem.pointer_depth -= 1;
                        Val::Ptr(Ptr::global(full.as_str(), elem, None))
                    }
                    Some((_, _, fty)) if types::is_struct(&fty.name, self.types()) => {
                        Val::Aggregate {
                            name: full.as_str().into(),
                            ty: fty,
                        }
                    }
                    _ => Val::Int(self.runtime_var(&full, None)),
                }
            }
            Val::Ptr(_) => return None,
            Val::Int(s) if s.data => {
                Val::Int(sym::data(format!("member `{field}` of a loaded value")))
            }
            Val::Int(s) if !s.lane_varying && s.unknown_reason().is_none() => {
                Val::Unknown(format!("member `{field}` of a scalar").into())
            }
            _ => Val::Unknown(format!("member `{field}` of a local value").into()),
        })
    }

    /// The memory place an lvalue expression designates, if it designates one.
    fn place(&mut self, e: &Expr) -> Option<Place> {
        match &e.kind {
            ExprKind::Index { base, index } => {
                let b = self.rvalue(base);
                let i = self.rvalue(index).sym();
                let p = match b {
                    Val::Ptr(p) => p,
                    Val::Unknown(reason) if reason.ends_with(LOCAL_OBJECT) => {
                        let mut p = unknown_pointer(&reason);
                        p.space = Space::Local;
                        p.offset = sym::konst(0);
                        p
                    }
                    Val::Unknown(reason) if opaque_pointer(&reason) => unknown_pointer(&reason),
                    _ => return None,
                };
                Some(self.index_ptr(p, i))
            }
            ExprKind::Unary {
                op: UnOp::Deref,
                arg,
            } => {
                let Val::Ptr(p) = self.rvalue(arg) else {
                    return None;
                };
                Some(self.index_ptr(p, sym::konst(0)))
            }
            ExprKind::Field { base, field, arrow } => {
                let mut place = if *arrow {
                    let Val::Ptr(p) = self.rvalue(base) else {
                        return None;
                    };
                    self.index_ptr(p, sym::konst(0))
                } else {
                    self.place(base)?
                };
                let ty = place.ty.clone();
                let Some((off, fl, fty)) = types::field(&ty.name, field, self.types()) else {
                    // an access all the same, of unknown cost: say so rather than drop it
                    place.ptr.offset = sym::unknown(format!(
                        "the layout of `{}` is not in the analysed files (member `{field}`)",
                        ty.name
                    ));
                    place.ptr.path = None;
                    return Some(place);
                };
                let (struct_size, struct_align) = self
                    .layout_of(&ty)
                    .map(|l| (l.size, l.align))
                    .unwrap_or((0, 0));
                place.ptr.offset = sym::add(place.ptr.offset, sym::konst(off));
                place.field = Some(FieldInfo {
                    name: field.clone(),
                    struct_name: ty.name.clone(),
                    struct_size,
                    struct_align,
                    offset: off + place.field.as_ref().map(|f| f.offset).unwrap_or(0),
                });
                place.bytes = fl.size;
                place.ty = fty;
                if let Some((idx, dims)) = place.ptr.path.take() {
                    place.ptr.path = Some((idx, dims));
                }
                Some(place)
            }
            ExprKind::Ident(_) => {
                // a pointer variable used as `*p`-less lvalue is not memory
                None
            }
            _ => None,
        }
    }

    fn index_ptr(&mut self, mut p: Ptr, i: Sym) -> Place {
        let (elem_layout, assumption) = match self.layout_of(&p.elem) {
            Some(l) => (l, None),
            None => (
                Layout { size: 4, align: 4 },
                Some(format!(
                    "size of `{}` unknown; assumed 4 bytes",
                    p.elem.name
                )),
            ),
        };
        let inner: i64 = p.dims.iter().product::<i64>().max(1);
        let stride = inner * elem_layout.size;
        p.offset = sym::add(p.offset, sym::mul(i.clone(), sym::konst(stride)));
        if let Some((idx, full)) = &mut p.path {
            idx.push(i);
            if idx.len() > full.len() {
                p.path = None;
            }
        }
        let subarray = !p.dims.is_empty();
        let bytes = if subarray { stride } else { elem_layout.size };
        if subarray {
            p.dims = Rc::from(p.dims[1..].to_vec());
        }
        let ty = p.elem.clone();
        Place {
            ptr: p,
            subarray,
            bytes,
            ty,
            field: None,
            assumption,
        }
    }

    /// Whether the value at `place` is already in a register of this thread (loaded or stored
    /// by it before, with nothing since that could change it), and keeps the register view
    /// up to date for this access.
    fn in_register(&mut self, place: &Place, op: AccessOp) -> bool {
        let p = &place.ptr;
        if !matches!(p.space, Space::Global | Space::Shared)
            || p.offset.data
            || p.offset.unknown_reason().is_some()
        {
            return false;
        }
        let same = |e: &(Space, Rc<str>, Sym, i64, Sym)| {
            e.0 == p.space
                && e.1 == p.base
                && e.3 == place.bytes
                && Rc::ptr_eq(&e.4, &self.mask)
                && sym::same(&e.2, &p.offset)
        };
        match op {
            AccessOp::Load => {
                if self.in_registers.iter().any(same) {
                    return true;
                }
            }
            AccessOp::Store | AccessOp::Atomic => {
                // global pointers may alias each other; shared arrays do not
                let (space, base) = (p.space, p.base.clone());
                self.in_registers
                    .retain(|e| e.0 != space || (space == Space::Shared && e.1 != base));
                if op == AccessOp::Atomic {
                    return false;
                }
            }
        }
        self.in_registers.push((
            p.space,
            p.base.clone(),
            p.offset.clone(),
            place.bytes,
            self.mask.clone(),
        ));
        if self.in_registers.len() > 64 {
            self.in_registers.remove(0);
        }
        false
    }

    fn record(&mut self, place: &Place, span: Span, op: AccessOp, idx_expr: Option<&Expr>) {
        if self.in_register(place, op) {
            return;
        }
        let lane_term = idx_expr
            .and_then(|e| self.access_lane_term(e))
            .map(|s| self.loc(s));
        let shared_index = match (&place.ptr.path, place.ptr.space) {
            (Some((idx, dims)), Space::Shared) if idx.len() == dims.len() && !dims.is_empty() => {
                Some(SharedIndex {
                    indices: idx.clone(),
                    dims: dims.to_vec(),
                    elem_size: self.layout_of(&place.ptr.elem).map(|l| l.size).unwrap_or(4),
                    field_offset: place.field.as_ref().map(|f| f.offset).unwrap_or(0),
                })
            }
            _ => None,
        };
        self.accesses.push(RawAccess {
            loc: self.loc(span),
            space: place.ptr.space,
            op,
            bytes: place.bytes,
            elem_type: place.ty.name.clone(),
            base: place.ptr.base.to_string(),
            decl: place.ptr.decl,
            addr: place.ptr.offset.clone(),
            mask: self.mask.clone(),
            loops: self.loop_stack.clone(),
            field: place.field.clone(),
            shared_index,
            lane_term,
            assumptions: place.assumption.iter().cloned().collect(),
            iter_step: 1,
        });
    }

    fn load(&mut self, place: Place, e: &Expr) -> Val {
        self.record(&place, e.span, AccessOp::Load, index_of(e));
        self.loaded_value(&place)
    }

    fn loaded_value(&mut self, place: &Place) -> Val {
        let addr = &place.ptr.offset;
        if place.ty.pointer_depth > 0 {
            let mut elem = place.ty.clone();
            elem.pointer_depth -= 1;
            let offset = if addr.lane_varying {
                sym::data(format!("pointer loaded from `{}`", place.ptr.base))
            } else {
                sym::konst(0)
            };
            return Val::Ptr(Ptr {
                space: Space::Global,
                base: format!("*{}", place.ptr.base).into(),
                offset,
                elem,
                dims: Rc::from(Vec::new()),
                decl: None,
                path: None,
            });
        }
        if addr.lane_varying || addr.data {
            Val::Int(sym::data(format!(
                "`{}` read at a lane-dependent index",
                place.ptr.base
            )))
        } else if addr.unknown_reason().is_some() {
            Val::Unknown(format!("value loaded from `{}`", place.ptr.base).into())
        } else {
            let name = format!("{}[...]", place.ptr.base);
            Val::Int(self.runtime_var(&name, None))
        }
    }

    /// The first sub-expression of an index that makes it differ between lanes.
    /// The term of an access's indices that makes lanes differ, preferring one that follows
    /// threadIdx.x or the lane id (threadIdx.y is uniform within a warp of a wide block).
    fn access_lane_term(&mut self, access: &Expr) -> Option<Span> {
        let mut indices = Vec::new();
        let mut cur = access;
        loop {
            match &cur.kind {
                ExprKind::Index { base, index } => {
                    indices.push(&**index);
                    cur = base;
                }
                ExprKind::Field { base, .. } => cur = base,
                ExprKind::Unary {
                    op: UnOp::Deref,
                    arg,
                } => {
                    indices.push(&**arg);
                    break;
                }
                _ => break,
            }
        }
        indices.reverse();
        for want_x in [true, false] {
            for i in &indices {
                if let Some(s) = self.lane_term(i, 0, want_x) {
                    return Some(s);
                }
            }
        }
        None
    }

    fn lane_term(&mut self, e: &Expr, depth: usize, want_x: bool) -> Option<Span> {
        if depth > 64 {
            return None;
        }
        let varies = |s: &Sym| {
            if !want_x {
                return s.lane_varying;
            }
            let mut x = s.data;
            s.visit_vars(&mut |v| x |= matches!(v, Var::Tid(0) | Var::LaneId));
            x
        };
        match &e.kind {
            ExprKind::Field { base, field, .. } => match &base.kind {
                ExprKind::Ident(n) if n == "threadIdx" => {
                    (!want_x || field == "x").then_some(e.span)
                }
                _ => None,
            },
            ExprKind::Ident(n) => match self.lookup_local(n) {
                Some(Val::Int(s)) if varies(s) => Some(e.span),
                _ => None,
            },
            ExprKind::Index { .. } | ExprKind::Call { .. } => {
                let v = self.pure_rvalue(e);
                match v {
                    Val::Int(s) if varies(&s) => Some(e.span),
                    _ => None,
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => self
                .lane_term(lhs, depth + 1, want_x)
                .or_else(|| self.lane_term(rhs, depth + 1, want_x)),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => {
                self.lane_term(arg, depth + 1, want_x)
            }
            ExprKind::Cond { cond, then, els } => self
                .lane_term(then, depth + 1, want_x)
                .or_else(|| self.lane_term(els, depth + 1, want_x))
                .or_else(|| self.lane_term(cond, depth + 1, want_x)),
            _ => None,
        }
    }

    fn store(&mut self, lhs: &Expr, v: Val) {
        // `block.x = 256;` on a dim3 local
        if let ExprKind::Field {
            base,
            field,
            arrow: false,
        } = &lhs.kind
        {
            if let ExprKind::Ident(name) = &base.kind {
                if let Some(Val::Vector(c)) = self.lookup_local(name).cloned() {
                    if let Some(k) = ["x", "y", "z", "w"].iter().position(|f| f == field) {
                        let mut c = c.to_vec();
                        if k < c.len() {
                            c[k] = v.sym();
                            self.assign_local(name, Val::Vector(c.into()));
                            return;
                        }
                    }
                }
                if let Some(Val::Dim3(mut c)) = self.lookup_local(name).cloned() {
                    let k = match field.as_str() {
                        "x" => 0,
                        "y" => 1,
                        _ => 2,
                    };
                    c[k] = v.sym();
                    self.assign_local(name, Val::Dim3(c));
                    return;
                }
            }
        }
        match &lhs.kind {
            ExprKind::Ident(name) => {
                if !self.assign_local(name, v.clone()) {
                    // No local of that name: a declaration the parser misread as an expression
                    // (`cg::thread_block_tile<16> t = ...` parses as `(a < 16) > (t = ...)`
                    // after another declaration), or a global; binding it here serves both.
                    self.declare(name, v);
                }
            }
            _ => {
                if let Some(p) = self.place(lhs) {
                    let idx = index_of(lhs);
                    self.record(&p, lhs.span, AccessOp::Store, idx);
                }
            }
        }
    }

    /// `x op= v`, `x++`: a read and a write of the same place.
    fn update(&mut self, lhs: &Expr, op: BinOp, v: Val, post: bool) -> Val {
        match &lhs.kind {
            ExprKind::Ident(name) => {
                let old = self.lookup(name, lhs.span);
                let new = self.arith(op, old.clone(), v);
                self.assign_local(name, new.clone());
                if post {
                    old
                } else {
                    new
                }
            }
            _ => match self.place(lhs) {
                Some(p) => {
                    let idx = index_of(lhs);
                    self.record(&p, lhs.span, AccessOp::Load, idx);
                    self.record(&p, lhs.span, AccessOp::Store, idx);
                    self.loaded_value(&p)
                }
                None => Val::Unknown("update of something that is not a variable or memory".into()),
            },
        }
    }

    fn arith(&mut self, op: BinOp, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Ptr(mut p), Val::Int(i)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                let size = self.ptr_stride(&p);
                let i = if op == BinOp::Sub {
                    sym::un(UnaryOp::Neg, i)
                } else {
                    i
                };
                p.offset = sym::add(p.offset, sym::mul(i, sym::konst(size)));
                p.path = None;
                if !p.dims.is_empty() {
                    p.dims = Rc::from(Vec::new());
                }
                Val::Ptr(p)
            }
            (Val::Int(i), Val::Ptr(mut p)) if op == BinOp::Add => {
                let size = self.ptr_stride(&p);
                p.offset = sym::add(p.offset, sym::mul(i, sym::konst(size)));
                p.path = None;
                Val::Ptr(p)
            }
            (Val::Ptr(p), Val::Ptr(q)) if op == BinOp::Sub && p.base == q.base => {
                let size = self.ptr_stride(&p).max(1);
                Val::Int(sym::binop(
                    BinOp::Div,
                    sym::binop(BinOp::Sub, p.offset, q.offset),
                    sym::konst(size),
                ))
            }
            (Val::Ptr(_), _) | (_, Val::Ptr(_)) => Val::Unknown("pointer comparison".into()),
            (a, b) => Val::Int(sym::binop(op, a.sym(), b.sym())),
        }
    }

    fn ptr_stride(&self, p: &Ptr) -> i64 {
        let elem = self.layout_of(&p.elem).map(|l| l.size).unwrap_or(4);
        elem * p.dims.iter().product::<i64>().max(1)
    }

    fn call(&mut self, callee: &str, targs: &[TemplateArg], args: &[Expr], span: Span) -> Val {
        let name = callee.rsplit("::").next().unwrap_or(callee);
        if let Some(kind) = memory_intrinsic(name) {
            let Some(first) = args.first() else {
                return Val::Unknown("intrinsic without arguments".into());
            };
            let target = self.rvalue(first);
            for a in &args[1..] {
                self.rvalue(a);
            }
            if let Val::Ptr(p) = target {
                let place = self.index_ptr(p, sym::konst(0));
                let place_span = first.span;
                let idx = index_of(strip_addr(first));
                self.record(&place, place_span, kind, idx);
                return match kind {
                    AccessOp::Store => Val::Unknown("void".into()),
                    _ => self.loaded_value(&place),
                };
            }
            return Val::Unknown(format!("`{name}` on something that is not a pointer").into());
        }
        match name {
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
                return Val::Int(sym::bin(op, a, b));
            }
            "__mul24" | "__umul24" if args.len() == 2 => {
                let a = self.rvalue(&args[0]).sym();
                let b = self.rvalue(&args[1]).sym();
                return Val::Int(sym::mul(a, b));
            }
            "dim3" => return self.dim3_from(args),
            "__syncthreads"
            | "__syncwarp"
            | "__threadfence"
            | "__threadfence_block"
            | "printf"
            | "assert" => {
                // other threads' writes become visible: nothing is known to be in registers
                self.in_registers.clear();
                for a in args {
                    self.rvalue(a);
                }
                return Val::Unknown("void".into());
            }
            "__lane_id" | "laneid" => return Val::Int(sym::var(Var::LaneId)),
            "__builtin_assume_aligned" if !args.is_empty() => {
                for a in &args[1..] {
                    self.rvalue(a);
                }
                return self.rvalue(&args[0]);
            }
            _ => {}
        }
        // a functional cast, `int64_t(i) * ne00` (llama.cpp): the argument, converted
        if args.len() == 1 && targs.is_empty() {
            let ty = self.through_typedefs(callee);
            if types::builtin(&ty).is_some() && types::vector_width(&ty).is_none() {
                return match self.rvalue(&args[0]) {
                    Val::Int(s) => Val::Int(cast_int(&ty, s)),
                    other => other,
                };
            }
        }
        let argv: Vec<Val> = args.iter().map(|a| self.rvalue(a)).collect();
        if let Some(v) = self.cooperative_groups(name, targs, span) {
            return v;
        }
        if name.starts_with("__shfl")
            || name.starts_with("__ballot")
            || name.starts_with("__any")
            || name.starts_with("__all")
        {
            return Val::Int(sym::data(format!("result of `{name}`")));
        }
        // `make_uint4(a, b, c, d)`
        if let Some(w) = name.strip_prefix("make_").and_then(types::vector_width) {
            if argv.len() == w && w > 1 {
                return Val::Vector(argv.iter().map(Val::sym).collect::<Vec<_>>().into());
            }
        }
        // texture and surface reads: values from memory, through the texture path
        if [
            "tex1D",
            "tex2D",
            "tex3D",
            "texCubemap",
            "surf1Dread",
            "surf2Dread",
            "surf3Dread",
        ]
        .iter()
        .any(|p| name.starts_with(p))
        {
            return Val::Int(sym::data(format!("value fetched by `{name}`")));
        }
        // function-like macro
        let file = self.file();
        if let Some((_, def)) = self.project.function_macro(name, args.len(), file) {
            let (Some(params), Some(body)) = (&def.params, &def.body) else {
                return Val::Unknown(format!("macro `{name}` is not an expression").into());
            };
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
            self.site_override = Some(saved.unwrap_or((file, span)));
            let v = self.rvalue(body);
            self.site_override = saved;
            self.scopes.pop();
            self.macro_depth -= 1;
            return v;
        }
        // __device__ function defined in the project; `tile_B::get_i(l)` is a static member
        // function of the struct the qualifier names (through its typedef), and an unqualified
        // call never names a member function
        let owner = callee
            .rsplit_once("::")
            .map(|(q, _)| self.through_typedefs(q.trim()));
        let owner_base = owner
            .as_deref()
            .and_then(|o| self.struct_instance(o))
            .map(|(def, _)| def);
        let candidates = self.project.device_functions(name, args.len(), file);
        let of_owner = |f: &Function| f.owner.is_some() && f.owner == owner_base;
        let candidates: Vec<_> = if candidates.iter().any(|(_, f)| of_owner(f)) {
            candidates
                .into_iter()
                .filter(|(_, f)| of_owner(f))
                .collect()
        } else {
            candidates
                .into_iter()
                .filter(|(_, f)| f.owner.is_none())
                .collect()
        };
        if let Some((fi, f)) = pick_overload(&candidates, &argv) {
            if self.frames.len() > MAX_CALL_DEPTH {
                return Val::Unknown(
                    format!("call depth over {MAX_CALL_DEPTH} at `{name}`").into(),
                );
            }
            // the struct's template parameters come first, bound to the arguments its type
            // names; then the function's own
            let mut template = Vec::new();
            let mut own = &f.template_params[..];
            let member_of = f.owner.as_ref().and(owner.clone());
            if let (Some(fo), Some(full)) = (&f.owner, &member_of) {
                let count = self
                    .types()
                    .iter()
                    .find_map(|m| m.structs.iter().find(|s| s.name == *fo))
                    .map_or(0, |s| s.template_params.len())
                    .min(own.len());
                let binds = self
                    .struct_instance(full)
                    .map(|(_, b)| b)
                    .unwrap_or_default();
                for p in &own[..count] {
                    if let Some((_, a)) = binds.iter().find(|(n, _)| *n == p.name) {
                        let arg = self.template_arg_text(a);
                        template.push((p.name.clone(), arg));
                    }
                }
                own = &own[count..];
            }
            // evaluated here, in the caller's frame: `g<N>` inside `k<N>` means the caller's N
            for (p, a) in own.iter().zip(targs.iter()) {
                let arg = self.template_arg(a, p.is_type);
                template.push((p.name.clone(), arg));
            }
            self.frames.push(Frame {
                scope_base: self.scopes.len(),
                file: fi,
                ret: None,
                template,
                owner: member_of,
            });
            self.scopes.push(Vec::new());
            for (p, v) in f.params.iter().zip(argv) {
                let v = match v {
                    Val::Ptr(mut ptr) if p.ty.pointer_depth > 0 => {
                        let mut elem = self.resolve_type(&p.ty);
                        elem.pointer_depth -= 1;
                        if ptr.dims.is_empty()
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
            if let Some(body) = &f.body {
                self.stmts(body);
            }
            let frame = self.frames.pop();
            self.scopes
                .truncate(frame.as_ref().map(|f| f.scope_base).unwrap_or(0));
            return frame
                .and_then(|f| f.ret)
                .unwrap_or_else(|| Val::Unknown(format!("`{name}` returns no value").into()));
        }
        if argv
            .iter()
            .all(|v| matches!(v, Val::Int(s) if s.as_const().is_some()))
            && name == "abs"
        {
            if let Some(Val::Int(s)) = argv.first() {
                return Val::Int(sym::konst(s.as_const().unwrap_or(0).abs()));
            }
        }
        // `SharedMemory<T>()`: an object whose conversion operator hands out the block's
        // dynamic shared memory (cuda-samples' reductions)
        let bare = callee.split('<').next().unwrap_or(callee).trim();
        let shared = self.types().iter().find_map(|f| {
            f.structs
                .iter()
                .find(|s| s.name == bare)
                .and_then(|s| s.extern_shared.clone())
        });
        if let Some(array) = shared {
            let elem = match targs.first() {
                Some(TemplateArg::Type(t)) => self.resolve_type(t),
                _ => TypeRef::named("int"),
            };
            return Val::Ptr(Ptr {
                space: Space::Shared,
                base: array.as_str().into(),
                offset: sym::konst(0),
                elem,
                dims: Rc::from(Vec::new()),
                decl: None,
                path: None,
            });
        }
        // a call cudalint cannot see into may write memory
        self.in_registers.clear();
        Val::Unknown(format!("result of `{name}`").into())
    }
}

impl KernelRun<'_> {
    /// `cg::this_thread_block()`, `cg::tiled_partition<32>(block)`, `cg::this_grid()`, and the
    /// rank and size methods of those groups, in terms of threadIdx and the block shape.
    fn cooperative_groups(&mut self, name: &str, targs: &[TemplateArg], span: Span) -> Option<Val> {
        let (base, angle) = match name.split_once('<') {
            Some((b, rest)) => (b, rest.trim_end_matches('>').trim().parse::<i64>().ok()),
            None => (name, None),
        };
        match base {
            "this_thread_block" => return Some(Val::Group(0)),
            "this_grid" => return Some(Val::Group(-1)),
            "tiled_partition" => {
                let n = angle.or_else(|| match targs.first() {
                    Some(TemplateArg::Expr(e)) => self.pure_rvalue(e).sym().as_const(),
                    _ => None,
                });
                return Some(match n {
                    Some(n) if n > 0 => Val::Group(n),
                    _ => Val::Unknown("a tiled_partition of run-time size".into()),
                });
            }
            _ => {}
        }
        let (object, method) = name.rsplit_once('.')?;
        let Val::Group(g) = self.lookup(object, span) else {
            return None;
        };
        let d = |v| sym::var(v);
        let linear = linear3(
            [Var::Tid(0), Var::Tid(1), Var::Tid(2)],
            [Var::BlockDim(0), Var::BlockDim(1)],
        );
        let threads = sym::mul(
            d(Var::BlockDim(0)),
            sym::mul(d(Var::BlockDim(1)), d(Var::BlockDim(2))),
        );
        let block_linear = linear3(
            [Var::BlockIdx(0), Var::BlockIdx(1), Var::BlockIdx(2)],
            [Var::GridDim(0), Var::GridDim(1)],
        );
        let int = |s| Some(Val::Int(s));
        match (method, g) {
            ("thread_rank", 0) => int(linear),
            ("thread_rank", -1) => int(sym::add(sym::mul(block_linear, threads), linear)),
            ("thread_rank", n) => int(sym::binop(BinOp::Rem, linear, sym::konst(n))),
            ("meta_group_rank", n) if n > 0 => int(sym::binop(BinOp::Div, linear, sym::konst(n))),
            ("meta_group_size", n) if n > 0 => int(sym::binop(BinOp::Div, threads, sym::konst(n))),
            ("size" | "num_threads", 0) => int(threads),
            ("size" | "num_threads", -1) => {
                let blocks = sym::mul(
                    d(Var::GridDim(0)),
                    sym::mul(d(Var::GridDim(1)), d(Var::GridDim(2))),
                );
                int(sym::mul(blocks, threads))
            }
            ("size" | "num_threads", n) if n > 0 => int(sym::konst(n)),
            ("group_index", _) => Some(self.lookup("blockIdx", span)),
            ("thread_index", _) => Some(self.lookup("threadIdx", span)),
            ("group_dim" | "dim_threads", _) => Some(self.lookup("blockDim", span)),
            ("sync", _) => Some(Val::Unknown("void".into())),
            (m, _)
                if m.starts_with("shfl")
                    || m.starts_with("ballot")
                    || m.starts_with("any")
                    || m.starts_with("all") =>
            {
                Some(Val::Int(sym::data(format!("result of `{name}`"))))
            }
            _ => None,
        }
    }
}

/// Row-major linear index `x + dx * (y + dy * z)`: a thread's rank in its block, a block's in
/// the grid.
fn linear3(xyz: [Var; 3], dims: [Var; 2]) -> Sym {
    let v = sym::var;
    sym::add(
        v(xyz[0]),
        sym::mul(
            v(dims[0]),
            sym::add(v(xyz[1]), sym::mul(v(dims[1]), v(xyz[2]))),
        ),
    )
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

/// The overload whose pointer parameters best match the arguments' element types (template
/// type parameters match anything); the nearest definition on a tie.
fn pick_overload<'a>(
    candidates: &[(usize, &'a Function)],
    args: &[Val],
) -> Option<(usize, &'a Function)> {
    let score = |f: &Function| -> i32 {
        let mut s = 0;
        for (p, a) in f.params.iter().zip(args) {
            let generic = f.template_params.iter().any(|t| t.name == p.ty.name);
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

/// How an unknown value says it is a local object (a struct in registers).
const LOCAL_OBJECT: &str = "is a local object";

/// `Packed128<floatX>` as `("Packed128", ["floatX"])` (top-level commas only).
fn split_template(name: &str) -> (&str, Vec<String>) {
    let Some((base, rest)) = name.split_once('<') else {
        return (name.trim(), Vec::new());
    };
    let inner = rest.strip_suffix('>').unwrap_or(rest);
    let mut args = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        args.push(cur.trim().to_string());
    }
    (base.trim(), args)
}

/// Unknown values that are most likely pointers into memory: a name the analysed files do not
/// define (a global array of a header cudalint was not given) or the result of a call it
/// cannot see into. Indexing one is an access of unknown cost, not a silent nothing.
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

/// Integer casts that narrow: `(char)x` keeps the low byte. Wider or same-width casts are identity.
fn cast_int(ty: &str, s: Sym) -> Sym {
    match ty {
        "char" | "signed char" | "int8_t" => s,
        "unsigned char" | "uint8_t" => sym::binop(BinOp::BitAnd, s, sym::konst(0xff)),
        "unsigned short" | "uint16_t" => sym::binop(BinOp::BitAnd, s, sym::konst(0xffff)),
        "float" | "double" | "half" | "__half" => sym::unknown("floating-point value"),
        _ => s,
    }
}

fn memory_intrinsic(name: &str) -> Option<AccessOp> {
    if name.starts_with("atomic") {
        return Some(AccessOp::Atomic);
    }
    match name {
        "__ldg" | "__ldcs" | "__ldcg" | "__ldca" | "__ldlu" | "__ldcv" => Some(AccessOp::Load),
        "__stcs" | "__stcg" | "__stwb" | "__stwt" => Some(AccessOp::Store),
        _ => None,
    }
}

fn strip_addr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Unary {
            op: UnOp::AddrOf,
            arg,
        } => arg,
        _ => e,
    }
}

/// The access expression whose indices hold the lane-dependent term.
fn index_of(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Index { .. }
        | ExprKind::Field { .. }
        | ExprKind::Unary {
            op: UnOp::Deref, ..
        } => Some(e),
        _ => None,
    }
}

fn ends_with_return(body: &[Stmt]) -> bool {
    match body.last() {
        Some(Stmt::Return(..)) => true,
        Some(Stmt::Block(b)) => ends_with_return(b),
        _ => false,
    }
}

struct Induction {
    name: String,
    step: StepKind,
}

enum StepKind {
    /// `+= e` (or `-= e` when the flag is set)
    Add(Expr, bool),
    /// `<<= k` / `>>= k`, and `*= 2^k` / `/= 2^k`: shift by k bits each iteration
    Shift(BinOp, i64),
}

fn collect_inductions(e: &Expr, out: &mut Vec<Induction>) {
    let one = || Expr {
        kind: ExprKind::Int(1),
        span: e.span,
    };
    match &e.kind {
        ExprKind::Comma(a, b) => {
            collect_inductions(a, out);
            collect_inductions(b, out);
        }
        ExprKind::Unary { op, arg } => {
            if let ExprKind::Ident(n) = &arg.kind {
                let neg = match op {
                    UnOp::PreInc | UnOp::PostInc => false,
                    UnOp::PreDec | UnOp::PostDec => true,
                    _ => return,
                };
                push_induction(out, n, StepKind::Add(one(), neg));
            }
        }
        ExprKind::Assign { op, lhs, rhs } => {
            let ExprKind::Ident(n) = &lhs.kind else {
                return;
            };
            let c = match rhs.kind {
                ExprKind::Int(v) => Some(v),
                _ => None,
            };
            match (op, c) {
                (Some(BinOp::Add), _) => {
                    push_induction(out, n, StepKind::Add((**rhs).clone(), false))
                }
                (Some(BinOp::Sub), _) => {
                    push_induction(out, n, StepKind::Add((**rhs).clone(), true))
                }
                (Some(BinOp::Shl), Some(k)) if (1..32).contains(&k) => {
                    push_induction(out, n, StepKind::Shift(BinOp::Shl, k))
                }
                (Some(BinOp::Shr), Some(k)) if (1..32).contains(&k) => {
                    push_induction(out, n, StepKind::Shift(BinOp::Shr, k))
                }
                (Some(BinOp::Mul), Some(c)) if c > 1 && c & (c - 1) == 0 => push_induction(
                    out,
                    n,
                    StepKind::Shift(BinOp::Shl, c.trailing_zeros() as i64),
                ),
                (Some(BinOp::Div), Some(c)) if c > 1 && c & (c - 1) == 0 => push_induction(
                    out,
                    n,
                    StepKind::Shift(BinOp::Shr, c.trailing_zeros() as i64),
                ),
                (None, _) => {
                    // `i = i + step`
                    if let ExprKind::Binary {
                        op: BinOp::Add,
                        lhs: l,
                        rhs: r,
                    } = &rhs.kind
                    {
                        if matches!(&l.kind, ExprKind::Ident(x) if x == n) {
                            push_induction(out, n, StepKind::Add((**r).clone(), false));
                        }
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

fn push_induction(out: &mut Vec<Induction>, name: &str, step: StepKind) {
    if !out.iter().any(|i| i.name == name) {
        out.push(Induction {
            name: name.to_string(),
            step,
        });
    }
}

/// Trip count of `for (v = v0; v <cmp> bound; v += step)` when all three are constants.
fn trip_count(
    cond: &Expr,
    name: &str,
    v0: Option<i64>,
    step: Option<i64>,
    shift: Option<(BinOp, i64)>,
    run: &mut KernelRun,
) -> Option<i64> {
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
        return None;
    };
    if !matches!(&lhs.kind, ExprKind::Ident(n) if n == name) {
        return None;
    }
    let bound = run.pure_rvalue(rhs).sym().as_const()?;
    let v0 = v0?;
    let mut v = v0;
    let mut n = 0i64;
    while n < 4096 {
        let holds = match op {
            BinOp::Lt => v < bound,
            BinOp::Le => v <= bound,
            BinOp::Gt => v > bound,
            BinOp::Ge => v >= bound,
            BinOp::Ne => v != bound,
            _ => return None,
        };
        if !holds {
            return Some(n);
        }
        n += 1;
        if let Some((op, k)) = shift {
            let next = if op == BinOp::Shl {
                v.checked_shl(k as u32)?
            } else {
                v >> k
            };
            if next == v {
                return None;
            }
            v = next;
            continue;
        }
        let s = step?;
        if s == 0 {
            return None;
        }
        v += s;
    }
    None
}

/// What a launch site pins down, evaluated in its host function.
#[derive(Clone, Debug, Default)]
pub struct LaunchValues {
    pub block: Option<[i64; 3]>,
    pub grid: Option<[i64; 3]>,
    pub bindings: Bindings,
}

impl<'p> KernelRun<'p> {
    /// Evaluates a launch's configuration and arguments with the host function's earlier
    /// declarations in scope.
    pub fn eval_launch(
        &mut self,
        file: usize,
        launch: &cudalint_syntax::Launch,
        kernel: &Function,
    ) -> LaunchValues {
        self.frames.push(Frame {
            scope_base: 0,
            file,
            ret: None,
            template: Vec::new(),
            owner: None,
        });
        self.scopes.push(Vec::new());
        if let Some(host) = launch
            .host_fn
            .and_then(|i| self.files[file].functions.get(i))
        {
            // the host function's parameters shadow file-scope names of the same spelling
            for p in &host.params {
                // a pointer keeps its element type (template arguments are deduced from it)
                let v = if p.ty.pointer_depth > 0 {
                    let mut elem = p.ty.clone();
                    elem.pointer_depth -= 1;
                    Val::Ptr(Ptr::global(p.name.as_str(), elem, None))
                } else {
                    Val::Unknown(format!("`{}` is a parameter of `{}`", p.name, host.name).into())
                };
                self.declare(&p.name, v);
            }
            let mut stmts = Vec::new();
            if let Some(body) = &host.body {
                collect_decls_before(body, launch.span.start, &mut stmts);
            }
            for s in stmts {
                self.stmt(s);
            }
        }
        let as3 = |run: &mut KernelRun, e: &Expr| -> Option<[i64; 3]> {
            match run.pure_rvalue(e) {
                Val::Dim3(c) => Some([c[0].as_const()?, c[1].as_const()?, c[2].as_const()?]),
                Val::Int(s) => Some([s.as_const()?, 1, 1]),
                _ => None,
            }
        };
        let grid = launch.config.first().and_then(|e| as3(self, e));
        let block = launch.config.get(1).and_then(|e| as3(self, e));
        let mut bindings = Bindings::default();
        for (i, tp) in kernel.template_params.iter().enumerate() {
            let arg = launch.template_args.get(i).map(|a| match a {
                TemplateArg::Expr(e) => match self.pure_rvalue(e).sym().as_const() {
                    Some(v) => TemplateArg::Expr(int_expr(v, e.span)),
                    None => a.clone(),
                },
                TemplateArg::Type(t) if !tp.is_type => {
                    match self.lookup(&t.name, Span::default()) {
                        Val::Int(s) if s.as_const().is_some() => {
                            TemplateArg::Expr(int_expr(s.as_const().unwrap_or(0), Span::default()))
                        }
                        _ => a.clone(),
                    }
                }
                TemplateArg::Type(_) => a.clone(),
            });
            bindings.template_args.push(arg);
        }
        // type parameters the launch does not name are deduced from pointer arguments:
        // `k<<<g, b>>>(p)` with `__nv_bfloat16* p` for `template <typename Tp> k(Tp* p)`
        for (ti, tp) in kernel.template_params.iter().enumerate() {
            if !tp.is_type || bindings.template_args.get(ti).is_some_and(|a| a.is_some()) {
                continue;
            }
            let deduced = kernel.params.iter().zip(&launch.args).find_map(|(p, e)| {
                if p.ty.name != tp.name || p.ty.pointer_depth == 0 {
                    return None;
                }
                match self.pure_rvalue(e) {
                    Val::Ptr(ptr) if ptr.elem.pointer_depth + 1 >= p.ty.pointer_depth => {
                        let mut t = ptr.elem.clone();
                        t.pointer_depth = t.pointer_depth + 1 - p.ty.pointer_depth;
                        t.is_const = false;
                        Some(TemplateArg::Type(t))
                    }
                    _ => None,
                }
            });
            if let Some(t) = deduced {
                while bindings.template_args.len() <= ti {
                    bindings.template_args.push(None);
                }
                bindings.template_args[ti] = Some(t);
            }
        }
        for (i, p) in kernel.params.iter().enumerate() {
            let v = match launch.args.get(i).map(|e| self.pure_rvalue(e)) {
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
            bindings,
        }
    }
}

fn int_expr(v: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Int(v),
        span,
    }
}

/// Declarations and expression statements (`block.x = 256;`) that precede a launch, in order.
fn collect_decls_before<'a>(body: &'a [Stmt], before: u32, out: &mut Vec<&'a Stmt>) {
    for s in body {
        match s {
            Stmt::Decl(d) if d.span.end <= before => out.push(s),
            Stmt::Expr(e) if e.span.end <= before && matches!(e.kind, ExprKind::Assign { .. }) => {
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
