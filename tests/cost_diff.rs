//! `shootdown cost` and `shootdown diff` end to end: the crossovers of the
//! model land on the thresholds the generated headers print, the plot is
//! an SVG with its legend and threshold marker, and the naive vs
//! optimized diff of the NPU2 ATSD seed shows 6 vs 1 eieio executed.

use crate::support::shootdown;

fn json(args: &[&str]) -> serde_json::Value {
    let o = shootdown(args);
    assert!(
        o.status.success(),
        "shootdown {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON output")
}

/// `#define NAME VALUE` from a checked-in header.
fn header_define(header: &str, name: &str) -> u64 {
    let text =
        std::fs::read_to_string(format!("{}/generated/{header}", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("#define ")?.strip_prefix(name)?;
            rest.trim().parse().ok()
        })
        .unwrap_or_else(|| panic!("{name} not in {header}"))
}

fn exact_to_all(t: &serde_json::Value) -> &serde_json::Value {
    t["crossovers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"] == "exact" && c["to"] == "all")
        .expect("an exact -> all crossover")
}

#[test]
fn tce_kill_crossover_is_the_header_threshold() {
    let t = json(&[
        "cost",
        "examples/npu2_tce_kill.inv",
        "--seq",
        "tce_kill",
        "--json",
    ]);
    let define = header_define("npu2_tce_kill.h", "TCE_KILL_TCE_THRESHOLD");
    assert_eq!(t["threshold"]["name"], "TCE_KILL_TCE_THRESHOLD");
    assert_eq!(t["threshold"]["value"].as_u64(), Some(define));
    assert_eq!(t["threshold"]["source"], "derived");
    let x = exact_to_all(&t);
    // Found by bisection: the loop is cheapest up to the threshold and
    // the flush-all from one granule more.
    assert_eq!(x["last_granules"].as_u64(), Some(define));
    let g = t["granule"].as_u64().unwrap();
    assert_eq!(g, 4096);
    assert_eq!(x["last"].as_u64(), Some(define * g));
    assert_eq!(x["first"].as_u64(), Some((define + 1) * g));
    // Only one change of strategy over 4K..1G.
    assert_eq!(t["crossovers"].as_array().unwrap().len(), 1);
    // auto is what the model says is cheapest at every row.
    for r in t["rows"].as_array().unwrap() {
        assert_eq!(r["auto"], r["cheapest"], "row {r}");
    }
}

#[test]
fn tce_kill_eight_pages_loop_512_pages_flush() {
    let t = json(&[
        "cost",
        "examples/npu2_tce_kill.inv",
        "--seq",
        "tce_kill",
        "--sizes",
        "8p,512p",
        "--json",
    ]);
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let cost = |r: &serde_json::Value, s: &str| r["cost"][s].as_u64().unwrap();
    assert_eq!(rows[0]["granules"].as_u64(), Some(8));
    assert_eq!(rows[0]["cheapest"], "exact");
    assert!(cost(&rows[0], "exact") < cost(&rows[0], "all"));
    // 8 kill-one writes at 50 + 100 ns; a kill-all and its refill.
    assert_eq!(cost(&rows[0], "exact"), 8 * 150);
    assert_eq!(cost(&rows[0], "all"), 150 + 19200);
    assert_eq!(rows[1]["granules"].as_u64(), Some(512));
    assert_eq!(rows[1]["cheapest"], "all");
    assert!(cost(&rows[1], "all") < cost(&rows[1], "exact"));
    // The set's sizes are a parameter: no `single`.
    assert!(rows[0]["cost"]["single"].is_null());
}

#[test]
fn smmu_walk_crossover_is_the_header_threshold() {
    let t = json(&[
        "cost",
        "examples/arm_smmu.inv",
        "--seq",
        "tlb_inv_walk_s1",
        "--json",
    ]);
    let define = header_define("arm_smmu.h", "TLB_INV_WALK_S1_S1_THRESHOLD");
    assert_eq!(t["threshold"]["value"].as_u64(), Some(define));
    assert_eq!(exact_to_all(&t)["last_granules"].as_u64(), Some(define));
}

