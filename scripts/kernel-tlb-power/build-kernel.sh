#!/bin/sh
# The POWER kernel both POWER kernel tests boot (scripts/kernel-tlb-power-test.sh,
# scripts/kernel-mm-power-test.sh; docs/kernel-proof.md): a small ppc64le
# Linux (powernv, radix MMU, 64K pages, SMP) from Debian's linux-source-6.1,
# tinyconfig + config.fragment, with
#   - radix-tlb-shootdown.patch: the radix flush sequences of
#     arch/powerpc/mm/book3s64/radix_tlb.c call code that a Kbuild rule
#     generates from examples/radix_tlb.inv (shootdown_tlb= picks the mode);
#   - drivers/misc/sd_radix/: the boot-time trials of the generated flushes
#     (they run when the kernel is booted on one CPU).
# One tree and one vmlinux serve both tests; reruns rebuild what changed.
#
# Environment:
#   SHOOTDOWN  the shootdown binary (default: cargo build --release --no-default-features)
#   KTLBP_DIR  work directory (default: target/kernel-tlb-power)
#   JOBS       make -j (default 2)
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
KTLBP_DIR=${KTLBP_DIR:-$ROOT/target/kernel-tlb-power}
JOBS=${JOBS:-2}
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
TREE=$KTLBP_DIR/linux-source-6.1
SPEC=examples/radix_tlb.inv
HERE=$ROOT/scripts/kernel-tlb-power
FRAG=$HERE/config.fragment
PATCH=$HERE/radix-tlb-shootdown.patch

say() { echo "kernel-tlb-power: $*"; }
die() { echo "kernel-tlb-power: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

. "$ROOT/scripts/lib/kernel-tree.sh"
kt_setup powerpc64le-linux-gnu-gcc

# Both tests build here; never two makes in one tree.
kt_lock "$KTLBP_DIR"
t0=$(now)

# 1. Our own unpacked tree.
kt_unpack "$KTLBP_DIR" "$TREE"

# 2. The patch (scripts/lib/kernel-tree.sh: reverted and reapplied when it
#    changes).
kt_patch "$TREE" "$PATCH"

# 3. Configuration: tinyconfig + the fragment, redone when either or the
#    patch (its Kconfig) changes.
KMAKE="make -C $TREE ARCH=powerpc CROSS_COMPILE=powerpc64le-linux-gnu- SHOOTDOWN=$SHOOTDOWN"
kt_configure "$TREE" "$FRAG" "$PATCH"

# 4. The spec the patch's Kbuild rule generates the kernel's flushes from.
install_if_changed "$ROOT/$SPEC" "$TREE/arch/powerpc/mm/book3s64/shootdown_radix.inv"

# 5. The boot-time trials: drivers/misc/sd_radix/ and one Makefile line.
DEST=$TREE/drivers/misc/sd_radix
mkdir -p "$DEST"
install_if_changed "$HERE/Makefile" "$DEST/Makefile"
install_if_changed "$HERE/sd_radix_test.c" "$DEST/sd_radix_test.c"
grep -qx 'obj-y += sd_radix/' "$TREE/drivers/misc/Makefile" ||
    echo 'obj-y += sd_radix/' >>"$TREE/drivers/misc/Makefile"

# 6. The trials' flushes, regenerated on every run, four times:
#    sd_   default passes,
#    sdn_  --passes none (naive lowering: a barrier at every required edge),
#          both with the spec's features (POWER9 tlbie errata, ISA 3.1) off:
#          the errata fixups' extra tlbies would flush everything under
#          QEMU and hide a wrong first one (docs/kernel-proof.md);
#    sde_  default passes, the features as CPU feature sections that the
#          kernel patches at boot for this CPU (QEMU's POWER9 DD2.0: both
#          errata on);
#    sdnb_ --passes fission,fuse and every feature off: no barrier placement
#          and none of the errata fixups' explicit ptesyncs (the control).
GEN=$KTLBP_DIR/gen
rm -rf "$GEN"
gen() { # prefix name gen-options...
    p=$1 name=$2
    shift 2
    mkdir -p "$GEN/$name"
    "$SHOOTDOWN" gen "$ROOT/$SPEC" --target power64le --style linux --prefix "$p" \
        "$@" --out "$GEN/$name"
    install_if_changed "$GEN/$name/radix_tlb.power64le.S" "$DEST/$name.S"
    install_if_changed "$GEN/$name/radix_tlb.h" "$DEST/$name.h"
}
OFF="--feature erat_bug=off --feature stq_bug=off --feature arch31=off"
gen sd_ sd_radix_tlb $OFF
gen sdn_ sd_radix_tlb_none --passes none $OFF
gen sde_ sd_radix_tlb_errata
gen sdnb_ sd_radix_tlb_nb --passes fission,fuse $OFF
grep -q 'FTR_SECTION' "$DEST/sd_radix_tlb_errata.S" || die "sde_ has no feature sections"
grep -q 'FTR_SECTION' "$DEST/sd_radix_tlb.S" && die "sd_ has feature sections"
# The control has no barrier except the ptesync that _tlbiel_pid's body
# writes itself (`barrier ptesync` after the tlbiel loop): in
# flush_tlb_pid_local and in flush_tlb_range_local's past-the-ceiling arm.
if awk '/^_GLOBAL\(/{f = ($0 !~ /_GLOBAL\(sdnb_flush_tlb_(pid|range)_local\)/)}
        f && /^[[:space:]]*(ptesync|eieio|tlbsync|sync|lwsync|isync|cp_abort)([[:space:]]|$)/{bad=1}
        END{exit !bad}' "$DEST/sd_radix_tlb_nb.S"; then
    die "the barrier control (--passes fission,fuse) has barriers"
fi
t1=$(now)

# 7. Build (incremental after the first run).
say "building vmlinux (make -j$JOBS)"
$KMAKE -j"$JOBS" vmlinux >"$KTLBP_DIR/build.log" 2>&1 ||
    { tail -40 "$KTLBP_DIR/build.log" >&2; die "kernel build failed (log: $KTLBP_DIR/build.log)"; }
t2=$(now)
# The trials' variants, the kernel's own generated flushes and the
# controls' broken variant are all linked.
for f in sd_flush_tlb_page sdn_flush_tlb_range sde_flush_tlb_pid sdnb_flush_tlb_all \
    sdk_flush_tlb_page sdk_flush_tlb_range_local sdkn_flush_tlb_pid sdkp_flush_tlb_range \
    shootdown_radix_range; do
    grep -q " $f\$" "$TREE/System.map" || die "$f is not in the kernel"
done
grep -q SHOOTDN "$KTLBP_DIR/build.log" && say "the Kbuild rule regenerated the kernel's flushes"
say "timings: setup+gen $((t1 - t0))s build $((t2 - t1))s"
