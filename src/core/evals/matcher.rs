//! The argument and result matcher of `webmcp-evals` (its `matcher.ts`): an expected value
//! whose keys all start with `$` is a constraint (`$pattern`, `$contains`, `$gt`, `$gte`,
//! `$lt`, `$lte`, `$type`, `$any`; other `$` keys are ignored); other objects match as
//! subsets (every expected key present and matching, extra keys allowed), arrays strictly
//! (same length, position by position), anything else by equality.
//!
//! `$pattern` is a regular expression (Rust `regex` syntax: no lookaround or backreference,
//! an error of the case when used) with an optional leading `(?flags)`: `i`, `m` and `s` apply,
//! `d`, `g`, `u`, `v` and `y` change nothing for a match, and any other flag is an error.

use serde_json::{Map, Value};

/// Whether `actual` matches `expected` (an error for a `$pattern` that cannot be used).
pub fn matches(expected: &Value, actual: &Value) -> Result<bool, String> {
    match expected {
        Value::Object(map) if is_constraint(map) => constraint(map, actual),
        Value::Object(map) => {
            let Value::Object(got) = actual else {
                return Ok(false);
            };
            for (key, want) in map {
                match got.get(key) {
                    Some(value) if matches(want, value)? => {}
                    _ => return Ok(false),
                }
            }
            Ok(true)
        }
        Value::Array(items) => {
            let Value::Array(got) = actual else {
                return Ok(false);
            };
            if items.len() != got.len() {
                return Ok(false);
            }
            for (want, value) in items.iter().zip(got) {
                if !matches(want, value)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Value::Number(want) => Ok(actual.as_f64().is_some() && actual.as_f64() == want.as_f64()),
        _ => Ok(expected == actual),
    }
}

/// Whether an object is a constraint (every key starts with `$`).
pub(crate) fn is_constraint(map: &Map<String, Value>) -> bool {
    !map.is_empty() && map.keys().all(|k| k.starts_with('$'))
}

fn constraint(map: &Map<String, Value>, actual: &Value) -> Result<bool, String> {
    for (key, want) in map {
        let ok = match key.as_str() {
            "$pattern" => match actual {
                Value::String(text) => pattern(want.as_str().unwrap_or_default())?.is_match(text),
                _ => false,
            },
            "$contains" => match actual {
                Value::String(text) => match want {
                    Value::String(part) => text.contains(part.as_str()),
                    other => text.contains(&other.to_string()),
                },
                _ => false,
            },
            "$gt" | "$gte" | "$lt" | "$lte" => match (actual.as_f64(), want.as_f64()) {
                (Some(a), Some(w)) => match key.as_str() {
                    "$gt" => a > w,
                    "$gte" => a >= w,
                    "$lt" => a < w,
                    _ => a <= w,
                },
                _ => false,
            },
            "$type" => match want.as_str() {
                Some("array") => actual.is_array(),
                Some("null") => actual.is_null(),
                Some("object") => actual.is_object(),
                Some("string") => actual.is_string(),
                Some("number") => actual.is_number(),
                Some("boolean") => actual.is_boolean(),
                _ => false,
            },
            _ => true, // `$any`, and constraints this matcher does not know
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn pattern(raw: &str) -> Result<regex::Regex, String> {
    let (flags, body) = match raw.strip_prefix("(?").and_then(|rest| {
        let end = rest.find(')')?;
        let flags = &rest[..end];
        (!flags.is_empty() && flags.chars().all(|c| c.is_ascii_alphabetic()))
            .then(|| (flags, &rest[end + 1..]))
    }) {
        Some(split) => split,
        None => ("", raw),
    };
    let mut kept = String::new();
    for flag in flags.chars() {
        match flag {
            'i' | 'm' | 's' => kept.push(flag),
            'd' | 'g' | 'u' | 'v' | 'y' => {}
            other => {
                return Err(format!(
                    "unsupported inline flag \"(?{other})\" in $pattern {raw:?}; supported: d, g, i, m, s, u, v, y"
                ))
            }
        }
    }
    let source = if kept.is_empty() {
        body.to_owned()
    } else {
        format!("(?{kept}){body}")
    };
    regex::Regex::new(&source)
        .map_err(|e| format!("$pattern {raw:?} is not a usable regular expression: {e}"))
}
