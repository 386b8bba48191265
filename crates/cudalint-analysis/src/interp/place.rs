//! Memory places: what an lvalue designates (`a[i]`, `*p`, `s.f`, `p->f`), the byte offset an
//! index adds, the register-reuse rule (a value this thread already holds is no access), and
//! the recording of loads, stores and compound updates as accesses.

use super::{
    opaque_pointer, unknown_pointer, AccessOp, FieldInfo, KernelRun, Place, Ptr, RawAccess,
    SharedIndex, Space, Val, LOCAL_OBJECT,
};
use crate::sym::{self, Sym};
use crate::types::{self, Layout};
use cudalint_syntax::{BinOp, Expr, ExprKind, Span, UnOp};
use std::rc::Rc;

/// A member's offset, layout and type in its struct (None: the struct's layout is not known),
/// the type assumed 4 bytes to lay it out, the struct's size and alignment, and the member's
/// array dimensions.
pub(super) struct MemberLayout {
    found: Option<(i64, Layout, cudalint_syntax::TypeRef)>,
    assumed: Option<String>,
    struct_size: i64,
    struct_align: i64,
    dims: Vec<i64>,
}

/// Values remembered as held in registers.
pub(super) const MAX_IN_REGISTERS: usize = 1024;

impl KernelRun<'_> {
    /// The memory place an lvalue expression designates, if it designates one.
    pub(super) fn place(&mut self, e: &Expr) -> Option<Place> {
        match &e.kind {
            ExprKind::Index { base, index } if self.subscripts_an_object(base) => {
                self.object_subscript_place(base, index, e.span)
            }
            ExprKind::Index { base, index } => {
                // an element of an array member keeps the member's place in its struct
                // (`x[i].scales[0]` reads 1 byte of each lane's 144-byte struct)
                if indexes_a_member(base) {
                    if let Some(member) = self.place(base).filter(|p| p.subarray) {
                        let i = self.rvalue(index).sym();
                        let field = member.field.clone();
                        let mut element = self.index_ptr(member.ptr, i);
                        element.field = field;
                        return Some(element);
                    }
                }
                let b = self.pointer_value(base);
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
                let Val::Ptr(p) = self.pointer_value(arg) else {
                    return None;
                };
                Some(self.index_ptr(p, sym::konst(0)))
            }
            ExprKind::Field { base, field, arrow } => {
                let place = if *arrow {
                    let Val::Ptr(p) = self.pointer_value(base) else {
                        return None;
                    };
                    self.index_ptr(p, sym::konst(0))
                } else {
                    self.place(base)?
                };
                Some(self.member_place(place, field))
            }
            // a function returning a reference, written through (`column(p, i) = v`,
            // `rows.row(t) += v`): the place its `return` names
            ExprKind::Call { callee, args, .. } if self.returns_reference(callee, args.len()) => {
                self.next_returns_address = Some((e.span, true));
                let v = self.rvalue(e);
                self.next_returns_address = None;
                match v {
                    Val::Ptr(p) => Some(self.index_ptr(p, sym::konst(0))),
                    _ => None,
                }
            }
            ExprKind::Ident(name) => {
                // a `__device__` or `__managed__` scalar at file scope is a place in global
                // memory (`atomicAdd(&counter, 1)`), a `__shared__` one in shared memory; a
                // local variable is in registers
                if let Some(p) = self.shared_scalar(name) {
                    return Some(self.index_ptr(p, sym::konst(0)));
                }
                // a reference to memory (`T& r = a[i];`, a parameter `Flags& f` given a
                // shared object) is the place it names
                if let Some(p) = self.reference_place(name) {
                    return Some(p);
                }
                // a reference member bound to an object in memory (CUB's `temp_storage`)
                if let Some(p) = self.reference_member_place(name) {
                    return Some(p);
                }
                let (fi, d) = self.global_scalar(name)?;
                let ty = d.ty.clone();
                let p = Ptr::global(name, self.resolve_type(&ty), Some((fi, d.span)));
                Some(self.index_ptr(p, sym::konst(0)))
            }
            _ => None,
        }
    }

    /// Whether a function `callee` names with `arity` arguments may return a reference (a
    /// member call's name is its member's: `rows.row`).
    fn returns_reference(&self, callee: &str, arity: usize) -> bool {
        let name = super::call::unqualified(callee);
        let name = name.rsplit(['.', '>']).next().unwrap_or(name);
        self.project
            .device_functions(name, arity, self.file())
            .iter()
            .any(|(_, f)| f.returns_reference)
    }

    /// The member `field` of the struct in memory at `place` (`s.m`, `p->m`, and inside a
    /// member function called on an object in memory, a bare `m`).
    pub(super) fn member_place(&mut self, mut place: Place, field: &str) -> Place {
        let ty = place.ty.clone();
        let member = self.member_layout(&ty, field);
        let MemberLayout {
            found,
            assumed,
            struct_size,
            struct_align,
            dims,
        } = &*member;
        let Some((off, fl, fty)) = found.clone() else {
            // an access all the same, of unknown cost: say so rather than drop it
            place.ptr.offset = sym::unknown(format!(
                "the layout of `{}` is not in the analysed files (member `{field}`)",
                ty.name
            ));
            place.ptr.path = None;
            // an array member is indexed, not read whole where it is named
            // (`temp_buffer.beta[idx] = ...` stores, at an address not known)
            let full = self.typedef_chain_end(&ty.name);
            let member = types::struct_named(&full, self.types())
                .and_then(|d| d.fields.iter().find(|f| f.name == field));
            if let Some(m) = member.filter(|m| m.array_len.is_some()) {
                place.subarray = true;
                place.ptr.elem = self.resolve_type(&m.ty);
                place.ptr.dims = Rc::from(Vec::new());
                place.ty = place.ptr.elem.clone();
            }
            return place;
        };
        let (struct_size, struct_align) = (*struct_size, *struct_align);
        place.ptr.offset = sym::add(place.ptr.offset, sym::konst(off));
        // a member of a member (`a[t].c[k].real`) is part of the outermost struct the
        // lanes index: what each lane reads of the whole element
        place.field = Some(match place.field.take() {
            Some(outer) => FieldInfo {
                name: format!("{}.{field}", outer.name),
                offset: outer.offset + off,
                ..outer
            },
            None => FieldInfo {
                name: field.to_string(),
                struct_name: ty.name.to_string(),
                struct_size,
                struct_align,
                offset: off,
            },
        });
        place.bytes = fl.size;
        if let Some(first) = assumed {
            place.assumption = Some(format!(
                "layout of `{}` laid out with `{first}` assumed 4 bytes",
                ty.name
            ));
        }
        // `a->e[j][i]`: an array member decays to a pointer to its elements, its
        // further dimensions the rows it indexes
        if !dims.is_empty() {
            place.subarray = true;
            place.bytes = dims.iter().product::<i64>() * fl.size;
            place.ptr.elem = fty.clone();
            place.ptr.dims = dims[1..].iter().map(|d| sym::konst(*d)).collect();
            place.ptr.path = None;
        }
        place.ty = fty;
        if let Some((idx, dims)) = place.ptr.path.take() {
            place.ptr.path = Some((idx, dims));
        }
        place
    }

    /// Where member `field` of `ty` lies and what it holds, remembered for the run where the
    /// frame's template arguments are known (host code reads the same members of a large
    /// class thousands of times, and each layout walks every member before it).
    fn member_layout(&self, ty: &cudalint_syntax::TypeRef, field: &str) -> Rc<MemberLayout> {
        let compute = || {
            let found = types::field(&ty.name, field, self.types())
                .or_else(|| self.template_field(&ty.name, field, &|_| None));
            // a member whose struct holds a type not known here (a template's left open:
            // `Counter<T, IdxT>` in a kernel no launch instantiates) is laid out with 4 bytes
            // for it, as an element of a type not known is, and says so
            let assumed = std::cell::RefCell::new(None::<String>);
            let found = found.or_else(|| {
                let unknown = |n: &str| {
                    assumed.borrow_mut().get_or_insert_with(|| n.to_string());
                    Some(types::Layout { size: 4, align: 4 })
                };
                self.template_field(&ty.name, field, &unknown)
            });
            let (struct_size, struct_align) = match found {
                Some(_) => self
                    .layout_assuming(ty)
                    .map(|(l, _)| (l.size, l.align))
                    .unwrap_or((0, 0)),
                None => (0, 0),
            };
            let dims = match found {
                Some(_) => {
                    let dims = types::field_dims(&ty.name, field, self.types());
                    if dims.is_empty() && ty.name.contains('<') {
                        self.instance_field_dims(&ty.name, field)
                    } else {
                        dims
                    }
                }
                None => Vec::new(),
            };
            Rc::new(MemberLayout {
                found,
                assumed: assumed.into_inner(),
                struct_size,
                struct_align,
                dims,
            })
        };
        match self.frame_types_key() {
            Some(frame) => {
                let key = format!(
                    "{}\u{1f}{}\u{1f}{field}\u{1f}{frame}",
                    ty.name, ty.pointer_depth
                );
                self.remembered_member(&key, compute)
            }
            None => compute(),
        }
    }

    /// The value of a template struct's parameter `n` in an instance whose arguments are
    /// `binds`, read in this frame; else the frame's own template value of that name.
    fn instance_value(&self, binds: &[(String, String)], n: &str) -> Option<i64> {
        binds
            .iter()
            .find(|(p, _)| p == n)
            .and_then(|(_, a)| self.argument_value(a))
            .or_else(|| self.template_value(n))
    }

    /// The array lengths of member `field` of a template struct's instance `name`, with the
    /// instance's arguments (empty where it is no array or they do not give them).
    fn instance_field_dims(&self, name: &str, field: &str) -> Vec<i64> {
        let Some((def, binds)) = self.struct_instance(name) else {
            return Vec::new();
        };
        let value = |n: &str| self.instance_value(&binds, n);
        let bind = types::Bind {
            ty: &|t| self.resolve_type(t),
            value: &value,
            unknown: &|_| None,
        };
        types::field_dims_bound(&def, field, self.types(), &bind)
    }

    /// Member `field` of a struct template's type `name`: laid out with the frame's template
    /// arguments, else as an instance of the template (`MatrixElement<double>`) with its own;
    /// a member type known nowhere laid out as `unknown` says.
    fn template_field(
        &self,
        name: &str,
        field: &str,
        unknown: &dyn Fn(&str) -> Option<types::Layout>,
    ) -> Option<(i64, types::Layout, cudalint_syntax::TypeRef)> {
        let bind = types::Bind {
            ty: &|t| self.resolve_type(t),
            value: &|n| self.template_value(n),
            unknown,
        };
        types::field_of_template(name, field, self.types(), &bind).or_else(|| {
            let (def, binds) = self.struct_instance(name)?;
            let bound = |t: &cudalint_syntax::TypeRef| {
                super::names::bind_type(&binds, t).unwrap_or_else(|| self.resolve_type(t))
            };
            // (the instance's own arguments size its arrays: `float d[TILE]` of `Smem<32, 64>`,
            // deepmd-kit's shared tiles; the frame's are another template's)
            let value = |n: &str| self.instance_value(&binds, n);
            let bind = types::Bind {
                ty: &bound,
                value: &value,
                unknown,
            };
            types::field_of_template(&def, field, self.types(), &bind)
        })
    }

    /// What `e` points to when it is dereferenced: its value, or for a parameter the launch
    /// passed a null pointer for, the pointer it stands for (an unguarded access through it
    /// is priced; guards on it were decided when it was 0).
    pub(super) fn pointer_value(&mut self, e: &Expr) -> Val {
        // `float* out = a + i;`, `*(n + a + t)`: the pointer such a parameter stands for,
        // stepped
        if let ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            lhs,
            rhs,
        } = &e.kind
        {
            if self.steps_a_null_parameter(e) {
                let l = self.pointer_value(lhs);
                let r = match op {
                    BinOp::Add => self.pointer_value(rhs),
                    _ => self.rvalue(rhs),
                };
                return self.arith(*op, l, r);
            }
        }
        let v = self.rvalue(e);
        // a `std::array` the kernel is given by value (finufft's `cuda::std::array<int, 3>
        // binsperobin`): in the parameter space, its elements read as an array member's are
        if let Val::Aggregate { name, ty } = &v {
            if let Some(elem) = self.std_array_element(&ty.name) {
                let mut p = Ptr::global(name, elem, None);
                p.space = Space::Constant;
                return Val::Ptr(p);
            }
        }
        if let (Val::Int(s), ExprKind::Ident(name)) = (&v, &e.kind) {
            if s.as_const() == Some(0) {
                if let Some((_, p)) = self.null_at_launch.iter().find(|(n, _)| **n == **name) {
                    return Val::Ptr(p.clone());
                }
            }
        }
        v
    }

    /// The element type of `std::array<T, N>` or `cuda::std::array<T, N>`, with the frame's
    /// template arguments put in.
    pub(super) fn std_array_element(&self, name: &str) -> Option<cudalint_syntax::TypeRef> {
        let name = name.trim_start_matches("const ").trim_start_matches("::");
        if !(name.starts_with("std::array<") || name.starts_with("cuda::std::array<")) {
            return None;
        }
        let (_, args) = crate::types::split_template(name);
        let first = args.first()?.trim();
        let pointers = first
            .chars()
            .rev()
            .take_while(|c| *c == '*' || c.is_whitespace());
        let pointer_depth = pointers.filter(|c| *c == '*').count() as u8;
        let elem = first.trim_end_matches(|c: char| c == '*' || c.is_whitespace());
        let mut t = cudalint_syntax::TypeRef::named(elem.trim_start_matches("const ").trim());
        t.pointer_depth = pointer_depth;
        Some(self.resolve_type(&t))
    }

    /// Whether a sum or difference names a parameter the launch passed a null pointer for
    /// among its terms.
    fn steps_a_null_parameter(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Ident(n) => self.null_at_launch.iter().any(|(name, _)| **name == **n),
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => self.steps_a_null_parameter(lhs) || self.steps_a_null_parameter(rhs),
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                ..
            } => self.steps_a_null_parameter(lhs),
            _ => false,
        }
    }

    pub(super) fn index_ptr(&mut self, mut p: Ptr, i: Sym) -> Place {
        let (elem_layout, assumption) = match self.layout_assuming(&p.elem) {
            Some((l, None)) => (l, None),
            Some((l, Some(first))) => (
                l,
                Some(format!(
                    "layout of `{}` laid out with `{first}` assumed 4 bytes",
                    p.elem.name
                )),
            ),
            None => (
                Layout { size: 4, align: 4 },
                Some(format!(
                    "size of `{}` unknown; assumed 4 bytes",
                    p.elem.name
                )),
            ),
        };
        let stride = p.dims.iter().fold(sym::konst(elem_layout.size), |acc, d| {
            sym::mul(acc, d.clone())
        });
        p.offset = sym::add(p.offset, sym::mul(i.clone(), stride.clone()));
        if let Some((idx, full)) = &mut p.path {
            idx.push(i);
            if idx.len() > full.len() {
                p.path = None;
            }
        }
        let subarray = !p.dims.is_empty();
        // a row decays to a pointer: its size is never an access's
        let bytes = if subarray {
            stride.as_const().unwrap_or(0)
        } else {
            elem_layout.size
        };
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
        // a thread's own array too: `s1(w[14])` expands to five reads of `w[14]` that nvcc makes
        // one (VanitySearch's SHA-256 rounds: 718,380 local accesses in one file)
        if !matches!(p.space, Space::Global | Space::Shared | Space::Local) {
            return false;
        }
        // `volatile` places are read and written every time (a warp reduction's `volatile
        // float* s`, a flag another block sets); a store where the analysis cannot tell still
        // changes what the array holds
        let volatile = p.elem.is_volatile || place.ty.is_volatile;
        // an address computed from loaded values is the same only as itself (the same
        // symbols: `ext->sigma` twice through one `ext = base + map[i]`); a store through one
        // may land anywhere
        let data_store = p.offset.data && op != AccessOp::Load;
        if volatile || data_store || p.offset.unknown_reason().is_some() {
            if op != AccessOp::Load {
                self.in_registers
                    .retain(|e| !unplaced_store_reaches(e, p.space, &p.base));
            }
            return false;
        }
        let same = |e: &super::Held| {
            e.0 == p.space
                && e.1 == p.base
                && e.3 == place.bytes
                && sym::within(&self.mask, &e.4)
                && sym::same(&e.2, &p.offset)
        };
        match op {
            AccessOp::Load => {
                if self.in_registers.iter().any(same) {
                    return true;
                }
            }
            AccessOp::Store | AccessOp::Atomic => {
                let at = sym::split_constant(&p.offset);
                let restrict = &self.restrict;
                self.in_registers
                    .retain(|e| !store_reaches(e, p.space, &p.base, &at, place.bytes, restrict));
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
        // nvcc keeps every value a straight-line stencil loads (sw4ck's hundreds of `met(...)`
        // loads are each issued once); the bound only caps the work on generated code
        if self.in_registers.len() > MAX_IN_REGISTERS {
            self.in_registers.remove(0);
        }
        false
    }

    pub(super) fn record(
        &mut self,
        place: &Place,
        span: Span,
        op: AccessOp,
        idx_expr: Option<&Expr>,
    ) {
        if op != AccessOp::Load {
            *self.stores_to.entry(place.ptr.base.clone()).or_default() += 1;
        }
        if self.in_register(place, op) {
            if self.narrowed_loads > 0 {
                self.widen_reused(place, span);
            }
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
        let mut align = self.layout_of(&place.ty).map_or(place.bytes, |l| l.align);
        // a `__shared__` object the kernel declares is placed by nvcc, aligned as a copy of
        // it wants: a 16-byte struct of floats goes in one STS.128, an 8-byte one in STS.64
        // (TensorRT's NMS boxes); only as far as the member's offset allows
        if place.ptr.space == Space::Shared && place.ptr.path.is_some() && place.bytes > align {
            let offset = place.field.as_ref().map_or(0, |f| f.offset);
            let placed = [16i64, 8, 4, 2]
                .into_iter()
                .find(|w| place.bytes % w == 0 && offset % w == 0)
                .unwrap_or(1);
            align = align.max(placed);
        }
        // a value only the low bytes of are used is loaded that narrow (little-endian: at
        // the same address)
        let narrowed = self
            .narrow
            .filter(|&(at, kept)| at == span && op == AccessOp::Load && kept < place.bytes)
            .map(|(_, kept)| kept)
            .filter(|_| self.integer_bytes(&place.ty).is_some());
        self.narrowed_loads += narrowed.is_some() as usize;
        let mut pieces = copy_pieces(narrowed.unwrap_or(place.bytes), align);
        if pieces.len() > 1 {
            pieces = skip_padding(pieces, &types::padding(&place.ty, self.types()));
        }
        let count = pieces.len() as u8;
        let extent = self.array_extent(&place.ptr, place.field.as_ref());
        for (k, (offset, bytes)) in pieces.into_iter().enumerate() {
            let shared_index = shared_index.clone().map(|mut si| {
                si.field_offset += offset;
                si
            });
            self.accesses.push(RawAccess {
                loop_carried: false,
                loc: self.loc(span),
                space: place.ptr.space,
                op,
                bytes,
                elem_type: place.ty.name.to_string(),
                base: place.ptr.base.to_string(),
                decl: place.ptr.decl,
                addr: sym::add(place.ptr.offset.clone(), sym::konst(offset)),
                mask: self.mask.clone(),
                loops: self.loop_stack.clone(),
                in_condition: self.loop_condition.is_some()
                    && self.loop_condition == self.loop_stack.last().copied(),
                field: place.field.clone(),
                shared_index,
                lane_term,
                assumptions: place
                    .assumption
                    .iter()
                    .cloned()
                    .chain((self.divergent > 0).then(|| super::DIVERGENT.to_string()))
                    .chain(narrowed.map(|kept| {
                        let part = match kept {
                            1 => "byte".to_string(),
                            n => format!("{n} bytes"),
                        };
                        format!("{NARROWED} the low {part} of the `{}`", place.ty.name)
                    }))
                    .collect(),
                iter_step: 1,
                inlined_at: self.call_sites.iter().rev().cloned().collect(),
                piece: (count > 1).then_some((k as u8, count)),
                branch: self.branch,
                narrowed_from: narrowed.map(|_| place.bytes),
                issued_at: None,
                copied_from: None,
                copy_source: false,
                volatile: place.ptr.elem.is_volatile || place.ty.is_volatile,
                extent,
                cas: false,
            });
        }
    }

    /// The bytes of the array `p` indexes, from its declaration's dimensions, all constant.
    fn array_extent(&self, p: &Ptr, field: Option<&super::FieldInfo>) -> Option<i64> {
        let (_, dims) = p.path.as_ref()?;
        let elems = dims
            .iter()
            .try_fold(1i64, |acc, &d| (d > 0).then(|| acc.saturating_mul(d)))?;
        // (a member's access: the elements are the structs)
        let element = match field {
            Some(f) => f.struct_size,
            None => self.layout_of(&p.elem)?.size,
        };
        Some(elems.saturating_mul(element))
    }

    /// A value loaded narrow and used again whole from its register (relu's `input[i] & 0xFF`
    /// then `input[i] >> 8`) was loaded as wide as its widest use.
    fn widen_reused(&mut self, place: &Place, span: Span) {
        let used = self
            .narrow
            .filter(|&(at, _)| at == span)
            .map_or(place.bytes, |(_, kept)| kept);
        let p = &place.ptr;
        let earlier = self.accesses.iter_mut().rev().find(|a| {
            a.op == AccessOp::Load
                && a.space == p.space
                && a.base == *p.base
                && a.piece.is_none()
                && a.bytes < place.bytes
                && sym::same(&a.addr, &p.offset)
        });
        if let Some(a) = earlier {
            a.bytes = a.bytes.max(used);
            if a.bytes == place.bytes {
                a.assumptions.retain(|s| !s.starts_with(NARROWED));
                a.narrowed_from = None;
            }
        }
    }

    pub(super) fn load(&mut self, place: Place, e: &Expr) -> Val {
        let from = self.accesses.len();
        self.record(&place, e.span, AccessOp::Load, index_of(e));
        if self.reads_carried(e) {
            for a in &mut self.accesses[from..] {
                a.loop_carried = true;
            }
        }
        self.loaded_value(&place)
    }

    pub(super) fn loaded_value(&mut self, place: &Place) -> Val {
        let addr = &place.ptr.offset;
        if place.ptr.space == Space::Local {
            if let Some(v) = addr.as_const().and_then(|at| {
                self.local_elements
                    .get(&(place.ptr.base.clone(), at, place.bytes))
            }) {
                return v.clone();
            }
        }
        if place.ty.pointer_depth > 0 {
            let mut elem = place.ty.clone();
            elem.pointer_depth -= 1;
            // (where the lanes of a warp read one address, as `ptrs[warp_id]` does, they hold
            // one pointer: where its array starts, its lanes' own offsets decide the cost)
            let offset = if addr.lane_varying && !addr.data && addr.unknown_reason().is_none() {
                sym::loaded(
                    addr.clone(),
                    format!("pointer loaded from `{}`", place.ptr.base),
                )
            } else if addr.lane_varying {
                sym::data(format!("pointer loaded from `{}`", place.ptr.base))
            } else {
                sym::konst(0)
            };
            // pointers read from different addresses are different pointers (`d->a`, `d->b`:
            // the second's loads are not the first's, kept in a register); a pointer the
            // whole warp reads at one address is named by that address
            let base: Rc<str> = match addr.as_const() {
                Some(0) => format!("*{}", place.ptr.base).into(),
                Some(at) => format!("*{}+{at}", place.ptr.base).into(),
                None if !addr.lane_varying && !addr.data => {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    format!("{addr:?}").hash(&mut h);
                    format!("*{}+#{:x}", place.ptr.base, h.finish() & 0xffff).into()
                }
                None => format!("*{}", place.ptr.base).into(),
            };
            return Val::Ptr(Ptr {
                space: Space::Global,
                base,
                offset,
                elem,
                dims: Rc::from(Vec::new()),
                decl: None,
                path: None,
            });
        }
        // (read at an address the data decides, a value of the data: a chain of table
        // lookups through bytes of thread-private state does not grow a symbol per round)
        if addr.data && place.ptr.space != Space::Global && addr.unknown_reason().is_none() {
            Val::Int(sym::data(format!(
                "`{}` read at a data-dependent index",
                place.ptr.base
            )))
        } else if addr.lane_varying && addr.unknown_reason().is_none() {
            Val::Int(sym::loaded(
                addr.clone(),
                format!("`{}` read at a lane-dependent index", place.ptr.base),
            ))
        } else if addr.lane_varying || addr.data {
            Val::Int(sym::data(format!(
                "`{}` read at a lane-dependent index",
                place.ptr.base
            )))
        } else if addr.unknown_reason().is_some() {
            Val::Unknown(format!("value loaded from `{}`", place.ptr.base).into())
        } else if place.ptr.space == Space::Local && self.varying_locals.contains(&place.ptr.base) {
            Val::Int(sym::data(format!(
                "`{}` holds each thread's own values",
                place.ptr.base
            )))
        } else {
            let name = self.loaded_name(&place.ptr.base, addr);
            Val::Int(self.runtime_value(&name, &place.ty, None))
        }
    }

    /// A store to a thread's own array: in a host function's straight-line statements, at a
    /// constant index, its value is kept for the launch to read back; any other store makes
    /// what the array held unknown.
    fn keep_element(&mut self, place: &Place, v: &Val) {
        let base = place.ptr.base.clone();
        let at = place.ptr.offset.as_const();
        let sure = self.host_statements && self.loop_stack.is_empty() && self.divergent == 0;
        let (Some(at), true) = (at, sure) else {
            self.forget_elements(&base);
            return;
        };
        let end = at + place.bytes;
        self.local_elements
            .retain(|(b, o, n), _| *b != base || o + n <= at || end <= *o);
        self.local_elements
            .insert((base, at, place.bytes), v.clone());
    }

    pub(super) fn forget_elements(&mut self, base: &str) {
        if !self.local_elements.is_empty() {
            self.local_elements.retain(|(b, ..), _| &**b != base);
        }
    }

    /// `base[...]` for the first address of `base` a uniform load reads, `base#2[...]` for the
    /// second and so on: the values of different elements, or of one element before and after
    /// a store to the array, are not one value. (An address too
    /// large to compare cheaply shares the plain name.)
    fn loaded_name(&mut self, base: &Rc<str>, addr: &Sym) -> String {
        let plain = format!("{base}[...]");
        if addr.size > 64 {
            return plain;
        }
        // (what was stored there since is another value: ccminer's hash state `S[30]`, read
        // again after the round that rewrote it)
        let stores = self.stores_to.get(base).copied().unwrap_or(0);
        let key = format!("{stores}:{addr:?}");
        let seen = self.loaded_names.entry(base.clone()).or_default();
        let next = seen.len();
        let n = *seen.entry(key).or_insert(next);
        match n {
            0 => plain,
            // (still a name ending in `[...]`: a value read at a uniform address)
            n => format!("{base}#{}[...]", n + 1),
        }
    }

    /// `*p` or `p[0]` where `p` is a parameter given a caller's local by address (see
    /// `Frame::local_refs`): the name that local is held under in the callee.
    pub(super) fn local_pointee(&self, e: &Expr) -> Option<Rc<str>> {
        let ExprKind::Ident(p) = &dereferenced(e)?.kind else {
            return None;
        };
        let frame = self.frames.last()?;
        frame
            .local_refs
            .iter()
            .find(|n| n.strip_prefix('*') == Some(p.as_str()))
            .cloned()
    }

    pub(super) fn store(&mut self, lhs: &Expr, v: Val) {
        if let Some(name) = self.local_pointee(lhs) {
            self.assign_local(&name, v);
            return;
        }
        // `FLOAT4(c[i]) = v`, `hypre_CSRMatrixI(m) = p`: a macro standing for an lvalue
        if let Some((expanded, site)) = self.macro_lvalue(lhs) {
            let saved = self.site_override;
            self.site_override = Some(saved.unwrap_or(site));
            self.store(&expanded, v);
            self.site_override = saved;
            return;
        }
        // `this->free_index = t`, and a constructor's `: free_index(t)`
        if let ExprKind::Field { base, field, .. } = &lhs.kind {
            if super::expr::is_this(base) && self.assign_member(field, v.clone()) {
                return;
            }
        }
        // `block.x = 256;` on a dim3 local; `p->current = c` through a local object's address
        if let ExprKind::Field { base, field, .. } = &lhs.kind {
            if self.assign_object_field(base, field, v.clone()) {
                return;
            }
        }
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
                // a reference parameter bound to memory: the store is to that place
                if let Some(place) = self.reference_place(name) {
                    self.record(&place, lhs.span, AccessOp::Store, None);
                    // a local reference has no value of its own to update
                    if self.lookup_local(name).is_none() {
                        return;
                    }
                }
                // a `__shared__` or `__device__` scalar: a store to memory (a shared one's
                // value is still followed, as what the block reads after a barrier)
                if let Some(place) = self.scalar_place(lhs) {
                    self.record(&place, lhs.span, AccessOp::Store, None);
                    if self.lookup_local(name).is_none() {
                        return;
                    }
                }
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
                    if p.ptr.space == Space::Local && super::differs_between_lanes(&v) {
                        self.varying_locals.insert(p.ptr.base.clone());
                    }
                    if p.ptr.space == Space::Local {
                        self.keep_element(&p, &v);
                    }
                    self.record(&p, lhs.span, AccessOp::Store, idx);
                }
            }
        }
    }

    /// A call of a function-like macro written where an lvalue goes: its body with the
    /// arguments in place, and where it is used.
    pub(super) fn macro_lvalue(&self, lhs: &Expr) -> Option<(Expr, super::Loc)> {
        let ExprKind::Call { callee, args, .. } = &lhs.kind else {
            return None;
        };
        let def = self
            .project
            .function_macro(callee, args.len(), self.file())?;
        let (Some(params), Some(body)) = (&def.params, &def.body) else {
            return None;
        };
        let expanded = cudalint_syntax::substitute::expand_expression_macro(params, body, args);
        Some((expanded, self.loc(lhs.span)))
    }

    /// The `__shared__` scalar `name` stands for, where no other local hides it.
    pub(super) fn shared_scalar(&self, name: &str) -> Option<Ptr> {
        let (_, scope, p) = self
            .shared_scalars
            .iter()
            .rev()
            .find(|(n, ..)| &**n == name)?;
        let base = self.frames.last().map(|f| f.scope_base).unwrap_or(0);
        let innermost = (base..self.scopes.len())
            .rev()
            .find(|&i| self.scopes[i].iter().any(|(n, _)| &**n == name));
        (innermost == Some(*scope)).then(|| p.clone())
    }

    /// The file-scope declaration of `name` when it is an object in global memory: a
    /// `__device__` or `__managed__` scalar or struct. Not a `__constant__` one (constant
    /// memory: a struct's members are read as a kernel parameter's are), nor a `const` scalar
    /// initialised where it is defined (`__device__ static const float PI = 3.14159f;`),
    /// whose value nvcc puts in the instruction, loading nothing.
    pub(super) fn global_scalar(&self, name: &str) -> Option<(usize, &cudalint_syntax::Decl)> {
        if self.lookup_local(name).is_some() {
            return None;
        }
        let (fi, d) = self.project.global(name, self.file())?;
        if !d.device || d.constant || !d.dims.is_empty() || d.ty.pointer_depth > 0 {
            return None;
        }
        let folded = d.is_const && !d.is_extern && d.init.is_some() && !self.is_struct(&d.ty.name);
        (!folded).then_some((fi, d))
    }

    /// A name that is a scalar in memory: a `__shared__` one, or a `__device__` or
    /// `__managed__` one at file scope.
    pub(super) fn scalar_place(&mut self, e: &Expr) -> Option<Place> {
        let ExprKind::Ident(name) = &e.kind else {
            return None;
        };
        let shared = self.shared_scalar(name).is_some();
        if !shared && self.lookup_local(name).is_some() {
            return None;
        }
        // (a `__shared__` pointer, `__shared__ float* table;` that one thread sets for the
        // block, is read from shared memory too: 8 bytes, wherever it is used)
        self.place(e)
            .filter(|p| !p.subarray && (p.ty.pointer_depth == 0 || shared))
    }

    /// The place a reference parameter of the current function is bound to.
    /// The place `e` names, worked out without recording any access its subscripts make
    /// (they were made where the expression is evaluated).
    pub(super) fn place_unrecorded(&mut self, e: &Expr) -> Option<Place> {
        let (n, held) = (self.accesses.len(), self.in_registers.len());
        let place = self.place(e);
        self.accesses.truncate(n);
        self.in_registers.truncate(held);
        place
    }

    pub(super) fn reference_place(&self, name: &str) -> Option<Place> {
        let frame = self.frames.last()?;
        let (_, place) = frame.refs.iter().rev().find(|(n, _)| &**n == name)?;
        // a local of the same name declared in the function hides the parameter
        let base = frame.scope_base;
        let shadowed = self.scopes[(base + 1).min(self.scopes.len())..]
            .iter()
            .any(|s| s.iter().any(|(n, _)| &**n == name));
        (!shadowed).then(|| place.clone())
    }

    /// `x op= v`, `x++`: a read and a write of the same place.
    pub(super) fn update(&mut self, lhs: &Expr, op: BinOp, v: Val, post: bool) -> Val {
        if let Some(name) = self.local_pointee(lhs) {
            let old = self
                .lookup_local(&name)
                .cloned()
                .unwrap_or(Val::Unknown("local given by address".into()));
            let new = self.arith(op, old.clone(), v);
            self.assign_local(&name, new.clone());
            return if post { old } else { new };
        }
        if let Some((expanded, site)) = self.macro_lvalue(lhs) {
            let saved = self.site_override;
            self.site_override = Some(saved.unwrap_or(site));
            let out = self.update(&expanded, op, v, post);
            self.site_override = saved;
            return out;
        }
        if let ExprKind::Ident(name) = &lhs.kind {
            if let Some(place) = self
                .reference_place(name)
                .or_else(|| self.scalar_place(lhs))
            {
                self.record(&place, lhs.span, AccessOp::Load, None);
                self.record(&place, lhs.span, AccessOp::Store, None);
                if self.lookup_local(name).is_none() {
                    return self.loaded_value(&place);
                }
            }
        }
        if let ExprKind::Field { base, field, .. } = &lhs.kind {
            if let Some(old) = self
                .object_field(base, field)
                .filter(|o| !matches!(o, Val::Ptr(_)))
            {
                let new = self.arith(op, old.clone(), v);
                self.assign_object_field(base, field, new.clone());
                return if post { old } else { new };
            }
        }
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
}

