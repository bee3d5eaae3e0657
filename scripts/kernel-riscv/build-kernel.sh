#!/bin/sh
# The riscv64 kernel of scripts/kernel-riscv-test.sh (docs/kernel-proof.md,
# "The riscv64 kernel runs on our code"): Debian's linux-source-6.1,
# tinyconfig + config.fragment, with riscv-tlb-shootdown.patch: the
# kernel's own flush_tlb_mm, flush_tlb_page, flush_tlb_range and
# flush_tlb_all call code that a Kbuild rule generates from
# examples/riscv_tlb.inv, with the remote flushes done by IPIs (or by SBI,
# chosen at boot). Unpacked once into its own tree; reruns rebuild what
# changed.
#
# Environment:
#   SHOOTDOWN  the shootdown binary (default: cargo build --release
#              --no-default-features, target/release/shootdown)
#   KRV_DIR    work directory (default: target/kernel-riscv)
#   JOBS       make -j (default 2)
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
KRV_DIR=${KRV_DIR:-$ROOT/target/kernel-riscv}
JOBS=${JOBS:-2}
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
TREE=$KRV_DIR/linux-source-6.1
SPEC=examples/riscv_tlb.inv
PATCH=$ROOT/scripts/kernel-riscv/riscv-tlb-shootdown.patch
FRAG=$ROOT/scripts/kernel-riscv/config.fragment

say() { echo "kernel-riscv-build: $*"; }
die() { echo "kernel-riscv-build: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

. "$ROOT/scripts/lib/kernel-tree.sh"
kt_setup riscv64-linux-gnu-gcc

# Never two makes in one tree.
kt_lock "$KRV_DIR"
t0=$(now)

# 1. Our own unpacked tree (the arm64 and POWER tests have theirs).
kt_unpack "$KRV_DIR" "$TREE"

# 2. The patch (scripts/lib/kernel-tree.sh: reverted and reapplied when it
#    changes). It touches arch/riscv/mm
#    and arch/riscv/Kconfig only, so a change rebuilds a few objects.
kt_patch "$TREE" "$PATCH"

# 3. Configuration: tinyconfig + the fragment, redone when either or the
#    patch (its Kconfig) changes.
KMAKE="make -C $TREE ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- SHOOTDOWN=$SHOOTDOWN"
kt_configure "$TREE" "$FRAG" "$PATCH"

# 4. The spec the patch's Kbuild rule generates the kernel's flushes from.
install_if_changed "$ROOT/$SPEC" "$TREE/arch/riscv/mm/riscv_tlb.inv"
t1=$(now)

# 5. Build (incremental after the first run); usr/gen_init_cpio comes with it.
say "building Image (make -j$JOBS)"
$KMAKE -j"$JOBS" Image >"$KRV_DIR/build.log" 2>&1 ||
    { tail -40 "$KRV_DIR/build.log" >&2; die "kernel build failed (log: $KRV_DIR/build.log)"; }
t2=$(now)
# The kernel's flushes really are the generated ones (and the control's
# broken variant is linked).
for f in sdk_flush_tlb_range sdk_flush_tlb_page sdk_flush_tlb_mm sdk_flush_tlb_all \
    sdkp_flush_tlb_range shootdown_tlb_range; do
    grep -q " $f\$" "$TREE/System.map" || die "$f is not in the kernel"
done
# Both paths of the generated range flush are in it: sfence.vma per page
# and the Svinval batch.
for i in 'sfence.vma a1, a0' 'sfence.w.inval' 'sinval.vma' 'sfence.inval.ir'; do
    grep -q "^[[:space:]]*$i" "$TREE/arch/riscv/mm/riscv_tlb.riscv64.S" ||
        die "the generated riscv_tlb.riscv64.S has no $i"
done
grep -q SHOOTDN "$KRV_DIR/build.log" && say "the Kbuild rule regenerated the kernel's flushes"
say "timings: setup $((t1 - t0))s build $((t2 - t1))s"
