//! The C driver each case runs: scenario inputs as directives, the harness's
//! entry that calls the generated code and the reference.

use super::*;

/// Devices a scenario's calls touch, in program order.
pub(super) fn scenario_devices(prog: &Program, sc: &Scenario) -> Vec<usize> {
    let mut out = BTreeSet::new();
    for call in sc.calls {
        out.extend(seq_of(prog, call.seq).1.devices.iter().copied());
    }
    out.into_iter().collect()
}

pub fn seq_of<'a>(prog: &'a Program, name: &str) -> (usize, &'a shootdown::ir::Seq) {
    prog.seqs
        .iter()
        .enumerate()
        .find(|(_, s)| s.name == name)
        .unwrap_or_else(|| panic!("no sequence `{name}`"))
}

pub(super) fn dev_index(prog: &Program, name: &str) -> usize {
    prog.devices
        .iter()
        .position(|d| d.name == name)
        .unwrap_or_else(|| panic!("no device `{name}`"))
}

/// Whether any call of the scenario polls.
pub fn polls(prog: &Program, sc: &Scenario) -> bool {
    !poll_regs(prog, sc).is_empty()
}

/// (device, register, busy value, ready value) of every poll of the calls.
pub(super) fn poll_regs(prog: &Program, sc: &Scenario) -> Vec<(usize, usize, u64, u64)> {
    let mut out = Vec::new();
    for call in sc.calls {
        shootdown::ir::walk(&seq_of(prog, call.seq).1.body, &mut |s| {
            if let Stmt::Poll { access, mask, wait } = s {
                // The examples' polls compare with constants (a run-time
                // value would need the call's arguments here).
                let value = wait
                    .value
                    .as_const()
                    .unwrap_or_else(|| panic!("{}: poll with a run-time value", call.seq));
                let low = *mask & mask.wrapping_neg();
                let (busy, ready) = match wait.op {
                    PollOp::Eq => (value ^ low, value),
                    PollOp::Ne => (value, value ^ low),
                };
                let k = (access.dev, access.reg, busy, ready);
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        });
    }
    out
}

pub(super) fn reg_bytes(v: u64, bytes: u32, endian: Endian) -> Vec<u8> {
    let mut b = v.to_le_bytes()[..bytes as usize].to_vec();
    if endian == Endian::Big {
        b.reverse();
    }
    b
}

pub(super) fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(super) fn input_int(sc: &Scenario, input: &Input, name: &str) -> u64 {
    input
        .ints
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{}: input `{}` has no `{name}`", sc.name, input.label))
}

/// The harness directives of one side of a case (`call` index `call`).
pub(super) fn directives(prog: &Program, sc: &Scenario, case: &Case, call: usize) -> String {
    let input = &sc.inputs[case.input];
    let mut out = String::new();
    for d in scenario_devices(prog, sc) {
        let dev = &prog.devices[d];
        let n = match dev.instances {
            Instances::Dynamic { .. } => case.count.max(1),
            Instances::Fixed(k) => k,
            Instances::Single => 1,
        };
        for inst in 0..n {
            let _ = writeln!(out, "win {d} {inst} {}", dev.extent());
        }
    }
    for (d, r, busy, ready) in poll_regs(prog, sc) {
        let reg = &prog.devices[d].regs[r];
        let vals: &[u64] = match case.poll {
            Poll::Early => &[ready],
            Poll::Late => &[busy, busy, ready],
            Poll::Never => &[busy],
        };
        let vals: Vec<String> = vals
            .iter()
            .map(|v| hex(&reg_bytes(*v, reg.bytes(), reg.endian)))
            .collect();
        let _ = writeln!(out, "read {d} {:x} {}", reg.offset, vals.join(","));
    }
    let mut mems = 0;
    for a in sc.args {
        if let Arg::Mem(name) = a {
            let bytes = input
                .mem
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
                .unwrap_or_else(|| vec![0; 16]);
            let _ = writeln!(out, "lmem {mems} {}", hex(&bytes));
            for (_, off, vals) in input.mem_reads.iter().filter(|(n, _, _)| n == name) {
                let vals: Vec<String> = vals.iter().map(|v| format!("{v:02x}")).collect();
                // store_log.c: the window of `lmem P` is device -1 - P
                let _ = writeln!(out, "read {} {off:x} {}", -1 - mems as i64, vals.join(","));
            }
            mems += 1;
        }
    }
    let mut mems = 0;
    for a in sc.args {
        let _ = match a {
            Arg::Dev(name) => {
                let d = dev_index(prog, name);
                match prog.devices[d].instances {
                    Instances::Dynamic { .. } => {
                        writeln!(out, "arg array {d} {}", case.count)
                    }
                    Instances::Fixed(k) => writeln!(out, "arg array {d} {k}"),
                    Instances::Single => writeln!(out, "arg base {d}"),
                }
            }
            Arg::Count(_) => writeln!(out, "arg int {:x}", case.count),
            Arg::Int(name) => writeln!(out, "arg int {:x}", input_int(sc, input, name)),
            Arg::Mem(_) => {
                mems += 1;
                writeln!(out, "arg mem {}", mems - 1)
            }
        };
    }
    let _ = writeln!(out, "call {call}");
    out
}

pub(super) fn arg_slot(sc: &Scenario, f: impl Fn(&Arg) -> bool) -> Option<usize> {
    sc.args.iter().position(f)
}

/// The C driver: a marker function in its own section (its first
/// instruction in qemu's log starts a case), and per scenario a thunk
/// making the generated calls and one calling the reference.
pub(super) fn driver_c(prog: &Program, c: &Compiled, header: &str, build: &Build) -> String {
    let mut out = format!(
        "#line 1 \"refdriver.c\"\n#include \"{header}\"\n\n\
         __attribute__((noinline, noipa, section(\".sl_mark\"))) void sl_mark(void)\n\
         {{\n\t__asm__ __volatile__(\"\" ::: \"memory\");\n}}\n\n"
    );
    let mut table = String::new();
    for (k, sc) in build.scenarios.iter().enumerate() {
        let _ = writeln!(out, "long {}(const uint64_t *a);", sc.ref_fn);
        let mut body = String::from("\tlong r = 0;\n\tsl_mark();\n");
        for call in sc.calls {
            let (i, _) = seq_of(prog, call.seq);
            let args = call_args(prog, c, sc, call);
            write_call(&mut body, c, i, &args);
            // Only 0 goes on to the next call: a call that succeeds with
            // another value (an invalidate returning 1) must show.
            body += "\tif (r != 0)\n\t\treturn r;\n";
        }
        body += "\treturn r;\n";
        let _ = write!(
            out,
            "static long sc_gen_{k}(const uint64_t *a)\n{{\n\t(void)a;\n{body}}}\n\n\
             static long sc_ref_{k}(const uint64_t *a)\n{{\n\tsl_mark();\n\treturn {}(a);\n}}\n\n",
            sc.ref_fn
        );
        let _ = writeln!(
            table,
            "\t{{ \"{0} generated\", 0, sc_gen_{k} }},\n\t{{ \"{0} reference\", 0, sc_ref_{k} }},",
            sc.name
        );
    }
    // The "kernel side" of inputs outside the kernel's domain.
    out +=
        "static long sc_skip(const uint64_t *a)\n{\n\t(void)a;\n\tsl_mark();\n\treturn 0;\n}\n\n";
    table += "\t{ \"no kernel run\", 0, sc_skip },\n";
    let _ = write!(
        out,
        "static const struct sl_seq sl_seqs[] = {{\n{table}}};\n\n\
         int main(void)\n{{\n\treturn sl_main(sl_seqs, (int)(sizeof sl_seqs / sizeof sl_seqs[0]));\n}}\n"
    );
    out
}

/// The C arguments of one generated call, from the scenario's argument
/// vector `a`.
fn call_args(prog: &Program, c: &Compiled, sc: &Scenario, call: &Call) -> Vec<String> {
    let (i, _) = seq_of(prog, call.seq);
    c.lir[i]
        .args
        .iter()
        .map(|a| match a {
            ArgKind::DeviceBase(d) | ArgKind::DeviceArray(d) => {
                let name = prog.devices[*d].name.as_str();
                let k = arg_slot(sc, |x| matches!(x, Arg::Dev(n) if *n == name))
                    .unwrap_or_else(|| panic!("{}: no Dev({name}) argument", sc.name));
                format!("(void *)(uintptr_t)a[{k}]")
            }
            ArgKind::DeviceCount(d) => {
                let name = prog.devices[*d].name.as_str();
                let k = arg_slot(sc, |x| matches!(x, Arg::Count(n) if *n == name))
                    .unwrap_or_else(|| panic!("{}: no Count({name}) argument", sc.name));
                format!("a[{k}]")
            }
            ArgKind::Param(p) => param_arg(prog, c, sc, call, *p),
        })
        .collect()
}

/// The C argument of parameter `p` of a call: its binding, else the
/// scenario input of its name (as a pointer where the parameter is one).
fn param_arg(prog: &Program, c: &Compiled, sc: &Scenario, call: &Call, p: usize) -> String {
    let (i, seq) = seq_of(prog, call.seq);
    let pname = seq.params[p].as_str();
    let val = call
        .bind
        .iter()
        .find(|(n, _)| *n == pname)
        .map(|(_, v)| *v)
        // Lazily: a bound parameter need not be an argument.
        .unwrap_or_else(|| {
            Val::A(
                sc.args
                    .iter()
                    .find_map(|x| match x {
                        Arg::Int(n) | Arg::Mem(n) if *n == pname => Some(*n),
                        _ => None,
                    })
                    .unwrap_or_else(|| panic!("{}: `{pname}` of {} unbound", sc.name, call.seq)),
            )
        });
    let ptr = c.opt.seqs[i].ptrs.get(p).is_some_and(Option::is_some);
    let v = match val {
        Val::K(v) => format!("{v:#x}ULL"),
        Val::A(n) => {
            let k = arg_slot(sc, |x| matches!(x, Arg::Int(m) | Arg::Mem(m) if *m == n))
                .unwrap_or_else(|| panic!("{}: no argument `{n}`", sc.name));
            format!("a[{k}]")
        }
    };
    if ptr {
        format!("(void *)(uintptr_t){v}")
    } else {
        v
    }
}

/// The statement calling generated function `i` with `args` into `r`.
fn write_call(body: &mut String, c: &Compiled, i: usize, args: &[String]) {
    let sym = &c.funcs[i].symbol;
    if c.opt.seqs[i].void {
        // The code leaves the return register as it was (as the kernel's
        // void functions do): nothing to compare but 0.
        let _ = writeln!(body, "\t{sym}({});\n\tr = 0;", args.join(", "));
    } else {
        let _ = writeln!(body, "\tr = {sym}({});", args.join(", "));
    }
}

// ---------------------------------------------------------------- build
