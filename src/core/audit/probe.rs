//! Probes: the audit's opt-in calls of a page's tools (`audit({tabId, probe: true})`). Each
//! tool gets a call with a schema-valid example and one with a schema-invalid one; what came
//! back is judged: a tool that throws on valid input, hangs, navigates, answers too much or
//! nothing, or takes arguments its own schema refuses.
//!
//! Only read-only tools are called unless the person allows more (`allowActing`); the calls go
//! through the host's own page call, so a consequential tool is confirmed in the page like any
//! call. Pure: the plan and the judgement; the worker performs the calls.
//!
//! Invariant: an example is offered as valid only if the tool's schema accepts it, and as
//! invalid only if the schema refuses it (both checked with `jsonschema`).

use serde_json::{json, Map, Value};

use super::table::find;
use super::{Finding, Severity};
use crate::core::page::call::{CallAnswer, Ended};
use crate::core::page::tabs::TabTools;

/// How long a probe call may take (ms).
pub const PROBE_MS: u32 = crate::core::limits::PROBE_MS;
/// A result over this many bytes is `probe-oversized`.
pub const OVERSIZED_BYTES: usize = crate::core::limits::PROBE_OVERSIZED_BYTES;

use Severity::Error;

pub use super::table::PROBE_RULES;

/// Which of a tool's two probes a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// With arguments the schema accepts.
    Valid,
    /// With arguments the schema refuses.
    Invalid,
}

/// One probe call to perform.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeCall {
    /// The tool's name.
    pub tool: String,
    /// The frame that offers it.
    pub frame_id: i64,
    /// Whether the tool says it only reads.
    pub read_only: bool,
    /// Which probe.
    pub kind: ProbeKind,
    /// The arguments.
    pub args: Map<String, Value>,
    /// For an invalid probe: what is wrong with the arguments.
    pub why: Option<String>,
}

/// The probes of a tab's tools: the calls, and the findings of the tools left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProbePlan {
    /// The calls, valid then invalid, tool by tool.
    pub calls: Vec<ProbeCall>,
    /// `probe-skipped` and `probe-no-example` findings.
    pub findings: Vec<Finding>,
}

fn finding(rule: &'static str, tool: &str, message: String) -> Finding {
    let severity = find(rule).map_or(Error, |r| r.severity);
    Finding {
        rule,
        severity,
        tool: tool.to_owned(),
        pointer: None,
        message,
    }
}

/// The probes of `tab`'s tools; tools that are not read-only only when `allow_acting`.
pub fn plan(tab: &TabTools, allow_acting: bool) -> ProbePlan {
    let mut out = ProbePlan::default();
    for tool in &tab.tools {
        let read_only = tool.annotations.read_only_hint;
        if !read_only && !allow_acting {
            out.findings.push(finding("probe-skipped", &tool.name, "not probed: the tool is not read-only (allow calls of tools that act to probe it; each is confirmed like any call)".into()));
            continue;
        }
        let call = |kind, args: Map<String, Value>, why| ProbeCall {
            tool: tool.name.clone(),
            frame_id: tool.frame_id,
            read_only,
            kind,
            args,
            why,
        };
        match example(&tool.input_schema) {
            Some(Value::Object(args)) => out.calls.push(call(ProbeKind::Valid, args, None)),
            _ => out.findings.push(finding("probe-no-example", &tool.name, "no valid call could be built from the input schema (a pattern or a combination the host cannot satisfy): give `examples` or simpler constraints".into())),
        }
        if let Some((args, why)) = counterexample(&tool.input_schema) {
            out.calls.push(call(ProbeKind::Invalid, args, Some(why)));
        }
    }
    out
}

