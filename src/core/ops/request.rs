//! The requests of the host's operations, parsed from JSON with clear errors: `listTools`,
//! `callTool`, `run` (and `startRun`'s visitor tools).
//!
//! Invariant: a parsed request is within its caps (ids ≥ 0, a call's timeout within
//! 1..=[`MAX_CALL_TIMEOUT_MS`], a run's `maxSteps` within 1..=[`MAX_MAX_STEPS`]).

use serde_json::{json, Map, Value};

use super::OpName;
use crate::core::naming::kind;

pub use crate::core::limits::{DEFAULT_CALL_TIMEOUT_MS, MAX_CALL_TIMEOUT_MS};

pub use crate::core::error::RequestError;

fn bad(message: impl Into<String>) -> RequestError {
    RequestError(message.into())
}

/// `listTools({tabId})`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListToolsRequest {
    /// The tab whose frames are asked.
    pub tab_id: i64,
}

/// `callTool({tabId, name, args, frameId?, timeoutMs?})`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolRequest {
    /// The tab of the tool.
    pub tab_id: i64,
    /// The tool's name.
    pub name: String,
    /// The tool's input.
    pub args: Map<String, Value>,
    /// Which frame's tool, when several frames offer the name.
    pub frame_id: Option<i64>,
    /// How long the tool may take, in ms.
    pub timeout_ms: u32,
    /// A name for the call, by which a run can cancel it in the page. Never read from JSON.
    pub call: Option<String>,
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, RequestError> {
    value
        .as_object()
        .ok_or_else(|| bad(format!("{what} takes an object, not {}", kind(value))))
}

fn id_field(map: &Map<String, Value>, key: &str, what: &str) -> Result<Option<i64>, RequestError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(id) if id >= 0 => Ok(Some(id)),
            _ => Err(bad(format!(
                "{what}: `{key}` must be a whole number ≥ 0, not {n}"
            ))),
        },
        Some(other) => Err(bad(format!(
            "{what}: `{key}` must be a number, not {}",
            kind(other)
        ))),
    }
}

impl ListToolsRequest {
    /// Parses `{tabId}`.
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        let what = OpName::ListTools.as_str();
        let map = object(value, what)?;
        let tab_id = id_field(map, "tabId", what)?
            .ok_or_else(|| bad(format!("{what}: `tabId` is required")))?;
        Ok(ListToolsRequest { tab_id })
    }
}

/// `audit({tabId, format?, probe?, allowActing?, watchNetwork?, tools?})`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRequest {
    /// The tab whose tools are audited.
    pub tab_id: i64,
    /// How the audit is written (`json`, the default, or `sarif`).
    pub format: crate::core::audit::Format,
    /// Whether the tools are called too (`core::audit::probe`).
    pub probe: bool,
    /// Whether probes call tools that are not read-only (each confirmed like any call).
    pub allow_acting: bool,
    /// Whether the page's requests are watched during each probe.
    pub watch_network: bool,
    /// The tools probed, by name (each at most once): the others are audited but not called
    /// (a person's leave to probe one tool, "Probe this tool"). `None`: every tool.
    pub tools: Option<Vec<String>>,
}

impl AuditRequest {
    /// Parses `{tabId, format?, probe?, allowActing?, watchNetwork?, tools?}`.
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        let what = OpName::Audit.as_str();
        let map = object(value, what)?;
        let tab_id = id_field(map, "tabId", what)?
            .ok_or_else(|| bad(format!("{what}: `tabId` is required")))?;
        let format = match map.get("format") {
            None | Some(Value::Null) => crate::core::audit::Format::Json,
            Some(Value::String(name)) => {
                crate::core::audit::Format::parse(name).map_err(|e| bad(format!("{what}: {e}")))?
            }
            Some(other) => {
                return Err(bad(format!(
                    "{what}: `format` must be a string, not {}",
                    kind(other)
                )))
            }
        };
        let flag = |key: &str| match map.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(bad(format!(
                "{what}: `{key}` must be true or false, not {}",
                kind(other)
            ))),
        };
        let tools = match map.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(names)) if names.len() <= crate::core::limits::MAX_TOOLS_PER_TAB => {
                let mut list: Vec<String> = Vec::new();
                for name in names {
                    match name.as_str() {
                        Some(name)
                            if !name.is_empty()
                                && name.len() <= crate::core::limits::MAX_TOOL_NAME_BYTES =>
                        {
                            if !list.iter().any(|n| n == name) {
                                list.push(name.to_owned());
                            }
                        }
                        _ => {
                            return Err(bad(format!(
                            "{what}: each of `tools` must be a tool's name (1 to {} bytes), not {}",
                            crate::core::limits::MAX_TOOL_NAME_BYTES,
                            kind(name)
                        )))
                        }
                    }
                }
                Some(list)
            }
            Some(Value::Array(names)) => {
                return Err(bad(format!(
                    "{what}: `tools` names {} tools; a tab offers at most {}",
                    names.len(),
                    crate::core::limits::MAX_TOOLS_PER_TAB
                )))
            }
            Some(other) => {
                return Err(bad(format!(
                    "{what}: `tools` must be an array of tool names, not {}",
                    kind(other)
                )))
            }
        };
        let probe = flag("probe")?;
        if tools.is_some() && !probe {
            return Err(bad(format!(
                "{what}: `tools` chooses the tools to probe: give `probe: true` with it"
            )));
        }
        Ok(AuditRequest {
            tab_id,
            format,
            probe,
            allow_acting: flag("allowActing")?,
            watch_network: flag("watchNetwork")?,
            tools,
        })
    }
}

