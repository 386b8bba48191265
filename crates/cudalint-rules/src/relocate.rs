//! Moving a kernel's analysis from an old layout of the run's texts to a new one.
//!
//! Each file is cut into segments: the kernels' texts and the context gaps between them, in
//! order. A reused analysis is valid only when the context is unchanged, so every gap has the
//! same text (and length) in both layouts, as has every kernel whose text did not change. A span
//! inside such a segment moves by how far the segment's start moved; a span inside a kernel that
//! changed, or one across segments, cannot be moved and the kernel is analysed again.

use cudalint_analysis::{
    Access, Analysis, Impact, InlineSite, Loc, LoopCount, Padding, Shape, ShapeSource, Skipped,
};
use cudalint_syntax::Span;

/// One file's kernels, old and new, parallel, in text order.
pub(crate) struct FileMoves {
    pub old: Vec<Span>,
    pub new: Vec<Span>,
    /// Whether kernel i's text is the same in both layouts.
    pub same: Vec<bool>,
}

/// Per file of the run, where its kernels were and are.
pub(crate) struct Moves {
    pub files: Vec<FileMoves>,
}

impl FileMoves {
    /// How far the gap before kernel `g` (after the last kernel if `g` is their count) moved.
    fn gap_shift(&self, g: usize) -> i64 {
        match g.checked_sub(1) {
            Some(k) => self.new[k].end as i64 - self.old[k].end as i64,
            None => 0,
        }
    }

    fn kernel_shift(&self, k: usize) -> i64 {
        self.new[k].start as i64 - self.old[k].start as i64
    }

    fn shift_of(&self, s: Span) -> Option<i64> {
        if s.start > s.end {
            return None;
        }
        // the last kernel that starts at or before the span
        let Some(k) = self
            .old
            .partition_point(|o| o.start <= s.start)
            .checked_sub(1)
        else {
            let first = self.old.first().map_or(u32::MAX, |o| o.start);
            return (s.end <= first).then_some(0);
        };
        let kernel = self.old[k];
        if s.end <= kernel.end {
            if self.same[k] {
                return Some(self.kernel_shift(k));
            }
            // an empty span on the edge of a changed kernel belongs to the gap there
            return if s.start == s.end && s.end == kernel.start {
                Some(self.gap_shift(k))
            } else if s.start == s.end && s.start == kernel.end {
                Some(self.gap_shift(k + 1))
            } else {
                None
            };
        }
        let next = self.old.get(k + 1).map_or(u32::MAX, |o| o.start);
        (s.start >= kernel.end && s.end <= next).then(|| self.gap_shift(k + 1))
    }

    fn span(&self, s: Span) -> Option<Span> {
        let d = self.shift_of(s)?;
        let moved = |x: u32| u32::try_from(x as i64 + d).ok();
        Some(Span {
            start: moved(s.start)?,
            end: moved(s.end)?,
        })
    }
}

impl Moves {
    fn loc(&self, loc: &mut Loc) -> Option<()> {
        loc.1 = self.files.get(loc.0)?.span(loc.1)?;
        Some(())
    }

    fn opt(&self, loc: &mut Option<Loc>) -> Option<()> {
        match loc {
            Some(l) => self.loc(l),
            None => Some(()),
        }
    }

    /// Moves every span of `a` to the new layout; `None` (and `a` half moved, to be dropped)
    /// when one cannot be moved.
    ///
    /// The fields are listed in full on purpose: a location added to the analysis's results
    /// must be added here too, or a reused result would point at old bytes.
    pub fn analysis(&self, a: &mut Analysis) -> Option<()> {
        let Analysis { accesses, skipped } = a;
        for x in accesses {
            let Access {
                loc,
                kernel: _,
                kernel_loc,
                space: _,
                op: _,
                bytes: _,
                elem_type: _,
                base: _,
                decl,
                lane_term,
                field: _,
                cost: _,
                shape,
                runtime: _,
                assumptions: _,
                padding,
                inlined_at,
                piece: _,
                narrowed_from: _,
                issued_at,
                copied: _,
                cas: _,
                impact,
            } = x;
            self.loc(loc)?;
            for InlineSite { loc, callee: _ } in inlined_at {
                self.loc(loc)?;
            }
            self.loc(kernel_loc)?;
            self.opt(decl)?;
            self.opt(issued_at)?;
            self.opt(lane_term)?;
            if let Some(Impact {
                excess_per_request: _,
                warps_per_block: _,
                loops,
                in_condition: _,
                per_instruction: _,
                rounds: _,
                blocks: _,
                grid_from,
            }) = impact
            {
                for LoopCount {
                    at,
                    count: _,
                    source: _,
                    at_most: _,
                } in loops
                {
                    self.loc(at)?;
                }
                self.opt(grid_from)?;
            }
            let Shape {
                block: _,
                grid: _,
                grid_known: _,
                source,
                target: _,
            } = shape;
            match source {
                ShapeSource::Launch(l) | ShapeSource::Unresolved(l) => self.loc(l)?,
                ShapeSource::LaunchBounds(_) | ShapeSource::Configured | ShapeSource::Default => {}
            }
            if let Some(Padding {
                dim,
                pad: _,
                wavefronts_after: _,
                lanes_after: _,
            }) = padding
            {
                self.loc(dim)?;
            }
        }
        for s in skipped {
            let Skipped {
                loc,
                kernel: _,
                reason: _,
            } = s;
            self.loc(loc)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves() -> FileMoves {
        // old: gap [0,10) k0 [10,20) gap [20,30) k1 [30,40) gap [40,..)
        // new: k0 unchanged moved by 5, k1 grew by 3
        FileMoves {
            old: vec![Span::new(10, 20), Span::new(30, 40)],
            new: vec![Span::new(15, 25), Span::new(35, 48)],
            same: vec![true, false],
        }
    }

    #[test]
    fn spans_move_with_their_segment() {
        let m = moves();
        assert_eq!(m.span(Span::new(2, 5)), Some(Span::new(2, 5)));
        assert_eq!(m.span(Span::new(0, 0)), Some(Span::new(0, 0)));
        assert_eq!(m.span(Span::new(12, 14)), Some(Span::new(17, 19)));
        assert_eq!(m.span(Span::new(10, 20)), Some(Span::new(15, 25)));
        assert_eq!(m.span(Span::new(22, 28)), Some(Span::new(27, 33)));
        assert_eq!(m.span(Span::new(42, 50)), Some(Span::new(50, 58)));
        // the edges of the changed kernel are edges of unchanged gaps
        assert_eq!(m.span(Span::new(30, 30)), Some(Span::new(35, 35)));
        assert_eq!(m.span(Span::new(40, 40)), Some(Span::new(48, 48)));
    }

    #[test]
    fn spans_in_a_changed_kernel_or_across_segments_do_not_move() {
        let m = moves();
        assert_eq!(m.span(Span::new(31, 33)), None);
        assert_eq!(m.span(Span::new(5, 15)), None);
        assert_eq!(m.span(Span::new(18, 22)), None);
        assert_eq!(m.span(Span::new(25, 45)), None);
        assert_eq!(m.span(Span::new(9, 3)), None);
    }
}
