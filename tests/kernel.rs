//! The system tests that build and boot Linux, in one binary of their own:
//! each is minutes of `make -j` and qemu-system on every core, so they
//! share the machine with each other rather than with the rest of the
//! suite (tests/suite.rs). `cargo test --test kernel MODULE::` runs one.

use std::sync::{Mutex, MutexGuard};

mod kbuild;
mod kernel_mm;
mod kernel_mm_power;
mod kernel_mm_riscv;
mod kernel_tlb;
mod kernel_tlb_power;

/// kernel_mm and kernel_tlb build and boot the same cached arm64 tree
/// (target/kernel-tlb); one at a time.
fn arm64_tree() -> MutexGuard<'static, ()> {
    static TREE: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the tree itself is still usable.
    TREE.lock().unwrap_or_else(|e| e.into_inner())
}

/// kernel_mm_power and kernel_tlb_power build and boot the same cached
/// POWER tree (target/kernel-tlb-power); one at a time.
fn power_tree() -> MutexGuard<'static, ()> {
    static TREE: Mutex<()> = Mutex::new(());
    TREE.lock().unwrap_or_else(|e| e.into_inner())
}
