//! The C names a header defines, and the checks that keep them distinct:
//! names no spec item may take (checked where the spec is checked), and
//! the names the header derives from the spec (checked per `--prefix`
//! and style before code is made).
//!
//! The header joins names with `_` and upper-cases them (`D_A_B_C_SHIFT`
//! for device `d`, register `a_b`, field `c`, and also for device `d_a`,
//! register `b`, field `c`); prototypes use device and parameter names as
//! C parameter names. A spec that makes two of them equal, or one a C
//! keyword, would give a header that does not compile: it is rejected
//! here, naming both sides.

use crate::ir::{CoverMode, Instances, Program, Stmt};
use crate::spec::diag::{Diag, Span};
use rustc_hash::FxHashMap;

/// C and C++ keywords (C23, C++20), `main`, and the type, macro and
/// attribute names the header uses in either style: none may be a
/// parameter or function name (a spec must work in both styles).
const RESERVED: &[&str] = &[
    // C
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "alignas",
    "alignof",
    "bool",
    "constexpr",
    "false",
    "nullptr",
    "static_assert",
    "thread_local",
    "true",
    "typeof",
    "typeof_unqual",
    "asm",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_BitInt",
    "_Bool",
    "_Complex",
    "_Decimal128",
    "_Decimal32",
    "_Decimal64",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    // C++
    "and",
    "and_eq",
    "bitand",
    "bitor",
    "catch",
    "char16_t",
    "char32_t",
    "char8_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "consteval",
    "constinit",
    "const_cast",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_cast",
    "template",
    "this",
    "throw",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
    // What the header spells
    "uint64_t",
    "UINT64_C",
    "u8",
    "u16",
    "u32",
    "u64",
    "FIELD_PREP",
    "FIELD_GET",
    "GENMASK_ULL",
    "__iomem",
    "__restrict",
    "__cplusplus",
    "main",
    // Macros (and macro-like names) of the standard headers a user's file
    // includes beside ours: a parameter or function named after one does
    // not compile (`errno` is `(*__errno_location ())` in glibc).
    "NULL",
    "offsetof",
    "errno",
    "assert",
    "EOF",
    "BUFSIZ",
    "FILENAME_MAX",
    "stdin",
    "stdout",
    "stderr",
    "FILE",
    "size_t",
    "ptrdiff_t",
    "uintptr_t",
    "intptr_t",
    "uint32_t",
    "uint16_t",
    "uint8_t",
    "int64_t",
    "int32_t",
    "INT64_C",
    "UINT32_C",
    "SIZE_MAX",
    "UINT64_MAX",
    "CHAR_BIT",
    "EINVAL",
    "ETIMEDOUT",
    "EBUSY",
    "EIO",
    "ENOMEM",
    // Macros of the kernel headers the linux style's users include
    // (<asm/barrier.h>, <asm/io.h>, <linux/bits.h>, <linux/compiler.h>,
    // <linux/kernel.h>, <linux/minmax.h>, <asm/current.h>).
    "mb",
    "rmb",
    "wmb",
    "dma_rmb",
    "dma_wmb",
    "smp_mb",
    "smp_rmb",
    "smp_wmb",
    "barrier",
    "readl",
    "writel",
    "readq",
    "writeq",
    "readl_relaxed",
    "writel_relaxed",
    "readq_relaxed",
    "writeq_relaxed",
    "BIT",
    "BIT_ULL",
    "GENMASK",
    "likely",
    "unlikely",
    "READ_ONCE",
    "WRITE_ONCE",
    "ARRAY_SIZE",
    "container_of",
    "min",
    "max",
    "current",
];

/// Why `name` cannot be a C name of the header, if it cannot.
pub fn reserved(name: &str) -> Option<&'static str> {
    if RESERVED.contains(&name) {
        Some(
            if name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            {
                "a C or C++ keyword, or a name the header uses"
            } else {
                "a name the header uses"
            },
        )
    } else {
        None
    }
}

