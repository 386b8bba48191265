fn main() {
    let p = std::env::args().nth(1).unwrap();
    let src = std::fs::read_to_string(&p).unwrap();
    let f = cudalint_syntax::parse(&src).unwrap();
    for s in &f.model.structs {
        let fields: Vec<String> = s
            .fields
            .iter()
            .map(|x| format!("{} {}", x.ty.name, x.name))
            .collect();
        println!("struct {} {{ {} }}", s.name, fields.join("; "));
    }
    for func in &f.model.functions {
        let params: Vec<String> = func
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty.name, p.name))
            .collect();
        println!("fn {}({})", func.name, params.join(", "));
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
