//! How one architecture's litmus tests are spelled for herd7: the role a
//! target hands out ([`crate::isa::Backend::litmus`]). The shapes of
//! the tests (which threads, which outcome is forbidden) are the same on
//! every architecture and live in [`crate::litmus`]'s `shape`; a dialect only says
//! how an access, a fence and an executed barrier are written.

/// Whether one end of the ordering a test checks is normal memory or a
/// device register (modelled as memory: herd7 has no device memory type
/// on every architecture). A barrier that orders only one kind of access
/// (RISC-V `fence w,o`, POWER `eieio`, `lwsync`) is kept in a test only
/// when it orders the kinds at the two ends; otherwise herd7 would credit
/// it with an order the hardware does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Normal,
    Device,
}

/// An executed barrier as herd7 sees it for one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lowered {
    /// herd7 instructions, and a note when the spelling is not the
    /// executed one (POWER `ptesync` written `sync`).
    Insns(Vec<String>, Option<String>),
    /// Left out of this test, with the reason: it does not order the two
    /// kinds of access the test checks, or herd7 cannot express it.
    /// Leaving a barrier out only allows more outcomes, so a `Never`
    /// stays a proof.
    Dropped(String),
}

/// A CPU TLB invalidation herd7 cannot express (the text says why).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unmodelled {
    #[error("herd7 has no model of `{insn}` on {arch}")]
    NoTlbModel { insn: String, arch: &'static str },
    #[error("herd7 7.57 has no VMSA model of `tlbi {op}`")]
    NoVmsaOp { op: String },
}

/// A CPU TLB invalidation the way the VMSA tests use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tlbi {
    /// Invalidates the pages `first .. first + count` (VA numbers, VA >>
    /// 12) with herd7's operation `op` (`VALE1IS`); a range operation is
    /// written as `op` on the page a test checks, which is what the range
    /// does to that page.
    Pages { op: String, first: u64, count: u64 },
    /// Invalidates every page (`VMALLE1IS`, or an ASID-wide form: herd7's
    /// model has one address space).
    All { op: String, note: Option<String> },
}

pub trait Dialect: Sync {
    /// The architecture name a litmus test starts with (`AArch64`).
    fn arch(&self) -> &'static str;
    /// Registers a test may use, in order of preference.
    fn regs(&self) -> &'static [&'static str];
    /// Does an access take its address from a register initialised to the
    /// location (else the location is named in the instruction: x86)?
    fn addr_in_reg(&self) -> bool {
        true
    }
    /// Store the constant `val` at the location `addr` (its register, or
    /// its name when addresses are not in registers), through `tmp`.
    fn store(&self, val: u64, tmp: &str, addr: &str) -> Vec<String>;
    /// Store register `val` at the location whose address is in `addr`.
    fn store_reg(&self, val: &str, addr: &str) -> Vec<String>;
    /// Load the location `addr` into `dst`.
    fn load(&self, dst: &str, addr: &str) -> Vec<String>;
    /// The fence an observer thread puts between its two accesses: the
    /// strongest, so that what the test checks is the sequence's thread.
    fn full_fence(&self) -> Vec<String>;
    /// The barrier the generated code executed (its text in the trace) as
    /// herd7 instructions, for a test whose ordered pair is `from` ->
    /// `to`.
    fn barrier(&self, text: &str, from: Side, to: Side) -> Lowered;
    /// The CPU TLB invalidation the generated code executed, for the VMSA
    /// tests; `Err` says why herd7 cannot express it.
    fn tlbi(&self, text: &str, _operands: &[u64]) -> Result<Tlbi, Unmodelled> {
        Err(Unmodelled::NoTlbModel {
            insn: text.split_whitespace().next().unwrap_or(text).into(),
            arch: self.arch(),
        })
    }
    /// The VMSA variant's TLBI of the page whose address is in `page`
    /// (`op` from [`Dialect::tlbi`]), through `tmp`; `None` for an
    /// operation that takes no address.
    fn tlbi_insns(&self, _op: &str, _page: Option<&str>, _tmp: &str) -> Vec<String> {
        Vec::new()
    }
    /// The VMSA observer's context synchronization after its fence, where
    /// the architecture has one.
    fn context_sync(&self) -> Vec<String> {
        Vec::new()
    }
}

/// RISC-V `fence` access sets, and POWER-style "what may this barrier
/// order" questions, are answered from the predecessor/successor letters:
/// `i`/`o` are device input/output, `r`/`w` memory reads/writes.
pub fn fence_sets(args: &str) -> Option<(String, String)> {
    let (p, s) = args.split_once(',')?;
    Some((p.trim().to_string(), s.trim().to_string()))
}

/// The letters of a RISC-V fence set that order an access on `side`, in
/// herd7's spelling (its RISC-V model treats memory and I/O alike: a
/// device register modelled as memory is `r`/`w` there).
pub fn herd_set(set: &str, side: Side) -> String {
    let has = |c: char| set.contains(c);
    let (r, w) = match side {
        Side::Normal => (has('r'), has('w')),
        Side::Device => (has('i'), has('o')),
    };
    match (r, w) {
        (true, true) => "rw".into(),
        (true, false) => "r".into(),
        (false, true) => "w".into(),
        (false, false) => String::new(),
    }
}
