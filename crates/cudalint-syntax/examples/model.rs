fn main() {
    let p = std::env::args().nth(1).unwrap();
    let src = std::fs::read_to_string(&p).unwrap();
    let f = cudalint_syntax::parse(&src).unwrap();
    for func in &f.model.functions {
        println!(
            "{} {:?}",
            func.name,
            func.body.as_ref().map(|b| b
                .iter()
                .map(|s| format!("{s:?}").chars().take(300).collect::<String>())
                .collect::<Vec<_>>())
        );
    }
}
