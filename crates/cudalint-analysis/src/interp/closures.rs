//! Lambdas: made where they are written, holding what they capture, and run where they are
//! called (`auto at = [&](int i) { return in[i * 2]; }; at(threadIdx.x)`, or a lambda
//! passed to a `__device__` function that calls it), their accesses filed at their own lines
//! with the call on the inline chain.

use super::call::select_val;
use super::{
    Closure, Frame, InlineSite, KernelRun, LaunchLambda, Ptr, Returns, Val, MAX_CALL_DEPTH,
};
use crate::sym;
use cudalint_syntax::{Lambda, Span};
use std::rc::Rc;
use std::sync::Arc;

impl KernelRun<'_> {
    /// The locals the current function can see, innermost last.
    fn visible_locals(&self) -> Vec<(Rc<str>, Val)> {
        let base = self.frames.last().map(|f| f.scope_base).unwrap_or(0);
        self.scopes[base..].iter().flatten().cloned().collect()
    }

    pub(super) fn closure(&mut self, def: &Arc<Lambda>) -> Val {
        let (file, template) = self
            .frames
            .last()
            .map(|f| (f.file, f.template.clone()))
            .unwrap_or_default();
        Val::Closure(Rc::new(Closure {
            def: def.clone(),
            captured: self.visible_locals(),
            file,
            template,
            frame_depth: self.frames.len(),
            written_at: self.site_override,
        }))
    }

    /// A lambda a launch passes, as the kernel's parameter holds it: the host pointers it
    /// captured are device memory the kernel reaches, its captured constants their values.
    pub(super) fn launched_closure(&mut self, l: LaunchLambda) -> Val {
        let mut captured: Vec<(Rc<str>, Val)> = Vec::new();
        for (name, elem) in l.pointers {
            let ptr = Ptr::global(name.as_str(), elem, None);
            captured.push((name.as_str().into(), Val::Ptr(ptr)));
        }
        for (name, c) in l.constants {
            captured.push((name.as_str().into(), Val::Int(sym::konst(c))));
        }
        // a host value the launch cannot fold (`stride`, a parameter of the wrapper's caller)
        // is a run-time value in the kernel, as a kernel's own scalar parameter is
        for name in l.runtime {
            let v = self.runtime_var(&name, None);
            captured.push((name.as_str().into(), Val::Int(v)));
        }
        Val::Closure(Rc::new(Closure {
            def: l.def,
            captured,
            file: l.file,
            template: Vec::new(),
            frame_depth: usize::MAX,
            written_at: None,
        }))
    }

    /// What a launch passes for a parameter when it is a lambda (see [`LaunchLambda`]).
    pub(super) fn launch_lambda(&self, v: &Val) -> Option<LaunchLambda> {
        let Val::Closure(c) = v else { return None };
        let mut pointers = Vec::new();
        let mut constants = Vec::new();
        let mut runtime = Vec::new();
        for (name, v) in &c.captured {
            match v {
                Val::Ptr(p) => pointers.push((name.to_string(), p.elem.clone())),
                Val::Int(s) => match s.as_const() {
                    Some(k) => constants.push((name.to_string(), k)),
                    None => runtime.push(name.to_string()),
                },
                Val::Unknown(_) => runtime.push(name.to_string()),
                _ => {}
            }
        }
        Some(LaunchLambda {
            def: c.def.clone(),
            file: c.file,
            pointers,
            constants,
            runtime,
        })
    }

    /// A call of a local or parameter that holds a lambda.
    pub(super) fn call_closure(&mut self, c: &Closure, argv: Vec<Val>, span: Span) -> Val {
        if self.frames.len() > MAX_CALL_DEPTH {
            return Val::Unknown(format!("call depth over {MAX_CALL_DEPTH} at a lambda").into());
        }
        let site = self.loc(span);
        // run in the function that made it, it sees that function's locals as they are now
        let same_frame = c.frame_depth == self.frames.len();
        let captured = if same_frame {
            self.visible_locals()
        } else {
            c.captured.clone()
        };
        let def = c.def.clone();
        self.frames.push(Frame {
            scope_base: self.scopes.len(),
            file: c.file,
            ret: None,
            returns: Returns::default(),
            refs: Vec::new(),
            local_refs: Vec::new(),
            template: c.template.clone(),
            owner: None,
            this: None,
        });
        self.scopes.push(captured);
        self.scopes.push(Vec::new());
        let given = argv.len();
        for (p, v) in def.params.iter().zip(argv) {
            self.declare(&p.name, v);
        }
        for p in def.params.iter().skip(given) {
            self.declare(
                &p.name,
                Val::Unknown(format!("argument `{}` not given", p.name).into()),
            );
        }
        self.call_sites.push(InlineSite {
            loc: site,
            callee: "lambda".to_string(),
        });
        // a lambda a statement macro's replacement wrote is filed, as nvcc files it, at the
        // macro's invocation wherever it is called
        let site_override = std::mem::replace(&mut self.site_override, c.written_at);
        let mask = self.mask.clone();
        self.stmts(&def.body);
        self.mask = mask;
        self.site_override = site_override;
        self.call_sites.pop();
        let Some(frame) = self.frames.pop() else {
            return Val::Unknown("a lambda returns no value".into());
        };
        let after: Vec<(Rc<str>, Val)> = self
            .scopes
            .get(frame.scope_base)
            .cloned()
            .unwrap_or_default();
        self.scopes.truncate(frame.scope_base);
        // `[&] { s += in[i]; }`: the caller's `s` is what the body left it
        if def.by_reference && same_frame {
            for (name, v) in after {
                self.assign_local(&name, v);
            }
        }
        let last = frame
            .ret
            .unwrap_or_else(|| Val::Unknown("a lambda returns no value".into()));
        frame
            .returns
            .early
            .into_iter()
            .rev()
            .fold(last, |rest, (c, v)| select_val(c, v, rest))
    }
}
