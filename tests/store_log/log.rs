//! Both sides in one comparable shape: the accesses `trace` reports (from
//! unicorn) and the accesses store_log.c saw under qemu-user, and the first
//! place where they part.

use shootdown::codegen::Compiled;
use shootdown::ir::Program;
use shootdown::spec::ast::Endian;
use shootdown::verify::trace::{Kind, Trace};
use std::collections::BTreeMap;
use std::fmt;

/// One device access or invalidate, as both sides can state it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub kind: &'static str,
    /// `dev[instance].reg` (or `dev[instance]+offset` when no register of
    /// that offset and width exists); for invalidates the operation.
    pub place: String,
    /// Bytes accessed (0 for invalidates).
    pub width: u32,
    /// The register's logical value (its declared byte order); the
    /// operand registers of an invalidate.
    pub value: String,
    /// Our listing's text at the code offset that made the access.
    pub insn: String,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<10} {:<24} w{} {:<20} {}",
            self.kind, self.place, self.width, self.value, self.insn
        )
    }
}

/// What one run did, from either side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub accesses: Vec<Access>,
    pub ret: i64,
    /// Final normal memory behind pointer parameters.
    pub memory: BTreeMap<usize, Vec<u8>>,
}

/// `tlbi vale1is, x9` -> `tlbi vale1is`.
fn op_name(insn: &str) -> String {
    insn.split(',').next().unwrap_or("").trim().to_string()
}

fn values(v: &[u64]) -> String {
    let v: Vec<String> = v.iter().map(|x| format!("{x:#x}")).collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

/// The expected side: `trace`'s events without barriers (not data
/// accesses: store_log.c cannot see them).
pub fn from_trace(prog: &Program, t: &Trace) -> (Run, usize) {
    let mut run = Run {
        ret: t.ret,
        memory: t.memory.iter().map(|(k, v)| (*k, v.clone())).collect(),
        ..Run::default()
    };
    let mut barriers = 0;
    for e in &t.events {
        let kind = match e.kind {
            Kind::Barrier => {
                barriers += 1;
                continue;
            }
            // Normal memory behind pointers: the harness maps it plainly,
            // so only its final bytes are compared (`memory` above).
            Kind::Store | Kind::Load if e.memory.is_some() => continue,
            Kind::Store => "store",
            Kind::Load => "load",
            Kind::Invalidate => "invalidate",
        };
        let a = if e.kind == Kind::Invalidate {
            Access {
                kind,
                place: op_name(&e.insn),
                width: 0,
                value: values(&e.operands),
                insn: e.insn.clone(),
            }
        } else {
            let (d, r) = (e.dev_id.unwrap(), e.reg_id.unwrap());
            Access {
                kind,
                place: format!(
                    "{}[{}].{}",
                    e.device.as_deref().unwrap_or("?"),
                    e.instance.unwrap_or(u64::MAX),
                    e.reg.as_deref().unwrap_or("?")
                ),
                width: prog.devices[d].regs[r].bytes(),
                value: format!("{:#x}", e.raw.unwrap_or(0)),
                insn: e.insn.clone(),
            }
        };
        run.accesses.push(a);
    }
    (run, barriers)
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("bad hex `{s}`"))
        })
        .collect()
}

fn num(s: &str) -> Result<u64, String> {
    let h = s.trim_start_matches("0x");
    u64::from_str_radix(h, 16).map_err(|_| format!("bad number `{s}`"))
}

/// Our listing's text at `offset` of sequence `seq`, if an instruction
/// starts there.
fn insn_at(c: &Compiled, seq: usize, offset: u64) -> Option<String> {
    c.funcs[seq]
        .insns()
        .find(|l| u64::from(l.offset) == offset)
        .map(|l| l.text.clone())
}

