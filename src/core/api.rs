//! The operations of the automation surface (`globalThis.webmcpHost`) and of the popup, as
//! values: requests parsed from JSON with clear errors, the merge of a tab's frames into one
//! tool list, name resolution, and the JSON shapes the shells hand back.

use std::fmt;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::bridge::{BridgeError, CallOutcome, FrameListing};
use super::tool::{kind, PageTool, ToolProblem};

/// Default time a page tool may take before its call ends with a timeout error.
pub const DEFAULT_CALL_TIMEOUT_MS: u32 = 30_000;
/// The longest a caller may let a page tool run.
pub const MAX_CALL_TIMEOUT_MS: u32 = 10 * 60 * 1000;

/// A request that cannot be carried out as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RequestError {}

fn bad(message: impl Into<String>) -> RequestError {
    RequestError(message.into())
}

/// `listTools({tabId})`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListToolsRequest {
    pub tab_id: i64,
}

/// `callTool({tabId, name, args, frameId?, timeoutMs?})`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolRequest {
    pub tab_id: i64,
    pub name: String,
    pub args: Map<String, Value>,
    /// Which frame's tool, when several frames offer the name.
    pub frame_id: Option<i64>,
    pub timeout_ms: u32,
    /// The tool as a run was given it: a tool found otherwise (another origin, another
    /// definition) is not called. Never read from JSON.
    pub expect: Option<Box<PageTool>>,
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
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        let map = object(value, "listTools")?;
        let tab_id = id_field(map, "tabId", "listTools")?
            .ok_or_else(|| bad("listTools: `tabId` is required"))?;
        Ok(ListToolsRequest { tab_id })
    }
}

impl CallToolRequest {
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        const WHAT: &str = "callTool";
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
            expect: None,
            call: None,
        })
    }
}

/// A frame of a tab and what came of asking it for its tools.
#[derive(Debug, Clone)]
pub struct FrameAnswer {
    pub frame_id: i64,
    pub url: String,
    pub answer: Result<FrameListing, FrameFailure>,
}

/// Why a frame gave no listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameFailure {
    /// The frame answered in breach of the protocol.
    Bridge(BridgeError),
    /// The message did not get there or back (no content script, frame gone, …); the shell's
    /// own words.
    Unreachable(String),
}

/// All tools of a tab: every frame's, in frame order, with what was skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TabTools {
    pub tools: Vec<PageTool>,
    pub problems: Vec<ToolProblem>,
}

impl TabTools {
    pub fn from_frames(mut frames: Vec<FrameAnswer>) -> TabTools {
        frames.sort_by_key(|f| f.frame_id);
        let mut out = TabTools::default();
        for frame in frames {
            match frame.answer {
                Ok(listing) => {
                    out.tools.extend(listing.tools.tools);
                    out.problems.extend(listing.tools.problems);
                }
                // A frame that never had our content script (about:blank of an ad, a frame
                // loaded before the extension) is not a problem unless it is the top frame.
                Err(FrameFailure::Unreachable(_)) if frame.frame_id != 0 => {}
                Err(failure) => {
                    let why = match failure {
                        FrameFailure::Bridge(e) => e.to_string(),
                        FrameFailure::Unreachable(message) => format!("no answer: {message}"),
                    };
                    out.problems.push(ToolProblem {
                        frame_id: frame.frame_id,
                        tool: None,
                        message: format!("frame {} ({}): {why}", frame.frame_id, frame.url),
                    });
                }
            }
        }
        out
    }

