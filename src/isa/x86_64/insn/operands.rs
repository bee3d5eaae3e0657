//! The memory operand and the error context of one instruction.

use iced_x86::{IcedError, MemoryOperand, Register};

use super::{iced_err, Disp32, EncodeError, Gpr, Index};

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

    pub(super) fn ierr(&self, e: IcedError) -> EncodeError {
        iced_err(Some(self.index), e)
    }
}

/// `disp(%base, %index, scale)`; its parts were checked when built.
pub(super) fn mem(base: Gpr, index: Option<Index>, disp: Disp32) -> MemoryOperand {
    let (index, scale) = match index {
        None => (Register::None, 1),
        Some(ix) => (ix.reg().r64(), u32::from(ix.scale().get())),
    };
    // displ_size: 0 = none, 1 = try disp8 (iced falls back to disp32).
    let displ_size = u32::from(disp.get() != 0);
    MemoryOperand::with_base_index_scale_displ_size(
        base.r64(),
        index,
        scale,
        i64::from(disp.get()),
        displ_size,
    )
}
