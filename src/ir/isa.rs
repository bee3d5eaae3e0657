//! What checking and the ordering model ask of the instruction sets,
//! without naming them: each target registers one [`Isa`] in [`ISAS`]
//! (`crate::isa` does, one line per target), and the IR looks them up
//! by name. The IR sits below the targets (they lower it), so this is the
//! only way it may learn, say, which target a `via tlbie` belongs to.

use super::order::Class;
use super::Machine;

/// Why a target cannot issue a spec's CPU invalidation (the message is
/// the diagnostic the user sees).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidationError {
    /// Not an invalidation of this target (`also`: what it has instead,
    /// as a parenthesis, or empty).
    #[error("{target} has no invalidation `{name}`{also}")]
    NoSuch {
        target: &'static str,
        name: String,
        also: &'static str,
    },
    /// x86-64's wording of [`InvalidationError::NoSuch`] (the mnemonic
    /// without its immediates).
    #[error("`{mnemonic}` is not an x86-64 invalidation instruction")]
    NotX86 { mnemonic: String },
    /// Another ISA's or CPU family's instruction: `advice` says what
    /// this one has.
    #[error("`{name}` is {what}{advice}")]
    Foreign {
        name: String,
        what: &'static str,
        advice: &'static str,
    },
    /// A known instruction whose operation word is not one it has.
    #[error("`{name}`: {expected}")]
    Operation {
        name: String,
        expected: &'static str,
    },
    /// The wrong number of register operands (`takes`: the counts it
    /// accepts, as words).
    #[error("`{name}` takes {takes} register operand(s), got {got}")]
    Operands {
        name: String,
        takes: String,
        got: usize,
    },
    /// The wrong number of operands, said with what they are.
    #[error("`{name}` takes {what}, got {got}")]
    NamedOperands {
        name: String,
        what: String,
        got: usize,
    },
}

/// One instruction set as the front end and the IR see it.
pub trait Isa: Sync {
    /// The name a spec's `target` line uses (`aarch64`).
    fn name(&self) -> &'static str;
    /// Where it comes in lists and lookups (the order of
    /// `crate::isa::Target::ALL`): registration order is the linker's.
    fn rank(&self) -> usize;
    fn big_endian(&self) -> bool;
    /// Does it have CPU families a spec names with `machine`?
    fn has_machines(&self) -> bool;
    /// Does the granule `via NAME` name one of its CPU invalidations?
    fn via_insn(&self, name: &str) -> bool;
    /// Can it issue the CPU invalidation `name` with `n` register operands
    /// on `machine`? The error says why not.
    fn check_invalidation(
        &self,
        machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<(), InvalidationError>;
    /// The ordering class of its CPU invalidation `mnemonic`, where it is
    /// not a broadcast TLB invalidation.
    fn invalidate_class(&self, mnemonic: &str) -> Option<Class>;
    /// The special-purpose register `name` (any case) a spec may move
    /// with `mtspr`/`mfspr` on `machine`; a target that has one has the
    /// TLB-entry instructions `tlbsx` and `tlbre` too.
    fn spr(&self, _machine: Machine, _name: &str) -> Result<super::Spr, super::SprError> {
        Err(super::SprError::NoSprs {
            target: self.name(),
        })
    }
}

#[linkme::distributed_slice]
pub static ISAS: [&'static dyn Isa];

/// Every registered instruction set, in rank order (sorted once: the
/// ordering model asks per invalidation).
pub fn all() -> &'static [&'static dyn Isa] {
    static SORTED: std::sync::OnceLock<Vec<&'static dyn Isa>> = std::sync::OnceLock::new();
    SORTED.get_or_init(|| {
        let mut v: Vec<&'static dyn Isa> = ISAS.iter().copied().collect();
        v.sort_by_key(|i| i.rank());
        v
    })
}

/// The instruction set a `target` line names.
pub fn by_name(name: &str) -> Option<&'static dyn Isa> {
    ISAS.iter().copied().find(|i| i.name() == name)
}
