//! The lowering against the LIR's meaning, on a small RV64 evaluator of
//! the instructions it emits (the emulator and qemu check whole sequences;
//! these reach every immediate form and bit-count path directly).

use super::*;
use crate::isa::test_values::xorshift;
use crate::lir::{MemKind, Operand};
use rustc_hash::FxHashMap;

#[derive(Default)]
struct Cpu {
    x: [u64; 32],
    mem: FxHashMap<u64, u8>,
}

impl Cpu {
    fn set(&mut self, r: Reg, v: u64) {
        if r != Reg::ZERO {
            self.x[r.num() as usize] = v;
        }
    }

    fn get(&self, r: Reg) -> u64 {
        self.x[r.num() as usize]
    }

    fn run(&mut self, insns: &[Insn]) {
        for i in insns {
            self.step(i);
        }
    }

    fn step(&mut self, i: &Insn) {
        match i {
            Insn::Lui { rd, imm } => self.set(*rd, imm.value() as u64),
            Insn::Alu { op, rd, rs1, rs2 } => {
                let (a, b) = (self.get(*rs1), self.get(*rs2));
                let v = match op {
                    AluOp::Add => a.wrapping_add(b),
                    AluOp::Sub => a.wrapping_sub(b),
                    AluOp::And => a & b,
                    AluOp::Or => a | b,
                    AluOp::Xor => a ^ b,
                    AluOp::Sll => a << (b & 63),
                    AluOp::Srl => a >> (b & 63),
                    AluOp::Mul => a.wrapping_mul(b),
                    AluOp::Sltu => u64::from(a < b),
                };
                self.set(*rd, v);
            }
            Insn::AluImm { op, rd, rs1, imm } => {
                let (a, k) = (self.get(*rs1), imm.value() as u64);
                let v = match op {
                    ImmOp::Addi => a.wrapping_add(k),
                    ImmOp::Addiw => i64::from(a.wrapping_add(k) as u32 as i32) as u64,
                    ImmOp::Andi => a & k,
                    ImmOp::Ori => a | k,
                    ImmOp::Xori => a ^ k,
                };
                self.set(*rd, v);
            }
            Insn::Shift { op, rd, rs1, sh } => {
                let a = self.get(*rs1);
                let v = match op {
                    ShiftOp::Slli => a << sh.get(),
                    ShiftOp::Srli => a >> sh.get(),
                };
                self.set(*rd, v);
            }
            Insn::Mv { rd, rs } => self.set(*rd, self.get(*rs)),
            Insn::Load { w, rd, base, off } => {
                let a = self.get(*base).wrapping_add(off.value() as u64);
                let v = (0..w.bytes()).fold(0u64, |v, k| {
                    v | u64::from(*self.mem.get(&(a + u64::from(k))).unwrap_or(&0)) << (8 * k)
                });
                self.set(*rd, v);
            }
            Insn::Store { w, src, base, off } => {
                let a = self.get(*base).wrapping_add(off.value() as u64);
                let v = self.get(*src);
                for k in 0..w.bytes() {
                    self.mem.insert(a + u64::from(k), (v >> (8 * k)) as u8);
                }
            }
            other => panic!("not in the evaluator: {other:?}"),
        }
    }
}

fn alloc() -> Allocation {
    Allocation {
        reg: [(VReg(0), 10), (VReg(1), 11), (VReg(2), 12)]
            .into_iter()
            .collect(),
    }
}

fn lowered(inst: Inst) -> Vec<Insn> {
    let mut out = Vec::new();
    one(&inst, &alloc(), 0, &mut |i| out.push(i)).unwrap();
    out
}

/// Values with every kind of 12- and 32-bit boundary, then a
/// deterministic pseudo-random spread.
fn values() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2047,
        2048,
        0x7fff_f7ff,
        0x7fff_f800,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x1_0000_0000,
        u64::MAX,
        u64::MAX - 2047,
        u64::MAX - 2048,
        0x8000_0000_0000_0000,
        0x5555_5555_5555_5555,
        0x0123_4567_89ab_cdef,
        0xffff_ffff_8000_0000,
        0xffff_ffff_7fff_ffff,
    ];
    for x in xorshift(0x9e37_79b9_7f4a_7c15).take(400) {
        v.push(x >> (x % 64));
        v.push(x);
    }
    v
}

