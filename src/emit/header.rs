//! The C header: register offsets, field macros and helpers, prototypes.
//! One header per spec, shared by all targets (offsets and fields do not
//! depend on the target; the prototypes follow each ABI's C view).

use crate::codegen::{Options, Style};
use crate::ir::{Instances, Program};
use crate::lir::ArgKind;
use crate::spec::ast::{Endian, Numbering};
use askama::Template;

struct FieldView {
    name: String,
    upper: String,
    lower: String,
    shift: u32,
    width: u32,
    mask_c: String,
    /// Linux style, MSB0 fields: the `PPC_BIT`-style spelling of the mask,
    /// as a comment (the header is shared by all architectures, and
    /// `PPC_BITMASK` exists only on powerpc).
    ppc: Option<String>,
    doc: String,
}

struct RegView {
    name: String,
    upper: String,
    offset_hex: String,
    width: u32,
    endian: &'static str,
    fields: Vec<FieldView>,
}

struct DevView {
    name: String,
    upper: String,
    instances_doc: String,
    max: Option<u64>,
    regs: Vec<RegView>,
}

/// A `record` (command layout) and its fields, each in one 64-bit word.
struct RecordView {
    name: String,
    upper: String,
    size: u64,
    fields: Vec<RecordFieldView>,
}

struct RecordFieldView {
    name: String,
    upper: String,
    word: u32,
    shift: u32,
    width: u32,
    mask_c: String,
    fixed: Option<String>,
    doc: String,
}

/// A `queue`: what the caller sets up (ring size, entry size).
struct QueueView {
    name: String,
    upper: String,
    entry: u64,
    batch: Option<u64>,
    doc: String,
}

struct ThresholdView {
    name: String,
    value: u64,
    doc: String,
}

struct Proto {
    doc: String,
    decl: String,
}

#[derive(Template)]
#[template(path = "header.h", escape = "none")]
struct Header<'a> {
    banner: String,
    spdx: Option<&'a str>,
    guard: String,
    linux: bool,
    cast: &'static str,
    u64: &'static str,
    devices: Vec<DevView>,
    records: Vec<RecordView>,
    queues: Vec<QueueView>,
    thresholds: Vec<ThresholdView>,
    features: Vec<FeatureView>,
    prototypes: Vec<Proto>,
}

/// A bit of the feature word (`features` argument).
struct FeatureView {
    upper: String,
    bit: usize,
    doc: String,
}

fn c_ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The include guard: the prefix's too, so that one spec generated twice
/// with two prefixes (a kernel's correct and broken builds) can be
/// included in one file.
pub fn guard(prefix: &str, stem: &str) -> String {
    format!(
        "{}SHOOTDOWN_{}_H",
        prefix.to_ascii_uppercase(),
        c_ident(stem).to_ascii_uppercase()
    )
}

