//! Byte-offset-preserving rewrites applied before parsing: what the grammar cannot follow
//! (the dead branches of `#if` groups, `__align__`, macros used as syntax) is blanked to
//! spaces of the same length, newlines kept, so every span and line still points into the
//! file as the user wrote it.

pub(crate) mod condition;
mod conditional;
mod declaration_gaps;
mod grammar_gaps;
mod modern_cpp;
mod spellings;
mod syntax_macros;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub use conditional::select_branches;

/// The type keyword a macro's argument was, where preprocessing spelled it as an identifier
/// (`_hort` for `short`, `_loat` for `float`): the grammar takes no keyword as an argument.
pub fn type_keyword_argument(name: &str) -> Option<&'static str> {
    let rest = name.strip_prefix('_')?;
    grammar_gaps::KEYWORD_ARGUMENTS
        .iter()
        .find(|k| k.get(1..) == Some(rest))
        .copied()
}

/// The file an `#include` names, from the text after `include`: `"a/b.h"` or `<a/b.h>`. An
/// angled include is a system header or one of the project's own found through `-I`
/// (`<cudf/types.hpp>`, `<faiss/gpu/utils/Tensor.cuh>`): which, is decided by where it is
/// found.
pub fn included_name(rest: &str) -> Option<&str> {
    let rest = rest.trim();
    let close = match rest.as_bytes().first() {
        Some(b'"') => '"',
        Some(b'<') => '>',
        _ => return None,
    };
    let rest = &rest[1..];
    Some(&rest[..rest.find(close)?])
}

/// What a kernel's specifier macro too short to hold `__global__` becomes: an attribute the
/// grammar takes where `__global__` goes, read by the lowering as `__global__`.
pub const KERNEL_MARK: &str = "[[G]]";

/// The same for a device specifier's macro too short to hold `__device__` (adamw's `#define
/// DEVICE __device__` on a table, `static DEVICE __const__ float qmap[]`): global memory.
pub const DEVICE_MARK: &str = "[[D]]";

/// Macros defined before any file is read: `-D` flags and cudalint.toml `defines`, over what
/// nvcc predefines for a device compilation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Defines {
    user: BTreeMap<String, String>,
    /// `-U` flags and cudalint.toml `undefines`: names the build does not define.
    undefined: BTreeSet<String>,
    /// Object-like macros the program defines as declaration specifiers or as nothing
    /// (`#define HOST_DEVICE __host__ __device__`, `#define _STATIC`), in this file or the
    /// files it is compiled with: where they appear in code they are syntax the grammar
    /// cannot follow, and are rewritten as what they stand for.
    specifiers: BTreeMap<String, Specifier>,
    /// Per `#include "..."` spelling, what the header it names (and the headers it includes)
    /// leaves defined or undefined: a `#define USE_UINT4` in a config.h decides the
    /// includer's `#if defined(USE_UINT4)` below the include line.
    included: BTreeMap<String, Vec<(String, HeaderMacro)>>,
}

/// What a header leaves a macro as when its text ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HeaderMacro {
    /// An object-like macro with its replacement text.
    Object(String),
    /// Defined, with no value we read: function-like, or a body continued over lines.
    Defined,
    Undefined,
}

/// What a declaration-specifier macro stands for, as far as the analysis cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Specifier {
    /// Nothing the analysis reads (`inline`, `static`, `__forceinline__`, nothing at all).
    Other,
    /// A function-like macro that stands for an alignment, the argument at this index
    /// (`#define CUTE_ALIGNAS(n) alignas(n)`, `#define ALIGN(n) __align__(n)`): written back as
    /// `alignas(n)` where a member's or a class's declaration starts, since the layout reads
    /// it; blanked elsewhere.
    Align(u8),
    /// A function-like macro that wraps a declaration, the argument `keep`, maybe in an
    /// alignment, the argument `align` (PhysX's `PX_ALIGN(16, PxVec3 normal);`, defined per
    /// compiler as `__declspec(align(a)) decl`, `decl __attribute__((aligned(a)))` or
    /// `__align__(a) decl`): the declaration is kept, the rest blanked, the alignment written
    /// as `alignas(a)` where it fits. An identity macro (`#define EXPAND(x) x`) is one too.
    Wrap { keep: u8, align: Option<u8> },
    /// A class key: `#define _SUNDIALS_STRUCT_ struct` before `typedef _SUNDIALS_STRUCT_ X* Y;`
    /// (SUNDIALS, where a SWIG build defines it as nothing), written back as `struct`.
    Tag,
    /// A pointer qualifier: `#define RESTRICT __restrict__` (the analysis reads which
    /// pointers may not alias).
    Restrict,
    /// It makes a function callable from device code (`__device__`, `__host__ __device__`).
    Device,
    /// It makes a function a kernel (`#define KERNEL __global__`).
    Global,
}

/// Platform macros a Linux nvcc build leaves undefined, and those only an editor's code model
/// defines (`#ifdef __INTELLISENSE__ #define __CUDA_ARCH__ 520`: what Visual Studio's
/// squiggles see, never what nvcc compiles).
const NOT_DEFINED: &[&str] = &[
    "_WIN32",
    "_WIN64",
    "WIN32",
    "WIN64",
    "_MSC_VER",
    // (MSVC's debug runtime's; CMake's Debug builds on Linux pass no `-D_DEBUG`)
    "_DEBUG",
    "__APPLE__",
    "__MACH__",
    "__MINGW32__",
    "__MINGW64__",
    "__CYGWIN__",
    "__QNX__",
    "__ANDROID__",
    "__HIPCC__",
    "__HIP_PLATFORM_AMD__",
    "__HIP_PLATFORM_HCC__",
    "__clang__",
    "__CUDACC_RTC__",
    "__INTELLISENSE__",
    "__RESHARPER__",
    "__CDT_PARSER__",
    "__JETBRAINS_IDE__",
    "__clang_analyzer__",
    "Q_CREATOR_RUN",
];

