//! Sizes, alignments and field offsets of the types an access can name.

use cudalint_syntax::{compact_type_name, FileModel, StructDef, TypeRef};
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub size: i64,
    pub align: i64,
}

const fn l(size: i64, align: i64) -> Layout {
    Layout { size, align }
}

/// `trim_start_matches`/`trim_end_matches` for a literal without the substring searcher
/// `str`'s pattern builds on every call: type names are trimmed on every lookup, and building
/// those searchers was a twentieth of a run.
pub(crate) trait TrimLiteral {
    fn trim_start_str(&self, prefix: &str) -> &str;
    fn trim_end_str(&self, suffix: &str) -> &str;
}

impl TrimLiteral for str {
    fn trim_start_str(&self, prefix: &str) -> &str {
        let mut s = self;
        while let Some(rest) = s.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
            s = rest;
        }
        s
    }

    fn trim_end_str(&self, suffix: &str) -> &str {
        let mut s = self;
        while let Some(rest) = s.strip_suffix(suffix).filter(|_| !suffix.is_empty()) {
            s = rest;
        }
        s
    }
}

/// Built-in scalar and vector types (CUDA's `vector_types.h` alignments), for Linux's LP64 data
/// model, which nvcc follows in device code: `long` is 8 bytes, as on the host.
pub fn builtin(name: &str) -> Option<Layout> {
    let n = name
        .trim_start_str("const ")
        .trim_start_str("volatile ")
        .trim_start_str("std::")
        .trim_start_str("::");
    Some(match n {
        "char" | "signed char" | "unsigned char" | "bool" | "int8_t" | "uint8_t" | "uchar"
        | "__nv_fp8_e4m3" | "__nv_fp8_e5m2" | "char1" | "uchar1" => l(1, 1),
        "char3" | "uchar3" => l(3, 1),
        "short" | "unsigned short" | "short int" | "unsigned short int" | "signed short"
        | "int16_t" | "uint16_t" | "ushort" | "half" | "__half" | "__nv_bfloat16"
        | "nv_bfloat16" | "bfloat16" | "char2" | "uchar2" | "short1" | "ushort1" | "__half_raw"
        | "__nv_bfloat16_raw" | "char16_t" | "__nv_fp8x2_e4m3" | "__nv_fp8x2_e5m2" => l(2, 2),
        "short3" | "ushort3" => l(6, 2),
        "int" | "unsigned" | "unsigned int" | "signed" | "signed int" | "float" | "int32_t"
        | "uint32_t" | "uint" | "half2" | "__half2" | "__nv_bfloat162" | "nv_bfloat162"
        | "char4" | "uchar4" | "short2" | "ushort2" | "int1" | "uint1" | "float1" | "wchar_t"
        | "char32_t" => l(4, 4),
        "double"
        | "long"
        | "unsigned long"
        | "long int"
        | "signed long"
        | "long signed int"
        | "unsigned long int"
        | "long unsigned int"
        | "long long"
        | "signed long long"
        | "unsigned long long"
        | "long long int"
        | "unsigned long long int"
        | "long long unsigned int"
        | "int64_t"
        | "uint64_t"
        | "size_t"
        | "ssize_t"
        | "ptrdiff_t"
        | "intptr_t"
        | "uintptr_t"
        | "ulong"
        | "float2"
        | "int2"
        | "uint2"
        | "double1"
        | "long1"
        | "ulong1"
        | "longlong1"
        | "ulonglong1"
        | "short4"
        | "ushort4"
        | "cuComplex"
        | "cuFloatComplex"
        | "cufftComplex"
        | "complex<float>"
        | "thrust::complex<float>"
        | "cuda::std::complex<float>" => l(8, 8),
        "float3" | "int3" | "uint3" => l(12, 4),
        "float4"
        | "int4"
        | "uint4"
        | "double2"
        | "long2"
        | "ulong2"
        | "longlong2"
        | "ulonglong2"
        | "cuDoubleComplex"
        | "cufftDoubleComplex"
        | "__int128"
        | "complex<double>"
        | "thrust::complex<double>"
        | "cuda::std::complex<double>"
        | "unsigned __int128" => l(16, 16),
        "double3" | "long3" | "ulong3" | "longlong3" | "ulonglong3" => l(24, 8),
        "double4" | "long4" | "ulong4" | "longlong4" | "ulonglong4" => l(32, 16),
        // cuRAND's generator states (curand_kernel.h, curand_philox4x32_x.h), which programs
        // keep one per thread in global memory and copy whole to a local and back
        "curandState"
        | "curandState_t"
        | "curandStateXORWOW"
        | "curandStateXORWOW_t"
        | "curandStateMRG32k3a"
        | "curandStateMRG32k3a_t" => l(48, 8),
        "curandStatePhilox4_32_10" | "curandStatePhilox4_32_10_t" => l(64, 16),
        "curandStateSobol32"
        | "curandStateSobol32_t"
        | "curandStateScrambledSobol32"
        | "curandStateScrambledSobol32_t" => l(140, 4),
        "curandStateSobol64"
        | "curandStateSobol64_t"
        | "curandStateScrambledSobol64"
        | "curandStateScrambledSobol64_t" => l(536, 8),
        _ => return None,
    })
}

pub const POINTER: Layout = l(8, 8);

/// The struct a type's name names: as spelled, or, for a name qualified by its enclosing class
/// or a namespace (`NEP::ParaMB` for `struct ParaMB` inside `class NEP`), by its last part.
pub fn struct_named<'a>(name: &str, files: &[&'a FileModel]) -> Option<&'a StructDef> {
    let find = |n: &str| {
        let key = cudalint_syntax::TypeKey::new(n);
        files.iter().find_map(|f| f.struct_named(&key))
    };
    find(name).or_else(|| {
        let (_, last) = name.rsplit_once("::").filter(|_| !name.contains('<'))?;
        find(last)
    })
}

