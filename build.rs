//! Link the `shootdown` binary as a position-dependent executable on
//! x86-64 Linux. It runs once per file in a kernel build; as a PIE the
//! dynamic loader spent ~2 ms of its ~4 ms start-up applying relative
//! relocations to the instruction tables (iced-x86, capstone). The
//! libraries and tests are unaffected.

fn main() {
    let linux_x86 = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    if linux_x86 {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
