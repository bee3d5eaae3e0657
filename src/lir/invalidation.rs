//! [`Invalidation`], the handle the LIR holds for a CPU invalidation
//! instruction that a target has already checked.
//!
//! A spec names an invalidation as text (`tlbi vale1is`, `tlbie ric=0
//! prs=1 r=1`, `sinval.vma x0`), and the IR keeps that text because one
//! checked IR serves every target on the spec's target line. The text is
//! checked once per sequence, where the LIR is built for one target
//! (`codegen::resolve_invalidations`, through `crate::isa::Target::invalidation`):
//! the target's backend parses it into its own typed operation and wraps
//! that here. Each lowering reads the operation back with
//! [`Invalidation::op`] and so parses no names and has no error path.

use rustc_hash::FxHashMap;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A checked CPU invalidation: its spec name and the target's typed
/// operation for it. Display and Debug print the name (what `show --stage
/// lir` and the diagnostics have always shown); equal names are equal
/// invalidations, since a name parses to one operation on a target.
#[derive(Clone)]
pub struct Invalidation {
    name: Arc<str>,
    /// The target's own operation type, erased because the LIR is shared
    /// by all targets; [`Invalidation::op`] gives it back typed. Shared,
    /// not boxed, so that cloning an instruction stays cheap.
    op: Arc<dyn Any + Send + Sync>,
}

impl Invalidation {
    /// `name` as the backend checked it, with the operation it parsed.
    pub fn new<T: Any + Send + Sync>(name: &str, op: T) -> Invalidation {
        Invalidation {
            name: name.into(),
            op: Arc::new(op),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The operation, as the lowering target's type. Panics if `T` is not
    /// the type the checking backend stored: an invalidation checked for
    /// one target and lowered by another, which building the LIR for one
    /// target rules out.
    pub fn op<T: 'static>(&self) -> &T {
        match self.op.downcast_ref::<T>() {
            Some(op) => op,
            None => panic!("invalidation `{}` lowered for another target", self.name),
        }
    }
}

impl PartialEq for Invalidation {
    fn eq(&self, other: &Invalidation) -> bool {
        self.name == other.name
    }
}

impl Eq for Invalidation {}

impl fmt::Display for Invalidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Quoted, as the `String` it replaces printed in the LIR dump.
impl fmt::Debug for Invalidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.name)
    }
}

/// The CPU invalidations of one sequence, checked for one target: what
/// the LIR builder looks its `Stmt::Invalidate` names up in. By name
/// alone, since a name parses to the same operation whatever its operand
/// count, and the check has accepted every count the sequence uses.
#[derive(Default)]
pub struct Invalidations(FxHashMap<String, Invalidation>);

impl Invalidations {
    pub fn insert(&mut self, inv: Invalidation) {
        self.0.insert(inv.name().to_string(), inv);
    }

    /// The checked invalidation `name`. Panics if the sequence's check did
    /// not see it: the table and the LIR come from the same sequence.
    pub fn get(&self, name: &str) -> &Invalidation {
        match self.0.get(name) {
            Some(inv) => inv,
            None => panic!("invalidation `{name}` was not checked for the target"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_and_compares_by_name() {
        let a = Invalidation::new("tlbi vale1is", 7u8);
        assert_eq!(a.to_string(), "tlbi vale1is");
        assert_eq!(format!("{a:?}"), "\"tlbi vale1is\"");
        assert_eq!(*a.op::<u8>(), 7);
        assert_eq!(a, Invalidation::new("tlbi vale1is", 7u8));
    }

    #[test]
    #[should_panic(expected = "lowered for another target")]
    fn wrong_target_panics() {
        Invalidation::new("invlpg", ()).op::<u8>();
    }
}
