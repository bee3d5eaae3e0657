//! `naive-barriers`: one barrier right before the later access of every
//! required edge, in program order (the hand-written, pre-optimization
//! code; `--passes none`), plus a barrier before each reload of a location
//! already read, then the early exits completed as the normal return.

use super::Cx;
use crate::ir::{BarrierName, MemOp, MemRef, Origin, Seq, Stmt};
use crate::isa::barriers::Barrier;
use crate::isa::{Machine, Target};
use crate::spec::diag::Diag;

pub fn run(cx: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    super::barriers::place_naive(cx.prog, seq, cx.target)?;
    reload_barriers(seq, cx.target, cx.prog.machine);
    super::exits::run(seq, cx.target, cx.prog.machine);
    Ok(())
}

/// A reload of a location already read in the same block gets a barrier
/// ordering it after the first read (the pre-patch fix for two reads of
/// `esel_next` returning different values: "add memory barriers"). Only
/// emitted where the target has one.
fn reload_barriers(seq: &mut Seq, target: Target, machine: Machine) {
    let Some(name) = target.backend().reload_barrier(machine) else {
        return;
    };
    naive_block(&mut seq.body, name);
}

fn naive_block(body: &mut Vec<Stmt>, name: Barrier) {
    let mut seen: Vec<MemRef> = Vec::new();
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s {
            Stmt::Mem {
                op: MemOp::Load { mem, .. },
                ..
            } => {
                if seen.contains(mem) {
                    out.push(Stmt::Barrier {
                        name: BarrierName::Kind(name),
                        origin: Origin::Pass("naive-barriers"),
                        covers: Vec::new(),
                    });
                } else {
                    seen.push(*mem);
                }
            }
            Stmt::Each { body, .. } | Stmt::Range { body, .. } | Stmt::While { body, .. } => {
                naive_block(body, name)
            }
            Stmt::If { then_, else_, .. } => {
                naive_block(then_, name);
                naive_block(else_, name);
            }
            _ => {}
        }
        out.push(s);
    }
    *body = out;
}
