//! Record layouts: a `record`'s fields placed in its 64-bit words and its
//! completion write checked, and reading fields back out of an entry.

use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};

/// A checked record layout: fields as (word, shift, width).
#[derive(Clone, Debug)]
pub struct RecordLayout {
    pub name: String,
    /// The record's name in the spec.
    pub span: Span,
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

impl RecordLayout {
    /// Do an entry's words carry this record's fixed fields (it has some)?
    pub fn matches(&self, words: &[u64]) -> bool {
        let mut fixed = self.fields.iter().filter(|f| f.fixed.is_some()).peekable();
        fixed.peek().is_some()
            && fixed.all(|f| {
                let m = crate::spec::bits::field_mask(f.shift, f.width);
                let v = (f.fixed.unwrap_or(0) << f.shift) & m;
                words.get(f.word as usize).is_some_and(|x| x & m == v)
            })
    }

    /// Field `i` of an entry's words.
    pub fn get(&self, i: usize, words: &[u64]) -> u64 {
        let f = &self.fields[i];
        let w = words.get(f.word as usize).copied().unwrap_or(0);
        (w >> f.shift) & crate::spec::bits::field_mask(0, f.width)
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
    /// The field's name in the spec.
    pub span: Span,
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
    let mut out: Vec<RecordLayout> = Vec::with_capacity(spec.records.len());
    // By name, for the duplicate check: linear in the records (a scan per
    // record made 8 MiB of records take 20 s: issue 42).
    let mut first: rustc_hash::FxHashMap<&str, &Record> = Default::default();
    first.reserve(spec.records.len());
    for r in &spec.records {
        match first.entry(&r.name.name) {
            std::collections::hash_map::Entry::Occupied(prev) => {
                return Err(Diag::new(
                    r.name.span,
                    format!("record `{}` declared twice", r.name.name),
                )
                .related(prev.get().name.span, "first declared here"));
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(r);
            }
        }
        out.push(check_record(r)?);
    }
    Ok(out)
}

/// One record's layout: its size, fields and completion write checked.
fn check_record(r: &Record) -> Result<RecordLayout, Diag> {
    if r.size == 0 || !r.size.is_multiple_of(8) || r.size > 64 {
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
        fields.push(field_layout(f, bits, &mut used)?);
    }
    let write = match &r.write {
        None => None,
        Some(w) => Some(check_write(w, &fields)?),
    };
    Ok(RecordLayout {
        name: r.name.name.clone(),
        span: r.name.span,
        size: r.size,
        fields,
        write,
    })
}

/// Where field `f` lies in a record of `bits` bits: within one word,
/// clear of the bits earlier fields took (`used`, per word; it takes its
/// own), with room for its fixed value.
fn field_layout(f: &RecordField, bits: u64, used: &mut [u64]) -> Result<RecordFieldLayout, Diag> {
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
    let mask = crate::spec::bits::field_mask(shift, width);
    if used[word as usize] & mask != 0 {
        return Err(
            Diag::new(f.bits_span, "field overlaps another field").label("bits already used")
        );
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
    Ok(RecordFieldLayout {
        name: f.name.name.clone(),
        span: f.name.span,
        word,
        shift,
        width,
        fixed: f.fixed.map(|(v, _)| v),
        numbering: f.numbering,
        first: f.first,
        last: f.last,
    })
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
