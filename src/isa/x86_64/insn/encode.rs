//! Layout, branch relaxation and encoding of a whole sequence.
//!
//! Branch sizing: iced's `BlockEncoder` relaxes branches by starting from the
//! long forms and shrinking (for at most 5 passes), while GNU `as` starts from
//! the short forms and grows them until every displacement fits.  The two can
//! reach different fixed points (e.g. two forward jumps that each fit in rel8
//! only if the other one is short).  To agree with `as` byte for byte we do
//! the GNU-style grow-only relaxation ourselves, pick `rel8`/`rel32` per
//! branch, and let iced encode exactly that with
//! `BlockEncoderOptions::DONT_FIX_BRANCHES`.

use std::collections::HashMap;

use iced_x86::code_asm::{CodeAssembler, CodeLabel};
use iced_x86::{BlockEncoderOptions, Code, Instruction};

use super::iced::iced_instruction;
use super::operands::Ctx;
use super::text::Printer;
use super::{iced_err, Assembled, Cond, EncodeError, Insn, Label};

/// Label layout: which iced instruction index each label points at.
struct Layout {
    /// iced instruction index for every non-label insn (None for labels).
    iced_index: Vec<Option<usize>>,
    /// iced instruction index each label is bound to (`n_real` = end of code).
    label_pos: HashMap<Label, usize>,
    /// Number of real (non-label) instructions.
    n_real: usize,
    /// Labels bound to the end of the code (needs a placeholder instruction).
    trailing_labels: bool,
}

fn layout(insns: &[Insn]) -> Result<Layout, EncodeError> {
    let mut iced_index = Vec::with_capacity(insns.len());
    let mut label_pos = HashMap::new();
    let mut n = 0usize;
    for insn in insns {
        if let Insn::Label(l) = insn {
            if label_pos.insert(*l, n).is_some() {
                return Err(EncodeError::DuplicateLabel(*l));
            }
            iced_index.push(None);
        } else {
            iced_index.push(Some(n));
            n += 1;
        }
    }
    for insn in insns {
        if let Some(t) = insn.branch_target().filter(|t| !label_pos.contains_key(t)) {
            return Err(EncodeError::UndefinedLabel(t));
        }
    }
    let trailing_labels = label_pos.values().any(|&p| p == n);
    Ok(Layout {
        iced_index,
        label_pos,
        n_real: n,
        trailing_labels,
    })
}

fn emit_branch(
    a: &mut CodeAssembler,
    insn: &Insn,
    label: CodeLabel,
    long: bool,
    cx: &Ctx,
) -> Result<(), EncodeError> {
    a.set_prefer_short_branch(!long);
    let r = match insn {
        Insn::Jmp { .. } => a.jmp(label),
        Insn::Jcc { cond, .. } => match cond {
            Cond::E => a.je(label),
            Cond::Ne => a.jne(label),
            Cond::B => a.jb(label),
            Cond::Ae => a.jae(label),
            Cond::A => a.ja(label),
            Cond::Be => a.jbe(label),
            Cond::L => a.jl(label),
            Cond::Ge => a.jge(label),
            Cond::G => a.jg(label),
            Cond::Le => a.jle(label),
            Cond::S => a.js(label),
            Cond::Ns => a.jns(label),
        },
        _ => return Err(cx.bad("internal: not a branch")),
    };
    r.map_err(|e| cx.ierr(e))
}

/// Feed everything into a fresh CodeAssembler; `long[i]` selects rel32 for
/// branch `insns[i]`.
fn build(insns: &[Insn], lay: &Layout, long: &[bool]) -> Result<CodeAssembler, EncodeError> {
    let mut a = CodeAssembler::new(64).map_err(|e| iced_err(None, e))?;
    // One iced label per iced instruction index that has at least one label.
    let mut labels: HashMap<usize, CodeLabel> = HashMap::new();
    for &pos in lay.label_pos.values() {
        labels.entry(pos).or_insert_with(|| a.create_label());
    }
    fn bind(
        a: &mut CodeAssembler,
        labels: &mut HashMap<usize, CodeLabel>,
        pos: usize,
        i: Option<usize>,
    ) -> Result<(), EncodeError> {
        if let Some(l) = labels.get_mut(&pos) {
            a.set_label(l).map_err(|e| iced_err(i, e))?;
        }
        Ok(())
    }
    for (i, insn) in insns.iter().enumerate() {
        let Some(pos) = lay.iced_index[i] else {
            continue;
        };
        bind(&mut a, &mut labels, pos, Some(i))?;
        let cx = Ctx { index: i };
        if let Some(t) = insn.branch_target() {
            let tpos = lay
                .label_pos
                .get(&t)
                .ok_or(EncodeError::UndefinedLabel(t))?;
            let target = *labels.get(tpos).ok_or(EncodeError::UndefinedLabel(t))?;
            emit_branch(&mut a, insn, target, long[i], &cx)?;
        } else {
            let ins = iced_instruction(&cx, insn)?;
            a.add_instruction(ins).map_err(|e| cx.ierr(e))?;
        }
    }
    if lay.trailing_labels {
        // Placeholder so the end-of-code label has an instruction to bind
        // to; its byte is cut off again after encoding.
        bind(&mut a, &mut labels, lay.n_real, None)?;
        a.add_instruction(Instruction::with(Code::Nopd))
            .map_err(|e| iced_err(None, e))?;
    }
    Ok(a)
}

