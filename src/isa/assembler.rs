//! The one assembler of the fixed-width targets (aarch64, POWER,
//! riscv64): the layout of a function (byte offsets, every label defined
//! once and every branch's label defined), each branch checked against its
//! reach before anything is encoded (so an error names the instruction),
//! far branches relaxed into label-use veneers, and the [`Assembled`]
//! result the driver ([`super::codegen`]) reads. A target says
//! only what its instructions are ([`Encode`]) and how one becomes bytes
//! once every label is known. x86-64's variable-length code stays with
//! iced (`x86_64::insn::assemble`, with its own error type); the driver
//! reads its bytes and offsets as an [`Assembled`] too.

use rustc_hash::FxHashMap;

/// A local label: a number the lowering allocates.
pub type Label = u32;

/// A function's machine code, and the byte offset of each input
/// instruction (for a label: the offset of the next instruction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
}

/// Why an instruction list could not be assembled. `index` is the
/// position in the list given to the assembler (0 for an instruction
/// encoded alone).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("undefined label {0}")]
    UndefinedLabel(Label),
    #[error("label {0} defined more than once")]
    DuplicateLabel(Label),
    #[error("instruction {index}: branch target out of range")]
    BranchOutOfRange { index: usize },
    #[error("instruction {index}: bad operand: {what}")]
    BadOperand { index: usize, what: &'static str },
}

/// The displacements (target - branch, bytes, inclusive) a branch can
/// encode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    pub min: i64,
    pub max: i64,
}

impl Reach {
    /// A signed field of `bits` bits counting `unit`-byte steps.
    pub const fn signed(bits: u32, unit: i64) -> Reach {
        Reach {
            min: -(1 << (bits - 1)) * unit,
            max: ((1 << (bits - 1)) - 1) * unit,
        }
    }

    pub fn contains(self, disp: i64) -> bool {
        (self.min..=self.max).contains(&disp)
    }
}

/// What the assembler needs to know of a fixed-width (4-byte)
/// instruction.
pub trait Encode: Sized {
    /// The label it defines (a label takes no bytes).
    fn defines(&self) -> Option<Label>;
    /// The label it branches to, and how far it reaches.
    fn branch(&self) -> Option<(Label, Reach)>;
    /// For a branch whose target is out of reach: an equivalent sequence
    /// that reaches further, ending with the definition of `skip` (the
    /// inverted branch over an unconditional jump). `None`: the branch
    /// has no longer form, and out of reach is an error.
    fn veneer(&self, _skip: Label) -> Option<Vec<Self>> {
        None
    }
}

/// [`Encode::defines`] for an instruction enum whose labels are its
/// `Label(Label)` pseudo-instruction, as every fixed-width target's are.
macro_rules! defines_label_variant {
    () => {
        fn defines(&self) -> Option<$crate::isa::assembler::Label> {
            match *self {
                Self::Label(l) => Some(l),
                _ => None,
            }
        }
    };
}
pub(crate) use defines_label_variant;

/// Byte offsets of a function's instructions and labels.
pub struct Layout {
    pub offsets: Vec<u32>,
    labels: FxHashMap<Label, u32>,
}

impl Layout {
    /// Every instruction 4 bytes, labels none; a label defined twice is an
    /// error.
    pub fn of<I: Encode>(insns: &[I]) -> Result<Layout, EncodeError> {
        let mut offsets = Vec::with_capacity(insns.len());
        let mut labels = FxHashMap::default();
        let mut pc: u32 = 0;
        for (index, insn) in insns.iter().enumerate() {
            offsets.push(pc);
            match insn.defines() {
                Some(l) => {
                    if labels.insert(l, pc).is_some() {
                        return Err(EncodeError::DuplicateLabel(l));
                    }
                }
                None => {
                    pc = pc.checked_add(4).ok_or(EncodeError::BadOperand {
                        index,
                        what: "program exceeds 4 GiB",
                    })?;
                }
            }
        }
        Ok(Layout { offsets, labels })
    }

