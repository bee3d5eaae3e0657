//! General-purpose registers and how the text spells them.

/// General-purpose register number, 0..=31.
pub type Reg = u8;

/// Register spelling in the emitted text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegStyle {
    /// `%r3`: accepted by plain GNU as.
    Percent,
    /// `r3`: Linux `ppc_asm.h` style; needs `as -mregnames`.
    Bare,
}

impl RegStyle {
    fn prefix(self) -> &'static str {
        match self {
            RegStyle::Percent => "%r",
            RegStyle::Bare => "r",
        }
    }
}

/// A register operand as GNU as spells it. Display from a table of names,
/// so an instruction's text costs one allocation and no integer formatting
/// per operand.
pub(super) struct RegText {
    prefix: &'static str,
    n: Reg,
    zero_is_literal: bool,
}

impl RegText {
    pub(super) fn new(style: RegStyle, n: Reg, zero_is_literal: bool) -> RegText {
        RegText {
            prefix: style.prefix(),
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
        if self.zero_is_literal && self.n == 0 {
            return out.push('0');
        }
        let table = if self.prefix == "r" {
            &BARE_NAMES
        } else {
            &PERCENT_NAMES
        };
        match table.get(usize::from(self.n)) {
            Some(name) => out.push_str(name),
            // Out of range: printed as is for the assembler to reject.
            None => {
                out.push_str(self.prefix);
                out.push_str(itoa::Buffer::new().format(self.n));
            }
        }
    }
}
