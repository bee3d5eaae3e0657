//! Text dump of the IR (`show --stage ir|opt`): statements with op ids and
//! spec lines, the required edges, and who placed each barrier.

use super::*;
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
    format!("{}[{:#x}] u{}", param_name(s, m.ptr), m.offset, m.width)
}

/// Parameter `i`'s name ("?" when there is none).
fn param_name(s: &Seq, i: usize) -> &str {
    s.params.get(i).map(String::as_str).unwrap_or("?")
}

/// Local `i`'s name ("?" when there is none).
fn local_name(s: &Seq, i: usize) -> &str {
    s.locals.get(i).map(String::as_str).unwrap_or("?")
}

/// A poll's condition and exit: `== VALUE limit N else BARRIER; return CODE`.
fn wait_text(s: &Seq, w: &Wait) -> String {
    format!(
        "{} {} limit {} else {}return {}",
        if w.op == PollOp::Eq { "==" } else { "!=" },
        w.value.display(&s.params),
        w.limit,
        fail_prefix(&w.fail_barrier),
        w.fail
    )
}

/// The barrier a failure return runs first, as `BARRIER; ` (or nothing).
fn fail_prefix(b: &ExitBarriers) -> String {
    b.iter().map(|b| format!("{b}; ")).collect()
}

fn lock_value(s: &Seq, v: &LockValue) -> String {
    match v {
        LockValue::Owner(e) => format!("= {}", e.display(&s.params)),
        LockValue::Bit(b) => format!("bit {b}"),
    }
}

/// A normal-memory or lock operation, without its line.
fn mem_op_text(s: &Seq, op: &MemOp) -> String {
    match op {
        MemOp::Load { local, mem } => format!("local{local} = load {}", mem_name(s, mem)),
        MemOp::Store { mem, value } => {
            format!("store {} = {}", mem_name(s, mem), value.display(&s.params))
        }
        MemOp::LoadAt {
            local,
            ptr,
            width,
            index,
        } => format!(
            "local{local} = load {}[{}] u{width}",
            param_name(s, *ptr),
            index.display(&s.params)
        ),
        MemOp::StoreAt {
            ptr,
            width,
            index,
            value,
        } => format!(
            "store {}[{}] u{width} = {}",
            param_name(s, *ptr),
            index.display(&s.params),
            value.display(&s.params)
        ),
        MemOp::Poll {
            ptr,
            width,
            index,
            wait,
        } => format!(
            "poll {}[{}] u{width} {}",
            param_name(s, *ptr),
            index.display(&s.params),
            wait_text(s, wait),
        ),
        MemOp::Acquire(Acquire {
            mem,
            value,
            held,
            status,
            limit,
            fail_barrier,
            hoisted,
        }) => format!(
            "acquire {} {}{}{}{}  [{}]",
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
        } => format!(
            "release {} {}{}  [orders earlier {}]",
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
    }
}

fn body(prog: &Program, s: &Seq, stmts: &[Stmt], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for st in stmts {
        let Some((head, inner, else_)) = block_head(prog, s, st) else {
            leaf(prog, s, st, &pad, out);
            continue;
        };
        let _ = writeln!(out, "{pad}{head}");
        body(prog, s, inner, depth + 1, out);
        if !else_.is_empty() {
            let _ = writeln!(out, "{pad}}} else {{");
            body(prog, s, else_, depth + 1, out);
        }
        let _ = writeln!(out, "{pad}}}");
    }
}

/// A statement with blocks: its opening line (ending in `{`), its block
/// (a branch's then arm) and its else arm (empty but for a branch).
/// None for other statements.
fn block_head<'a>(
    prog: &Program,
    s: &Seq,
    st: &'a Stmt,
) -> Option<(String, &'a [Stmt], &'a [Stmt])> {
    Some(match st {
        Stmt::Each { dev, body: b, .. } => (format!("each {} {{", prog.devices[*dev].name), b, &[]),
        Stmt::Range {
            local,
            start,
            size,
            step,
            body: b,
            ..
        } => (
            format!(
                "range local{local} ({}) in {}, {} step {} {{",
                local_name(s, *local),
                start.display(&s.params),
                size.display(&s.params),
                step.display(&s.params)
            ),
            b,
            &[],
        ),
        Stmt::Cover {
            set,
            mode,
            start,
            size,
            body: b,
            threshold,
            ..
        } => (
            format!(
                "cover {}, {} with {} {:?} (threshold {threshold}) {{",
                start.display(&s.params),
                size.display(&s.params),
                prog.granules[*set].name,
                mode
            ),
            b,
            &[],
        ),
        Stmt::While {
            cond,
            body: b,
            limit,
            fail,
            span,
            fail_barrier,
        } => (
            format!(
                "while {} {:?} {} limit {limit} else {}return {fail} {{  (line {})",
                cond.a.display(&s.params),
                cond.cmp,
                cond.b.display(&s.params),
                fail_prefix(fail_barrier),
                prog.line_of(*span)
            ),
            b,
            &[],
        ),
        Stmt::If {
            cond, then_, else_, ..
        } => (
            format!(
                "if {} {:?} {} {{",
                cond.a.display(&s.params),
                cond.cmp,
                cond.b.display(&s.params)
            ),
            then_,
            else_,
        ),
        _ => return None,
    })
}

