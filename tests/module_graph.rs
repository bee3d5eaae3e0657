//! The pipeline runs one way (issue 39): no import cycle may span the
//! top-level modules of `src/`. The module tree is read from `src/lib.rs`
//! down with `syn` (test-only modules left out), and every path that names
//! `crate::MODULE` (or a name `lib.rs` re-exports from one) is an edge.
//! Where a lower module needs a higher one's knowledge, the lower one
//! declares the interface and the higher one implements it (the IR's
//! `ir::isa::ISAS`, the LIR builder's `BuildTarget`, `emu::EmuTarget`).
//! Paths inside macro invocations are token streams to `syn` and are not
//! seen; the modules' own `use` lines are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The top-level module names a file refers to (`crate::X...`, and
/// `use crate::{X, Y::...}`), test-only items left out.
#[derive(Default)]
struct Refs {
    names: BTreeSet<String>,
}

impl Refs {
    fn use_tree(&mut self, t: &syn::UseTree, under_crate: bool) {
        match t {
            syn::UseTree::Path(p) if p.ident == "crate" => self.use_tree(&p.tree, true),
            syn::UseTree::Path(p) if under_crate => {
                self.names.insert(p.ident.to_string());
            }
            syn::UseTree::Name(n) if under_crate => {
                self.names.insert(n.ident.to_string());
            }
            syn::UseTree::Rename(r) if under_crate => {
                self.names.insert(r.ident.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|i| self.use_tree(i, under_crate)),
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Refs {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = match i {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(x) => &x.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            _ => return syn::visit::visit_item(self, i),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, false);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut s = p.segments.iter();
        if let (Some(a), Some(b)) = (s.next(), s.next()) {
            if a.ident == "crate" {
                self.names.insert(b.ident.to_string());
            }
        }
        syn::visit::visit_path(self, p);
    }
}

/// Every non-test source file of the module declared by `file`, with the
/// top-level module it belongs to.
fn files(file: &Path, dir: &Path, top: &str, out: &mut Vec<(String, PathBuf)>) {
    let src = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let ast = syn::parse_file(&src).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    out.push((top.to_string(), file.to_path_buf()));
    for item in &ast.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.content.is_some() || is_test_only(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let (child, child_dir) = if dir.join(format!("{name}.rs")).exists() {
            (dir.join(format!("{name}.rs")), dir.join(&name))
        } else {
            (dir.join(&name).join("mod.rs"), dir.join(&name))
        };
        let top = if top.is_empty() { &name } else { top };
        files(&child, &child_dir, top, out);
    }
}

/// `lib.rs`'s `pub use MODULE::{A, B}`: names that stand for a module.
fn reexports(lib: &syn::File) -> BTreeMap<String, String> {
    fn leaves(t: &syn::UseTree, out: &mut Vec<String>) {
        match t {
            syn::UseTree::Path(p) => leaves(&p.tree, out),
            syn::UseTree::Name(n) => out.push(n.ident.to_string()),
            syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|i| leaves(i, out)),
            syn::UseTree::Glob(_) => {}
        }
    }
    let mut map = BTreeMap::new();
    for item in &lib.items {
        if let syn::Item::Use(u) = item {
            if let syn::UseTree::Path(p) = &u.tree {
                let mut names = Vec::new();
                leaves(&p.tree, &mut names);
                for n in names {
                    map.insert(n, p.ident.to_string());
                }
            }
        }
    }
    map
}

/// Top-level module -> the modules it refers to.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let lib = syn::parse_file(&std::fs::read_to_string("src/lib.rs").unwrap()).unwrap();
    let alias = reexports(&lib);
    let mut fs = Vec::new();
    files(Path::new("src/lib.rs"), Path::new("src"), "", &mut fs);
    let tops: BTreeSet<String> = fs
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| !t.is_empty())
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (top, f) in fs.iter().filter(|(t, _)| !t.is_empty()) {
        let ast = syn::parse_file(&std::fs::read_to_string(f).unwrap()).unwrap();
        let mut r = Refs::default();
        r.visit_file(&ast);
        let entry = g.entry(top.clone()).or_default();
        for n in r.names {
            let m = alias.get(&n).cloned().unwrap_or(n);
            if tops.contains(&m) && m != *top {
                entry.insert(m);
            }
        }
    }
    g
}

/// Strongly connected components (Tarjan), each sorted.
fn sccs(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let lw = self.low[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w.as_str()) {
                    let iw = self.index[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut c = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    c.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                self.out.push(c);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn cycle_edges(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let comps = sccs(g);
    let comp_of = |v: &str| comps.iter().position(|c| c.contains(v));
    g.iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (a, b)))
        .filter(|(a, b)| comp_of(a) == comp_of(b))
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect()
}

#[test]
fn top_level_modules_import_one_way() {
    let g = graph();
    assert!(g.len() >= 10, "the module tree was not read: {g:?}");
    let edges: usize = g.values().map(BTreeSet::len).sum();
    eprintln!(
        "top-level modules: {}, edges between them: {edges}",
        g.len()
    );
    for (m, deps) in &g {
        eprintln!(
            "  {m} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let cycles: Vec<String> = sccs(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().collect::<Vec<_>>().join(", "))
        .collect();
    let back: Vec<String> = cycle_edges(&g).into_iter().collect();
    assert!(
        cycles.is_empty(),
        "import cycles between top-level modules (the pipeline runs one way; see \
         docs/architecture.md): {cycles:?}\nedges in them:\n{}",
        back.join("\n")
    );
}

#[test]
fn a_back_edge_is_seen_as_a_cycle() {
    // The checker itself: a -> b -> c -> a is one cycle of three edges,
    // d hangs off it.
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let e = cycle_edges(&g);
    assert_eq!(
        e.into_iter().collect::<Vec<_>>(),
        ["a -> b", "b -> c", "c -> a"]
    );
}
