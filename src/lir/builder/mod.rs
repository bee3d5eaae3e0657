//! Optimized IR -> LIR for one target.
//!
//! Values written to registers are computed once, before the top-level
//! statement that first needs them, so instance loops hold only the
//! load of the instance base, the stores, and the loop step (what a
//! kernel developer writes by hand).

use super::*;
use crate::ir::barrier::Barrier;
use crate::ir::expr::{BinOp, Expr};
use crate::ir::{Device, Instances, PollOp, Program, Seq, Stmt};
use crate::ir::{Machine, ReleaseOrder};
use crate::lir::invalidation::Invalidations;
use crate::lir::regalloc::RegFile;
use crate::spec::ast::Endian;
use crate::spec::diag::Diag;
use rustc_hash::FxHashMap as HashMap;

mod cond;
mod expr;
mod iv;
mod lock;
mod loops;
mod mem;
mod range;
mod stmt;

/// The locals an expression reads, each with its register at the time.
type Bindings = Vec<(usize, Option<VReg>)>;

/// Where computed register values are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hoist {
    /// All at function entry: barriers then sit right next to the stores
    /// they order, with no arithmetic in between.
    Entry,
    /// Before the top-level statement that first needs them (fewer live
    /// registers; the fallback when entry hoisting runs out).
    PerStatement,
    /// Where they are used, recomputed in every loop iteration: the
    /// fewest live registers (a loop of twenty writes of `x + k` needs
    /// twenty registers when its values are computed before it).
    AtUse,
}

/// The most arguments a sequence may take (device bases and counts
/// included), on every target alike so that a spec does not build for one
/// and fail for another. Arguments past the argument registers are read
/// from the caller's stack; Linux-style POWER code names those slots with
/// the kernel's `STK_PARAM(R11)` .. `STK_PARAM(R31)` (`asm/ppc_asm.h`, the
/// idiom of `plpar_hcall9`), whose register names end at r31: arguments 1
/// to 29.
pub const MAX_ARGS: usize = 29;

/// What building the LIR asks of the target it is built for (each target
/// answers in `crate::isa`).
pub trait BuildTarget {
    /// Argument and allocatable registers of the target's ABI.
    fn regfile(&self) -> &'static RegFile;
    fn big_endian(&self) -> bool;
    /// Do byte-reversed accesses take their offset from a register?
    fn swap_is_indexed(&self) -> bool;
    /// The barrier after a lock is taken.
    fn acquire_barrier(&self, m: Machine) -> Option<Barrier>;
    /// The barrier (if any) a release of `order` needs before its store.
    fn release_barrier(&self, m: Machine, order: ReleaseOrder) -> Option<Barrier>;
    /// Can the target lower [`Inst::SetCmp`]?
    fn set_cmp(&self) -> bool;
    /// See [`crate::isa::backend::Description::branch_compares_registers`].
    fn branch_compares_registers(&self) -> bool;
    /// Does a counted loop's bottom test cost one instruction (a count
    /// register: POWER's `bdnz`)? Unrolling such a loop gives the count
    /// register up for `n -= 1; bne` per U trips: it pays only for long
    /// loops, and is not done (see `range`).
    fn counts_on_a_register(&self) -> bool;
}

/// `invalidations`: the sequence's CPU invalidations, already checked for
/// `target` (see `codegen::resolve_invalidations`).
///
/// `Ok(None)`: `Hoist::Entry` asked for, and the values it would hoist
/// cannot all be in registers at once (see [`Builder::entry_overflows`]);
/// allocation would fail, so the rest is not built.
pub fn build(
    prog: &Program,
    seq: &Seq,
    target: &dyn BuildTarget,
    invalidations: &Invalidations,
    hoist: Hoist,
) -> Result<Option<Func>, Diag> {
    build_checked(prog, seq, target, invalidations, hoist, true)
}

