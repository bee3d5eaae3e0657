//! `shootdown trace`: run a sequence in the emulator and print its events.

use super::common::*;
use std::path::PathBuf;

/// Instances of one device the emulator maps: `verify::trace` gives each
/// instance a 64 KiB window and each device 16 MiB of address space.
#[cfg(feature = "emu")]
pub const EMU_MAX_INSTANCES: u64 = 256;

/// Instructions a trace may execute. Every device access is an event kept
/// in memory and printed (~550 bytes each, measured): a poll that never
/// sees its value, 5 instructions per read, stops here at ~450 MB.
#[cfg(feature = "emu")]
const MAX_INSNS: u64 = 4_000_000;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  shootdown trace examples/npu2_atsd.inv --target power64 --seq invalidate_va \\\n      --instances 6 --arg pid=1 --arg va=0x10010000 --read npu.stat=1,1,0 --json"
)]
pub struct Args {
    #[command(flatten)]
    pub run: Run,
    #[arg(long)]
    json: bool,
}

/// What to run in the emulator: `trace` and `litmus` take the same.
#[derive(clap::Args)]
pub struct Run {
    pub spec: PathBuf,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    #[arg(long)]
    pub seq: String,
    #[command(flatten)]
    pub inputs: Inputs,
    #[command(flatten)]
    pub code: CodeOpts,
}

/// The inputs of one run: `trace`, `litmus` and `explore` take them.
#[derive(clap::Args)]
pub struct Inputs {
    /// Instances of every run-time device set (default 1; at most the
    /// set's `max` and 256).
    #[arg(long)]
    instances: Option<u64>,
    /// A parameter value, `name=value` (decimal or 0x hex).
    #[arg(long = "arg", value_parser = pair)]
    pub args: Vec<(String, u64)>,
    /// Scripted reads of a register, `dev.reg=v1,v2,...` (the last
    /// value repeats); other registers read back what was stored.
    #[arg(long = "read", value_parser = read_arg)]
    reads: Vec<ReadArg>,
    /// Book III-E: whether each TLB lookup (`tlbsx`, `tlbre`) finds its
    /// entry, `found`/`missed` in order (the last repeats; default:
    /// every lookup misses). The emulator has no TLB.
    #[arg(long = "tlb", value_delimiter = ',', value_parser = tlb_arg)]
    tlb: Vec<bool>,
}

impl Inputs {
    /// As on the command line (`--arg addr=0x400000 --tlb found`), or
    /// "no inputs".
    #[cfg(feature = "emu")]
    pub fn describe(&self) -> String {
        let mut w: Vec<String> = self
            .args
            .iter()
            .map(|(k, v)| format!("--arg {k}={v:#x}"))
            .collect();
        if let Some(n) = self.instances {
            w.push(format!("--instances {n}"));
        }
        for r in &self.reads {
            let v: Vec<String> = r.values.iter().map(|v| format!("{v:#x}")).collect();
            w.push(format!("--read {}.{}={}", r.dev, r.reg, v.join(",")));
        }
        if !self.tlb.is_empty() {
            let t: Vec<&str> = self
                .tlb
                .iter()
                .map(|&f| if f { "found" } else { "missed" })
                .collect();
            w.push(format!("--tlb {}", t.join(",")));
        }
        if w.is_empty() {
            "no inputs".into()
        } else {
            w.join(" ")
        }
    }

    /// Were any given (`explore` traces only then)?
    pub fn given(&self) -> bool {
        self.instances.is_some()
            || !self.args.is_empty()
            || !self.reads.is_empty()
            || !self.tlb.is_empty()
    }
}

/// `found` or `missed` (one TLB lookup of `--tlb`).
fn tlb_arg(s: &str) -> Result<bool, String> {
    match s {
        "found" => Ok(true),
        "missed" => Ok(false),
        _ => Err(format!("`{s}`: each lookup is `found` or `missed`")),
    }
}

