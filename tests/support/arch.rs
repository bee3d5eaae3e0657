//! What the tests know about each target that the crate's backend does
//! not say: how its code runs here (qemu-user, or natively), how gcc
//! builds the kernel's C for it, and how objdump and our `.S` spell its
//! barriers, branches, returns, stores and immediates. The one table in
//! the tests that names targets: a test iterates `Target::ALL` and asks
//! [`arch`]; a new target adds one entry here (`every_target_has_test_data`
//! checks that every registered target has one).

use shootdown::isa::Machine;
use shootdown::Target;

// Each target family's corpora for the outside tools (GNU as, capstone)
// live beside its row here, so a new family is one directory and this
// file.
#[path = "../aarch64_common/mod.rs"]
pub mod aarch64_common;
#[path = "../power_common/mod.rs"]
pub mod power_common;
#[path = "../riscv64_common/mod.rs"]
pub mod riscv64_common;
#[path = "../x86_64_common/mod.rs"]
pub mod x86_64_common;

use crate::{capstone, gnu_as};

pub struct TestArch {
    /// `--target` name the entry is for.
    pub name: &'static str,
    /// The qemu-user binary for its code.
    pub qemu: &'static str,
    /// The host runs its code (x86-64): no qemu, unprefixed tools.
    pub native: bool,
    /// gcc flags that build C as the kernel does (integer registers only,
    /// so MMIO values do not move through vector registers; inline
    /// atomics, not libgcc helpers outside the logged code).
    pub gcc_flags: &'static [&'static str],
    /// Mnemonics of a function return.
    pub returns: &'static [&'static str],
    /// Does this mnemonic branch (or call, or return)?
    pub is_branch: fn(&str) -> bool,
    /// A barrier as the barrier tables spell it (`dsb ish`), from its
    /// mnemonic, its first operand and the whole text, as objdump or our
    /// `.S` print them.
    pub barrier: fn(Machine, &str, Option<&str>, &str) -> Option<String>,
    /// One step weaker barrier, where the architecture has one.
    pub weaker: &'static [(&'static str, &'static str)],
    /// The same store one size narrower: mnemonic and operands in, the
    /// narrowed instruction out.
    pub narrowed: fn(&str, &str) -> Option<String>,
    /// May an immediate start after this byte?
    pub imm_after: fn(u8) -> bool,
    /// Only an operand's last number or a displacement is an immediate
    /// (POWER: `cmpdi 7,...` names a CR field first).
    pub imm_last_only: bool,
    /// GNU as flags that accept every instruction a hand-written test
    /// snippet uses.
    pub as_flags: &'static [&'static str],
    /// The family's corpora for GNU as and for capstone.
    pub gnu_as: &'static gnu_as::Row,
    pub capstone: &'static capstone::Row,
    /// One no-op instruction's bytes in the target's byte order.
    pub nop: &'static [u8],
    /// The same instruction set as this other target, another byte order:
    /// tests that sample one target per instruction set skip it.
    pub twin_of: Option<&'static str>,
    /// A spec statement invalidating the page at `{va}` on every CPU.
    pub page_invalidate: &'static str,
    /// Stores and invalidations can be reordered without a barrier (not
    /// so on x86-64: TSO, and `invlpg` serializes).
    pub weakly_ordered: bool,
    /// Three barriers as a spec writes them, for random programs.
    pub spec_barriers: [&'static str; 3],
    /// Mnemonics the builtins' code (bit counts, variable shifts,
    /// multiply) must contain: the instructions of the target that do it.
    pub builtin_mnemonics: &'static [&'static str],
    /// How a lock release after a critical section is done.
    pub release: Release,
}

/// What a spinlock release looks like (Linux `arch_spin_unlock`).
pub enum Release {
    /// A barrier and a plain store: the barrier when the section did MMIO
    /// and when it only stored to memory.
    BarrierBefore {
        mmio: &'static str,
        memory: &'static str,
    },
    /// A store with release semantics (its mnemonic's prefix).
    Store(&'static str),
}

const ARCHES: [TestArch; 5] = [POWER64, POWER64LE, AARCH64, X86_64, RISCV64];

/// The test data of `t`.
pub fn arch(t: Target) -> &'static TestArch {
    ARCHES
        .iter()
        .find(|a| a.name == t.name())
        .unwrap_or_else(|| panic!("no test data for target {t}: add it to tests/support/arch.rs"))
}

/// One target per instruction set (twins in another byte order left
/// out), in `Target::ALL` order.
pub fn one_per_isa() -> Vec<Target> {
    Target::ALL
        .into_iter()
        .filter(|&t| arch(t).twin_of.is_none())
        .collect()
}

/// Every registered target has an entry, and every entry a target.
fn check_complete() {
    for t in Target::ALL {
        arch(t);
    }
    for a in &ARCHES {
        assert!(
            Target::from_name(a.name).is_some(),
            "test data for unknown target {}",
            a.name
        );
    }
}

impl TestArch {
    /// Is `text` (mnemonic first) a return?
    pub fn is_return(&self, text: &str) -> bool {
        let m = text.split_whitespace().next().unwrap_or("");
        self.returns.contains(&m)
    }

