//! `shootdown explain` (issue 37, first part): every required ordering of
//! every example, on every target of its `target` line, is accounted for
//! (a barrier that orders it, or the target's own ordering), and every
//! barrier placement put in the code names orderings that `explain` lists
//! it for.

use shootdown::codegen::Options;
use shootdown::emit::explain::explain;
use shootdown::ir::Stmt;
use shootdown::Target;
use std::process::Command;

#[test]
fn every_required_ordering_of_every_example_is_explained() {
    let mut paths: Vec<_> = std::fs::read_dir("examples")
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .collect();
    paths.sort();
    let (mut edges, mut by_target) = (0, 0);
    for path in paths {
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = shootdown::load(&path.display().to_string(), &src).unwrap();
        for (t, _) in &prog.targets {
            let t = Target::from_name(t).unwrap();
            let c = shootdown::compile(&prog, t, &Options::default()).unwrap();
            let x = explain(&c, None);
            assert_eq!(x.sequences.len(), c.opt.seqs.len());
            for (s, seq) in x.sequences.iter().zip(&c.opt.seqs) {
                let what = format!("{} {t} {}", path.display(), s.name);
                assert_eq!(s.orderings.len(), seq.edges.len(), "{what}");
                for (i, o) in s.orderings.iter().enumerate() {
                    assert_eq!(o.edge, i);
                    assert!(!o.why.contains("NOT MET"), "{what}: e{i}: {}", o.why);
                    match o.met_by {
                        "target" => by_target += 1,
                        "barrier" => assert!(!o.barriers.is_empty(), "{what}: e{i}"),
                        m => panic!("{what}: e{i}: met by {m}"),
                    }
                    edges += 1;
                }
                // Each placed barrier's orderings list it.
                shootdown::ir::walk(&seq.body, &mut |st| {
                    if let Stmt::Barrier { name, covers, .. } = st {
                        for &e in covers {
                            let o = &s.orderings[e];
                            assert!(
                                o.barriers.iter().any(|b| b.name == name.as_str()),
                                "{what}: `{name}` covers e{e} but explain says {}",
                                o.why
                            );
                        }
                    }
                });
            }
        }
    }
    eprintln!(
        "explain: {edges} required orderings accounted for, {by_target} by the target's model"
    );
    assert!(edges > 200, "{edges}");
}

