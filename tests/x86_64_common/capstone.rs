//! x86-64's row of the capstone driver (tests/capstone.rs): capstone (x86,
//! 64-bit mode, AT&T syntax, as the x86-64
//! backend's `disassembler()` sets it up) decodes what `assemble` produced
//! for the shared corpora (tests/x86_64_common), one instruction at a time.
//! Every instruction must decode to exactly our bytes (same length), and
//! capstone's text must mean our text, after a normaliser for capstone's
//! documented spellings (capstone 0.14, capstone 5.0.x):
//!
//! * operand-size suffixes on the mnemonic (`movq`, `retq`, `cmpxchgb`,
//!   `movabsq`) where our (iced GasFormatter) text has none;
//! * `, ` between operands (we print `,`);
//! * `lock cmpxchg` where we print `lock; cmpxchg` (the prefix as its own
//!   statement, see `assemble`);
//! * branch targets as absolute addresses instead of label names, decimal
//!   below 10 and hex above;
//! * numbers compared by value (hex or decimal, negative or not) modulo 2^64;
//! * a trailing space after operand-less instructions.
//!
//! `pinned_spellings` pins these exactly, so a capstone upgrade that
//! changes them says so.

use super::*;
use crate::capstone::{Corpus, Entry, Expect, Row, Tally};

use ::capstone::prelude::*;
use std::collections::HashMap;

pub const ROW: Row = Row {
    disassembler: |_| cs(),
    corpora: |_| {
        table_sections()
            .into_iter()
            .map(|(section, insns)| corpus(section, &insns))
            .collect()
    },
};

/// `insns` as a capstone corpus: every instruction compared (no gaps).
fn corpus(section: &str, insns: &[Insn]) -> Corpus {
    let a = assemble(insns, &name).expect("corpus must assemble");
    let labels: HashMap<Label, u32> = insns
        .iter()
        .zip(&a.offsets)
        .filter_map(|(i, &o)| match i {
            Insn::Label(l) => Some((*l, o)),
            _ => None,
        })
        .collect();
    let entries: Vec<Entry> = insns
        .iter()
        .enumerate()
        .filter(|(_, insn)| !matches!(insn, Insn::Label(_)))
        .map(|(i, insn)| {
            let o = a.offsets[i] as usize;
            let e = a.offsets.get(i + 1).map_or(a.bytes.len(), |&x| x as usize);
            let base = insn.mnemonic();
            let want = normalise(&with_addresses(&a.text[i], insn, &labels), base);
            Entry {
                text: a.text[i].clone(),
                offset: o,
                len: e - o,
                expect: Expect::Means(Box::new(move |m: &str, ops: &str| {
                    let have = normalise(&format!("{m} {ops}"), base);
                    (want != have).then(|| format!("{want:?} != {have:?}"))
                })),
            }
        })
        .collect();
    let real = entries.len();
    Corpus {
        name: section.into(),
        bytes: a.bytes,
        entries,
        tally: Box::new(move |t: &Tally| assert_eq!(t.compared, real)),
    }
}

/// The corpora are large (each of their instructions is compared by
/// `capstone::every_corpus_round_trips_through_capstone`).
#[test]
fn corpora_are_large() {
    let total: usize = table_sections()
        .iter()
        .map(|(_, insns)| {
            insns
                .iter()
                .filter(|i| !matches!(i, Insn::Label(_)))
                .count()
        })
        .sum();
    assert!(total > 30_000, "corpus unexpectedly small: {total}");
}

fn cs() -> Capstone {
    Capstone::new()
        .x86()
        .mode(arch::x86::ArchMode::Mode64)
        .syntax(arch::x86::ArchSyntax::Att)
        .build()
        .expect("capstone init")
}

/// Capstone's text and bytes for the one instruction at the start of
/// `code` (at address `addr`); `None` if it cannot decode it.
fn decode(cs: &Capstone, code: &[u8], addr: u64) -> Option<(String, Vec<u8>)> {
    let d = cs.disasm_count(code, addr, 1).ok()?;
    let i = d.iter().next()?;
    Some((
        format!(
            "{} {}",
            i.mnemonic().unwrap_or(""),
            i.op_str().unwrap_or("")
        ),
        i.bytes().to_vec(),
    ))
}

