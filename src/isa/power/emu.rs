//! POWER under the unicorn emulator (`crate::emu`).
//!
//! Unicorn 2.1 quirks this relies on: only the default CPU model works,
//! with `ctl_set_tlb_type(VIRTUAL)` (identity translation); little-endian
//! mode is MSR[LE]. `tlbie`, `tlbiel`, `tlbsync` and friends raise a
//! PROGRAM interrupt, which the runner's interrupt hook skips when the
//! instruction is classified as a barrier or an invalidation (the code
//! hook already recorded the event). Unicorn's CPU is Book III-S, so the
//! Book III-E system instructions are decoded here ([`EmuTarget::system_insn`])
//! and modelled by the runner instead of run.

use super::insn::Spr;
use super::Power;
use crate::emu::{
    stack_arg, uc_err, write_reg, EmuError, EmuTarget, Sys, Uc, CODE_BASE, SENTINEL_ADDR,
};
use unicorn_engine::{Arch as UcArch, Mode, RegisterPPC, TlbType};

const GPRS: [RegisterPPC; 32] = [
    RegisterPPC::R0,
    RegisterPPC::R1,
    RegisterPPC::R2,
    RegisterPPC::R3,
    RegisterPPC::R4,
    RegisterPPC::R5,
    RegisterPPC::R6,
    RegisterPPC::R7,
    RegisterPPC::R8,
    RegisterPPC::R9,
    RegisterPPC::R10,
    RegisterPPC::R11,
    RegisterPPC::R12,
    RegisterPPC::R13,
    RegisterPPC::R14,
    RegisterPPC::R15,
    RegisterPPC::R16,
    RegisterPPC::R17,
    RegisterPPC::R18,
    RegisterPPC::R19,
    RegisterPPC::R20,
    RegisterPPC::R21,
    RegisterPPC::R22,
    RegisterPPC::R23,
    RegisterPPC::R24,
    RegisterPPC::R25,
    RegisterPPC::R26,
    RegisterPPC::R27,
    RegisterPPC::R28,
    RegisterPPC::R29,
    RegisterPPC::R30,
    RegisterPPC::R31,
];

/// Unicorn's number of GPR `n` (0..=31).
fn gpr(n: usize) -> i32 {
    GPRS[n].into()
}

impl EmuTarget for Power {
    fn unicorn_mode(&self) -> (UcArch, Mode) {
        (UcArch::PPC, Mode::PPC64 | Mode::BIG_ENDIAN)
    }

    fn configure(&self, uc: &mut Uc<'_>) -> Result<(), EmuError> {
        uc.ctl_set_tlb_type(TlbType::VIRTUAL)
            .map_err(|e| uc_err("set tlb type", e))
    }

    fn pc_reg(&self) -> i32 {
        RegisterPPC::PC.into()
    }

    fn ret_reg(&self) -> i32 {
        RegisterPPC::R3.into()
    }

    /// `trap`.
    fn stop_insn(&self) -> Vec<u8> {
        let trap = 0x7fe0_0008u32;
        if self.le {
            trap.to_le_bytes().to_vec()
        } else {
            trap.to_be_bytes().to_vec()
        }
    }

    fn enter(&self, uc: &mut Uc<'_>, args: &[u64], sp: u64) -> Result<(), EmuError> {
        // Past r10, each argument is in its doubleword of the
        // parameter save area, after the 48-byte (ELFv1) or 32-byte
        // (ELFv2) frame header (see isa::power::lower).
        let area = if self.le { 32 } else { 48 };
        for (i, a) in args.iter().enumerate() {
            match GPRS.get(3 + i).filter(|_| i < 8) {
                Some(r) => write_reg(uc, (*r).into(), *a)?,
                None => stack_arg(uc, sp + area + 8 * i as u64, *a, !self.le)?,
            }
        }
        write_reg(uc, RegisterPPC::R1.into(), sp)?;
        uc.mem_write(sp, &0u64.to_be_bytes())
            .map_err(|e| uc_err("backchain", e))?;
        write_reg(uc, RegisterPPC::R12.into(), CODE_BASE)?;
        write_reg(uc, RegisterPPC::LR.into(), SENTINEL_ADDR)?;
        if self.le {
            let msr = uc
                .reg_read(RegisterPPC::MSR)
                .map_err(|e| uc_err("read msr", e))?;
            write_reg(uc, RegisterPPC::MSR.into(), msr | 1)?;
        }
        Ok(())
    }

