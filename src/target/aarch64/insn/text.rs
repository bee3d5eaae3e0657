//! GNU `as` text of A64 instructions.

use super::{Insn, Label, Reg, Size};

fn xr(r: Reg) -> String {
    if r == 31 {
        "xzr".to_string()
    } else {
        format!("x{r}")
    }
}

fn wr(r: Reg) -> String {
    if r == 31 {
        "wzr".to_string()
    } else {
        format!("w{r}")
    }
}

/// Transfer register of a load/store: w for B/H/W, x for X.
fn tr(size: Size, r: Reg) -> String {
    if size == Size::X {
        xr(r)
    } else {
        wr(r)
    }
}

/// Base register of a load/store: register 31 is SP here (Arm ARM C1.2.5).
fn base(r: Reg) -> String {
    if r == 31 {
        "sp".to_string()
    } else {
        format!("x{r}")
    }
}

/// Immediates are printed the way LLVM/capstone print them: decimal up to
/// 9, hex above.  GNU as accepts both.
fn imm(v: u64) -> String {
    if v > 9 {
        format!("#{v:#x}")
    } else {
        format!("#{v}")
    }
}

fn sized(size: Size, b: &'static str, h: &'static str, w: &'static str) -> &'static str {
    match size {
        Size::B => b,
        Size::H => h,
        Size::W | Size::X => w,
    }
}

impl Insn {
    /// GNU as syntax for this instruction (no leading indentation).
    pub fn text(&self, label_name: &dyn Fn(Label) -> String) -> String {
        let m = self.mnemonic();
        if let Insn::AltB { cap, target } = self {
            return format!(
                "alternative_if {cap}\n\tb {}\nalternative_else_nop_endif",
                label_name(*target)
            );
        }
        match *self {
            Insn::Movz { rd, imm: i, shift }
            | Insn::Movk { rd, imm: i, shift }
            | Insn::Movn { rd, imm: i, shift } => {
                if shift == 0 {
                    format!("{m} {}, {}", xr(rd), imm(i.into()))
                } else {
                    format!("{m} {}, {}, lsl #{shift}", xr(rd), imm(i.into()))
                }
            }
            Insn::OrrImm { rd, rn, imm: i } | Insn::AndImm { rd, rn, imm: i } => {
                format!("{m} {}, {}, {}", xr(rd), xr(rn), imm(i))
            }
            Insn::MovReg { rd, rm } => format!("mov {}, {}", xr(rd), xr(rm)),
            Insn::Orr { rd, rn, rm }
            | Insn::And { rd, rn, rm }
            | Insn::Eor { rd, rn, rm }
            | Insn::Bic { rd, rn, rm }
            | Insn::Add { rd, rn, rm }
            | Insn::Sub { rd, rn, rm }
            | Insn::Mul { rd, rn, rm }
            | Insn::LslReg { rd, rn, rm }
            | Insn::LsrReg { rd, rn, rm } => format!("{m} {}, {}, {}", xr(rd), xr(rn), xr(rm)),
            // ADD/SUB (immediate) use SP for register 31 (Arm ARM C6.2
            // "ADD (immediate)"); 31 is rejected by the encoder, but print
            // what the encoding would mean.
            Insn::AddImm { rd, rn, imm: i } | Insn::SubImm { rd, rn, imm: i } => {
                format!("{m} {}, {}, {}", base(rd), base(rn), imm(i.into()))
            }
            Insn::SpSub { imm: i } | Insn::SpAdd { imm: i } => {
                format!("{m} sp, sp, {}", imm(i.into()))
            }
            // SUBS (immediate): Rd is XZR-capable, Rn is SP-capable.
            Insn::SubsImm { rd, rn, imm: i } => {
                format!("subs {}, {}, {}", xr(rd), base(rn), imm(i.into()))
            }
            Insn::LslImm { rd, rn, sh } | Insn::LsrImm { rd, rn, sh } => {
                format!("{m} {}, {}, #{sh}", xr(rd), xr(rn))
            }
            Insn::Ubfiz { rd, rn, lsb, width } | Insn::Ubfx { rd, rn, lsb, width } => {
                format!("{m} {}, {}, #{lsb}, #{width}", xr(rd), xr(rn))
            }
            Insn::Rev { rd, rn } | Insn::Clz { rd, rn } | Insn::Rbit { rd, rn } => {
                format!("{m} {}, {}", xr(rd), xr(rn))
            }
            Insn::Rev32W { rd, rn } | Insn::Rev16W { rd, rn } => {
                format!("{m} {}, {}", wr(rd), wr(rn))
            }
            Insn::Str { size, rt, rn, off } | Insn::Ldr { size, rt, rn, off } => {
                if off == 0 {
                    format!("{m} {}, [{}]", tr(size, rt), base(rn))
                } else {
                    format!("{m} {}, [{}, {}]", tr(size, rt), base(rn), imm(off.into()))
                }
            }
            Insn::StrReg {
                size,
                rt,
                rn,
                rm,
                scaled,
            }
            | Insn::LdrReg {
                size,
                rt,
                rn,
                rm,
                scaled,
            } => {
                if scaled {
                    format!(
                        "{m} {}, [{}, {}, lsl #{}]",
                        tr(size, rt),
                        base(rn),
                        xr(rm),
                        size.log2()
                    )
                } else {
                    format!("{m} {}, [{}, {}]", tr(size, rt), base(rn), xr(rm))
                }
            }
            Insn::Ldxr { size, rt, rn }
            | Insn::Ldaxr { size, rt, rn }
            | Insn::Ldar { size, rt, rn }
            | Insn::Stlr { size, rt, rn } => {
                format!("{m} {}, [{}]", tr(size, rt), base(rn))
            }
            // The status register of STXR/STLXR is always a W register.
            Insn::Stxr { size, rs, rt, rn } | Insn::Stlxr { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", wr(rs), tr(size, rt), base(rn))
            }
            Insn::Casa { size, rs, rt, rn } | Insn::Swpa { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", tr(size, rs), tr(size, rt), base(rn))
            }
            Insn::CmpReg { rn, rm } => format!("cmp {}, {}", xr(rn), xr(rm)),
            Insn::CmpImm { rn, imm: i } => format!("cmp {}, {}", base(rn), imm(i.into())),
            Insn::Cbz { rt, target } | Insn::Cbnz { rt, target } => {
                format!("{m} {}, {}", xr(rt), label_name(target))
            }
            Insn::BCond { target, .. } | Insn::B { target } => {
                format!("{m} {}", label_name(target))
            }
            Insn::Ret | Insn::Isb | Insn::Nop | Insn::AltB { .. } => m.to_string(),
            Insn::Dmb(o) | Insn::Dsb(o) => format!("{m} {}", o.name()),
            Insn::Tlbi { op, rt } => match rt {
                Some(r) => format!("tlbi {}, {}", op.name(), xr(r)),
                None => format!("tlbi {}", op.name()),
            },
            Insn::Label(l) => format!("{}:", label_name(l)),
        }
    }

    /// Assembler mnemonic (the size-specific one for loads/stores, e.g.
    /// `ldxrb`); `""` for the `Label` pseudo instruction.
    pub fn mnemonic(&self) -> &'static str {
        match *self {
            Insn::Movz { .. } => "movz",
            Insn::Movk { .. } => "movk",
            Insn::Movn { .. } => "movn",
            Insn::OrrImm { .. } | Insn::Orr { .. } => "orr",
            Insn::MovReg { .. } => "mov",
            Insn::And { .. } | Insn::AndImm { .. } => "and",
            Insn::Eor { .. } => "eor",
            Insn::Bic { .. } => "bic",
            Insn::Add { .. } | Insn::AddImm { .. } | Insn::SpAdd { .. } => "add",
            Insn::Sub { .. } | Insn::SubImm { .. } | Insn::SpSub { .. } => "sub",
            Insn::SubsImm { .. } => "subs",
            Insn::Mul { .. } => "mul",
            Insn::LslImm { .. } | Insn::LslReg { .. } => "lsl",
            Insn::LsrImm { .. } | Insn::LsrReg { .. } => "lsr",
            Insn::Ubfiz { .. } => "ubfiz",
            Insn::Ubfx { .. } => "ubfx",
            Insn::Clz { .. } => "clz",
            Insn::Rbit { .. } => "rbit",
            Insn::Rev { .. } | Insn::Rev32W { .. } => "rev",
            Insn::Rev16W { .. } => "rev16",
            Insn::Str { size, .. } | Insn::StrReg { size, .. } => {
                sized(size, "strb", "strh", "str")
            }
            Insn::Ldr { size, .. } | Insn::LdrReg { size, .. } => {
                sized(size, "ldrb", "ldrh", "ldr")
            }
            Insn::Ldxr { size, .. } => sized(size, "ldxrb", "ldxrh", "ldxr"),
            Insn::Ldaxr { size, .. } => sized(size, "ldaxrb", "ldaxrh", "ldaxr"),
            Insn::Stxr { size, .. } => sized(size, "stxrb", "stxrh", "stxr"),
            Insn::Stlxr { size, .. } => sized(size, "stlxrb", "stlxrh", "stlxr"),
            Insn::Ldar { size, .. } => sized(size, "ldarb", "ldarh", "ldar"),
            Insn::Stlr { size, .. } => sized(size, "stlrb", "stlrh", "stlr"),
            Insn::Casa { size, .. } => sized(size, "casab", "casah", "casa"),
            Insn::Swpa { size, .. } => sized(size, "swpab", "swpah", "swpa"),
            Insn::CmpReg { .. } | Insn::CmpImm { .. } => "cmp",
            Insn::Cbz { .. } => "cbz",
            Insn::Cbnz { .. } => "cbnz",
            Insn::BCond { cond, .. } => cond.mnemonic(),
            Insn::B { .. } => "b",
            Insn::Ret => "ret",
            Insn::Dmb(_) => "dmb",
            Insn::Dsb(_) => "dsb",
            Insn::Isb => "isb",
            Insn::Nop | Insn::AltB { .. } => "nop",
            Insn::Tlbi { .. } => "tlbi",
            Insn::Label(_) => "",
        }
    }
}
