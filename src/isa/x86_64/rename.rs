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
fn uses_defs(i: &Insn) -> (Set, Set) {
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
        // The destination of a scan of 0 is undefined: the lowering
        // follows every scan by a `cmove` for 0 or tests the source first,
        // so what it held before is never read.
        Bsr { rd, rs } | Bsf { rd, rs } => (bit(rs), bit(rd)),
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

/// `i` with every register `r` as `f(r)`.
fn map(i: &Insn, f: impl Fn(Gpr) -> Gpr) -> Option<Insn> {
    use Insn::*;
    let ix = |x: Option<Index>| match x {
        None => Some(None),
        Some(x) => Index::maybe_from(f(x.reg()), x.scale()).map(Some),
    };
    Some(match i.clone() {
        MovImm { rd, imm } => MovImm { rd: f(rd), imm },
        MovReg { rd, rs } => MovReg {
            rd: f(rd),
            rs: f(rs),
        },
        MovZx { size, rd, rs } => MovZx {
            size,
            rd: f(rd),
            rs: f(rs),
        },
        Store {
            size,
            base,
            index,
            disp,
            src,
        } => Store {
            size,
            base: f(base),
            index: ix(index)?,
            disp,
            src: f(src),
        },
        StoreImm {
            size,
            base,
            index,
            disp,
            imm,
        } => StoreImm {
            size,
            base: f(base),
            index: ix(index)?,
            disp,
            imm,
        },
        Lea {
            rd,
            base,
            index,
            disp,
        } => Lea {
            rd: f(rd),
            base: f(base),
            index: ix(index)?,
            disp,
        },
        Load {
            size,
            rd,
            base,
            index,
            disp,
        } => Load {
            size,
            rd: f(rd),
            base: f(base),
            index: ix(index)?,
            disp,
        },
        Bswap { size, rd } => Bswap { size, rd: f(rd) },
        Rol16 { rd } => Rol16 { rd: f(rd) },
        Or { rd, rs } => Or {
            rd: f(rd),
            rs: f(rs),
        },
        And { rd, rs } => And {
            rd: f(rd),
            rs: f(rs),
        },
        Xor { rd, rs } => Xor {
            rd: f(rd),
            rs: f(rs),
        },
        Add { rd, rs } => Add {
            rd: f(rd),
            rs: f(rs),
        },
        Sub { rd, rs } => Sub {
            rd: f(rd),
            rs: f(rs),
        },
        Imul { rd, rs } => Imul {
            rd: f(rd),
            rs: f(rs),
        },
        OrImm { rd, imm } => OrImm { rd: f(rd), imm },
        AndImm { rd, imm } => AndImm { rd: f(rd), imm },
        AddImm { rd, imm } => AddImm { rd: f(rd), imm },
        SubImm { rd, imm } => SubImm { rd: f(rd), imm },
        XorImm { rd, imm } => XorImm { rd: f(rd), imm },
        ShlImm { rd, sh } => ShlImm { rd: f(rd), sh },
        ShrImm { rd, sh } => ShrImm { rd: f(rd), sh },
        ShlCl { rd } => ShlCl { rd: f(rd) },
        ShrCl { rd } => ShrCl { rd: f(rd) },
        Not { rd } => Not { rd: f(rd) },
        Neg { rd } => Neg { rd: f(rd) },
        Bsr { rd, rs } => Bsr {
            rd: f(rd),
            rs: f(rs),
        },
        Bsf { rd, rs } => Bsf {
            rd: f(rd),
            rs: f(rs),
        },
        Cmove { rd, rs } => Cmove {
            rd: f(rd),
            rs: f(rs),
        },
        CmpReg { ra, rb } => CmpReg {
            ra: f(ra),
            rb: f(rb),
        },
        CmpImm { ra, imm } => CmpImm { ra: f(ra), imm },
        Test { ra, rb } => Test {
            ra: f(ra),
            rb: f(rb),
        },
        TestImm { ra, imm } => TestImm { ra: f(ra), imm },
        Bt { ra, bit } => Bt { ra: f(ra), bit },
        Push { rs } => Push { rs: f(rs) },
        Pop { rd } => Pop { rd: f(rd) },
        LockCmpxchg {
            size,
            base,
            disp,
            src,
        } => LockCmpxchg {
            size,
            base: f(base),
            disp,
            src: f(src),
        },
        Xchg {
            size,
            base,
            disp,
            src,
        } => Xchg {
            size,
            base: f(base),
            disp,
            src: f(src),
        },
        Invlpg { base } => Invlpg { base: f(base) },
        Clflush { base } => Clflush { base: f(base) },
        other @ (Jcc { .. }
        | Jmp { .. }
        | Ret
        | Pause
        | Nop
        | Sfence
        | Lfence
        | Mfence
        | Label(_)) => other,
    })
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
