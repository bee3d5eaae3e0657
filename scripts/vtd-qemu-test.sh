#!/bin/sh
# Build the bare-metal VT-d invalidation-queue oracle image (tests/vtd_qemu/)
# and run it under qemu-system-x86_64 -M q35 -device intel-iommu twice:
# "main" (the cases, with QEMU's vtd trace and an execution log of the
# subject's code) and "timeout" (an invalid descriptor stops the queue;
# trace only). tests/vtd_qemu.rs checks the results; see docs/vtd-qemu.md.
#
#   scripts/vtd-qemu-test.sh OUTDIR [SUBJECT.S]
#
# Without SUBJECT.S the subject is the C stand-in tests/vtd_qemu/
# vtd_standin.c, built with -DSD_BROKEN=$SD_BROKEN (default 0: correct;
# a broken one runs without the execution log).
# SUBJECT.S must define sd_qi_flush_iotlb and sd_qi_flush_context.
# Writes OUTDIR/{image.elf,image.bin,subject.dis,range} and, per mode,
# OUTDIR/{console,stderr}-MODE.txt, qemu-MODE.log and status-MODE: the
# image's exit code (0 all checks passed, 1 a check failed, 3 an
# exception; isa-debug-exit makes QEMU exit with (code << 1) | 1), or
# "qemu N" when QEMU exited otherwise (N: its status; 124 the timeout, 0 a
# shutdown such as a triple fault under -no-reboot). Exit status: 0 when
# both runs happened (whatever their verdicts: the test reads
# status-MODE), 2 on a missing tool or a build error.
set -eu
set -f # no globbing: the -trace patterns below are QEMU's, not the shell's
OUT=${1:?usage: $0 OUTDIR [SUBJECT.S]}
SUBJECT=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/tests/vtd_qemu
CC=${CC:-gcc}
QEMU=${QEMU:-qemu-system-x86_64}
SD_BROKEN=${SD_BROKEN:-0}
TIMEOUT=${VTD_QEMU_TIMEOUT:-60}

for t in "$CC" ld nm objdump objcopy "$QEMU" timeout; do
    command -v "$t" >/dev/null 2>&1 || {
        echo "vtd-qemu-test: missing $t (install it: scripts/install-deps.sh)" >&2
        exit 2
    }
done
mkdir -p "$OUT"
CFLAGS="-m64 -O2 -ffreestanding -nostdlib -fno-pic -fno-pie -mno-red-zone -mcmodel=small \
-mgeneral-regs-only -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror"
"$CC" $CFLAGS -c "$SRC/start.S" -o "$OUT/start.o"
"$CC" $CFLAGS -c "$SRC/harness.c" -o "$OUT/harness.o"
if [ -n "$SUBJECT" ]; then
    "$CC" -m64 -c "$SUBJECT" -o "$OUT/subject.o"
else
    "$CC" $CFLAGS -DSD_BROKEN="$SD_BROKEN" -c "$SRC/vtd_standin.c" -o "$OUT/subject.o"
fi
ld -m elf_x86_64 -nostdlib -no-pie -z noexecstack -z max-page-size=0x1000 --no-warn-rwx-segments \
    -T "$SRC/image.ld" -o "$OUT/image.elf" "$OUT/start.o" "$OUT/subject.o" "$OUT/harness.o"
objcopy -O binary -j .text -j .rodata -j .data "$OUT/image.elf" "$OUT/image.bin"
lo=$(nm "$OUT/image.elf" | awk '$3 == "__subject_start" { print $1 }')
hi=$(nm "$OUT/image.elf" | awk '$3 == "__subject_end" { print $1 }')
[ -n "$lo" ] && [ -n "$hi" ] || { echo "vtd-qemu-test: no subject range" >&2; exit 2; }
echo "0x$lo 0x$hi" >"$OUT/range"
objdump -d --no-show-raw-insn --start-address="0x$lo" --stop-address="0x$hi" \
    "$OUT/image.elf" >"$OUT/subject.dis"
last=$(printf '0x%x' $((0x$hi - 1)))

# The trace events the test parses (formats: QEMU hw/i386/trace-events).
# vtd_reg_read is left out: every register poll would be a line.
TRACE="-trace vtd_inv_* -trace vtd_reg_write -trace vtd_reg_write_gcmd \
-trace vtd_warn_invalid_qi_tail -trace vtd_fsts_* -trace vtd_iotlb_reset -trace vtd_context_cache_reset"

run() { # mode, extra qemu args...
    mode=$1
    shift
    rm -f "$OUT/qemu-$mode.log"
    set +e
    timeout "$TIMEOUT" "$QEMU" -M q35 -accel tcg -m 128M -nodefaults -display none -no-reboot \
        -device intel-iommu -device isa-debug-exit,iobase=0xf4,iosize=4 \
        -serial stdio -monitor none -kernel "$OUT/image.bin" -append "$mode" \
        -D "$OUT/qemu-$mode.log" $TRACE "$@" >"$OUT/console-$mode.txt" 2>"$OUT/stderr-$mode.txt"
    rc=$?
    set -e
    if [ $((rc % 2)) -eq 1 ] && [ "$rc" -lt 124 ]; then
        echo $(((rc - 1) / 2)) >"$OUT/status-$mode"
    else
        echo "qemu $rc" >"$OUT/status-$mode"
    fi
}
# -singlestep: one instruction per translation block, so with nochain
# every executed instruction of [lo, hi] is one "Trace" line, in order with
# the trace events of its MMIO accesses. Not for a broken stand-in
# (SD_BROKEN != 0): its calls may poll to their bound, a line per
# instruction.
if [ "$SD_BROKEN" = 0 ] || [ -n "$SUBJECT" ]; then
    run main -singlestep -d exec,nochain -dfilter "0x$lo..$last"
else
    run main
fi
run timeout
