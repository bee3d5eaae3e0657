//! What an executed TLBI's operand says, for `trace` (Arm ARM D8.13: the
//! TLBI operand formats).

/// `tlbi OP, xN` with the value of xN.
pub fn tlbi(insn: &str, operands: &[u64]) -> Option<String> {
    let op = insn.split_whitespace().nth(1)?.trim_end_matches(',');
    let v = *operands.first()?;
    let asid = v >> 48;
    if op.starts_with("aside1") {
        return Some(format!("asid={asid:#x}"));
    }
    if op.starts_with("rva") {
        // Range: ASID 63:48, TG 47:46, SCALE 45:44, NUM 43:39, TTL
        // 38:37, BaseADDR 36:0 (VA >> 12 with 4K pages).
        let (tg, scale, num, ttl) = (
            (v >> 46) & 3,
            (v >> 44) & 3,
            (v >> 39) & 0x1f,
            (v >> 37) & 3,
        );
        let base = (v & ((1 << 37) - 1)) << 12;
        let pages = (num + 1) << (5 * scale + 1);
        let asid = if op.starts_with("rvaa") {
            String::new()
        } else {
            format!(" asid={asid:#x}")
        };
        return Some(format!(
            "va={base:#x} pages={pages} (num={num} scale={scale}) tg={tg} ttl={ttl}{asid}"
        ));
    }
    if op.starts_with("va") {
        // ASID 63:48, TTL 47:44, VA[55:12] in 43:0.
        let va = (v & ((1 << 44) - 1)) << 12;
        let ttl = (v >> 44) & 0xf;
        let asid = if op.starts_with("vaa") {
            String::new()
        } else {
            format!(" asid={asid:#x}")
        };
        return Some(format!("va={va:#x} ttl={ttl}{asid}"));
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn operands_by_field() {
        assert_eq!(
            super::tlbi("tlbi vale1is, x11", &[(1 << 48) | 0x400]).as_deref(),
            Some("va=0x400000 ttl=0 asid=0x1")
        );
        // The operand of the kernel's __flush_tlb_range for 64 pages at
        // 0x400000, ASID 1: NUM 31, SCALE 0, TG 4K.
        let v = (1u64 << 48) | (1 << 46) | (31 << 39) | 0x400;
        assert_eq!(
            super::tlbi("tlbi rvale1is, x15", &[v]).as_deref(),
            Some("va=0x400000 pages=64 (num=31 scale=0) tg=1 ttl=0 asid=0x1")
        );
        assert_eq!(
            super::tlbi("tlbi aside1is, x9", &[7 << 48]).as_deref(),
            Some("asid=0x7")
        );
    }
}
