//! Inputs the targets' unit tests share: a reproducible pseudo-random
//! stream and the operands the bit-count lowerings are checked on.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): cheap, reproducible and good
/// enough to spread test operands over all 64 bits. Yields the state after
/// each step, the seed itself never.
pub struct XorShift(u64);

/// The stream from `seed` (nonzero).
pub fn xorshift(seed: u64) -> XorShift {
    XorShift(seed)
}

impl XorShift {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

impl Iterator for XorShift {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        Some(self.next_u64())
    }
}

/// What clz, ctz and popcount lowerings are checked on: the edges (0, 1,
/// the top bit alone and with its neighbours, all ones), then shifted
/// pseudo-random values so that every count occurs.
pub fn bit_count_operands() -> Vec<u64> {
    let mut vals = vec![0, 1, 2, 3, 1 << 63, (1 << 63) + 1, (1 << 63) - 1, u64::MAX];
    for x in xorshift(0x2545_f491_4f6c_dd1d).take(2000) {
        vals.extend([x, x >> (x % 64), x << (x % 61)]);
    }
    vals
}

/// `v1 = v0` with only v1 given a register (`dst`): lowering it must
/// report v0 as unallocated, never read some register 0.
pub fn copy_from_unallocated(dst: u8) -> (crate::lir::Func, crate::lir::regalloc::Allocation) {
    use crate::lir::{Func, Inst, Origin, VReg};
    let f = Func {
        name: "t".into(),
        args: vec![],
        insts: vec![(
            Inst::Copy {
                dst: VReg(1),
                src: VReg(0),
            },
            Origin::default(),
        )],
        nvregs: 2,
        nlabels: 0,
        void: false,
    };
    let alloc = crate::lir::regalloc::Allocation {
        reg: [(VReg(1), dst)].into_iter().collect(),
    };
    (f, alloc)
}
