//! Oracle: gcc and g++ on headers of specs whose names are chosen to
//! collide. The header joins device, register and field names with `_`
//! and uses device and parameter names as C parameters; a spec `gen`
//! accepts must give a header that compiles warning-free as C11 and C++17,
//! and a spec it rejects for a C name must give one that does not (or that
//! defines a macro twice). Also: local labels cannot collide with symbols
//! (ELFv1's `.name` code entries), checked with GNU as for every target.

use crate::support;

use shootdown::codegen::{Options, Style};
use shootdown::Target;
use std::fmt::Write as _;
use std::process::Command;
use support::*;

/// xorshift64*: a fixed sequence, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// Names that join into each other, C keywords, the header's own words.
const NAMES: &[&str] = &[
    "a", "b", "c", "a_b", "b_c", "d", "d_a", "A", "D", "x", "count", "d_count", "prep", "get",
    "offset", "OFFSET", "width", "int", "long", "main", "u64", "s", "s_0", "Ls_0", "r",
];

fn random_spec(rng: &mut Rng) -> String {
    let mut s = String::new();
    let ndev = 1 + rng.next() % 2;
    let mut first: Option<(String, String, bool)> = None;
    for _ in 0..ndev {
        let dev = rng.pick(NAMES);
        let dynamic = rng.next().is_multiple_of(2);
        let _ = writeln!(s, "device {dev} {{");
        if dynamic {
            s.push_str("    instances dynamic max 4\n");
        }
        let nreg = 1 + rng.next() % 2;
        for r in 0..nreg {
            let reg = rng.pick(NAMES);
            let _ = writeln!(s, "    reg {reg} {:#x} u64 le", r * 8);
            for f in 0..rng.next() % 3 {
                let _ = writeln!(s, "    field {reg}.{} lsb0 {}", rng.pick(NAMES), f * 4);
            }
            if first.is_none() {
                first = Some((dev.to_string(), reg.to_string(), dynamic));
            }
        }
        s.push_str("}\n");
    }
    let (dev, reg, dynamic) = first.unwrap();
    for _ in 0..1 + rng.next() % 2 {
        let params: Vec<&str> = (0..rng.next() % 3).map(|_| rng.pick(NAMES)).collect();
        let decl: Vec<String> = params.iter().map(|p| format!("{p}: u64")).collect();
        let value = params.first().copied().unwrap_or("1");
        let write = format!("{dev}.{reg} = {value}");
        let body = if dynamic {
            format!("each {dev} {{ {write} }}")
        } else {
            write
        };
        let _ = writeln!(
            s,
            "seq {}({}) {{ {body} }}",
            rng.pick(NAMES),
            decl.join(", ")
        );
    }
    s
}

/// Stand-ins for the three kernel headers a Linux-style header includes:
/// the definitions it relies on, with the kernel's names.
const KERNEL_STUBS: [(&str, &str); 3] = [
    (
        "linux/types.h",
        "typedef unsigned char u8;\ntypedef unsigned short u16;\ntypedef unsigned int u32;\n\
         typedef unsigned long long u64;\n#define __iomem\n",
    ),
    (
        "linux/bits.h",
        "#define GENMASK_ULL(h, l) ((~0ULL << (l)) & (~0ULL >> (63 - (h))))\n",
    ),
    (
        "linux/bitfield.h",
        "#define FIELD_PREP(m, v) (((u64)(v) << __builtin_ctzll(m)) & (m))\n\
         #define FIELD_GET(m, r) (((u64)(r) & (m)) >> __builtin_ctzll(m))\n",
    ),
];

