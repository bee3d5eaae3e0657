//! x86-64 general registers as operand types that are valid when built.
//!
//! A register operand is a 4-bit number: the 3-bit ModRM.reg, ModRM.r/m,
//! SIB.base, SIB.index or opcode field, extended by REX.R, REX.B or REX.X
//! (Intel SDM Vol. 2A 2.2.1.2, Table 2-4 "REX Prefix Fields"). [`Gpr`]
//! holds those 16 numbers and nothing else, so the encoder never looks a
//! register up out of range; [`Index`] is a SIB index, which cannot be
//! rsp.

use iced_x86::Register;

use super::imms::Scale;
use super::Size;

/// One of the 16 general-purpose registers, by hardware number:
/// 0=rax 1=rcx 2=rdx 3=rbx 4=rsp 5=rbp 6=rsi 7=rdi 8..15=r8..r15.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gpr(u8);

impl Gpr {
    pub const RAX: Gpr = Gpr(0);
    pub const RCX: Gpr = Gpr(1);
    pub const RDX: Gpr = Gpr(2);
    pub const RBX: Gpr = Gpr(3);
    pub const RSP: Gpr = Gpr(4);
    pub const RBP: Gpr = Gpr(5);
    pub const RSI: Gpr = Gpr(6);
    pub const RDI: Gpr = Gpr(7);
    pub const R8: Gpr = Gpr(8);
    pub const R9: Gpr = Gpr(9);
    pub const R10: Gpr = Gpr(10);
    pub const R11: Gpr = Gpr(11);
    pub const R12: Gpr = Gpr(12);
    pub const R13: Gpr = Gpr(13);
    pub const R14: Gpr = Gpr(14);
    pub const R15: Gpr = Gpr(15);

    /// All 16, by number.
    pub const ALL: [Gpr; 16] = {
        let mut all = [Gpr(0); 16];
        let mut n = 0;
        while n < 16 {
            all[n] = Gpr(n as u8);
            n += 1;
        }
        all
    };

    /// Register `n`, if it names one (0..=15): the allocator's numbers.
    pub const fn new(n: u8) -> Option<Gpr> {
        if n < 16 {
            Some(Gpr(n))
        } else {
            None
        }
    }

    /// The hardware number, as the allocator's register file holds it.
    pub const fn num(self) -> u8 {
        self.0
    }

    /// iced's name of the `size`-bit view.
    pub(super) fn iced(self, size: Size) -> Register {
        let table = match size {
            Size::B => &GPR8,
            Size::W => &GPR16,
            Size::D => &GPR32,
            Size::Q => &GPR64,
        };
        table[usize::from(self.0)]
    }

    /// iced's name of the 64-bit register.
    pub(super) fn r64(self) -> Register {
        self.iced(Size::Q)
    }
}

/// The index of a SIB address, `(…, %index, scale)`: any register but rsp,
/// whose number 100b in SIB.index (without REX.X) means "no index" (Intel
/// SDM Vol. 2A Table 2-3); r12, the same bits with REX.X, is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Index {
    reg: Gpr,
    scale: Scale,
}

impl Index {
    pub const fn maybe_from(reg: Gpr, scale: Scale) -> Option<Index> {
        if reg.0 == Gpr::RSP.0 {
            None
        } else {
            Some(Index { reg, scale })
        }
    }

    /// A constant; rsp, a number over 15 or a scale other than 1, 2, 4
    /// or 8 does not compile.
    pub const fn of<const REG: u8, const SCALE: u8>() -> Index {
        const {
            match Gpr::new(REG) {
                Some(reg) => match Index::maybe_from(reg, Scale::of::<SCALE>()) {
                    Some(i) => i,
                    None => panic!("rsp cannot be an index register"),
                },
                None => panic!("register number out of range (0..=15)"),
            }
        }
    }

    pub const fn reg(self) -> Gpr {
        self.reg
    }

    pub const fn scale(self) -> Scale {
        self.scale
    }
}

const GPR64: [Register; 16] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RSP,
    Register::RBP,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
];
const GPR32: [Register; 16] = [
    Register::EAX,
    Register::ECX,
    Register::EDX,
    Register::EBX,
    Register::ESP,
    Register::EBP,
    Register::ESI,
    Register::EDI,
    Register::R8D,
    Register::R9D,
    Register::R10D,
    Register::R11D,
    Register::R12D,
    Register::R13D,
    Register::R14D,
    Register::R15D,
];
const GPR16: [Register; 16] = [
    Register::AX,
    Register::CX,
    Register::DX,
    Register::BX,
    Register::SP,
    Register::BP,
    Register::SI,
    Register::DI,
    Register::R8W,
    Register::R9W,
    Register::R10W,
    Register::R11W,
    Register::R12W,
    Register::R13W,
    Register::R14W,
    Register::R15W,
];
/// 4..7 are spl/bpl/sil/dil (REX forms), never ah/ch/dh/bh.
const GPR8: [Register; 16] = [
    Register::AL,
    Register::CL,
    Register::DL,
    Register::BL,
    Register::SPL,
    Register::BPL,
    Register::SIL,
    Register::DIL,
    Register::R8L,
    Register::R9L,
    Register::R10L,
    Register::R11L,
    Register::R12L,
    Register::R13L,
    Register::R14L,
    Register::R15L,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_registers_and_no_rsp_index() {
        assert_eq!(Gpr::new(15), Some(Gpr::R15));
        assert_eq!(Gpr::new(16), None);
        assert_eq!(Gpr::ALL.map(Gpr::num), core::array::from_fn(|n| n as u8));
        assert!(Index::maybe_from(Gpr::RSP, Scale::of::<1>()).is_none());
        let r12 = Index::of::<12, 8>();
        assert_eq!((r12.reg(), r12.scale().get()), (Gpr::R12, 8));
    }
}
