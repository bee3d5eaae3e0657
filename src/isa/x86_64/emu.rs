//! x86-64 under the unicorn emulator (`crate::emu`).

use super::X86_64;
use crate::emu::{stack_arg, uc_err, write_reg, EmuError, EmuTarget, Uc, SENTINEL_ADDR};
use unicorn_engine::{Arch as UcArch, Mode, RegisterX86};

const GPRS: [(&str, RegisterX86); 16] = [
    ("rax", RegisterX86::RAX),
    ("rbx", RegisterX86::RBX),
    ("rcx", RegisterX86::RCX),
    ("rdx", RegisterX86::RDX),
    ("rsi", RegisterX86::RSI),
    ("rdi", RegisterX86::RDI),
    ("rbp", RegisterX86::RBP),
    ("rsp", RegisterX86::RSP),
    ("r8", RegisterX86::R8),
    ("r9", RegisterX86::R9),
    ("r10", RegisterX86::R10),
    ("r11", RegisterX86::R11),
    ("r12", RegisterX86::R12),
    ("r13", RegisterX86::R13),
    ("r14", RegisterX86::R14),
    ("r15", RegisterX86::R15),
];

impl EmuTarget for X86_64 {
    fn unicorn_mode(&self) -> (UcArch, Mode) {
        (UcArch::X86, Mode::MODE_64)
    }

    fn pc_reg(&self) -> i32 {
        RegisterX86::RIP.into()
    }

    fn ret_reg(&self) -> i32 {
        RegisterX86::RAX.into()
    }

    /// `hlt`.
    fn stop_insn(&self) -> Vec<u8> {
        vec![0xf4]
    }

    fn enter(&self, uc: &mut Uc<'_>, args: &[u64], sp: u64) -> Result<(), EmuError> {
        const ARGS: [RegisterX86; 6] = [
            RegisterX86::RDI,
            RegisterX86::RSI,
            RegisterX86::RDX,
            RegisterX86::RCX,
            RegisterX86::R8,
            RegisterX86::R9,
        ];
        // SysV: past r9, 8-byte slots above the return address.
        for (i, a) in args.iter().enumerate() {
            match ARGS.get(i) {
                Some(r) => write_reg(uc, (*r).into(), *a)?,
                None => stack_arg(uc, sp + 8 * (i - ARGS.len()) as u64, *a, false)?,
            }
        }
        let rsp = sp - 8;
        uc.mem_write(rsp, &SENTINEL_ADDR.to_le_bytes())
            .map_err(|e| uc_err("push return address", e))?;
        write_reg(uc, RegisterX86::RSP.into(), rsp)
    }

    /// The registers the instruction's text names.
    fn invalidate_operands(&self, uc: &Uc<'_>, _pc: u64, text: &str) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = Vec::new();
        let lower = text.to_ascii_lowercase();
        for tok in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
            if let Some((name, r)) = GPRS.iter().find(|(n, _)| *n == tok) {
                if !out.iter().any(|(n, _)| n == name) {
                    out.push(((*name).to_string(), uc.reg_read(*r).unwrap_or(0)));
                }
            }
        }
        out
    }
}
