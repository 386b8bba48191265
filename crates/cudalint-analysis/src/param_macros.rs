//! Functions whose parameter list is one object-like macro (gpu4pyscf's
//! `rys_vjk_ip1_1111(JKMATRIX_KERNEL_ARGS)`, the macro in a header every generated file
//! includes): the parser sees no parameters, so the run writes in those of the macro's
//! replacement, as the preprocessor does, before anything reads the functions.

use cudalint_syntax::{FileModel, Param};
use std::collections::HashMap;

/// For each file with such a function whose macro the run defines, a copy of its model with
/// the parameters written in; `None` for a file with nothing to change. The macro is taken
/// from the file itself, else from the file whose path shares the most with its own (in a
/// corpus of many programs, the nearest header of that name).
pub fn expand(models: &[&FileModel], paths: &[&str]) -> Vec<Option<FileModel>> {
    let mut defs: HashMap<&str, Vec<(usize, &[Param])>> = HashMap::new();
    for (fi, m) in models.iter().enumerate() {
        for d in &m.defines {
            if let Some(p) = &d.as_params {
                defs.entry(d.name.as_str()).or_default().push((fi, p));
            }
        }
    }
    models
        .iter()
        .enumerate()
        .map(|(fi, m)| {
            let wanted = |f: &cudalint_syntax::Function| {
                f.param_macro
                    .as_ref()
                    .is_some_and(|(_, n)| defs.contains_key(n.as_str()))
            };
            if defs.is_empty() || !m.functions.iter().any(wanted) {
                return None;
            }
            let mut copy = (*m).clone();
            for f in copy.functions.iter_mut().filter(|f| wanted(f)) {
                let Some((at, found)) = f
                    .param_macro
                    .as_ref()
                    .and_then(|(at, n)| Some((*at, defs.get(n.as_str())?)))
                else {
                    continue;
                };
                let shared = |o: usize| {
                    if o == fi {
                        return usize::MAX;
                    }
                    let (a, b) = (paths.get(o).copied(), paths.get(fi).copied());
                    a.zip(b).map_or(0, |(a, b)| {
                        a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
                    })
                };
                let Some((_, params)) = found.iter().max_by_key(|(o, _)| shared(*o)) else {
                    continue;
                };
                // (the parameters are declared in the macro, another file perhaps: they are
                // filed at the function's name)
                let written = params.iter().map(|p| Param {
                    span: f.name_span,
                    ..p.clone()
                });
                let at = at.min(f.params.len());
                f.params.splice(at..at, written);
            }
            Some(copy)
        })
        .collect()
}
