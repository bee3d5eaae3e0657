//! Which kernel function each example's sequences stand for, the calls
//! that make it up, and the inputs both run on: in the kernel's domain
//! (what its callers pass), several sizes and alignments. Where the
//! example chooses differently from the kernel by design, either a build
//! pins the kernel's threshold (`--set`), or the input is marked
//! `differs` and the comparison must find the difference.

use super::{Arg, Build, Call, Input, Scenario, Val};

mod arm64_tlb_range;
mod arm_smmu;
mod book3e_tlb;
mod e6500_tcd_lock;
mod npu2_atsd;
mod npu2_tce_kill;
mod radix_tlb;
mod riscv_tlb;
mod vtd_iotlb;

use arm64_tlb_range::arm64_tlb_range;
use arm_smmu::arm_smmu;
use book3e_tlb::book3e_tlb;
use e6500_tcd_lock::e6500_tcd_lock;
use npu2_atsd::npu2_atsd;
use npu2_tce_kill::npu2_tce_kill;
use radix_tlb::radix_tlb;
use riscv_tlb::riscv_tlb;
use vtd_iotlb::vtd_iotlb;

const NONE: &[(&str, Val)] = &[];
const PID0: &[(&str, Val)] = &[("pid", Val::K(0))];
/// mmio_invalidate() ends with two flush ATSDs for PID 0 (the GPU needs
/// two): the example's invalidate_pid(0), twice.
const RANGE_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_range",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
const VA_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_va",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
/// The same with npu_context->nmmu_flush: flush_all_mm() first.
const NMMU_RANGE_FLUSHES: &[Call] = &[
    Call {
        seq: "flush_all_mm",
        bind: NONE,
    },
    Call {
        seq: "invalidate_range",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
const PID_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_pid",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];

const PID: &str = "the example's PID field is 15 bits (MSB0 24..38) and drops bit 15; \
    the kernel shifts the whole PID (radix PIDs have up to 20 bits) to bit 38, so PID bits \
    15..19 land in launch bits 19..23";

/// The builds of an example (`src`: its spec text).
pub fn builds(stem: &str, src: &str) -> Vec<Build> {
    match stem {
        "npu2_atsd" => npu2_atsd(),
        "npu2_tce_kill" => npu2_tce_kill(),
        "arm_smmu" => arm_smmu(),
        "arm64_tlb_range" => arm64_tlb_range(),
        "vtd_iotlb" => vtd_iotlb(),
        "e6500_tcd_lock" => e6500_tcd_lock(src),
        "radix_tlb" => radix_tlb(),
        "book3e_tlb" => book3e_tlb(),
        "riscv_tlb" => riscv_tlb(),
        _ => panic!("no scenarios for {stem}"),
    }
}
