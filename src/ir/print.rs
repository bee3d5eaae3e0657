//! Text dump of the IR (`show --stage ir|opt`): statements with op ids and
//! spec lines, the required edges, and who placed each barrier.

use super::*;
use crate::spec::diag::Span;
use std::fmt::Write;

pub fn program(prog: &Program) -> String {
    let mut out = String::new();
    for d in &prog.devices {
        let _ = writeln!(
            out,
            "device {} ({:?}, {:?})",
            d.name, d.instances, d.mapping
        );
        for r in &d.regs {
            let _ = writeln!(
                out,
                "  reg {} @{:#x} u{} {:?}",
                r.name, r.offset, r.width, r.endian
            );
        }
        for f in &d.fields {
            let _ = writeln!(
                out,
                "  field {}.{} shift {} width {} mask {:#018x}",
                d.regs[f.reg].name,
                f.name,
                f.shift,
                f.width,
                f.mask()
            );
        }
        for r in &d.requires {
            let _ = writeln!(
                out,
                "  require {} before {} ({:?})",
                d.regs[r.before].name, d.regs[r.after].name, r.scope
            );
        }
    }
    for s in &prog.seqs {
        out.push('\n');
        seq(prog, s, &mut out);
    }
    out
}

fn access_name(prog: &Program, a: &Access) -> String {
    let d = &prog.devices[a.dev];
    format!("{}.{}", d.name, d.regs[a.reg].name)
}

pub fn seq(prog: &Program, s: &Seq, out: &mut String) {
    let _ = writeln!(out, "seq {}({})", s.name, s.params.join(", "));
    if !s.edges.is_empty() {
        let _ = writeln!(out, "  required orderings:");
        for (i, e) in s.edges.iter().enumerate() {
            let name = |o: OpId| match o {
                OpId::ENTRY => "entry (caller's stores)".to_string(),
                OpId::EXIT => "exit".to_string(),
                o => format!("op{}", o.0),
            };
            let _ = writeln!(
                out,
                "    e{i}: {} -> {}  {:?} -> {:?}, {:?} (line {})",
                name(e.from),
                name(e.to),
                e.from_class,
                e.to_class,
                e.scope,
                prog.line_of(e.span)
            );
        }
    }
    for n in &s.notes {
        let _ = writeln!(out, "  pass {n}");
    }
    body(prog, s, &s.body, 1, out);
}

fn mem_name(s: &Seq, m: &MemRef) -> String {
    format!(
        "{}[{:#x}] u{}",
        s.params.get(m.ptr).map(String::as_str).unwrap_or("?"),
        m.offset,
        m.width
    )
}

fn lock_value(s: &Seq, v: &LockValue) -> String {
    match v {
        LockValue::Owner(e) => format!("= {}", e.display(&s.params)),
        LockValue::Bit(b) => format!("bit {b}"),
    }
}

fn mem_op(prog: &Program, s: &Seq, op: &MemOp, span: Span, pad: &str, out: &mut String) {
    let line = prog.line_of(span);
    let _ =
        match op {
            MemOp::Load { local, mem } => writeln!(
                out,
                "{pad}local{local} = load {}  (line {line})",
                mem_name(s, mem)
            ),
            MemOp::Store { mem, value } => writeln!(
                out,
                "{pad}store {} = {}  (line {line})",
                mem_name(s, mem),
                value.display(&s.params)
            ),
            MemOp::LoadAt {
                local,
                ptr,
                width,
                index,
            } => writeln!(
                out,
                "{pad}local{local} = load {}[{}] u{width}  (line {line})",
                s.params.get(*ptr).map(String::as_str).unwrap_or("?"),
                index.display(&s.params)
            ),
            MemOp::StoreAt {
                ptr,
                width,
                index,
                value,
            } => writeln!(
                out,
                "{pad}store {}[{}] u{width} = {}  (line {line})",
                s.params.get(*ptr).map(String::as_str).unwrap_or("?"),
                index.display(&s.params),
                value.display(&s.params)
            ),
            MemOp::Poll {
                ptr,
                width,
                index,
                op,
                value,
                limit,
                fail,
                fail_barrier,
            } => {
                writeln!(
            out,
            "{pad}poll {}[{}] u{width} {} {} limit {limit} else {}return {fail}  (line {line})",
            s.params.get(*ptr).map(String::as_str).unwrap_or("?"),
            index.display(&s.params),
            if *op == crate::ir::PollOp::Eq { "==" } else { "!=" },
            value.display(&s.params),
            fail_barrier
                .as_ref()
                .map(|b| format!("{b}; "))
                .unwrap_or_default(),
        )
            }
            MemOp::Acquire {
                mem,
                value,
                held,
                status,
                limit,
                fail_barrier,
                hoisted,
            } => writeln!(
                out,
                "{pad}acquire {} {}{}{}{}  [{}]  (line {line})",
                mem_name(s, mem),
                lock_value(s, value),
                match (held, status) {
                    (Some(h), Some(l)) => format!(" held -> local{l} = {h}"),
                    _ => String::new(),
                },
                match limit {
                    Some((n, c)) => format!(" limit {n} else return {c}"),
                    None => String::new(),
                },
                fail_note(fail_barrier),
                if *hoisted {
                    "invariant work before the reservation window"
                } else {
                    "invariant work inside the reservation window"
                }
            ),
            MemOp::Release {
                mem,
                value,
                cond,
                order,
            } => writeln!(
                out,
                "{pad}release {} {}{}  [orders earlier {}]  (line {line})",
                mem_name(s, mem),
                lock_value(s, value),
                match cond {
                    Some(c) => format!(" if {} == 0", c.display(&s.params)),
                    None => String::new(),
                },
                match order {
                    ReleaseOrder::Full => "loads and stores",
                    ReleaseOrder::StoresOnly => "stores (loads by data dependency)",
                    ReleaseOrder::Device => "loads and stores, device accesses included",
                }
            ),
        };
}

