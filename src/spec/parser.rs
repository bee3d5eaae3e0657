//! Recursive-descent parser for `.inv` specs.
//!
//! Nesting is bounded (blocks and expressions) so hostile input gets a
//! diagnostic instead of a stack overflow.

use super::ast::*;
use super::diag::{Diag, Span};
use super::lexer::{lex, Tok, Token};

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

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok<'a> {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, n: usize) -> &Tok<'a> {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }
    /// Does the current token start on the line the previous one ended
    /// on? (Operands of a RISC-V instruction follow it on its line.)
    fn on_same_line(&self) -> bool {
        let prev = self.prev_span();
        let gap = self.src.get(prev.offset + prev.len..self.span().offset);
        gap.is_some_and(|g| !g.contains(['\n', '\r']))
    }
    /// `sfence.vma` / `sinval.vma` (RISC-V): the name, unless the words
    /// are a device access (`sfence.vma = ...`, `sfence.vma.f = ...`).
    fn riscv_invalidate_ahead(&self) -> bool {
        matches!(self.peek(), Tok::Ident("sfence" | "sinval"))
            && self.peek_at(1) == &Tok::Dot
            && self.peek_at(2) == &Tok::Ident("vma")
            && !matches!(self.peek_at(3), Tok::Dot | Tok::Assign)
    }
    /// `sfence.vma` or `sinval.vma`, then ` x0` when its first operand is
    /// the zero register (every address of one ASID): the name an
    /// invalidation and a granule's `via` share.
    fn riscv_invalidate_name(&mut self) -> Result<Ident, Diag> {
        let mut id = self.ident("`sfence` or `sinval`")?;
        self.expect(Tok::Dot)?;
        let vma = self.ident("`vma`")?;
        id.name = format!("{}.vma", id.name);
        id.span = id.span.to(vma.span);
        if self.on_same_line() && self.is_kw("x0") {
            let x0 = self.bump();
            id.name.push_str(" x0");
            id.span = id.span.to(x0);
            self.eat(&Tok::Comma);
        }
        Ok(id)
    }
    /// A RISC-V barrier: `fence PRED,SUCC`, `fence.i`, `sfence.w.inval`,
    /// `sfence.inval.ir` (dotted names and comma-separated sets that the
    /// word-by-word barrier names of other targets do not have).
    fn riscv_barrier(&mut self, mut name: Ident) -> Result<Ident, Diag> {
        while self.peek() == &Tok::Dot && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let part = self.ident("a barrier name")?;
            name.name = format!("{}.{}", name.name, part.name);
            name.span = name.span.to(part.span);
        }
        if name.name == "fence" && self.on_same_line() {
            let pred = self.ident("a FENCE predecessor set (`rw`, `w`, `iorw`...)")?;
            self.expect(Tok::Comma)?;
            let succ = self.ident("a FENCE successor set")?;
            name.name = format!("fence {},{}", pred.name, succ.name);
            name.span = name.span.to(succ.span);
        }
        Ok(name)
    }
    /// Step past the current token; its span (tokens are read in place
    /// through `peek`, never cloned: identifiers own their text).
    fn bump(&mut self) -> Span {
        let span = self.toks[self.pos].span;
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        span
    }
    fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if *s == kw)
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn unexpected(&self, wanted: &str) -> Diag {
        Diag::new(
            self.span(),
            format!("expected {wanted}, found {}", self.peek().describe()),
        )
        .label(format!("expected {wanted}"))
    }
    fn expect(&mut self, t: Tok<'_>) -> Result<Span, Diag> {
        if self.peek() == &t {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&t.describe()))
        }
    }
    fn expect_kw(&mut self, kw: &str) -> Result<Span, Diag> {
        if self.is_kw(kw) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }
    fn ident(&mut self, what: &str) -> Result<Ident, Diag> {
        match self.peek() {
            Tok::Ident(name) => {
                let name = name.to_string();
                let span = self.bump();
                Ok(Ident { name, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }
    fn int(&mut self, what: &str) -> Result<(u64, Span), Diag> {
        match *self.peek() {
            Tok::Int(v) => {
                let span = self.bump();
                Ok((v, span))
            }
            _ => Err(self.unexpected(what)),
        }
    }
    fn skip_semis(&mut self) {
        while self.eat(&Tok::Semi) {}
    }

    fn enter(&mut self, span: Span) -> Result<(), Diag> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(
                Diag::new(span, format!("blocks nested deeper than {MAX_DEPTH}"))
                    .label("too deep")
                    .help("hardware sequences need a few levels at most; flatten the spec"),
            );
        }
        Ok(())
    }

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
                    loop {
                        spec.targets.push(self.ident("a target name")?);
                        let comma = self.span();
                        if !self.eat(&Tok::Comma) {
                            break;
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
                    let name = self.ident("a feature name")?;
                    let cap = if self.eat(&Tok::Assign) {
                        Some(self.ident("a kernel capability (e.g. ARM64_WORKAROUND_REPEAT_TLBI)")?)
                    } else {
                        None
                    };
                    spec.features.push(FeatureDecl { name, cap });
                }
                Tok::Ident("threshold") => {
                    self.bump();
                    let name = self.ident("a threshold name")?;
                    self.expect(Tok::Assign)?;
                    let (v, _) = self.int("the threshold value")?;
                    spec.thresholds.push((name, v));
                }
                _ => return Err(self.unexpected(
                    "`target`, `machine`, `device`, `granules`, `record`, `queue`, `feature`, `threshold` or `seq`",
                )),
            }
        }
        Ok(spec)
    }

    fn device(&mut self) -> Result<Device, Diag> {
        self.expect_kw("device")?;
        let name = self.ident("a device name")?;
        self.expect(Tok::LBrace)?;
        let mut d = Device {
            name,
            instances: None,
            mapping: None,
            regs: Vec::new(),
            fields: Vec::new(),
            requires: Vec::new(),
        };
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            let kw = self.ident("`instances`, `mapping`, `reg`, `field`, `require` or `}`")?;
            match kw.name.as_str() {
                "instances" => {
                    let inst = if self.eat_kw("dynamic") {
                        self.expect_kw("max")?;
                        let (max, s) = self.int("the maximum instance count")?;
                        Instances::Dynamic {
                            max,
                            span: kw.span.to(s),
                        }
                    } else {
                        let (count, s) = self.int("an instance count or `dynamic`")?;
                        Instances::Fixed {
                            count,
                            span: kw.span.to(s),
                        }
                    };
                    if d.instances.is_some() {
                        return Err(Diag::new(kw.span, "`instances` given twice"));
                    }
                    d.instances = Some(inst);
                }
                "mapping" => {
                    let m = self.ident("a mapping (e.g. nGnRE)")?;
                    if d.mapping.is_some() {
                        return Err(
                            Diag::new(kw.span, "`mapping` given twice").label("second `mapping`")
                        );
                    }
                    d.mapping = Some(m);
                }
                "reg" => {
                    let name = self.ident("a register name")?;
                    let (offset, offset_span) = self.int("the register offset")?;
                    let ty = self.ident("a register width (u8, u16, u32, u64)")?;
                    let width = match ty.name.as_str() {
                        "u8" => 8,
                        "u16" => 16,
                        "u32" => 32,
                        "u64" => 64,
                        _ => {
                            return Err(Diag::new(ty.span, "unknown register width")
                                .label("expected u8, u16, u32 or u64"))
                        }
                    };
                    let endian = if self.eat_kw("be") {
                        Endian::Big
                    } else if self.eat_kw("le") {
                        Endian::Little
                    } else {
                        return Err(self.unexpected("`be` or `le`"));
                    };
                    let span = kw.span.to(self.prev_span());
                    d.regs.push(Reg {
                        name,
                        offset,
                        offset_span,
                        width,
                        width_span: ty.span,
                        endian,
                        span,
                    });
                }
                "field" => {
                    let reg = self.ident("a register name")?;
                    self.expect(Tok::Dot)?;
                    let name = self.ident("a field name")?;
                    let (numbering, first, last, fs, ls) = self.bits()?;
                    d.fields.push(Field {
                        reg,
                        name,
                        numbering,
                        first,
                        last,
                        bits_span: fs.to(ls),
                        span: kw.span.to(ls),
                    });
                }
                "require" => {
                    let before = self.ident("a register name")?;
                    self.expect_kw("before")?;
                    let after = self.ident("a register name")?;
                    let scope = if self.eat_kw("any") {
                        Scope::AnyInstance
                    } else {
                        Scope::SameInstance
                    };
                    d.requires.push(Require {
                        before,
                        after,
                        scope,
                        span: kw.span.to(self.prev_span()),
                    });
                }
                _ => {
                    return Err(
                        Diag::new(kw.span, format!("unknown device item `{}`", kw.name))
                            .label("expected `instances`, `mapping`, `reg`, `field` or `require`"),
                    )
                }
            }
        }
        Ok(d)
    }

    /// `lsb0|msb0 A[..B]`: a field's numbering and bits (with spans).
    fn bits(&mut self) -> Result<(Numbering, u64, u64, Span, Span), Diag> {
        let numbering = if self.eat_kw("msb0") {
            Numbering::Msb0
        } else if self.eat_kw("lsb0") {
            Numbering::Lsb0
        } else {
            return Err(self.unexpected("`msb0` or `lsb0`"));
        };
        let (first, fs) = self.int("a bit number")?;
        let (last, ls) = if self.eat(&Tok::DotDot) {
            self.int("the last bit number")?
        } else {
            (first, fs)
        };
        Ok((numbering, first, last, fs, ls))
    }

    /// `[limit N] [else return EXPR]` after a poll or a wait.
    #[allow(clippy::type_complexity)]
    fn limit_else(&mut self, what: &str) -> Result<(Option<(u64, Span)>, Option<Expr>), Diag> {
        let limit = if self.eat_kw("limit") {
            Some(self.int(what)?)
        } else {
            None
        };
        let fail = if self.eat_kw("else") {
            self.expect_kw("return")?;
            Some(self.expr()?)
        } else {
            None
        };
        Ok((limit, fail))
    }

    /// `f: e, ...}` after the `{` (a trailing comma allowed).
    fn field_values(&mut self) -> Result<Vec<(Ident, Expr)>, Diag> {
        let mut fields = Vec::new();
        if self.eat(&Tok::RBrace) {
            return Ok(fields);
        }
        loop {
            let f = self.ident("a field name")?;
            self.expect(Tok::Colon)?;
            let v = self.expr()?;
            fields.push((f, v));
            if self.eat(&Tok::RBrace) {
                break;
            }
            self.expect(Tok::Comma)?;
            if self.eat(&Tok::RBrace) {
                break;
            }
        }
        Ok(fields)
    }

    fn record(&mut self) -> Result<Record, Diag> {
        let start = self.expect_kw("record")?;
        let name = self.ident("a record name")?;
        let (size, size_span) = self.int("the record size in bytes")?;
        self.expect(Tok::LBrace)?;
        let mut fields = Vec::new();
        let mut write = None;
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            if self.is_kw("write") {
                let ws = self.bump();
                if write.is_some() {
                    return Err(Diag::new(ws, "a record has one completion `write`"));
                }
                let width = self.ident("the store's width (u8, u16, u32, u64)")?;
                let value = self.ident("the field holding the stored value")?;
                self.expect_kw("at")?;
                let addr = self.ident("the field holding the address")?;
                let shift = if self.eat(&Tok::Shl) {
                    self.int("the address field's shift")?.0
                } else {
                    0
                };
                let when = if self.is_kw("when") {
                    self.bump();
                    Some(self.ident("the field that enables the write")?)
                } else {
                    None
                };
                write = Some(RecordWrite {
                    width,
                    value,
                    addr,
                    shift,
                    when,
                    span: ws.to(self.prev_span()),
                });
                continue;
            }
            self.expect_kw("field")?;
            let fname = self.ident("a field name")?;
            let (numbering, first, last, fs, ls) = self.bits()?;
            let fixed = if self.eat(&Tok::Assign) {
                Some(self.int("the field's fixed value")?)
            } else {
                None
            };
            fields.push(RecordField {
                name: fname,
                numbering,
                first,
                last,
                bits_span: fs.to(ls),
                fixed,
            });
        }
        Ok(Record {
            name,
            size,
            size_span,
            fields,
            write,
            span: start.to(self.prev_span()),
        })
    }

    fn queue(&mut self) -> Result<Queue, Diag> {
        let start = self.expect_kw("queue")?;
        let name = self.ident("a queue name")?;
        self.expect_kw("on")?;
        let dev = self.ident("the device whose registers index the queue")?;
        self.expect(Tok::LBrace)?;
        let (mut entry, mut prod, mut cons, mut index, mut batch, mut full) =
            (None, None, None, None, None, None);
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            let kw = self.ident("`entry`, `prod`, `cons`, `index`, `batch`, `full` or `}`")?;
            let twice = |set: bool| -> Result<(), Diag> {
                if set {
                    Err(Diag::new(kw.span, format!("`{}` given twice", kw.name)))
                } else {
                    Ok(())
                }
            };
            match kw.name.as_str() {
                "entry" => {
                    twice(entry.is_some())?;
                    let (n, s) = self.int("the entry size in bytes")?;
                    let e = if self.eat_kw("le") {
                        Endian::Little
                    } else if self.eat_kw("be") {
                        Endian::Big
                    } else {
                        return Err(self.unexpected(
                            "`le` or `be` (the byte order of the entry's 64-bit words)",
                        ));
                    };
                    entry = Some((n, s, e));
                }
                "prod" => {
                    twice(prod.is_some())?;
                    prod = Some(self.ident("the producer register")?);
                }
                "cons" => {
                    twice(cons.is_some())?;
                    let p = self.path()?;
                    cons = Some(p.parts);
                }
                "index" => {
                    twice(index.is_some())?;
                    index = Some(if self.eat_kw("wrap") {
                        QueueIndex::Wrap
                    } else if self.eat_kw("bytes") {
                        QueueIndex::Bytes
                    } else {
                        return Err(self.unexpected(
                            "`wrap` (entry index and wrap bit) or `bytes` (byte offset)",
                        ));
                    });
                }
                "batch" => {
                    twice(batch.is_some())?;
                    batch = Some(self.int("the most entries published at once")?);
                }
                "full" => {
                    twice(full.is_some())?;
                    self.expect_kw("limit")?;
                    full = Some(self.int("the reads of the consumer register while full")?);
                }
                _ => {
                    return Err(
                        Diag::new(kw.span, format!("unknown queue item `{}`", kw.name))
                            .label("expected `entry`, `prod`, `cons`, `index`, `batch` or `full`"),
                    )
                }
            }
        }
        let span = start.to(self.prev_span());
        let missing = |what: &str, example: &str| {
            Diag::new(name.span, format!("queue `{}` has no `{what}`", name.name))
                .help(format!("add `{example}` to the queue"))
        };
        let (entry, entry_span, endian) = entry.ok_or_else(|| missing("entry", "entry 16 le"))?;
        let prod = prod.ok_or_else(|| missing("prod", "prod REGISTER"))?;
        let cons = cons.ok_or_else(|| missing("cons", "cons REGISTER[.FIELD]"))?;
        let index = index.ok_or_else(|| missing("index", "index wrap"))?;
        let (full_limit, full_span) =
            full.ok_or_else(|| missing("full limit", "full limit 1000000"))?;
        if full_limit == 0 || full_limit > u64::from(u32::MAX) {
            return Err(Diag::new(
                full_span,
                "full limit must be between 1 and 4294967295",
            ));
        }
        Ok(Queue {
            name,
            dev,
            entry,
            entry_span,
            endian,
            prod,
            cons,
            index,
            batch,
            full_limit,
            span,
        })
    }

    fn granules(&mut self) -> Result<Granules, Diag> {
        let start = self.expect_kw("granules")?;
        let name = self.ident("a granule set name")?;
        let dev = if self.eat_kw("on") {
            Some(self.ident("a device name")?)
        } else {
            None
        };
        self.expect(Tok::LBrace)?;
        let mut g = Granules {
            name,
            dev,
            entries: Vec::new(),
            costs: Vec::new(),
            span: start,
        };
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            let estart = self.span();
            if self.eat_kw("cost") {
                let kind = self.ident("a cost kind (invalidate, store, barrier, refill, all)")?;
                let (v, _) = self.int("a cost")?;
                let mult = if self.eat_kw("ns") {
                    1
                } else if self.eat_kw("us") {
                    1000
                } else if self.eat_kw("ms") {
                    1_000_000
                } else {
                    1
                };
                let v = v
                    .checked_mul(mult)
                    .ok_or_else(|| Diag::new(estart.to(self.prev_span()), "cost too large"))?;
                g.costs.push((kind, v));
                continue;
            }
            let size = match *self.peek() {
                Tok::Int(v) => {
                    self.bump();
                    GranuleSize::Bytes(v)
                }
                Tok::Ident("all") => {
                    self.bump();
                    GranuleSize::All
                }
                Tok::Ident("range") => {
                    self.bump();
                    GranuleSize::Range
                }
                Tok::Ident("size") => {
                    self.bump();
                    GranuleSize::Param(self.ident("a parameter giving the size")?)
                }
                _ => {
                    return Err(self.unexpected("a size (e.g. 64K), `size PARAM`, `all` or `cost`"))
                }
            };
            let mut e = Granule {
                size,
                sets: Vec::new(),
                addr: None,
                via: None,
                span: estart,
            };
            loop {
                if self.eat_kw("set") {
                    let reg = self.ident("a register")?;
                    self.expect(Tok::Dot)?;
                    let field = self.ident("a field")?;
                    self.expect(Tok::Assign)?;
                    let v = self.expr()?;
                    e.sets.push((reg, field, v));
                } else if self.eat_kw("addr") {
                    e.addr = Some(self.ident("the register holding the address")?);
                } else if self.is_kw("via")
                    && matches!(self.peek_at(1), Tok::Ident("sfence" | "sinval"))
                    && self.peek_at(2) == &Tok::Dot
                {
                    self.bump();
                    e.via = Some(self.riscv_invalidate_name()?);
                } else if self.eat_kw("via") {
                    let first = self.ident("a register or instruction")?;
                    let mut via = first.clone();
                    if first.name == "tlbi" {
                        let op = self.ident("a TLBI operation")?;
                        via.name = format!("tlbi {}", op.name);
                        via.span = first.span.to(op.span);
                    } else if matches!(first.name.as_str(), "tlbie" | "tlbiel")
                        && matches!(self.peek(), Tok::Int(..))
                    {
                        // RIC, PRS, R: the fields that make the operation.
                        let mut vals = Vec::new();
                        for (i, what) in ["RIC", "PRS", "R"].iter().enumerate() {
                            if i > 0 {
                                self.expect(Tok::Comma)?;
                            }
                            let (v, _) = self.int(what)?;
                            vals.push(v);
                        }
                        let limits = [3, 1, 1];
                        if let Some(i) = (0..3).find(|&i| vals[i] > limits[i]) {
                            return Err(Diag::new(
                                self.prev_span(),
                                format!(
                                    "`{}`'s {} is 0..={}, got {}",
                                    first.name,
                                    ["RIC", "PRS", "R"][i],
                                    limits[i],
                                    vals[i]
                                ),
                            )
                            .label("out of range"));
                        }
                        via.name = crate::ir::insn_imm::name_with(&first.name, &vals);
                        via.span = first.span.to(self.prev_span());
                    }
                    e.via = Some(via);
                } else {
                    break;
                }
            }
            e.span = estart.to(self.prev_span());
            g.entries.push(e);
        }
        g.span = start.to(self.prev_span());
        Ok(g)
    }

    fn seq(&mut self) -> Result<Seq, Diag> {
        let start = self.expect_kw("seq")?;
        let name = self.ident("a sequence name")?;
        self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                let pname = self.ident("a parameter name")?;
                self.expect(Tok::Colon)?;
                let ty = self.ident("a parameter type (u64, ptr u8|u16|u32|u64 or phys PTR)")?;
                let elem = if ty.name == "ptr" {
                    Some(self.ident("the pointed-to type (u8, u16, u32, u64)")?)
                } else {
                    None
                };
                let phys = if ty.name == "phys" {
                    Some(self.ident("the pointer parameter whose physical address this is")?)
                } else {
                    None
                };
                let private = self.is_kw("private").then(|| self.bump());
                params.push(Param {
                    name: pname,
                    ty,
                    elem,
                    private,
                    phys,
                });
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma)?;
            }
            params.shrink_to_fit();
        }
        let void = if self.eat(&Tok::Minus) {
            self.expect(Tok::Gt)?;
            let t = self.ident("a return type (`long` or `void`)")?;
            match t.name.as_str() {
                "void" => true,
                "long" => false,
                _ => {
                    return Err(Diag::new(t.span, "sequences return `long` or `void`")
                        .label("unknown return type"))
                }
            }
        } else {
            false
        };
        self.stmts = 0;
        let body = self.block()?;
        Ok(Seq {
            name,
            params,
            void,
            body,
            span: start.to(self.prev_span()),
        })
    }

    fn block(&mut self) -> Result<Vec<Stmt>, Diag> {
        let open = self.expect(Tok::LBrace)?;
        self.enter(open)?;
        let mut body = Vec::new();
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            if *self.peek() == Tok::Eof {
                return Err(Diag::new(open, "unclosed `{`").label("this block is never closed"));
            }
            self.stmts += 1;
            if self.stmts > MAX_SEQ_STMTS {
                return Err(Diag::new(
                    self.span(),
                    format!("sequence has more than {MAX_SEQ_STMTS} statements"),
                )
                .label("one too many")
                .help("split it into several sequences"));
            }
            body.push(self.stmt()?);
        }
        self.depth -= 1;
        // Most blocks hold one or two statements; a Vec grows to four
        // (300 bytes each): a large spec's AST was mostly spare capacity.
        body.shrink_to_fit();
        Ok(body)
    }

    fn path(&mut self) -> Result<Path, Diag> {
        let first = self.ident("a device name")?;
        let mut span = first.span;
        let mut parts = vec![first];
        while self.eat(&Tok::Dot) {
            let p = self.ident("a register or field name")?;
            span = span.to(p.span);
            parts.push(p);
        }
        parts.shrink_to_fit();
        Ok(Path { parts, span })
    }

    fn stmt(&mut self) -> Result<Stmt, Diag> {
        let start = self.span();
        if self.eat_kw("each") {
            return self.each_stmt(start);
        }
        if self.eat_kw("poll") {
            return self.poll_stmt(start);
        }
        if self.is_kw("enqueue") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.enqueue_stmt(start);
        }
        if self.is_kw("issue") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.issue_stmt(start);
        }
        if self.is_kw("wait") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.wait_stmt(start);
        }
        if self.eat_kw("barrier") {
            return self.barrier_stmt(start);
        }
        if self.eat_kw("range") {
            return self.range_stmt(start);
        }
        if self.eat_kw("cover") {
            return self.cover_stmt(start);
        }
        if self.eat_kw("acquire") {
            return self.acquire_stmt(start);
        }
        if self.eat_kw("release") {
            return self.release_stmt(start);
        }
        if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::LBracket {
            return self.mem_write_stmt();
        }
        if self.eat_kw("order") {
            return self.order_stmt(start);
        }
        let riscv = self.riscv_invalidate_ahead();
        if riscv
            || matches!(self.peek(), Tok::Ident(k) if is_invalidate_kw(k))
                && self.peek_at(1) != &Tok::Dot
        {
            return self.invalidate_stmt(start, riscv);
        }
        // `let x = ...`; a device named `let` still reads `let.reg = ...`.
        if self.is_kw("let") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.let_stmt(start);
        }
        if self.is_kw("while") && self.peek_at(1) != &Tok::Dot && self.peek_at(1) != &Tok::Assign {
            return self.while_stmt(start);
        }
        // `x = ...` (one name): assignment to a local; `dev.reg = ...` is a
        // register write and `p[OFF] = ...` a store (both handled above or
        // below by their second token).
        if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::Assign {
            return self.assign_stmt();
        }
        if self.is_kw("if") && self.peek_at(1) != &Tok::Dot {
            self.bump();
            return self.if_rest(start);
        }
        if self.eat_kw("return") {
            return self.return_stmt(start);
        }
        if matches!(self.peek(), Tok::Ident(_)) {
            return self.write_stmt();
        }
        Err(self
            .unexpected("a statement (`each`, `poll`, `barrier`, `return` or `dev.reg = value`)"))
    }

    /// After `each`.
    fn each_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let dev = self.ident("a device name")?;
        let body = self.block()?;
        Ok(Stmt::Each {
            dev,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// After `poll`.
    fn poll_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        // `dev.reg[.field]`, or `p` / `p[OFF]` for memory.
        let target = if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) != &Tok::Dot {
            PollTarget::Mem(self.mem()?)
        } else {
            PollTarget::Reg(self.path()?)
        };
        let op = if self.eat(&Tok::EqEq) {
            CmpOp::Eq
        } else if self.eat(&Tok::NotEq) {
            CmpOp::Ne
        } else {
            return Err(self.unexpected("`==` or `!=`"));
        };
        let value = self.expr()?;
        let (limit, fail) = self.limit_else("the poll bound (number of reads)")?;
        Ok(Stmt::Poll {
            target,
            op,
            value,
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `enqueue`.
    fn enqueue_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        let record = self.ident("a record name")?;
        self.expect(Tok::LBrace)?;
        let fields = self.field_values()?;
        Ok(Stmt::Enqueue {
            queue,
            record,
            fields,
            span: start.to(self.prev_span()),
        })
    }

    /// After `issue`.
    fn issue_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        Ok(Stmt::Issue {
            queue,
            span: start.to(self.prev_span()),
        })
    }

    /// After `wait`.
    fn wait_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        let (limit, fail) = self.limit_else("the wait bound (reads of the consumer register)")?;
        Ok(Stmt::Wait {
            queue,
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `barrier`.
    fn barrier_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let name = self.ident("a barrier instruction name")?;
        if matches!(name.name.as_str(), "fence" | "sfence") {
            let full = self.riscv_barrier(name)?;
            return Ok(Stmt::Barrier {
                span: start.to(full.span),
                name: full,
            });
        }
        // Barrier operands such as `dsb ish` are part of the name.
        let mut full = name.clone();
        while let Tok::Ident(s) = *self.peek() {
            if self.peek_at(1) == &Tok::Dot || self.peek_at(1) == &Tok::Assign {
                break;
            }
            if !is_barrier_operand(s) {
                break;
            }
            let span = self.bump();
            full.name.push(' ');
            full.name.push_str(s);
            full.span = full.span.to(span);
        }
        Ok(Stmt::Barrier {
            span: start.to(full.span),
            name: full,
        })
    }

    /// `E, E, ...`: one expression or more, comma-separated.
    fn expr_list(&mut self) -> Result<Vec<Expr>, Diag> {
        let mut v = vec![self.expr()?];
        while self.eat(&Tok::Comma) {
            v.push(self.expr()?);
        }
        Ok(v)
    }

    /// A CPU invalidation instruction with its operands (`riscv`: a
    /// RISC-V `sfence.vma`/`sinval.vma`, whose operands end with its line).
    fn invalidate_stmt(&mut self, start: Span, riscv: bool) -> Result<Stmt, Diag> {
        let kw = if riscv {
            self.riscv_invalidate_name()?
        } else {
            self.ident("an invalidation instruction")?
        };
        let mut name = kw.clone();
        let mut operands = Vec::new();
        if riscv {
            // Operands on the instruction's line, as in GNU as.
            if self.on_same_line() && !matches!(self.peek(), Tok::RBrace | Tok::Eof) {
                operands = self.expr_list()?;
            }
        } else if kw.name == "tlbi" || kw.name == "tlbilx" {
            let op = if kw.name == "tlbi" {
                self.ident("a TLBI operation (e.g. vale1is)")?
            } else {
                self.ident("what tlbilx invalidates: `all`, `pid` or `va`")?
            };
            name.name = format!("{} {}", kw.name, op.name);
            name.span = kw.span.to(op.span);
            if self.eat(&Tok::Comma) {
                operands.push(self.expr()?);
                // `tlbilx va, EA, MAS6`
                while kw.name == "tlbilx" && self.eat(&Tok::Comma) {
                    operands.push(self.expr()?);
                }
            }
        } else {
            operands = self.expr_list()?;
        }
        // `after invalidates`; a device named `after` on the next line
        // reads `after.reg = ...`, never `after invalidates`.
        let after = if self.is_kw("after") && matches!(self.peek_at(1), Tok::Ident(_)) {
            let a = self.ident("`after`")?;
            let w = self.ident("`invalidates`")?;
            if w.name != "invalidates" {
                return Err(Diag::new(w.span, format!("`after {}` is not an ordering", w.name))
                    .label("expected `invalidates`")
                    .help("`INVALIDATION after invalidates` orders one invalidation after every earlier one; order stores with `order stores before invalidates`"));
            }
            Some(a.span.to(w.span))
        } else {
            None
        };
        Ok(Stmt::Invalidate {
            span: start.to(self.prev_span()),
            name,
            operands,
            after,
        })
    }

    /// After `range`.
    fn range_stmt(&mut self, kw: Span) -> Result<Stmt, Diag> {
        let var = self.ident("a loop variable name")?;
        self.expect_kw("in")?;
        let start = self.expr()?;
        self.expect(Tok::Comma)?;
        let size = self.expr()?;
        self.expect_kw("step")?;
        let step = self.expr()?;
        let body = self.block()?;
        Ok(Stmt::Range {
            var,
            start,
            size,
            step,
            body,
            span: start_span(kw, self.prev_span()),
        })
    }

    /// After `cover`.
    fn cover_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let cstart = self.expr()?;
        self.expect(Tok::Comma)?;
        let size = self.expr()?;
        self.expect_kw("with")?;
        let set = self.ident("a granule set")?;
        let mode_id = self.ident("a cover mode (single, exact, auto)")?;
        let mode = match mode_id.name.as_str() {
            "single" => CoverMode::Single,
            "exact" => CoverMode::Exact,
            "auto" => CoverMode::Auto,
            "range" => CoverMode::Range,
            _ => {
                return Err(Diag::new(
                    mode_id.span,
                    format!("unknown cover mode `{}`", mode_id.name),
                )
                .label("expected single, exact or auto"))
            }
        };
        let body = self.block()?;
        Ok(Stmt::Cover {
            start: cstart,
            size,
            set,
            mode,
            mode_span: mode_id.span,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// After `acquire`.
    fn acquire_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        let value = if self.eat_kw("bit") {
            let (b, s) = self.int("a bit number")?;
            LockValue::Bit(b, s)
        } else {
            self.expect(Tok::Assign)?;
            LockValue::Owner(self.expr()?)
        };
        let held = if self.eat_kw("held") {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_kw("limit") {
            Some(self.int("the spin bound (number of reads)")?)
        } else {
            None
        };
        let fail = if self.eat_kw("else") {
            self.expect_kw("return")?;
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Stmt::Acquire {
            mem,
            value,
            held,
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `release`.
    fn release_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        let value = if self.eat_kw("bit") {
            let (b, s) = self.int("a bit number")?;
            Some(LockValue::Bit(b, s))
        } else if self.eat(&Tok::Assign) {
            Some(LockValue::Owner(self.expr()?))
        } else {
            None
        };
        let cond = if self.eat_kw("if") {
            // `EXPR == 0`, parsed as one comparison.
            match self.expr()? {
                Expr::Bin {
                    op: BinOp::Eq,
                    lhs,
                    rhs,
                    ..
                } if matches!(*rhs, Expr::Int { value: 0, .. }) => Some(*lhs),
                other => {
                    return Err(
                        Diag::new(other.span(), "a conditional release tests `EXPR == 0`")
                            .label("expected `... == 0`"),
                    )
                }
            }
        } else {
            None
        };
        Ok(Stmt::Release {
            mem,
            value,
            cond,
            span: start.to(self.prev_span()),
        })
    }

    /// `p[OFF] = value`: a store to normal memory.
    fn mem_write_stmt(&mut self) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::MemWrite {
            span: mem.span().to(value.span()),
            mem,
            value,
        })
    }

    /// After `order`.
    fn order_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let before = self.ident("`stores` or `invalidates`")?;
        self.expect_kw("before")?;
        let after = self.ident("`invalidates` or `return`")?;
        Ok(Stmt::Order {
            span: start.to(after.span),
            before,
            after,
        })
    }

    /// After `let`.
    fn let_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let name = self.ident("a local variable name")?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::Let {
            span: start.to(value.span()),
            name,
            value,
        })
    }

    /// After `while`.
    fn while_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let cond = self.expr()?;
        if !self.is_kw("limit") {
            return Err(self
                .unexpected("`limit N`")
                .help("a `while` runs at most N times: `while COND limit N { ... }`"));
        }
        self.bump();
        let (limit, limit_span) = self.int("the loop bound (number of iterations)")?;
        let fail = if self.eat_kw("else") {
            self.expect_kw("return")?;
            Some(self.expr()?)
        } else {
            None
        };
        let body = self.block()?;
        Ok(Stmt::While {
            cond,
            limit,
            limit_span,
            fail,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// `x = value`: assignment to a local.
    fn assign_stmt(&mut self) -> Result<Stmt, Diag> {
        let name = self.ident("a local variable name")?;
        self.bump();
        let value = self.expr()?;
        Ok(Stmt::Assign {
            span: name.span.to(value.span()),
            name,
            value,
        })
    }

    /// After `return`.
    fn return_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let value = self.expr()?;
        Ok(Stmt::Return {
            span: start.to(value.span()),
            value,
        })
    }

    /// `dev.reg = value`: a register write.
    fn write_stmt(&mut self) -> Result<Stmt, Diag> {
        let target = self.path()?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::Write {
            span: target.span.to(value.span()),
            target,
            value,
        })
    }

    /// After `if`: `COND { ... } [else if ... | else { ... }]`.
    fn if_rest(&mut self, start: Span) -> Result<Stmt, Diag> {
        let cond = self.expr()?;
        let then_ = self.block()?;
        let else_ = if self.eat_kw("else") {
            let at = self.span();
            if self.eat_kw("if") {
                let open = self.prev_span();
                self.enter(open)?;
                let nested = self.if_rest(at)?;
                self.depth -= 1;
                vec![nested]
            } else {
                self.block()?
            }
        } else {
            Vec::new()
        };
        Ok(Stmt::If {
            cond,
            then_,
            else_,
            rare: false,
            span: start.to(self.prev_span()),
        })
    }

    /// `p` or `p[OFF]` (OFF a constant byte offset).
    fn mem(&mut self) -> Result<Expr, Diag> {
        let ptr = self.ident("a pointer parameter")?;
        let mut span = ptr.span;
        let (offset, index) = if self.eat(&Tok::LBracket) {
            let e = self.expr()?;
            span = span.to(self.expect(Tok::RBracket)?);
            match e {
                Expr::Int { value, .. } => (value, None),
                other => (0, Some(Box::new(other))),
            }
        } else {
            (0, None)
        };
        Ok(Expr::Mem {
            ptr,
            offset,
            index,
            span,
        })
    }

    /// Count one node of the current expression.
    fn node(&mut self) -> Result<(), Diag> {
        self.expr_nodes += 1;
        if self.expr_nodes > MAX_EXPR_NODES {
            return Err(Diag::new(
                self.span(),
                format!("expression has more than {MAX_EXPR_NODES} terms"),
            )
            .label("too large")
            .help("split it, or compute the value at run time in C"));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, Diag> {
        if self.expr_depth == 0 {
            self.expr_nodes = 0;
        }
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            return Err(Diag::new(self.span(), "expression nested too deeply"));
        }
        let r = self.binary(0);
        self.expr_depth -= 1;
        r
    }

    /// Precedence climbing; levels follow C: || && | ^ & (== !=)
    /// (< <= > >=) (<< >>) (+ -) (*).
    fn binary(&mut self, level: usize) -> Result<Expr, Diag> {
        const LEVELS: &[&[(Tok, BinOp)]] = &[
            &[(Tok::OrOr, BinOp::LogOr)],
            &[(Tok::AndAnd, BinOp::LogAnd)],
            &[(Tok::Pipe, BinOp::Or)],
            &[(Tok::Caret, BinOp::Xor)],
            &[(Tok::Amp, BinOp::And)],
            &[(Tok::EqEq, BinOp::Eq), (Tok::NotEq, BinOp::Ne)],
            &[
                (Tok::Lt, BinOp::Lt),
                (Tok::Le, BinOp::Le),
                (Tok::Gt, BinOp::Gt),
                (Tok::Ge, BinOp::Ge),
            ],
            &[(Tok::Shl, BinOp::Shl), (Tok::Shr, BinOp::Shr)],
            &[(Tok::Plus, BinOp::Add), (Tok::Minus, BinOp::Sub)],
            &[(Tok::Star, BinOp::Mul)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            for (t, op) in LEVELS[level] {
                if self.peek() == t {
                    self.node()?;
                    self.bump();
                    let rhs = self.binary(level + 1)?;
                    let span = lhs.span().to(rhs.span());
                    lhs = Expr::Bin {
                        op: *op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                        span,
                    };
                    continue 'outer;
                }
            }
            break;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, Diag> {
        let start = self.span();
        if self.eat(&Tok::Minus) {
            let inner = self.unary_nested()?;
            return Ok(Expr::Neg {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        if self.eat(&Tok::Tilde) {
            let inner = self.unary_nested()?;
            return Ok(Expr::Not {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        if self.eat(&Tok::Bang) {
            let inner = self.unary_nested()?;
            return Ok(Expr::LogNot {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        self.atom()
    }

    fn unary_nested(&mut self) -> Result<Expr, Diag> {
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            return Err(Diag::new(self.span(), "expression nested too deeply"));
        }
        let r = self.unary();
        self.expr_depth -= 1;
        r
    }

    fn atom(&mut self) -> Result<Expr, Diag> {
        self.node()?;
        let start = self.span();
        match *self.peek() {
            Tok::Int(value) => {
                self.bump();
                Ok(Expr::Int { value, span: start })
            }
            Tok::Ident(_) if self.peek_at(1) == &Tok::LBracket => self.mem(),
            Tok::Ident("feature") if matches!(self.peek_at(1), Tok::Ident(_)) => {
                self.bump();
                let name = self.ident("a feature name")?;
                Ok(Expr::Feature(Ident {
                    name: name.name,
                    span: start.to(name.span),
                }))
            }
            Tok::Ident(name) if self.peek_at(1) == &Tok::LParen => {
                self.bump();
                self.bump();
                let mut args = Vec::new();
                if !self.eat(&Tok::RParen) {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(&Tok::RParen) {
                            break;
                        }
                        self.expect(Tok::Comma)?;
                    }
                }
                Ok(Expr::Call {
                    func: Ident {
                        name: name.to_string(),
                        span: start,
                    },
                    args,
                    span: start.to(self.prev_span()),
                })
            }
            Tok::Ident(_) if self.peek_at(1) == &Tok::Dot => Ok(Expr::Reg(self.path()?)),
            Tok::Ident(name) => {
                self.bump();
                Ok(Expr::Name(Ident {
                    name: name.to_string(),
                    span: start,
                }))
            }
            Tok::Dollar(name) => {
                self.bump();
                Ok(Expr::Binding(Ident {
                    name: name.to_string(),
                    span: start,
                }))
            }
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::LBrace => {
                self.bump();
                let fields = self.field_values()?;
                Ok(Expr::Aggregate {
                    fields,
                    span: start.to(self.prev_span()),
                })
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}

fn start_span(a: Span, b: Span) -> Span {
    a.to(b)
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

/// Statements that issue a CPU invalidation instruction.
fn is_invalidate_kw(s: &str) -> bool {
    matches!(
        s,
        "tlbi" | "tlbie" | "tlbiel" | "slbia" | "tlbilx" | "tlbivax" | "invlpg"
    )
}

/// Words that continue a `barrier` statement (`barrier dsb ish`).
fn is_barrier_operand(s: &str) -> bool {
    matches!(
        s,
        "sy" | "st"
            | "ld"
            | "ish"
            | "ishst"
            | "ishld"
            | "osh"
            | "oshst"
            | "oshld"
            | "nsh"
            | "nshst"
            | "nshld"
    )
}

#[cfg(test)]
mod tests {
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
}