#[test]
fn npu_range_single_over_invalidates() {
    // No costs in the spec: model them on the command line.
    let t = json(&[
        "cost",
        "examples/npu2_atsd.inv",
        "--seq",
        "invalidate_range",
        "--sizes",
        "64K,128K",
        "--cost",
        "invalidate=1500",
        "--cost",
        "refill=100",
        "--instances",
        "2",
        "--json",
    ]);
    let rows = t["rows"].as_array().unwrap();
    // 128K at an aligned start: one 2M ATSD per NPU, 30 granules refilled.
    let single = &rows[1]["counts"]["single"];
    assert_eq!(single["ops"].as_u64(), Some(2));
    assert_eq!(single["refill"].as_u64(), Some(30));
    let exact = &rows[1]["counts"]["exact"];
    assert_eq!(exact["ops"].as_u64(), Some(4));
    assert_eq!(exact["refill"].as_u64(), Some(0));
}

#[test]
fn svg_has_lines_legend_and_threshold_marker() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tce.svg");
    let p = path.to_str().unwrap();
    let args = [
        "cost",
        "examples/npu2_tce_kill.inv",
        "--seq",
        "tce_kill",
        "--svg",
        p,
    ];
    let o = shootdown(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.contains("<svg"),
        "not an SVG"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    // Text elements hold their text on lines of their own.
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    for label in [
        "exact",
        "all",
        "auto (the generated code)",
        "threshold TCE_KILL_TCE_THRESHOLD = 129 (516K)",
        "threshold 129 (516K)",
        "request size (bytes, log scale)",
        "modelled cost (ns, log scale)",
        "4K",
        "1G",
    ] {
        assert!(texts.contains(&label), "missing text `{label}`");
    }
    // One line per strategy plus the legend samples and the marker.
    assert!(svg.matches("<polyline").count() >= 3);
    // Balanced enough to be XML: every opened element is closed.
    let opens = svg.matches('<').count();
    let closes = svg.matches('>').count();
    assert_eq!(opens, closes);
    // Deterministic.
    let o = shootdown(&args);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), svg);
}

