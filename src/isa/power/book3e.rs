//! Book III-E POWER: e500mc, e5500 and e6500 (a spec's `machine e6500`).
//!
//! These CPUs have software-managed TLBs and no radix `tlbie` or
//! `ptesync`. A TLB invalidation names what it removes through MMU assist
//! register 6 (MAS6: SPID, SAS, ISIZE, SIND) and, by address, an EA:
//!
//! | spec | IR name | operands | instructions |
//! |---|---|---|---|
//! | `tlbilx all` | `tlbilx all` | none | `tlbilx 0,0,r0` |
//! | `tlbilx pid, MAS6` | `tlbilx pid` | MAS6 | `mtspr MAS6`; `tlbilx 1,0,r0` |
//! | `tlbilx va, EA, MAS6` | `tlbilx va` | EA, MAS6 | `mtspr MAS6`; `tlbilx 3,0,EA` |
//! | `tlbivax EA, MAS6` | `tlbivax` | EA, MAS6 | `mtspr MAS6`; `tlbivax 0,EA` |
//!
//! The MAS6 write and the instruction that reads it run with external
//! interrupts masked (`mfmsr r0; wrteei 0; ...; wrtee r0`), as Linux 6.1
//! `arch/powerpc/mm/nohash/tlb_low.S` does (CONFIG_PPC_BOOK3E_64
//! `_tlbil_pid`, `_tlbil_va`, `_tlbivax_bcast`): an interrupt in between
//! may take a TLB miss whose handler rewrites MAS6 (the kernel's comment:
//! "We may be able to get away without the interrupt masking stuff if we
//! save/restore MAS6 on exceptions that might modify it"). The lowering
//! does it rather than leave it to the caller because the pair is one
//! operation: a caller that forgot would get an invalidation of the wrong
//! PID or size, silently. Only that window is masked: interrupts are on
//! again before the completion barrier that placement puts later (the
//! kernel's `_tlbil_pid` does the same; its `_tlbil_va` and
//! `_tlbivax_bcast` re-enable after the barrier).
//!
//! Completion (the barrier table below): a local `tlbilx` is complete
//! after `msync; isync`, a broadcast `tlbivax` after `mbar; tlbsync;
//! msync` (the kernel's `mbar; tlbsync; sync`: `msync` is `sync`'s Book E
//! name, the same word). Placement puts them once after a batch.

use super::insn::{Insn, Mas, Mo, Reg, Spr, TlbilxT};
use super::tlb::Op;
use crate::ir::isa::InvalidationError;
use crate::ir::order::Class;
use crate::isa::barriers::{all_access_and, insns, BarrierKind};
use crate::isa::invalidation::Invalidation;
use crate::isa::Machine;

const ALL_ACCESS: &[(Class, Class)] = all_access_and!();

/// `msync` (heavyweight sync): every access, and page-table stores
/// before a later TLB invalidation.
const MSYNC: &[(Class, Class)] =
    all_access_and![(NormalStore, TlbInvalidate), (NormalStore, LocalInvalidate),];