/// What a template instance binds in a struct's members: their types (`ProbT beta[NV]` in a
/// kernel of `ProbT`) and the names in their array lengths (`Data data[BLOCK]` in a struct a
/// template kernel declares: cuSZ's `__shared__ struct { union { uint8_t
/// raw[BLOCK * sizeof(Data)]; Data data[BLOCK]; } space; } shmem;`).
pub struct Bind<'a> {
    pub ty: &'a dyn Fn(&TypeRef) -> TypeRef,
    pub value: &'a dyn Fn(&str) -> Option<i64>,
    /// The layout to assume for a member's type that is not known (a type the kernel's
    /// template leaves open: cuSZ's `T data[9][9][33]` with `using T = typename
    /// std::remove_pointer<TITER>::type`), if any.
    pub unknown: &'a dyn Fn(&str) -> Option<Layout>,
}

fn same_type(t: &TypeRef) -> TypeRef {
    t.clone()
}

fn no_value(_: &str) -> Option<i64> {
    None
}

fn no_layout(_: &str) -> Option<Layout> {
    None
}

/// Nothing bound: the members as written.
pub const UNBOUND: Bind<'static> = Bind {
    ty: &same_type,
    value: &no_value,
    unknown: &no_layout,
};

impl Bind<'_> {
    /// The binding a member's struct type is laid out with: an unnamed struct defined in
    /// this one's body (`<anonymous ...>`) sees the same template parameters; a struct of its
    /// own name is laid out as it is written.
    fn for_member(&self, member: &str) -> &Self {
        if member.contains("<anonymous") {
            self
        } else {
            &UNBOUND
        }
    }
}

/// Resolves a type's layout: pointers, built-ins, typedefs and structs of the file.
pub fn layout(ty: &TypeRef, files: &[&FileModel]) -> Option<Layout> {
    if ty.pointer_depth > 0 {
        return Some(POINTER);
    }
    layout_named(&ty.name, files, 0)
}

pub fn layout_named(name: &str, files: &[&FileModel], depth: usize) -> Option<Layout> {
    layout_bound(name, files, &UNBOUND, depth)
}

fn layout_bound(name: &str, files: &[&FileModel], bind: &Bind, depth: usize) -> Option<Layout> {
    if depth > 16 {
        return None;
    }
    if let Some(b) = builtin(name) {
        return Some(b);
    }
    let bare = name.trim_start_str("struct ").trim_start_str("const ");
    if let Some(t) = typedef_of(bare, files) {
        if t.pointer_depth > 0 {
            return Some(POINTER);
        }
        return layout_named(&t.name, files, depth + 1);
    }
    struct_layout(
        struct_named(bare, files)?,
        files,
        bind.for_member(bare),
        depth,
    )
}

/// The layout of `def` with its members put through `bind` first.
fn struct_layout(
    def: &StructDef,
    files: &[&FileModel],
    bind: &Bind,
    depth: usize,
) -> Option<Layout> {
    // (a base found by its last name may be the struct itself: `struct Foo : ns::Foo`)
    if depth > 16 {
        return None;
    }
    let mut offset = 0i64;
    let mut align = 1i64;
    for (_, at, bl) in bases_of(def, files, bind, depth)? {
        offset = at + bl.size;
        align = align.max(bl.align);
    }
    for field in &def.fields {
        let ty = (bind.ty)(&field.ty);
        let fl = if ty.pointer_depth > 0 {
            POINTER
        } else {
            layout_bound(&ty.name, files, bind, depth + 1).or_else(|| (bind.unknown)(&ty.name))?
        };
        let fl = aligned(fl, field, files, bind);
        let count = element_count(field, files, bind)?;
        offset = if def.is_union {
            offset.max(fl.size * count)
        } else {
            round_up(offset, fl.align) + fl.size * count
        };
        align = align.max(fl.align);
    }
    if let Some(a) = def
        .align
        .as_ref()
        .and_then(|e| array_len(e, files, bind, depth + 1))
    {
        if a > 0 && (a & (a - 1)) == 0 {
            align = align.max(a);
        }
    }
    Some(l(round_up(offset.max(1), align), align))
}

/// The layout of struct `def_name` with its members put through `bind` first (a template
/// struct's instance: `MatrixElement<double>` with `Real` bound to `double`).
pub fn layout_of_template(def_name: &str, files: &[&FileModel], bind: &Bind) -> Option<Layout> {
    struct_layout(struct_named(def_name, files)?, files, bind, 0)
}

/// The bytes of a value of `ty` that hold nothing (padding between members and after the
/// last), as (offset, bytes): nvcc's copy of the value leaves them unread and unwritten.
pub fn padding(ty: &TypeRef, files: &[&FileModel]) -> Vec<(i64, i64)> {
    if ty.pointer_depth > 0 {
        return Vec::new();
    }
    let bare = ty.name.trim_start_str("const ").trim_start_str("struct ");
    // cuRAND's 48-byte states: 36 bytes of words, a float, 4 bytes of padding, a double
    if matches!(
        bare,
        "curandState"
            | "curandState_t"
            | "curandStateXORWOW"
            | "curandStateXORWOW_t"
            | "curandStateMRG32k3a"
            | "curandStateMRG32k3a_t"
    ) {
        return vec![(36, 4)];
    }
    if builtin(bare).is_some() {
        return Vec::new();
    }
    let full = through_typedefs(bare, files);
    // (a base's own padding is not followed: such a copy is left whole)
    let Some(def) = struct_named(&full, files).filter(|d| !d.is_union && d.bases.is_empty()) else {
        return Vec::new();
    };
    let mut holes = Vec::new();
    let (mut end, mut align) = (0i64, 1i64);
    for field in &def.fields {
        let Some(fl) = (if field.ty.pointer_depth > 0 {
            Some(POINTER)
        } else {
            layout_named(&field.ty.name, files, 1)
        }) else {
            return Vec::new();
        };
        let fl = aligned(fl, field, files, &UNBOUND);
        let Some(count) = element_count(field, files, &UNBOUND) else {
            return Vec::new();
        };
        let at = round_up(end, fl.align);
        if at > end {
            holes.push((end, at - end));
        }
        end = at + fl.size * count;
        align = align.max(fl.align);
    }
    let size = round_up(end.max(1), align);
    if size > end && end > 0 {
        holes.push((end, size - end));
    }
    holes
}

