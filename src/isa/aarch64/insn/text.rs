//! GNU `as` text of A64 instructions.

use super::{ImmShift, Insn, Label, RegOrZr, Size};

/// Transfer register of a load/store: w for B/H/W, x for X.
fn tr(size: Size, r: RegOrZr) -> String {
    if size == Size::X {
        r.to_string()
    } else {
        r.w()
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

/// The register a bit test names: W for a bit below 32, as objdump
/// prints it (both assemble to the same word).
fn bit_reg(rt: RegOrZr, bit: ImmShift) -> String {
    if bit.get() < 32 {
        rt.w()
    } else {
        rt.to_string()
    }
}

impl Insn {
    /// ADD/SUB (immediate), `lsl #12` when shifted.
    fn arith_imm_text(&self, m: &str) -> String {
        let (Insn::AddImm {
            rd,
            rn,
            imm: i,
            lsl12,
        }
        | Insn::SubImm {
            rd,
            rn,
            imm: i,
            lsl12,
        }) = *self
        else {
            return m.to_string();
        };
        let shift = if lsl12 { ", lsl #12" } else { "" };
        format!("{m} {}, {}, {}{shift}", rd, rn, imm(i.get().into()))
    }

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
            Insn::Movz { rd, imm: i } | Insn::Movk { rd, imm: i } | Insn::Movn { rd, imm: i } => {
                let bits = imm(i.bits().into());
                match i.shift() {
                    0 => format!("{m} {rd}, {bits}"),
                    shift => format!("{m} {rd}, {bits}, lsl #{shift}"),
                }
            }
            Insn::OrrImm { rd, rn, imm: i } | Insn::AndImm { rd, rn, imm: i } => {
                format!("{m} {rd}, {rn}, {}", imm(i.value()))
            }
            Insn::MovReg { rd, rm } => format!("mov {rd}, {rm}"),
            Insn::Mvn { rd, rm } => format!("mvn {rd}, {rm}"),
            Insn::Orr { rd, rn, rm }
            | Insn::And { rd, rn, rm }
            | Insn::Eor { rd, rn, rm }
            | Insn::Bic { rd, rn, rm }
            | Insn::Add { rd, rn, rm }
            | Insn::Sub { rd, rn, rm }
            | Insn::SubsReg { rd, rn, rm }
            | Insn::Mul { rd, rn, rm }
            | Insn::LslReg { rd, rn, rm }
            | Insn::LsrReg { rd, rn, rm } => format!("{m} {rd}, {rn}, {rm}"),
            Insn::AddImm { .. } | Insn::SubImm { .. } => self.arith_imm_text(m),
            Insn::SpSub { imm: i } | Insn::SpAdd { imm: i } => {
                format!("{m} sp, sp, {}", imm(i.bytes().into()))
            }
            Insn::SubsImm { rd, rn, imm: i } => {
                format!("subs {}, {}, {}", rd, rn, imm(i.get().into()))
            }
            Insn::LslImm { rd, rn, sh } | Insn::LsrImm { rd, rn, sh } => {
                format!("{m} {rd}, {rn}, #{}", sh.get())
            }
            Insn::Ubfiz { rd, rn, field } | Insn::Ubfx { rd, rn, field } => {
                let (lsb, width) = (field.lsb().get(), field.width());
                format!("{m} {rd}, {rn}, #{lsb}, #{width}")
            }
            Insn::Rev { rd, rn } | Insn::Clz { rd, rn } | Insn::Rbit { rd, rn } => {
                format!("{m} {rd}, {rn}")
            }
            Insn::Cset { rd, cond } => format!("cset {rd}, {}", &cond.mnemonic()[2..]),
            Insn::Rev32W { rd, rn } | Insn::Rev16W { rd, rn } => {
                format!("{m} {}, {}", rd.w(), rn.w())
            }
            Insn::Str { rt, rn, off } | Insn::Ldr { rt, rn, off } => {
                let rt = tr(off.size(), rt);
                match off.bytes() {
                    0 => format!("{m} {rt}, [{rn}]"),
                    bytes => format!("{m} {rt}, [{rn}, {}]", imm(bytes.into())),
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
                let shift = if scaled {
                    format!(", lsl #{}", size.log2())
                } else {
                    String::new()
                };
                format!("{m} {}, [{rn}, {rm}{shift}]", tr(size, rt))
            }
            Insn::Ldxr { size, rt, rn }
            | Insn::Ldaxr { size, rt, rn }
            | Insn::Ldar { size, rt, rn }
            | Insn::Stlr { size, rt, rn } => {
                format!("{m} {}, [{}]", tr(size, rt), rn)
            }
            // The status register of STXR/STLXR is always a W register.
            Insn::Stxr { size, rs, rt, rn } | Insn::Stlxr { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", rs.w(), tr(size, rt), rn)
            }
            Insn::Casa { size, rs, rt, rn } | Insn::Swpa { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", tr(size, rs), tr(size, rt), rn)
            }
            Insn::CmpReg { rn, rm } => format!("cmp {rn}, {rm}"),
            Insn::CmpImm { rn, imm: i } => format!("cmp {}, {}", rn, imm(i.get().into())),
            Insn::Cbz { rt, target } | Insn::Cbnz { rt, target } => {
                format!("{m} {rt}, {}", label_name(target))
            }
            Insn::Tbz { rt, bit, target } | Insn::Tbnz { rt, bit, target } => {
                format!(
                    "{m} {}, #{}, {}",
                    bit_reg(rt, bit),
                    bit.get(),
                    label_name(target)
                )
            }
            Insn::BCond { target, .. } | Insn::B { target } => {
                format!("{m} {}", label_name(target))
            }
            Insn::Ret | Insn::Isb | Insn::Nop | Insn::AltB { .. } => m.to_string(),
            Insn::Dmb(o) | Insn::Dsb(o) => format!("{m} {}", o.name()),
            Insn::Tlbi { op, rt } => match rt {
                Some(r) => format!("tlbi {}, {r}", op.name()),
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
            Insn::Mvn { .. } => "mvn",
            Insn::And { .. } | Insn::AndImm { .. } => "and",
            Insn::Eor { .. } => "eor",
            Insn::Bic { .. } => "bic",
            Insn::Add { .. } | Insn::AddImm { .. } | Insn::SpAdd { .. } => "add",
            Insn::Sub { .. } | Insn::SubImm { .. } | Insn::SpSub { .. } => "sub",
            Insn::SubsImm { .. } | Insn::SubsReg { .. } => "subs",
            Insn::Mul { .. } => "mul",
            Insn::LslImm { .. } | Insn::LslReg { .. } => "lsl",
            Insn::LsrImm { .. } | Insn::LsrReg { .. } => "lsr",
            Insn::Ubfiz { .. } => "ubfiz",
            Insn::Ubfx { .. } => "ubfx",
            Insn::Clz { .. } => "clz",
            Insn::Cset { .. } => "cset",
            Insn::Rbit { .. } => "rbit",
            Insn::Rev { .. } | Insn::Rev32W { .. } => "rev",
            Insn::Rev16W { .. } => "rev16",
            Insn::Str { off, .. } => sized(off.size(), "strb", "strh", "str"),
            Insn::StrReg { size, .. } => sized(size, "strb", "strh", "str"),
            Insn::Ldr { off, .. } => sized(off.size(), "ldrb", "ldrh", "ldr"),
            Insn::LdrReg { size, .. } => sized(size, "ldrb", "ldrh", "ldr"),
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
            Insn::Tbz { .. } => "tbz",
            Insn::Tbnz { .. } => "tbnz",
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
