//! Type lookups by name, remembered for the run. A kernel's analysis asks the same few names
//! (`T`, `value_type`, a struct's typedefs) thousands of times, and each lookup asks every file
//! the kernel sees: a header-heavy program (k2's host code through a hundred headers) spent a
//! third of its check there. The answers depend only on the name and on the file whose view
//! is asked, never on the run's state, so they are kept per (file, name).

use super::KernelRun;
use crate::types;
use cudalint_syntax::TypeRef;
use std::cell::RefCell;

type PerFile<V> = RefCell<crate::HashMap<usize, crate::HashMap<Box<str>, V>>>;

#[derive(Default)]
pub(super) struct TypeMemo {
    typedefs: PerFile<Option<TypeRef>>,
    nested: PerFile<Option<Nested>>,
    structs: PerFile<bool>,
    instances: PerFile<Option<Instance>>,
    members: PerFile<std::rc::Rc<super::place::MemberLayout>>,
}

/// A struct definition's name and its template parameters bound to a type's arguments.
pub(super) type Instance = (String, Vec<(String, String)>);

/// What a name means inside a struct's member function: a struct the owner nests, or a type
/// the owner declares (`typedef T value_type;`).
#[derive(Clone)]
pub(super) enum Nested {
    Struct(Box<str>),
    Typedef(TypeRef),
}

fn remembered<V: Clone>(
    memo: &PerFile<V>,
    file: usize,
    name: &str,
    compute: impl FnOnce() -> V,
) -> V {
    if let Some(v) = memo.borrow().get(&file).and_then(|m| m.get(name)) {
        return v.clone();
    }
    let v = compute();
    memo.borrow_mut()
        .entry(file)
        .or_default()
        .insert(name.into(), v.clone());
    v
}

impl KernelRun<'_> {
    /// [`types::typedef_of`] in the current file's view.
    pub(super) fn typedef_of(&self, name: &str) -> Option<TypeRef> {
        remembered(&self.type_memo.typedefs, self.file(), name, || {
            types::typedef_of(name, self.types()).map(|t| t.into_owned())
        })
    }

    /// [`types::is_struct`] in the current file's view.
    pub(super) fn is_struct(&self, name: &str) -> bool {
        remembered(&self.type_memo.structs, self.file(), name, || {
            types::is_struct(name, self.types())
        })
    }

    /// [`Self::struct_instance_scan`], remembered by the type's name and arguments.
    pub(super) fn struct_instance_of(&self, base: &str, args: &[String]) -> Option<Instance> {
        let mut key = String::from(base);
        for a in args {
            key.push('\u{1f}');
            key.push_str(a);
        }
        remembered(&self.type_memo.instances, self.file(), &key, || {
            self.struct_instance_scan(base, args)
        })
    }

    /// [`types::through_typedefs`] in the current file's view.
    pub(super) fn typedef_chain_end(&self, name: &str) -> String {
        types::follow_typedefs(name, |n| self.typedef_of(n))
    }

    /// A member's layout (keyed by [`Self::frame_types_key`] among the rest), remembered.
    pub(super) fn remembered_member(
        &self,
        key: &str,
        compute: impl FnOnce() -> std::rc::Rc<super::place::MemberLayout>,
    ) -> std::rc::Rc<super::place::MemberLayout> {
        remembered(&self.type_memo.members, self.file(), key, compute)
    }

    /// What a type's meaning depends on in the current frame beyond the file's view: its
    /// owner and template arguments, spelled; None where an argument is a value not known
    /// (a lookup under it is not remembered).
    pub(super) fn frame_types_key(&self) -> Option<String> {
        use std::fmt::Write;
        let Some(fr) = self.frames.last() else {
            return Some(String::new());
        };
        let mut key = fr.owner.clone().unwrap_or_default();
        for (name, arg) in &fr.template {
            match arg {
                super::TArg::Type(t) => {
                    let _ = write!(
                        key,
                        "\u{1e}{name}:{}*{}{}",
                        t.name, t.pointer_depth, t.is_const
                    );
                }
                super::TArg::Val(super::Val::Int(v)) => {
                    let _ = write!(key, "\u{1e}{name}={}", v.as_const()?);
                }
                super::TArg::Val(_) => return None,
            }
        }
        Some(key)
    }

    /// `name` as a type `owner` (a struct's name, its template arguments off) nests or declares.
    pub(super) fn nested_type(&self, owner: &str, name: &str) -> Option<Nested> {
        let nested = format!("{owner}::{name}");
        remembered(&self.type_memo.nested, self.file(), &nested, || {
            let files = self.types();
            if files
                .iter()
                .any(|f| f.structs.iter().any(|s| s.name == nested))
            {
                return Some(Nested::Struct(nested.as_str().into()));
            }
            files
                .iter()
                .find_map(|f| {
                    f.typedefs
                        .iter()
                        .find(|t| t.name == nested && t.ty.name != name)
                })
                .map(|t| Nested::Typedef(t.ty.clone()))
        })
    }
}
