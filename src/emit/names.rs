//! The C names a header defines, and the checks that keep them distinct.
//!
//! The header joins names with `_` and upper-cases them (`D_A_B_C_SHIFT`
//! for device `d`, register `a_b`, field `c`, and also for device `d_a`,
//! register `b`, field `c`); prototypes use device and parameter names as
//! C parameter names. A spec that makes two of them equal, or one a C
//! keyword, would give a header that does not compile: it is rejected
//! here, naming both sides.

use crate::codegen::Options;
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

/// One C name and where it comes from.
struct Origin {
    what: String,
    span: Span,
    /// An object-like macro (expands wherever the name appears).
    object_macro: bool,
}

/// Every header-level name (macros, inline helpers, prototypes' function
/// names) must be distinct, and no prototype parameter may be an
/// object-like macro. Function names depend on `--prefix`.
pub fn check(prog: &Program, opts: &Options) -> Result<(), Diag> {
    let mut names = Names::default();
    for d in &prog.devices {
        names.device(d)?;
    }
    names.thresholds(prog, &opts.prefix.to_ascii_uppercase())?;
    names.functions(prog, &opts.prefix)?;
    names.check_parameters(prog)
}

/// The header's names so far, each with its origin.
#[derive(Default)]
struct Names {
    seen: FxHashMap<String, Origin>,
}

impl Names {
    fn add(&mut self, name: String, o: Origin) -> Result<(), Diag> {
        if let Some(prev) = self.seen.get(&name) {
            return Err(Diag::new(
                o.span,
                format!(
                    "the header would define `{name}` twice: for {} and for {}",
                    prev.what, o.what
                ),
            )
            .label(o.what)
            .related(prev.span, prev.what.clone())
            .help("C names join device, register and field names with `_` in upper case; rename one of them"));
        }
        self.seen.insert(name, o);
        Ok(())
    }

    /// A device's macros: its instance bound, its registers' offsets and
    /// widths, its fields' macros and helpers.
    fn device(&mut self, d: &crate::ir::Device) -> Result<(), Diag> {
        let dup = d.name.to_ascii_uppercase();
        if !matches!(d.instances, Instances::Single) {
            self.add(
                format!("{dup}_INSTANCES_MAX"),
                Origin {
                    what: format!("device `{}`", d.name),
                    span: d.span,
                    object_macro: true,
                },
            )?;
        }
        for r in &d.regs {
            let rup = format!("{dup}_{}", r.name.to_ascii_uppercase());
            for s in ["OFFSET", "WIDTH"] {
                self.add(
                    format!("{rup}_{s}"),
                    Origin {
                        what: format!("register `{}.{}`", d.name, r.name),
                        span: r.span,
                        object_macro: true,
                    },
                )?;
            }
        }
        for f in &d.fields {
            self.field(d, &dup, f)?;
        }
        Ok(())
    }

    /// Field `f` of device `d` (upper-case name `dup`): its macros and
    /// inline helpers.
    fn field(
        &mut self,
        d: &crate::ir::Device,
        dup: &str,
        f: &crate::ir::Field,
    ) -> Result<(), Diag> {
        let r = &d.regs[f.reg];
        let fup = format!(
            "{dup}_{}_{}",
            r.name.to_ascii_uppercase(),
            f.name.to_ascii_uppercase()
        );
        let what = format!("field `{}.{}.{}`", d.name, r.name, f.name);
        for (s, obj) in [
            ("SHIFT", true),
            ("WIDTH", true),
            ("MASK", true),
            ("PREP", false),
            ("GET", false),
        ] {
            self.add(
                format!("{fup}_{s}"),
                Origin {
                    what: what.clone(),
                    span: f.span,
                    object_macro: obj,
                },
            )?;
        }
        let lower = fup.to_ascii_lowercase();
        for s in ["prep", "get"] {
            self.add(
                format!("{lower}_{s}"),
                Origin {
                    what: what.clone(),
                    span: f.span,
                    object_macro: false,
                },
            )?;
        }
        Ok(())
    }

    /// The threshold macros of `auto` covers (`prefix_up`: the upper-case
    /// `--prefix`).
    fn thresholds(&mut self, prog: &Program, prefix_up: &str) -> Result<(), Diag> {
        for s in &prog.seqs {
            let mut err = Ok(());
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
                    if err.is_ok() && !mine.contains(&threshold.as_str()) {
                        mine.push(threshold);
                        err = self.add(
                            format!("{prefix_up}{threshold}"),
                            Origin {
                                what: format!("the threshold of a `cover` in `{}`", s.name),
                                span: *span,
                                object_macro: true,
                            },
                        );
                    }
                }
            });
            err?;
        }
        Ok(())
    }

    /// The sequences' C function names (`prefix` and the name), none
    /// reserved.
    fn functions(&mut self, prog: &Program, prefix: &str) -> Result<(), Diag> {
        for s in &prog.seqs {
            let symbol = format!("{prefix}{}", s.name);
            if let Some(why) = reserved(&symbol) {
                return Err(Diag::new(
                    s.span,
                    format!("sequence `{symbol}` would be a C function named `{symbol}`, {why}"),
                )
                .label("reserved in C")
                .help("rename the sequence, or give a --prefix"));
            }
            self.add(
                symbol.clone(),
                Origin {
                    what: format!("sequence `{}`", s.name),
                    span: s.span,
                    object_macro: false,
                },
            )?;
        }
        Ok(())
    }

    /// Prototype parameters: a device base (and count) per device used, then
    /// the sequence's own; an object-like macro of the same name would
    /// replace the parameter name.
    fn check_parameters(&self, prog: &Program) -> Result<(), Diag> {
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
                if let Some(o) = self.seen.get(n).filter(|o| o.object_macro) {
                    return Err(Diag::new(
                        s.span,
                        format!(
                            "parameter `{n}` of `{}` is also a macro of the header (for {})",
                            s.name, o.what
                        ),
                    )
                    .label("its prototype would not compile")
                    .related(o.span, o.what.clone())
                    .help("rename the parameter or the device"));
                }
            }
        }
        Ok(())
    }
}
