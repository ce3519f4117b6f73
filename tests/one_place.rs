//! Things declared in one place, checked against what is written elsewhere: `docs/api.md`'s
//! tables name exactly the operations of [`OpName::ALL`] (the automation surface's in its
//! tables, the content scripts' under "From content scripts"), and the frame bridge's
//! requests ([`FrameRequest::OPS`]) are exactly what both content scripts answer and what
//! the docs say the worker sends them; every storage key is the table's (`core::storage`,
//! `docs/storage.md`); the shell's state lives in its two globals (`shell::state`).

use std::collections::BTreeSet;
use std::path::Path;

use webmcp_host::core::ops::OpName;
use webmcp_host::core::page::bridge::FrameRequest;

#[path = "common/production.rs"]
mod production;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The text of `doc` from the heading line `from` to the next line starting with `until`.
fn section<'a>(doc: &'a str, from: &str, until: &str) -> &'a str {
    let start = doc
        .find(from)
        .unwrap_or_else(|| panic!("no `{from}` in the doc"));
    let rest = &doc[start + from.len()..];
    let end = rest.find(until).unwrap_or(rest.len());
    &rest[..end]
}

/// The names that start the rows of the Markdown tables in `text`: "| `name(" or "| `name`".
fn table_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// The `op: "name"` values written in `text`.
fn quoted_ops(text: &str) -> BTreeSet<String> {
    text.split("op: \"")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| *c != '"').collect())
        .collect()
}

/// The `case 'name':` labels of a content script.
fn cases(script: &str) -> BTreeSet<String> {
    script
        .split("case '")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| *c != '\'').collect())
        .collect()
}

fn set<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_owned).collect()
}

#[test]
fn the_operation_tables_of_api_md_name_every_operation_once_in_order() {
    let api = read("docs/api.md");
    let tables = section(&api, "\n## Operations\n", "\n## Runtime messages");
    let documented = table_names(tables);
    // Not operations of the worker: the surface's own promise and helpers.
    let surface = ["ready", "operations", "startup"];
    let listed: Vec<&String> = documented
        .iter()
        .filter(|name| !surface.contains(&name.as_str()))
        .collect();
    let mut once: Vec<&String> = listed.clone();
    once.dedup(); // `callTool` has a row for page tools and one for MCP servers
    let automated: Vec<&str> = (OpName::ALL.iter())
        .filter(|op| op.automated())
        .map(|op| op.as_str())
        .collect();
    assert_eq!(
        once, automated,
        "docs/api.md's operation tables, in order, against OpName::ALL's automated operations"
    );
    for name in surface {
        assert!(
            documented.iter().any(|d| d == name),
            "`{name}` is documented"
        );
    }

    let from_scripts = section(&api, "**From content scripts.**", "**To content scripts.**");
    let by_scripts: Vec<&str> = (OpName::ALL.iter())
        .filter(|op| !op.automated())
        .map(|op| op.as_str())
        .collect();
    assert_eq!(
        quoted_ops(from_scripts),
        set(by_scripts),
        "docs/api.md's \"From content scripts\" against the operations content scripts may ask"
    );
}

#[test]
fn both_content_scripts_answer_exactly_the_frame_requests() {
    let isolated = cases(&read("content-script/isolated.js"));
    assert_eq!(
        isolated,
        set(FrameRequest::OPS),
        "the page bridge (isolated world) answers every frame request and no other"
    );
    // The MAIN-world companion runs what touches the page's own `document.modelContext`; the
    // top frame's facts for `diagnose`, a loaded document's result and the DOM an eval asserts
    // on are the isolated world's alone (read from the DOM, never by page script).
    let main = cases(&read("content-script/main.js"));
    let relayed = FrameRequest::OPS
        .iter()
        .copied()
        .filter(|op| !["diagnose", "readResult", "readSitemap", "queryDom"].contains(op));
    assert_eq!(main, set(relayed), "the companion (MAIN world)");
}

#[test]
fn api_md_names_exactly_the_frame_requests_the_worker_sends() {
    let api = read("docs/api.md");
    let to_scripts = section(&api, "**To content scripts.**", "The flow is drawn");
    let list = section(to_scripts, "where `op` is one of:", "(");
    let named: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    assert_eq!(
        named,
        FrameRequest::OPS,
        "docs/api.md's \"To content scripts\""
    );
}

#[test]
fn docs_storage_md_lists_exactly_the_storage_table() {
    use webmcp_host::core::storage::TABLE;
    let doc = read("docs/storage.md");
    let rows: Vec<(String, String, String)> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|rest| {
            let cells: Vec<&str> = rest.split(" | ").collect();
            let key = cells[0].trim_end_matches('`').to_owned();
            let area = cells.get(1).unwrap_or(&"").to_string();
            let holds = cells
                .get(2)
                .unwrap_or(&"")
                .trim_end_matches(" |")
                .to_owned();
            (key, area, holds)
        })
        .collect();
    let table: Vec<(String, String, String)> = (TABLE.iter())
        .map(|k| {
            (
                k.key.to_owned(),
                k.area.name().to_owned(),
                k.holds.to_owned(),
            )
        })
        .collect();
    assert_eq!(rows, table, "docs/storage.md against storage::TABLE");
    // The one key the popup writes is the table's.
    let call = read("popup/views/call.js");
    let prefix = webmcp_host::core::storage::MANUAL_CALLS_PREFIX;
    assert!(
        call.contains(&format!("'{prefix}'")),
        "popup/views/call.js writes {prefix}"
    );
}

/// Every `.rs` and `.js` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("a source directory")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
            out.push(path);
        }
    }
}

