//! Which part of a target's lowering an instruction belongs to. Every
//! target splits its lowering the same way (moves between registers and
//! memory, control flow, the rest), so the split is said once here
//! instead of as a list of variants in each target's `lower.rs`.

use super::Inst;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Moves between registers and memory: stack slots, incoming stack
    /// arguments, loads and stores, and a lock's reservation pair and
    /// releasing store.
    Memory,
    /// Labels, jumps, branches and the return.
    Control,
    /// Everything else: values, barriers, invalidations, system
    /// instructions.
    Compute,
}

impl Inst {
    pub fn role(&self) -> Role {
        match self {
            Inst::Spill { .. }
            | Inst::Reload { .. }
            | Inst::Arg { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::LoadReserve { .. }
            | Inst::StoreCond { .. }
            | Inst::StoreRelease { .. } => Role::Memory,
            Inst::Label(_)
            | Inst::Jump(_)
            | Inst::FeatureJump { .. }
            | Inst::Branch { .. }
            | Inst::BranchBit { .. }
            | Inst::SubBranchAbove { .. }
            | Inst::Ret { .. } => Role::Control,
            _ => Role::Compute,
        }
    }

    /// Computes its result register and does nothing else (no memory,
    /// barrier, invalidation or control flow): what a pass may drop when
    /// nothing reads the result, or copy into another path.
    pub fn is_pure(&self) -> bool {
        matches!(
            self,
            Inst::Imm { .. }
                | Inst::Copy { .. }
                | Inst::Not { .. }
                | Inst::Un { .. }
                | Inst::Bin { .. }
                | Inst::Insert { .. }
                | Inst::SetCmp { .. }
        )
    }
}
