//! Claims about what the hardware sees for hand-picked cases of the
//! examples, checked on the qemu log (after it agreed with `trace`).

use super::log::{Access, Run};

fn value(a: &Access) -> u64 {
    u64::from_str_radix(a.value.trim_start_matches("0x"), 16).unwrap_or(u64::MAX)
}

fn expect(ok: bool, r: &Run, what: &str) -> Result<(), String> {
    if ok {
        return Ok(());
    }
    let log: Vec<String> = r.accesses.iter().take(8).map(|a| a.to_string()).collect();
    Err(format!(
        "{what}; return {}, {} accesses, first:\n{}",
        r.ret,
        r.accesses.len(),
        log.join("\n")
    ))
}

pub const SMMU_ASID: u64 = 0x2a;

pub fn smmu_2m_range(r: &Run) -> Result<(), String> {
    let last = r.accesses.last();
    expect(
        r.ret == 0
            && r.accesses.len() == 512
            && r.accesses
                .iter()
                .all(|a| a.kind == "store" && a.place == "cb[0].tlbiva" && a.width == 8)
            && last.map(value) == Some((SMMU_ASID << 48) | 0x3ff),
        r,
        "512 TLBIVA stores, the last (asid << 48) | 0x3ff",
    )
}

pub fn smmu_sync_idle(r: &Run) -> Result<(), String> {
    let places: Vec<(&str, &str, u64)> = r
        .accesses
        .iter()
        .map(|a| (a.kind, a.place.as_str(), value(a)))
        .collect();
    expect(
        r.ret == 0
            && places
                == [
                    ("store", "cb[0].tlbsync", 0xffff_ffff),
                    ("load", "cb[0].tlbstatus", 0),
                ],
        r,
        "one TLBSYNC store of QCOM_DUMMY_VAL, one TLBSTATUS read of 0, return 0",
    )
}

pub const TCE_PE: u64 = 3;
pub const TCE_DMA: u64 = 0x8000_0000;
const KILL_ALL: u64 = 1 << 63; // msb0 0
const KILL_ONE: u64 = 1 << 61; // msb0 2

pub fn tce_8_pages(r: &Run) -> Result<(), String> {
    let want: Vec<u64> = (0..8)
        .map(|k| KILL_ONE | (TCE_PE << 56) | (TCE_DMA + k * 0x1000))
        .collect();
    let got: Vec<u64> = r.accesses.iter().map(value).collect();
    expect(
        r.ret == 0
            && got == want
            && r.accesses
                .iter()
                .all(|a| a.kind == "store" && a.place == "npu[0].tce_kill"),
        r,
        "8 KILL_ONE stores, one per page",
    )
}

pub fn tce_512_pages(r: &Run) -> Result<(), String> {
    expect(
        r.ret == 0
            && r.accesses.len() == 1
            && r.accesses[0].place == "npu[0].tce_kill"
            && value(&r.accesses[0]) & (KILL_ALL | KILL_ONE) == KILL_ALL,
        r,
        "one KILL_ALL store",
    )
}

pub const TLB_ASID: u64 = 0x42;
pub const TLB_START: u64 = 0x7f00_1234_5000;

pub fn tlb_16_pages(r: &Run) -> Result<(), String> {
    let want: Vec<(String, u64)> = (0..16)
        .map(|k| {
            (
                "tlbi vale1is".to_string(),
                ((TLB_START >> 12) + k) | (TLB_ASID << 48),
            )
        })
        .collect();
    let got: Vec<(String, u64)> = r
        .accesses
        .iter()
        .map(|a| (a.place.clone(), value(a)))
        .collect();
    expect(
        r.ret == 0 && got == want,
        r,
        "16 TLBI VALE1IS, operand (page | asid << 48)",
    )
}
