//! The statements a queue's operations become, built for one queue:
//! the producer-index arithmetic of its ring, the doorbell, the wait for
//! space and the stores of an entry.

use super::record::{RecordFieldLayout, RecordLayout};
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};

/// Builds the rewritten statements for one queue, every node at `span`.
pub(super) struct Cx<'a> {
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
    pub(super) fn new(q: &'a Queue, span: Span) -> Self {
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
    fn bin(&self, op: ArithOp, a: Expr, b: Expr) -> Expr {
        self.op(BinOp::Arith(op), a, b)
    }
    fn eq(&self, a: Expr, b: Expr) -> Expr {
        self.op(BinOp::Rel(Rel::Eq), a, b)
    }
    fn op(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
            span: self.span,
        }
    }
    fn and(&self, a: Expr, b: Expr) -> Expr {
        self.bin(ArithOp::And, a, b)
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
        self.bin(ArithOp::Shr, self.index_mask(), self.int(sh))
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
            QueueIndex::Wrap => self.bin(ArithOp::Shl, self.int(2), self.name(&self.log2n)),
            QueueIndex::Bytes => {
                self.bin(ArithOp::Shl, self.int(self.q.entry), self.name(&self.log2n))
            }
        };
        self.bin(ArithOp::Sub, top, self.int(1))
    }
    /// Free entries with the consumer at `cons`.
    fn free(&self, cons: Expr) -> Expr {
        let used = self.and(
            self.bin(ArithOp::Sub, self.name(&self.prod), cons),
            self.index_mask(),
        );
        match self.q.index {
            QueueIndex::Wrap => self.bin(
                ArithOp::Sub,
                self.bin(ArithOp::Add, self.cap_minus_1(), self.int(1)),
                used,
            ),
            // One entry stays free: equal offsets mean empty.
            QueueIndex::Bytes => self.bin(
                ArithOp::Sub,
                self.cap_minus_1(),
                self.bin(ArithOp::Shr, used, self.int(self.log2_entry())),
            ),
        }
    }
    /// Byte offset of the producer's slot in the ring.
    fn slot(&self) -> Expr {
        match self.q.index {
            QueueIndex::Wrap => self.bin(
                ArithOp::Shl,
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
            self.bin(ArithOp::Add, self.name(&self.prod), self.int(step)),
            self.index_mask(),
        )
    }
    /// The doorbell: the device may now read every entry before `prod`.
    pub(super) fn publish(&self) -> Vec<Stmt> {
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

    /// The arguments queue `q` adds ahead of a sequence's `params`, its
    /// ring and the log2 of its entries; an error if `params` has either.
    pub(super) fn arguments(&self, params: &[Param]) -> Result<Vec<Param>, Diag> {
        let q = self.q;
        let mut injected = Vec::new();
        for (pname, ty, elem) in [
            (self.ring.clone(), "ptr", Some("u64")),
            (self.log2n.clone(), "u64", None),
        ] {
            if let Some(p) = params.iter().find(|p| p.name.name == pname) {
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
                name: self.id(&pname),
                ty: self.id(ty),
                elem: elem.map(|e| self.id(e)),
                private: None,
                phys: None,
            });
        }
        Ok(injected)
    }

    /// The locals a sequence using the queue starts with.
    pub(super) fn prologue(&self) -> Vec<Stmt> {
        let q = self.q;
        let mut prologue = Vec::new();
        // The producer index, read once; the free entries known
        // (0: look at the consumer before the first store).
        // Sizes once, not per entry (a run-time shift is several
        // instructions on every target).
        prologue.push(self.let_(&self.imask, self.index_mask_expr()));
        prologue.push(self.let_(
            &self.prod,
            self.and(self.reg(std::slice::from_ref(&q.prod)), self.index_mask()),
        ));
        prologue.push(self.let_(&self.space, self.int(0)));
        if q.batch.is_some() {
            prologue.push(self.let_(&self.pending, self.int(0)));
        }
        prologue
    }

    /// `wait`: consumed everything published, the consumer index is the
    /// producer's (the poll compares the `cons` field).
    pub(super) fn wait(&self, limit: Option<(u64, Span)>, fail: Option<Box<Expr>>) -> Stmt {
        Stmt::Poll {
            target: Box::new(PollTarget::Reg(self.path(&self.q.cons))),
            op: CmpOp::Eq,
            value: Box::new(self.name(&self.prod)),
            limit,
            fail,
            span: self.span,
        }
    }

    /// `enqueue`: room for the entry, its words stored in the producer's
    /// slot, the producer index advanced (and, with `batch`, published
    /// every batch entries).
    /// `ahead_of_issue`: the `issue` of this queue comes right after it,
    /// so this entry goes out with the batch whatever its size.
    pub(super) fn enqueue(
        &self,
        r: &RecordLayout,
        given: &[(Ident, Expr)],
        span: Span,
        ahead_of_issue: bool,
    ) -> Result<Vec<Stmt>, Diag> {
        check_given_fields(r, given)?;
        let mut out = Vec::new();
        // A full batch goes out when the next command arrives, as Linux's
        // arm_smmu_cmdq_batch_add() submits it (issue 41): a batch of
        // exactly `b` and the command that `issue` follows (the CMD_SYNC
        // arm_smmu_cmdq_batch_submit() appends) share one doorbell.
        if let (Some((b, _)), false) = (self.q.batch, ahead_of_issue) {
            out.push(Stmt::If {
                cond: Box::new(self.eq(self.name(&self.pending), self.int(b))),
                then_: self.publish(),
                else_: Vec::new(),
                rare: true,
                span,
            });
        }
        out.push(self.make_room(span));
        for w in 0..(r.size / 8) as u32 {
            out.push(self.store_word(r, w, given, span));
        }
        out.push(self.set(&self.prod, self.next()));
        out.push(self.set(
            &self.space,
            self.bin(ArithOp::Sub, self.name(&self.space), self.int(1)),
        ));
        if self.q.batch.is_some() {
            out.push(self.set(
                &self.pending,
                self.bin(ArithOp::Add, self.name(&self.pending), self.int(1)),
            ));
        }
        Ok(out)
    }

    /// Before an entry's stores: a free entry known, or waited for.
    fn make_room(&self, span: Span) -> Stmt {
        // No free entry known: look at the consumer; while the ring is
        // full, publish what is there (the device may be waiting for it)
        // and look again.
        let cons = || self.reg(&self.q.cons);
        let no_space = || Box::new(self.eq(self.name(&self.space), self.int(0)));
        Stmt::If {
            cond: no_space(),
            then_: vec![
                self.set(&self.space, self.free(cons())),
                // Full (rarer still): the publish's barrier belongs here,
                // not on every first enqueue.
                Stmt::If {
                    cond: no_space(),
                    then_: vec![Stmt::While {
                        cond: no_space(),
                        limit: self.q.full_limit,
                        limit_span: span,
                        fail: Some(Box::new(Expr::Neg {
                            inner: Box::new(self.int(110)),
                            span,
                        })),
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
        }
    }

    /// The store of word `w` of an entry of record `r`: its fixed and
    /// `given` fields or'ed together, at the producer's slot.
    fn store_word(&self, r: &RecordLayout, w: u32, given: &[(Ident, Expr)], span: Span) -> Stmt {
        let mut value: Option<Expr> = None;
        for f in r.fields.iter().filter(|f| f.word == w) {
            if let Some(p) = self.field_value(f, given) {
                value = Some(match value {
                    None => p,
                    Some(v) => self.bin(ArithOp::Or, v, p),
                });
            }
        }
        let index = self.bin(ArithOp::Add, self.slot(), self.int(u64::from(w) * 8));
        Stmt::MemWrite {
            mem: Box::new(Expr::Mem {
                ptr: Box::new(self.id(&self.ring)),
                offset: 0,
                index: Some(Box::new(index)),
                span,
            }),
            value: Box::new(value.unwrap_or_else(|| self.int(0))),
            span,
        }
    }

    /// Field `f` in place in its word: its fixed value, or the `given`
    /// value masked and shifted; None when not given.
    fn field_value(&self, f: &RecordFieldLayout, given: &[(Ident, Expr)]) -> Option<Expr> {
        match f.fixed {
            Some(c) => Some(self.int(c << f.shift)),
            None => given.iter().find(|(g, _)| g.name == f.name).map(|(_, e)| {
                let masked = if f.width == 64 {
                    e.clone()
                } else {
                    self.and(
                        e.clone(),
                        self.int(crate::spec::bits::field_mask(0, f.width)),
                    )
                };
                if f.shift == 0 {
                    masked
                } else {
                    self.bin(ArithOp::Shl, masked, self.int(u64::from(f.shift)))
                }
            }),
        }
    }
}

/// The fields an `enqueue` gives: each once, each one of record `r`'s
/// and not fixed by it.
fn check_given_fields(r: &RecordLayout, given: &[(Ident, Expr)]) -> Result<(), Diag> {
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
    // A constant wider than its field would be masked silently (a
    // register aggregate's is an error too: issue 42).
    for (f, e) in given {
        let (Some(x), Expr::Int { value, span }) = (r.fields.iter().find(|x| x.name == f.name), e)
        else {
            continue;
        };
        if x.width < 64 && value >> x.width != 0 {
            return Err(Diag::new(
                *span,
                format!(
                    "value {value:#x} does not fit the {}-bit field `{}` (max {:#x})",
                    x.width,
                    f.name,
                    (1u64 << x.width) - 1
                ),
            )
            .label("too wide"));
        }
    }
    Ok(())
}
