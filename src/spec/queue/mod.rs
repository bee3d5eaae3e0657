//! Command queues, rewritten into the statements everything else already
//! understands: a ring slot is a store at a computed offset, the doorbell a
//! register write (ordered after the entries by `require stores before
//! PROD`), a wait for space a bounded loop over consumer reads, a
//! completion wait a poll. Checking, barrier placement, lowering, the
//! interpreter and `verify` then treat queue code like any other, and the
//! rewrite is the only place that knows how SMMUv3, VT-d and AMD count.
//!
//! Each sequence that uses queue `q` takes two arguments ahead of its own,
//! `q_ring` (the ring, `ptr u64`) and `q_log2n` (log2 of its entries),
//! and keeps the producer index in a local from its first line: the caller
//! owns the queue for the call (one producer, as with a lock held), so the
//! index is read from the device once and published by `issue`.

use super::ast::*;
use super::diag::{Diag, Span};

/// A checked record layout: fields as (word, shift, width).
#[derive(Clone, Debug)]
pub struct RecordLayout {
    pub name: String,
    pub size: u64,
    pub fields: Vec<RecordFieldLayout>,
    pub write: Option<RecordWriteLayout>,
}

/// A checked completion write ([`RecordWrite`]): fields by index.
#[derive(Clone, Debug)]
pub struct RecordWriteLayout {
    pub bytes: u32,
    pub value: usize,
    pub addr: usize,
    pub shift: u32,
    pub when: Option<usize>,
}

/// Byte offsets of a ring's entries between consumer index `from` and
/// producer index `to`: `wrap` indices count entries with a wrap bit above
/// them, else they are byte offsets. None when `to` is not reachable from
/// `from` within one lap.
pub fn ring_slots(from: u64, to: u64, log2n: u64, entry: u64, wrap: bool) -> Option<Vec<u64>> {
    let cap = 1u64.checked_shl(log2n as u32)?;
    let mut out = Vec::new();
    let (mut i, mask, step) = if wrap {
        (from & (2 * cap - 1), 2 * cap - 1, 1)
    } else {
        (from & (cap * entry - 1), cap * entry - 1, entry)
    };
    let to = to & mask;
    while i != to {
        if out.len() as u64 > cap {
            return None;
        }
        out.push(if wrap { (i & (cap - 1)) * entry } else { i });
        i = (i + step) & mask;
    }
    Some(out)
}

impl RecordLayout {
    /// Do an entry's words carry this record's fixed fields (it has some)?
    pub fn matches(&self, words: &[u64]) -> bool {
        let mut fixed = self.fields.iter().filter(|f| f.fixed.is_some()).peekable();
        fixed.peek().is_some()
            && fixed.all(|f| {
                let m = crate::ir::expr::field_mask(f.shift, f.width);
                let v = (f.fixed.unwrap_or(0) << f.shift) & m;
                words.get(f.word as usize).is_some_and(|x| x & m == v)
            })
    }

    /// Field `i` of an entry's words.
    pub fn get(&self, i: usize, words: &[u64]) -> u64 {
        let f = &self.fields[i];
        let w = words.get(f.word as usize).copied().unwrap_or(0);
        (w >> f.shift) & crate::ir::expr::field_mask(0, f.width)
    }

    /// The completion store the device makes on consuming `words`, as
    /// (address, value, bytes).
    pub fn completion(&self, words: &[u64]) -> Option<(u64, u64, u32)> {
        let w = self.write.as_ref()?;
        if w.when.is_some_and(|f| self.get(f, words) == 0) {
            return None;
        }
        let addr = self.get(w.addr, words) << w.shift;
        Some((addr, self.get(w.value, words), w.bytes))
    }
}

#[derive(Clone, Debug)]
pub struct RecordFieldLayout {
    pub name: String,
    pub word: u32,
    pub shift: u32,
    pub width: u32,
    pub fixed: Option<u64>,
    /// As written, for the header.
    pub numbering: Numbering,
    pub first: u64,
    pub last: u64,
}

