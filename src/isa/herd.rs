//! A litmus [`Dialect`] as data, which is what each ISA's `litmus.rs`
//! gives: how herd7's model of the architecture writes an access and the
//! observer's fence (instruction templates), and the functions that read
//! an executed barrier or TLB invalidation the way herd7 can express it.

use super::litmus::{Dialect, Lowered, Side, Tlbi, Unmodelled};

/// One architecture in herd7's litmus syntax.
pub struct Herd {
    /// The architecture name a litmus test starts with (`AArch64`).
    pub arch: &'static str,
    /// Registers a test may use, in order of preference.
    pub regs: &'static [&'static str],
    /// How an access is written.
    pub access: Access,
    /// The fence an observer thread puts between its two accesses: the
    /// strongest, so that what the test checks is the sequence's thread.
    pub full_fence: &'static str,
    /// [`Dialect::barrier`].
    pub barrier: fn(text: &str, from: Side, to: Side) -> Lowered,
    /// The TLB invalidations of herd7's VMSA model, where it has one.
    pub vmsa: Option<Vmsa>,
}

/// Instruction templates for the accesses of a test. `{addr}` is the
/// location (its register, or its name when addresses are not in
/// registers), `{val}` the value stored (a constant or a register),
/// `{dst}` the register loaded and `{tmp}` a scratch register.
pub struct Access {
    /// How a constant is stored: through a register, or directly.
    constant: Constant,
    /// Store register `{val}` at `{addr}`.
    store: &'static str,
    /// Load `{addr}` into `{dst}`.
    load: &'static str,
}

enum Constant {
    /// Set `{tmp}` to `{val}`, then store it as a register.
    Set(&'static str),
    /// Store `{val}` at `{addr}` in one instruction.
    Store(&'static str),
}

impl Access {
    /// A load/store architecture: addresses are in registers, and a
    /// constant is `set` in a register that is then stored.
    pub const fn registers(set: &'static str, store: &'static str, load: &'static str) -> Access {
        Access {
            constant: Constant::Set(set),
            store,
            load,
        }
    }

    /// Accesses name their location, and `store_constant` writes a
    /// constant there (x86).
    pub const fn named(
        store_constant: &'static str,
        store: &'static str,
        load: &'static str,
    ) -> Access {
        Access {
            constant: Constant::Store(store_constant),
            store,
            load,
        }
    }
}

/// What the VMSA variant of the tests needs beyond the accesses.
pub struct Vmsa {
    /// [`Dialect::tlbi`].
    pub tlbi: fn(text: &str, operands: &[u64]) -> Result<Tlbi, Unmodelled>,
    /// [`Dialect::tlbi_insns`].
    pub tlbi_insns: fn(op: &str, page: Option<&str>, tmp: &str) -> Vec<String>,
    /// The observer's context synchronization after its fence.
    pub context_sync: &'static str,
}

/// `template` with each `{name}` of `args` replaced by its value.
fn fill(template: &str, args: &[(&str, &str)]) -> String {
    args.iter().fold(template.to_string(), |s, (name, value)| {
        s.replace(&format!("{{{name}}}"), value)
    })
}

impl Dialect for Herd {
    fn arch(&self) -> &'static str {
        self.arch
    }
    fn regs(&self) -> &'static [&'static str] {
        self.regs
    }
    fn addr_in_reg(&self) -> bool {
        matches!(self.access.constant, Constant::Set(_))
    }
    fn store(&self, val: u64, tmp: &str, addr: &str) -> Vec<String> {
        let val = val.to_string();
        match self.access.constant {
            Constant::Set(set) => {
                let mut insns = vec![fill(set, &[("tmp", tmp), ("val", &val)])];
                insns.extend(self.store_reg(tmp, addr));
                insns
            }
            Constant::Store(store) => vec![fill(store, &[("val", &val), ("addr", addr)])],
        }
    }
    fn store_reg(&self, val: &str, addr: &str) -> Vec<String> {
        vec![fill(self.access.store, &[("val", val), ("addr", addr)])]
    }
    fn load(&self, dst: &str, addr: &str) -> Vec<String> {
        vec![fill(self.access.load, &[("dst", dst), ("addr", addr)])]
    }
    fn full_fence(&self) -> Vec<String> {
        vec![self.full_fence.to_string()]
    }
    fn barrier(&self, text: &str, from: Side, to: Side) -> Lowered {
        (self.barrier)(text, from, to)
    }
    fn tlbi(&self, text: &str, operands: &[u64]) -> Result<Tlbi, Unmodelled> {
        match &self.vmsa {
            Some(v) => (v.tlbi)(text, operands),
            // What the trait's default says, which this override hides.
            None => Err(Unmodelled::NoTlbModel {
                insn: text.split_whitespace().next().unwrap_or(text).into(),
                arch: self.arch,
            }),
        }
    }
    fn tlbi_insns(&self, op: &str, page: Option<&str>, tmp: &str) -> Vec<String> {
        self.vmsa
            .as_ref()
            .map_or_else(Vec::new, |v| (v.tlbi_insns)(op, page, tmp))
    }
    fn context_sync(&self) -> Vec<String> {
        self.vmsa
            .iter()
            .map(|v| v.context_sync.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{aarch64, x86_64};

    /// A load/store architecture stores a constant through its scratch
    /// register; x86 stores it directly, at the location's name.
    #[test]
    fn accesses_fill_their_templates() {
        let d: &dyn Dialect = &aarch64::litmus::LITMUS;
        assert_eq!(d.store(5, "X2", "X1"), ["MOV X2,#5", "STR X2,[X1]"]);
        assert_eq!(d.load("X3", "X1"), ["LDR X3,[X1]"]);
        assert!(d.addr_in_reg());
        let d: &dyn Dialect = &x86_64::litmus::LITMUS;
        assert_eq!(d.store(5, "rax", "x"), ["movq $5,(x)"]);
        assert_eq!(d.store_reg("rbx", "y"), ["movq %rbx,(y)"]);
        assert!(!d.addr_in_reg());
    }
}
