#!/bin/sh
# Build herd7, the simulator of the architectures' own memory models, from
# the herdtools7 source vendored in vendor/ (issue 36; docs/memory-model.md).
# It is the only oracle we have that can reorder memory accesses: qemu and
# unicorn execute them in program order.
#
# The build (OCaml, ~10 minutes on 2 cores) is cached: the tree stays in
# $HERD_DIR and is rebuilt only when the vendored tarball changes. Prints
# the path of herd.exe on success; the tests find it at the same place.
#
# Environment:
#   HERD_DIR  work directory (default: target/herd7)
#   JOBS      dune -j (default 2)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
HERD_DIR=${HERD_DIR:-$ROOT/target/herd7}
JOBS=${JOBS:-2}
TARBALL=$ROOT/vendor/herdtools7-7.57.tar.xz
CATALOGUE=$ROOT/vendor/herdtools7-7.57-catalogue-aarch64-VMSA.tar.xz
TREE=$HERD_DIR/herdtools7-7.57
EXE=$TREE/_build/default/herd/herd.exe
STAMP=$HERD_DIR/built.stamp

die() { echo "build-herd7: FAIL: $*" >&2; exit 1; }

for t in dune ocaml menhir; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
done

want=$(sha256sum "$TARBALL" "$CATALOGUE" | sha256sum | cut -c1-64)
if [ -x "$EXE" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    echo "$EXE"
    exit 0
fi

rm -rf "$HERD_DIR"
mkdir -p "$HERD_DIR"
tar -xJf "$TARBALL" -C "$HERD_DIR"
tar -xJf "$CATALOGUE" -C "$HERD_DIR"
(
    cd "$TREE"
    # dune needs Version.ml, which the upstream Makefile writes first.
    sh ./version-gen.sh "$HERD_DIR/prefix" >/dev/null
    dune build -j "$JOBS" --profile release herd/herd.exe >&2
) || die "dune build of herd.exe failed"
[ -x "$EXE" ] || die "no $EXE after the build"
echo "$want" >"$STAMP"
echo "$EXE"
