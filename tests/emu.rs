#![cfg(feature = "emu")]
//! Runs real machine code, assembled with the GNU (cross) assemblers, through
//! `emu::run`.  A missing assembler fails the test.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use shootdown::emu::{
    EmuError, Event, EventKind, InsnClass, MmioRegion, Outcome, Program, RamRegion, Request,
    ScriptedRead,
};
use shootdown::isa::Target;

use crate::support;

/// `emu::run` on `target`'s emulator.
fn run(target: Target, req: &Request) -> Result<Outcome, EmuError> {
    shootdown::emu::run(target.backend().emu(), req)
}

const DEV: u64 = 0x1000_0000;
const VALUE: u64 = 0x0102_0304_0506_0708;

/// Assembles `src` and returns the raw bytes of its .text section.
fn assemble(arch: Target, src: &str) -> Vec<u8> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "emu-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let asm = support::tool(arch, "as");
    let flags = support::arch(arch).as_flags;
    let objcopy = support::tool(arch, "objcopy");
    let s = dir.join("t.s");
    let o = dir.join("t.o");
    let b = dir.join("t.bin");
    std::fs::write(&s, src).unwrap();
    let out = Command::new(&asm)
        .args(flags)
        .arg("-o")
        .arg(&o)
        .arg(&s)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {asm}: {e}"));
    assert!(
        out.status.success(),
        "{asm} failed:\n{}\n{src}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&objcopy)
        .args(["-O", "binary", "-j", ".text"])
        .arg(&o)
        .arg(&b)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {objcopy}: {e}"));
    assert!(
        out.status.success(),
        "{objcopy} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&b).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

fn classes(list: &[(u32, InsnClass, &str)]) -> BTreeMap<u32, (InsnClass, String)> {
    list.iter()
        .map(|(o, c, t)| (*o, (*c, t.to_string())))
        .collect()
}

fn request(arch: Target, src: &str, cls: &[(u32, InsnClass, &str)], args: Vec<u64>) -> Request {
    Request {
        program: Program {
            big_endian: arch.big_endian(),
            code: assemble(arch, src),
            classes: classes(cls),
        },
        args,
        mmio: vec![MmioRegion {
            queues: Vec::new(),
            base: DEV,
            size: 0x1000,
            reads: vec![ScriptedRead {
                offset: 0x10,
                values: vec![vec![0, 0, 0, 0, 0, 0, 0, 1], vec![0xff; 8], vec![0; 8]],
            }],
        }],
        ram: vec![],
        max_insns: 10_000,
        tlb_found: Vec::new(),
    }
}

/// `src` with the given instruction classes, no arguments and no
/// devices, for at most 1000 instructions.
fn cpu_request(arch: Target, src: &str, cls: &[(u32, InsnClass, &str)]) -> Request {
    Request {
        program: Program {
            big_endian: arch.big_endian(),
            code: assemble(arch, src),
            classes: classes(cls),
        },
        args: vec![],
        mmio: vec![],
        ram: vec![],
        max_insns: 1000,
        tlb_found: Vec::new(),
    }
}

fn store(pc: u32, bytes: [u8; 8]) -> Event {
    Event {
        kind: EventKind::Store,
        addr: DEV + 8,
        bytes: bytes.to_vec(),
        pc_offset: pc,
        text: String::new(),
    }
}

fn barrier(pc: u32, text: &str) -> Event {
    Event {
        kind: EventKind::Barrier,
        addr: 0,
        bytes: vec![],
        pc_offset: pc,
        text: text.to_string(),
    }
}

fn loads(pc: u32) -> Vec<Event> {
    [vec![0, 0, 0, 0, 0, 0, 0, 1], vec![0xff; 8], vec![0; 8]]
        .into_iter()
        .map(|bytes| Event {
            kind: EventKind::Load,
            addr: DEV + 0x10,
            bytes,
            pc_offset: pc,
            text: String::new(),
        })
        .collect()
}

const BE: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
const LE: [u8; 8] = [8, 7, 6, 5, 4, 3, 2, 1];

/// store arg0 to dev+8, barrier, poll dev+0x10 until 0, return 7.
fn check_poll(arch: Target, src: &str, store_pc: u32, barrier_pc: u32, text: &str, bytes: [u8; 8]) {
    let load_pc = barrier_pc + if arch == Target::X86_64 { 3 } else { 4 };
    let req = request(
        arch,
        src,
        &[(barrier_pc, InsnClass::Barrier, text)],
        vec![VALUE, DEV],
    );
    let out = run(arch, &req).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
    let mut want = vec![store(store_pc, bytes), barrier(barrier_pc, text)];
    want.extend(loads(load_pc));
    assert_eq!(out.events, want, "{arch:?}");
    assert_eq!(
        out.events
            .iter()
            .filter(|e| e.kind == EventKind::Load)
            .count(),
        3
    );
    assert_eq!(out.ret, 7);
    assert!(out.insns_executed > 8);
}

const POWER_POLL: &str = "
    std 3, 8(4)
    eieio
1:  ld 5, 0x10(4)
    cmpdi 5, 0
    bne 1b
    li 3, 7
    blr
";

#[test]
fn power_be_std_poll() {
    check_poll(Target::Power64, POWER_POLL, 0, 4, "eieio", BE);
}

#[test]
fn power_le_std_poll() {
    check_poll(Target::Power64le, POWER_POLL, 0, 4, "eieio", LE);
}

/// POWER_POLL with a byte-reversed (indexed) store: the store at 4, the
/// barrier at 8.
fn power_stdbrx_poll() -> String {
    POWER_POLL.replace("    std 3, 8(4)\n", "    li 6, 8\n    stdbrx 3, 4, 6\n")
}

#[test]
fn power_le_stdbrx_poll() {
    check_poll(Target::Power64le, &power_stdbrx_poll(), 4, 8, "eieio", BE);
}

#[test]
fn power_be_stdbrx_stores_reversed() {
    // On big-endian, stdbrx stores the little-endian image.
    check_poll(Target::Power64, &power_stdbrx_poll(), 4, 8, "eieio", LE);
}

#[test]
fn aarch64_poll() {
    let src = "
    str x0, [x1, #8]
    dmb oshst
1:  ldr x2, [x1, #0x10]
    cbnz x2, 1b
    mov x0, #7
    ret
";
    check_poll(Target::Aarch64, src, 0, 4, "dmb oshst", LE);
}

#[test]
fn x86_64_poll() {
    let src = "
    .intel_syntax noprefix
    mov qword ptr [rsi + 8], rdi
    sfence
1:  mov rax, qword ptr [rsi + 0x10]
    test rax, rax
    jnz 1b
    mov eax, 7
    ret
";
    let code = assemble(Target::X86_64, src);
    assert_eq!(
        &code[4..7],
        &[0x0f, 0xae, 0xf8],
        "sfence expected at offset 4"
    );
    check_poll(Target::X86_64, src, 0, 4, "sfence", LE);
}

fn invalidates(out: &[Event]) -> Vec<&Event> {
    out.iter()
        .filter(|e| e.kind == EventKind::Invalidate)
        .collect()
}

#[test]
fn power_tlbie_recorded_and_skipped() {
    for arch in [Target::Power64, Target::Power64le] {
        let src = "
    li 4, 0x1000
    li 5, 0x22
    ptesync
    tlbie 4, 5
    eieio
    tlbsync
    ptesync
    li 3, 7
    blr
";
        let req = cpu_request(
            arch,
            src,
            &[
                (8, InsnClass::Barrier, "ptesync"),
                (12, InsnClass::Invalidate, "tlbie 4,5"),
                (16, InsnClass::Barrier, "eieio"),
                (20, InsnClass::Barrier, "tlbsync"),
                (24, InsnClass::Barrier, "ptesync"),
            ],
        );
        let out = run(arch, &req).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
        let kinds: Vec<(EventKind, u32)> = out
            .events
            .iter()
            .map(|e| (e.kind.clone(), e.pc_offset))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (EventKind::Barrier, 8),
                (EventKind::Invalidate, 12),
                (EventKind::Barrier, 16),
                (EventKind::Barrier, 20),
                (EventKind::Barrier, 24),
            ],
            "{arch:?}"
        );
        let inv = invalidates(&out.events);
        assert_eq!(inv[0].text, "tlbie 4,5 = r4=0x1000, r5=0x22");
        assert_eq!(out.ret, 7);
        assert_eq!(out.insns_executed, 9);
    }
}

/// Book III-E on unicorn's Book III-S CPU: MAS writes are kept (and read
/// back by mfspr), wrteei/wrtee/mfmsr are modelled or run, and
/// tlbilx/tlbivax report EA and MAS6 as their operands.
#[test]
fn power_book3e_mas6_and_invalidations() {
    for arch in [Target::Power64, Target::Power64le] {
        let src = "
    .machine e6500
    li 4, 0x1234
    mfmsr 10
    wrteei 0
    mtspr 0x276, 4
    li 4, 0
    mfspr 5, 0x276
    li 3, 0x5000
    tlbilx 3, 0, 3
    tlbivax 0, 3
    tlbilx 1, 0, 0
    tlbilx 0, 0, 0
    wrtee 10
    msync
    isync
    mr 3, 5
    blr
";
        let req = cpu_request(
            arch,
            src,
            &[
                (28, InsnClass::Invalidate, "tlbilx 3,0,3"),
                (32, InsnClass::Invalidate, "tlbivax 0,3"),
                (36, InsnClass::Invalidate, "tlbilx 1,0,0"),
                (40, InsnClass::Invalidate, "tlbilx 0,0,0"),
                (48, InsnClass::Barrier, "msync"),
                (52, InsnClass::Barrier, "isync"),
            ],
        );
        let out = run(arch, &req).unwrap_or_else(|e| panic!("{arch:?}: {e}"));
        let texts: Vec<&str> = invalidates(&out.events)
            .iter()
            .map(|e| e.text.as_str())
            .collect();
        assert_eq!(
            texts,
            [
                "tlbilx 3,0,3 = ea=0x5000, mas6=0x1234",
                "tlbivax 0,3 = ea=0x5000, mas6=0x1234",
                "tlbilx 1,0,0 = 0x1234",
                "tlbilx 0,0,0",
            ],
            "{arch:?}"
        );
        // mfspr read the MAS6 the code wrote.
        assert_eq!(out.ret, 0x1234, "{arch:?}");
        assert_eq!(out.insns_executed, 16, "{arch:?}");
    }
}

/// MAS7_MAS3 writes MAS7 (high word) and MAS3 (low word); MAS1 is 32
/// bits; `tlbsx` finds its entry or not as the request says: found, MAS1
/// gets V with MAS6's SPID as TID and MAS2 the EA's page; missed, V clear.
#[test]
fn power_book3e_mas7_mas3_and_tlb_lookups() {
    let src = "
    .machine e6500
    lis 4, 0x1234
    ori 4, 4, 0x5678
    rldicr 4, 4, 32, 31
    oris 4, 4, 0x9abc
    mtspr 0x174, 4
    mfspr 5, 0x3b0
    mfspr 6, 0x273
    lis 7, 0x002a
    mtspr 0x276, 7
    lis 8, 0x4000
    ori 8, 8, 0x0123
    tlbsx 0, 8
    mfspr 9, 0x271
    mfspr 10, 0x272
    tlbsx 0, 8
    mfspr 11, 0x271
    add 3, 5, 6
    add 3, 3, 9
    add 3, 3, 10
    add 3, 3, 11
    blr
";
    for (found, want) in [
        (
            vec![true, false],
            // MAS7 + MAS3, then V|TID 0x2a, the page, then V clear.
            0x1234_5678u64 + 0x9abc_0000 + 0x802a_0000 + 0x4000_0000 + 0x002a_0000,
        ),
        (vec![false], 0x1234_5678u64 + 0x9abc_0000),
    ] {
        let mut req = cpu_request(Target::Power64, src, &[]);
        req.tlb_found = found.clone();
        let out = run(Target::Power64, &req).unwrap_or_else(|e| panic!("{found:?}: {e}"));
        assert_eq!(out.ret, want, "{found:?}");
    }
}

#[test]
fn power_unclassified_tlbie_faults() {
    let src = "
    li 4, 0x1000
    tlbie 4, 0
    blr
";
    let req = cpu_request(Target::Power64, src, &[]);
    match run(Target::Power64, &req) {
        Err(EmuError::Fault { pc_offset: 4, .. }) => {}
        other => panic!("expected a fault at 4, got {other:?}"),
    }
}

/// Runs `src` with the given instruction classes and no devices; the
/// events as (kind, pc offset, text), the result and the instruction count.
fn cpu_events(
    arch: Target,
    src: &str,
    cls: &[(u32, InsnClass, &str)],
) -> (Vec<(EventKind, u32, String)>, u64, u64) {
    let req = cpu_request(arch, src, cls);
    let out = run(arch, &req).unwrap();
    let events = out
        .events
        .iter()
        .map(|e| (e.kind.clone(), e.pc_offset, e.text.clone()))
        .collect();
    (events, out.ret, out.insns_executed)
}

fn owned(v: &[(EventKind, u32, &str)]) -> Vec<(EventKind, u32, String)> {
    v.iter()
        .map(|(k, o, t)| (k.clone(), *o, t.to_string()))
        .collect()
}

/// `sfence.vma` runs in unicorn's M-mode; the Svinval instructions are
/// illegal there and skipped; both are logged with their register
/// operands (not x0, which is part of the name).
#[test]
fn riscv64_sfence_and_svinval() {
    let src = "
    li a1, 0x1234
    li a2, 7
    sfence.vma a1, a2
    sfence.vma zero, a2
    sfence.w.inval
    sinval.vma a1, zero
    sfence.inval.ir
    li a0, 9
    ret
";
    let (events, ret, _) = cpu_events(
        Target::Riscv64,
        src,
        &[
            (12, InsnClass::Invalidate, "sfence.vma a1, a2"),
            (16, InsnClass::Invalidate, "sfence.vma zero, a2"),
            (20, InsnClass::Barrier, "sfence.w.inval"),
            (24, InsnClass::Invalidate, "sinval.vma a1, zero"),
            (28, InsnClass::Barrier, "sfence.inval.ir"),
        ],
    );
    assert_eq!(
        events,
        owned(&[
            (
                EventKind::Invalidate,
                12,
                "sfence.vma a1, a2 = x11=0x1234, x12=0x7"
            ),
            (EventKind::Invalidate, 16, "sfence.vma zero, a2 = 0x7"),
            (EventKind::Barrier, 20, "sfence.w.inval"),
            (EventKind::Invalidate, 24, "sinval.vma a1, zero = 0x1234"),
            (EventKind::Barrier, 28, "sfence.inval.ir"),
        ])
    );
    assert_eq!(ret, 9);
}

#[test]
fn aarch64_tlbi_and_range_tlbi() {
    let src = "
    mov x1, #0x1234
    dsb ishst
    tlbi vale1is, x1
    tlbi rvale1is, x1
    dsb ish
    isb
    mov x0, #7
    ret
";
    let (events, ret, executed) = cpu_events(
        Target::Aarch64,
        src,
        &[
            (4, InsnClass::Barrier, "dsb ishst"),
            (8, InsnClass::Invalidate, "tlbi vale1is, x1"),
            (12, InsnClass::Invalidate, "tlbi rvale1is, x1"),
            (16, InsnClass::Barrier, "dsb ish"),
            (20, InsnClass::Barrier, "isb"),
        ],
    );
    assert_eq!(
        events,
        owned(&[
            (EventKind::Barrier, 4, "dsb ishst"),
            (EventKind::Invalidate, 8, "tlbi vale1is, x1 = 0x1234"),
            (EventKind::Invalidate, 12, "tlbi rvale1is, x1 = 0x1234"),
            (EventKind::Barrier, 16, "dsb ish"),
            (EventKind::Barrier, 20, "isb"),
        ])
    );
    assert_eq!(ret, 7);
    assert_eq!(executed, 8);
}

#[test]
fn timeouts() {
    for (arch, src) in [
        (Target::Aarch64, "1: b 1b\n"),
        (Target::Power64, "1: b 1b\n"),
        (Target::Power64le, "1: b 1b\n"),
        (Target::X86_64, "1: jmp 1b\n"),
    ] {
        let req = Request {
            max_insns: 5000,
            tlb_found: Vec::new(),
            ..cpu_request(arch, src, &[])
        };
        match run(arch, &req) {
            Err(EmuError::Timeout { insns: 5000 }) => {}
            other => panic!("{arch:?}: expected timeout, got {other:?}"),
        }
    }
}

#[test]
fn unmapped_access_faults() {
    for (arch, src, pc) in [
        (Target::Aarch64, "mov x2, #1\nldr x0, [x1]\nret\n", 4),
        (Target::Power64, "li 5, 1\nld 3, 0(4)\nblr\n", 4),
        (Target::Power64le, "li 5, 1\nstd 3, 0(4)\nblr\n", 4),
        (
            Target::X86_64,
            ".intel_syntax noprefix\nnop\nmov qword ptr [rsi], rdi\nret\n",
            1,
        ),
    ] {
        let req = Request {
            program: Program {
                big_endian: arch.big_endian(),
                code: assemble(arch, src),
                classes: BTreeMap::new(),
            },
            args: vec![1, 0x4000_0000],
            mmio: vec![],
            ram: vec![],
            max_insns: 1000,
            tlb_found: Vec::new(),
        };
        match run(arch, &req) {
            Err(EmuError::Fault { pc_offset, what }) => {
                assert_eq!(pc_offset, pc, "{arch:?}: {what}");
                assert!(what.contains("0x40000000"), "{arch:?}: {what}");
            }
            other => panic!("{arch:?}: expected fault, got {other:?}"),
        }
    }
}

#[test]
fn ram_is_not_an_event_and_is_returned() {
    // x86: load a device base from a pointer array in RAM, store arg0 to
    // dev+8, bump a counter in RAM, read back the stored register.
    let src = "
    .intel_syntax noprefix
    mov rax, qword ptr [rsi + 8]
    mov qword ptr [rax + 8], rdi
    add qword ptr [rsi + 16], 1
    mov rax, qword ptr [rax + 8]
    ret
";
    let mut ptrs = vec![0u8; 24];
    ptrs[8..16].copy_from_slice(&DEV.to_le_bytes());
    ptrs[16..24].copy_from_slice(&41u64.to_le_bytes());
    let req = Request {
        program: Program {
            big_endian: Target::X86_64.big_endian(),
            code: assemble(Target::X86_64, src),
            classes: BTreeMap::new(),
        },
        args: vec![VALUE, 0x2000_0000],
        mmio: vec![MmioRegion {
            queues: Vec::new(),
            base: DEV,
            size: 0x100,
            reads: vec![],
        }],
        ram: vec![RamRegion {
            base: 0x2000_0000,
            bytes: ptrs,
            watch: false,
        }],
        max_insns: 100,
        tlb_found: Vec::new(),
    };
    let out = run(Target::X86_64, &req).unwrap();
    assert_eq!(out.ret, VALUE, "unscripted load returns the last store");
    let kinds: Vec<EventKind> = out.events.iter().map(|e| e.kind.clone()).collect();
    assert_eq!(kinds, vec![EventKind::Store, EventKind::Load]);
    assert_eq!(out.events[1].bytes, LE.to_vec());
    assert_eq!(out.ram[0].bytes[16..24], 42u64.to_le_bytes());
}

#[test]
fn overlapping_regions_rejected() {
    let req = Request {
        program: Program {
            big_endian: Target::Aarch64.big_endian(),
            code: assemble(Target::Aarch64, "ret\n"),
            classes: BTreeMap::new(),
        },
        args: vec![],
        mmio: vec![MmioRegion {
            queues: Vec::new(),
            base: 0x10000,
            size: 0x10,
            reads: vec![],
        }],
        ram: vec![],
        max_insns: 100,
        tlb_found: Vec::new(),
    };
    assert!(matches!(
        run(Target::Aarch64, &req),
        Err(EmuError::Unicorn(_))
    ));
}

#[test]
fn x86_64_invlpg_recorded() {
    let src = "
    .intel_syntax noprefix
    invlpg [rdi]
    mfence
    mov eax, 7
    ret
";
    let code = assemble(Target::X86_64, src);
    assert_eq!(
        &code[..3],
        &[0x0f, 0x01, 0x3f],
        "invlpg [rdi] expected at 0"
    );
    let req = Request {
        program: Program {
            big_endian: Target::X86_64.big_endian(),
            code,
            classes: classes(&[
                (0, InsnClass::Invalidate, "invlpg [rdi]"),
                (3, InsnClass::Barrier, "mfence"),
            ]),
        },
        args: vec![0xdead_b000],
        mmio: vec![],
        ram: vec![],
        max_insns: 100,
        tlb_found: Vec::new(),
    };
    let out = run(Target::X86_64, &req).unwrap();
    let texts: Vec<(EventKind, u32, &str)> = out
        .events
        .iter()
        .map(|e| (e.kind.clone(), e.pc_offset, e.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (EventKind::Invalidate, 0, "invlpg [rdi] = 0xdeadb000"),
            (EventKind::Barrier, 3, "mfence"),
        ]
    );
    assert_eq!(out.ret, 7);
}

#[test]
fn scripted_last_value_repeats_and_unscripted_reads_zero() {
    let src = "
    .intel_syntax noprefix
    mov eax, dword ptr [rdi + 0x10]
    mov eax, dword ptr [rdi + 0x10]
    mov eax, dword ptr [rdi + 0x10]
    mov rax, qword ptr [rdi + 0x20]
    ret
";
    let req = Request {
        program: Program {
            big_endian: Target::X86_64.big_endian(),
            code: assemble(Target::X86_64, src),
            classes: BTreeMap::new(),
        },
        args: vec![DEV],
        mmio: vec![MmioRegion {
            queues: Vec::new(),
            base: DEV,
            size: 0x100,
            reads: vec![ScriptedRead {
                offset: 0x10,
                values: vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8]],
            }],
        }],
        ram: vec![],
        max_insns: 100,
        tlb_found: Vec::new(),
    };
    let out = run(Target::X86_64, &req).unwrap();
    let bytes: Vec<(u64, Vec<u8>)> = out
        .events
        .iter()
        .map(|e| (e.addr - DEV, e.bytes.clone()))
        .collect();
    assert_eq!(
        bytes,
        vec![
            (0x10, vec![1, 2, 3, 4]),
            (0x10, vec![5, 6, 7, 8]),
            (0x10, vec![5, 6, 7, 8]),
            (0x20, vec![0; 8]),
        ]
    );
    assert_eq!(out.ret, 0);
}