/// Names the Linux kernel's POWER assembly header (`asm/ppc_asm.h`,
/// included by the linux style's `.S`) defines as registers: `r0`-`r31`,
/// `cr0`-`cr7`, `f0`-`f31`, `v0`-`v31`, `vs0`-`vs63`. A symbol of that
/// name would be rewritten to a register in the `.S`.
pub fn power_asm_register(name: &str) -> bool {
    let num = |prefix: &str, max: u32| {
        name.strip_prefix(prefix)
            .filter(|d| {
                !d.is_empty()
                    && d.bytes().all(|b| b.is_ascii_digit())
                    && !(d.len() > 1 && d.starts_with('0'))
            })
            .and_then(|d| d.parse::<u32>().ok())
            .is_some_and(|n| n <= max)
    };
    num("r", 31) || num("cr", 7) || num("f", 31) || num("vs", 63) || num("v", 31)
}

/// What a C name is for; described in words only for a diagnostic (a
/// large map has thousands of names and no clash).
#[derive(Clone, Copy)]
enum What {
    Device(usize),
    Register(usize, usize),
    Field(usize, usize),
    /// The threshold of a `cover` in sequence `.0`.
    Threshold(usize),
    Sequence(usize),
    Record(usize),
    RecordField(usize, usize),
    Queue(usize),
}

impl What {
    fn describe(self, prog: &Program) -> String {
        match self {
            What::Device(d) => format!("device `{}`", prog.devices[d].name),
            What::Register(d, r) => {
                let d = &prog.devices[d];
                format!("register `{}.{}`", d.name, d.regs[r].name)
            }
            What::Field(d, f) => {
                let d = &prog.devices[d];
                let f = &d.fields[f];
                format!("field `{}.{}.{}`", d.name, d.regs[f.reg].name, f.name)
            }
            What::Threshold(s) => {
                format!("the threshold of a `cover` in `{}`", prog.seqs[s].name)
            }
            What::Sequence(s) => {
                // `--feature-suffix` renames a specialized sequence: say
                // which one of the spec it was.
                let seq = &prog.seqs[s];
                let written = prog
                    .source_text
                    .get(seq.span.offset..seq.span.offset + seq.span.len)
                    .unwrap_or(&seq.name);
                if written == seq.name {
                    format!("sequence `{}`", seq.name)
                } else {
                    format!(
                        "sequence `{written}` (named `{}` by --feature-suffix)",
                        seq.name
                    )
                }
            }
            What::Record(r) => format!("record `{}`", prog.records[r].name),
            What::RecordField(r, f) => {
                let r = &prog.records[r];
                format!("field `{}` of record `{}`", r.fields[f].name, r.name)
            }
            What::Queue(q) => format!("queue `{}`", prog.queues[q].name),
        }
    }
}

/// One C name and where it comes from.
#[derive(Clone, Copy)]
struct Origin {
    what: What,
    span: Span,
    /// An object-like macro (expands wherever the name appears).
    object_macro: bool,
}

impl Origin {
    /// An object-like macro's origin.
    fn object(what: What, span: Span) -> Origin {
        Origin::new(what, span, true)
    }

    fn new(what: What, span: Span, object_macro: bool) -> Origin {
        Origin {
            what,
            span,
            object_macro,
        }
    }
}

/// `parts` joined, each upper-cased: the stem of a macro name.
fn upper(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push('_');
        }
        let from = s.len();
        s.push_str(p);
        s[from..].make_ascii_uppercase();
    }
    s
}

/// Every header-level name (macros, inline helpers, prototypes' function
/// names) must be distinct, and no prototype parameter may be an
/// object-like macro. Function names depend on `--prefix`.
pub fn check(prog: &Program, prefix: &str, linux_style: bool) -> Result<(), Diag> {
    let fields: usize = prog.devices.iter().map(|d| d.fields.len()).sum();
    let regs: usize = prog.devices.iter().map(|d| d.regs.len()).sum();
    let count = 7 * fields + 2 * regs + 8;
    // The macros' names are written back to back into one string, then
    // checked in the order they were made (so the clash reported is the
    // first one): a `String` per name was most of this check's time.
    let mut macros = Macros {
        text: String::with_capacity(32 * count),
        names: Vec::with_capacity(count),
    };
    for (i, d) in prog.devices.iter().enumerate() {
        macros.device(i, d);
    }
    macros.records_and_queues(prog);
    macros.thresholds(prog, &prefix.to_ascii_uppercase());
    let symbols: Vec<String> = prog
        .seqs
        .iter()
        .map(|s| format!("{}{}", prefix, s.name))
        .collect();
    let power = prog.targets.iter().any(|(t, _)| t.starts_with("power"));
    let mut seen = Seen {
        prog,
        names: FxHashMap::default(),
        power_linux: power && linux_style,
    };
    seen.names.reserve(macros.names.len() + symbols.len());
    for &(start, end, o) in &macros.names {
        seen.add(&macros.text[start..end], o)?;
    }
    seen.functions(&symbols)?;
    seen.check_parameters()
}