#[cfg(not(feature = "emu"))]
pub fn run(_: Args, io: &mut Io) -> Result<(), Fail> {
    errln!(
        io,
        "error: this shootdown was built without the `emu` feature (needs cmake and libclang)"
    );
    Err(Fail::Reported)
}

/// A sequence compiled and run once in the emulator.
#[cfg(feature = "emu")]
pub struct Ran {
    pub compiled: crate::codegen::Compiled,
    pub seq: usize,
    pub trace: crate::verify::trace::Trace,
}

/// Compile `a.spec` and run `a.seq` with `a`'s arguments.
#[cfg(feature = "emu")]
pub fn prepare(a: &Run, io: &mut Io) -> Result<Ran, Fail> {
    prepare_with(&a.spec, a.target, &a.seq, &a.inputs, &a.code, io)
}

/// [`prepare`] from its parts (`explore` runs one per target).
#[cfg(feature = "emu")]
pub fn prepare_with(
    spec: &std::path::Path,
    target: Option<Target>,
    seq: &str,
    a: &Inputs,
    code: &CodeOpts,
    io: &mut Io,
) -> Result<Ran, Fail> {
    use crate::ir::Instances;
    use crate::verify::{interp::World, trace};
    let opts = options(code);
    let (name, src, prog) = load_spec(io, spec, &opts)?;
    let target = target_for(target, &src);
    let Some(si) = prog.seqs.iter().position(|s| s.name == seq) else {
        return Err(usage(
            io,
            format!(
                "--seq {seq}: {name} has no sequence `{seq}` (it has: {})",
                crate::cost::seq_names(&prog)
            ),
        ));
    };
    let s = &prog.seqs[si];
    // The default is one instance, not the maximum: a trace is read.
    let one = s
        .devices
        .iter()
        .any(|&d| matches!(prog.devices[d].instances, Instances::Dynamic { .. }))
        .then_some(1);
    let counts = instance_counts(
        io,
        &prog,
        s,
        a.instances.or(one),
        EMU_MAX_INSTANCES,
        "the emulator",
    )?;
    let mut w = World {
        params: vec![0; s.params.len()],
        counts,
        ..World::default()
    };
    no_repeats(io, "--arg", &a.args)?;
    for (k, v) in &a.args {
        let Some(i) = s.params.iter().position(|p| p == k) else {
            return Err(usage(
                io,
                format!(
                    "--arg {k}=...: `{seq}` has parameters {}",
                    if s.params.is_empty() {
                        "none".into()
                    } else {
                        s.params.join(", ")
                    }
                ),
            ));
        };
        w.params[i] = *v;
    }
    // A parameter left out is 0; say so (issue 37: a missing `--arg`
    // silently became 0, for a queue a different ring). Pointers are
    // memory the emulator maps, not values.
    let unset: Vec<String> = s
        .params
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            s.ptrs.get(*i).is_none_or(Option::is_none) && !a.args.iter().any(|(k, _)| k == *p)
        })
        .map(|(_, p)| format!("`{p}`"))
        .collect();
    if !unset.is_empty() {
        errln!(io, "note: {} not given with --arg: 0", unset.join(", "));
    }
    // Outside the contract the code still runs (that is what a caller
    // breaking it would see), but nothing says what it should do.
    if let Some(broken) = crate::verify::interp::broken_assume(s, &w.params) {
        errln!(
            io,
            "warning: these arguments break `assume {}` (line {}): the generated code runs outside its contract",
            broken.text,
            prog.line_of(broken.span)
        );
    }
    w.reads = resolve_reads(io, &prog, &a.reads)?;
    w.tlb_found = a.tlb.clone();
    w.big_endian = target.big_endian();
    for (i, p) in s.ptrs.iter().enumerate() {
        if p.is_some() {
            w.memory.insert(i, vec![0; 16]);
        }
    }
    // A command queue's device takes the entries at the doorbell.
    w.add_consumers(&prog, s);
    let c = crate::compile(&prog, target, &opts).map_err(|d| report(io, &name, &src, &d))?;
    let t = trace::run(&prog, &c, si, &w, MAX_INSNS).map_err(|e| {
        errln!(io, "error: emulation failed: {e}");
        if e.contains("no return after") {
            errln!(
                io,
                "help: a poll whose register never reads its value runs to its limit; script the reads with --read DEV.REG=V1,V2,..."
            );
        }
        Fail::Reported
    })?;
    Ok(Ran {
        compiled: c,
        seq: si,
        trace: t,
    })
}

