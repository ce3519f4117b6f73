//! Who sent a message to the worker, and what each kind of sender may ask.
//!
//! Chrome fills a message's `sender` from the sending process, so a page cannot choose what
//! it says; but a compromised renderer can speak as our content script. Every message the
//! worker takes is therefore classified ([`classify`]) and its operation checked against the
//! audience of that operation ([`authorize`], from [`OpName::audience`]) before its request is
//! even parsed. Privileged operations come only from the extension's own pages.

use std::fmt;

use super::name::{Audience, OpName};
use crate::core::expose::origin_of_url;

/// The fields of Chrome's `MessageSender` the checks need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderInfo {
    /// The sending extension's id.
    pub id: Option<String>,
    /// The sending document's URL.
    pub url: Option<String>,
    /// The sending document's origin, when Chrome reports it.
    pub origin: Option<String>,
    /// The sender's tab, when it is in one.
    pub tab_id: Option<i64>,
    /// The sender's frame in that tab.
    pub frame_id: Option<i64>,
}

/// The kinds of sender the worker tells apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sender {
    /// A page of this extension (popup, side panel, options), in a tab or not.
    ExtensionPage,
    /// This extension's content script in a frame of a tab.
    ContentScript {
        /// Its tab.
        tab_id: i64,
        /// Its frame (0: the top frame).
        frame_id: i64,
        /// Its frame's URL, as Chrome reported it.
        url: String,
        /// Its document's origin, as Chrome reported it (`"null"` for an opaque origin).
        origin: Option<String>,
    },
    /// Anything else: another extension, a context without a tab, a mismatched origin.
    Unknown {
        /// Why it is not trusted.
        reason: String,
    },
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
            origin: info.origin.clone(),
        },
        _ => unknown("the message comes from neither an extension page nor a tab".into()),
    }
}

/// `scheme://host[:port]` of a URL, when it has one.
fn url_origin(url: &str) -> Option<&str> {
    crate::core::url::origin_slice(url)
}

/// Why a message was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

impl Sender {
    /// The origin whose exposures a sender gets: a content script's document origin as Chrome
    /// reported it, when it is the origin of its URL too. A document without one (a sandboxed
    /// document's opaque `"null"`, a sender without an origin) has none; nothing else has one.
    pub fn page_origin(&self) -> Option<String> {
        match self {
            Sender::ContentScript {
                url,
                origin: Some(origin),
                ..
            } => {
                let of_url = origin_of_url(url)?;
                (origin_of_url(origin).as_ref() == Some(&of_url)).then_some(of_url)
            }
            _ => None,
        }
    }
}

/// The allow-list: extension pages may ask for everything; content scripts, in a tab's top
/// frame, only for the MCP tools exposed to their page's origin (`exposedTools`,
/// `callExposed`: what they get is decided by the origin Chrome reports, never by the
/// message), and from any frame the notice `toolsChanged`; otherwise they answer the worker,
/// they do not command it; unknown senders may ask for nothing.
pub fn authorize(sender: &Sender, op: OpName) -> Result<(), Refusal> {
    match (sender, op.audience()) {
        (Sender::ExtensionPage, _) => Ok(()),
        (Sender::ContentScript { frame_id: 0, .. }, Audience::TopFrame) => Ok(()),
        // A notice, not a command: it only makes the person's side list the tab's tools again.
        (Sender::ContentScript { .. }, Audience::AnyFrame) => Ok(()),
        (
            Sender::ContentScript {
                tab_id, frame_id, ..
            },
            _,
        ) => Err(Refusal(format!(
            "`{}` may not be asked by a content script (tab {tab_id}, frame {frame_id})",
            op.as_str()
        ))),
        (Sender::Unknown { reason }, _) => Err(Refusal(reason.clone())),
    }
}
