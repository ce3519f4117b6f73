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

use super::tool::{kind, parse_owned_tools, FrameTools};
use crate::core::limits::Limits;

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
mod tests {
    use super::*;

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn watched_requests_are_read_as_untrusted() {
        let reply = |v: Value| Reply::Answered(Ok(v.to_string()));
        let many: Vec<Value> = (0..150)
            .map(|i| json!({"method": "get", "url": format!("/{i}")}))
            .collect();
        let mut listed = vec![
            json!({"method": "post", "url": "x".repeat(900)}),
            json!({"method": 7}),
            json!("GET /"),
        ];
        listed.extend(many);
        let watched = parse_watched(
            &reply(json!({"webmcpHost": 1, "ok": true, "requests": listed})),
            &L,
        )
        .expect("read");
        assert_eq!(watched.len(), MAX_WATCHED);
        assert_eq!((watched[0].0.as_str(), watched[0].1.len()), ("POST", 500));
        assert_eq!(watched[1], ("GET".to_owned(), "/0".to_owned()));
        assert!(parse_watched(&Reply::TimedOut, &L).is_err());
        assert_eq!(
            FrameRequest::Watch { on: true }.to_message(),
            json!({"webmcpHost": 1, "op": "watch", "on": true})
        );
    }

    #[test]
    fn requests_carry_the_protocol_key() {
        let mut args = Map::new();
        args.insert("q".into(), json!("x"));
        assert_eq!(
            FrameRequest::CallTool {
                name: "find".into(),
                args: args.clone(),
                confirm: None,
                call: None,
                within_ms: Some(500),
                version: None,
            }
            .to_message(),
            json!({"webmcpHost": 1, "op": "callTool", "name": "find", "args": {"q": "x"}})
        );
        assert_eq!(
            FrameRequest::Cancel { call: "c1".into() }.to_message(),
            json!({"webmcpHost": 1, "op": "cancel", "call": "c1"})
        );
        let asked = FrameRequest::CallTool {
            name: "find".into(),
            args,
            confirm: Some("Allow?".into()),
            call: Some("c1".into()),
            within_ms: Some(500),
            version: Some(3),
        }
        .to_message();
        // A confirmed call says how long its caller waits: allowed later, it does not run.
        assert_eq!(
            (asked["confirm"].clone(), asked["within"].clone()),
            (json!("Allow?"), json!(500))
        );
        // It names the version of the tool it was decided on.
        assert_eq!(asked["version"], json!(3));
        assert_eq!(
            FrameRequest::ListTools.to_message(),
            json!({"webmcpHost": 1, "op": "listTools"})
        );
    }

    #[test]
    fn a_dom_query_asks_each_selector_and_attribute() {
        let asked = FrameRequest::QueryDom {
            queries: vec![
                DomQuery {
                    selector: "#total".into(),
                    attribute: None,
                },
                DomQuery {
                    selector: "a.next".into(),
                    attribute: Some("href".into()),
                },
            ],
        };
        assert_eq!(asked.op(), "queryDom");
        assert_eq!(
            asked.to_message(),
            json!({"webmcpHost": 1, "op": "queryDom", "queries": [
                {"selector": "#total"},
                {"selector": "a.next", "attribute": "href"},
            ]})
        );
    }

