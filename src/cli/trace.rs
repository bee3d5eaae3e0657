//! `shootdown trace`: run a sequence in the emulator and print its events.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    #[arg(long, value_enum, default_value = "power64")]
    target: TargetArg,
    #[arg(long)]
    seq: String,
    /// Instances of every run-time device set.
    #[arg(long, default_value_t = 1)]
    instances: u64,
    /// A parameter value, `name=value` (decimal or 0x hex).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Scripted reads of a register, `dev.reg=v1,v2,...` (the last
    /// value repeats); other registers read back what was stored.
    #[arg(long = "read")]
    reads: Vec<String>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    code: CodeOpts,
}

#[cfg(not(feature = "emu"))]
pub fn run(_: Args, io: &mut Io) -> Result<(), Fail> {
    errln!(
        io,
        "error: this shootdown was built without the `emu` feature (needs cmake and libclang)"
    );
    Err(Fail::Reported)
}

#[cfg(feature = "emu")]
pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::verify::{interp::World, trace};
    let opts = options(&a.code, io)?;
    let target: crate::Target = a.target.into();
    let seq = a.seq.as_str();
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    let Some(si) = prog.seqs.iter().position(|s| s.name == seq) else {
        errln!(
            io,
            "error: {name} has no sequence `{seq}` (it has: {})",
            prog.seqs
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Err(Fail::Reported);
    };
    let s = &prog.seqs[si];
    let mut w = World {
        params: vec![0; s.params.len()],
        ..World::default()
    };
    for &d in &s.devices {
        w.counts.insert(d, a.instances);
    }
    for arg in &a.args {
        let Some((k, v)) = arg.split_once('=') else {
            errln!(io, "error: --arg {arg}: expected name=value");
            return Err(Fail::Reported);
        };
        let (Some(i), Some(v)) = (s.params.iter().position(|p| p == k.trim()), parse_num(v)) else {
            errln!(
                io,
                "error: --arg {arg}: `{seq}` parameters are {}; values are numbers",
                s.params.join(", ")
            );
            return Err(Fail::Reported);
        };
        w.params[i] = v;
    }
    for r in &a.reads {
        let parsed = r.split_once('=').and_then(|(path, vals)| {
            let (dn, rn) = path.split_once('.')?;
            let d = prog.devices.iter().position(|d| d.name == dn)?;
            let reg = prog.devices[d].regs.iter().position(|x| x.name == rn)?;
            let vals: Option<Vec<u64>> = vals.split(',').map(parse_num).collect();
            Some(((d, reg), vals?))
        });
        let Some((key, vals)) = parsed else {
            errln!(io, "error: --read {r}: expected dev.reg=v1,v2,...");
            return Err(Fail::Reported);
        };
        w.reads.insert(key, vals);
    }
    w.big_endian = target.big_endian();
    for (i, p) in s.ptrs.iter().enumerate() {
        if p.is_some() {
            w.memory.insert(i, vec![0; 16]);
        }
    }
    let c = crate::compile(&prog, target, &opts).map_err(|d| report(io, &name, &src, &d))?;
    let t = trace::run(&prog, &c, si, &w, 100_000_000).map_err(|e| {
        errln!(io, "error: emulation failed: {e}");
        Fail::Reported
    })?;
    if a.json {
        outln!(
            io,
            "{}",
            serde_json::to_string_pretty(&t).unwrap_or_default()
        );
    } else {
        for e in &t.events {
            let kind = format!("{:?}", e.kind).to_lowercase();
            match (&e.device, e.instance, &e.reg, &e.value) {
                (Some(d), Some(i), Some(r), Some(v)) => {
                    outln!(io, "{kind:<10} {d}[{i}].{r} = {v:<20} {}", e.insn)
                }
                (_, _, _, Some(v)) => outln!(io, "{kind:<10} {:<30} operand {v}", e.insn),
                _ => outln!(io, "{kind:<10} {}", e.insn),
            }
        }
        outln!(
            io,
            "return {} ({} instructions executed)",
            t.ret,
            t.insns_executed
        );
    }
    Ok(())
}