/// A statement without blocks, on its line.
fn leaf(prog: &Program, s: &Seq, st: &Stmt, pad: &str, out: &mut String) {
    let _ = match st {
        Stmt::Write { access, value } => writeln!(
            out,
            "{pad}op{}: {} = {}  (line {})",
            access.id.0,
            access_name(prog, access),
            value.display(&s.params),
            prog.line_of(access.span)
        ),
        Stmt::Poll { access, mask, wait } => writeln!(
            out,
            "{pad}op{}: poll {} & {mask:#x} {}  (line {})",
            access.id.0,
            access_name(prog, access),
            wait_text(s, wait),
            prog.line_of(access.span)
        ),
        Stmt::Read { access, local } => writeln!(
            out,
            "{pad}op{}: {} = read {}  (line {})",
            access.id.0,
            local_name(s, *local),
            access_name(prog, access),
            prog.line_of(access.span)
        ),
        Stmt::Barrier {
            name,
            origin,
            covers,
        } => writeln!(
            out,
            "{pad}barrier {name}  ({})",
            barrier_note(prog, origin, covers)
        ),
        Stmt::Return { value, .. } => writeln!(out, "{pad}return {}", value.display(&s.params)),
        Stmt::Assign { local, value, span } => writeln!(
            out,
            "{pad}local{local} ({}) = {}  (line {})",
            local_name(s, *local),
            value.display(&s.params),
            prog.line_of(*span)
        ),
        Stmt::Mem { op, span, .. } => writeln!(
            out,
            "{pad}{}  (line {})",
            mem_op_text(s, op),
            prog.line_of(*span)
        ),
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
            writeln!(
                out,
                "{pad}op{}: {name} {}{after}  (line {})",
                id.0,
                ops.join(", "),
                prog.line_of(*span)
            )
        }
        Stmt::Sys { op, span } => {
            let text = match op {
                SysOp::MtSpr { spr, value } => {
                    format!("mtspr {}, {}", spr.name, value.display(&s.params))
                }
                SysOp::MfSpr { spr, local } => {
                    format!(
                        "local{local} ({}) = mfspr {}",
                        local_name(s, *local),
                        spr.name
                    )
                }
                SysOp::TlbSearch { ea } => format!("tlbsx {}", ea.display(&s.params)),
                SysOp::TlbRead => "tlbre".to_string(),
                SysOp::MfMsr { local } => {
                    format!("local{local} ({}) = mfmsr", local_name(s, *local))
                }
                SysOp::Wrteei(on) => format!("wrteei {}", u8::from(*on)),
                SysOp::Wrtee { value } => format!("wrtee {}", value.display(&s.params)),
            };
            writeln!(out, "{pad}{text}  (line {})", prog.line_of(*span))
        }
        // Statements with blocks: see `block_head`.
        Stmt::Each { .. }
        | Stmt::Range { .. }
        | Stmt::Cover { .. }
        | Stmt::While { .. }
        | Stmt::If { .. } => Ok(()),
    };
}

/// Who placed a barrier and the edges it orders.
fn barrier_note(prog: &Program, origin: &Origin, covers: &[usize]) -> String {
    let who = match origin {
        Origin::Spec(sp) => format!("from the spec, line {}", prog.line_of(*sp)),
        Origin::Pass(p) => format!("placed by {p}"),
    };
    let cov = if covers.is_empty() {
        String::new()
    } else {
        format!(", orders {}", order::edge_names(covers))
    };
    format!("{who}{cov}")
}

/// How a failure return completes pending invalidations, if it must.
fn fail_note(b: &ExitBarriers) -> String {
    if b.is_empty() {
        return String::new();
    }
    format!(" (failure: {}return)", fail_prefix(b))
}
