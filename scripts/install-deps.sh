#!/bin/sh
# Install what the test suite needs on a Debian machine: the cross
# toolchains that are our oracles (GNU as, gcc), qemu-user to run harnesses,
# cmake + libclang for unicorn's bundled build (the `emu` feature), and for
# the kernel tests (tests/kernel_tlb.rs, tests/kernel_tlb_power.rs) Debian's
# kernel source, what a kernel build needs, qemu-system-aarch64 and
# qemu-system-ppc64 (its skiboot.lid comes with qemu-system-data), and
# qemu-system-x86_64 for the VT-d oracle (tests/vtd_qemu.rs),
# qemu-system-riscv64 (qemu-system-misc, with QEMU's OpenSBI) for
# tests/kernel_mm_riscv.rs, and OCaml,
# dune and menhir to build herd7 from vendor/ (tests/memory_model.rs,
# scripts/build-herd7.sh), and headless Chromium for the explorer page
# (tests/explore.rs).
set -eu
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PKGS="binutils-powerpc64le-linux-gnu binutils-powerpc64-linux-gnu binutils-aarch64-linux-gnu \
binutils-riscv64-linux-gnu \
gcc-powerpc64le-linux-gnu gcc-powerpc64-linux-gnu gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu g++ \
libc6-dev-ppc64el-cross libc6-dev-ppc64-cross libc6-dev-arm64-cross libc6-dev-riscv64-cross \
qemu-user cmake libclang-dev \
linux-source-6.1 flex bison bc libssl-dev libelf-dev make xz-utils qemu-system-arm qemu-system-ppc qemu-system-x86 qemu-system-misc \
ocaml-nox ocaml-dune menhir libmenhir-ocaml-dev libzarith-ocaml-dev \
chromium"
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

BB_DIR=/usr/local/share/shootdown
if ! ls "$BB_DIR"/busybox-static_*_arm64.deb >/dev/null 2>&1; then
    dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    $SUDO mkdir -p "$BB_DIR"
    (cd "$BB_DIR" && $SUDO apt-get download -qq busybox-static:arm64)
    ls "$BB_DIR"/busybox-static_*_arm64.deb >/dev/null
fi
# The POWER mm test's initramfs (scripts/kernel-mm-power-test.sh): the same
# static busybox for ppc64el.
if ! ls "$BB_DIR"/busybox-static_*_ppc64el.deb >/dev/null 2>&1; then
    dpkg --print-foreign-architectures | grep -qx ppc64el || $SUDO dpkg --add-architecture ppc64el
    $SUDO apt-get update -qq
    $SUDO mkdir -p "$BB_DIR"
    (cd "$BB_DIR" && $SUDO apt-get download -qq busybox-static:ppc64el)
    ls "$BB_DIR"/busybox-static_*_ppc64el.deb >/dev/null
fi
