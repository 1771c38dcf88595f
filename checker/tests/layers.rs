//! The checker's modules import one way. `checker/src/lib.rs` documents a
//! pipeline, each layer standing on the ones before it:
//!
//! ground floor (`tools`: probes, set-up, `make`, the sandbox, the guest
//! kernels) < `spec` < `plan` < `run` < `grade` < `report` < `batch` <
//! `commands` (doctor, docs, sizes, watch, export-course, ..).
//!
//! This test reads `checker/src` (no build, no VM), lists every
//! `crate::`, `super::` and `self::` path of each module file, and every
//! path from a child module (`events::emit(..)` in `run/mod.rs`), in `use`
//! items, inline paths such as `crate::run::events::emit(..)`, and macro
//! calls; resolves each to the module file it names, and fails
//!
//! - when the modules import each other in a cycle, naming the cycle;
//! - when a module imports one of a higher layer, naming the import.
//!
//! A module is a file: `run/mod.rs` is `run`, `run/events.rs` is
//! `run::events`; modules written inline (`mod tests { .. }`) belong to
//! their file. Code under `#[cfg(test)]` counts too, but `testutil` (the
//! unit tests' shared helpers, compiled for tests only) is left out: it
//! stands above everything it helps to test.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The layers, lowest first, and the module paths in each (a module
/// belongs to the layer of its longest listed prefix).
const LAYERS: &[(&str, &[&str])] = &[
    ("ground floor", &["tools"]),
    ("spec", &["spec"]),
    ("plan", &["plan"]),
    // The runner grades each step as it ends (a host step when it exits,
    // the guest's transcript after the boot): grade is the comparison
    // the runner calls, and knows nothing of running.
    ("grade", &["grade"]),
    ("run", &["run"]),
    // outcome maps a run's results to an exit code.
    ("report", &["report", "outcome"]),
    ("batch", &["batch"]),
    ("commands", &["commands"]),
];