/// The plan for the tools named in `only` (a person's leave to probe them): [`plan`] with
/// their calls and findings alone; a name the tab does not offer is an error that names what
/// it offers.
pub fn plan_only(tab: &TabTools, allow_acting: bool, only: &[String]) -> Result<ProbePlan, String> {
    if let Some(missing) = only
        .iter()
        .find(|n| !tab.tools.iter().any(|t| &t.name == *n))
    {
        return Err(format!(
            "audit: this tab offers no tool named `{missing}`; it offers {}",
            crate::core::page::tabs::offered(tab.tools.iter().map(|t| t.name.as_str()), 20)
        ));
    }
    let mut out = plan(tab, allow_acting);
    out.calls.retain(|c| only.contains(&c.tool));
    out.findings.retain(|f| only.contains(&f.tool));
    Ok(out)
}

fn accepts(schema: &Value, value: &Value) -> Option<bool> {
    crate::core::schema::validator_for(schema)
        .ok()
        .map(|v| v.is_valid(value))
}

/// Arguments the schema accepts, built from its types, formats, bounds, enums and examples;
/// `None` when none could be built.
pub fn example(schema: &Value) -> Option<Value> {
    let candidate = example_of(schema, 0)?;
    accepts(schema, &candidate)?.then_some(candidate)
}

fn example_of(schema: &Value, depth: usize) -> Option<Value> {
    if depth > 8 {
        return None;
    }
    let Some(map) = schema.as_object() else {
        return Some(json!("example"));
    };
    if let Some(value) = map.get("const") {
        return Some(value.clone());
    }
    for key in ["enum", "examples"] {
        if let Some(first) = map
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return Some(first.clone());
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = map
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return example_of(first, depth + 1);
        }
    }
    let ty = match map.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if map.contains_key("properties") => "object",
        _ => "string",
    };
    let number = |integer: bool| {
        let bound = |key: &str| map.get(key).and_then(Value::as_f64);
        let mut n = bound("minimum")
            .or_else(|| bound("exclusiveMinimum").map(|m| m + 1.0))
            .unwrap_or(1.0);
        if let Some(max) = bound("maximum").or_else(|| bound("exclusiveMaximum").map(|m| m - 1.0)) {
            n = n.min(max);
        }
        if integer {
            json!(n.ceil() as i64)
        } else {
            json!(n)
        }
    };
    Some(match ty {
        "object" => {
            let properties = map.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for name in (map.get("required").and_then(Value::as_array))
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                out.insert(name.to_owned(), example_of(property, depth + 1)?);
            }
            Value::Object(out)
        }
        "array" => {
            let n = map
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(16);
            let items = map.get("items").unwrap_or(&Value::Null);
            let item = if n > 0 {
                Some(example_of(items, depth + 1)?)
            } else {
                None
            };
            json!(item.map_or_else(Vec::new, |i| vec![i; n as usize]))
        }
        "integer" => number(true),
        "number" => number(false),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => {
            let text = match map.get("format").and_then(Value::as_str) {
                Some("date") => "2026-01-15".to_owned(),
                Some("date-time") => "2026-01-15T10:00:00Z".to_owned(),
                Some("time") => "10:00:00Z".to_owned(),
                Some("email") => "qa@example.com".to_owned(),
                Some("uri" | "url" | "iri") => "https://example.com/".to_owned(),
                Some("uuid") => "00000000-0000-4000-8000-000000000000".to_owned(),
                _ => "example".to_owned(),
            };
            let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = map
                .get("maxLength")
                .and_then(Value::as_u64)
                .map(|m| m as usize);
            let mut text = if text.chars().count() < min {
                "x".repeat(min)
            } else {
                text
            };
            if let Some(max) = max {
                text = text.chars().take(max).collect();
            }
            json!(text)
        }
    })
}

