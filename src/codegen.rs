//! The pipeline, top to bottom: spec text -> AST -> checked IR -> passes
//! -> LIR -> register allocation -> target code.

use crate::ir::{self, Program};
use crate::isa::invalidation::Invalidations;
use crate::isa::mach::MachFunc;
pub use crate::isa::style::Style;
use crate::isa::Target;
use crate::lir::builder::Hoist;
use crate::lir::{self, regalloc};
use crate::passes::{self, Pass};
use crate::spec::diag::Diag;
use crate::spec::{ast, parser};

#[derive(Clone, Debug)]
pub struct Options {
    pub passes: Vec<Pass>,
    pub style: Style,
    /// Prepended to every generated symbol (kernel names collide easily).
    pub prefix: String,
    pub spdx: Option<String>,
    /// Cover mode override and pinned thresholds.
    pub cover: crate::passes::cover::CoverConfig,
    /// `--feature NAME=on|off` and `--feature-suffix`.
    pub features: crate::features::Selection,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            passes: passes::parse_list("all").unwrap_or_default(),
            style: Style::Plain,
            prefix: String::new(),
            spdx: None,
            cover: Default::default(),
            features: Default::default(),
        }
    }
}

pub fn parse(src: &str) -> Result<ast::Spec, Diag> {
    parser::parse(src)
}

/// Parse and check a spec.
pub fn load(name: &str, src: &str) -> Result<Program, Diag> {
    // Lone `\r` line breaks become `\n` (same offsets), so the line numbers
    // in listings and `.S` comments agree with the diagnostics'.
    let src = crate::spec::diag::unix_breaks(src);
    let spec = parser::parse(&src)?;
    let prog = ir::check::check(name, &src, &spec);
    // A large spec's syntax tree takes tens of milliseconds to free: on
    // another thread, while this one goes on.
    if src.len() > 1 << 20 {
        rayon::spawn(move || drop(spec));
    }
    prog
}

#[derive(Clone)]
pub struct Compiled {
    pub target: Target,
    /// The IR after the passes.
    pub opt: Program,
    pub lir: Vec<lir::Func>,
    pub funcs: Vec<MachFunc>,
}

/// The program as `opts` selects its features (see [`crate::features`]).
pub fn resolve<'p>(prog: &'p Program, opts: &Options) -> std::borrow::Cow<'p, Program> {
    crate::features::resolve(prog, &opts.features, opts.style)
}

/// `machine e6500` is a POWER family: another target cannot run its code
/// (a `--target` past the spec's `target` line, which check rejects).
pub(crate) fn check_machine(prog: &Program, target: Target) -> Result<(), Diag> {
    match prog.machine_span {
        Some(span) if !target.backend().has_machines() => Err(Diag::new(
            span,
            format!(
                "`machine {}` is a POWER CPU: no code for {target}",
                prog.machine.name()
            ),
        )
        .label("POWER only")),
        _ => Ok(()),
    }
}

pub fn compile(prog: &Program, target: Target, opts: &Options) -> Result<Compiled, Diag> {
    check_machine(prog, target)?;
    let prog = &*resolve(prog, opts);
    let prog = &*crate::features::for_target(prog, target);
    crate::ir::c_names::check(prog, &opts.prefix, opts.style == Style::Linux)?;
    let opt = passes::run(prog, target, &opts.passes, &opts.cover)?;
    let built = crate::par::map(&opt.seqs, |seq| compile_seq(&opt, seq, target, opts))?;
    let (lirs, funcs) = built.into_iter().unzip();
    Ok(Compiled {
        target,
        opt,
        lir: lirs,
        funcs,
    })
}

/// One sequence from optimized IR to machine code.
pub(crate) fn compile_seq(
    opt: &Program,
    seq: &ir::Seq,
    target: Target,
    opts: &Options,
) -> Result<(lir::Func, MachFunc), Diag> {
    let invs = resolve_invalidations(seq, target, opt.machine)?;
    let regs = target.regfile();
    // Each fallback keeps fewer values live; Entry may be predicted to
    // overflow and not built at all (`Ok(None)`). What still does not fit
    // spills (the least-hoisting build, which keeps fewest values live).
    let mut built = None;
    for hoist in [Hoist::Entry, Hoist::PerStatement, Hoist::AtUse] {
        if let Some(f) = lir::builder::build(opt, seq, &target, &invs, hoist)? {
            match regalloc::allocate(&f, regs) {
                Ok(alloc) => {
                    built = Some(Ok((f, alloc)));
                    break;
                }
                Err(e) => built = Some(Err((f, e))),
            }
        }
    }
    let built = built.ok_or_else(|| {
        Diag::new(
            seq.span,
            format!(
                "internal error: no register placement was built for `{}`",
                seq.name
            ),
        )
    })?;
    let (f, alloc) = match built {
        Ok(fits) => fits,
        Err((f, _)) => lir::spill::allocate(f, regs).map_err(|_| {
            Diag::new(
                seq.span,
                format!(
                    "`{}` needs more registers than {target} has free, even with spilling",
                    seq.name
                ),
            )
            .help("split the sequence")
        })?,
    };
    alloc.check(&f).map_err(|e| {
        Diag::new(
            seq.span,
            format!(
                "internal error: register allocation of `{}` is incomplete: {e}",
                seq.name
            ),
        )
    })?;
    let symbol = format!("{}{}", opts.prefix, seq.name);
    let m = target
        .codegen(&f, &alloc, &symbol, opts.style, opt.machine)
        .map_err(|e| {
            Diag::new(
                seq.span,
                format!("cannot generate `{}` for {target}: {e}", seq.name),
            )
        })?;
    Ok((f, m))
}

