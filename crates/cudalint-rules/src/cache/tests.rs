//! A cached check gives what a cold `check` gives, after every edit of a project whose files
//! reach each other by include, by launch, by host call and by macros the build never sets.

use super::*;
use crate::build_files::BuildFiles;
use crate::check::check;
use std::sync::Arc;

/// Everything a report says, the fields `audit` leaves out included.
fn everything(reports: &[FileReport]) -> Vec<String> {
    reports.iter().map(|r| format!("{r:#?}")).collect()
}

fn same(cold: &[FileReport], cached: &[FileReport], what: &str) {
    let (a, b) = (everything(cold), everything(cached));
    assert_eq!(a.len(), b.len(), "{what}: {a:?}\n{b:?}");
    for (x, y) in a.iter().zip(&b) {
        for (lx, ly) in x.lines().zip(y.lines()) {
            assert_eq!(lx, ly, "{what}: first difference");
        }
        assert_eq!(x, y, "{what}");
    }
}

/// Four programs: `a` (a header with a helper and macros, a kernel file and a launching
/// file), `b` (a kernel of the same name as `a`'s, launched from a host function that `main`
/// calls with a constant), `c` (a kernel whose `#ifdef` a build file decides, unless some file
/// of the run defines the name) and `d` (a header on its own).
fn project() -> Vec<(String, String)> {
    [
        (
            "a/common.h",
            "#define BLOCK 128\n#define WIDE 2\n__device__ float get(const float* p, int i) { return p[i * WIDE]; }\n",
        ),
        (
            "a/k.cu",
            "#include \"common.h\"\n__global__ void scale(const float* in, float* out) {\n  int t = blockIdx.x * blockDim.x + threadIdx.x;\n  out[t] = get(in, t);\n}\n__global__ void tile(float* o) {\n  __shared__ float s[32][32];\n  s[threadIdx.x][threadIdx.y] = o[threadIdx.x];\n  __syncthreads();\n  o[threadIdx.y * 32 + threadIdx.x] = s[threadIdx.y][threadIdx.x];\n}\n",
        ),
        (
            "a/main.cu",
            "#include \"common.h\"\nvoid go(const float* i, float* o) {\n  scale<<<64, BLOCK>>>(i, o);\n  tile<<<1, dim3(32, 32)>>>(o);\n}\n",
        ),
        (
            "b/k.cu",
            "__global__ void scale(const float* in, float* out, int s) {\n  out[threadIdx.x] = in[threadIdx.x * s];\n}\n",
        ),
        (
            "b/host.cu",
            "void run(const float* i, float* o, int s) { scale<<<1, 64>>>(i, o, s); }\nint main() { run(0, 0, 4); return 0; }\n",
        ),
        (
            "c/solo.cu",
            "#ifdef USE_DOUBLE\ntypedef double real;\n#else\ntypedef float real;\n#endif\n__global__ void axpy(real* y, const real* x) { y[threadIdx.x * 2] = x[threadIdx.x]; }\n",
        ),
        (
            "d/extra.cuh",
            "__global__ void lone(int* p) { p[threadIdx.x * 8] = 1; }\n",
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.to_string()))
    .collect()
}

fn inputs(files: &[(String, String)]) -> Vec<Input> {
    let build = Arc::new(BuildFiles {
        text: "all:\n\tnvcc -o solo solo.cu\n".into(),
        defines: Vec::new(),
    });
    files
        .iter()
        .map(|(p, t)| {
            let mut i = Input::new(p.as_str(), t.as_str());
            // common.h is read for what it defines, as a header found through an include
            i.context = p.ends_with("common.h");
            if p.starts_with("c/") {
                i.build = Some(build.clone());
            }
            i
        })
        .collect()
}