/// A project's switch for a GPU platform other than CUDA (MAGMA's `MAGMA_HAVE_OPENCL`,
/// `USE_ROCM`, `GGML_USE_SYCL`): a CUDA build does not define it, so an `#if defined(...)` on
/// it is not a group cudalint cannot decide (whose first branch it would keep: MAGMA's
/// `typedef cl_mem magmaDouble_ptr`). Not HIP's: HIP also compiles for NVIDIA GPUs, and
/// HOOMD-blue's CUDA build defines `ENABLE_HIP`.
fn other_platform(name: &str) -> bool {
    const PLATFORMS: &[&str] = &["OPENCL", "ROCM", "SYCL", "MUSA"];
    name.split('_').any(|part| PLATFORMS.contains(&part))
}

/// A switch for debugging, tracing or a deprecated style (CUTLASS's
/// `CUTLASS_ENABLE_SYNCLOG`, `DEBUG_TRACE`, icl_core's `_IC_BUILDER_DEPRECATED_STYLE_`): off
/// unless the build turns it on, so its `#ifdef` is not a group cudalint cannot decide (whose
/// first branch it would keep: CUTLASS's synclog records every shared access of a GEMM's
/// mainloop to global memory, and redefines `__syncthreads`). `NDEBUG` is none of these.
fn diagnostic_switch(name: &str) -> bool {
    const SWITCHES: &[&str] = &["DEBUG", "DBG", "TRACE", "SYNCLOG", "VERBOSE", "DEPRECATED"];
    // (one that turns a warning off, CUB's `CUB_IGNORE_DEPRECATED_COMPILER`, a build may
    // well define)
    const SILENCING: &[&str] = &["IGNORE", "SUPPRESS", "DISABLE", "NO", "SILENCE"];
    name.split('_').any(|part| SWITCHES.contains(&part))
        && !name.split('_').any(|part| SILENCING.contains(&part))
}

/// The execution and memory space specifiers nvcc's own headers define.
const CUDA_KEYWORDS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__restrict__",
    "__forceinline__",
    "__noinline__",
    "__grid_constant__",
];

/// What nvcc defines when it compiles device code for sm_90 (the GPUs we measure on), and
/// what `cuda_runtime.h`, which nvcc includes implicitly, defines.
const PREDEFINED: &[(&str, &str)] = &[
    ("__CUDACC__", "1"),
    ("__NVCC__", "1"),
    ("__CUDA_ARCH__", "900"),
    ("__CUDACC_VER_MAJOR__", "13"),
    ("__CUDACC_VER_MINOR__", "0"),
    ("CUDART_VERSION", "13000"),
    ("__cplusplus", "201703L"),
    ("__linux__", "1"),
    ("__GNUC__", "12"),
];

impl Defines {
    /// `NAME` or `NAME=VALUE`, as `-D` takes it (a bare name is defined as 1); `!NAME`
    /// undefines, as `-U NAME`.
    pub fn insert_flag(&mut self, flag: &str) -> Result<(), String> {
        if let Some(name) = flag.strip_prefix('!') {
            return self.undefine(name);
        }
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (flag.trim(), "1"),
        };
        if !valid_name(name) {
            return Err(format!(
                "`{flag}` is not a macro definition (expected NAME or NAME=VALUE)"
            ));
        }
        self.undefined.remove(name);
        self.user.insert(name.to_string(), value.to_string());
        Ok(())
    }

    /// `NAME`, as `-U` takes it.
    pub fn undefine(&mut self, name: &str) -> Result<(), String> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(format!("`{name}` is not a macro name"));
        }
        self.user.remove(name);
        self.undefined.insert(name.to_string());
        Ok(())
    }

    /// Whether `name` is defined before the file's own directives: `None` when nothing says.
    pub fn is_defined(&self, name: &str) -> Option<bool> {
        if self.undefined.contains(name) {
            Some(false)
        } else if self.get(name).is_some() {
            Some(true)
        } else if NOT_DEFINED.contains(&name) || other_platform(name) || diagnostic_switch(name) {
            Some(false)
        } else {
            None
        }
    }

    /// Declares `name` a declaration-specifier macro. CUDA's own keywords are left alone: a
    /// header that defines `__global__` (warp's `cuda_crt.h`, for a bare clang build; a
    /// host-only `#define __device__`) is in a branch nvcc never reads, and taking it would
    /// strip every kernel of the program of its `__global__`.
    pub fn insert_specifier(&mut self, name: &str, what: Specifier) {
        if CUDA_KEYWORDS.contains(&name) {
            return;
        }
        self.specifiers.insert(name.to_string(), what);
    }

    /// Records what the header included as `#include "spelled"` leaves defined.
    pub fn insert_included(&mut self, spelled: &str, macros: Vec<(String, HeaderMacro)>) {
        self.included.insert(spelled.to_string(), macros);
    }

    /// What the header included as `#include "spelled"` leaves defined, if it was read.
    pub fn included(&self, spelled: &str) -> Option<&[(String, HeaderMacro)]> {
        self.included.get(spelled).map(Vec::as_slice)
    }

    /// The declaration-specifier macros, in name order.
    pub fn specifiers(&self) -> impl Iterator<Item = (&str, Specifier)> {
        self.specifiers.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// The user's definitions, in name order.
    pub fn user(&self) -> impl Iterator<Item = (&str, &str)> {
        self.user.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Every name these define or undefine.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.user.keys().chain(&self.undefined).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.user.is_empty() && self.undefined.is_empty()
    }

    /// `other`'s definitions over these.
    pub fn overlay(&self, other: &Defines) -> Defines {
        let mut d = self.clone();
        d.specifiers
            .extend(other.specifiers.iter().map(|(k, v)| (k.clone(), *v)));
        d.included
            .extend(other.included.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in &other.user {
            d.undefined.remove(k);
            d.user.insert(k.clone(), v.clone());
        }
        for k in &other.undefined {
            d.user.remove(k);
            d.undefined.insert(k.clone());
        }
        d
    }

    /// The user's definitions whose value is an integer constant expression, evaluated: the
    /// analysis reads them where the file itself does not define the name.
    pub fn integer_values(&self) -> Vec<(String, i64)> {
        let local = std::collections::HashMap::new();
        let scope = condition::Scope {
            local: &local,
            defines: self,
        };
        self.user
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), condition::value(v, &scope)?)))
            .collect()
    }

    /// The replacement text of `name`: the user's, else nvcc's predefined one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.user
            .get(name)
            .map(String::as_str)
            .or_else(|| PREDEFINED.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
    }
}

fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What the file's own directives have made of a name so far.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MacroState {
    Object(String),
    Function,
    /// Assumed defined, value unknown: an `#ifdef` on it was kept on a guess.
    Defined,
    Undefined,
}

/// Every rewrite, in order: branch selection, then the syntax the grammar lacks. (A rewrite
/// that trips a bug leaves the text as written: the parser reports what it cannot read.)
pub fn prepare<'a>(src: &'a str, defines: &Defines) -> Cow<'a, str> {
    crate::contained(|| prepare_all(src, defines)).unwrap_or(Cow::Borrowed(src))
}

fn prepare_all<'a>(src: &'a str, defines: &Defines) -> Cow<'a, str> {
    let unwrapped = unwrap_raw_string_file(src);
    let uncommented = match blank_directive_comments(&unwrapped) {
        Cow::Borrowed(_) => unwrapped,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let uncommented = match blank_null_directives(&uncommented) {
        Cow::Borrowed(_) => uncommented,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let uncommented = match blank_string_macros(&uncommented) {
        Cow::Borrowed(_) => uncommented,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let selected = match select_branches(&uncommented, defines) {
        Cow::Borrowed(_) => uncommented,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let aligned = match blank_unknown_syntax(&selected) {
        Cow::Borrowed(_) => selected,
        Cow::Owned(s) => Cow::Owned(s),
    };
    let blanked = match syntax_macros::blank(&aligned, &defines.specifiers) {
        Cow::Borrowed(_) => aligned,
        Cow::Owned(s) => Cow::Owned(s),
    };
    match empty_define_bodies(&blanked) {
        Cow::Borrowed(_) => blanked,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// A file that is one raw string literal, `R"===(` first and `)==="` last, is the source of a
/// kernel compiled at run time with NVRTC, pasted into a host file's string by
/// `#include` (xmrig's `CryptonightR.cu`): what is inside is CUDA, as NVRTC reads it, so the
/// two delimiters are blanked.
fn unwrap_raw_string_file(src: &str) -> Cow<'_, str> {
    let start = src.len() - src.trim_start().len();
    let rest = &src[start..];
    let Some(open) = rest.strip_prefix("R\"") else {
        return Cow::Borrowed(src);
    };
    let Some(paren) = open.find('(').filter(|&p| p <= 16) else {
        return Cow::Borrowed(src);
    };
    let delim = &open[..paren];
    if delim
        .bytes()
        .any(|c| c.is_ascii_whitespace() || matches!(c, b'\\' | b')'))
    {
        return Cow::Borrowed(src);
    }
    let close = format!("){delim}\"");
    let body_end = src.trim_end().trim_end_matches(';').trim_end().len();
    let Some(close_at) = src[..body_end].strip_suffix(close.as_str()).map(str::len) else {
        return Cow::Borrowed(src);
    };
    let open_end = start + 2 + paren + 1;
    if close_at < open_end {
        return Cow::Borrowed(src);
    }
    let mut bytes = src.as_bytes().to_vec();
    blank_range(&mut bytes, start..open_end);
    blank_range(&mut bytes, close_at..body_end);
    // pieces of one string, concatenated (`)===" R"===(`: compilers limit a literal's length)
    let reopen = format!("R\"{delim}(");
    let mut from = open_end;
    while let Some(at) = src[from..close_at].find(close.as_str()).map(|p| from + p) {
        let after = at + close.len();
        let next = after + (src[after..].len() - src[after..].trim_start().len());
        if !src[next..].starts_with(reopen.as_str()) {
            from = after;
            continue;
        }
        blank_range(&mut bytes, at..next + reopen.len());
        from = next + reopen.len();
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

/// A `#define` whose body is nothing but spaces (`#define X(a) ` as written, or a body the
/// rewrites above blanked: `#define _ALIGN(x) __align__(x)`) ends its line right after the
/// name: tree-sitter-cuda skips the spaces and the newline and takes the next line for the
/// body, a kernel that follows vanishing into it. The newlines move up to the name (and the
/// backslashes of an empty continued body go), the spaces after them: every later byte keeps
/// its offset.
///
/// GNU's named variadic parameter (`#define PRINT(x, args...)`), which the grammar does not
/// take, loses its name here too: `(x,     ...)`.
fn empty_define_bodies(src: &str) -> Cow<'_, str> {
    if !src.contains("define") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut line = 0;
    while line < b.len() {
        let eol = |from: usize| {
            b[from..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| from + p)
        };
        let end = eol(line);
        if let Some(body) = define_body_start(&b[line..end]).map(|o| line + o) {
            if let Some(dots) = memchr::memmem::find(&b[line..body], b"...)").map(|o| line + o) {
                let name = b[line..dots]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                if name > 0 {
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    bytes[dots - name..dots].fill(b' ');
                }
            }
            // the logical line: physical lines joined by a trailing backslash
            let (mut seg, mut last) = (body, end);
            while last < b.len() && b[seg..last].trim_ascii_end().ends_with(b"\\") {
                seg = last + 1;
                last = eol(seg);
            }
            let empty = b[body..last]
                .iter()
                .all(|&c| c.is_ascii_whitespace() || c == b'\\');
            if empty && last < b.len() && body < last {
                let bytes = out.get_or_insert_with(|| b.to_vec());
                let newlines = b[body..=last].iter().filter(|&&c| c == b'\n').count();
                for (k, c) in bytes[body..=last].iter_mut().enumerate() {
                    *c = if k < newlines { b'\n' } else { b' ' };
                }
            }
            line = last + 1;
            continue;
        }
        line = end + 1;
    }
    match out {
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())),
        None => Cow::Borrowed(src),
    }
}

/// Where the body of a `#define` line starts: after its name and, for a function-like one,
/// its parameter list. `None` for any other line.
fn define_body_start(line: &[u8]) -> Option<usize> {
    let skip = |from: usize| {
        from + line[from..]
            .iter()
            .take_while(|c| **c == b' ' || **c == b'\t')
            .count()
    };
    let hash = skip(0);
    if line.get(hash) != Some(&b'#') {
        return None;
    }
    let kw = skip(hash + 1);
    if !line[kw..].starts_with(b"define") {
        return None;
    }
    let name = skip(kw + 6);
    if name == kw + 6 {
        return None;
    }
    let name_end = name
        + line[name..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
    if name_end == name {
        return None;
    }
    if line.get(name_end) == Some(&b'(') {
        let close = line[name_end..].iter().position(|&c| c == b')')?;
        return Some(name_end + close + 1);
    }
    Some(name_end)
}

/// A `#define`'s replacement read as declaration specifiers: every word one of C++'s and
/// CUDA's (`__host__`, `__device__`, `inline`, `static`, ...), an attribute, or a macro
/// already known as one (`#define HDI HD inline`); nothing at all counts too, and a kernel's
/// `void`. `None` for anything else.
pub fn specifier_of(body: &str, known: &dyn Fn(&str) -> Option<Specifier>) -> Option<Specifier> {
    const OTHER: &[&str] = &[
        "inline",
        "__inline__",
        "__inline",
        "static",
        "extern",
        "constexpr",
        // `#define REGISTER register` (QuEST): a storage class C++17 dropped, still accepted
        // by nvcc and meaning nothing to it
        "register",
        "__forceinline__",
        "__noinline__",
        "__forceinline",
        "virtual",
        // `#define PX_OVERRIDE override`, `PX_FINAL final` after a member function's
        // parameters: the grammar reads the words, not a macro standing for them
        "override",
        "final",
        "__stdcall",
        "__cdecl",
        "__fastcall",
        "WINAPI",
        "__grid_constant__",
        // `#define NCCL_EXTERN_C extern "C"`: a linkage, which changes nothing cudalint sees
        "\"C\"",
        "\"C++\"",
    ];
    let body = body.split("//").next().unwrap_or("");
    let body = body.split("/*").next().unwrap_or("");
    // attributes are blanked where they appear; here they only must not spoil the rest
    let mut words = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        if let Some(after) = rest
            .strip_prefix("__attribute__")
            .or_else(|| rest.strip_prefix("__declspec"))
            .or_else(|| rest.strip_prefix("__launch_bounds__"))
            .or_else(|| rest.strip_prefix("__builtin_align__"))
            .or_else(|| rest.strip_prefix("__align__"))
            // `#define CUDA_UNROLL _Pragma("unroll")` before a loop (MXNet): a pragma,
            // nothing the grammar should see
            .or_else(|| rest.strip_prefix("_Pragma"))
            .or_else(|| rest.strip_prefix("__pragma"))
        {
            let close = balanced_end(after.trim_start())?;
            rest = after.trim_start()[close..].trim_start();
            continue;
        }
        // a standard attribute (BART's `#define alloc_size(x) [[gnu::alloc_size(x)]]`, after
        // a function's parameters)
        if let Some(after) = rest.strip_prefix("[[") {
            let close = after.find("]]")?;
            rest = after[close + 2..].trim_start();
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        words.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    let mut what = Specifier::Other;
    let mut returns_void = false;
    for w in words {
        let this = match w {
            // a kernel's whole head, return type too (RAFT's `#define RAFT_KERNEL static
            // __global__ void`): a kernel returns nothing, so the word goes with the rest and
            // the grammar reads a function without a return type
            "void" => {
                returns_void = true;
                continue;
            }
            "__global__" => Specifier::Global,
            "__device__" => Specifier::Device,
            "__host__" => Specifier::Other,
            "__restrict__" | "__restrict" | "restrict" => Specifier::Restrict,
            "struct" | "class" => Specifier::Tag,
            w if OTHER.contains(&w) => Specifier::Other,
            // a namespace to qualify the next name with (FBGEMM's `#define
            // FBGEMM_GPU_CUB_NS_PREFIX fbgemm_gpu::` before `cub::DeviceScan`), which the
            // analysis does not model: the name alone is what it looks up
            w if namespace_prefix(w) => Specifier::Other,
            w => known(w)?,
        };
        what = what.max(this);
    }
    // (`void` with anything but `__global__` may be a type in a declaration: `#define V void`)
    (!returns_void || what == Specifier::Global).then_some(what)
}

/// `ns::`, `::ns::inner::`: names ending in `::`, nothing else.
fn namespace_prefix(w: &str) -> bool {
    let Some(body) = w.strip_suffix("::") else {
        return false;
    };
    let body = body.strip_prefix("::").unwrap_or(body);
    !body.is_empty()
        && body.split("::").all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// What a function-like macro stands for, given the text after its name's `(` (`a, decl)
/// decl __attribute__((aligned(a)))`): an alignment or a wrapped declaration when its body,
/// alignment attributes aside, is one of its parameters or nothing, else what
/// [`specifier_of`] makes of the body.
pub fn call_specifier_of(
    after_open: &str,
    known: &dyn Fn(&str) -> Option<Specifier>,
) -> Option<Specifier> {
    let close = after_open.find(')')?;
    let params: Vec<&str> = after_open[..close].split(',').map(str::trim).collect();
    let body = &after_open[close + 1..];
    let body = body.split("//").next().unwrap_or("");
    let body = body.split("/*").next().unwrap_or("").trim();
    let index = |w: &str| {
        let w = w
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        params
            .iter()
            .position(|p| !p.is_empty() && *p == w)
            .and_then(|i| u8::try_from(i).ok())
    };
    let mut align = None;
    let mut words = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        if let Some((arg, after)) = alignment_attribute(rest) {
            if let Some(i) = arg.and_then(index) {
                align = Some(i);
            }
            rest = after.trim_start();
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        words.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    match (words.as_slice(), align) {
        ([w], _) if index(w).is_some() => Some(Specifier::Wrap {
            keep: index(w)?,
            align,
        }),
        ([], Some(a)) => Some(Specifier::Align(a)),
        _ => specifier_of(body, known),
    }
}

/// An attribute at the start of `s` (`__attribute__((aligned(a)))`, `__declspec(align(a))`,
/// `__align__(a)`, `alignas(a)`): the alignment it names, if it is one, and the text after it.
fn alignment_attribute(s: &str) -> Option<(Option<&str>, &str)> {
    const DIRECT: &[&str] = &[
        "__align__",
        "alignas",
        "__CUDA_ALIGN__",
        "__builtin_align__",
    ];
    const NESTED: &[&str] = &["__attribute__", "__declspec"];
    let word = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(s, |e| &s[..e]);
    let direct = DIRECT.contains(&word);
    if !direct && !NESTED.contains(&word) {
        return None;
    }
    let after = s[word.len()..].trim_start();
    let len = balanced_end(after)?;
    let group = &after[1..len - 1];
    let arg = if direct {
        Some(group)
    } else {
        ["aligned", "align"].iter().find_map(|k| {
            let at = group.find(k)?;
            let inner = group[at + k.len()..].trim_start();
            let end = balanced_end(inner)?;
            Some(&inner[1..end - 1])
        })
    };
    Some((arg, &after[len..]))
}

/// The length of a balanced `( ... )` at the start of `s`.
pub(crate) fn balanced_end(s: &str) -> Option<usize> {
    if !s.starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Replaces every byte of `range` but newlines with a space. Only ever called on ranges that
/// start and end on character boundaries, and every byte of a multi-byte character becomes
/// a space, so the text stays UTF-8 and its length does not change.
/// Where the string or character literal whose opening quote is at `quote_at` ends: its
/// closing quote, or the end of the line or text when it has none.
pub(crate) fn literal_end(b: &[u8], quote_at: usize) -> usize {
    let q = b[quote_at];
    let mut i = quote_at + 1;
    while i < b.len() && b[i] != q && b[i] != b'\n' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i
}

pub(crate) fn blank_range(bytes: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut bytes[range] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// [`blank_range`], keeping line continuations too: a macro blanked in a `#define`'s body
/// must not end the directive early.
fn blank_in_directive(bytes: &mut [u8], range: std::ops::Range<usize>) {
    for i in range {
        let continuation = bytes[i] == b'\\'
            && matches!(
                bytes.get(i + 1..(i + 3).min(bytes.len())),
                Some([b'\n', ..] | [b'\r', b'\n'])
            );
        if bytes[i] != b'\n' && bytes[i] != b'\r' && !continuation {
            bytes[i] = b' ';
        }
    }
}

/// Blank the block comments of preprocessor directives: tree-sitter-cuda ends a `#define`
/// continued over several lines at a `/* ... */` inside it, and the rest of the file (kernels
/// and all) parses as errors. A comment's line continuations are kept, as the preprocessor
/// splices lines before it removes comments.
pub fn blank_directive_comments(src: &str) -> Cow<'_, str> {
    if !src.contains("/*") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    let mut line_start = true;
    let mut in_directive = false;
    while i < b.len() {
        let c = b[i];
        if line_start {
            let first = b[i..].iter().position(|c| *c != b' ' && *c != b'\t');
            in_directive = in_directive || first.is_some_and(|k| b[i + k] == b'#');
            line_start = false;
        }
        match c {
            b'\n' => {
                let continued =
                    i > 0 && b[i - 1] == b'\\' || i > 1 && b[i - 1] == b'\r' && b[i - 2] == b'\\';
                in_directive = in_directive && continued;
                line_start = true;
                i += 1;
            }
            b'"' | b'\'' => {
                // past the closing quote; an unclosed literal ends at its line's end
                let e = literal_end(b, i);
                i = if b.get(e) == Some(&b'\n') { e } else { e + 1 };
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                // a line comment runs to the end of the line (and past it, continued)
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                if in_directive {
                    let bytes = out.get_or_insert_with(|| b.to_vec());
                    for k in i..end {
                        let keep = b[k] == b'\n'
                            || b[k] == b'\r'
                            || b[k] == b'\\' && matches!(b.get(k + 1), Some(b'\n' | b'\r'));
                        if !keep {
                            bytes[k] = b' ';
                        }
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    match out {
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string())),
        None => Cow::Borrowed(src),
    }
}

/// A line holding only `#` is the null directive, which does nothing (kurtosis'
/// `StoreElement.h`); the grammar has no rule for it, so it is blanked.
fn blank_null_directives(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\r');
    let nulls: Vec<usize> = src
        .match_indices('#')
        .map(|(i, _)| i)
        .filter(|&i| {
            let line_start = b[..i]
                .iter()
                .rposition(|c| *c == b'\n')
                .map_or(0, |p| p + 1);
            let line_end = b[i + 1..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |p| i + 1 + p);
            b[line_start..i].iter().all(blank) && b[i + 1..line_end].iter().all(blank)
        })
        .collect();
    if nulls.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut bytes = b.to_vec();
    for i in nulls {
        bytes[i] = b' ';
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

/// A macro between two string literals stands for a string joined to them (`"@p
/// cp.async.cg.shared.global" L2_CACHEHINT(128) " [%1], [%2], %3;"` in an `asm` template,
/// `"%" PRIu64 "\n"`): the grammar takes no call there, and the template's text around it
/// is what cudalint reads, so the macro (with its arguments) is blanked.
fn blank_string_macros(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let skip_space = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut found: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i += b[i..]
                    .iter()
                    .position(|c| *c == b'\n')
                    .unwrap_or(b.len() - i);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            b'\'' => i = literal_end(b, i) + 1,
            b'"' => {
                let open = i;
                i = literal_end(b, i) + 1;
                let start = skip_space(i);
                if start == i
                    || !b
                        .get(start)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                {
                    continue;
                }
                // a directive's literal (`#include "x.h"`) ends with its line: the word on the
                // next (`extern "C" int f();`) is no macro between two literals
                let line_start = b[..open]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                if b[i..start].contains(&b'\n')
                    && b[line_start..open].trim_ascii_start().starts_with(b"#")
                {
                    continue;
                }
                // one or more macros in a row (`" cp.async" PFX HINT(128) " [%1]"`)
                let (mut end, mut after) = (start, start);
                while b
                    .get(after)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                {
                    let mut e = after;
                    while e < b.len() && word(b[e]) {
                        e += 1;
                    }
                    let mut next = skip_space(e);
                    if b.get(next) == Some(&b'(') {
                        let Some(len) = balanced_end(&src[next..]) else {
                            break;
                        };
                        e = next + len;
                        next = skip_space(e);
                    } else if next == e && b.get(next) == Some(&b'"') {
                        // `"a" L"b"`: a prefix of the next literal, not a macro
                        break;
                    }
                    end = e;
                    after = next;
                }
                if end > start && b.get(after) == Some(&b'"') {
                    found.push(start..end);
                    i = after;
                }
            }
            _ => i += 1,
        }
    }
    if found.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut bytes = b.to_vec();
    for r in found {
        blank_in_directive(&mut bytes, r);
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

#[cfg(test)]
mod directive_comment_tests {
    #[test]
    fn macros_joined_to_string_literals_are_blanked() {
        let src = "asm(\"cp.async\" PFX HINT(128) \" [%1];\" :: \"r\"(x));\nprintf(\"%\" PRIu64 \"\\n\", v); f(\"a\", b, \"c\"); g(\"a\" L\"b\");\n";
        let out = super::blank_string_macros(src);
        assert_eq!(out.len(), src.len());
        assert!(!out.contains("HINT") && !out.contains("PFX") && !out.contains("PRIu64"));
        assert!(out.contains("\"r\"(x)") && out.contains(", b,") && out.contains("L\"b\""));
    }

    #[test]
    fn a_directive_literal_is_not_joined_to_the_next_line() {
        let src =
            "#include \"x.h\"\nextern \"C\" int f(int);\n#define S \"a\"\nextern \"C\" int g();\n";
        assert_eq!(super::blank_string_macros(src), src);
        let parsed = crate::parse(src).unwrap();
        assert!(parsed.model.error_regions.is_empty());
    }

    #[test]
    fn a_macro_blanked_in_a_continued_define_keeps_the_continuation() {
        let src = "#define FAIL(r) \\\n  throw E(\"at \" __FILE__ \":\" STR( \\\n    __LINE__) \": \" r)\nint x;\n";
        let out = super::blank_string_macros(src);
        assert_eq!(out.lines().count(), 4);
        assert!(out.lines().take(2).all(|l| l.ends_with('\\')), "{out}");
        let parsed = crate::parse(src).unwrap();
        assert!(parsed.model.error_regions.is_empty());
    }

    #[test]
    fn a_gnu_named_variadic_parameter_loses_its_name() {
        let src = "#define PRINT(x, args...) printf(x, ## args);\n#define V(...) f(__VA_ARGS__)\n__global__ void k(float* a) { a[threadIdx.x] = 0; }\n";
        let out = super::empty_define_bodies(src);
        assert!(
            out.starts_with("#define PRINT(x,     ...) printf(x, ## args);\n#define V(...)"),
            "{out}"
        );
        assert!(crate::parse(src).unwrap().model.error_regions.is_empty());
    }

    #[test]
    fn a_null_directive_is_blanked_and_others_kept() {
        let src = "#include <a>\n#\n  # \r\nint x; // # x\n#define H(a) #a\n";
        let out = super::blank_null_directives(src);
        assert_eq!(
            out,
            "#include <a>\n \n    \r\nint x; // # x\n#define H(a) #a\n"
        );
    }

    #[test]
    fn comments_in_continued_defines_are_blanked_and_others_kept() {
        let src = "#define C(x) \\\n  do { /* a */ \\\n  /* b \\\n c */ f(x); } while (0)\n/* kept */ int k; // \"/*\"\n#define S \"/* not a comment */\"\n";
        let out = super::blank_directive_comments(src);
        assert_eq!(out.len(), src.len());
        assert!(!out.contains("/* a */") && !out.contains("/* b"));
        assert!(out.contains("/* kept */") && out.contains("\"/* not a comment */\""));
        assert_eq!(out.matches('\\').count(), src.matches('\\').count());
        assert_eq!(out.lines().count(), src.lines().count());
    }
}

/// Blank `__align__(N)`, `__attribute__((...))` and their spellings in CUDA's own headers
/// and MSVC's (the grammar has no rule for any where CUDA code puts them: `float s[64]
/// __attribute__((aligned(1024)))`, `typedef struct __attribute__((__aligned__(8))) {...}`,
/// `typedef struct __builtin_align__(32) uint48 {...}`), and spell `__restrict` as the
/// grammar's `restrict`. A reference's (`const Group& __restrict__ group`, ginkgo's) the
/// grammar has no rule for either: it is blanked.
/// Whether the words before `at` are `struct`, `class` or `union` (CUDA's own `__x__`
/// annotations, `struct __device_builtin__ __builtin_align__(16) float4`, passed over).
pub(crate) fn declares_a_class(b: &[u8], at: usize) -> bool {
    let mut end = at;
    loop {
        while end > 0 && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
            start -= 1;
        }
        let word = &b[start..end];
        match word {
            b"struct" | b"class" | b"union" => return true,
            w if w.len() > 4 && w.starts_with(b"__") && w.ends_with(b"__") => end = start,
            _ => return false,
        }
    }
}

/// GNU's alternate keywords, which the grammar does not know (`static __device__ __const__
/// float qmap[] = {...}`), and the standard words they stand for.
const GNU_ALTERNATES: &[(&str, &str)] = &[
    ("__const__", "const"),
    ("__const", "const"),
    ("__volatile__", "volatile"),
    ("__volatile", "volatile"),
    ("__signed__", "signed"),
];

/// Writes each whole-word GNU alternate keyword of `src` as its standard word, padded with
/// spaces to the same length so that every offset stays.
fn spell_gnu_alternates(src: &str, bytes: &mut [u8]) {
    let b = src.as_bytes();
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    for (alternate, standard) in GNU_ALTERNATES {
        for (i, _) in src.match_indices(alternate) {
            let end = i + alternate.len();
            if (i > 0 && word(&b[i - 1])) || b.get(end).is_some_and(word) {
                continue;
            }
            bytes[i..end].fill(b' ');
            bytes[i..i + standard.len()].copy_from_slice(standard.as_bytes());
        }
    }
}

pub fn blank_unknown_syntax(src: &str) -> Cow<'_, str> {
    const BLANKED: &[&str] = &[
        "__align__",
        "__attribute__",
        "__builtin_align__",
        "__declspec",
        // vector_types.h's spelling of `__align__` (FasterTransformer's fp8 packs)
        "__CUDA_ALIGN__",
        // a thread-block cluster's shape, where `__launch_bounds__` goes (FlashInfer's top-k)
        "__cluster_dims__",
        // CUDA 12.4's register cap, where `__launch_bounds__` goes
        "__maxnreg__",
    ];
    let restrict = src.contains("__restrict") && {
        let b = src.as_bytes();
        src.match_indices("__restrict").any(|(i, _)| {
            !b.get(i + 10)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        })
    };
    let on_references = reference_restricts(src);
    let alternates = GNU_ALTERNATES.iter().any(|(k, _)| src.contains(k));
    let cluster_bounds = cluster_launch_bounds(src);
    if !restrict
        && !alternates
        && on_references.is_empty()
        && cluster_bounds.is_empty()
        && !BLANKED.iter().any(|k| src.contains(k))
    {
        return Cow::Borrowed(src);
    }
    let mut bytes = src.as_bytes().to_vec();
    for r in cluster_bounds {
        blank_range(&mut bytes, r);
    }
    if alternates {
        spell_gnu_alternates(src, &mut bytes);
    }
    for r in on_references {
        blank_range(&mut bytes, r);
    }
    for keyword in BLANKED {
        let mut from = 0;
        while let Some(pos) = src[from..].find(keyword) {
            let start = from + pos;
            let mut end = start + keyword.len();
            let rest = &src.as_bytes()[end..];
            let ws = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if rest.get(ws) == Some(&b'(') {
                let mut depth = 0usize;
                for (i, &b) in rest[ws..].iter().enumerate() {
                    match b {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                end += ws + i + 1;
                                break;
                            }
                        }
                        // an argument may run onto the next line (`__align__(\n alignof(...))`)
                        _ if i > 1024 => break,
                        _ => {}
                    }
                }
            }
            let word_before = start > 0 && {
                let c = src.as_bytes()[start - 1];
                c.is_ascii_alphanumeric() || c == b'_'
            };
            // (or a declaration's start, `__align__(16) float b;` in a struct: the member's)
            let declaration_start =
                *keyword == "__align__" && src[..start].trim_end().ends_with(['{', ';', '}']);
            if !word_before
                && *keyword != "__attribute__"
                && *keyword != "__declspec"
                && end > start + keyword.len()
                && (declares_a_class(src.as_bytes(), start) || declaration_start)
            {
                // `struct __align__(16) BoxCorner`: the grammar's `alignas(16)`, which the
                // struct's layout reads
                let at = start + keyword.len() - "alignas".len();
                blank_range(&mut bytes, start..at);
                bytes[at..start + keyword.len()].copy_from_slice(b"alignas");
            } else if !word_before {
                blank_range(&mut bytes, start..end);
            }
            from = end.max(start + 1);
        }
    }
    if restrict {
        let b = src.as_bytes();
        for (i, _) in src.match_indices("__restrict") {
            let whole = (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                && !b
                    .get(i + 10)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
            if whole && bytes[i] != b' ' {
                bytes[i..i + 10].copy_from_slice(b"  restrict");
            }
        }
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

/// The third argument of each `__launch_bounds__(threads, min_blocks, max_blocks_per_cluster)`
/// (CUDA 12's cluster form, FlashMLA's kernels), from its comma to the `)`: the grammar takes
/// two, and the analysis reads only the first.
fn cluster_launch_bounds(src: &str) -> Vec<std::ops::Range<usize>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    for (at, k) in src.match_indices("__launch_bounds__") {
        let open = at
            + k.len()
            + b[at + k.len()..]
                .iter()
                .take_while(|c| c.is_ascii_whitespace())
                .count();
        if b.get(open) != Some(&b'(') {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = 0;
        let mut third = None;
        for (i, &c) in b[open..].iter().enumerate().take(1024) {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Some(from) = third {
                            out.push(from..open + i);
                        }
                        break;
                    }
                }
                b',' if depth == 1 => {
                    commas += 1;
                    if commas == 2 {
                        third = Some(open + i);
                    }
                }
                b';' => break,
                _ => {}
            }
        }
    }
    out
}

/// Where a restrict qualifier follows a `&` (`T& __restrict__ r`, `T &restrict r`).
fn reference_restricts(src: &str) -> Vec<std::ops::Range<usize>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    for (i, _) in src.match_indices("restrict") {
        let mut start = i;
        while start >= 2 && &b[start - 2..start] == b"__" {
            start -= 2;
        }
        let mut end = i + "restrict".len();
        if b[end..].starts_with(b"__") {
            end += 2;
        }
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if (start > 0 && word(b[start - 1])) || b.get(end).is_some_and(|&c| word(c)) {
            continue;
        }
        let before = b[..start].iter().rev().find(|c| !c.is_ascii_whitespace());
        if before == Some(&b'&') {
            out.push(start..end);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_one_raw_string_is_read_as_the_code_inside() {
        let src = "\nR\"===(\n__global__ void k(float* a) { a[threadIdx.x * 2] = 0; }\n)===\"\nR\"===(\n__global__ void k2(float* a) { a[0] = 0; }\n)===\"\n";
        let out = unwrap_raw_string_file(src);
        assert_eq!(out.len(), src.len());
        let parsed = crate::parse(src).unwrap();
        assert!(parsed.model.error_regions.is_empty());
        assert_eq!(parsed.model.functions.len(), 2);
        // a raw string among other code is a string, and a file that only starts with one
        // is left alone
        for other in [
            "const char* s = R\"(x)\";\n__global__ void k() {}\n",
            "R\"(x)\" __global__ void k() {}\n",
        ] {
            assert!(matches!(unwrap_raw_string_file(other), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn an_empty_define_body_does_not_take_the_next_line() {
        let src = "#define X    \n__global__ void k(float* a) { a[0] = 1; }\n#define Y(a) \\\n  \n__global__ void k2(float* a) { a[0] = 1; }\n#define Z(a) f(a) \n#define W\n";
        let out = empty_define_bodies(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(
            out,
            "#define X\n    __global__ void k(float* a) { a[0] = 1; }\n#define Y(a)\n\n    __global__ void k2(float* a) { a[0] = 1; }\n#define Z(a) f(a) \n#define W\n"
        );
        let parsed = crate::parse(src).unwrap();
        assert_eq!(parsed.model.functions.len(), 2);
    }

    #[test]
    fn spells_a_struct_alignment_as_alignas_keeping_length() {
        // the grammar's `alignas(16)`, which the struct's layout reads; elsewhere blanked
        let src = "struct __align__(16) P { float x; };";
        let out = blank_unknown_syntax(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out, "struct   alignas(16) P { float x; };");
        // a member's own
        assert_eq!(
            blank_unknown_syntax("struct P { float a; __align__(16) float b; };"),
            "struct P { float a;   alignas(16) float b; };"
        );
        let src = "typedef struct __CUDA_ALIGN__(32) { float a[8]; } fp8_8_t;";
        assert_eq!(
            blank_unknown_syntax(src),
            "typedef struct        alignas(32) { float a[8]; } fp8_8_t;"
        );
        let src = "struct __device_builtin__ __builtin_align__(16) f4 { float x, y, z, w; };";
        assert!(blank_unknown_syntax(src).contains("  alignas(16) f4"));
        let src = "__shared__ __align__(16) float s[64];";
        assert_eq!(
            blank_unknown_syntax(src),
            "__shared__               float s[64];"
        );
        let mut p = tree_sitter::Parser::new();
        p.set_language(&crate::language()).unwrap();
        for src in [
            "struct __align__(16) P { float x; };",
            "typedef struct __CUDA_ALIGN__(32) { float a[8]; } fp8_8_t;",
        ] {
            let out = blank_unknown_syntax(src);
            assert!(
                !p.parse(out.as_bytes(), None)
                    .unwrap()
                    .root_node()
                    .has_error(),
                "{out}"
            );
        }
    }

    #[test]
    fn a_restrict_reference_loses_the_qualifier_the_grammar_cannot_read() {
        let src = "template <typename G>\n__device__ void r(const G& __restrict__ g, int &__restrict n, float* __restrict__ d, bool& restrict s) { d[g.thread_rank()] = n; }\n__global__ void k(float* a) { a[threadIdx.x] = 0; }";
        let out = blank_unknown_syntax(src);
        assert_eq!(out.len(), src.len());
        assert!(out.contains("const G&              g, int &           n, float* __restrict__ d, bool&          s"), "{out}");
        let parsed = crate::parse(src).unwrap();
        assert!(
            parsed.model.error_regions.is_empty(),
            "{:?}",
            parsed.model.error_regions
        );
        assert_eq!(parsed.model.functions.len(), 2);
    }

    #[test]
    fn blanks_attributes_and_spells_restrict() {
        let src = "unsigned short a[64] __attribute__((aligned(1024)));\nvoid f(const float* __restrict p, float* __restrict__ q);";
        let out = blank_unknown_syntax(src);
        assert_eq!(
            out,
            "unsigned short a[64]                               ;\nvoid f(const float*   restrict p, float* __restrict__ q);"
        );
    }
}
