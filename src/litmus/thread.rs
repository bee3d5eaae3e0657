//! The sequence's thread: a trace as named locations, small values and
//! the executed barriers and invalidations, then written out in one
//! dialect for one test.

use crate::ir::OpId;
use crate::isa::litmus::{Dialect, Lowered, Side};
use crate::verify::trace::{Kind, Trace};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(super) struct Loc {
    pub name: String,
}

#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Stores get values 1, 2, ... in execution order: each store is told
    /// apart by its value, which is all a test needs of it.
    Store {
        loc: usize,
        val: u64,
    },
    Load {
        loc: usize,
    },
    Barrier(String),
    Invalidate {
        text: String,
        operands: Vec<u64>,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Steps {
    pub locs: Vec<Loc>,
    /// In execution order, each with the operation it came from.
    pub steps: Vec<(Step, Option<OpId>)>,
}

impl Steps {
    pub fn loc_of(&self, i: usize) -> Option<usize> {
        match self.steps[i].0 {
            Step::Store { loc, .. } | Step::Load { loc } => Some(loc),
            _ => None,
        }
    }
    /// Store values at `loc` at steps before / from `i` on.
    pub fn stores_at(&self, loc: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.steps
            .iter()
            .enumerate()
            .filter_map(move |(k, (s, _))| match s {
                Step::Store { loc: l, val } if *l == loc => Some((k, *val)),
                _ => None,
            })
    }
    fn intern(&mut self, name: String) -> usize {
        if let Some(i) = self.locs.iter().position(|l| l.name == name) {
            return i;
        }
        self.locs.push(Loc { name });
        self.locs.len() - 1
    }
}

/// A location name herd7 accepts, from a device register or a normal
/// memory slot (`cmdq[0x40]` -> `cmdq_40`).
fn loc_name(s: &str) -> String {
    let mut n: String = s
        .to_ascii_lowercase()
        .replace("0x", "")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    while n.contains("__") {
        n = n.replace("__", "_");
    }
    let n = n.trim_matches('_').to_string();
    if n.starts_with(|c: char| c.is_ascii_alphabetic()) {
        n
    } else {
        format!("m_{n}")
    }
}

/// The trace as steps, with the caller's earlier store (location
/// `caller`, operation ENTRY) first and a store to `done` (operation
/// EXIT, the return made visible) last.
pub(super) fn steps(t: &Trace) -> Steps {
    let mut s = Steps {
        locs: Vec::new(),
        steps: Vec::new(),
    };
    // Each store writes a value of its own: 1, 2, ... in program order.
    let mut val = 0u64;
    let mut store = |s: &mut Steps, loc: String| {
        val += 1;
        Step::Store {
            loc: s.intern(loc),
            val,
        }
    };
    let caller = store(&mut s, "caller".into());
    s.steps.push((caller, Some(OpId::ENTRY)));
    for e in &t.events {
        let loc = match (&e.device, e.instance, &e.reg, &e.memory) {
            (Some(d), Some(i), Some(r), _) => Some(format!("{d}{i}_{r}")),
            (_, _, _, Some(m)) => Some(m.clone()),
            _ => None,
        };
        let step = match (e.kind, loc) {
            (Kind::Store, Some(n)) => store(&mut s, loc_name(&n)),
            (Kind::Load, Some(n)) => Step::Load {
                loc: s.intern(loc_name(&n)),
            },
            (Kind::Barrier, _) => Step::Barrier(e.insn.clone()),
            (Kind::Invalidate, _) => Step::Invalidate {
                text: e.insn.clone(),
                operands: e.operands.clone(),
            },
            // An access the trace could not place: not in the test.
            _ => continue,
        };
        s.steps.push((step, e.op));
    }
    let done = store(&mut s, "done".into());
    s.steps.push((done, Some(OpId::EXIT)));
    s
}

/// Registers of one thread, handed out in the dialect's order.
pub(super) struct Regs {
    free: std::vec::IntoIter<&'static str>,
}

impl Regs {
    pub fn new(d: &dyn Dialect) -> Regs {
        Regs {
            free: d.regs().to_vec().into_iter(),
        }
    }
    pub fn take(&mut self) -> Result<&'static str, String> {
        self.free.next().ok_or_else(|| {
            "the test needs more registers than the architecture has: run it with arguments that touch fewer locations".to_string()
        })
    }
}

