//! Device layouts as the kernel has them: per-register bit fields, one
//! write per granule branch, e6500's TCD struct, the SMMU's CMD_SYNC word.

use super::*;

const VTD_BITS: &str = "
target x86_64, aarch64, power64le
device iotlb {
    reg iva   0x0 u64 le
    reg iotlb 0x8 u64 le
    field iva.am    lsb0 0..5
    field iotlb.ivt  lsb0 63
    field iotlb.iirg lsb0 60..61
    field iotlb.did  lsb0 32..47
    require iva before iotlb
}
granules pg on iotlb {
    64K set iva.am = 4 set iotlb.iirg = 3 addr iva
    all set iotlb.iirg = 2
}
seq f(did: u64, start: u64, size: u64) {
    cover start, size with pg single {
        iotlb.iva = $addr | $bits
        iotlb.iotlb = { ivt: 1, did: did } | $bits
    }
}
";

/// A granule setting fields of two registers: each write gets its own
/// register's settings (VT-d 6.5.1: AM in IVA, IIRG in the IOTLB command).
#[test]
fn bits_are_per_register() {
    let prog = load("vtd_bits", VTD_BITS);
    for target in [Target::X86_64, Target::Aarch64, Target::Power64le] {
        let cases = vec![
            world(
                &prog,
                "f",
                &[("did", 1), ("start", 0x1_0000), ("size", 0x1000)],
                1,
                &[],
                target,
            ),
            world(
                &prog,
                "f",
                &[("did", 1), ("start", 0x1_0000), ("size", 0x10_0000)],
                1,
                &[],
                target,
            ),
        ];
        let runs = qemu(&prog, "vtd_bits", target, &support::options("all"), cases);
        // 64K page: IVA = address | AM 4; IOTLB = IVT | IIRG 3 (page) | DID 1.
        assert_eq!(
            accesses(&runs[0]),
            [
                store("iotlb[0].iva", 0x1_0004),
                store("iotlb[0].iotlb", (1 << 63) | (3 << 60) | (1 << 32)),
            ],
            "{target}"
        );
        // 1M: the flush-all, IIRG 2 (domain), and no IVA write.
        assert_eq!(
            accesses(&runs[1]),
            [store("iotlb[0].iotlb", (1 << 63) | (2 << 60) | (1 << 32))],
            "{target}"
        );
    }
}

// ------------------------------------------------------------- section 3

/// The tce_x reproducer told apart by value, as the error's help says:
/// one write of the launch register per branch.
const TCE_X: &str = "
target power64, x86_64
device xscom {
    reg ind_addr 0x0 u64 be
    reg ind_data 0x8 u64 be
    field ind_data.kill_all msb0 0
    field ind_data.kill_one msb0 2
    field ind_data.pe msb0 4..7
}
granules tce_x on xscom {
    size tce_size set ind_data.kill_one = 1 via ind_data
    all           set ind_data.kill_all = 1 via ind_data
    cost invalidate 50 ns
    cost all 19200 ns
}
seq tce_kill_x(ind: u64, pe: u64, dma_addr: u64, npages: u64, tce_size: u64) {
    cover dma_addr, npages * tce_size with tce_x auto {
        xscom.ind_addr = ind
        xscom.ind_data = { pe: pe } | $bits | $addr
    }
}
";

#[test]
fn one_write_per_granule_branch() {
    let prog = load("tce_x", TCE_X);
    let base = [
        ("ind", 0x5),
        ("pe", 3),
        ("dma_addr", 0x1_0000),
        ("tce_size", 0x1000),
    ];
    for target in [Target::Power64, Target::X86_64] {
        let with = |npages: u64| {
            let mut p = base.to_vec();
            p.push(("npages", npages));
            world(&prog, "tce_kill_x", &p, 1, &[], target)
        };
        let runs = qemu(
            &prog,
            "tce_x",
            target,
            &support::options("all"),
            vec![with(2), with(2000)],
        );
        let (one, all, pe) = (1u64 << 61, 1u64 << 63, 3u64 << 56);
        assert_eq!(
            accesses(&runs[0]),
            [
                store("xscom[0].ind_addr", 5),
                store("xscom[0].ind_data", one | pe | 0x1_0000),
                store("xscom[0].ind_addr", 5),
                store("xscom[0].ind_data", one | pe | 0x1_1000),
            ],
            "{target}: two pages, one KILL_ONE each"
        );
        assert_eq!(
            accesses(&runs[1]),
            [
                store("xscom[0].ind_addr", 5),
                store("xscom[0].ind_data", all | pe)
            ],
            "{target}: 2000 pages, one KILL_ALL"
        );
    }
}

// ------------------------------------------------------------- section 4