/// The observed side: one case's lines of store_log.c output (up to
/// `end`), resolved against the spec's registers and our listing.
pub fn from_harness(
    prog: &Program,
    c: &Compiled,
    seq: usize,
    lines: &[&str],
) -> Result<Run, String> {
    let mut run = Run::default();
    let mut ret = None;
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            [kind @ ("store" | "load"), dev, inst, off, width, bytes, pc] => {
                let (dev, inst, off) = (num(dev)? as usize, num(inst)?, num(off)?);
                let width: u32 = width
                    .parse()
                    .map_err(|_| format!("bad width in `{line}`"))?;
                let bytes = parse_hex(bytes)?;
                let device = prog
                    .devices
                    .get(dev)
                    .ok_or_else(|| format!("no device {dev}: `{line}`"))?;
                let reg = device
                    .regs
                    .iter()
                    .find(|r| r.offset == off && r.bytes() == width);
                let (place, value) = match reg {
                    Some(r) => {
                        let mut b = bytes.clone();
                        if r.endian == Endian::Little {
                            b.reverse();
                        }
                        let v = b.iter().fold(0u64, |v, x| (v << 8) | u64::from(*x));
                        (
                            format!("{}[{inst}].{}", device.name, r.name),
                            format!("{v:#x}"),
                        )
                    }
                    None => (
                        format!("{}[{inst}]+{off:#x}", device.name),
                        format!("bytes {}", super::driver::hex(&bytes)),
                    ),
                };
                let pc = num(pc)?;
                run.accesses.push(Access {
                    kind: if *kind == "store" { "store" } else { "load" },
                    place,
                    width,
                    value,
                    insn: insn_at(c, seq, pc).unwrap_or_else(|| format!("<code offset {pc:#x}>")),
                });
            }
            ["inval", pc, word, ops @ ..] => {
                let (pc, word) = (num(pc)?, num(word)? as u32);
                let ops: Vec<u64> = ops.iter().map(|o| num(o)).collect::<Result<_, _>>()?;
                // The word the CPU trapped on must be our encoding at that
                // offset (GNU as assembled it from our text): then our
                // listing names the operation.
                let ours = c.funcs[seq]
                    .bytes
                    .get(pc as usize..pc as usize + 4)
                    .map(|b| {
                        let b: [u8; 4] = b.try_into().unwrap();
                        if c.target.big_endian() {
                            u32::from_be_bytes(b)
                        } else {
                            u32::from_le_bytes(b)
                        }
                    });
                let insn = match insn_at(c, seq, pc) {
                    Some(t) if ours == Some(word) => t,
                    _ => format!("<word {word:#010x} at code offset {pc:#x}>"),
                };
                run.accesses.push(Access {
                    kind: "invalidate",
                    place: op_name(&insn),
                    width: 0,
                    value: values(&ops),
                    insn,
                });
            }
            ["mem", p, bytes] => {
                run.memory.insert(num(p)? as usize, parse_hex(bytes)?);
            }
            ["ret", v] => {
                ret = Some(v.parse::<i64>().map_err(|_| format!("bad ret `{line}`"))?);
            }
            _ => return Err(format!("unexpected harness line `{line}`")),
        }
    }
    run.ret = ret.ok_or("no `ret` line")?;
    Ok(run)
}

/// Split harness output into per-call chunks (the lines before each
/// `end`); a trailing chunk without `end` is a crash's partial log.
pub fn split_cases(out: &str) -> (Vec<Vec<&str>>, Vec<&str>) {
    let mut done = Vec::new();
    let mut cur = Vec::new();
    for l in out.lines() {
        if l == "end" {
            done.push(std::mem::take(&mut cur));
        } else {
            cur.push(l);
        }
    }
    (done, cur)
}

/// None when both runs agree; else where they first part, with context.
pub fn first_divergence(expected: &Run, observed: &Run) -> Option<String> {
    let (e, o) = (&expected.accesses, &observed.accesses);
    let at = (0..e.len().max(o.len())).find(|&i| e.get(i) != o.get(i));
    let mut msg = String::new();
    if let Some(i) = at {
        let show = |v: &[Access], i: usize| match v.get(i) {
            Some(a) => a.to_string(),
            None => "(nothing)".to_string(),
        };
        msg += &format!(
            "first divergence at access {i} (trace {} accesses, qemu {}):\n",
            e.len(),
            o.len()
        );
        for k in i.saturating_sub(2)..i {
            msg += &format!("   both  {k:>5}: {}\n", show(e, k));
        }
        msg += &format!("   trace {i:>5}: {}\n", show(e, i));
        msg += &format!("   qemu  {i:>5}: {}\n", show(o, i));
        for k in i + 1..(i + 3).min(e.len().max(o.len())) {
            msg += &format!(
                "   trace {k:>5}: {}\n   qemu  {k:>5}: {}\n",
                show(e, k),
                show(o, k)
            );
        }
    }
    if expected.ret != observed.ret {
        msg += &format!("return: trace {} qemu {}\n", expected.ret, observed.ret);
    }
    if expected.memory != observed.memory {
        msg += &format!(
            "memory: trace {:02x?} qemu {:02x?}\n",
            expected.memory, observed.memory
        );
    }
    (!msg.is_empty()).then_some(msg)
}
