//! Register tables and the checked operands of one instruction.

use iced_x86::{IcedError, MemoryOperand, Register};

use super::{iced_err, EncodeError, Reg, Size};

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

/// The instruction being encoded; its errors carry the index.
pub(super) struct Ctx {
    pub(super) index: usize,
}

impl Ctx {
    pub(super) fn bad(&self, what: &'static str) -> EncodeError {
        EncodeError::BadOperand {
            index: self.index,
            what,
        }
    }

    pub(super) fn reg(&self, r: Reg, size: Size) -> Result<Register, EncodeError> {
        let table = match size {
            Size::B => &GPR8,
            Size::W => &GPR16,
            Size::D => &GPR32,
            Size::Q => &GPR64,
        };
        table
            .get(usize::from(r))
            .copied()
            .ok_or_else(|| self.bad("register number out of range (0..=15)"))
    }

    pub(super) fn r64(&self, r: Reg) -> Result<Register, EncodeError> {
        self.reg(r, Size::Q)
    }

    pub(super) fn mem(
        &self,
        base: Reg,
        index: Option<(Reg, u8)>,
        disp: i32,
    ) -> Result<MemoryOperand, EncodeError> {
        let base = self.r64(base)?;
        let (index, scale) = match index {
            None => (Register::None, 1),
            Some((ix, scale)) => {
                if ix == 4 {
                    return Err(self.bad("rsp cannot be an index register"));
                }
                if !matches!(scale, 1 | 2 | 4 | 8) {
                    return Err(self.bad("scale must be 1, 2, 4 or 8"));
                }
                (self.r64(ix)?, u32::from(scale))
            }
        };
        // displ_size: 0 = none, 1 = try disp8 (iced falls back to disp32).
        let displ_size = u32::from(disp != 0);
        Ok(MemoryOperand::with_base_index_scale_displ_size(
            base,
            index,
            scale,
            i64::from(disp),
            displ_size,
        ))
    }

    pub(super) fn ierr(&self, e: IcedError) -> EncodeError {
        iced_err(Some(self.index), e)
    }
}
