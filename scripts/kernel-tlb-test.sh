#!/bin/sh
# Proof in a running kernel (issue 8): build a tinyconfig arm64 Linux from
# Debian's linux-source-6.1 with a built-in test that links the flushes
# shootdown generates from examples/arm64_tlb_range.inv, boot it under
# qemu-system-aarch64 and check the verdict lines on the serial console.
# See docs/kernel-proof.md.
#
# Environment:
#   SHOOTDOWN  the shootdown binary (default: cargo run --no-default-features)
#   KTLB_DIR   work directory (default: target/kernel-tlb); the unpacked tree
#              and its build stay there, so a rerun rebuilds in seconds
#   JOBS       make -j (default 2)
#   BOOT_TIMEOUT seconds for the boot (default 120)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
KTLB_DIR=${KTLB_DIR:-$ROOT/target/kernel-tlb}
JOBS=${JOBS:-2}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
TREE=$KTLB_DIR/linux-source-6.1
KMAKE="make -C $TREE ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
SPEC=examples/arm64_tlb_range.inv

say() { echo "kernel-tlb: $*"; }
die() { echo "kernel-tlb: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

for t in aarch64-linux-gnu-gcc qemu-system-aarch64 flex bison bc timeout xz; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done
[ -f "$SRC_TAR" ] || die "missing $SRC_TAR (apt-get install linux-source-6.1)"

# Copy only when the content changed, so make sees no spurious change.
install_if_changed() {
    if ! cmp -s "$1" "$2"; then cp "$1" "$2"; fi
}

mkdir -p "$KTLB_DIR"
t0=$(now)

# 1. Our own unpacked tree (never shared with anybody else's).
if [ ! -f "$TREE/.sd-unpacked" ]; then
    say "unpacking $SRC_TAR into $KTLB_DIR"
    rm -rf "$TREE"
    tar -C "$KTLB_DIR" -xf "$SRC_TAR"
    touch "$TREE/.sd-unpacked"
fi

# 2. Configuration: tinyconfig + the console fragment, redone when the
#    fragment changes.
FRAG=$ROOT/scripts/kernel-tlb/config.fragment
if [ ! -f "$TREE/.config" ] || ! cmp -s "$FRAG" "$TREE/.sd-fragment"; then
    say "configuring (tinyconfig + $FRAG)"
    $KMAKE tinyconfig >/dev/null
    (cd "$TREE" && ./scripts/kconfig/merge_config.sh -m -O . .config "$FRAG" >/dev/null)
    $KMAKE olddefconfig >/dev/null
    for opt in $(grep '^CONFIG_' "$FRAG"); do
        grep -qx "$opt" "$TREE/.config" || die "config lost $opt"
    done
    cp "$FRAG" "$TREE/.sd-fragment"
fi

# 3. The test, as a small patch to the tree: drivers/misc/sd_tlb/ and one
#    Makefile line.
DEST=$TREE/drivers/misc/sd_tlb
mkdir -p "$DEST"
install_if_changed "$ROOT/scripts/kernel-tlb/Makefile" "$DEST/Makefile"
install_if_changed "$ROOT/scripts/kernel-tlb/sd_tlb_test.c" "$DEST/sd_tlb_test.c"
grep -qx 'obj-y += sd_tlb/' "$TREE/drivers/misc/Makefile" ||
    echo 'obj-y += sd_tlb/' >>"$TREE/drivers/misc/Makefile"

# 4. The generated code, regenerated from the spec on every run:
#    sd_   default passes,
#    sdn_  --passes none (naive lowering: a barrier at every required edge),
#    sdnb_ --passes fission,fuse (no barrier placement at all: the control).
GEN=$KTLB_DIR/gen
rm -rf "$GEN"
gen() { # prefix passes name
    mkdir -p "$GEN/$3"
    if [ -n "${SHOOTDOWN:-}" ]; then
        "$SHOOTDOWN" gen "$SPEC" --target aarch64 --style linux --prefix "$1" \
            --passes "$2" --out "$GEN/$3"
    else
        cargo run -q --no-default-features -- gen "$SPEC" --target aarch64 \
            --style linux --prefix "$1" --passes "$2" --out "$GEN/$3"
    fi
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

# 5. Build (incremental after the first run).
say "building Image (make -j$JOBS)"
$KMAKE -j"$JOBS" Image >"$KTLB_DIR/build.log" 2>&1 ||
    { tail -40 "$KTLB_DIR/build.log" >&2; die "kernel build failed (log: $KTLB_DIR/build.log)"; }
t2=$(now)

# 6. Boot. panic=-1 + -no-reboot: the kernel finds no init after the test,
#    panics and QEMU exits. -nic none: no default NIC (its option ROM,
#    efi-virtio.rom, is not installed with --no-install-recommends).
say "booting under qemu-system-aarch64 -M virt -cpu max"
LOG=$KTLB_DIR/console.log
rc=0
timeout "$BOOT_TIMEOUT" qemu-system-aarch64 -M virt -cpu max -smp 1 -m 256 -nographic \
    -kernel "$TREE/arch/arm64/boot/Image" -append "console=ttyAMA0 panic=-1" \
    -no-reboot -nic none </dev/null >"$LOG.raw" 2>&1 || rc=$?
tr -d '\r' <"$LOG.raw" >"$LOG"   # the serial console ends lines with CR LF
t3=$(now)
[ "$rc" -eq 124 ] && say "boot timed out after ${BOOT_TIMEOUT}s (checking what was printed)"

grep 'sd-tlb:' "$LOG" | sed 's/^\[[^]]*\] //' || true

# 7. Verdicts: every expected line, with the expected verdict.
bad=0
expect() { # variant case mapping expect verdict-regex
    line=$(grep "sd-tlb: trial $1 $2 $3 " "$LOG" || true)
    if [ -z "$line" ]; then
        echo "kernel-tlb: missing trial $1 $2" >&2; bad=1; return
    fi
    echo "$line" | grep -qE "read=A stale=A after=. expect=$4 ($5)\$" ||
        { echo "kernel-tlb: wrong verdict: $line" >&2; bad=1; }
}
for v in sd sdn; do
    for c in page range-around range-all; do expect $v $c nG new PASS; done
    for c in ctl-other-va ctl-range-thr; do expect $v $c nG stale PASS; done
    for c in kernel-page kernel-range-around kernel-range-all; do
        expect $v $c global new PASS
    done
    for c in ctl-kernel-other-va ctl-kernel-range-thr; do
        expect $v $c global stale PASS
    done
done
for c in page range-around range-all; do expect sdnb $c nG control 'CAUGHT|UNCAUGHT'; done
for c in kernel-page kernel-range-around kernel-range-all; do
    expect sdnb $c global control 'CAUGHT|UNCAUGHT'
done
grep -qE 'sd-tlb: summary trials=26 pass=[0-9]+ fail=0 void=0 uncaught=[0-9]+$' "$LOG" ||
    { echo "kernel-tlb: missing or failing summary line" >&2; bad=1; }
say "timings: setup+gen $((t1 - t0))s build $((t2 - t1))s boot $((t3 - t2))s"
[ "$bad" -eq 0 ] || die "see $LOG"
say "OK"
