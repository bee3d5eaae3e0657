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

for t in riscv64-linux-gnu-gcc flex bison bc xz patch flock; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done
[ -f "$SRC_TAR" ] || die "missing $SRC_TAR (apt-get install linux-source-6.1)"
if [ -z "${SHOOTDOWN:-}" ]; then
    cargo build --release --no-default-features --quiet
    SHOOTDOWN=$ROOT/target/release/shootdown
fi
SHOOTDOWN=$(cd "$(dirname "$SHOOTDOWN")" && pwd)/$(basename "$SHOOTDOWN")

# Copy only when the content changed, so make sees no spurious change.
install_if_changed() {
    if ! cmp -s "$1" "$2"; then cp "$1" "$2"; fi
}

mkdir -p "$KRV_DIR"
# Never two makes in one tree.
exec 9>"$KRV_DIR/.lock"
flock 9
t0=$(now)

# 1. Our own unpacked tree (the arm64 and POWER tests have theirs).
if [ ! -f "$TREE/.sd-unpacked" ]; then
    say "unpacking $SRC_TAR into $KRV_DIR"
    rm -rf "$TREE"
    tar -C "$KRV_DIR" -xf "$SRC_TAR"
    touch "$TREE/.sd-unpacked"
fi

# 2. The patch. A changed patch is first reverted as it was applied (its
#    copy .sd-patch), then the new one applied. It touches arch/riscv/mm
#    and arch/riscv/Kconfig only, so a change rebuilds a few objects.
if ! cmp -s "$PATCH" "$TREE/.sd-patch"; then
    if [ -f "$TREE/.sd-patch" ]; then
        say "reverting the previous riscv-tlb-shootdown.patch"
        patch -s -R -p1 -d "$TREE" <"$TREE/.sd-patch" || die "cannot revert the old patch"
        rm -f "$TREE/.sd-patch"
    fi
    say "applying riscv-tlb-shootdown.patch"
    patch -s -p1 -d "$TREE" <"$PATCH" || die "patch does not apply"
    cp "$PATCH" "$TREE/.sd-patch"
fi

# 3. Configuration: tinyconfig + the fragment, redone when the fragment or
#    the patch (its Kconfig) changes. Every option the fragment sets or
#    unsets must survive.
KMAKE="make -C $TREE ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- SHOOTDOWN=$SHOOTDOWN"
if [ ! -f "$TREE/.config" ] || ! cat "$FRAG" "$PATCH" | cmp -s - "$TREE/.sd-fragment"; then
    say "configuring (tinyconfig + $FRAG)"
    $KMAKE tinyconfig >/dev/null
    (cd "$TREE" && ./scripts/kconfig/merge_config.sh -m -O . .config "$FRAG" >/dev/null 2>&1)
    $KMAKE olddefconfig >/dev/null
    for opt in $(grep '^CONFIG_' "$FRAG"); do
        grep -qx "$opt" "$TREE/.config" || die "config lost $opt"
    done
    for opt in $(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$FRAG"); do
        grep -q "^$opt=" "$TREE/.config" && die "config could not unset $opt"
    done
    cat "$FRAG" "$PATCH" >"$TREE/.sd-fragment"
fi

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
