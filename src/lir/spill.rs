//! Spilling: when [`regalloc::allocate`] runs out of registers, one value
//! at a time gives up its register for the rest of the function and the
//! allocation is tried again.
//!
//! A spilled value lives in a stack slot: every definition is followed by
//! an [`Inst::Spill`] of a fresh register, every use is preceded by an
//! [`Inst::Reload`] into a fresh register, so what remains of it in
//! registers is a few instructions long. A constant or a stack argument
//! needs no slot: it is built (or loaded from the caller's frame) again
//! before each use. Each target lowers the slots into its frame (AArch64
//! and RISC-V below sp with the callee-saved registers, x86-64 below the
//! pushes, POWER in the ABI's protected zone below r1).
//!
//! The value chosen is the cheapest to move to memory among those live
//! across the point where the allocator failed: a constant first, then
//! the one whose reloads and stores weigh least (an instruction in a loop
//! weighs 8 times one outside it), then the longest-lived. A value read
//! or written inside a load-reserve / store-conditional window is never
//! spilled: the window must hold no other memory access (on AArch64 and
//! POWER a store there may clear the reservation every time).

use super::regalloc::{self, Allocation, OutOfRegisters, RegFile};
use super::{Func, Inst, VReg};
use rustc_hash::{FxHashMap, FxHashSet};

/// [`regalloc::allocate`], spilling until the function fits; the error
/// when no value that is live where the registers ran out can be spilled.
pub fn allocate(f: Func, rf: &RegFile) -> Result<(Func, Allocation), OutOfRegisters> {
    let mut f = f;
    // Registers the rewriting made: spilling one again gains nothing.
    let mut temps = FxHashSet::default();
    loop {
        match regalloc::allocate(&f, rf) {
            Ok(a) => return Ok((f, a)),
            Err(e) => {
                let Some(v) = choose(&f, e.needed_at, rf, &temps) else {
                    return Err(e);
                };
                f = rewrite(&f, v, rf, &mut temps);
            }
        }
    }
}

/// How a spilled value is brought back before a use.
#[derive(Clone, Copy)]
enum Home {
    /// Built again: its one definition is this constant.
    Imm(u64),
    /// Loaded again from the caller's frame: a stack argument.
    StackArg(usize),
    Slot(u32),
}

/// Where each register occurs: its instruction indexes, and what
/// defines it.
#[derive(Default)]
struct Occurs {
    at: Vec<usize>,
    defs: Vec<usize>,
}

fn occurrences(f: &Func) -> FxHashMap<VReg, Occurs> {
    let mut m: FxHashMap<VReg, Occurs> = FxHashMap::default();
    for (i, (inst, _)) in f.insts.iter().enumerate() {
        inst.each_use(|v| m.entry(v).or_default().at.push(i));
        if let Some(d) = inst.def() {
            let o = m.entry(d).or_default();
            o.at.push(i);
            o.defs.push(i);
        }
    }
    m
}

/// The instruction index ranges from each load-reserve to the
/// store-conditional after it.
fn reservation_windows(f: &Func) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open = None;
    for (i, (inst, _)) in f.insts.iter().enumerate() {
        match inst {
            Inst::LoadReserve { .. } => open = Some(i),
            Inst::StoreCond { .. } => {
                if let Some(s) = open.take() {
                    out.push((s, i));
                }
            }
            _ => {}
        }
    }
    out
}

fn home(f: &Func, o: &Occurs, rf: &RegFile, slot: u32) -> Home {
    if let [d] = o.defs[..] {
        match f.insts[d].0 {
            Inst::Imm { value, .. } => return Home::Imm(value),
            Inst::Arg { index, .. } if index >= rf.args.len() => return Home::StackArg(index),
            _ => {}
        }
    }
    Home::Slot(slot)
}

