#!/bin/sh
# The arm64 kernel both kernel tests boot (scripts/kernel-tlb-test.sh,
# scripts/kernel-mm-test.sh; docs/kernel-proof.md): Debian's
# linux-source-6.1, tinyconfig + config.fragment, with
#   - arm64-tlb-shootdown.patch: the kernel's own flush_tlb_mm,
#     flush_tlb_page, __flush_tlb_range and flush_tlb_kernel_range call code
#     that a Kbuild rule generates from examples/arm64_tlb_range.inv;
#   - drivers/misc/sd_tlb/: the boot-time trials of the generated flushes.
# One tree and one Image serve both tests; reruns rebuild what changed.
#
# Environment:
#   SHOOTDOWN  the shootdown binary (default: cargo build --release
#              --no-default-features, target/release/shootdown)
#   KTLB_DIR   work directory (default: target/kernel-tlb)
#   JOBS       make -j (default 2)
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
KTLB_DIR=${KTLB_DIR:-$ROOT/target/kernel-tlb}
JOBS=${JOBS:-2}
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
TREE=$KTLB_DIR/linux-source-6.1
SPEC=examples/arm64_tlb_range.inv
PATCH=$ROOT/scripts/kernel-tlb/arm64-tlb-shootdown.patch
FRAG=$ROOT/scripts/kernel-tlb/config.fragment

say() { echo "kernel-build: $*"; }
die() { echo "kernel-build: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

. "$ROOT/scripts/lib/kernel-tree.sh"
kt_setup aarch64-linux-gnu-gcc

# Both tests build here; never two makes in one tree.
kt_lock "$KTLB_DIR"
t0=$(now)

# 1. Our own unpacked tree (never shared with anybody else's).
kt_unpack "$KTLB_DIR" "$TREE"

# 2. The patch (scripts/lib/kernel-tree.sh: reverted and reapplied when it
#    changes); <asm/tlbflush.h> is in
#    almost every object, so that costs a near-full rebuild.
kt_patch "$TREE" "$PATCH"

# 3. Configuration: tinyconfig + the fragment, redone when either or the
#    patch (its Kconfig) changes.
KMAKE="make -C $TREE ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- SHOOTDOWN=$SHOOTDOWN"
kt_configure "$TREE" "$FRAG" "$PATCH"

# 4. The spec the patch's Kbuild rule generates the kernel's flushes from.
install_if_changed "$ROOT/$SPEC" "$TREE/arch/arm64/mm/arm64_tlb_range.inv"

# 5. The boot-time trials: drivers/misc/sd_tlb/ and one Makefile line, with
#    the generated code regenerated on every run, three times:
#    sd_   default passes,
#    sdn_  --passes none (naive lowering: a barrier at every required edge),
#    sdnb_ --passes fission,fuse (no barrier placement at all: the control).
DEST=$TREE/drivers/misc/sd_tlb
mkdir -p "$DEST"
install_if_changed "$ROOT/scripts/kernel-tlb/Makefile" "$DEST/Makefile"
install_if_changed "$ROOT/scripts/kernel-tlb/sd_tlb_test.c" "$DEST/sd_tlb_test.c"
grep -qx 'obj-y += sd_tlb/' "$TREE/drivers/misc/Makefile" ||
    echo 'obj-y += sd_tlb/' >>"$TREE/drivers/misc/Makefile"
GEN=$KTLB_DIR/gen
rm -rf "$GEN"
gen() { # prefix passes name
    mkdir -p "$GEN/$3"
    "$SHOOTDOWN" gen "$SPEC" --target aarch64 --style linux --prefix "$1" \
        --passes "$2" --out "$GEN/$3"
    install_if_changed "$GEN/$3/arm64_tlb_range.aarch64.S" "$DEST/$3.S"
    install_if_changed "$GEN/$3/arm64_tlb_range.h" "$DEST/$3.h"
}
gen sd_ all sd_tlb_range
gen sdn_ none sd_tlb_range_none
gen sdnb_ fission,fuse sd_tlb_range_nb
# The control must have no barrier in the ASID sequences (the kernel-VA
# sequence keeps the spec's explicit `dsb ish; isb`, but loses its dsb ishst).
if awk '/SYM_FUNC_START\(sdnb_flush_tlb_(range|page)\)/{f=1} /SYM_FUNC_END/{f=0}
        f && /^[[:space:]]*(dsb|dmb|isb)/{bad=1} END{exit !bad}' "$DEST/sd_tlb_range_nb.S" ||
    grep -q 'dsb ishst' "$DEST/sd_tlb_range_nb.S"; then
    die "the barrier control (--passes fission,fuse) has placed barriers"
fi
t1=$(now)

# 6. Build (incremental after the first run).
say "building Image (make -j$JOBS)"
$KMAKE -j"$JOBS" Image >"$KTLB_DIR/build.log" 2>&1 ||
    { tail -40 "$KTLB_DIR/build.log" >&2; die "kernel build failed (log: $KTLB_DIR/build.log)"; }
t2=$(now)
# The kernel's flushes really are the generated ones (and the controls'
# broken variants are linked).
for f in sdk_flush_tlb_range sdk_flush_tlb_range_nl sdk_flush_tlb_range_r_nl sdk_flush_tlb_mm \
    sdk_flush_tlb_page sdk_flush_tlb_kernel_range sdkl_flush_tlb_range_nl sdkp_flush_tlb_range_nl; do
    grep -q " $f\$" "$TREE/System.map" || die "$f is not in the kernel"
done
grep -q SHOOTDN "$KTLB_DIR/build.log" && say "the Kbuild rule regenerated the kernel's flushes"
say "timings: setup+gen $((t1 - t0))s build $((t2 - t1))s"
