#!/bin/sh
# The whole test suite: installs the oracles, then formatting, lints,
# every test (unit, GNU as / capstone / qemu / emulator oracles, goldens).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export UNICORN_NO_PKG_CONFIG=1
cargo fmt --check
# cargo fmt follows `mod` items only: the ISA directories are declared by
# the `targets!` macro (src/isa/mod.rs), so it never reaches them. Every
# tracked source file, by name:
git ls-files -z 'src/*.rs' 'tests/*.rs' 'benches/*.rs' | xargs -0 rustfmt --edition 2021 --check
# --release: the lints are the same, and clippy then shares the release
# profile's build-script outputs (unicorn's cmake build) and proc-macros
# with the test build below instead of building them twice.
cargo clippy --release --all-targets -- -D warnings
# The README's first command builds without the emulator (no cmake or
# libclang on a fresh machine): that build must keep compiling.
cargo check --release --no-default-features --bins
# The emulator tests write scratch files under target/tmp; a full disk
# shows as odd test failures, so say how much there is.
df -h . | tail -1
cargo test --release