/// One event as `trace` prints it (and `explore` shows it): its kind,
/// what it touched with the value, and the detail (fields by name, the
/// decoded operation, the instruction).
#[cfg(feature = "emu")]
pub struct EventText {
    pub kind: String,
    pub what: String,
    pub detail: String,
}

#[cfg(feature = "emu")]
pub fn event_text(e: &crate::verify::trace::Event) -> EventText {
    let kind = format!("{:?}", e.kind).to_lowercase();
    let what = match (&e.device, e.instance, &e.reg, &e.memory, &e.value) {
        (Some(d), Some(i), Some(r), _, Some(v)) => format!("{d}[{i}].{r} = {v}"),
        (_, _, _, Some(m), Some(v)) => format!("{m} = {v}"),
        // Several operands (POWER `tlbie` RB, RS; Book III-E EA, MAS6):
        // all of them.
        _ if e.operands.len() > 1 => {
            let ops: Vec<String> = e.operands.iter().map(|v| format!("{v:#x}")).collect();
            format!("{} operands {}", e.insn, ops.join(", "))
        }
        (_, _, _, _, Some(v)) => format!("{} operand {v}", e.insn),
        _ => e.insn.clone(),
    };
    let mut detail = Vec::new();
    if !e.fields.is_empty() {
        let f: Vec<String> = e
            .fields
            .iter()
            .map(|(n, v)| format!("{n}: {}", crate::emit::dec_or_hex(*v, 10)))
            .collect();
        detail.push(format!("{{{}}}", f.join(", ")));
    }
    if let Some(d) = &e.decoded {
        detail.push(format!("[{d}]"));
    }
    if e.device.is_some() || e.memory.is_some() {
        detail.push(format!("`{}`", e.insn));
    }
    EventText {
        kind,
        what,
        detail: detail.join(" "),
    }
}

#[cfg(feature = "emu")]
pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let Ran { trace: t, .. } = prepare(&a.run, io)?;
    if a.json {
        outln!(
            io,
            "{}",
            serde_json::to_string_pretty(&t).unwrap_or_default()
        );
    } else {
        let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
        for e in &t.events {
            let x = event_text(e);
            let at = match e.line {
                Some(l) => format!("line {l}, pc {:#x}", e.pc),
                None => format!("pc {:#x}", e.pc),
            };
            outln!(io, "{:<10} {:<40} {}  ({at})", x.kind, x.what, x.detail);
            let kind = &x.kind;
            let key = match e.kind {
                crate::verify::trace::Kind::Barrier => format!("barrier `{}`", e.insn),
                crate::verify::trace::Kind::Invalidate => {
                    // The operation, not its registers: `tlbi vale1is`,
                    // `tlbie`, `sinval.vma`.
                    let mut w = e.insn.split_whitespace();
                    let m = w.next().unwrap_or_default();
                    match (m, w.next()) {
                        ("tlbi", Some(op)) => {
                            format!("invalidate `tlbi {}`", op.trim_end_matches(','))
                        }
                        _ => format!("invalidate `{m}`"),
                    }
                }
                _ if e.memory.is_some() => format!("{kind} normal memory"),
                _ => format!("{kind} device"),
            };
            *counts.entry(key).or_default() += 1;
        }
        outln!(
            io,
            "return {} ({} instructions executed)",
            t.ret,
            t.insns_executed
        );
        let c: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        outln!(
            io,
            "counts: {}",
            if c.is_empty() {
                "no events".to_string()
            } else {
                c.join(", ")
            }
        );
    }
    Ok(())
}
