//! AArch64 (AAPCS64).

crate::isa::skeleton!();
mod constants;
pub mod decode;

crate::isa::one_target! {
    Aarch64: "aarch64", "aarch64-linux-gnu",
    set_cmp: true,
    branch_compares_registers: false,
}
