#!/bin/sh
# Executed instructions of the generated code next to the kernel's own C
# compiled by the Debian cross gcc at -O2 (issue 17's anchor), for every
# example with a transcription in tests/reference/ and every target of its
# `target` line: both sides run on the same inputs in one qemu-user
# process (tests/harness/store_log.c, `-singlestep -d exec,nochain`) and
# are counted from the same exec log, each in its own code section.
# Summed per sequence scenario over the cases where both sides agree.
# "bound" is a lower bound on any implementation's count: one instruction
# per device or memory access, invalidation, barrier and return the
# generated run made, and one loop test per trip back to a loop's top
# (no arithmetic, no loop's exit test); "/bound" is ours over it
# (issue 40's goal: at most 1.5).
#   scripts/codegen-vs-gcc.sh            # the table, one row per scenario
# The generated side is pinned in tests/codegen_counts/ (the reference
# test fails when it changes; SHOOTDOWN_BLESS_COUNTS=1 rewrites the pins).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export UNICORN_NO_PKG_CONFIG=1
rm -rf target/codegen-counts
cargo test --release --test suite reference:: >/dev/null 2>&1 ||
    { echo "codegen-vs-gcc: tests/reference.rs failed; run it for the reason:" >&2
      echo "  cargo test --release --test suite reference::" >&2; exit 1; }
printf '%-10s %-64s %6s %10s %10s %6s %8s %6s\n' example "target [pins] scenario" cases ours "gcc -O2" ratio bound "/bound"
for f in target/codegen-counts/*.txt; do
    stem=$(basename "$f" .txt)
    grep -v '^#' "$f" | while IFS= read -r line; do
        key=${line%: *}
        set -- ${line##*: }
        printf '%-10s %-64s %6s %10s %10s %6s %8s %6s\n' "$stem" "$key" "$1" "$2" "$3" "$4" "$5" "$6"
    done
done