/// The POWER barrier table under `machine e6500`. No `ptesync`, `eieio`
/// or `sync` spelling: Book E's `msync` and `mbar` are the same words
/// (GNU as `-me6500` rejects `eieio`), and nothing here is Book III-S
/// page-table synchronization.
pub static TABLE: &[BarrierKind] = &[
    BarrierKind {
        name: "mbar",
        insns: insns![Insn::Mbar { mo: Mo::of::<0>() }],
        cost: 1,
        // mbar MO=0 is eieio's opcode and ordering (Power ISA v2.06B Book
        // II, "mbar"; Linux synch.h: eieio() is `mbar` on BOOKE):
        // caching-inhibited guarded accesses among themselves, cacheable
        // stores among themselves; not a cacheable store before a CI one.
        orders: super::barriers::EIEIO,
        cite: "Power ISA v2.06B Book II, Memory Barrier Instructions (mbar); Linux asm/synch.h eieio()",
    },
    BarrierKind {
        name: "lwsync",
        insns: insns![Insn::Lwsync],
        cost: 2,
        // e500mc and later implement sync L=1 (Linux CPU_FTR_LWSYNC):
        // cacheable accesses except store -> load, not CI storage.
        orders: super::barriers::LWSYNC,
        cite: "Power ISA v2.06B Book II, Memory Barrier Instructions (sync L=1)",
    },
    BarrierKind {
        name: "msync",
        insns: insns![Insn::Msync],
        cost: 8,
        // sync L=0 orders every storage access. Page-table stores before
        // a TLB invalidation: the e6500 walks page tables in hardware
        // (indirect entries) and other CPUs' miss handlers load PTEs, so
        // a PTE store must be performed before the invalidation that lets
        // them reload it; Linux 6.1 nohash/pgtable.h __set_pte_at: "With
        // hardware tablewalk, a sync is needed to ensure that subsequent
        // accesses see the PTE we just wrote" (mb(), i.e. sync).
        orders: MSYNC,
        cite: "Power ISA v2.06B Book II, Memory Barrier Instructions (sync); Linux 6.1 nohash/pgtable.h __set_pte_at",
    },
    BarrierKind {
        name: "isync",
        insns: insns![Insn::Isync],
        cost: 3,
        orders: super::barriers::isync_and![],
        cite: "Power ISA v2.06B Book II, Instruction Synchronize (isync)",
    },
    BarrierKind {
        name: "msync; isync",
        insns: insns![Insn::Msync, Insn::Isync],
        cost: 11,
        // A local tlbilx is complete, for data and instruction accesses,
        // after msync then a context-synchronizing isync: Linux 6.1
        // tlb_low.S `_tlbil_all`, `_tlbil_pid`, `_tlbil_va` (BOOK3E_64 and
        // e500) all end with "msync; isync".
        orders: all_access_and![
            (NormalStore, TlbInvalidate),
            (NormalStore, LocalInvalidate),
            (LocalInvalidate, InvalidateCompletion),
            (InvalidateCompletion, NormalLoad),
            (InvalidateCompletion, DevStore),
            (InvalidateCompletion, ContextSync),
            (NormalLoad, ContextSync),
        ],
        cite: "Linux 6.1 arch/powerpc/mm/nohash/tlb_low.S _tlbil_va, _tlbil_pid",
    },
    BarrierKind {
        name: "tlbsync",
        insns: insns![Insn::Tlbsync],
        cost: 10,
        // Alone it completes nothing (see the composite below); it stays
        // spellable for hand-ordered code (`barrier tlbsync`).
        orders: &[],
        cite: "Power ISA v2.06B Book III-E, TLB Management Instructions (tlbsync)",
    },
    BarrierKind {
        name: "mbar; tlbsync; msync",
        insns: insns![Insn::Mbar { mo: Mo::of::<0>() }, Insn::Tlbsync, Insn::Msync],
        cost: 19,
        // A tlbivax is complete on every CPU once a tlbsync, ordered
        // after it by mbar, is followed by a sync: Linux 6.1 tlb_low.S
        // `_tlbivax_bcast` "tlbivax; mbar; tlbsync; sync" (47x the same).
        // tlbsync waits for this CPU's earlier tlbivax to be complete on
        // all processors, and the sync after it orders that wait before
        // later accesses. None of the three completes it alone.
        orders: all_access_and![
            (NormalStore, TlbInvalidate),
            (NormalStore, LocalInvalidate),
            (TlbInvalidate, InvalidateCompletion),
            (InvalidateCompletion, NormalLoad),
            (InvalidateCompletion, DevStore),
        ],
        cite: "Linux 6.1 arch/powerpc/mm/nohash/tlb_low.S _tlbivax_bcast; Power ISA v2.06B Book III-E (tlbsync)",
    },
];

// Every Book III-S pair msync orders is in ALL_ACCESS (kept to document
// what "every access" means above).
const _: () = assert!(ALL_ACCESS.len() + 2 == MSYNC.len());

/// A Book III-E invalidation by IR name: tlbilx's T, or tlbivax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Tlbilx(TlbilxT),
    Tlbivax,
    /// `tlbwe`: writes the entry MAS0-MAS3 and MAS7 describe (with MAS1.V
    /// clear, removes it).
    Tlbwe,
}