pub fn check_records(spec: &Spec) -> Result<Vec<RecordLayout>, Diag> {
    let mut out: Vec<RecordLayout> = Vec::new();
    for r in &spec.records {
        if let Some(prev) = spec.records.iter().find(|p| p.name.name == r.name.name) {
            if !std::ptr::eq(prev, r) {
                return Err(Diag::new(
                    r.name.span,
                    format!("record `{}` declared twice", r.name.name),
                )
                .related(prev.name.span, "first declared here"));
            }
        }
        if r.size == 0 || r.size % 8 != 0 || r.size > 64 {
            return Err(Diag::new(
                r.size_span,
                "a record is 8 to 64 bytes, a whole number of 64-bit words",
            )
            .label("record size"));
        }
        let bits = r.size * 8;
        let mut fields: Vec<RecordFieldLayout> = Vec::new();
        let mut used = vec![0u64; (r.size / 8) as usize];
        for f in &r.fields {
            if fields.iter().any(|x| x.name == f.name.name) {
                return Err(Diag::new(
                    f.name.span,
                    format!(
                        "field `{}` given twice in record `{}`",
                        f.name.name, r.name.name
                    ),
                ));
            }
            let (lo, hi) = match f.numbering {
                Numbering::Lsb0 => (f.first.min(f.last), f.first.max(f.last)),
                Numbering::Msb0 => {
                    if f.first >= bits || f.last >= bits {
                        (bits, bits)
                    } else {
                        (
                            bits - 1 - f.first.max(f.last),
                            bits - 1 - f.first.min(f.last),
                        )
                    }
                }
            };
            if hi >= bits {
                return Err(
                    Diag::new(f.bits_span, format!("bit beyond the record's {bits} bits"))
                        .label("out of range"),
                );
            }
            if lo / 64 != hi / 64 {
                return Err(
                    Diag::new(f.bits_span, "a field must lie in one 64-bit word")
                        .label(format!("crosses bit {}", (lo / 64 + 1) * 64))
                        .help("split it into a field per word"),
                );
            }
            let (word, shift, width) = ((lo / 64) as u32, (lo % 64) as u32, (hi - lo + 1) as u32);
            let mask = crate::ir::expr::field_mask(shift, width);
            if used[word as usize] & mask != 0 {
                return Err(Diag::new(f.bits_span, "field overlaps another field")
                    .label("bits already used"));
            }
            used[word as usize] |= mask;
            if let Some((v, s)) = f.fixed {
                if width < 64 && v >> width != 0 {
                    return Err(Diag::new(
                        s,
                        format!("value does not fit the {width}-bit field"),
                    ));
                }
            }
            fields.push(RecordFieldLayout {
                name: f.name.name.clone(),
                word,
                shift,
                width,
                fixed: f.fixed.map(|(v, _)| v),
                numbering: f.numbering,
                first: f.first,
                last: f.last,
            });
        }
        let write = match &r.write {
            None => None,
            Some(w) => Some(check_write(w, &fields)?),
        };
        out.push(RecordLayout {
            name: r.name.name.clone(),
            size: r.size,
            fields,
            write,
        });
    }
    Ok(out)
}

fn check_write(w: &RecordWrite, fields: &[RecordFieldLayout]) -> Result<RecordWriteLayout, Diag> {
    let bytes = match w.width.name.as_str() {
        "u8" => 1,
        "u16" => 2,
        "u32" => 4,
        "u64" => 8,
        _ => {
            return Err(
                Diag::new(w.width.span, "a completion write is u8, u16, u32 or u64")
                    .label("unknown width"),
            )
        }
    };
    let field = |id: &Ident| {
        fields
            .iter()
            .position(|f| f.name == id.name)
            .ok_or_else(|| {
                Diag::new(id.span, format!("no field `{}` in this record", id.name))
                    .label("unknown field")
            })
    };
    let (value, addr) = (field(&w.value)?, field(&w.addr)?);
    if fields[value].width > 8 * bytes {
        return Err(Diag::new(
            w.value.span,
            format!(
                "field `{}` is {} bits: wider than the {}-bit write",
                w.value.name,
                fields[value].width,
                8 * bytes
            ),
        ));
    }
    if w.shift >= 64 || u64::from(fields[addr].width) + w.shift > 64 {
        return Err(Diag::new(
            w.span,
            format!(
                "the address `{} << {}` does not fit 64 bits",
                w.addr.name, w.shift
            ),
        ));
    }
    let when = w.when.as_ref().map(field).transpose()?;
    Ok(RecordWriteLayout {
        bytes,
        value,
        addr,
        shift: w.shift as u32,
        when,
    })
}