/// Every value a sequence can return, with why: (code, reason), in the
/// order first met. The header lists them all (README, "Return codes").
pub fn return_codes(prog: &Program, s: &crate::ir::Seq) -> Vec<(i64, String)> {
    use crate::ir::{GSize, LockValue, MemOp, Stmt};
    let mut out: Vec<(i64, String)> = Vec::new();
    let mut add = |c: i64, why: String| {
        if !out.iter().any(|(x, w)| *x == c && *w == why) {
            out.push((c, why));
        }
    };
    let einval = crate::passes::cover::EINVAL;
    let reg = |a: &crate::ir::Access| {
        let d = &prog.devices[a.dev];
        format!("{}.{}", d.name, d.regs[a.reg].name)
    };
    // Returns inside a branch are the checks `check` adds (a lock owner
    // that does not fit), reported with their statement below.
    let mut checks = Vec::new();
    let known = crate::ir::facts::params_known(s.params.len(), &s.assumes).ok();
    crate::ir::walk(&s.body, &mut |x| {
        if let Stmt::If { then_, .. } = x {
            checks.extend(then_.iter().filter_map(|t| match t {
                Stmt::Return { span, .. } => Some(*span),
                _ => None,
            }));
        }
    });
    crate::ir::walk(&s.body, &mut |x| match x {
        Stmt::Poll { access, wait, .. } => {
            add(wait.fail, format!("a poll of {} runs out", reg(access)))
        }
        Stmt::Return { span, .. } if checks.contains(span) => {}
        Stmt::Return { value, span } => match value.as_const() {
            Some(c) => add(
                c as i64,
                format!("`return` at line {}", prog.line_of(*span)),
            ),
            None => add(
                i64::MIN,
                format!("the value of `return` at line {}", prog.line_of(*span)),
            ),
        },
        Stmt::Range { step, .. } if step.as_const().is_none() => {
            add(einval, "a run-time `range` step is 0".into())
        }
        Stmt::While {
            limit, fail, span, ..
        } => add(
            *fail,
            format!(
                "the `while` at line {} is still running after {limit} iterations",
                prog.line_of(*span)
            ),
        ),
        Stmt::Cover { set, .. } => {
            let g = &prog.granules[*set];
            if crate::model::all_entry(g).is_none() {
                add(
                    einval,
                    format!("a cover's range reaches 2^64 (`{}` has no `all`)", g.name),
                );
            }
            if let Some(GSize::Param(p)) = crate::model::loop_entry(g).map(|e| &e.size) {
                add(
                    einval,
                    format!("the granule size `{p}` is not a power of two (or too large)"),
                );
            }
        }
        Stmt::Mem {
            op: MemOp::Poll { ptr, wait, .. },
            ..
        } => add(
            wait.fail,
            format!(
                "a poll of `{}` runs out",
                s.params.get(*ptr).map_or("memory", String::as_str)
            ),
        ),
        Stmt::Mem {
            op:
                MemOp::Acquire(crate::ir::Acquire {
                    mem,
                    value,
                    held,
                    limit,
                    ..
                }),
            ..
        } => {
            if let Some(h) = held {
                add(
                    *h as i64,
                    "the lock is already held by this owner (not taken: do not release it)".into(),
                );
            }
            if let Some((_, code)) = limit {
                add(*code, "the lock spin runs out".into());
            }
            // Not when the `assume`s keep the owner within 1..2^width - 1.
            let fits = |e: &crate::ir::Expr, width: u32| {
                known.as_ref().is_some_and(|k| {
                    let o = crate::ir::facts::eval(e, k);
                    o.lo >= 1 && o.hi <= crate::ir::expr::field_mask(0, width)
                })
            };
            if matches!(value, LockValue::Owner(e) if e.as_const().is_none() && !fits(e, mem.width))
            {
                add(
                    einval,
                    "the lock owner does not fit the lock (or is 0)".into(),
                );
            }
        }
        _ => {}
    });
    out
}

fn errno_name(c: i64) -> Option<&'static str> {
    Some(match c {
        -5 => "EIO",
        -11 => "EAGAIN",
        -16 => "EBUSY",
        -19 => "ENODEV",
        -22 => "EINVAL",
        -34 => "ERANGE",
        -110 => "ETIMEDOUT",
        _ => return None,
    })
}

/// What a sequence's return value means: every code it can return.
fn proto_doc(prog: &Program, s: &crate::ir::Seq) -> String {
    let doc = returns_doc(prog, s);
    if s.assumes.is_empty() {
        return doc;
    }
    // The caller's side of the contract, before what the call returns.
    let facts: Vec<&str> = s.assumes.iter().map(|a| a.text.as_str()).collect();
    let rest = doc.strip_prefix(&format!("{}: ", s.name)).unwrap_or(&doc);
    format!(
        "{}: the caller guarantees {} (not checked); {rest}",
        s.name,
        facts.join(" and ")
    )
}

fn returns_doc(prog: &Program, s: &crate::ir::Seq) -> String {
    let codes = return_codes(prog, s);
    if s.void {
        let early: Vec<String> = codes
            .iter()
            .filter(|(c, _)| *c < 0)
            .map(|(_, w)| w.clone())
            .collect();
        return if early.is_empty() {
            format!("{}: returns nothing", s.name)
        } else {
            format!(
                "{}: returns nothing; it stops early when {}",
                s.name,
                early.join(", or when ")
            )
        };
    }
    let mut parts = vec!["0".to_string()];
    let mut seen: Vec<i64> = Vec::new();
    for (c, _) in &codes {
        if seen.contains(c) {
            continue;
        }
        seen.push(*c);
        let whys: Vec<&str> = codes
            .iter()
            .filter(|(x, _)| x == c)
            .map(|(_, w)| w.as_str())
            .collect();
        let code = match (*c, errno_name(*c)) {
            (i64::MIN, _) => "the value".to_string(),
            (c, Some(n)) => format!("{c} (-{n})"),
            (c, None) => c.to_string(),
        };
        parts.push(format!("{code} when {}", whys.join(" or when ")));
    }
    if parts.len() == 1 {
        format!("{}: returns 0", s.name)
    } else {
        format!("{}: returns {}", s.name, parts.join("; "))
    }
}

