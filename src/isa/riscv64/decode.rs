//! What an executed `sfence.vma`/`sinval.vma`'s operands say, for `trace`
//! (RISC-V privileged ISA: rs1 the virtual address, rs2 the ASID).

pub fn invalidation(insn: &str, operands: &[u64]) -> Option<String> {
    let m = insn.split_whitespace().next()?;
    if !matches!(
        m,
        "sfence.vma" | "sinval.vma" | "hinval.vvma" | "hinval.gvma"
    ) {
        return None;
    }
    let regs: Vec<&str> = insn
        .split_once(' ')
        .map(|(_, r)| r.split(',').map(str::trim).collect())
        .unwrap_or_default();
    // x0 operands are not in `operands`: the trace lists register values.
    let mut vals = operands.iter();
    let mut next = |r: Option<&&str>| match r {
        Some(&"zero") | Some(&"x0") | None => None,
        Some(_) => vals.next().copied(),
    };
    let va = next(regs.first());
    let asid = next(regs.get(1));
    Some(match (va, asid) {
        (Some(v), Some(a)) => format!("va={v:#x} asid={a:#x}"),
        (Some(v), None) => format!("va={v:#x} every asid"),
        (None, Some(a)) => format!("every va, asid={a:#x}"),
        (None, None) => "every va, every asid".to_string(),
    })
}