fn body(prog: &Program, s: &Seq, stmts: &[Stmt], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for st in stmts {
        match st {
            Stmt::Each { dev, body: b, .. } => {
                let _ = writeln!(out, "{pad}each {} {{", prog.devices[*dev].name);
                body(prog, s, b, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Write { access, value } => {
                let _ = writeln!(
                    out,
                    "{pad}op{}: {} = {}  (line {})",
                    access.id.0,
                    access_name(prog, access),
                    value.display(&s.params),
                    prog.line_of(access.span)
                );
            }
            Stmt::Poll {
                access,
                mask,
                op,
                value,
                limit,
                fail,
                fail_barrier,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}op{}: poll {} & {mask:#x} {} {} limit {limit} else {}return {fail}  (line {})",
                    access.id.0,
                    access_name(prog, access),
                    if *op == PollOp::Eq { "==" } else { "!=" },
                    value.display(&s.params),
                    fail_barrier.as_ref().map(|b| format!("{b}; ")).unwrap_or_default(),
                    prog.line_of(access.span)
                );
            }
            Stmt::Read { access, local } => {
                let _ = writeln!(
                    out,
                    "{pad}op{}: {} = read {}  (line {})",
                    access.id.0,
                    s.locals.get(*local).map_or("?", String::as_str),
                    access_name(prog, access),
                    prog.line_of(access.span)
                );
            }
            Stmt::Barrier {
                name,
                origin,
                covers,
            } => {
                let who = match origin {
                    Origin::Spec(sp) => format!("from the spec, line {}", prog.line_of(*sp)),
                    Origin::Pass(p) => format!("placed by {p}"),
                };
                let cov = if covers.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", orders {}",
                        covers
                            .iter()
                            .map(|c| format!("e{c}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let _ = writeln!(out, "{pad}barrier {name}  ({who}{cov})");
            }
            Stmt::Return { value, .. } => {
                let _ = writeln!(out, "{pad}return {}", value.display(&s.params));
            }
            Stmt::Range {
                local,
                start,
                size,
                step,
                body: b,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "{pad}range local{local} ({}) in {}, {} step {} {{",
                    s.locals.get(*local).map(String::as_str).unwrap_or("?"),
                    start.display(&s.params),
                    size.display(&s.params),
                    step.display(&s.params)
                );
                body(prog, s, b, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Cover {
                set,
                mode,
                start,
                size,
                body: b,
                threshold,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "{pad}cover {}, {} with {} {:?} (threshold {threshold}) {{",
                    start.display(&s.params),
                    size.display(&s.params),
                    prog.granules[*set].name,
                    mode
                );
                body(prog, s, b, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Assign { local, value, span } => {
                let _ = writeln!(
                    out,
                    "{pad}local{local} ({}) = {}  (line {})",
                    s.locals.get(*local).map(String::as_str).unwrap_or("?"),
                    value.display(&s.params),
                    prog.line_of(*span)
                );
            }
            Stmt::While {
                cond,
                body: b,
                limit,
                fail,
                span,
                fail_barrier,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}while {} {:?} {} limit {limit} else {}return {fail} {{  (line {})",
                    cond.a.display(&s.params),
                    cond.cmp,
                    cond.b.display(&s.params),
                    fail_barrier
                        .as_ref()
                        .map(|b| format!("{b}; "))
                        .unwrap_or_default(),
                    prog.line_of(*span)
                );
                body(prog, s, b, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If {
                cond,
                then_,
                else_,
                rare: _,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}if {} {:?} {} {{",
                    cond.a.display(&s.params),
                    cond.cmp,
                    cond.b.display(&s.params)
                );
                body(prog, s, then_, depth + 1, out);
                if !else_.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    body(prog, s, else_, depth + 1, out);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Mem { op, span, .. } => mem_op(prog, s, op, *span, &pad, out),
            Stmt::Invalidate {
                id,
                name,
                operands,
                after,
                span,
            } => {
                let ops: Vec<String> = operands
                    .iter()
                    .map(|o| o.display(&s.params).to_string())
                    .collect();
                let after = if after.is_some() {
                    " after invalidates"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "{pad}op{}: {name} {}{after}  (line {})",
                    id.0,
                    ops.join(", "),
                    prog.line_of(*span)
                );
            }
        }
    }
}

/// How a failure return completes pending invalidations, if it must.
fn fail_note(b: &Option<String>) -> String {
    b.as_ref()
        .map(|b| format!(" (failure: {b}; return)"))
        .unwrap_or_default()
}