/// C prototype of a sequence (the ABI contract of the `.S`).
pub fn prototype(prog: &Program, seq: &crate::ir::Seq, symbol: &str, linux: bool) -> String {
    let (ul, ull) = if linux {
        ("unsigned long", "u64")
    } else {
        ("unsigned long", "unsigned long long")
    };
    // Device bases are MMIO: sparse's `__iomem` in kernel style.
    let iomem = if linux { "__iomem " } else { "" };
    let mut args = Vec::new();
    for &d in &seq.devices {
        let name = c_ident(&prog.devices[d].name);
        match prog.devices[d].instances {
            Instances::Single => args.push(format!("void {iomem}*{name}")),
            Instances::Fixed(_) => args.push(format!("void {iomem}*const {name}[]")),
            Instances::Dynamic { .. } => {
                args.push(format!("void {iomem}*const {name}[]"));
                args.push(format!("{ul} {name}_count"));
            }
        }
    }
    for (i, p) in seq.params.iter().enumerate() {
        // `ptr u8` etc.: normal memory the sequence reads, writes or locks.
        let ty = match seq.ptrs.get(i).copied().flatten() {
            Some(8) => "unsigned char *",
            Some(16) => "unsigned short *",
            Some(32) => "unsigned int *",
            Some(_) => "unsigned long *",
            None => "",
        };
        if ty.is_empty() {
            let t = seq.ctypes.get(i).copied().flatten().unwrap_or(ull);
            args.push(format!("{t} {}", c_ident(p)));
        } else if seq.ptrs.iter().flatten().count() > 1 {
            // Distinct pointer parameters do not alias (the spec language's
            // rule; `reuse-loads` relies on it): say so in C and C++.
            args.push(format!("{ty}__restrict {}", c_ident(p)));
        } else if linux {
            let k = match seq.ptrs.get(i).copied().flatten() {
                Some(8) => "u8",
                Some(16) => "u16",
                Some(32) => "u32",
                _ => "u64",
            };
            args.push(format!("{k} *{}", c_ident(p)));
        } else {
            args.push(format!("{ty}{}", c_ident(p)));
        }
    }
    if args.is_empty() {
        args.push("void".into());
    }
    let ret = if seq.void { "void" } else { "long" };
    format!("{ret} {symbol}({})", args.join(", "))
}

