//! x86-64 memory accesses: device registers with plain `mov` (the kernel
//! maps them UC), byte-reversed ones with `bswap`/`rol` around it, offsets
//! past 2 GiB through the scratch register; where stack arguments and
//! spill slots are.

use super::insn::{BswapSize, Disp32, Gpr, Index, Insn, Scale, Simm32, Size};
use super::lower::{LowerError, REGS, SCRATCH};

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

fn byte_swap(rd: Gpr, sz: Size, e: &mut dyn FnMut(Insn)) {
    match sz {
        Size::B => {}
        Size::W => e(Insn::Rol16 { rd }),
        Size::D => e(Insn::Bswap {
            size: BswapSize::D,
            rd,
        }),
        Size::Q => e(Insn::Bswap {
            size: BswapSize::Q,
            rd,
        }),
    }
}

/// `(index, disp)` for `offset(base)`: disp32 when the offset fits, else
/// the offset in the scratch register as an index.
fn address(offset: u64, e: &mut dyn FnMut(Insn)) -> (Option<Index>, Disp32) {
    match Disp32::maybe_from(offset) {
        Some(disp) => (None, disp),
        None => {
            e(Insn::MovImm {
                rd: SCRATCH,
                imm: offset,
            });
            (Some(SCRATCH_INDEX), Disp32::ZERO)
        }
    }
}

/// The scratch register as an unscaled index.
const SCRATCH_INDEX: Index = match Index::maybe_from(SCRATCH, Scale::of::<1>()) {
    Some(i) => i,
    None => panic!("the scratch register cannot be rsp"),
};

/// One memory access of a load or store: `size` at `offset(%base)`,
/// byte-reversed when `swap` (never for a byte).
pub(super) struct Access {
    pub(super) base: Gpr,
    pub(super) offset: u64,
    pub(super) size: Size,
    pub(super) swap: bool,
}

impl Access {
    /// `width` bits at `offset(%base)`.
    pub(super) fn new(
        base: Gpr,
        offset: u64,
        width: u32,
        swap: bool,
    ) -> Result<Access, LowerError> {
        let size = size(width)?;
        Ok(Access {
            base,
            offset,
            size,
            swap: swap && size != Size::B,
        })
    }
}

/// Loads zero-extend (movzbl/movzwl, 32-bit mov); a swapped load reverses
/// the bytes in place afterwards (`rol $8` keeps the upper bits zero).
pub(super) fn load(rd: Gpr, a: &Access, e: &mut dyn FnMut(Insn)) {
    let (index, disp) = address(a.offset, e);
    e(Insn::Load {
        size: a.size,
        rd,
        base: a.base,
        index,
        disp,
    });
    if a.swap {
        byte_swap(rd, a.size, e);
    }
}

/// A swapped store reverses a copy in the scratch register; the source
/// value stays intact for later uses.
pub(super) fn store(src: Gpr, a: &Access, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
    let &Access {
        base,
        offset,
        size: sz,
        swap,
    } = a;
    if swap && Disp32::maybe_from(offset).is_none() {
        // The scratch register holds the swapped copy, so the offset
        // cannot go there: step the base up by two imm32 adds, store with
        // the remaining disp32, step it back (offsets are below 4 GiB).
        const STEP: Simm32 = Simm32::of::<0x7fff_f000>();
        const BACK: Simm32 = Simm32::of::<-0x7fff_f000>();
        e(Insn::MovReg {
            rd: SCRATCH,
            rs: src,
        });
        byte_swap(SCRATCH, sz, e);
        let mut steps = 0;
        let step = STEP.get() as u64;
        while Disp32::maybe_from(offset.wrapping_sub(steps * step)).is_none() && steps < 4 {
            e(Insn::AddImm {
                rd: base,
                imm: STEP,
            });
            steps += 1;
        }
        let disp = Disp32::maybe_from(offset.wrapping_sub(steps * step)).ok_or_else(|| {
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
                imm: BACK,
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

/// `disp(%rsp)` of incoming argument `index` (0-based) when it is passed on
/// the stack, after `pushed` callee-saved registers were pushed at entry
/// and `spill` bytes of spill slots taken below them.
/// SysV psABI 3.2.3: arguments past the six registers are pushed right to
/// left, so the seventh is at 8(%rsp) on entry, above the return address
/// (what gcc -O2 reads in a callee: `movq 24(%rsp)` for the ninth).
pub(super) fn stack_arg_disp(index: usize, pushed: usize, spill: Simm32) -> Option<Disp32> {
    let slot = index.checked_sub(REGS.args.len())?;
    let above = u64::try_from(8 * (1 + pushed + slot)).ok()?;
    Disp32::maybe_from(above.checked_add(u64::try_from(spill.get()).ok()?)?)
}

/// `disp(%rsp)` of spill slot `slot`.
pub(super) fn slot_disp(slot: u32) -> Result<Disp32, LowerError> {
    Disp32::maybe_from(8 * u64::from(slot))
        .ok_or_else(|| LowerError::Internal(format!("spill slot {slot} out of disp32 reach")))
}