/// The header's macro and helper names, in the order the header has them.
struct Macros {
    text: String,
    /// Each name's bytes in `text`, and its origin.
    names: Vec<(usize, usize, Origin)>,
}

impl Macros {
    /// `stem`, `_` and `suffix`.
    fn add(&mut self, stem: &str, suffix: &str, o: Origin) {
        let start = self.text.len();
        self.text.push_str(stem);
        self.text.push('_');
        self.text.push_str(suffix);
        self.names.push((start, self.text.len(), o));
    }

    /// Device `di`'s macros: its instance bound, its registers' offsets and
    /// widths, its fields' macros and helpers.
    fn device(&mut self, di: usize, d: &crate::ir::Device) {
        let dup = upper(&[&d.name]);
        if !matches!(d.instances, Instances::Single) {
            self.add(
                &dup,
                "INSTANCES_MAX",
                Origin::object(What::Device(di), d.span),
            );
        }
        for (ri, r) in d.regs.iter().enumerate() {
            let rup = upper(&[&dup, &r.name]);
            for s in ["OFFSET", "WIDTH"] {
                self.add(&rup, s, Origin::object(What::Register(di, ri), r.span));
            }
        }
        for (fi, f) in d.fields.iter().enumerate() {
            let fup = upper(&[&dup, &d.regs[f.reg].name, &f.name]);
            self.field(What::Field(di, fi), f.span, &fup);
        }
    }

    /// A field's macros and inline helpers (upper-case stem `fup`).
    fn field(&mut self, what: What, span: Span, fup: &str) {
        for (s, object_macro) in [
            ("SHIFT", true),
            ("WIDTH", true),
            ("MASK", true),
            ("PREP", false),
            ("GET", false),
        ] {
            self.add(fup, s, Origin::new(what, span, object_macro));
        }
        let lower = fup.to_ascii_lowercase();
        for s in ["prep", "get"] {
            self.add(&lower, s, Origin::new(what, span, false));
        }
    }

    /// Records' size and field macros, queues' entry size and batch: in
    /// the one table with the devices', so `record d_a` beside register
    /// `d.a` (both `D_A_..._MASK`) or `record q_entry` beside `queue q`
    /// (both `Q_ENTRY_SIZE`) is a clash naming both (issue 42).
    fn records_and_queues(&mut self, prog: &Program) {
        for (ri, r) in prog.records.iter().enumerate() {
            let rup = upper(&[&r.name]);
            self.add(&rup, "SIZE", Origin::object(What::Record(ri), r.span));
            for (fi, f) in r.fields.iter().enumerate() {
                let fup = upper(&[&rup, &f.name]);
                let o = |object_macro| Origin::new(What::RecordField(ri, fi), f.span, object_macro);
                for s in ["WORD", "SHIFT", "WIDTH", "MASK"] {
                    self.add(&fup, s, o(true));
                }
                if f.fixed.is_some() {
                    self.add(&fup, "VALUE", o(true));
                }
                for s in ["PREP", "GET"] {
                    self.add(&fup, s, o(false));
                }
            }
        }
        for (qi, q) in prog.queues.iter().enumerate() {
            let qup = upper(&[&q.name]);
            let o = Origin::object(What::Queue(qi), q.span);
            self.add(&qup, "ENTRY_SIZE", o);
            if q.batch.is_some() {
                self.add(&qup, "BATCH", o);
            }
        }
    }