/// tlbilx's T: every entry of the LPID, those of the PID in MAS6[SPID],
/// the one translating an address.
const ALL: TlbilxT = TlbilxT::of::<0>();
const PID: TlbilxT = TlbilxT::of::<1>();
const VA: TlbilxT = TlbilxT::of::<3>();

fn form(name: &str) -> Option<(Form, usize)> {
    Some(match name {
        "tlbilx all" => (Form::Tlbilx(ALL), 0),
        "tlbilx pid" => (Form::Tlbilx(PID), 1),
        "tlbilx va" => (Form::Tlbilx(VA), 2),
        "tlbivax" => (Form::Tlbivax, 2),
        "tlbwe" => (Form::Tlbwe, 0),
        _ => return None,
    })
}

/// A Book III-E invalidation (`tlbilx ...`, `tlbivax`) by IR name.
fn is_book3e(name: &str) -> bool {
    matches!(
        name.split_whitespace().next(),
        Some("tlbilx" | "tlbivax" | "tlbwe")
    )
}

/// The invalidation `name`, if POWER `machine` has it with `n` register
/// operands (Book III-S's are in [`super::tlb`]).
pub fn invalidation(
    machine: Machine,
    name: &str,
    n: usize,
) -> Result<Invalidation, InvalidationError> {
    let mnemonic = || name.split_whitespace().next().unwrap_or(name).to_string();
    match machine {
        Machine::Book3s if is_book3e(name) => Err(InvalidationError::Foreign {
            name: mnemonic(),
            what: "a Book III-E instruction (e500mc, e5500, e6500)",
            advice: ": say `machine e6500` at the top of the spec",
        }),
        Machine::Book3s => super::tlb::invalidation(name, n),
        Machine::E6500 => {
            let Some((f, takes)) = form(name) else {
                return Err(match mnemonic().as_str() {
                    "tlbie" | "tlbiel" | "slbia" => InvalidationError::Foreign {
                        name: mnemonic(),
                        what: "Book III-S (radix)",
                        advice: ": `machine e6500` invalidates with `tlbilx all`, `tlbilx pid, MAS6`, `tlbilx va, EA, MAS6`, `tlbivax EA, MAS6` and `tlbwe`",
                    },
                    "tlbilx" => InvalidationError::Operation {
                        name: name.into(),
                        expected: "tlbilx takes `all`, `pid, MAS6` or `va, EA, MAS6` (T = 0, 1, 3)",
                    },
                    _ if name.starts_with("tlbi ") => InvalidationError::Foreign {
                        name: name.into(),
                        what: "an AArch64 instruction",
                        advice: "; `machine e6500` invalidates with `tlbilx` and `tlbivax`",
                    },
                    _ => InvalidationError::NoSuch {
                        target: "e6500",
                        name: name.into(),
                        also: "",
                    },
                });
            };
            if takes != n {
                let what = match name {
                    "tlbilx pid" => "MAS6",
                    "tlbilx all" | "tlbwe" => "nothing",
                    _ => "EA, MAS6",
                };
                return Err(InvalidationError::NamedOperands {
                    name: name.into(),
                    what: format!("{what} ({takes} operand(s))"),
                    got: n,
                });
            }
            Ok(Invalidation::new(name, Op::Book3e(f)))
        }
    }
}

/// SPR numbers the register model below treats specially.
const MAS2: usize = 0x272;
const MAS3: usize = 0x273;
const MAS7: usize = 0x3b0;
const MAS7_MAS3: usize = 0x174;

/// `mtspr SPR` into a model of the MAS registers by SPR number (the
/// emulator's and the interpreter's, which must agree): MAS2 holds a
/// 64-bit EPN, the others are 32-bit, and MAS7_MAS3 writes MAS7 (high
/// word) and MAS3 (low word) (Power ISA v2.06 Book III-E 6.10.3.8).
pub fn mas_write(regs: &mut std::collections::HashMap<usize, u64>, spr: usize, v: u64) {
    match spr {
        MAS7_MAS3 => {
            regs.insert(MAS7, v >> 32);
            regs.insert(MAS3, v & 0xffff_ffff);
        }
        MAS2 => {
            regs.insert(MAS2, v);
        }
        _ => {
            regs.insert(spr, v & 0xffff_ffff);
        }
    }
}

