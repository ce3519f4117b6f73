//! The coerce step: arguments bent toward their schema, each change recorded.
//!
//! Only what a schema says plainly is used (`type`, `properties`, `required`, `default`,
//! `items`, `enum`, `additionalProperties: false`), recursively through objects and arrays:
//! numeric strings to numbers, `"true"`/`"false"` to booleans, numbers and booleans to
//! strings, a JSON string to the array or object it spells, a lone value to a one-element
//! array, an enum value in the wrong case to the right one, defaults filled for missing keys,
//! `null` for keys that are not required dropped, and keys the schema forbids dropped.

use serde_json::{Map, Number, Value};

/// Coerces `value` toward `schema`; `path` is the JSON pointer of `value` for fix lines.
pub fn coerce(value: &mut Value, schema: &Value, path: &str, fixes: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    let types = declared_types(schema);

    if !types.is_empty() && !types.iter().any(|t| matches_type(value, t)) {
        if let Some(new) = types.iter().find_map(|t| convert(value, t)) {
            fixes.push(format!("{}: {} → {}", at(path), short(value), short(&new)));
            *value = new;
        }
    }
    if let (Some(Value::Array(options)), Value::String(s)) = (schema.get("enum"), &*value) {
        if !options.contains(value) {
            // The same value in another case or with other separators (`In Progress` for
            // `in_progress`), when exactly one option matches.
            let wanted = crate::core::toolset::canonical_name(s);
            let same: Vec<&Value> = options
                .iter()
                .filter(|o| {
                    o.as_str().is_some_and(|o| {
                        !wanted.is_empty() && crate::core::toolset::canonical_name(o) == wanted
                    })
                })
                .collect();
            if let [only] = same.as_slice() {
                fixes.push(format!(
                    "{}: {} → {} (enum spelling)",
                    at(path),
                    short(value),
                    short(only)
                ));
                *value = (*only).clone();
            }
        }
    }
    match value {
        Value::Object(map) => coerce_object(map, schema, path, fixes),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    coerce(item, item_schema, &format!("{path}/{i}"), fixes);
                }
            }
        }
        _ => {}
    }
}

fn coerce_object(
    map: &mut Map<String, Value>,
    schema: &Map<String, Value>,
    path: &str,
    fixes: &mut Vec<String>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();

    // `null` for a key that is not required, or `""` for an optional enum that does not
    // allow it: the model meant "not given".
    let nulls: Vec<String> = map
        .iter()
        .filter(|(k, _)| !required.contains(&k.as_str()))
        .filter(|(k, v)| {
            let property = properties.and_then(|p| p.get(*k));
            match v {
                Value::Null => !property.is_some_and(allows_null),
                Value::String(text) if text.is_empty() => property
                    .and_then(|p| p.get("enum"))
                    .and_then(Value::as_array)
                    .is_some_and(|options| !options.contains(v)),
                _ => false,
            }
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in nulls {
        map.shift_remove(&key);
        fixes.push(format!(
            "{}: dropped the empty value of optional `{key}`",
            at(path)
        ));
    }

    if let Some(properties) = properties {
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            let extra: Vec<String> = map
                .keys()
                .filter(|k| !properties.contains_key(*k))
                .cloned()
                .collect();
            for key in extra {
                map.shift_remove(&key);
                fixes.push(format!(
                    "{}: dropped `{key}`, which the schema does not allow",
                    at(path)
                ));
            }
        }
        for (key, property) in properties {
            match map.get_mut(key) {
                Some(value) => coerce(value, property, &format!("{path}/{key}"), fixes),
                None => {
                    if let Some(default) = property.get("default") {
                        map.insert(key.clone(), default.clone());
                        fixes.push(format!(
                            "{}: filled `{key}` with its default {}",
                            at(path),
                            short(default)
                        ));
                    }
                }
            }
        }
    }
}

fn declared_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_null(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|s| declared_types(s).contains(&"null"))
}

