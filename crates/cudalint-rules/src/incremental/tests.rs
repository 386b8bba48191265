//! The incremental check gives what a fresh `check` gives, edit after edit.

use super::*;
use crate::check::check;

/// Everything a report says, in a form two reports compare by.
fn summary(reports: &[FileReport]) -> Vec<String> {
    reports
        .iter()
        .map(|r| {
            format!(
                "{} kernels={} errors={:?} parse_error_lines={:?}\n{:#?}\n{:#?}",
                r.path, r.kernels, r.error, r.parse_error_lines, r.diagnostics, r.accesses
            )
        })
        .collect()
}

/// Checks `path` through one `Incremental` after each edit of `edits` (applied in turn) and
/// compares every report with a fresh check of the same text. Returns the reuse of each step.
fn same_as_fresh(path: &str, src: &str, edits: &[Edit]) -> Vec<Reuse> {
    let settings = Settings::default();
    let mut inc = Incremental::default();
    let mut text = src.to_string();
    let mut reuse = Vec::new();
    for (step, edit) in std::iter::once(&Edit::None).chain(edits).enumerate() {
        edit.apply(&mut text);
        let inputs = [Input::new(path, text.as_str())];
        let fresh = summary(&check(&inputs, &settings));
        let kept = summary(&inc.check(&inputs, &settings));
        if fresh != kept {
            for (a, b) in fresh.iter().zip(&kept) {
                for (la, lb) in a.lines().zip(b.lines()) {
                    assert_eq!(la, lb, "{path}, step {step} ({edit:?}): first difference");
                }
            }
            panic!("{path}, step {step} ({edit:?}): the reports differ");
        }
        reuse.push(inc.last.kernels);
    }
    reuse
}

#[derive(Debug)]
enum Edit {
    None,
    /// Inserts text at a byte offset (clamped to the text, moved back to a char boundary).
    Insert(usize, &'static str),
    /// Removes a byte range (clamped likewise).
    Remove(usize, usize),
    /// Replaces the first occurrence of a string.
    Replace(&'static str, &'static str),
    /// Inserts text before the n-th (from 0) occurrence of a string.
    Before(&'static str, usize, &'static str),
    /// Removes from the first occurrence of one string to the first of another after it.
    Cut(&'static str, &'static str),
}

impl Edit {
    fn apply(&self, text: &mut String) {
        let floor = |text: &str, mut i: usize| {
            i = i.min(text.len());
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match *self {
            Edit::None => {}
            Edit::Insert(at, s) => text.insert_str(floor(text, at), s),
            Edit::Remove(a, b) => {
                let (a, b) = (floor(text, a), floor(text, b));
                text.replace_range(a.min(b)..b.max(a), "");
            }
            Edit::Replace(find, by) => {
                let i = text.find(find).expect("the text to replace");
                text.replace_range(i..i + find.len(), by);
            }
            Edit::Before(find, n, s) => {
                if let Some((i, _)) = text.match_indices(find).nth(n) {
                    text.insert_str(i, s);
                }
            }
            Edit::Cut(from, to) => {
                let a = text.find(from).expect("where to cut from");
                let b = a + text[a..].find(to).expect("where to cut to");
                text.replace_range(a..b, "");
            }
        }
    }
}

/// Where the body of each kernel opens (just after its `{`).
fn kernel_bodies(src: &str) -> Vec<usize> {
    src.match_indices("__global__")
        .filter_map(|(i, _)| src[i..].find('{').map(|j| i + j + 1))
        .collect()
}

/// Typing into each kernel, breaking and mending one, a line removed, an `#if 0` opened and
/// closed, a kernel added and removed, a macro changed: over every fixture.
fn edits_for(src: &str) -> Vec<Edit> {
    let bodies = kernel_bodies(src);
    let mut out = Vec::new();
    // one keystroke into each kernel, last first so earlier offsets stay valid
    for &b in bodies.iter().rev().take(6) {
        out.push(Edit::Insert(b, " "));
    }
    if let Some(&b) = bodies.first() {
        out.push(Edit::Replace("threadIdx.x", "threadIdx.y"));
        out.push(Edit::Insert(b, " int q = @@ ;\n"));
        out.push(Edit::Replace(" int q = @@ ;", " int q = 1;"));
        out.push(Edit::Replace(" int q = 1;\n", ""));
    }
    if bodies.len() > 1 {
        out.push(Edit::Before("__global__", 1, "#if 0\n"));
        out.push(Edit::Replace("#if 0\n", "#if 1\n"));
        out.push(Edit::Replace("#if 1\n", ""));
    }
    let mid = src.len() / 2;
    if let Some(nl) = src[mid..].find('\n') {
        let next = src[mid + nl + 1..]
            .find('\n')
            .map_or(src.len(), |j| mid + nl + 1 + j);
        out.push(Edit::Remove(mid + nl + 1, next + 1));
    }
    out.push(Edit::Insert(
        usize::MAX,
        "\n__global__ void added(float* o, const float* i) { o[threadIdx.x * 3] = i[threadIdx.x]; }\n",
    ));
    out.push(Edit::Replace("threadIdx.x * 3", "threadIdx.x * 4"));
    out.push(Edit::Insert(0, "#define ADDED_MACRO 8\n"));
    out.push(Edit::Replace("#define ADDED_MACRO 8\n", ""));
    out
}

#[test]
fn every_fixture_edited_checks_like_a_fresh_check() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("examples")).unwrap())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    assert!(files.len() > 10, "{files:?}");
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        same_as_fresh(&f.to_string_lossy(), &src, &edits_for(&src));
    }
}

