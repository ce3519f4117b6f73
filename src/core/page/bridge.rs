//! The wire protocol between the worker and the content script of one frame.
//!
//! The worker sends a [`FrameRequest`] with `chrome.tabs.sendMessage` to one frame; the content
//! script answers with a JSON reply. Replies come from a page's process and are untrusted: they
//! are size-checked before they are parsed, and parsed into [`FrameListing`] or [`CallOutcome`],
//! or rejected with a [`BridgeError`] that says what was wrong.
//!
//! Replies, as the content script writes them:
//! - list: `{"ok":true,"supported":bool,"polyfilled"?:true,"url":"…","origin":"…","tools":[…]}`
//!   (`url` and `origin` are the content script's own location; `polyfilled`: the tools came
//!   from the page's world, which may drop `consequentialHint`)
//! - call: `{"ok":true,"result":"text"|null,"url":"…","input":"text"?}` (`null`: the tool
//!   navigated the page; `input`: the arguments went as JSON text)
//! - any:  `{"ok":false,"error":{"name":"…","message":"…"}}`

use std::collections::BTreeMap;
use std::fmt;

/// The name the page bridge gives Google's demo polyfill (webmcp-tools'
/// `demos/shared/webmcp-polyfill.js`), which passes every annotation on.
pub const GOOGLE_DEMO_POLYFILL: &str = "google-demo";
/// The name the page bridge gives `@mcp-b/webmcp-polyfill` and `@mcp-b/global`, which keep only
/// `readOnlyHint` and `untrustedContentHint`.
pub const MCP_B_POLYFILL: &str = "mcp-b";

use serde_json::{json, Map, Value};

use super::tool::{parse_owned_tools, FrameTools};
use crate::core::limits::Limits;
use crate::core::naming::kind;

mod result;
pub use result::{parse_dom_reply, parse_page_result, parse_sitemap_reply, PageResult};

/// The key that marks a message as ours, with the protocol version as its value.
pub const PROTOCOL_KEY: &str = "webmcpHost";
/// The version of the bridge protocol both sides speak.
pub const PROTOCOL_VERSION: u64 = 1;

/// Where a message to a frame goes: the frame and, when known, the document it must still
/// hold. Chrome delivers a message with a `documentId` to that document only, so a call never
/// reaches a document that replaced the one its tool was listed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The frame (0: the top frame).
    pub frame_id: i64,
    /// The document (`webNavigation`'s `documentId`); `None` sends to whatever the frame holds.
    pub document_id: Option<String>,
}

impl Target {
    /// The top frame, whatever document it holds.
    pub const TOP: Target = Target {
        frame_id: 0,
        document_id: None,
    };

    /// The options of `chrome.tabs.sendMessage`: `{frameId, documentId?}`.
    pub fn options(&self) -> Value {
        match &self.document_id {
            Some(document) => json!({"frameId": self.frame_id, "documentId": document}),
            None => json!({"frameId": self.frame_id}),
        }
    }
}

impl From<i64> for Target {
    /// A frame, whatever document it holds.
    fn from(frame_id: i64) -> Target {
        Target {
            frame_id,
            document_id: None,
        }
    }
}

