//! No import circle between the files of `src/core` or `src/shell`: a file's imports (every
//! `crate::…`, `super::…` and `self::…` path it names, and the child modules it uses, each
//! resolved to the deepest file of its path; a file's own ancestors are where it lives, not
//! imports) point down, never back up to a file that imports it. ARCHITECTURE.md states the invariant; this
//! test holds the code to it and names the circle when one appears.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "common/production.rs"]
mod production;

/// Rust source files under `dir`, test files and test modules left out (`tests.rs`,
/// `*_tests.rs`, `tests/`, and the files of every module declared `#[cfg(test)]`).
fn sources(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut test_files = Vec::new();
    read_sources(root, dir, out, &mut test_files);
    out.retain(|file, _| {
        !test_files
            .iter()
            .any(|test| file.starts_with(test.as_str()))
    });
}

fn read_sources(
    root: &Path,
    dir: &Path,
    out: &mut BTreeMap<String, String>,
    test_files: &mut Vec<String>,
) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "tests" {
                read_sources(root, &path, out, test_files);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            let text = std::fs::read_to_string(&path).expect("readable");
            let relative = path.strip_prefix(root).unwrap();
            test_files.extend(production::test_module_files(relative, &text));
            let code = production::production(&text);
            let code = code.as_str();
            let code: String = code
                .lines()
                .map(|line| line.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            out.insert(relative, code);
        }
    }
}

/// The module path of a file: `src/core/mcp/mod.rs` → `[core, mcp]`.
fn module_of(file: &str) -> Vec<String> {
    let inner = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut path: Vec<String> = inner.split('/').map(str::to_owned).collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a use tree starting at `text` names (`a::{b, c::d}` → `[a, b]`, `[a, c, d]`),
/// and how many bytes it took.
fn use_tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut at = 0;
    let bytes = text.as_bytes();
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if trimmed.starts_with('{') {
            at += 1;
            let mut out = Vec::new();
            loop {
                let (paths, used) = use_tree(&text[at..]);
                at += used;
                out.extend(paths.into_iter().map(|p| [prefix.clone(), p].concat()));
                let rest = &text[at..];
                let trimmed = rest.trim_start();
                at += rest.len() - trimmed.len();
                match bytes.get(at) {
                    Some(b',') => at += 1,
                    Some(b'}') => {
                        at += 1;
                        return (out, at);
                    }
                    _ => return (out, at),
                }
                let rest = &text[at..];
                if rest.trim_start().starts_with('}') {
                    at += rest.len() - rest.trim_start().len() + 1;
                    return (out, at);
                }
            }
        }
        let ident: String = trimmed.chars().take_while(|&c| is_ident(c)).collect();
        if ident.is_empty() {
            return (vec![prefix], at);
        }
        at += ident.len();
        if ident != "self" {
            prefix.push(ident);
        }
        if text[at..].starts_with("::") {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// The files each file imports, resolved to the longest module path that is a file.
fn imports(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let by_module: BTreeMap<Vec<String>, String> =
        files.keys().map(|f| (module_of(f), f.clone())).collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|n| by_module.get(&path[..n]).cloned())
    };
    let mut graph = BTreeMap::new();
    for (file, code) in files {
        let own = module_of(file);
        let children: BTreeSet<String> = code
            .lines()
            .filter_map(|l| {
                let l = l
                    .trim()
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
            })
            .collect();
        let mut out = BTreeSet::new();
        let mut starts = Vec::new();
        for (i, _) in code.match_indices("crate::") {
            if i == 0 || !is_ident(code[..i].chars().last().unwrap()) {
                starts.push((i + "crate::".len(), Vec::new()));
            }
        }
        for (i, _) in code.match_indices("super::") {
            if i > 0 && (is_ident(code[..i].chars().last().unwrap()) || code[..i].ends_with("::")) {
                continue;
            }
            let mut base = own.clone();
            let mut at = i;
            while code[at..].starts_with("super::") {
                base.pop();
                at += "super::".len();
            }
            starts.push((at, base));
        }
        for (i, _) in code.match_indices("self::") {
            if i == 0 || !is_ident(code[..i].chars().last().unwrap()) && !code[..i].ends_with("::")
            {
                starts.push((i + "self::".len(), own.clone()));
            }
        }
        for (i, _) in code.match_indices("use ") {
            let rest = &code[i + 4..];
            let first: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if children.contains(&first) && rest[first.len()..].starts_with("::") {
                starts.push((i + 4, own.clone()));
            }
        }
        for (at, base) in starts {
            let (paths, _) = use_tree(&code[at..]);
            for path in paths {
                let full = [base.clone(), path].concat();
                // A file's own module and its ancestors are where it lives, not imports.
                if let Some(target) = resolve(&full) {
                    if !own.starts_with(&module_of(&target)) {
                        out.insert(target);
                    }
                }
            }
        }
        graph.insert(file.clone(), out);
    }
    graph
}

