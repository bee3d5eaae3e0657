//! Record forms for tests against zero: `addi x,x,-1; cmpdi 7,x,0; bne 7`
//! (a counted loop's or a poll's count) becomes `addic. x,x,-1; bne 0`,
//! and `andi. x,y,M; cmpdi 7,x,0; beq 7` (a field test) becomes `andi.
//! x,y,M; beq 0`: CR0 already holds the comparison with zero, so the
//! compare goes. One instruction less per loop trip or field test.
//!
//! Sound because the lowering reads CR7 only in the branch right after
//! the compare that sets it (checked for the whole function before
//! anything changes; a function where that does not hold is left as it
//! is), and the branch now reads CR0 right after the instruction that
//! sets it. `addic.` also writes XER[CA], which no lowering reads; CR0's
//! only other readers are the store-conditional's own branches, each
//! right after its `st?cx.`, and a bit test's branch right after its
//! `andi.`.

use super::insn::{Cond, Insn, Mb5, Mb6, Reg, Sh5, Sh6};
use super::lower::{CR, CR0};
use crate::lir::Origin;

pub(super) fn record_forms(insns: &mut Vec<(Insn, Origin)>) {
    if !cr7_read_only_after_its_compare(insns) {
        return;
    }
    // In place: kept instructions move down over the dropped compares
    // (`[w, i)` holds only dropped ones), nothing is cloned. Copying the
    // whole function to fuse a few loops was most of this pass.
    let (mut w, mut i) = (0, 0);
    while i < insns.len() {
        if let Some((first, branch)) = fuse(&insns[i..]) {
            insns[i].0 = first;
            insns[i + 2].0 = branch;
            insns.swap(w, i);
            insns.swap(w + 1, i + 2);
            w += 2;
            i += 3;
        } else {
            insns.swap(w, i);
            w += 1;
            i += 1;
        }
    }
    insns.truncate(w);
}

/// `x = ... ; cmpdi 7,x,0; b{eq,ne} 7` where the first instruction can
/// record CR0: the record form and the branch on CR0.
fn fuse(w: &[(Insn, Origin)]) -> Option<(Insn, Insn)> {
    let [(first, _), (Insn::Cmpdi { bf, ra, imm: 0 }, _), (
        Insn::Bc {
            cond,
            bf: bbf,
            target,
        },
        _,
    ), ..] = w
    else {
        return None;
    };
    if *bf != CR || *bbf != CR || !matches!(cond, Cond::Eq | Cond::Ne) {
        return None;
    }
    let recorded = match *first {
        Insn::Addi { rt, ra: a, imm } if rt == *ra && a == rt && rt != Reg::R0 => {
            Insn::AddicDot { rt, ra: a, imm }
        }
        Insn::AndiDot { ra: x, .. } if x == *ra => first.clone(),
        _ => return None,
    };
    Some((
        recorded,
        Insn::Bc {
            cond: *cond,
            bf: CR0,
            target: *target,
        },
    ))
}

/// Is every branch on CR7 directly after a compare into CR7?
fn cr7_read_only_after_its_compare(insns: &[(Insn, Origin)]) -> bool {
    insns.iter().enumerate().all(|(i, (insn, _))| match insn {
        Insn::Bc { bf, .. } if *bf == CR => i > 0 && compares_into_cr7(&insns[i - 1].0),
        _ => true,
    })
}

fn compares_into_cr7(i: &Insn) -> bool {
    use Insn::*;
    match *i {
        Cmpdi { bf, .. } | Cmpldi { bf, .. } | Cmpwi { bf, .. } | Cmplwi { bf, .. } => bf == CR,
        Cmpd { bf, .. } | Cmpld { bf, .. } | Cmpw { bf, .. } | Cmplw { bf, .. } => bf == CR,
        _ => false,
    }
}

/// A shift left and a mask of the low word, done by one `rlwinm`, as the
/// kernel's 32-bit `slwi` does both: `sldi x,y,s` then `clrldi x,x,32`
/// or `rlwinm x,x,0,mb,me` keeping no bit below s; and `andi. x,y,2^k-1`
/// then `sldi x,x,s` with k + s <= 32. The first writes the register the
/// second reads and overwrites, so nothing else sees the value between;
/// the dropped `andi.`'s CR0 is read only by a bit test's branch right
/// after it (see the module comment), never by a shift.
pub(super) fn word_rotates(insns: &mut Vec<(Insn, Origin)>) {
    let (mut w, mut i) = (0, 0);
    while i < insns.len() {
        let merged = insns
            .get(i + 1)
            .and_then(|(second, _)| word_rotate(&insns[i].0, second));
        match merged {
            Some(m) => {
                insns[i].0 = m;
                insns.swap(w, i);
                w += 1;
                i += 2;
            }
            None => {
                insns.swap(w, i);
                w += 1;
                i += 1;
            }
        }
    }
    insns.truncate(w);
}

fn word_rotate(first: &Insn, second: &Insn) -> Option<Insn> {
    // `sldi x,y,s` is `rldicr x,y,s,63-s`.
    // `sldi x,y,s` is `rldicr x,y,s,63-s`; s < 32 is a word shift.
    let sldi = |i: &Insn| match *i {
        Insn::Rldicr { ra, rs, sh, me } if sh.get() > 0 && me == Mb6::sldi_end(sh) => {
            Some((ra, rs, Sh5::maybe_from(u64::from(sh.get()))?))
        }
        _ => None,
    };
    let word = |v: u8| Mb5::maybe_from(u64::from(v));
    if let Some((x, y, s)) = sldi(first) {
        // The mask, as MSB0 word bounds, must keep no bit below s.
        let (mb, me) = match *second {
            Insn::Rldicl { ra, rs, sh, mb }
                if ra == x && rs == x && sh == Sh6::of::<0>() && mb == Mb6::of::<32>() =>
            {
                (Mb5::of::<0>(), Mb5::of::<31>())
            }
            Insn::Rlwinm { ra, rs, sh, mb, me }
                if ra == x && rs == x && sh == Sh5::of::<0>() && mb <= me =>
            {
                (mb, me)
            }
            _ => return None,
        };
        let me = me.min(word(31 - s.get())?);
        return (mb <= me).then_some(Insn::Rlwinm {
            ra: x,
            rs: y,
            sh: s,
            mb,
            me,
        });
    }
    if let (&Insn::AndiDot { ra: x, rs: y, imm }, Some((x2, y2, s))) = (first, sldi(second)) {
        let k = 16 - imm.leading_zeros() as u8;
        let low_ones = imm != 0 && u32::from(imm).wrapping_add(1).is_power_of_two();
        if x2 == x && y2 == x && low_ones && k + s.get() <= 32 {
            return Some(Insn::Rlwinm {
                ra: x,
                rs: y,
                sh: s,
                mb: word(32 - k - s.get())?,
                me: word(31 - s.get())?,
            });
        }
    }
    None
}
