//! The `.inv` spec language: lexer, parser, syntax tree, diagnostics.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parser;
pub mod queue;