#[test]
fn li_builds_every_constant_in_at_most_eight_instructions() {
    for v in values() {
        let mut seq = Vec::new();
        li(Reg::A0, v, &mut |i| seq.push(i));
        let mut cpu = Cpu::default();
        cpu.run(&seq);
        assert_eq!(cpu.get(Reg::A0), v, "{v:#x}: {seq:?}");
        assert!(seq.len() <= 8, "{v:#x}: {} instructions", seq.len());
    }
}

#[test]
fn bit_counts_match_their_definitions() {
    for op in [UnOp::Clz, UnOp::Ctz, UnOp::Popcount] {
        for (dst, src) in [(0, 1), (1, 1)] {
            let seq = lowered(Inst::Un {
                op,
                dst: VReg(dst),
                src: VReg(src),
            });
            for v in values() {
                let mut cpu = Cpu::default();
                cpu.x[11] = v;
                cpu.run(&seq);
                let got = cpu.x[10 + dst as usize];
                assert_eq!(got, op.apply(v), "{op:?}({v:#x})");
            }
        }
    }
}

#[test]
fn binary_ops_with_immediates_match_the_reference() {
    use crate::ir::expr::BinOp::*;
    let imms = [
        0u64,
        1,
        5,
        63,
        2047,
        2048,
        4096,
        u64::MAX,
        u64::MAX - 2047,
        0x8000_0000,
    ];
    for op in [Add, Sub, And, Or, Xor, Mul, Shl, Shr] {
        for k in imms {
            if matches!(op, Shl | Shr) && k >= 64 {
                continue;
            }
            let seq = lowered(Inst::Bin {
                op,
                dst: VReg(0),
                a: VReg(1),
                b: Operand::Imm(k),
            });
            for v in values().into_iter().take(60) {
                let want = match op {
                    Add => v.wrapping_add(k),
                    Sub => v.wrapping_sub(k),
                    And => v & k,
                    Or => v | k,
                    Xor => v ^ k,
                    Mul => v.wrapping_mul(k),
                    Shl => v << k,
                    Shr => v >> k,
                };
                let mut cpu = Cpu::default();
                cpu.x[11] = v;
                cpu.run(&seq);
                assert_eq!(cpu.x[10], want, "{op:?} {v:#x}, {k:#x}: {seq:?}");
            }
        }
    }
}

/// A mask of one run of ones is shifts where they are fewer than `li`
/// and `and`: `x & 0xfff` is `slli 52; srli 52`, not `lui; addiw; and`.
#[test]
fn masks_of_one_run_take_the_fewest_instructions() {
    let mut masks = vec![0xfffu64, 0xffff_ffff, 0xfff_ffff_ffff, !0xfff, !0xffff_ffff];
    masks.extend([0x0ff0_0000, 0x00ff_ff00_0000_0000, 0x7fff_f000, 0x5555_0000]);
    for x in xorshift(0x2545_f491_4f6c_dd1d).take(200) {
        let (lo, len) = ((x % 64) as u32, ((x >> 8) % 64) as u32 + 1);
        masks.push(crate::spec::bits::field_mask(lo, len.min(64 - lo)));
    }
    for m in masks {
        let seq = lowered(Inst::Bin {
            op: crate::ir::expr::BinOp::And,
            dst: VReg(0),
            a: VReg(1),
            b: Operand::Imm(m),
        });
        let fits = Imm12::maybe_from(m as i64).is_some();
        let most = if fits || m == u64::MAX {
            1
        } else {
            li_len(m) + 1
        };
        assert!(seq.len() <= most.min(3), "{m:#x}: {seq:?}");
        for v in values().into_iter().take(80) {
            let mut cpu = Cpu::default();
            cpu.x[11] = v;
            cpu.run(&seq);
            assert_eq!(cpu.x[10], v & m, "{v:#x} & {m:#x}: {seq:?}");
        }
    }
    let low12 = lowered(Inst::Bin {
        op: crate::ir::expr::BinOp::And,
        dst: VReg(0),
        a: VReg(1),
        b: Operand::Imm(0xfff),
    });
    assert_eq!(low12.len(), 2, "{low12:?}");
}

