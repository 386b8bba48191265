fn walk(n: tree_sitter::Node, src: &str, d: usize) {
    let t = &src[n.byte_range()];
    let t: String = t.chars().take(40).collect::<String>().replace('\n', " ");
    if d < std::env::var("DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
    {
        println!(
            "{}{} {}{} | {}",
            "  ".repeat(d),
            n.kind(),
            if n.is_named() { "" } else { "(anon)" },
            n.kind_id(),
            t
        );
    }
    let mut c = n.walk();
    for ch in n.children(&mut c) {
        walk(ch, src, d + 1);
    }
}
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let src = std::fs::read_to_string(&p).unwrap();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&cudalint_syntax::language()).unwrap();
    let t = parser.parse(&src, None).unwrap();
    walk(t.root_node(), &src, 0);
}