impl CallToolRequest {
    /// Parses `{tabId, name, args?, frameId?, timeoutMs?}`.
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        const WHAT: &str = OpName::CallTool.as_str();
        let map = object(value, WHAT)?;
        let tab_id =
            id_field(map, "tabId", WHAT)?.ok_or_else(|| bad("callTool: `tabId` is required"))?;
        let name = match map.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(bad("callTool: `name` is required"))
            }
            Some(other) => {
                return Err(bad(format!(
                    "callTool: `name` must be a string, not {}",
                    kind(other)
                )))
            }
        };
        let args = match map.get("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(other) => {
                return Err(bad(format!(
                    "callTool: `args` must be an object (the tool's input), not {}",
                    kind(other)
                )))
            }
        };
        let frame_id = id_field(map, "frameId", WHAT)?;
        let timeout_ms = match id_field(map, "timeoutMs", WHAT)? {
            None => DEFAULT_CALL_TIMEOUT_MS,
            Some(ms) if ms >= 1 && ms <= i64::from(MAX_CALL_TIMEOUT_MS) => ms as u32,
            Some(ms) => {
                return Err(bad(format!(
                    "callTool: `timeoutMs` must be between 1 and {MAX_CALL_TIMEOUT_MS}, not {ms}"
                )))
            }
        };
        Ok(CallToolRequest {
            tab_id,
            name,
            args,
            frame_id,
            timeout_ms,
            call: None,
        })
    }
}

/// `run({tabId?, prompt | messages, model?, tools?, maxSteps?, context?, runId?, threadId?,
/// outputSchema?, middleware?, expectOrigin?})`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    /// The tab whose page tools the run may use; none: a run without a page.
    pub tab_id: Option<i64>,
    /// The new messages of this turn (a prompt becomes one user message).
    pub messages: Vec<crate::core::agui::Message>,
    /// The model registry entry to use; none: the default.
    pub model: Option<String>,
    /// The client's frontend tools.
    pub frontend_tools: Vec<crate::core::toolset::ToolSpec>,
    /// The most tool calls of the turn.
    pub max_steps: usize,
    /// The client's context, passed through.
    pub context: Value,
    /// The run id to use (made up when missing).
    pub run_id: Option<String>,
    /// The thread id to use (made up when missing).
    pub thread_id: Option<String>,
    /// A JSON schema the final answer must follow: the run offers `submit_result`.
    pub output_schema: Option<Value>,
    /// The run's own middleware layers (after the global ones).
    pub middleware: Vec<crate::core::run::Middleware>,
    /// Whether `threadId`'s conversation goes on here even when it was made on another
    /// origin (`carryOver: true`); otherwise such a run starts a new conversation.
    pub carry_over: bool,
    /// `noTools: true`: the model is offered no tool at all (no page, server or host tool; an
    /// `outputSchema`'s `submit_result` only): a plain exchange, as `simulate`'s user and judge
    /// models have.
    pub no_tools: bool,
    /// `replay`: a replay transcript whose outputs stand in for the model's (the run keeps the
    /// model's name): a recorded run played again with no model call.
    pub replay: Option<String>,
    /// `expectOrigin`: the origin the tab must show when the run lists it (a suite's origin);
    /// a tab showing another gives the run none of its tools.
    pub expect_origin: Option<String>,
}

pub use crate::core::limits::MAX_MAX_STEPS;