    /// Where label `l` points.
    pub fn label(&self, l: Label) -> Option<u32> {
        self.labels.get(&l).copied()
    }

    /// Instruction `index`'s displacement to `target`.
    pub fn disp(&self, index: usize, target: Label) -> Result<i64, EncodeError> {
        let to = self
            .label(target)
            .ok_or(EncodeError::UndefinedLabel(target))?;
        Ok(i64::from(to) - i64::from(self.offsets[index]))
    }

    /// The first branch whose target is undefined (an error) or out of
    /// its reach (`Ok(Some(index))`).
    fn far<I: Encode>(&self, insns: &[I]) -> Result<Option<usize>, EncodeError> {
        for (index, insn) in insns.iter().enumerate() {
            if let Some((target, reach)) = insn.branch() {
                if !reach.contains(self.disp(index, target)?) {
                    return Ok(Some(index));
                }
            }
        }
        Ok(None)
    }
}

/// Lay the function out, check every branch, then let the target make
/// the bytes with every label known (`encode` cannot meet an undefined or
/// far label).
pub fn assemble<I: Encode>(
    insns: &[I],
    encode: impl FnOnce(&Layout) -> Result<Vec<u8>, EncodeError>,
) -> Result<Assembled, EncodeError> {
    let layout = Layout::of(insns)?;
    if let Some(index) = layout.far(insns)? {
        return Err(EncodeError::BranchOutOfRange { index });
    }
    let bytes = encode(&layout)?;
    Ok(Assembled {
        bytes,
        offsets: layout.offsets,
    })
}

/// The bytes of a function that encodes word by word: `word(index, insn,
/// pc)` for each instruction (labels skipped), in the target's byte order.
pub fn words<I: Encode>(
    insns: &[I],
    layout: &Layout,
    big_endian: bool,
    word: impl Fn(usize, &I, u32) -> Result<u32, EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    let mut bytes = Vec::with_capacity(4 * insns.len());
    for (index, insn) in insns.iter().enumerate() {
        if insn.defines().is_some() {
            continue;
        }
        let w = word(index, insn, layout.offsets[index])?;
        bytes.extend_from_slice(&if big_endian {
            w.to_be_bytes()
        } else {
            w.to_le_bytes()
        });
    }
    Ok(bytes)
}

/// [`assemble`] for a target whose words need, of the layout, only each
/// branch's displacement: `word(index, insn, disp)`, `disp` being target
/// - pc for a branch (already in reach) and 0 for anything else.
pub fn assemble_by_disp<I: Encode>(
    insns: &[I],
    big_endian: bool,
    word: impl Fn(usize, &I, i64) -> Result<u32, EncodeError>,
) -> Result<Assembled, EncodeError> {
    assemble(insns, |layout| {
        words(insns, layout, big_endian, |index, insn, _| {
            let disp = match insn.branch() {
                Some((target, _)) => layout.disp(index, target)?,
                None => 0,
            };
            word(index, insn, disp)
        })
    })
}