/// What `explain` says a placed barrier is for is what the checked-in
/// `.S` (generated/) says beside that barrier: every ordering met by a
/// barrier placement put there is named in a note (`eN FROM -> TO,
/// required by line L`) directly above an instruction of that barrier, or
/// is among the ones such a note counts as `and K more (see explain)`;
/// and every ordering a note names is one `explain` gives that barrier.
/// (Orderings no placement claims, met by barriers already on the path,
/// have no note: explain's answer for those is not checked here.)
#[test]
fn every_explained_barrier_has_its_note_in_generated() {
    let (mut named, mut counted) = (0, 0);
    for path in crate::order_proof::examples() {
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = shootdown::load(&path, &src).unwrap();
        let stem = std::path::Path::new(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string();
        for (t, _) in &prog.targets {
            let t = Target::from_name(t).unwrap();
            let asm = std::fs::read_to_string(format!("generated/{stem}.{t}.S")).unwrap();
            let c = shootdown::compile(&prog, t, &Options::default()).unwrap();
            for (s, seq) in explain(&c, None).sequences.into_iter().zip(&c.opt.seqs) {
                // The orderings a placement claims (explain's other
                // answers, barriers already on the path, are not notes).
                let mut claimed = std::collections::BTreeSet::new();
                shootdown::ir::walk(&seq.body, &mut |st| {
                    if let Stmt::Barrier {
                        origin: shootdown::ir::Origin::Pass("place-barriers"),
                        covers,
                        ..
                    } = st
                    {
                        claimed.extend(covers.iter().copied());
                    }
                });
                let from = asm
                    .find(&format!("\n{}:\n", s.name))
                    .unwrap_or_else(|| panic!("{stem} {t}: no function {}", s.name));
                let to = from + asm[from..].find(&format!(".size {},", s.name)).unwrap();
                let lines: Vec<&str> = asm[from..to].lines().collect();
                // (note, first instruction after it) of every placement.
                let notes: Vec<(&str, &str)> = lines
                    .windows(2)
                    .filter(|w| w[0].contains("placed by place-barriers:"))
                    .map(|w| (w[0], w[1].trim()))
                    .collect();
                let text = |o: &shootdown::emit::explain::Ordering| {
                    format!(
                        "e{} {} -> {}, required by line {}",
                        o.edge, o.from, o.to, o.required_by
                    )
                };
                let mut unnamed: std::collections::BTreeMap<&str, usize> = Default::default();
                for o in s.orderings.iter().filter(|o| claimed.contains(&o.edge)) {
                    for b in o
                        .barriers
                        .iter()
                        .filter(|b| b.placed_by == "place-barriers")
                    {
                        let first = b.name.split("; ").next().unwrap();
                        let n = text(o);
                        if notes.iter().any(|(note, insn)| {
                            insn.starts_with(first)
                                && (note.contains(&format!("{n};"))
                                    || note.contains(&format!("{n} */")))
                        }) {
                            named += 1;
                        } else {
                            *unnamed.entry(first).or_default() += 1;
                        }
                    }
                }
                for (first, n) in unnamed {
                    let more: usize = notes
                        .iter()
                        .filter(|(_, insn)| insn.starts_with(first))
                        .filter_map(|(note, _)| {
                            note.split("; and ")
                                .nth(1)?
                                .split(' ')
                                .next()?
                                .parse::<usize>()
                                .ok()
                        })
                        .sum();
                    assert!(
                        n <= more,
                        "{stem} {t} {}: {n} orderings explain gives `{first}` are in no note above it (notes count {more} more)",
                        s.name
                    );
                    counted += n;
                }
                // The converse: a note names only orderings of its barrier.
                for (note, insn) in &notes {
                    let body = note
                        .split("placed by place-barriers: ")
                        .nth(1)
                        .unwrap_or("");
                    for part in body.trim_end_matches(" */").split("; ") {
                        if part.starts_with("and ") {
                            continue;
                        }
                        assert!(
                            s.orderings.iter().any(|o| text(o) == part
                                && o.barriers.iter().any(|b| insn.starts_with(b.name.split("; ").next().unwrap()))),
                            "{stem} {t} {}: the note `{part}` above `{insn}` is not what explain says",
                            s.name
                        );
                    }
                }
            }
        }
    }
    eprintln!("explain: {named} barrier orderings named in generated/ notes, {counted} counted by `and K more`");
    assert!(named > 100, "{named}");
}

/// An ordering of one feature variant is met by that variant's barriers:
/// radix_tlb's `flush_tlb_page_local` with ARCH_31 completes its `tlbiel`
/// with the spec's own `ptesync` (line 87), not with the `ptesync` placed
/// in the variant without it (the `tlbiel` is the same operation in both).
#[test]
fn a_variants_ordering_is_met_by_its_own_barrier() {
    let path = "examples/radix_tlb.inv";
    let src = std::fs::read_to_string(path).unwrap();
    let prog = shootdown::load(path, &src).unwrap();
    let c = shootdown::compile(&prog, Target::Power64le, &Options::default()).unwrap();
    let x = explain(&c, Some("flush_tlb_page_local"));
    let s = &x.sequences[0];
    let to_return: Vec<_> = s
        .orderings
        .iter()
        .filter(|o| o.to == "the return")
        .collect();
    assert_eq!(to_return.len(), 2, "one per variant");
    let written: Vec<Option<usize>> = to_return
        .iter()
        .map(|o| o.barriers.iter().find_map(|b| b.line))
        .collect();
    assert!(
        written.contains(&Some(87)),
        "{:?}",
        to_return.iter().map(|o| &o.why).collect::<Vec<_>>()
    );
    assert!(written.contains(&None), "the other variant's is placed");
}

#[test]
fn explain_cli_text_json_and_bad_seq() {
    let explain = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_shootdown"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("explain")
            .args(args)
            .output()
            .unwrap()
    };
    let atsd = [
        "examples/npu2_atsd.inv",
        "--seq",
        "invalidate_va",
        "--target",
    ];
    let o = explain(&[&atsd[..], &["power64", "--json"]].concat());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e0 = &v["sequences"][0]["orderings"][0];
    // `require ava before launch`: one eieio between the AVA and LAUNCH loops.
    assert_eq!(e0["barriers"][0]["name"], "eieio");
    assert_eq!(e0["barriers"][0]["placed_by"], "place-barriers");
    assert!(e0["from"].as_str().unwrap().starts_with("write npu.ava"));
    let o = explain(&["examples/npu2_atsd.inv", "--seq", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    // On aarch64 the same device's accesses stay in order (nGnRE): no barrier.
    let o = explain(&[&atsd[..], &["aarch64"]].concat());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("e0:") && text.contains("no barrier"),
        "{text}"
    );
}
