//! Repair: a call as a model wrote it, made into a call that can run, or a clear error.
//!
//! Steps, in order; the first after which the call is valid wins, and every change is
//! recorded as a [`Fix`]:
//!
//! 1. **json** ([`json`]): the body and the arguments made into JSON; arguments given as a
//!    JSON string (even twice encoded) decoded.
//! 2. **name** ([`name`]): the tool the name means.
//! 3. **coerce** ([`coerce`]): the arguments bent toward the tool's schema; keys the schema
//!    does not list dropped unless it admits them explicitly; defaults filled in for missing
//!    keys, except a default that would make the call invalid (the tool applies its own).
//!
//! Validation is full JSON Schema ([`ToolSet::validate`]). What is still invalid after the
//! three steps is returned as [`Unrepaired`]: the run may ask the model again (reask) or a
//! hook, and otherwise gives the error to the model as the tool's result.

#![warn(missing_docs)]

pub mod coerce;
pub mod json;
pub mod name;

use serde::Serialize;
use serde_json::{Map, Value};

use super::parse::{ARGUMENT_KEYS, NAME_KEYS};
use super::toolset::ToolSet;
use crate::core::naming::kind;

/// The repair steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// The body and the arguments made into JSON ([`json`]).
    Json,
    /// The name resolved to a tool ([`name`]).
    Name,
    /// The arguments bent toward the tool's schema ([`coerce`]).
    Coerce,
    /// The model was asked again and wrote a valid call.
    Reask,
    /// The repair hook gave a valid call.
    Hook,
}

/// One change repair made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// The step that made the change.
    pub step: Step,
    /// What changed, in words (``name `serch` → `search` (typo)``).
    pub detail: String,
}

/// A call ready to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repaired {
    /// The tool to call.
    pub name: String,
    /// The arguments, valid against the tool's schema.
    pub arguments: Map<String, Value>,
    /// Every change made, in order.
    pub fixes: Vec<Fix>,
}

/// A call that repair could not make valid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unrepaired {
    /// The resolved tool name, when the name step succeeded (reask needs it).
    pub name: Option<String>,
    /// Why the call is still invalid, as the model is told.
    pub error: String,
    /// The changes made before repair gave up.
    pub fixes: Vec<Fix>,
}

/// A call's name and arguments as they were found in its body, before the name step.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    /// The name as written.
    pub name: String,
    /// The arguments as found (any JSON value; an object once repaired).
    pub arguments: Value,
}

fn push(fixes: &mut Vec<Fix>, step: Step, details: Vec<String>) {
    fixes.extend(details.into_iter().map(|detail| Fix { step, detail }));
}

/// Repairs the body of a text call (everything between its markers, or a whole raw call with
/// its markers, as the `repair` command takes it).
pub fn repair_body(body: &str, tools: &ToolSet) -> Result<Repaired, Unrepaired> {
    let mut fixes = Vec::new();
    let raw = match read_body(body, &mut fixes) {
        Ok(raw) => raw,
        Err(error) => {
            return Err(Unrepaired {
                name: None,
                error,
                fixes,
            })
        }
    };
    repair_parts(&raw.name, raw.arguments, tools, fixes)
}

/// Repairs a native call: a name and its arguments as JSON text.
pub fn repair_native(name: &str, arguments: &str, tools: &ToolSet) -> Result<Repaired, Unrepaired> {
    let mut fixes = Vec::new();
    let mut details = Vec::new();
    let arguments = if arguments.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        match json::repair_json(arguments, &mut details) {
            Ok(value) => value,
            Err(error) => {
                push(&mut fixes, Step::Json, details);
                return Err(Unrepaired {
                    name: None,
                    error: format!("the arguments are not JSON: {error}"),
                    fixes,
                });
            }
        }
    };
    push(&mut fixes, Step::Json, details);
    repair_parts(name, arguments, tools, fixes)
}

