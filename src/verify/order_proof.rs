//! The static ordering proof: every required ordering holds on every path
//! of the emitted machine code, whatever the inputs.
//!
//! The emulator checks (`order_check`) see only the paths the worlds run,
//! and the ordering graph (`ir::order`) is what placed the barriers, so a
//! hole in it is a hole in both. This proof shares neither: it reads the
//! spec's rules themselves (device `require`s, `require stores before`,
//! the sequence's `order`s, `after invalidates`), builds the control-flow
//! graph from capstone's decoding of the bytes, and runs a forward
//! data-flow fixpoint over it. The state at each instruction is, per rule
//! and per pair of classes the rule relates, whether an access of the
//! earlier kind may have been issued and not yet ordered (with the first
//! such instruction as a witness). An access of the later kind that meets
//! such a pending access, on any path, with no barrier between that orders
//! the pair on this target, is a violation; so is a return with an
//! invalidation pending where the sequence orders invalidations before
//! its return.
//!
//! What it takes from us: which instruction performs which spec access
//! (each line's origin), the target's barrier table (what a barrier
//! orders: cited from the architecture manuals) and which pairs the
//! target orders with no barrier. Per-instance requirements need one
//! more fact, from the spec's structure: an access that reaches an
//! earlier one of the same `each` over its device (and no other loop
//! around both) does so on the next iteration, another instance, so the
//! pair needs no barrier. The state tracks which access is pending for
//! those rules; everything else is as if for any instance.

use crate::codegen::Compiled;
use crate::ir::order::{class_of, Class, Edge};
use crate::ir::{DevId, MemOp, OpId, Program, RegId, Seq, Stmt};
use crate::isa::barriers::{self, BarrierKind};
use crate::isa::mach::{Flow, InsnClass, MachFunc};
use crate::isa::Target;
use crate::spec::ast::Scope;
use crate::spec::diag::Span;
use rustc_hash::FxHashMap;

/// Which accesses a rule's earlier side is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum From {
    Reg(DevId, RegId),
    NormalStore,
    Invalidation,
}

/// Which accesses (or the return) a rule's later side is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum To {
    Reg(DevId, RegId),
    /// Stores to a register (`require stores before REG` starts nothing
    /// with a read).
    RegStore(DevId, RegId),
    /// TLB invalidations: what reads the page tables.
    PageTableReader,
    AnyInvalidation,
    Op(OpId),
    Return,
}

/// One ordering the spec requires.
#[derive(Clone, Debug)]
struct Rule {
    from: From,
    to: To,
    /// The later classes the pending state is kept for: a barrier may
    /// order an earlier access before some of them and not others.
    tos: Vec<Class>,
    dev: Option<DevId>,
    scope: Scope,
    span: Span,
    /// The caller's earlier stores count (pending at entry).
    from_caller: bool,
}

/// The spec's orderings for one sequence.
fn rules(prog: &Program, seq: &Seq) -> Vec<Rule> {
    let mut out = Vec::new();
    for &d in &seq.devices {
        for r in &prog.devices[d].requires {
            out.push(Rule {
                from: From::Reg(d, r.before),
                to: To::Reg(d, r.after),
                tos: vec![Class::DevStore, Class::DevLoad],
                dev: Some(d),
                scope: r.scope,
                span: r.span,
                from_caller: false,
            });
        }
        for &(reg, span) in &prog.devices[d].after_stores {
            out.push(Rule {
                from: From::NormalStore,
                to: To::RegStore(d, reg),
                tos: vec![Class::DevStore],
                dev: None,
                scope: Scope::AnyInstance,
                span,
                from_caller: true,
            });
        }
    }
    for (before, after, span) in &seq.orders {
        let (from, to, tos, from_caller) = match (before.as_str(), after.as_str()) {
            ("stores", "invalidates") => (
                From::NormalStore,
                To::PageTableReader,
                vec![Class::TlbInvalidate, Class::LocalInvalidate],
                true,
            ),
            ("invalidates", "invalidates") => (
                From::Invalidation,
                To::AnyInvalidation,
                vec![Class::InvalidateCompletion],
                false,
            ),
            ("invalidates", "return") => (
                From::Invalidation,
                To::Return,
                vec![Class::InvalidateCompletion],
                false,
            ),
            _ => continue,
        };
        out.push(Rule {
            from,
            to,
            tos,
            dev: None,
            scope: Scope::AnyInstance,
            span: *span,
            from_caller,
        });
    }
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Invalidate {
            id,
            name,
            after: Some(span),
            ..
        } = s
        {
            out.push(Rule {
                from: From::Invalidation,
                to: To::Op(*id),
                tos: vec![crate::ir::order::invalidate_class(name)],
                dev: None,
                scope: Scope::AnyInstance,
                span: *span,
                from_caller: false,
            });
        }
    });
    out
}

