#!/bin/sh
# The kernel runs on our code (issue 19): the arm64 kernel of
# scripts/kernel-tlb/build-kernel.sh, whose own flush_tlb_mm,
# flush_tlb_page, __flush_tlb_range and flush_tlb_kernel_range call the code
# shootdown generates from examples/arm64_tlb_range.inv, boots on 4 vCPUs
# of qemu-system-aarch64 (multi-threaded TCG: a TLBI ...IS reaches every
# vCPU, a local one only its own) with a static busybox initramfs and runs
# a TLB stress program (scripts/kernel-tlb/tlb_stress.c) and some of the
# kernel's mm selftests. The same kernel booted with a broken generated
# flush must make the stress program fail. See docs/kernel-proof.md.
#
# Boots (shootdown_tlb= on the command line selects the flush code):
#   gen       generated code (range TLBIs: QEMU's -cpu max has them):
#             stress + selftests, must pass
#   norange   generated code without range TLBIs (per-page loop and the
#             threshold): stress, must pass
#   inline    the kernel's own inline code: stress, must pass (the stress
#             program's own control: it reports no false failure)
#   local     broken: user-address TLBIs local (vale1/vae1/aside1): stress
#             must fail
#   lastpage  broken: user-address ranges lose their last page: stress must
#             fail
#
# Environment:
#   SHOOTDOWN, KTLB_DIR, JOBS  as for scripts/kernel-tlb/build-kernel.sh
#   STRESS_SECONDS  stress time of the passing boots (default 20)
#   CONTROL_SECONDS bound of the control boots' stress (default 20; they
#                   stop at the first violation)
#   MODES           which boots (default: gen norange inline local lastpage)
#   BUSYBOX_DEB     Debian's busybox-static arm64 package (default: the one
#                   scripts/install-deps.sh downloads)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
KTLB_DIR=${KTLB_DIR:-$ROOT/target/kernel-tlb}
export KTLB_DIR
TREE=$KTLB_DIR/linux-source-6.1
STRESS_SECONDS=${STRESS_SECONDS:-20}
CONTROL_SECONDS=${CONTROL_SECONDS:-20}
MODES=${MODES:-gen norange inline local lastpage}
W=$KTLB_DIR/mm
SELF=$TREE/tools/testing/selftests/vm
SELFTESTS="mremap_test mremap_dontunmap madv_populate mlock2-tests map_fixed_noreplace mrelease_test"