/// A small deterministic generator (the test must fail the same way twice).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Edits of the kinds that move results across files: a macro's value, a launch added or
/// taken away, a kernel renamed, an include added, a macro some other file now defines, a
/// file added or removed, text shifted.
fn edit(files: &mut Vec<(String, String)>, rng: &mut Lcg) -> String {
    let replace = |files: &mut Vec<(String, String)>, path: &str, from: &str, to: &str| {
        if let Some(f) = files.iter_mut().find(|f| f.0 == path) {
            f.1 = f.1.replacen(from, to, 1);
        }
    };
    match rng.below(12) {
        0 => {
            replace(files, "a/common.h", "WIDE 2", "WIDE 4");
            "WIDE 2 -> 4".into()
        }
        1 => {
            replace(files, "a/common.h", "WIDE 4", "WIDE 2");
            "WIDE 4 -> 2".into()
        }
        2 => {
            replace(files, "b/host.cu", "run(0, 0, 4)", "run(0, 0, 1)");
            "b's host constant".into()
        }
        3 => {
            replace(files, "b/host.cu", "scale<<<1, 64>>>", "scale<<<1, 32>>>");
            "b's launch shape".into()
        }
        4 => {
            files.push(("e/defs.h".into(), "#define USE_DOUBLE 1\n".into()));
            "a file that defines USE_DOUBLE".into()
        }
        5 => {
            files.retain(|f| f.0 != "e/defs.h");
            "no file defines USE_DOUBLE".into()
        }
        6 => {
            replace(files, "a/main.cu", "  tile<<<1, dim3(32, 32)>>>(o);\n", "");
            "tile's launch removed".into()
        }
        7 => {
            replace(
                files,
                "a/main.cu",
                "void go(",
                "void more(float* o) { tile<<<1, dim3(32, 32)>>>(o); }\nvoid go(",
            );
            "tile launched again".into()
        }
        8 => {
            replace(files, "d/extra.cuh", "lone", "scale");
            "a third kernel named scale".into()
        }
        9 => {
            let at = rng.below(3);
            let path = ["a/k.cu", "b/k.cu", "c/solo.cu"][at];
            replace(files, path, "__global__", "\n\n__global__");
            format!("lines added in {path}")
        }
        10 => {
            replace(
                files,
                "d/extra.cuh",
                "__global__",
                "#include \"../a/common.h\"\n__global__",
            );
            "d includes a's header".into()
        }
        _ => {
            let (p, t) = files.remove(rng.below(files.len()));
            files.push((p.clone(), t));
            format!("{p} moved to the end of the run")
        }
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cudalint-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_cached_check_gives_the_cold_result_after_every_edit() {
    let dir = scratch("edits");
    let cache = Cache::new(&dir, "test build");
    let settings = Settings::default();
    let mut files = project();
    let mut rng = Lcg(7);
    let mut reused_any = false;
    for step in 0..60 {
        let what = if step == 0 {
            "first run".to_string()
        } else {
            edit(&mut files, &mut rng)
        };
        let inputs = inputs(&files);
        let cold = check(&inputs, &settings);
        let (cached, stats) = check_cached(&inputs, &settings, &cache);
        same(&cold, &cached, &format!("step {step} ({what})"));
        assert!(stats.warnings.is_empty(), "{:?}", stats.warnings);
        reused_any |= stats.reused > 0;
        // and again, with nothing changed: nothing is analysed
        let (again, stats) = check_cached(&inputs, &settings, &cache);
        same(&cold, &again, &format!("step {step} ({what}), unchanged"));
        assert_eq!(
            (stats.analysed, stats.parsed),
            (0, 0),
            "step {step} ({what})"
        );
    }
    assert!(reused_any);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn touching_a_header_analyses_its_program_again_and_no_other() {
    let dir = scratch("header");
    let cache = Cache::new(&dir, "test build");
    let settings = Settings::default();
    let mut files = project();
    let (_, first) = check_cached(&inputs(&files), &settings, &cache);
    assert_eq!((first.reused, first.analysed), (0, 6));
    files[0].1 = files[0].1.replace("WIDE 2", "WIDE 8");
    let inputs = inputs(&files);
    let (cached, stats) = check_cached(&inputs, &settings, &cache);
    // a/k.cu and a/main.cu include it, and b's files go with them: b launches a kernel of
    // the name a defines (launches are found by name across the run); c and d are kept
    assert_eq!((stats.reused, stats.analysed), (2, 4));
    same(
        &check(&inputs, &settings),
        &cached,
        "after the header changed",
    );
    // another build of cudalint trusts none of it
    let (_, other) = check_cached(&inputs, &settings, &Cache::new(&dir, "another build"));
    assert_eq!(other.reused, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_or_foreign_entry_is_ignored_with_a_warning() {
    let dir = scratch("corrupt");
    let cache = Cache::new(&dir, "test build");
    let settings = Settings::default();
    let inputs = inputs(&project());
    let cold = check(&inputs, &settings);
    check_cached(&inputs, &settings, &cache);
    let entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("v3/reports"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    // programs a and b are one link (both launch a kernel named scale), c and d one each
    assert_eq!(entries.len(), 3, "{entries:?}");
    // one cut in half, one holding another entry's content
    let bytes = std::fs::read(&entries[0]).unwrap();
    std::fs::write(&entries[0], &bytes[..bytes.len() / 2]).unwrap();
    std::fs::copy(&entries[2], &entries[1]).unwrap();
    let (cached, stats) = check_cached(&inputs, &settings, &cache);
    same(&cold, &cached, "with a corrupt cache");
    assert!(
        stats
            .warnings
            .iter()
            .any(|w| w.contains("not a cache entry cudalint can read")),
        "{:?}",
        stats.warnings
    );
    assert!(
        stats
            .warnings
            .iter()
            .any(|w| w.contains("written for something else")),
        "{:?}",
        stats.warnings
    );
    assert!(stats.analysed >= 2);
    assert!(dir.join(".gitignore").is_file() && dir.join("CACHEDIR.TAG").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