/// What the worker asks of a frame: every request the page bridge (`content-script/isolated.js`)
/// answers, and no other (a test holds both content scripts to [`FrameRequest::OPS`]).
#[derive(Debug, Clone, PartialEq)]
pub enum FrameRequest {
    /// List the frame's tools.
    ListTools,
    /// The top frame's facts for `diagnose` ([`crate::core::workbench::diagnose::facts_of`]).
    Diagnose,
    /// Run a tool in the frame.
    CallTool {
        /// The tool's name.
        name: String,
        /// Its arguments.
        args: Map<String, Value>,
        /// When set, the content script asks the person with the browser's own `confirm()`
        /// showing this text, and runs the tool only if they accept.
        confirm: Option<String>,
        /// A name for this call, by which [`FrameRequest::Cancel`] can abort it.
        call: Option<String>,
        /// How long the caller waits (ms): a call the person allows after that was already
        /// reported as cancelled, so the content script does not run it (`confirm()` blocks
        /// the script, and the cancel message reaches it only after the tool started).
        within_ms: Option<u32>,
        /// The tool's version as the frame listed it ([`FrameListing::versions`]): the content
        /// script runs the tool only while its definition is the one listed under that
        /// version, and otherwise refuses with [`TOOL_CHANGED`] (the host decided whether to
        /// confirm from that definition).
        version: Option<u64>,
    },
    /// Abort a call still running in the page (its `executeTool` signal); the reply is
    /// `{"ok": true, "cancelled": bool}`.
    Cancel {
        /// The call's id in the page.
        call: String,
    },
    /// Start (`on`) or end watching the requests the frame's page sends (an audit probe, with
    /// the person's leave): the page's own `fetch`, `XMLHttpRequest`, `sendBeacon` and form
    /// submissions, wrapped by the MAIN-world companion. Ending answers `{ok: true, requests:
    /// [{method, url}]}` ([`parse_watched`]).
    Watch {
        /// Whether to start (true) or end (false).
        on: bool,
    },
    /// The result of the document a call loaded (a navigation's destination, a frame a form
    /// targeted), read by that document's content script once it has loaded: `{ok: true, url,
    /// title, jsonLd: [..], skipped, text}` ([`parse_page_result`]).
    ReadResult,
    /// A crawl's sitemap, fetched by the top frame's content script on its own origin only
    /// (a URL of another origin is refused there): `{ok: true, text, truncated}`, at most
    /// `MAX_SITEMAP_BYTES` of text.
    ReadSitemap {
        /// The sitemap's URL.
        url: String,
    },
    /// The final state of the top frame's DOM, for an eval's DOM assertions, read by its
    /// content script in the isolated world (never by page script): `{ok: true, results:
    /// [{count, text?, attribute?} | {error}]}`, one per query ([`parse_dom_reply`]).
    QueryDom {
        /// What to read, at most `MAX_DOM_QUERIES`.
        queries: Vec<DomQuery>,
    },
}

/// One read of a [`FrameRequest::QueryDom`]: the elements a CSS selector matches and, of the
/// first, its text and (when named) an attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct DomQuery {
    /// The CSS selector (at most `MAX_SELECTOR_BYTES`).
    pub selector: String,
    /// The attribute of the first match to read, if any.
    pub attribute: Option<String>,
}

/// What the page answered to one [`DomQuery`] (page text, capped; shown or compared as text
/// only).
#[derive(Debug, Clone, PartialEq)]
pub struct DomObserved {
    /// How many elements the selector matched.
    pub count: u64,
    /// The first match's `textContent`, trimmed, at most `DOM_TEXT_CHARS` characters.
    pub text: Option<String>,
    /// The first match's attribute, when asked and present, at most `DOM_TEXT_CHARS`
    /// characters.
    pub attribute: Option<String>,
    /// Why the query could not be run (an invalid selector, …), at most 300 characters.
    pub error: Option<String>,
}

impl FrameRequest {
    /// The `op` of every request, in the order of the variants.
    pub const OPS: [&'static str; 8] = [
        "listTools",
        "diagnose",
        "callTool",
        "cancel",
        "watch",
        "readResult",
        "readSitemap",
        "queryDom",
    ];

