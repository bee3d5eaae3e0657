//! End-to-end oracles for the AArch64 backend on `examples/npu2_atsd.inv`:
//! GNU as must produce the bytes our encoder produced, the code must do
//! the right thing under qemu-aarch64, and the optimizer must need no
//! barrier at all on AArch64. Missing tools are failures, not skips.

use crate::support;

use shootdown::emit::stats;
use shootdown::Target;
use support::*;

const SPEC: &str = "examples/npu2_atsd.inv";
const T: Target = Target::Aarch64;

#[test]
fn gnu_as_bytes_equal_encoder_bytes() {
    for passes in ["all", "none"] {
        let (c, opts) = compile_spec(SPEC, T, passes);
        let text = asm_text(&c, &opts);
        assert!(text.contains(".arch armv8-a"), "{text}");
        let dir = scratch(&format!("a64-npu2-{passes}"));
        let obj = assemble(T, &text, &dir, "npu2_atsd");
        let got = text_bytes(T, &obj);
        // A64 instructions are 4 bytes, so `.p2align 2` never pads.
        let want: Vec<u8> = c.funcs.iter().flat_map(|f| f.bytes.clone()).collect();
        assert!(!want.is_empty());
        assert_eq!(
            got, want,
            "passes={passes}: GNU as and the encoder disagree\n{text}"
        );
    }
}

#[test]
fn harness_under_qemu() {
    let harness = include_str!("harness/npu2_atsd_aarch64.c");
    for passes in ["all", "none"] {
        let (c, opts) = compile_spec(SPEC, T, passes);
        let asm = asm_text(&c, &opts);
        let header = header_text(SPEC, &opts);
        let out = run_harness(
            T,
            &asm,
            &header,
            "npu2_atsd.h",
            harness,
            &format!("a64-harness-{passes}"),
        );
        for line in [
            "ok invalidate_va n=0",
            "ok invalidate_va n=1",
            "ok invalidate_va n=6",
            "ok invalidate_pid n=6",
            "ok invalidate_va busy",
            "ok invalidate_pid busy",
            "failures 0",
        ] {
            assert!(
                out.lines().any(|l| l == line),
                "passes={passes}: missing `{line}` in:\n{out}"
            );
        }
        assert!(!out.contains("FAIL"), "passes={passes}:\n{out}");
    }
}

/// DESIGN: Device-nGnRE accesses to one peripheral keep program order and
/// the only requirement is AVA before LAUNCH on the same NPU, so the
/// optimized sequences carry no barrier at all.
#[test]
fn optimized_needs_no_barrier() {
    let (c, _) = compile_spec(SPEC, T, "all");
    let st = stats::collect(&c);
    let names: Vec<&str> = st.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invalidate_va",
            "invalidate_pid",
            "invalidate_range",
            "flush_all_mm"
        ]
    );
    for s in &st {
        assert!(s.barriers.is_empty(), "{}: {:?}", s.name, s.barriers);
        // flush_all_mm is POWER radix only (MMU_FTR_TYPE_RADIX): empty here.
        if s.name == "flush_all_mm" {
            assert_eq!(
                (s.stores, s.invalidates, s.instructions),
                (0, 0, 2),
                "{s:?}"
            );
        } else {
            assert!(s.stores > 0, "{}: no stores", s.name);
        }
    }
    // The same through the emitted text: no dmb/dsb/isb anywhere.
    for f in &c.funcs {
        for l in f.insns() {
            assert!(
                !matches!(l.mnemonic, "dmb" | "dsb" | "isb"),
                "{}: {}",
                f.symbol,
                l.text
            );
        }
    }
}
