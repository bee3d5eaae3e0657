//! The `.inv` spec language: lexer, parser, syntax tree, diagnostics.

pub mod ast;
pub mod bits;
pub mod diag;
pub mod insn_imm;
pub mod lexer;
pub mod ops;
pub mod parser;
pub mod queue;
pub mod syntax;

/// Every spec in `examples/`, by path, sorted: the corpus the unit tests
/// check whole-pipeline properties over.
#[cfg(test)]
pub(crate) fn examples() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut specs: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    specs.sort();
    assert!(specs.len() >= 10, "examples not found");
    specs
}
