//! POWER CPU invalidation instructions: which spec statements exist on
//! POWER and what they lower to.
//!
//! The IR names carry the instruction fields that are not registers
//! ([`crate::ir::insn_imm`]): `tlbie ric=R prs=P r=R` with RB and RS as
//! register operands (ISA 3.0 `tlbie RB,RS,RIC,PRS,R`, Linux
//! `PPC_TLBIE_5`), likewise `tlbiel`, and `slbia ih=N` with none.

use super::book3e;
use super::insn::{Ih, Insn, Reg, Ric};
use crate::ir::insn_imm;
use crate::ir::isa::InvalidationError;
use crate::isa::invalidation::Invalidation;

/// A checked POWER invalidation: what an [`Invalidation`] holds on POWER.
/// Its register operands are as many as the form takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Book III-S (radix) `tlbie`, `tlbiel`, `slbia`.
    Book3s(Form),
    /// Book III-E (`machine e6500`) `tlbilx`, `tlbivax`.
    Book3e(book3e::Form),
}

impl Op {
    /// Emit the invalidation with its operands in `regs`; `scratch` is
    /// the register Book III-E keeps the MSR in.
    pub fn lower(self, regs: &[Reg], scratch: Reg, e: &mut dyn FnMut(Insn)) {
        match self {
            Op::Book3s(f) => e(lower(f, regs)),
            Op::Book3e(f) => book3e::lower(f, regs, scratch, e),
        }
    }
}

/// A Book III-S invalidation by IR name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Tlbie { ric: Ric, prs: bool, r: bool },
    Tlbiel { ric: Ric, prs: bool, r: bool },
    Slbia { ih: Ih },
}

/// The form `name` spells; a field out of its range (which the parser
/// does not let through) makes it no POWER invalidation.
fn form(name: &str) -> Result<(Form, usize), InvalidationError> {
    let (m, v) = insn_imm::split(name);
    let field = |i: usize| v.get(i).copied();
    let bit = |i: usize| match field(i) {
        Some(0) => Some(false),
        Some(1) => Some(true),
        _ => None,
    };
    let ric = field(0).and_then(Ric::maybe_from);
    let f = match (m, ric, bit(1), bit(2)) {
        ("tlbie", Some(ric), Some(prs), Some(r)) => (Form::Tlbie { ric, prs, r }, 2),
        ("tlbiel", Some(ric), Some(prs), Some(r)) => (Form::Tlbiel { ric, prs, r }, 2),
        ("slbia", ..) if v.len() == 1 => match field(0).and_then(Ih::maybe_from) {
            Some(ih) => (Form::Slbia { ih }, 0),
            None => return Err(no_such(name)),
        },
        _ if name.starts_with("tlbi ") => {
            return Err(InvalidationError::Foreign {
                name: name.into(),
                what: "an AArch64 instruction",
                advice: "; POWER invalidates with `tlbie RB, RS, RIC, PRS, R` and `tlbiel`",
            })
        }
        _ => return Err(no_such(name)),
    };
    Ok(f)
}

fn no_such(name: &str) -> InvalidationError {
    InvalidationError::NoSuch {
        target: "POWER",
        name: name.into(),
        also: "",
    }
}

/// The Book III-S invalidation `name`, if it takes `n` register operands.
/// (Checked before lowering, so the error points at the spec statement.)
pub fn invalidation(name: &str, n: usize) -> Result<Invalidation, InvalidationError> {
    let (f, takes) = form(name)?;
    if takes != n {
        return Err(InvalidationError::Operands {
            name: name.into(),
            takes: takes.to_string(),
            got: n,
        });
    }
    Ok(Invalidation::new(name, Op::Book3s(f)))
}

/// The instruction for `f` with its operands (RB, RS for the TLB forms)
/// in registers `regs`.
fn lower(f: Form, regs: &[Reg]) -> Insn {
    match f {
        Form::Tlbie { ric, prs, r } => Insn::Tlbie {
            rb: regs[0],
            rs: regs[1],
            ric,
            prs,
            r,
        },
        Form::Tlbiel { ric, prs, r } => Insn::Tlbiel {
            rb: regs[0],
            rs: regs[1],
            ric,
            prs,
            r,
        },
        Form::Slbia { ih } => Insn::Slbia { ih },
    }
}

/// What an executed `tlbie`/`tlbiel`'s RB and RS say, for `trace` (Power
/// ISA v3.0B Book III 6.11.3: RB holds EPN in bits 0:51, IS in 52:53 and
/// AP in 56:58; RS the PID in bits 0:31 and the LPID in 32:63).
pub fn decode(insn: &str, operands: &[u64]) -> Option<String> {
    let m = insn.split_whitespace().next()?;
    if !matches!(m, "tlbie" | "tlbiel") {
        return None;
    }
    let rb = *operands.first()?;
    let mut s = format!(
        "epn={:#x} is={} ap={}",
        rb & !0xfff,
        (rb >> 10) & 3,
        (rb >> 5) & 7
    );
    if let Some(rs) = operands.get(1) {
        s.push_str(&format!(
            " pid={:#x} lpid={:#x}",
            rs >> 32,
            rs & 0xffff_ffff
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert!(invalidation("tlbie ric=2 prs=1 r=1", 2).is_ok());
        assert!(invalidation("tlbie ric=2 prs=1 r=1", 1).is_err());
        assert!(invalidation("slbia ih=3", 0).is_ok());
        assert!(invalidation("tlbi vale1is", 1)
            .unwrap_err()
            .to_string()
            .contains("AArch64"));
        let inv = invalidation("tlbiel ric=0 prs=1 r=1", 2).unwrap();
        let mut out = Vec::new();
        let (r4, r5) = (Reg::of::<4>(), Reg::of::<5>());
        inv.op::<Op>()
            .lower(&[r4, r5], Reg::R0, &mut |i| out.push(i));
        assert_eq!(
            out,
            [Insn::Tlbiel {
                rb: r4,
                rs: r5,
                ric: Ric::of::<0>(),
                prs: true,
                r: true
            }]
        );
        assert!(invalidation("tlbie ric=4 prs=1 r=1", 2).is_err());
        assert!(invalidation("tlbie ric=0 prs=2 r=1", 2).is_err());
        assert!(invalidation("slbia ih=8", 0).is_err());
    }
}
