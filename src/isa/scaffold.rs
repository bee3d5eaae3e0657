//! Pieces of a lowering that do not depend on the instruction set: which
//! virtual registers only ever hold zero, and the frame a function needs
//! for callee-saved registers and stack arguments (AAPCS64 and the RISC-V
//! psABI agree: 8-byte slots, sp 16-byte aligned).

use crate::lir::{Func, Inst, VReg};
use rustc_hash::{FxHashMap, FxHashSet};

/// Virtual registers that only ever hold 0 (one definition, `Imm 0`):
/// a target with a zero register reads them from it.
pub fn zero_vregs(f: &Func) -> FxHashSet<VReg> {
    let mut defs: FxHashMap<VReg, bool> = FxHashMap::default();
    for (inst, _) in &f.insts {
        if let Some(d) = inst.def() {
            let zero = matches!(inst, Inst::Imm { value: 0, .. });
            defs.entry(d).and_modify(|z| *z = false).or_insert(zero);
        }
    }
    defs.into_iter()
        .filter(|&(_, z)| z)
        .map(|(v, _)| v)
        .collect()
}

/// Bytes below the caller's sp holding `n` saved registers, sp kept
/// 16-byte aligned.
pub fn frame_size(n: usize) -> u32 {
    (8 * n as u32).div_ceil(16) * 16
}

/// Offset from sp of incoming argument `index` (0-based) when it is past
/// the `nregs` argument registers: the next 8-byte slot from the caller's
/// sp, plus the `frame` this function moved sp down by.
pub fn stack_arg_offset(index: usize, nregs: usize, frame: u32) -> Option<u32> {
    let slot = index.checked_sub(nregs)?;
    u32::try_from(8 * slot).ok()?.checked_add(frame)
}