/// What a spec access is: its class, and its register for device ones.
#[derive(Clone, Copy, Debug)]
struct Access {
    id: OpId,
    class: Class,
    reg: Option<(DevId, RegId)>,
}

/// Where an access sits in the spec: its place in program order and the
/// loops around it, outermost first (a number, and the device of an
/// `each`).
#[derive(Clone, Debug, Default)]
struct Place {
    order: usize,
    loops: Vec<(usize, Option<DevId>)>,
}

fn places(body: &[Stmt]) -> FxHashMap<OpId, Place> {
    fn go(
        body: &[Stmt],
        loops: &mut Vec<(usize, Option<DevId>)>,
        n: &mut usize,
        out: &mut FxHashMap<OpId, Place>,
    ) {
        for s in body {
            *n += 1;
            let id = match s {
                Stmt::Write { access, .. }
                | Stmt::Poll { access, .. }
                | Stmt::Read { access, .. } => Some(access.id),
                Stmt::Mem { id, .. } | Stmt::Invalidate { id, .. } => Some(*id),
                _ => None,
            };
            if let Some(id) = id {
                out.insert(
                    id,
                    Place {
                        order: *n,
                        loops: loops.clone(),
                    },
                );
            }
            match s {
                Stmt::Each { body, .. }
                | Stmt::Range { body, .. }
                | Stmt::While { body, .. }
                | Stmt::Cover { body, .. } => {
                    let dev = match s {
                        Stmt::Each { dev, .. } => Some(*dev),
                        _ => None,
                    };
                    loops.push((*n, dev));
                    go(body, loops, n, out);
                    loops.pop();
                }
                Stmt::If { then_, else_, .. } => {
                    for arm in [then_, else_] {
                        go(arm, loops, n, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = FxHashMap::default();
    go(body, &mut Vec::new(), &mut 0, &mut out);
    out
}

/// Can `earlier` (pending) reach `later` only on the next iteration of
/// `each` loops over `dev`, so on another instance? Later in program
/// order, and every loop around both an `each` over `dev`.
fn next_instance(places: &FxHashMap<OpId, Place>, earlier: OpId, later: OpId, dev: DevId) -> bool {
    let (Some(a), Some(b)) = (places.get(&earlier), places.get(&later)) else {
        return false;
    };
    let shared: Vec<_> = a
        .loops
        .iter()
        .zip(&b.loops)
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| *x)
        .collect();
    a.order > b.order && !shared.is_empty() && shared.iter().all(|(_, d)| *d == Some(dev))
}

fn accesses(seq: &Seq) -> FxHashMap<OpId, Access> {
    let mut out = FxHashMap::default();
    crate::ir::walk(&seq.body, &mut |s| {
        let a = match s {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
                class_of(s).map(|class| Access {
                    id: access.id,
                    class,
                    reg: Some((access.dev, access.reg)),
                })
            }
            // Lock words synchronise CPUs by their own acquire/release
            // order; only plain stores are what `stores` names.
            Stmt::Mem {
                id,
                op: MemOp::Store { .. } | MemOp::StoreAt { .. },
                ..
            } => Some(Access {
                id: *id,
                class: Class::NormalStore,
                reg: None,
            }),
            Stmt::Invalidate { id, .. } => class_of(s).map(|class| Access {
                id: *id,
                class,
                reg: None,
            }),
            _ => None,
        };
        if let Some(a) = a {
            out.insert(a.id, a);
        }
    });
    out
}

impl Rule {
    fn is_from(&self, a: &Access) -> bool {
        match self.from {
            From::Reg(d, r) => a.reg == Some((d, r)),
            From::NormalStore => a.class == Class::NormalStore,
            From::Invalidation => a.class.is_invalidation(),
        }
    }

    /// The index into `tos` this access is the later side of.
    fn to_index(&self, a: &Access) -> Option<usize> {
        let pos = |c: Class| self.tos.iter().position(|&t| t == c);
        match self.to {
            To::Reg(d, r) if a.reg == Some((d, r)) => pos(a.class),
            To::RegStore(d, r) if a.reg == Some((d, r)) && a.class == Class::DevStore => Some(0),
            To::PageTableReader if a.class.reads_page_tables() => pos(a.class),
            To::AnyInvalidation if a.class.is_invalidation() => Some(0),
            To::Op(id) if a.id == id => Some(0),
            _ => None,
        }
    }
}

/// The caller's stores, as a witness.
const CALLER: u32 = u32::MAX;

/// A required ordering that some path of the code does not keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub symbol: String,
    /// Byte offset and text of the later access (or the return).
    pub at: u32,
    pub insn: String,
    /// The first earlier access that may reach it unordered (None: the
    /// caller's stores).
    pub earlier: Option<(u32, String)>,
    pub from: Class,
    pub to: Class,
    /// 1-based spec line of the requirement.
    pub line: usize,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let earlier = match &self.earlier {
            Some((off, text)) => format!("`{text}` at +{off:#x}"),
            None => "the caller's earlier stores".to_string(),
        };
        write!(
            f,
            "{}+{:#x} `{}`: a path reaches it from {earlier} with no barrier ordering {:?} -> {:?} (required by line {})",
            self.symbol, self.at, self.insn, self.from, self.to, self.line
        )
    }
}

/// One instruction as the proof sees it.
struct Node {
    offset: u32,
    text: String,
    flow: Flow,
    access: Option<Access>,
    /// The barrier kinds it completes (with the barriers just before it,
    /// for composites), empty if not a barrier.
    barriers: Vec<&'static BarrierKind>,
}

/// Prove every sequence of `c`; `prog` is the spec as the code was
/// compiled from it (features resolved for the target).
pub fn prove(prog: &Program, c: &Compiled) -> Result<Vec<Violation>, String> {
    let mut out = Vec::new();
    for (f, seq) in c.funcs.iter().zip(&c.opt.seqs) {
        out.extend(prove_func(prog, seq, f, c.target)?);
    }
    Ok(out)
}

/// The spec access an instruction of class `class` carrying operation `op`
/// performs: only the store, load or invalidation itself (an address
/// computation carries the same operation).
fn performs(acc: &FxHashMap<OpId, Access>, op: Option<OpId>, class: InsnClass) -> Option<&Access> {
    op.and_then(|op| acc.get(&op)).filter(|a| {
        matches!(
            (a.class, class),
            (Class::DevStore | Class::NormalStore, InsnClass::Store)
                | (Class::DevLoad, InsnClass::Load)
        ) || (class == InsnClass::Invalidate && a.class.is_invalidation())
    })
}

/// The control-flow graph of `f` from capstone's decoding of its bytes.
fn nodes(
    acc: &FxHashMap<OpId, Access>,
    f: &MachFunc,
    target: Target,
    table: &'static [BarrierKind],
) -> Result<Vec<Node>, String> {
    let cs = target.backend().disassembler().map_err(|e| e.to_string())?;
    let lines: Vec<_> = f.insns().collect();
    let mut out: Vec<Node> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let end = lines
            .get(i + 1)
            .map_or(f.bytes.len(), |n| n.offset as usize);
        let chunk = f.bytes.get(l.offset as usize..end).unwrap_or(&[]);
        let decoded = cs.disasm_count(chunk, u64::from(l.offset), 1).ok();
        let d = decoded.as_ref().and_then(|d| d.iter().next());
        let flow = match d {
            Some(d) => target.backend().capstone_flow(
                d.mnemonic().unwrap_or(""),
                d.op_str().unwrap_or(""),
                u64::from(l.offset),
            ),
            // Capstone's documented gaps are invalidations, not branches.
            None if target.backend().capstone_gap(l.mnemonic) => Flow::Next,
            None => {
                return Err(format!(
                    "{}+{:#x}: capstone cannot decode `{}`: no control-flow graph",
                    f.symbol, l.offset, l.text
                ))
            }
        };
        let access = performs(acc, l.origin.op, l.class).copied();
        out.push(Node {
            offset: l.offset,
            text: l.text.trim().to_string(),
            flow,
            access,
            barriers: Vec::new(),
        });
    }
    // Barriers, composites included: a run of barrier instructions with
    // no branch target inside it (a join could enter it half-way).
    let targets: std::collections::HashSet<u64> = out
        .iter()
        .filter_map(|n| match n.flow {
            Flow::Jump(t) | Flow::Branch(t) => Some(t),
            _ => None,
        })
        .collect();
    for i in 0..out.len() {
        if lines[i].class != InsnClass::Barrier {
            continue;
        }
        let mut run: Vec<&str> = vec![out[i].text.as_str()];
        let mut k = i;
        while k > 0
            && lines[k - 1].class == InsnClass::Barrier
            && !targets.contains(&u64::from(out[k].offset))
        {
            k -= 1;
            run.insert(0, out[k].text.as_str());
        }
        let mut kinds: Vec<&'static BarrierKind> =
            barriers::find(table, &out[i].text).into_iter().collect();
        kinds.extend(barriers::ending_run(table, &run));
        out[i].barriers = kinds;
    }
    Ok(out)
}

/// A slot of the state: (rule, earlier class, index into the rule's
/// `tos`, and for a per-instance rule the earlier access).
type Slot = (usize, Class, usize, Option<OpId>);

/// Per slot, the smallest offset of an access that may be pending
/// ([`CALLER`] for the caller's stores), or None.
type State = Vec<Option<u32>>;

/// The rules of one sequence as a transfer function over [`State`]: what
/// the control-flow proof runs to a fixpoint, and what a single executed
/// path (an emulator trace) runs once.
struct Checker<'a> {
    prog: &'a Program,
    rules: Vec<Rule>,
    slots: Vec<Slot>,
    places: FxHashMap<OpId, Place>,
    /// What each spec operation is.
    acc: FxHashMap<OpId, Access>,
}