/// The code of every `.rs` and `.js` file under `dirs` but `except`, each as `(its path from
/// the project's root, its text without its `#[cfg(test)]` items, wherever they sit)`; with `skip_test_files`, without
/// the files that only test (`tests.rs`, `*_tests.rs`, anything under a `tests` folder). The
/// files of a module declared `#[cfg(test)]` are never read.
fn code_files(dirs: &[&str], except: &str, skip_test_files: bool) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in dirs {
        sources(&root.join(dir), &mut files);
    }
    let is_test = |f: &Path| {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name == "tests.rs"
            || name.ends_with("_tests.rs")
            || f.components().any(|c| c.as_os_str() == "tests")
    };
    let texts: Vec<(String, String)> = (files.iter())
        .filter(|f| **f != root.join(except) && !(skip_test_files && is_test(f)))
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("readable");
            (f.strip_prefix(root).unwrap().display().to_string(), text)
        })
        .collect();
    // A module declared `#[cfg(test)]` has no production code, whatever its files.
    let test_files: Vec<String> = (texts.iter())
        .flat_map(|(file, text)| production::test_module_files(Path::new(file), text))
        .collect();
    (texts.into_iter())
        .filter(|(file, _)| !test_files.iter().any(|t| file.starts_with(t.as_str())))
        .map(|(file, text)| (file, production::production(&text)))
        .collect()
}

#[test]
fn no_storage_key_is_written_outside_the_table() {
    let mut strays = Vec::new();
    // Test modules may name stored keys to arrange a state; the code may not.
    let files = code_files(
        &["src", "popup", "content-script"],
        "src/core/storage.rs",
        true,
    );
    for (file, code) in &files {
        for quote in ['"', '\''] {
            for start in ["webmcpHost.", "webmcpHostAuth"] {
                let needle = format!("{quote}{start}");
                for (at, _) in code.match_indices(&needle) {
                    let literal: String =
                        code[at + 1..].chars().take_while(|c| *c != quote).collect();
                    let known = webmcp_host::core::storage::TABLE
                        .iter()
                        .any(|k| k.key == literal);
                    // The popup's one key is the table's, written there as is.
                    if !(known && file == "popup/views/call.js") {
                        strays.push(format!("{file}: {literal}"));
                    }
                }
            }
        }
    }
    assert!(
        strays.is_empty(),
        "storage keys written outside src/core/storage.rs: {strays:#?}"
    );
}

#[test]
fn the_shell_keeps_its_state_in_two_globals_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src/shell"), &mut files);
    let holders: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains("thread_local!")))
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert_eq!(
        holders,
        ["src/shell/state.rs"],
        "only shell::state holds globals"
    );
    let state = read("src/shell/state.rs");
    let block = section(&state, "thread_local! {", "}");
    assert_eq!(
        block.matches("static ").count(),
        2,
        "the Host and the Driver: {block}"
    );
}

#[test]
fn every_cap_and_deadline_lives_in_limits_rs() {
    let mut strays = Vec::new();
    let files = code_files(&["src"], "src/core/limits.rs", false);
    for (file, code) in files.iter().filter(|(file, _)| file.ends_with(".rs")) {
        for line in code.lines() {
            let Some(rest) = line.trim_start().split("const ").nth(1) else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let sized = name.ends_with("_MS")
                || name.ends_with("_BYTES")
                || name.starts_with("MAX_")
                || name.contains("_MAX_");
            let value = rest.split(" = ").nth(1).unwrap_or("");
            if sized && !name.is_empty() && !value.is_empty() && !value.contains("limits::") {
                strays.push(format!("{file}: {}", line.trim()));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "caps or deadlines defined outside src/core/limits.rs: {strays:#?}"
    );
}

#[test]
fn the_shell_defines_no_number_of_its_own() {
    let mut strays = Vec::new();
    let files = code_files(&["src/shell"], "", true);
    for (file, code) in files.iter().filter(|(file, _)| file.ends_with(".rs")) {
        for line in code.lines() {
            let code = line.split("//").next().unwrap_or("");
            let numeric_const = ["u8", "u16", "u32", "u64", "usize", "i32", "i64", "f64"]
                .iter()
                .any(|t| code.contains("const ") && code.contains(&format!(": {t} =")));
            // A number of four digits or more: a deadline, a cap or a size.
            let mut digits = 0;
            let mut long_number = false;
            let mut previous = ' ';
            for c in code.chars() {
                match c {
                    '0'..='9' if digits > 0 || !(previous.is_alphanumeric() || previous == '_') => {
                        digits += 1
                    }
                    '_' if digits > 0 => {}
                    _ => digits = 0,
                }
                long_number |= digits >= 4;
                previous = c;
            }
            if numeric_const || long_number {
                strays.push(format!("{file}: {}", line.trim()));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "numbers defined in the shell (they belong in src/core/limits.rs): {strays:#?}"
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "popup", "content-script"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "the sources are read");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).ok()?.lines().count();
            (lines > 800).then(|| format!("{}: {lines}", f.strip_prefix(root).unwrap().display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over 800 lines (split them along their seams): {long:?}"
    );
}

#[test]
fn the_hosts_custom_event_names_are_defined_in_agui_rs_only() {
    let files = code_files(&["src"], "src/core/agui.rs", false);
    let strays: Vec<String> = (files.iter())
        .filter(|(file, _)| file.ends_with(".rs"))
        .flat_map(|(file, code)| {
            code.lines()
                .filter(|l| l.contains("const ") && l.contains("= \"webmcp_host."))
                .map(move |l| format!("{file}: {}", l.trim()))
        })
        .collect();
    assert!(
        strays.is_empty(),
        "CUSTOM event names defined outside src/core/agui.rs: {strays:#?}"
    );
}
