//! General-purpose registers and how the text spells them.

use super::imms::unsigned_field;

unsigned_field!(
    /// A general-purpose register, r0..r31: the 5-bit RT, RS, RA and RB
    /// fields (Power ISA v3.0B Book I 1.6.28), valid when built as the
    /// immediates are. In an RA slot marked (RA|0), r0 reads as zero
    /// rather than as the register.
    Reg,
    5
);

impl Reg {
    /// r0, the scratch register of the lowering, and zero in an (RA|0)
    /// slot.
    pub const R0: Reg = Reg::of::<0>();
    /// r1, the stack pointer of both ELF ABIs.
    pub const R1: Reg = Reg::of::<1>();
}

/// Register spelling in the emitted text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegStyle {
    /// `%r3`: accepted by plain GNU as.
    Percent,
    /// `r3`: Linux `ppc_asm.h` style; needs `as -mregnames`.
    Bare,
}

impl RegStyle {
    fn names(self) -> &'static [&'static str; 32] {
        match self {
            RegStyle::Percent => &PERCENT_NAMES,
            RegStyle::Bare => &BARE_NAMES,
        }
    }
}

/// A register operand as GNU as spells it. Display from a table of names,
/// so an instruction's text costs one allocation and no integer formatting
/// per operand.
pub(super) struct RegText {
    names: &'static [&'static str; 32],
    n: Reg,
    zero_is_literal: bool,
}

impl RegText {
    pub(super) fn new(style: RegStyle, n: Reg, zero_is_literal: bool) -> RegText {
        RegText {
            names: style.names(),
            n,
            zero_is_literal,
        }
    }
}

const PERCENT_NAMES: [&str; 32] = [
    "%r0", "%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%r10", "%r11", "%r12",
    "%r13", "%r14", "%r15", "%r16", "%r17", "%r18", "%r19", "%r20", "%r21", "%r22", "%r23", "%r24",
    "%r25", "%r26", "%r27", "%r28", "%r29", "%r30", "%r31",
];
const BARE_NAMES: [&str; 32] = [
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
    "r15", "r16", "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27",
    "r28", "r29", "r30", "r31",
];

impl RegText {
    /// Append the spelling to `out`.
    pub(super) fn push_to(&self, out: &mut String) {
        if self.zero_is_literal && self.n == Reg::R0 {
            return out.push('0');
        }
        out.push_str(self.names[usize::from(self.n.0)]);
    }
}