#[test]
fn insert_matches_its_definition() {
    for shift in [0u32, 1, 12, 31, 48, 63, 64] {
        for width in [0u32, 1, 5, 16, 32, 63, 64] {
            let seq = lowered(Inst::Insert {
                dst: VReg(0),
                src: VReg(1),
                shift,
                width,
            });
            for v in values().into_iter().take(40) {
                let mask = if width >= 64 {
                    u64::MAX
                } else {
                    (1 << width) - 1
                };
                let want = if shift >= 64 { 0 } else { (v & mask) << shift };
                let mut cpu = Cpu::default();
                cpu.x[11] = v;
                cpu.run(&seq);
                assert_eq!(cpu.x[10], want, "({v:#x} & mask({width})) << {shift}");
            }
        }
    }
}

/// Swapped accesses store and load the bytes in the other order, at
/// offsets that fit 12 bits and offsets that do not.
#[test]
fn swapped_accesses_reverse_the_bytes() {
    let kind = MemKind::Normal;
    for width in [16u32, 32, 64] {
        for offset in [0u64, 8, 2040, 4096, 0x1234_5678] {
            let store = lowered(Inst::Store {
                src: VReg(0),
                base: VReg(1),
                offset,
                width,
                swap: true,
                kind,
                index: None,
            });
            let load = lowered(Inst::Load {
                dst: VReg(2),
                base: VReg(1),
                offset,
                width,
                swap: true,
                kind,
                index: None,
            });
            let v = 0x0102_0304_0506_0708u64;
            let mut cpu = Cpu::default();
            cpu.x[10] = v;
            cpu.x[11] = 0x10_0000;
            cpu.run(&store);
            let n = u64::from(width / 8);
            let at = 0x10_0000 + offset;
            let bytes: Vec<u8> = (0..n).map(|k| cpu.mem[&(at + k)]).collect();
            let want: Vec<u8> = v.to_be_bytes()[(8 - n as usize)..].to_vec();
            assert_eq!(bytes, want, "{width}-bit store at +{offset:#x}");
            assert_eq!(cpu.x[10], v, "the source register is kept");
            cpu.run(&load);
            let mask = u64::MAX >> (64 - width);
            assert_eq!(cpu.x[12], v & mask, "{width}-bit load at +{offset:#x}");
        }
    }
}

#[test]
fn invalidation_forms_and_zero_register() {
    let (a, b) = (Reg::A0, Reg::new(11).unwrap());
    let invalidate = |name: &str, ops: &[Reg]| {
        invalidation(name, ops.len()).map(|inv| super::invalidate(*inv.op(), ops))
    };
    assert_eq!(
        invalidate("sfence.vma", &[]).unwrap(),
        Insn::SfenceVma {
            rs1: Reg::ZERO,
            rs2: Reg::ZERO
        }
    );
    assert_eq!(
        invalidate("sfence.vma x0", &[b]).unwrap(),
        Insn::SfenceVma {
            rs1: Reg::ZERO,
            rs2: b
        }
    );
    assert_eq!(
        invalidate("sinval.vma", &[a, b]).unwrap(),
        Insn::SinvalVma { rs1: a, rs2: b }
    );
    assert!(invalidate("sfence.vma x0", &[]).is_err());
    assert!(invalidate("sfence.vma", &[a, b, a]).is_err());
    assert!(invalidate("tlbi vale1is", &[a]).is_err());
}

#[test]
fn an_unallocated_register_is_an_error() {
    let inst = Inst::Copy {
        dst: VReg(0),
        src: VReg(9),
    };
    assert!(one(&inst, &alloc(), 0, &mut |_| {}).is_err());
}

#[test]
fn pool_avoids_scratch_and_reserved_registers() {
    for &r in REGS.pool.iter().chain(REGS.callee_saved) {
        assert!(![0, 1, 2, 3, 4, 8, 29, 30, 31].contains(&r), "x{r}");
    }
}
