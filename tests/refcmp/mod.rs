//! The kernel reference comparison (docs/trace-oracle.md, "The kernel's own
//! code as a second oracle"). The generated code and a transcription of
//! the kernel (or firmware) function it stands for (tests/reference/*.c,
//! gcc -O2) run side by side in tests/harness/store_log.c under qemu-user
//! with `-singlestep -d exec,nochain`: the harness logs every device
//! access and trapped invalidate, qemu's log gives every executed
//! instruction of both codes, and GNU objdump names them. Per case both
//! must make the same device accesses per instance, the same invalidates
//! and return the same value with the same final memory; the generated
//! code must execute, between every two events the spec requires
//! ordered, a barrier the target's table says orders them.

#![allow(dead_code)]

pub mod scenarios;

mod build;
mod cases;
mod compare;
mod driver;
mod order;
mod run;
mod violations;

pub use build::*;
pub use cases::*;
pub use compare::*;
pub use driver::*;
pub use order::*;
pub use run::*;
pub use violations::*;

use crate::support;
use shootdown::codegen::{Compiled, Options};
use shootdown::ir::order::Class;
use shootdown::ir::{Instances, Mapping, PollOp, Program, Stmt};
use shootdown::isa::barriers::{self, BarrierKind};
use shootdown::isa::Machine;
use shootdown::lir::ArgKind;
use shootdown::spec::ast::{Endian, Scope};
use shootdown::Target;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STORE_LOG_C: &str = include_str!("../harness/store_log.c");
const KERNEL_H: &str = include_str!("../reference/kernel.h");

/// The reference transcription of an example.
/// What names an invalidation operation in a disassembly line, registers
/// left out: `tlbi vale1is, x9` -> `tlbi vale1is`; POWER `tlbie r11,r10,2,1,1`
/// -> `tlbie 2,1,1` (RIC, PRS, R are the operation; RB, RS its operands);
/// `slbia 3` as it is.
pub fn inval_key(text: &str) -> String {
    let mut parts = text.split(',').map(str::trim);
    let first = parts.next().unwrap_or("");
    let words: Vec<&str> = first.split_whitespace().collect();
    match words.first() {
        // RISC-V: the operands follow the mnemonic; the form is whether
        // rs1 is the zero register (every address), the values are compared
        // apart.
        Some(&m) if m == "sfence.vma" || m == "sinval.vma" => {
            let x0 = matches!(words.get(1), Some(&("zero" | "x0")));
            format!("{m}{}", if x0 { " x0" } else { "" })
        }
        Some(&m) if m == "tlbie" || m == "tlbiel" => {
            let imms: Vec<&str> = parts.skip(1).collect();
            format!("{m} {}", imms.join(","))
        }
        _ => words.join(" "),
    }
}

pub fn reference_c(stem: &str) -> &'static str {
    match stem {
        "npu2_atsd" => include_str!("../reference/npu2_atsd.c"),
        "npu2_tce_kill" => include_str!("../reference/npu2_tce_kill.c"),
        "arm_smmu" => include_str!("../reference/arm_smmu.c"),
        "arm64_tlb_range" => include_str!("../reference/arm64_tlb_range.c"),
        "vtd_iotlb" => include_str!("../reference/vtd_iotlb.c"),
        "e6500_tcd_lock" => include_str!("../reference/e6500_tcd_lock.c"),
        "book3e_tlb" => include_str!("../reference/book3e_tlb.c"),
        "radix_tlb" => include_str!("../reference/radix_tlb.c"),
        "riscv_tlb" => include_str!("../reference/riscv_tlb.c"),
        _ => panic!("no reference for {stem}"),
    }
}

