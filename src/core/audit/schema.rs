//! The checks of a tool's input schema: valid JSON Schema (its draft's meta-schema, through the
//! `jsonschema` crate, then compiled), within the host's caps, an object at the root, `required`
//! naming declared properties, every property described, sensitive strings constrained, and an
//! `additionalProperties` policy.
//!
//! Invariant: the walk reaches every subschema an agent fills (properties, items, combinators,
//! definitions) and never recurses deeper than the host's depth cap.

use serde_json::{Map, Value};

use super::out::{budget, check_text, Out};
use super::words::{self, name_words};
use crate::core::limits::{json_depth, Limits};
use crate::core::naming::kind;

/// Checks the `inputSchema` of an entry (absent: a tool without input, nothing to check).
pub(super) fn check(raw: Option<&Value>, out: &mut Out) {
    const AT: &str = "/inputSchema";
    let parsed;
    let schema = match raw {
        None | Some(Value::Null) => return,
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                out.add(
                    "schema-as-text",
                    Some(AT),
                    "the input schema is JSON text, the form of WebMCP before Chrome 155: give \
                     it as an object (the host parses it; newer browsers and agents may not)"
                        .into(),
                );
                parsed = value;
                &parsed
            }
            Err(e) => {
                out.add(
                    "schema-invalid",
                    Some(AT),
                    format!(
                        "the input schema is a string that is not JSON ({e}): give the schema \
                         as an object"
                    ),
                );
                return;
            }
        },
        Some(other) => other,
    };
    let limits = Limits::DEFAULT;
    let size = serde_json::to_string(schema).map_or(usize::MAX, |s| s.len());
    let depth = json_depth(schema);
    if size > limits.max_schema_bytes || depth > limits.max_schema_depth {
        out.add(
            "schema-too-large",
            Some(AT),
            format!(
                "the input schema is {size} bytes nested {depth} deep, over the host's caps \
                 ({} bytes, {} deep): the host skips this tool; simplify the schema",
                limits.max_schema_bytes, limits.max_schema_depth
            ),
        );
        return;
    }
    let Some(root) = schema.as_object() else {
        out.add(
            "schema-root-not-object",
            Some(AT),
            format!(
                "the input schema is {}, not a schema object: the host skips this tool; write \
                 {{\"type\": \"object\", \"properties\": {{…}}}}",
                kind(schema)
            ),
        );
        return;
    };
    if let Err(e) = jsonschema::meta::validate(schema) {
        let at = format!("{AT}{}", e.instance_path().as_str());
        out.add(
            "schema-invalid",
            Some(&at),
            format!("the input schema is not valid JSON Schema: {e}; fix it so agents and validators can read it"),
        );
    } else if let Err(e) = crate::core::schema::validator_for(schema) {
        // A pattern is read as a browser's RegExp reads it (core::schema::ecma_pattern): one
        // that still fails is not a regular expression there either.
        let advice = if e.contains("is not a \"regex\"") {
            "fix the pattern: it must be a regular expression that a browser's RegExp (without \
             the u flag) accepts, such as ^[A-Za-z0-9._-]+$"
        } else if e.contains("$ref") || e.contains("resolve") {
            "inline what it refers to: agents and browsers get the tool's schema alone"
        } else {
            "fix the keyword it names"
        };
        out.add(
            "schema-invalid",
            Some(AT),
            format!("the input schema does not compile: {e}; {advice}"),
        );
    }
    check_root(root, out);
    walk(schema, AT, 0, out);
    check_subset(schema, out);
}

/// The keywords of the subset that browser-side validation is converging on (the schema
/// keywords of WebMCP's validation proposal, and the annotations every validator ignores).
const SUBSET: &[&str] = &[
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "additionalProperties",
    "description",
    "title",
    "default",
    "examples",
    "$schema",
];

/// One finding for a schema that uses keywords outside [`SUBSET`] (or `additionalProperties`
/// as a schema rather than `false`), naming them and where the first is.
fn check_subset(schema: &Value, out: &mut Out) {
    let mut found: Vec<String> = Vec::new();
    let mut first: Option<String> = None;
    let mut stack = vec![(schema, "/inputSchema".to_owned(), 0)];
    while let Some((node, at, depth)) = stack.pop() {
        let Some(obj) = node.as_object() else {
            continue;
        };
        if depth > Limits::DEFAULT.max_schema_depth {
            continue;
        }
        for (key, value) in obj {
            let outside = match key.as_str() {
                "additionalProperties" => !matches!(value, Value::Bool(false)),
                key => !SUBSET.contains(&key),
            };
            if outside {
                let name = match key.as_str() {
                    "additionalProperties" => "additionalProperties (other than false)".into(),
                    key => key.to_owned(),
                };
                if !found.contains(&name) {
                    found.push(name);
                }
                first.get_or_insert_with(|| format!("{at}/{}", escape(key)));
                continue;
            }
            match (key.as_str(), value) {
                ("properties", Value::Object(props)) => {
                    for (name, sub) in props {
                        stack.push((sub, format!("{at}/properties/{}", escape(name)), depth + 1));
                    }
                }
                ("items", sub @ Value::Object(_)) => {
                    stack.push((sub, format!("{at}/items"), depth + 1));
                }
                _ => {}
            }
        }
    }
    if found.is_empty() {
        return;
    }
    found.sort();
    out.add(
        "schema-outside-subset",
        first.as_deref(),
        format!(
            "the input schema uses {} outside the subset browsers are converging on validating \
             (type, properties, required, enum, bounds, pattern, items, additionalProperties: \
             false, …): a browser that validates may refuse or ignore it; express it in the \
             subset where you can",
            found.join(", ")
        ),
    );
}