    /// The request's `op`.
    pub fn op(&self) -> &'static str {
        match self {
            FrameRequest::ListTools => Self::OPS[0],
            FrameRequest::Diagnose => Self::OPS[1],
            FrameRequest::CallTool { .. } => Self::OPS[2],
            FrameRequest::Cancel { .. } => Self::OPS[3],
            FrameRequest::Watch { .. } => Self::OPS[4],
            FrameRequest::ReadResult => Self::OPS[5],
            FrameRequest::ReadSitemap { .. } => Self::OPS[6],
            FrameRequest::QueryDom { .. } => Self::OPS[7],
        }
    }

    /// The message to send to the frame's content script.
    pub fn to_message(&self) -> Value {
        let op = self.op();
        match self {
            FrameRequest::ListTools | FrameRequest::Diagnose | FrameRequest::ReadResult => {
                json!({PROTOCOL_KEY: PROTOCOL_VERSION, "op": op})
            }
            FrameRequest::CallTool {
                name,
                args,
                confirm,
                call,
                within_ms,
                version,
            } => {
                let mut message = json!({
                    PROTOCOL_KEY: PROTOCOL_VERSION, "op": op, "name": name, "args": args
                });
                if let Some(text) = confirm {
                    message["confirm"] = json!(text);
                    if let Some(ms) = within_ms {
                        message["within"] = json!(ms);
                    }
                }
                if let Some(call) = call {
                    message["call"] = json!(call);
                }
                if let Some(version) = version {
                    message["version"] = json!(version);
                }
                message
            }
            FrameRequest::Cancel { call } => {
                json!({PROTOCOL_KEY: PROTOCOL_VERSION, "op": op, "call": call})
            }
            FrameRequest::Watch { on } => {
                json!({PROTOCOL_KEY: PROTOCOL_VERSION, "op": op, "on": on})
            }
            FrameRequest::ReadSitemap { url } => {
                json!({PROTOCOL_KEY: PROTOCOL_VERSION, "op": op, "url": url})
            }
            FrameRequest::QueryDom { queries } => {
                let queries: Vec<Value> = (queries.iter())
                    .map(|query| {
                        let mut entry = json!({"selector": query.selector});
                        if let Some(attribute) = &query.attribute {
                            entry["attribute"] = json!(attribute);
                        }
                        entry
                    })
                    .collect();
                json!({PROTOCOL_KEY: PROTOCOL_VERSION, "op": op, "queries": queries})
            }
        }
    }
}

/// What one frame reported about its tools.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameListing {
    /// Whether the frame has `document.modelContext` at all.
    pub supported: bool,
    /// The URL.
    pub url: String,
    /// The frame's origin.
    pub origin: String,
    /// Its document's title as the page set it (at most 200 characters; page text, shown as
    /// text only).
    pub title: String,
    /// Whether its document was still being parsed (`document.readyState` `loading`).
    pub loading: bool,
    /// The document that answered (set from Chrome's list of frames, never from the reply).
    pub document_id: Option<String>,
    /// Whether the tools came from the page's own world (a polyfill, or the page's own
    /// `document.modelContext`): every one not read-only is then consequential.
    pub polyfilled: bool,
    /// Which polyfill, when polyfilled: `google-demo` (Google's demo polyfill, which keeps
    /// every hint), `mcp-b` (`@mcp-b/webmcp-polyfill` or `@mcp-b/global`, which drop
    /// `consequentialHint`) or `unknown`.
    pub polyfill: Option<&'static str>,
    /// Its tools and what was skipped.
    pub tools: FrameTools,
    /// Each tool's version (by name), as the content script numbered the definitions it
    /// reported: a call names the version it was decided on.
    pub versions: BTreeMap<String, u64>,
}

/// The name of the failure a content script answers when the tool's definition is no longer
/// the one listed under the call's version: the tool did not run, and the host lists again.
pub const TOOL_CHANGED: &str = "ToolChangedError";

/// How a tool call ended, as the page reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// The tool returned; WebMCP hands every result over as a string. `text_input`: the page's
    /// `executeTool` refused the arguments as an object and took them as JSON text (the reply
    /// says `"input": "text"`), as WebMCP before Chrome 155 and old polyfills did.
    Text {
        /// The result.
        text: String,
        /// The arguments went as JSON text.
        text_input: bool,
    },
    /// The tool navigated its document (`executeTool` resolved to `null`).
    Navigated {
        /// The URL.
        url: Option<String>,
    },
    /// The tool threw, or the frame could not run it.
    Failed {
        /// The tool's name.
        name: String,
        /// Its message.
        message: String,
    },
}

