//! The `vtd_iotlb` example's scenarios.

use super::*;

// iommu->cap: cap_write_drain is bit 54, cap_max_amask_val bits
// 48-53, cap_pgsel_inv bit 39 (intel/iommu.h).
const DW: u64 = 1 << 54;

pub(super) fn vtd_iotlb() -> Vec<Build> {
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![flush_page(), flush_domain(), flush_range()],
    }]
}

fn page(label: &str, did: u64, addr: u64, am: u64, cap: u64) -> Input {
    Input::new(
        label,
        &[("did", did), ("addr", addr), ("am", am), ("cap", cap)],
    )
}

fn range_cap(label: &str, did: u64, start: u64, end: u64, cap: u64) -> Input {
    Input::new(
        label,
        &[("did", did), ("start", start), ("end", end), ("cap", cap)],
    )
}

/// An IOMMU that drains writes, with PSI `pgsel` and `max_amask`.
fn range(label: &str, did: u64, start: u64, end: u64, pgsel: u64, max_amask: u64) -> Input {
    range_cap(label, did, start, end, DW | pgsel << 39 | max_amask << 48)
}

fn flush_page() -> Scenario {
    Scenario {
        name: "iotlb_flush_page",
        kernel: "intel/iommu.c __iommu_flush_iotlb(DMA_TLB_PSI_FLUSH) (Linux 6.1)",
        ref_fn: "ref_iommu_flush_iotlb_psi",
        args: &[
            Arg::Dev("iotlb"),
            Arg::Int("did"),
            Arg::Int("addr"),
            Arg::Int("am"),
            Arg::Int("cap"),
        ],
        calls: &[Call {
            seq: "iotlb_flush_page",
            bind: NONE,
        }],
        inputs: vec![
            page("one page", 5, 0x1234_5000, 0, 0),
            page("one page, write drain", 5, 0x1234_5000, 0, DW),
            page("512 pages, did 0xffff", 0xffff, 0x8000_0000, 9, !0),
            page("IH set in the address", 1, 0x40_0040, 0, DW),
            page("address 0, one page", 2, 0, 0, 0).differs(
                "the kernel skips the IVA write when addr | size_order is 0 \
                 (`if (val_iva)`), so IVA keeps whatever an earlier flush left; \
                 the example always writes IVA",
            ),
        ],
    }
}

fn flush_domain() -> Scenario {
    Scenario {
        name: "iotlb_flush_domain",
        kernel: "intel/iommu.c __iommu_flush_iotlb(DMA_TLB_DSI_FLUSH) (Linux 6.1)",
        ref_fn: "ref_iommu_flush_iotlb_dsi",
        args: &[Arg::Dev("iotlb"), Arg::Int("did"), Arg::Int("cap")],
        calls: &[Call {
            seq: "iotlb_flush_domain",
            bind: NONE,
        }],
        inputs: vec![
            Input::new("did 5", &[("did", 5), ("cap", 0)]),
            Input::new("did 5, write drain", &[("did", 5), ("cap", DW)]),
            Input::new("did 0xffff, every cap bit", &[("did", 0xffff), ("cap", !0)]),
        ],
    }
}

fn flush_range() -> Scenario {
    Scenario {
        name: "iotlb_flush_range",
        kernel: "intel/cache.c cache_tag_flush_range() mask and PSI/DSI choice \
                 (Linux 6.11), dmar.c __iommu_flush_iotlb()",
        ref_fn: "ref_iotlb_flush_range",
        args: &[
            Arg::Dev("iotlb"),
            Arg::Int("did"),
            Arg::Int("start"),
            Arg::Int("end"),
            Arg::Int("cap"),
        ],
        calls: &[Call {
            seq: "iotlb_flush_range",
            bind: NONE,
        }],
        inputs: vec![
            range("one page", 5, 0x1234_5000, 0x1234_5fff, 1, 9),
            range_cap(
                "one page, no drain",
                5,
                0x1234_5000,
                0x1234_5fff,
                9 << 48 | 1 << 39,
            ),
            range_cap("no PSI, no drain: DSI", 2, 0x1000, 0x1fff, 63 << 48),
            range("two pages, unaligned: mask 3", 5, 0x3000, 0x4fff, 1, 9),
            // The last page ends a 4-page block that the first does not
            // start: the shared bits of first and last (not last + 1).
            range("pages 1..3: mask 2", 5, 0x1000, 0x3fff, 1, 9),
            range("512 aligned pages", 0xffff, 0x20_0000, 0x3f_ffff, 1, 9),
            range(
                "513 pages: mask 10 above max_amask 9, DSI",
                1,
                0x20_0000,
                0x40_0fff,
                1,
                9,
            ),
            range("no PSI (pgsel 0): DSI", 2, 0x1000, 0x1fff, 0, 63),
            range("everything: DSI", 3, 0, u64::MAX, 1, 63),
            range("page 0, mask 0: no IVA write", 4, 0, 0xfff, 1, 9),
            range("one byte past a page", 6, 0x5fff, 0x6000, 1, 9),
            range("did with bit 16", 0x1_0005, 0x3000, 0x3fff, 1, 9),
            range(
                "everything, any max_amask: DSI",
                3,
                0,
                u64::MAX,
                1,
                u64::MAX,
            ),
            range(
                "half the address space: mask 51",
                3,
                0,
                (1 << 63) - 1,
                1,
                63,
            ),
        ],
    }
}