struct Encoded {
    bytes: Vec<u8>,
    /// Offset of every iced instruction, plus the end offset appended.
    offsets: Vec<u32>,
    instructions: Vec<Instruction>,
}

fn encode(insns: &[Insn], lay: &Layout, long: &[bool]) -> Result<Encoded, EncodeError> {
    let mut a = build(insns, lay, long)?;
    let res = a
        .assemble_options(
            0,
            BlockEncoderOptions::DONT_FIX_BRANCHES
                | BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )
        .map_err(|e| iced_err(None, e))?;
    let mut bytes = res.inner.code_buffer;
    let mut offsets = res.inner.new_instruction_offsets;
    if offsets.len() != a.instructions().len() || offsets.contains(&u32::MAX) {
        return Err(EncodeError::Iced(
            "internal: block encoder returned no instruction offsets".into(),
        ));
    }
    let end = if lay.trailing_labels {
        let nop_off = offsets[lay.n_real];
        bytes.truncate(nop_off as usize);
        offsets.truncate(lay.n_real);
        nop_off
    } else {
        u32::try_from(bytes.len()).map_err(|_| EncodeError::Iced("code too large".into()))?
    };
    offsets.push(end);
    Ok(Encoded {
        bytes,
        offsets,
        instructions: a.take_instructions(),
    })
}

/// GNU-as style branch relaxation: start every branch short and grow the
/// ones whose rel8 displacement does not fit until nothing changes.
fn relax(insns: &[Insn], lay: &Layout, lens: &[u32]) -> Vec<bool> {
    let mut long = vec![false; insns.len()];
    loop {
        // Offsets of iced instructions under the current choice.
        let mut off = Vec::with_capacity(lay.n_real + 1);
        let mut pos = 0i64;
        for (i, insn) in insns.iter().enumerate() {
            let Some(k) = lay.iced_index[i] else {
                continue;
            };
            off.push(pos);
            let len = if insn.branch_target().is_some() && !long[i] {
                2
            } else {
                i64::from(lens[k])
            };
            pos += len;
        }
        off.push(pos);
        let mut changed = false;
        for (i, insn) in insns.iter().enumerate() {
            let (Some(t), Some(k)) = (insn.branch_target(), lay.iced_index[i]) else {
                continue;
            };
            if long[i] {
                continue;
            }
            let Some(&tpos) = lay.label_pos.get(&t) else {
                continue;
            };
            let disp = off[tpos] - (off[k] + 2);
            if !(-128..=127).contains(&disp) {
                long[i] = true;
                changed = true;
            }
        }
        if !changed {
            return long;
        }
    }
}

/// Encode `insns` and print them as GNU-as AT&T text.  Branch targets are
/// printed as `label_name(l)`; the caller emits `label_name(l):` lines for
/// `Insn::Label` entries (whose `text` is empty).
pub fn assemble(
    insns: &[Insn],
    label_name: &dyn Fn(Label) -> String,
) -> Result<Assembled, EncodeError> {
    let lay = layout(insns)?;

    // Pass 1: every branch in its rel32 form, to measure instruction lengths.
    let all_long = vec![true; insns.len()];
    let first = encode(insns, &lay, &all_long)?;
    let lens: Vec<u32> = first
        .offsets
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();

    // Pass 2: GNU-as relaxation decides rel8/rel32, iced encodes exactly that.
    let long = relax(insns, &lay, &lens);
    let enc = encode(insns, &lay, &long)?;

    // Text from the very instructions that were encoded.
    let mut printer = Printer::new();
    let mut offsets = Vec::with_capacity(insns.len());
    let mut text = Vec::with_capacity(insns.len());
    for (i, insn) in insns.iter().enumerate() {
        match lay.iced_index[i] {
            None => {
                let pos = match insn {
                    Insn::Label(l) => lay.label_pos.get(l).copied().unwrap_or(lay.n_real),
                    _ => lay.n_real,
                };
                offsets.push(enc.offsets.get(pos).copied().unwrap_or(0));
                text.push(String::new());
            }
            Some(k) => {
                offsets.push(enc.offsets.get(k).copied().unwrap_or(0));
                let Some(ins) = enc.instructions.get(k) else {
                    return Err(EncodeError::Iced("internal: instruction index".into()));
                };
                text.push(printer.text(ins, insn.branch_target().map(label_name)));
            }
        }
    }
    Ok(Assembled {
        bytes: enc.bytes,
        offsets,
        text,
    })
}