/// Rewrite every `enqueue`/`issue`/`wait` of the spec's sequences.
pub fn lower(spec: &mut Spec) -> Result<(), Diag> {
    let records = check_records(spec)?;
    for (i, q) in spec.queues.iter().enumerate() {
        if let Some(p) = spec.queues[..i].iter().find(|p| p.name.name == q.name.name) {
            return Err(Diag::new(
                q.name.span,
                format!("queue `{}` declared twice", q.name.name),
            )
            .related(p.name.span, "first declared here"));
        }
        if !q.entry.is_power_of_two() || !(8..=64).contains(&q.entry) {
            return Err(Diag::new(
                q.entry_span,
                "a queue entry is 8, 16, 32 or 64 bytes",
            ));
        }
        if let Some((b, s)) = q.batch {
            if b == 0 || b > u64::from(u32::MAX) {
                return Err(Diag::new(s, "batch must be between 1 and 4294967295"));
            }
        }
        // Ring words are stored in the CPU's byte order.
        for t in &spec.targets {
            let big = t.name == "power64";
            if big != (q.endian == Endian::Big)
                && crate::target::Target::from_name(&t.name).is_some()
            {
                return Err(Diag::new(
                    q.entry_span,
                    format!(
                        "a {}-endian queue on the {}-endian target `{}` needs byte-swapped ring stores, which are not supported yet",
                        if q.endian == Endian::Big { "big" } else { "little" },
                        if big { "big" } else { "little" },
                        t.name
                    ),
                )
                .related(t.span, "target"));
            }
        }
    }
    let queues = spec.queues.clone();
    for seq in &mut spec.seqs {
        let mut used: Vec<usize> = Vec::new();
        find_used(&seq.body, &queues, &mut used)?;
        if used.is_empty() {
            continue;
        }
        let mut injected = Vec::new();
        let mut prologue = Vec::new();
        for &qi in &used {
            let q = &queues[qi];
            let cx = Cx::new(q, q.name.span);
            for (pname, ty, elem) in [
                (cx.ring.clone(), "ptr", Some("u64")),
                (cx.log2n.clone(), "u64", None),
            ] {
                if let Some(p) = seq.params.iter().find(|p| p.name.name == pname) {
                    return Err(Diag::new(
                        p.name.span,
                        format!(
                            "parameter `{pname}` is the argument queue `{}` adds",
                            q.name.name
                        ),
                    )
                    .label("taken")
                    .related(q.name.span, "queue"));
                }
                injected.push(Param {
                    name: cx.id(&pname),
                    ty: cx.id(ty),
                    elem: elem.map(|e| cx.id(e)),
                    private: None,
                    phys: None,
                });
            }
            // The producer index, read once; the free entries known
            // (0: look at the consumer before the first store).
            // Sizes once, not per entry (a run-time shift is several
            // instructions on every target).
            prologue.push(cx.let_(&cx.imask, cx.index_mask_expr()));
            prologue.push(cx.let_(
                &cx.prod,
                cx.and(cx.reg(std::slice::from_ref(&q.prod)), cx.index_mask()),
            ));
            prologue.push(cx.let_(&cx.space, cx.int(0)));
            if q.batch.is_some() {
                prologue.push(cx.let_(&cx.pending, cx.int(0)));
            }
        }
        injected.append(&mut seq.params);
        seq.params = injected;
        let body = std::mem::take(&mut seq.body);
        let mut new = prologue;
        new.extend(rewrite(body, &queues, &records)?);
        seq.body = new;
    }
    Ok(())
}

fn find_queue(queues: &[Queue], name: &Ident) -> Result<usize, Diag> {
    queues
        .iter()
        .position(|q| q.name.name == name.name)
        .ok_or_else(|| {
            Diag::new(name.span, format!("unknown queue `{}`", name.name))
                .label("not declared")
                .help("declare it at the top level: `queue NAME on DEVICE { ... }`")
        })
}

