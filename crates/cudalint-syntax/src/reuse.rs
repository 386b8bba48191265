//! Lowering again only the top-level items an edit touched. Lowering a whole file is most of
//! the time a keystroke costs in an editor (a 3,000-line file: about 7 ms of 9), and an item
//! whose text the edit did not touch lowers to what it lowered to before, moved by the bytes
//! the edit added or removed before it.
//!
//! The model is flat lists (functions, structs, ...); each top-level item lowers to a run of
//! consecutive elements in each list. A [`Piece`] records how many, so the elements of an
//! unchanged item can be moved from the previous model into the new one.

use crate::model::*;
use crate::shift::Shift;
use std::collections::HashMap;
use tree_sitter::InputEdit;

/// How many elements of each list of the model one top-level item lowered to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    functions: usize,
    structs: usize,
    typedefs: usize,
    defines: usize,
    globals: usize,
    launches: usize,
    instantiations: usize,
    stray_errors: usize,
    includes: usize,
}

impl Counts {
    pub(crate) fn of(m: &FileModel) -> Counts {
        let FileModel {
            functions,
            structs,
            typedefs,
            defines,
            globals,
            launches,
            instantiations,
            stray_errors,
            includes,
            // computed from the whole tree after lowering, not per item
            error_regions: _,
            type_names: _,
            struct_names: _,
        } = m;
        Counts {
            functions: functions.len(),
            structs: structs.len(),
            typedefs: typedefs.len(),
            defines: defines.len(),
            globals: globals.len(),
            launches: launches.len(),
            instantiations: instantiations.len(),
            stray_errors: stray_errors.len(),
            includes: includes.len(),
        }
    }

    pub(crate) fn since(self, before: Counts) -> Counts {
        Counts {
            functions: self.functions - before.functions,
            structs: self.structs - before.structs,
            typedefs: self.typedefs - before.typedefs,
            defines: self.defines - before.defines,
            globals: self.globals - before.globals,
            launches: self.launches - before.launches,
            instantiations: self.instantiations - before.instantiations,
            stray_errors: self.stray_errors - before.stray_errors,
            includes: self.includes - before.includes,
        }
    }

    fn plus(self, o: Counts) -> Counts {
        Counts {
            functions: self.functions + o.functions,
            structs: self.structs + o.structs,
            typedefs: self.typedefs + o.typedefs,
            defines: self.defines + o.defines,
            globals: self.globals + o.globals,
            launches: self.launches + o.launches,
            instantiations: self.instantiations + o.instantiations,
            stray_errors: self.stray_errors + o.stray_errors,
            includes: self.includes + o.includes,
        }
    }
}

/// A top-level item (a function, a declaration, a `#define`, ...) as lowered: the node it
/// came from, where it may be reused, and what it lowered to.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    /// The node's kind id and byte range; `None` for what is never reused (parse errors).
    pub item: Option<Item>,
    pub counts: Counts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Item {
    pub kind: u16,
    pub start: usize,
    pub end: usize,
}

impl Item {
    /// A node that may be reused, or lowered and then reused by a later edit: one without
    /// parse errors, whose lowering depends on nothing but its own text and position.
    pub fn of(n: tree_sitter::Node) -> Option<Item> {
        (!n.has_error()).then(|| Item {
            kind: n.kind_id(),
            start: n.start_byte(),
            end: n.end_byte(),
        })
    }
}

/// The previous model's lists, each element taken at most once.
struct Taken {
    functions: Vec<Option<Function>>,
    structs: Vec<Option<StructDef>>,
    typedefs: Vec<Option<Typedef>>,
    defines: Vec<Option<Define>>,
    globals: Vec<Option<Decl>>,
    launches: Vec<Option<Launch>>,
    instantiations: Vec<Option<Instantiation>>,
    stray_errors: Vec<Option<Span>>,
    includes: Vec<Option<String>>,
}

fn optional<T>(v: Vec<T>) -> Vec<Option<T>> {
    v.into_iter().map(Some).collect()
}

