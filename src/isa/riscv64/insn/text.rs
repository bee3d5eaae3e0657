//! GNU as text of RV64 instructions, with ABI register names, spelled
//! as GNU objdump and capstone print them.

use super::{AluOp, AmoWidth, BrCond, FenceSet, ImmOp, Insn, Label, Reg, ShiftOp, Width};

impl std::fmt::Display for FenceSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (b, c) in [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')] {
            if self.0 & b != 0 {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl Insn {
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Insn::Label(_) => "",
            Insn::Lui { .. } => "lui",
            // `sltu rd, zero, rs` is `snez rd, rs`, as GNU objdump and
            // capstone print it.
            Insn::Alu {
                op: AluOp::Sltu,
                rs1: Reg::ZERO,
                ..
            } => "snez",
            Insn::Alu { op, .. } => match op {
                AluOp::Add => "add",
                AluOp::Sub => "sub",
                AluOp::And => "and",
                AluOp::Or => "or",
                AluOp::Xor => "xor",
                AluOp::Sll => "sll",
                AluOp::Srl => "srl",
                AluOp::Mul => "mul",
                AluOp::Sltu => "sltu",
            },
            Insn::AluImm { op, .. } => match op {
                ImmOp::Addi => "addi",
                ImmOp::Addiw => "addiw",
                ImmOp::Andi => "andi",
                ImmOp::Ori => "ori",
                ImmOp::Xori => "xori",
            },
            Insn::Shift { op, .. } => match op {
                ShiftOp::Slli => "slli",
                ShiftOp::Srli => "srli",
            },
            Insn::Mv { .. } => "mv",
            Insn::Load { w, .. } => match w {
                Width::B => "lbu",
                Width::H => "lhu",
                Width::W => "lwu",
                Width::D => "ld",
            },
            Insn::Store { w, .. } => match w {
                Width::B => "sb",
                Width::H => "sh",
                Width::W => "sw",
                Width::D => "sd",
            },
            Insn::Branch { cond, .. } => match cond {
                BrCond::Eq => "beq",
                BrCond::Ne => "bne",
                BrCond::Lt => "blt",
                BrCond::Ge => "bge",
                BrCond::Ltu => "bltu",
                BrCond::Geu => "bgeu",
            },
            Insn::J { .. } => "j",
            Insn::Ret => "ret",
            Insn::Fence { .. } => "fence",
            Insn::FenceI => "fence.i",
            Insn::SfenceVma { .. } => "sfence.vma",
            Insn::SinvalVma { .. } => "sinval.vma",
            Insn::SfenceWInval => "sfence.w.inval",
            Insn::SfenceInvalIr => "sfence.inval.ir",
            Insn::Lr { w, aq, .. } => match (w, aq) {
                (AmoWidth::W, false) => "lr.w",
                (AmoWidth::W, true) => "lr.w.aq",
                (AmoWidth::D, false) => "lr.d",
                (AmoWidth::D, true) => "lr.d.aq",
            },
            Insn::Sc { w, rl, .. } => match (w, rl) {
                (AmoWidth::W, false) => "sc.w",
                (AmoWidth::W, true) => "sc.w.rl",
                (AmoWidth::D, false) => "sc.d",
                (AmoWidth::D, true) => "sc.d.rl",
            },
        }
    }

    /// GNU as text with ABI register names.
    pub fn text(&self, label_name: &dyn Fn(Label) -> String) -> String {
        let m = self.mnemonic();
        match self {
            Insn::Label(l) => format!("{}:", label_name(*l)),
            Insn::Lui { rd, imm } => format!("{m} {rd}, {:#x}", imm.bits()),
            Insn::Alu {
                op: AluOp::Sltu,
                rd,
                rs1: Reg::ZERO,
                rs2,
            } => format!("{m} {rd}, {rs2}"),
            Insn::Alu { rd, rs1, rs2, .. } => format!("{m} {rd}, {rs1}, {rs2}"),
            Insn::AluImm { rd, rs1, imm, .. } => format!("{m} {rd}, {rs1}, {}", imm.value()),
            Insn::Shift { rd, rs1, sh, .. } => format!("{m} {rd}, {rs1}, {}", sh.get()),
            Insn::Mv { rd, rs } => format!("{m} {rd}, {rs}"),
            Insn::Load { rd, base, off, .. } => format!("{m} {rd}, {}({base})", off.value()),
            Insn::Store { src, base, off, .. } => {
                format!("{m} {src}, {}({base})", off.value())
            }
            Insn::Branch {
                rs1, rs2, target, ..
            } => format!("{m} {rs1}, {rs2}, {}", label_name(*target)),
            Insn::J { target } => format!("{m} {}", label_name(*target)),
            Insn::Fence { pred, succ } => format!("{m} {pred},{succ}"),
            Insn::SfenceVma { rs1, rs2 } => match (*rs1, *rs2) {
                (Reg::ZERO, Reg::ZERO) => m.to_string(),
                (rs1, Reg::ZERO) => format!("{m} {rs1}"),
                (rs1, rs2) => format!("{m} {rs1}, {rs2}"),
            },
            Insn::SinvalVma { rs1, rs2 } => format!("{m} {rs1}, {rs2}"),
            Insn::Lr { rd, base, .. } => format!("{m} {rd}, ({base})"),
            Insn::Sc {
                status, src, base, ..
            } => format!("{m} {status}, {src}, ({base})"),
            Insn::Ret | Insn::FenceI | Insn::SfenceWInval | Insn::SfenceInvalIr => m.to_string(),
        }
    }
}
