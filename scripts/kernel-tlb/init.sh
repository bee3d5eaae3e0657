#!/bin/busybox sh
# /init of the mm test's initramfs (scripts/kernel-mm-test.sh): runs the
# TLB stress program and, when asked, the kernel's mm selftests, prints
# "sdmm:" lines on the console and powers off. Arguments come from the
# kernel command line: sdmm.stress=SECONDS sdmm.selftests=0|1
# sdmm.onepage=SLOTS (tlb_stress -o: one-page slots per CPU, default 0)
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t tmpfs tmp /tmp
stress=10
selftests=0
onepage=0
for a in $(cat /proc/cmdline); do
    case $a in
        sdmm.stress=*) stress=${a#*=} ;;
        sdmm.selftests=*) selftests=${a#*=} ;;
        sdmm.onepage=*) onepage=${a#*=} ;;
    esac
done
echo "sdmm: start cpus=$(nproc) stress=${stress}s selftests=$selftests"
/tlb_stress -t "$stress" -o "$onepage"
echo "sdmm: stress rc=$?"
if [ "$selftests" = 1 ]; then
    # mremap_test maps 2 GB regions (it touches 4 MB of them): more than the
    # default overcommit heuristic allows in a 512 MB VM.
    echo 1 >/proc/sys/vm/overcommit_memory
    # The kselftest convention: exit 0 pass, 4 skip, anything else fail.
    pass=0 fail=0 skip=0
    for t in /selftests/*; do
        name=${t##*/}
        start=$(cut -d. -f1 /proc/uptime)
        timeout 300 "$t" >/tmp/out 2>&1
        rc=$?
        secs=$(($(cut -d. -f1 /proc/uptime) - start))
        sed "s/^/sdmm: $name| /" /tmp/out
        case $rc in
            0) pass=$((pass + 1)); v=pass ;;
            4) skip=$((skip + 1)); v=skip ;;
            *) fail=$((fail + 1)); v=fail ;;
        esac
        echo "sdmm: selftest $name $v rc=$rc seconds=$secs"
    done
    echo "sdmm: selftests pass=$pass fail=$fail skip=$skip"
fi
echo "sdmm: done"
poweroff -f
