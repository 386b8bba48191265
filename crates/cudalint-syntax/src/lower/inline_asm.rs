//! Inline PTX read as what it does to memory and to its outputs. `cp.async` is the copy
//! `__pipeline_memcpy_async` makes; `ld`/`st` of the global, shared or generic space are a
//! load or store of the width their vector count and type say, at the address operand;
//! `red`/`atom` of those spaces are atomics there; a special register (`%laneid`, `%tid.x`)
//! is the built-in it names. Every output operand is then set: by the load it receives, to
//! the register it copies, or to a value computed from the inputs (`bfe.u32 %0, %1, %2, 8`).

use super::{named_children, span, Lowerer};
use crate::model::*;
use tree_sitter::Node;

/// One memory instruction of an asm template.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum PtxMemory {
    Load {
        dest: usize,
        addr: usize,
        offset: i64,
        bytes: i64,
    },
    Store {
        addr: usize,
        offset: i64,
        value: usize,
        bytes: i64,
    },
    Atomic {
        addr: usize,
        offset: i64,
        value: usize,
    },
}

/// The asm template's text without quotes and escapes, as ptxas reads it.
fn template_text(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {}
            '\\' => {
                chars.next();
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// The instructions of a template: `;`-separated, scoping braces and predicates (`@p`) off.
fn instructions(text: &str) -> Vec<&str> {
    text.split(';')
        .map(|i| {
            let mut i = i.trim().trim_start_matches(['{', '}']).trim();
            if let Some(rest) = i.strip_prefix('@') {
                i = rest
                    .split_once(char::is_whitespace)
                    .map_or("", |(_, r)| r.trim());
            }
            i
        })
        .filter(|i| !i.is_empty())
        .collect()
}

/// Operand `%N` (`%%` is a literal percent sign, a register name).
fn operand_number(s: &str) -> Option<usize> {
    s.trim().strip_prefix('%')?.trim().parse().ok()
}

/// `[%1]`, `[%1+16]`: the operand and its byte offset.
fn address(s: &str) -> Option<(usize, i64)> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    match inner.split_once('+') {
        Some((op, off)) => Some((operand_number(op)?, parse_int(off.trim())?)),
        None => Some((operand_number(inner)?, 0)),
    }
}

fn parse_int(s: &str) -> Option<i64> {
    match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The first operand of a list: `%0` or the first of a vector `{%0, %1}`.
fn first_operand(s: &str) -> Option<usize> {
    let s = s.trim().trim_start_matches('{');
    operand_number(s.split(',').next()?.trim_end_matches('}'))
}

/// Operands at top level: commas inside `{...}` and `[...]` do not split.
fn operands(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

fn type_bytes(part: &str) -> Option<i64> {
    let bits = part
        .strip_prefix(['b', 'u', 's', 'f'])
        .filter(|b| b.bytes().all(|c| c.is_ascii_digit()))?;
    match bits {
        "8" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        "128" => Some(16),
        _ => None,
    }
}

/// The memory instructions of a template, in order; none when one of them is of a space
/// cudalint does not price (`.local`, `.const`, `.param`) or is not read here.
pub(super) fn memory_ops(code: &str) -> Vec<PtxMemory> {
    let text = template_text(code);
    let mut out = Vec::new();
    for ins in instructions(&text) {
        let (opcode, rest) = ins.split_once(char::is_whitespace).unwrap_or((ins, ""));
        let parts: Vec<&str> = opcode.split('.').collect();
        let kind = parts[0];
        if !matches!(kind, "ld" | "st" | "red" | "atom") {
            continue;
        }
        if parts
            .iter()
            .any(|p| matches!(*p, "local" | "const" | "param" | "tex"))
        {
            continue;
        }
        let ops = operands(rest);
        let vector = parts
            .iter()
            .find_map(|p| p.strip_prefix('v').and_then(|n| n.parse::<i64>().ok()))
            .unwrap_or(1);
        let elem = parts.iter().rev().find_map(|p| type_bytes(p));
        match kind {
            "ld" => {
                let (Some(dest), Some((addr, offset)), Some(elem)) = (
                    ops.first().and_then(|o| first_operand(o)),
                    ops.get(1).and_then(|o| address(o)),
                    elem,
                ) else {
                    continue;
                };
                out.push(PtxMemory::Load {
                    dest,
                    addr,
                    offset,
                    bytes: elem * vector,
                });
            }
            "st" => {
                let (Some((addr, offset)), Some(value), Some(elem)) = (
                    ops.first().and_then(|o| address(o)),
                    ops.get(1).and_then(|o| first_operand(o)),
                    elem,
                ) else {
                    continue;
                };
                out.push(PtxMemory::Store {
                    addr,
                    offset,
                    value,
                    bytes: elem * vector,
                });
            }
            // `red [a], b;` and `atom d, [a], b;`
            _ => {
                let at = usize::from(kind == "atom");
                let (Some((addr, offset)), Some(value)) = (
                    ops.get(at).and_then(|o| address(o)),
                    ops.get(at + 1).and_then(|o| first_operand(o)),
                ) else {
                    continue;
                };
                out.push(PtxMemory::Atomic {
                    addr,
                    offset,
                    value,
                });
            }
        }
    }
    out
}

/// `mov.u32 %0, %laneid;`: the output operand and the special register copied into it.
pub(super) fn special_register(code: &str) -> Option<(usize, String)> {
    let text = template_text(code);
    let ins = instructions(&text);
    let [one] = ins.as_slice() else { return None };
    let (opcode, rest) = one.split_once(char::is_whitespace)?;
    if !opcode.starts_with("mov.") {
        return None;
    }
    let ops = operands(rest);
    let dest = operand_number(ops.first()?)?;
    let reg = ops.get(1)?.trim().trim_start_matches('%');
    special_expr(reg, Span::default()).map(|_| (dest, reg.to_string()))
}

/// The CUDA built-in a special register is: `%tid.x` is `threadIdx.x`, `%laneid` the lane,
/// `%lanemask_lt` the lanes below this one.
fn special_expr(reg: &str, sp: Span) -> Option<Expr> {
    let at = |kind: ExprKind| Expr { kind, span: sp };
    let int = |v: i64| at(ExprKind::Int(v));
    let lane = || {
        at(ExprKind::Call {
            callee: "__lane_id".into(),
            template_args: TemplateArgs::default(),
            args: Box::default(),
        })
    };
    let bin = |op: BinOp, lhs: Expr, rhs: Expr| {
        at(ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    };
    if let Some((base, c)) = reg.split_once('.') {
        let builtin = match base {
            "tid" => "threadIdx",
            "ctaid" => "blockIdx",
            "ntid" => "blockDim",
            "nctaid" => "gridDim",
            _ => return None,
        };
        if !matches!(c, "x" | "y" | "z") {
            return None;
        }
        return Some(at(ExprKind::Field {
            base: Box::new(at(ExprKind::Ident(builtin.into()))),
            field: c.into(),
            arrow: false,
        }));
    }
    Some(match reg {
        "laneid" => lane(),
        "lanemask_eq" => bin(BinOp::Shl, int(1), lane()),
        "lanemask_lt" => bin(BinOp::Sub, bin(BinOp::Shl, int(1), lane()), int(1)),
        "lanemask_le" => bin(BinOp::Sub, bin(BinOp::Shl, int(2), lane()), int(1)),
        _ => return None,
    })
}

/// An operand of an arithmetic instruction: `%N` or an immediate.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum PtxOperand {
    Operand(usize),
    Immediate(i64),
}

fn ptx_operand(s: &str) -> Option<PtxOperand> {
    let s = s.trim();
    match operand_number(s) {
        Some(n) => Some(PtxOperand::Operand(n)),
        None => parse_int(s).map(PtxOperand::Immediate),
    }
}

/// A lone bit-manipulation instruction cudalint evaluates as the intrinsic it is: `bfe`
/// (a bit field: `(a >> b) & ((1 << c) - 1)`), `prmt` (`__byte_perm`), `shf`
/// (`__funnelshift_*`). The output operand, the intrinsic (`bfe` for the field) and its
/// operands.
pub(super) fn bit_instruction(code: &str) -> Option<(usize, &'static str, Vec<PtxOperand>)> {
    let text = template_text(code);
    let ins = instructions(&text);
    let [one] = ins.as_slice() else { return None };
    let (opcode, rest) = one.split_once(char::is_whitespace)?;
    let parts: Vec<&str> = opcode.split('.').collect();
    let callee = match parts.as_slice() {
        ["bfe", "u32" | "u64"] => "bfe",
        ["prmt", "b32"] => "__byte_perm",
        ["shf", "l", "wrap", "b32"] => "__funnelshift_l",
        ["shf", "r", "wrap", "b32"] => "__funnelshift_r",
        ["shf", "l", "clamp", "b32"] => "__funnelshift_lc",
        ["shf", "r", "clamp", "b32"] => "__funnelshift_rc",
        _ => return None,
    };
    let ops = operands(rest);
    let [d, a, b, c] = ops.as_slice() else {
        return None;
    };
    let dest = operand_number(d)?;
    let args = [a, b, c]
        .iter()
        .map(|o| ptx_operand(o))
        .collect::<Option<Vec<_>>>()?;
    Some((dest, callee, args))
}

/// The integer type of an access `bytes` wide.
fn unsigned_of(bytes: i64) -> Option<&'static str> {
    Some(match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        16 => "uint4",
        _ => return None,
    })
}

impl<'s> Lowerer<'s> {
    /// Inline PTX as the expression of what it does: its copies, loads, stores and atomics in
    /// order, then its outputs set (see the module's comment); asm that does nothing cudalint
    /// reads is an unsupported expression.
    pub(super) fn asm(&mut self, n: Node, depth: usize) -> Expr {
        let sp = span(n);
        let mut code = String::new();
        let mut outputs = Vec::new();
        let mut inputs = Vec::new();
        for c in named_children(n) {
            match c.kind() {
                "string_literal" | "concatenated_string" => code.push_str(self.text(c)),
                list @ ("gnu_asm_output_operand_list" | "gnu_asm_input_operand_list") => {
                    for op in named_children(c) {
                        if let Some(value) = named_children(op).into_iter().last() {
                            if list == "gnu_asm_output_operand_list" {
                                outputs.push(value);
                            } else {
                                inputs.push(value);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let operands: Vec<Node> = outputs.iter().chain(&inputs).copied().collect();
        let at = |e: ExprKind| Expr { kind: e, span: sp };
        if let Some((d, s, bytes)) = super::exprs::parse_cp_async(&code)
            .and_then(|(d, s, bytes)| Some((*operands.get(d)?, *operands.get(s)?, bytes)))
        {
            return at(ExprKind::Call {
                callee: "__pipeline_memcpy_async".into(),
                template_args: TemplateArgs::default(),
                args: vec![
                    self.expr(d, depth + 1),
                    self.expr(s, depth + 1),
                    at(ExprKind::Int(bytes)),
                ]
                .into(),
            });
        }
        let mut effects: Vec<Expr> = Vec::new();
        let mut set: Vec<usize> = Vec::new();
        let operand = |l: &mut Self, i: usize| -> Option<Expr> {
            operands.get(i).map(|n| l.expr(*n, depth + 1))
        };
        // `*(unsigned int*)((char*)p + offset)`, at the address operand (where nvcc's line
        // table files an asm written over several lines)
        let place = |l: &mut Self, addr: usize, offset: i64, bytes: i64| -> Option<Expr> {
            let mut p = operand(l, addr)?;
            let operand_span = p.span;
            let at = |kind: ExprKind| Expr {
                kind,
                span: operand_span,
            };
            if offset != 0 {
                let bytes_ptr = TypeRef {
                    pointer_depth: 1,
                    ..TypeRef::named("char")
                };
                p = at(ExprKind::Binary {
                    op: BinOp::Add,
                    lhs: Box::new(at(ExprKind::Cast {
                        ty: bytes_ptr,
                        arg: Box::new(p),
                    })),
                    rhs: Box::new(at(ExprKind::Int(offset))),
                });
            }
            let ty = TypeRef {
                pointer_depth: 1,
                ..TypeRef::named(unsigned_of(bytes)?)
            };
            Some(at(ExprKind::Unary {
                op: UnOp::Deref,
                arg: Box::new(at(ExprKind::Cast {
                    ty,
                    arg: Box::new(p),
                })),
            }))
        };
        for op in memory_ops(&code) {
            match op {
                PtxMemory::Load {
                    dest,
                    addr,
                    offset,
                    bytes,
                } => {
                    let Some(load) = place(self, addr, offset, bytes) else {
                        continue;
                    };
                    // a scalar load is the value its register receives; a vector's parts
                    // are values read from memory, not followed
                    let e = match (bytes <= 8, operand(self, dest)) {
                        (true, Some(d)) if dest < outputs.len() => {
                            set.push(dest);
                            at(ExprKind::Assign {
                                op: None,
                                lhs: Box::new(d),
                                rhs: Box::new(load),
                            })
                        }
                        _ => load,
                    };
                    effects.push(e);
                }
                PtxMemory::Store {
                    addr,
                    offset,
                    value,
                    bytes,
                } => {
                    let (Some(target), Some(v)) =
                        (place(self, addr, offset, bytes), operand(self, value))
                    else {
                        continue;
                    };
                    effects.push(at(ExprKind::Assign {
                        op: None,
                        lhs: Box::new(target),
                        rhs: Box::new(v),
                    }));
                }
                PtxMemory::Atomic {
                    addr,
                    offset,
                    value,
                } => {
                    let Some(Expr {
                        kind: ExprKind::Unary { arg, .. },
                        ..
                    }) = place(self, addr, offset, 4)
                    else {
                        continue;
                    };
                    let Some(v) = operand(self, value) else {
                        continue;
                    };
                    effects.push(at(ExprKind::Call {
                        callee: "atomicAdd".into(),
                        template_args: TemplateArgs::default(),
                        args: vec![*arg, v].into(),
                    }));
                }
            }
        }
        if let Some((dest, reg)) = special_register(&code) {
            if let (Some(d), Some(v)) = (operand(self, dest), special_expr(&reg, sp)) {
                set.push(dest);
                effects.push(at(ExprKind::Assign {
                    op: None,
                    lhs: Box::new(d),
                    rhs: Box::new(v),
                }));
            }
        }
        if let Some((dest, callee, args)) = bit_instruction(&code) {
            let mut argv = Vec::new();
            for a in args {
                argv.push(match a {
                    PtxOperand::Operand(i) => operand(self, i),
                    PtxOperand::Immediate(v) => Some(at(ExprKind::Int(v))),
                });
            }
            if let (Some(d), Some(argv)) = (operand(self, dest), argv.into_iter().collect()) {
                let v = bit_expression(callee, argv, sp);
                set.push(dest);
                effects.push(at(ExprKind::Assign {
                    op: None,
                    lhs: Box::new(d),
                    rhs: Box::new(v),
                }));
            }
        }
        // the other outputs: values the asm computes in ways not followed, or loads into the
        // parts of a vector
        for i in (0..outputs.len()).filter(|i| !set.contains(i)) {
            let Some(d) = operand(self, i) else { continue };
            let rhs = at(ExprKind::Call {
                callee: "__asm".into(),
                template_args: TemplateArgs::default(),
                args: Box::default(),
            });
            effects.push(at(ExprKind::Assign {
                op: None,
                lhs: Box::new(d),
                rhs: Box::new(rhs),
            }));
        }
        let mut effects = effects.into_iter();
        let Some(first) = effects.next() else {
            return Expr::unsupported("inline assembly", sp);
        };
        effects.fold(first, |a, b| at(ExprKind::Comma(Box::new(a), Box::new(b))))
    }
}

/// `bfe(a, b, c)` as the shift and mask it is; the others as their intrinsics.
fn bit_expression(callee: &str, mut argv: Vec<Expr>, sp: Span) -> Expr {
    let at = |kind: ExprKind| Expr { kind, span: sp };
    if callee != "bfe" || argv.len() != 3 {
        return at(ExprKind::Call {
            callee: callee.into(),
            template_args: TemplateArgs::default(),
            args: argv.into(),
        });
    }
    let len = argv.pop().unwrap_or(at(ExprKind::Int(32)));
    let start = argv.pop().unwrap_or(at(ExprKind::Int(0)));
    let a = argv.pop().unwrap_or(at(ExprKind::Int(0)));
    let bin = |op: BinOp, lhs: Expr, rhs: Expr| {
        at(ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    };
    let mask = bin(
        BinOp::Sub,
        bin(BinOp::Shl, at(ExprKind::Int(1)), len),
        at(ExprKind::Int(1)),
    );
    bin(BinOp::BitAnd, bin(BinOp::Shr, a, start), mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_stores_and_atomics_give_their_operands_and_width() {
        assert_eq!(
            memory_ops("\"ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];\""),
            [PtxMemory::Load {
                dest: 0,
                addr: 4,
                offset: 0,
                bytes: 16
            }]
        );
        assert_eq!(
            memory_ops("\"{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %2, 0;\\n\\t@p st.shared.v2.u32 [%0+8], {%1, %1};\\n}\""),
            [PtxMemory::Store {
                addr: 0,
                offset: 8,
                value: 1,
                bytes: 8
            }]
        );
        assert_eq!(
            memory_ops("\"red.global.add.u32 [%0], %1;\""),
            [PtxMemory::Atomic {
                addr: 0,
                offset: 0,
                value: 1
            }]
        );
        assert_eq!(
            memory_ops("\"ld.u64 %0, [%1];\"")[0],
            PtxMemory::Load {
                dest: 0,
                addr: 1,
                offset: 0,
                bytes: 8
            }
        );
        // spaces cudalint does not price, and what is no memory instruction
        assert!(memory_ops("\"ld.local.u32 %0, [%1];\"").is_empty());
        assert!(memory_ops("\"ld.param.u32 %0, [%1];\"").is_empty());
        assert!(memory_ops("\"bfe.u32 %0, %1, %2, 8;\"").is_empty());
        // odd spellings are read or left, never a panic
        for odd in [
            "\"ld..u32 %0, [%1];\"",
            "\"st. [%0], %1;\"",
            "\"ld.global.\"",
            "\"ld.é32 %0, [%1];\"",
        ] {
            let _ = memory_ops(odd);
        }
    }

    #[test]
    fn special_registers_are_their_builtins() {
        assert_eq!(
            special_register("\"mov.u32 %0, %%laneid;\""),
            Some((0, "laneid".to_string()))
        );
        assert_eq!(
            special_register("\"mov.u32 %0, %tid.y;\""),
            Some((0, "tid.y".to_string()))
        );
        assert_eq!(special_register("\"mov.u32 %0, %%clock;\""), None);
    }

    #[test]
    fn outputs_are_set_by_the_asm() {
        let f = crate::parse(
            "__device__ unsigned f(unsigned a, unsigned b) { unsigned r; asm(\"bfe.u32 %0, %1, %2, 8;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }",
        )
        .unwrap();
        let body = f.model.functions[0].body.clone().unwrap();
        let text = format!("{:?}", body[1]);
        assert!(
            text.contains("Assign") && text.contains("Shr") && text.contains("BitAnd"),
            "{text}"
        );
        assert_eq!(
            bit_instruction("\"prmt.b32 %0, %1, 0, 0x4440;\""),
            Some((
                0,
                "__byte_perm",
                vec![
                    PtxOperand::Operand(1),
                    PtxOperand::Immediate(0),
                    PtxOperand::Immediate(0x4440)
                ]
            ))
        );
        // what is not followed sets its outputs to a value of the data
        let f = crate::parse(
            "__device__ unsigned f(unsigned a) { unsigned r; asm(\"mul.hi.u32 %0, %1, %1;\" : \"=r\"(r) : \"r\"(a)); return r; }",
        )
        .unwrap();
        let body = f.model.functions[0].body.clone().unwrap();
        assert!(format!("{:?}", body[1]).contains("__asm"));
    }
}
