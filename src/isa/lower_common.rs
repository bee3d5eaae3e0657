//! What every target's lowering reads off a LIR instruction the same
//! way: the right operand and the plain memory access with their
//! registers allocated, the registers of
//! [`crate::isa::hweight::HWEIGHT64`], and the error of a feature jump
//! on a target the kernel does not patch. One definition here, so a
//! field added to the LIR is read in one place, not four.

use crate::isa::error::LowerError;
use crate::isa::hweight::Loc;
use crate::lir::{Inst, Operand, VReg};

/// An [`Operand`] with its register allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src<R> {
    Reg(R),
    Imm(u64),
}

impl<R> Src<R> {
    /// `b`, with `reg` giving the register of a virtual one.
    pub fn of(
        b: &Operand,
        reg: impl FnOnce(VReg) -> Result<R, LowerError>,
    ) -> Result<Src<R>, LowerError> {
        Ok(match *b {
            Operand::Reg(v) => Src::Reg(reg(v)?),
            Operand::Imm(v) => Src::Imm(v),
        })
    }
}

/// A load or store (`Inst::Load`, `Inst::Store`): `data` is the
/// register loaded or stored, `width` bits at `base + offset`,
/// byte-reversed when `swap`; `index` holds the offset as well where
/// the builder set it in a register before a loop. The memory kind does
/// not change the instruction on any target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccess<R> {
    pub store: bool,
    pub data: R,
    pub base: R,
    pub index: Option<R>,
    pub offset: u64,
    pub width: u32,
    pub swap: bool,
}

impl MemAccess<VReg> {
    /// The access of a load or store; None for any other instruction.
    pub fn of(inst: &Inst) -> Option<MemAccess<VReg>> {
        match *inst {
            Inst::Load {
                dst: data,
                base,
                offset,
                width,
                swap,
                index,
                ..
            }
            | Inst::Store {
                src: data,
                base,
                offset,
                width,
                swap,
                index,
                ..
            } => Some(MemAccess {
                store: matches!(inst, Inst::Store { .. }),
                data,
                base,
                index,
                offset,
                width,
                swap,
            }),
            _ => None,
        }
    }

    /// With its registers allocated by `reg`: `data` first, then `base`,
    /// then `index` (the first unallocated one is the error).
    pub fn map<R>(
        self,
        reg: impl Fn(VReg) -> Result<R, LowerError>,
    ) -> Result<MemAccess<R>, LowerError> {
        Ok(MemAccess {
            store: self.store,
            data: reg(self.data)?,
            base: reg(self.base)?,
            index: self.index.map(&reg).transpose()?,
            offset: self.offset,
            width: self.width,
            swap: self.swap,
        })
    }
}

/// The error for a `FeatureJump` on a target whose code the kernel does
/// not patch at boot for capabilities; `advice` says what the spec can
/// do instead.
pub fn unpatched(cap: &str, advice: &'static str) -> LowerError {
    LowerError::Capability {
        cap: cap.to_string(),
        advice,
    }
}

/// The register each [`Loc`] of [`crate::isa::hweight::HWEIGHT64`] stands for when
/// `rd` is its destination and `scratch` its scratch register.
pub fn hweight_regs<R: Copy>(rd: R, scratch: R) -> impl Fn(Loc) -> R {
    move |l| match l {
        Loc::D => rd,
        Loc::S => scratch,
    }
}

#[cfg(test)]
#[path = "lower_testing.rs"]
pub(crate) mod testing;