impl RunRequest {
    /// Parses a run request, with errors naming the field.
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        const WHAT: &str = "run";
        let map = object(value, WHAT)?;
        let tab_id = id_field(map, "tabId", WHAT)?;
        let string = |key: &str| -> Result<Option<String>, RequestError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                Some(other) => Err(bad(format!(
                    "run: `{key}` must be a non-empty string, not {}",
                    kind(other)
                ))),
            }
        };
        let messages = match (map.get("prompt"), map.get("messages")) {
            (Some(Value::String(prompt)), None) if !prompt.trim().is_empty() => {
                vec![crate::core::agui::Message::User {
                    id: String::new(),
                    content: prompt.clone(),
                }]
            }
            (None, Some(Value::Array(items))) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    serde_json::from_value(m.clone()).map_err(|e| {
                        bad(format!("run: messages[{i}] is not an AG-UI message: {e}"))
                    })
                })
                .collect::<Result<_, _>>()?,
            (Some(_), Some(_)) => return Err(bad("run: give `prompt` or `messages`, not both")),
            (Some(_), None) => return Err(bad("run: `prompt` must be a non-empty string")),
            (None, Some(_)) => {
                return Err(bad(
                    "run: `messages` must be a non-empty array of AG-UI messages",
                ))
            }
            (None, None) => return Err(bad("run: `prompt` or `messages` is required")),
        };
        let frontend_tools = match map.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, t)| frontend_tool(t).map_err(|e| bad(format!("run: tools[{i}]: {e}"))))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(bad(format!(
                    "run: `tools` must be an array, not {}",
                    kind(other)
                )))
            }
        };
        let max_steps = match map.get("maxSteps") {
            None | Some(Value::Null) => crate::core::run::DEFAULT_MAX_STEPS,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(steps) if (1..=MAX_MAX_STEPS as u64).contains(&steps) => steps as usize,
                _ => {
                    return Err(bad(format!(
                        "run: `maxSteps` must be between 1 and {MAX_MAX_STEPS}, not {n}"
                    )))
                }
            },
            Some(other) => {
                return Err(bad(format!(
                    "run: `maxSteps` must be a number, not {}",
                    kind(other)
                )))
            }
        };
        let no_tools = match map.get("noTools") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(bad(format!(
                    "run: `noTools` must be true or false, not {}",
                    kind(other)
                )))
            }
        };
        if no_tools && (tab_id.is_some() || !frontend_tools.is_empty()) {
            return Err(bad(
                "run: `noTools` offers no tool: give no `tabId` and no `tools` with it",
            ));
        }
        let replay = match map.get("replay") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => {
                crate::core::provider::replay::parse_transcript(text)
                    .map_err(|e| bad(format!("run: `replay`: {e}")))?;
                Some(text.clone())
            }
            Some(other) => {
                return Err(bad(format!(
                    "run: `replay` must be a replay transcript (JSONL text), not {}",
                    kind(other)
                )))
            }
        };
        Ok(RunRequest {
            tab_id,
            messages,
            model: string("model")?,
            frontend_tools,
            max_steps,
            context: map.get("context").cloned().unwrap_or(Value::Null),
            run_id: string("runId")?,
            thread_id: string("threadId")?,
            output_schema: output_schema(map.get("outputSchema"))?,
            middleware: crate::core::run::declared(
                map.get("middleware").unwrap_or(&Value::Null),
                "run",
            )
            .map_err(bad)?,
            carry_over: match map.get("carryOver") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(bad(format!(
                        "run: `carryOver` must be true or false, not {}",
                        kind(other)
                    )))
                }
            },
            no_tools,
            replay,
            expect_origin: match string("expectOrigin")? {
                None => None,
                Some(origin) => Some(crate::core::url::http_origin(&origin).ok_or_else(|| {
                    bad("run: `expectOrigin` must be an http(s) origin (`https://host[:port]`)")
                })?),
            },
        })
    }
}

/// `outputSchema`: a JSON schema (an object) that compiles; `null` or absent: none.
fn output_schema(value: Option<&Value>) -> Result<Option<Value>, RequestError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(schema @ Value::Object(_)) => match crate::core::schema::validator_for(schema) {
            Ok(_) => Ok(Some(schema.clone())),
            Err(e) => Err(bad(format!(
                "run: `outputSchema` is not a valid JSON schema: {e}"
            ))),
        },
        Some(other) => Err(bad(format!(
            "run: `outputSchema` must be a JSON schema (an object), not {}",
            kind(other)
        ))),
    }
}

/// An AG-UI tool (`{name, description, parameters}`; `inputSchema` is accepted too).
fn frontend_tool(value: &Value) -> Result<crate::core::toolset::ToolSpec, String> {
    let map = value
        .as_object()
        .ok_or_else(|| format!("a tool is {}, not an object", kind(value)))?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a tool needs a `name`")?;
    let description = map
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let schema = map
        .get("parameters")
        .or_else(|| map.get("inputSchema"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    Ok(crate::core::toolset::ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: schema,
    })
}

/// Visitor tools of a run request (`visitorTools`: AG-UI tools, `{name, description,
/// parameters}`): answered by the person in the popup or side panel.
pub fn visitor_tools(request: &Value) -> Result<Vec<crate::core::toolset::ToolSpec>, String> {
    let Some(items) = request.get("visitorTools") else {
        return Ok(Vec::new());
    };
    let items = match items {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err("run: `visitorTools` must be an array".into()),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| {
                    !n.is_empty()
                        && n.len() <= 128
                        && n.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                })
                .ok_or_else(|| format!("run: visitorTools[{i}] needs a `name` of [a-zA-Z0-9_-]"))?;
            Ok(crate::core::toolset::ToolSpec {
                name: name.to_owned(),
                description: tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                input_schema: tool
                    .get("parameters")
                    .or_else(|| tool.get("inputSchema"))
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
