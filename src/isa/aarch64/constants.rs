//! 64-bit constants in AArch64 registers: the shortest `movz`/`movn`/
//! `movk`/`orr #bitmask` sequence we know for each value (tested against
//! an interpreter of those instructions in `lower_tests.rs`).

use super::insn::*;

/// Shortest sequence we know for a 64-bit constant: a single `movz` or
/// `movn`; one `orr xd, xzr, #bitmask`; `orr` + one `movk`; `movz` +
/// `movk`s over the non-zero chunks; or `movn` + `movk`s over the chunks
/// that are not 0xffff.
pub fn materialize(rd: XReg, value: u64, e: &mut dyn FnMut(Insn)) {
    for i in candidates(rd, value) {
        e(i);
    }
}

fn candidates(rd: XReg, value: u64) -> Vec<Insn> {
    let (rd_x, rd) = (rd, RegOrZr::from(rd));
    let chunks = MoveWide::halfwords(value);
    let movk = |imm: MoveWide| Insn::Movk { rd, imm };
    // movz/movn + movk: skip the chunks the first instruction already got
    // right (0 for movz, 0xffff for movn).
    let wide = |fill: u16| -> Vec<Insn> {
        let first = |imm: MoveWide| {
            if fill == 0 {
                Insn::Movz { rd, imm }
            } else {
                Insn::Movn {
                    rd,
                    imm: imm.inverted(),
                }
            }
        };
        let mut s = Vec::new();
        for c in chunks {
            if c.bits() == fill {
                continue;
            }
            s.push(if s.is_empty() { first(c) } else { movk(c) });
        }
        if s.is_empty() {
            // All four chunks are the fill: the first one does.
            s.push(first(chunks[0]));
        }
        s
    };
    let mut best = wide(0);
    let n = wide(0xffff);
    if n.len() < best.len() {
        best = n;
    }
    // Prefer `movz`/`movn` when one of them does it alone: `mov x0, #6`
    // reads better than `orr x0, xzr, #6`.
    let orr = |imm| Insn::OrrImm {
        rd: rd_x,
        rn: RegOrZr::Zr,
        imm,
    };
    if best.len() > 1 {
        if let Some(imm) = ImmLogic::maybe_from(value) {
            return vec![orr(imm)];
        }
    }
    if best.len() > 2 {
        // A bitmask immediate that is right in all chunks but one.
        for c in chunks {
            let mask = 0xffffu64 << c.shift();
            for fill in [0u64, u64::MAX]
                .into_iter()
                .chain(chunks.map(|j| u64::from(j.bits()) * 0x0001_0001_0001_0001))
            {
                if let Some(imm) = ImmLogic::maybe_from((value & !mask) | (fill & mask)) {
                    return vec![orr(imm), movk(c)];
                }
            }
        }
    }
    best
}
