//! CL201 uncoalesced-global-access.
#![doc = include_str!("../../docs/CL201.md")]

use crate::check::Ctx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::rules::{fmt_num, ratio_text};
use cudalint_analysis::{Access, Class, Space};

pub const DOC: &str = include_str!("../../docs/CL201.md");

pub fn check(a: &Access, kernel: &[Access], ctx: &Ctx) -> Option<Diagnostic> {
    if a.space != Space::Global || !matches!(a.cost.class, Class::Strided(_) | Class::Uncoalesced) {
        return None;
    }
    let (s, i) = (a.cost.sectors?, a.cost.ideal_sectors?);
    if s < 2.0 * i {
        return None;
    }
    let text = ctx.text(a.loc);
    let message = format!(
        "global {} `{text}`: {} sectors per request where {} would do ({} the memory traffic)",
        super::op_word(a),
        fmt_num(s),
        fmt_num(i),
        ratio_text(s, i)
    );
    Some(super::make(
        "CL201",
        a,
        ctx,
        message,
        super::standard_notes(a, ctx),
        Some(fix(a, kernel, ctx)),
    ))
}

/// Which fix applies follows from how the address moves with threadIdx.x and threadIdx.y.
fn fix(a: &Access, kernel: &[Access], ctx: &Ctx) -> Fix {
    let unit = a.bytes;
    let along_y = a.cost.d_ty == Some(unit) && a.shape.block[1] > 1;
    if along_y {
        // another global access of the kernel that is already row-wise in threadIdx.x (looked
        // for only here: a generated kernel has tens of thousands of accesses)
        let partner = kernel.iter().find(|b| {
            b.space == Space::Global
                && b.loc != a.loc
                && b.cost.d_tx == Some(b.bytes)
                && b.cost.d_ty.is_some_and(|d| d.abs() > 4 * b.bytes)
        });
        if let Some(p) = partner {
            let tile = a.shape.block[0].clamp(8, 32);
            let sketch = format!(
                "__shared__ {t} tile[{tile}][{tile} + 1];   // +1: reading a column is conflict-free\n\
                 // 1. coalesced read, as `{read}` already does: threadIdx.x walks the contiguous index\n\
                 tile[threadIdx.y][threadIdx.x] = <source>[(row0 + threadIdx.y) * ld_src + col0 + threadIdx.x];\n\
                 __syncthreads();\n\
                 // 2. coalesced write: swap the block's tile coordinates, read the tile transposed\n\
                 <destination>[(col0 + threadIdx.y) * ld_dst + row0 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];",
                t = a.elem_type,
                read = ctx.text(p.loc),
            );
            return Fix {
                title: "corner turning: stage a tile through shared memory so both the read and the write walk threadIdx.x along contiguous addresses".into(),
                applicability: Applicability::DisplayOnly,
                edits: Vec::new(),
                sketch: Some(sketch),
            };
        }
        return Fix {
            title: "swap the thread mapping: the contiguous index follows threadIdx.y; let threadIdx.x drive it (swap the roles of threadIdx.x and threadIdx.y in this index)".into(),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        };
    }
    let [bx, by, _] = a.shape.block;
    if a.cost.d_tx == Some(unit) && bx < 32 && by > 1 {
        // consecutive in threadIdx.x, but a warp is several short rows: each starts its own
        // sectors
        return Fix {
            title: format!(
                "a warp spans {} rows of {bx} threadIdx.x, {} bytes each, and every row starts its own sectors: a block at least 32 threads wide in x (e.g. (32, {}, 1) for the same {} threads) makes each warp's request one contiguous run",
                32 / bx.max(1),
                bx * unit,
                (bx * by / 32).max(1),
                bx * by,
            ),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        };
    }
    if a.cost.d_tx == Some(unit) && a.cost.class == Class::Uncoalesced {
        // neighbouring lanes are contiguous, but only in short runs a row apart (an MMA
        // accumulator fragment: four lanes per row of 16 bytes)
        return Fix {
            title: "consecutive lanes are contiguous only in short runs, each in its own row, so every run starts its own sectors: stage the tile through shared memory and write it back a whole row per warp, or give each lane a wider vector so a run covers whole 32-byte sectors".into(),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        };
    }
    let stride = a.cost.d_tx.map(|d| d / unit.max(1)).unwrap_or(0);
    if let Some(declared) = a.narrowed_from.filter(|&w| a.cost.d_tx == Some(w)) {
        // consecutive lanes, consecutive elements: the waste is the part of each element
        // nobody uses, which only a narrower element type saves
        let (part, narrow) = match unit {
            1 => ("byte".to_string(), "uint8_t"),
            2 => ("2 bytes".to_string(), "int16_t"),
            n => (format!("{n} bytes"), "int32_t"),
        };
        return Fix {
            title: format!(
                "each lane uses only the low {part} of its {declared}-byte `{}`, and nvcc loads only that: the rest of every sector is fetched for nothing; if the values fit, store them as `{narrow}`, or pack the parts the lanes use together",
                a.elem_type
            ),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        };
    }
    if a.cost.d_iter == Some(unit) {
        // the loop walks the contiguous index while threadIdx.x jumps rows (siboehm's kernel 1)
        let sketch = format!(
            "// neighbouring lanes are {stride} elements apart while the loop walks consecutive elements:\n\
             // let threadIdx.x select the column instead, e.g. with a 1D block of 1024\n\
             const int row = blockIdx.x * 32 + threadIdx.x / 32;   // uniform within a warp: broadcast\n\
             const int col = blockIdx.y * 32 + threadIdx.x % 32;   // consecutive lanes, consecutive addresses"
        );
        return Fix {
            title: "swap the thread mapping so that threadIdx.x walks the contiguous index, or stage tiles through shared memory (corner turning)".into(),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: Some(sketch),
        };
    }
    // a piece of a whole struct nvcc copies in `unit`-byte parts (TensorRT's `Box { float
    // y1, x1, y2, x2; }`): aligned as its size, it moves in one access a lane
    if let Some((_, n)) = a.piece.filter(|&(_, n)| n > 1) {
        let whole = i64::from(n) * unit;
        if matches!(whole, 8 | 16) && a.cost.d_tx == Some(whole) {
            return Fix {
                title: format!(
                    "nvcc copies each {whole}-byte `{}` in {n} pieces of {unit} bytes, as its members are only {unit}-byte aligned: declare it `struct __align__({whole})` (or `alignas({whole})`) and the copy is one {whole}-byte access a lane, {n}x fewer requests",
                    a.elem_type
                ),
                applicability: Applicability::DisplayOnly,
                edits: Vec::new(),
                sketch: None,
            };
        }
    }
    if stride > 1 && stride * unit <= 16 && a.shape.block[1] == 1 {
        return Fix {
            title: format!(
                "each lane uses {stride} neighbouring elements: load them as one {}-byte vector (e.g. reinterpret_cast<const float{stride}*>), or let consecutive lanes take consecutive elements in {stride} passes",
                stride * unit
            ),
            applicability: Applicability::DisplayOnly,
            edits: Vec::new(),
            sketch: None,
        };
    }
    Fix {
        title: format!(
            "neighbouring lanes are {stride} elements apart: make threadIdx.x walk the contiguous index (swap the thread mapping), or stage the data through a shared-memory tile read row-wise (corner turning)"
        ),
        applicability: Applicability::DisplayOnly,
        edits: Vec::new(),
        sketch: None,
    }
}
