//! POWER (Power ISA v3.0B, 64-bit) instruction model: binary encoder and
//! GNU-as text printer for the small subset `shootdown` emits.
//!
//! Every instruction is exactly one 32-bit word. Field positions follow the
//! ISA's big-endian bit numbering (bit 0 = MSB), so a field occupying ISA bits
//! `a..=b` is shifted left by `31 - b` in the `u32` word. The byte order of the
//! emitted stream is chosen only at the end (`assemble(.., big_endian)`): the
//! ISA defines instructions as words, and LE mode simply stores each word
//! byte-reversed.
//!
//! Operands are valid when built: registers and the immediate fields whose
//! values a Rust integer does not match have types holding only what their
//! field can express, so the encoder places bits without checking them;
//! what can still fail is a label's (an undefined one, a branch out of
//! reach).
//!
//! Here the instruction enum and its classes; [`args`] the other operands
//! (labels, conditions, SPRs), [`regs`] the registers and their spelling,
//! [`imms`] the immediate fields, [`encode`] the binary words and
//! [`assemble`], [`text`] the GNU as text.

mod args;
mod encode;
mod imms;
mod regs;
#[cfg(test)]
mod tests;
mod text;

pub use args::{spr_by_name, spr_field, Cond, Label, Spr};
pub use encode::{assemble, Assembled, EncodeError};
pub use imms::{CrBit, CrField, Ds, Ih, Mas, Mb5, Mb6, Mo, Ric, Sh5, Sh6, TlbilxT};
pub use regs::{Reg, RegStyle};

