//! Optimized IR -> LIR for one target.
//!
//! Values written to registers are computed once, before the top-level
//! statement that first needs them, so instance loops hold only the
//! load of the instance base, the stores, and the loop step (what a
//! kernel developer writes by hand).

use super::*;
use crate::ir::expr::{BinOp, Expr};
use crate::ir::{Device, Instances, PollOp, Program, Seq, Stmt};
use crate::spec::ast::Endian;
use crate::spec::diag::Diag;
use crate::target::Target;
use rustc_hash::FxHashMap as HashMap;

mod lock;
use lock::Acquire;

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

pub fn build(prog: &Program, seq: &Seq, target: Target, hoist: Hoist) -> Result<Func, Diag> {
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
    if args.len() > crate::target::MAX_ARGS {
        return Err(Diag::new(
            seq.span,
            format!(
                "`{}` takes {} arguments; at most {} are supported",
                seq.name,
                args.len(),
                crate::target::MAX_ARGS
            ),
        )
        .label("too many arguments")
        .help(
            "split the sequence or use fewer parameters (a dynamic device set \
             takes two arguments, its array and its count)",
        ));
    }
    let mut b = Builder {
        prog,
        target,
        f: Func {
            name: seq.name.clone(),
            args: args.clone(),
            insts: Vec::new(),
            nvregs: 0,
            nlabels: 0,
        },
        arg_regs: Vec::new(),
        arg_override: HashMap::default(),
        values: HashMap::default(),
        scope_log: Vec::new(),
        bases: HashMap::default(),
        origin: Origin::default(),
        param_names: seq.params.clone(),
        locals: HashMap::default(),
        cold: Vec::new(),
        cache: hoist != Hoist::AtUse,
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
        for s in &seq.body {
            b.hoist_values(s);
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
    // A `-> void` sequence reports nothing: every exit (a poll that ran
    // out, a zero step) leaves 0 in the return register, as its end does.
    if seq.void {
        for (i, _) in &mut b.f.insts {
            if let Inst::Ret { value } = i {
                *value = Operand::Imm(0);
            }
        }
    }
    Ok(b.f)
}

/// What a poll compares and how it gives up.
struct Poll<'a> {
    op: PollOp,
    want: Operand,
    limit: u64,
    fail: i64,
    fail_barrier: Option<&'a str>,
}

struct Builder<'a> {
    prog: &'a Program,
    target: Target,
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
        self.f.insts.push((i, self.origin.clone()));
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
        self.origin = Origin {
            line: Some(self.prog.line_of(span)),
            note: self.prog.snippet(span).into(),
            op: None,
        };
    }

    /// The barrier `passes::exits` gave a failure return, marked as such
    /// in listings.
    fn exit_barrier(&mut self, name: &str) {
        let saved = std::mem::replace(
            &mut self.origin,
            Origin {
                line: None,
                note: "placed by complete-exits: invalidations done before this return".into(),
                op: None,
            },
        );
        self.emit(Inst::Barrier { name: name.into() });
        self.origin = saved;
    }

    /// Emit the instruction that performs IR operation `op`.
    fn emit_op(&mut self, op: crate::ir::OpId, i: Inst) {
        let mut o = self.origin.clone();
        o.op = Some(op);
        self.f.insts.push((i, o));
    }

    /// Compute, before `s`, every non-trivial write value used inside it.
    fn hoist_values(&mut self, s: &Stmt) {
        if !self.cache {
            return;
        }
        let mut exprs: Vec<(&Expr, crate::spec::diag::Span)> = Vec::new();
        walk_unconditional(std::slice::from_ref(s), &mut |x| match x {
            Stmt::Write { value, access } => exprs.push((value, access.span)),
            Stmt::Invalidate { operands, span, .. } => {
                exprs.extend(operands.iter().map(|o| (o, *span)));
            }
            _ => {}
        });
        // Loop-variant values: hoist their loop-invariant parts.
        let mut parts: Vec<(&Expr, crate::spec::diag::Span)> = Vec::new();
        for (e, span) in exprs {
            invariant_parts(e, &mut |p| parts.push((p, span)));
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
    }

    fn expr(&mut self, e: &Expr) -> VReg {
        if let Expr::Param(i) = e {
            return self.arg_of(&ArgKind::Param(*i));
        }
        if let Expr::Local(l) = e {
            return self.locals[l];
        }
        if let Some(v) = self.values.get(e) {
            return *v;
        }
        let v = match e {
            Expr::Local(_) => unreachable!("handled above"),
            // The cover pass replaces every binding before lowering; a
            // patched feature is only ever a dispatch condition (handled
            // at the `if`), whose unpatched value is 0.
            Expr::Binding(_) | Expr::Feature(_) => {
                let d = self.vreg();
                self.emit(Inst::Imm { dst: d, value: 0 });
                d
            }
            Expr::Const(c) => {
                let d = self.vreg();
                self.emit(Inst::Imm { dst: d, value: *c });
                d
            }
            Expr::Param(_) => unreachable!("handled above"),
            Expr::Not(a) => {
                let a = self.expr(a);
                let d = self.vreg();
                self.emit(Inst::Not { dst: d, src: a });
                d
            }
            Expr::Insert {
                value,
                shift,
                width,
            } => {
                let a = self.expr(value);
                let d = self.vreg();
                self.emit(Inst::Insert {
                    dst: d,
                    src: a,
                    shift: *shift,
                    width: *width,
                });
                d
            }
            Expr::Bin(op, a, b) => {
                // Immediate right operands where targets have such forms.
                let av = self.expr(a);
                let bo = match (op, b.as_const()) {
                    (_, Some(c)) => Operand::Imm(c),
                    _ => Operand::Reg(self.expr(b)),
                };
                let d = self.vreg();
                self.emit(Inst::Bin {
                    op: *op,
                    dst: d,
                    a: av,
                    b: bo,
                });
                match (op, bo) {
                    // A run-time amount of 64 or more shifts every bit out;
                    // the instructions take it modulo 64 (POWER: 128).
                    (BinOp::Shl | BinOp::Shr, Operand::Reg(n)) => {
                        let zero = self.constant(0);
                        self.select(Cmp::Geu, n, Operand::Imm(64), zero, d)
                    }
                    _ => d,
                }
            }
            Expr::Cmp(..) => {
                let c = crate::ir::Cond::of(e.clone());
                let a = self.expr(&c.a);
                let b = self.operand(&c.b);
                // 1 and 0 as immediates, not cached registers: a cached
                // constant stays live to the end of the function, and a
                // sequence with many conditions ran out of registers.
                let d = self.vreg();
                let done = self.label();
                self.emit(Inst::Imm { dst: d, value: 1 });
                self.emit(Inst::Branch {
                    cmp: c.cmp,
                    a,
                    b,
                    target: done,
                });
                self.emit(Inst::Imm { dst: d, value: 0 });
                self.emit(Inst::Label(done));
                d
            }
            Expr::Call(f, args) => self.call(*f, args),
        };
        // Loop-variant values are recomputed where they are used.
        if self.cache && !e.uses_locals() && self.values.insert(e.clone(), v).is_none() {
            self.scope_log.push(e.clone());
        }
        v
    }

    /// A bounded poll of a register or of memory: `load` builds the read
    /// into a fresh register (attributed to IR operation `id`), `mask`
    /// selects the field; `limit` reads, then the failure return (after
    /// the completion barrier `passes::exits` gave it).
    fn poll_loop(
        &mut self,
        id: crate::ir::OpId,
        load: &dyn Fn(VReg) -> Inst,
        mask: Option<u64>,
        p: &Poll,
    ) {
        let (top, done) = (self.label(), self.label());
        let n = self.vreg();
        self.emit(Inst::Imm {
            dst: n,
            value: p.limit,
        });
        self.emit(Inst::Label(top));
        let v = self.vreg();
        self.emit_op(id, load(v));
        let t = match mask {
            None => v,
            Some(m) => self.bin_imm(BinOp::And, v, m),
        };
        let cmp = match p.op {
            PollOp::Eq => Cmp::Eq,
            PollOp::Ne => Cmp::Ne,
        };
        self.emit(Inst::Branch {
            cmp,
            a: t,
            b: p.want,
            target: done,
        });
        self.count_down(n, Cmp::Ne, top);
        if let Some(b) = p.fail_barrier {
            self.exit_barrier(b);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(p.fail as u64),
        });
        self.emit(Inst::Label(done));
    }

    /// Pointer parameter `ptr` plus a byte offset computed at run time.
    fn address(&mut self, ptr: usize, index: &Expr) -> VReg {
        let base = self.arg_of(&ArgKind::Param(ptr));
        let i = self.expr(index);
        let d = self.vreg();
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: d,
            a: base,
            b: Operand::Reg(i),
        });
        d
    }

    /// A constant in a register (shared through the value cache).
    fn constant(&mut self, c: u64) -> VReg {
        self.expr(&Expr::Const(c))
    }

    /// An immediate where it is a constant, else a register.
    fn operand(&mut self, e: &Expr) -> Operand {
        match e.as_const() {
            Some(c) => Operand::Imm(c),
            None => Operand::Reg(self.expr(e)),
        }
    }

    /// `a cmp b ? t : f` in a fresh register, by a branch around a copy
    /// (every target has these; none of the uses is in a hot loop).
    fn select(&mut self, cmp: Cmp, a: VReg, b: Operand, t: VReg, f: VReg) -> VReg {
        let d = self.vreg();
        let done = self.label();
        self.emit(Inst::Copy { dst: d, src: t });
        self.emit(Inst::Branch {
            cmp,
            a,
            b,
            target: done,
        });
        self.emit(Inst::Copy { dst: d, src: f });
        self.emit(Inst::Label(done));
        d
    }

    fn un(&mut self, op: crate::lir::UnOp, src: VReg) -> VReg {
        let d = self.vreg();
        self.emit(Inst::Un { op, dst: d, src });
        d
    }

    fn bin_imm(&mut self, op: BinOp, a: VReg, c: u64) -> VReg {
        let d = self.vreg();
        self.emit(Inst::Bin {
            op,
            dst: d,
            a,
            b: Operand::Imm(c),
        });
        d
    }

    /// `c - a` for a constant `c`.
    fn rsub(&mut self, c: u64, a: VReg) -> VReg {
        let k = self.constant(c);
        let d = self.vreg();
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: d,
            a: k,
            b: Operand::Reg(a),
        });
        d
    }

    /// Built-in functions from the three bit counts, arithmetic and
    /// selects; the definitions at 0 follow from clz(0) = ctz(0) = 64.
    fn call(&mut self, f: crate::ir::expr::Func, args: &[Expr]) -> VReg {
        use crate::ir::expr::Func;
        use crate::lir::UnOp;
        let x = self.expr(&args[0]);
        match f {
            Func::Clz => self.un(UnOp::Clz, x),
            Func::Ctz => self.un(UnOp::Ctz, x),
            Func::Popcount => self.un(UnOp::Popcount, x),
            // 64 - clz(x): 0 for 0.
            Func::Fls => {
                let c = self.un(UnOp::Clz, x);
                self.rsub(64, c)
            }
            // 63 - clz(x): all ones for 0.
            Func::Ilog2 => {
                let c = self.un(UnOp::Clz, x);
                self.rsub(63, c)
            }
            // ctz(x) + 1, and 0 for 0.
            Func::Ffs => {
                let c = self.un(UnOp::Ctz, x);
                let c1 = self.bin_imm(BinOp::Add, c, 1);
                let zero = self.constant(0);
                self.select(Cmp::Eq, x, Operand::Imm(0), zero, c1)
            }
            // 1 << (64 - clz(x - 1)), 0 once the amount reaches 64.
            Func::RoundupPow2 => {
                let m = self.bin_imm(BinOp::Sub, x, 1);
                let c = self.un(UnOp::Clz, m);
                let n = self.rsub(64, c);
                let one = self.constant(1);
                let p = self.vreg();
                self.emit(Inst::Bin {
                    op: BinOp::Shl,
                    dst: p,
                    a: one,
                    b: Operand::Reg(n),
                });
                let zero = self.constant(0);
                self.select(Cmp::Geu, n, Operand::Imm(64), zero, p)
            }
            Func::Min | Func::Max => {
                let y = self.expr(&args[1]);
                let cmp = if f == Func::Min { Cmp::Ltu } else { Cmp::Geu };
                self.select(cmp, x, Operand::Reg(y), x, y)
            }
        }
    }

    fn swap(&self, dev: &Device, reg: usize) -> bool {
        let big = dev.regs[reg].endian == Endian::Big;
        dev.regs[reg].width > 8 && big != self.target.big_endian()
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diag> {
        match s {
            Stmt::Each {
                dev, body, span, ..
            } => {
                self.set_origin(*span);
                self.origin.note = format!("each {}", self.prog.devices[*dev].name).into();
                self.each(*dev, body)?;
            }
            Stmt::Write { access, value } => {
                let v = self.expr(value);
                self.set_origin(access.span);
                let dev = &self.prog.devices[access.dev];
                let base = self.base_of(access.dev);
                let swap = self.swap(dev, access.reg);
                self.emit_op(
                    access.id,
                    Inst::Store {
                        src: v,
                        base,
                        offset: dev.regs[access.reg].offset,
                        width: dev.regs[access.reg].width,
                        swap,
                        kind: MemKind::Device {
                            dev: access.dev,
                            reg: access.reg,
                            op: access.id,
                        },
                    },
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
                self.set_origin(access.span);
                let dev = &self.prog.devices[access.dev];
                let reg = &dev.regs[access.reg];
                let (offset, width) = (reg.offset, reg.width);
                let swap = self.swap(dev, access.reg);
                let base = self.base_of(access.dev);
                let full = crate::ir::expr::field_mask(0, width);
                // A run-time value is computed once, before the loop.
                let want = self.operand(value);
                let mask = (*mask & full != full).then_some(*mask);
                let kind = MemKind::Device {
                    dev: access.dev,
                    reg: access.reg,
                    op: access.id,
                };
                let load = |dst| Inst::Load {
                    dst,
                    base,
                    offset,
                    width,
                    swap,
                    kind,
                };
                let poll = Poll {
                    op: *op,
                    want,
                    limit: *limit,
                    fail: *fail,
                    fail_barrier: fail_barrier.as_deref(),
                };
                self.poll_loop(access.id, &load, mask, &poll);
            }
            Stmt::Read { access, local } => {
                self.set_origin(access.span);
                let dev = &self.prog.devices[access.dev];
                let reg = &dev.regs[access.reg];
                let (offset, width) = (reg.offset, reg.width);
                let swap = self.swap(dev, access.reg);
                let base = self.base_of(access.dev);
                // A fresh register per read: the local is only ever read
                // (field extraction), never assigned.
                let dst = self.vreg();
                self.emit_op(
                    access.id,
                    Inst::Load {
                        dst,
                        base,
                        offset,
                        width,
                        swap,
                        kind: MemKind::Device {
                            dev: access.dev,
                            reg: access.reg,
                            op: access.id,
                        },
                    },
                );
                self.locals.insert(*local, dst);
            }
            Stmt::Barrier { name, origin, .. } => {
                self.origin = match origin {
                    crate::ir::Origin::Spec(span) => Origin {
                        line: Some(self.prog.line_of(*span)),
                        note: "barrier from the spec".into(),
                        op: None,
                    },
                    crate::ir::Origin::Pass(p) => Origin {
                        line: None,
                        note: format!("placed by {p}").into(),
                        op: None,
                    },
                };
                self.emit(Inst::Barrier { name: name.clone() });
            }
            Stmt::Range {
                local,
                start,
                size,
                step,
                body,
                span,
                fail_barrier,
            } => {
                self.set_origin(*span);
                self.range(*local, start, size, step, body, fail_barrier.as_deref())?;
            }
            Stmt::Invalidate {
                id,
                name,
                operands,
                span,
                ..
            } => {
                let ops: Vec<VReg> = operands.iter().map(|o| self.expr(o)).collect();
                self.set_origin(*span);
                // Traces attribute the executed instruction to `id`, so
                // `verify` checks the orderings that end or start at it.
                self.emit_op(
                    *id,
                    Inst::Invalidate {
                        name: name.clone(),
                        operands: ops,
                    },
                );
            }
            Stmt::Mem { id, op, span } => {
                self.set_origin(*span);
                self.mem_op(*id, op)?;
            }
            Stmt::Assign { local, value, span } => {
                let v = self.operand(value);
                self.set_origin(*span);
                // A local is one virtual register from its `let` on; an
                // assignment copies into it (expressions that read locals
                // are never cached, so nothing stale survives it).
                let dst = match self.locals.get(local) {
                    Some(d) => *d,
                    None => {
                        let d = self.vreg();
                        self.locals.insert(*local, d);
                        d
                    }
                };
                match v {
                    Operand::Imm(c) => self.emit(Inst::Imm { dst, value: c }),
                    Operand::Reg(src) if src == dst => {}
                    Operand::Reg(src) => self.emit(Inst::Copy { dst, src }),
                }
            }
            Stmt::While {
                cond,
                body,
                limit,
                fail,
                span,
                fail_barrier,
            } => {
                self.set_origin(*span);
                self.while_loop(cond, body, *limit, *fail, fail_barrier.as_deref())?;
            }
            Stmt::Cover { span, .. } => {
                return Err(Diag::new(
                    *span,
                    "internal error: cover reached lowering unexpanded",
                ));
            }
            Stmt::If {
                cond,
                then_,
                else_,
                rare: _,
            } if self.patched_cap(cond).is_some() => {
                // The kernel patches the `nop` into a branch to the arm
                // with the feature; unpatched code runs the arm without.
                let cap = self.patched_cap(cond).unwrap_or_default();
                let (on, end) = (self.label(), self.label());
                self.emit(Inst::FeatureJump { cap, target: on });
                let saved = self.scope();
                for st in else_ {
                    self.hoist_values(st);
                    self.stmt(st)?;
                }
                self.unscope(saved);
                self.emit(Inst::Jump(end));
                self.emit(Inst::Label(on));
                for st in then_ {
                    self.hoist_values(st);
                    self.stmt(st)?;
                }
                self.unscope(saved);
                self.emit(Inst::Label(end));
            }
            Stmt::If {
                cond,
                then_,
                else_,
                rare: _,
            } => {
                let a = self.expr(&cond.a);
                let b = match cond.b.as_const() {
                    Some(c) => Operand::Imm(c),
                    None => Operand::Reg(self.expr(&cond.b)),
                };
                let (else_l, end) = (self.label(), self.label());
                let inverse = cond.cmp.inverse();
                // With no else arm the branch skips straight to the end.
                let skip = if else_.is_empty() { end } else { else_l };
                self.emit(Inst::Branch {
                    cmp: inverse,
                    a,
                    b,
                    target: skip,
                });
                let saved = self.scope();
                for st in then_ {
                    self.hoist_values(st);
                    self.stmt(st)?;
                }
                self.unscope(saved);
                if !else_.is_empty() {
                    self.emit(Inst::Jump(end));
                    self.emit(Inst::Label(else_l));
                    for st in else_ {
                        self.hoist_values(st);
                        self.stmt(st)?;
                    }
                    self.unscope(saved);
                }
                self.emit(Inst::Label(end));
            }
            Stmt::Return { value, span } => {
                self.set_origin(*span);
                let op = match value.as_const() {
                    Some(c) => Operand::Imm(c),
                    None => Operand::Reg(self.expr(value)),
                };
                self.emit(Inst::Ret { value: op });
            }
        }
        Ok(())
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

    /// Address of a pointer parameter's element.
    fn mem_addr(&mut self, m: &crate::ir::MemRef) -> VReg {
        let e = Expr::bin(BinOp::Add, Expr::Param(m.ptr), Expr::Const(m.offset));
        self.expr(&e)
    }

    /// Lower a normal-memory or lock operation; the instructions that
    /// access the memory carry IR operation `id`, so traces attribute them.
    fn mem_op(&mut self, id: crate::ir::OpId, op: &crate::ir::MemOp) -> Result<(), Diag> {
        use crate::ir::MemOp;
        match op {
            MemOp::Load { local, mem } => {
                let base = self.arg_of(&ArgKind::Param(mem.ptr));
                let v = self.vreg();
                self.emit_op(
                    id,
                    Inst::Load {
                        dst: v,
                        base,
                        offset: mem.offset,
                        width: mem.width,
                        swap: false,
                        kind: MemKind::Normal,
                    },
                );
                self.locals.insert(*local, v);
            }
            MemOp::Store { mem, value } => {
                let v = self.expr(value);
                let base = self.arg_of(&ArgKind::Param(mem.ptr));
                self.emit_op(
                    id,
                    Inst::Store {
                        src: v,
                        base,
                        offset: mem.offset,
                        width: mem.width,
                        swap: false,
                        kind: MemKind::Normal,
                    },
                );
            }
            MemOp::LoadAt {
                local,
                ptr,
                width,
                index,
            } => {
                let addr = self.address(*ptr, index);
                let v = self.vreg();
                self.emit_op(
                    id,
                    Inst::Load {
                        dst: v,
                        base: addr,
                        offset: 0,
                        width: *width,
                        swap: false,
                        kind: MemKind::Normal,
                    },
                );
                self.locals.insert(*local, v);
            }
            MemOp::StoreAt {
                ptr,
                width,
                index,
                value,
            } => {
                let v = self.expr(value);
                let addr = self.address(*ptr, index);
                self.emit_op(
                    id,
                    Inst::Store {
                        src: v,
                        base: addr,
                        offset: 0,
                        width: *width,
                        swap: false,
                        kind: MemKind::Normal,
                    },
                );
            }
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
                let addr = self.address(*ptr, index);
                let want = self.operand(value);
                let width = *width;
                let load = |dst| Inst::Load {
                    dst,
                    base: addr,
                    offset: 0,
                    width,
                    swap: false,
                    kind: MemKind::Normal,
                };
                let poll = Poll {
                    op: *op,
                    want,
                    limit: *limit,
                    fail: *fail,
                    fail_barrier: fail_barrier.as_deref(),
                };
                self.poll_loop(id, &load, None, &poll);
            }
            MemOp::Acquire {
                mem,
                value,
                held,
                status,
                limit,
                fail_barrier,
                hoisted,
            } => self.acquire(
                id,
                &Acquire {
                    mem,
                    value,
                    held: *held,
                    status: *status,
                    limit: *limit,
                    fail_barrier: fail_barrier.as_deref(),
                    hoisted: *hoisted,
                },
            ),
            MemOp::Release {
                mem,
                value,
                cond,
                order,
            } => self.release(id, mem, value, cond.as_ref(), *order),
        }
        Ok(())
    }

    /// `rem = size; a = start; do { body(a); if (rem <= step) break;
    /// rem -= step; a += step; }`: terminates for every size and step, and
    /// runs ceil(size / step) times.
    fn range(
        &mut self,
        local: usize,
        start: &Expr,
        size: &Expr,
        step: &Expr,
        body: &[Stmt],
        fail_barrier: Option<&str>,
    ) -> Result<(), Diag> {
        let saved = self.origin.clone();
        let size_v = self.expr(size);
        let step_v = self.expr(step);
        let start_v = self.expr(start);
        let (top, exit) = (self.label(), self.label());
        self.emit(Inst::Branch {
            cmp: Cmp::Eq,
            a: size_v,
            b: Operand::Imm(0),
            target: exit,
        });
        if step.as_const().is_none() {
            let ok = self.label();
            self.emit(Inst::Branch {
                cmp: Cmp::Ne,
                a: step_v,
                b: Operand::Imm(0),
                target: ok,
            });
            if let Some(name) = fail_barrier {
                self.exit_barrier(name);
            }
            self.emit(Inst::Ret {
                value: Operand::Imm(EINVAL as u64),
            });
            self.emit(Inst::Label(ok));
        }
        // A constant power-of-two step (a page, a granule) counts the
        // iterations instead: n = ceil(size / step) = (size >> k) + (size's
        // low k bits != 0), which cannot overflow, and the loop is
        // bottom-tested on n (the kernel's `add; subs; b.ne`), three
        // instructions a trip where the remainder form takes a compare,
        // a branch, two updates and a jump.
        if let Some(k) = step
            .as_const()
            .filter(|c| c.is_power_of_two())
            .map(u64::trailing_zeros)
        {
            let n = self.trip_count(size_v, k);
            let addr = self.range_body(local, start_v, body, top, saved)?;
            // The step in its register (computed once, before the loop): an
            // immediate some targets cannot encode would be rebuilt each trip.
            self.emit(Inst::Bin {
                op: BinOp::Add,
                dst: addr,
                a: addr,
                b: Operand::Reg(step_v),
            });
            self.count_down(n, Cmp::Ne, top);
            self.emit(Inst::Label(exit));
            return Ok(());
        }
        let rem = self.vreg();
        self.emit(Inst::Copy {
            dst: rem,
            src: size_v,
        });
        let addr = self.range_body(local, start_v, body, top, saved)?;
        // rem <= step  <=>  !(step < rem)
        let step_op = match step.as_const() {
            Some(c) => Operand::Imm(c),
            None => Operand::Reg(step_v),
        };
        self.emit(Inst::Branch {
            cmp: Cmp::Geu,
            a: step_v,
            b: Operand::Reg(rem),
            target: exit,
        });
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: rem,
            a: rem,
            b: step_op,
        });
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: addr,
            a: addr,
            b: step_op,
        });
        self.emit(Inst::Jump(top));
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// `n -= 1; if n CMP 0 goto target`: the step of a counted loop (a
    /// bounded poll, a counted range, a bounded spin).
    fn count_down(&mut self, n: VReg, cmp: Cmp, target: LabelId) {
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: n,
            a: n,
            b: Operand::Imm(1),
        });
        self.emit(Inst::Branch {
            cmp,
            a: n,
            b: Operand::Imm(0),
            target,
        });
    }

    /// A range loop's head and body: the address local `local` starts at
    /// `start_v`, label `top`, the body's statements, and the scope and
    /// origin restored after it. Returns the address register.
    fn range_body(
        &mut self,
        local: usize,
        start_v: VReg,
        body: &[Stmt],
        top: LabelId,
        saved: Origin,
    ) -> Result<VReg, Diag> {
        let addr = self.vreg();
        self.emit(Inst::Copy {
            dst: addr,
            src: start_v,
        });
        self.emit(Inst::Label(top));
        self.locals.insert(local, addr);
        let saved_values = self.scope();
        for s in body {
            self.stmt(s)?;
        }
        // Values first computed inside the loop are not available after it.
        self.unscope(saved_values);
        self.locals.remove(&local);
        self.origin = saved;
        Ok(addr)
    }

    /// The trips of a `range` with step `1 << k` over a nonzero `size`:
    /// `(size >> k) + ((size & (step - 1)) != 0)`, ceil(size / step)
    /// without the overflow of `(size + step - 1) >> k`.
    fn trip_count(&mut self, size_v: VReg, k: u32) -> VReg {
        let n = self.vreg();
        self.emit(Inst::Bin {
            op: BinOp::Shr,
            dst: n,
            a: size_v,
            b: Operand::Imm(u64::from(k)),
        });
        if k > 0 {
            let (low, whole) = (self.vreg(), self.label());
            self.emit(Inst::Bin {
                op: BinOp::And,
                dst: low,
                a: size_v,
                b: Operand::Imm((1u64 << k) - 1),
            });
            self.emit(Inst::Branch {
                cmp: Cmp::Eq,
                a: low,
                b: Operand::Imm(0),
                target: whole,
            });
            self.emit(Inst::Bin {
                op: BinOp::Add,
                dst: n,
                a: n,
                b: Operand::Imm(1),
            });
            self.emit(Inst::Label(whole));
        }
        n
    }

    /// `n = limit; top: if !cond goto exit; if n == 0 goto fail; n--;
    /// body; goto top; fail: return code; exit:`.
    fn while_loop(
        &mut self,
        cond: &crate::ir::Cond,
        body: &[Stmt],
        limit: u64,
        fail: i64,
        fail_barrier: Option<&str>,
    ) -> Result<(), Diag> {
        let saved = self.origin.clone();
        let (top, fail_l, exit) = (self.label(), self.label(), self.label());
        let n = self.vreg();
        self.emit(Inst::Imm {
            dst: n,
            value: limit,
        });
        // Values first computed in the loop (the condition's included) are
        // not available after it: the failure path leaves from inside.
        let saved_values = self.scope();
        self.emit(Inst::Label(top));
        let a = self.expr(&cond.a);
        let b = self.operand(&cond.b);
        self.emit(Inst::Branch {
            cmp: cond.cmp.inverse(),
            a,
            b,
            target: exit,
        });
        self.emit(Inst::Branch {
            cmp: Cmp::Eq,
            a: n,
            b: Operand::Imm(0),
            target: fail_l,
        });
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: n,
            a: n,
            b: Operand::Imm(1),
        });
        for s in body {
            self.stmt(s)?;
        }
        self.unscope(saved_values);
        self.origin = saved;
        self.emit(Inst::Jump(top));
        self.emit(Inst::Label(fail_l));
        if let Some(name) = fail_barrier {
            self.exit_barrier(name);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(fail as u64),
        });
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// Walk the instance array with a pointer: `for (p = a; p != a + n; p++)`.
    fn each(&mut self, dev: usize, body: &[Stmt]) -> Result<(), Diag> {
        let inst = self.prog.devices[dev].instances;
        if inst == Instances::Single {
            for s in body {
                self.stmt(s)?;
            }
            return Ok(());
        }
        let arr = self.arg_of(&ArgKind::DeviceArray(dev));
        let (top, exit) = (self.label(), self.label());
        let cur = self.vreg();
        let end = self.vreg();
        match inst {
            Instances::Dynamic { .. } => {
                let count = self.arg_of(&ArgKind::DeviceCount(dev));
                self.emit(Inst::Branch {
                    cmp: Cmp::Eq,
                    a: count,
                    b: Operand::Imm(0),
                    target: exit,
                });
                self.emit(Inst::Bin {
                    op: BinOp::Shl,
                    dst: end,
                    a: count,
                    b: Operand::Imm(3),
                });
                self.emit(Inst::Bin {
                    op: BinOp::Add,
                    dst: end,
                    a: end,
                    b: Operand::Reg(arr),
                });
            }
            Instances::Fixed(n) => {
                self.emit(Inst::Bin {
                    op: BinOp::Add,
                    dst: end,
                    a: arr,
                    b: Operand::Imm(n * 8),
                });
            }
            Instances::Single => unreachable!("handled above"),
        }
        self.emit(Inst::Copy { dst: cur, src: arr });
        self.emit(Inst::Label(top));
        let base = self.vreg();
        self.emit(Inst::Load {
            dst: base,
            base: cur,
            offset: 0,
            width: 64,
            swap: false,
            kind: MemKind::Normal,
        });
        let saved = self.origin.clone();
        self.bases.insert(dev, base);
        let saved_values = self.scope();
        for s in body {
            self.stmt(s)?;
        }
        self.unscope(saved_values);
        self.bases.remove(&dev);
        self.origin = saved;
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: cur,
            a: cur,
            b: Operand::Imm(8),
        });
        self.emit(Inst::Branch {
            cmp: Cmp::Ne,
            a: cur,
            b: Operand::Reg(end),
            target: top,
        });
        self.emit(Inst::Label(exit));
        Ok(())
    }
}
