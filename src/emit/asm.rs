//! `.S` text for one target, through askama templates.

use crate::codegen::{Compiled, Options, Style};
use crate::target::mach::MachFunc;
use crate::target::{aarch64, power, x86_64, Target};

/// One function as the file templates see it.
pub struct FuncView {
    pub symbol: String,
    pub body: Vec<String>,
}

/// What every target's file template gets.
pub struct FileView<'a> {
    pub banner: String,
    pub spdx: Option<&'a str>,
    pub linux: bool,
    pub funcs: Vec<FuncView>,
    /// `.arch`/`.machine` level the functions need, if any.
    pub arch: Option<&'static str>,
}

/// Comment text safe inside `/* */`.
fn comment(s: &str) -> String {
    s.replace("*/", "* /")
}

/// Function body lines: a comment whenever the source statement changes,
/// labels flush left, instructions tab-indented.
fn body(f: &MachFunc) -> Vec<String> {
    let mut out = Vec::new();
    let mut last = None;
    for l in &f.lines {
        if let Some(label) = &l.label {
            out.push(format!("{label}:"));
            continue;
        }
        let key = (l.origin.line, l.origin.note.clone());
        if last.as_ref() != Some(&key) {
            let note = comment(&l.origin.note);
            out.push(match l.origin.line {
                Some(n) => format!("\t/* {n}: {note} */"),
                None => format!("\t/* {note} */"),
            });
            last = Some(key);
        }
        out.push(format!("\t{}", l.text));
    }
    out
}

pub fn render(c: &Compiled, opts: &Options) -> String {
    let banner = crate::emit::banner(&c.opt.source_name, &format!(" for {}", c.target));
    let funcs: Vec<FuncView> = c
        .funcs
        .iter()
        .map(|f| FuncView {
            symbol: f.symbol.clone(),
            body: body(f),
        })
        .collect();
    let arch = c.funcs.iter().filter_map(|f| f.needs_arch).max();
    let view = FileView {
        banner,
        spdx: opts.spdx.as_deref(),
        linux: opts.style == Style::Linux,
        funcs,
        arch,
    };
    let mut text = match c.target {
        Target::Power64 | Target::Power64le => power::emit::render_file(c.target, &view),
        Target::Aarch64 => aarch64::emit::render_file(&view),
        Target::X86_64 => x86_64::emit::render_file(&view),
    }
    .unwrap_or_else(|e| format!("/* template error: {e} */\n"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