    /// The threshold macros of `auto` covers (`prefix_up`: the upper-case
    /// `--prefix`).
    fn thresholds(&mut self, prog: &Program, prefix_up: &str) {
        for (si, s) in prog.seqs.iter().enumerate() {
            // Two covers of one set in one sequence share their threshold.
            let mut mine: Vec<&str> = Vec::new();
            crate::ir::walk(&s.body, &mut |st| {
                if let Stmt::Cover {
                    mode: CoverMode::Auto,
                    threshold,
                    span,
                    ..
                } = st
                {
                    if !mine.contains(&threshold.as_str()) {
                        mine.push(threshold);
                        let start = self.text.len();
                        self.text.push_str(prefix_up);
                        self.text.push_str(threshold);
                        self.names.push((
                            start,
                            self.text.len(),
                            Origin::object(What::Threshold(si), *span),
                        ));
                    }
                }
            });
        }
    }
}

/// The names checked so far, each with its origin.
struct Seen<'p, 'n> {
    prog: &'p Program,
    names: FxHashMap<&'n str, Origin>,
    /// The linux style on a POWER target: ppc_asm.h's register names are
    /// taken in the `.S`.
    power_linux: bool,
}

impl<'n> Seen<'_, 'n> {
    fn add(&mut self, name: &'n str, o: Origin) -> Result<(), Diag> {
        match self.names.entry(name) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(o);
                Ok(())
            }
            std::collections::hash_map::Entry::Occupied(prev) => {
                let prev = *prev.get();
                let (what, prev_what) = (o.what.describe(self.prog), prev.what.describe(self.prog));
                Err(Diag::new(
                    o.span,
                    format!("the header would define `{name}` twice: for {prev_what} and for {what}"),
                )
                .label(what)
                .related(prev.span, prev_what)
                .help("C names join device, register and field names with `_` in upper case; rename one of them"))
            }
        }
    }

    /// The sequences' C function names (`symbols`: `prefix` and the name,
    /// in sequence order), none reserved.
    fn functions(&mut self, symbols: &'n [String]) -> Result<(), Diag> {
        let prog = self.prog;
        for (si, (s, symbol)) in prog.seqs.iter().zip(symbols).enumerate() {
            if let Some(why) = reserved(symbol) {
                return Err(Diag::new(
                    s.span,
                    format!("sequence `{symbol}` would be a C function named `{symbol}`, {why}"),
                )
                .label("reserved in C")
                .help("rename the sequence, or give a --prefix"));
            }
            if self.power_linux && power_asm_register(symbol) {
                return Err(Diag::new(
                    s.span,
                    format!("sequence `{symbol}` would be a symbol the kernel's asm/ppc_asm.h defines as a register"),
                )
                .label("a register name in the linux style's POWER `.S`")
                .help("rename the sequence, or give a --prefix"));
            }
            self.add(symbol, Origin::new(What::Sequence(si), s.span, false))?;
        }
        Ok(())
    }

    /// Prototype parameters: a device base (and count) per device used, then
    /// the sequence's own; an object-like macro of the same name would
    /// replace the parameter name.
    fn check_parameters(&self) -> Result<(), Diag> {
        let prog = self.prog;
        for s in &prog.seqs {
            let mut names: Vec<String> = Vec::new();
            for &d in &s.devices {
                let dev = &prog.devices[d];
                names.push(dev.name.clone());
                if matches!(dev.instances, Instances::Dynamic { .. }) {
                    names.push(format!("{}_count", dev.name));
                }
            }
            names.extend(s.params.iter().cloned());
            for n in &names {
                if let Some(o) = self.names.get(n.as_str()).filter(|o| o.object_macro) {
                    let what = o.what.describe(prog);
                    return Err(Diag::new(
                        s.span,
                        format!(
                            "parameter `{n}` of `{}` is also a macro of the header (for {what})",
                            s.name
                        ),
                    )
                    .label("its prototype would not compile")
                    .related(o.span, what)
                    .help("rename the parameter or the device"));
                }
            }
        }
        Ok(())
    }
}
