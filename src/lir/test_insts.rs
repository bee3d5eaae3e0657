//! Instruction constructors for the LIR passes' unit tests, so a test
//! function reads as its instructions.

use super::{Func, Inst, Operand, Origin, VReg};

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

/// A function of `insts` with `nvregs` registers and `nlabels` labels.
pub fn func(insts: Vec<Inst>, nvregs: u32, nlabels: u32) -> Func {
    Func {
        name: "t".into(),
        args: Vec::new(),
        insts: insts.into_iter().map(|i| (i, Origin::default())).collect(),
        nvregs,
        nlabels,
        void: false,
    }
}
