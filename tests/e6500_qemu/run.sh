#!/bin/sh
# run.sh HARNESS_DIR OUT_DIR [program .c/.S files...]
#
# Builds the e6500 harness (HARNESS_DIR: start.S, harness.c, link.ld) with
# the program files (one defining test_main, plus the code under test; by
# default the demo: demo.c tlbil_va.S), boots it on QEMU's e6500 and prints
# the UART. Exit status 0 iff the last UART line is "PASS" and the guest
# powered QEMU off.
# OUT_DIR gets image.elf, image.dis (objdump), uart.log and qemu.log.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 HARNESS_DIR OUT_DIR [files...]" >&2; exit 2; }
H=$(cd "$1" && pwd)
OUT=$2
shift 2
[ $# -gt 0 ] || set -- "$H/demo.c" "$H/tlbil_va.S"
mkdir -p "$OUT"

CC=${CROSS:-powerpc64-linux-gnu-}gcc
# -msoft-float -mno-altivec: MSR[FP] and MSR[SPV] stay off, so any FP or
# vector instruction would trap; -fno-tree-loop-distribute-patterns keeps
# memset from compiling into a call to itself.
CFLAGS="-mcpu=e6500 -m64 -mbig-endian -mabi=elfv1 -O2 -ffreestanding -nostdlib -static
  -fno-pie -no-pie -msoft-float -mno-altivec -fno-tree-loop-distribute-patterns
  -fno-asynchronous-unwind-tables -fno-stack-protector -Wall -I$H"
INC=""
for f in "$@"; do INC="$INC -I$(dirname "$f")"; done

# shellcheck disable=SC2086
$CC $CFLAGS $INC -T "$H/link.ld" -Wl,--build-id=none,--no-warn-rwx-segments -o "$OUT/image.elf" \
	"$H/start.S" "$H/harness.c" "$@"
${CROSS:-powerpc64-linux-gnu-}objdump -d -M e6500 "$OUT/image.elf" >"$OUT/image.dis"

# No -bios: QEMU 7.2 boots the ELF directly (hw/ppc/e500.c). The guest ends
# the run by powering off through the GPIO; timeout covers a hang. The UART
# goes to a file so that nothing depends on stdio being a tty; -d logs
# what QEMU itself says is invalid or unimplemented.
rm -f "$OUT/uart.log" "$OUT/qemu.log"
status=0
timeout "${QEMU_TIMEOUT:-20}" qemu-system-ppc64 -M ppce500 -cpu e6500 -m 256 \
	-nodefaults -display none -monitor none -no-reboot \
	-serial "file:$OUT/uart.log" -kernel "$OUT/image.elf" \
	-d guest_errors,unimp -D "$OUT/qemu.log" </dev/null || status=$?

cat "$OUT/uart.log"
if [ -s "$OUT/qemu.log" ]; then
	echo "--- qemu.log (guest_errors,unimp):"
	sort "$OUT/qemu.log" | uniq -c | head -40
fi
# PASS counts only if the guest also powered off (a hang after it is a fail).
[ "$status" = 0 ] || { echo "qemu exited with status $status (124 = timeout)"; exit 1; }
[ "$(grep -v '^$' "$OUT/uart.log" | tail -n 1)" = PASS ]
