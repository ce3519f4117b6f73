//! The json step: text that should be a JSON value, made into one.
//!
//! In order, each recorded when it changed something: strict parse; the JSON taken out of
//! prose or a code fence around it; stray backslashes (a Windows path in a string) doubled;
//! doubled or concatenated objects joined; then `jsonrepair` for the rest (trailing commas,
//! single quotes, Python literals, unquoted keys, missing closers, comments, …).

use serde_json::{Map, Value};

/// Parses `text` as JSON, repairing it if it must. `fixes` receives one line per repair.
pub fn repair_json(text: &str, fixes: &mut Vec<String>) -> Result<Value, String> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(value);
    }
    let mut current = text.trim().to_owned();

    if let Some(inner) = strip_fence(&current) {
        fixes.push("removed a code fence around the JSON".into());
        current = inner;
    }
    if let Some((inner, removed_prose)) = extract_json(&current) {
        if removed_prose {
            fixes.push("removed text around the JSON".into());
        }
        current = inner;
    }
    if let Ok(value) = serde_json::from_str::<Value>(&current) {
        return Ok(value);
    }

    if let Some(fixed) = double_stray_backslashes(&current) {
        fixes.push("doubled stray backslashes in a string (a path?)".into());
        current = fixed;
        if let Ok(value) = serde_json::from_str::<Value>(&current) {
            return Ok(value);
        }
    }

    if let Some((value, note)) = join_concatenated(&current) {
        if value.is_null() {
            return Err(format!("{note} (two calls in one block?); none is run"));
        }
        fixes.push(note);
        return Ok(value);
    }
    // Cut off mid-value (`"content": "Some te`), unlike a quote missing before the closers
    // (`"content": "Hello}}`), which jsonrepair mends.
    if ends_inside_string(&current) && !current.trim_end().ends_with(['}', ']']) {
        return Err("the JSON is cut off inside a string; a cut value is not run".into());
    }

    match jsonrepair_rs::jsonrepair(&current) {
        Ok(repaired) => match serde_json::from_str::<Value>(&repaired) {
            Ok(value) => {
                fixes.push("repaired malformed JSON".into());
                Ok(value)
            }
            Err(e) => Err(format!("the JSON could not be repaired: {e}")),
        },
        Err(e) => Err(format!("the JSON could not be repaired: {}", e.message)),
    }
}

/// The content of a Markdown code fence that wraps the whole text.
fn strip_fence(text: &str) -> Option<String> {
    let rest = text.strip_prefix("```")?;
    let body_start = rest.find('\n')?;
    let body = &rest[body_start + 1..];
    let body = body.trim_end().strip_suffix("```").unwrap_or(body);
    Some(body.trim().to_owned())
}

/// The first balanced JSON object or array in `text`, and whether anything other than
/// whitespace surrounded it. `None` when there is no opening brace.
fn extract_json(text: &str) -> Option<(String, bool)> {
    let start = text.find(['{', '['])?;
    let end = balanced_end(text, start).unwrap_or(text.len());
    let inner = &text[start..end];
    let around = !text[..start].trim().is_empty() || !text[end..].trim().is_empty();
    // Text after the value that is itself JSON (a second object) is not prose: leave it to
    // the concatenation step.
    let after = text[end..].trim_start();
    if after.starts_with('{') || after.starts_with('[') {
        return Some((text[start..].to_owned(), !text[..start].trim().is_empty()));
    }
    // Another JSON object further on (`{call}; {call}`): two values, not one with prose.
    if let Some(next) = text[end..].find('{') {
        let from = end + next;
        if let Some(stop) = balanced_end(text, from) {
            if serde_json::from_str::<Value>(&text[from..stop])
                .is_ok_and(|v| v.as_object().is_some_and(|m| !m.is_empty()))
            {
                return Some((format!("{inner}{}", &text[from..stop]), around));
            }
        }
    }
    Some((inner.to_owned(), around))
}

/// Whether the text ends inside an unterminated JSON string (cut off mid-value).
fn ends_inside_string(text: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
    }
    in_string
}

/// The end (exclusive) of the JSON container opening at `start`, if it closes.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(start + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// In every string that holds a backslash JSON does not allow (`\U`, `\d`, `\ ` …), doubles
/// every backslash of that string: such a string is a path or a pattern, written raw.
/// `None` when no string needed it.
fn double_stray_backslashes(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut changed = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            out.push(c);
            continue;
        }
        // A string: find its end, honouring escapes.
        let start = i + 1;
        let mut end = None;
        let mut escaped = false;
        for (j, d) in chars.by_ref() {
            match (escaped, d) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            out.push_str(&text[i..]);
            break;
        };
        let content = &text[start..end];
        out.push('"');
        if has_invalid_escape(content) {
            changed = true;
            let mut rest = content.chars().peekable();
            while let Some(d) = rest.next() {
                if d == '\\' {
                    // An escaped quote stays an escaped quote; everything else is literal.
                    if rest.peek() == Some(&'"') {
                        out.push_str("\\\"");
                        rest.next();
                    } else {
                        out.push_str("\\\\");
                    }
                } else {
                    out.push(d);
                }
            }
        } else {
            out.push_str(content);
        }
        out.push('"');
    }
    changed.then_some(out)
}

