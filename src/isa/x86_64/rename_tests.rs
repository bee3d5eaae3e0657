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
