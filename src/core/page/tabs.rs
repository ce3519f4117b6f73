//! What a tab offers: every frame's answer to `listTools`, merged into one list in frame order,
//! and the resolution of a call's tool name (by frame when several frames offer it).
//! Invariant: only the top frame's failure to answer is a problem; other frames without our
//! content script are skipped silently. A frame whose reported origin is not the origin of its
//! URL as Chrome lists it gives no tools (its tools' origin is Chrome's, never the page's word).

use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

/// A tab's listing as every machine gets it: the tools, shared (never parsed again from
/// `listTools`' JSON), or why the tab could not be listed.
pub type Listed = Result<Rc<TabTools>, String>;

/// How the error of a call to a tool the tab does not offer begins (the call was not made).
pub const NO_SUCH_TOOL: &str = "no page tool named";

/// The tool names a tab offers, as an error says them: each once, in listing order, at most
/// `most` of them (then "and N more"), or "none".
pub fn offered<'a>(names: impl IntoIterator<Item = &'a str>, most: usize) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    let more = unique.len().saturating_sub(most);
    unique.truncate(most);
    match (unique.is_empty(), more) {
        (true, _) => "none".to_owned(),
        (false, 0) => unique.join(", "),
        (false, n) => format!("{} and {n} more", unique.join(", ")),
    }
}

use std::collections::BTreeMap;

use super::bridge::{parse_listing, BridgeError, FrameListing, Reply, Target};
use super::tool::{PageTool, ToolProblem};
use crate::core::limits::{Limits, FRAME_LIST_MS, MAX_TOOLS_PER_TAB};

/// A frame of a tab and what came of asking it for its tools.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameAnswer {
    /// The frame's id (0: the top frame).
    pub frame_id: i64,
    /// The frame's URL.
    pub url: String,
    /// Its listing, or why it gave none.
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
    /// The frame reported an origin other than its URL's as Chrome lists it.
    Origin {
        /// The origin the frame reported.
        reported: String,
        /// The origin of the frame's URL as Chrome lists it.
        chrome: String,
    },
}

/// A frame of a tab, as `chrome.webNavigation.getAllFrames` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The frame's id (0: the top frame).
    pub frame_id: i64,
    /// The frame's URL.
    pub url: String,
    /// The document it holds (`documentId`), when Chrome says.
    pub document_id: Option<String>,
}

impl Frame {
    /// Where a message to this frame's document goes.
    pub fn target(&self) -> Target {
        Target {
            frame_id: self.frame_id,
            document_id: self.document_id.clone(),
        }
    }
}

