//! The ordering graph: which accesses the hardware needs ordered.
//!
//! Only *required* orderings are edges. Program order among accesses to the
//! same device instance or the same register is an emission rule the passes
//! keep, not an edge; an edge asks for a barrier unless the target's memory
//! model already orders the two classes.

use super::*;
use crate::spec::ast::Scope;
use serde::Serialize;

/// Access classes of the ordering model (DESIGN.md "Ordering model").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
pub enum Class {
    DevStore,
    DevLoad,
    NormalStore,
    NormalLoad,
    TlbInvalidate,
    InvalidateCompletion,
    ContextSync,
}

impl Class {
    pub const ALL: [Class; 7] = [
        Class::DevStore,
        Class::DevLoad,
        Class::NormalStore,
        Class::NormalLoad,
        Class::TlbInvalidate,
        Class::InvalidateCompletion,
        Class::ContextSync,
    ];
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: OpId,
    pub to: OpId,
    pub from_class: Class,
    pub to_class: Class,
    /// Both ends on this device (for per-peripheral ordering rules).
    pub dev: Option<DevId>,
    pub scope: Scope,
    /// The `require` that asked for it.
    pub span: Span,
}

pub fn class_of(s: &Stmt) -> Option<Class> {
    match s {
        Stmt::Write { .. } => Some(Class::DevStore),
        Stmt::Poll { .. } => Some(Class::DevLoad),
        _ => None,
    }
}

/// Accesses in program order (a loop body once).
fn accesses(body: &[Stmt]) -> Vec<(&Access, Class)> {
    let mut out = Vec::new();
    walk(body, &mut |s| {
        if let (Some(a), Some(c)) = (s.access(), class_of(s)) {
            out.push((a, c));
        }
    });
    out
}

pub fn required_edges(devices: &[Device], body: &[Stmt]) -> Vec<Edge> {
    let acc = accesses(body);
    let mut edges = Vec::new();
    for (i, (a, ca)) in acc.iter().enumerate() {
        for (b, cb) in acc.iter().skip(i + 1) {
            if a.dev != b.dev {
                continue;
            }
            for r in &devices[a.dev].requires {
                if r.before == a.reg && r.after == b.reg {
                    let e = Edge {
                        from: a.id,
                        to: b.id,
                        from_class: *ca,
                        to_class: *cb,
                        dev: Some(a.dev),
                        scope: r.scope,
                        span: r.span,
                    };
                    if !edges.contains(&e) {
                        edges.push(e);
                    }
                }
            }
        }
    }
    edges
}