/// The name a field is known by: a name that is an object-like macro is what the macro
/// expands to, and one that expands to nothing makes the member anonymous (llama.cpp's
/// `union { ... } GGML_COMMON_AGGR_U;` with `#define GGML_COMMON_AGGR_U`).
fn member_name<'a>(fd: &'a cudalint_syntax::FieldDef, files: &[&'a FileModel]) -> &'a str {
    use cudalint_syntax::ExprKind;
    let define = files.iter().find_map(|f| {
        f.defines
            .iter()
            .find(|d| d.name == fd.name && d.params.is_none())
    });
    match define.map(|d| d.body.as_ref().map(|b| &b.kind)) {
        Some(None) => "",
        Some(Some(ExprKind::Ident(to))) => to,
        _ => &fd.name,
    }
}

/// What `name` is a typedef of, one step (`typedef block_q4_K_s block_q4_K;`), if it is one.
pub fn typedef_of<'a>(name: &str, files: &[&'a FileModel]) -> Option<Cow<'a, TypeRef>> {
    // a type spelled with keywords only (`float`, `unsigned int`) is never a typedef's name,
    // and most lookups are of those: no file needs scanning
    const KEYWORDS: &[&str] = &[
        "void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
        "const", "volatile",
    ];
    if !name.is_empty() && name.split(' ').all(|w| KEYWORDS.contains(&w)) {
        return None;
    }
    if let Some(folded) = fold_constant_args(name, files) {
        return typedef_of(&folded, files);
    }
    if let Some(stripped) = qualifier_trait(name) {
        return Some(Cow::Owned(TypeRef::named(&stripped)));
    }
    if let Some(chosen) = conditional_trait(name, files) {
        return Some(Cow::Owned(TypeRef::named(&chosen)));
    }
    let key = cudalint_syntax::TypeKey::new(name);
    files
        .iter()
        .find_map(|f| {
            let (typedef, define) = f.type_named(&key);
            // `#define float_sw4 double`: the macro is the type where a type is expected
            typedef.or_else(|| define.filter(|t| t.name != name && names_a_type(t, files)))
        })
        .map(Cow::Borrowed)
        .or_else(|| member_typedef(name, files).map(Cow::Owned))
        .or_else(|| alias_instance(name, files).map(Cow::Owned))
}

/// `cuda_complex<float>` where `template <typename T> using cuda_complex = ...;`: the alias
/// with its parameters replaced by the arguments.
fn alias_instance(name: &str, files: &[&FileModel]) -> Option<TypeRef> {
    if !name.contains('<') {
        return None;
    }
    let (base, args) = split_template(name);
    if args.is_empty() {
        return None;
    }
    // (most names asked about here are struct instances: the index says which files have a
    // typedef of that name at all before any is walked)
    let key = cudalint_syntax::TypeKey::new(base);
    let alias = files
        .iter()
        .filter(|f| f.type_named(&key).0.is_some())
        .flat_map(|f| &f.typedefs)
        .find(|t| t.name == base && t.params.len() == args.len())?;
    let mut ty = alias.ty.clone();
    let mut text = ty.name.to_string();
    for (p, a) in alias.params.iter().zip(&args) {
        text = cudalint_syntax::substitute::replace_word(&text, p, a.trim());
    }
    ty.name = text.as_str().into();
    Some(ty)
}

/// `typename std::conditional<std::is_same<float, float>::value, A, B>::type`: `A` or `B`,
/// where the condition is a comparison of two types (`std::is_same`, `std::is_same_v`, perhaps
/// negated) or a literal.
fn conditional_trait(name: &str, files: &[&FileModel]) -> Option<String> {
    let bare = name.trim().trim_start_matches("typename ").trim();
    let bare = bare.strip_prefix("std::").unwrap_or(bare);
    let inner = bare.strip_prefix("conditional<")?.strip_suffix(">::type")?;
    let (_, args) = split_template(&format!("conditional<{inner}>"));
    let [cond, then, els] = args.as_slice() else {
        return None;
    };
    let cond = cond.trim();
    let (negated, cond) = match cond.strip_prefix('!') {
        Some(c) => (true, c.trim()),
        None => (false, cond),
    };
    let holds = match cond {
        "true" => true,
        "false" => false,
        _ => {
            let c = cond.strip_prefix("std::").unwrap_or(cond);
            let pair = c
                .strip_prefix("is_same_v<")
                .and_then(|r| r.strip_suffix('>'))
                .or_else(|| {
                    c.strip_prefix("is_same<")
                        .and_then(|r| r.strip_suffix(">::value"))
                })?;
            let (_, types) = split_template(&format!("is_same<{pair}>"));
            let [a, b] = types.as_slice() else {
                return None;
            };
            let resolve = |t: &str| follow_typedefs(t.trim(), |n| typedef_of(n, files));
            let (a, b) = (resolve(a), resolve(b));
            // a parameter not put in (`T`) decides nothing
            let known = |t: &str| builtin(t).is_some() || is_struct(t, files);
            if !known(&a) || !known(&b) {
                return None;
            }
            a == b
        }
    };
    Some(if holds != negated { then } else { els }.trim().to_string())
}

