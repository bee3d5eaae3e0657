//! Linear-scan register allocation over LIR.
//!
//! Sequences are short and live ranges few, so there is no spilling: if a
//! sequence needs more registers than the target's volatile set, that is a
//! diagnostic. Arguments are pre-coloured to their ABI registers. Live
//! ranges that reach into a loop are stretched to the loop's back edge.

use super::*;
use std::collections::HashMap;

/// Physical register numbers in the target's own numbering.
pub struct RegFile {
    /// ABI argument registers, in order.
    pub args: &'static [u8],
    /// Allocatable registers, in preference order (non-argument first).
    pub pool: &'static [u8],
    /// Callee-saved registers usable as a last resort: the target's
    /// lowering saves and restores the ones it is given.
    pub callee_saved: &'static [u8],
    /// A register every load-reserve result must live in (x86-64: rax,
    /// the implicit comparand of `lock cmpxchg`).
    pub reserve: Option<u8>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct OutOfRegisters {
    pub needed_at: usize,
}

pub struct Allocation {
    pub reg: HashMap<VReg, u8>,
}

impl Allocation {
    pub fn get(&self, v: VReg) -> u8 {
        self.reg.get(&v).copied().unwrap_or(0)
    }

    /// Callee-saved registers the allocation used, in `rf` order.
    pub fn used_callee_saved(&self, rf: &RegFile) -> Vec<u8> {
        rf.callee_saved
            .iter()
            .copied()
            .filter(|p| self.reg.values().any(|x| x == p))
            .collect()
    }
}

/// [start, end] instruction indices where each vreg is live.
pub fn live_ranges(f: &Func) -> HashMap<VReg, (usize, usize)> {
    let mut r: HashMap<VReg, (usize, usize)> = HashMap::new();
    for (i, (inst, _)) in f.insts.iter().enumerate() {
        for v in inst.uses().into_iter().chain(inst.def()) {
            let e = r.entry(v).or_insert((i, i));
            e.0 = e.0.min(i);
            e.1 = e.1.max(i);
        }
    }
    // Loops: a label with a later branch back to it.
    let mut label_at = HashMap::new();
    for (i, (inst, _)) in f.insts.iter().enumerate() {
        if let Inst::Label(l) = inst {
            label_at.insert(*l, i);
        }
    }
    let mut loops = Vec::new();
    for (i, (inst, _)) in f.insts.iter().enumerate() {
        let Some(t) = inst.branch_target() else {
            continue;
        };
        if let Some(&top) = label_at.get(&t) {
            if top < i {
                loops.push((top, i));
            }
        }
    }
    // Stretch to a fixpoint: nested loops can extend each other.
    let mut changed = true;
    while changed {
        changed = false;
        for (_, range) in r.iter_mut() {
            for &(top, back) in &loops {
                if range.0 < top && range.1 >= top && range.1 < back {
                    range.1 = back;
                    changed = true;
                }
            }
        }
    }
    r
}

pub fn allocate(f: &Func, rf: &RegFile) -> Result<Allocation, OutOfRegisters> {
    let ranges = live_ranges(f);
    let mut order: Vec<(VReg, (usize, usize))> = ranges.iter().map(|(v, r)| (*v, *r)).collect();
    order.sort_by_key(|(v, r)| (r.0, v.0));
    let mut reg: HashMap<VReg, u8> = HashMap::new();
    // Pre-colour arguments.
    for (inst, _) in &f.insts {
        if let Inst::Arg { dst, index } = inst {
            if let Some(&p) = rf.args.get(*index) {
                reg.insert(*dst, p);
            }
        }
        if let (Inst::LoadReserve { dst, .. }, Some(p)) = (inst, rf.reserve) {
            reg.insert(*dst, p);
        }
    }
    let mut active: Vec<(usize, u8, VReg)> = Vec::new(); // (end, preg, vreg)
    for (v, (start, end)) in order {
        active.retain(|(e, _, _)| *e >= start);
        if let Some(&p) = reg.get(&v) {
            active.push((end, p, v));
            continue;
        }
        // Registers pre-coloured to arguments that are live later are
        // busy for their whole range, even before this point in `order`.
        let busy = |p: u8| {
            active.iter().any(|(_, ap, _)| *ap == p)
                || reg.iter().any(|(ov, op)| {
                    *op == p && ranges.get(ov).is_some_and(|&(s, e)| s <= end && e >= start)
                })
        };
        let Some(&p) = rf.pool.iter().chain(rf.callee_saved).find(|&&p| !busy(p)) else {
            return Err(OutOfRegisters { needed_at: start });
        };
        reg.insert(v, p);
        active.push((end, p, v));
    }
    Ok(Allocation { reg })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(insts: Vec<Inst>) -> Func {
        let n = insts
            .iter()
            .filter_map(|i| i.def())
            .map(|v| v.0 + 1)
            .max()
            .unwrap_or(0);
        Func {
            name: "t".into(),
            args: vec![],
            insts: insts.into_iter().map(|i| (i, Origin::default())).collect(),
            nvregs: n,
            nlabels: 2,
        }
    }

    #[test]
    fn values_live_across_a_loop_keep_their_register() {
        use crate::ir::expr::BinOp;
        let f = func(vec![
            Inst::Imm {
                dst: VReg(0),
                value: 5,
            },
            Inst::Imm {
                dst: VReg(1),
                value: 3,
            },
            Inst::Label(0),
            Inst::Imm {
                dst: VReg(2),
                value: 1,
            },
            Inst::Bin {
                op: BinOp::Sub,
                dst: VReg(1),
                a: VReg(1),
                b: Operand::Reg(VReg(2)),
            },
            Inst::Branch {
                cmp: Cmp::Ne,
                a: VReg(1),
                b: Operand::Imm(0),
                target: 0,
            },
            Inst::Ret {
                value: Operand::Reg(VReg(0)),
            },
        ]);
        let rf = RegFile {
            args: &[],
            pool: &[1, 2, 3],
            callee_saved: &[],
            reserve: None,
        };
        let a = allocate(&f, &rf).unwrap();
        // v0 is live over the whole loop: nothing in the loop may share it.
        assert_ne!(a.get(VReg(0)), a.get(VReg(2)));
        assert_ne!(a.get(VReg(0)), a.get(VReg(1)));
        assert_ne!(a.get(VReg(1)), a.get(VReg(2)));
    }

    #[test]
    fn runs_out_cleanly() {
        let f = func(vec![
            Inst::Imm {
                dst: VReg(0),
                value: 5,
            },
            Inst::Imm {
                dst: VReg(1),
                value: 3,
            },
            Inst::Ret {
                value: Operand::Reg(VReg(0)),
            },
            Inst::Ret {
                value: Operand::Reg(VReg(1)),
            },
        ]);
        let rf = RegFile {
            args: &[],
            pool: &[1],
            callee_saved: &[],
            reserve: None,
        };
        assert!(allocate(&f, &rf).is_err());
    }
}
