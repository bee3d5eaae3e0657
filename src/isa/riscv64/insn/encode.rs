//! RV64 machine code (unprivileged spec, 2.2-2.6 base formats and chapter
//! "RV32/64G Instruction Set Listings"; privileged spec, "Supervisor
//! Instructions"; Svinval chapter for its three instructions).

use super::{AluOp, AmoWidth, BrCond, ImmOp, Insn, Label, ShiftOp, Width};

use crate::isa::assembler::{self, Encode, Reach};
pub use crate::isa::assembler::{Assembled, EncodeError};

const OP: u32 = 0x33;
const OP_IMM: u32 = 0x13;
const OP_IMM_32: u32 = 0x1b;
const LUI: u32 = 0x37;
const LOAD: u32 = 0x03;
const STORE: u32 = 0x23;
const BRANCH: u32 = 0x63;
const JAL: u32 = 0x6f;
const MISC_MEM: u32 = 0x0f;
const SYSTEM: u32 = 0x73;
const AMO: u32 = 0x2f;

fn r_type(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}

fn i_type(imm: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    (imm & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}

/// B-type: a signed, even offset of 13 bits.
const BRANCH_REACH: Reach = Reach::signed(12, 2);
/// J-type: a signed, even offset of 21 bits.
const JAL_REACH: Reach = Reach::signed(20, 2);

/// Can a conditional branch encode offset `off`?
pub fn branch_fits(off: i64) -> bool {
    BRANCH_REACH.contains(off) && off % 2 == 0
}

/// One instruction; `off` is the branch offset (target - pc) for
/// branches and jumps, already checked against its reach. `None` for a label.
pub fn encode(insn: &Insn, off: i64) -> Option<u32> {
    let o = off as u32;
    Some(match insn {
        Insn::Label(_) => return None,
        Insn::Lui { rd, imm } => imm.bits() << 12 | rd.num() << 7 | LUI,
        Insn::Alu { op, rd, rs1, rs2 } => {
            let (f7, f3) = match op {
                AluOp::Add => (0, 0),
                AluOp::Sub => (0x20, 0),
                AluOp::Sll => (0, 1),
                AluOp::Xor => (0, 4),
                AluOp::Srl => (0, 5),
                AluOp::Or => (0, 6),
                AluOp::And => (0, 7),
                AluOp::Mul => (1, 0),
                AluOp::Sltu => (0, 3),
            };
            r_type(f7, rs2.num(), rs1.num(), f3, rd.num(), OP)
        }
        Insn::AluImm { op, rd, rs1, imm } => {
            let (f3, opc) = match op {
                ImmOp::Addi => (0, OP_IMM),
                ImmOp::Addiw => (0, OP_IMM_32),
                ImmOp::Xori => (4, OP_IMM),
                ImmOp::Ori => (6, OP_IMM),
                ImmOp::Andi => (7, OP_IMM),
            };
            i_type(imm.bits(), rs1.num(), f3, rd.num(), opc)
        }
        // RV64I: the shift amount takes imm[5:0], funct6 = 0 for logical.
        Insn::Shift { op, rd, rs1, sh } => {
            let f3 = match op {
                ShiftOp::Slli => 1,
                ShiftOp::Srli => 5,
            };
            i_type(sh.get(), rs1.num(), f3, rd.num(), OP_IMM)
        }
        Insn::Mv { rd, rs } => i_type(0, rs.num(), 0, rd.num(), OP_IMM),
        // funct3 is log2 of the width, bit 2 set for the zero-extending
        // loads (lbu, lhu, lwu; ld has nothing to extend).
        Insn::Load { w, rd, base, off } => {
            let unsigned = if *w == Width::D { 0 } else { 4 };
            i_type(
                off.bits(),
                base.num(),
                width_f3(*w) | unsigned,
                rd.num(),
                LOAD,
            )
        }
        Insn::Store { w, src, base, off } => {
            let f3 = width_f3(*w);
            let i = off.bits();
            (i >> 5) << 25 | src.num() << 20 | base.num() << 15 | f3 << 12 | (i & 31) << 7 | STORE
        }
        Insn::Branch { cond, rs1, rs2, .. } => {
            let f3 = match cond {
                BrCond::Eq => 0,
                BrCond::Ne => 1,
                BrCond::Lt => 4,
                BrCond::Ge => 5,
                BrCond::Ltu => 6,
                BrCond::Geu => 7,
            };
            ((o >> 12) & 1) << 31
                | ((o >> 5) & 0x3f) << 25
                | rs2.num() << 20
                | rs1.num() << 15
                | f3 << 12
                | ((o >> 1) & 0xf) << 8
                | ((o >> 11) & 1) << 7
                | BRANCH
        }
        Insn::J { .. } => {
            ((o >> 20) & 1) << 31
                | ((o >> 1) & 0x3ff) << 21
                | ((o >> 11) & 1) << 20
                | ((o >> 12) & 0xff) << 12
                | JAL
        }
        // jalr zero, 0(ra)
        Insn::Ret => i_type(0, 1, 0, 0, 0x67),
        // fm = 0 (a normal fence), rs1 = rd = 0.
        Insn::Fence { pred, succ } => pred.bits() << 24 | succ.bits() << 20 | MISC_MEM,
        Insn::FenceI => 1 << 12 | MISC_MEM,
        Insn::SfenceVma { rs1, rs2 } => r_type(0b000_1001, rs2.num(), rs1.num(), 0, 0, SYSTEM),
        Insn::SinvalVma { rs1, rs2 } => r_type(0b000_1011, rs2.num(), rs1.num(), 0, 0, SYSTEM),
        // SFENCE.W.INVAL and SFENCE.INVAL.IR: funct7 0001100, rs2 0 / 1.
        Insn::SfenceWInval => r_type(0b000_1100, 0, 0, 0, 0, SYSTEM),
        Insn::SfenceInvalIr => r_type(0b000_1100, 1, 0, 0, 0, SYSTEM),
        Insn::Lr { w, aq, rd, base } => {
            let f7 = 0b00010 << 2 | u32::from(*aq) << 1;
            r_type(f7, 0, base.num(), amo_f3(*w), rd.num(), AMO)
        }
        Insn::Sc {
            w,
            rl,
            status,
            src,
            base,
        } => {
            let f7 = 0b00011 << 2 | u32::from(*rl);
            r_type(f7, src.num(), base.num(), amo_f3(*w), status.num(), AMO)
        }
    })
}

/// log2 of the access width in bytes.
fn width_f3(w: Width) -> u32 {
    w.bytes().trailing_zeros()
}

fn amo_f3(w: AmoWidth) -> u32 {
    match w {
        AmoWidth::W => 2,
        AmoWidth::D => 3,
    }
}

impl Encode for Insn {
    assembler::defines_label_variant!();

    fn branch(&self) -> Option<(Label, Reach)> {
        match self {
            Insn::Branch { target, .. } => Some((*target, BRANCH_REACH)),
            Insn::J { target } => Some((*target, JAL_REACH)),
            _ => None,
        }
    }

    /// Conditional branches reach 4 KiB: one that does not becomes the
    /// inverted branch over a `j` (1 MiB). The pair is two lines of the
    /// `.S`, so GNU as has nothing left to relax.
    fn veneer(&self, skip: Label) -> Option<Vec<Insn>> {
        match *self {
            Insn::Branch {
                cond,
                rs1,
                rs2,
                target,
            } => Some(vec![
                Insn::Branch {
                    cond: cond.inverse(),
                    rs1,
                    rs2,
                    target: skip,
                },
                Insn::J { target },
                Insn::Label(skip),
            ]),
            _ => None,
        }
    }
}

/// Little-endian words, no compressed forms (the template says
/// `.option norvc`, so GNU as makes the same choice).
pub fn assemble(insns: &[Insn]) -> Result<Assembled, EncodeError> {
    assembler::assemble_by_disp(insns, false, |index, insn, off| {
        encode(insn, off).ok_or(EncodeError::BadOperand {
            index,
            what: "no encoding",
        })
    })
}

/// Far conditional branches relaxed into veneers (see
/// [`crate::isa::assembler::relax`]).
pub fn relax<O: Clone>(
    insns: Vec<(Insn, O)>,
    next_label: Label,
) -> Result<Vec<(Insn, O)>, EncodeError> {
    assembler::relax(insns, next_label)
}
