//! Prints the structs and typedefs cudalint reads from a file: `cargo run -p cudalint-syntax --example types FILE`.
fn main() {
    let Some(p) = std::env::args().nth(1) else {
        eprintln!("usage: types FILE");
        return;
    };
    let src = match std::fs::read(&p) {
        Ok(b) => cudalint_syntax::source::decode(b).text,
        Err(e) => {
            eprintln!("{p}: {e}");
            return;
        }
    };
    let Some(f) = cudalint_syntax::parse(&src) else {
        return;
    };
    for s in &f.model.structs {
        println!("struct {}", s.name);
        for fd in &s.fields {
            println!(
                "  {} {}{}",
                fd.ty.name,
                fd.name,
                if fd.array_len.is_some() { "[..]" } else { "" }
            );
        }
    }
    for t in &f.model.typedefs {
        println!("typedef {} {}", t.ty.name, t.name);
    }
}
