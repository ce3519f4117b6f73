//! The name step: the tool a written name means, when one tool clearly is meant.
//!
//! Tried in order: the name as written; without the leaks models add around names (special
//! tokens such as `<|channel|>`, `[TOOL_CALLS]`, `to=`, `()`, quotes) and without namespace
//! prefixes (`functions.`, `tools.`, `default_api.`); ignoring case; ignoring case and
//! `_`/`-`/`.` (snake, camel, kebab); a name written twice; and last a small typo, only when
//! exactly one tool is that close.

use super::super::toolset::{canonical_name, ToolSet};

const PREFIXES: [&str; 7] = [
    "functions.",
    "function.",
    "tools.",
    "tool.",
    "default_api.",
    "functions:",
    "tool:",
];

/// The tool `written` means, and a line describing the fix when it was not exact.
pub fn resolve_name(written: &str, tools: &ToolSet) -> Result<(String, Option<String>), String> {
    if tools.get(written).is_some() {
        return Ok((written.to_owned(), None));
    }
    let fixed = |name: &str, how: &str| {
        Ok((
            name.to_owned(),
            Some(format!("name `{written}` → `{name}` ({how})")),
        ))
    };

    let cleaned = clean(written);
    if let Some(tool) = tools.get(&cleaned) {
        return fixed(&tool.name.clone(), "removed what surrounded the name");
    }
    if let Some(name) = unique(tools.names().filter(|n| n.eq_ignore_ascii_case(&cleaned))) {
        return fixed(name, "case");
    }
    let canonical = canonical_name(&cleaned);
    if canonical.is_empty() {
        return Err(unknown(written, tools));
    }
    if let Some(name) = unique(
        tools
            .canonical_names()
            .filter(|(_, c)| *c == canonical)
            .map(|(n, _)| n),
    ) {
        return fixed(name, "case and separators");
    }
    for times in 2..=4 {
        // Byte lengths, but only split where a character starts (names may be any text).
        if canonical.len() % times != 0 || !canonical.is_char_boundary(canonical.len() / times) {
            continue;
        }
        let part = &canonical[..canonical.len() / times];
        if part.repeat(times) == canonical {
            if let Some(name) = unique(
                tools
                    .canonical_names()
                    .filter(|(_, c)| *c == part)
                    .map(|(n, _)| n),
            ) {
                return fixed(name, "the name was written more than once");
            }
        }
    }
    // A namespace of another host (`repo_browser.read_file`): the tool is after the last dot.
    if let Some((_, last)) = cleaned.rsplit_once('.') {
        if let Some(tool) = tools.get(last) {
            return fixed(&tool.name.clone(), "removed a namespace");
        }
    }
    // Typos: none below 4 characters, a distance of 1 up to 7, 2 from 8; the best must be
    // strictly closer than the second best.
    let allowed = match canonical.chars().count() {
        0..=3 => return Err(unknown(written, tools)),
        4..=7 => 1,
        _ => 2,
    };
    // A typo keeps the first letter of a name: `unlock_door` is not a typo of `lock_door`,
    // nor `get_volume` of `set_volume`.
    let start: String = canonical.chars().take(1).collect();
    let mut scored: Vec<(usize, &str)> = tools
        .canonical_names()
        .filter(|(_, c)| c.starts_with(&start))
        .map(|(name, c)| (strsim::damerau_levenshtein(&canonical, c), name))
        .filter(|(distance, _)| *distance <= allowed)
        .collect();
    scored.sort();
    match scored.as_slice() {
        [(_, name)] => fixed(name, "typo"),
        [(best, name), (second, _), ..] if best < second => fixed(name, "typo"),
        _ => Err(unknown(written, tools)),
    }
}

fn unique<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let first = names.next()?;
    names.next().is_none().then_some(first)
}

fn unknown(written: &str, tools: &ToolSet) -> String {
    let shown: String = written.chars().take(80).collect();
    let names: Vec<&str> = tools.names().collect();
    if names.is_empty() {
        format!("unknown tool `{shown}`: no tools are available")
    } else {
        format!(
            "unknown tool `{shown}`; the tools are: {}",
            names.join(", ")
        )
    }
}

