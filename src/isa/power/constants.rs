//! 64-bit constants in POWER registers: the shortest `li`/`lis`/`ori`/
//! `oris`/`rldicr` sequence we know for each value (tested against an
//! interpreter of those instructions in `lower_tests.rs`), and the masks
//! an AND applies with rotates instead of a constant in a register.

use super::insn::{Insn, Mb5, Mb6, Reg, Sh5, Sh6};

/// `sldi ra,rs,sh` (`rldicr ra,rs,sh,63-sh`).
pub(super) fn sldi(ra: Reg, rs: Reg, sh: Sh6) -> Insn {
    Insn::Rldicr {
        ra,
        rs,
        sh,
        me: Mb6::sldi_end(sh),
    }
}

pub(super) fn fits_i16(v: i64) -> bool {
    (-32768..=32767).contains(&v)
}
fn fits_i32(v: i64) -> bool {
    (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v)
}

/// Shortest sequence we know for a 64-bit constant: li; lis+ori; a 32-bit
/// value shifted into place; or the general lis/ori/sldi/oris/ori.
pub fn materialize(rd: Reg, value: u64, e: &mut dyn FnMut(Insn)) {
    let best = candidates(rd, value)
        .into_iter()
        .min_by_key(|s| s.len())
        .unwrap_or_default();
    for i in best {
        e(i);
    }
}

fn seq32(rd: Reg, v: i64) -> Vec<Insn> {
    debug_assert!(fits_i32(v));
    if fits_i16(v) {
        return vec![Insn::Li {
            rt: rd,
            imm: v as i16,
        }];
    }
    let hi = (v >> 16) as i16;
    let lo = (v & 0xffff) as u16;
    let mut s = vec![Insn::Lis { rt: rd, imm: hi }];
    if lo != 0 {
        s.push(Insn::Ori {
            ra: rd,
            rs: rd,
            imm: lo,
        });
    }
    s
}

fn candidates(rd: Reg, value: u64) -> Vec<Vec<Insn>> {
    let v = value as i64;
    let mut c = Vec::new();
    if fits_i32(v) {
        c.push(seq32(rd, v));
    }
    // Unsigned 32-bit with bit 31 set: li 0 is not needed, ori/oris on a
    // zeroed register.
    if value >> 32 == 0 {
        let mut s = vec![Insn::Li { rt: rd, imm: 0 }];
        or_low_halves(rd, value, &mut s);
        if s.len() > 1 {
            s.remove(0);
            // First op must define rd from scratch: turn it into li/lis form.
            let mut fixed = Vec::new();
            match s[0] {
                Insn::Oris { imm, .. } => {
                    // lis sign-extends; clear the upper half afterwards.
                    fixed.push(Insn::Lis {
                        rt: rd,
                        imm: imm as i16,
                    });
                    fixed.extend(s[1..].iter().cloned());
                    if imm & 0x8000 != 0 {
                        fixed.push(Insn::Rldicl {
                            ra: rd,
                            rs: rd,
                            sh: Sh6::of::<0>(),
                            mb: Mb6::of::<32>(),
                        });
                    }
                }
                Insn::Ori { imm, .. } => {
                    fixed.push(Insn::Li { rt: rd, imm: 0 });
                    fixed.push(Insn::Ori {
                        ra: rd,
                        rs: rd,
                        imm,
                    });
                }
                _ => {}
            }
            c.push(fixed);
        }
    }
    // A 32-bit signed value shifted left: e.g. 0x000c000002000000 is not,
    // but 0x0005400000000000 = 0x15 << 46 is.
    if value != 0 {
        let tz = value.trailing_zeros();
        let x = (value >> tz) as i64;
        match Sh6::maybe_from(u64::from(tz)) {
            Some(sh) if tz > 0 && fits_i32(x) => {
                let mut s = seq32(rd, x);
                s.push(sldi(rd, rd, sh));
                c.push(s);
            }
            _ => {}
        }
    }
    // General: high word, shift, then or in the low halves.
    let hi = (value >> 32) as u32 as i32 as i64;
    let mut s = seq32(rd, hi);
    s.push(sldi(rd, rd, Sh6::of::<32>()));
    or_low_halves(rd, value, &mut s);
    c.push(s);
    c
}

/// `oris` and `ori` of `value`'s two low halfwords into `rd`, each only
/// where it is not zero.
fn or_low_halves(rd: Reg, value: u64, s: &mut Vec<Insn>) {
    if (value >> 16) & 0xffff != 0 {
        s.push(Insn::Oris {
            ra: rd,
            rs: rd,
            imm: (value >> 16) as u16,
        });
    }
    if value & 0xffff != 0 {
        s.push(Insn::Ori {
            ra: rd,
            rs: rd,
            imm: value as u16,
        });
    }
}

/// `rd = ra & m` with rotate-and-mask instructions where `m` is ones
/// from bit 0 up (`clrldi`), one run of ones in the low word (`rlwinm`),
/// ones from some bit to 63 (`clrrdi`), or all
/// ones but one run of zeros (rotate the run to the bottom, clear it,
/// rotate back: skiboot's SETFIELD of a PE into a DMA address), instead
/// of building `m` in a register (up to five instructions). False (and
/// nothing emitted) for other masks.
pub(super) fn mask_and(rd: Reg, ra: Reg, m: u64, e: &mut dyn FnMut(Insn)) -> bool {
    match mask_insns(rd, ra, m) {
        Some(insns) => {
            insns.into_iter().for_each(e);
            true
        }
        None => false,
    }
}

/// [`mask_and`]'s instructions, None where it has none.
fn mask_insns(rd: Reg, ra: Reg, m: u64) -> Option<Vec<Insn>> {
    use crate::spec::bits::ones_run;
    let sh = |v: u32| Sh6::maybe_from(u64::from(v));
    let mb = |v: u32| Mb6::maybe_from(u64::from(v));
    let zero = Sh6::of::<0>();
    Some(match (ones_run(m), ones_run(!m)) {
        // Ones 0..=hi: clear the bits above (MSB0 0..63-hi-1).
        (Some((0, hi)), _) => vec![Insn::Rldicl {
            ra: rd,
            rs: ra,
            sh: zero,
            mb: mb(63 - hi)?,
        }],
        // Ones lo..=hi inside the low word: one rlwinm (MSB0 word bits
        // 31-hi..=31-lo), the kernel's `rlwinm r15,r10,0,0x3fff0000`.
        (Some((lo, hi)), _) if hi <= 31 => vec![Insn::Rlwinm {
            ra: rd,
            rs: ra,
            sh: Sh5::of::<0>(),
            mb: Mb5::maybe_from(u64::from(31 - hi))?,
            me: Mb5::maybe_from(u64::from(31 - lo))?,
        }],
        // Ones lo..=63: clear the bits below (MSB0 64-lo..63).
        (Some((lo, 63)), _) => vec![Insn::Rldicr {
            ra: rd,
            rs: ra,
            sh: zero,
            me: mb(63 - lo)?,
        }],
        // Zeros lo..=hi, ones around them.
        (_, Some((lo, hi))) if lo > 0 && hi < 63 => {
            let w = hi - lo + 1;
            vec![
                Insn::Rldicr {
                    ra: rd,
                    rs: ra,
                    sh: sh(64 - lo)?,
                    me: mb(63 - w)?,
                },
                Insn::Rldicl {
                    ra: rd,
                    rs: rd,
                    sh: sh(lo)?,
                    mb: Mb6::of::<0>(),
                },
            ]
        }
        _ => return None,
    })
}
