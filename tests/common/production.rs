//! The production code of a source file: its text without the items marked `#[cfg(test)]`
//! (a `mod tests;` line, a `use` for tests, an inline `mod tests { … }` block, a test-only
//! function), wherever they sit in the file: code after a test module is read too.

/// `text` without its `#[cfg(test)]` items.
pub fn production(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = skip_item(&rest[at + MARK.len()..]);
    }
    out.push_str(rest);
    out
}

/// What follows the item that starts `text`: after its `;` when that comes before any `{`
/// (`mod tests;`, `use …;`), else after the brace that closes its first `{` (strings and
/// comments are not read specially: a brace in a string of a test item is rare, and the
/// guards fail loudly rather than pass on a misread).
fn skip_item(text: &str) -> &str {
    let open = text.find('{');
    let semi = text.find(';');
    match (open, semi) {
        (Some(open), Some(semi)) if semi < open => &text[semi + 1..],
        (None, Some(semi)) => &text[semi + 1..],
        (Some(open), _) => {
            let mut depth = 0usize;
            for (i, c) in text[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return &text[open + i + 1..];
                        }
                    }
                    _ => {}
                }
            }
            ""
        }
        (None, None) => "",
    }
}

/// The files of the child modules that `file` (holding `text`) declares `#[cfg(test)]` (`mod
/// play;` under the mark): `dir/play.rs` and everything under `dir/play/`, as path prefixes.
/// Their code is test code, however it is laid out.
pub fn test_module_files(file: &std::path::Path, text: &str) -> Vec<String> {
    const MARK: &str = "#[cfg(test)]";
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") | Some("lib.rs") => file.parent().map(std::path::Path::to_path_buf),
        _ => Some(file.with_extension("")),
    };
    let Some(dir) = dir else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (at, _) in text.match_indices(MARK) {
        let item = text[at + MARK.len()..].trim_start();
        let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
        let Some(rest) = item.strip_prefix("mod ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
            out.push(dir.join(format!("{name}.rs")).display().to_string());
            out.push(format!("{}/", dir.join(&name).display()));
        }
    }
    out
}

#[test]
fn code_after_a_test_module_is_kept_and_test_items_are_not() {
    let text = "use a;\n#[cfg(test)]\nmod tests;\nfn b() {}\n#[cfg(test)]\nmod inline {\n    fn t() { if x { y } }\n}\nfn c() {}\n#[cfg(test)]\nuse d;\n";
    let kept = production(text);
    assert!(kept.contains("use a;") && kept.contains("fn b()") && kept.contains("fn c()"));
    assert!(!kept.contains("mod tests") && !kept.contains("fn t()") && !kept.contains("use d"));
}

#[test]
fn the_files_of_a_test_only_module_are_named() {
    let text = "pub mod call;\n#[cfg(test)]\npub(crate) mod play;\n#[cfg(test)]\nmod tests {}\n";
    let files = test_module_files(std::path::Path::new("src/core/host.rs"), text);
    assert_eq!(files, ["src/core/host/play.rs", "src/core/host/play/"]);
    let files = test_module_files(
        std::path::Path::new("src/core/mcp/mod.rs"),
        "#[cfg(test)]\nmod fake;",
    );
    assert_eq!(files, ["src/core/mcp/fake.rs", "src/core/mcp/fake/"]);
}