/// One `#[test]` per example with a kernel reference ([`reference_c`]),
/// named after the example, each running `$check("STEM")`: the reference
/// and mutation comparisons cover the same examples.
macro_rules! test_each_reference {
    ($check:ident) => {
        $crate::refcmp::test_each_reference!(
            $check: npu2_atsd,
            npu2_tce_kill,
            arm_smmu,
            arm64_tlb_range,
            vtd_iotlb,
            e6500_tcd_lock,
            book3e_tlb,
            radix_tlb,
            riscv_tlb
        );
    };
    ($check:ident: $($stem:ident),+) => {
        $(
            #[test]
            fn $stem() {
                $check(stringify!($stem));
            }
        )+
    };
}
pub(crate) use test_each_reference;

// ------------------------------------------------------------ scenarios

/// One element of a scenario's argument vector (what both the generated
/// calls and the reference entry point receive).
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// The base (one instance) or the array of bases (a run-time set) of
    /// a device.
    Dev(&'static str),
    /// The instance count of a run-time set.
    Count(&'static str),
    /// An integer input.
    Int(&'static str),
    /// A pointer to normal memory (the input's bytes).
    Mem(&'static str),
}

/// A generated-code argument: a scenario input or a constant.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    A(&'static str),
    K(u64),
}

/// One call of a generated sequence; parameters not bound take the
/// scenario input of the same name.
pub struct Call {
    pub seq: &'static str,
    pub bind: &'static [(&'static str, Val)],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Poll {
    /// Ready on the first read.
    Early,
    /// Ready on the third read.
    Late,
    /// Never ready (run on the build with poll limits lowered to 4).
    Never,
}

#[derive(Clone, Debug)]
pub struct Input {
    pub label: String,
    pub ints: Vec<(&'static str, u64)>,
    pub mem: Vec<(&'static str, Vec<u8>)>,
    /// Successive values loads of a byte of normal memory see (the last
    /// repeats), as another CPU would make them: (argument, offset,
    /// values). Loads that reserve (lbarx, ldaxrb) see memory as it is.
    pub mem_reads: Vec<(&'static str, u64, Vec<u8>)>,
    /// The example deliberately does something else than the kernel here:
    /// the comparison must find the difference (and prints it).
    pub differs: Option<&'static str>,
    /// Outside what the kernel function accepts (it would loop forever,
    /// or its callers never pass it): the kernel code does not run; the
    /// generated code still runs (the ordering check, and the mutation
    /// test compares it with the unmutated code).
    pub outside: Option<&'static str>,
}

impl Input {
    pub fn new(label: impl Into<String>, ints: &[(&'static str, u64)]) -> Self {
        Input {
            label: label.into(),
            ints: ints.to_vec(),
            mem: Vec::new(),
            mem_reads: Vec::new(),
            differs: None,
            outside: None,
        }
    }
    pub fn mem(mut self, name: &'static str, bytes: &[u8]) -> Self {
        self.mem.retain(|(n, _)| *n != name);
        self.mem.push((name, bytes.to_vec()));
        self
    }
    pub fn mem_reads(mut self, name: &'static str, off: u64, values: &[u8]) -> Self {
        self.mem_reads.push((name, off, values.to_vec()));
        self
    }
    pub fn differs(mut self, why: &'static str) -> Self {
        self.differs = Some(why);
        self
    }
    pub fn outside(mut self, why: &'static str) -> Self {
        self.outside = Some(why);
        self
    }
}

/// A kernel function and the generated calls that stand for it.
pub struct Scenario {
    pub name: &'static str,
    /// The kernel function, with file and version.
    pub kernel: &'static str,
    pub ref_fn: &'static str,
    pub args: &'static [Arg],
    pub calls: &'static [Call],
    pub inputs: Vec<Input>,
}

/// The scenarios of one compilation of an example: its `--set` pins
/// (the kernel's choice where the example derives its own) say which.
pub struct Build {
    pub pins: Vec<(&'static str, u64)>,
    /// Why this build pins what it pins.
    pub why: &'static str,
    pub scenarios: Vec<Scenario>,
}

// ---------------------------------------------------------------- cases

/// One run of a scenario: which input, how many instances of run-time
/// sets, how polls answer.
#[derive(Clone, Debug)]
pub struct Case {
    pub scenario: usize,
    pub input: usize,
    pub count: u64,
    pub poll: Poll,
}
