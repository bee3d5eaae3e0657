//! Oracle: C and C++ compilers on the generated header. It must compile
//! warning-free as C99, C11 (pedantic) and C++17 natively and with every
//! cross gcc, and a native program built from it must find the field
//! macros and inline helpers consistent with the spec's IBM bit numbers
//! (including the NPU2 reference value 0x0005400002000000). A missing
//! compiler is a failure.

use crate::support;

use shootdown::{Options, Target};
use std::path::Path;
use std::process::Command;
use support::*;

const SPEC: &str = "examples/npu2_atsd.inv";
const PROGRAM: &str = include_str!("harness/header_roundtrip.c");
const CROSS: [Target; 3] = [Target::Power64, Target::Power64le, Target::Aarch64];

fn setup(tag: &str) -> std::path::PathBuf {
    let dir = scratch(tag);
    let opts = options("all");
    std::fs::write(dir.join("npu2_atsd.h"), header_text(SPEC, &opts)).unwrap();
    std::fs::write(dir.join("roundtrip.c"), PROGRAM).unwrap();
    std::fs::write(dir.join("roundtrip.cpp"), PROGRAM).unwrap();
    dir
}

/// Compile and link `src` with `cc flags`, run it natively, require
/// every check to pass.
fn build_and_run(cc: &str, flags: &[&str], dir: &Path, src: &str, exe: &str) {
    let exe = dir.join(exe);
    run(Command::new(cc)
        .args(flags)
        .arg("-I")
        .arg(dir)
        .arg(dir.join(src))
        .arg("-o")
        .arg(&exe));
    let out = run(&mut Command::new(&exe));
    assert!(
        !out.contains("FAIL") && out.contains("PASSED"),
        "{cc} {flags:?}:\n{out}"
    );
    let oks = out.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(oks >= 70, "{cc} {flags:?}: only {oks} checks:\n{out}");
}

const C_STRICT: [&str; 4] = ["-Wall", "-Wextra", "-Werror", "-pedantic"];

#[test]
fn header_c99_pedantic() {
    let dir = setup("header-c99");
    let mut f = vec!["-std=c99"];
    f.extend(C_STRICT);
    build_and_run("gcc", &f, &dir, "roundtrip.c", "c99");
}

#[test]
fn header_c11_pedantic() {
    let dir = setup("header-c11");
    let mut f = vec!["-std=c11"];
    f.extend(C_STRICT);
    build_and_run("gcc", &f, &dir, "roundtrip.c", "c11");
}

#[test]
fn header_cxx17() {
    let dir = setup("header-cxx17");
    build_and_run(
        "g++",
        &["-std=c++17", "-Wall", "-Wextra", "-Werror"],
        &dir,
        "roundtrip.cpp",
        "cxx17",
    );
}

/// Also `-pedantic` C++ and the header on its own (nothing else included
/// before it: it must be self-contained).
#[test]
fn header_alone_native() {
    let dir = setup("header-alone");
    std::fs::write(dir.join("alone.c"), "#include \"npu2_atsd.h\"\nint x;\n").unwrap();
    std::fs::write(dir.join("alone.cpp"), "#include \"npu2_atsd.h\"\nint x;\n").unwrap();
    for (cc, std, src) in [
        ("gcc", "-std=c99", "alone.c"),
        ("gcc", "-std=c11", "alone.c"),
        ("g++", "-std=c++17", "alone.cpp"),
    ] {
        run(Command::new(cc)
            .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
            .arg(&dir)
            .arg(dir.join(src))
            .arg("-o")
            .arg(dir.join(format!("{src}.{std}.o"))));
    }
}

/// Every cross gcc compiles the header (and the checks) strictly, and the
/// header is usable from a `.S` (under `__ASSEMBLY__` the offsets and
/// shifts are plain numbers). The header keys on the kernel's
/// `-D__ASSEMBLY__`, not on gcc's predefined `__ASSEMBLER__`, so a plain
/// `.S` must pass it explicitly (see the report of the qemu-power branch).
#[test]
fn header_cross_compilers() {
    for t in CROSS {
        let dir = setup(&format!("header-cross-{t}"));
        for std in ["-std=c99", "-std=c11"] {
            run(Command::new(gcc(t))
                .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
                .arg(&dir)
                .arg(dir.join("roundtrip.c"))
                .arg("-o")
                .arg(dir.join(format!("roundtrip{std}.o"))));
        }
        let insn = match t {
            Target::Aarch64 => "ldr x0, [x1, #NPU_AVA_OFFSET]\n\tmov x2, #NPU_LAUNCH_PID_SHIFT",
            _ => "ld %r3, NPU_AVA_OFFSET(%r4)\n\tli %r5, NPU_LAUNCH_PID_SHIFT",
        };
        std::fs::write(
            dir.join("use.S"),
            format!("#include \"npu2_atsd.h\"\n\t.text\n\t{insn}\n"),
        )
        .unwrap();
        run(Command::new(gcc(t))
            .args(["-D__ASSEMBLY__", "-c", "-I"])
            .arg(&dir)
            .arg(dir.join("use.S"))
            .arg("-o")
            .arg(dir.join("use.o")));
    }
}