/// A reply that breaks the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeError {
    /// `what` is "reply" (the whole message) or "result" (a tool's result in it).
    TooLarge {
        /// What passed the cap: "reply" or "result".
        what: &'static str,
        /// Its size in bytes.
        bytes: usize,
        /// The cap in bytes.
        cap: usize,
        /// The cap's name in `Limits`.
        cap_name: &'static str,
    },
    /// The reply breaks the protocol.
    Malformed {
        /// How.
        reason: String,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::TooLarge {
                what,
                bytes,
                cap,
                cap_name,
            } => write!(
                f,
                "the frame's {what} is {bytes} bytes, over the cap of {cap} ({cap_name})"
            ),
            BridgeError::Malformed { reason } => {
                write!(f, "the frame's reply is malformed: {reason}")
            }
        }
    }
}

impl std::error::Error for BridgeError {}

fn malformed(reason: impl Into<String>) -> BridgeError {
    BridgeError::Malformed {
        reason: reason.into(),
    }
}

/// A reply's body: the object of an `ok:true` reply, or the error name and message of an
/// `ok:false` one.
type ReplyBody = Result<Map<String, Value>, (String, String)>;

/// Checks the size of a raw reply, parses it, and splits `ok:false` replies off.
fn parse_reply(raw: &str, limits: &Limits) -> Result<ReplyBody, BridgeError> {
    if raw.len() > limits.max_message_bytes {
        return Err(BridgeError::TooLarge {
            what: "reply",
            bytes: raw.len(),
            cap: limits.max_message_bytes,
            cap_name: "max_message_bytes",
        });
    }
    let value: Value =
        serde_json::from_str(raw).map_err(|e| malformed(format!("not JSON ({e})")))?;
    let Value::Object(map) = value else {
        return Err(malformed(format!("it is {}, not an object", kind(&value))));
    };
    match map.get("ok") {
        Some(Value::Bool(true)) => Ok(Ok(map)),
        Some(Value::Bool(false)) => {
            let error = map.get("error");
            let text = |key: &str| {
                error
                    .and_then(|e| e.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let name = text("name").unwrap_or_else(|| "Error".into());
            let message = text("message")
                .or_else(|| error.and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "the frame reported an error without a message".into());
            Ok(Err((name, message)))
        }
        _ => Err(malformed("`ok` is missing or not a boolean")),
    }
}

fn string_field(map: &Map<String, Value>, key: &str) -> Result<String, BridgeError> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Ok(String::new()),
        Some(other) => Err(malformed(format!(
            "`{key}` is {}, not a string",
            kind(other)
        ))),
    }
}

/// What came back from a message to a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The frame's reply as JSON text, or why it could not be read as JSON.
    Answered(Result<String, String>),
    /// Nothing came back within the time given.
    TimedOut,
    /// The message channel failed (no content script, the frame gone, …): the shell's words.
    Failed(String),
}