/// [`build`]; `predict: false` builds an overflowing `Hoist::Entry` in
/// full (the test that the prediction only ever names real failures).
pub(crate) fn build_checked(
    prog: &Program,
    seq: &Seq,
    target: &dyn BuildTarget,
    invalidations: &Invalidations,
    hoist: Hoist,
    predict: bool,
) -> Result<Option<Func>, Diag> {
    let args = arguments(prog, seq)?;
    let mut b = Builder {
        prog,
        target,
        invalidations,
        f: Func {
            name: seq.name.clone(),
            args: args.clone(),
            // About a dozen instructions per statement: sized up front, a
            // large function's vector is not copied as it grows.
            insts: Vec::with_capacity(statements(&seq.body) * 12 + 16),
            nvregs: 0,
            nlabels: 0,
            void: false,
        },
        arg_regs: Vec::new(),
        arg_override: HashMap::default(),
        values: HashMap::default(),
        value_locals: HashMap::default(),
        local_gen: 0,
        scope_log: Vec::new(),
        bases: HashMap::default(),
        origin: Origin::default(),
        param_names: seq.params.clone(),
        locals: HashMap::default(),
        cold: Vec::new(),
        cache: hoist != Hoist::AtUse,
        in_prologue: false,
        iv_locals: 0,
        origins: HashMap::default(),
        edges: &seq.edges,
        note_ops: note_ops(prog, seq),
    };
    b.origin = Origin {
        line: Some(prog.line_of(seq.span)),
        note: "arguments".into(),
        op: None,
    };
    // Register arguments are defined at entry, pre-coloured to their ABI
    // registers; stack arguments are loaded where they are used (see
    // `Builder::arg_of`), so they occupy a register only briefly.
    for i in 0..args.len().min(target.regfile().args.len()) {
        let v = b.vreg();
        b.emit(Inst::Arg { dst: v, index: i });
        b.arg_regs.push(v);
    }
    let mut returned = false;
    if hoist == Hoist::Entry {
        b.in_prologue = true;
        for s in &seq.body {
            b.hoist_values(s);
        }
        b.in_prologue = false;
        if predict && b.entry_overflows(&seq.body, target.regfile()) {
            return Ok(None);
        }
    }
    for s in &seq.body {
        if hoist != Hoist::AtUse {
            b.hoist_values(s);
        }
        b.stmt(s)?;
        returned = matches!(s, Stmt::Return { .. });
    }
    if !returned {
        b.origin = Origin {
            line: None,
            note: "end of sequence".into(),
            op: None,
        };
        // What a sequence with `acquire ... held` returns: its status.
        let value = match seq.status.and_then(|l| b.locals.get(&l)) {
            Some(v) => Operand::Reg(*v),
            None => Operand::Imm(0),
        };
        b.emit(Inst::Ret { value });
    }
    // Out-of-line code (lock contention spins) after the function body.
    let cold = std::mem::take(&mut b.cold);
    b.f.insts.extend(cold);
    // A `-> void` sequence reports nothing: in the LIR every exit (a poll
    // that ran out, a zero step) returns 0, as its end does; the targets
    // then leave the return register alone (`Func::void`).
    b.f.void = seq.void;
    if seq.void {
        for (i, _) in &mut b.f.insts {
            if let Inst::Ret { value } = i {
                *value = Operand::Imm(0);
            }
        }
    }
    crate::lir::constfold::fold(&mut b.f);
    crate::lir::bittest::fuse(&mut b.f);
    crate::lir::jumps::thread(&mut b.f);
    crate::lir::path_consts::fold(&mut b.f);
    crate::lir::thread::run(&mut b.f);
    crate::lir::guards::fold(&mut b.f);
    crate::lir::dead::drop_dead(&mut b.f);
    // What went can leave a jump over nothing but a label.
    crate::lir::jumps::thread(&mut b.f);
    Ok(Some(b.f))
}

