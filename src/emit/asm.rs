//! `.S` text for one target, through askama templates.

use crate::codegen::{Compiled, Options, Style};
use crate::isa::file::{FileView, FuncView};
use crate::isa::mach::MachFunc;
use crate::isa::Target;

/// Function body lines, each preceded by a newline: a comment whenever
/// the source statement changes, labels flush left, instructions
/// tab-indented. `*/` in a note is broken up so it cannot end the comment.
fn body(f: &MachFunc) -> String {
    // The same pieces twice: counted, then copied into a string of
    // exactly their length (grown by doubling, a large spec's bodies were
    // copied several times and held ~40% spare capacity, all of it
    // fresh memory).
    let mut len = 0;
    pieces(f, |s| len += s.len());
    let mut out = String::with_capacity(len);
    pieces(f, |s| out.push_str(s));
    out
}

/// [`body`]'s text, piece by piece.
fn pieces(f: &MachFunc, mut put: impl FnMut(&str)) {
    let mut last: Option<(Option<usize>, &str)> = None;
    let mut digits = itoa::Buffer::new();
    for l in &f.lines {
        if let Some(label) = &l.label {
            put("\n");
            put(label);
            put(":");
            continue;
        }
        let key = (l.origin.line, &*l.origin.note);
        if last != Some(key) {
            // One comment per statement; the note copied only when it
            // would close the comment early.
            put("\n\t/* ");
            if let Some(n) = l.origin.line {
                put(digits.format(n));
                put(": ");
            }
            if l.origin.note.contains("*/") {
                put(&l.origin.note.replace("*/", "* /"));
            } else {
                put(&l.origin.note);
            }
            put(" */");
            last = Some(key);
        }
        put("\n\t");
        put(&l.text);
    }
}

pub fn render(c: &Compiled, opts: &Options) -> String {
    let funcs: Vec<(FuncView, Option<&'static str>)> = crate::par::map(&c.funcs, |f| {
        Ok::<_, std::convert::Infallible>((view(f), f.needs_arch))
    })
    .unwrap_or_else(|e| match e {});
    render_views(c.target, &c.opt.source_name, funcs, opts)
}

/// A function as the file template needs it: symbol and body text.
pub fn view(f: &MachFunc) -> FuncView {
    FuncView {
        symbol: f.symbol.clone(),
        body: body(f),
        includes: includes(f),
    }
}

/// Headers that define the patching macros and capability numbers of the
/// feature tests in `f` (see `crate::features`).
fn includes(f: &MachFunc) -> Vec<&'static str> {
    let mut out = Vec::new();
    for l in &f.lines {
        let t = l.text.as_str();
        if t.starts_with("alternative_if ") {
            out.push("asm/alternative.h");
        } else if t.starts_with("BEGIN_MMU_FTR_SECTION") {
            out.extend(["asm/feature-fixups.h", "asm/mmu.h"]);
        } else if t.starts_with("BEGIN_FTR_SECTION") {
            out.extend(["asm/feature-fixups.h", "asm/cputable.h"]);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The `.S` file around functions already rendered by [`view`], with the
/// `.arch`/`.machine` level each needs.
pub fn render_views(
    target: Target,
    source_name: &str,
    funcs: Vec<(FuncView, Option<&'static str>)>,
    opts: &Options,
) -> String {
    let banner = crate::emit::banner(source_name, &format!(" for {target}"));
    let arch = funcs.iter().filter_map(|(_, a)| *a).max();
    let mut includes: Vec<&'static str> = funcs
        .iter()
        .flat_map(|(f, _)| f.includes.iter().copied())
        .collect();
    includes.sort_unstable();
    includes.dedup();
    let view = FileView {
        includes,
        banner,
        spdx: opts.spdx.as_deref(),
        linux: opts.style == Style::Linux,
        funcs: funcs.into_iter().map(|(f, _)| f).collect(),
        arch,
    };
    let mut text = target
        .backend()
        .render_file(&view)
        .unwrap_or_else(|e| format!("/* template error: {e} */\n"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
