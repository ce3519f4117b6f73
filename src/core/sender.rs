//! Who sent a message to the worker, and what each kind of sender may ask.
//!
//! Chrome fills a message's `sender` from the sending process, so a page cannot choose what
//! it says; but a compromised renderer can speak as our content script. Every message the
//! worker takes is therefore classified ([`classify`]), parsed into an [`Op`] ([`parse_op`])
//! and checked against the allow-list of its sender's kind ([`authorize`]) before anything
//! runs. Privileged operations come only from the extension's own pages.

use std::fmt;

use serde_json::Value;

use super::api::{CallToolRequest, ListToolsRequest, RequestError};
use super::expose::CallExposedRequest;
use super::tool::kind;

/// The fields of Chrome's `MessageSender` the checks need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderInfo {
    /// The sending extension's id.
    pub id: Option<String>,
    pub url: Option<String>,
    pub origin: Option<String>,
    pub tab_id: Option<i64>,
    pub frame_id: Option<i64>,
}

/// The kinds of sender the worker tells apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sender {
    /// A page of this extension (popup, side panel, options), in a tab or not.
    ExtensionPage,
    /// This extension's content script in a frame of a tab.
    ContentScript {
        tab_id: i64,
        frame_id: i64,
        url: String,
    },
    /// Anything else: another extension, a context without a tab, a mismatched origin.
    Unknown { reason: String },
}

/// Classifies a sender; `own_id` is this extension's id (`chrome.runtime.id`).
pub fn classify(own_id: &str, info: &SenderInfo) -> Sender {
    let unknown = |reason: String| Sender::Unknown { reason };
    match info.id.as_deref() {
        Some(id) if id == own_id => {}
        Some(id) => return unknown(format!("the message comes from another extension ({id})")),
        None => return unknown("the message names no extension".into()),
    }
    let own_origin = format!("chrome-extension://{own_id}");
    let url = info.url.clone().unwrap_or_default();
    let from_own_origin = url_origin(&url) == Some(own_origin.as_str());
    if let Some(origin) = info.origin.as_deref() {
        // When Chrome reports both, they must agree, or we trust neither.
        if from_own_origin != (origin == own_origin) {
            return unknown(format!(
                "the sender's origin ({origin}) does not match its URL"
            ));
        }
    }
    if from_own_origin {
        return Sender::ExtensionPage;
    }
    match (info.tab_id, info.frame_id) {
        (Some(tab_id), Some(frame_id)) if tab_id >= 0 && frame_id >= 0 => Sender::ContentScript {
            tab_id,
            frame_id,
            url,
        },
        _ => unknown("the message comes from neither an extension page nor a tab".into()),
    }
}

/// `scheme://host[:port]` of a URL, when it has one.
fn url_origin(url: &str) -> Option<&str> {
    let rest_at = url.find("://")? + 3;
    let end = url[rest_at..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| rest_at + i);
    Some(&url[..end])
}

/// An operation a message asks the worker for.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// The host's version.
    Version,
    ListTools(ListToolsRequest),
    CallTool(CallToolRequest),
    /// The MCP tools exposed to the sender's origin (a content script's, see `expose`).
    ExposedTools,
    /// Runs one of them.
    CallExposed(CallExposedRequest),
    /// A frame's tools changed (its `toolchange`, debounced): the person's side lists again.
    ToolsChanged,
}

impl Op {
    pub fn name(&self) -> &'static str {
        match self {
            Op::Version => "version",
            Op::ListTools(_) => "listTools",
            Op::CallTool(_) => "callTool",
            Op::ExposedTools => "exposedTools",
            Op::CallExposed(_) => "callExposed",
            Op::ToolsChanged => "toolsChanged",
        }
    }
}

/// Parses a runtime message `{op, ...}` into an operation.
pub fn parse_op(message: &Value) -> Result<Op, RequestError> {
    let op = match message.get("op") {
        Some(Value::String(op)) => op.as_str(),
        Some(other) => {
            return Err(RequestError(format!(
                "`op` must be a string, not {}",
                kind(other)
            )))
        }
        None => return Err(RequestError("the message has no `op`".into())),
    };
    match op {
        "version" => Ok(Op::Version),
        "listTools" => ListToolsRequest::parse(message).map(Op::ListTools),
        "callTool" => CallToolRequest::parse(message).map(Op::CallTool),
        "exposedTools" => Ok(Op::ExposedTools),
        "callExposed" => CallExposedRequest::parse(message).map(Op::CallExposed),
        "toolsChanged" => Ok(Op::ToolsChanged),
        other => Err(RequestError(format!(
            "unknown op `{}`; known: version, listTools, callTool, exposedTools, callExposed, toolsChanged",
            other.chars().take(64).collect::<String>()
        ))),
    }
}

/// Why a message was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

