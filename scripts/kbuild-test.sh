#!/bin/sh
# Build examples/kbuild (an out-of-tree module whose .S/.h Kbuild
# regenerates from a spec with shootdown) against real kernel trees from
# Debian's linux-source-6.1: arm64 defconfig, powerpc powernv_defconfig
# (little-endian, ELFv2) and ppc64_defconfig (big-endian, ELFv1 function
# descriptors). Then make again and check that nothing is rebuilt, and that
# touching the spec reruns shootdown but rebuilds no object (its outputs are
# written only when their bytes change). Then tests/stack_args/stack_args.inv
# in Linux style, built as a second module: its stack argument loads must be
# the plain-style code's.
#
# The unpacked source and the prepared trees are cached under
# target/kbuild/ (first run: a few minutes; later runs: seconds).
#
#   scripts/kbuild-test.sh [arm64|powerpc|powerpc-be]...
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
W=$ROOT/target/kbuild
SRC=$W/linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz
if [ -z "${SHOOTDOWN:-}" ]; then
    cargo build --release --no-default-features --quiet
    SHOOTDOWN=$ROOT/target/release/shootdown
fi
JOBS=$(nproc)

if [ ! -f "$SRC/.shootdown-unpacked" ]; then
    [ -f "$TARBALL" ] || { echo "missing $TARBALL: run scripts/install-deps.sh" >&2; exit 1; }
    rm -rf "$SRC"
    mkdir -p "$W"
    echo "unpacking $TARBALL"
    tar -C "$W" -xJf "$TARBALL"
    touch "$SRC/.shootdown-unpacked"
fi

fail() { echo "kbuild-test: FAIL: $*" >&2; exit 1; }