/// The name without the leaks models write around it.
fn clean(written: &str) -> String {
    let mut name = written.trim();
    // Special tokens: keep what precedes the first one (gpt-oss `x<|channel|>commentary`), or
    // what follows the last one when nothing precedes it (`<|python_tag|>x`).
    if let Some(at) = name.find("<|") {
        if at > 0 {
            name = &name[..at];
        } else if let Some(end) = name.rfind("|>") {
            name = &name[end + 2..];
        }
    }
    name = name.trim();
    // Harmony headers: `commentary to=functions.x` names its recipient after `to=`.
    if let Some(at) = name.rfind("to=") {
        name = name[at + 3..].split_whitespace().next().unwrap_or("");
    }
    // Mistral control tokens around the name: `[TOOL_CALLS]x`, `x[ARGS]`.
    for token in ["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"] {
        if let Some(rest) = name.strip_prefix(token) {
            name = rest.trim();
        }
        if let Some(rest) = name.strip_suffix(token) {
            name = rest.trim();
        }
    }
    name = name.trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c.is_whitespace());
    if let Some(rest) = name.strip_suffix("()") {
        name = rest;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for prefix in PREFIXES {
            if name.len() > prefix.len()
                && name
                    .get(..prefix.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
            {
                name = &name[prefix.len()..];
                changed = true;
            }
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::toolset::ToolSpec;

    fn tools(names: &[&str]) -> ToolSet {
        ToolSet::new(names.iter().map(|n| ToolSpec {
            name: (*n).into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
        }))
        .0
    }

    fn resolve(written: &str) -> Result<String, String> {
        let set = tools(&[
            "get_weather",
            "search_docs",
            "add",
            "sub",
            "send_email",
            "sendEmails",
        ]);
        resolve_name(written, &set).map(|(name, _)| name)
    }

    #[test]
    fn exact_names_need_no_fix() {
        let set = tools(&["add"]);
        assert_eq!(resolve_name("add", &set), Ok(("add".into(), None)));
    }

    #[test]
    fn leaks_prefixes_case_and_style() {
        for written in [
            "functions.get_weather",
            "tools.get_weather",
            "default_api.get_weather",
            "get_weather<|channel|>commentary",
            "to=functions.get_weather",
            "<|python_tag|>get_weather",
            "[TOOL_CALLS]get_weather",
            "get_weather()",
            " `get_weather` ",
            "GET_WEATHER",
            "getWeather",
            "Get-Weather",
            "get_weatherget_weather",
            "get_weather.get_weather",
            "get_weatherget_weatherget_weather",
            "commentary to=functions.get_weather",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather",
            "get_weather[ARGS]",
            "repo_browser.get_weather",
            "get_wether",
            "functions.getWeather",
        ] {
            assert_eq!(resolve(written), Ok("get_weather".into()), "{written}");
        }
    }

    #[test]
    fn ambiguous_or_far_names_are_unknown() {
        // Names under 4 characters are never guessed.
        assert!(resolve("ad").is_err());
        assert!(resolve("sud").is_err());
        // `sendEmailz` is 1 from `send_email` and 1 from `sendEmails`: no clear winner…
        assert!(resolve("sendEmailz").is_err());
        // …but `sendEmai` is 1 from one and 2 from the other.
        assert_eq!(resolve("sendEmai"), Ok("send_email".into()));
        // A typo keeps the start of the name.
        let set = tools(&["lock_door", "set_volume"]);
        assert!(resolve_name("unlock_door", &set).is_err());
        assert!(resolve_name("get_volume", &set).is_err());
        assert!(resolve_name("set_volme", &set).is_ok());
        let error = resolve("delete_all").unwrap_err();
        assert_eq!(error, "unknown tool `delete_all`; the tools are: get_weather, search_docs, add, sub, send_email, sendEmails");
    }

    #[test]
    fn names_with_multibyte_characters_never_panic() {
        // Found by fuzzing (fuzz/regressions): byte slicing inside a character.
        let set = tools(&["get_weather", "add"]);
        for written in ["météo", "naïve", "\u{ff}r", "ééé", "tools.é"] {
            assert!(resolve_name(written, &set).is_err(), "{written}");
        }
        assert_eq!(
            resolve_name("функции.add", &set).map(|(n, _)| n),
            Ok("add".into()),
            "a namespace of any script"
        );
    }

    #[test]
    fn fix_lines_say_what_changed() {
        let set = tools(&["get_weather"]);
        assert_eq!(
            resolve_name("functions.getWeather", &set),
            Ok((
                "get_weather".into(),
                Some("name `functions.getWeather` → `get_weather` (case and separators)".into())
            ))
        );
    }
}