    /// The barrier `text` is, if any (see [`TestArch::barrier`]).
    pub fn barrier_of(&self, machine: Machine, text: &str) -> Option<String> {
        let mut f = text.split_whitespace();
        let m = f.next()?;
        (self.barrier)(machine, m, f.next(), text)
    }

    pub fn weaker(&self, barrier: &str) -> Option<&'static str> {
        self.weaker
            .iter()
            .find(|(b, _)| *b == barrier)
            .map(|(_, w)| *w)
    }
}

const POWER_WEAKER: &[(&str, &str)] = &[
    ("sync", "lwsync"),
    ("hwsync", "lwsync"),
    ("ptesync", "sync"),
    ("lwsync", "eieio"),
    ("msync", "lwsync"),
];

const POWER64: TestArch = TestArch {
    name: "power64",
    qemu: "qemu-ppc64",
    native: false,
    gcc_flags: &["-mcpu=power9", "-mno-altivec", "-mno-vsx"],
    returns: &["blr"],
    is_branch: |m| m.starts_with('b'),
    barrier: power_barrier,
    weaker: POWER_WEAKER,
    narrowed: power_narrowed,
    imm_after: |c| c == b',' || c == b' ',
    imm_last_only: true,
    as_flags: &["-a64", "-mbig", "-mpower9"],
    gnu_as: &power_common::gnu_as::ROW,
    capstone: &power_common::capstone::ROW,
    nop: &[0x60, 0, 0, 0],
    twin_of: None,
    page_invalidate: "tlbie {va} & ~0xfff, 0, 0, 1, 1",
    weakly_ordered: true,
    spec_barriers: ["eieio", "lwsync", "isync"],
    builtin_mnemonics: &["cntlzd", "cnttzd", "popcntd", "sld", "srd"],
    // Linux `arch_spin_unlock`: `sync` when MMIO was done under the lock
    // (`io_sync`; lwsync does not order caching-inhibited stores).
    release: Release::BarrierBefore {
        mmio: "sync",
        memory: "eieio",
    },
};

const POWER64LE: TestArch = TestArch {
    name: "power64le",
    qemu: "qemu-ppc64le",
    as_flags: &["-a64", "-mlittle", "-mpower9"],
    nop: &[0, 0, 0, 0x60],
    twin_of: Some("power64"),
    ..POWER64
};

fn power_barrier(machine: Machine, m: &str, op: Option<&str>, text: &str) -> Option<String> {
    let plain_sync = op.is_none_or(|o| o == "0");
    match m {
        // Book E spells sync 0 `msync` (objdump -Me6500 prints `sync`).
        "sync" | "hwsync" | "msync" if machine == Machine::E6500 => {
            plain_sync.then(|| "msync".into())
        }
        "hwsync" => Some("sync".into()),
        "sync" if plain_sync => Some("sync".into()),
        "sync" => Some(text.to_string()),
        "lwsync" | "ptesync" | "eieio" | "isync" | "tlbsync" | "mbar" | "msync" => Some(m.into()),
        _ => None,
    }
}

fn power_narrowed(m: &str, ops: &str) -> Option<String> {
    let m2 = match m {
        "std" => "stw",
        "stdx" => "stwx",
        "stdbrx" => "stwbrx",
        "stw" => "sth",
        "stwx" => "sthx",
        "stwbrx" => "sthbrx",
        "sth" => "stb",
        _ => return None,
    };
    Some(format!("{m2} {ops}"))
}

const AARCH64: TestArch = TestArch {
    name: "aarch64",
    qemu: "qemu-aarch64",
    native: false,
    gcc_flags: &["-mgeneral-regs-only", "-mno-outline-atomics"],
    returns: &["ret"],
    is_branch: |m| {
        m == "b"
            || m.starts_with("b.")
            || ["bl", "br", "blr", "cbz", "cbnz", "tbz", "tbnz", "ret"].contains(&m)
    },
    barrier: |_, m, op, _| match m {
        "dmb" | "dsb" => Some(format!("{m} {}", op.unwrap_or("sy"))),
        "isb" => Some(m.into()),
        _ => None,
    },
    weaker: &[
        ("dsb sy", "dsb st"),
        ("dsb ish", "dsb ishst"),
        ("dsb ishst", "dmb ishst"),
        ("dsb osh", "dsb oshst"),
        ("dsb oshst", "dmb oshst"),
        ("dsb st", "dmb oshst"),
        ("dmb osh", "dmb oshst"),
        ("dmb oshst", "dmb ishst"),
        ("dmb ish", "dmb ishst"),
        ("dmb sy", "dmb osh"),
    ],
    narrowed: |m, reg| {
        Some(match (m, reg.chars().next()?) {
            ("str", 'x') => format!("str w{}", &reg[1..]),
            ("str", 'w') => format!("strh {reg}"),
            ("strh", 'w') => format!("strb {reg}"),
            ("stlr", 'x') => format!("stlr w{}", &reg[1..]),
            ("stlr", 'w') => format!("stlrh {reg}"),
            _ => return None,
        })
    },
    imm_after: |c| c == b'#',
    imm_last_only: false,
    as_flags: &["-march=armv8.4-a"],
    gnu_as: &aarch64_common::gnu_as::ROW,
    capstone: &aarch64_common::capstone::ROW,
    nop: &[0x1f, 0x20, 0x03, 0xd5],
    twin_of: None,
    page_invalidate: "tlbi vale1is, {va}",
    weakly_ordered: true,
    spec_barriers: ["dmb ishst", "dsb oshst", "isb"],
    builtin_mnemonics: &["clz", "rbit", "lsl x", "lsr x", "mul"],
    release: Release::Store("stlr"),
};

