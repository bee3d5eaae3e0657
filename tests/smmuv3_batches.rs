//! SMMUv3 batch boundaries as Linux 6.1 has them (issue 41):
//! arm_smmu_cmdq_batch_add() submits a full batch of CMDQ_BATCH_ENTRIES
//! (64) only when the 65th command arrives, and
//! arm_smmu_cmdq_batch_submit() sends the rest with the CMD_SYNC in one
//! doorbell. So n per-page commands ring ceil(n / 64) doorbells, at least
//! one: 64 -> 1, 65 -> 2, 128 -> 2, 256 -> 4 (each a `dmb oshst` and a
//! PROD write). Counted on the emulator's trace of the generated code.
#![cfg(feature = "emu")]

use crate::support::trace_events;

fn doorbells(pages: u64) -> (usize, usize) {
    let size = format!("size={}", pages * 4096);
    let events = trace_events(&[
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_range",
        "--arg",
        "asid=1",
        "--arg",
        "iova=0",
        "--arg",
        &size,
        "--arg",
        "granule=4096",
        "--arg",
        "cmdq_log2n=10",
    ]);
    let prod = events
        .iter()
        .filter(|e| e["kind"] == "store" && e["reg"] == "cmdq_prod")
        .count();
    let dmb = events
        .iter()
        .filter(|e| e["kind"] == "barrier" && e["insn"].as_str().unwrap().trim() == "dmb oshst")
        .count();
    (prod, dmb)
}

#[test]
fn doorbells_per_command_count_are_linuxs() {
    for (pages, linux) in [
        (1, 1),
        (63, 1),
        (64, 1),
        (65, 2),
        (128, 2),
        (129, 3),
        (256, 4),
    ] {
        assert_eq!(doorbells(pages), (linux, linux), "{pages} commands");
    }
}
