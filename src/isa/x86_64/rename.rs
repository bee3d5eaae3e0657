//! Callee-saved registers the lowered code can do without. The allocator
//! hands out rbx, r12.. when the LIR has more values live than the
//! caller-saved set holds; the lowering then needs fewer (a fused `bsr`
//! has no separate clz and constant, a skipped `and` no result), so a
//! caller-saved register is often free wherever the callee-saved one is
//! live. Renaming it there saves its `push` and `pop`.
//!
//! Exact by the usual interference test over the lowered code: two
//! registers may share one where neither is written while the other is
//! live. Liveness is backward data flow over the instructions' flow graph
//! (`frame::cfg`), with every register an instruction reads or writes,
//! implicit ones included (rcx of a shift by cl, rax of `cmpxchg` and of
//! the return).

use super::frame::{cfg, Body};
use super::insn::{Gpr, Index, Insn};

type Set = u16;

fn bit(r: Gpr) -> Set {
    1 << r.num()
}

/// (read, written) registers of one instruction.
pub(super) fn uses_defs(i: &Insn) -> (Set, Set) {
    use Insn::*;
    let all = |rs: &[Gpr]| rs.iter().fold(0, |s, &r| s | bit(r));
    let ix = |x: Option<Index>| x.map_or(0, |x| bit(x.reg()));
    match *i {
        MovImm { rd, .. } | Pop { rd } => (0, bit(rd)),
        // The zero idiom reads nothing.
        Xor { rd, rs } if rd == rs => (0, bit(rd)),
        MovReg { rd, rs } | MovZx { rd, rs, .. } => (bit(rs), bit(rd)),
        Lea {
            rd, base, index, ..
        } => (bit(base) | ix(index), bit(rd)),
        Load {
            rd, base, index, ..
        } => (bit(base) | ix(index), bit(rd)),
        Store {
            base, index, src, ..
        } => (bit(base) | ix(index) | bit(src), 0),
        StoreImm { base, index, .. } => (bit(base) | ix(index), 0),
        Bswap { rd, .. }
        | Rol16 { rd }
        | OrImm { rd, .. }
        | AndImm { rd, .. }
        | AddImm { rd, .. }
        | SubImm { rd, .. }
        | XorImm { rd, .. }
        | ShlImm { rd, .. }
        | ShrImm { rd, .. }
        | Not { rd }
        | Neg { rd } => (bit(rd), bit(rd)),
        ShlCl { rd } | ShrCl { rd } => (bit(rd) | bit(Gpr::RCX), bit(rd)),
        Or { rd, rs }
        | And { rd, rs }
        | Xor { rd, rs }
        | Add { rd, rs }
        | Sub { rd, rs }
        | Imul { rd, rs }
        | Cmove { rd, rs } => (all(&[rd, rs]), bit(rd)),
        // `bsr` of 0 leaves its destination as it was, and the lowering
        // sets it beforehand to the value for 0; the destination of `bsf`
        // of 0 is undefined, and the lowering follows it by a `cmove` or
        // tests the source first, so what it held before is never read.
        Bsr { rd, rs } | Bts { rd, rn: rs } => (all(&[rd, rs]), bit(rd)),
        Bsf { rd, rs } => (bit(rs), bit(rd)),
        CmpReg { ra, rb } | Test { ra, rb } => (all(&[ra, rb]), 0),
        CmpImm { ra, .. } | TestImm { ra, .. } | Bt { ra, .. } => (bit(ra), 0),
        Push { rs } => (bit(rs), 0),
        LockCmpxchg { base, src, .. } => (all(&[base, src, Gpr::RAX]), bit(Gpr::RAX)),
        Xchg { base, src, .. } => (all(&[base, src]), bit(src)),
        Invlpg { base } | Clflush { base } => (bit(base), 0),
        Ret => (bit(Gpr::RAX), 0),
        Jcc { .. } | Jmp { .. } | Pause | Nop | Sfence | Lfence | Mfence | Label(_) => (0, 0),
    }
}

