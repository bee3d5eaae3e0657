//! The control flow of a LIR function, for the passes that follow it
//! (register allocation's liveness, constants along paths).

use super::{Func, Inst, LabelId};
use rustc_hash::FxHashMap as HashMap;

/// The basic blocks of `f`: where each starts (a label starts one; a
/// branch, jump or return ends one) and the blocks control may go to
/// next from each.
pub fn basic_blocks(f: &Func) -> (Vec<usize>, Vec<Vec<usize>>) {
    let insts = &f.insts;
    let len = insts.len();
    let mut label_at: HashMap<LabelId, usize> = HashMap::default();
    for (i, (inst, _)) in insts.iter().enumerate() {
        if let Inst::Label(l) = inst {
            label_at.insert(*l, i);
        }
    }
    let mut starts = vec![0usize];
    for (i, (inst, _)) in insts.iter().enumerate() {
        if matches!(inst, Inst::Label(_)) && i > 0 {
            starts.push(i);
        }
        if (inst.branch_target().is_some() || matches!(inst, Inst::Ret { .. })) && i + 1 < len {
            starts.push(i + 1);
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts.retain(|&s| s < len);
    let block_of = |i: usize| starts.partition_point(|&s| s <= i) - 1;
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    let succs = (0..starts.len())
        .map(|b| {
            let last = end_of(b) - 1;
            let inst = &insts[last].0;
            let mut out = Vec::new();
            if let Some(&t) = inst.branch_target().and_then(|t| label_at.get(&t)) {
                out.push(block_of(t));
            }
            let falls = !matches!(inst, Inst::Ret { .. } | Inst::Jump(_));
            if falls && end_of(b) < len {
                out.push(b + 1);
            }
            out
        })
        .collect();
    (starts, succs)
}
