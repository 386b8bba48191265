//! Prints a file as the parser sees it after preprocessing: `cargo run --example prepared -- FILE`.
fn main() {
    for p in std::env::args().skip(1) {
        match std::fs::read_to_string(&p) {
            Ok(src) => print!(
                "{}",
                cudalint_syntax::preprocess::prepare(&src, &Default::default())
            ),
            Err(e) => eprintln!("{p}: {e}"),
        }
    }
}
