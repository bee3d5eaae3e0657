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
# One driver over every target (tests/gnu_as.rs).
cargo test --release --test suite gnu_as::
unset SHOOTDOWN_BLESS_ENCODINGS
cargo test --release --test suite encodings::
