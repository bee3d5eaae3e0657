//! `range` loops: the trip control (counted for a constant power-of-two
//! step, by remainder otherwise), the induction variables of the body
//! (see [`iv`]), and the versioned loop that takes a cheaper body when a
//! run-time check shows the facts it needs hold.

use super::iv::{Facts, Loop};
use super::*;

/// How a range loop decides whether another trip runs.
#[derive(Clone, Copy)]
enum Control {
    /// `n = ceil(size >> k)` trips, counted down.
    Counted(u32),
    /// `rem -= step` while more than a step was left.
    Remainder(VReg),
}

/// A body with its induction variables replaced, for one set of facts.
struct Reduced {
    body: Vec<Stmt>,
    /// (local, expression, increment per trip).
    ivs: Vec<(usize, Expr, Expr)>,
    reads_addr: bool,
}

/// Trips per test of an unrolled remainder loop: 1 << UNROLL_LOG2.
const UNROLL_LOG2: u64 = 2;

/// Trips per bottom test of a counted loop whose trip is one CPU
/// invalidation or device write, 1 << this: a loop that ends on its
/// address (one instruction, `bne iv, end`) 4, one that counts down (two,
/// `sub; cbnz`) 8, where a test saves more per trip and a bit of the
/// dispatch costs one `tbz`. Measured on the reference rows: riscv_tlb
/// 826 / 801 / 803 executed at 2 / 4 / 8 trips; arm64_tlb_range's
/// flush_tlb_range 1507 at 4, 1381 at 8.
const ENDS_LOG2: u32 = 2;
const COUNTED_LOG2: u32 = 3;

/// What one trip of a range loop emits.
struct Trip<'a> {
    body: &'a [Stmt],
    /// (local, register, increment expression) per carried variable.
    carried: &'a [(usize, VReg, Expr)],
    incs: &'a [Operand],
    /// The address register and its stride, when the body reads it.
    addr: Option<(VReg, Operand)>,
    saved: &'a Origin,
}

impl Reduced {
    /// One device write or CPU invalidation of values the loop carries:
    /// the trip is an access and its adds, the test a third of the work.
    fn is_tiny(&self) -> bool {
        matches!(
            self.body[..],
            [Stmt::Write { .. } | Stmt::Invalidate { .. }]
        ) && self.cost() == self.ivs.len() + usize::from(self.reads_addr)
    }

    /// Work per trip: operations on values that change between trips,
    /// plus one add per carried register.
    fn cost(&self) -> usize {
        fn ops(e: &Expr) -> usize {
            if !e.uses_locals() {
                return 0;
            }
            let own = usize::from(!matches!(e, Expr::Local(_)));
            own + e.children().into_iter().map(ops).sum::<usize>()
        }
        let mut n = 0;
        crate::ir::each_expr(&self.body, &mut |e| n += ops(e));
        n + self.ivs.len() + usize::from(self.reads_addr)
    }
}

