//! POWER CPU invalidation instructions: which spec statements exist on
//! POWER and what they lower to.
//!
//! The IR names carry the instruction fields that are not registers
//! ([`crate::ir::insn_imm`]): `tlbie ric=R prs=P r=R` with RB and RS as
//! register operands (ISA 3.0 `tlbie RB,RS,RIC,PRS,R`, Linux
//! `PPC_TLBIE_5`), likewise `tlbiel`, and `slbia ih=N` with none.

use super::insn::{Insn, Reg};
use crate::ir::insn_imm;

/// A POWER invalidation by IR name, with its register operands.
enum Form {
    Tlbie { ric: u8, prs: u8, r: u8 },
    Tlbiel { ric: u8, prs: u8, r: u8 },
    Slbia { ih: u8 },
}

fn form(name: &str) -> Result<(Form, usize), String> {
    let (m, v) = insn_imm::split(name);
    let b = |i: usize| v.get(i).map(|&x| x as u8);
    let f = match (m, b(0), b(1), b(2)) {
        ("tlbie", Some(ric), Some(prs), Some(r)) => (Form::Tlbie { ric, prs, r }, 2),
        ("tlbiel", Some(ric), Some(prs), Some(r)) => (Form::Tlbiel { ric, prs, r }, 2),
        ("slbia", Some(ih), None, None) => (Form::Slbia { ih }, 0),
        _ if name.starts_with("tlbi ") => {
            return Err(format!(
                "`{name}` is an AArch64 instruction; POWER invalidates with `tlbie RB, RS, RIC, PRS, R` and `tlbiel`"
            ))
        }
        _ => return Err(format!("POWER has no invalidation `{name}`")),
    };
    Ok(f)
}

/// Can `name` with `n` register operands be lowered? (Checked before
/// lowering, so the error points at the spec statement.)
pub fn check_invalidate(name: &str, n: usize) -> Result<(), String> {
    let (_, takes) = form(name)?;
    if takes != n {
        return Err(format!(
            "`{name}` takes {takes} register operand(s), got {n}"
        ));
    }
    Ok(())
}

/// The instruction for `name` with its operands in registers `regs`.
pub fn lower_invalidate(name: &str, regs: &[Reg]) -> Result<Insn, String> {
    check_invalidate(name, regs.len())?;
    let (f, _) = form(name)?;
    Ok(match f {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert!(check_invalidate("tlbie ric=2 prs=1 r=1", 2).is_ok());
        assert!(check_invalidate("tlbie ric=2 prs=1 r=1", 1).is_err());
        assert!(check_invalidate("slbia ih=3", 0).is_ok());
        assert!(check_invalidate("tlbi vale1is", 1)
            .unwrap_err()
            .contains("AArch64"));
        assert_eq!(
            lower_invalidate("tlbiel ric=0 prs=1 r=1", &[4, 5]).unwrap(),
            Insn::Tlbiel {
                rb: 4,
                rs: 5,
                ric: 0,
                prs: 1,
                r: 1
            }
        );
    }
}