    /// The tool a call means: by name, and by frame when several frames offer the name.
    pub fn resolve(&self, name: &str, frame_id: Option<i64>) -> Result<&PageTool, RequestError> {
        let matches: Vec<&PageTool> = self
            .tools
            .iter()
            .filter(|t| t.name == name && frame_id.is_none_or(|f| t.frame_id == f))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => {
                let place = frame_id
                    .map(|f| format!(" in frame {f}"))
                    .unwrap_or_default();
                let mut known: Vec<&str> = Vec::new();
                for tool in &self.tools {
                    if !known.contains(&tool.name.as_str()) {
                        known.push(&tool.name);
                    }
                }
                let known = if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                };
                Err(bad(format!(
                    "no page tool named `{name}`{place}; the tab offers: {known}"
                )))
            }
            several => {
                let frames: Vec<String> = several
                    .iter()
                    .map(|t| format!("frame {} ({})", t.frame_id, t.origin))
                    .collect();
                Err(bad(format!(
                    "`{name}` is offered by {}; pass `frameId` to choose",
                    frames.join(" and ")
                )))
            }
        }
    }
}

/// The text of the in-page confirmation a call needs, when the tool is consequential.
/// Hints only tighten: a tool that claims `readOnlyHint` but also `consequentialHint` is
/// confirmed.
pub fn confirmation(tool: &PageTool, args: &Map<String, Value>) -> Option<String> {
    tool.annotations
        .consequential_hint
        .then(|| crate::core::confirm::page_tool(&tool.name, &tool.origin, args))
}