impl<'a> Checker<'a> {
    fn new(prog: &'a Program, seq: &Seq, target: Target) -> Checker<'a> {
        let rules = rules(prog, seq);
        let acc = accesses(seq);
        // Slots: every (rule, earlier class, later class) the target does
        // not order by itself.
        let mut slots: Vec<Slot> = Vec::new();
        for (r, rule) in rules.iter().enumerate() {
            for c in Class::ALL {
                let possible = match rule.from {
                    From::Reg(..) => matches!(c, Class::DevStore | Class::DevLoad),
                    From::NormalStore => c == Class::NormalStore,
                    From::Invalidation => c.is_invalidation(),
                };
                if !possible {
                    continue;
                }
                for (t, &to) in rule.tos.iter().enumerate() {
                    let e = Edge {
                        from: OpId::ENTRY,
                        to: OpId::EXIT,
                        from_class: c,
                        to_class: to,
                        dev: rule.dev,
                        scope: rule.scope,
                        span: rule.span,
                    };
                    if crate::passes::barriers::ordered_by_target(prog, &e, target) {
                        continue;
                    }
                    if rule.scope == Scope::SameInstance && rule.dev.is_some() {
                        let mut ids: Vec<OpId> = acc
                            .values()
                            .filter(|a| a.class == c && rule.is_from(a))
                            .map(|a| a.id)
                            .collect();
                        ids.sort();
                        slots.extend(ids.into_iter().map(|id| (r, c, t, Some(id))));
                    } else {
                        slots.push((r, c, t, None));
                    }
                }
            }
        }
        Checker {
            prog,
            rules,
            slots,
            places: places(&seq.body),
            acc,
        }
    }

    /// The state at the sequence's entry: the caller's stores pending.
    fn start(&self) -> State {
        self.slots
            .iter()
            .map(|&(r, c, _, _)| {
                (self.rules[r].from_caller && c == Class::NormalStore).then_some(CALLER)
            })
            .collect()
    }

    /// One instruction: its barriers order what they cover, then its
    /// access (at `offset`) becomes pending.
    fn apply(
        &self,
        s: &mut State,
        access: Option<&Access>,
        barriers: &[&BarrierKind],
        offset: u32,
    ) {
        for (k, &(r, c, t, _)) in self.slots.iter().enumerate() {
            if s[k].is_some() && barriers.iter().any(|b| b.covers(c, self.rules[r].tos[t])) {
                s[k] = None;
            }
        }
        if let Some(a) = access {
            for (k, &(r, c, _, op)) in self.slots.iter().enumerate() {
                if c == a.class
                    && self.rules[r].is_from(a)
                    && op.is_none_or(|op| op == a.id)
                    && s[k].is_none()
                {
                    s[k] = Some(offset);
                }
            }
        }
    }

    /// The slots an instruction with `access` (or a return) violates in
    /// state `s`: (rule, witness, earlier class, later class), one per
    /// rule.
    fn violations(
        &self,
        s: &State,
        access: Option<&Access>,
        returns: bool,
    ) -> Vec<(usize, u32, Class, Class)> {
        let mut out: Vec<(usize, u32, Class, Class)> = Vec::new();
        for (k, &(r, c, t, op)) in self.slots.iter().enumerate() {
            let Some(w) = s[k] else { continue };
            let rule = &self.rules[r];
            let hit = match (access, rule.to) {
                (_, To::Return) => returns,
                (Some(a), _) => {
                    rule.to_index(a) == Some(t)
                        && !matches!((op, rule.dev), (Some(x), Some(d)) if next_instance(&self.places, x, a.id, d))
                }
                (None, _) => false,
            };
            if hit && !out.iter().any(|v| v.0 == r) {
                out.push((r, w, c, rule.tos[t]));
            }
        }
        out
    }

    fn line(&self, r: usize) -> usize {
        self.prog.line_of(self.rules[r].span)
    }
}

/// Prove one function `f`, compiled from `seq` of `prog` (the optimized
/// program).
pub fn prove_func(
    prog: &Program,
    seq: &Seq,
    f: &MachFunc,
    target: Target,
) -> Result<Vec<Violation>, String> {
    let table = target.table(prog.machine);
    let ck = Checker::new(prog, seq, target);
    if ck.slots.is_empty() {
        return Ok(Vec::new());
    }
    let nodes = nodes(&ck.acc, f, target, table)?;
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let index: FxHashMap<u32, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.offset, i))
        .collect();
    let succs = successors(&nodes, &index, &f.symbol)?;
    let entry = fixpoint(&ck, &nodes, &succs);
    // Check every reachable instruction against its fixed entry state.
    let mut out = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let Some(s) = &entry[i] else { continue };
        let returns = matches!(n.flow, Flow::Return | Flow::CondReturn);
        for (r, w, from, to) in ck.violations(s, n.access.as_ref(), returns) {
            out.push(Violation {
                symbol: f.symbol.clone(),
                at: n.offset,
                insn: n.text.clone(),
                earlier: (w != CALLER).then(|| {
                    (
                        w,
                        index
                            .get(&w)
                            .map(|&j| nodes[j].text.clone())
                            .unwrap_or_default(),
                    )
                }),
                from,
                to,
                line: ck.line(r),
            });
        }
    }
    Ok(out)
}

