//! AArch64's row of the capstone driver (tests/capstone.rs): capstone (ARM64)
//! decodes what `assemble` produced, and the result must match `Insn::text`
//! up to a small normaliser.
//!
//! Capstone (capstone-sys 0.18 bundles capstone 5.0, LLVM's printer) spells
//! things differently from our GNU-as text in these documented ways, each
//! handled by `expected_capstone` and pinned exactly in `pinned_spellings`:
//!
//! * immediates: hex above 9, negative values as `#-0x..` — the normaliser
//!   compares immediates by value;
//! * branch targets: absolute `#0x..` addresses instead of label names;
//! * MOVZ/MOVN print as `mov xd, #value` (value = the full 64-bit result,
//!   signed) except `#0, lsl #n` with n != 0, which stays `movz`/`movn`;
//! * ORR (immediate) with Rn = XZR prints `mov xd, #value` (signed);
//!   ORR (register) with Rn = XZR prints `mov xd, xm`;
//! * SUB (register) with Rn = XZR prints `neg xd, xm`;
//! * SUBS (immediate) with Rd = XZR prints `cmp xn, #imm`;
//! * LSL/LSR/UBFIZ/UBFX are all UBFM; capstone picks the alias from the
//!   (immr, imms) fields: `lsr` if imms == 63, else `lsl` if imms + 1 ==
//!   immr, else `ubfiz` if imms < immr, else `ubfx`.  So `lsl #0` prints as
//!   `lsr #0`, `ubfiz #0, #w` as `ubfx`, `ubfx #32, #32` as `lsr #32`, ...
//! * no-operand instructions come with a trailing space (trimmed).
//!
//! Not gaps: every TLBI operation, including the Armv8.4 range (`rv*`) and
//! outer-shareable (`*os`) ones, decodes to its proper name (no `sys`
//! fallback); `ldrb/strb ..., lsl #0` keeps its `lsl #0`; all barrier
//! options print by name.

use super::*;
use crate::capstone::{Corpus, Entry, Expect, Row, Tally};

use ::capstone::prelude::*;

pub const ROW: Row = Row {
    disassembler: |_| cs(),
    corpora: |_| vec![forms_corpus()],
};

/// The corpus `forms`, each instruction's branch target resolved.
fn forms_corpus() -> Corpus {
    let f = forms();
    let a = assemble(&f).expect("assemble");
    let label_off = |l: Label| {
        f.iter()
            .position(|i| *i == Insn::Label(l))
            .map(|p| a.offsets[p])
    };
    let entries = f
        .iter()
        .enumerate()
        .filter(|(_, insn)| !matches!(insn, Insn::Label(_)))
        .map(|(i, insn)| {
            let target = match *insn {
                Insn::B { target }
                | Insn::BCond { target, .. }
                | Insn::Cbz { target, .. }
                | Insn::Cbnz { target, .. }
                | Insn::Tbz { target, .. }
                | Insn::Tbnz { target, .. } => label_off(target),
                _ => None,
            };
            let want = expected_capstone(insn, target);
            Entry {
                text: insn.text(&label_name),
                offset: a.offsets[i] as usize,
                len: 4,
                expect: Expect::Means(Box::new(move |m: &str, o: &str| {
                    let got = format!("{m} {o}");
                    (normalise(&got) != normalise(&want)).then(|| format!("expected {want:?}"))
                })),
            }
        })
        .collect();
    Corpus {
        name: "forms".into(),
        bytes: a.bytes,
        entries,
        tally: Box::new(|t: &Tally| {
            assert!(
                t.compared > 900,
                "corpus unexpectedly small: {}",
                t.compared
            )
        }),
    }
}

fn cs() -> Capstone {
    Capstone::new()
        .arm64()
        .mode(arch::arm64::ArchMode::Arm)
        .build()
        .expect("capstone init")
}

/// Decodes one word at `addr`; `None` if capstone rejects it.
fn decode(cs: &Capstone, word: &[u8], addr: u64) -> Option<String> {
    let d = cs.disasm_count(word, addr, 1).ok()?;
    let i = d.iter().next()?;
    Some(format!(
        "{} {}",
        i.mnemonic().unwrap_or(""),
        i.op_str().unwrap_or("")
    ))
}

/// Capstone's LLVM-style alias choice for UBFM Xd, Xn, #immr, #imms.
fn ubfm_text(d: RegOrZr, n: RegOrZr, immr: u32, imms: u32) -> String {
    if imms == 63 {
        format!("lsr {d}, {n}, #{immr}")
    } else if imms + 1 == immr {
        format!("lsl {d}, {n}, #{}", 63 - imms)
    } else if imms < immr {
        format!("ubfiz {d}, {n}, #{}, #{}", 64 - immr, imms + 1)
    } else {
        format!("ubfx {d}, {n}, #{immr}, #{}", imms - immr + 1)
    }
}