const X86_64: TestArch = TestArch {
    name: "x86_64",
    qemu: "qemu-x86_64",
    native: true,
    gcc_flags: &["-mgeneral-regs-only"],
    returns: &["ret", "retq"],
    is_branch: |m| m.starts_with('j') || m == "call" || m == "ret",
    barrier: |_, m, _, _| {
        ["mfence", "sfence", "lfence"]
            .contains(&m)
            .then(|| m.into())
    },
    weaker: &[("mfence", "sfence")],
    narrowed: x86_narrowed,
    imm_after: |c| c == b'$' || c == b' ' || c == b',',
    imm_last_only: false,
    as_flags: &["--64"],
    gnu_as: &x86_64_common::gnu_as::ROW,
    capstone: &x86_64_common::capstone::ROW,
    nop: &[0x90],
    twin_of: None,
    page_invalidate: "invlpg {va}",
    weakly_ordered: false,
    spec_barriers: ["lfence", "sfence", "lfence"],
    builtin_mnemonics: &["bsr", "bsf", "cmove", "shl %cl", "shr %cl", "imul"],
    // TSO: a plain store releases.
    release: Release::Store("mov"),
};

/// AT&T `mov %src,dst` one size narrower (`%rax` -> `%eax` -> `%ax`).
fn x86_narrowed(m: &str, ops: &str) -> Option<String> {
    let (src, dst) = ops.split_once(',')?;
    let r = src.trim_start_matches('%');
    let small = match r {
        "rax" | "rbx" | "rcx" | "rdx" | "rsi" | "rdi" | "rbp" | "rsp" => format!("e{}", &r[1..]),
        _ if r.starts_with('r') && r[1..].chars().all(|c| c.is_ascii_digit()) => format!("{r}d"),
        "eax" | "ebx" | "ecx" | "edx" | "esi" | "edi" => r[1..].to_string(),
        _ if r.starts_with('r') && r.ends_with('d') => format!("{}w", &r[..r.len() - 1]),
        _ => return None,
    };
    let m2 = match m {
        "mov" => "mov",
        "movq" => "movl",
        "movl" => "movw",
        "movbe" => "movbe",
        _ => return None,
    };
    Some(format!("{m2} %{small},{dst}"))
}

const RISCV64: TestArch = TestArch {
    name: "riscv64",
    qemu: "qemu-riscv64",
    native: false,
    gcc_flags: &[],
    returns: &["ret"],
    is_branch: |m| m.starts_with('b') || ["j", "jal", "jalr", "ret"].contains(&m),
    // objdump prints `fence iorw,iorw` as a bare `fence`.
    barrier: |_, m, op, _| match m {
        "fence" => Some(format!("fence {}", op.unwrap_or("iorw,iorw"))),
        "fence.i" | "sfence.w.inval" | "sfence.inval.ir" => Some(m.into()),
        _ => None,
    },
    weaker: &[
        ("fence iorw,iorw", "fence rw,rw"),
        ("fence rw,rw", "fence w,w"),
        ("fence ow,ow", "fence w,w"),
        ("fence io,io", "fence o,w"),
    ],
    narrowed: |m, ops| {
        let m2 = match m {
            "sd" => "sw",
            "sw" => "sh",
            "sh" => "sb",
            _ => return None,
        };
        Some(format!("{m2} {ops}"))
    },
    imm_after: |c| c == b',' || c == b' ',
    imm_last_only: false,
    // rv64g: no compressed forms, as the generated files say.
    as_flags: &["-march=rv64g_svinval"],
    gnu_as: &riscv64_common::gnu_as::ROW,
    capstone: &riscv64_common::capstone::ROW,
    nop: &[0x13, 0, 0, 0],
    twin_of: None,
    page_invalidate: "sinval.vma {va}, {va}",
    weakly_ordered: true,
    spec_barriers: ["fence w,w", "fence r,r", "fence.i"],
    // No Zbb: bit counts are the population count's shifts and masks
    // (`mul` is its last step).
    builtin_mnemonics: &["sll ", "srl ", "mul ", "xori"],
    // A plain store after a fence whose predecessor set holds I/O only
    // when the section touched a device.
    release: Release::BarrierBefore {
        mmio: "fence iorw,iorw",
        memory: "fence w,w",
    },
};

#[test]
fn every_target_has_test_data() {
    check_complete();
}