# name ARCH CROSS_COMPILE defconfig
one() {
    name=$1 arch=$2 cross=$3 config=$4
    tree=$W/$name
    if [ ! -f "$tree/.shootdown-prepared" ]; then
        echo "== preparing $name kernel tree ($config)"
        # No stamp: a run was interrupted mid-build and may have left
        # half-written objects that make does not rebuild. Start clean.
        rm -rf "$tree"
        make -s -j"$JOBS" -C "$SRC" O="$tree" ARCH="$arch" CROSS_COMPILE="$cross" \
            "$config" modules_prepare
        touch "$tree/.shootdown-prepared"
    fi
    mod=$W/mod-$name
    rm -rf "$mod"
    mkdir -p "$mod"
    cp -L examples/kbuild/Kbuild examples/kbuild/Makefile examples/kbuild/*.c \
        examples/kbuild/*.inv "$mod/"
    kmake() {
        make -j"$JOBS" -C "$tree" ARCH="$arch" CROSS_COMPILE="$cross" M="$mod" \
            SHOOTDOWN="$SHOOTDOWN" modules 2>&1
    }
    echo "== $name: first build"
    kmake | tee "$mod/build1.log"
    [ -f "$mod/sdtest.ko" ] || fail "$name: no sdtest.ko"
    grep -q SHOOTDN "$mod/build1.log" || fail "$name: shootdown did not run"
    syms=$("${cross}nm" "$mod/sdtest.ko")
    if [ "$name" = powerpc-be ]; then
        # ELFv1: _GLOBAL() made a function descriptor in .opd and the
        # `.name` entry point.
        "${cross}readelf" -h "$mod/sdtest.ko" | grep -q "abiv1" || fail "$name: not ELFv1"
        echo "$syms" | grep -q " D sdtest_invalidate_range$" || fail "$name: no descriptor"
        echo "$syms" | grep -q " T \.sdtest_invalidate_range$" || fail "$name: no .entry"
    else
        echo "$syms" | grep -q " T sdtest_invalidate_range$" \
            || fail "$name: sdtest_invalidate_range not defined in sdtest.ko"
    fi
    head -1 "$mod"/npu2_atsd.*.S | grep -q "SPDX-License-Identifier: GPL-2.0" \
        || fail "$name: no SPDX first line"
    # The kernel's own headers were used (fixdep recorded them).
    case $arch in
        powerpc) hdr=arch/powerpc/include/asm/ppc_asm.h ;;
        *) hdr=include/linux/linkage.h ;;
    esac
    grep -q "$hdr" "$mod"/.npu2_atsd.*.o.cmd || fail "$name: $hdr not used"
    # The errata spec's feature tests are patched by the kernel: its object
    # carries the entries the kernel's patching reads (arm64 alternatives,
    # POWER CPU and MMU feature sections), pointing into its code.
    eobj=$(ls "$mod"/errata.*.o)
    secs=$("${cross}objdump" -h "$eobj")
    relocs=$("${cross}objdump" -r "$eobj")
    case $arch in
        arm64) want=".altinstructions" ;;
        powerpc) want="__ftr_fixup __mmu_ftr_fixup" ;;
    esac
    for s in $want; do
        echo "$secs" | grep -q " $s " || fail "$name: no $s section in $eobj"
        echo "$relocs" | grep -q "RELOCATION RECORDS FOR \[$s\]" \
            || fail "$name: $s has no entries"
    done
    echo "$syms" | grep -q "sdtest_errata_kick" || fail "$name: errata_kick not in sdtest.ko"
    echo "== $name: feature tests patched through: $want"
    ko_mtime=$(stat -c %Y.%y "$mod/sdtest.ko")

    echo "== $name: second build (must rebuild nothing)"
    kmake | tee "$mod/build2.log"
    if grep -E '^ +(SHOOTDN|CC|AS|LD|MODPOST)' "$mod/build2.log"; then
        fail "$name: second make rebuilt something"
    fi
    [ "$(stat -c %Y.%y "$mod/sdtest.ko")" = "$ko_mtime" ] || fail "$name: sdtest.ko rewritten"

    echo "== $name: spec touched (shootdown reruns, writes nothing, no object rebuilt)"
    s_mtime=$(stat -c %y "$mod"/npu2_atsd.*.S)
    sleep 1
    touch "$mod/npu2_atsd.inv"
    kmake | tee "$mod/build3.log"
    grep -q SHOOTDN "$mod/build3.log" || fail "$name: touched spec did not rerun shootdown"
    if grep -E '^ +(CC|AS|LD)' "$mod/build3.log"; then
        fail "$name: unchanged outputs rebuilt objects"
    fi
    [ "$(stat -c %y "$mod"/npu2_atsd.*.S)" = "$s_mtime" ] || fail "$name: .S rewritten"
    stack_args "$name" "$arch" "$cross"
    echo "== $name: ok"
}

# Sequences with arguments past the argument registers, Linux style: the
# kernel's own macros (POWER `STK_PARAM(R11)`, ELFv1 or ELFv2 as the tree
# is configured) must give the same stack slots as the plain-style code
# that tests/stack_args.rs runs under qemu-user.
stack_args() {
    name=$1 arch=$2 cross=$3
    case $name in
        arm64) t=aarch64 ;;
        powerpc) t=power64le ;;
        powerpc-be) t=power64 ;;
    esac
    sa=$W/sa-$name
    rm -rf "$sa"
    mkdir -p "$sa/plain"
    spec=$ROOT/tests/stack_args/stack_args.inv
    "$SHOOTDOWN" gen "$spec" --style linux --prefix sa_ --target $t --out "$sa"
    "$SHOOTDOWN" gen "$spec" --prefix sa_ --target $t --out "$sa/plain"
    printf 'obj-m := sa.o\nsa-y := sa_main.o stack_args.%s.o\n' $t >"$sa/Kbuild"
    printf '%s\n' '// SPDX-License-Identifier: GPL-2.0' '#include <linux/module.h>' \
        '#include <linux/io.h>' '#include "stack_args.h"' 'EXPORT_SYMBOL_GPL(sa_ten);' \
        'EXPORT_SYMBOL_GPL(sa_twelve);' 'MODULE_LICENSE("GPL");' >"$sa/sa_main.c"
    echo "== $name: stack arguments"
    make -j"$JOBS" -C "$tree" ARCH="$arch" CROSS_COMPILE="$cross" M="$sa" modules 2>&1 \
        | tee "$sa/build.log"
    [ -f "$sa/sa.ko" ] || fail "$name: no sa.ko"
    "${cross}gcc" -c "$sa/plain/stack_args.$t.S" -o "$sa/plain/stack_args.o"
    # The loads relative to the stack pointer, in order (alignment padding
    # differs between _GLOBAL/SYM_FUNC_START and the plain file).
    slots() {
        "${cross}objdump" -d --no-show-raw-insn "$1" | grep -E '\(r1\)|\[sp' \
            | sed 's/^[^\t]*\t//; s/[[:space:]]*$//'
    }
    slots "$sa/stack_args.$t.o" >"$sa/kernel.slots"
    slots "$sa/plain/stack_args.o" >"$sa/plain.slots"
    [ -s "$sa/plain.slots" ] || fail "$name: no stack loads in the plain code"
    cmp -s "$sa/kernel.slots" "$sa/plain.slots" || {
        diff "$sa/plain.slots" "$sa/kernel.slots" >&2
        fail "$name: kernel-built stack argument loads differ from the plain code"
    }
    [ "$t" = aarch64 ] || grep -q 'STK_PARAM(R11)' "$sa/stack_args.$t.S" \
        || fail "$name: no STK_PARAM in the Linux-style code"
}

[ $# -gt 0 ] || set -- arm64 powerpc powerpc-be
for t in "$@"; do
    case $t in
        arm64) one arm64 arm64 aarch64-linux-gnu- defconfig ;;
        powerpc) one powerpc powerpc powerpc64le-linux-gnu- powernv_defconfig ;;
        powerpc-be) one powerpc-be powerpc powerpc64-linux-gnu- ppc64_defconfig ;;
        *) fail "unknown tree $t" ;;
    esac
done
echo "kbuild-test: all ok ($*)"
