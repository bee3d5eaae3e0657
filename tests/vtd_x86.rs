//! VT-d IOTLB flush on x86-64, natively: both registers written with the
//! right values, no fence (UC MMIO stores are ordered), and the poll
//! waits for the (simulated) IOMMU.

use crate::support;

use shootdown::isa::Target;
use support::{asm_text, compile_spec, header_text, run_harness};

const SPEC: &str = "examples/vtd_iotlb.inv";

#[test]
fn native_harness() {
    for passes in ["all", "none"] {
        let (c, opts) = compile_spec(SPEC, Target::X86_64, passes);
        let out = run_harness(
            Target::X86_64,
            &asm_text(&c, &opts),
            &header_text(SPEC, &opts),
            "vtd_iotlb.h",
            include_str!("harness/vtd_iotlb.c"),
            &format!("vtd-{passes}"),
        );
        assert!(!out.contains("FAIL"), "{passes}:\n{out}");
        assert_eq!(out.matches("ok ").count(), 6, "{passes}:\n{out}");
    }
}

#[test]
fn no_fence_on_x86() {
    let (c, _) = compile_spec(SPEC, Target::X86_64, "all");
    for s in shootdown::emit::stats::collect(&c) {
        assert!(s.barriers.is_empty(), "{}: {:?}", s.name, s.barriers);
    }
    // The same requirements cost a barrier where the memory model does not
    // order stores to one device, or cacheable before caching-inhibited
    // stores, for free: POWER, one sync between IVA and IOTLB for both.
    let (c, _) = compile_spec(SPEC, Target::Power64le, "all");
    let st = shootdown::emit::stats::collect(&c);
    assert_eq!(st[0].barriers.get("sync"), Some(&1), "{st:?}");
    assert_eq!(st[0].barriers.len(), 1, "{st:?}");
}
