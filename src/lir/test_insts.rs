//! Instruction constructors for the LIR passes' unit tests, so a test
//! function reads as its instructions.

use super::{Cmp, Func, Inst, LabelId, Operand, Origin, VReg};
use crate::ir::expr::BinOp;

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

/// `vDST = vA op b`.
pub fn bin(op: BinOp, dst: u32, a: u32, b: Operand) -> Inst {
    Inst::Bin {
        op,
        dst: VReg(dst),
        a: VReg(a),
        b,
    }
}

/// `if vA cmp b goto TARGET`.
pub fn branch(cmp: Cmp, a: u32, b: Operand, target: LabelId) -> Inst {
    Inst::Branch {
        cmp,
        a: VReg(a),
        b,
        target,
    }
}

/// `f`'s instructions without their origins: what a pass's test compares.
pub fn insts(f: Func) -> Vec<Inst> {
    f.insts.into_iter().map(|(i, _)| i).collect()
}
