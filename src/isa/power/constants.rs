//! 64-bit constants in POWER registers: the shortest `li`/`lis`/`ori`/
//! `oris`/`rldicr` sequence we know for each value (tested against an
//! interpreter of those instructions in `lower_tests.rs`).

use super::insn::{Insn, Reg};

/// `sldi ra,rs,sh` (`rldicr ra,rs,sh,63-sh`).
pub(super) fn sldi(ra: Reg, rs: Reg, sh: u8) -> Insn {
    Insn::Rldicr {
        ra,
        rs,
        sh,
        me: 63 - sh,
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
        if value >> 16 != 0 {
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
                            sh: 0,
                            mb: 32,
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
        let tz = value.trailing_zeros() as u8;
        if tz > 0 {
            let x = (value >> tz) as i64;
            if fits_i32(x) {
                let mut s = seq32(rd, x);
                s.push(sldi(rd, rd, tz));
                c.push(s);
            }
        }
    }
    // General: high word, shift, then or in the low halves.
    let hi = (value >> 32) as u32 as i32 as i64;
    let mut s = seq32(rd, hi);
    s.push(sldi(rd, rd, 32));
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
    c.push(s);
    c
}