const PROGRAM: &str = r#"#define W 32
struct Q { float a, b, c; };
__device__ float get(const float* p, int i) { return p[i * 2]; }

__global__ void first(const float* in, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = get(in, t);
}

__global__ void second(const Q* q, float* out) {
  __shared__ float tile[W][W];
  tile[threadIdx.y][threadIdx.x] = q[threadIdx.x].b;
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x][threadIdx.y]; // cudalint-ignore CL301: test
}

__global__ void child(float* out) { out[threadIdx.x * 8] = 0; }

__global__ void parent(float* out) {
  dim3 b(64);
  child<<<1, b>>>(out);
}

__global__ void third(const float* in, float* out, int n) {
  for (int j = 0; j < 4; ++j)
    out[threadIdx.x + j * n] = in[threadIdx.x * W + j];
}

void run(const float* in, float* out, const Q* q) {
  dim3 b(W, 8);
  first<<<16, 128>>>(in, out);
  second<<<16, b>>>(q, out);
}
"#;

#[test]
fn typing_inside_a_kernel_analyses_only_that_kernel() {
    let reuse = same_as_fresh(
        "t.cu",
        PROGRAM,
        &[
            Edit::Replace("W + j]", "W + j + 1]"),
            Edit::Replace("j + 1]", "j + ]"),
            Edit::Replace("j + ]", "j]"),
        ],
    );
    assert_eq!(reuse[0].reused, 0);
    for r in &reuse[1..] {
        assert_eq!((r.analysed, r.reused), (1, 4), "{reuse:?}");
    }
}

#[test]
fn edits_outside_the_edited_kernel_are_seen() {
    // each of these changes what another kernel's analysis reads
    same_as_fresh(
        "t.cu",
        PROGRAM,
        &[
            // a helper
            Edit::Replace("p[i * 2]", "p[i * 4]"),
            // a macro
            Edit::Replace("#define W 32", "#define W 33"),
            // a struct
            Edit::Replace("float a, b, c;", "float a, b;"),
            // a launch in host code
            Edit::Replace("first<<<16, 128>>>", "first<<<16, 64>>>"),
            // a launch inside a kernel (dynamic parallelism) changes the launched kernel
            Edit::Replace("dim3 b(64);", "dim3 b(32, 2);"),
            Edit::Replace("dim3 b(32, 2);", "dim3 b(16, 4);"),
            // a macro defined inside a kernel body
            Edit::Before(
                "__global__ void child",
                0,
                "__global__ void m() {\n#define W2 4\n}\n",
            ),
            Edit::Replace("j * n]", "j * W2]"),
            Edit::Replace("#define W2 4", "#define W2 8"),
            // a suppression
            Edit::Replace("cudalint-ignore CL301", "cudalint-ignore CL201"),
            // a kernel removed, then the text before every kernel shifted
            Edit::Cut("__global__ void child", "__global__ void parent"),
            Edit::Insert(0, "// a comment\n\n"),
        ],
    );
}