/// `s.e` or `s.e[j]`: what an index applies to is an array member (or a row of one).
fn indexes_a_member(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Field { .. } => true,
        ExprKind::Index { base, .. } => indexes_a_member(base),
        _ => false,
    }
}

pub(super) fn strip_addr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Unary {
            op: UnOp::AddrOf,
            arg,
        } => arg,
        _ => e,
    }
}

/// The access expression whose indices hold the lane-dependent term.
pub(super) fn index_of(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Index { .. }
        | ExprKind::Field { .. }
        | ExprKind::Unary {
            op: UnOp::Deref, ..
        } => Some(e),
        _ => None,
    }
}

/// The accesses nvcc copies a value of `bytes` and alignment `align` with: one when it is a
/// power of two up to 16 bytes and aligned to its size, else pieces of the widest size its
/// alignment allows (a 12-byte `float3` is three 4-byte loads, a struct of four doubles four
/// 8-byte ones), as (offset, bytes). A copy of more than 16 pieces stays one access.
pub(super) fn copy_pieces(bytes: i64, align: i64) -> Vec<(i64, i64)> {
    if bytes <= 0 || (matches!(bytes, 1 | 2 | 4 | 8 | 16) && align >= bytes) {
        return vec![(0, bytes)];
    }
    let width = [16i64, 8, 4, 2, 1]
        .into_iter()
        .find(|w| *w <= align.max(1) && bytes % w == 0)
        .unwrap_or(1);
    let n = bytes / width;
    if n > 16 {
        return vec![(0, bytes)];
    }
    (0..n).map(|k| (k * width, width)).collect()
}