fn repair_parts(
    name: &str,
    arguments: Value,
    tools: &ToolSet,
    mut fixes: Vec<Fix>,
) -> Result<Repaired, Unrepaired> {
    // json: the arguments must be an object.
    let mut details = Vec::new();
    let arguments = match arguments_object(arguments, &mut details) {
        Ok(arguments) => arguments,
        Err(error) => {
            push(&mut fixes, Step::Json, details);
            return Err(Unrepaired {
                name: None,
                error,
                fixes,
            });
        }
    };
    push(&mut fixes, Step::Json, details);

    // name
    let name = match name::resolve_name(name, tools) {
        Ok((name, fix)) => {
            push(&mut fixes, Step::Name, fix.into_iter().collect());
            name
        }
        Err(error) => {
            return Err(Unrepaired {
                name: None,
                error,
                fixes,
            })
        }
    };
    let mut arguments = Value::Object(arguments);
    if tools.validate(&name, &arguments).is_ok() {
        return Ok(done(name, arguments, fixes));
    }

    let schema = tools
        .get(&name)
        .map(|t| t.input_schema.clone())
        .unwrap_or(Value::Null);
    // json, with the schema's help: arguments wrapped twice (`{"arguments": {…}}` inside the
    // arguments), when the schema has no such key.
    if let Some(inner) = double_wrapped(&arguments, &schema) {
        fixes.push(Fix {
            step: Step::Json,
            detail: "unwrapped arguments given inside another `arguments`".into(),
        });
        arguments = inner;
        if tools.validate(&name, &arguments).is_ok() {
            return Ok(done(name, arguments, fixes));
        }
    }

    // coerce; then the defaults it filled in, but none that makes the call invalid.
    let mut details = Vec::new();
    let mut filled = Vec::new();
    coerce::coerce(&mut arguments, &schema, "", &mut details, &mut filled);
    let mut valid = false;
    if !filled.is_empty() {
        let places = tools.invalid_places(&name, &arguments);
        valid = places.is_empty();
        for default in filled {
            let pointer = default.pointer();
            let invalid = places
                .iter()
                .any(|p| p == &pointer || p.starts_with(&format!("{pointer}/")));
            if invalid {
                coerce::unfill(&mut arguments, &default);
            } else {
                details.push(default.detail);
            }
        }
    }
    push(&mut fixes, Step::Coerce, details);
    if valid {
        return Ok(done(name, arguments, fixes));
    }
    match tools.validate(&name, &arguments) {
        Ok(()) => Ok(done(name, arguments, fixes)),
        Err(error) => Err(Unrepaired {
            error: format!("the arguments of `{name}` do not match its schema: {error}"),
            name: Some(name),
            fixes,
        }),
    }
}

fn double_wrapped(arguments: &Value, schema: &Value) -> Option<Value> {
    let map = arguments.as_object()?;
    let (key, inner) = map.iter().next().filter(|_| map.len() == 1)?;
    let declared = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(key));
    (ARGUMENT_KEYS.contains(&key.as_str()) && inner.is_object() && !declared).then(|| inner.clone())
}

fn done(name: String, arguments: Value, fixes: Vec<Fix>) -> Repaired {
    let Value::Object(arguments) = arguments else {
        unreachable!("validated as an object")
    };
    Repaired {
        name,
        arguments,
        fixes,
    }
}

/// Arguments as an object: a JSON string holding one (even twice encoded) is decoded, `null`
/// is `{}`.
fn arguments_object(
    mut value: Value,
    details: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    for _ in 0..3 {
        match value {
            Value::Object(map) => return Ok(map),
            Value::Null => {
                details.push("arguments were null; used {}".into());
                return Ok(Map::new());
            }
            Value::String(text) if text.trim().is_empty() => {
                details.push("arguments were an empty string; used {}".into());
                return Ok(Map::new());
            }
            Value::String(text) => {
                let mut inner = Vec::new();
                value = json::repair_json(&text, &mut inner)
                    .map_err(|e| format!("the arguments are a string that is not JSON: {e}"))?;
                details.push("decoded arguments given as a JSON string".into());
                details.extend(inner);
            }
            other => return Err(format!("the arguments are {}, not an object", kind(&other))),
        }
    }
    Err("the arguments are a string encoded too many times".into())
}

