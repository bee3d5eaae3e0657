#!/bin/sh
# The POWER kernel runs on our code under SMP stress (issue 38): the powernv
# kernel of scripts/kernel-tlb-power/build-kernel.sh, whose radix flush
# sequences (radix_tlb.c: _tlbie_va, _tlbie_pid, the tlbie range path, the
# tlbiel forms) call the code shootdown generates from examples/radix_tlb.inv,
# boots on 4 vCPUs of qemu-system-ppc64 -M powernv9 -cpu power9
# (multi-threaded TCG: a tlbie reaches every vCPU's TLB, a tlbiel only its
# own) with a static busybox initramfs and runs the TLB stress program
# (scripts/kernel-tlb/tlb_stress.c) and some of the kernel's mm selftests.
# The same kernel booted with a broken generated flush must make the stress
# program fail. See docs/kernel-proof.md ("The POWER kernel runs on our
# code").
#
# Boots (shootdown_tlb= on the command line selects the flush code):
#   gen       generated code, the POWER9 tlbie errata fixups as the kernel
#             patches them (QEMU's POWER9 DD2.0 has both): stress +
#             selftests, must pass
#   noerrata  generated code with the errata features off (under QEMU the
#             fixups' extra tlbies flush everything; here the code's own
#             tlbies must do it): stress, must pass
#   inline    the kernel's own sequences: stress, must pass (the stress
#             program's own control: it reports no false failure)
#   local     broken: global flushes of user mms done by the generated local
#             (tlbiel) sequences: stress must fail
#   lastpage  broken: range flushes lose their last 64K page: stress must
#             fail
#
# QEMU's ppc64 TLB turns a by-VA flush of a 64K page into a flush of
# everything (docs/kernel-proof.md), so a range that lost its last page is
# wrong there only when it flushes nothing: the stress program gets one-page
# slots (sdmm.onepage, tlb_stress -o) besides its two-page ones.
#
# Environment:
#   SHOOTDOWN, KTLBP_DIR, JOBS  as for scripts/kernel-tlb-power/build-kernel.sh
#   STRESS_SECONDS  stress time of the passing boots (default 15)
#   CONTROL_SECONDS bound of the control boots' stress (default 15; they
#                   stop at the first violation)
#   MODES           which boots (default: gen noerrata inline local lastpage)
#   BUSYBOX_DEB     Debian's busybox-static ppc64el package (default: the one
#                   scripts/install-deps.sh downloads)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
KTLBP_DIR=${KTLBP_DIR:-$ROOT/target/kernel-tlb-power}
export KTLBP_DIR
TREE=$KTLBP_DIR/linux-source-6.1
STRESS_SECONDS=${STRESS_SECONDS:-15}
CONTROL_SECONDS=${CONTROL_SECONDS:-15}
MODES=${MODES:-gen noerrata inline local lastpage}
ONEPAGE=${ONEPAGE:-4}
W=$KTLBP_DIR/mm
SELF=$TREE/tools/testing/selftests/vm
SELFTESTS="mremap_test mremap_dontunmap madv_populate mlock2-tests map_fixed_noreplace mrelease_test"

say() { echo "kernel-mm-power: $*"; }
die() { echo "kernel-mm-power: FAIL: $*" >&2; exit 1; }
now() { date +%s; }

for t in qemu-system-ppc64 timeout dpkg-deb powerpc64le-linux-gnu-gcc; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done
if [ -z "${BUSYBOX_DEB:-}" ]; then
    BUSYBOX_DEB=$(ls /usr/local/share/shootdown/busybox-static_*_ppc64el.deb 2>/dev/null | head -1)
fi
[ -n "$BUSYBOX_DEB" ] && [ -f "$BUSYBOX_DEB" ] ||
    die "missing busybox-static:ppc64el (scripts/install-deps.sh downloads it)"

t0=$(now)
sh "$ROOT/scripts/kernel-tlb-power/build-kernel.sh"
t1=$(now)

# The initramfs: busybox, /init (the arm64 test's), the stress program, the
# selftests, built into a cpio by the kernel's own usr/gen_init_cpio.
rm -rf "$W"
mkdir -p "$W/bin" "$W/selftests"
dpkg-deb --fsys-tarfile "$BUSYBOX_DEB" | tar -x -O ./bin/busybox >"$W/bin/busybox"
powerpc64le-linux-gnu-readelf -h "$W/bin/busybox" | grep -q PowerPC64 || die "busybox is not ppc64"
powerpc64le-linux-gnu-readelf -l "$W/bin/busybox" | grep -q INTERP && die "busybox is not static"
CC="powerpc64le-linux-gnu-gcc -static -O2 -Wall"
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
[ -x "$TREE/usr/gen_init_cpio" ] || make -C "$TREE" usr/gen_init_cpio >/dev/null ||
    die "cannot build usr/gen_init_cpio"
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
fail() { echo "kernel-mm-power: FAIL: $*" >&2; bad=1; }
# site NAME LINE: the global/local/kept counts of NAME in the calls line
site() { echo "$2" | sed -n "s/.* $1=\([0-9]*\/[0-9]*\/[0-9]*\).*/\1/p"; }

