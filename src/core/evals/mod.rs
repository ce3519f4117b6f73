//! Eval files in the `webmcp-evals` format (GoogleChromeLabs/webmcp-tools), read and written,
//! and the judgement of a case: the calls an agent made against the calls the case expects.
//!
//! A file is `[{name?, messages, expectedCall}]`: `messages` are `{role, type: "message",
//! content}`, `{role: "model", type: "functioncall", name, arguments}` or `{role: "user", type:
//! "functionresponse", name, response}`; `expectedCall` is `null` (the agent must call no tool)
//! or a list of nodes, each a call `{functionName, arguments?, result?, optional?}` or a group
//! `{ordered: [...]}` / `{unordered: [...]}`. Arguments and results are matched by
//! [`matcher::matches`] (subset objects, strict arrays, `$` constraints).
//!
//! Invariants: pure; a file that does not parse is an error naming the case and the field;
//! matching never panics (a bad `$pattern` is an error of the case).

#![warn(missing_docs)]

pub mod began;
pub mod ci;
pub mod html;
pub mod matcher;
pub mod messages;
pub mod plan;
pub mod record;
pub mod report;
pub mod request;
pub mod said;
pub mod simulate;
pub mod wait;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most nodes an `unordered` group may hold (its orders are searched).
pub const MAX_UNORDERED: usize = crate::core::limits::MAX_UNORDERED;

/// One message of a case's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum EvalMessage {
    /// Text from the person (`user`) or the model (`model`).
    Message {
        /// `user` or `model`.
        role: String,
        /// The text.
        content: String,
    },
    /// A call the model made earlier in the conversation.
    #[serde(rename = "functioncall")]
    FunctionCall {
        /// `model`.
        role: String,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A tool's answer earlier in the conversation.
    #[serde(rename = "functionresponse")]
    FunctionResponse {
        /// `user`.
        role: String,
        /// The tool.
        name: String,
        /// Its answer.
        response: Value,
    },
}

/// An expected call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedCall {
    /// The tool's name.
    pub function_name: String,
    /// The arguments (a matcher); absent or `null`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The tool's result (a matcher); absent: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Whether the call may be left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// What a model-only run answers for it (`mockOutput`), kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock_output: Option<Value>,
}

/// A node of `expectedCall`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expected {
    /// These nodes, in this order.
    Ordered {
        /// The nodes.
        ordered: Vec<Expected>,
    },
    /// These nodes, in any order.
    Unordered {
        /// The nodes.
        unordered: Vec<Expected>,
    },
    /// One call.
    Call(Box<ExpectedCall>),
}

/// One case of an eval file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalCase {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The conversation the agent is given.
    pub messages: Vec<EvalMessage>,
    /// The calls expected in order (`None`: no call at all).
    pub expected_call: Option<Vec<Expected>>,
}

/// A call the agent made: its tool, arguments and (when it ran) result.
#[derive(Debug, Clone, PartialEq)]
pub struct ActualCall {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub args: Value,
    /// Its result, when it ran (text results that are JSON are given parsed).
    pub result: Option<Value>,
}

/// Reads an eval file's text: every case, or an error naming the case and what is wrong.
pub fn parse_evals(text: &str) -> Result<Vec<EvalCase>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("evals: not JSON: {e}"))?;
    let Value::Array(items) = value else {
        return Err("evals: the file must be an array of cases".into());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let name = item.get("name").and_then(Value::as_str).map(str::to_owned);
            if item.get("expectedCall").is_none() {
                return Err(format!(
                    "evals: case {i}: `expectedCall` is required (null: no call)"
                ));
            }
            let case: EvalCase = serde_json::from_value(item).map_err(|e| {
                format!(
                    "evals: case {i}{}: {e}",
                    name.map(|n| format!(" ({n})")).unwrap_or_default()
                )
            })?;
            check_groups(case.expected_call.as_deref().unwrap_or_default())
                .map_err(|e| format!("evals: case {i}: {e}"))?;
            Ok(case)
        })
        .collect()
}

