//! Recursive-descent parser for `.inv` specs.
//!
//! Nesting is bounded (blocks and expressions) so hostile input gets a
//! diagnostic instead of a stack overflow.

use super::ast::*;
use super::diag::{Diag, Span};
use super::lexer::{lex, Tok, Token};

mod cursor;
mod device;
mod expr;
mod granules;
mod insn;
mod queue;
mod seq;
mod stmt;
#[cfg(test)]
mod tests;

/// Deeper nesting than this is certainly not a hardware sequence.
const MAX_DEPTH: usize = 32;
const MAX_EXPR_DEPTH: usize = 48;
/// Operators and operands in one expression: keeps every later recursive
/// walk over the tree shallow (a long `x + x + ...` chain nests as deeply
/// as parentheses do).
const MAX_EXPR_NODES: usize = 256;
/// Larger specs are rejected up front: real ones are a few KiB, and this
/// bounds the time and memory any input can cost.
pub const MAX_SPEC_BYTES: usize = 8 << 20;
/// Statements in one sequence, nested ones included. The passes search
/// for optimal schedules and barrier placements; this keeps every
/// sequence small enough for them (real ones have a few dozen).
pub const MAX_SEQ_STMTS: usize = 256;

pub fn parse(src: &str) -> Result<Spec, Diag> {
    if src.len() > MAX_SPEC_BYTES {
        let mut at = MAX_SPEC_BYTES;
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        return Err(Diag::new(
            Span::new(at, 0),
            format!(
                "spec is {} bytes, more than the limit of {MAX_SPEC_BYTES}",
                src.len()
            ),
        )
        .label("the limit is reached here")
        .help("split the spec into several files"));
    }
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        depth: 0,
        expr_depth: 0,
        expr_nodes: 0,
        stmts: 0,
    };
    p.spec()
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token<'a>>,
    pos: usize,
    depth: usize,
    expr_depth: usize,
    /// Nodes of the outermost expression being parsed.
    expr_nodes: usize,
    /// Statements of the sequence being parsed.
    stmts: usize,
}

impl Parser<'_> {
    fn spec(&mut self) -> Result<Spec, Diag> {
        let mut spec = Spec {
            targets: Vec::new(),
            machines: Vec::new(),
            devices: Vec::new(),
            granules: Vec::new(),
            thresholds: Vec::new(),
            features: Vec::new(),
            records: Vec::new(),
            queues: Vec::new(),
            seqs: Vec::new(),
        };
        loop {
            self.skip_semis();
            match self.peek() {
                Tok::Eof => break,
                Tok::Ident("target") => {
                    self.bump();
                    self.target_names(&mut spec.targets)?;
                }
                Tok::Ident("machine") => {
                    self.bump();
                    spec.machines.push(self.ident("a machine name (e6500)")?);
                }
                Tok::Ident("device") => spec.devices.push(self.device()?),
                Tok::Ident("seq") => spec.seqs.push(self.seq()?),
                Tok::Ident("granules") => spec.granules.push(self.granules()?),
                Tok::Ident("record") => spec.records.push(self.record()?),
                Tok::Ident("queue") => spec.queues.push(self.queue()?),
                Tok::Ident("feature") => {
                    self.bump();
                    spec.features.push(self.feature_decl()?);
                }
                Tok::Ident("threshold") => {
                    self.bump();
                    spec.thresholds.push(self.threshold_decl()?);
                }
                _ => return Err(self.unexpected(
                    "`target`, `machine`, `device`, `granules`, `record`, `queue`, `feature`, `threshold` or `seq`",
                )),
            }
        }
        Ok(spec)
    }

    /// After `target`: `NAME[, NAME...]`.
    fn target_names(&mut self, targets: &mut Vec<Ident>) -> Result<(), Diag> {
        loop {
            targets.push(self.ident("a target name")?);
            let comma = self.span();
            if !self.eat(&Tok::Comma) {
                return Ok(());
            }
            // `target aarch64,` then `device d {`: the comma
            // is the mistake, not `device` as a target name.
            if let Tok::Ident(k) = self.peek() {
                if TOP_LEVEL.contains(k) {
                    return Err(Diag::new(
                        comma,
                        format!("expected a target name after `,`, found `{k}`"),
                    )
                    .label("trailing comma")
                    .help("remove the comma, or name another target after it"));
                }
            }
        }
    }

    /// After `feature`: `NAME [= KERNEL_CAPABILITY]`.
    fn feature_decl(&mut self) -> Result<FeatureDecl, Diag> {
        let name = self.ident("a feature name")?;
        let cap = if self.eat(&Tok::Assign) {
            Some(self.ident("a kernel capability (e.g. ARM64_WORKAROUND_REPEAT_TLBI)")?)
        } else {
            None
        };
        Ok(FeatureDecl { name, cap })
    }

    /// After `threshold`: `NAME = N`.
    fn threshold_decl(&mut self) -> Result<(Ident, u64), Diag> {
        let name = self.ident("a threshold name")?;
        self.expect(Tok::Assign)?;
        let (v, _) = self.int("the threshold value")?;
        Ok((name, v))
    }
}

/// Keywords that start a top-level item.
const TOP_LEVEL: [&str; 9] = [
    "target",
    "machine",
    "device",
    "granules",
    "record",
    "queue",
    "feature",
    "threshold",
    "seq",
];
