//! Byte-offset-preserving rewrites applied before parsing: what the grammar cannot follow
//! (the dead branches of `#if` groups, `__align__`, macros used as syntax) is blanked to
//! spaces of the same length, newlines kept, so every span and line still points into the
//! file as the user wrote it.

mod condition;
mod conditional;
mod grammar_gaps;
mod syntax_macros;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub use conditional::select_branches;

/// Macros defined before any file is read: `-D` flags and cudalint.toml `defines`, over what
/// nvcc predefines for a device compilation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Defines {
    user: BTreeMap<String, String>,
    /// `-U` flags and cudalint.toml `undefines`: names the build does not define.
    undefined: BTreeSet<String>,
}

/// Platform macros a Linux nvcc build leaves undefined.
const NOT_DEFINED: &[&str] = &[
    "_WIN32",
    "_WIN64",
    "WIN32",
    "WIN64",
    "_MSC_VER",
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
        } else if NOT_DEFINED.contains(&name) {
            Some(false)
        } else {
            None
        }
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

/// Every rewrite, in order: branch selection, then the syntax the grammar lacks.
pub fn prepare<'a>(src: &'a str, defines: &Defines) -> Cow<'a, str> {
    let selected = select_branches(src, defines);
    let aligned = match blank_unknown_syntax(&selected) {
        Cow::Borrowed(_) => selected,
        Cow::Owned(s) => Cow::Owned(s),
    };
    match syntax_macros::blank(&aligned) {
        Cow::Borrowed(_) => aligned,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// Replaces every byte of `range` but newlines with a space. Only ever called on ranges that
/// start and end on character boundaries, and every byte of a multi-byte character becomes
/// a space, so the text stays UTF-8 and its length does not change.
pub(crate) fn blank_range(bytes: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut bytes[range] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// Blank `__align__(N)` (the grammar has no rule for it).
pub fn blank_unknown_syntax(src: &str) -> Cow<'_, str> {
    const KEYWORD: &str = "__align__";
    if !src.contains(KEYWORD) {
        return Cow::Borrowed(src);
    }
    let mut bytes = src.as_bytes().to_vec();
    let mut from = 0;
    while let Some(pos) = src[from..].find(KEYWORD) {
        let start = from + pos;
        let mut end = start + KEYWORD.len();
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
                    b'\n' => break,
                    _ => {}
                }
            }
        }
        blank_range(&mut bytes, start..end);
        from = end.max(start + 1);
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_align_keeping_length() {
        let src = "struct __align__(16) P { float x; };";
        let out = blank_unknown_syntax(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out, "struct               P { float x; };");
    }
}