fn matches_type(value: &Value, t: &str) -> bool {
    match (t, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("string", Value::String(_)) => true,
        ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// `value` as type `t`, when the conversion is plain.
fn convert(value: &Value, t: &str) -> Option<Value> {
    match (t, value) {
        ("number", Value::String(s)) => parse_number(s.trim()).map(Value::Number),
        ("integer", Value::String(s)) => parse_number(s.trim())
            .filter(|n| n.is_i64() || n.is_u64())
            .map(Value::Number),
        ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("array", Value::String(s)) if s.trim_start().starts_with('[') => {
            // JSON, or a Python list (`['a', 'b']`) that the json step can read.
            super::json::repair_json(s, &mut Vec::new())
                .ok()
                .filter(Value::is_array)
        }
        ("object", Value::String(s)) if s.trim_start().starts_with('{') => {
            serde_json::from_str::<Value>(s)
                .ok()
                .filter(Value::is_object)
        }
        ("array", Value::Null) => None,
        ("array", other) => Some(Value::Array(vec![other.clone()])),
        _ => None,
    }
}

fn parse_number(s: &str) -> Option<Number> {
    if s.is_empty() {
        return None;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Some(Number::from(i));
    }
    let f = s.parse::<f64>().ok().filter(|f| f.is_finite())?;
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Some(Number::from(f as i64));
    }
    Number::from_f64(f)
}

fn at(path: &str) -> &str {
    if path.is_empty() {
        "arguments"
    } else {
        path
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(40).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(value: Value, schema: Value) -> (Value, Vec<String>) {
        let mut value = value;
        let mut fixes = Vec::new();
        coerce(&mut value, &schema, "", &mut fixes);
        (value, fixes)
    }

    #[test]
    fn scalars_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "number"}, "i": {"type": "integer"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "tags": {"type": "array", "items": {"type": "integer"}},
            "color": {"enum": ["red", "green"]}
        }});
        let (value, fixes) = run(
            json!({"n": " 2.5", "i": "7", "b": "TRUE", "s": 12, "tags": "3", "color": "Green"}),
            schema,
        );
        assert_eq!(
            value,
            json!({"n": 2.5, "i": 7, "b": true, "s": "12", "tags": [3], "color": "green"})
        );
        assert_eq!(fixes.len(), 7, "{fixes:?}");
        assert_eq!(fixes[0], "/n: \" 2.5\" → 2.5");
    }

    #[test]
    fn defaults_nulls_and_forbidden_keys() {
        let schema = json!({"type": "object", "required": ["q"], "additionalProperties": false, "properties": {
            "q": {"type": "string"}, "limit": {"type": "integer", "default": 10}, "lang": {"type": "string"},
            "maybe": {"type": ["string", "null"]}
        }});
        let (value, fixes) = run(
            json!({"q": "x", "lang": null, "maybe": null, "extra": 1}),
            schema,
        );
        assert_eq!(value, json!({"q": "x", "maybe": null, "limit": 10}));
        assert_eq!(fixes.len(), 3, "{fixes:?}");
    }

    #[test]
    fn nested_objects_and_json_strings() {
        let schema = json!({"type": "object", "properties": {
            "filter": {"type": "object", "properties": {"max": {"type": "number"}}},
            "ids": {"type": "array", "items": {"type": "string"}}
        }});
        let (value, _) = run(
            json!({"filter": "{\"max\": \"9\"}", "ids": "[1, 2]"}),
            schema,
        );
        assert_eq!(value, json!({"filter": {"max": 9}, "ids": ["1", "2"]}));
    }

    #[test]
    fn what_cannot_be_converted_is_left_for_validation() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "number"}, "b": {"type": "boolean"}}});
        let (value, fixes) = run(json!({"n": "many", "b": "maybe"}), schema);
        assert_eq!(value, json!({"n": "many", "b": "maybe"}));
        assert!(fixes.is_empty());
    }
}
