//! Where the code, the return sentinel, the stack and the request's regions
//! go in the guest's address space, and the pages that covers.

use super::{EmuError, Request, CODE_BASE, MAX_MAPPED, SENTINEL_ADDR, STACK_BASE, STACK_SIZE};

/// A mapped span: (start, length) with a label for overlap diagnostics.
pub(super) struct Span {
    start: u64,
    len: u64,
    what: String,
}

pub(super) fn layout(req: &Request) -> Result<Vec<Span>, EmuError> {
    let code_len = (req.program.code.len() as u64).max(4);
    let mut spans = vec![
        Span {
            start: CODE_BASE,
            len: code_len,
            what: "code".into(),
        },
        Span {
            start: SENTINEL_ADDR,
            len: 16,
            what: "return sentinel".into(),
        },
        Span {
            start: STACK_BASE,
            len: STACK_SIZE,
            what: "stack".into(),
        },
    ];
    for (i, m) in req.mmio.iter().enumerate() {
        spans.push(Span {
            start: m.base,
            len: m.size,
            what: format!("mmio[{i}]"),
        });
    }
    for (i, r) in req.ram.iter().enumerate() {
        spans.push(Span {
            start: r.base,
            len: r.bytes.len() as u64,
            what: format!("ram[{i}]"),
        });
    }
    spans.retain(|s| s.len > 0);
    for s in &spans {
        if s.start.checked_add(s.len).is_none() {
            return Err(EmuError::Unicorn(format!(
                "{} at {:#x} (+{:#x}) wraps around the address space",
                s.what, s.start, s.len
            )));
        }
    }
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.start < b.start + b.len && b.start < a.start + a.len {
                return Err(EmuError::Unicorn(format!(
                    "{} at {:#x} overlaps {} at {:#x}",
                    a.what, a.start, b.what, b.start
                )));
            }
        }
    }
    Ok(spans)
}

/// Page-aligned, merged intervals covering all spans.
pub(super) fn pages(spans: &[Span], page: u64) -> Result<Vec<(u64, u64)>, EmuError> {
    let mut iv: Vec<(u64, u64)> = Vec::new();
    for s in spans {
        let lo = s.start & !(page - 1);
        let hi = (s.start + s.len)
            .checked_add(page - 1)
            .map(|x| x & !(page - 1))
            .ok_or_else(|| EmuError::Unicorn(format!("{} too close to 2^64", s.what)))?;
        iv.push((lo, hi));
    }
    iv.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in iv {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    let total: u64 = merged.iter().map(|(lo, hi)| hi - lo).sum();
    if total > MAX_MAPPED {
        return Err(EmuError::Unicorn(format!(
            "regions need {total:#x} bytes of guest memory, more than {MAX_MAPPED:#x}"
        )));
    }
    Ok(merged)
}