/// The pieces of a copy with the padding of the value left out: a piece that holds only
/// padding is not copied, and one whose leading power-of-two bytes are all it holds is that
/// narrow (cuRAND's state: the 8 bytes at 32 hold a float and 4 bytes of padding, nvcc
/// copies them with a 4-byte load and store).
pub(super) fn skip_padding(pieces: Vec<(i64, i64)>, holes: &[(i64, i64)]) -> Vec<(i64, i64)> {
    if holes.is_empty() {
        return pieces;
    }
    let padding = |b: i64| holes.iter().any(|&(at, n)| b >= at && b < at + n);
    pieces
        .into_iter()
        .filter_map(|(at, n)| {
            let used: Vec<i64> = (at..at + n).filter(|b| !padding(*b)).collect();
            let (first, last) = (*used.first()?, *used.last()?);
            let span = last - first + 1;
            let narrow =
                first == at && span.count_ones() == 1 && used.len() as i64 == span && span < n;
            Some(if narrow { (at, span) } else { (at, n) })
        })
        .collect()
}

/// How an access says nvcc loads only part of its value.
const NARROWED: &str = "nvcc loads only the part used:";

/// Whether `e` reads memory as written: a subscript or a dereference.
pub(super) fn is_memory_read(e: &Expr) -> bool {
    matches!(
        &e.kind,
        ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnOp::Deref,
                ..
            }
    )
}