/// A type a struct declares in its body, named from outside: `IndPrecisionMap<AMGX_indInt>::Type`
/// (the specialization's own typedef), `Traits<float>::value_type` (the template's, its
/// parameters bound to the arguments), the owner through typedefs of its own.
fn member_typedef(name: &str, files: &[&FileModel]) -> Option<TypeRef> {
    let (owner, member) = name.rsplit_once("::")?;
    if owner.is_empty() || member.contains(['<', '>']) {
        return None;
    }
    let owner = compact_type_name(&through_typedefs(&compact_type_name(owner), files));
    let find = |n: &str| {
        files
            .iter()
            .find_map(|f| f.typedefs.iter().find(|t| t.name == n))
    };
    if let Some(t) = find(&format!("{owner}::{member}")) {
        return Some(t.ty.clone());
    }
    let (base, args) = split_template(&owner);
    if args.is_empty() {
        return None;
    }
    let t = &find(&format!("{base}::{member}"))?.ty;
    let params = &struct_named(base, files)?.template_params;
    match params.iter().position(|p| *p == t.name) {
        Some(i) => {
            let mut bound = TypeRef::named(args.get(i)?);
            bound.pointer_depth += t.pointer_depth;
            bound.is_const |= t.is_const;
            Some(bound)
        }
        // a member type spelled with the parameters inside (`typename BytesToType<sizeof(DType)
        // * n>::Type`), the arguments written in: the caller follows it on
        None if params.iter().any(|p| mentions(&t.name, p)) => {
            let mut bound = t.clone();
            bound.name = substitute_words(&t.name, params, &args).into();
            Some(bound)
        }
        None => Some(t.clone()),
    }
}