/// Compile `header` (as `t.h`) with gcc -std=c11 and g++ -std=c++17,
/// warnings as errors; Ok, or the compilers' complaint.
fn compile_header(dir: &std::path::Path, header: &str) -> Result<(), String> {
    for (f, text) in KERNEL_STUBS {
        let p = dir.join("inc").join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(dir.join("t.h"), header).unwrap();
    std::fs::write(dir.join("t.c"), "#include \"t.h\"\nint use_it;\n").unwrap();
    for (cc, std) in [("gcc", "-std=c11"), ("g++", "-std=c++17")] {
        let mut cmd = Command::new(cc);
        if cc == "g++" {
            cmd.args(["-x", "c++"]);
        }
        let out = cmd
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .arg("-I")
            .arg(dir.join("inc"))
            .arg(dir.join("t.c"))
            .output()
            .unwrap_or_else(|e| panic!("{cc}: {e}"));
        if !out.status.success() {
            return Err(format!("{cc}: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    Ok(())
}

fn defines_twice(header: &str) -> bool {
    let mut names: Vec<&str> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| l.split(['(', ' ']).next().unwrap_or(""))
        .collect();
    names.sort_unstable();
    names.windows(2).any(|w| w[0] == w[1])
}

#[test]
fn headers_of_accepted_specs_compile_and_rejected_ones_would_not() {
    let dir = scratch("c-names");
    let mut rng = Rng(0x5eed_c0de_0016);
    let (mut accepted, mut rejected_by_names) = (0, 0);
    for i in 0..50 {
        let src = random_spec(&mut rng);
        let Ok(prog) = shootdown::load("t.inv", &src) else {
            continue;
        };
        let styles = [Style::Plain, Style::Linux].map(|style| Options {
            style,
            ..Options::default()
        });
        let headers = styles
            .each_ref()
            .map(|o| shootdown::emit::header::render(&prog, "t", o));
        match shootdown::ir::c_names::check(&prog, "", false) {
            Ok(()) => {
                accepted += 1;
                for h in &headers {
                    if let Err(e) = compile_header(&dir, h) {
                        panic!(
                            "case {i}: accepted, but the header does not compile:\n{src}\n{h}\n{e}"
                        );
                    }
                }
            }
            Err(d) => {
                rejected_by_names += 1;
                assert!(
                    headers
                        .iter()
                        .any(|h| compile_header(&dir, h).is_err() || defines_twice(h)),
                    "case {i}: rejected ({}), but both headers compile and define nothing twice:\n{src}",
                    d.message
                );
            }
        }
    }
    assert!(
        accepted >= 5 && rejected_by_names >= 5,
        "accepted {accepted}, rejected for C names {rejected_by_names}"
    );
}

/// `seq s` with a loop has local label 0; on power64 (ELFv1) `seq Ls_0`
/// has the code entry `.Ls_0`, which was also `s`'s first label.
#[test]
fn local_labels_never_collide_with_symbols() {
    let src = "target power64\n\
        device d {\n    instances dynamic max 4\n    reg a 0x0 u64 be\n}\n\
        seq s(x: u64) { each d { d.a = x } }\n\
        seq Ls_0(x: u64) { each d { d.a = x } }\n\
        seq Ls(x: u64) { each d { d.a = x } }\n";
    let dir = scratch("labels");
    let prog = shootdown::load("labels.inv", src).unwrap();
    for t in Target::ALL {
        let opts = Options::default();
        let c = shootdown::compile(&prog, t, &opts).unwrap();
        let asm = shootdown::emit::asm::render(&c, &opts);
        assemble(t, &asm, &dir, &format!("labels-{}", t.name()));
    }
}

/// The message that loading or compiling `src` for aarch64 fails with.
fn rejection(src: &str) -> String {
    shootdown::load("n.inv", src)
        .and_then(|p| {
            shootdown::compile(
                &p,
                shootdown::Target::Aarch64,
                &shootdown::Options::default(),
            )
        })
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{src}"))
        .message
}

/// One table of every C name (issue 42): records and queues clash with
/// devices' macros like anything else, naming both; C and kernel macro
/// names are refused; under the linux style on POWER, so are the names
/// asm/ppc_asm.h gives registers.
#[test]
fn records_queues_and_macro_names_are_in_the_one_table() {
    let base = "target aarch64\ndevice d {\n    reg a 0x0 u64 le\n    reg prod 0x8 u32 le\n    reg cons 0xc u32 le\n    field a.f lsb0 0..3\n}\n";
    let queue = "queue q on d {\n    entry 16 le\n    prod prod\n    cons cons\n    index wrap\n    full limit 10\n}\n";
    let record = |name: &str| format!("record {name} 16 {{\n    field f lsb0 0..3\n}}\n");
    let seq = "seq s(x: u64) {\n    enqueue q r { f: 1 }\n    issue q\n}\n";
    for (name, want) in [
        (
            "d_a",
            "`D_A_F_SHIFT` twice: for field `d.a.f` and for field `f` of record `d_a`",
        ),
        (
            "q_entry",
            "`Q_ENTRY_SIZE` twice: for record `q_entry` and for queue `q`",
        ),
    ] {
        let src = format!("{base}{}{}{queue}{}", record(name), record("r"), seq);
        let m = rejection(&src);
        assert!(m.contains(want), "{name}: {m}");
    }
    for (decl, what) in [
        ("seq s(errno: u64) { d.a = errno }", "parameter `errno`"),
        ("seq NULL(x: u64) { d.a = x }", "sequence `NULL`"),
        ("seq wmb(x: u64) { d.a = x }", "sequence `wmb`"),
        ("seq s(assert: u64) { d.a = assert }", "parameter `assert`"),
    ] {
        let m = rejection(&format!("{base}{decl}\n"));
        assert!(m.contains(what), "{decl}: {m}");
    }
    let power = "target power64\ndevice d { reg a 0x0 u64 be }\nseq r3(x: u64) { d.a = x }\n";
    let p = shootdown::load("n.inv", power).unwrap();
    let linux = shootdown::Options {
        style: shootdown::Style::Linux,
        ..shootdown::Options::default()
    };
    let d = shootdown::compile(&p, shootdown::Target::Power64, &linux)
        .err()
        .expect("r3 accepted under linux style");
    assert!(d.message.contains("ppc_asm.h"), "{}", d.message);
    // The plain style has no such header.
    assert!(shootdown::compile(
        &p,
        shootdown::Target::Power64,
        &shootdown::Options::default()
    )
    .is_ok());
}
