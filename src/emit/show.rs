//! `shootdown show --stage ...`.

use crate::codegen::{self, Compiled, Options};
use crate::ir::Program;
use crate::isa::Target;
use crate::spec::diag::Diag;

/// Also `show --stage`'s values, by their lower-case names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Stage {
    Ast,
    Ir,
    Opt,
    Lir,
    Asm,
    Bytes,
}

pub fn render(
    name: &str,
    src: &str,
    stage: Stage,
    target: Target,
    opts: &Options,
    seq: Option<&str>,
) -> Result<String, Diag> {
    if stage == Stage::Ast {
        let ast = codegen::parse(src)?;
        return Ok(serde_json::to_string_pretty(&ast).unwrap_or_default() + "\n");
    }
    let mut prog: Program = codegen::load(name, src)?;
    // `--seq`: that sequence alone (the caller checked that it exists).
    if let Some(s) = seq {
        prog.seqs.retain(|x| x.name == s);
    }
    if stage == Stage::Ir {
        return Ok(crate::ir::print::program(&prog));
    }
    let c: Compiled = codegen::compile(&prog, target, opts)?;
    Ok(match stage {
        Stage::Opt => {
            let mut out = format!(
                "; passes: {}\n",
                opts.passes
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            out.push_str(&crate::ir::print::program(&c.opt));
            out
        }
        Stage::Lir => lir_text(&c),
        Stage::Asm => crate::emit::asm::render(&c, opts),
        Stage::Bytes => crate::emit::listing::render(&c),
        Stage::Ast | Stage::Ir => unreachable!("handled above"),
    })
}

fn lir_text(c: &Compiled) -> String {
    let mut out = String::new();
    for f in &c.lir {
        out.push_str(&format!("func {} args {:?}\n", f.name, f.args));
        for (i, o) in &f.insts {
            out.push_str(&format!("  {i:?}    ; {}\n", o.note));
        }
    }
    out
}