/// `text` with each whole word that is one of `params` replaced by its argument, and the
/// `typename` keywords dropped.
fn substitute_words<P: AsRef<str>>(text: &str, params: &[P], args: &[String]) -> String {
    let out = replace_words(text, |word| {
        match params.iter().position(|p| p.as_ref() == word) {
            Some(i) if i < args.len() => Some(args[i].clone()),
            _ if word == "typename" => Some(String::new()),
            _ => None,
        }
    });
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with each whole word `replace` gives a replacement for replaced by it.
pub(crate) fn replace_words(text: &str, replace: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match replace(word) {
            Some(r) => out.push_str(&r),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `std::remove_const<const float>::type` is `float`: the standard traits that strip
/// qualifiers, as far as a layout is concerned.
fn qualifier_trait(name: &str) -> Option<String> {
    const TRAITS: &[&str] = &["remove_const", "remove_cv", "remove_volatile", "decay"];
    let bare = name.trim().strip_prefix("std::").unwrap_or(name.trim());
    let (trait_name, rest) = bare.split_once('<')?;
    let (inner, member) = rest.rsplit_once(">::")?;
    let suffixed = trait_name.strip_suffix("_t");
    if !TRAITS.contains(&trait_name) || member.trim() != "type" || suffixed.is_some() {
        return None;
    }
    let inner = inner.trim();
    Some(
        inner
            .strip_prefix("const ")
            .unwrap_or(inner)
            .trim()
            .to_string(),
    )
}

/// Whether `text` uses the name `word` as a whole word.
fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().last();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Whether a macro's replacement names a type: a scalar or pointer spelling, or a typedef or
/// struct of the program (`#define su3_vector dsu3_vector`; `#define N other_n` is not one).
fn names_a_type(t: &TypeRef, files: &[&FileModel]) -> bool {
    t.pointer_depth > 0
        || builtin(&t.name).is_some()
        || t.name.contains(' ')
        || t.name.ends_with("_t")
        || files.iter().any(|f| {
            f.typedefs.iter().any(|d| d.name == t.name)
                || f.structs.iter().any(|s| s.name == t.name)
        })
}

/// The type `name` names once every typedef of a non-pointer type is followed (a cycle of
/// typedefs stops after a few steps).
pub fn through_typedefs(name: &str, files: &[&FileModel]) -> String {
    follow_typedefs(name, |n| typedef_of(n, files))
}

/// [`through_typedefs`] with the one-step lookup given (a kernel run's remembers its answers).
pub(crate) fn follow_typedefs<T: std::borrow::Borrow<TypeRef>>(
    name: &str,
    mut typedef_of: impl FnMut(&str) -> Option<T>,
) -> String {
    let mut full = name.to_string();
    for _ in 0..16 {
        match typedef_of(&full).filter(|t| t.borrow().pointer_depth == 0) {
            Some(t) => full = t.borrow().name.to_string(),
            None => break,
        }
    }
    full
}

/// Offset, layout and type of a named field of a struct (or `.x/.y/.z/.w` of a vector type).
pub fn field(
    struct_name: &str,
    field: &str,
    files: &[&FileModel],
) -> Option<(i64, Layout, TypeRef)> {
    let bare = struct_name
        .trim_start_str("struct ")
        .trim_start_str("const ");
    if let Some(b) = builtin(bare) {
        // vector types: components of the scalar type
        let bare = library_vector(bare).unwrap_or(bare);
        let comps = ["x", "y", "z", "w"];
        let k = comps.iter().position(|c| *c == field)? as i64;
        let scalar = vector_component(bare)?;
        let sl = builtin(scalar)?;
        if (k + 1) * sl.size > b.size {
            return None;
        }
        return Some((k * sl.size, sl, TypeRef::named(scalar)));
    }
    let full = through_typedefs(bare, files);
    if full != bare {
        // a typedef of a vector type or of a struct
        if builtin(&full).is_some() {
            return self::field(&full, field, files);
        }
        return field_in(&full, field, files, &UNBOUND, 0);
    }
    field_in(bare, field, files, &UNBOUND, 0)
}

/// [`field`] of a struct whose members a template gives (`union TempStorage { ProbT
/// beta[NV]; int result[NV]; }` in a kernel of `ProbT`): each member's type and array length
/// are first what `bind` makes of them (the template arguments a call binds).
pub fn field_of_template(
    struct_name: &str,
    field: &str,
    files: &[&FileModel],
    bind: &Bind,
) -> Option<(i64, Layout, TypeRef)> {
    field_in(&through_typedefs(struct_name, files), field, files, bind, 0)
}

fn field_in(
    struct_name: &str,
    field: &str,
    files: &[&FileModel],
    bind: &Bind,
    depth: usize,
) -> Option<(i64, Layout, TypeRef)> {
    field_in_def(struct_named(struct_name, files)?, field, files, bind, depth)
}

fn field_in_def(
    def: &StructDef,
    field: &str,
    files: &[&FileModel],
    bind: &Bind,
    depth: usize,
) -> Option<(i64, Layout, TypeRef)> {
    if depth > 16 {
        return None;
    }
    let mut offset = 0i64;
    for (base, at, bl) in bases_of(def, files, bind, depth)? {
        let inner = in_instance(&base, files, &|def, bind| {
            field_in_def(def, field, files, bind, depth + 1)
        });
        if let Some((inner, l, t)) = inner {
            return Some((at + inner, l, t));
        }
        offset = at + bl.size;
    }
    for fd in &def.fields {
        let ty = (bind.ty)(&fd.ty);
        let fl = if ty.pointer_depth > 0 {
            POINTER
        } else {
            layout_bound(&ty.name, files, bind, 1).or_else(|| (bind.unknown)(&ty.name))?
        };
        let fl = aligned(fl, fd, files, bind);
        let at = if def.is_union {
            0
        } else {
            round_up(offset, fl.align)
        };
        match member_name(fd, files) {
            name if name == field => return Some((at, fl, ty)),
            // an anonymous member's fields are this struct's
            "" if ty.pointer_depth == 0 => {
                if let Some(found) =
                    field_in(&ty.name, field, files, bind.for_member(&ty.name), depth + 1)
                {
                    let (inner, l, t) = found;
                    return Some((at + inner, l, t));
                }
            }
            _ => {}
        }
        // a union's members all start at 0: the sizes of the others do not matter
        // (`union Storage { int scan[NT]; int indices[NV]; }` in a template)
        if !def.is_union {
            let count = element_count(fd, files, bind)?;
            offset = at + fl.size * count;
        }
    }
    None
}

/// The base classes of `def` that hold members, in order, each with its offset and layout (the
/// Itanium ABI's: non-virtual bases first, each at its alignment; an empty base takes no room);
/// `None` when a base the run defines cannot be laid out, since every member after it moves
/// with it.
fn bases_of(
    def: &StructDef,
    files: &[&FileModel],
    bind: &Bind,
    depth: usize,
) -> Option<Vec<(String, i64, Layout)>> {
    let mut out = Vec::new();
    let mut offset = 0i64;
    for b in &def.bases {
        let ty = (bind.ty)(b);
        let name = through_typedefs(ty.name.trim_start_str("struct "), files);
        // a base defined nowhere in the run is a library's tag (`thrust::unary_function<T,
        // R>`, `std::integral_constant`), which holds no data
        let (base_def, _) = split_template(&name);
        let found = struct_named(&name, files).or_else(|| struct_named(base_def, files));
        if found.is_none_or(is_empty_class) {
            continue;
        }
        let bl = in_instance(&name, files, &|def, bind| {
            struct_layout(def, files, bind, depth + 1)
        })?;
        let at = round_up(offset, bl.align);
        offset = at + bl.size;
        out.push((name, at, bl));
    }
    Some(out)
}

/// `look` applied to the struct `name` names: as written, or for an instance of a template
/// struct (`TB<float>`, a base `PxgSolverSharedDesc<IterativeSolveData>`), to the template
/// with its parameters bound to the instance's arguments.
fn in_instance<T>(
    name: &str,
    files: &[&FileModel],
    look: &dyn Fn(&StructDef, &Bind) -> Option<T>,
) -> Option<T> {
    if let Some(def) = struct_named(name, files) {
        return look(def, &UNBOUND);
    }
    let (base, args) = split_template(name);
    let def = struct_named(base, files)?;
    let params = &def.template_params;
    if args.is_empty() || params.is_empty() {
        return None;
    }
    let ty = |t: &TypeRef| match params.iter().position(|p| *p == t.name) {
        Some(i) if i < args.len() => {
            let mut bound = TypeRef::named(&args[i]);
            bound.pointer_depth += t.pointer_depth;
            bound
        }
        _ => t.clone(),
    };
    let value = |n: &str| {
        let i = params.iter().position(|p| p == n)?;
        args.get(i)?.trim().parse::<i64>().ok()
    };
    let bind = Bind {
        ty: &ty,
        value: &value,
        unknown: &no_layout,
    };
    look(def, &bind)
}

/// A class with no data members of its own or in its bases (a tag, a policy): as a base it takes
/// no room.
fn is_empty_class(def: &StructDef) -> bool {
    def.fields.is_empty() && def.bases.is_empty()
}

/// How many elements a member holds: 1, or the product of its array dimensions.
/// A member's layout with its own `alignas(N)` (a power of two above its type's) applied.
fn aligned(
    fl: Layout,
    fd: &cudalint_syntax::FieldDef,
    files: &[&FileModel],
    bind: &Bind,
) -> Layout {
    match fd.align.as_ref().and_then(|e| array_len(e, files, bind, 1)) {
        Some(a) if a > fl.align && (a & (a - 1)) == 0 => Layout { align: a, ..fl },
        _ => fl,
    }
}

fn element_count(fd: &cudalint_syntax::FieldDef, files: &[&FileModel], bind: &Bind) -> Option<i64> {
    let Some(first) = &fd.array_len else {
        return Some(1);
    };
    let mut n = array_len(first, files, bind, 0)?;
    for d in &fd.inner_dims {
        n *= array_len(d, files, bind, 0)?;
    }
    Some(n)
}

/// The dimensions of an array member of a struct (through typedefs), empty for anything else:
/// `s.e[i][j]` indexes them. An outer length that is not known is 0.
pub fn field_dims(struct_name: &str, field: &str, files: &[&FileModel]) -> Vec<i64> {
    field_dims_bound(struct_name, field, files, &UNBOUND)
}

/// [`field_dims`] of a template's member, its lengths evaluated with `bind`'s values
/// (`float d[TILE]` of an instance `Smem<32, 64>`, named by its template `Smem`).
pub fn field_dims_bound(
    struct_name: &str,
    field: &str,
    files: &[&FileModel],
    bind: &Bind,
) -> Vec<i64> {
    let bare = struct_name
        .trim_start_str("struct ")
        .trim_start_str("const ");
    let full = through_typedefs(bare, files);
    let Some(def) = struct_named(&full, files) else {
        return Vec::new();
    };
    let Some(fd) = def.fields.iter().find(|f| f.name == field) else {
        return Vec::new();
    };
    let Some(first) = &fd.array_len else {
        return Vec::new();
    };
    // the outer length may be a template's (`int indices[NT * VT]`): 0, the member is an
    // array all the same; the inner ones give the strides and must be known
    let inner = fd
        .inner_dims
        .iter()
        .map(|d| array_len(d, files, bind, 0))
        .collect::<Option<Vec<i64>>>();
    match inner {
        Some(inner) => std::iter::once(array_len(first, files, bind, 0).unwrap_or(0))
            .chain(inner)
            .collect(),
        None => Vec::new(),
    }
}

/// A field's array length: a constant expression over integers, object-like macros of the
/// files (rodinia's `int keys[DEFAULT_ORDER + 1]`), the template values `bind` gives and the
/// sizes of types.
fn array_len(
    e: &cudalint_syntax::Expr,
    files: &[&FileModel],
    bind: &Bind,
    depth: usize,
) -> Option<i64> {
    use cudalint_syntax::{BinOp, ExprKind};
    if depth > 16 {
        return None;
    }
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        // `sizeof(Data)` with `Data` a template's type parses either way
        ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => {
            let t = match &e.kind {
                ExprKind::SizeofType(t) => t.clone(),
                ExprKind::SizeofExpr(x) => match &x.kind {
                    ExprKind::Ident(name) => TypeRef::named(name),
                    _ => return None,
                },
                _ => return None,
            };
            let t = (bind.ty)(&t);
            if t.pointer_depth > 0 {
                return Some(POINTER.size);
            }
            let known = layout_named(&t.name, files, depth + 1);
            Some(known.or_else(|| (bind.unknown)(&t.name))?.size)
        }
        ExprKind::Ident(name) if (bind.value)(name).is_some() => (bind.value)(name),
        ExprKind::Ident(name) => {
            // a macro, or a constant at file scope (GPUMD's `const int NUM_ELEMENTS = 94;`)
            let body = files.iter().find_map(|f| {
                f.defines
                    .iter()
                    .rev()
                    .find(|d| d.name == *name && d.params.is_none())
                    .and_then(|d| d.body.as_ref())
            });
            let body = body.or_else(|| {
                files.iter().find_map(|f| {
                    f.globals
                        .iter()
                        .find(|d| {
                            d.name == *name && (d.is_const || d.ty.is_const) && d.dims.is_empty()
                        })
                        .and_then(|d| d.init.as_ref())
                })
            })?;
            array_len(body, files, bind, depth + 1)
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (
                array_len(lhs, files, bind, depth + 1)?,
                array_len(rhs, files, bind, depth + 1)?,
            );
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
                BinOp::Shl => a.checked_shl(u32::try_from(b).ok()?),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a built-in type is an integer (`long`, `uint8_t`, `size_t`), not a floating-point,
/// vector or complex type.
pub fn is_integer(name: &str) -> bool {
    let bare = name.trim_start_str("const ");
    builtin(bare).is_some()
        && vector_width(bare).is_none()
        && ![
            "float", "double", "half", "bfloat16", "complex", "Complex", "__int128",
        ]
        .iter()
        .any(|w| bare.contains(w))
        && !bare.starts_with("__nv_")
        && !matches!(bare, "bool")
}

/// Whether a type is a floating-point scalar (`float`, `double`, `__half`, `__nv_bfloat16`, an
/// fp8 type; `at::Half`, `c10::BFloat16`), not a vector of them.
pub fn is_floating(name: &str) -> bool {
    let bare = name
        .trim_start_str("const ")
        .trim_start_str("volatile ")
        .trim_start_str("std::")
        .trim_start_str("::");
    let last = bare.rsplit("::").next().unwrap_or(bare);
    matches!(
        last,
        "float"
            | "double"
            | "long double"
            | "half"
            | "__half"
            | "Half"
            | "BFloat16"
            | "__nv_bfloat16"
            | "nv_bfloat16"
            | "bfloat16"
            | "__nv_fp8_e4m3"
            | "__nv_fp8_e5m2"
            | "float1"
    )
}

/// The vector type a CUDA library's complex type is a typedef of (cuComplex.h, cufft.h):
/// its `.x` is the real part.
fn library_vector(name: &str) -> Option<&'static str> {
    Some(match name {
        "cuComplex" | "cuFloatComplex" | "cufftComplex" => "float2",
        "cuDoubleComplex" | "cufftDoubleComplex" => "double2",
        _ => return None,
    })
}

/// Components of a CUDA vector type (`uint4`: 4), `None` for anything else.
pub fn vector_width(name: &str) -> Option<usize> {
    let bare = name.trim_start_str("const ");
    let digits = bare.trim_start_matches(|c: char| !c.is_ascii_digit());
    let n: usize = digits.parse().ok()?;
    (vector_component(bare).is_some() && (1..=4).contains(&n) && bare.ends_with(digits))
        .then_some(n)
}

pub(crate) fn vector_component(name: &str) -> Option<&'static str> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    Some(match base {
        "float" => "float",
        "double" => "double",
        "int" => "int",
        "uint" => "unsigned int",
        "char" => "char",
        "uchar" => "unsigned char",
        "short" => "short",
        "ushort" => "unsigned short",
        "longlong" => "long long",
        "ulonglong" => "unsigned long long",
        "long" => "long",
        "ulong" => "unsigned long",
        "half" | "__half" => "half",
        "__nv_bfloat16" | "nv_bfloat16" => "__nv_bfloat16",
        _ => return None,
    })
}

pub fn is_struct(name: &str, files: &[&FileModel]) -> bool {
    let bare = name.trim_start_str("struct ").trim_start_str("const ");
    let full = through_typedefs(bare, files);
    struct_named(&full, files).is_some()
}

fn round_up(x: i64, a: i64) -> i64 {
    if a <= 1 {
        x
    } else {
        (x + a - 1) / a * a
    }
}

/// `BytesToType<sizeof(float) * 4>::Type` as `BytesToType<16>::Type`: template arguments that
/// are constant arithmetic (what a template's parameters left once bound: TransformerEngine's
/// `BytesToType<sizeof(DType) * n>`), folded so the specialization for their value is found.
/// `None` when nothing folds.
pub(crate) fn fold_constant_args(name: &str, files: &[&FileModel]) -> Option<String> {
    let lt = name.find('<')?;
    if !name[lt..].contains(['*', '+', '/', '%', '(']) {
        return None;
    }
    let size_of = |t: &str| layout(&TypeRef::named(t.trim()), files).map(|l| l.size);
    let (mut out, mut changed) = (String::with_capacity(name.len()), false);
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        out.push(b[i] as char);
        if b[i] != b'<' && b[i] != b',' {
            i += 1;
            continue;
        }
        // one argument: up to the `,` or `>` at its depth
        let (start, mut depth, mut end) = (i + 1, 0i32, None);
        for (k, &c) in b.iter().enumerate().skip(start) {
            match c {
                b'<' | b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'>' if depth == 0 => {
                    end = Some(k);
                    break;
                }
                b'>' => depth -= 1,
                b',' if depth == 0 => {
                    end = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            i += 1;
            continue;
        };
        let raw = &name[start..end];
        let arg = raw.trim();
        match constant_value(arg, &size_of).filter(|_| arg.parse::<i64>().is_err()) {
            Some(v) => {
                out.push_str(&raw[..raw.len() - raw.trim_start().len()]);
                out.push_str(&v.to_string());
                changed = true;
                i = end;
            }
            None => i += 1,
        }
    }
    changed.then_some(out)
}

/// The value of constant integer arithmetic: literals, `sizeof(type)`, `+ - * / %` and
/// parentheses.
fn constant_value(text: &str, size_of: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    struct P<'a> {
        s: &'a str,
        size_of: &'a dyn Fn(&str) -> Option<i64>,
    }
    impl P<'_> {
        fn ws(&mut self) {
            self.s = self.s.trim_start();
        }
        fn eat(&mut self, c: char) -> bool {
            self.ws();
            self.s.strip_prefix(c).map(|r| self.s = r).is_some()
        }
        fn sum(&mut self) -> Option<i64> {
            let mut v = self.product()?;
            loop {
                if self.eat('+') {
                    v = v.checked_add(self.product()?)?;
                } else if self.eat('-') {
                    v = v.checked_sub(self.product()?)?;
                } else {
                    return Some(v);
                }
            }
        }
        fn product(&mut self) -> Option<i64> {
            let mut v = self.unary()?;
            loop {
                if self.eat('*') {
                    v = v.checked_mul(self.unary()?)?;
                } else if self.eat('/') {
                    v = v.checked_div(self.unary()?)?;
                } else if self.eat('%') {
                    v = v.checked_rem(self.unary()?)?;
                } else {
                    return Some(v);
                }
            }
        }
        fn unary(&mut self) -> Option<i64> {
            if self.eat('-') {
                return self.unary()?.checked_neg();
            }
            if self.eat('(') {
                let v = self.sum()?;
                return self.eat(')').then_some(v);
            }
            self.ws();
            if let Some(r) = self.s.strip_prefix("sizeof") {
                let r = r.trim_start().strip_prefix('(')?;
                let close = r.find(')')?;
                self.s = &r[close + 1..];
                return (self.size_of)(&r[..close]);
            }
            let digits = self.s.bytes().take_while(u8::is_ascii_digit).count();
            let v = self.s[..digits].parse().ok()?;
            let suffix = self.s[digits..]
                .bytes()
                .take_while(|c| matches!(c, b'u' | b'U' | b'l' | b'L'))
                .count();
            self.s = &self.s[digits + suffix..];
            Some(v)
        }
    }
    let mut p = P { s: text, size_of };
    let v = p.sum()?;
    p.ws();
    p.s.is_empty().then_some(v)
}

