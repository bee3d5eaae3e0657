//! `.S` text for one target, through askama templates.

use crate::codegen::{Compiled, Options, Style};
use crate::target::mach::MachFunc;
use crate::target::Target;
use askama::Template;

struct FuncView {
    symbol: String,
    body: Vec<String>,
}

#[derive(Template)]
#[template(path = "power.S", escape = "none")]
struct PowerFile<'a> {
    banner: String,
    spdx: Option<&'a str>,
    linux: bool,
    elfv2: bool,
    funcs: Vec<FuncView>,
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
    let linux = opts.style == Style::Linux;
    let mut text = match c.target {
        Target::Power64 | Target::Power64le => PowerFile {
            banner,
            spdx: opts.spdx.as_deref(),
            linux,
            elfv2: c.target == Target::Power64le,
            funcs,
        }
        .render(),
        Target::Aarch64 | Target::X86_64 => Ok(String::new()),
    }
    .unwrap_or_else(|e| format!("/* template error: {e} */\n"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
