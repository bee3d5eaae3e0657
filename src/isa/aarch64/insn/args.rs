//! Operand types of the A64 model: access sizes, branch conditions,
//! barrier options and TLBI operations, with their assembler names.

/// Access size of a load/store: 8/16/32/64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    B,
    H,
    W,
    X,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Eq,
    Ne,
    Hs,
    Lo,
    Mi,
    Pl,
    Hi,
    Ls,
    Ge,
    Lt,
    Gt,
    Le,
}

/// Barrier domain/type option of DMB/DSB (Arm ARM C6.2 "DMB", CRm field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierOpt {
    Sy,
    St,
    Ld,
    Ish,
    Ishst,
    Ishld,
    Osh,
    Oshst,
    Oshld,
    Nsh,
    Nshst,
}

/// EL1 TLB maintenance operations (Arm ARM D8.13 / C5.5 "TLBI").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlbiOp {
    Vmalle1,
    Vmalle1is,
    Vmalle1os,
    Vae1,
    Vae1is,
    Vae1os,
    Vale1,
    Vale1is,
    Vale1os,
    Aside1,
    Aside1is,
    Aside1os,
    Vaae1is,
    Vaale1is,
    Rvae1is,
    Rvale1is,
    Rvae1os,
    Rvale1os,
    Rvaae1is,
    Rvaale1is,
}

impl Size {
    pub(super) const fn bytes(self) -> u32 {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::X => 8,
        }
    }
    pub(super) fn log2(self) -> u32 {
        match self {
            Size::B => 0,
            Size::H => 1,
            Size::W => 2,
            Size::X => 3,
        }
    }
}

impl Cond {
    pub(super) fn mnemonic(self) -> &'static str {
        match self {
            Cond::Eq => "b.eq",
            Cond::Ne => "b.ne",
            Cond::Hs => "b.hs",
            Cond::Lo => "b.lo",
            Cond::Mi => "b.mi",
            Cond::Pl => "b.pl",
            Cond::Hi => "b.hi",
            Cond::Ls => "b.ls",
            Cond::Ge => "b.ge",
            Cond::Lt => "b.lt",
            Cond::Gt => "b.gt",
            Cond::Le => "b.le",
        }
    }
}

impl BarrierOpt {
    pub const ALL: [BarrierOpt; 11] = [
        BarrierOpt::Sy,
        BarrierOpt::St,
        BarrierOpt::Ld,
        BarrierOpt::Ish,
        BarrierOpt::Ishst,
        BarrierOpt::Ishld,
        BarrierOpt::Osh,
        BarrierOpt::Oshst,
        BarrierOpt::Oshld,
        BarrierOpt::Nsh,
        BarrierOpt::Nshst,
    ];

    /// The option as `dmb`/`dsb` take it (`ish`).
    pub fn name(self) -> &'static str {
        match self {
            BarrierOpt::Sy => "sy",
            BarrierOpt::St => "st",
            BarrierOpt::Ld => "ld",
            BarrierOpt::Ish => "ish",
            BarrierOpt::Ishst => "ishst",
            BarrierOpt::Ishld => "ishld",
            BarrierOpt::Osh => "osh",
            BarrierOpt::Oshst => "oshst",
            BarrierOpt::Oshld => "oshld",
            BarrierOpt::Nsh => "nsh",
            BarrierOpt::Nshst => "nshst",
        }
    }
}

impl TlbiOp {
    pub const ALL: [TlbiOp; 20] = [
        TlbiOp::Vmalle1,
        TlbiOp::Vmalle1is,
        TlbiOp::Vmalle1os,
        TlbiOp::Vae1,
        TlbiOp::Vae1is,
        TlbiOp::Vae1os,
        TlbiOp::Vale1,
        TlbiOp::Vale1is,
        TlbiOp::Vale1os,
        TlbiOp::Aside1,
        TlbiOp::Aside1is,
        TlbiOp::Aside1os,
        TlbiOp::Vaae1is,
        TlbiOp::Vaale1is,
        TlbiOp::Rvae1is,
        TlbiOp::Rvale1is,
        TlbiOp::Rvae1os,
        TlbiOp::Rvale1os,
        TlbiOp::Rvaae1is,
        TlbiOp::Rvaale1is,
    ];

    /// The operation as `tlbi` takes it (`vale1is`).
    pub fn name(self) -> &'static str {
        match self {
            TlbiOp::Vmalle1 => "vmalle1",
            TlbiOp::Vmalle1is => "vmalle1is",
            TlbiOp::Vmalle1os => "vmalle1os",
            TlbiOp::Vae1 => "vae1",
            TlbiOp::Vae1is => "vae1is",
            TlbiOp::Vae1os => "vae1os",
            TlbiOp::Vale1 => "vale1",
            TlbiOp::Vale1is => "vale1is",
            TlbiOp::Vale1os => "vale1os",
            TlbiOp::Aside1 => "aside1",
            TlbiOp::Aside1is => "aside1is",
            TlbiOp::Aside1os => "aside1os",
            TlbiOp::Vaae1is => "vaae1is",
            TlbiOp::Vaale1is => "vaale1is",
            TlbiOp::Rvae1is => "rvae1is",
            TlbiOp::Rvale1is => "rvale1is",
            TlbiOp::Rvae1os => "rvae1os",
            TlbiOp::Rvale1os => "rvale1os",
            TlbiOp::Rvaae1is => "rvaae1is",
            TlbiOp::Rvaale1is => "rvaale1is",
        }
    }

    /// The `vmalle1*` operations invalidate by context, not address; their
    /// Rt field is RES (encoded as 0b11111) and the text takes no register.
    pub fn takes_reg(self) -> bool {
        !matches!(
            self,
            TlbiOp::Vmalle1 | TlbiOp::Vmalle1is | TlbiOp::Vmalle1os
        )
    }

    pub(super) fn is_range(self) -> bool {
        matches!(
            self,
            TlbiOp::Rvae1is
                | TlbiOp::Rvale1is
                | TlbiOp::Rvae1os
                | TlbiOp::Rvale1os
                | TlbiOp::Rvaae1is
                | TlbiOp::Rvaale1is
        )
    }

    /// Outer-shareable TLBI variants are FEAT_TLBIOS (Armv8.4).
    pub(super) fn is_outer(self) -> bool {
        matches!(
            self,
            TlbiOp::Vmalle1os
                | TlbiOp::Vae1os
                | TlbiOp::Vale1os
                | TlbiOp::Aside1os
                | TlbiOp::Rvae1os
                | TlbiOp::Rvale1os
        )
    }
}