/// `Packed128<floatX>` as `("Packed128", ["floatX"])` (top-level commas only).
pub(crate) fn split_template(name: &str) -> (&str, Vec<String>) {
    // (`Table<long long>::Mapping` names a type nested in an instance, not an instance)
    let Some((base, rest)) = name
        .split_once('<')
        .filter(|_| name.trim_end().ends_with('>'))
    else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_template_arguments_fold() {
        let files: Vec<&FileModel> = Vec::new();
        assert_eq!(
            fold_constant_args("BytesToType<sizeof(float) * 4>::Type", &files).as_deref(),
            Some("BytesToType<16>::Type")
        );
        assert_eq!(
            fold_constant_args("Tile<(32 + 1) * 2, T, 8u / 2>", &files).as_deref(),
            Some("Tile<66, T, 4>")
        );
        // nothing to fold, or something that is no constant
        assert_eq!(fold_constant_args("Tile<32, float>", &files), None);
        assert_eq!(fold_constant_args("Tile<sizeof(T) * n>", &files), None);
        assert_eq!(
            qualifier_trait("std::remove_const<const float>::type").as_deref(),
            Some("float")
        );
        assert_eq!(qualifier_trait("std::remove_pointer<float*>::type"), None);
    }

    #[test]
    fn floating_types_are_scalars_of_any_width() {
        for t in [
            "float",
            "const double",
            "__half",
            "__nv_bfloat16",
            "at::Half",
            "c10::BFloat16",
        ] {
            assert!(is_floating(t), "{t}");
        }
        for t in ["int", "float2", "half2", "size_t", "Halfway", "double4"] {
            assert!(!is_floating(t), "{t}");
        }
    }

    fn model(src: &str) -> FileModel {
        cudalint_syntax::parse(src).unwrap().model
    }

    #[test]
    fn padding_is_the_bytes_between_and_after_members() {
        let m = model("struct S { float a; double b; char c; };\nstruct T { int x, y; };");
        let files = [&m];
        assert_eq!(padding(&TypeRef::named("S"), &files), [(4, 4), (17, 7)]);
        assert_eq!(padding(&TypeRef::named("T"), &files), []);
        // cuRAND's XORWOW state, whose definition is in a system header
        assert_eq!(padding(&TypeRef::named("curandState"), &files), [(36, 4)]);
        assert_eq!(
            layout_named("curandState", &files, 0).map(|l| l.size),
            Some(48)
        );
    }

    #[test]
    fn a_typedef_or_type_macro_is_found_in_the_first_file_that_has_one() {
        let a = model(
            "typedef struct P P;\ntypedef float real;\ntypedef double real;\n#define idx_t long\n#define idx_t\n",
        );
        let b = model("#define real int\n#define idx_t int\n#define DATA_TYPE double\n");
        let files = [&a, &b];
        let name = |n: &str| typedef_of(n, &files).map(|t| t.name.to_string());
        // the first typedef of the name; `typedef struct P P` names the struct, not a type
        assert_eq!(name("real").as_deref(), Some("float"));
        assert_eq!(name("P"), None);
        // a later definition that is not a type hides the file's earlier one, not the next
        // file's
        assert_eq!(name("idx_t").as_deref(), Some("int"));
        assert_eq!(name("DATA_TYPE").as_deref(), Some("double"));
        assert_eq!(name("missing"), None);
        // the index is made once, on any thread, and read from every other
        let from_threads: Vec<Option<String>> = std::thread::scope(|s| {
            let h: Vec<_> = (0..4).map(|_| s.spawn(|| name("DATA_TYPE"))).collect();
            h.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(from_threads.iter().all(|n| n.as_deref() == Some("double")));
    }

    #[test]
    fn a_struct_nested_in_a_class_is_found_by_its_qualified_name() {
        let m = model(
            "class NEP {\npublic:\n  struct ParaMB { int n_max; int L_max; };\n  ParaMB paramb;\n  void compute(int n);\n};",
        );
        let files = [&m];
        assert!(is_struct("NEP::ParaMB", &files));
        assert_eq!(field("NEP::ParaMB", "L_max", &files).map(|f| f.0), Some(4));
        // the nested type and the member function take no room in the class
        assert_eq!(layout_named("NEP", &files, 0).map(|l| l.size), Some(8));
    }

    #[test]
    fn a_type_a_struct_declares_is_found_through_its_owner() {
        let m = model(
            "enum P { P_int, P_int64 };\ntemplate <P> struct Map;\n\
             template <> struct Map<P_int> { typedef int Type; };\n\
             template <> struct Map< P_int64 > { using Type = long long; };\n\
             template <class T> struct Traits { typedef T value_type; typedef T* pointer; typedef int size_type; };\n\
             typedef typename Map<P_int>::Type INDEX;\ntypedef Map<P_int64> Wide;",
        );
        let files = [&m];
        let size = |n: &str| layout_named(n, &files, 0).map(|l| l.size);
        assert_eq!(size("INDEX"), Some(4));
        assert_eq!(size("Map<P_int64>::Type"), Some(8));
        // the owner through a typedef of its own
        assert_eq!(size("Wide::Type"), Some(8));
        // the template's own member types, its parameter bound
        assert_eq!(size("Traits<double>::value_type"), Some(8));
        assert_eq!(size("typename Traits<short>::size_type"), Some(4));
        assert_eq!(
            typedef_of("Traits<char>::pointer", &files).map(|t| (t.name.clone(), t.pointer_depth)),
            Some(("char".into(), 1))
        );
        // no such member, no such specialization
        assert_eq!(size("Map<P_int>::Other"), None);
        assert_eq!(size("Map<P_other>::Type"), None);
    }
}
