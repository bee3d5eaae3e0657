#!/bin/sh
# Build the bare-metal SMMUv3 command-queue oracle image (tests/smmuv3_qemu/)
# and run it under qemu-system-aarch64 -M virt,iommu=smmuv3 twice: "main"
# (the cases, with QEMU's smmuv3 trace and an execution log of the subject's
# code) and "timeout" (a command error stops the queue; trace only).
# tests/smmuv3_qemu.rs checks the results; see docs/smmuv3-qemu.md.
#
#   scripts/smmuv3-qemu-test.sh OUTDIR [SUBJECT.S]
#
# Without SUBJECT.S the subject is the C stand-in tests/smmuv3_qemu/
# smmu_standin.c, built with -DSD_BROKEN=$SD_BROKEN (default 0: correct).
# SUBJECT.S must define sd_tlb_inv_range, sd_tlb_inv_asid and sd_sync.
# Writes OUTDIR/{image.elf,subject.dis,range} and, per mode,
# OUTDIR/{console,qemu,status}-MODE.{txt,log}. Exit status: 0 when both
# runs finished (whatever their verdicts: the test reads status-MODE), 2 on
# a missing tool or a build error.
set -eu
set -f # no globbing: the -trace patterns below are QEMU's, not the shell's
OUT=${1:?usage: $0 OUTDIR [SUBJECT.S]}
SUBJECT=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/smmuv3_qemu
CROSS=${CROSS:-aarch64-linux-gnu-}
QEMU=${QEMU:-qemu-system-aarch64}
SD_BROKEN=${SD_BROKEN:-0}
TIMEOUT=${SMMUV3_QEMU_TIMEOUT:-60}

for t in "${CROSS}gcc" "${CROSS}ld" "${CROSS}nm" "${CROSS}objdump" "$QEMU" timeout; do
    command -v "$t" >/dev/null 2>&1 || {
        echo "smmuv3-qemu-test: missing $t (install it: scripts/install-deps.sh)" >&2
        exit 2
    }
done
mkdir -p "$OUT"
CFLAGS="-O2 -ffreestanding -nostdlib -mgeneral-regs-only -mstrict-align -fno-pic -fno-stack-protector -Wall -Werror"
"${CROSS}gcc" $CFLAGS -c "$SRC/start.S" -o "$OUT/start.o"
"${CROSS}gcc" $CFLAGS -c "$SRC/harness.c" -o "$OUT/harness.o"
if [ -n "$SUBJECT" ]; then
    "${CROSS}gcc" -c "$SUBJECT" -o "$OUT/subject.o"
else
    "${CROSS}gcc" $CFLAGS -DSD_BROKEN="$SD_BROKEN" -c "$SRC/smmu_standin.c" -o "$OUT/subject.o"
fi
"${CROSS}ld" -nostdlib --no-warn-rwx-segments -T "$SRC/image.ld" -o "$OUT/image.elf" \
    "$OUT/start.o" "$OUT/subject.o" "$OUT/harness.o"
lo=$("${CROSS}nm" "$OUT/image.elf" | awk '$3 == "__subject_start" { print $1 }')
hi=$("${CROSS}nm" "$OUT/image.elf" | awk '$3 == "__subject_end" { print $1 }')
[ -n "$lo" ] && [ -n "$hi" ] || { echo "smmuv3-qemu-test: no subject range" >&2; exit 2; }
echo "0x$lo 0x$hi" >"$OUT/range"
"${CROSS}objdump" -d --start-address="0x$lo" --stop-address="0x$hi" "$OUT/image.elf" >"$OUT/subject.dis"
last=$(printf '0x%x' $((0x$hi - 1)))

# The trace events the test parses (formats: QEMU hw/arm/trace-events).
# smmuv3_read_mmio is left out: every CONS poll would be a line.
TRACE="-trace smmuv3_cmdq* -trace smmuv3_s1_range_inval -trace smmuv3_write_mmio \
-trace smmuv3_write_gerror* -trace smmuv3_unhandled_cmd -trace smmuv3_record_event \
-trace smmu_iotlb_inv*"

run() { # mode, extra qemu args...
    mode=$1
    shift
    rm -f "$OUT/qemu-$mode.log"
    set +e
    timeout "$TIMEOUT" "$QEMU" -M virt,iommu=smmuv3 -cpu cortex-a57 -m 128M -nographic \
        -nic none -monitor none -serial stdio -semihosting -kernel "$OUT/image.elf" -append "$mode" \
        -D "$OUT/qemu-$mode.log" $TRACE "$@" >"$OUT/console-$mode.txt" 2>"$OUT/stderr-$mode.txt"
    echo $? >"$OUT/status-$mode"
    set -e
}
# -singlestep: one instruction per translation block, so with nochain
# every executed instruction of [lo, hi] is one "Trace" line, in order with
# the trace events of its MMIO accesses.
run main -singlestep -d exec,nochain -dfilter "0x$lo..$last"
run timeout
