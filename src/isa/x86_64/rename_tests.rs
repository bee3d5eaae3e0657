use super::*;
use crate::isa::x86_64::insn::{Cond, Simm32};
use crate::lir::Origin;

fn body(insns: &[Insn]) -> Body {
    insns
        .iter()
        .map(|i| (i.clone(), Origin::default()))
        .collect()
}

fn insns(b: &Body) -> Vec<Insn> {
    b.iter().map(|(i, _)| i.clone()).collect()
}

fn add(rd: Gpr, rs: Gpr) -> Insn {
    Insn::Add { rd, rs }
}

/// rbx holds a value while rcx (the fourth argument) is dead: rbx
/// becomes rcx, and the copy between them goes.
#[test]
fn callee_saved_becomes_a_dead_argument_register() {
    let b = body(&[
        Insn::MovReg {
            rd: Gpr::RAX,
            rs: Gpr::RCX,
        },
        Insn::MovImm {
            rd: Gpr::RBX,
            imm: 5,
        },
        add(Gpr::RBX, Gpr::RAX),
        Insn::MovReg {
            rd: Gpr::RAX,
            rs: Gpr::RBX,
        },
        Insn::Ret,
    ]);
    let (got, keep) = callee_saved(b, &[Gpr::RBX]);
    assert!(keep.is_empty());
    let got = insns(&got);
    assert!(
        !got.iter().any(|i| uses_defs(i).0 & bit(Gpr::RBX) != 0),
        "{got:?}"
    );
}

/// Every caller-saved register holds a live value where rbx does: it
/// stays, and so does the code.
#[test]
fn no_free_register_keeps_rbx() {
    let mut code: Vec<Insn> = FREE.iter().map(|&rd| Insn::MovImm { rd, imm: 1 }).collect();
    code.push(Insn::MovImm {
        rd: Gpr::RBX,
        imm: 2,
    });
    for &r in &FREE {
        code.push(add(Gpr::RBX, r));
    }
    code.extend([
        Insn::MovReg {
            rd: Gpr::RAX,
            rs: Gpr::RBX,
        },
        Insn::Ret,
    ]);
    let b = body(&code);
    let (got, keep) = callee_saved(b.clone(), &[Gpr::RBX]);
    assert_eq!(keep, vec![Gpr::RBX]);
    assert_eq!(got, b);
}

/// A value live around a loop's back edge interferes with a register
/// the loop writes: the flow graph, not the order, decides.
#[test]
fn loop_carried_values_interfere() {
    let mut code = vec![Insn::MovImm {
        rd: Gpr::RBX,
        imm: 0,
    }];
    code.extend(FREE.iter().map(|&rd| Insn::MovImm { rd, imm: 3 }));
    code.push(Insn::Label(1));
    for &r in &FREE {
        code.push(add(Gpr::RBX, r));
        code.push(Insn::AddImm {
            rd: r,
            imm: Simm32::from(1),
        });
    }
    code.extend([
        Insn::Jcc {
            cond: Cond::Ne,
            target: 1,
        },
        Insn::MovReg {
            rd: Gpr::RAX,
            rs: Gpr::RBX,
        },
        Insn::Ret,
    ]);
    let (_, keep) = callee_saved(body(&code), &[Gpr::RBX]);
    assert_eq!(keep, vec![Gpr::RBX]);
}

/// `xor %r,%r` writes without reading: a callee-saved register zeroed
/// first is not live at entry.
#[test]
fn zero_idiom_is_a_write() {
    let z = Insn::Xor {
        rd: Gpr::RBX,
        rs: Gpr::RBX,
    };
    assert_eq!(uses_defs(&z), (0, bit(Gpr::RBX)));
    let b = body(&[
        z,
        Insn::MovReg {
            rd: Gpr::RAX,
            rs: Gpr::RBX,
        },
        Insn::Ret,
    ]);
    let (_, keep) = callee_saved(b, &[Gpr::RBX]);
    assert!(keep.is_empty());
}