/// The function's arguments in ABI order: each device's base (an array,
/// and its count for a dynamic set), then the parameters; more than the
/// targets pass in registers and on the stack is an error at the
/// sequence.
fn arguments(prog: &Program, seq: &Seq) -> Result<Vec<ArgKind>, Diag> {
    let mut args = Vec::new();
    for &d in &seq.devices {
        match prog.devices[d].instances {
            Instances::Single => args.push(ArgKind::DeviceBase(d)),
            Instances::Fixed(_) => args.push(ArgKind::DeviceArray(d)),
            Instances::Dynamic { .. } => {
                args.push(ArgKind::DeviceArray(d));
                args.push(ArgKind::DeviceCount(d));
            }
        }
    }
    args.extend((0..seq.params.len()).map(ArgKind::Param));
    if args.len() > MAX_ARGS {
        return Err(Diag::new(
            seq.span,
            format!(
                "`{}` takes {} arguments; at most {} are supported",
                seq.name,
                args.len(),
                MAX_ARGS
            ),
        )
        .label("too many arguments")
        .help(
            "split the sequence or use fewer parameters (a dynamic device set \
             takes two arguments, its array and its count)",
        ));
    }
    Ok(args)
}

/// How many statements `body` holds, nested ones included.
fn statements(body: &[Stmt]) -> usize {
    let mut n = 0;
    crate::ir::walk(body, &mut |_| n += 1);
    n
}

/// What a placed barrier's note says of one operation: `write npu.ava
/// (line 34)`. Kept as parts and written into the note only for the
/// orderings a note names (a large spec has ~100k operations).
#[derive(Clone, Copy)]
enum OpWhat<'a> {
    Reg(&'static str, crate::ir::DevId, crate::ir::RegId, usize),
    Store(usize),
    Invalidate(&'a str, usize),
}

/// The operations the notes of `seq`'s placed barriers name (the first
/// three orderings of each).
fn note_ops<'a>(prog: &Program, seq: &'a Seq) -> HashMap<crate::ir::OpId, OpWhat<'a>> {
    use crate::ir::Stmt;
    let mut wanted: rustc_hash::FxHashSet<crate::ir::OpId> = Default::default();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Barrier { covers, .. } = s {
            for &e in covers.iter().take(3) {
                if let Some(e) = seq.edges.get(e) {
                    wanted.insert(e.from);
                    wanted.insert(e.to);
                }
            }
        }
    });
    let mut out = HashMap::default();
    if wanted.is_empty() {
        return out;
    }
    let line = |span| prog.line_of(span);
    crate::ir::walk(&seq.body, &mut |s| {
        let (id, what) = match s {
            Stmt::Write { access, .. } => {
                (access.id, OpWhat::Reg("write", access.dev, access.reg, 0))
            }
            Stmt::Poll { access, .. } => {
                (access.id, OpWhat::Reg("poll", access.dev, access.reg, 0))
            }
            Stmt::Read { access, .. } => {
                (access.id, OpWhat::Reg("read", access.dev, access.reg, 0))
            }
            Stmt::Mem { id, .. } => (*id, OpWhat::Store(0)),
            Stmt::Invalidate { id, name, .. } => (*id, OpWhat::Invalidate(name, 0)),
            _ => return,
        };
        if !wanted.contains(&id) {
            return;
        }
        let what = match (what, s) {
            (
                OpWhat::Reg(k, d, r, _),
                Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. },
            ) => OpWhat::Reg(k, d, r, line(access.span)),
            (OpWhat::Store(_), Stmt::Mem { span, .. }) => OpWhat::Store(line(*span)),
            (OpWhat::Invalidate(n, _), Stmt::Invalidate { span, .. }) => {
                OpWhat::Invalidate(n, line(*span))
            }
            (w, _) => w,
        };
        out.insert(id, what);
    });
    out
}

