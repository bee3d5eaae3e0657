//! Immediate fields as operand types that are valid when built, shared
//! by the targets' `insn::imms` (aarch64, POWER, x86-64).
//!
//! Each field of a model whose values are not exactly those of a Rust
//! integer has a type holding only what its encoding can express. The
//! fallible `maybe_from` is where the lowering chooses a form or reports
//! a value it cannot place; `of::<N>()` is for constants written in code,
//! where a value out of range fails the build (its const block is
//! evaluated when `of` is instantiated, which `cargo check` alone does
//! not do). The encoder then only places bits.

/// A field type holding the `$repr` values `maybe_from` accepts of a
/// `$from`: those for which `$ok` holds of `$v`.
macro_rules! field {
    ($(#[$doc:meta])* $name:ident: $repr:ty, from $from:ty, valid |$v:ident| $ok:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name($repr);

        impl $name {
            pub const fn maybe_from($v: $from) -> Option<$name> {
                if $ok {
                    Some($name($v as $repr))
                } else {
                    None
                }
            }

            /// A constant; out of range does not compile.
            pub const fn of<const V: $repr>() -> $name {
                const { $crate::isa::imms::unwrap($name::maybe_from(V as $from)) }
            }

            pub const fn get(self) -> $repr {
                self.0
            }
        }
    };
}

pub(crate) use field;

/// `Option::unwrap` for the `of` constructors' const blocks, with the
/// message the compile error shows.
pub(crate) const fn unwrap<T: Copy>(v: Option<T>) -> T {
    match v {
        Some(v) => v,
        None => panic!("immediate out of range for its field"),
    }
}