#[rustfmt::skip]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    // integer
    Li { rt: Reg, imm: i16 },
    Lis { rt: Reg, imm: i16 },
    Addi { rt: Reg, ra: Reg, imm: i16 },
    Addis { rt: Reg, ra: Reg, imm: i16 },
    Ori { ra: Reg, rs: Reg, imm: u16 },
    Oris { ra: Reg, rs: Reg, imm: u16 },
    Xori { ra: Reg, rs: Reg, imm: u16 },
    Xoris { ra: Reg, rs: Reg, imm: u16 },
    /// `andi.` (always records CR0).
    AndiDot { ra: Reg, rs: Reg, imm: u16 },
    /// `andis.`: AND with `imm << 16` (always records CR0): a test of one
    /// bit of 16..31 (the kernel's `andis. r3,r4,MAS1_VALID@h`).
    AndisDot { ra: Reg, rs: Reg, imm: u16 },
    /// `addic.`: add immediate, recording CR0 (a count's decrement and its
    /// test for zero in one; it also sets XER[CA], which nothing reads).
    AddicDot { rt: Reg, ra: Reg, imm: i16 },
    Or { ra: Reg, rs: Reg, rb: Reg },
    And { ra: Reg, rs: Reg, rb: Reg },
    Xor { ra: Reg, rs: Reg, rb: Reg },
    Andc { ra: Reg, rs: Reg, rb: Reg },
    Nor { ra: Reg, rs: Reg, rb: Reg },
    Add { rt: Reg, ra: Reg, rb: Reg },
    Subf { rt: Reg, ra: Reg, rb: Reg },
    Neg { rt: Reg, ra: Reg },
    Mulld { rt: Reg, ra: Reg, rb: Reg },
    Sld { ra: Reg, rs: Reg, rb: Reg },
    Srd { ra: Reg, rs: Reg, rb: Reg },
    /// Count leading / trailing zeros, population count (64 for 0 in the
    /// counts; `cnttzd` is v3.0, `popcntd` v2.06).
    Cntlzd { ra: Reg, rs: Reg },
    Cnttzd { ra: Reg, rs: Reg },
    Popcntd { ra: Reg, rs: Reg },
    Rldicl { ra: Reg, rs: Reg, sh: Sh6, mb: Mb6 },
    Rldicr { ra: Reg, rs: Reg, sh: Sh6, me: Mb6 },
    Rldic { ra: Reg, rs: Reg, sh: Sh6, mb: Mb6 },
    Rldimi { ra: Reg, rs: Reg, sh: Sh6, mb: Mb6 },
    /// `rlwinm ra,rs,sh,mb,me`: rotate the low word left by `sh` and keep
    /// bits mb..=me (MSB0 of the word); with mb <= me the high word is 0.
    /// The kernel's `slwi`, `clrlwi`, `rlwinm r4,r4,0,1,31`.
    Rlwinm { ra: Reg, rs: Reg, sh: Sh5, mb: Mb5, me: Mb5 },
    /// `or ra,rs,rs`
    Mr { ra: Reg, rs: Reg },
    // loads/stores, D/DS-form (displacement) and X-form (indexed); *brx are byte-reversed
    Std { rs: Reg, d: Ds, ra: Reg },
    Stw { rs: Reg, d: i16, ra: Reg },
    Sth { rs: Reg, d: i16, ra: Reg },
    Stb { rs: Reg, d: i16, ra: Reg },
    Ld { rt: Reg, d: Ds, ra: Reg },
    /// `ld rt,d(r1)`: an incoming argument from the caller's parameter
    /// save area, `param` being the argument register the slot belongs to
    /// (r11 for the ninth argument). Linux style prints the kernel's
    /// `STK_PARAM(R11)` for `d`, which follows the ABI the kernel is built
    /// for (ELFv1 or ELFv2 big-endian alike); the bytes use `d`.
    LdArg { rt: Reg, d: Ds, param: u8 },
    Lwz { rt: Reg, d: i16, ra: Reg },
    Lhz { rt: Reg, d: i16, ra: Reg },
    Lbz { rt: Reg, d: i16, ra: Reg },
    Stdx { rs: Reg, ra: Reg, rb: Reg },
    Stwx { rs: Reg, ra: Reg, rb: Reg },
    Sthx { rs: Reg, ra: Reg, rb: Reg },
    Stbx { rs: Reg, ra: Reg, rb: Reg },
    Ldx { rt: Reg, ra: Reg, rb: Reg },
    Lwzx { rt: Reg, ra: Reg, rb: Reg },
    Lhzx { rt: Reg, ra: Reg, rb: Reg },
    Lbzx { rt: Reg, ra: Reg, rb: Reg },
    Stdbrx { rs: Reg, ra: Reg, rb: Reg },
    Stwbrx { rs: Reg, ra: Reg, rb: Reg },
    Sthbrx { rs: Reg, ra: Reg, rb: Reg },
    Ldbrx { rt: Reg, ra: Reg, rb: Reg },
    Lwbrx { rt: Reg, ra: Reg, rb: Reg },
    Lhbrx { rt: Reg, ra: Reg, rb: Reg },
    // reservations (EH hint bit included; printed as ",1" only when eh is true)
    Lbarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Lharx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Lwarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Ldarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Stbcx { rs: Reg, ra: Reg, rb: Reg },
    Sthcx { rs: Reg, ra: Reg, rb: Reg },
    Stwcx { rs: Reg, ra: Reg, rb: Reg },
    Stdcx { rs: Reg, ra: Reg, rb: Reg },
    // compares into CR field bf
    Cmpdi { bf: CrField, ra: Reg, imm: i16 },
    Cmpldi { bf: CrField, ra: Reg, imm: u16 },
    Cmpd { bf: CrField, ra: Reg, rb: Reg },
    Cmpld { bf: CrField, ra: Reg, rb: Reg },
    Cmpwi { bf: CrField, ra: Reg, imm: i16 },
    Cmplwi { bf: CrField, ra: Reg, imm: u16 },
    Cmpw { bf: CrField, ra: Reg, rb: Reg },
    Cmplw { bf: CrField, ra: Reg, rb: Reg },
    /// `crclr x` is `crxor x,x,x`.
    Crxor { bt: CrBit, ba: CrBit, bb: CrBit },
    // control flow (branch targets are labels, resolved by assemble)
    B { target: Label },
    Bc { cond: Cond, bf: CrField, target: Label },
    Bdnz { target: Label },
    Blr,
    Mtctr { rs: Reg },
    Mfctr { rt: Reg },
    // Book III-E (e500mc, e5500, e6500; GNU as `-me6500` / `.machine
    // e6500`). All but msync and mbar are privileged.
    /// `tlbilx T,RA,RB` (X-form, XO 18): invalidate this CPU's TLB
    /// entries, T=0 all of the LPID, T=1 those of the PID in MAS6[SPID],
    /// T=3 the one translating EA = (RA|0)+RB under MAS6's SPID, SAS,
    /// ISIZE and SIND. T=2 is reserved.
    Tlbilx { t: TlbilxT, ra: Reg, rb: Reg },
    /// `tlbivax RA,RB` (XO 786): invalidate the entry translating EA on
    /// every CPU (MAS6 as for `tlbilx 3`); complete after `tlbsync`.
    Tlbivax { ra: Reg, rb: Reg },
    /// `tlbsx RA,RB` (XO 914): search the TLB for EA under MAS6, result in
    /// MAS0-MAS3 (MAS1[V] = found).
    Tlbsx { ra: Reg, rb: Reg },
    /// `tlbre` / `tlbwe` (XO 946 / 978): read / write the entry MAS0
    /// selects through the MAS registers.
    Tlbre,
    Tlbwe,
    /// `msync`: Book E's name of `sync` 0 (the same word).
    Msync,
    /// `mbar MO` (XO 854): eieio's word when MO is 0.
    Mbar { mo: Mo },
    /// `mtspr SPR,RS` / `mfspr RT,SPR` of an MMU assist register.
    Mtspr { spr: Spr, rs: Reg },
    Mfspr { rt: Reg, spr: Spr },
    /// `wrteei E` (XO 163): MSR[EE] = E. `wrtee RS` (XO 131): MSR[EE] =
    /// RS[EE]. `mfmsr RT` (XO 83).
    Wrteei { e: bool },
    Wrtee { rs: Reg },
    Mfmsr { rt: Reg },
    // barriers and invalidation
    Eieio,
    Sync,
    Lwsync,
    Ptesync,
    Isync,
    Tlbsync,
    Nop,
    /// `nop`, patched by the kernel into `b target` when the CPU has
    /// capability `cap` (a feature section, `<asm/feature-fixups.h>`:
    /// `BEGIN_FTR_SECTION nop FTR_SECTION_ELSE b target
    /// ALT_FTR_SECTION_END_IFCLR(cap)`; `mmu`: the MMU_FTR_ form). The
    /// patcher rebases a branch that leaves the alternative. Linux style
    /// only.
    FtrB { mmu: bool, cap: String, target: Label },
    /// `tlbie RB,RS,RIC,PRS,R` (v3.0 X-form): PRS (process-scoped) and R
    /// (radix) are one bit each.
    Tlbie { rb: Reg, rs: Reg, ric: Ric, prs: bool, r: bool },
    Tlbiel { rb: Reg, rs: Reg, ric: Ric, prs: bool, r: bool },
    /// `slbia IH` (ISA 3.0): with radix, invalidates ERAT entries of the
    /// class IH selects (Linux PPC_RADIX_INVALIDATE_ERAT_USER: IH=3).
    Slbia { ih: Ih },
    /// `cp_abort` (ISA 3.0): clears the copy-paste buffer; Linux issues it
    /// after `tlbiel` on ISA 3.1 (ppc_after_tlbiel_barrier).
    CpAbort,
    /// Pseudo: no bytes, defines a branch target.
    Label(Label),
}