#[test]
fn diff_naive_vs_optimized_atsd_six_npus() {
    let o = shootdown(&[
        "diff",
        "examples/npu2_atsd.inv",
        "--seq",
        "invalidate_va",
        "--instances",
        "6",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10010000",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("--- a"), "no unified diff:\n{text}");
    assert!(text.contains("+++ b"));
    let dynamic = text
        .split("dynamic counts")
        .nth(1)
        .expect("dynamic counts section");
    let row = |name: &str| -> Vec<u64> {
        let line = dynamic
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` row in:\n{dynamic}"));
        line[line.find(name).unwrap() + name.len()..]
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect()
    };
    assert_eq!(row("barrier eieio"), vec![6, 1]);
    // 2N stores either way, N launches.
    assert_eq!(row("stores"), vec![12, 12]);
    assert_eq!(row("ops (launches)"), vec![6, 6]);
}

#[test]
fn missing_seq_is_bad_usage_with_a_message() {
    for cmd in ["cost", "diff"] {
        let o = shootdown(&[cmd, "examples/npu2_tce_kill.inv"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--seq"), "{cmd}: {err}");
        assert!(err.contains("tce_kill"), "{cmd}: {err}");
    }
    let o = shootdown(&["cost", "examples/npu2_tce_kill.inv", "--seq", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no sequence `nope`"));
}

/// Queue sequences: `diff --arg` runs the simulated consumer, counts the
/// commands it took by record and prices them with the queue's granule
/// set; per-page commands below the header's derived threshold, one ASID
/// flush above it, and `--set` pins the threshold.
#[test]
fn smmuv3_queue_commands_are_counted_and_priced() {
    let t = header_define("smmuv3_cmdq.h", "TLB_INV_RANGE_AUTO_S1CMD_THRESHOLD");
    // (50 + 20000) / 50 from the set's stated costs.
    assert_eq!(t, 401);
    let run = |pages: u64, pin: Option<u64>| -> String {
        let size = format!("size={:#x}", pages << 12);
        let pin = pin.map(|p| format!("TLB_INV_RANGE_AUTO_S1CMD_THRESHOLD={p}"));
        let mut args = vec![
            "diff",
            "examples/smmuv3_cmdq.inv",
            "--seq",
            "tlb_inv_range_auto",
            "--arg",
            "cmdq_log2n=8",
            "--arg",
            "iova=0x40000000",
            "--arg",
            &size,
        ];
        if let Some(p) = &pin {
            args.extend(["--set", p]);
        }
        let o = shootdown(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        text.split("dynamic counts").nth(1).unwrap().to_string()
    };
    let row = |text: &str, name: &str| -> Vec<u64> {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .map(|l| {
                l[l.find(name).unwrap() + name.len()..]
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect()
            })
            .unwrap_or_default()
    };
    let below = run(t, None);
    assert_eq!(row(&below, "command tlbi_nh_va"), vec![t, t]);
    assert_eq!(row(&below, "command tlbi_nh_asid"), Vec::<u64>::new());
    assert_eq!(row(&below, "MODELLED cost (ns)"), vec![50 * t, 50 * t]);
    let above = run(t + 1, None);
    assert_eq!(row(&above, "command tlbi_nh_asid"), vec![1, 1]);
    assert_eq!(row(&above, "flush-alls"), vec![1, 1]);
    assert_eq!(row(&above, "MODELLED cost (ns)"), vec![20050, 20050]);
    // One doorbell, after one store barrier, either way.
    assert_eq!(row(&above, "barrier dmb oshst"), vec![1, 1]);
    let pinned = run(t + 1, Some(100_000));
    assert_eq!(row(&pinned, "command tlbi_nh_va"), vec![t + 1, t + 1]);
}

/// `cost` on a queue sequence without a cover: its `if (size >> 12) >
/// threshold(s1cmd)` is the request; per-page commands (exact) cross over
/// to the ASID flush (all) at the header's threshold, and the range-command
/// variant priced beside them with `--with` issues one command for a
/// power-of-two number of pages and two for 0x1f1f pages (NUM 31 at
/// SCALE 0, then at SCALE 8), as the kernel's __arm_smmu_tlb_inv_range.
#[test]
fn smmuv3_queue_cost_table_per_page_range_and_asid() {
    let define = header_define("smmuv3_cmdq.h", "TLB_INV_RANGE_AUTO_S1CMD_THRESHOLD");
    let t = json(&[
        "cost",
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_range_auto",
        "--sizes",
        "1p,2p,400p,401p,402p,1024p,7967p",
        "--with",
        "tlb_inv_range_ril",
        "--arg",
        "granule=4096",
        "--arg",
        "tg=12",
        "--json",
    ]);
    assert_eq!(t["threshold"]["value"].as_u64(), Some(define));
    assert_eq!(t["threshold"]["source"], "derived");
    let x = exact_to_all(&t);
    assert_eq!(x["last_granules"].as_u64(), Some(define));
    let strategies: Vec<&str> = t["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(strategies, ["exact", "all", "auto"]);
    let rows = t["rows"].as_array().unwrap();
    let cost = |r: &serde_json::Value, s: &str| r["cost"][s].as_u64().unwrap();
    for r in rows {
        let pages = r["granules"].as_u64().unwrap();
        // 50 ns per consumed TLBI_NH_VA; 50 + 20000 for the ASID flush.
        assert_eq!(cost(r, "exact"), 50 * pages);
        assert_eq!(cost(r, "all"), 20050);
        let auto = if pages > define { 20050 } else { 50 * pages };
        assert_eq!(cost(r, "auto"), auto, "{pages} pages");
        let commands = |s: &str| r["counts"][s]["ops"].as_u64().unwrap();
        assert_eq!(commands("exact"), pages);
        assert_eq!(commands("all"), 1);
    }
    let ril = |pages: u64| {
        rows.iter()
            .find(|r| r["granules"].as_u64() == Some(pages))
            .unwrap()["with"]["tlb_inv_range_ril"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(ril(1), 50);
    assert_eq!(ril(1024), 50);
    // 7967 = 0x1f1f: NUM 31 at SCALE 0, then NUM 31 at SCALE 8.
    assert_eq!(ril(7967), 100);
    // 401 = 17 + (3 << 7).
    assert_eq!(ril(401), 100);
}

/// Issue 37: `auto` is the step the generated code takes, drawn from the
/// plotted points themselves: it follows `exact` to the threshold, drops
/// vertically there to `all`, and never runs below both strategies (the
/// old plot drew a straight line from the last loop sample to the first
/// flush sample, under both).
#[test]
fn cost_plot_draws_auto_as_a_step_at_the_threshold() {
    use shootdown::cost::{self, Strategy};
    for (spec, seq, args) in [
        ("examples/arm_smmu.inv", "tlb_inv_walk_s1", vec![]),
        (
            "examples/smmuv3_cmdq.inv",
            "tlb_inv_range_auto",
            vec![
                ("cmdq_log2n".to_string(), 8u64),
                ("iova".to_string(), 0x4000_0000),
            ],
        ),
    ] {
        let src = std::fs::read_to_string(spec).unwrap();
        let prog = shootdown::load(spec, &src).unwrap();
        let req = cost::Request {
            target: shootdown::output::default_targets(&prog)[0],
            passes: shootdown::passes::parse_list("all").unwrap(),
            args,
            sizes: None,
            start: None,
            instances: None,
            reads: Default::default(),
            pins: Vec::new(),
            costs: Vec::new(),
            with: Vec::new(),
        };
        let t = cost::table(&prog, seq, &req).unwrap_or_else(|_| panic!("{spec} {seq}"));
        let th = t.threshold.as_ref().expect("a derived threshold");
        let x_th = (th.bytes as f64).log2();
        let pts = shootdown::cost::plot::auto_points(&t);
        let steps: Vec<(usize, &(f64, f64))> = pts
            .iter()
            .enumerate()
            .filter(|(i, p)| pts.get(i + 1).is_some_and(|q| q.0 == p.0))
            .collect();
        assert_eq!(steps.len(), 1, "{spec}: one step, got {pts:?}");
        let (i, at) = steps[0];
        assert!(
            (at.0 - x_th).abs() < 1e-9,
            "{spec}: the step is at the threshold {x_th}, not {}",
            at.0
        );
        // Samples: auto's own costs; and no point below both lines.
        let line = |s: Strategy, x: f64| -> f64 {
            let lg = |b: u64| (b as f64).log2();
            let k = t
                .rows
                .windows(2)
                .position(|w| lg(w[0].size) <= x && x <= lg(w[1].size))
                .unwrap();
            let c = |j: usize| t.rows[j].cost[&s].unwrap().max(1) as f64;
            let (x0, x1) = (lg(t.rows[k].size), lg(t.rows[k + 1].size));
            (c(k).ln() + (c(k + 1).ln() - c(k).ln()) * (x - x0) / (x1 - x0)).exp()
        };
        // From the loop's line to the flush's, at the threshold.
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
        assert!(near(at.1, line(Strategy::Exact, at.0)), "{spec}: {pts:?}");
        assert!(
            near(pts[i + 1].1, line(Strategy::All, at.0)),
            "{spec}: {pts:?}"
        );
        for p in &pts {
            let low = line(Strategy::Exact, p.0).min(line(Strategy::All, p.0));
            assert!(
                p.1 >= low * (1.0 - 1e-9),
                "{spec}: auto at {p:?} below both strategies ({low})"
            );
        }
        let samples = pts.len() - 2;
        assert_eq!(samples, t.rows.len(), "{spec}");
    }
}