/// Whether a store the register view cannot place (through an address made of loaded values,
/// or `volatile`) may change the value `held`: any of its space in global memory, where
/// pointers may alias, else any of the same array.
pub(super) fn unplaced_store_reaches(held: &super::Held, space: Space, base: &str) -> bool {
    held.0 == space && (space == Space::Global || &*held.1 == base)
}

/// Whether a store of `bytes` at `at` (an offset split by `sym::split_constant`) of array
/// `base` may change the value `held`. Global pointers may alias each other unless one is
/// `__restrict__`; shared arrays do not; another member or element of the same object, a
/// constant distance away, is left where it was (`ray[t].dir[1] = ...` keeps `ray[t].dir[0]`:
/// svox2's rays).
pub(super) fn store_reaches(
    held: &super::Held,
    space: Space,
    base: &str,
    at: &(sym::Sym, i64),
    bytes: i64,
    restrict: &[Rc<str>],
) -> bool {
    if held.0 != space {
        return false;
    }
    if &*held.1 != base {
        return space == Space::Global && !restrict.iter().any(|r| &**r == base || *r == held.1);
    }
    let (held_at, held_from) = sym::split_constant(&held.2);
    let (at, from) = at;
    !(sym::same(at, &held_at) && (held_from >= from + bytes || *from >= held_from + held.3))
}

/// The pointer `*p` or `p[0]` reads through.
pub(super) fn dereferenced(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Unary {
            op: UnOp::Deref,
            arg,
        } => Some(arg),
        ExprKind::Index { base, index } if matches!(index.kind, ExprKind::Int(0)) => Some(base),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_pieces, skip_padding};

    #[test]
    fn a_copy_leaves_padding_out() {
        // cuRAND's 48-byte state: six 8-byte pieces, the fifth half padding
        assert_eq!(
            skip_padding(copy_pieces(48, 8), &[(36, 4)]),
            [(0, 8), (8, 8), (16, 8), (24, 8), (32, 4), (40, 8)]
        );
        // `struct { float a; double b; }`: the float's piece is 4 bytes
        assert_eq!(
            skip_padding(copy_pieces(16, 8), &[(4, 4)]),
            [(0, 4), (8, 8)]
        );
        // a piece of padding alone is not copied; one with padding inside stays whole
        assert_eq!(
            skip_padding(copy_pieces(24, 8), &[(16, 8)]),
            [(0, 8), (8, 8)]
        );
        assert_eq!(
            skip_padding(copy_pieces(16, 8), &[(2, 2)]),
            [(0, 8), (8, 8)]
        );
    }
}