impl Insn {
    /// Memory or ordering barrier. `tlbsync` counts: it orders/waits for
    /// completion of preceding `tlbie`s rather than invalidating anything.
    pub fn is_barrier(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Eieio | Sync | Lwsync | Ptesync | Isync | Tlbsync | CpAbort | Msync | Mbar { .. }
        )
    }

    /// Writes memory (store-conditional included).
    pub fn is_store(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Std { .. }
                | Stw { .. }
                | Sth { .. }
                | Stb { .. }
                | Stdx { .. }
                | Stwx { .. }
                | Sthx { .. }
                | Stbx { .. }
                | Stdbrx { .. }
                | Stwbrx { .. }
                | Sthbrx { .. }
                | Stbcx { .. }
                | Sthcx { .. }
                | Stwcx { .. }
                | Stdcx { .. }
        )
    }

    /// Reads memory (load-and-reserve included; `li`/`lis` are not loads).
    pub fn is_load(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Ld { .. }
                | LdArg { .. }
                | Lwz { .. }
                | Lhz { .. }
                | Lbz { .. }
                | Ldx { .. }
                | Lwzx { .. }
                | Lhzx { .. }
                | Lbzx { .. }
                | Ldbrx { .. }
                | Lwbrx { .. }
                | Lhbrx { .. }
                | Lbarx { .. }
                | Lharx { .. }
                | Lwarx { .. }
                | Ldarx { .. }
        )
    }

    /// TLB invalidation (`tlbie`, `tlbiel`; Book III-E `tlbilx`,
    /// `tlbivax`, and `tlbwe`, which overwrites an entry).
    pub fn is_invalidate(&self) -> bool {
        matches!(
            self,
            Insn::Tlbie { .. }
                | Insn::Tlbiel { .. }
                | Insn::Slbia { .. }
                | Insn::Tlbilx { .. }
                | Insn::Tlbivax { .. }
                | Insn::Tlbwe
        )
    }

    /// Privileged processor state that is neither a barrier nor an
    /// invalidation: MAS and MSR accesses, TLB search and read (Book
    /// III-E). They trap in user mode: the emulator and the store-log
    /// harness model them (a MAS register file, MSR[EE]).
    pub fn is_system(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Mtspr { .. }
                | Mfspr { .. }
                | Wrteei { .. }
                | Wrtee { .. }
                | Mfmsr { .. }
                | Tlbsx { .. }
                | Tlbre
        )
    }

    /// Needs `.machine e6500` (Book III-E) to assemble.
    pub fn is_book3e(&self) -> bool {
        use Insn::*;
        self.is_system()
            || matches!(
                self,
                Tlbilx { .. } | Tlbivax { .. } | Tlbwe | Msync | Mbar { .. }
            )
    }
}
