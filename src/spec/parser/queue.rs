//! `record NAME SIZE { ... }` (a command queue entry's layout and its
//! completion write) and `queue NAME on DEV { ... }` (the ring).

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

/// A queue's items as given, each at most once.
#[derive(Default)]
struct QueueItems {
    entry: Option<(u64, Span, Endian)>,
    prod: Option<Ident>,
    cons: Option<Vec<Ident>>,
    index: Option<QueueIndex>,
    batch: Option<(u64, Span)>,
    full: Option<(u64, Span)>,
}

impl Parser<'_> {
    pub(super) fn record(&mut self) -> Result<Record, Diag> {
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
                write = Some(self.record_write(ws)?);
                continue;
            }
            self.expect_kw("field")?;
            fields.push(self.record_field()?);
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

    /// After a record's `write` (at `ws`):
    /// `WIDTH VALUE at ADDR [<< SHIFT] [when FIELD]`.
    fn record_write(&mut self, ws: Span) -> Result<RecordWrite, Diag> {
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
        Ok(RecordWrite {
            width,
            value,
            addr,
            shift,
            when,
            span: ws.to(self.prev_span()),
        })
    }

    /// After a record's `field`: `NAME lsb0|msb0 A[..B] [= VALUE]`.
    fn record_field(&mut self) -> Result<RecordField, Diag> {
        let fname = self.ident("a field name")?;
        let (numbering, first, last, fs, ls) = self.bits()?;
        let fixed = if self.eat(&Tok::Assign) {
            Some(self.int("the field's fixed value")?)
        } else {
            None
        };
        Ok(RecordField {
            name: fname,
            numbering,
            first,
            last,
            bits_span: fs.to(ls),
            fixed,
        })
    }

    pub(super) fn queue(&mut self) -> Result<Queue, Diag> {
        let start = self.expect_kw("queue")?;
        let name = self.ident("a queue name")?;
        self.expect_kw("on")?;
        let dev = self.ident("the device whose registers index the queue")?;
        self.expect(Tok::LBrace)?;
        let mut items = QueueItems::default();
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            self.queue_item(&mut items)?;
        }
        let span = start.to(self.prev_span());
        complete_queue(name, dev, items, span)
    }

    /// One item of a queue: `entry`, `prod`, `cons`, `index`, `batch` or
    /// `full`, and its value.
    fn queue_item(&mut self, items: &mut QueueItems) -> Result<(), Diag> {
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
                twice(items.entry.is_some())?;
                let (n, s) = self.int("the entry size in bytes")?;
                let e = self
                    .eat_one_of(&[("le", Endian::Little), ("be", Endian::Big)])
                    .ok_or_else(|| {
                        self.unexpected("`le` or `be` (the byte order of the entry's 64-bit words)")
                    })?;
                items.entry = Some((n, s, e));
            }
            "prod" => {
                twice(items.prod.is_some())?;
                items.prod = Some(self.ident("the producer register")?);
            }
            "cons" => {
                twice(items.cons.is_some())?;
                let p = self.path()?;
                items.cons = Some(p.parts);
            }
            "index" => {
                twice(items.index.is_some())?;
                let index = self
                    .eat_one_of(&[("wrap", QueueIndex::Wrap), ("bytes", QueueIndex::Bytes)])
                    .ok_or_else(|| {
                        self.unexpected(
                            "`wrap` (entry index and wrap bit) or `bytes` (byte offset)",
                        )
                    })?;
                items.index = Some(index);
            }
            "batch" => {
                twice(items.batch.is_some())?;
                items.batch = Some(self.int("the most entries published at once")?);
            }
            "full" => {
                twice(items.full.is_some())?;
                self.expect_kw("limit")?;
                items.full = Some(self.int("the reads of the consumer register while full")?);
            }
            _ => {
                return Err(
                    Diag::new(kw.span, format!("unknown queue item `{}`", kw.name))
                        .label("expected `entry`, `prod`, `cons`, `index`, `batch` or `full`"),
                )
            }
        }
        Ok(())
    }
}

/// The queue from its items: every one but `batch` is required, and the
/// full limit must fit 32 bits.
fn complete_queue(name: Ident, dev: Ident, items: QueueItems, span: Span) -> Result<Queue, Diag> {
    let missing = |what: &str, example: &str| {
        Diag::new(name.span, format!("queue `{}` has no `{what}`", name.name))
            .help(format!("add `{example}` to the queue"))
    };
    let (entry, entry_span, endian) = items.entry.ok_or_else(|| missing("entry", "entry 16 le"))?;
    let prod = items.prod.ok_or_else(|| missing("prod", "prod REGISTER"))?;
    let cons = items
        .cons
        .ok_or_else(|| missing("cons", "cons REGISTER[.FIELD]"))?;
    let index = items.index.ok_or_else(|| missing("index", "index wrap"))?;
    let (full_limit, full_span) = items
        .full
        .ok_or_else(|| missing("full limit", "full limit 1000000"))?;
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
        batch: items.batch,
        full_limit,
        span,
    })
}
