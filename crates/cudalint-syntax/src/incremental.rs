//! The one edit between two versions of a preprocessed text, in the terms tree-sitter's
//! `Tree::edit` wants: where they start to differ, and where the differing range ends in each.

use tree_sitter::{InputEdit, Point};

/// The smallest single range outside which `old` and `new` agree (common prefix and suffix).
pub(crate) fn edit_between(old: &str, new: &str) -> InputEdit {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let mut start = common_prefix(o, n);
    // the prefix is common, so a byte is a char boundary in one text iff it is in the other
    while !new.is_char_boundary(start) {
        start -= 1;
    }
    let room = o.len().min(n.len()) - start;
    let mut suffix = common_suffix(&o[start..], &n[start..]).min(room);
    while !new.is_char_boundary(n.len() - suffix) {
        suffix -= 1;
    }
    let (old_end, new_end) = (o.len() - suffix, n.len() - suffix);
    InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(n, start),
        old_end_position: point(o, old_end),
        new_end_position: point(n, new_end),
    }
}

/// Row and byte column of `byte`.
fn point(text: &[u8], byte: usize) -> Point {
    let before = &text[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Point::new(row, byte - line_start)
}

// Compared a block at a time first: a keystroke into a 5 MB file compares all of it twice.
const BLOCK: usize = 64;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let blocks = a
        .chunks_exact(BLOCK)
        .zip(b.chunks_exact(BLOCK))
        .take_while(|(x, y)| x == y)
        .count();
    let done = blocks * BLOCK;
    done + a[done..]
        .iter()
        .zip(&b[done..])
        .take_while(|(x, y)| x == y)
        .count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let blocks = a
        .rchunks_exact(BLOCK)
        .zip(b.rchunks_exact(BLOCK))
        .take_while(|(x, y)| x == y)
        .count();
    let done = blocks * BLOCK;
    done + a[..a.len() - done]
        .iter()
        .rev()
        .zip(b[..b.len() - done].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_incremental, parse_with, Defines};

    const SRC: &str = r#"#define TILE 32
struct P { float x, y, z; };
__device__ float twice(float v) { return 2 * v; }

__global__ void transpose(const float* in, float* out, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  tile[threadIdx.y][threadIdx.x] = in[x * n];
  __syncthreads();
  out[x] = twice(tile[threadIdx.x][threadIdx.y]);
}

__global__ void fields(const P* p, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = p[t].x + p[t].z;
}

void run(const float* in, float* out, int n) {
  dim3 b(TILE, 8);
  transpose<<<n / TILE, b>>>(in, out, n);
}
"#;

    /// Applies each edit in turn, parsing incrementally from the previous version, and checks
    /// every version's model (and tree) against a fresh parse of the same text.
    fn same_as_fresh(edits: &[(&str, &str)]) {
        let defines = Defines::default();
        let mut src = SRC.to_string();
        let (mut parsed, mut text) = parse_incremental(&src, &defines, None).unwrap();
        for (find, replace) in edits {
            let at = src
                .find(find)
                .unwrap_or_else(|| panic!("`{find}` in the source"));
            src.replace_range(at..at + find.len(), replace);
            let (next, next_text) =
                parse_incremental(&src, &defines, Some((&text, parsed))).unwrap();
            let fresh = parse_with(&src, &defines).unwrap();
            assert_eq!(
                next.model, fresh.model,
                "after replacing `{find}` by `{replace}`"
            );
            assert_eq!(
                next.tree.root_node().to_sexp(),
                fresh.tree.root_node().to_sexp()
            );
            (parsed, text) = (next, next_text);
        }
    }

    #[test]
    fn an_insertion_reparses_like_a_fresh_parse() {
        same_as_fresh(&[
            (
                "void run(",
                "__device__ int three() { return 3; }\nvoid run(",
            ),
            (
                "__global__ void fields",
                "// fields\n__global__ void fields",
            ),
        ]);
    }

    #[test]
    fn a_deletion_reparses_like_a_fresh_parse() {
        same_as_fresh(&[
            ("__device__ float twice(float v) { return 2 * v; }\n", ""),
            ("  __syncthreads();\n", ""),
        ]);
    }

    #[test]
    fn typing_inside_a_kernel_reparses_like_a_fresh_parse() {
        // one keystroke at a time, through a state that does not parse
        same_as_fresh(&[
            ("in[x * n]", "in[x * n + ]"),
            ("in[x * n + ]", "in[x * n + 1]"),
            ("p[t].z", "p[t].y"),
            ("out[t] =", "out[t + 1] ="),
        ]);
    }

    #[test]
    fn opening_an_if_0_reparses_like_a_fresh_parse() {
        // the directive blanks everything after it: far more than the typed bytes change
        same_as_fresh(&[
            ("__global__ void fields", "#if 0\n__global__ void fields"),
            ("void run(", "#endif\nvoid run("),
            ("#if 0", "#if 1"),
            ("#if 1\n", ""),
        ]);
    }

    #[test]
    fn the_edit_is_the_differing_range_of_the_preprocessed_texts() {
        let e = edit_between("ab\ncdef\ngh", "ab\ncXYZf\ngh");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 6, 7));
        assert_eq!(e.start_position, Point::new(1, 1));
        assert_eq!(e.old_end_position, Point::new(1, 3));
        assert_eq!(e.new_end_position, Point::new(1, 4));
        // a repeated character: the prefix and the suffix never overlap
        let e = edit_between("aaaa", "aaaaa");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 4, 5));
        // multi-byte characters are never split
        let e = edit_between("xµy", "x¶y");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (1, 3, 3));
        let long_a = "a".repeat(1000) + "µ" + &"b".repeat(1000);
        let long_b = "a".repeat(1000) + "¶" + &"b".repeat(1000);
        let e = edit_between(&long_a, &long_b);
        assert_eq!(
            (e.start_byte, e.old_end_byte, e.new_end_byte),
            (1000, 1002, 1002)
        );
        let e = edit_between("same", "same");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 4, 4));
    }

    #[test]
    fn random_keystrokes_reparse_like_a_fresh_parse() {
        // a fixed pseudo-random walk through broken and mended states
        let pieces = [
            "{",
            "}",
            "(",
            ")",
            ";",
            "[",
            "]",
            "\n",
            " ",
            "x",
            "*",
            "+",
            "2",
            "#if 0\n",
            "#endif\n",
            "/*",
            "*/",
            "\"",
            "<<<",
            ">>>",
            "__global__ ",
            "int ",
            "µ",
        ];
        random_walk(
            SRC,
            &pieces,
            400,
            4,
            0x2545_f491_4f6c_dd1d,
            |src, parsed, _, step| {
                let fresh = parse_with(src, &Defines::default()).unwrap();
                assert_eq!(parsed.model, fresh.model, "{step}:\n{src}");
            },
        );
    }

    /// A fixed pseudo-random walk of `steps` edits through `src`, each replacing up to
    /// `width - 1` bytes by one of `pieces` or by nothing. `check` sees each version with its
    /// incremental parse (from the previous version's), preprocessed text, and what the step did.
    fn random_walk(
        src: &str,
        pieces: &[&str],
        steps: usize,
        width: usize,
        mut seed: u64,
        mut check: impl FnMut(&str, &crate::ParsedFile, &str, &str),
    ) {
        let defines = Defines::default();
        let mut src = src.to_string();
        let (mut parsed, mut text) = parse_incremental(&src, &defines, None).unwrap();
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for step in 0..steps {
            let mut at = next(src.len() + 1);
            while !src.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + next(width)).min(src.len());
            while !src.is_char_boundary(end) {
                end += 1;
            }
            let insert = if next(3) == 0 {
                ""
            } else {
                pieces[next(pieces.len())]
            };
            src.replace_range(at..end, insert);
            (parsed, text) = parse_incremental(&src, &defines, Some((&text, parsed))).unwrap();
            let what = format!("step {step}: replaced {at}..{end} by {insert:?}");
            check(&src, &parsed, &text, &what);
        }
    }

    /// Random edits into every fixture, one at a time: each version's model (the items the
    /// edit left alone moved, the rest lowered again) is the model of a fresh parse.
    #[test]
    fn random_edits_to_the_fixtures_lower_like_a_fresh_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "fixtures in {}", dir.display());
        let pieces = [
            "}",
            "{",
            ";",
            "\n",
            "x",
            "2",
            "*",
            " + 1",
            "]",
            "#if 0\n",
            "#endif\n",
            "/*",
            "*/",
            "__device__ int f() { return 1; }\n",
            "namespace a {",
            "template <int N>\n",
            "#define W 64\n",
        ];
        for file in files {
            let src = std::fs::read_to_string(&file).unwrap();
            random_walk(
                &src,
                &pieces,
                60,
                6,
                0x9e37_79b9_7f4a_7c15,
                |src, parsed, text, step| {
                    // the reused items are what lowering this tree afresh gives
                    let relowered = crate::lower_tree(text, parsed.tree.clone(), None);
                    let file = file.display();
                    assert!(parsed.model == relowered.model, "{file} {step}");
                    // and where the text parses, the tree is a fresh parse's (tree-sitter's
                    // recovery from an error may differ between an incremental and a fresh parse)
                    let fresh = parse_with(src, &Defines::default()).unwrap();
                    if !fresh.tree.root_node().has_error() {
                        assert!(parsed.model == fresh.model, "{file} {step}");
                    }
                },
            );
        }
    }
}