fn has_invalid_escape(content: &str) -> bool {
    let bytes = content.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u')
                    if bytes.len() >= i + 6
                        && bytes[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) =>
                {
                    i += 6
                }
                _ => return true,
            }
        } else {
            i += 1;
        }
    }
    false
}

/// Two or more JSON values written back to back: equal ones are one value; objects with
/// disjoint keys are merged. Different values (two calls, two argument objects) are not
/// guessed between: the value is `null` and the caller refuses them.
fn join_concatenated(text: &str) -> Option<(Value, String)> {
    let values: Vec<Value> = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .ok()?;
    if values.len() < 2 {
        return None;
    }
    let first = values[0].clone();
    if values.iter().all(|v| *v == first) {
        return Some((
            first,
            format!(
                "the same JSON value was written {} times; kept one",
                values.len()
            ),
        ));
    }
    if values.iter().all(Value::is_object) {
        let mut merged = Map::new();
        let mut disjoint = true;
        for value in &values {
            for (key, v) in value
                .as_object()
                .expect("checked: every value is an object")
            {
                if merged.insert(key.clone(), v.clone()).is_some() {
                    disjoint = false;
                }
            }
        }
        if disjoint {
            return Some((
                Value::Object(merged),
                format!("merged {} objects written back to back", values.len()),
            ));
        }
    }
    Some((
        Value::Null,
        format!(
            "{} different JSON values were written back to back",
            values.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repair(text: &str) -> (Result<Value, String>, Vec<String>) {
        let mut fixes = Vec::new();
        (repair_json(text, &mut fixes), fixes)
    }

    #[test]
    fn valid_json_needs_no_fix() {
        assert_eq!(repair(r#"{"a": 1}"#), (Ok(json!({"a": 1})), vec![]));
    }

    #[test]
    fn windows_paths_keep_their_backslashes() {
        let (value, fixes) = repair(r#"{"path": "C:\Users\me\new", "ok": "line\nbreak"}"#);
        assert_eq!(
            value,
            Ok(json!({"path": "C:\\Users\\me\\new", "ok": "line\nbreak"}))
        );
        assert_eq!(fixes, ["doubled stray backslashes in a string (a path?)"]);
        let (value, _) = repair(r#"{"re": "\d+\.\d+", "q": "say \"hi\" \w"}"#);
        assert_eq!(
            value,
            Ok(json!({"re": "\\d+\\.\\d+", "q": "say \"hi\" \\w"}))
        );
    }

    #[test]
    fn prose_and_fences_around_json() {
        assert_eq!(
            repair("Sure! {\"a\":1} hope this helps").0,
            Ok(json!({"a": 1}))
        );
        assert_eq!(repair("```json\n{\"a\":1}\n```").0, Ok(json!({"a": 1})));
        let (value, fixes) = repair("Here:\n```\n{\"a\": [1, 2]}\n```\nThanks");
        assert_eq!(value, Ok(json!({"a": [1, 2]})));
        assert_eq!(fixes, ["removed text around the JSON"]);
    }

    #[test]
    fn doubled_and_concatenated_objects() {
        assert_eq!(repair(r#"{"a":1}{"a":1}"#).0, Ok(json!({"a": 1})));
        assert_eq!(repair(r#"{"a":1} {"b":2}"#).0, Ok(json!({"a": 1, "b": 2})));
        let (value, _) = repair(r#"{"a":1}{"a":2}"#);
        assert_eq!(value.unwrap_err(), "2 different JSON values were written back to back (two calls in one block?); none is run");
        assert!(
            repair(r#"{"name":"a"}; {"name":"b"}"#).0.is_err(),
            "two objects with text between"
        );
        assert!(repair(r#"{"path": "notes.txt", "content": "Some te"#)
            .0
            .unwrap_err()
            .contains("cut off inside a string"));
    }

    #[test]
    fn jsonrepair_does_the_rest() {
        assert_eq!(
            repair("{'a': True, \"b\": None,}").0,
            Ok(json!({"a": true, "b": null}))
        );
        assert_eq!(repair(r#"{"a": {"b": 1"#).0, Ok(json!({"a": {"b": 1}})));
        assert_eq!(
            repair("{a: 1, // note\n b: 'x'}").0,
            Ok(json!({"a": 1, "b": "x"}))
        );
        assert!(repair("").0.is_err());
    }
}
