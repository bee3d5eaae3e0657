//! One-bit polls on every target against C compiled by the cross gcc:
//! `tests/bit_polls/bit_polls.inv` polls 12 bit positions (each way a
//! target tests a bit: an immediate mask, `bt`, `tbz`, a shift or rotate
//! to the sign, the sign itself), and `tests/harness/bit_polls.c` calls
//! each sequence with the bit set, clear, its neighbours set and all
//! ones or zero, and compares the return with `(v >> bit) & 1` as gcc
//! computes it, under qemu-user (natively on x86-64). Nothing of our IR
//! decides the expected values. `tests/verify.rs` runs the same polls
//! against the spec's meaning under the emulator.

use crate::support::{asm_text, compile_spec, header_text, run_harness};
use shootdown::Target;

const SPEC: &str = "tests/bit_polls/bit_polls.inv";

#[test]
fn one_bit_polls_return_what_c_computes_on_every_target() {
    for target in Target::ALL {
        let (c, opts) = compile_spec(SPEC, target, "all");
        let out = run_harness(
            target,
            &asm_text(&c, &opts),
            &header_text(SPEC, &opts),
            "bit_polls.h",
            include_str!("harness/bit_polls.c"),
            &format!("bit-polls-{target}"),
        );
        // 12 bits x 8 values x 3 sequences.
        assert!(
            out.contains("PASSED: 288 ok, 0 failure(s)"),
            "{target}:\n{out}"
        );
    }
}