impl Builder<'_> {
    /// `for (a = start; a < start + size; a += step)`, at least one trip
    /// when size > 0 and ceil(size / step) in all; a zero step returns
    /// `-EINVAL` (after `fail_barrier`).
    pub(super) fn range(
        &mut self,
        local: usize,
        start: &Expr,
        size: &Expr,
        step: &Expr,
        body: &[Stmt],
        fail_barrier: crate::ir::ExitBarriers,
    ) -> Result<(), Diag> {
        let saved = self.origin.clone();
        // A constant power-of-two step (a page, a granule) counts the trips.
        let counted = step
            .as_const()
            .filter(|c| c.is_power_of_two())
            .map(u64::trailing_zeros);
        let size_v = self.expr(size);
        let step_v = match counted {
            Some(_) => None,
            None => Some(self.expr(step)),
        };
        let start_v = self.expr(start);
        let exit = self.label();
        self.branch(Cmp::Eq, size_v, Operand::Imm(0), exit);
        if let (Some(step_v), None) = (step_v, step.as_const()) {
            self.nonzero_step(step_v, fail_barrier);
        }
        let control = match (counted, step_v) {
            (Some(k), _) => Control::Counted(k),
            (None, Some(step_v)) => Control::Remainder(step_v),
            (None, None) => unreachable!("a step that is not counted is in a register"),
        };
        let known = Facts {
            stride_low: step.as_const().map_or(0, u64::trailing_zeros),
            bound: None,
        };
        let (plain, faster) = self.choose_facts(local, step, body, known);
        if let Some((facts, fast)) = faster {
            let slow = self.label();
            self.check_facts(facts, known, (start_v, size_v, step_v), slow);
            let sizes = (size_v, start_v, size.as_const());
            self.range_loop(local, step, control, sizes, fast, &saved)?;
            self.emit(Inst::Jump(exit));
            self.emit(Inst::Label(slow));
        }
        let sizes = (size_v, start_v, size.as_const());
        self.range_loop(local, step, control, sizes, plain, &saved)?;
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// `if (step == 0) return -EINVAL;`
    fn nonzero_step(&mut self, step_v: VReg, fail_barrier: crate::ir::ExitBarriers) {
        let ok = self.label();
        self.branch(Cmp::Ne, step_v, Operand::Imm(0), ok);
        for name in fail_barrier.iter() {
            self.exit_barrier(name);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(EINVAL as u64),
        });
        self.emit(Inst::Label(ok));
    }

    /// The body reduced with only what is `known`, and, when some facts a
    /// run-time check can establish make it cheaper per trip, those facts
    /// and that body: the weakest facts that reach the lowest cost (fewest
    /// zero low bits of the stride, then no bound, then the highest).
    fn choose_facts(
        &mut self,
        local: usize,
        step: &Expr,
        body: &[Stmt],
        known: Facts,
    ) -> (Reduced, Option<(Facts, Reduced)>) {
        let plain = self.reduce_ivs(
            Loop {
                local,
                stride: step,
                facts: known,
            },
            body,
        );
        // Nothing left to carry: no fact can make a trip cheaper.
        if plain.cost() == plain.ivs.len() + usize::from(plain.reads_addr) {
            return (plain, None);
        }
        let mut lows = vec![known.stride_low];
        if step.as_const().is_none() {
            lows.extend(shift_amounts(body));
            lows.sort_unstable();
            lows.dedup();
        }
        let bounds = std::iter::once(None).chain((32..=64).rev().map(Some));
        let mut best: Option<(Facts, Reduced)> = None;
        for bound in bounds {
            for &stride_low in &lows {
                let facts = Facts { stride_low, bound };
                if facts == known {
                    continue;
                }
                let r = self.reduce_ivs(
                    Loop {
                        local,
                        stride: step,
                        facts,
                    },
                    body,
                );
                let to_beat = best.as_ref().map_or(plain.cost(), |(_, b)| b.cost());
                if r.cost() < to_beat {
                    best = Some((facts, r));
                }
            }
        }
        (plain, best)
    }

    /// Go to `slow` unless `facts` hold for this call: the stride's low
    /// bits are zero, and `start + size` neither wraps nor passes
    /// 2^bound (one more than the last address: a strict check).
    fn check_facts(
        &mut self,
        facts: Facts,
        known: Facts,
        (start_v, size_v, step_v): (VReg, VReg, Option<VReg>),
        slow: LabelId,
    ) {
        if let (true, Some(step_v)) = (facts.stride_low > known.stride_low, step_v) {
            let low = self.bin_imm(BinOp::And, step_v, (1u64 << facts.stride_low) - 1);
            self.branch(Cmp::Ne, low, Operand::Imm(0), slow);
        }
        let Some(bound) = facts.bound else {
            return;
        };
        let end = self.bin(BinOp::Add, start_v, Operand::Reg(size_v));
        self.branch(Cmp::Ltu, end, Operand::Reg(start_v), slow);
        if bound < 64 {
            let high = self.bin_imm(BinOp::Shr, end, u64::from(bound));
            self.branch(Cmp::Ne, high, Operand::Imm(0), slow);
        }
    }

    /// The body with its induction variables replaced by fresh locals.
    fn reduce_ivs(&mut self, lp: Loop, body: &[Stmt]) -> Reduced {
        let mut body = body.to_vec();
        let mut ivs = Vec::new();
        let mut fresh = || {
            self.iv_locals += 1;
            usize::MAX - self.iv_locals
        };
        crate::ir::map_exprs(&mut body, &mut |e| lp.reduce(e, 64, &mut ivs, &mut fresh));
        let reads_addr = reads_local(&body, lp.local);
        Reduced {
            body,
            ivs,
            reads_addr,
        }
    }

    /// One loop over the range: the trip control, the carried variables
    /// set before it, the body, their increments, the bottom test. Every
    /// increment is computed before the loop, like every invariant.
    fn range_loop(
        &mut self,
        local: usize,
        step: &Expr,
        control: Control,
        (size_v, start_v, size_c): (VReg, VReg, Option<u64>),
        r: Reduced,
        saved: &Origin,
    ) -> Result<(), Diag> {
        let top = self.label();
        // Where a branch compares two registers at no cost, the loop ends
        // on a carried register reaching its value after the last trip.
        let ends_on_iv = self.target.branch_compares_registers();
        let mut passes = None;
        // The register the bottom test counts down: trips, or what is left.
        let counter = match control {
            Control::Counted(k) if r.is_tiny() && !ends_on_iv && self.pays(k, size_c) => {
                let (m, n) = self.passes(size_v, k, size_c);
                passes = Some(m);
                n
            }
            Control::Counted(k) => self.trip_count(size_v, k),
            Control::Remainder(_) => {
                let rem = self.vreg();
                self.emit(Inst::Copy {
                    dst: rem,
                    src: size_v,
                });
                rem
            }
        };
        let addr = r.reads_addr.then(|| {
            let addr = self.vreg();
            self.emit(Inst::Copy {
                dst: addr,
                src: start_v,
            });
            addr
        });
        let carried = self.start_ivs(local, start_v, &r.ivs);
        let incs: Vec<Operand> = carried.iter().map(|c| self.increment(&c.2)).collect();
        let stride = addr.map(|_| self.increment(step));
        if let Some(addr) = addr {
            self.locals.insert(local, addr);
        }
        let trip = Trip {
            body: &r.body,
            carried: &carried,
            incs: &incs,
            addr: addr.zip(stride),
            saved,
        };
        let tail_test = match control {
            Control::Remainder(step_v) if r.is_tiny() => {
                Some(self.unrolled(&trip, counter, step_v)?)
            }
            _ => None,
        };
        let ends_at = match control {
            Control::Counted(k) if ends_on_iv => {
                let ivs: Vec<(VReg, &Expr)> = addr
                    .map(|a| (a, step))
                    .into_iter()
                    .chain(carried.iter().map(|(_, r, inc)| (*r, inc)))
                    .collect();
                self.end_value(counter, k, &ivs)
            }
            _ => None,
        };
        let entries = match (ends_at, passes) {
            (Some(_), _) if r.is_tiny() => self.entries(counter, (false, None), top),
            (_, Some(m)) => {
                let known = size_c.map(|c| c.wrapping_sub(1) >> k_of(control));
                self.entries(m, (true, known), top)
            }
            _ => Vec::new(),
        };
        self.emit(Inst::Label(top));
        self.trip(&trip)?;
        for entry in entries {
            self.emit(Inst::Label(entry));
            self.trip(&trip)?;
        }
        for &(id, _, _) in &carried {
            self.locals.remove(&id);
        }
        if addr.is_some() {
            self.locals.remove(&local);
        }
        if let Some(test) = tail_test {
            self.emit(Inst::Label(test));
        }
        match (control, ends_at) {
            (Control::Counted(_), Some((reg, end))) => {
                self.branch(Cmp::Ne, reg, Operand::Reg(end), top)
            }
            (Control::Counted(_), None) => self.count_down(counter, Cmp::Ne, top),
            (Control::Remainder(step_v), _) => self.emit(Inst::SubBranchAbove {
                a: counter,
                b: step_v,
                target: top,
            }),
        }
        Ok(())
    }

    /// A loop whose trip is one access of carried values runs U = 1 <<
    /// ENDS_LOG2 or COUNTED_LOG2 trips per bottom test, entered at the trip that leaves a
    /// multiple of U: trip j = (-n) mod U of the U (`top` is trip 0) for
    /// `n` (> 0) trips, chosen from the low bits of `v`, which is `n`, or
    /// `n - 1` where `less_one`. Emitted before `top`, which the path for
    /// `n % U == 0` falls into; returns the labels of trips 1..U, for the
    /// caller to place.
    ///
    /// Exact for every `n`: the first pass runs `U - j` trips, 1 to U and
    /// `n` modulo U, each later pass U. The bottom test is then true only
    /// after all `n`: a loop that ends on a carried register reaching its
    /// end value (`sinval.vma; add; bne`) reaches it after no earlier
    /// trip (`end_value`), whatever multiple of U it is tested at; a
    /// counted one counts `ceil(n / U)` passes (`passes`).
    ///
    /// `known`: the value of `v` where the size is a constant, whose
    /// entry needs no test.
    fn entries(
        &mut self,
        v: VReg,
        (less_one, known): (bool, Option<u64>),
        top: LabelId,
    ) -> Vec<LabelId> {
        let log = if less_one { COUNTED_LOG2 } else { ENDS_LOG2 };
        let labels: Vec<LabelId> = (1..1u64 << log).map(|_| self.label()).collect();
        let low_mask = (1u64 << log) - 1;
        let entry = |low: u64| {
            let j = match less_one {
                false => low.wrapping_neg() & low_mask,
                true => low_mask - low,
            };
            match j {
                0 => top,
                j => labels[j as usize - 1],
            }
        };
        match known {
            Some(c) if entry(c & low_mask) == top => {}
            Some(c) => self.emit(Inst::Jump(entry(c & low_mask))),
            // The path to trip 0: the low bits of `n` clear, of `n - 1` set.
            None => self.dispatch(v, (0, log, 0), less_one, true, &entry),
        }
        labels
    }

    /// The test of bit `bit` of `v` (its bits below are `low`): the bit
    /// that leads towards trip 0 (`stay`) on here, the other out of line
    /// (or straight to its trip at the last bit); past the last bit, the
    /// trip `entry` picks, where the path in line falls into the loop.
    fn dispatch(
        &mut self,
        v: VReg,
        (bit, log, low): (u32, u32, u64),
        stay: bool,
        in_line: bool,
        entry: &dyn Fn(u64) -> LabelId,
    ) {
        if bit == log {
            if !in_line {
                self.emit(Inst::Jump(entry(low)));
            }
            return;
        }
        let away = low | u64::from(!stay) << bit;
        let target = if bit + 1 == log {
            entry(away)
        } else {
            let l = self.label();
            self.cold(&mut |b: &mut Self| {
                b.emit(Inst::Label(l));
                b.dispatch(v, (bit + 1, log, away), stay, false, entry);
            });
            l
        };
        self.emit(Inst::BranchBit {
            a: v,
            bit: bit as u8,
            set: !stay,
            target,
        });
        let kept = low | u64::from(stay) << bit;
        self.dispatch(v, (bit + 1, log, kept), stay, in_line, entry);
    }

    /// Does a counted loop of tiny trips in steps of `2^k` gain from
    /// running U per bottom test that counts down? Everywhere but where
    /// that test is one instruction (a count register), which only a
    /// loop of a constant size past 4U trips pays for (POWER's 127 sets).
    fn pays(&self, k: u32, size_c: Option<u64>) -> bool {
        let long = |c: u64| c.div_ceil(1 << k) >= 4 << COUNTED_LOG2;
        !self.target.counts_on_a_register() || size_c.is_some_and(long)
    }

    /// The control of a counted loop whose trips run U per bottom test
    /// (see `entries`), where the test counts: `m = n - 1` trips less one
    /// (`(size - 1) >> k`) and `ceil(n / U) = (m >> COUNTED_LOG2) + 1`
    /// passes, the register counted down (set at once for a constant
    /// size, whose `m` no test reads).
    fn passes(&mut self, size_v: VReg, k: u32, size_c: Option<u64>) -> (VReg, VReg) {
        if let Some(c) = size_c {
            let passes = self.vreg();
            let value = (c.wrapping_sub(1) >> k >> COUNTED_LOG2) + 1;
            self.emit(Inst::Imm { dst: passes, value });
            return (passes, passes);
        }
        let last = self.bin_imm(BinOp::Sub, size_v, 1);
        let m = self.bin_imm(BinOp::Shr, last, u64::from(k));
        let passes = self.bin_imm(BinOp::Shr, m, u64::from(COUNTED_LOG2));
        self.update(BinOp::Add, passes, Operand::Imm(1));
        (m, passes)
    }

    /// The value a carried register `iv` of constant increment `2^s`
    /// (`s <= k`) holds after `n` trips of a loop of step `2^k`: `iv + (n
    /// << s)`, the bottom test's `iv != end`. Exact modulo 2^64: `n <=
    /// 2^(64-k)` (a size below 2^64 in steps of 2^k), so `n << s` is at
    /// most 2^64 and no earlier trip reaches `end` (at 2^64 itself, `end`
    /// is the start and the register comes back to it only after all `n`).
    fn end_value(&mut self, n: VReg, k: u32, ivs: &[(VReg, &Expr)]) -> Option<(VReg, VReg)> {
        let (iv, s) = ivs.iter().find_map(|&(r, inc)| {
            let c = inc.as_const().filter(|c| c.is_power_of_two())?;
            (c.trailing_zeros() <= k).then_some((r, c.trailing_zeros()))
        })?;
        let off = match s {
            0 => n,
            _ => self.bin_imm(BinOp::Shl, n, u64::from(s)),
        };
        let end = self.bin(BinOp::Add, iv, Operand::Reg(off));
        Some((iv, end))
    }

    /// One trip: the body, then every carried register and the address
    /// stepped on.
    fn trip(&mut self, t: &Trip) -> Result<(), Diag> {
        let saved_values = self.scope();
        for s in t.body {
            self.stmt(s)?;
        }
        // Values first computed inside a trip are not available after it.
        self.unscope(saved_values);
        self.origin = t.saved.clone();
        for (&(_, reg, _), &inc) in t.carried.iter().zip(t.incs) {
            self.update(BinOp::Add, reg, inc);
        }
        if let Some((addr, stride)) = t.addr {
            self.update(BinOp::Add, addr, stride);
        }
        Ok(())
    }

    /// A remainder loop whose trip is one access of carried values is
    /// mostly its test (`str; add; subs; b.hi`): while at least U = 1 <<
    /// UNROLL_LOG2 trips are left, run U of them per test. `rem` (> 0) counts
    /// what is left by `step`. Before the loop that follows (`rem > 0`
    /// at its top), returning the label of its bottom test, where the
    /// unrolled part goes on with `rem` one step above what is left.
    ///
    /// With `r = rem - (U-1)*step` the test `r -= U*step; again if r was
    /// above U*step` goes on exactly while at least U trips remain, and at
    /// the exit `r + U*step` is what is left plus one step: the bottom
    /// test subtracts that step and runs the last trips (none when it
    /// reaches 0 or below). The unrolled part runs only when `rem >>
    /// UNROLL_LOG2` is above `step`: then `U*step < rem` does not overflow and at
    /// least U trips remain.
    fn unrolled(&mut self, t: &Trip, rem: VReg, step: VReg) -> Result<LabelId, Diag> {
        let (one_by_one, top, test) = (self.label(), self.label(), self.label());
        let quarter = self.bin_imm(BinOp::Shr, rem, UNROLL_LOG2);
        self.branch(Cmp::Geu, step, Operand::Reg(quarter), one_by_one);
        let steps = self.bin_imm(BinOp::Shl, step, UNROLL_LOG2);
        let ahead = self.bin(BinOp::Sub, steps, Operand::Reg(step));
        let r = self.bin(BinOp::Sub, rem, Operand::Reg(ahead));
        self.emit(Inst::Label(top));
        for _ in 0..1 << UNROLL_LOG2 {
            self.trip(t)?;
        }
        self.emit(Inst::SubBranchAbove {
            a: r,
            b: steps,
            target: top,
        });
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: rem,
            a: r,
            b: Operand::Reg(steps),
        });
        self.emit(Inst::Jump(test));
        self.emit(Inst::Label(one_by_one));
        Ok(test)
    }

    /// Each induction variable's value on the first trip, in a register of
    /// its own bound to its local: (local, register, increment).
    fn start_ivs(
        &mut self,
        local: usize,
        start_v: VReg,
        ivs: &[(usize, Expr, Expr)],
    ) -> Vec<(usize, VReg, Expr)> {
        let outer = self.locals.insert(local, start_v);
        let carried = ivs
            .iter()
            // A register of its own each: it is stepped in place.
            .map(|(id, e, inc)| (*id, self.expr_owned(e), inc.clone()))
            .collect();
        match outer {
            Some(v) => self.locals.insert(local, v),
            None => self.locals.remove(&local),
        };
        for &(id, reg, _) in &carried {
            self.locals.insert(id, reg);
        }
        carried
    }

    /// A loop increment: an immediate only where every target encodes it
    /// in an add, else a register set before the loop (an immediate
    /// rebuilt on every trip costs more than it saves).
    fn increment(&mut self, inc: &Expr) -> Operand {
        match inc.as_const() {
            Some(c @ 0..=2047) => Operand::Imm(c),
            _ => Operand::Reg(self.expr(inc)),
        }
    }

    /// The trips of a `range` with step `1 << k` over a nonzero `size`:
    /// `((size - 1) >> k) + 1`, ceil(size / step) with neither the
    /// overflow of `(size + step - 1) >> k` nor a branch on the low bits.
    fn trip_count(&mut self, size_v: VReg, k: u32) -> VReg {
        if k == 0 {
            // A register of its own: the count is stepped in place.
            return self.bin_imm(BinOp::Shr, size_v, 0);
        }
        let last = self.bin_imm(BinOp::Sub, size_v, 1);
        let n = self.bin_imm(BinOp::Shr, last, u64::from(k));
        self.update(BinOp::Add, n, Operand::Imm(1));
        n
    }
}

