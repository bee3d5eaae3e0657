//! x86-64 memory accesses: device registers with plain `mov` (the kernel
//! maps them UC), byte-reversed ones with `bswap`/`rol` around it, offsets
//! past 2 GiB through the scratch register.

use super::insn::{Insn, Reg, Size};
use super::lower::{fits_i32, LowerError, SCRATCH};

pub(super) fn size(width: u32) -> Result<Size, LowerError> {
    Ok(match width {
        8 => Size::B,
        16 => Size::W,
        32 => Size::D,
        64 => Size::Q,
        w => {
            return Err(LowerError::Width {
                width: w,
                what: "access",
                target: "x86_64",
            })
        }
    })
}

fn byte_swap(rd: Reg, sz: Size, e: &mut dyn FnMut(Insn)) {
    match sz {
        Size::B => {}
        Size::W => e(Insn::Rol16 { rd }),
        Size::D | Size::Q => e(Insn::Bswap { size: sz, rd }),
    }
}

/// `(index, disp)` for `offset(base)`: disp32 when the offset fits, else
/// the offset in the scratch register as an index.
fn address(offset: u64, e: &mut dyn FnMut(Insn)) -> (Option<(Reg, u8)>, i32) {
    if fits_i32(offset) {
        (None, offset as i64 as i32)
    } else {
        e(Insn::MovImm {
            rd: SCRATCH,
            imm: offset,
        });
        (Some((SCRATCH, 1)), 0)
    }
}

/// Loads zero-extend (movzbl/movzwl, 32-bit mov); a swapped load reverses
/// the bytes in place afterwards (`rol $8` keeps the upper bits zero).
pub(super) fn load(
    rd: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let sz = size(width)?;
    let (index, disp) = address(offset, e);
    e(Insn::Load {
        size: sz,
        rd,
        base,
        index,
        disp,
    });
    if swap {
        byte_swap(rd, sz, e);
    }
    Ok(())
}

/// A swapped store reverses a copy in the scratch register; the source
/// value stays intact for later uses.
pub(super) fn store(
    src: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let sz = size(width)?;
    let swap = swap && sz != Size::B;
    if swap && !fits_i32(offset) {
        // The scratch register holds the swapped copy, so the offset
        // cannot go there: step the base up by two imm32 adds, store with
        // the remaining disp32, step it back (offsets are below 4 GiB).
        const STEP: i32 = 0x7fff_f000;
        e(Insn::MovReg {
            rd: SCRATCH,
            rs: src,
        });
        byte_swap(SCRATCH, sz, e);
        let mut steps = 0;
        while !fits_i32(offset.wrapping_sub(steps * STEP as u64)) && steps < 4 {
            e(Insn::AddImm {
                rd: base,
                imm: STEP,
            });
            steps += 1;
        }
        let disp = i32::try_from(offset as i64 - steps as i64 * i64::from(STEP)).map_err(|_| {
            LowerError::OutOfReach(format!("register offset {offset:#x} (beyond 8 GiB)"))
        })?;
        e(Insn::Store {
            size: sz,
            base,
            index: None,
            disp,
            src: SCRATCH,
        });
        for _ in 0..steps {
            e(Insn::AddImm {
                rd: base,
                imm: -STEP,
            });
        }
        return Ok(());
    }
    let src = if swap {
        e(Insn::MovReg {
            rd: SCRATCH,
            rs: src,
        });
        byte_swap(SCRATCH, sz, e);
        SCRATCH
    } else {
        src
    };
    let (index, disp) = address(offset, e);
    e(Insn::Store {
        size: sz,
        base,
        index,
        disp,
        src,
    });
    Ok(())
}