fn check_groups(nodes: &[Expected]) -> Result<(), String> {
    for node in nodes {
        match node {
            Expected::Ordered { ordered } => check_groups(ordered)?,
            Expected::Unordered { unordered } if unordered.len() > MAX_UNORDERED => {
                return Err(format!(
                    "an unordered group of {} nodes (at most {MAX_UNORDERED})",
                    unordered.len()
                ))
            }
            Expected::Unordered { unordered } => check_groups(unordered)?,
            Expected::Call(_) => {}
        }
    }
    Ok(())
}

/// An eval file's text for `cases` (what [`parse_evals`] reads back).
pub fn write_evals(cases: &[EvalCase]) -> String {
    serde_json::to_string_pretty(cases).expect("cases serialize")
}

/// Whether one actual call is the expected one: same tool, arguments matching (when given),
/// result matching (when given).
pub fn call_matches(expected: &ExpectedCall, actual: &ActualCall) -> Result<bool, String> {
    if expected.function_name != actual.name {
        return Ok(false);
    }
    if let Some(arguments) = expected.arguments.as_ref().filter(|a| !a.is_null()) {
        if !matcher::matches(arguments, &actual.args)? {
            return Ok(false);
        }
    }
    if let Some(result) = &expected.result {
        let Some(got) = &actual.result else {
            return Ok(false);
        };
        if !matcher::matches(result, got)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the calls made are exactly the expected tree: its top level and `ordered` groups
/// in order, `unordered` groups in any order, `optional` calls present or not, and no other
/// call. `None` expects no call at all.
pub fn trajectory_matches(
    expected: Option<&[Expected]>,
    calls: &[ActualCall],
) -> Result<bool, String> {
    let Some(nodes) = expected else {
        return Ok(calls.is_empty());
    };
    Ok(ends(nodes, true, calls, 0)?.contains(&calls.len()))
}

/// Every position the calls can reach from `start` by matching all of `nodes`.
fn ends(
    nodes: &[Expected],
    ordered: bool,
    calls: &[ActualCall],
    start: usize,
) -> Result<Vec<usize>, String> {
    if ordered {
        let mut at = vec![start];
        for node in nodes {
            let mut next = Vec::new();
            for p in at {
                for e in node_ends(node, calls, p)? {
                    if !next.contains(&e) {
                        next.push(e);
                    }
                }
            }
            at = next;
            if at.is_empty() {
                break;
            }
        }
        return Ok(at);
    }
    // Any order: every (nodes used, position) state reachable, by set of nodes used.
    if nodes.len() > MAX_UNORDERED {
        return Err(format!(
            "an unordered group of {} nodes (at most {MAX_UNORDERED})",
            nodes.len()
        ));
    }
    let full = (1u32 << nodes.len()) - 1;
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![(0u32, start)];
    let mut out = Vec::new();
    while let Some((used, p)) = todo.pop() {
        if !seen.insert((used, p)) {
            continue;
        }
        if used == full {
            if !out.contains(&p) {
                out.push(p);
            }
            continue;
        }
        for (i, node) in nodes.iter().enumerate() {
            if used & (1 << i) == 0 {
                for e in node_ends(node, calls, p)? {
                    todo.push((used | (1 << i), e));
                }
            }
        }
    }
    Ok(out)
}

fn node_ends(node: &Expected, calls: &[ActualCall], p: usize) -> Result<Vec<usize>, String> {
    match node {
        Expected::Ordered { ordered } => ends(ordered, true, calls, p),
        Expected::Unordered { unordered } => ends(unordered, false, calls, p),
        Expected::Call(call) => {
            let mut out = Vec::new();
            if let Some(actual) = calls.get(p) {
                if call_matches(call, actual)? {
                    out.push(p + 1);
                }
            }
            if call.optional {
                out.push(p);
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests;
