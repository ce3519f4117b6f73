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

#[test]
fn code_after_a_test_module_is_kept_and_test_items_are_not() {
    let text = "use a;\n#[cfg(test)]\nmod tests;\nfn b() {}\n#[cfg(test)]\nmod inline {\n    fn t() { if x { y } }\n}\nfn c() {}\n#[cfg(test)]\nuse d;\n";
    let kept = production(text);
    assert!(kept.contains("use a;") && kept.contains("fn b()") && kept.contains("fn c()"));
    assert!(!kept.contains("mod tests") && !kept.contains("fn t()") && !kept.contains("use d"));
}
