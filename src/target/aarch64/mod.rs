//! AArch64 (AAPCS64).

pub mod barriers;
