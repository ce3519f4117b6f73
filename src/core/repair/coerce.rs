//! The coerce step: arguments bent toward their schema, each change recorded.
//!
//! Only what a schema says plainly is used (`type`, `properties`, `required`, `default`,
//! `items`, `enum`, `additionalProperties`, `patternProperties`), recursively through objects
//! and arrays: numeric strings to numbers, `"true"`/`"false"` to booleans, numbers and
//! booleans to strings, a JSON string to the array or object it spells, a lone value to a
//! one-element array, an enum value in the wrong case to the right one, `null` for keys that
//! are not required dropped, and keys the schema does not list dropped unless it admits them
//! explicitly (`additionalProperties` `true` or a schema, or a `patternProperties` pattern
//! that matches; a schema that builds its object from `allOf`/`anyOf`/`oneOf`/`$ref`/`if`
//! keeps them too, as it may list them there).
//!
//! Defaults for missing keys are filled in, but not reported here: each is handed back as a
//! [`Filled`], and the repair pipeline keeps only those that do not make the call invalid
//! (published schemas carry `"default": null` on strings and `"default": "dontcare"` on
//! integers; such a default is left out and the tool applies its own).

use serde_json::{Map, Number, Value};

/// A default filled in for a missing key.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    /// Where the object that got the key is, as JSON pointer segments (unescaped).
    pub parent: Vec<String>,
    /// The key filled in.
    pub key: String,
    /// The fix line that reports it.
    pub detail: String,
}

impl Filled {
    /// The key's JSON pointer, escaped as validation errors give instance paths.
    pub fn pointer(&self) -> String {
        self.parent
            .iter()
            .chain(std::iter::once(&self.key))
            .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
            .collect()
    }
}

/// Coerces `value` toward `schema`; `path` is the JSON pointer of `value` for fix lines.
/// Defaults filled in for missing keys go to `filled`, not to `fixes`.
pub fn coerce(
    value: &mut Value,
    schema: &Value,
    path: &str,
    fixes: &mut Vec<String>,
    filled: &mut Vec<Filled>,
) {
    coerce_at(value, schema, path, &mut Vec::new(), fixes, filled);
}

fn coerce_at(
    value: &mut Value,
    schema: &Value,
    path: &str,
    segments: &mut Vec<String>,
    fixes: &mut Vec<String>,
    filled: &mut Vec<Filled>,
) {
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
        Value::Object(map) => coerce_object(map, schema, path, segments, fixes, filled),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    segments.push(i.to_string());
                    coerce_at(
                        item,
                        item_schema,
                        &format!("{path}/{i}"),
                        segments,
                        fixes,
                        filled,
                    );
                    segments.pop();
                }
            }
        }
        _ => {}
    }
}

/// Keywords through which a schema may list an object's keys elsewhere than `properties`.
const COMPOSED: [&str; 6] = ["allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas"];

/// Whether the schema admits `key`, which its `properties` does not list.
fn admits(schema: &Map<String, Value>, key: &str) -> bool {
    let patterns = schema.get("patternProperties").and_then(Value::as_object);
    let matches = patterns.is_some_and(|patterns| {
        patterns.keys().any(|pattern| {
            // The schema's own regular expressions, as validation reads them; a pattern that
            // does not compile admits the key (the validator has the last word).
            crate::core::schema::validator_for(&serde_json::json!({"pattern": pattern}))
                .map_or(true, |v| v.is_valid(&Value::String(key.to_owned())))
        })
    });
    matches
        || match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) | Some(Value::Object(_)) => true,
            _ => COMPOSED.iter().any(|k| schema.contains_key(*k)),
        }
}

