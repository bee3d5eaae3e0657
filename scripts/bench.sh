#!/bin/sh
# Performance ratios measured side by side in one run (docs/performance.md):
# (a) gen of all examples for all targets vs GNU as on the same .S files,
# (b) header generation vs PeakRDL-cheader on a 200-register map,
# (c) scaling on synthetic specs of 1k/10k/100k operations.
#   scripts/bench.sh [--runs N]
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
python3 -c 'import peakrdl_cheader' 2>/dev/null || python3 -m pip install -q peakrdl-cheader
cargo build --release --no-default-features --quiet
exec python3 scripts/bench.py "$@"