/// Moves `n` elements from `from[at..]` to the end of `to`, each shifted by `by`.
fn move_run<T: Shift>(from: &mut [Option<T>], at: usize, n: usize, by: i64, to: &mut Vec<T>) {
    for slot in &mut from[at..at + n] {
        if let Some(mut x) = slot.take() {
            if by != 0 {
                x.shift(by);
            }
            to.push(x);
        }
    }
}

/// What the previous lowering leaves to this one: its unchanged items, found by where they
/// are in the new text.
pub(crate) struct Reuse {
    old: Taken,
    /// Where each old piece's elements start in the old lists.
    starts: Vec<Counts>,
    pieces: Vec<Piece>,
    /// Old pieces outside the edit, by their item in the new text, with the shift that gets
    /// them there.
    unchanged: HashMap<Item, (usize, i64)>,
}

impl Reuse {
    pub fn new(model: FileModel, pieces: Vec<Piece>, edit: &InputEdit) -> Reuse {
        let delta = edit.new_end_byte as i64 - edit.old_end_byte as i64;
        let mut starts = Vec::with_capacity(pieces.len());
        let mut at = Counts::default();
        let mut unchanged = HashMap::new();
        for (i, p) in pieces.iter().enumerate() {
            starts.push(at);
            at = at.plus(p.counts);
            let Some(item) = p.item else { continue };
            // the old text before the edit's start is the new text's, and so is the old text
            // from its old end on, moved by `delta`
            if item.end <= edit.start_byte {
                unchanged.insert(item, (i, 0));
            } else if item.start >= edit.old_end_byte {
                let moved = Item {
                    start: (item.start as i64 + delta) as usize,
                    end: (item.end as i64 + delta) as usize,
                    ..item
                };
                unchanged.insert(moved, (i, delta));
            }
        }
        let FileModel {
            functions,
            structs,
            typedefs,
            defines,
            globals,
            launches,
            instantiations,
            stray_errors,
            includes,
            error_regions: _,
            type_names: _,
            struct_names: _,
        } = model;
        Reuse {
            old: Taken {
                functions: optional(functions),
                structs: optional(structs),
                typedefs: optional(typedefs),
                defines: optional(defines),
                globals: optional(globals),
                launches: optional(launches),
                instantiations: optional(instantiations),
                stray_errors: optional(stray_errors),
                includes: optional(includes),
            },
            starts,
            pieces,
            unchanged,
        }
    }

    /// Appends the previous lowering of `item` to `model`, if the edit left it unchanged.
    pub fn take(&mut self, item: Item, model: &mut FileModel) -> bool {
        let Some((i, by)) = self.unchanged.remove(&item) else {
            return false;
        };
        let (s, n) = (self.starts[i], self.pieces[i].counts);
        let old = &mut self.old;
        let first_fn = model.functions.len();
        let first_launch = model.launches.len();
        move_run(
            &mut old.functions,
            s.functions,
            n.functions,
            by,
            &mut model.functions,
        );
        move_run(
            &mut old.structs,
            s.structs,
            n.structs,
            by,
            &mut model.structs,
        );
        move_run(
            &mut old.typedefs,
            s.typedefs,
            n.typedefs,
            by,
            &mut model.typedefs,
        );
        move_run(
            &mut old.defines,
            s.defines,
            n.defines,
            by,
            &mut model.defines,
        );
        move_run(
            &mut old.globals,
            s.globals,
            n.globals,
            by,
            &mut model.globals,
        );
        move_run(
            &mut old.launches,
            s.launches,
            n.launches,
            by,
            &mut model.launches,
        );
        move_run(
            &mut old.instantiations,
            s.instantiations,
            n.instantiations,
            by,
            &mut model.instantiations,
        );
        move_run(
            &mut old.stray_errors,
            s.stray_errors,
            n.stray_errors,
            by,
            &mut model.stray_errors,
        );
        move_run(
            &mut old.includes,
            s.includes,
            n.includes,
            by,
            &mut model.includes,
        );
        // a launch names the function it is in by index: the item's functions moved
        for l in &mut model.launches[first_launch..] {
            l.host_fn = l
                .host_fn
                .and_then(|f| f.checked_sub(s.functions))
                .filter(|&f| f < n.functions)
                .map(|f| f + first_fn);
        }
        true
    }
}
