//! Why a target could not make code of an allocated LIR function: one
//! vocabulary for every target's lowering ([`LowerError`]) and for the
//! whole driver ([`CodegenError`]: lowering, or an instruction its
//! encoder refused, kept as the target's own typed error).

use crate::lir::regalloc::NoRegister;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The allocation has no register for a value the function uses: a
    /// bug of the allocator, never register 0 in emitted code.
    #[error(transparent)]
    NoRegister(#[from] NoRegister),
    /// A memory access (or reservation) of a width the target has no
    /// instruction for.
    #[error("no {width}-bit {what} on {target}")]
    Width {
        width: u32,
        what: &'static str,
        target: &'static str,
    },
    /// A constant shift (or field position) of 64 or more, which the LIR
    /// never makes.
    #[error("shift by {0}: 64 or more")]
    Shift(u64),
    /// A stack slot, argument or displacement the target's addressing
    /// cannot reach.
    #[error("{0} is out of reach")]
    OutOfReach(String),
    /// A feature test on a kernel capability this target's code is not
    /// patched for.
    #[error("`{cap}`: {advice}")]
    Capability { cap: String, advice: &'static str },
    /// A broken invariant of the lowering itself.
    #[error("internal: {0}")]
    Internal(String),
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The target's encoder refused an instruction (its own error type,
    /// kept for `downcast_ref`).
    #[error(transparent)]
    Encode(Box<dyn std::error::Error + Send + Sync>),
}

impl CodegenError {
    pub fn encode(e: impl std::error::Error + Send + Sync + 'static) -> CodegenError {
        CodegenError::Encode(Box::new(e))
    }
}