/// `i` with every register `r` as `f(r)`; None when an index register
/// would become one x86-64 cannot scale (rsp).
fn map(i: &Insn, f: impl Fn(Gpr) -> Gpr) -> Option<Insn> {
    use Insn::*;
    let mut out = i.clone();
    let g = |r: &mut Gpr| *r = f(*r);
    let ix = |x: &mut Option<Index>| -> Option<()> {
        if let Some(v) = x {
            *x = Some(Index::maybe_from(f(v.reg()), v.scale())?);
        }
        Some(())
    };
    match &mut out {
        MovReg { rd, rs }
        | MovZx { rd, rs, .. }
        | Or { rd, rs }
        | And { rd, rs }
        | Xor { rd, rs }
        | Add { rd, rs }
        | Sub { rd, rs }
        | Imul { rd, rs }
        | Bsr { rd, rs }
        | Bts { rd, rn: rs }
        | Bsf { rd, rs }
        | Cmove { rd, rs } => {
            g(rd);
            g(rs);
        }
        CmpReg { ra, rb } | Test { ra, rb } => {
            g(ra);
            g(rb);
        }
        MovImm { rd, .. }
        | Bswap { rd, .. }
        | Rol16 { rd }
        | OrImm { rd, .. }
        | AndImm { rd, .. }
        | AddImm { rd, .. }
        | SubImm { rd, .. }
        | XorImm { rd, .. }
        | ShlImm { rd, .. }
        | ShrImm { rd, .. }
        | ShlCl { rd }
        | ShrCl { rd }
        | Not { rd }
        | Neg { rd }
        | Pop { rd } => g(rd),
        CmpImm { ra, .. } | TestImm { ra, .. } | Bt { ra, .. } => g(ra),
        Push { rs } => g(rs),
        Store {
            base, index, src, ..
        } => {
            g(base);
            g(src);
            ix(index)?;
        }
        StoreImm { base, index, .. } => {
            g(base);
            ix(index)?;
        }
        Lea {
            rd, base, index, ..
        }
        | Load {
            rd, base, index, ..
        } => {
            g(rd);
            g(base);
            ix(index)?;
        }
        LockCmpxchg { base, src, .. } | Xchg { base, src, .. } => {
            g(base);
            g(src);
        }
        Invlpg { base } | Clflush { base } => g(base),
        Jcc { .. } | Jmp { .. } | Ret | Pause | Nop | Sfence | Lfence | Mfence | Label(_) => {}
    }
    Some(out)
}

/// Registers live after each instruction; None for a flow graph the
/// code does not make (a jump to a missing label).
fn live_out(insns: &[&Insn]) -> Option<Vec<Set>> {
    let g = cfg(insns)?;
    let ud: Vec<(Set, Set)> = insns.iter().map(|i| uses_defs(i)).collect();
    let n = insns.len();
    let mut inn = vec![0 as Set; n];
    let mut out = vec![0 as Set; n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..n).rev() {
            let o = g.succ[k].iter().fold(0, |s, &t| s | inn[t]);
            let i = ud[k].0 | (o & !ud[k].1);
            if o != out[k] || i != inn[k] {
                (out[k], inn[k]) = (o, i);
                changed = true;
            }
        }
    }
    // Only the arguments (and rax, which a void return leaves as the
    // caller's) may be read before they are written.
    Some(out).filter(|_| inn.first().is_none_or(|&s| s & !AT_ENTRY == 0))
}

/// rax and the argument registers rdi, rsi, rdx, rcx, r8, r9.
const AT_ENTRY: Set = 1 | (1 << 7) | (1 << 6) | (1 << 2) | (1 << 1) | (1 << 8) | (1 << 9);

/// Caller-saved registers a callee-saved one may become, the
/// allocator's preference first; r11 (the lowering's scratch) too where
/// it is free.
const FREE: [Gpr; 9] = [
    Gpr::RAX,
    Gpr::R10,
    Gpr::R9,
    Gpr::R8,
    Gpr::RCX,
    Gpr::RDX,
    Gpr::RSI,
    Gpr::RDI,
    Gpr::R11,
];

/// Rename each of `saved` to a caller-saved register it does not
/// interfere with; the ones still needed come back.
pub fn callee_saved(mut body: Body, saved: &[Gpr]) -> (Body, Vec<Gpr>) {
    let mut keep = Vec::new();
    for &r in saved {
        match rename_one(&body, r) {
            Some(b) => body = b,
            None => keep.push(r),
        }
    }
    (body, keep)
}

fn rename_one(body: &Body, r: Gpr) -> Option<Body> {
    let insns: Vec<&Insn> = body.iter().map(|(i, _)| i).collect();
    let out = live_out(&insns)?;
    let ud: Vec<(Set, Set)> = insns.iter().map(|i| uses_defs(i)).collect();
    let clash = |f: Gpr| {
        (0..insns.len()).any(|k| {
            let (_, d) = ud[k];
            (d & bit(r) != 0 && out[k] & bit(f) != 0) || (d & bit(f) != 0 && out[k] & bit(r) != 0)
        })
    };
    let f = FREE.into_iter().find(|&f| !clash(f))?;
    let swap = |x: Gpr| if x == r { f } else { x };
    let mut renamed = Body::with_capacity(body.len());
    for (i, o) in body {
        let i = map(i, swap)?;
        // `mov %f,%f`: the copy the two registers were.
        if !matches!(i, Insn::MovReg { rd, rs } if rd == rs) {
            renamed.push((i, o.clone()));
        }
    }
    Some(renamed)
}

#[cfg(test)]
#[path = "rename_tests.rs"]
mod tests;