/// The constant right-shift amounts and mask low bits in `body`: the
/// stride low-zero facts worth trying for a run-time stride.
fn shift_amounts(body: &[Stmt]) -> Vec<u32> {
    let mut out = Vec::new();
    crate::ir::each_expr(body, &mut |e| {
        fn walk(e: &Expr, out: &mut Vec<u32>) {
            match e {
                Expr::Bin(BinOp::Shr, _, k) => {
                    if let Some(k) = k.as_const().filter(|k| (1..64).contains(k)) {
                        out.push(k as u32);
                    }
                }
                Expr::Bin(BinOp::And, _, m) => {
                    if let Some(m) = m.as_const().filter(|m| *m != 0) {
                        out.push(m.trailing_zeros());
                    }
                }
                _ => {}
            }
            for c in e.children() {
                walk(c, out);
            }
        }
        walk(e, &mut out)
    });
    out
}

/// The step's log2 of a counted loop.
fn k_of(control: Control) -> u32 {
    match control {
        Control::Counted(k) => k,
        Control::Remainder(_) => 0,
    }
}

/// Does any expression of `body` read local `local`?
fn reads_local(body: &[Stmt], local: usize) -> bool {
    fn reads(e: &Expr, l: usize) -> bool {
        *e == Expr::Local(l) || e.children().into_iter().any(|c| reads(c, l))
    }
    let mut found = false;
    crate::ir::each_expr(body, &mut |e| found |= reads(e, local));
    found
}

#[cfg(test)]
#[path = "range_tests.rs"]
mod tests;
