//! The cases the comparison runs besides `verify`'s worlds: hand-picked
//! arguments (with claims about what the hardware sees) and the spec copy
//! whose poll limits are low enough to time out cheaply.

use super::log::Run;
use shootdown::ir::Program;
use shootdown::verify::interp::World;

pub type Claim = fn(&Run) -> Result<(), String>;

/// A hand-picked case (arguments that reach a strategy the generic worlds
/// miss), maybe with a claim about what the hardware sees, checked on the
/// qemu side once it agreed with `trace`.
pub struct Extra {
    pub seq: &'static str,
    pub what: &'static str,
    pub params: &'static [(&'static str, u64)],
    /// Instances of every run-time set.
    pub instances: u64,
    /// (device, register, successive values read)
    pub reads: &'static [(&'static str, &'static str, &'static [u64])],
    /// Initial bytes behind pointer parameters (by name).
    pub memory: &'static [(&'static str, &'static [u8])],
    pub claim: Option<Claim>,
}

impl Extra {
    pub const fn new(
        seq: &'static str,
        what: &'static str,
        params: &'static [(&'static str, u64)],
    ) -> Self {
        Extra {
            seq,
            what,
            params,
            instances: 1,
            reads: &[],
            memory: &[],
            claim: None,
        }
    }
}

pub fn world(prog: &Program, seq: usize, x: &Extra) -> World {
    let s = &prog.seqs[seq];
    let mut w = World {
        params: vec![0; s.params.len()],
        ..World::default()
    };
    for &d in &s.devices {
        w.counts.insert(d, x.instances);
    }
    for (name, v) in x.params {
        let i = s.params.iter().position(|p| p == name).unwrap();
        w.params[i] = *v;
    }
    for (i, p) in s.ptrs.iter().enumerate() {
        if p.is_some() {
            w.memory.insert(i, vec![0; 16]);
        }
    }
    for (name, bytes) in x.memory {
        let i = s.params.iter().position(|p| p == name).unwrap();
        w.memory.insert(i, bytes.to_vec());
    }
    for (dev, reg, vals) in x.reads {
        let d = prog.devices.iter().position(|d| d.name == *dev).unwrap();
        let r = prog.devices[d]
            .regs
            .iter()
            .position(|r| r.name == *reg)
            .unwrap();
        w.reads.insert((d, r), vals.to_vec());
    }
    w
}

/// The spec with every poll limit lowered to 4: a poll that never gets
/// ready then costs 4 faults per instance instead of up to a million (each
/// fault is two signals, ~50 us under qemu).
pub fn lower_poll_limits(src: &str) -> String {
    src.lines()
        .map(|l| match (l.contains("poll "), l.find("limit ")) {
            (true, Some(at)) => {
                let rest = &l[at + 6..];
                let digits =
                    rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                format!("{}limit 4{}", &l[..at], &rest[digits..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