/// What capstone is expected to print for `insn` (before normalisation).
/// `target` is the byte offset of a branch's label.
fn expected_capstone(insn: &Insn, target: Option<u32>) -> String {
    match *insn {
        Insn::Movz { rd, imm } if !(imm.bits() == 0 && imm.shift() != 0) => {
            format!("mov {rd}, #{}", imm.value() as i64)
        }
        Insn::Movn { rd, imm } if !(imm.bits() == 0 && imm.shift() != 0) => {
            format!("mov {rd}, #{}", !imm.value() as i64)
        }
        Insn::OrrImm {
            rd,
            rn: RegOrZr::Zr,
            imm,
        } => format!("mov {rd}, #{}", imm.value() as i64),
        Insn::Orr {
            rd,
            rn: RegOrZr::Zr,
            rm,
        } => format!("mov {rd}, {rm}"),
        Insn::Sub {
            rd,
            rn: RegOrZr::Zr,
            rm,
        } => format!("neg {rd}, {rm}"),
        Insn::SubsImm {
            rd: RegOrZr::Zr,
            rn,
            imm,
        } => format!("cmp {rn}, #{}", imm.get()),
        Insn::SubsReg {
            rd: RegOrZr::Zr,
            rn,
            rm,
        } => format!("cmp {rn}, {rm}"),
        Insn::SubsReg {
            rd,
            rn: RegOrZr::Zr,
            rm,
        } => format!("negs {rd}, {rm}"),
        // ADD (immediate) #0 to or from SP is the MOV (to/from SP) alias.
        Insn::SpAdd { imm } if imm.bytes() == 0 => "mov sp, sp".to_string(),
        Insn::LslImm { rd, rn, sh } => {
            let sh = u32::from(sh.get());
            ubfm_text(rd, rn, (64 - sh) % 64, 63 - sh)
        }
        Insn::LsrImm { rd, rn, sh } => ubfm_text(rd, rn, sh.get().into(), 63),
        Insn::Ubfiz { rd, rn, field } => {
            let (l, w) = (u32::from(field.lsb().get()), u32::from(field.width()));
            ubfm_text(rd, rn, (64 - l) % 64, w - 1)
        }
        Insn::Ubfx { rd, rn, field } => {
            let (l, w) = (u32::from(field.lsb().get()), u32::from(field.width()));
            ubfm_text(rd, rn, l, l + w - 1)
        }
        _ => {
            let t = target.unwrap_or(0);
            insn.text(&|_| format!("#{t:#x}"))
        }
    }
}

