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

/// What `f` returns for `args`, by running its register-only subset
/// (arguments, constants, copies, arithmetic, branches, returns): the
/// meaning a pass's test compares before and after the pass. `None` if
/// it runs into anything else, or past `1000` steps.
pub fn run(f: &Func, args: &[u64]) -> Option<u64> {
    use std::collections::HashMap;
    let labels: HashMap<LabelId, usize> = (f.insts.iter().enumerate())
        .filter_map(|(i, (inst, _))| match inst {
            Inst::Label(l) => Some((*l, i)),
            _ => None,
        })
        .collect();
    let mut regs: HashMap<VReg, u64> = HashMap::new();
    let mut pc = 0;
    for _ in 0..1000 {
        let val = |regs: &HashMap<VReg, u64>, o: &Operand| match o {
            Operand::Imm(x) => Some(*x),
            Operand::Reg(v) => regs.get(v).copied(),
        };
        let inst = &f.insts.get(pc)?.0;
        pc += 1;
        match inst {
            Inst::Arg { dst, index } => {
                regs.insert(*dst, *args.get(*index)?);
            }
            Inst::Imm { dst, value } => {
                regs.insert(*dst, *value);
            }
            Inst::Copy { dst, src } => {
                let x = *regs.get(src)?;
                regs.insert(*dst, x);
            }
            Inst::Not { dst, src } => {
                let x = !*regs.get(src)?;
                regs.insert(*dst, x);
            }
            Inst::Bin { op, dst, a, b } => {
                let (x, y) = (*regs.get(a)?, val(&regs, b)?);
                // The targets' shifts: the amount modulo 64.
                let y = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    y & 63
                } else {
                    y
                };
                regs.insert(*dst, op.apply(x, y));
            }
            Inst::Branch { cmp, a, b, target } => {
                if cmp.holds(*regs.get(a)?, val(&regs, b)?) {
                    pc = labels[target];
                }
            }
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } => {
                if ((*regs.get(a)? >> bit) & 1 == 1) == *set {
                    pc = labels[target];
                }
            }
            Inst::Jump(t) => pc = labels[t],
            Inst::Label(_) => {}
            Inst::Ret { value } => return val(&regs, value),
            _ => return None,
        }
    }
    None
}