/// Arguments the schema refuses, and what is wrong with them: a required property left out,
/// a property of the wrong type, or a property the schema does not allow; `None` when the
/// schema accepts every object.
pub fn counterexample(schema: &Value) -> Option<(Map<String, Value>, String)> {
    let Some(Value::Object(valid)) = example(schema) else {
        return None;
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut candidates = Vec::new();
    if let Some(name) = valid.keys().next() {
        let mut args = valid.clone();
        args.remove(name);
        candidates.push((args, format!("the required property `{name}` left out")));
    }
    for (name, property) in properties.into_iter().flatten() {
        let wrong = match property.get("type").and_then(Value::as_str) {
            Some("string") => json!(12345),
            Some("object" | "array") => json!("not-a-structure"),
            Some(_) => json!("not-a-number"),
            None => continue,
        };
        let mut args = valid.clone();
        args.insert(name.clone(), wrong);
        candidates.push((args, format!("`{name}` of the wrong type")));
        break;
    }
    let mut args = valid.clone();
    args.insert("unexpected_probe_key".into(), json!(true));
    candidates.push((args, "a property the schema does not list".to_owned()));
    candidates
        .into_iter()
        .find(|(args, _)| accepts(schema, &Value::Object(args.clone())) == Some(false))
}

/// The calls left after a probe of `by` navigated the page: their tools are reported as not
/// probed (the page they were listed on is gone).
pub fn left_out(calls: impl Iterator<Item = ProbeCall>, by: &str) -> Vec<Finding> {
    let mut tools: Vec<String> = calls.map(|c| c.tool).filter(|t| t != by).collect();
    tools.dedup();
    tools
        .into_iter()
        .map(|tool| {
            finding(
                "probe-skipped",
                &tool,
                format!("not probed: a probe of `{by}` navigated the page away"),
            )
        })
        .collect()
}

/// What a probe's answer says about its tool, with the requests its page sent meanwhile
/// (`(method, url)`, when they were watched).
pub fn judge(call: &ProbeCall, answer: &CallAnswer, requests: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    let tool = call.tool.as_str();
    if call.read_only {
        if let Some((method, url)) = requests.iter().find(|(m, _)| m != "GET" && m != "HEAD") {
            let url: String = url.chars().take(200).collect();
            out.push(finding("probe-lying-hint", tool, format!("the tool claims readOnlyHint, yet a call sent {method} {url}: drop readOnlyHint (and add consequentialHint if it changes anything), or stop writing")));
        }
    }
    let ok = answer.ok();
    let error = answer.error().unwrap_or_default();
    let short = |text: &str| text.chars().take(200).collect::<String>();
    if !ok && error.contains("did not finish within") {
        out.push(finding("probe-hangs", tool, format!("a call did not answer within {} s: {}; answer or fail promptly, and honour the abort signal", PROBE_MS / 1000, short(error))));
        return out;
    }
    if let Some(to) = answer.navigated() {
        let mut f = finding("probe-navigates", tool, format!("a call navigated the page (to {}): a tool that leaves the page loses the agent's context; return a result and let the page change in place", to.url.as_deref().unwrap_or("another page")));
        if call.read_only {
            f.severity = Error;
            f.message.push_str(" (and it claims readOnlyHint)");
        }
        out.push(f);
        return out;
    }
    match (call.kind, ok) {
        (ProbeKind::Valid, false) if !error.starts_with("NotAllowedError") => out.push(finding("probe-throws", tool, format!("a call with valid arguments {} failed: {}; a tool should answer valid input with a result", Value::Object(call.args.clone()), short(error)))),
        (ProbeKind::Invalid, true) => out.push(finding("probe-accepts-invalid", tool, format!("a call with {} was answered as if valid; check arguments against the schema and answer an error naming the field", call.why.as_deref().unwrap_or("invalid arguments")))),
        (ProbeKind::Valid, true) => {
            if matches!(answer.ended, Ended::Result { text_input: true, .. }) {
                out.push(finding("probe-text-input", tool, "the page's executeTool refused the arguments as an object and took them only as JSON text, as WebMCP did before Chrome 155: native WebMCP passes an object, so update the polyfill or the code that reads the input".into()));
            }
            let result = answer.result().unwrap_or_default();
            if result.len() > OVERSIZED_BYTES {
                out.push(finding("probe-oversized", tool, format!("a result of {} bytes: agents handle large results poorly; page or summarise it (at most {OVERSIZED_BYTES} bytes)", result.len())));
            } else if matches!(result.trim(), "" | "null" | "{}" | "[]" | "\"\"") {
                out.push(finding("probe-empty", tool, format!("a call with valid arguments answered `{}`: say what was found, or that nothing was", result.trim())));
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests;
