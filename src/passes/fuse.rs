//! Loop fusion: re-join adjacent loops split from the same source loop when
//! no barrier ended up between them (fewer loop heads, same order per
//! instance as the source).

use crate::ir::{Seq, Stmt};

pub fn run(seq: &mut Seq) {
    let body = std::mem::take(&mut seq.body);
    let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
    for s in body {
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
    seq.body = out;
}