/// `mfspr SPR` from the model [`mas_write`] keeps (never written: 0).
pub fn mas_read(regs: &std::collections::HashMap<usize, u64>, spr: usize) -> u64 {
    let r = |n| regs.get(&n).copied().unwrap_or(0);
    match spr {
        MAS7_MAS3 => r(MAS7) << 32 | r(MAS3),
        _ => r(spr),
    }
}

const MAS0: usize = 0x270;
const MAS1: usize = 0x271;
const MAS6: usize = 0x276;

/// What `tlbsx EA` (`ea` Some) or `tlbre` (None) leaves in the MAS
/// register model when the TLB does (`found`) or does not hold the entry
/// asked for. Neither the emulator nor the interpreter has a TLB: whether
/// a lookup finds its entry is an input of the run (`World::tlb_found`),
/// so that `verify` runs both arms of a sequence that tests MAS1.V. What
/// is found is what was searched for: V, with MAS6's SPID as TID, ISIZE
/// as TSIZE, SIND as IND and SAS as TS, in TLB1 (MAS0 TLBSEL 1), EPN the
/// 4K page of EA. `tlbre` of a valid entry sets V in what MAS1 held.
/// Not found: MAS1.V clear, the rest as it was. What a real TLB does is
/// checked under QEMU's e6500 (tests/e6500_qemu.rs), not here.
pub fn tlb_lookup(regs: &mut std::collections::HashMap<usize, u64>, found: bool, ea: Option<u64>) {
    let r = |regs: &std::collections::HashMap<usize, u64>, n| regs.get(&n).copied().unwrap_or(0);
    let mas1 = r(regs, MAS1);
    if !found {
        regs.insert(MAS1, mas1 & 0x7fff_ffff);
        return;
    }
    match ea {
        Some(ea) => {
            let mas6 = r(regs, MAS6);
            let mas1 = 0x8000_0000
                | (mas6 & 0x3fff_0000)
                | (mas6 & 0xf80)
                | (mas6 & 2) << 12
                | (mas6 & 1) << 12;
            regs.insert(MAS0, 0x1000_0000);
            regs.insert(MAS1, mas1);
            regs.insert(MAS2, ea & !0xfff);
        }
        None => {
            regs.insert(MAS1, mas1 | 0x8000_0000);
        }
    }
}

/// The MAS register `name` a spec moves with `mtspr`/`mfspr`.
pub fn spr(machine: Machine, name: &str) -> Result<crate::ir::Spr, crate::ir::SprError> {
    use crate::ir::SprError;
    if machine != Machine::E6500 {
        return Err(SprError::NeedsMachine { name: name.into() });
    }
    let (s, spelled) = super::insn::spr_by_name(name).ok_or_else(|| SprError::Unknown {
        machine: "e6500",
        name: name.into(),
        known: "MAS0..MAS8 or MAS7_MAS3",
    })?;
    Ok(crate::ir::Spr {
        number: s.number(),
        name: spelled,
    })
}

