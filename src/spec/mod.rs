//! The `.inv` spec language: lexer, parser, syntax tree, diagnostics.

pub mod ast;
pub mod bits;
pub mod diag;
pub mod insn_imm;
pub mod lexer;
pub mod parser;
pub mod queue;
pub mod syntax;