/// What `callTool` resolves to: `{ok:true,result}`, `{ok:true,navigated:true,url?}` or
/// `{ok:false,error}`.
pub fn call_response(outcome: &Result<CallOutcome, String>) -> Value {
    match outcome {
        Ok(CallOutcome::Text(text)) => json!({"ok": true, "result": text}),
        Ok(CallOutcome::Navigated { url: Some(url) }) => {
            json!({"ok": true, "navigated": true, "url": url})
        }
        Ok(CallOutcome::Navigated { url: None }) => json!({"ok": true, "navigated": true}),
        Ok(CallOutcome::Failed { name, message }) => {
            json!({"ok": false, "error": format!("{name}: {message}")})
        }
        Err(message) => json!({"ok": false, "error": message}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::bridge::parse_listing;
    use crate::core::limits::Limits;

    fn answer(frame_id: i64, tools: &str) -> FrameAnswer {
        let raw = format!(
            r#"{{"ok":true,"supported":true,"origin":"http://f{frame_id}.test","tools":{tools}}}"#
        );
        FrameAnswer {
            frame_id,
            url: format!("http://f{frame_id}.test/"),
            answer: Ok(parse_listing(&raw, frame_id, &Limits::DEFAULT).unwrap()),
        }
    }

    #[test]
    fn list_request() {
        assert_eq!(
            ListToolsRequest::parse(&json!({"tabId": 3})),
            Ok(ListToolsRequest { tab_id: 3 })
        );
        assert_eq!(
            ListToolsRequest::parse(&json!({})).unwrap_err().0,
            "listTools: `tabId` is required"
        );
        assert_eq!(
            ListToolsRequest::parse(&json!({"tabId": "3"}))
                .unwrap_err()
                .0,
            "listTools: `tabId` must be a number, not a string"
        );
        assert!(ListToolsRequest::parse(&json!({"tabId": -1})).is_err());
        assert!(ListToolsRequest::parse(&json!({"tabId": 1.5})).is_err());
        assert!(ListToolsRequest::parse(&json!(3)).is_err());
    }

    #[test]
    fn call_request() {
        let r =
            CallToolRequest::parse(&json!({"tabId": 1, "name": "add", "args": {"a": 2}})).unwrap();
        assert_eq!(r.args["a"], 2);
        assert_eq!(r.timeout_ms, DEFAULT_CALL_TIMEOUT_MS);
        assert_eq!(r.frame_id, None);
        let r = CallToolRequest::parse(
            &json!({"tabId": 1, "name": "add", "frameId": 2, "timeoutMs": 50}),
        )
        .unwrap();
        assert!(r.args.is_empty());
        assert_eq!((r.frame_id, r.timeout_ms), (Some(2), 50));
        assert_eq!(
            CallToolRequest::parse(&json!({"tabId": 1, "name": "add", "args": "{\"a\":2}"}))
                .unwrap_err()
                .0,
            "callTool: `args` must be an object (the tool's input), not a string"
        );
        assert!(CallToolRequest::parse(&json!({"tabId": 1, "name": ""})).is_err());
        assert!(CallToolRequest::parse(&json!({"tabId": 1, "name": "a", "timeoutMs": 0})).is_err());
    }

    #[test]
    fn merging_frames_keeps_order_and_reports_top_frame_failures_only() {
        let tools = TabTools::from_frames(vec![
            answer(5, r#"[{"name":"b"}]"#),
            FrameAnswer {
                frame_id: 7,
                url: "about:blank".into(),
                answer: Err(FrameFailure::Unreachable("no receiver".into())),
            },
            answer(0, r#"[{"name":"a"},{"name":"bad name"}]"#),
        ]);
        let names: Vec<_> = tools
            .tools
            .iter()
            .map(|t| (t.name.as_str(), t.frame_id))
            .collect();
        assert_eq!(names, [("a", 0), ("b", 5)]);
        assert_eq!(tools.problems.len(), 1);

        let top_gone = TabTools::from_frames(vec![FrameAnswer {
            frame_id: 0,
            url: "http://a.test/".into(),
            answer: Err(FrameFailure::Unreachable("no receiver".into())),
        }]);
        assert_eq!(
            top_gone.problems[0].message,
            "frame 0 (http://a.test/): no answer: no receiver"
        );
    }

    #[test]
    fn resolving_names_across_frames() {
        let tools = TabTools::from_frames(vec![
            answer(0, r#"[{"name":"search"},{"name":"buy"}]"#),
            answer(3, r#"[{"name":"search"}]"#),
        ]);
        assert_eq!(tools.resolve("buy", None).unwrap().frame_id, 0);
        assert_eq!(tools.resolve("search", Some(3)).unwrap().frame_id, 3);
        assert_eq!(
            tools.resolve("search", None).unwrap_err().0,
            "`search` is offered by frame 0 (http://f0.test) and frame 3 (http://f3.test); pass `frameId` to choose"
        );
        assert_eq!(
            tools.resolve("sell", None).unwrap_err().0,
            "no page tool named `sell`; the tab offers: search, buy"
        );
        assert!(tools
            .resolve("buy", Some(3))
            .unwrap_err()
            .0
            .contains("in frame 3"));
    }

    #[test]
    fn call_responses() {
        assert_eq!(
            call_response(&Ok(CallOutcome::Text("7".into()))),
            json!({"ok": true, "result": "7"})
        );
        assert_eq!(
            call_response(&Ok(CallOutcome::Navigated { url: None })),
            json!({"ok": true, "navigated": true})
        );
        assert_eq!(
            call_response(&Ok(CallOutcome::Failed {
                name: "UnknownError".into(),
                message: "x".into()
            })),
            json!({"ok": false, "error": "UnknownError: x"})
        );
        assert_eq!(
            call_response(&Err("timed out".into())),
            json!({"ok": false, "error": "timed out"})
        );
    }
}

/// `run({tabId?, prompt | messages, model?, tools?, maxSteps?, context?, runId?, threadId?})`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub tab_id: Option<i64>,
    /// The new messages of this turn (a prompt becomes one user message).
    pub messages: Vec<crate::core::agui::Message>,
    pub model: Option<String>,
    /// The client's frontend tools.
    pub frontend_tools: Vec<crate::core::toolset::ToolSpec>,
    pub max_steps: usize,
    pub context: Value,
    pub run_id: Option<String>,
    pub thread_id: Option<String>,
}

/// The most tool calls a caller may allow in one turn.
pub const MAX_MAX_STEPS: usize = 100;

impl RunRequest {
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
        Ok(RunRequest {
            tab_id,
            messages,
            model: string("model")?,
            frontend_tools,
            max_steps,
            context: map.get("context").cloned().unwrap_or(Value::Null),
            run_id: string("runId")?,
            thread_id: string("threadId")?,
        })
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

/// A page tool as a run knows it: the name the model calls it by, and the tool itself (its
/// frame, its origin and its definition when the run began).
#[derive(Debug, Clone, PartialEq)]
pub struct PageBinding {
    pub run_name: String,
    pub tool: PageTool,
}

/// The page tools of a run. Equal names in different frames stay distinct: the first frame's
/// tool keeps its name, the others become `name__frameN`, and each such tool's description
/// says which frame and origin it belongs to.
pub fn page_run_tools(
    tools: &TabTools,
) -> (
    Vec<crate::core::run::RunTool>,
    Vec<PageBinding>,
    Vec<crate::core::run::SourceError>,
) {
    use crate::core::run::{RunTool, SourceError, ToolKind};
    let mut out: Vec<RunTool> = Vec::new();
    let mut bindings: Vec<PageBinding> = Vec::new();
    let mut errors = Vec::new();
    for tool in &tools.tools {
        let shared = tools.tools.iter().filter(|t| t.name == tool.name).count() > 1;
        let run_name = if bindings.iter().any(|b| b.tool.name == tool.name) {
            format!("{}__frame{}", tool.name, tool.frame_id)
        } else {
            tool.name.clone()
        };
        if !crate::core::tool::is_valid_name(&run_name, 128)
            || bindings.iter().any(|b| b.run_name == run_name)
        {
            errors.push(SourceError {
                source: format!("page frame {} ({})", tool.frame_id, tool.origin),
                message: format!(
                    "`{}` is also offered by another frame, and no distinct name is left for it; this frame's tool is left out",
                    tool.name
                ),
            });
            continue;
        }
        let mut description = match &tool.title {
            Some(title) if !tool.description.contains(title.as_str()) => {
                format!("{title}. {}", tool.description)
            }
            _ => tool.description.clone(),
        };
        if shared {
            let frame = if tool.frame_id == 0 {
                "the top frame".to_owned()
            } else {
                format!("frame {}", tool.frame_id)
            };
            description = format!("(In {frame}, {}.) {description}", tool.origin);
        }
        out.push(RunTool {
            spec: crate::core::toolset::ToolSpec {
                name: run_name.clone(),
                description,
                input_schema: tool.input_schema.clone(),
            },
            kind: ToolKind::Page,
            data_source: tool
                .annotations
                .untrusted_content_hint
                .then(|| format!("page {}", tool.origin)),
        });
        bindings.push(PageBinding {
            run_name,
            tool: tool.clone(),
        });
    }
    for problem in &tools.problems {
        errors.push(SourceError {
            source: format!("page frame {}", problem.frame_id),
            message: problem.message.clone(),
        });
    }
    (out, bindings, errors)
}

/// Whether the tool found now is the one a run was given: same frame, origin and definition.
/// A page that navigated, or re-registered a tool with another definition, does not get the
/// call (the person and the model agreed to the old one).
pub fn still_same_page_tool(given: &PageTool, now: &PageTool) -> Result<(), String> {
    if given.origin != now.origin {
        return Err(format!(
            "`{}` now belongs to {} (the run began with it on {}); the call was not sent",
            given.name, now.origin, given.origin
        ));
    }
    if given != now {
        return Err(format!(
            "the page changed the definition of `{}` during this run; the call was not sent. Start a new run to use the new definition",
            given.name
        ));
    }
    Ok(())
}

/// Where a frame stood, as `chrome.webNavigation.getFrame` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameState {
    pub url: String,
    pub document_id: Option<String>,
}

/// What became of a call whose message failed or ran out of time: the tab closed, the frame
/// removed, the document replaced (navigation, back/forward cache: the call's answer is
/// `{navigated, url}`), or the failure as it was.
pub fn interrupted(
    name: &str,
    failure: String,
    before: Option<&FrameState>,
    tab_open: bool,
    after: Option<&FrameState>,
) -> Result<CallOutcome, String> {
    if !tab_open {
        return Err(format!("the tab was closed while `{name}` ran"));
    }
    let Some(after) = after else {
        return Err(format!(
            "the frame that offered `{name}` was removed while it ran"
        ));
    };
    match before.and_then(|b| b.document_id.as_ref()) {
        Some(id) if after.document_id.as_ref() != Some(id) => Ok(CallOutcome::Navigated {
            url: Some(after.url.clone()).filter(|u| !u.is_empty()),
        }),
        _ => Err(failure),
    }
}

/// What `callTool` answered, as a run's tool outcome.
pub fn tool_outcome(response: &Value) -> crate::core::run::ToolOutcome {
    use crate::core::run::ToolOutcome;
    match (
        response.get("ok"),
        response.get("result"),
        response.get("navigated"),
    ) {
        (Some(Value::Bool(true)), Some(Value::String(text)), _) => ToolOutcome::Ok(text.clone()),
        (Some(Value::Bool(true)), _, Some(Value::Bool(true))) => {
            let mut result = json!({"navigated": true});
            for key in ["url", "tools", "openedTab"] {
                if let Some(value) = response.get(key) {
                    result[key] = value.clone();
                }
            }
            ToolOutcome::Ok(result.to_string())
        }
        _ => ToolOutcome::Error(
            response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the page tool failed without a message")
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod run_request_tests {
    use super::*;

    #[test]
    fn run_requests() {
        let r = RunRequest::parse(
            &json!({"tabId": 3, "prompt": "Hi", "maxSteps": 4, "context": {"user": "qa"},
            "tools": [{"name": "show", "description": "Shows", "parameters": {"type": "object"}}]}),
        )
        .unwrap();
        assert_eq!((r.tab_id, r.max_steps, r.messages.len()), (Some(3), 4, 1));
        assert_eq!(r.frontend_tools[0].name, "show");
        assert_eq!(r.context, json!({"user": "qa"}));
        let r = RunRequest::parse(
            &json!({"messages": [{"role": "user", "id": "u1", "content": "Hi"}]}),
        )
        .unwrap();
        assert_eq!(r.tab_id, None);
        assert_eq!(
            RunRequest::parse(&json!({})).unwrap_err().0,
            "run: `prompt` or `messages` is required"
        );
        assert!(RunRequest::parse(&json!({"prompt": "a", "messages": []})).is_err());
        assert!(RunRequest::parse(&json!({"prompt": "a", "maxSteps": 0})).is_err());
        assert!(RunRequest::parse(&json!({"messages": [{"role": "robot"}]}))
            .unwrap_err()
            .0
            .contains("messages[0]"));
    }

    #[test]
    fn page_tools_become_run_tools() {
        let raw = r#"{"ok":true,"supported":true,"origin":"http://a.test","tools":[
            {"name":"read","description":"Reads","annotations":{"untrustedContentHint":true}},{"name":"buy","title":"Buy it","description":"Buys"}]}"#;
        let frame = |id: i64| FrameAnswer {
            frame_id: id,
            url: "http://a.test/".into(),
            answer: Ok(crate::core::bridge::parse_listing(
                raw,
                id,
                &crate::core::limits::Limits::DEFAULT,
            )
            .unwrap()),
        };
        let tools = TabTools::from_frames(vec![frame(0), frame(4)]);
        let (run_tools, bindings, errors) = page_run_tools(&tools);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<(&str, &str, i64)> = bindings
            .iter()
            .map(|b| (b.run_name.as_str(), b.tool.name.as_str(), b.tool.frame_id))
            .collect();
        assert_eq!(
            names,
            [
                ("read", "read", 0),
                ("buy", "buy", 0),
                ("read__frame4", "read", 4),
                ("buy__frame4", "buy", 4)
            ],
            "equal names in two frames stay distinct"
        );
        assert_eq!(
            run_tools[0].data_source.as_deref(),
            Some("page http://a.test")
        );
        assert_eq!(
            run_tools[1].spec.description,
            "(In the top frame, http://a.test.) Buy it. Buys"
        );
        assert_eq!(
            run_tools[3].spec.description,
            "(In frame 4, http://a.test.) Buy it. Buys"
        );
        assert_eq!(run_tools[3].spec.name, "buy__frame4");

        let single = TabTools::from_frames(vec![frame(0)]);
        let (run_tools, _, _) = page_run_tools(&single);
        assert_eq!(
            run_tools[1].spec.description, "Buy it. Buys",
            "no frame note without a clash"
        );
    }

    #[test]
    fn a_page_tool_that_changed_is_not_called() {
        let raw = |origin: &str, description: &str| {
            format!(
                r#"{{"ok":true,"supported":true,"origin":"{origin}","tools":[{{"name":"buy","description":"{description}"}}]}}"#
            )
        };
        let tool = |origin: &str, description: &str| {
            crate::core::bridge::parse_listing(
                &raw(origin, description),
                0,
                &crate::core::limits::Limits::DEFAULT,
            )
            .unwrap()
            .tools
            .tools
            .remove(0)
        };
        let given = tool("https://shop.test", "Buys");
        assert_eq!(
            still_same_page_tool(&given, &tool("https://shop.test", "Buys")),
            Ok(())
        );
        assert_eq!(
            still_same_page_tool(&given, &tool("https://evil.test", "Buys")).unwrap_err(),
            "`buy` now belongs to https://evil.test (the run began with it on https://shop.test); the call was not sent"
        );
        assert!(
            still_same_page_tool(&given, &tool("https://shop.test", "Buys all"))
                .unwrap_err()
                .contains("changed the definition of `buy`")
        );
    }

    #[test]
    fn interrupted_calls() {
        let at = |url: &str, doc: &str| FrameState {
            url: url.into(),
            document_id: Some(doc.into()),
        };
        let before = at("http://a.test/1", "D1");
        assert_eq!(
            interrupted(
                "go",
                "port closed".into(),
                Some(&before),
                true,
                Some(&at("http://a.test/2", "D2"))
            ),
            Ok(CallOutcome::Navigated {
                url: Some("http://a.test/2".into())
            })
        );
        assert_eq!(
            interrupted(
                "go",
                "port closed".into(),
                Some(&before),
                true,
                Some(&before)
            ),
            Err("port closed".into()),
            "the same document: the failure stands"
        );
        assert_eq!(
            interrupted("go", "x".into(), Some(&before), false, None),
            Err("the tab was closed while `go` ran".into())
        );
        assert_eq!(
            interrupted("go", "x".into(), Some(&before), true, None),
            Err("the frame that offered `go` was removed while it ran".into())
        );
        assert_eq!(
            interrupted("go", "x".into(), None, true, Some(&before)),
            Err("x".into()),
            "nothing known before: no guess"
        );
    }

    #[test]
    fn call_responses_become_outcomes() {
        use crate::core::run::ToolOutcome;
        assert_eq!(
            tool_outcome(&json!({"ok": true, "result": "5"})),
            ToolOutcome::Ok("5".into())
        );
        assert_eq!(
            tool_outcome(&json!({"ok": true, "navigated": true, "url": "http://a.test/2"})),
            ToolOutcome::Ok("{\"navigated\":true,\"url\":\"http://a.test/2\"}".into())
        );
        assert_eq!(
            tool_outcome(
                &json!({"ok": true, "navigated": true, "url": "http://a.test/2", "tools": ["pay"], "extra": 1})
            ),
            ToolOutcome::Ok(
                "{\"navigated\":true,\"url\":\"http://a.test/2\",\"tools\":[\"pay\"]}".into()
            )
        );
        assert_eq!(
            tool_outcome(&json!({"ok": false, "error": "boom"})),
            ToolOutcome::Error("boom".into())
        );
    }
}
