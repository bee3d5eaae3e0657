#!/bin/sh
# The whole test suite: installs the oracles, then formatting, lints,
# every test (unit, GNU as / capstone / qemu / emulator oracles, goldens).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export UNICORN_NO_PKG_CONFIG=1
cargo fmt --check
cargo clippy --all-targets -- -D warnings
cargo test --release
