//! Instruction constructors for the LIR passes' unit tests, so a test
//! function reads as its instructions.

use super::{Inst, Operand, VReg};

/// `vI = argument I`.
pub fn arg(i: u32) -> Inst {
    Inst::Arg {
        dst: VReg(i),
        index: i as usize,
    }
}

/// `vDST = value`.
pub fn imm(dst: u32, value: u64) -> Inst {
    Inst::Imm {
        dst: VReg(dst),
        value,
    }
}

/// `return vV`.
pub fn ret(v: u32) -> Inst {
    Inst::Ret {
        value: Operand::Reg(VReg(v)),
    }
}