    /// The Book III-E MAS and MSR accesses and TLB search and read: MAS
    /// registers are modelled by their number (MAS0..MAS8).
    fn system_insn(&self, w: u32) -> Option<Sys> {
        if w >> 26 != 31 {
            return None;
        }
        let t = ((w >> 21) & 31) as usize;
        // The SPR field's halves are swapped in the word.
        let spr = || ((w >> 16) & 31 | ((w >> 11) & 31) << 5) as u16;
        // Modelled by SPR number (see book3e::mas_write).
        let mas = || Spr::from_number(spr()).map(|_| usize::from(spr()));
        Some(match (w >> 1) & 0x3ff {
            467 => Sys::Write {
                gpr: gpr(t),
                reg: mas()?,
            },
            339 => Sys::Read {
                gpr: gpr(t),
                reg: mas()?,
            },
            914 => {
                let (ra, rb) = ((w >> 16) & 31, (w >> 11) & 31);
                Sys::TlbLookup {
                    ea: Some(((ra != 0).then(|| gpr(ra as usize)), gpr(rb as usize))),
                }
            }
            946 => Sys::TlbLookup { ea: None },
            83 | 131 | 163 => Sys::Other,
            _ => return None,
        })
    }

    fn sys_write(&self, regs: &mut std::collections::HashMap<usize, u64>, reg: usize, v: u64) {
        super::book3e::mas_write(regs, reg, v);
    }

    fn sys_read(&self, regs: &std::collections::HashMap<usize, u64>, reg: usize) -> u64 {
        super::book3e::mas_read(regs, reg)
    }

    fn tlb_lookup(
        &self,
        regs: &mut std::collections::HashMap<usize, u64>,
        found: bool,
        ea: Option<u64>,
    ) {
        super::book3e::tlb_lookup(regs, found, ea);
    }

    fn invalidate_operands(&self, uc: &Uc<'_>, pc: u64, _text: &str) -> Vec<(String, u64)> {
        let st = uc.get_data();
        let mut out = Vec::new();
        let Some(w) = st.word_at(pc) else {
            return out;
        };
        let ra = ((w >> 16) & 31) as usize;
        let rb = ((w >> 11) & 31) as usize;
        let read = |r: usize| uc.reg_read(GPRS[r]).unwrap_or(0);
        // EA = (RA|0) + RB.
        let ea = || (if ra == 0 { 0 } else { read(ra) }).wrapping_add(read(rb));
        let mas6 = || ("mas6".to_string(), st.sys_reg(0x276));
        match (w >> 26, (w >> 1) & 0x3ff, (w >> 21) & 3) {
            // Book III-E tlbilx T=0 (nothing), T=1 (MAS6), T=3
            // and tlbivax (EA, MAS6): the spec's operands.
            (31, 18, 1) => out.push(mas6()),
            (31, 18, 3) | (31, 786, _) => {
                out.push(("ea".to_string(), ea()));
                out.push(mas6());
            }
            _ => {}
        }
        if w >> 26 == 31 {
            let rs = ((w >> 21) & 31) as usize;
            let regs: &[usize] = match (w >> 1) & 0x3ff {
                306 | 274 | 466 => &[rb, rs], // tlbie, tlbiel, slbieg
                434 => &[rb],                 // slbie
                _ => &[],
            };
            for &r in regs {
                out.push((format!("r{r}"), read(r)));
            }
        }
        out
    }
}