/// The value to spill where the allocator failed at instruction `at`.
fn choose(f: &Func, at: usize, rf: &RegFile, temps: &FxHashSet<VReg>) -> Option<VReg> {
    let ranges = regalloc::live_ranges(f);
    let occurs = occurrences(f);
    let windows = reservation_windows(f);
    let loops = regalloc::loops(f);
    let weight = |i: usize| -> u64 {
        let depth = loops.iter().filter(|&&(t, b)| t <= i && i <= b).count();
        8u64.saturating_pow(depth as u32)
    };
    // Rebuilt before stored, then lightest, then longest, then by number.
    let mut best: Option<(bool, u64, std::cmp::Reverse<usize>, VReg)> = None;
    for (&v, &(s, e)) in &ranges {
        if s >= at || e < at || temps.contains(&v) {
            continue;
        }
        let Some(o) = occurs.get(&v) else { continue };
        let in_window = |i: usize| windows.iter().any(|&(ws, we)| ws <= i && i <= we);
        if o.at.iter().any(|&i| i == at || in_window(i))
            || o.defs.iter().any(|&d| {
                // A definition that also branches has no single point
                // after it for the store.
                matches!(f.insts[d].0, Inst::SubBranchAbove { .. })
            })
        {
            continue;
        }
        let remat = !matches!(home(f, o, rf, 0), Home::Slot(_));
        let uses: u64 =
            o.at.iter()
                .filter(|&&i| !o.defs.contains(&i) || f.insts[i].0.uses().contains(&v))
                .map(|&i| weight(i))
                .sum();
        let stores: u64 = if remat {
            0
        } else {
            o.defs.iter().map(|&i| weight(i)).sum()
        };
        let key = (!remat, uses + stores, std::cmp::Reverse(e - s), v);
        if best.is_none_or(|b| key < b) {
            best = Some(key);
        }
    }
    best.map(|(.., v)| v)
}

