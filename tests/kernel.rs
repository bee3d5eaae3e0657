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

/// Reading a booted kernel's console lines as the test scripts print them
/// (`[boot] line`), for the tests that re-check them.
mod console {
    /// The script's lines for one boot, without the `[boot] ` prefix.
    pub fn lines<'a>(out: &'a str, boot: &str) -> Vec<&'a str> {
        let p = format!("[{boot}] ");
        out.lines().filter_map(|l| l.strip_prefix(&p)).collect()
    }

    /// The word after the word `name`, or in the word `name=V`, of
    /// `line` (`mode=ipi` is not the count `ipi=N`).
    pub fn word<'a>(line: &'a str, name: &str) -> &'a str {
        let words: Vec<&str> = line.split(' ').collect();
        let eq = format!("{name}=");
        words
            .iter()
            .enumerate()
            .find_map(|(i, w)| match w.strip_prefix(&eq) {
                Some(v) => Some(v),
                None if *w == name => words.get(i + 1).copied(),
                None => None,
            })
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    }

    /// The number [`word`] finds.
    pub fn num(line: &str, name: &str) -> u64 {
        word(line, name)
            .parse()
            .unwrap_or_else(|_| panic!("{name} in {line}"))
    }

    /// The one line of `l` that starts with `prefix`.
    pub fn find<'a>(l: &[&'a str], prefix: &str, what: &str) -> &'a str {
        l.iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{what}: no line starting {prefix:?}"))
    }
}