struct Builder<'a> {
    prog: &'a Program,
    target: &'a dyn BuildTarget,
    /// The typed form of each CPU invalidation the sequence names.
    invalidations: &'a Invalidations,
    f: Func,
    /// The entry definitions of the arguments passed in registers.
    arg_regs: Vec<VReg>,
    /// Stack arguments already loaded, by argument index, where a load at
    /// the use is not wanted (inside a reservation window).
    arg_override: HashMap<usize, VReg>,
    /// Computed values of expressions, valid for the rest of the function.
    values: HashMap<Expr, VReg>,
    /// Keys of `values` in insertion order: leaving a loop body or branch
    /// arm forgets what it computed (see [`Builder::unscope`]).
    scope_log: Vec<Expr>,
    /// For a cached value that reads locals: the locals' generation and
    /// registers when it was computed. It is reused only while both are
    /// unchanged (see [`Builder::local_value`]).
    value_locals: HashMap<Expr, (u64, Bindings)>,
    /// Bumped by every write to a local's register and every label (a
    /// loop top is one: a loop's body may change a local on a later trip,
    /// and a join follows paths that may have).
    local_gen: u64,
    /// Base address of the current instance of each device in scope.
    bases: HashMap<usize, VReg>,
    origin: Origin,
    param_names: Vec<String>,
    /// Current register of each `range` loop variable in scope, of each
    /// memory read, and of the `acquire ... held` status.
    locals: HashMap<usize, VReg>,
    /// Out-of-line code, placed after the function body (the kernel's
    /// `.subsection 1`): contention spins are off the fast path.
    cold: Vec<(Inst, Origin)>,
    /// Keep computed values in `values` for later statements (off for
    /// `Hoist::AtUse`: a value kept from one statement to a later one is
    /// a register live in between, a constant or a command word included).
    cache: bool,
    /// Building `Hoist::Entry`'s prologue (values computed at entry).
    in_prologue: bool,
    /// Locals made for induction variables so far (their ids count down
    /// from `usize::MAX`, clear of the spec's).
    iv_locals: usize,
    /// The origin of each statement span met so far: a statement sets its
    /// origin several times (hoisting, its loop, its accesses), and the
    /// snippet is a scan of the source.
    origins: HashMap<crate::spec::diag::Span, Origin>,
    /// The required orderings, and what a placed barrier's note says of
    /// the operations it names (issue 37: provenance in the `.S`).
    edges: &'a [crate::ir::order::Edge],
    note_ops: HashMap<crate::ir::OpId, OpWhat<'a>>,
}

/// The largest subexpressions of `e` that do not depend on loop variables.
fn invariant_parts<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    if !e.uses_locals() {
        f(e);
        return;
    }
    match e {
        Expr::Bin(_, a, b) => {
            invariant_parts(a, f);
            // Immediate right operands stay immediates.
            if b.as_const().is_none() {
                invariant_parts(b, f);
            }
        }
        Expr::Cmp(_, a, b) => {
            invariant_parts(a, f);
            invariant_parts(b, f);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| invariant_parts(a, f)),
        Expr::Not(a) | Expr::Insert { value: a, .. } => invariant_parts(a, f),
        Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::Binding(_) | Expr::Feature(_) => {}
    }
}

/// The loop-invariant parts of every value `body` writes or invalidates
/// with whenever it runs, each with the span of its statement.
fn written_parts(body: &[Stmt]) -> Vec<(&Expr, crate::spec::diag::Span)> {
    let mut out = Vec::new();
    walk_unconditional(body, &mut |x| match x {
        Stmt::Write { value, access } => invariant_parts(value, &mut |p| {
            out.push((p, access.span));
        }),
        Stmt::Invalidate { operands, span, .. } => {
            for o in operands {
                invariant_parts(o, &mut |p| out.push((p, *span)));
            }
        }
        _ => {}
    });
    out
}