/// `f` with `v` living in memory (or rebuilt at each use).
fn rewrite(f: &Func, v: VReg, rf: &RegFile, temps: &mut FxHashSet<VReg>) -> Func {
    let occurs = occurrences(f);
    let o = &occurs[&v];
    let h = home(f, o, rf, f.spill_slots());
    let mut next = f
        .insts
        .iter()
        .flat_map(|(i, _)| i.uses().into_iter().chain(i.def()))
        .map(|r| r.0 + 1)
        .max()
        .unwrap_or(0)
        .max(f.nvregs);
    let mut fresh = |temps: &mut FxHashSet<VReg>| {
        let r = VReg(next);
        next += 1;
        temps.insert(r);
        r
    };
    let mut insts = Vec::with_capacity(f.insts.len() + 2 * o.at.len());
    for (inst, origin) in &f.insts {
        let aside = super::Origin {
            op: None,
            ..origin.clone()
        };
        let defines = inst.def() == Some(v);
        if defines && !matches!(h, Home::Slot(_)) {
            // The one definition of a rebuilt value: each use has its own.
            continue;
        }
        let mut inst = inst.clone();
        if inst.uses().contains(&v) {
            let t = fresh(temps);
            insts.push((
                match h {
                    Home::Imm(value) => Inst::Imm { dst: t, value },
                    Home::StackArg(index) => Inst::Arg { dst: t, index },
                    Home::Slot(slot) => Inst::Reload { dst: t, slot },
                },
                aside.clone(),
            ));
            inst.map_uses(|r| if r == v { t } else { r });
        }
        if let (true, Home::Slot(slot)) = (defines, h) {
            let d = fresh(temps);
            inst.set_def(d);
            insts.push((inst, origin.clone()));
            insts.push((Inst::Spill { src: d, slot }, aside));
        } else {
            insts.push((inst, origin.clone()));
        }
    }
    Func {
        name: f.name.clone(),
        args: f.args.clone(),
        insts,
        nvregs: next,
        nlabels: f.nlabels,
        void: f.void,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of the two arguments [`RF`] passes, then `body`.
    fn func(body: Vec<Inst>) -> Func {
        let insts = [vec![arg(0), arg(1)], body].concat();
        crate::lir::test_insts::func(insts, 16, 4)
    }
    use crate::ir::expr::BinOp;
    use crate::lir::test_insts::{arg, imm, ret};
    use crate::lir::{Cmp, Operand};

    const RF: RegFile = RegFile {
        args: &[1, 2],
        pool: &[3, 4, 5],
        callee_saved: &[],
        reserve: None,
    };

    fn add(dst: u32, a: u32, b: u32) -> Inst {
        Inst::Bin {
            op: BinOp::Add,
            dst: VReg(dst),
            a: VReg(a),
            b: Operand::Reg(VReg(b)),
        }
    }

    /// `f` with registers from `pool` only, which plain allocation cannot
    /// do: allocated with spills, and the allocation checked.
    fn spill_into(f: &Func, pool: &'static [u8]) -> Func {
        let tight = RegFile { pool, ..RF };
        assert!(regalloc::allocate(f, &tight).is_err());
        let (g, a) = allocate(f.clone(), &tight).unwrap();
        assert!(a.check(&g).is_ok());
        g
    }

    /// Interprets a straight-line or looping function with a stack, the
    /// spill slots included: rewriting must not change what it returns.
    fn run(f: &Func, args: &[u64]) -> u64 {
        let mut regs: FxHashMap<VReg, u64> = FxHashMap::default();
        let mut slots: FxHashMap<u32, u64> = FxHashMap::default();
        let labels: FxHashMap<u32, usize> = f
            .insts
            .iter()
            .enumerate()
            .filter_map(|(i, (x, _))| match x {
                Inst::Label(l) => Some((*l, i)),
                _ => None,
            })
            .collect();
        let mut pc = 0;
        for _ in 0..10_000 {
            let g = |r: &FxHashMap<VReg, u64>, v: &VReg| r[v];
            match &f.insts[pc].0 {
                Inst::Imm { dst, value } => {
                    regs.insert(*dst, *value);
                }
                Inst::Arg { dst, index } => {
                    regs.insert(*dst, args[*index]);
                }
                Inst::Bin { dst, a, b, .. } => {
                    let b = match b {
                        Operand::Reg(r) => g(&regs, r),
                        Operand::Imm(i) => *i,
                    };
                    let x = g(&regs, a).wrapping_add(b);
                    regs.insert(*dst, x);
                }
                Inst::Spill { src, slot } => {
                    slots.insert(*slot, g(&regs, src));
                }
                Inst::Reload { dst, slot } => {
                    regs.insert(*dst, slots[slot]);
                }
                Inst::Label(_) => {}
                Inst::Branch { cmp, a, b, target } => {
                    let b = match b {
                        Operand::Reg(r) => g(&regs, r),
                        Operand::Imm(i) => *i,
                    };
                    if cmp.holds(g(&regs, a), b) {
                        pc = labels[target];
                        continue;
                    }
                }
                Inst::Ret { value } => {
                    return match value {
                        Operand::Reg(r) => g(&regs, r),
                        Operand::Imm(i) => *i,
                    }
                }
                i => panic!("not interpreted: {i:?}"),
            }
            pc += 1;
        }
        panic!("no return")
    }

    /// Five values live at once, three registers: two values go to the
    /// stack (or are rebuilt), the function allocates, and it computes
    /// what it did before.
    #[test]
    fn spills_until_it_fits_and_keeps_the_meaning() {
        let f = func(vec![
            imm(2, 100),
            add(3, 0, 1),
            add(4, 3, 0),
            add(5, 4, 1),
            add(6, 5, 2),
            add(7, 6, 3),
            add(8, 7, 4),
            ret(8),
        ]);
        let g = spill_into(&f, &[3, 4, 5]);
        // The constant is rebuilt at its use, not stored.
        assert!(!g
            .insts
            .iter()
            .any(|(i, _)| matches!(i, Inst::Spill { src, .. } if *src == VReg(2))));
        assert!(
            g.insts.iter().any(|(i, _)| matches!(i, Inst::Spill { .. })),
            "{:#?}",
            g.insts
        );
        for args in [[1, 2], [7, 1 << 40], [u64::MAX, 3]] {
            assert_eq!(run(&g, &args), run(&f, &args), "{args:?}");
        }
    }

    /// A value live across a loop and read only after it goes to the
    /// stack, not the loop's own values: no load or store in the loop.
    #[test]
    fn a_loop_reloads_what_it_reads() {
        let f = func(vec![
            imm(2, 0),
            add(4, 0, 1),
            Inst::Label(0),
            add(2, 2, 1),
            add(3, 2, 0),
            Inst::Branch {
                cmp: Cmp::Ne,
                a: VReg(3),
                b: Operand::Imm(50),
                target: 0,
            },
            ret(4),
        ]);
        let g = spill_into(&f, &[3, 4]);
        assert_eq!(run(&g, &[10, 5]), run(&f, &[10, 5]));
        assert_eq!(run(&g, &[10, 5]), 15);
        let (top, back) = regalloc::loops(&g)[0];
        assert!(
            !g.insts[top..=back]
                .iter()
                .any(|(i, _)| matches!(i, Inst::Spill { .. } | Inst::Reload { .. })),
            "{:#?}",
            g.insts
        );
    }

    /// Nothing can go: every live value is read where the registers run
    /// out (v0 is read again later, so v2 cannot take its register). The
    /// allocator's error comes back, not a loop.
    #[test]
    fn gives_up_when_nothing_can_be_spilled() {
        let f = func(vec![add(2, 0, 1), add(3, 2, 0), ret(3)]);
        let none = RegFile {
            args: &[1, 2],
            pool: &[],
            ..RF
        };
        assert!(allocate(f, &none).is_err());
    }
}
