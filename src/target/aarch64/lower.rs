//! LIR -> aarch64 instructions.

use crate::lir::regalloc::RegFile;

pub const REGS: RegFile = RegFile {
    args: &[],
    pool: &[],
};
