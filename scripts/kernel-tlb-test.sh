#!/bin/sh
# Proof in a running kernel (issue 8): build a small arm64 Linux from
# Debian's linux-source-6.1 with a built-in test that links the flushes
# shootdown generates from examples/arm64_tlb_range.inv, boot it under
# qemu-system-aarch64 and check the verdict lines on the serial console.
# See docs/kernel-proof.md.
#
# Environment:
#   SHOOTDOWN  the shootdown binary (default: cargo build --release --no-default-features)
#   KTLB_DIR   work directory (default: target/kernel-tlb); the unpacked tree
#              and its build stay there, so a rerun rebuilds in seconds
#   JOBS       make -j (default 2)
#   BOOT_TIMEOUT seconds for the boot (default 120)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
KTLB_DIR=${KTLB_DIR:-$ROOT/target/kernel-tlb}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
TREE=$KTLB_DIR/linux-source-6.1
export KTLB_DIR

say() { echo "kernel-tlb: $*"; }
die() { echo "kernel-tlb: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

for t in qemu-system-aarch64 timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done

# 1-5. The tree, its configuration, the patch, the generated code, the
#      build: scripts/kernel-tlb/build-kernel.sh (shared with
#      scripts/kernel-mm-test.sh).
t0=$(now)
sh "$ROOT/scripts/kernel-tlb/build-kernel.sh"
t2=$(now)

# 6. Boot on one CPU (nothing else runs TLBIs during a trial), without an
#    initramfs. panic=-1 + -no-reboot: the kernel finds no root after the
#    test, panics and QEMU exits. -nic none: no default NIC (its option ROM,
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
say "timings: build $((t2 - t0))s boot $((t3 - t2))s"
[ "$bad" -eq 0 ] || die "see $LOG"
say "OK"
