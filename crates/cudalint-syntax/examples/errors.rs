//! Prints every parse-error region of a file after preprocessing: `cargo run --example errors -- FILE`.
fn main() {
    for p in std::env::args().skip(1) {
        let src = match std::fs::read_to_string(&p) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{p}: {e}");
                continue;
            }
        };
        let Some(f) = cudalint_syntax::parse(&src) else {
            eprintln!("{p}: tree-sitter gave up");
            continue;
        };
        let lines = cudalint_syntax::LineIndex::new(&src);
        for s in &f.model.error_regions {
            let (l, c) = lines.line_col(s.start as usize);
            let text: String = src[s.range()].chars().take(60).collect();
            println!("{p}:{l}:{c}: {:?}", text);
        }
    }
}