/// A circle of the graph (its files in order, the first repeated at the end), if any.
fn a_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        file: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(file.to_owned(), Mark::Open);
        path.push(file.to_owned());
        for next in graph.get(file).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = path.iter().position(|f| f == next).unwrap();
                    let mut circle = path[from..].to_vec();
                    circle.push(next.clone());
                    return Some(circle);
                }
                Mark::New => {
                    if let Some(circle) = visit(next, graph, marks, path) {
                        return Some(circle);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(file.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for file in graph.keys() {
        if marks.get(file).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(circle) = visit(file, graph, &mut marks, &mut Vec::new()) {
                return Some(circle);
            }
        }
    }
    None
}

fn graph_of(dir: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    sources(root, &root.join(dir), &mut files);
    assert!(files.len() > 10, "{dir} has its source files");
    imports(&files)
}

#[test]
fn the_core_has_no_import_circle() {
    let graph = graph_of("src/core");
    let arrows: usize = graph.values().map(BTreeSet::len).sum();
    assert!(arrows > 100, "the imports are read ({arrows} arrows)");
    if let Some(circle) = a_circle(&graph) {
        panic!("an import circle in src/core: {}", circle.join(" → "));
    }
}

#[test]
fn the_shell_has_no_import_circle() {
    let graph = graph_of("src/shell");
    assert!(
        graph["src/shell/agent.rs"].contains("src/shell/state.rs"),
        "the imports are read"
    );
    if let Some(circle) = a_circle(&graph) {
        panic!("an import circle in src/shell: {}", circle.join(" → "));
    }
}

#[test]
fn the_reader_finds_a_circle_where_there_is_one() {
    let files: BTreeMap<String, String> = [
        ("src/core/a.rs", "use crate::core::b::{B, c::C};\n"),
        ("src/core/b/mod.rs", "mod c;\npub use c::C;\n"),
        ("src/core/b/c.rs", "use super::super::a::A;\n"),
        ("src/core/d.rs", "fn f() { crate::core::a::g() }\n"),
    ]
    .into_iter()
    .map(|(f, c)| (f.to_owned(), c.to_owned()))
    .collect();
    let graph = imports(&files);
    assert_eq!(
        graph["src/core/a.rs"],
        set(&["src/core/b/mod.rs", "src/core/b/c.rs"])
    );
    assert_eq!(graph["src/core/b/mod.rs"], set(&["src/core/b/c.rs"]));
    assert_eq!(graph["src/core/d.rs"], set(&["src/core/a.rs"]));
    let circle = a_circle(&graph).expect("a → b/c → a is a circle");
    assert_eq!(circle.first(), circle.last());
    assert!(circle.contains(&"src/core/b/c.rs".to_owned()));
    let mut broken = graph.clone();
    broken.get_mut("src/core/b/c.rs").unwrap().clear();
    assert_eq!(a_circle(&broken), None);
}

fn set(files: &[&str]) -> BTreeSet<String> {
    files.iter().map(|f| f.to_string()).collect()
}

/// The core's neighbourhoods (its top-level modules, a folder or a file each) from the top
/// floor down. A neighbourhood imports only neighbourhoods on floors below its own, but for
/// the arrows of [`ALLOWED_UP`]; a new neighbourhood is given its floor here.
const FLOORS: &[&[&str]] = &[
    &["host"],
    &["setup"],
    &["ops"],
    &["cli", "crawl", "workbench"],
    &["conversation", "evals"],
    &["run"],
    &["audit", "observe"],
    &["page"],
    &["expose"],
    &["gate", "stream"],
    &["mcp", "repair"],
    &["provider"],
    &["toolset"],
    &[
        "confirm", "egress", "history", "native", "restart", "schema", "timeline",
    ],
    &["parse"],
    &[
        "agui", "error", "http", "limits", "naming", "storage", "text", "url",
    ],
];

/// The imports that run back up, each with why it stays: at most five.
const ALLOWED_UP: &[(&str, &str, &str)] = &[
    (
        "gate",
        "page",
        "the gate decides on a page tool's own hints (`PageTool`), and a page call carries the gate's permit",
    ),
    (
        "mcp",
        "run",
        "an MCP server's tools are offered to a run as run tools (`RunTool`)",
    ),
];

/// Each neighbourhood's imports of other neighbourhoods (`(from, to)` → the files that import).
fn neighbourhood_arrows() -> BTreeMap<(String, String), BTreeSet<String>> {
    let hood = |file: &str| module_of(file).get(1).cloned();
    let mut arrows: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (file, targets) in graph_of("src/core") {
        let Some(from) = hood(&file) else { continue };
        for target in targets {
            match hood(&target) {
                Some(to) if to != from => {
                    arrows
                        .entry((from.clone(), to))
                        .or_default()
                        .insert(file.clone());
                }
                // `src/core/mod.rs` re-exports nothing: an import of it names a module that
                // is not a file of its own.
                None => panic!("{file} imports {target}: name the module where it lives"),
                _ => {}
            }
        }
    }
    arrows
}

#[test]
fn the_cores_neighbourhoods_import_down_their_floors_but_for_the_few_allowed() {
    assert!(ALLOWED_UP.len() <= 5, "at most five arrows run back up");
    let floor = |name: &str| FLOORS.iter().position(|f| f.contains(&name));
    let arrows = neighbourhood_arrows();
    assert!(
        arrows.len() > 100,
        "the imports are read ({})",
        arrows.len()
    );
    let mut unplaced = BTreeSet::new();
    let mut up = Vec::new();
    for ((from, to), files) in &arrows {
        let (Some(a), Some(b)) = (floor(from), floor(to)) else {
            unplaced.extend(
                [from, to]
                    .into_iter()
                    .filter(|n| floor(n).is_none())
                    .cloned(),
            );
            continue;
        };
        let allowed = ALLOWED_UP.iter().any(|(f, t, _)| f == from && t == to);
        if a >= b && !allowed {
            up.push(format!("{from} → {to} (floor {a} → {b}), in {files:?}"));
        }
    }
    assert!(
        unplaced.is_empty(),
        "neighbourhoods without a floor in FLOORS: {unplaced:?}"
    );
    assert!(
        up.is_empty(),
        "imports that do not run down the floors (move the code down, or give the arrow its reason in ALLOWED_UP, five at most): {up:#?}"
    );
    for (from, to, _) in ALLOWED_UP {
        assert!(
            arrows.contains_key(&((*from).to_owned(), (*to).to_owned())),
            "{from} → {to} is allowed but no longer imported: drop it from ALLOWED_UP"
        );
    }
}

/// The core module files the shell names (its `crate::core::…` paths, each resolved to the
/// deepest file of its path), read over both trees so that a path resolves to its file.
fn core_modules_named_by_the_shell() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    sources(root, &root.join("src/core"), &mut files);
    sources(root, &root.join("src/shell"), &mut files);
    let graph = imports(&files);
    (graph.iter())
        .filter(|(file, _)| file.starts_with("src/shell/"))
        .flat_map(|(_, targets)| targets.iter())
        .filter(|target| target.starts_with("src/core/"))
        .cloned()
        .collect()
}