    #[test]
    fn a_dom_reply_is_read_one_result_per_query() {
        let raw = json!({"ok": true, "results": [
            {"count": 2, "text": "Total: 3", "attribute": "/next"},
            {"count": 0},
            {"error": "invalid selector: 'a[' is not a valid selector"},
        ]})
        .to_string();
        assert_eq!(
            parse_dom_reply(&raw, 3),
            Ok(vec![
                DomObserved {
                    count: 2,
                    text: Some("Total: 3".into()),
                    attribute: Some("/next".into()),
                    error: None,
                },
                DomObserved {
                    count: 0,
                    text: None,
                    attribute: None,
                    error: None,
                },
                DomObserved {
                    count: 0,
                    text: None,
                    attribute: None,
                    error: Some("invalid selector: 'a[' is not a valid selector".into()),
                },
            ])
        );
        assert_eq!(
            parse_dom_reply(r#"{"ok":true,"results":[]}"#, 0),
            Ok(vec![])
        );
    }

    #[test]
    fn a_malformed_dom_reply_is_refused() {
        let refused = |raw: &str, asked: usize| parse_dom_reply(raw, asked).unwrap_err();
        assert_eq!(
            refused("{", 1),
            "the page's answer to the DOM queries is not JSON"
        );
        assert_eq!(
            refused("[]", 1),
            "the page's answer to the DOM queries is an array, not an object"
        );
        // Not ok: the frame's own message, capped.
        let long = "e".repeat(1_000);
        let failed = json!({"ok": false, "error": {"name": "TypeError", "message": long}});
        assert_eq!(refused(&failed.to_string(), 1).chars().count(), 300);
        assert_eq!(
            refused(r#"{"ok":false}"#, 1),
            "the page could not run the DOM queries"
        );
        assert_eq!(
            refused(r#"{"ok":"yes","results":[]}"#, 0),
            "the page could not run the DOM queries"
        );
        assert_eq!(
            refused(r#"{"ok":true}"#, 1),
            "the page's `results` is null, not an array"
        );
        assert_eq!(
            refused(r#"{"ok":true,"results":{}}"#, 1),
            "the page's `results` is an object, not an array"
        );
        assert_eq!(
            refused(r#"{"ok":true,"results":[{"count":1}]}"#, 2),
            "the page answered 1 DOM queries of the 2 asked"
        );
        assert_eq!(
            refused(r#"{"ok":true,"results":[{"count":1},{"count":1}]}"#, 1),
            "the page answered 2 DOM queries of the 1 asked"
        );
        for (entry, why) in [
            ("7", "the page's result 0 is a number, not an object"),
            (
                "{}",
                "the page's result 0 has no `count` (a whole number at least 0)",
            ),
            (
                r#"{"count":-1}"#,
                "the page's result 0 has no `count` (a whole number at least 0)",
            ),
            (
                r#"{"count":1.5}"#,
                "the page's result 0 has no `count` (a whole number at least 0)",
            ),
            (
                r#"{"count":"3"}"#,
                "the page's result 0 has no `count` (a whole number at least 0)",
            ),
            (
                r#"{"count":1,"text":7}"#,
                "the page's result 0: `text` is a number, not a string",
            ),
            (
                r#"{"count":1,"attribute":{}}"#,
                "the page's result 0: `attribute` is an object, not a string",
            ),
            (
                r#"{"error":true}"#,
                "the page's result 0: `error` is a boolean, not a string",
            ),
        ] {
            assert_eq!(
                refused(&format!(r#"{{"ok":true,"results":[{entry}]}}"#), 1),
                why,
                "{entry}"
            );
        }
    }

    #[test]
    fn a_dom_reply_is_capped() {
        let cap = crate::core::limits::DOM_TEXT_CHARS;
        let long = "é".repeat(cap + 50);
        let raw = json!({"ok": true, "results": [
            {"count": 1, "text": long, "attribute": long},
            {"error": long},
        ]})
        .to_string();
        let observed = parse_dom_reply(&raw, 2).unwrap();
        let chars = |s: &Option<String>| s.as_deref().map(|s| s.chars().count());
        assert_eq!(chars(&observed[0].text), Some(cap));
        assert_eq!(chars(&observed[0].attribute), Some(cap));
        assert_eq!(chars(&observed[1].error), Some(300));
    }

    #[test]
    fn a_target_names_its_document_when_known() {
        let bound = Target {
            frame_id: 3,
            document_id: Some("D1".into()),
        };
        assert_eq!(bound.options(), json!({"frameId": 3, "documentId": "D1"}));
        assert_eq!(Target::TOP.options(), json!({"frameId": 0}));
    }

    #[test]
    fn listing_reads_the_version_of_each_kept_tool() {
        let raw = r#"{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test",
                      "tools":[{"name":"t","version":4},{"name":"t","version":9},
                               {"name":"u","version":"5"},{"name":"bad name","version":6},
                               {"name":"v","version":-1},{"name":"w","version":7}]}"#;
        let listing = parse_listing(raw, 0, &L).unwrap();
        let versions: Vec<_> = listing.versions.into_iter().collect();
        assert_eq!(versions, [("t".to_owned(), 4), ("w".to_owned(), 7)]);
    }

    #[test]
    fn a_listing_says_loading_only_while_its_document_is_parsed() {
        for (state, loading) in [
            (r#""loading""#, true),
            (r#""interactive""#, false),
            (r#""complete""#, false),
            ("7", false),
            ("null", false),
        ] {
            let raw = format!(
                r#"{{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test","readyState":{state},"tools":[]}}"#
            );
            assert_eq!(
                parse_listing(&raw, 0, &L).unwrap().loading,
                loading,
                "{state}"
            );
        }
        let older = r#"{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test","tools":[]}"#;
        assert!(
            !parse_listing(older, 0, &L).unwrap().loading,
            "no readyState: loaded"
        );
    }

    #[test]
    fn listing_reads_tools_and_their_frame() {
        let raw = r#"{"ok":true,"supported":true,"url":"http://a.test/x","origin":"http://a.test",
                      "tools":[{"name":"t","description":"d"}]}"#;
        let listing = parse_listing(raw, 4, &L).unwrap();
        assert!(listing.supported);
        assert_eq!(listing.tools.tools[0].origin, "http://a.test");
        assert_eq!(listing.tools.tools[0].frame_id, 4);
        assert!(!listing.polyfilled);
        assert!(!listing.tools.tools[0].annotations.consequential_hint);
    }

    #[test]
    fn a_polyfilled_listing_confirms_what_is_not_read_only() {
        let raw = r#"{"ok":true,"supported":true,"polyfilled":true,"origin":"http://a.test",
                      "tools":[{"name":"close","origin":"https://bank.example"},
                               {"name":"read","annotations":{"readOnlyHint":true}}]}"#;
        let listing = parse_listing(raw, 0, &L).unwrap();
        assert!(listing.polyfilled);
        let tools = &listing.tools.tools;
        assert_eq!(tools[0].origin, "http://a.test");
        assert!(tools[0].annotations.consequential_hint);
        assert!(
            tools[0].annotations.hints_unknown,
            "raised by the host, not said by the page"
        );
        assert!(!tools[1].annotations.consequential_hint);
        assert_eq!(listing.polyfill, Some("unknown"));
    }

    #[test]
    fn a_polyfill_that_keeps_hints_is_read_as_native_and_one_that_drops_them_is_not() {
        let raw = |polyfill: &str| {
            format!(
                r#"{{"ok":true,"supported":true,"polyfilled":true,"polyfill":{polyfill},"origin":"http://a.test",
                    "tools":[{{"name":"remove_topping"}},
                             {{"name":"order","annotations":{{"consequentialHint":true}}}},
                             {{"name":"read","annotations":{{"readOnlyHint":true}}}}]}}"#
            )
        };
        let hints = |listing: &FrameListing| -> Vec<(bool, bool)> {
            let tools = &listing.tools.tools;
            tools
                .iter()
                .map(|t| {
                    (
                        t.annotations.consequential_hint,
                        t.annotations.hints_unknown,
                    )
                })
                .collect()
        };
        // Google's demo polyfill passes every annotation on: its hints are the page's word.
        let google = parse_listing(&raw(r#""google-demo""#), 0, &L).unwrap();
        assert_eq!(google.polyfill, Some("google-demo"));
        // Each tool names the polyfill that served it (the popup's "polyfilled" badge).
        assert!(google
            .tools
            .tools
            .iter()
            .all(|t| t.polyfill == Some("google-demo")));
        assert_eq!(
            hints(&google),
            [(false, false), (true, false), (false, false)]
        );
        // @mcp-b drops consequentialHint; a name the host does not know is "unknown": every tool
        // not read-only is asked, and those the page did not mark say "hints unknown".
        for (given, named) in [
            (r#""mcp-b""#, "mcp-b"),
            (r#""made-up""#, "unknown"),
            ("7", "unknown"),
        ] {
            let listing = parse_listing(&raw(given), 0, &L).unwrap();
            assert_eq!(listing.polyfill, Some(named), "{given}");
            assert_eq!(
                hints(&listing),
                [(true, true), (true, false), (false, false)],
                "{given}"
            );
        }
        // A native listing names no polyfill, whatever it says.
        let native = r#"{"ok":true,"supported":true,"polyfill":"google-demo","origin":"http://a.test","tools":[{"name":"x"}]}"#;
        let native = parse_listing(native, 0, &L).unwrap();
        assert_eq!(native.polyfill, None);
        assert_eq!(native.tools.tools[0].polyfill, None);
        assert_eq!(hints(&native), [(false, false)]);
    }

    #[test]
    fn a_declarative_tools_form_is_listed_as_read_and_capped() {
        let long = "x".repeat(5000);
        let raw = format!(
            r#"{{"ok":true,"supported":true,"origin":"http://a.test","tools":[
                {{"name":"book","form":{{"autoSubmit":true,"navigates":true,"action":"http://a.test/{long}","target":"_blank"}}}},
                {{"name":"search","form":{{"autoSubmit":"yes"}}}},
                {{"name":"plain","form":7}},
                {{"name":"imperative"}}]}}"#
        );
        let listing = parse_listing(&raw, 0, &L).unwrap();
        let forms: Vec<_> = listing.tools.tools.iter().map(|t| t.form.clone()).collect();
        let book = forms[0].as_ref().expect("a form");
        assert!(book.auto_submit && book.navigates);
        assert_eq!(
            book.action.len(),
            crate::core::limits::MAX_FORM_ACTION_BYTES
        );
        assert_eq!(book.target, "_blank");
        // Only `true` is true; a form field that is not an object is no form; the tool stays.
        let search = forms[1].as_ref().expect("a form");
        assert!(!search.auto_submit && !search.navigates && search.action.is_empty());
        assert_eq!(forms[2], None);
        assert_eq!(forms[3], None);
        let json = serde_json::to_value(&listing.tools.tools[1]).unwrap();
        assert_eq!(
            json["form"],
            serde_json::json!({"autoSubmit": false, "navigates": false})
        );
        assert!(serde_json::to_value(&listing.tools.tools[3])
            .unwrap()
            .get("form")
            .is_none());
    }

    #[test]
    fn listing_errors_are_clear() {
        assert!(matches!(
            parse_listing("[]", 0, &L),
            Err(BridgeError::Malformed { .. })
        ));
        assert!(matches!(
            parse_listing("{", 0, &L),
            Err(BridgeError::Malformed { .. })
        ));
        let e = parse_listing(r#"{"ok":true,"tools":{}}"#, 0, &L).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the frame's reply is malformed: `tools` is an object, not an array"
        );
        let small = Limits {
            max_message_bytes: 10,
            ..L
        };
        let e = parse_listing(r#"{"ok":true,"tools":[]}"#, 0, &small).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the frame's reply is 22 bytes, over the cap of 10 (max_message_bytes)"
        );
    }

    #[test]
    fn call_outcomes() {
        assert_eq!(
            parse_call_reply(r#"{"ok":true,"result":"42"}"#, &L),
            Ok(CallOutcome::Text {
                text: "42".into(),
                text_input: false
            })
        );
        assert_eq!(
            parse_call_reply(
                r#"{"ok":true,"result":null,"url":"http://a.test/next"}"#,
                &L
            ),
            Ok(CallOutcome::Navigated {
                url: Some("http://a.test/next".into())
            })
        );
        assert_eq!(
            parse_call_reply(
                r#"{"ok":false,"error":{"name":"UnknownError","message":"boom"}}"#,
                &L
            ),
            Ok(CallOutcome::Failed {
                name: "UnknownError".into(),
                message: "boom".into()
            })
        );
        assert!(parse_call_reply(r#"{"ok":true}"#, &L).is_err());
        assert!(parse_call_reply(r#"{"ok":true,"result":{"a":1}}"#, &L).is_err());
        let small = Limits {
            max_result_bytes: 3,
            ..L
        };
        assert_eq!(
            parse_call_reply(r#"{"ok":true,"result":"1234"}"#, &small)
                .unwrap_err()
                .to_string(),
            "the frame's result is 4 bytes, over the cap of 3 (max_result_bytes)"
        );
    }
}
