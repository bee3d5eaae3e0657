//! Valid specs that used to be rejected (issue 16): a loop whose values
//! need more registers than the target has when they are computed before
//! it, and an x86-64 byte-swapped register past the 2 GiB reach of a
//! disp32. Each now compiles; the oracles are the usual ones (GNU as byte
//! equality and capstone for all, the emulator against the spec's
//! meaning where its 64 KiB device windows reach).

use shootdown::verify::{asm_check, verify, Report};
use shootdown::{Options, Target};

/// An `each` loop of twenty writes of distinct `x + k` (and `x ^ k`):
/// with every value computed ahead of the loop it needed twenty live
/// registers ("`s0` needs more registers than aarch64 has free").
#[test]
fn loop_of_twenty_computed_writes_compiles_and_verifies() {
    let body: String = (0..20)
        .map(|j| {
            if j % 2 == 0 {
                format!("    d.a = x + {j}\n")
            } else {
                format!("    d.b = x ^ {j}\n")
            }
        })
        .collect();
    let src = format!(
        "device d {{\n    instances dynamic max 8\n    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}}\n\
         seq s0(x: u64) {{\n  each d {{\n{body}  }}\n}}\n"
    );
    let r = verify("loop20.inv", &src, &Target::ALL, &Options::default())
        .unwrap_or_else(|d| panic!("{}", d.message));
    assert!(r.ok(), "{:?}", r.failures);
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert!(r.passed.len() >= 4 * 8, "{:?}", r.passed);
}

/// Big-endian registers at 2 GiB and just under 4 GiB on x86-64: GNU as
/// assembles the text to our bytes and capstone reads them back.
#[test]
fn x86_64_swapped_registers_past_2_gib() {
    let src = "device d {\n    reg a 0x80000000 u64 be\n    reg b 0xfffffff8 u32 be\n    reg c 0x100000000 u16 be\n}\n\
               seq s(x: u64) {\n    d.a = x\n    d.b = x + 1\n    d.c = 7\n}\n";
    let prog = shootdown::load("big.inv", src).unwrap();
    let opts = Options::default();
    let c = shootdown::compile(&prog, Target::X86_64, &opts)
        .unwrap_or_else(|d| panic!("{}", d.message));
    let text = shootdown::emit::asm::render(&c, &opts);
    let mut report = Report::default();
    asm_check::gnu_as(&c, &text, &mut report);
    asm_check::capstone(&c, &mut report);
    assert!(report.ok() && report.skipped.is_empty(), "{report:?}");
    assert!(report.passed.len() >= 2, "{report:?}");
}