/// The largest parts of values both arms of an `if` write or invalidate
/// with (the command word's fields that do not depend on the arm): one
/// computation before the branch instead of one in each arm.
fn common_to_both_arms<'a>(
    then_: &'a [Stmt],
    else_: &'a [Stmt],
) -> Vec<(&'a Expr, crate::spec::diag::Span)> {
    fn all<'a>(e: &'a Expr, seen: &mut rustc_hash::FxHashSet<&'a Expr>) {
        seen.insert(e);
        e.children().into_iter().for_each(|c| all(c, seen));
    }
    fn largest<'a>(
        e: &'a Expr,
        span: crate::spec::diag::Span,
        seen: &rustc_hash::FxHashSet<&'a Expr>,
        out: &mut Vec<(&'a Expr, crate::spec::diag::Span)>,
    ) {
        let worth = !matches!(
            e,
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::Binding(_) | Expr::Feature(_)
        );
        if worth && seen.contains(e) {
            out.push((e, span));
            return;
        }
        for c in e.children() {
            // Immediate right operands stay immediates.
            if c.as_const().is_none() {
                largest(c, span, seen, out);
            }
        }
    }
    if then_.is_empty() || else_.is_empty() {
        return Vec::new();
    }
    let mut seen = rustc_hash::FxHashSet::default();
    for (e, _) in written_parts(then_) {
        all(e, &mut seen);
    }
    let mut out = Vec::new();
    for (e, span) in written_parts(else_) {
        largest(e, span, &seen, &mut out);
    }
    out
}

/// Every parameter `e` reads.
fn params_of(e: &Expr, out: &mut Vec<usize>) {
    if let Expr::Param(p) = e {
        out.push(*p);
    }
    e.children().into_iter().for_each(|c| params_of(c, out));
}

/// Like `ir::walk`, but not into branches: values a branch needs are
/// computed in that branch, not on every path.
fn walk_unconditional<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            // Loop-invariant parts of a `while` body are computed before
            // the loop, like a `range`'s.
            Stmt::Each { body, .. } | Stmt::Range { body, .. } | Stmt::While { body, .. } => {
                walk_unconditional(body, f)
            }
            _ => {}
        }
    }
}

/// Writes that run whenever the statements holding them do: the top
/// level and the bodies of `each` and `range` loops (not `while`, whose
/// retries may recompute, nor conditional arms).
fn unconditional_writes<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Expr)) {
    for s in body {
        match s {
            Stmt::Write { value, .. } => f(value),
            Stmt::Each { body, .. } | Stmt::Range { body, .. } => unconditional_writes(body, f),
            _ => {}
        }
    }
}

/// -EINVAL, returned when a `range` step is 0 at run time.
const EINVAL: i64 = -22;