/// The frames of tab `tab_id` from `getAllFrames`' answer: entries without a numeric
/// `frameId` are skipped; `null` means the tab is gone or its frames are not known yet.
pub fn frames(tab_id: i64, listed: &Value) -> Result<Vec<Frame>, String> {
    let Value::Array(items) = listed else {
        return Err(format!(
            "tab {tab_id}: no such tab, or its frames are not known yet"
        ));
    };
    Ok(items
        .iter()
        .filter_map(|frame| {
            Some(Frame {
                frame_id: frame.get("frameId")?.as_f64()? as i64,
                url: frame
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                document_id: frame
                    .get("documentId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect())
}

/// A frame's reply to `listTools` as its answer: the listing, a breach of the protocol, or
/// why it did not get there or back (within [`FRAME_LIST_MS`]).
pub fn listing(frame: Frame, reply: Reply) -> FrameAnswer {
    let answer = match reply {
        Reply::Answered(Ok(text)) => parse_listing(&text, frame.frame_id, &Limits::DEFAULT)
            .map_err(FrameFailure::Bridge)
            .and_then(|listing| chrome_origin(&frame, listing))
            .map(|listing| FrameListing {
                document_id: frame.document_id.clone(),
                ..listing
            }),
        Reply::Answered(Err(e)) | Reply::Failed(e) => Err(FrameFailure::Unreachable(e)),
        Reply::TimedOut => Err(FrameFailure::Unreachable(format!(
            "no answer within {FRAME_LIST_MS} ms"
        ))),
    };
    FrameAnswer {
        frame_id: frame.frame_id,
        url: frame.url,
        answer,
    }
}

/// A listing whose origin is the one Chrome gives its frame's URL (an http(s) URL; another,
/// such as `about:blank`, inherits an origin Chrome does not list, and the content script's own
/// `location.origin` stands).
fn chrome_origin(frame: &Frame, listing: FrameListing) -> Result<FrameListing, FrameFailure> {
    match crate::core::url::http_origin(&frame.url) {
        Some(chrome) if chrome != listing.origin => Err(FrameFailure::Origin {
            reported: listing.origin,
            chrome,
        }),
        _ => Ok(listing),
    }
}

/// All tools of a tab: every frame's, in frame order, with what was skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TabTools {
    /// Every frame's tools, in frame order.
    pub tools: Vec<PageTool>,
    /// What was skipped, and why.
    pub problems: Vec<ToolProblem>,
    /// The document each frame listed its tools from (by frame id), where Chrome named it: a
    /// call goes to that document or nowhere.
    #[serde(skip)]
    pub documents: BTreeMap<i64, String>,
    /// Each answering frame's WebMCP (by frame id): `native`, `polyfill` (the tools came from
    /// the page's own world) or `none` (no `document.modelContext`).
    #[serde(skip)]
    pub webmcp: BTreeMap<i64, &'static str>,
    /// Each tool's version as its frame numbered it (by frame id and name): a call carries it,
    /// and the frame runs the tool only while its definition is still that one.
    #[serde(skip)]
    pub versions: BTreeMap<(i64, String), u64>,
    /// The page under test: the top frame's, when it answered (`listTools`' `page`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<TopPage>,
}

/// The top frame's page: its URL and origin as Chrome lists them, its title as the page set
/// it (page text, shown as text only).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopPage {
    /// The URL.
    pub url: String,
    /// Its origin.
    pub origin: String,
    /// `document.title`, at most 200 characters.
    pub title: String,
    /// Present (`true`) while the document was still loading when it answered.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub loading: bool,
}

impl TabTools {
    /// `listTools`' value: `{tools, problems}` (a list that cannot be written is a problem).
    pub fn response(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|e| {
            serde_json::json!({"tools": [], "problems": [{"frameId": 0, "message": e.to_string()}]})
        })
    }

    /// [`TabTools::response`] as JSON text, written straight from the tools.
    pub fn response_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.response().to_string())
    }

    /// Merges the frames' answers (in frame order).
    pub fn from_frames(mut frames: Vec<FrameAnswer>) -> TabTools {
        frames.sort_by_key(|f| f.frame_id);
        let mut out = TabTools::default();
        for frame in frames {
            match frame.answer {
                Ok(listing) => {
                    let mode = match (listing.supported, listing.polyfilled) {
                        (false, _) => "none",
                        (true, true) => "polyfill",
                        (true, false) => "native",
                    };
                    out.webmcp.insert(frame.frame_id, mode);
                    if frame.frame_id == 0 {
                        out.page = Some(TopPage {
                            url: frame.url.clone(),
                            origin: listing.origin.clone(),
                            title: listing.title.clone(),
                            loading: listing.loading,
                        });
                    }
                    if let Some(document) = listing.document_id {
                        out.documents.insert(frame.frame_id, document);
                    }
                    for (name, version) in listing.versions {
                        out.versions.insert((frame.frame_id, name), version);
                    }
                    let room = MAX_TOOLS_PER_TAB.saturating_sub(out.tools.len());
                    let offered = listing.tools.tools.len();
                    out.tools.extend(listing.tools.tools.into_iter().take(room));
                    out.problems.extend(listing.tools.problems);
                    if offered > room {
                        out.problems.push(ToolProblem {
                            frame_id: frame.frame_id,
                            tool: None,
                            message: format!(
                                "frame {} ({}): {} of its {offered} tools left out: a tab offers at most {MAX_TOOLS_PER_TAB} tools, all its frames together (max_tools_per_tab)",
                                frame.frame_id,
                                frame.url,
                                offered - room
                            ),
                        });
                    }
                }
                // A frame that never had our content script (about:blank of an ad, a frame
                // loaded before the extension) is not a problem unless it is the top frame.
                Err(FrameFailure::Unreachable(_)) if frame.frame_id != 0 => {}
                Err(failure) => {
                    let why = match failure {
                        FrameFailure::Bridge(e) => e.to_string(),
                        FrameFailure::Unreachable(message) => format!("no answer: {message}"),
                        FrameFailure::Origin { reported, chrome } => format!(
                            "it reports the origin {reported}, but Chrome lists it at {chrome}; its tools are not used"
                        ),
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

    /// The top frame's page as a run records it (`{url, origin, documentId?}`), when the top
    /// frame answered.
    pub fn top_page(&self) -> Option<Value> {
        let top = self.page.as_ref()?;
        let mut page = serde_json::json!({"url": top.url, "origin": top.origin});
        if let Some(document) = self.documents.get(&0) {
            page["documentId"] = Value::String(document.clone());
        }
        Some(page)
    }

    /// Where a call of `tool` goes: its frame, and the document it was listed from.
    pub fn target(&self, tool: &PageTool) -> Target {
        Target {
            frame_id: tool.frame_id,
            document_id: self.documents.get(&tool.frame_id).cloned(),
        }
    }

    /// The version of `tool` as its frame listed it, if the frame numbered it.
    pub fn version(&self, tool: &PageTool) -> Option<u64> {
        self.versions
            .get(&(tool.frame_id, tool.name.clone()))
            .copied()
    }

    /// The tool a call means: by name, and by frame when several frames offer the name.
    pub fn resolve(&self, name: &str, frame_id: Option<i64>) -> Result<&PageTool, String> {
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
                let known = offered(self.tools.iter().map(|t| t.name.as_str()), usize::MAX);
                Err(format!(
                    "{NO_SUCH_TOOL} `{name}`{place}; the tab offers: {known}"
                ))
            }
            several => {
                let frames: Vec<String> = several
                    .iter()
                    .map(|t| format!("frame {} ({})", t.frame_id, t.origin))
                    .collect();
                Err(format!(
                    "`{name}` is offered by {}; pass `frameId` to choose",
                    frames.join(" and ")
                ))
            }
        }
    }
}

/// Whether the top frame has no content script that hears the worker: the tab predates this
/// worker's extension (installed, reloaded or updated since), so its scripts are orphaned; the
/// shell injects the bridge once and asks again.
pub fn orphaned(answers: &[FrameAnswer]) -> bool {
    answers.iter().any(|a| {
        a.frame_id == 0 && matches!(&a.answer, Err(FrameFailure::Unreachable(m)) if undelivered(m))
    })
}

/// Whether Chrome's words for a failed message say it reached no listener: nothing ran (no
/// content script there, or the frame no longer holds the document the message names).
pub fn undelivered(failure: &str) -> bool {
    failure.contains("Receiving end does not exist")
}

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;