/// Trims, collapses blanks and rewrites every `#imm` (decimal, hex,
/// negative) as a decimal value so spellings compare by value.
fn normalise(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(p) = rest.find('#') {
        out.push_str(&rest[..=p]);
        rest = &rest[p + 1..];
        let end = rest.find([',', ']', ' ']).unwrap_or(rest.len());
        let tok = &rest[..end];
        let (neg, mag) = match tok.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, tok),
        };
        let v = match mag.strip_prefix("0x") {
            Some(h) => i128::from_str_radix(h, 16),
            None => mag.parse::<i128>(),
        };
        match v {
            Ok(v) => out.push_str(&(if neg { -v } else { v }).to_string()),
            Err(_) => out.push_str(tok),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn normaliser_self_check() {
    assert_eq!(normalise("mov x0, #-0x10  "), "mov x0, #-16");
    assert_eq!(normalise("str w2, [x0, #0x7f4]"), "str w2, [x0, #2036]");
    assert_eq!(normalise("ret "), "ret");
}

/// Exact capstone output for the alias/gap cases above, and for the newer
/// TLBI ops that older capstone releases printed as `sys`.  If capstone is
/// upgraded and its spelling changes, this is the test that says so.
#[test]
fn pinned_spellings() {
    let cs = cs();
    let cases = [
        pinned_moves_and_logic(),
        pinned_shifts_and_memory(),
        pinned_barriers_tlbi_and_atomics(),
    ];
    for (insn, want) in cases.into_iter().flatten() {
        let w = encode_one(&insn).expect("encode").to_le_bytes();
        let got = decode(&cs, &w, 0).expect("decode");
        assert_eq!(got.trim(), want, "{insn:?}");
    }
    branch_targets_print_absolute(&cs);
}

/// MOV's aliases of MOVZ, MOVN and ORR, NEG and CMP.
fn pinned_moves_and_logic() -> Vec<(Insn, &'static str)> {
    vec![
        (
            Insn::Movz {
                rd: zr(0),
                imm: wide(0x1234, 16),
            },
            "mov x0, #0x12340000",
        ),
        (
            Insn::Movz {
                rd: zr(0),
                imm: wide(0, 16),
            },
            "movz x0, #0, lsl #16",
        ),
        (
            Insn::Movn {
                rd: zr(1),
                imm: wide(0, 0),
            },
            "mov x1, #-1",
        ),
        (
            Insn::Movn {
                rd: zr(1),
                imm: wide(0xffff, 48),
            },
            "mov x1, #0xffffffffffff",
        ),
        (
            Insn::Movk {
                rd: zr(2),
                imm: wide(0xbeef, 32),
            },
            "movk x2, #0xbeef, lsl #32",
        ),
        (
            Insn::OrrImm {
                rd: xr(0),
                rn: zr(31),
                imm: logic(0xffff_ffff_ffff_fffe),
            },
            "mov x0, #-2",
        ),
        (
            Insn::OrrImm {
                rd: xr(0),
                rn: zr(1),
                imm: logic(0xffff_ffff_ffff_fffe),
            },
            "orr x0, x1, #0xfffffffffffffffe",
        ),
        (
            Insn::MovReg {
                rd: zr(3),
                rm: zr(4),
            },
            "mov x3, x4",
        ),
        (
            Insn::Mvn {
                rd: zr(3),
                rm: zr(4),
            },
            "mvn x3, x4",
        ),
        (
            Insn::Sub {
                rd: zr(3),
                rn: zr(31),
                rm: zr(4),
            },
            "neg x3, x4",
        ),
        (
            Insn::SubsImm {
                rd: zr(31),
                rn: xr(4),
                imm: imm12(17),
            },
            "cmp x4, #0x11",
        ),
    ]
}

/// Shifts and bitfields as LSL/LSR/UBFX, and load/store offsets.
fn pinned_shifts_and_memory() -> Vec<(Insn, &'static str)> {
    vec![
        (
            Insn::LslImm {
                rd: zr(0),
                rn: zr(1),
                sh: shift(0),
            },
            "lsr x0, x1, #0",
        ),
        (
            Insn::LslImm {
                rd: zr(0),
                rn: zr(1),
                sh: shift(12),
            },
            "lsl x0, x1, #0xc",
        ),
        (
            Insn::Ubfiz {
                rd: zr(0),
                rn: zr(1),
                field: bitfield(0, 8),
            },
            "ubfx x0, x1, #0, #8",
        ),
        (
            Insn::Ubfx {
                rd: zr(0),
                rn: zr(1),
                field: bitfield(32, 32),
            },
            "lsr x0, x1, #0x20",
        ),
        (
            Insn::LdrReg {
                size: Size::B,
                rt: zr(0),
                rn: sp(1),
                rm: zr(2),
                scaled: true,
            },
            "ldrb w0, [x1, x2, lsl #0]",
        ),
        (
            Insn::Str {
                rt: zr(2),
                rn: sp(0),
                off: scaled(0x7f4, Size::W),
            },
            "str w2, [x0, #0x7f4]",
        ),
        (
            Insn::Str {
                rt: zr(2),
                rn: sp(31),
                off: scaled(8, Size::X),
            },
            "str x2, [sp, #8]",
        ),
    ]
}

/// Barriers, the TLBI ops older capstone printed as `sys`, and CASAH.
fn pinned_barriers_tlbi_and_atomics() -> Vec<(Insn, &'static str)> {
    vec![
        (Insn::Dmb(BarrierOpt::Ishld), "dmb ishld"),
        (Insn::Dsb(BarrierOpt::Oshst), "dsb oshst"),
        (Insn::Isb, "isb"),
        (
            Insn::Tlbi {
                op: TlbiOp::Vmalle1os,
                rt: None,
            },
            "tlbi vmalle1os",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Vale1os,
                rt: Some(zr(3)),
            },
            "tlbi vale1os, x3",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvae1is,
                rt: Some(zr(0)),
            },
            "tlbi rvae1is, x0",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvale1is,
                rt: Some(zr(1)),
            },
            "tlbi rvale1is, x1",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvae1os,
                rt: Some(zr(2)),
            },
            "tlbi rvae1os, x2",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvale1os,
                rt: Some(zr(3)),
            },
            "tlbi rvale1os, x3",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvaae1is,
                rt: Some(zr(30)),
            },
            "tlbi rvaae1is, x30",
        ),
        (
            Insn::Tlbi {
                op: TlbiOp::Rvaale1is,
                rt: Some(zr(31)),
            },
            "tlbi rvaale1is, xzr",
        ),
        (
            Insn::Casa {
                size: Size::H,
                rs: zr(1),
                rt: zr(2),
                rn: sp(3),
            },
            "casah w1, w2, [x3]",
        ),
    ]
}

/// Branch targets print as absolute addresses.
fn branch_targets_print_absolute(cs: &Capstone) {
    let a = assemble(&[
        Insn::Label(0),
        Insn::Nop,
        Insn::BCond {
            cond: Cond::Hs,
            target: 0,
        },
        Insn::Cbnz {
            rt: zr(9),
            target: 1,
        },
        Insn::Label(1),
    ])
    .unwrap();
    assert_eq!(decode(cs, &a.bytes[4..8], 4).unwrap(), "b.hs #0");
    assert_eq!(decode(cs, &a.bytes[8..12], 8).unwrap(), "cbnz x9, #0xc");
}