say() { echo "kernel-mm: $*"; }
die() { echo "kernel-mm: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

for t in qemu-system-aarch64 timeout dpkg-deb aarch64-linux-gnu-gcc; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done
if [ -z "${BUSYBOX_DEB:-}" ]; then
    BUSYBOX_DEB=$(ls /usr/local/share/shootdown/busybox-static_*_arm64.deb 2>/dev/null | head -1)
fi
[ -n "$BUSYBOX_DEB" ] && [ -f "$BUSYBOX_DEB" ] ||
    die "missing busybox-static:arm64 (scripts/install-deps.sh downloads it)"

t0=$(now)
sh "$ROOT/scripts/kernel-tlb/build-kernel.sh"
t1=$(now)

# The initramfs: busybox, /init, the stress program, the selftests, built
# into a cpio by the kernel's own usr/gen_init_cpio.
rm -rf "$W"
mkdir -p "$W/bin" "$W/selftests"
dpkg-deb --fsys-tarfile "$BUSYBOX_DEB" | tar -x -O ./bin/busybox >"$W/bin/busybox"
aarch64-linux-gnu-readelf -h "$W/bin/busybox" | grep -q AArch64 || die "busybox is not arm64"
aarch64-linux-gnu-readelf -l "$W/bin/busybox" | grep -q INTERP && die "busybox is not static"
CC="aarch64-linux-gnu-gcc -static -O2 -Wall"
$CC -Wextra -Werror -pthread "$ROOT/scripts/kernel-tlb/tlb_stress.c" -o "$W/tlb_stress"
for t in $SELFTESTS; do
    extra=""
    [ "$t" = madv_populate ] && extra="$SELF/vm_util.c"
    # It takes the syscall numbers from <sys/syscall.h> but does not
    # include it (without them it calls syscall -1 and skips).
    [ "$t" = mrelease_test ] && extra="-include sys/syscall.h"
    $CC -I "$SELF/.." "$SELF/$t.c" $extra -o "$W/selftests/$t" -lrt -lpthread 2>"$W/$t.cc.log" ||
        { cat "$W/$t.cc.log" >&2; die "selftest $t does not build"; }
done
{
    echo "dir /dev 0755 0 0"
    echo "nod /dev/console 0600 0 0 c 5 1"
    echo "nod /dev/null 0666 0 0 c 1 3"
    echo "dir /proc 0755 0 0"
    echo "dir /sys 0755 0 0"
    echo "dir /tmp 1777 0 0"
    echo "dir /bin 0755 0 0"
    echo "file /bin/busybox $W/bin/busybox 0755 0 0"
    echo "file /init $ROOT/scripts/kernel-tlb/init.sh 0755 0 0"
    echo "file /tlb_stress $W/tlb_stress 0755 0 0"
    echo "dir /selftests 0755 0 0"
    for t in $SELFTESTS; do echo "file /selftests/$t $W/selftests/$t 0755 0 0"; done
} >"$W/initramfs.list"
"$TREE/usr/gen_init_cpio" "$W/initramfs.list" >"$W/initramfs.cpio" || die "gen_init_cpio"
t2=$(now)

bad=0
fail() { echo "kernel-mm: FAIL: $*" >&2; bad=1; }
# field NAME LINE: the value after " NAME " (or "NAME=") in LINE
field() { echo "$2" | sed -n "s/.*[ ]$1[ =]\([^ ]*\).*/\1/p"; }

boot() { # mode stress-seconds selftests
    log=$W/console-$1.log
    # Boot + stress + selftests, with room for TCG on two loaded cores.
    limit=$(($2 * 3 + 240))
    say "booting shootdown_tlb=$1 (-smp 4, stress ${2}s, selftests $3)"
    b0=$(now)
    rc=0
    timeout "$limit" qemu-system-aarch64 -M virt -cpu max -smp 4 -accel tcg,thread=multi \
        -m 512 -nographic -no-reboot -nic none \
        -kernel "$TREE/arch/arm64/boot/Image" -initrd "$W/initramfs.cpio" \
        -append "console=ttyAMA0 panic=-1 shootdown_tlb=$1 sdmm.stress=$2 sdmm.selftests=$3" \
        </dev/null >"$log.raw" 2>&1 || rc=$?
    tr -d '\r' <"$log.raw" | sed 's/^\[ *[0-9.]*\] //' >"$log"
    b1=$(now)
    [ "$rc" -eq 124 ] && fail "$1: QEMU timed out after ${limit}s"
    grep -E '^(tlb-stress|sdmm|shootdown-tlb):' "$log" | grep -v '^sdmm: [a-z0-9_-]*| ' |
        sed "s/^/[$1] /"
    say "$1: boot+run $((b1 - b0))s"
    grep -q "^shootdown-tlb: mode=$1 " "$log" || fail "$1: the kernel did not report mode=$1"
    verdict=$(grep '^tlb-stress: verdict ' "$log" || true)
    calls=$(grep '^shootdown-tlb: calls ' "$log" || true)
}

for m in $MODES; do
    case $m in
    gen | norange | inline)
        st=0
        [ "$m" = gen ] && st=1
        boot "$m" "$STRESS_SECONDS" "$st"
        echo "$verdict" | grep -q '^tlb-stress: verdict PASS cpus 4 ' ||
            fail "$m: the stress program did not pass: ${verdict:-no verdict}"
        [ -n "$calls" ] || fail "$m: no flush counts (the kernel did not power off cleanly)"
        # Which generated flushes the kernel ran (inline: which the kernel's
        # own code stood in for).
        case $m in
        norange) need="mm page range range-nl" ;;
        *) need="mm page range-r range-r-nl" ;;
        esac
        for k in $need; do
            n=$(field "$k" "$calls")
            [ "${n:-0}" -gt 0 ] || fail "$m: no $k flush was called ($calls)"
        done
        if [ "$st" = 1 ]; then
            sum=$(grep '^sdmm: selftests ' "$log" || true)
            [ -n "$sum" ] || fail "$m: no selftest summary"
            for t in $SELFTESTS; do
                grep -q "^sdmm: selftest $t pass " "$log" || fail "$m: selftest $t did not pass"
            done
        fi
        ;;
    local | lastpage)
        boot "$m" "$CONTROL_SECONDS" 0
        # Caught means a worker saw a stale translation and the run did not
        # claim to pass. Stale translations can also corrupt the stress
        # program itself (its stats pipe, its own stack), so a run that
        # reported violations and then died before its verdict counts.
        grep -q '^tlb-stress: violation ' "$log" ||
            fail "$m: the broken flush was not caught: no violation reported (${verdict:-no verdict})"
        if echo "$verdict" | grep -q '^tlb-stress: verdict PASS'; then
            fail "$m: violations were reported but the run passed: $verdict"
        fi
        ;;
    *) die "unknown mode $m" ;;
    esac
done
t3=$(now)
say "timings: kernel $((t1 - t0))s initramfs $((t2 - t1))s boots $((t3 - t2))s"
[ "$bad" -eq 0 ] || die "see $W/console-*.log"
say "OK"