/// Finds the name and arguments in a call body: `{"name", "arguments"}` and the variants
/// models write (`parameters`, `args`, `input`; `{"function": {...}}`; a one-element array),
/// with the body's own markers or a fence around it.
pub fn read_body(body: &str, fixes: &mut Vec<Fix>) -> Result<RawCall, String> {
    let mut details = Vec::new();
    let text = without_thinking(strip_markers(body), &mut details);
    let text = text.trim();
    // gpt-oss (harmony): `… to=functions.x <|constrain|>json<|message|>{…}<|call|>`.
    if let (Some(to), Some(message)) = (text.find("to="), text.find("<|message|>")) {
        let name = text[to + 3..]
            .split(|c: char| c.is_whitespace() || c == '<')
            .next()
            .unwrap_or("");
        let json_text = &text[message + "<|message|>".len()..];
        let json_text = json_text.split("<|call|>").next().unwrap_or(json_text);
        let arguments = json::repair_json(json_text, &mut details);
        details.push("read a harmony message (recipient and arguments)".into());
        push(fixes, Step::Json, details);
        let arguments = arguments.map_err(|e| format!("the call is not JSON: {e}"))?;
        return Ok(RawCall {
            name: name.to_owned(),
            arguments,
        });
    }
    // Mistral: `[TOOL_CALLS]` before the JSON, or `[TOOL_CALLS]name[ARGS]{…}`.
    let text = match text.strip_prefix("[TOOL_CALLS]") {
        Some(rest) => {
            details.push("removed the [TOOL_CALLS] token".into());
            rest.trim()
        }
        None => text,
    };
    if let Some((name, rest)) = text.split_once("[ARGS]") {
        let name = name.trim();
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            let arguments = json::repair_json(rest, &mut details);
            details.push("read a `name[ARGS]{…}` call".into());
            push(fixes, Step::Json, details);
            let arguments = arguments.map_err(|e| format!("the call is not JSON: {e}"))?;
            return Ok(RawCall {
                name: name.to_owned(),
                arguments,
            });
        }
    }
    let value = json::repair_json(text, &mut details);
    push(fixes, Step::Json, details);
    let value = value.map_err(|e| format!("the call is not JSON: {e}"))?;
    call_parts(value)
}

/// The text without `<think>…</think>` blocks (reasoning that may hold braces).
fn without_thinking<'a>(text: &'a str, details: &mut Vec<String>) -> std::borrow::Cow<'a, str> {
    if !text.contains("<think>") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    details.push("removed a <think> block".into());
    std::borrow::Cow::Owned(out)
}

fn call_parts(value: Value) -> Result<RawCall, String> {
    let mut map = match value {
        Value::Object(map) => map,
        Value::Array(mut items) if items.len() == 1 => {
            return call_parts(items.remove(0));
        }
        Value::Array(items) => {
            return Err(format!(
                "the call is a list of {} calls; write one call per block",
                items.len()
            ));
        }
        other => return Err(format!("the call is {}, not an object", kind(&other))),
    };
    // `{"type": "function", "function": {"name": …, "arguments": …}}` and `{"function": {…}}`.
    if let Some(Value::Object(inner)) = map.get("function") {
        if inner.contains_key("name") {
            let inner = inner.clone();
            return call_parts(Value::Object(inner));
        }
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|key| match map.get(*key) {
            Some(Value::String(name)) => Some(name.clone()),
            _ => None,
        })
        .or_else(|| match map.get("function") {
            Some(Value::String(name)) => Some(name.clone()),
            _ => None,
        })
        .ok_or("the call has no name (expected {\"name\": …, \"arguments\": {…}})")?;
    let arguments = ARGUMENT_KEYS
        .iter()
        .find_map(|key| map.shift_remove(*key))
        .unwrap_or_else(|| Value::Object(Map::new()));
    // OpenAI's `multi_tool_use.parallel` wrapper around calls: one call is that call.
    if name.ends_with("multi_tool_use.parallel") {
        return match arguments
            .get("tool_uses")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([one]) => call_parts(one.clone()),
            Some(many) => Err(format!(
                "the call wraps {} calls (multi_tool_use.parallel); write one call per block",
                many.len()
            )),
            None => Err("multi_tool_use.parallel without `tool_uses`".into()),
        };
    }
    Ok(RawCall { name, arguments })
}