/// Every CPU invalidation instruction must exist on `target` with the
/// operands given; reported at the statement (lowering would only know
/// the sequence). What passes is typed for the target's lowering.
fn resolve_invalidations(
    seq: &ir::Seq,
    target: Target,
    machine: crate::isa::Machine,
) -> Result<Invalidations, Diag> {
    let mut checked = Invalidations::default();
    let mut err = None;
    ir::walk(&seq.body, &mut |s| {
        if let ir::Stmt::Invalidate {
            name,
            operands,
            span,
            ..
        } = s
        {
            if err.is_none() {
                match target.invalidation(machine, name, operands.len()) {
                    Ok(inv) => checked.insert(inv),
                    Err(e) => {
                        err = Some(
                            Diag::new(*span, e.to_string())
                                .label("not an instruction of this target"),
                        )
                    }
                }
            }
        }
    });
    err.map_or(Ok(checked), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sequences of `pairs` NPU launches at distinct addresses (the shape
    /// of `scripts/synth-spec.py`): every address is a value the Entry
    /// prologue would hold across the whole sequence.
    fn launches(pairs: usize) -> String {
        let mut s = String::from(
            "device npu {\n    instances dynamic max 6\n    reg launch 0x00 u64 be\n    \
             reg ava 0x08 u64 be\n    field launch.pid msb0 24..38\n    \
             require ava before launch\n}\nseq s(pid: u64, va: u64) {\n",
        );
        for i in 0..pairs {
            s.push_str(&format!(
                "    each npu {{\n        npu.ava = va + {}\n        npu.launch = {{ pid: pid + {i} }}\n    }}\n",
                i * 4096
            ));
        }
        s.push_str("}\n");
        s
    }

    /// The Entry overflow prediction only skips builds whose allocation
    /// fails: over every example and target, and over sequences on both
    /// sides of the limit, a predicted overflow built in full must fail
    /// to allocate, and an unpredicted one is the same build.
    #[test]
    fn entry_overflow_prediction_names_only_real_failures() {
        let mut specs = crate::spec::examples();
        for pairs in [4, 8, 12, 14, 16, 20, 30, 50] {
            specs.push((format!("launches {pairs}"), launches(pairs)));
        }
        let (mut predicted, mut fits_unpredicted) = (0, 0);
        for (name, src) in &specs {
            let Ok(prog) = load(name, src) else { continue };
            for target in Target::ALL {
                if check_machine(&prog, target).is_err() {
                    continue;
                }
                let opts = Options::default();
                let prog = &*resolve(&prog, &opts);
                let prog = &*crate::features::for_target(prog, target);
                let Ok(opt) = passes::run(prog, target, &opts.passes, &opts.cover) else {
                    continue;
                };
                for seq in &opt.seqs {
                    let Ok(invs) = resolve_invalidations(seq, target, opt.machine) else {
                        continue;
                    };
                    let build = |predict| {
                        lir::builder::build_checked(
                            &opt,
                            seq,
                            &target,
                            &invs,
                            Hoist::Entry,
                            predict,
                        )
                        .unwrap()
                    };
                    let full = build(false).expect("an unpredicted build always returns a Func");
                    let fits = regalloc::allocate(&full, target.regfile()).is_ok();
                    match build(true) {
                        None => {
                            predicted += 1;
                            assert!(
                                !fits,
                                "{name} {} on {}: predicted to overflow, but allocates",
                                seq.name,
                                target.name()
                            );
                        }
                        Some(f) => {
                            fits_unpredicted += usize::from(fits);
                            assert_eq!(format!("{f:?}"), format!("{full:?}"));
                        }
                    }
                }
            }
        }
        // Both sides were exercised: the test can fail either way.
        assert!(predicted > 0, "no sequence was predicted to overflow");
        assert!(fits_unpredicted > 0);
    }
}
