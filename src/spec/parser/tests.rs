use super::*;

/// RISC-V names: operands end with the line, `x0` is part of the
/// name, and a device called `sfence` with a register `vma` is still
/// written to.
#[test]
fn riscv_invalidations_and_fences() {
    let s = parse(
        "target riscv64\n device sfence { reg vma 0 u64 le }\n\
         granules g { 4K via sfence.vma\n all via sfence.vma x0 }\n\
         seq s(a: u64, asid: u64) {\n sfence.vma\n sfence.vma = 1\n\
         sfence.vma a\n sinval.vma a, asid\n sfence.vma x0, asid\n\
         barrier fence rw,w\n barrier sfence.w.inval\n barrier fence.i\n }",
    )
    .unwrap();
    let got: Vec<String> = s.seqs[0]
        .body
        .iter()
        .map(|st| match st {
            Stmt::Invalidate { name, operands, .. } => {
                format!("{} /{}", name.name, operands.len())
            }
            Stmt::Barrier { name, .. } => format!("barrier {}", name.name),
            _ => "write".to_string(),
        })
        .collect();
    assert_eq!(
        got,
        [
            "sfence.vma /0",
            "write",
            "sfence.vma /1",
            "sinval.vma /2",
            "sfence.vma x0 /1",
            "barrier fence rw,w",
            "barrier sfence.w.inval",
            "barrier fence.i",
        ]
    );
    let vias: Vec<&str> = s.granules[0]
        .entries
        .iter()
        .filter_map(|e| e.via.as_ref().map(|v| v.name.as_str()))
        .collect();
    assert_eq!(vias, ["sfence.vma", "sfence.vma x0"]);
}

#[test]
fn parses_device_and_seq() {
    let s = parse(
        "target power64\n device d { instances dynamic max 4\n reg a 0 u64 be\n field a.f msb0 3..5\n require a before a }\n seq s(x: u64) { each d { d.a = { f: 1 } | x << 2 } poll d.a.f == 0 limit 10 else return -1 }",
    )
    .unwrap();
    assert_eq!(s.devices.len(), 1);
    assert_eq!(s.seqs[0].body.len(), 2);
}

#[test]
fn deep_nesting_is_a_diagnostic() {
    let mut src = String::from("seq s() {");
    for _ in 0..10_000 {
        src.push_str("each d {");
    }
    assert!(parse(&src).is_err());
    let deep_expr = format!("seq s() {{ d.a = {}1 }}", "(".repeat(100_000));
    assert!(parse(&deep_expr).is_err());
    let deep_neg = format!("seq s() {{ d.a = {}1 }}", "-~".repeat(100_000));
    assert!(parse(&deep_neg).is_err());
}

#[test]
fn barrier_operands() {
    let s = parse("seq s() { barrier dsb ish barrier eieio }").unwrap();
    match &s.seqs[0].body[0] {
        Stmt::Barrier { name, .. } => assert_eq!(name.name, "dsb ish"),
        _ => panic!(),
    }
}

/// Parsed in parts on every core, every example and a spec of many
/// sequences (devices, covers and queues between them) give the tree a
/// parse in order gives; a broken one gives no tree (the caller then
/// parses in order for the diagnostic).
#[test]
fn parsing_in_parts_is_parsing_in_order() {
    let mut specs: Vec<String> = crate::spec::examples()
        .into_iter()
        .map(|(_, src)| src)
        .collect();
    // Every example's items in one spec.
    specs.push(specs.join("\n"));
    let mut split = 0;
    for src in &specs {
        let toks = crate::spec::lexer::lex(src).unwrap();
        let (eof, toks) = toks.split_last().unwrap();
        let serial = Parser::new(src, toks, *eof).spec().unwrap();
        // None: no `seq` after a closing brace to split at.
        if let Some(parts) = parse_in_parts(src, toks, eof, 0) {
            assert_eq!(format!("{serial:?}"), format!("{parts:?}"));
            split += 1;
        }
    }
    assert!(split >= 5, "only {split} specs were split");
    let broken = format!("{}\nseq bad() {{ each }}\n{}", specs[0], specs[1]);
    let toks = crate::spec::lexer::lex(&broken).unwrap();
    let (eof, toks) = toks.split_last().unwrap();
    assert!(parse_in_parts(&broken, toks, eof, 0).is_none());
    assert!(parse(&broken).is_err());
}
