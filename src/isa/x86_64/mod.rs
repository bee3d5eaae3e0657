//! x86-64 (SysV).

crate::isa::skeleton!();
mod frame;
mod fuse;
mod mem;

crate::isa::one_target! {
    X86_64: "x86_64", "x86_64-linux-gnu",
    set_cmp: false,
    branch_compares_registers: false,
}