fn coerce_object(
    map: &mut Map<String, Value>,
    schema: &Map<String, Value>,
    path: &str,
    segments: &mut Vec<String>,
    fixes: &mut Vec<String>,
    filled: &mut Vec<Filled>,
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
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let extra: Vec<String> = map
            .keys()
            .filter(|k| !properties.contains_key(*k) && !required.contains(&k.as_str()))
            .filter(|k| !admits(schema, k))
            .cloned()
            .collect();
        for key in extra {
            map.shift_remove(&key);
            let why = if closed { "allow" } else { "list" };
            fixes.push(format!(
                "{}: dropped `{key}`, which the schema does not {why}",
                at(path)
            ));
        }
        for (key, property) in properties {
            match map.get_mut(key) {
                Some(value) => {
                    segments.push(key.clone());
                    let at_key = format!("{path}/{key}");
                    coerce_at(value, property, &at_key, segments, fixes, filled);
                    segments.pop();
                }
                None => {
                    if let Some(default) = property.get("default") {
                        map.insert(key.clone(), default.clone());
                        filled.push(Filled {
                            parent: segments.clone(),
                            key: key.clone(),
                            detail: format!(
                                "{}: filled `{key}` with its default {}",
                                at(path),
                                short(default)
                            ),
                        });
                    }
                }
            }
        }
    }
}

/// Removes a filled key from `value`.
pub fn unfill(value: &mut Value, filled: &Filled) {
    let mut at = value;
    for segment in &filled.parent {
        at = match at {
            Value::Object(map) => match map.get_mut(segment) {
                Some(next) => next,
                None => return,
            },
            Value::Array(items) => {
                match segment.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(next) => next,
                    None => return,
                }
            }
            _ => return,
        };
    }
    if let Value::Object(map) = at {
        map.shift_remove(&filled.key);
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
        let mut filled = Vec::new();
        coerce(&mut value, &schema, "", &mut fixes, &mut filled);
        fixes.extend(filled.into_iter().map(|f| f.detail));
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
    fn unlisted_keys_are_dropped_unless_the_schema_admits_them() {
        let props = json!({"q": {"type": "string"}});
        let open = json!({"type": "object", "properties": props});
        let (value, fixes) = run(json!({"q": "x", "extra": 1}), open);
        assert_eq!(value, json!({"q": "x"}));
        assert_eq!(
            fixes,
            ["arguments: dropped `extra`, which the schema does not list"]
        );
        for admitting in [
            json!({"type": "object", "properties": props, "additionalProperties": true}),
            json!({"type": "object", "properties": props, "additionalProperties": {"type": "integer"}}),
            json!({"type": "object", "properties": props, "patternProperties": {"^ex": {}}}),
            json!({"type": "object", "properties": props, "additionalProperties": false, "patternProperties": {"^ex": {}}}),
            json!({"type": "object", "properties": props, "allOf": [{"properties": {"extra": {}}}]}),
            json!({"type": "object"}),
        ] {
            let (value, fixes) = run(json!({"q": "x", "extra": 1}), admitting.clone());
            assert_eq!(value, json!({"q": "x", "extra": 1}), "{admitting}");
            assert!(fixes.is_empty(), "{admitting}: {fixes:?}");
        }
        let pattern =
            json!({"type": "object", "properties": props, "patternProperties": {"^x-": {}}});
        let (value, _) = run(json!({"q": "x", "x-a": 1, "extra": 1}), pattern);
        assert_eq!(value, json!({"q": "x", "x-a": 1}));
    }

    #[test]
    fn filled_defaults_are_handed_back_with_their_place() {
        let schema = json!({"type": "object", "properties": {
            "inner": {"type": "object", "properties": {"a/b": {"type": "string", "default": null}}}
        }});
        let mut value = json!({"inner": {}});
        let (mut fixes, mut filled) = (Vec::new(), Vec::new());
        coerce(&mut value, &schema, "", &mut fixes, &mut filled);
        assert_eq!(value, json!({"inner": {"a/b": null}}));
        assert!(fixes.is_empty());
        assert_eq!(filled.len(), 1);
        assert_eq!(filled[0].pointer(), "/inner/a~1b");
        unfill(&mut value, &filled[0]);
        assert_eq!(value, json!({"inner": {}}));
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