/// The body without the call markers of the text formats around it.
fn strip_markers(body: &str) -> &str {
    let mut text = body.trim();
    if let Some(rest) = text.strip_prefix("<tool_call>") {
        text = rest.trim_start();
        text = text.strip_suffix("</tool_call>").unwrap_or(text).trim_end();
    } else if let Some(rest) = text.strip_prefix("```tool_call") {
        text = rest.trim_start();
        text = text.strip_suffix("```").unwrap_or(text).trim_end();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::toolset::ToolSpec;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::new([
            ToolSpec {
                name: "get_weather".into(),
                description: String::new(),
                input_schema: json!({"type": "object", "properties": {
                    "city": {"type": "string"}, "days": {"type": "integer", "default": 1}
                }, "required": ["city"]}),
            },
            ToolSpec {
                name: "ping".into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
            },
        ])
        .0
    }

    fn steps(fixes: &[Fix]) -> Vec<Step> {
        fixes.iter().map(|f| f.step).collect()
    }

    #[test]
    fn a_valid_call_is_untouched() {
        let repaired = repair_body(
            r#"{"name": "get_weather", "arguments": {"city": "Oslo"}}"#,
            &tools(),
        )
        .unwrap();
        assert_eq!(
            repaired.arguments,
            json!({"city": "Oslo"}).as_object().unwrap().clone()
        );
        assert!(repaired.fixes.is_empty());
    }

    #[test]
    fn variants_of_the_call_shape_are_not_fixes() {
        for body in [
            r#"{"name": "get_weather", "parameters": {"city": "Oslo"}}"#,
            r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>"#,
            r#"{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}"#,
            r#"[{"name": "get_weather", "args": {"city": "Oslo"}}]"#,
        ] {
            let repaired = repair_body(body, &tools()).unwrap();
            assert_eq!(repaired.name, "get_weather", "{body}");
            assert!(repaired.fixes.is_empty(), "{body}: {:?}", repaired.fixes);
        }
    }

    #[test]
    fn every_step_is_recorded() {
        let repaired = repair_body(
            r#"{"name": "functions.getWeather", "arguments": "{\"city\": \"Oslo\", \"days\": \"3\",}"}"#,
            &tools(),
        )
        .unwrap();
        assert_eq!(repaired.name, "get_weather");
        assert_eq!(
            repaired.arguments,
            json!({"city": "Oslo", "days": 3})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(
            steps(&repaired.fixes),
            [Step::Json, Step::Json, Step::Name, Step::Coerce]
        );
    }

    #[test]
    fn defaults_are_filled_only_when_the_call_is_invalid() {
        let repaired = repair_body(
            r#"{"name": "get_weather", "arguments": {"city": 7}}"#,
            &tools(),
        )
        .unwrap();
        assert_eq!(
            repaired.arguments,
            json!({"city": "7", "days": 1}).as_object().unwrap().clone()
        );
    }

    #[test]
    fn a_default_that_breaks_its_own_property_is_left_out() {
        let (tools, _) = ToolSet::new([ToolSpec {
            name: "lookup".into(),
            description: String::new(),
            input_schema: json!({"type": "object", "properties": {
                "year": {"type": "integer", "default": "dontcare"},
                "after": {"type": "string", "default": null},
                "models": {"type": "array", "items": {"type": "string"}, "enum": ["MT10"], "default": []},
                "page": {"type": "integer", "default": 10},
                "n": {"type": "integer"}
            }}),
        }]);
        let repaired =
            repair_body(r#"{"name": "lookup", "arguments": {"n": "50"}}"#, &tools).unwrap();
        assert_eq!(
            repaired.arguments,
            json!({"n": 50, "page": 10}).as_object().unwrap().clone()
        );
        let details: Vec<&str> = repaired.fixes.iter().map(|f| f.detail.as_str()).collect();
        assert_eq!(
            details,
            [
                "/n: \"50\" → 50",
                "arguments: filled `page` with its default 10"
            ]
        );
    }

    #[test]
    fn unrepairable_calls_say_why() {
        let error = repair_body(
            r#"{"name": "get_weather", "arguments": {"days": 2}}"#,
            &tools(),
        )
        .unwrap_err();
        assert_eq!(error.name.as_deref(), Some("get_weather"));
        assert!(
            error.error.contains("\"city\" is a required property"),
            "{}",
            error.error
        );
        let error = repair_body(r#"{"name": "launch", "arguments": {}}"#, &tools()).unwrap_err();
        assert_eq!(
            error.error,
            "unknown tool `launch`; the tools are: get_weather, ping"
        );
        assert!(repair_body(r#"{"arguments": {}}"#, &tools())
            .unwrap_err()
            .error
            .contains("no name"));
        assert!(
            repair_body(r#"{"name": "ping", "arguments": [1]}"#, &tools())
                .unwrap_err()
                .error
                .contains("an array")
        );
    }

    #[test]
    fn native_calls() {
        let repaired = repair_native("ping", "", &tools()).unwrap();
        assert!(repaired.arguments.is_empty() && repaired.fixes.is_empty());
        let repaired = repair_native("get_weather", "{\"city\": 'Oslo'", &tools()).unwrap();
        assert_eq!(repaired.fixes.len(), 1);
    }
}