/// Modules outside the layers: the crate root (it only declares the
/// others) and the unit tests' helpers.
const OUTSIDE: &[&str] = &["", "testutil"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module path of a file under `src/` (`run/mod.rs` is `run`), or
/// `None` for the binary's `main.rs`.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?;
    if parts.is_empty() && stem == "main" {
        return None;
    }
    if !(stem == "mod" || parts.is_empty() && stem == "lib") {
        parts.push(stem.to_owned());
    }
    Some(parts.join("::"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("checker/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One import: the line it is on and the path as written.
#[derive(Clone, Debug)]
struct Site {
    file: String,
    line: usize,
    path: String,
}

/// Collects the paths of one file that start with `crate`, `super` or
/// `self`, each as its segments, relative to the module it is written in.
struct Paths {
    /// The inline modules we are in (`mod tests { .. }`).
    inline: Vec<String>,
    found: Vec<(Vec<String>, Vec<String>, usize)>,
}

impl Paths {
    /// Keeps every path of two segments or more; which of them name a
    /// module of the crate is decided once all modules are known.
    fn push(&mut self, segs: Vec<String>, line: usize) {
        if segs.len() > 1 {
            self.found.push((self.inline.clone(), segs, line));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut segs = prefix.clone();
                segs.push(n.ident.to_string());
                self.push(segs, n.ident.span().start().line);
            }
            syn::UseTree::Rename(r) => {
                let mut segs = prefix.clone();
                segs.push(r.ident.to_string());
                self.push(segs, r.ident.span().start().line);
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.push(prefix.clone(), line);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// Paths inside a macro's tokens (`format!("{}", crate::x::y())`):
    /// runs of `ident :: ident :: ..`.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(id) => {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    loop {
                        let colons = matches!(
                            (&trees.get(j), &trees.get(j + 1)),
                            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                                if a.as_char() == ':' && b.as_char() == ':'
                        );
                        match (colons, trees.get(j + 2)) {
                            (true, Some(TokenTree::Ident(next))) => {
                                segs.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    self.push(segs, line);
                    i = j;
                }
                TokenTree::Punct(_) | TokenTree::Literal(_) => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.push(segs, line);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.inline.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.inline.pop();
    }
}

/// The module graph: for each module file, the module files it imports
/// and where.
struct Graph {
    modules: BTreeSet<String>,
    edges: BTreeMap<String, BTreeMap<String, Vec<Site>>>,
}

fn join(segs: &[String]) -> String {
    segs.join("::")
}

fn graph() -> Graph {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut parsed = Vec::new();
    let mut modules = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let Some(module) = module_of(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let ast = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
        modules.insert(module.clone());
        parsed.push((rel.display().to_string(), module, ast));
    }
    let mut edges: BTreeMap<String, BTreeMap<String, Vec<Site>>> = BTreeMap::new();
    for (file, module, ast) in &parsed {
        let mut paths = Paths {
            inline: Vec::new(),
            found: Vec::new(),
        };
        paths.visit_file(ast);
        for (inline, segs, line) in paths.found {
            // Where the path is written: the file's module, then its
            // inline modules.
            let mut here: Vec<String> = if module.is_empty() {
                Vec::new()
            } else {
                module.split("::").map(str::to_owned).collect()
            };
            here.extend(inline);
            let mut rest = segs.as_slice();
            let mut base = match rest[0].as_str() {
                "crate" => {
                    rest = &rest[1..];
                    Vec::new()
                }
                "super" | "self" => {
                    let mut base = here.clone();
                    while let Some(first) = rest.first() {
                        match first.as_str() {
                            "self" => {}
                            "super" => {
                                base.pop();
                            }
                            _ => break,
                        }
                        rest = &rest[1..];
                    }
                    base
                }
                // A path from a child module declared here
                // (`gate::gate(..)` in `run/mod.rs`); other paths name
                // other crates, std, or items in scope.
                first => {
                    let mut child = here.clone();
                    child.push(first.to_owned());
                    if !modules.contains(&join(&child)) {
                        continue;
                    }
                    here.clone()
                }
            };
            base.extend(rest.iter().cloned());
            // The longest prefix that is a module file.
            let target = (0..=base.len())
                .rev()
                .map(|n| join(&base[..n]))
                .find(|m| modules.contains(m))
                .expect("the crate root is a module");
            if &target == module || OUTSIDE.contains(&target.as_str()) {
                continue;
            }
            edges
                .entry(module.clone())
                .or_default()
                .entry(target)
                .or_default()
                .push(Site {
                    file: file.clone(),
                    line,
                    path: join(&segs),
                });
        }
    }
    Graph { modules, edges }
}

fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, usize, &'static str)> = None;
    for (rank, (name, prefixes)) in LAYERS.iter().enumerate() {
        for p in *prefixes {
            let matches = module == *p || module.starts_with(&format!("{p}::"));
            if matches && best.is_none_or(|(len, _, _)| p.len() > len) {
                best = Some((p.len(), rank, name));
            }
        }
    }
    best.map(|(_, rank, name)| (rank, name))
}

fn describe(g: &Graph, from: &str, to: &str) -> String {
    let sites = &g.edges[from][to];
    let first = &sites[0];
    let more = if sites.len() > 1 {
        format!(" and {} more", sites.len() - 1)
    } else {
        String::new()
    };
    format!(
        "{from} -> {to} ({}:{}: {}{more})",
        first.file, first.line, first.path
    )
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        g: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.g.edges.get(v) {
            for w in targets.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in &g.modules {
        if !s.index.contains_key(m.as_str()) {
            visit(&mut s, m);
        }
    }
    s.out
}

/// A shortest cycle through `start` inside `scc` (breadth first).
fn cycle_through(g: &Graph, scc: &[String], start: &str) -> Vec<String> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in g.edges.get(v).into_iter().flat_map(|t| t.keys()) {
            if !scc.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![v.to_owned()];
                let mut at = v;
                while at != start {
                    at = prev[at];
                    path.push(at.to_owned());
                }
                path.reverse();
                return path;
            }
            if !prev.contains_key(w.as_str()) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("{start} is in a cycle")
}

#[test]
fn every_module_has_a_layer() {
    let g = graph();
    let missing: Vec<&String> = g
        .modules
        .iter()
        .filter(|m| !OUTSIDE.contains(&m.as_str()) && layer_of(m).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "modules with no layer in checker/tests/layers.rs's LAYERS: {missing:?}"
    );
}

#[test]
fn the_modules_import_each_other_in_no_cycle() {
    let g = graph();
    let mut report = String::new();
    for scc in cycles(&g) {
        let cycle = cycle_through(&g, &scc, &scc[0]);
        let _ = writeln!(
            report,
            "\ncycle among {} modules: {}",
            scc.len(),
            scc.join(", ")
        );
        let _ = writeln!(report, "  for example:");
        for (i, from) in cycle.iter().enumerate() {
            let to = &cycle[(i + 1) % cycle.len()];
            let _ = writeln!(report, "    {}", describe(&g, from, to));
        }
        let _ = writeln!(report, "  every import among them:");
        for from in &scc {
            for to in g.edges.get(from).into_iter().flat_map(|t| t.keys()) {
                if scc.contains(to) {
                    let _ = writeln!(report, "    {}", describe(&g, from, to));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "the checker's modules import in cycles:{report}"
    );
}

#[test]
fn no_module_imports_a_higher_layer() {
    let g = graph();
    let mut report = String::new();
    for (from, targets) in &g.edges {
        let Some((low, low_name)) = layer_of(from) else {
            continue;
        };
        for to in targets.keys() {
            let Some((high, high_name)) = layer_of(to) else {
                continue;
            };
            if high > low {
                let _ = writeln!(
                    report,
                    "  {low_name} imports {high_name}: {}",
                    describe(&g, from, to)
                );
            }
        }
    }
    assert!(
        report.is_empty(),
        "lower layers import higher ones (the order: {}):\n{report}",
        LAYERS
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(" < ")
    );
}

/// The reader itself: inline paths, `super::` from an inline module, and
/// paths in macros are found.
#[test]
fn the_reader_finds_inline_and_macro_paths() {
    let ast: syn::File = syn::parse_str(
        "fn f() { crate::run::events::emit(1); println!(\"{}\", crate::grade::x()); }\n\
         mod tests { use super::super::plan::StepId; }",
    )
    .unwrap();
    let mut paths = Paths {
        inline: Vec::new(),
        found: Vec::new(),
    };
    paths.visit_file(&ast);
    let found: Vec<String> = paths.found.iter().map(|(_, s, _)| join(s)).collect();
    assert!(
        found.contains(&"crate::run::events::emit".to_owned()),
        "{found:?}"
    );
    assert!(found.contains(&"crate::grade::x".to_owned()), "{found:?}");
    assert!(
        found.contains(&"super::super::plan::StepId".to_owned()),
        "{found:?}"
    );
    assert_eq!(paths.found.last().unwrap().0, ["tests"]);
}