impl Builder<'_> {
    fn vreg(&mut self) -> VReg {
        let v = VReg(self.f.nvregs);
        self.f.nvregs += 1;
        v
    }
    /// The capability of a dispatch on a patched feature (see
    /// `crate::features`): `Feature(i) != 0`.
    fn patched_cap(&self, cond: &crate::ir::Cond) -> Option<String> {
        match (&cond.a, cond.cmp, cond.b.as_const()) {
            (Expr::Feature(i), crate::lir::Cmp::Ne, Some(0)) => {
                self.prog.features.get(*i)?.cap.clone()
            }
            _ => None,
        }
    }

    fn label(&mut self) -> LabelId {
        let l = self.f.nlabels;
        self.f.nlabels += 1;
        l
    }
    /// Mark the value cache before a loop body or branch arm.
    fn scope(&self) -> usize {
        self.scope_log.len()
    }

    /// Forget values computed since `mark`: they are not available on
    /// every path after the loop or branch.
    fn unscope(&mut self, mark: usize) {
        while self.scope_log.len() > mark {
            if let Some(e) = self.scope_log.pop() {
                self.values.remove(&e);
            }
        }
    }

    fn emit(&mut self, i: Inst) {
        self.note_local_write(&i);
        self.f.insts.push((i, self.origin.clone()));
    }

    /// Values computed from locals are stale after a write to one of
    /// them, or past a label.
    fn note_local_write(&mut self, i: &Inst) {
        let writes_local = || {
            i.def()
                .is_some_and(|d| self.locals.values().any(|&v| v == d))
        };
        if matches!(i, Inst::Label(_)) || writes_local() {
            self.local_gen += 1;
        }
    }

    /// The locals `e` reads with their current registers.
    fn local_bindings(&self, e: &Expr) -> Bindings {
        fn walk(e: &Expr, out: &mut Vec<usize>) {
            if let Expr::Local(l) = e {
                out.push(*l);
            }
            e.children().into_iter().for_each(|c| walk(c, out));
        }
        let mut ls = Vec::new();
        walk(e, &mut ls);
        ls.sort_unstable();
        ls.dedup();
        ls.into_iter()
            .map(|l| (l, self.locals.get(&l).copied()))
            .collect()
    }

    /// Is the cached value of `e` (which reads locals) still what `e`
    /// evaluates to here?
    fn local_value_fresh(&self, e: &Expr) -> bool {
        self.value_locals
            .get(e)
            .is_some_and(|(g, b)| *g == self.local_gen && *b == self.local_bindings(e))
    }

    fn arg_of(&mut self, kind: &ArgKind) -> VReg {
        let i = self.f.args.iter().position(|a| a == kind).unwrap_or(0);
        if let Some(&v) = self.arg_regs.get(i) {
            return v;
        }
        if let Some(&v) = self.arg_override.get(&i) {
            return v;
        }
        // A stack argument: loaded afresh at each use rather than kept in
        // a register from entry, so ten of them do not exhaust x86-64's
        // registers (the load is one instruction from a cache-hot slot).
        let v = self.vreg();
        self.emit(Inst::Arg { dst: v, index: i });
        v
    }

    /// Base address of the current instance of `dev`: the instance loop's
    /// register, or the argument of a single-instance device.
    fn base_of(&mut self, dev: usize) -> VReg {
        match self.bases.get(&dev) {
            Some(&v) => v,
            None => self.arg_of(&ArgKind::DeviceBase(dev)),
        }
    }

    /// Load the stack arguments `e` reads now, so that evaluating `e`
    /// later (in a reservation window, which must hold no other memory
    /// access) finds them in registers. Returns what to restore.
    fn preload_args(&mut self, e: &Expr) -> HashMap<usize, VReg> {
        let saved = self.arg_override.clone();
        let mut params = Vec::new();
        params_of(e, &mut params);
        for p in params {
            let v = self.arg_of(&ArgKind::Param(p));
            if let Some(i) = self.f.args.iter().position(|a| *a == ArgKind::Param(p)) {
                self.arg_override.insert(i, v);
            }
        }
        saved
    }

    fn set_origin(&mut self, span: crate::spec::diag::Span) {
        let prog = self.prog;
        self.origin = self
            .origins
            .entry(span)
            .or_insert_with(|| Origin {
                line: Some(prog.line_of(span)),
                note: prog.snippet(span).into(),
                op: None,
            })
            .clone();
    }

    /// The barrier `passes::exits` gave a failure return, marked as such
    /// in listings.
    fn exit_barrier(&mut self, name: Barrier) {
        let saved = std::mem::replace(
            &mut self.origin,
            Origin {
                line: None,
                note: "placed by complete-exits: invalidations done before this return".into(),
                op: None,
            },
        );
        self.emit(Inst::Barrier { name });
        self.origin = saved;
    }

    /// Emit the instruction that performs IR operation `op`.
    fn emit_op(&mut self, op: crate::ir::OpId, i: Inst) {
        self.note_local_write(&i);
        let mut o = self.origin.clone();
        o.op = Some(op);
        self.f.insts.push((i, o));
    }

    /// After the entry prologue of `Hoist::Entry`: do more values live
    /// across its end than the target has registers? Each counted value
    /// is defined in the prologue and stored by a write after it (`write`
    /// takes a written value from the cache, in a register), so all are
    /// live at once there and the allocator would have to spill what
    /// the next placement keeps in registers. Building the rest and allocating it only to find that out
    /// was a third of the compile time of a long sequence.
    fn entry_overflows(&self, body: &[Stmt], rf: &crate::lir::regalloc::RegFile) -> bool {
        let prologue_from = self.arg_regs.len() as u32;
        let mut live = rustc_hash::FxHashSet::default();
        unconditional_writes(body, &mut |value| {
            if value.uses_locals() || value.as_const().is_some() {
                return;
            }
            if let Some(v) = self.values.get(value) {
                if v.0 >= prologue_from {
                    live.insert(*v);
                }
            }
        });
        let mut regs: Vec<u8> = rf
            .pool
            .iter()
            .chain(rf.callee_saved)
            .chain(rf.args)
            .copied()
            .collect();
        if let Some(r) = rf.reserve {
            regs.push(r);
        }
        regs.sort_unstable();
        regs.dedup();
        live.len() > regs.len()
    }

    /// Compute, before `s`, every non-trivial write value used inside it.
    fn hoist_values(&mut self, s: &Stmt) {
        if !self.cache {
            return;
        }
        let mut indexes = Vec::new();
        walk_unconditional(std::slice::from_ref(s), &mut |x| {
            if let Stmt::Write { access, .. } = x {
                indexes.push(access.clone());
            }
        });
        // Loop-variant values: hoist their loop-invariant parts.
        let mut parts = written_parts(std::slice::from_ref(s));
        // Right before the `if`, not in the entry prologue: live from
        // the entry, they would hold registers through everything before.
        if let (Stmt::If { then_, else_, .. }, false) = (s, self.in_prologue) {
            parts.extend(common_to_both_arms(then_, else_));
        }
        for (e, span) in parts {
            if matches!(e, Expr::Param(_)) || self.values.contains_key(e) {
                continue;
            }
            self.origin = Origin {
                line: Some(self.prog.line_of(span)),
                note: format!("value {}", e.display(&self.param_names)).into(),
                op: None,
            };
            let _ = self.expr(e);
        }
        for access in indexes {
            let dev = &self.prog.devices[access.dev];
            let (swap, offset) = (self.swap(dev, access.reg), dev.regs[access.reg].offset);
            if self.needs_index(swap, offset) {
                self.set_origin(access.span);
                self.origin.note = format!("offset {offset:#x}").into();
                let _ = self.constant(offset);
            }
        }
    }

    /// Emit into the out-of-line section.
    fn cold(&mut self, f: &mut dyn FnMut(&mut Self)) {
        let main = std::mem::take(&mut self.f.insts);
        f(self);
        let cold = std::mem::replace(&mut self.f.insts, main);
        self.cold.extend(cold);
    }

    /// An expression computed afresh here (not taken from, nor left in,
    /// the value cache): the naive code recomputes it on every retry.
    fn fresh_expr(&mut self, e: &Expr) -> VReg {
        let saved = std::mem::take(&mut self.values);
        let saved_log = std::mem::take(&mut self.scope_log);
        let v = self.expr(e);
        self.values = saved;
        self.scope_log = saved_log;
        v
    }

    /// A byte-reversed access's offset in a register, on a target whose
    /// byte-reversed forms are indexed only (shared through the value
    /// cache, so [`Builder::hoist_values`] sets it before loops).
    fn index_of(&mut self, swap: bool, offset: u64) -> Option<VReg> {
        self.needs_index(swap, offset)
            .then(|| self.constant(offset))
    }

    fn needs_index(&self, swap: bool, offset: u64) -> bool {
        swap && offset != 0 && self.target.swap_is_indexed()
    }

    /// Is register `reg` of `dev` byte-reversed from the target's order?
    fn swap(&self, dev: &Device, reg: usize) -> bool {
        let big = dev.regs[reg].endian == Endian::Big;
        dev.regs[reg].width > 8 && big != self.target.big_endian()
    }
}