/// Writes an executed invalidation (text, operand values) as herd7
/// instructions, taking registers and adding initial values as needed.
pub(super) type TlbiFn<'a> =
    dyn Fn(&str, &[u64], &mut Regs, &mut Vec<String>) -> Result<Vec<String>, String> + 'a;

/// What P0 of one test looks like besides the trace itself.
pub(super) struct Ctx<'a> {
    pub d: &'a dyn Dialect,
    pub from: Side,
    pub to: Side,
    /// Steps whose loaded value the `exists` clause names.
    pub watch: Vec<usize>,
    /// The only accesses written (the two a test checks, or its flag):
    /// every other access is left out. herd7 enumerates every value each
    /// load may read and every order of the stores to one location, so a
    /// whole command-queue run does not finish; and leaving an access out
    /// only removes orderings that go through it, so a `Never` without it
    /// holds with it.
    pub keep: Vec<usize>,
    /// How an invalidation is written; `None` leaves it out (a test of
    /// memory ordering, where it is no access).
    pub tlbi: Option<&'a TlbiFn<'a>>,
}

/// P0 written out: its instructions, the registers the watched loads
/// land in, and the notes on what was left out or respelled.
pub(super) struct Thread {
    pub insns: Vec<String>,
    pub watched: BTreeMap<usize, &'static str>,
}

pub(super) fn render_p0(
    ctx: &Ctx<'_>,
    s: &Steps,
    regs: &mut Regs,
    addr: &mut BTreeMap<usize, &'static str>,
    init: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<Thread, String> {
    let d = ctx.d;
    let mut insns = Vec::new();
    let mut watched = BTreeMap::new();
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    let mut respelled: BTreeMap<String, usize> = BTreeMap::new();
    let mut tmp: Option<&'static str> = None;
    let mut sink: Option<&'static str> = None;
    let mut place =
        |loc: usize, regs: &mut Regs, init: &mut Vec<String>| -> Result<String, String> {
            if !d.addr_in_reg() {
                return Ok(s.locs[loc].name.clone());
            }
            if let Some(r) = addr.get(&loc) {
                return Ok(r.to_string());
            }
            let r = regs.take()?;
            init.push(format!("0:{r}={}", s.locs[loc].name));
            addr.insert(loc, r);
            Ok(r.to_string())
        };
    let mut dropped = 0usize;
    for (k, (step, _)) in s.steps.iter().enumerate() {
        if matches!(step, Step::Store { .. } | Step::Load { .. }) && !ctx.keep.contains(&k) {
            dropped += 1;
            continue;
        }
        match step {
            Step::Store { loc, val } => {
                let a = place(*loc, regs, init)?;
                let t = match tmp {
                    Some(t) => t,
                    None => *tmp.insert(regs.take()?),
                };
                insns.extend(d.store(*val, t, &a));
            }
            Step::Load { loc } => {
                let a = place(*loc, regs, init)?;
                let dst = if ctx.watch.contains(&k) {
                    let r = regs.take()?;
                    watched.insert(k, r);
                    r
                } else {
                    match sink {
                        Some(r) => r,
                        None => *sink.insert(regs.take()?),
                    }
                };
                insns.extend(d.load(dst, &a));
            }
            Step::Barrier(text) => match d.barrier(text, ctx.from, ctx.to) {
                Lowered::Insns(v, note) => {
                    insns.extend(v);
                    if let Some(n) = note {
                        *respelled.entry(n).or_default() += 1;
                    }
                }
                Lowered::Dropped(why) => *left.entry(format!("`{text}`: {why}")).or_default() += 1,
            },
            Step::Invalidate { text, operands } => match ctx.tlbi {
                Some(f) => insns.extend(f(text, operands, regs, init)?),
                None => {
                    let mnem = text.split(" = ").next().unwrap_or(text);
                    *left
                        .entry(format!(
                            "`{mnem}`: an invalidation, not a memory access in this test (the VMSA tests check TLB maintenance where herd7 models it)"
                        ))
                        .or_default() += 1;
                }
            },
        }
    }
    if dropped > 0 {
        notes.push(format!(
            "left out: the {dropped} other accesses of the run (values and orderings through them only constrain outcomes further)"
        ));
    }
    for (n, k) in respelled {
        notes.push(if k > 1 { format!("{n} (x{k})") } else { n });
    }
    for (n, k) in left {
        notes.push(if k > 1 {
            format!("left out (x{k}) {n}")
        } else {
            format!("left out {n}")
        });
    }
    Ok(Thread { insns, watched })
}