/// The allow-list: extension pages may ask for everything; content scripts, in a tab's top
/// frame, only for the MCP tools exposed to their page's origin (`exposedTools`,
/// `callExposed`: what they get is decided by the origin Chrome reports, never by the
/// message); otherwise they answer the worker, they do not command it; unknown senders may
/// ask for nothing.
pub fn authorize(sender: &Sender, op: &Op) -> Result<(), Refusal> {
    match sender {
        Sender::ExtensionPage => Ok(()),
        Sender::ContentScript { frame_id: 0, .. }
            if matches!(op, Op::ExposedTools | Op::CallExposed(_)) =>
        {
            Ok(())
        }
        // A notice, not a command: it only makes the person's side list the tab's tools again.
        Sender::ContentScript { .. } if matches!(op, Op::ToolsChanged) => Ok(()),
        Sender::ContentScript {
            tab_id, frame_id, ..
        } => Err(Refusal(format!(
            "`{}` may not be asked by a content script (tab {tab_id}, frame {frame_id})",
            op.name()
        ))),
        Sender::Unknown { reason } => Err(Refusal(reason.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: &str = "abcdefghijklmnopabcdefghijklmnop";

    fn info(url: &str, tab: Option<i64>) -> SenderInfo {
        SenderInfo {
            id: Some(ID.into()),
            url: Some(url.into()),
            origin: None,
            tab_id: tab,
            frame_id: tab.map(|_| 0),
        }
    }

    #[test]
    fn extension_pages_in_or_out_of_tabs() {
        let popup = format!("chrome-extension://{ID}/popup.html");
        assert_eq!(classify(ID, &info(&popup, None)), Sender::ExtensionPage);
        assert_eq!(
            classify(ID, &info(&format!("{popup}?tabId=4"), Some(9))),
            Sender::ExtensionPage
        );
    }

    #[test]
    fn content_scripts_and_strangers() {
        assert_eq!(
            classify(ID, &info("http://a.test/x", Some(4))),
            Sender::ContentScript {
                tab_id: 4,
                frame_id: 0,
                url: "http://a.test/x".into()
            }
        );
        assert!(matches!(
            classify(ID, &info("http://a.test/x", None)),
            Sender::Unknown { .. }
        ));
        let other = SenderInfo {
            id: Some("zzzz".into()),
            ..info("chrome-extension://zzzz/p.html", None)
        };
        assert!(
            matches!(classify(ID, &other), Sender::Unknown { reason } if reason.contains("another extension"))
        );
        let no_id = SenderInfo {
            id: None,
            ..info("http://a.test/", Some(1))
        };
        assert!(matches!(classify(ID, &no_id), Sender::Unknown { .. }));
    }

    #[test]
    fn a_page_url_that_only_looks_like_ours_is_not_ours() {
        let fake = format!("http://evil.test/chrome-extension://{ID}/popup.html");
        assert!(matches!(
            classify(ID, &info(&fake, Some(1))),
            Sender::ContentScript { .. }
        ));
        let fake_host = format!("chrome-extension://{ID}.evil.test/popup.html");
        assert!(matches!(
            classify(ID, &info(&fake_host, Some(1))),
            Sender::ContentScript { .. }
        ));
        let mismatch = SenderInfo {
            origin: Some("http://evil.test".into()),
            ..info(&format!("chrome-extension://{ID}/p.html"), None)
        };
        assert!(matches!(classify(ID, &mismatch), Sender::Unknown { .. }));
    }

    #[test]
    fn ops_parse_with_clear_errors() {
        assert_eq!(parse_op(&json!({"op": "version"})), Ok(Op::Version));
        assert!(matches!(
            parse_op(&json!({"op": "listTools", "tabId": 2})),
            Ok(Op::ListTools(_))
        ));
        assert_eq!(
            parse_op(&json!({})).unwrap_err().0,
            "the message has no `op`"
        );
        assert_eq!(
            parse_op(&json!({"op": "setKey"})).unwrap_err().0,
            "unknown op `setKey`; known: version, listTools, callTool, exposedTools, callExposed, toolsChanged"
        );
        assert_eq!(
            parse_op(&json!({"op": "exposedTools", "tabId": 3})),
            Ok(Op::ExposedTools)
        );
        assert!(matches!(
            parse_op(&json!({"op": "callExposed", "name": "add", "args": {"a": 1}})),
            Ok(Op::CallExposed(call)) if call.name == "add"
        ));
        assert!(parse_op(&json!({"op": "callExposed", "name": "add", "args": 1})).is_err());
    }

    #[test]
    fn a_top_frame_content_script_may_ask_only_for_exposed_tools() {
        let top = Sender::ContentScript {
            tab_id: 1,
            frame_id: 0,
            url: "http://a.test/".into(),
        };
        let sub = Sender::ContentScript {
            tab_id: 1,
            frame_id: 3,
            url: "http://a.test/".into(),
        };
        let listing = parse_op(&json!({"op": "exposedTools"})).unwrap();
        let call = parse_op(&json!({"op": "callExposed", "name": "add"})).unwrap();
        for op in [&listing, &call] {
            assert_eq!(authorize(&top, op), Ok(()));
            assert_eq!(authorize(&Sender::ExtensionPage, op), Ok(()));
            assert!(authorize(&Sender::Unknown { reason: "x".into() }, op).is_err());
        }
        assert_eq!(
            authorize(&sub, &call).unwrap_err().to_string(),
            "refused: `callExposed` may not be asked by a content script (tab 1, frame 3)"
        );
        let page_call = parse_op(&json!({"op": "callTool", "tabId": 1, "name": "buy"})).unwrap();
        assert!(authorize(&top, &page_call).is_err());
    }

    #[test]
    fn only_extension_pages_may_command() {
        let call = parse_op(&json!({"op": "callTool", "tabId": 1, "name": "buy"})).unwrap();
        assert_eq!(authorize(&Sender::ExtensionPage, &call), Ok(()));
        let cs = Sender::ContentScript {
            tab_id: 1,
            frame_id: 2,
            url: "http://a.test/".into(),
        };
        assert_eq!(
            authorize(&cs, &call).unwrap_err().to_string(),
            "refused: `callTool` may not be asked by a content script (tab 1, frame 2)"
        );
        assert!(authorize(&cs, &Op::Version).is_err());
        assert!(authorize(&Sender::Unknown { reason: "x".into() }, &Op::Version).is_err());
        // A notice of changed tools is the one thing any frame's content script may send.
        assert_eq!(authorize(&cs, &Op::ToolsChanged), Ok(()));
        assert!(authorize(&Sender::Unknown { reason: "x".into() }, &Op::ToolsChanged).is_err());
    }
}
