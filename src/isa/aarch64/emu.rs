//! AArch64 under the unicorn emulator (`crate::emu`).
//!
//! The code runs at EL1. Range TLBIs (`tlbi rvae1is, ...`) are unknown
//! system instructions that would re-execute forever when skipped by the
//! SYS hook, so the hook skips every TLBI (op0 = 1, CRn = 8) *and* moves
//! pc past it.

use super::Aarch64;
use crate::emu::{stack_arg, uc_err, write_reg, EmuError, EmuTarget, Uc, SENTINEL_ADDR};
use unicorn_engine::{Arch as UcArch, Arm64Insn, Mode, RegisterARM64, RegisterARM64CP};

const GPRS: [RegisterARM64; 31] = [
    RegisterARM64::X0,
    RegisterARM64::X1,
    RegisterARM64::X2,
    RegisterARM64::X3,
    RegisterARM64::X4,
    RegisterARM64::X5,
    RegisterARM64::X6,
    RegisterARM64::X7,
    RegisterARM64::X8,
    RegisterARM64::X9,
    RegisterARM64::X10,
    RegisterARM64::X11,
    RegisterARM64::X12,
    RegisterARM64::X13,
    RegisterARM64::X14,
    RegisterARM64::X15,
    RegisterARM64::X16,
    RegisterARM64::X17,
    RegisterARM64::X18,
    RegisterARM64::X19,
    RegisterARM64::X20,
    RegisterARM64::X21,
    RegisterARM64::X22,
    RegisterARM64::X23,
    RegisterARM64::X24,
    RegisterARM64::X25,
    RegisterARM64::X26,
    RegisterARM64::X27,
    RegisterARM64::X28,
    RegisterARM64::X29,
    RegisterARM64::X30,
];

impl EmuTarget for Aarch64 {
    fn unicorn_mode(&self) -> (UcArch, Mode) {
        (UcArch::ARM64, Mode::ARM)
    }

    fn pc_reg(&self) -> i32 {
        RegisterARM64::PC.into()
    }

    fn ret_reg(&self) -> i32 {
        RegisterARM64::X0.into()
    }

    /// `brk #0`.
    fn stop_insn(&self) -> Vec<u8> {
        0xd420_0000u32.to_le_bytes().to_vec()
    }

    fn enter(&self, uc: &mut Uc<'_>, args: &[u64], sp: u64) -> Result<(), EmuError> {
        // AAPCS64: past x7, 8-byte slots from sp up.
        for (i, a) in args.iter().enumerate() {
            match GPRS.get(i).filter(|_| i < 8) {
                Some(r) => write_reg(uc, (*r).into(), *a)?,
                None => stack_arg(uc, sp + 8 * (i as u64 - 8), *a, false)?,
            }
        }
        write_reg(uc, RegisterARM64::SP.into(), sp)?;
        write_reg(uc, RegisterARM64::X30.into(), SENTINEL_ADDR)
    }

    fn add_hooks(&self, uc: &mut Uc<'_>) -> Result<(), EmuError> {
        uc.add_insn_sys_hook_arm64(
            Arm64Insn::UC_ARM64_INS_SYS,
            1,
            0,
            |uc, _rt, cp: &RegisterARM64CP| {
                if cp.op0 == 1 && cp.crn == 8 {
                    // TLBI: nothing to do for an emulator without a TLB model.
                    // pc must be moved by hand: for unknown encodings (range
                    // TLBIs) the translator ends the block after the skipped
                    // instruction without advancing pc.
                    let pc_reg = RegisterARM64::PC;
                    let pc = uc.reg_read(pc_reg).unwrap_or(uc.get_data().last_pc());
                    let _ = uc.reg_write(pc_reg, pc.wrapping_add(4));
                    true
                } else {
                    false
                }
            },
        )
        .map_err(|e| uc_err("sys hook", e))?;
        Ok(())
    }

    fn invalidate_operands(&self, uc: &Uc<'_>, pc: u64, _text: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        // SYS #op1, Cn, Cm, #op2, Xt (TLBI is an alias): 0xd508_0000 | ...
        if let Some(w) = uc.get_data().word_at(pc) {
            if w & 0xfff8_0000 == 0xd508_0000 {
                let rt = (w & 31) as usize;
                if let Some(r) = GPRS.get(rt) {
                    out.push((format!("x{rt}"), uc.reg_read(*r).unwrap_or(0)));
                } else if (w >> 5) & 7 != 0 {
                    // Every EL1 TLBI but VMALLE1* (op2 0) reads Xt:
                    // register 31 is XZR there.
                    out.push(("xzr".to_string(), 0));
                }
            }
        }
        out
    }
}