/// Replace each branch that does not reach its target by its veneer
/// (new labels numbered from `next_label`), until every branch reaches:
/// a veneer is longer than its branch and can push another one out of
/// range. Each instruction of a veneer keeps the origin of the branch it
/// replaces. The veneer is in the `.S` too, so GNU as has nothing left
/// to relax.
pub fn relax<I: Encode + Clone, O: Clone>(
    mut insns: Vec<(I, O)>,
    mut next_label: Label,
) -> Result<Vec<(I, O)>, EncodeError> {
    loop {
        let plain: Vec<I> = insns.iter().map(|(i, _)| i.clone()).collect();
        let layout = Layout::of(&plain)?;
        let mut far = Vec::new();
        for (index, insn) in plain.iter().enumerate() {
            if let Some((target, reach)) = insn.branch() {
                // An undefined label is the encoder's error to report.
                let out = layout.label(target).is_some_and(|to| {
                    !reach.contains(i64::from(to) - i64::from(layout.offsets[index]))
                });
                if out {
                    far.push(index);
                }
            }
        }
        let mut veneers = Vec::with_capacity(far.len());
        for &k in &far {
            match plain[k].veneer(next_label) {
                Some(v) => {
                    veneers.push(v);
                    next_label += 1;
                }
                // No longer form: assembling reports it.
                None => return Ok(insns),
            }
        }
        if veneers.is_empty() {
            return Ok(insns);
        }
        let mut veneers = veneers.into_iter();
        let mut out = Vec::with_capacity(insns.len() + 2 * far.len());
        for (k, (insn, o)) in insns.into_iter().enumerate() {
            if far.binary_search(&k).is_ok() {
                let v = veneers.next().expect("one veneer per far branch");
                out.extend(v.into_iter().map(|i| (i, o.clone())));
            } else {
                out.push((insn, o));
            }
        }
        insns = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy ISA: `B(target)` reaches ±8 bytes, `J(target)` anywhere.
    #[derive(Clone, Debug, PartialEq)]
    enum T {
        Label(Label),
        Nop,
        B(Label),
        NotB(Label),
        J(Label),
    }

    impl Encode for T {
        defines_label_variant!();

        fn branch(&self) -> Option<(Label, Reach)> {
            match self {
                T::B(l) | T::NotB(l) => Some((*l, Reach { min: -8, max: 8 })),
                T::J(l) => Some((*l, Reach::signed(20, 2))),
                _ => None,
            }
        }
        fn veneer(&self, skip: Label) -> Option<Vec<T>> {
            match self {
                T::B(l) => Some(vec![T::NotB(skip), T::J(*l), T::Label(skip)]),
                _ => None,
            }
        }
    }

    #[test]
    fn layout_errors_name_the_label_or_instruction() {
        let enc = |_: &Layout| Ok(Vec::new());
        assert_eq!(
            assemble(&[T::Label(1), T::Label(1)], enc),
            Err(EncodeError::DuplicateLabel(1))
        );
        assert_eq!(
            assemble(&[T::B(7)], enc),
            Err(EncodeError::UndefinedLabel(7))
        );
        let far = [T::Nop, T::B(1), T::Nop, T::Nop, T::Label(1)];
        assert_eq!(
            assemble(&far, enc),
            Err(EncodeError::BranchOutOfRange { index: 1 })
        );
        let near = [T::Nop, T::B(1), T::Nop, T::Label(1)];
        let a = assemble(&near, enc).unwrap();
        assert_eq!(a.offsets, vec![0, 4, 8, 12]);
    }

    #[test]
    fn far_branches_become_veneers_until_all_reach() {
        let far: Vec<(T, u8)> = [T::B(1), T::Nop, T::Nop, T::Nop, T::Label(1)]
            .into_iter()
            .zip(0..)
            .collect();
        let out = relax(far, 100).unwrap();
        let insns: Vec<T> = out.iter().map(|(i, _)| i.clone()).collect();
        assert_eq!(
            insns,
            vec![
                T::NotB(100),
                T::J(1),
                T::Label(100),
                T::Nop,
                T::Nop,
                T::Nop,
                T::Label(1)
            ]
        );
        // The veneer keeps the branch's origin.
        assert_eq!(out[..3].iter().map(|x| x.1).collect::<Vec<_>>(), [0, 0, 0]);
        assert!(assemble(&insns, |_| Ok(Vec::new())).is_ok());
    }

    #[test]
    fn words_follow_the_byte_order_and_skip_labels() {
        let insns = [T::Nop, T::Label(0), T::Nop];
        let l = Layout::of(&insns).unwrap();
        let be = words(&insns, &l, true, |i, _, pc| Ok(0x0100_0000 * i as u32 + pc)).unwrap();
        assert_eq!(be, [0, 0, 0, 0, 2, 0, 0, 4]);
        let le = words(&insns, &l, false, |_, _, pc| Ok(pc)).unwrap();
        assert_eq!(le, [0, 0, 0, 0, 4, 0, 0, 0]);
    }
}
