//! RV64 under the unicorn emulator (`crate::emu`).
//!
//! The code runs in M-mode, where `sfence.vma` executes; unicorn's CPU
//! has no Svinval, so `sinval.vma`, `sfence.w.inval` and
//! `sfence.inval.ir` raise an illegal-instruction exception that the
//! runner's interrupt hook skips like POWER's `tlbie` (the code hook
//! recorded the event).

use super::Riscv64;
use crate::emu::{stack_arg, write_reg, EmuError, EmuTarget, Uc, SENTINEL_ADDR};
use unicorn_engine::{Arch as UcArch, Mode, RegisterRISCV};

/// Unicorn's number of RISC-V integer register `n` (X0..X31 are
/// consecutive).
fn gpr(n: u32) -> i32 {
    i32::from(RegisterRISCV::X0) + n as i32
}

impl EmuTarget for Riscv64 {
    fn unicorn_mode(&self) -> (UcArch, Mode) {
        (UcArch::RISCV, Mode::RISCV64)
    }

    fn pc_reg(&self) -> i32 {
        RegisterRISCV::PC.into()
    }

    fn ret_reg(&self) -> i32 {
        RegisterRISCV::A0.into()
    }

    /// `ebreak`.
    fn stop_insn(&self) -> Vec<u8> {
        0x0010_0073u32.to_le_bytes().to_vec()
    }

    fn enter(&self, uc: &mut Uc<'_>, args: &[u64], sp: u64) -> Result<(), EmuError> {
        // psABI: past a7, 8-byte slots from sp up.
        for (i, a) in args.iter().enumerate() {
            if i < 8 {
                write_reg(uc, gpr(10 + i as u32), *a)?;
            } else {
                stack_arg(uc, sp + 8 * (i as u64 - 8), *a, false)?;
            }
        }
        write_reg(uc, RegisterRISCV::SP.into(), sp)?;
        write_reg(uc, RegisterRISCV::RA.into(), SENTINEL_ADDR)
    }

    fn invalidate_operands(&self, uc: &Uc<'_>, pc: u64, _text: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        // SFENCE.VMA / SINVAL.VMA rs1, rs2: the registers that are
        // not x0, which are the spec's operands (x0 is in the name).
        if let Some(w) = uc.get_data().word_at(pc) {
            if w & 0x7f == 0x73 && matches!(w >> 25, 0x09 | 0x0b) {
                for r in [(w >> 15) & 31, (w >> 20) & 31] {
                    if r != 0 {
                        let v = uc.reg_read(gpr(r)).unwrap_or(0);
                        out.push((format!("x{r}"), v));
                    }
                }
            }
        }
        out
    }
}
