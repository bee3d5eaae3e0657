//! `assume COND`: a precondition the caller guarantees. The checks it
//! decides are not generated, the header says what the caller owes,
//! `verify` runs the code only within the facts, and the spec's meaning
//! and `trace` say when arguments break one. The folds themselves are
//! property-tested in src/ir/facts.rs; the e6500 lock without its owner
//! check is compared with the kernel's code in tests/reference.rs.

use crate::support::{scratch, shootdown, shootdown_ok as stdout};

/// A device cover whose size the caller bounds and whose start it
/// aligns (what a kernel caller of an ATSD-style flush passes).
const SPEC: &str = "target power64le, aarch64, x86_64, riscv64
device npu {
    instances 2
    reg launch 0x00 u64 be
    reg ava    0x08 u64 be
    field launch.ap   msb0 15..17
    field launch.is   msb0 12
    require ava before launch
}
granules atsd on npu {
    64K set launch.ap = 5  addr ava
    2M  set launch.ap = 1  addr ava
    all set launch.is = 1
}
seq inv(start: u64, size: u64) {
    assume size >= 0x10000
    assume size <= 0x200000
    assume (start & 0xffff) == 0
    cover start, size with atsd single {
        each npu {
            npu.ava = $addr
            npu.launch = $bits
        }
    }
}
";

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Instructions (lines starting with a tab and a letter) of every `.S`
/// `gen` writes for `spec`.
fn instructions(spec: &str, out: &std::path::Path) -> usize {
    stdout(&["gen", spec, "--out", out.to_str().unwrap()]);
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "S"))
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| {
                    l.starts_with('\t') && l[1..].starts_with(|c: char| c.is_ascii_lowercase())
                })
                .count()
        })
        .sum()
}

#[test]
fn a_bounded_size_drops_the_empty_range_test_and_verify_agrees() {
    let dir = scratch("assume-cover");
    let with = write(&dir, "with.inv", SPEC);
    let plain: String = SPEC
        .lines()
        .filter(|l| !l.contains("assume"))
        .map(|l| format!("{l}\n"))
        .collect();
    let without = write(&dir, "without.inv", &plain);
    let opt = stdout(&["show", &with, "--stage", "opt"]);
    assert!(
        opt.contains("pass assume: given `size >= 0x10000, size <= 0x200000, (start & 0xffff) == 0` and the tests around it, the test of `cover: an empty range invalidates nothing` always holds"),
        "{opt}"
    );
    // Fewer instructions on every target, and the same with no assume.
    let (a, b) = (
        instructions(&with, &dir.join("a")),
        instructions(&without, &dir.join("b")),
    );
    assert!(a < b, "with assumes {a}, without {b}");
    // The emulator runs the folded code against the spec's meaning
    // (the unfolded checked program) on worlds moved inside the facts.
    let v = stdout(&["verify", &with]);
    assert!(v.starts_with("PASS"), "{v}");
}

#[test]
fn the_header_states_the_contract_and_the_owner_check_is_gone() {
    let dir = scratch("assume-e6500");
    stdout(&[
        "gen",
        "examples/e6500_tcd_lock.inv",
        "--target",
        "power64",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let h = std::fs::read_to_string(dir.join("e6500_tcd_lock.h")).unwrap();
    assert!(
        h.contains("/* tcd_lock: the caller guarantees cpu < 255 (not checked); returns 0; 1 when"),
        "{h}"
    );
    assert!(!h.contains("-22"), "{h}");
    let s = std::fs::read_to_string(dir.join("e6500_tcd_lock.power64.S")).unwrap();
    assert!(!s.contains("li %r3,-22"), "{s}");
    // Without the fact the check and its return are back.
    let src = std::fs::read_to_string("examples/e6500_tcd_lock.inv").unwrap();
    let plain: String = src
        .lines()
        .filter(|l| l.trim() != "assume cpu < 255")
        .map(|l| format!("{l}\n"))
        .collect();
    let spec = write(&dir, "plain.inv", &plain);
    stdout(&[
        "gen",
        &spec,
        "--target",
        "power64",
        "--out",
        dir.join("p").to_str().unwrap(),
    ]);
    let s = std::fs::read_to_string(dir.join("p/plain.power64.S")).unwrap();
    assert!(
        s.contains("cmpldi 7,%r4,255") && s.contains("li %r3,-22"),
        "{s}"
    );
}

#[test]
fn arguments_that_break_an_assume_are_named() {
    let stderr = |cpu: &str| {
        let arg = format!("cpu={cpu}");
        let o = shootdown(&[
            "trace",
            "examples/e6500_tcd_lock.inv",
            "--seq",
            "tcd_lock",
            "--arg",
            &arg,
        ]);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = stderr("300");
    assert!(
        err.contains("warning: these arguments break `assume cpu < 255` (line"),
        "{err}"
    );
    assert!(!stderr("254").contains("break"));
}

#[test]
fn the_meaning_refuses_a_run_outside_the_facts() {
    use shootdown::verify::interp::{self, InterpError, World};
    let src = std::fs::read_to_string("examples/e6500_tcd_lock.inv").unwrap();
    let prog = shootdown::load("e6500_tcd_lock.inv", &src).unwrap();
    let seq = prog.seqs.iter().find(|s| s.name == "tcd_lock").unwrap();
    let mut w = World {
        params: vec![0, 255],
        ..World::default()
    };
    w.memory.insert(0, vec![0; 8]);
    assert_eq!(
        interp::run(&prog, seq, &w),
        Err(InterpError::Assumed {
            text: "cpu < 255".into()
        })
    );
    w.params[1] = 254;
    assert_eq!(interp::run(&prog, seq, &w).map(|o| o.ret), Ok(0));
}

/// The tests around an `if` are facts inside it: with arm-smmu's walk
/// threshold pinned to 0 (the qcom quirk), a nonempty range always takes
/// the flush-all, so the threshold test inside `if size != 0` goes.
/// `verify --set` runs the meaning with the same pin (it ran the unpinned
/// spec before, and failed every world that takes the loop there).
#[test]
fn an_enclosing_test_decides_a_pinned_threshold() {
    let pin = ["--set", "TLB_INV_WALK_S1_S1_THRESHOLD=0"];
    let mut show = vec![
        "show",
        "examples/arm_smmu.inv",
        "--stage",
        "opt",
        "--seq",
        "tlb_inv_walk_s1",
    ];
    show.extend(pin);
    let opt = stdout(&show);
    assert!(
        opt.contains("pass assume: given the tests around it, the test of `cover `s1` auto: up to 0 granules (its threshold) the loop, past it the flush-all` never holds: only its else arm is kept"),
        "{opt}"
    );
    assert!(!opt.contains("range local0"), "{opt}");
    let mut verify = vec!["verify", "examples/arm_smmu.inv"];
    verify.extend(pin);
    let v = stdout(&verify);
    assert!(v.starts_with("PASS"), "{v}");
    // Unpinned, the loop stays.
    assert!(stdout(&show[..6]).contains("range local0"));
}
