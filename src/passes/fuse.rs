//! Loop fusion: re-join adjacent loops split from the same source loop when
//! no barrier ended up between them (fewer loop heads, same order per
//! instance as the source).

use super::Cx;
use crate::ir::{Seq, Stmt};
use crate::spec::diag::Diag;

pub fn run(_: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    let body = std::mem::take(&mut seq.body);
    seq.body = block(body);
    Ok(())
}

fn block(body: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
    for s in body {
        let s = match s {
            s @ Stmt::If { .. } => s.map_blocks(&mut block),
            other => other,
        };
        if let Stmt::Each {
            dev,
            body: inner,
            group,
            ..
        } = &s
        {
            if let Some(Stmt::Each {
                dev: pdev,
                body: pbody,
                group: pgroup,
                ..
            }) = out.last_mut()
            {
                if pdev == dev && pgroup == group {
                    pbody.extend(inner.iter().cloned());
                    continue;
                }
            }
        }
        out.push(s);
    }
    out
}
