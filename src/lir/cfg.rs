//! The control flow of a LIR function, for the passes that follow it
//! (register allocation's liveness, constants along paths).

use super::{Func, Inst, LabelId, VReg};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The registers live on leaving each basic block of `f` (`starts` and
/// `succs` from [`basic_blocks`]): read on some path from there before
/// being written. Backward data flow, loops included.
pub fn live_out(f: &Func, starts: &[usize], succs: &[Vec<usize>]) -> Vec<HashSet<VReg>> {
    let insts = &f.insts;
    let len = insts.len();
    let nb = starts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    // Block summaries: read before written (gen), written (kill).
    let mut gen: Vec<HashSet<VReg>> = vec![HashSet::default(); nb];
    let mut kill: Vec<HashSet<VReg>> = vec![HashSet::default(); nb];
    for b in 0..nb {
        for (inst, _) in &insts[starts[b]..end_of(b)] {
            inst.each_use(|v| {
                if !kill[b].contains(&v) {
                    gen[b].insert(v);
                }
            });
            if let Some(d) = inst.def() {
                kill[b].insert(d);
            }
        }
    }
    let mut live_in: Vec<HashSet<VReg>> = gen.clone();
    let mut live_out: Vec<HashSet<VReg>> = vec![HashSet::default(); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut out: HashSet<VReg> = HashSet::default();
            for &t in &succs[b] {
                out.extend(live_in[t].iter().copied());
            }
            if out.len() != live_out[b].len() {
                let add: Vec<VReg> = out
                    .iter()
                    .copied()
                    .filter(|v| !kill[b].contains(v) && !live_in[b].contains(v))
                    .collect();
                if !add.is_empty() {
                    live_in[b].extend(add);
                }
                live_out[b] = out;
                changed = true;
            }
        }
    }
    live_out
}

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
