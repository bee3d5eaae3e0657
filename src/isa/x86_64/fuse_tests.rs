use super::*;
use crate::isa::x86_64::lower::REGS;
use crate::lir::regalloc::allocate;
use crate::lir::test_insts::{arg, bin, branch, func, imm, ret};
use crate::lir::Inst;

fn un(op: UnOp, dst: u32, src: u32) -> Inst {
    Inst::Un {
        op,
        dst: VReg(dst),
        src: VReg(src),
    }
}

fn plan_of(insts: Vec<Inst>, nvregs: u32) -> Plan {
    let f = func(insts, nvregs, 2);
    let a = allocate(&f, &REGS).unwrap();
    plan(&f, &a, Gpr::RCX.num())
}

/// `63 - clz(x)`: the clz and the constant emit nothing, the `Sub` is
/// the scan; the source tested against 0 just before needs no value
/// for 0.
#[test]
fn k_minus_clz_is_one_scan() {
    let p = plan_of(
        vec![
            arg(0),
            un(UnOp::Clz, 1, 0),
            imm(2, 63),
            bin(BinOp::Sub, 3, 2, Operand::Reg(VReg(1))),
            ret(3),
        ],
        4,
    );
    assert_eq!(p.skip, [1, 2].into_iter().collect());
    let c = ClzFrom {
        src: VReg(0),
        add: 0,
        nonzero: false,
    };
    assert_eq!(p.clz.get(&3), Some(&c));
    let p = plan_of(
        vec![
            arg(0),
            branch(Cmp::Eq, 0, Operand::Imm(0), 0),
            imm(2, 64),
            un(UnOp::Clz, 1, 0),
            bin(BinOp::Sub, 3, 2, Operand::Reg(VReg(1))),
            ret(3),
            Inst::Label(0),
            ret(0),
        ],
        4,
    );
    let c = ClzFrom {
        src: VReg(0),
        add: 1,
        nonzero: true,
    };
    assert_eq!(p.clz.get(&4), Some(&c));
}

/// A clz read twice stays, and so does a constant read elsewhere.
#[test]
fn shared_values_are_not_fused() {
    let p = plan_of(
        vec![
            arg(0),
            un(UnOp::Clz, 1, 0),
            imm(2, 63),
            bin(BinOp::Sub, 3, 2, Operand::Reg(VReg(1))),
            bin(BinOp::Add, 4, 3, Operand::Reg(VReg(1))),
            ret(4),
        ],
        5,
    );
    assert!(p.skip.is_empty() && p.clz.is_empty());
}

/// `0x1000 << n` in one block: the constant goes into the shift. Across
/// a label (a loop top) it stays where it was.
#[test]
fn constant_left_of_a_shift() {
    let p = plan_of(
        vec![
            arg(0),
            imm(1, 0x1000),
            bin(BinOp::Shl, 2, 1, Operand::Reg(VReg(0))),
            ret(2),
        ],
        3,
    );
    assert_eq!(p.const_left.get(&2), Some(&0x1000));
    assert!(p.skip.contains(&1));
    let p = plan_of(
        vec![
            arg(0),
            imm(1, 0x1000),
            Inst::Label(0),
            bin(BinOp::Shl, 2, 1, Operand::Reg(VReg(0))),
            ret(2),
        ],
        3,
    );
    assert!(p.const_left.is_empty() && p.skip.is_empty());
}

/// rcx (the fourth argument) is busy at a shift only while its value is
/// still read afterwards.
#[test]
fn rcx_busy_only_while_its_value_lives() {
    let shift = bin(BinOp::Shl, 5, 0, Operand::Reg(VReg(1)));
    let body = |late_use: bool| {
        let mut v = vec![arg(0), arg(1), arg(2), arg(3), shift.clone()];
        v.push(bin(
            BinOp::Add,
            6,
            5,
            Operand::Reg(VReg(if late_use { 3 } else { 2 })),
        ));
        v.push(ret(6));
        v
    };
    assert!(plan_of(body(true), 7).rcx_busy.contains(&4));
    assert!(!plan_of(body(false), 7).rcx_busy.contains(&4));
}

/// ctz right after `if x == 0 goto`: x is not 0 there.
#[test]
fn scan_after_a_zero_test() {
    let p = plan_of(
        vec![
            arg(0),
            branch(Cmp::Eq, 0, Operand::Imm(0), 0),
            un(UnOp::Ctz, 1, 0),
            ret(1),
            Inst::Label(0),
            ret(0),
        ],
        2,
    );
    assert!(p.nonzero.contains(&2));
}

fn store(src: u32, base: u32, width: u32, offset: u64) -> Inst {
    Inst::Store {
        src: VReg(src),
        base: VReg(base),
        offset,
        width,
        swap: false,
        kind: crate::lir::MemKind::Normal,
        index: None,
    }
}

/// A constant only ever stored goes into the stores as an immediate and
/// is never set; one also read elsewhere, or too wide for a 64-bit
/// store's imm32, stays in its register.
#[test]
fn constants_only_stored_become_immediates() {
    let p = plan_of(
        vec![
            arg(0),
            imm(1, 0xffff_ffff),
            store(1, 0, 32, 0x7f0),
            store(1, 0, 32, 0x7f4),
            ret(0),
        ],
        2,
    );
    assert!(p.skip.contains(&1));
    assert_eq!(p.store_imm.get(&2), Some(&0xffff_ffff));
    assert_eq!(p.store_imm.get(&3), Some(&0xffff_ffff));
    for (width, value, also_read) in [(32, 0, true), (64, 0xffff_ffff, false)] {
        let mut body = vec![arg(0), imm(1, value), store(1, 0, width, 0)];
        body.push(ret(if also_read { 1 } else { 0 }));
        let p = plan_of(body, 2);
        assert!(
            p.store_imm.is_empty() && p.skip.is_empty(),
            "{width} {value:#x}"
        );
    }
}

/// `if (a & b) == 0`: the `and` is skipped and the branch tests; not
/// when the result is read again or the mask is past imm32.
#[test]
fn and_tested_against_zero_is_a_test() {
    let body = |mask: Operand, reread: bool| {
        let mut v = vec![
            arg(0),
            arg(1),
            bin(BinOp::And, 2, 0, mask),
            branch(Cmp::Eq, 2, Operand::Imm(0), 0),
        ];
        v.push(ret(if reread { 2 } else { 0 }));
        v.extend([Inst::Label(0), ret(1)]);
        v
    };
    let p = plan_of(body(Operand::Reg(VReg(1)), false), 3);
    assert!(p.skip.contains(&2));
    assert_eq!(p.and_test.get(&3), Some(&(VReg(0), Operand::Reg(VReg(1)))));
    let p = plan_of(body(Operand::Imm(0xfff), false), 3);
    assert_eq!(p.and_test.get(&3), Some(&(VReg(0), Operand::Imm(0xfff))));
    assert!(plan_of(body(Operand::Imm(0xfff), true), 3)
        .and_test
        .is_empty());
    assert!(plan_of(body(Operand::Imm(1 << 40), false), 3)
        .and_test
        .is_empty());
}
