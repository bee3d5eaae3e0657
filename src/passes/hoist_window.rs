//! `hoist-window`: loop-invariant work of an `acquire` (the owner value
//! `cpu + 1`, clearing the `held` status, the spin budget) is done once
//! before the load-reserve/store-conditional window, so the window holds
//! only the load-reserve, one compare, one branch and the
//! store-conditional (plus its retry branch). The naive code redoes it
//! inside the window on every retry, widening it (the e6500 TLB-miss
//! `tcd` lock). The lowering reads the `hoisted` flag this sets.

use super::locks::{mem_text, window_name};
use super::Cx;
use crate::ir::{walk_mut, MemOp, Seq, Stmt};
use crate::spec::diag::Diag;

pub fn run(cx: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    let (prog, target) = (cx.prog, cx.target);
    let mut notes = Vec::new();
    let params = seq.params.clone();
    let snapshot = seq.clone();
    walk_mut(&mut seq.body, &mut |s| {
        if let Stmt::Mem {
            id: _,
            op:
                MemOp::Acquire(crate::ir::Acquire {
                    mem,
                    value,
                    held,
                    hoisted,
                    ..
                }),
            span,
        } = s
        {
            if *hoisted {
                return;
            }
            *hoisted = true;
            let mut what = Vec::new();
            if let crate::ir::LockValue::Owner(e) = value {
                if e.as_const().is_none() {
                    what.push(format!("owner value `{}`", e.display(&params)));
                }
            }
            if held.is_some() {
                what.push("clearing the held status".to_string());
            }
            if what.is_empty() {
                what.push("nothing to move".into());
            }
            notes.push(format!(
                "hoist-window: acquire {} (line {}): {} before the {} window; inside: load-reserve, compare, branch, store-conditional",
                mem_text(&snapshot, mem),
                prog.line_of(*span),
                what.join(" and "),
                window_name(target, mem.width)
            ));
        }
    });
    seq.notes.extend(notes);
    Ok(())
}