/// Emit `f` with its operands in `regs` (EA first, then MAS6, as many
/// as `f` takes), using `scratch` (r0) to hold the MSR across the
/// interrupt-masked window.
pub fn lower(f: Form, regs: &[Reg], scratch: Reg, e: &mut dyn FnMut(Insn)) {
    let (ea, mas6) = match f {
        // The entry is in the MAS registers the spec wrote.
        Form::Tlbwe => {
            e(Insn::Tlbwe);
            return;
        }
        Form::Tlbilx(ALL) => {
            e(Insn::Tlbilx {
                t: ALL,
                ra: Reg::R0,
                rb: scratch,
            });
            return;
        }
        Form::Tlbilx(PID) => (scratch, regs[0]),
        _ => (regs[0], regs[1]),
    };
    e(Insn::Mfmsr { rt: scratch });
    e(Insn::Wrteei { e: false });
    e(Insn::Mtspr {
        spr: Spr::Mas(Mas::of::<6>()),
        rs: mas6,
    });
    e(match f {
        // T=1: EA unused; RB is r0 as in the kernel's PPC_TLBILX_PID(0,R0).
        Form::Tlbilx(t) => Insn::Tlbilx {
            t,
            ra: Reg::R0,
            rb: ea,
        },
        Form::Tlbivax => Insn::Tlbivax {
            ra: Reg::R0,
            rb: ea,
        },
        Form::Tlbwe => unreachable!("tlbwe returned above"),
    });
    e(Insn::Wrtee { rs: scratch });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::order::Class::{InvalidateCompletion, LocalInvalidate, TlbInvalidate};

    fn lowered(name: &str, regs: &[Reg]) -> Vec<Insn> {
        let mut v = Vec::new();
        let inv = invalidation(Machine::E6500, name, regs.len()).unwrap();
        inv.op::<Op>().lower(regs, R0, &mut |i| v.push(i));
        v
    }

    const R0: Reg = Reg::R0;
    const R3: Reg = Reg::of::<3>();
    const R4: Reg = Reg::of::<4>();

    #[test]
    fn forms_and_machines() {
        assert!(invalidation(Machine::E6500, "tlbilx va", 2).is_ok());
        assert!(invalidation(Machine::E6500, "tlbilx va", 1).is_err());
        assert!(invalidation(Machine::E6500, "tlbilx all", 0).is_ok());
        assert!(invalidation(Machine::E6500, "tlbilx lpid", 0)
            .unwrap_err()
            .to_string()
            .contains("T = 0, 1, 3"));
        assert!(invalidation(Machine::E6500, "tlbie ric=0 prs=1 r=1", 2)
            .unwrap_err()
            .to_string()
            .contains("Book III-S"));
        assert!(invalidation(Machine::Book3s, "tlbivax", 2)
            .unwrap_err()
            .to_string()
            .contains("machine e6500"));
        assert!(invalidation(Machine::Book3s, "tlbie ric=0 prs=1 r=1", 2).is_ok());
    }

    #[test]
    fn kernel_shapes() {
        // tlb_low.S _tlbil_va: mtspr SPRN_MAS6,r4; PPC_TLBILX_VA(0,R3).
        assert_eq!(
            lowered("tlbilx va", &[R3, R4]),
            vec![
                Insn::Mfmsr { rt: R0 },
                Insn::Wrteei { e: false },
                Insn::Mtspr {
                    spr: Spr::Mas(Mas::of::<6>()),
                    rs: R4
                },
                Insn::Tlbilx {
                    t: VA,
                    ra: R0,
                    rb: R3
                },
                Insn::Wrtee { rs: R0 },
            ]
        );
        assert_eq!(
            lowered("tlbilx pid", &[R4])[3],
            Insn::Tlbilx {
                t: PID,
                ra: R0,
                rb: R0
            }
        );
        assert_eq!(
            lowered("tlbivax", &[R3, R4])[3],
            Insn::Tlbivax { ra: R0, rb: R3 }
        );
        assert_eq!(
            lowered("tlbilx all", &[]),
            vec![Insn::Tlbilx {
                t: ALL,
                ra: R0,
                rb: R0
            }]
        );
    }

    #[test]
    fn no_book3s_synchronization() {
        for k in TABLE {
            for p in k.parts() {
                assert!(!matches!(p, "ptesync" | "eieio" | "sync"), "{}", k.name);
            }
        }
        // Each invalidation is completed by exactly the kernel's sequence
        // (the cheapest that does).
        let cheapest = |c: Class| {
            TABLE
                .iter()
                .filter(|k| k.covers(c, InvalidateCompletion))
                .min_by_key(|k| k.cost)
                .map(|k| k.name)
        };
        assert_eq!(cheapest(LocalInvalidate), Some("msync; isync"));
        assert_eq!(cheapest(TlbInvalidate), Some("mbar; tlbsync; msync"));
    }
}
