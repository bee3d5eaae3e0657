#!/bin/sh
# Regenerate the encoding tables tests/encodings/*.txt from GNU as: the GNU
# as oracle tests write each section from the assembler's bytes (and still
# require our encoders to agree). Needs the cross binutils
# (scripts/install-deps.sh). Then `cargo test --release --test suite encodings::`
# checks our encoders against the tables without any toolchain.
set -eu
cd "$(dirname "$0")/.."
export UNICORN_NO_PKG_CONFIG=1
export SHOOTDOWN_BLESS_ENCODINGS=1
rm -f tests/encodings/*.txt
for t in power_gnu_as aarch64_gnu_as x86_64_gnu_as riscv64_gnu_as; do
    cargo test --release --test suite "${t}::"
done
unset SHOOTDOWN_BLESS_ENCODINGS
cargo test --release --test suite encodings::
