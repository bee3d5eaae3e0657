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