pub fn render(prog: &Program, stem: &str, opts: &Options) -> String {
    // Prototypes as the code is built (the feature word goes when every
    // feature is fixed or patched).
    let prog = &*crate::codegen::resolve(prog, opts);
    let linux = opts.style == Style::Linux;
    let (cast, u64t) = if linux {
        ("(u64)", "u64")
    } else {
        ("(uint64_t)", "uint64_t")
    };
    // `--prefix` goes in front of every name the header defines (macros
    // in upper case, inline helpers as given), as in front of symbols.
    let up = opts.prefix.to_ascii_uppercase();
    let devices = prog
        .devices
        .iter()
        .map(|d| dev_view(&up, d, linux))
        .collect();
    let prototypes = prog
        .seqs
        .iter()
        .map(|s| Proto {
            doc: proto_doc(prog, s),
            decl: prototype(prog, s, &format!("{}{}", opts.prefix, s.name), linux),
        })
        .collect();
    let thresholds = threshold_views(prog, opts);
    let features = feature_views(prog, stem, opts, linux);
    let records = prog
        .records
        .iter()
        .map(|r| record_view(&up, r, linux))
        .collect();
    let queues = prog
        .queues
        .iter()
        .map(|q| queue_view(&up, prog, q))
        .collect();
    // Sized up front (a field's macros and helpers are about 550 bytes):
    // growing the text by doubling copied it over and over.
    let fields: usize = prog.devices.iter().map(|d| d.fields.len()).sum();
    let regs: usize = prog.devices.iter().map(|d| d.regs.len()).sum();
    let mut text = String::with_capacity(640 * fields + 192 * regs + 1024 * prog.seqs.len() + 8192);
    let header = Header {
        records,
        queues,
        thresholds,
        features,
        banner: crate::emit::banner(&prog.source_name, ""),
        spdx: opts.spdx.as_deref(),
        guard: guard(&opts.prefix, stem),
        linux,
        cast,
        u64: u64t,
        devices,
        prototypes,
    };
    if let Err(e) = header.render_into(&mut text) {
        text = format!("/* template error: {e} */\n");
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A field's mask as a C constant: `GENMASK_ULL(HI, LO)` in kernel style.
fn mask_c(shift: u32, width: u32, linux: bool) -> String {
    if linux {
        format!("GENMASK_ULL({}, {shift})", shift + width - 1)
    } else {
        format!(
            "UINT64_C({:#018x})",
            crate::ir::expr::field_mask(shift, width)
        )
    }
}

fn dev_view(up: &str, d: &crate::ir::Device, linux: bool) -> DevView {
    let dup = format!("{up}{}", c_ident(&d.name).to_ascii_uppercase());
    let (instances_doc, max) = match d.instances {
        Instances::Single => ("one instance".to_string(), None),
        Instances::Fixed(n) => (format!("{n} instances"), Some(n)),
        Instances::Dynamic { max } => (
            format!("instances chosen at run time, at most {max}"),
            Some(max),
        ),
    };
    // Fields by register, in declaration order (one pass: a
    // device may have hundreds of thousands).
    let mut by_reg: Vec<Vec<&crate::ir::Field>> = vec![Vec::new(); d.regs.len()];
    for f in &d.fields {
        by_reg[f.reg].push(f);
    }
    let regs = d
        .regs
        .iter()
        .zip(&by_reg)
        .map(|(r, fields)| {
            let rup = upper_ident(&dup, &r.name);
            RegView {
                name: r.name.clone(),
                offset_hex: format!("{:#x}", r.offset),
                width: r.width,
                endian: match r.endian {
                    Endian::Big => "big-endian",
                    Endian::Little => "little-endian",
                },
                fields: fields
                    .iter()
                    .map(|f| field_view(&rup, r, f, linux))
                    .collect(),
                upper: rup,
            }
        })
        .collect();
    DevView {
        name: d.name.clone(),
        upper: dup,
        instances_doc,
        max,
        regs,
    }
}

/// `prefix_` and `name` as a C identifier in upper case.
fn upper_ident(prefix: &str, name: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + name.len() + 1);
    s.push_str(prefix);
    s.push('_');
    // Names are ASCII (the lexer's words); by byte, no UTF-8 decoding.
    s.extend(name.bytes().map(|c| {
        if c.is_ascii_alphanumeric() {
            char::from(c.to_ascii_uppercase())
        } else {
            '_'
        }
    }));
    s
}

/// Field `f` of register `r` (whose macro prefix is `rup`). Built with
/// pushes, not `format!`: a register map has thousands of fields.
fn field_view(rup: &str, r: &crate::ir::Reg, f: &crate::ir::Field, linux: bool) -> FieldView {
    let fup = upper_ident(rup, &f.name);
    let mut digits = itoa::Buffer::new();
    let mut doc = String::with_capacity(48);
    let numbering = match f.numbering {
        Numbering::Msb0 => "IBM (MSB0) bit",
        Numbering::Lsb0 => "bit",
    };
    doc.push_str(numbering);
    if f.first == f.last {
        doc.push(' ');
        doc.push_str(digits.format(f.first));
        doc.push_str(" = LSB0 bit ");
        doc.push_str(digits.format(f.shift));
    } else {
        doc.push_str("s ");
        doc.push_str(digits.format(f.first));
        doc.push_str("..");
        doc.push_str(digits.format(f.last));
        doc.push_str(" = LSB0 bits ");
        doc.push_str(digits.format(f.shift + f.width - 1));
        doc.push_str("..");
        doc.push_str(digits.format(f.shift));
    }
    FieldView {
        name: f.name.clone(),
        lower: fup.to_ascii_lowercase(),
        upper: fup,
        shift: f.shift,
        width: f.width,
        ppc: (linux && f.numbering == Numbering::Msb0 && matches!(r.width, 32 | 64)).then(|| {
            let suffix = if r.width == 32 { "32" } else { "" };
            if f.first == f.last {
                format!("PPC_BIT{suffix}({})", f.first)
            } else {
                format!("PPC_BITMASK{suffix}({}, {})", f.first, f.last)
            }
        }),
        mask_c: mask_c(f.shift, f.width, linux),
        doc,
    }
}

fn threshold_views(prog: &Program, opts: &Options) -> Vec<ThresholdView> {
    crate::model::thresholds(prog, &opts.cover.pins)
        .into_iter()
        .map(|t| ThresholdView {
            name: format!("{}{}", opts.prefix.to_ascii_uppercase(), t.name),
            value: t.value,
            doc: match t.source {
                crate::model::Source::Derived { per_op, all } => format!(
                    "derived: a loop op costs {per_op} ns, a flush-all {all} ns (modelled); loop up to this many granules"
                ),
                crate::model::Source::Spec => "pinned in the spec".into(),
                crate::model::Source::Cli => "pinned on the command line (--set)".into(),
            },
        })
        .collect()
}

fn feature_views(prog: &Program, stem: &str, opts: &Options, linux: bool) -> Vec<FeatureView> {
    prog.features
        .iter()
        .enumerate()
        .map(|(bit, f)| FeatureView {
            upper: format!(
                "{}{}_FEATURE_{}",
                opts.prefix.to_ascii_uppercase(),
                c_ident(stem).to_ascii_uppercase(),
                c_ident(&f.name).to_ascii_uppercase()
            ),
            bit,
            doc: match (&f.cap, linux) {
                (Some(c), true) => format!(
                    "feature {}: kernel capability {c}, selected by the kernel's boot-time patching",
                    f.name
                ),
                (Some(c), false) => {
                    format!("feature {} (kernel capability {c})", f.name)
                }
                (None, _) => format!("feature {}", f.name),
            },
        })
        .collect()
}

fn record_view(up: &str, r: &crate::spec::queue::RecordLayout, linux: bool) -> RecordView {
    let rup = format!("{up}{}", c_ident(&r.name).to_ascii_uppercase());
    RecordView {
        name: r.name.clone(),
        size: r.size,
        fields: r
            .fields
            .iter()
            .map(|f| {
                let hi = f.shift + f.width - 1;
                let numbering = match f.numbering {
                    Numbering::Msb0 => "MSB0 bits",
                    Numbering::Lsb0 => "bits",
                };
                RecordFieldView {
                    name: f.name.clone(),
                    upper: format!("{rup}_{}", c_ident(&f.name).to_ascii_uppercase()),
                    word: f.word,
                    shift: f.shift,
                    width: f.width,
                    mask_c: mask_c(f.shift, f.width, linux),
                    fixed: f.fixed.map(|v| format!("{v:#x}")),
                    doc: format!(
                        "{numbering} {}..{} of the record = word {}, LSB0 bits {hi}..{}",
                        f.first, f.last, f.word, f.shift
                    ),
                }
            })
            .collect(),
        upper: rup,
    }
}

fn queue_view(up: &str, prog: &Program, q: &crate::ir::Queue) -> QueueView {
    QueueView {
        name: q.name.clone(),
        upper: format!("{up}{}", c_ident(&q.name).to_ascii_uppercase()),
        entry: q.entry,
        batch: q.batch,
        doc: format!(
            "on {}: producer {}, consumer {}, {}",
            prog.devices[q.dev].name,
            prog.devices[q.dev].regs[q.prod].name,
            prog.devices[q.dev].regs[q.cons].name,
            match q.index {
                crate::spec::ast::QueueIndex::Wrap =>
                    "entry index with a wrap bit above it; full at 2^log2n entries",
                crate::spec::ast::QueueIndex::Bytes => "byte offsets; one entry kept free",
            }
        ),
    }
}

/// The argument list a function expects, for harnesses and the emulator.
pub fn arg_kinds(f: &crate::lir::Func) -> &[ArgKind] {
    &f.args
}