/// The lines of the shell's Rust files, tests included.
fn shell_lines() -> usize {
    fn count(dir: &Path) -> usize {
        let mut lines = 0;
        for entry in std::fs::read_dir(dir).expect("a readable directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                lines += count(&path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                lines += std::fs::read_to_string(&path)
                    .expect("readable")
                    .lines()
                    .count();
            }
        }
        lines
    }
    count(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shell"))
}

/// How far the shell reaches into the core and how much it holds, printed and held to a
/// ratchet: both numbers only go down (lower the bound when they do). The goal is a shell
/// that names the `Host`, its effect vocabulary and the edge parsers (8 module files at most)
/// in at most 2,000 lines.
#[test]
fn the_shell_reaches_into_the_core_no_further_than_before() {
    const MODULES_AT_MOST: usize = 39;
    const LINES_AT_MOST: usize = 2_385;
    let modules = core_modules_named_by_the_shell();
    let lines = shell_lines();
    println!(
        "the shell: {lines} lines, names {} core modules: {modules:?}",
        modules.len()
    );
    assert!(modules.contains("src/core/host.rs"), "the paths are read");
    assert!(
        modules.len() <= MODULES_AT_MOST,
        "the shell names {} core modules (at most {MODULES_AT_MOST}): {modules:?}",
        modules.len()
    );
    assert!(
        lines <= LINES_AT_MOST,
        "the shell is {lines} lines (at most {LINES_AT_MOST})"
    );
}
