//! Smoke mode's arguments: a concrete value for each matcher of a case's expected call.

use serde_json::{json, Value};

use crate::core::evals::matcher::is_constraint;

/// A concrete value satisfying a matcher, for smoke calls: a constraint gives a value it
/// accepts where one is plain (`$contains`: the text, `$gte`/`$lte`: the bound, `$gt`/`$lt`:
/// the bound ± 1, `$type`: a sample of the type, `$pattern`: the pattern's text when it is a
/// literal, else `"sample"`, `$any`: `"sample"`); objects and arrays element by element.
pub fn concrete(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(concrete).collect()),
        Value::Object(map) if is_constraint(map) => {
            let n = |k: &str| map.get(k).and_then(Value::as_f64);
            if let Some(text) = map.get("$contains") {
                return text.clone();
            }
            for bound in ["$gte", "$lte"] {
                if let Some(v) = map.get(bound).filter(|v| v.is_number()) {
                    return v.clone();
                }
            }
            if let Some(gt) = n("$gt") {
                return number(gt + 1.0);
            }
            if let Some(lt) = n("$lt") {
                return number(lt - 1.0);
            }
            if let Some(pattern) = map.get("$pattern").and_then(Value::as_str) {
                return json!(literal(pattern).unwrap_or_else(|| "sample".into()));
            }
            match map.get("$type").and_then(Value::as_str) {
                Some("number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                Some("null") => Value::Null,
                _ => json!("sample"),
            }
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), concrete(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// The text a pattern matches when it is a literal (anchors and `(?i)` flags aside).
fn literal(pattern: &str) -> Option<String> {
    let mut body = pattern;
    if let Some(rest) = body.strip_prefix("(?") {
        body = &rest[rest.find(')')? + 1..];
    }
    let body = body.strip_prefix('^').unwrap_or(body);
    let body = body.strip_suffix('$').unwrap_or(body);
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                c if c.is_ascii_punctuation() || c == ' ' => out.push(c),
                _ => return None,
            },
            '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '^' | '$' => {
                return None
            }
            c => out.push(c),
        }
    }
    (!out.is_empty()).then_some(out)
}
