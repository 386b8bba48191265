//! Byte offset <-> line/column conversion.

#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// 1-based line and 1-based column (in bytes) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        (line + 1, offset - self.starts[line] + 1)
    }

    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}
