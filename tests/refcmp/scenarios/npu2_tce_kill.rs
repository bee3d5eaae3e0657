//! The `npu2_tce_kill` example's scenarios.

use super::*;

pub(super) fn npu2_tce_kill() -> Vec<Build> {
    const ARGS: &[Arg] = &[
        Arg::Dev("npu"),
        Arg::Int("pe"),
        Arg::Int("dma_addr"),
        Arg::Int("npages"),
        Arg::Int("tce_size"),
    ];
    const CALLS: &[Call] = &[Call {
        seq: "tce_kill",
        bind: NONE,
    }];
    let kill_at = |pe: u64, dma: u64, npages: u64, tce_size: u64| {
        Input::new(
            format!("PE {pe}, {npages} pages of {tce_size:#x} at {dma:#x}"),
            &[
                ("pe", pe),
                ("dma_addr", dma),
                ("npages", npages),
                ("tce_size", tce_size),
            ],
        )
    };
    let kill = |npages: u64, tce_size: u64| kill_at(3, 0x8000_0000, npages, tce_size);
    const PAST: &str = "the example's threshold is derived (129 pages), skiboot's is \
        npages < 128: here one of them kills page by page, the other all";
    const WRAPS: &str = "a range whose end passes 2^64 takes the flush-all path (README, \
        \"What a cover never does\"): one KILL_ALL; skiboot kills page by page at the \
        wrapped addresses";
    let sc = |inputs| Scenario {
        name: "tce_kill",
        kernel: "skiboot hw/npu2.c npu2_tce_kill(OPAL_PCI_TCE_KILL_PAGES) (v7.1)",
        ref_fn: "ref_npu2_tce_kill",
        args: ARGS,
        calls: CALLS,
        inputs,
    };
    vec![
        Build {
            pins: vec![],
            why: "the derived threshold (129 pages); inputs where skiboot's `npages < 128` \
                  chooses the same",
            scenarios: vec![sc(vec![
                kill(0, 0x1000),
                kill(1, 0x1000),
                // Around the unrolled page loop's four pages per test.
                kill(3, 0x1000),
                kill(4, 0x1000),
                kill(5, 0x1000),
                kill(8, 0x1000),
                kill(9, 0x1_0000),
                kill(8, 0x1_0000),
                kill(127, 0x1000),
                kill(129, 0x1000).differs(PAST),
                kill(130, 0x1000),
                kill(512, 0x1000),
                kill_at(15, 0x8000_0000, 8, 0x1000),
                kill_at(16, 0x8000_0000, 8, 0x1000),
                kill_at(15, 0x8000_0000, 512, 0x1000),
                kill_at(16, 0x8000_0000, 512, 0x1000),
                kill_at(3, 0x8000_0000, 1, 1),
                kill_at(3, 0x8000_0801, 8, 0x1000).differs(
                    "skiboot kills at dma_addr + k * tce_size as given; the example covers \
                     the pages the range touches, from the aligned-down address (callers \
                     pass aligned addresses)",
                ),
                // One byte at the last address but one: the range ends
                // at 2^64 - 1, no wrap, so page by page.
                // The address's top byte overlaps the PE field: SETFIELD
                // replaces it with the PE (0xf3..), as the example masks.
                kill_at(3, 0xffff_ffff_ffff_fffe, 1, 1),
                // Two pages across 2^63: the end is past 2^56, where the
                // page loop that carries `{pe} | bits | addr` as a sum
                // would be wrong (the address's top byte overlaps the PE
                // field), so the loop that ORs on every page runs.
                kill_at(3, 0x7fff_ffff_ffff_f000, 2, 0x1000),
                kill_at(5, 0x0a00_0000_0000_0000, 4, 0x1000),
                // Bits 48-55 kept, 56-59 replaced by the PE, below and
                // above 2^56.
                kill_at(5, 0x00ff_0000_0000_0000, 3, 0x1000),
                kill_at(5, 0x00ff_ffff_ffff_e000, 3, 0x1000),
                kill_at(5, 0x01ff_0000_0000_0000, 3, 0x1000),
                kill_at(3, 0xffff_ffff_ffff_f000, 2, 0x1000).differs(WRAPS),
                kill_at(16, 0xffff_ffff_ffff_f000, 2, 0x1000).differs(WRAPS),
                // 129 (the threshold) pages of 2^57 pass 2^64: -22.
                kill_at(3, 0x8000_0000, 1, 1 << 57).outside(
                    "skiboot's tce_size is a u32; 2^57 does not fit (the example returns -22: \
                     129 such pages pass 2^64)",
                ),
                kill_at(3, 0x8000_0000, 8, 0).outside(
                    "a TCE size of 0 is no TVE page size (skiboot returns OPAL_PARAMETER)",
                ),
                // The largest granule the cover takes (its guard's mask).
                kill_at(3, 0x8000_0000, 1, 1 << 56).outside(
                    "skiboot's tce_size is a u32; 2^56 does not fit (the example kills the \
                     one 2^56 page that holds the address)",
                ),
            ])],
        },
        Build {
            pins: vec![("TCE_KILL_TCE_THRESHOLD", 127)],
            why: "skiboot's choice: KILL_ONE per page while npages < 128",
            scenarios: vec![sc(vec![
                kill(127, 0x1000),
                kill(128, 0x1000),
                kill(129, 0x1000),
            ])],
        },
    ]
}
