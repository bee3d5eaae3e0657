//! Reused loads stop at device accesses and computed stores; release after
//! MMIO on POWER; narrow lock owners.

use super::*;
use crate::support::Release;

const REUSE: &str = "
target aarch64, power64
device d {
    reg go  0x0 u32 le
    reg st  0x4 u32 le
    reg out 0x8 u32 le
}
seq shared(p: ptr u32) {
    d.out = p[0]
    d.go = 1
    poll d.st == 0 limit 3
    d.out = p[0]
}
seq private_mem(p: ptr u32 private) {
    d.out = p[0]
    d.go = 1
    poll d.st == 0 limit 3
    d.out = p[0]
}
seq plain(p: ptr u32, q: ptr u32) {
    q[0] = p[0]
    q[4] = p[0]
}
";

/// A load is reused only where nothing that can change the memory lies
/// between: the device may write `p[0]` by DMA after the doorbell, so the
/// read after the poll reloads, unless the memory is declared private.
#[test]
fn reuse_loads_stops_at_device_accesses() {
    let prog = load("reuse", REUSE);
    for target in [Target::Aarch64, Target::Power64] {
        let c = shootdown::compile(&prog, target, &support::options("all")).unwrap();
        let loads = |name: &str| {
            let s = c.opt.seqs.iter().find(|s| s.name == name).unwrap();
            let mut n = 0;
            shootdown::ir::walk(&s.body, &mut |x| {
                n += usize::from(matches!(
                    x,
                    Stmt::Mem {
                        op: MemOp::Load { .. },
                        ..
                    }
                ))
            });
            n
        };
        assert_eq!(loads("shared"), 2, "{target}: reload after the doorbell");
        assert_eq!(
            loads("private_mem"),
            1,
            "{target}: private memory is reused"
        );
        assert_eq!(loads("plain"), 1, "{target}: nothing between: reused");
    }
}

/// A store at a computed offset may overwrite the element an earlier
/// load read, private memory included (issue 42: `p[8]` was reused
/// across `p[x * 8] = 5`): the second read reloads, and the device sees
/// 5 when `x` is 1.
#[test]
fn reuse_loads_stops_at_a_store_at_a_computed_offset() {
    let src = "target aarch64, power64\ndevice d { reg a 0x0 u64 le }\nseq s(p: ptr u64 private, x: u64) {\n  d.a = p[8]\n  p[x * 8] = 5\n  d.a = p[8]\n}\n";
    let prog = load("reuse_at", src);
    for target in [Target::Aarch64, Target::Power64] {
        let c = shootdown::compile(&prog, target, &support::options("all")).unwrap();
        let mut n = 0;
        shootdown::ir::walk(&c.opt.seqs[0].body, &mut |x| {
            n += usize::from(matches!(
                x,
                Stmt::Mem {
                    op: MemOp::Load { .. },
                    ..
                }
            ))
        });
        assert_eq!(n, 2, "{target}: reload after p[x * 8] = 5");
    }
}

const RELEASE: &str = "
target power64, power64le, aarch64, x86_64
device d { reg a 0x0 u64 be }
seq mmio(lock: ptr u32, cpu: u64, x: u64) {
    acquire lock = cpu + 1
    d.a = x
    release lock
}
seq memory(lock: ptr u32, cpu: u64, p: ptr u64, x: u64) {
    acquire lock = cpu + 1
    p[0] = x
    release lock
}
";

/// Linux `arch_spin_unlock` issues `sync` (not `lwsync`) when MMIO was
/// done under the lock (`io_sync`): lwsync does not order
/// caching-inhibited stores. AArch64 `stlr` and x86-64 TSO order them.
#[test]
fn release_after_mmio_is_a_full_sync_on_power() {
    let prog = load("release", RELEASE);
    for target in shootdown::output::default_targets(&prog) {
        let c = shootdown::compile(&prog, target, &support::options("all")).unwrap();
        // Without device accesses `weaken-release` gets away with eieio
        // (the section only stores).
        for name in ["mmio", "memory"] {
            let i = prog.seqs.iter().position(|s| s.name == name).unwrap();
            let insns: Vec<_> = c.funcs[i].insns().collect();
            // The releasing store is the last store (the out-of-line
            // spin only loads).
            let rel = insns
                .iter()
                .rposition(|l| l.class == shootdown::isa::mach::InsnClass::Store)
                .unwrap();
            match support::arch(target).release {
                Release::BarrierBefore { mmio, memory } => {
                    let want = if name == "mmio" { mmio } else { memory };
                    assert_eq!(insns[rel - 1].text, want, "{target} {name}: {insns:#?}")
                }
                Release::Store(m) => {
                    assert!(insns[rel].mnemonic.starts_with(m), "{target} {name}")
                }
            }
        }
    }
}

const OWNER: &str = "
target power64, power64le, aarch64, x86_64
seq take(p: ptr u8, o: u64) {
    acquire p[0] = o held 1
}
";

/// An owner that does not fit the byte (or is 0) is refused with -EINVAL
/// before the lock is touched; one that fits is stored and compared as is.
#[test]
fn narrow_lock_owner_fits_or_is_refused() {
    let prog = load("owner", OWNER);
    let cases: &[(u64, u8, i64, u8)] = &[
        // (owner, lock before, return, lock after)
        (0x41, 0, 0, 0x41),
        (0x41, 0x41, 1, 0x41),
        (0x141, 0x41, -22, 0x41),
        (0x100, 0, -22, 0),
        (0, 0, -22, 0),
        (0xff, 0, 0, 0xff),
    ];
    for target in shootdown::output::default_targets(&prog) {
        let ws = cases
            .iter()
            .map(|&(o, before, _, _)| {
                world(
                    &prog,
                    "take",
                    &[("o", o)],
                    1,
                    &[("p", &[before, 0, 0, 0])],
                    target,
                )
            })
            .collect();
        let runs = qemu(&prog, "owner", target, &support::options("all"), ws);
        for (r, &(o, before, ret, after)) in runs.iter().zip(cases) {
            assert_eq!(r.ret, ret, "{target}: owner {o:#x}, lock {before:#x}");
            assert_eq!(
                r.memory[&0][0], after,
                "{target}: owner {o:#x}, lock {before:#x}"
            );
        }
    }
}