/// Parses a frame's answer to [`FrameRequest::ListTools`].
pub fn parse_listing(
    raw: &str,
    frame_id: i64,
    limits: &Limits,
) -> Result<FrameListing, BridgeError> {
    let mut map = match parse_reply(raw, limits)? {
        Ok(map) => map,
        Err((name, message)) => {
            return Err(malformed(format!(
                "the frame could not list its tools: {name}: {message}"
            )))
        }
    };
    let url = string_field(&map, "url")?;
    let origin = string_field(&map, "origin")?;
    let title: String = match map.get("title") {
        Some(Value::String(title)) => title.chars().take(200).collect(),
        _ => String::new(),
    };
    // Still parsing: its scripts (and the tools they register) not all run yet. A document
    // past that (`interactive`: a frame of it may load for ever) counts as loaded.
    let loading = map.get("readyState").and_then(Value::as_str) == Some("loading");
    let supported = map.get("supported") == Some(&Value::Bool(true));
    let polyfilled = map.get("polyfilled") == Some(&Value::Bool(true));
    // Which polyfill, as the page's world showed it: only names the host knows are kept.
    let polyfill = polyfilled.then(|| match map.get("polyfill").and_then(Value::as_str) {
        Some(GOOGLE_DEMO_POLYFILL) => GOOGLE_DEMO_POLYFILL,
        Some(MCP_B_POLYFILL) => MCP_B_POLYFILL,
        _ => "unknown",
    });
    let mut versions = BTreeMap::new();
    let mut tools = match map.remove("tools") {
        None | Some(Value::Null) => FrameTools::default(),
        Some(Value::Array(entries)) => {
            // Each name's first entry gives its version (the tool kept under that name).
            for entry in entries.iter().take(limits.max_tools_per_frame) {
                let name = entry.get("name").and_then(Value::as_str);
                if let Some(name) = name.filter(|n| !versions.contains_key(*n)) {
                    versions.insert(
                        name.to_owned(),
                        entry.get("version").and_then(Value::as_u64),
                    );
                }
            }
            parse_owned_tools(entries, frame_id, &origin, limits)
        }
        Some(other) => {
            return Err(malformed(format!(
                "`tools` is {}, not an array",
                kind(&other)
            )))
        }
    };
    let versions = (tools.tools.iter())
        .filter_map(|t| Some((t.name.clone(), versions.get(&t.name).copied().flatten()?)))
        .collect();
    // Google's demo polyfill passes every annotation on, as the browser does: its hints are
    // read as a native page's. Any other polyfill may drop consequentialHint.
    if polyfilled && polyfill != Some(GOOGLE_DEMO_POLYFILL) {
        tools.confirm_unless_read_only();
    }
    for tool in &mut tools.tools {
        tool.polyfill = polyfill;
    }
    Ok(FrameListing {
        supported,
        url,
        origin,
        title,
        loading,
        document_id: None,
        polyfilled,
        polyfill,
        tools,
        versions,
    })
}

/// The most requests [`parse_watched`] keeps.
pub const MAX_WATCHED: usize = crate::core::limits::MAX_WATCHED_REQUESTS;

/// A frame's answer to the end of a [`FrameRequest::Watch`]: each request's method (upper
/// case) and URL (both capped), at most [`MAX_WATCHED`]; entries that are not
/// `{method, url}` strings are left out. An error when the frame could not watch.
pub fn parse_watched(reply: &Reply, limits: &Limits) -> Result<Vec<(String, String)>, String> {
    let text = match reply {
        Reply::Answered(Ok(text)) => text,
        Reply::Answered(Err(e)) | Reply::Failed(e) => return Err(e.clone()),
        Reply::TimedOut => return Err("the frame did not answer".into()),
    };
    let map = match parse_reply(text, limits).map_err(|e| e.to_string())? {
        Ok(map) => map,
        Err((name, message)) => return Err(format!("{name}: {message}")),
    };
    let cap = |v: &Value| v.as_str().map(|s| s.chars().take(500).collect::<String>());
    Ok(map
        .get("requests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| Some((cap(r.get("method")?)?.to_uppercase(), cap(r.get("url")?)?)))
        .take(MAX_WATCHED)
        .collect())
}

/// Parses a frame's answer to [`FrameRequest::CallTool`].
pub fn parse_call_reply(raw: &str, limits: &Limits) -> Result<CallOutcome, BridgeError> {
    let map = match parse_reply(raw, limits)? {
        Ok(map) => map,
        Err((name, message)) => return Ok(CallOutcome::Failed { name, message }),
    };
    match map.get("result") {
        Some(Value::String(text)) if text.len() > limits.max_result_bytes => {
            Err(BridgeError::TooLarge {
                what: "result",
                bytes: text.len(),
                cap: limits.max_result_bytes,
                cap_name: "max_result_bytes",
            })
        }
        Some(Value::String(text)) => Ok(CallOutcome::Text {
            text: text.clone(),
            text_input: map.get("input").and_then(Value::as_str) == Some("text"),
        }),
        Some(Value::Null) => {
            let url = string_field(&map, "url")?;
            Ok(CallOutcome::Navigated {
                url: (!url.is_empty()).then_some(url),
            })
        }
        None => Err(malformed("`result` is missing")),
        Some(other) => Err(malformed(format!(
            "`result` is {}, not a string or null",
            kind(other)
        ))),
    }
}

#[cfg(test)]
mod tests;