fn find_used(body: &[Stmt], queues: &[Queue], used: &mut Vec<usize>) -> Result<(), Diag> {
    for s in body {
        match s {
            Stmt::Enqueue { queue, .. } | Stmt::Issue { queue, .. } | Stmt::Wait { queue, .. } => {
                let q = find_queue(queues, queue)?;
                if !used.contains(&q) {
                    used.push(q);
                }
            }
            Stmt::Each { body, .. }
            | Stmt::Range { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Cover { body, .. } => find_used(body, queues, used)?,
            Stmt::If { then_, else_, .. } => {
                find_used(then_, queues, used)?;
                find_used(else_, queues, used)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn rewrite(body: Vec<Stmt>, queues: &[Queue], records: &[RecordLayout]) -> Result<Vec<Stmt>, Diag> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::Enqueue {
                queue,
                record,
                fields,
                span,
            } => {
                let q = &queues[find_queue(queues, &queue)?];
                let r = records
                    .iter()
                    .find(|r| r.name == record.name)
                    .ok_or_else(|| {
                        Diag::new(record.span, format!("unknown record `{}`", record.name))
                            .label("not declared")
                    })?;
                if r.size != q.entry {
                    return Err(Diag::new(
                        record.span,
                        format!(
                            "record `{}` is {} bytes, queue `{}` takes {}-byte entries",
                            r.name, r.size, q.name.name, q.entry
                        ),
                    )
                    .related(q.entry_span, "entry size"));
                }
                let cx = Cx::new(q, span);
                out.extend(cx.enqueue(r, &fields, span)?);
            }
            Stmt::Issue { queue, span } => {
                let q = &queues[find_queue(queues, &queue)?];
                out.extend(Cx::new(q, span).publish());
            }
            Stmt::Wait {
                queue,
                limit,
                fail,
                span,
            } => {
                let q = &queues[find_queue(queues, &queue)?];
                let cx = Cx::new(q, span);
                // Consumed everything published: the consumer index is the
                // producer's (the poll compares the `cons` field).
                out.push(Stmt::Poll {
                    target: PollTarget::Reg(cx.path(&q.cons)),
                    op: CmpOp::Eq,
                    value: cx.name(&cx.prod),
                    limit,
                    fail,
                    span,
                });
            }
            Stmt::Each { dev, body, span } => out.push(Stmt::Each {
                dev,
                body: rewrite(body, queues, records)?,
                span,
            }),
            Stmt::Range {
                var,
                start,
                size,
                step,
                body,
                span,
            } => out.push(Stmt::Range {
                var,
                start,
                size,
                step,
                body: rewrite(body, queues, records)?,
                span,
            }),
            Stmt::While {
                cond,
                limit,
                limit_span,
                fail,
                body,
                span,
            } => out.push(Stmt::While {
                cond,
                limit,
                limit_span,
                fail,
                body: rewrite(body, queues, records)?,
                span,
            }),
            Stmt::Cover {
                start,
                size,
                set,
                mode,
                mode_span,
                body,
                span,
            } => out.push(Stmt::Cover {
                start,
                size,
                set,
                mode,
                mode_span,
                body: rewrite(body, queues, records)?,
                span,
            }),
            Stmt::If {
                cond,
                then_,
                else_,
                rare,
                span,
            } => out.push(Stmt::If {
                cond,
                then_: rewrite(then_, queues, records)?,
                else_: rewrite(else_, queues, records)?,
                rare,
                span,
            }),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// Builds the rewritten statements for one queue, every node at `span`.
struct Cx<'a> {
    q: &'a Queue,
    span: Span,
    ring: String,
    log2n: String,
    prod: String,
    space: String,
    pending: String,
    imask: String,
}

impl<'a> Cx<'a> {
    fn new(q: &'a Queue, span: Span) -> Self {
        let n = &q.name.name;
        Cx {
            q,
            span,
            ring: format!("{n}_ring"),
            log2n: format!("{n}_log2n"),
            // Not writable in a spec: no clash with the user's names.
            prod: format!("{n}.prod"),
            space: format!("{n}.space"),
            pending: format!("{n}.pending"),
            imask: format!("{n}.mask"),
        }
    }
    fn id(&self, name: &str) -> Ident {
        Ident {
            name: name.to_string(),
            span: self.span,
        }
    }
    fn int(&self, v: u64) -> Expr {
        Expr::Int {
            value: v,
            span: self.span,
        }
    }
    fn name(&self, n: &str) -> Expr {
        Expr::Name(self.id(n))
    }
    fn bin(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
            span: self.span,
        }
    }
    fn and(&self, a: Expr, b: Expr) -> Expr {
        self.bin(BinOp::And, a, b)
    }
    fn path(&self, parts: &[Ident]) -> Path {
        let mut p = vec![self.q.dev.clone()];
        p.extend(parts.iter().cloned());
        Path {
            parts: p,
            span: self.span,
        }
    }
    fn reg(&self, parts: &[Ident]) -> Expr {
        Expr::Reg(self.path(parts))
    }
    fn let_(&self, n: &str, v: Expr) -> Stmt {
        Stmt::Let {
            name: self.id(n),
            value: v,
            span: self.span,
        }
    }
    fn set(&self, n: &str, v: Expr) -> Stmt {
        Stmt::Assign {
            name: self.id(n),
            value: v,
            span: self.span,
        }
    }
    /// 2^n - 1 from the index mask (one local fewer: register pressure
    /// in a decomposition loop matters more than one shift).
    fn cap_minus_1(&self) -> Expr {
        let sh = match self.q.index {
            QueueIndex::Wrap => 1,
            QueueIndex::Bytes => self.log2_entry(),
        };
        self.bin(BinOp::Shr, self.index_mask(), self.int(sh))
    }
    fn index_mask(&self) -> Expr {
        self.name(&self.imask)
    }
    fn log2_entry(&self) -> u64 {
        u64::from(self.q.entry.trailing_zeros())
    }
    /// What the producer and consumer registers hold: index and wrap bit
    /// (2^(n+1) - 1), or a byte offset (entry << n) - 1.
    fn index_mask_expr(&self) -> Expr {
        let top = match self.q.index {
            QueueIndex::Wrap => self.bin(BinOp::Shl, self.int(2), self.name(&self.log2n)),
            QueueIndex::Bytes => {
                self.bin(BinOp::Shl, self.int(self.q.entry), self.name(&self.log2n))
            }
        };
        self.bin(BinOp::Sub, top, self.int(1))
    }
    /// Free entries with the consumer at `cons`.
    fn free(&self, cons: Expr) -> Expr {
        let used = self.and(
            self.bin(BinOp::Sub, self.name(&self.prod), cons),
            self.index_mask(),
        );
        match self.q.index {
            QueueIndex::Wrap => self.bin(
                BinOp::Sub,
                self.bin(BinOp::Add, self.cap_minus_1(), self.int(1)),
                used,
            ),
            // One entry stays free: equal offsets mean empty.
            QueueIndex::Bytes => self.bin(
                BinOp::Sub,
                self.cap_minus_1(),
                self.bin(BinOp::Shr, used, self.int(self.log2_entry())),
            ),
        }
    }
    /// Byte offset of the producer's slot in the ring.
    fn slot(&self) -> Expr {
        match self.q.index {
            QueueIndex::Wrap => self.bin(
                BinOp::Shl,
                self.and(self.name(&self.prod), self.cap_minus_1()),
                self.int(self.log2_entry()),
            ),
            QueueIndex::Bytes => self.name(&self.prod),
        }
    }
    fn next(&self) -> Expr {
        let step = match self.q.index {
            QueueIndex::Wrap => 1,
            QueueIndex::Bytes => self.q.entry,
        };
        self.and(
            self.bin(BinOp::Add, self.name(&self.prod), self.int(step)),
            self.index_mask(),
        )
    }
    /// The doorbell: the device may now read every entry before `prod`.
    fn publish(&self) -> Vec<Stmt> {
        let mut v = vec![Stmt::Write {
            target: self.path(std::slice::from_ref(&self.q.prod)),
            value: self.name(&self.prod),
            span: self.span,
        }];
        if self.q.batch.is_some() {
            v.push(self.set(&self.pending, self.int(0)));
        }
        v
    }
    fn enqueue(
        &self,
        r: &RecordLayout,
        given: &[(Ident, Expr)],
        span: Span,
    ) -> Result<Vec<Stmt>, Diag> {
        for (f, _) in given {
            match r.fields.iter().find(|x| x.name == f.name) {
                None => {
                    return Err(Diag::new(
                        f.span,
                        format!("record `{}` has no field `{}`", r.name, f.name),
                    )
                    .label("unknown field"))
                }
                Some(x) if x.fixed.is_some() => {
                    return Err(Diag::new(
                        f.span,
                        format!("field `{}` is fixed by record `{}`", f.name, r.name),
                    )
                    .label("fixed in the record"))
                }
                _ => {}
            }
            if given.iter().filter(|(g, _)| g.name == f.name).count() > 1 {
                return Err(Diag::new(f.span, format!("field `{}` given twice", f.name)));
            }
        }
        let mut out = Vec::new();
        // No free entry known: look at the consumer; while the ring is
        // full, publish what is there (the device may be waiting for it)
        // and look again.
        let cons = || self.reg(&self.q.cons);
        out.push(Stmt::If {
            cond: self.bin(BinOp::Eq, self.name(&self.space), self.int(0)),
            then_: vec![
                self.set(&self.space, self.free(cons())),
                // Full (rarer still): the publish's barrier belongs here,
                // not on every first enqueue.
                Stmt::If {
                    cond: self.bin(BinOp::Eq, self.name(&self.space), self.int(0)),
                    then_: vec![Stmt::While {
                        cond: self.bin(BinOp::Eq, self.name(&self.space), self.int(0)),
                        limit: self.q.full_limit,
                        limit_span: span,
                        fail: Some(Expr::Neg {
                            inner: Box::new(self.int(110)),
                            span,
                        }),
                        body: {
                            let mut b = self.publish();
                            b.push(self.set(&self.space, self.free(cons())));
                            b
                        },
                        span,
                    }],
                    else_: Vec::new(),
                    rare: true,
                    span,
                },
            ],
            else_: Vec::new(),
            rare: true,
            span,
        });
        for w in 0..(r.size / 8) as u32 {
            let mut value: Option<Expr> = None;
            for f in r.fields.iter().filter(|f| f.word == w) {
                let part = match f.fixed {
                    Some(c) => Some(self.int(c << f.shift)),
                    None => given.iter().find(|(g, _)| g.name == f.name).map(|(_, e)| {
                        let masked = if f.width == 64 {
                            e.clone()
                        } else {
                            self.and(e.clone(), self.int(crate::ir::expr::field_mask(0, f.width)))
                        };
                        if f.shift == 0 {
                            masked
                        } else {
                            self.bin(BinOp::Shl, masked, self.int(u64::from(f.shift)))
                        }
                    }),
                };
                if let Some(p) = part {
                    value = Some(match value {
                        None => p,
                        Some(v) => self.bin(BinOp::Or, v, p),
                    });
                }
            }
            let index = self.bin(BinOp::Add, self.slot(), self.int(u64::from(w) * 8));
            out.push(Stmt::MemWrite {
                mem: Expr::Mem {
                    ptr: self.id(&self.ring),
                    offset: 0,
                    index: Some(Box::new(index)),
                    span,
                },
                value: value.unwrap_or_else(|| self.int(0)),
                span,
            });
        }
        out.push(self.set(&self.prod, self.next()));
        out.push(self.set(
            &self.space,
            self.bin(BinOp::Sub, self.name(&self.space), self.int(1)),
        ));
        if let Some((b, _)) = self.q.batch {
            out.push(self.set(
                &self.pending,
                self.bin(BinOp::Add, self.name(&self.pending), self.int(1)),
            ));
            out.push(Stmt::If {
                cond: self.bin(BinOp::Eq, self.name(&self.pending), self.int(b)),
                then_: self.publish(),
                else_: Vec::new(),
                rare: true,
                span,
            });
        }
        Ok(out)
    }
}

/// Without any `queue`, a queue statement names an unknown queue.
pub fn no_queue_statements(spec: &Spec) -> Result<(), Diag> {
    let mut used = Vec::new();
    for s in &spec.seqs {
        find_used(&s.body, &[], &mut used)?;
    }
    Ok(())
}