fn check_root(root: &Map<String, Value>, out: &mut Out) {
    const AT: &str = "/inputSchema/type";
    let object = match root.get("type") {
        None => {
            out.add(
                "schema-root-type-missing",
                Some("/inputSchema"),
                "the input schema does not say \"type\": \"object\": tool arguments are an \
                 object; say so"
                    .into(),
            );
            true
        }
        Some(Value::String(t)) if t == "object" => true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => true,
        Some(other) => {
            out.add(
                "schema-root-not-object",
                Some(AT),
                format!(
                    "the input schema's type is {other}, not \"object\": tool arguments are \
                     always an object; put the value in a property"
                ),
            );
            false
        }
    };
    let has_properties = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let policy =
        root.contains_key("additionalProperties") || root.contains_key("unevaluatedProperties");
    if object && has_properties && !policy {
        out.add(
            "schema-additional-properties",
            Some("/inputSchema"),
            "the input schema does not say whether other properties are allowed: add \
             \"additionalProperties\": false (or a schema for them)"
                .into(),
        );
    }
}

/// Escapes one JSON pointer segment.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Checks the object schemas in `node` (at `at`) and walks its subschemas.
fn walk(node: &Value, at: &str, depth: usize, out: &mut Out) {
    let Some(obj) = node.as_object() else { return };
    if depth > Limits::DEFAULT.max_schema_depth {
        return;
    }
    let properties = obj.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = obj.get("required") {
        for (i, name) in required.iter().enumerate() {
            let Some(name) = name.as_str() else { continue };
            if !properties.is_some_and(|p| p.contains_key(name)) {
                out.add(
                    "schema-required-absent",
                    Some(&format!("{at}/required/{i}")),
                    format!(
                        "\"required\" names `{name}`, which is not among the properties: an \
                         agent cannot know what to give; declare it or drop it from required"
                    ),
                );
            }
        }
    }
    if let Some(properties) = properties {
        for (name, sub) in properties {
            let here = format!("{at}/properties/{}", escape(name));
            check_property(name, sub, &here, out);
            walk(sub, &here, depth + 1, out);
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        if let Some(sub) = obj.get(key) {
            if let Value::Array(items) = sub {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}/{key}/{i}"), depth + 1, out);
                }
            } else {
                walk(sub, &format!("{at}/{key}"), depth + 1, out);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = obj.get(key) {
            for (i, item) in items.iter().enumerate() {
                walk(item, &format!("{at}/{key}/{i}"), depth + 1, out);
            }
        }
    }
    for key in ["$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(defs)) = obj.get(key) {
            for (name, sub) in defs {
                walk(sub, &format!("{at}/{key}/{}", escape(name)), depth + 1, out);
            }
        }
    }
}

fn check_property(name: &str, sub: &Value, at: &str, out: &mut Out) {
    let Some(schema) = sub.as_object() else {
        return;
    };
    let chars = name.chars().count();
    if chars > budget::NAME_CHARS {
        out.add(
            "property-name-length",
            Some(at),
            format!(
                "the property `{name}` has a {chars}-character name, over the budget of {}: use \
                 the word a person would say",
                budget::NAME_CHARS
            ),
        );
    }
    match schema.get("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            let chars = text.chars().count();
            if chars > budget::PROPERTY_DESCRIPTION_CHARS {
                out.add(
                    "property-description-long",
                    Some(&format!("{at}/description")),
                    format!(
                        "the description of `{name}` is {chars} characters, over the budget of \
                         {}: keep it to what the value is and its form",
                        budget::PROPERTY_DESCRIPTION_CHARS
                    ),
                );
            }
            check_text(text, &format!("{at}/description"), out);
        }
        _ if schema.contains_key("$ref") => {}
        _ => {
            // What to say depends on the property, not on an example from another domain.
            let ask = if schema.contains_key("enum") {
                "say what the choice is and what its values mean"
            } else {
                match schema.get("type").and_then(Value::as_str) {
                    Some("number" | "integer") => "say what the number is and in which unit",
                    Some("boolean") => "say what `true` does",
                    Some("array") => "say what the list holds",
                    Some("object") => "say what the object describes",
                    _ => "say what value it takes and in which form",
                }
            };
            out.add(
                "property-description-missing",
                Some(at),
                format!("the property `{name}` has no description: {ask}"),
            );
        }
    }
    check_sensitive(name, schema, at, out);
}

/// A string property whose name says URL, path, command, SQL, HTML or email, with no
/// `format`, `pattern`, `enum` or `const`.
fn check_sensitive(name: &str, schema: &Map<String, Value>, at: &str, out: &mut Out) {
    let is_string = match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        Some(_) => false,
    };
    let constrained = ["format", "pattern", "enum", "const"]
        .iter()
        .any(|k| schema.contains_key(*k));
    if !is_string || constrained {
        return;
    }
    let mut words = name_words(name);
    words.push(name.to_lowercase());
    let hit = words::SENSITIVE_PROPERTIES
        .iter()
        .find(|(names, _)| words.iter().any(|w| names.contains(&w.as_str())));
    if let Some((_, advice)) = hit {
        out.add(
            "property-unconstrained",
            Some(at),
            format!("the property `{name}` takes any string, yet its name says it is {advice}"),
        );
    }
}