fn parse_num(s: &str) -> Option<u64> {
    let (neg, m) = match s.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, s),
    };
    let v = match m.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => m.parse::<u64>().ok()?,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Canonical form: `lock; ` -> `lock `, operand separators without blanks,
/// the mnemonic without a size suffix when `base` (our mnemonic) lacks it,
/// every number (not part of a register name) as `#<value mod 2^64>`.
fn normalise(s: &str, base: &str) -> String {
    let s = s.trim().replace("lock; ", "lock ").replace(", ", ",");
    let (prefix, rest) = match s.strip_prefix("lock ") {
        Some(r) => ("lock ", r),
        None => ("", s.as_str()),
    };
    let (m, ops) = rest.split_once(' ').unwrap_or((rest, ""));
    let m = match m.strip_prefix(base) {
        Some("b" | "w" | "l" | "q") => base,
        _ => m,
    };
    let mut out = format!("{prefix}{m}");
    if !ops.is_empty() {
        out.push(' ');
    }
    let b = ops.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start_num = |j: usize| {
            b[j].is_ascii_digit()
                && (j == 0 || !(b[j - 1].is_ascii_alphanumeric() || b[j - 1] == b'%'))
        };
        let neg = b[i] == b'-' && i + 1 < b.len() && start_num(i + 1);
        if neg || start_num(i) {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'x') {
                j += 1;
            }
            match parse_num(&ops[i..j]) {
                Some(v) => out.push_str(&format!("#{v:#x}")),
                None => out.push_str(&ops[i..j]),
            }
            i = j;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Our text with each branch's label name replaced by its address.
fn with_addresses(text: &str, insn: &Insn, labels: &HashMap<Label, u32>) -> String {
    match *insn {
        Insn::Jcc { target, .. } | Insn::Jmp { target } => {
            let name = name(target);
            let at = labels[&target];
            let (m, op) = text.split_once(' ').expect("branch operand");
            assert_eq!(op, name, "branch text {text:?}");
            format!("{m} {at:#x}")
        }
        _ => text.to_string(),
    }
}

/// The normaliser must not be vacuous: a different register, size,
/// immediate, displacement or target must make the forms differ.
#[test]
fn normaliser_distinguishes() {
    let n = normalise;
    assert_eq!(n("movq %rcx, %rax", "mov"), n("mov %rcx,%rax", "mov"));
    assert_ne!(n("movq %rcx, %rax", "mov"), n("mov %rdx,%rax", "mov"));
    assert_ne!(n("movl %ecx, %eax", "mov"), n("mov %rcx,%rax", "mov"));
    assert_eq!(
        n("andq $-8, %rax", "and"),
        n("and $0xfffffffffffffff8,%rax", "and")
    );
    assert_ne!(
        n("andq $-8, %rax", "and"),
        n("and $0xfffffffffffffff0,%rax", "and")
    );
    assert_eq!(
        n("movq -0x80(%r13), %r8", "mov"),
        n("mov -0x80(%r13),%r8", "mov")
    );
    assert_ne!(
        n("movq -0x80(%r13), %r8", "mov"),
        n("mov 0x80(%r13),%r8", "mov")
    );
    assert_ne!(
        n("movq (%r12,%r13,8), %r8", "mov"),
        n("mov (%r12,%r13,4),%r8", "mov")
    );
    assert_eq!(n("jne 0xb", "jne"), n("jne 11", "jne"));
    assert_ne!(n("jne 0xb", "jne"), n("jne 0xc", "jne"));
    assert_eq!(
        n("lock cmpxchgb %al, (%rax)", "cmpxchg"),
        n("lock; cmpxchg %al,(%rax)", "cmpxchg")
    );
    assert_ne!(
        n("cmpxchgb %al, (%rax)", "cmpxchg"),
        n("lock; cmpxchg %al,(%rax)", "cmpxchg")
    );
    assert_ne!(n("shlq %rax", "shl"), n("shr %rax", "shr"));
}

/// Capstone's exact spelling of the normalised differences above.
#[test]
fn pinned_spellings() {
    let cs = cs();
    let cases: Vec<(Vec<Insn>, &str)> = vec![
        (
            vec![Insn::MovReg {
                rd: Gpr::RAX,
                rs: Gpr::RCX,
            }],
            "movq %rcx, %rax",
        ),
        (vec![Insn::Ret], "retq "),
        (vec![Insn::Nop], "nop "),
        (
            vec![Insn::LockCmpxchg {
                size: Size::B,
                base: Gpr::RAX,
                disp: Disp32::ZERO,
                src: Gpr::RAX,
            }],
            "lock cmpxchgb %al, (%rax)",
        ),
        (
            vec![Insn::MovImm {
                rd: Gpr::RAX,
                imm: 1 << 32,
            }],
            "movabsq $0x100000000, %rax",
        ),
        (vec![Insn::Label(1), Insn::Jmp { target: 1 }], "jmp 0"),
        (
            vec![
                Insn::Label(1),
                Insn::Nop,
                Insn::Nop,
                Insn::Jmp { target: 1 },
            ],
            "jmp 0",
        ),
        (
            vec![
                Insn::Jcc {
                    cond: Cond::Ne,
                    target: 1,
                },
                Insn::Label(1),
            ],
            "jne 2",
        ),
    ];
    for (insns, want) in cases {
        let a = assemble(&insns, &name).unwrap();
        let k = insns
            .iter()
            .rposition(|i| !matches!(i, Insn::Label(_)))
            .unwrap();
        let o = a.offsets[k] as usize;
        let (got, _) = decode(&cs, &a.bytes[o..], o as u64).expect("decodes");
        assert_eq!(got, want, "{:?}", insns[k]);
    }
}

/// Exhaustive on purpose: a new `Insn` variant fails to compile here until
/// the shared corpora (and this list) cover it.
#[test]
fn corpora_cover_every_variant() {
    let mut seen = std::collections::HashSet::new();
    for (_, insns) in table_sections() {
        for i in insns {
            seen.insert(match i {
                Insn::MovImm { .. } => 0,
                Insn::MovReg { .. } => 1,
                Insn::Store { .. } => 2,
                Insn::Load { .. } => 3,
                Insn::Bswap { .. } => 4,
                Insn::Rol16 { .. } => 5,
                Insn::Or { .. } => 6,
                Insn::And { .. } => 7,
                Insn::Xor { .. } => 8,
                Insn::Add { .. } => 9,
                Insn::Sub { .. } => 10,
                Insn::Imul { .. } => 11,
                Insn::OrImm { .. } => 12,
                Insn::AndImm { .. } => 13,
                Insn::AddImm { .. } => 14,
                Insn::SubImm { .. } => 15,
                Insn::XorImm { .. } => 16,
                Insn::ShlImm { .. } => 17,
                Insn::ShrImm { .. } => 18,
                Insn::ShlCl { .. } => 19,
                Insn::ShrCl { .. } => 20,
                Insn::Not { .. } => 21,
                Insn::Neg { .. } => 22,
                Insn::Bsr { .. } => 23,
                Insn::Bsf { .. } => 24,
                Insn::Cmove { .. } => 25,
                Insn::CmpReg { .. } => 26,
                Insn::CmpImm { .. } => 27,
                Insn::Test { .. } => 28,
                Insn::TestImm { .. } => 29,
                Insn::Jcc { .. } => 30,
                Insn::Jmp { .. } => 31,
                Insn::Ret => 32,
                Insn::Push { .. } => 33,
                Insn::Pop { .. } => 34,
                Insn::Pause => 35,
                Insn::Nop => 36,
                Insn::Sfence => 37,
                Insn::Lfence => 38,
                Insn::Mfence => 39,
                Insn::LockCmpxchg { .. } => 40,
                Insn::Xchg { .. } => 41,
                Insn::Invlpg { .. } => 42,
                Insn::Clflush { .. } => 43,
                Insn::Label(_) => 44,
                Insn::MovZx { .. } => 45,
                Insn::Bt { .. } => 46,
                Insn::StoreImm { .. } => 47,
                Insn::Lea { .. } => 48,
                Insn::Bts { .. } => 49,
            });
        }
    }
    assert_eq!(seen.len(), 50, "corpora miss some variants");
}
