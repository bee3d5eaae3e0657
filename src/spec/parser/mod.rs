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

/// A count the parser bounds, and the error past the bound:
/// "WITHIN has more than MAX WHAT".
struct Limit {
    max: usize,
    within: &'static str,
    what: &'static str,
    label: &'static str,
    help: &'static str,
}

const EXPR_NODES: Limit = Limit {
    max: MAX_EXPR_NODES,
    within: "expression",
    what: "operands and operators",
    label: "too large",
    help: "split it, or compute the value at run time in C",
};

const SEQ_STMTS: Limit = Limit {
    max: MAX_SEQ_STMTS,
    within: "sequence",
    what: "statements",
    label: "one too many",
    help: "split it into several sequences",
};

impl Limit {
    /// Count one more in `count`; past the limit, the error at `span`.
    fn count(&self, span: Span, count: &mut usize) -> Result<(), Diag> {
        *count += 1;
        if *count > self.max {
            return Err(Diag::new(
                span,
                format!("{} has more than {} {}", self.within, self.max, self.what),
            )
            .label(self.label)
            .help(self.help));
        }
        Ok(())
    }
}

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
    // The lexer ends every token list with the end of file.
    let (eof, toks) = match toks.split_last() {
        Some((eof, toks)) => (*eof, toks),
        None => (
            Token {
                tok: Tok::Eof,
                span: Span::new(src.len(), 0),
            },
            &toks[..],
        ),
    };
    if let Some(spec) = parse_in_parts(src, toks, &eof, PARALLEL_FROM_TOKENS) {
        return Ok(spec);
    }
    Parser::new(src, toks, eof).spec()
}

/// Below this many tokens a spec is parsed on one thread (a few
/// thousand lines parse faster than a thread pool starts).
const PARALLEL_FROM_TOKENS: usize = 200_000;

/// A large spec parsed as runs of whole sequences on every core, joined
/// in source order: what the parser makes of one top-level item does not
/// depend on the items before it, so the join is the serial parse. Any
/// error gives None, and the caller parses serially for the diagnostic
/// (the same one, whatever the split).
fn parse_in_parts<'a>(
    src: &'a str,
    toks: &[Token<'a>],
    eof: &Token<'a>,
    from_tokens: usize,
) -> Option<Spec> {
    use rayon::prelude::*;
    if toks.len() < from_tokens {
        return None;
    }
    // `seq` at brace depth 0 right after a `}`: a sequence starts there
    // (the previous item ended with its closing brace).
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t.tok {
            Tok::LBrace => depth += 1,
            Tok::RBrace => depth = depth.saturating_sub(1),
            Tok::Ident("seq") if depth == 0 && i > 0 && toks[i - 1].tok == Tok::RBrace => {
                starts.push(i)
            }
            _ => {}
        }
    }
    let parts = (rayon::current_num_threads() * 4).min(starts.len() + 1);
    if parts < 2 {
        return None;
    }
    let mut bounds = vec![0];
    bounds.extend((1..parts).map(|k| starts[k * starts.len() / parts]));
    bounds.dedup();
    bounds.push(toks.len());
    let specs: Vec<Spec> = bounds
        .par_windows(2)
        .map(|w| {
            // A part's end stands for the end of the file.
            let end = toks.get(w[1]).map_or(*eof, |t| Token {
                tok: Tok::Eof,
                span: Span::new(t.span.offset, 0),
            });
            Parser::new(src, &toks[w[0]..w[1]], end).spec().ok()
        })
        .collect::<Option<_>>()?;
    let mut all = Spec::default();
    for s in specs {
        all.targets.extend(s.targets);
        all.machines.extend(s.machines);
        all.devices.extend(s.devices);
        all.granules.extend(s.granules);
        all.thresholds.extend(s.thresholds);
        all.features.extend(s.features);
        all.records.extend(s.records);
        all.queues.extend(s.queues);
        all.seqs.extend(s.seqs);
    }
    Some(all)
}

struct Parser<'a> {
    src: &'a str,
    /// The tokens, without the end of file: that is `eof`.
    toks: &'a [Token<'a>],
    eof: Token<'a>,
    pos: usize,
    depth: usize,
    expr_depth: usize,
    /// Nodes of the outermost expression being parsed.
    expr_nodes: usize,
    /// Statements of the sequence being parsed.
    stmts: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, toks: &'a [Token<'a>], eof: Token<'a>) -> Self {
        Parser {
            src,
            toks,
            eof,
            pos: 0,
            depth: 0,
            expr_depth: 0,
            expr_nodes: 0,
            stmts: 0,
        }
    }

    fn spec(&mut self) -> Result<Spec, Diag> {
        let mut spec = Spec::default();
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
