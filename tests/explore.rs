//! `shootdown explore` pages, opened in a real browser (Debian's headless
//! Chromium, installed by scripts/install-deps.sh): for every example the
//! page loads with no script error; in every target's tab, clicking each
//! spec line lights up exactly the instructions that the golden `.S`
//! (generated/, the file `gen` writes) attributes to that line, and
//! clicking an instruction lights up its line; each sequence's ordering
//! graph has one node per access of the optimized IR (walked here), plus
//! the caller's stores and the return. One page is also rendered to a
//! PNG, the picture docs/explore.png was taken from.
//!
//! The checks run inside the page from a script this test appends (the
//! page's own script only handles clicks), which writes what it saw into
//! the DOM that `chromium --dump-dom` prints.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::shootdown;

fn chromium() -> PathBuf {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(o) = Command::new("which").arg(c).output() {
            if o.status.success() {
                return PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            }
        }
    }
    panic!("no chromium: scripts/install-deps.sh installs Debian's `chromium`")
}

fn browser(args: &[&str], page: &Path) -> (String, String) {
    let url = format!("file://{}", page.display());
    let o = Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
        ])
        .args(args)
        .arg(&url)
        .output()
        .expect("run chromium");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Catches every error from the start (in <head>, before the page's
/// script); at `load`, clicks through every tab and spec line and writes
/// the result as JSON into `<pre id="harness">`.
const HEAD_HARNESS: &str = r#"<script>window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message)));</script>"#;
const BODY_HARNESS: &str = r#"<script>
window.addEventListener("load", () => {
  const out = { errors: window.__errors, targets: {} };
  for (const b of document.querySelectorAll("nav button")) {
    b.click();
    const r = { lines: {}, graphs: {} };
    for (const sl of document.querySelectorAll(".sl.used")) {
      sl.click();
      r.lines[sl.dataset.line] = [...document.querySelectorAll(".target.active .ins.hl")]
        .map(e => e.dataset.fn + "\t" + e.textContent);
    }
    for (const g of document.querySelectorAll(".graphs.active section.g"))
      r.graphs[g.dataset.seq] = g.querySelectorAll(".ograph .node").length;
    const ins = [...document.querySelectorAll(".target.active .ins[data-line]")];
    const pick = ins[Math.floor(ins.length / 2)];
    pick.click();
    r.back = [...document.querySelectorAll(".sl.hl")].map(e => e.dataset.line);
    r.back_want = pick.dataset.line;
    out.targets[b.dataset.target] = r;
  }
  const pre = document.createElement("pre");
  pre.id = "harness";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

/// The golden `.S`'s instructions by spec line: function symbol and text
/// under each `/* N: ... */` comment.
fn expected(s_file: &Path) -> BTreeMap<usize, Vec<String>> {
    let text = std::fs::read_to_string(s_file).unwrap();
    let mut out: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let (mut func, mut line) = (String::new(), None);
    for l in text.lines() {
        if let Some(name) = l.strip_suffix(':') {
            if !name.starts_with(".L") && !name.contains(char::is_whitespace) {
                func = name.trim_start_matches('.').to_string();
                line = None;
            }
            continue;
        }
        let Some(body) = l.strip_prefix('\t') else {
            continue;
        };
        if let Some(c) = body.strip_prefix("/* ") {
            line = c.split_once(": ").and_then(|(n, _)| n.parse().ok());
            continue;
        }
        if body.starts_with('.') || func.is_empty() {
            continue;
        }
        if let Some(n) = line {
            out.entry(n).or_default().push(format!("{func}\t{body}"));
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// Accesses per sequence of the optimized IR, counted here from the
/// statements (plus the entry and the return).
fn accesses(spec: &str, target: shootdown::Target) -> BTreeMap<String, usize> {
    use shootdown::ir::Stmt;
    let src = std::fs::read_to_string(spec).unwrap();
    let prog = shootdown::load(spec, &src).unwrap();
    let c = shootdown::compile(&prog, target, &shootdown::Options::default()).unwrap();
    c.opt
        .seqs
        .iter()
        .map(|s| {
            let mut ids = BTreeSet::new();
            shootdown::ir::walk(&s.body, &mut |st| match st {
                Stmt::Write { access, .. }
                | Stmt::Poll { access, .. }
                | Stmt::Read { access, .. } => {
                    ids.insert(access.id.0);
                }
                Stmt::Mem { id, .. } | Stmt::Invalidate { id, .. } => {
                    ids.insert(id.0);
                }
                _ => {}
            });
            (s.name.clone(), ids.len() + 2)
        })
        .collect()
}

fn page_for(stem: &str, dir: &Path) -> PathBuf {
    let out = shootdown(&[
        "explore",
        &format!("examples/{stem}.inv"),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(format!("{stem}.html"))
}

#[test]
fn every_example_page_works_in_chromium() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore");
    std::fs::create_dir_all(&dir).unwrap();
    let stems: Vec<String> = crate::order_proof::examples()
        .iter()
        .map(|p| {
            Path::new(p)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut checked_lines = 0;
    for stem in &stems {
        let page = page_for(stem, &dir);
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.len() < 4 << 20, "{stem}: page of {} bytes", html.len());
        assert!(
            !html.contains("src=\"http") && !html.contains("href=\"http"),
            "{stem}: the page must not load anything"
        );
        let probe = dir.join(format!("{stem}.probe.html"));
        let html = html
            .replacen("<head>", &format!("<head>{HEAD_HARNESS}"), 1)
            .replacen("</body>", &format!("{BODY_HARNESS}</body>"), 1);
        std::fs::write(&probe, html).unwrap();
        let (dom, log) = browser(&["--dump-dom"], &probe);
        assert!(!log.contains("Uncaught"), "{stem}: script error:\n{log}");
        let json = dom
            .split_once("<pre id=\"harness\">")
            .and_then(|(_, r)| r.split_once("</pre>"))
            .map(|(j, _)| {
                j.replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&")
            })
            .unwrap_or_else(|| panic!("{stem}: the harness wrote nothing; chromium said:\n{log}"));
        let got: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(got["errors"], serde_json::json!([]), "{stem}");
        let targets = got["targets"].as_object().unwrap();
        assert!(!targets.is_empty(), "{stem}: no target tab");
        for (t, r) in targets {
            let target = shootdown::Target::from_name(t).unwrap();
            let want = expected(&PathBuf::from(format!("generated/{stem}.{t}.S")));
            for (n, lit) in r["lines"].as_object().unwrap() {
                let n: usize = n.parse().unwrap();
                let mut lit: Vec<String> = lit
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                lit.sort();
                let empty = Vec::new();
                assert_eq!(
                    &lit,
                    want.get(&n).unwrap_or(&empty),
                    "{stem} {t}: spec line {n}"
                );
                checked_lines += 1;
            }
            // Every line the .S names is clickable.
            for n in want.keys() {
                assert!(
                    r["lines"].get(n.to_string()).is_some(),
                    "{stem} {t}: line {n} not clickable"
                );
            }
            assert_eq!(r["back"], serde_json::json!([r["back_want"]]), "{stem} {t}");
            let want_nodes = accesses(&format!("examples/{stem}.inv"), target);
            for (seq, n) in &want_nodes {
                assert_eq!(
                    r["graphs"][seq].as_u64(),
                    Some(*n as u64),
                    "{stem} {t} {seq}: graph nodes"
                );
            }
        }
    }
    assert!(checked_lines > 500, "{checked_lines}");
    // The picture: a real PNG of the largest example.
    let page = dir.join("radix_tlb.html");
    let png = dir.join("radix_tlb.png");
    let _ = std::fs::remove_file(&png);
    let shot = format!("--screenshot={}", png.display());
    let (_, log) = browser(&[&shot, "--window-size=1400,1000"], &page);
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot ({e}):\n{log}"));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000,
        "{} bytes",
        bytes.len()
    );
}

/// The cost plot is on the page of a spec with a size choice, and a
/// sequence without one has none; every sequence on every target has the
/// strategy diff, whose removed and added lines are `shootdown diff`'s.
#[test]
fn the_cost_plot_and_the_strategy_diff_are_on_the_page() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore-cost");
    std::fs::create_dir_all(&dir).unwrap();
    let html = std::fs::read_to_string(page_for("arm_smmu", &dir)).unwrap();
    assert!(html.contains("modelled cost per request size"), "no plot");
    let html = std::fs::read_to_string(page_for("e6500_tcd_lock", &dir)).unwrap();
    assert!(!html.contains("modelled cost per request size"));
    let html = std::fs::read_to_string(page_for("npu2_atsd", &dir)).unwrap();
    // 4 sequences x 4 targets.
    assert_eq!(html.matches("<pre class=\"diff\">").count(), 16);
    let cli = shootdown(&[
        "diff",
        "examples/npu2_atsd.inv",
        "--seq",
        "invalidate_va",
        "--target",
        "power64",
    ]);
    let text = String::from_utf8_lossy(&cli.stdout);
    let section = html
        .split("<section class=\"g\" data-seq=\"invalidate_va\">")
        .nth(1)
        .unwrap();
    let shown = unescape(section);
    let mut n = 0;
    for l in text
        .lines()
        .filter(|l| l.starts_with("+\t") || l.starts_with("-\t"))
    {
        assert!(shown.contains(l), "{l}");
        n += 1;
    }
    assert!(n > 10, "{n} changed lines");
}

/// HTML text with its character references decoded (numeric, and the
/// four named ones a template escaper may use).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e < 10);
        let c = end.and_then(|end| match &rest[1..end] {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            ent => ent
                .strip_prefix('#')
                .and_then(|n| n.parse::<u32>().ok())
                .and_then(char::from_u32),
        });
        match (c, end) {
            (Some(c), Some(end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// With `--seq` and `--arg`, each target's tab has that sequence's run,
/// event for event what `shootdown trace --json` reports on that target
/// (same count, same spec lines, same return), and clicking an event in
/// Chromium lights up its spec line and exactly the instructions the
/// golden `.S` gives that line. `--arg` without `--seq` is a usage error.
#[test]
fn a_traced_page_shows_the_run_and_its_events_click_through() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore-trace");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = "arm64_tlb_range";
    let spec = format!("examples/{stem}.inv");
    let html = traced_page(&dir, stem, &spec);
    let (lines, executed, ret) = trace_of(&spec);
    let heading = format!("returns {ret} after {executed} instructions");
    assert!(html.contains(&heading), "no `{heading}` on the page");
    let got = clicks_in_browser(&dir, stem, &html);
    check_clicks(stem, &got, &lines);
}

/// The sequence and inputs the page runs.
const RUN: [&str; 10] = [
    "--seq",
    "flush_tlb_range",
    "--arg",
    "asid=1",
    "--arg",
    "start=0x400000",
    "--arg",
    "end=0x404000",
    "--arg",
    "features=0",
];

/// `explore` with the run (and without `--seq`, a usage error): the page.
fn traced_page(dir: &Path, stem: &str, spec: &str) -> String {
    let mut args = vec!["explore", spec, "--out", dir.to_str().unwrap()];
    args.extend(RUN);
    let out = shootdown(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = shootdown(&[
        "explore",
        spec,
        "--arg",
        "asid=1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "--arg without --seq");
    let page = dir.join(format!("{stem}.html"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("run on aarch64 with --arg asid=0x1"),
        "no trace heading"
    );
    html
}

/// What `trace` says on the same inputs: each event's spec line, the
/// executed count, the return value.
fn trace_of(spec: &str) -> (Vec<Option<u64>>, String, serde_json::Value) {
    let mut targs = vec!["trace", spec, "--json", "--target", "aarch64"];
    targs.extend(RUN);
    let t = shootdown(&targs);
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let trace: serde_json::Value = serde_json::from_slice(&t.stdout).unwrap();
    let events = trace["events"].as_array().unwrap();
    let lines: Vec<Option<u64>> = events.iter().map(|e| e["line"].as_u64()).collect();
    assert!(events.len() >= 6, "{} events", events.len());
    // The executed count is in trace's text, not its JSON.
    targs.retain(|a| *a != "--json");
    let text = String::from_utf8_lossy(&shootdown(&targs).stdout).into_owned();
    let executed = text
        .lines()
        .find_map(|l| l.strip_prefix("return "))
        .and_then(|r| r.split_once(" ("))
        .and_then(|(_, r)| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no return line: {text}"))
        .to_string();
    (lines, executed, trace["return"].clone())
}

/// The page's events and what a click on each lights up, as the
/// harness script reports them in Chromium.
fn clicks_in_browser(dir: &Path, stem: &str, html: &str) -> serde_json::Value {
    let harness = r#"<script>
window.addEventListener("load", () => {
  const rows = [...document.querySelectorAll('.graphs.active section.g[data-seq="flush_tlb_range"] table.trace tr.ev')];
  const out = { rows: rows.map(r => r.dataset.line ? Number(r.dataset.line) : null), clicks: [] };
  for (const r of rows.filter(r => r.dataset.line)) {
    r.click();
    out.clicks.push({
      line: Number(r.dataset.line),
      spec: [...document.querySelectorAll(".sl.hl")].map(e => Number(e.dataset.line)),
      ins: [...document.querySelectorAll(".target.active .ins.hl")].map(e => e.dataset.fn + "\t" + e.textContent).sort(),
      row: r.classList.contains("hl"),
    });
  }
  const pre = document.createElement("pre");
  pre.id = "harness";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;
    let probe = dir.join(format!("{stem}.probe.html"));
    std::fs::write(
        &probe,
        html.replacen("</body>", &format!("{harness}</body>"), 1),
    )
    .unwrap();
    let (dom, log) = browser(&["--dump-dom"], &probe);
    assert!(!log.contains("Uncaught"), "script error:\n{log}");
    let json = dom
        .split_once("<pre id=\"harness\">")
        .and_then(|(_, r)| r.split_once("</pre>"))
        .map(|(j, _)| unescape(j))
        .unwrap_or_else(|| panic!("the harness wrote nothing; chromium said:\n{log}"));
    serde_json::from_str(&json).unwrap()
}

/// The page's events are trace's, and a click lights up the event's
/// spec line, its row, and the golden `.S`'s instructions of that line.
fn check_clicks(stem: &str, got: &serde_json::Value, lines: &[Option<u64>]) {
    let rows: Vec<Option<u64>> = got["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64())
        .collect();
    assert_eq!(rows, lines, "the page's events are trace's");
    let want = expected(&PathBuf::from(format!("generated/{stem}.aarch64.S")));
    let clicks = got["clicks"].as_array().unwrap();
    assert_eq!(clicks.len(), lines.iter().flatten().count());
    for c in clicks {
        let n = c["line"].as_u64().unwrap();
        assert_eq!(c["spec"], serde_json::json!([n]), "event at line {n}");
        assert_eq!(c["row"], serde_json::json!(true));
        let ins: Vec<String> = c["ins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            Some(&ins),
            want.get(&(n as usize)),
            "event at line {n}: instructions"
        );
    }
}