/// Each node's successors: the control-flow graph the bytes have (a
/// branch's target must be one of the function's instructions, and the
/// last one must not fall through).
fn successors(
    nodes: &[Node],
    index: &FxHashMap<u32, usize>,
    symbol: &str,
) -> Result<Vec<Vec<usize>>, String> {
    let succ = |i: usize| -> Result<Vec<usize>, String> {
        let at = |t: u64| {
            u32::try_from(t)
                .ok()
                .and_then(|t| index.get(&t).copied())
                .ok_or_else(|| {
                    format!(
                        "{symbol}+{:#x}: branch to {t:#x}, not an instruction of the function",
                        nodes[i].offset
                    )
                })
        };
        let next = || {
            if i + 1 < nodes.len() {
                Ok(i + 1)
            } else {
                Err(format!(
                    "{symbol}: runs off its end at +{:#x}",
                    nodes[i].offset
                ))
            }
        };
        Ok(match nodes[i].flow {
            Flow::Next => vec![next()?],
            Flow::Jump(t) => vec![at(t)?],
            Flow::Branch(t) => vec![next()?, at(t)?],
            Flow::Return => vec![],
            Flow::CondReturn => vec![next()?],
            Flow::Unknown => {
                return Err(format!(
                    "{symbol}+{:#x} `{}`: a call or indirect jump the proof cannot follow",
                    nodes[i].offset, nodes[i].text
                ))
            }
        })
    };
    (0..nodes.len()).map(succ).collect()
}

