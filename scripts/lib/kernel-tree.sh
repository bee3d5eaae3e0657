# Shell functions the kernel build scripts share (scripts/kernel-tlb,
# scripts/kernel-tlb-power, scripts/kernel-riscv build-kernel.sh): one
# cached, locked tree per architecture, unpacked from Debian's
# linux-source-6.1 once, patched idempotently and configured from
# tinyconfig plus a fragment. The caller defines say, die, ROOT and
# SRC_TAR; sourced with `.`.

# kt_setup CROSS_GCC: the tools and the source exist; SHOOTDOWN is an
# absolute path (built with --no-default-features when not given).
kt_setup() {
    for t in "$1" flex bison bc xz patch flock; do
        command -v "$t" >/dev/null 2>&1 || die "missing tool $t (scripts/install-deps.sh)"
    done
    [ -f "$SRC_TAR" ] || die "missing $SRC_TAR (apt-get install linux-source-6.1)"
    if [ -z "${SHOOTDOWN:-}" ]; then
        cargo build --release --no-default-features --quiet
        SHOOTDOWN=$ROOT/target/release/shootdown
    fi
    SHOOTDOWN=$(cd "$(dirname "$SHOOTDOWN")" && pwd)/$(basename "$SHOOTDOWN")
}

# Copy only when the content changed, so make sees no spurious change.
install_if_changed() {
    if ! cmp -s "$1" "$2"; then cp "$1" "$2"; fi
}

# kt_lock DIR: never two makes in one tree (held until the script exits).
kt_lock() {
    mkdir -p "$1"
    exec 9>"$1/.lock"
    flock 9
}

# kt_unpack DIR TREE: our own unpacked tree, made once.
kt_unpack() {
    if [ ! -f "$2/.sd-unpacked" ]; then
        say "unpacking $SRC_TAR into $1"
        rm -rf "$2"
        tar -C "$1" -xf "$SRC_TAR"
        touch "$2/.sd-unpacked"
    fi
}

# kt_patch TREE PATCH: a changed patch is first reverted as it was
# applied (its copy .sd-patch), then the new one applied.
kt_patch() {
    if ! cmp -s "$2" "$1/.sd-patch"; then
        if [ -f "$1/.sd-patch" ]; then
            say "reverting the previous $(basename "$2")"
            patch -s -R -p1 -d "$1" <"$1/.sd-patch" || die "cannot revert the old patch"
            rm -f "$1/.sd-patch"
        fi
        say "applying $(basename "$2")"
        patch -s -p1 -d "$1" <"$2" || die "patch does not apply"
        cp "$2" "$1/.sd-patch"
    fi
}

# kt_configure TREE FRAG PATCH: tinyconfig + the fragment (with $KMAKE),
# redone when the fragment or the patch (its Kconfig) changes. Every
# option the fragment sets or unsets must survive.
kt_configure() {
    if [ ! -f "$1/.config" ] || ! cat "$2" "$3" | cmp -s - "$1/.sd-fragment"; then
        say "configuring (tinyconfig + $2)"
        $KMAKE tinyconfig >/dev/null
        (cd "$1" && ./scripts/kconfig/merge_config.sh -m -O . .config "$2" >/dev/null 2>&1)
        $KMAKE olddefconfig >/dev/null
        for opt in $(grep '^CONFIG_' "$2"); do
            grep -qx "$opt" "$1/.config" || die "config lost $opt"
        done
        for opt in $(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$2"); do
            grep -q "^$opt=" "$1/.config" && die "config could not unset $opt"
        done
        cat "$2" "$3" >"$1/.sd-fragment"
    fi
}