boot() { # mode stress-seconds selftests
    log=$W/console-$1.log
    # Boot + stress + selftests, with room for TCG on two loaded cores.
    limit=$(($2 * 4 + 300))
    say "booting shootdown_tlb=$1 (-smp 4, stress ${2}s, selftests $3)"
    b0=$(now)
    rc=0
    # skiboot powers off (and reboots) through the BMC, hence the simulated
    # one; -no-reboot ends QEMU on a panic's reboot.
    timeout "$limit" qemu-system-ppc64 -M powernv9 -cpu power9 -smp 4 -accel tcg,thread=multi \
        -m 2G -nographic -nodefaults -serial mon:stdio -no-reboot \
        -device ipmi-bmc-sim,id=bmc0 -device isa-ipmi-bt,bmc=bmc0,irq=10 \
        -kernel "$TREE/vmlinux" -initrd "$W/initramfs.cpio" \
        -append "console=hvc0 panic=-1 shootdown_tlb=$1 sdmm.stress=$2 sdmm.selftests=$3 sdmm.onepage=$ONEPAGE" \
        </dev/null >"$log.raw" 2>&1 || rc=$?
    tr -d '\r' <"$log.raw" | sed 's/^\[ *[0-9.]*\] //' >"$log"
    b1=$(now)
    [ "$rc" -eq 124 ] && fail "$1: QEMU timed out after ${limit}s"
    say "$1: boot+run $((b1 - b0))s"
    grep -q "^shootdown-tlb: mode=$1 " "$log" || fail "$1: the kernel did not report mode=$1"
    grep -q '^sd-radix: skipped: 4 CPUs online' "$log" ||
        fail "$1: the boot-time trials did not stand aside on 4 CPUs"
    verdict=$(grep '^tlb-stress: verdict ' "$log" || true)
    calls=$(grep '^shootdown-tlb: calls ' "$log" || true)
}

show() { # label: the console lines of the last boot, as [label] lines
    grep -E '^(tlb-stress|sdmm|shootdown-tlb|sd-radix):' "$log" | grep -v '^sdmm: [a-z0-9_-]*| ' |
        sed "s/^/[$1] /"
}

# The one must-pass boot of this run that was booted again (see below).
rebooted=

for m in $MODES; do
    case $m in
    gen | noerrata | inline)
        st=0
        [ "$m" = gen ] && st=1
        boot "$m" "$STRESS_SECONDS" "$st"
        # The kernel's own code (the inline control) once reported a stale
        # translation here: one read-after-munmap in 8 s, in a clean-clone
        # CI run beside the other kernel tests on two cores (stop 52,
        # 2026-12-07); 180 boots of it and of gen since found none
        # (docs/kernel-proof.md). A violation in a must-pass boot is
        # therefore not proof against the code it ran: that mode boots once
        # more and must pass then, and a run may do this once. Both
        # consoles are printed, the first as [mode-first].
        if [ -z "$rebooted" ] && grep -q '^tlb-stress: violation ' "$log" &&
            ! echo "$verdict" | grep -q '^tlb-stress: verdict PASS '; then
            rebooted=$m
            cp "$log" "$log.first"
            show "$m-first"
            say "REBOOT $m: $(grep -m1 '^tlb-stress: violation ' "$log") (console: $log.first)"
            boot "$m" "$STRESS_SECONDS" "$st"
        fi
        show "$m"
        echo "$verdict" | grep -q '^tlb-stress: verdict PASS cpus 4 ' ||
            fail "$m: the stress program did not pass: ${verdict:-no verdict}"
        [ -n "$calls" ] || fail "$m: no flush counts (the kernel did not power off cleanly)"
        echo "$calls" | grep -q "^shootdown-tlb: calls mode=$m " || fail "$m: calls of another mode: $calls"
        # The generated sequences the kernel ran (inline: the ones the
        # kernel's own stood in for): global (tlbie) page, range and
        # mmu_gather flushes, and a PID flush of an mm (fork, exit).
        for k in page range gather; do
            c=$(site "$k" "$calls")
            [ "${c%%/*}" -gt 0 ] 2>/dev/null || fail "$m: no global $k flush ($calls)"
        done
        mm=$(site mm "$calls")
        allmm=$(site all-mm "$calls")
        [ $((${mm%%/*} + ${allmm%%/*})) -gt 0 ] || fail "$m: no global mm flush ($calls)"
        if [ "$st" = 1 ]; then
            sum=$(grep '^sdmm: selftests ' "$log" || true)
            [ -n "$sum" ] || fail "$m: no selftest summary"
            for t in $SELFTESTS; do
                grep -q "^sdmm: selftest $t pass " "$log" || fail "$m: selftest $t did not pass"
            done
        fi
        ;;
    local | lastpage)
        tries=0
        while :; do
            tries=$((tries + 1))
            boot "$m" "$CONTROL_SECONDS" 0
            show "$m"
            grep -q '^tlb-stress: violation ' "$log" && break
            # A broken flush can break the stress program's own setup
            # before any worker probes (`setup error: mremap (Bad
            # address)`, one `local` boot of a clean-clone CI run on
            # 2026-12-06): no verdict either way, so boot again; caught
            # still means a violation reported.
            if grep -q '^tlb-stress: setup error' "$log" && [ "$tries" -lt 3 ]; then
                say "RETRY $m: $(grep -m1 '^tlb-stress: setup error' "$log") (console: $log.setup-$tries)"
                cp "$log" "$log.setup-$tries"
                continue
            fi
            break
        done
        # Caught means a worker saw a stale translation and the run did not
        # claim to pass. Stale translations can also corrupt the stress
        # program itself (its stats pipe, its own stack), so a run that
        # reported violations and then died before its verdict counts.
        if ! grep -q '^tlb-stress: violation ' "$log"; then
            fail "$m: the broken flush was not caught: no violation reported (${verdict:-no verdict})"
        elif echo "$verdict" | grep -q '^tlb-stress: verdict PASS'; then
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