/// Runs `code` from the arguments, taking the `jcc`s as `take` says in
/// turn, for at most 200 steps: the values stored and rax at the return.
fn run(code: &[Insn], take: &[bool]) -> (Vec<u64>, Option<u64>) {
    let at: std::collections::HashMap<u32, usize> = (code.iter().enumerate())
        .filter_map(|(k, i)| match i {
            Insn::Label(l) => Some((*l, k)),
            _ => None,
        })
        .collect();
    let mut regs = [0u64; 16];
    for (k, r) in [Gpr::RDI, Gpr::RSI, Gpr::RDX, Gpr::RCX].iter().enumerate() {
        regs[usize::from(r.num())] = 100 + k as u64;
    }
    let g = |regs: &[u64; 16], r: Gpr| regs[usize::from(r.num())];
    let (mut stored, mut pc) = (Vec::new(), 0);
    // One choice per branch taken, so code without a copy stays in step.
    let mut take = take.iter().copied().cycle();
    for _ in 0..200 {
        let Some(i) = code.get(pc) else {
            break;
        };
        pc += 1;
        match *i {
            Insn::MovImm { rd, imm } => regs[usize::from(rd.num())] = imm,
            Insn::MovReg { rd, rs } => regs[usize::from(rd.num())] = g(&regs, rs),
            Insn::Add { rd, rs } => {
                regs[usize::from(rd.num())] = g(&regs, rd).wrapping_add(g(&regs, rs))
            }
            Insn::Store { src, .. } => stored.push(g(&regs, src)),
            Insn::Jmp { target } => pc = at[&target],
            Insn::Jcc { target, .. } if take.next() == Some(true) => pc = at[&target],
            Insn::Ret => return (stored, Some(g(&regs, Gpr::RAX))),
            _ => {}
        }
    }
    (stored, None)
}

fn arb_code() -> impl Strategy<Value = Vec<Insn>> {
    let regs = [Gpr::RAX, Gpr::RCX, Gpr::RDX, Gpr::RBX, Gpr::R12, Gpr::RSI];
    let reg = (0..regs.len()).prop_map(move |k| regs[k]);
    let one = (0u8..8, reg.clone(), reg, 0u32..3).prop_map(|(k, a, b, l)| match k {
        // No `mov %r,%r`: renaming drops those, which would put the
        // two runs' step limits out of step.
        1 if a != b => Insn::MovReg { rd: a, rs: b },
        0 | 1 => Insn::MovImm { rd: a, imm: 7 },
        2 | 3 => add(a, b),
        4 => Insn::Store {
            size: crate::isa::x86_64::insn::Size::Q,
            base: Gpr::RDI,
            index: None,
            disp: Simm32::ZERO,
            src: a,
        },
        5 => Insn::Jcc {
            cond: Cond::Ne,
            target: l,
        },
        6 => Insn::Label(l),
        _ => Insn::Ret,
    });
    prop::collection::vec(one, 1..30).prop_map(|mut v| {
        // Written first, so some programs never read them unset.
        v.insert(
            0,
            Insn::MovImm {
                rd: Gpr::RBX,
                imm: 1,
            },
        );
        v.insert(
            1,
            Insn::MovImm {
                rd: Gpr::R12,
                imm: 2,
            },
        );
        for l in 0..3 {
            v.retain(|i| *i != Insn::Label(l));
            v.insert((l as usize * 7) % (v.len() + 1), Insn::Label(l));
        }
        v.push(Insn::Ret);
        v
    })
}

use proptest::prelude::*;

proptest! {
    /// Renaming keeps what every path stores and returns.
    #[test]
    fn renaming_keeps_every_paths_effects(
        code in arb_code(),
        take in prop::collection::vec(any::<bool>(), 200),
    ) {
        let (got, keep) = callee_saved(body(&code), &[Gpr::RBX, Gpr::R12]);
        let got = insns(&got);
        for r in [Gpr::RBX, Gpr::R12] {
            if !keep.contains(&r) {
                prop_assert!(got.iter().all(|i| (uses_defs(i).0 | uses_defs(i).1) & bit(r) == 0));
            }
        }
        let (a, b) = (run(&code, &take), run(&got, &take));
        if a.1.is_some() && b.1.is_some() {
            prop_assert_eq!(a, b);
        } else {
            // A copy the renaming dropped lets one run go further in its
            // 200 steps: the shorter store log is a prefix of the other.
            let n = a.0.len().min(b.0.len());
            prop_assert_eq!(&a.0[..n], &b.0[..n]);
        }
    }
}
