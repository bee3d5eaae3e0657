//! shootdown: a code generator for hardware invalidation sequences.
//!
//! Pipeline (one direction): [`spec`] text -> AST -> checked [`ir`] ->
//! [`passes`] -> [`lir`] -> [`isa`] code -> [`emit`]ters. The modules
//! import each other one way only (docs/architecture.md has the layers;
//! `tests/module_graph.rs` fails on a cycle).

pub mod build_api;
pub mod cli;
pub mod codegen;
pub mod cost;
pub mod diff;
pub mod emit;
#[cfg(feature = "emu")]
pub mod emu;
pub mod features;
pub mod ir;
pub mod isa;
pub mod lir;
pub mod litmus;
pub mod model;
pub mod output;
mod par;
pub mod passes;
pub mod spec;
pub mod verify;

pub use build_api::Build;
pub use codegen::{compile, load, Options, Style};
pub use isa::Target;