/// The kernel's own `struct tlb_core_data` (Linux 6.1), compiled by gcc:
/// the example's offsets must be its `offsetof`s.
#[test]
fn e6500_tcd_is_the_kernels_struct() {
    let header = kernel_file("arch/powerpc/include/asm/nohash/mmu-e500.h");
    let at = header
        .find("struct tlb_core_data {")
        .expect("struct tlb_core_data in mmu-e500.h");
    let end = at + header[at..].find("};").unwrap() + 2;
    let decl = &header[at..end];

    let path = "examples/e6500_tcd_lock.inv";
    let prog = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let seq = prog
        .seqs
        .iter()
        .find(|s| s.name == "tcd_next_esel")
        .unwrap();
    let tcd = seq.params.iter().position(|p| p == "tcd").unwrap();
    let (mut lock, mut stored, mut loaded) = (None, Vec::new(), Vec::new());
    shootdown::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Mem { op, .. } = s {
            match op {
                MemOp::Acquire(a) if a.mem.ptr == tcd => lock = Some(a.mem.offset),
                MemOp::Store { mem, .. } if mem.ptr == tcd => stored.push(mem.offset),
                MemOp::Load { mem, .. } if mem.ptr == tcd => loaded.push(mem.offset),
                _ => {}
            }
        }
    });
    let lock = lock.expect("tcd_next_esel takes the lock");
    assert_eq!(stored.len(), 1, "one store: esel_next ({stored:?})");
    let others: Vec<u64> = loaded.iter().copied().filter(|o| *o != stored[0]).collect();
    let mut checks = format!(
        "_Static_assert(offsetof(struct tlb_core_data, lock) == {lock}, \"lock\");\n\
         _Static_assert(offsetof(struct tlb_core_data, esel_next) == {}, \"esel_next\");\n",
        stored[0]
    );
    // esel_max and esel_first are what the advance reads besides esel_next.
    for f in ["esel_max", "esel_first"] {
        let any = others
            .iter()
            .map(|o| format!("offsetof(struct tlb_core_data, {f}) == {o}"))
            .collect::<Vec<_>>()
            .join(" || ");
        checks.push_str(&format!("_Static_assert({any}, \"{f}\");\n"));
    }
    let c = format!("#include <stddef.h>\ntypedef unsigned char u8;\n{decl}\n{checks}");
    let dir = support::scratch("tcd-offsets");
    let file = dir.join("tcd.c");
    std::fs::write(&file, &c).unwrap();
    support::run(
        std::process::Command::new("gcc")
            .args(["-std=c11", "-fsyntax-only", "-Werror"])
            .arg(&file),
    );
}

/// The CMD_SYNC word the generated `sync` writes into the ring is the one
/// Linux 6.1 builds without MSI polling (issue 41: it was 0x46), computed
/// here from the kernel's own arm-smmu-v3.h (its field masks and values),
/// as arm_smmu_cmdq_build_cmd() does: OP | CS = SEV | MSH = ISH |
/// MSIATTR = OIWB. QEMU's SMMUv3 model ignores all but CS = IRQ, so only
/// the kernel's header can tell.
#[test]
fn cmd_sync_word_is_the_kernels() {
    let h = kernel_file("drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.h");
    let def = |name: &str| -> String {
        h.lines()
            .map(str::trim)
            .find_map(|l| {
                let rest = l.strip_prefix("#define ")?.trim_start();
                let v = rest.strip_prefix(name)?;
                v.starts_with(char::is_whitespace)
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("arm-smmu-v3.h has no {name}"))
    };
    let num = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => s.parse::<u64>().unwrap(),
    };
    // GENMASK_ULL(h, l) -> (shift, width).
    let field = |name: &str| -> (u32, u32) {
        let v = def(name);
        let args = v
            .strip_prefix("GENMASK_ULL(")
            .and_then(|a| a.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{name} = {v}"));
        let (hi, lo) = args.split_once(',').unwrap();
        let (hi, lo) = (num(hi.trim()) as u32, num(lo.trim()) as u32);
        (lo, hi - lo + 1)
    };
    let prep = |f: &str, v: u64| {
        let (shift, width) = field(f);
        assert!(v >> width == 0, "{f}: {v:#x}");
        v << shift
    };
    let kernel = num(&def("CMDQ_OP_CMD_SYNC"))
        | prep("CMDQ_SYNC_0_CS", num(&def("CMDQ_SYNC_0_CS_SEV")))
        | prep("CMDQ_SYNC_0_MSH", num(&def("ARM_SMMU_SH_ISH")))
        | prep("CMDQ_SYNC_0_MSIATTR", num(&def("ARM_SMMU_MEMATTR_OIWB")));
    let events = support::trace_events(&[
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "sync",
        "--arg",
        "cmdq_log2n=4",
    ]);
    let word0 = events
        .iter()
        .find(|e| e["memory"] == "cmdq_ring[0x0]")
        .and_then(|e| e["value"].as_str())
        .expect("a store of the ring's first word");
    assert_eq!(word0, format!("{kernel:#x}"));
    assert_eq!(kernel, 0xfc0_2046);
}
