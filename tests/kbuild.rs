//! Real kernel trees: examples/kbuild builds as a module against Debian's
//! linux-source-6.1 for arm64 (defconfig), powerpc little-endian ELFv2
//! (powernv_defconfig) and big-endian ELFv1 (ppc64_defconfig), with the
//! kernel's own asm/ppc_asm.h and linux/linkage.h; a second make rebuilds
//! nothing, and a touched spec reruns shootdown without rebuilding objects.
//! tests/stack_args/stack_args.inv builds there too, in Linux style: the
//! kernel's `STK_PARAM` slots must be the plain-style code's.
//! scripts/kbuild-test.sh does the work; prepared trees are cached under
//! target/kbuild/ (first run: minutes; later runs: seconds).

use std::process::Command;

#[test]
fn module_builds_in_real_kernel_trees_and_rebuilds_nothing() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("sh")
        .arg(format!("{root}/scripts/kbuild-test.sh"))
        .env("SHOOTDOWN", env!("CARGO_BIN_EXE_shootdown"))
        .output()
        .expect("run scripts/kbuild-test.sh");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "kbuild-test failed:\n{log}");
    assert!(log.contains("kbuild-test: all ok"), "{log}");
}