/// Forward may-analysis to a fixpoint: a slot is pending at an
/// instruction if it is on some path to it; witnesses only decrease.
/// Each node's entry state (`None`: unreachable).
fn fixpoint(ck: &Checker, nodes: &[Node], succs: &[Vec<usize>]) -> Vec<Option<State>> {
    let mut entry: Vec<Option<State>> = vec![None; nodes.len()];
    entry[0] = Some(ck.start());
    let mut work = vec![0usize];
    let mut queued = vec![false; nodes.len()];
    queued[0] = true;
    while let Some(i) = work.pop() {
        queued[i] = false;
        let Some(s) = &entry[i] else { continue };
        let mut out = s.clone();
        ck.apply(
            &mut out,
            nodes[i].access.as_ref(),
            &nodes[i].barriers,
            nodes[i].offset,
        );
        for &j in &succs[i] {
            let changed = match &mut entry[j] {
                Some(e) => {
                    let mut changed = false;
                    for (x, y) in e.iter_mut().zip(&out) {
                        let m = match (*x, *y) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        if m != *x {
                            *x = m;
                            changed = true;
                        }
                    }
                    changed
                }
                e @ None => {
                    *e = Some(out.clone());
                    true
                }
            };
            if changed && !queued[j] {
                queued[j] = true;
                work.push(j);
            }
        }
    }
    entry
}