/// Every example's header, on its own and used from a translation unit
/// that takes the address of every prototype: C99 and C11 (`-pedantic`)
/// and C++17 with `-Wall -Wextra -Werror`, natively and with every cross
/// gcc.
#[test]
fn every_example_header_compiles() {
    let mut specs: Vec<_> = std::fs::read_dir("examples")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 3, "{specs:?}");
    let opts = options("all");
    for spec in &specs {
        let spec = spec.to_str().unwrap();
        let stem = Path::new(spec).file_stem().unwrap().to_str().unwrap();
        let src = std::fs::read_to_string(spec).unwrap();
        let prog = shootdown::load(spec, &src).unwrap();
        let dir = scratch(&format!("header-{stem}"));
        std::fs::write(dir.join(format!("{stem}.h")), header_text(spec, &opts)).unwrap();
        // After the standard headers a user's file includes first: none
        // of their macros may be a name of ours (issue 42).
        let mut uses = format!(
            "#include <stddef.h>\n#include <errno.h>\n#include <assert.h>\n#include <stdio.h>\n\
             #include \"{stem}.h\"\n#include \"{stem}.h\"\n"
        );
        uses.push_str("void *const fns[] = {\n");
        for s in &prog.seqs {
            uses.push_str(&format!("\t(void *)&{},\n", s.name));
        }
        uses.push_str("\t0\n};\n");
        std::fs::write(dir.join("use.c"), &uses).unwrap();
        std::fs::write(dir.join("use.cpp"), &uses).unwrap();
        let mut compilers: Vec<(String, &str, &str)> = vec![
            ("gcc".into(), "-std=c99", "use.c"),
            ("gcc".into(), "-std=c11", "use.c"),
            ("g++".into(), "-std=c++17", "use.cpp"),
        ];
        for t in CROSS {
            compilers.push((gcc(t), "-std=c99", "use.c"));
            compilers.push((gcc(t), "-std=c11", "use.c"));
        }
        for (cc, std, src) in compilers {
            // ISO C forbids object <-> function pointer casts under
            // -pedantic; the point here is the header, so C++ and C keep
            // -pedantic only where the casts are allowed.
            let mut cmd = Command::new(&cc);
            cmd.args([std, "-Wall", "-Wextra", "-Werror", "-c", "-I"])
                .arg(&dir)
                .arg(dir.join(src))
                .arg("-o")
                .arg(dir.join(format!("{src}.{std}.o")));
            run(&mut cmd);
            // The header alone, -pedantic.
            let alone = dir.join(format!(
                "alone.{}",
                if src.ends_with("cpp") { "cpp" } else { "c" }
            ));
            std::fs::write(&alone, format!("#include \"{stem}.h\"\nint x;\n")).unwrap();
            run(Command::new(&cc)
                .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
                .arg(&dir)
                .arg(&alone)
                .arg("-o")
                .arg(dir.join(format!("alone.{std}.o"))));
        }
    }
}

/// `--prefix` prefixes every name the header defines: each `#define`
/// (macros and the include guard, upper case) and each inline helper and
/// prototype (as given). One spec's header generated with two prefixes,
/// in both styles, is included twice in one C file that gcc compiles
/// strictly (no redefinition, no shadowed guard), and the two copies of
/// a field mask agree.
#[test]
fn prefix_applies_to_every_defined_name() {
    for (spec, field) in [
        ("examples/npu2_atsd.inv", "NPU_LAUNCH_PID_MASK"),
        ("examples/smmuv3_cmdq.inv", "TLBI_NH_VA_ASID_MASK"),
        ("examples/amd_iommu.inv", "IOMMU_CMD_TAIL_PTR_MASK"),
    ] {
        let stem = Path::new(spec).file_stem().unwrap().to_str().unwrap();
        let dir = scratch(&format!("prefix-{stem}"));
        let mut uses = String::from("#include <stdint.h>\n");
        for p in ["sd_", "sdk_"] {
            let opts = Options {
                prefix: p.to_string(),
                ..options("all")
            };
            let text = header_text(spec, &opts);
            let up = p.to_ascii_uppercase();
            for l in text.lines() {
                if let Some(d) = l.strip_prefix("#define ") {
                    assert!(d.starts_with(&up), "{spec} {p}: #define {d}");
                }
                if let Some(f) = l.strip_prefix("static inline uint64_t ") {
                    assert!(f.starts_with(p), "{spec} {p}: inline {f}");
                }
                if let Some(f) = l.strip_prefix("long ").or_else(|| l.strip_prefix("void ")) {
                    assert!(f.starts_with(p), "{spec} {p}: prototype {f}");
                }
            }
            std::fs::write(dir.join(format!("{p}{stem}.h")), text).unwrap();
            uses.push_str(&format!("#include \"{p}{stem}.h\"\n"));
        }
        let probe = src_has(spec, field);
        if probe {
            uses.push_str(&format!(
                "_Static_assert(SD_{field} == SDK_{field}, \"one mask\");\n"
            ));
        }
        uses.push_str("int x;\n");
        std::fs::write(dir.join("two.c"), uses).unwrap();
        run(Command::new("gcc")
            .args([
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-c",
                "-I",
            ])
            .arg(&dir)
            .arg(dir.join("two.c"))
            .arg("-o")
            .arg(dir.join("two.o")));
        assert!(probe, "{spec}: no {field} in its header");
    }
}

/// Does the unprefixed header of `spec` define `name`?
fn src_has(spec: &str, name: &str) -> bool {
    header_text(spec, &options("all")).contains(&format!("#define {name} "))
}
