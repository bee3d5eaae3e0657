use super::*;
use crate::isa::x86_64::insn::{Cond, Simm32};
use proptest::prelude::*;

const RBX: Gpr = Gpr::RBX;
const R12: Gpr = Gpr::R12;
const RAX: Gpr = Gpr::RAX;

fn body(insns: &[Insn]) -> Body {
    insns
        .iter()
        .map(|i| (i.clone(), Origin::default()))
        .collect()
}

fn insns(b: &Body) -> Vec<Insn> {
    b.iter().map(|(i, _)| i.clone()).collect()
}

fn jcc(target: Label) -> Insn {
    Insn::Jcc {
        cond: Cond::Ne,
        target,
    }
}

fn touch(rd: Gpr) -> Insn {
    Insn::AddImm {
        rd,
        imm: Simm32::from(1),
    }
}

/// A path that never touches rbx pays nothing; the one that does pushes
/// after the branch and pops before its `ret`.
#[test]
fn only_the_path_that_uses_rbx_saves_it() {
    let b = body(&[jcc(1), Insn::Ret, Insn::Label(1), touch(RBX), Insn::Ret]);
    let got = insns(&wrap(b, &[RBX]));
    assert_eq!(
        got,
        vec![
            jcc(1),
            Insn::Ret,
            Insn::Label(1),
            Insn::Push { rs: RBX },
            touch(RBX),
            Insn::Pop { rd: RBX },
            Insn::Ret,
        ]
    );
}

/// A loop that borrows the registers saves them once around the loop,
/// in order, and restores them in reverse before the join.
#[test]
fn loop_saved_once_and_restored_before_the_join() {
    let b = body(&[
        jcc(3),
        Insn::Label(1),
        touch(RBX),
        touch(R12),
        jcc(1),
        Insn::Jmp { target: 2 },
        Insn::Label(3),
        touch(RAX),
        Insn::Label(2),
        Insn::Ret,
    ]);
    let got = insns(&wrap(b, &[RBX, R12]));
    assert_eq!(
        got,
        vec![
            jcc(3),
            Insn::Push { rs: RBX },
            Insn::Push { rs: R12 },
            Insn::Label(1),
            touch(RBX),
            touch(R12),
            jcc(1),
            Insn::Pop { rd: R12 },
            Insn::Pop { rd: RBX },
            Insn::Jmp { target: 2 },
            Insn::Label(3),
            touch(RAX),
            Insn::Label(2),
            Insn::Ret,
        ]
    );
}

/// A function that addresses its stack keeps the frame at entry.
#[test]
fn stack_addressing_keeps_the_entry_frame() {
    let b = body(&[
        jcc(1),
        Insn::AddImm {
            rd: Gpr::RSP,
            imm: Simm32::from(8),
        },
        Insn::Label(1),
        touch(RBX),
        Insn::Ret,
    ]);
    let got = insns(&wrap(b, &[RBX]));
    assert_eq!(got[0], Insn::Push { rs: RBX });
    assert_eq!(got[got.len() - 2], Insn::Pop { rd: RBX });
}

/// A `jcc` into the region to a label another path reaches too: the
/// push goes on a trampoline after the last `ret`.
#[test]
fn critical_edge_gets_a_trampoline() {
    let b = body(&[jcc(1), touch(RBX), Insn::Label(1), touch(RBX), Insn::Ret]);
    let got = insns(&wrap(b, &[RBX]));
    assert_eq!(
        got,
        vec![
            jcc(2),
            Insn::Push { rs: RBX },
            touch(RBX),
            Insn::Label(1),
            touch(RBX),
            Insn::Pop { rd: RBX },
            Insn::Ret,
            Insn::Label(2),
            Insn::Push { rs: RBX },
            Insn::Jmp { target: 1 },
        ]
    );
    assert!(simulate(&got, &[RBX], &mut |_| true).is_ok());
}

/// Runs `code` with rbx.. holding the caller's values, taking each `jcc`
/// as `take` says, for at most 200 steps. A touch of a saved register
/// must see what the last touch left (or the caller's value) and writes a
/// new value; the return must see the caller's values and an empty stack.
fn simulate(
    code: &[Insn],
    saved: &[Gpr],
    take: &mut dyn FnMut(usize) -> bool,
) -> Result<(), String> {
    let at: HashMap<Label, usize> = (code.iter().enumerate())
        .filter_map(|(k, i)| match i {
            Insn::Label(l) => Some((*l, k)),
            _ => None,
        })
        .collect();
    let caller = |r: Gpr| 1000 + u64::from(r.num());
    let mut regs: HashMap<Gpr, u64> = saved.iter().map(|&r| (r, caller(r))).collect();
    let mut shadow = regs.clone();
    let mut stack: Vec<u64> = Vec::new();
    let mut pc = 0;
    let mut next = 1u64;
    for step in 0..200 {
        let Some(i) = code.get(pc) else {
            return Err("fell off the end".into());
        };
        pc += 1;
        match i {
            Insn::Ret => {
                let ok = saved.iter().all(|&r| regs[&r] == caller(r)) && stack.is_empty();
                return if ok {
                    Ok(())
                } else {
                    Err(format!("ret at {}", pc - 1))
                };
            }
            Insn::Jmp { target } => pc = at[target],
            Insn::Jcc { target, .. } if take(step) => pc = at[target],
            Insn::Push { rs } => stack.push(regs[rs]),
            Insn::Pop { rd } => {
                let v = stack.pop().ok_or("pop of an empty stack")?;
                regs.insert(*rd, v);
            }
            _ => {
                for r in gprs(i).into_iter().filter(|r| saved.contains(r)) {
                    if regs[&r] != shadow[&r] {
                        return Err(format!("stale {r:?} at {}", pc - 1));
                    }
                    next += 1;
                    regs.insert(r, next);
                    shadow.insert(r, next);
                }
            }
        }
    }
    Ok(())
}

/// Random bodies of labels, jumps, branches, returns and touches: every
/// path of the shrink-wrapped code keeps the borrowed values and gives
/// the caller's back.
fn arb_body() -> impl Strategy<Value = Vec<Insn>> {
    let one = (0u8..7, 0u32..4).prop_map(|(k, l)| match k {
        0 => Insn::Label(l),
        1 => jcc(l),
        2 => Insn::Jmp { target: l },
        3 => Insn::Ret,
        4 => touch(RBX),
        5 => touch(R12),
        _ => touch(RAX),
    });
    prop::collection::vec(one, 1..24).prop_map(|mut v| {
        // Every label defined once, and the end returns.
        for l in 0..4 {
            v.retain(|i| *i != Insn::Label(l));
            v.insert((l as usize * 5) % (v.len() + 1), Insn::Label(l));
        }
        v.push(Insn::Ret);
        v
    })
}

proptest! {
    #[test]
    fn shrink_wrapped_paths_keep_the_callers_registers(
        code in arb_body(),
        choices in prop::collection::vec(any::<bool>(), 200),
    ) {
        let got = insns(&wrap(body(&code), &[RBX, R12]));
        let mut take = |step: usize| choices[step];
        prop_assert_eq!(simulate(&got, &[RBX, R12], &mut take), Ok(()));
    }
}