/// One executed instruction of a path, for [`check_path`].
pub struct Step<'s> {
    /// The spec operation it performs, if any.
    pub op: Option<OpId>,
    /// Store, load, barrier, invalidate or other.
    pub class: InsnClass,
    /// Its text (a barrier's name is its table entry).
    pub text: &'s str,
}

/// The same rules over one executed path (an emulator trace: loops
/// unrolled, branches resolved), ending with the return: every violation,
/// by step index. Independent of the ordering graph like the proof, and
/// exact where the proof is conservative only in what paths exist.
pub fn check_path(prog: &Program, seq: &Seq, target: Target, steps: &[Step]) -> Vec<String> {
    let table = target.table(prog.machine);
    let ck = Checker::new(prog, seq, target);
    let mut s = ck.start();
    let mut run: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    let describe = |w: u32| {
        if w == CALLER {
            "the caller's stores".to_string()
        } else {
            format!("step {w} `{}`", steps[w as usize].text)
        }
    };
    for (i, st) in steps.iter().enumerate() {
        let mut kinds: Vec<&'static BarrierKind> = Vec::new();
        if st.class == InsnClass::Barrier {
            run.push(st.text);
            kinds.extend(barriers::find(table, st.text));
            kinds.extend(barriers::ending_run(table, &run));
        } else {
            run.clear();
        }
        let access = performs(&ck.acc, st.op, st.class);
        for (r, w, from, to) in ck.violations(&s, access, false) {
            out.push(format!(
                "step {i} `{}` follows {} with no barrier ordering {from:?} -> {to:?} (line {})",
                st.text,
                describe(w),
                ck.line(r)
            ));
        }
        ck.apply(&mut s, access, &kinds, i as u32);
    }
    for (r, w, from, to) in ck.violations(&s, None, true) {
        out.push(format!(
            "returns after {} with no barrier ordering {from:?} -> {to:?} (line {})",
            describe(w),
            ck.line(r)
        ));
    }
    out
}
