//! The look for a call's destination, once it left its document: a tab the call opened, the
//! top frame's new document, or a frame a form that targets it loaded (the top page stays);
//! then that document's tools and result (its JSON-LD, read by its own content script), another
//! origin named. Waits are steps; time is counted in polls, up to [`DESTINATION_MS`].

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::core::expose::origin_of_url;
use crate::core::limits::MAX_PAGE_RESULT_BYTES;
use crate::core::page::bridge::PageResult;

/// Where the look for a navigation's destination stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Look {
    /// List the tabs (one the call opened wins).
    Tabs,
    /// Read the tab's top frame: did its document change?
    Moved { tabs: Vec<Tab> },
    /// Read the destination's top frame for its URL.
    Url { tab_id: i64, opened: Option<i64> },
    /// List the destination's tools.
    Tools {
        tab_id: i64,
        opened: Option<i64>,
        url: Option<String>,
    },
    /// The top frame did not move: did another frame load a document (a form that targets
    /// it)?
    Frames,
    /// Read the result of the document the call loaded.
    Result {
        tab_id: i64,
        target: Target,
        opened: Option<i64>,
        url: Option<String>,
        tools: Option<Vec<String>>,
        /// A frame's document (the top page stays), not a navigation.
        frame: bool,
    },
    /// Not there yet: pause.
    Wait,
    /// Time is up: the tab's URL, as it is.
    Last,
}

impl PageCall {
    pub(super) fn look(
        &self,
        sent: Sent,
        outcome: CallOutcome,
        waited: u32,
        look: Look,
        input: Input,
    ) -> State {
        let tab_id = self.request.tab_id;
        let next = |look| State::Destination {
            sent: sent.clone(),
            outcome: outcome.clone(),
            waited,
            look,
        };
        // The navigation's answer: where it went, what the destination offers.
        let navigated = |url: Option<String>, tools: Option<Vec<String>>, opened: Option<i64>| {
            let reported = match &outcome {
                CallOutcome::Navigated { url } => url.clone(),
                _ => None,
            };
            Destination {
                url: url.or(reported),
                tools,
                opened_tab: opened,
                ..Destination::default()
            }
        };
        match (look, input) {
            (Look::Tabs, Input::Tabs(tabs)) => {
                let opened = tabs
                    .iter()
                    .find(|t| sent.newest.is_some_and(|n| t.id > n) && t.opener == Some(tab_id));
                match opened {
                    Some(tab) if tab.complete => next(Look::Url {
                        tab_id: tab.id,
                        opened: Some(tab.id),
                    }),
                    Some(_) => next(Look::Wait),
                    None => next(Look::Moved { tabs }),
                }
            }
            (Look::Moved { tabs }, Input::Frame(now)) => {
                let before = sent.before.as_ref().and_then(|b| b.document_id.clone());
                let moved = now.as_ref().is_some_and(|n| n.document_id != before);
                let complete = tabs.iter().any(|t| t.id == tab_id && t.complete);
                if moved && complete {
                    next(Look::Url {
                        tab_id,
                        opened: None,
                    })
                } else if moved {
                    next(Look::Wait)
                } else {
                    next(Look::Frames)
                }
            }
            (Look::Frames, Input::Frames(frames)) => {
                match loaded_frame(&frames, &self.listed_documents) {
                    Some(frame) => next(Look::Result {
                        tab_id,
                        target: frame.target(),
                        opened: None,
                        url: Some(frame.url.clone()).filter(|u| !u.is_empty()),
                        tools: None,
                        frame: true,
                    }),
                    None => next(Look::Wait),
                }
            }
            (Look::Url { tab_id, opened }, Input::Frame(frame)) => next(Look::Tools {
                tab_id,
                opened,
                // (A tab's own URL needs the "tabs" permission; its top frame's does not.)
                url: frame.map(|f| f.url).filter(|u| !u.is_empty()),
            }),
            (
                Look::Tools {
                    tab_id,
                    opened,
                    url,
                },
                Input::Tools(tools),
            ) => next(Look::Result {
                tab_id,
                target: Target {
                    frame_id: 0,
                    document_id: tools
                        .as_ref()
                        .ok()
                        .and_then(|found| found.documents.get(&0).cloned()),
                },
                opened,
                url,
                tools: tools
                    .ok()
                    .map(|found| found.tools.iter().map(|t| t.name.clone()).collect()),
                frame: false,
            }),
            (
                Look::Result {
                    opened,
                    url,
                    tools,
                    frame,
                    target,
                    ..
                },
                Input::Reply(Ok(reply)),
            ) => {
                let read = parse_page_result(&reply, &Limits::DEFAULT);
                match frame {
                    true => State::Done(frame_response(
                        &sent.tool,
                        target.frame_id,
                        url,
                        read,
                    )),
                    false => {
                        let mut to = navigated(url.clone(), tools, opened);
                        with_destination_result(&mut to, &sent.tool, url.as_deref(), read);
                        State::Done(Ended::Navigated(to).into())
                    }
                }
            }
            // Not there yet (its content script not listening, or its load still going): look
            // again, within the destination's time.
            (
                Look::Result { .. },
                Input::Reply(Err(_)) | Input::ChannelFailed(_) | Input::Timeout,
            ) => next(Look::Wait),
            (Look::Wait, Input::Performed) => {
                let waited = waited + DESTINATION_POLL_MS;
                State::Destination {
                    look: if waited < DESTINATION_MS {
                        Look::Tabs
                    } else {
                        Look::Last
                    },
                    sent,
                    outcome,
                    waited,
                }
            }
            (Look::Last, Input::Frame(frame)) => {
                let mut to = navigated(frame.map(|f| f.url), None, None);
                to.result_note = Some(format!(
                    "the destination gave no result within {} s",
                    DESTINATION_MS / 1000
                ));
                State::Done(Ended::Navigated(to).into())
            }
            (look, input) => State::Done(CallAnswer::of(&Err(format!(
                "the host fed the page call {input:?} while it looked for the destination ({look:?}), which did not ask for it (a bug in the host)"
            )))),
        }
    }
}

/// The frame (not the top one) that holds a document it was not listed with: the one a call
/// loaded (a form that targets it). A frame Chrome names no document for is not judged.
fn loaded_frame<'a>(frames: &'a [Frame], listed: &BTreeMap<i64, String>) -> Option<&'a Frame> {
    frames.iter().find(|frame| {
        frame.frame_id != 0
            && frame
                .document_id
                .as_ref()
                .is_some_and(|document| listed.get(&frame.frame_id) != Some(document))
    })
}

/// Whether `url` is on another origin than the tool that was called.
fn cross_origin(tool: &PageTool, url: Option<&str>) -> Option<String> {
    let origin = origin_of_url(url?)?;
    (origin != tool.origin).then_some(origin)
}

/// The answer of a call whose result loaded in a frame (the top page stays): the frame
/// document's JSON-LD, else its title and main text, as the result's text, with the frame that
/// answered.
fn frame_response(
    tool: &PageTool,
    frame_id: i64,
    url: Option<String>,
    read: Result<PageResult, String>,
) -> CallAnswer {
    let read = match read {
        Ok(read) => read,
        Err(error) => {
            return CallAnswer::failed(format!(
                "`{}` loaded its result in frame {frame_id}, which could not be read: {error}",
                tool.name
            ))
        }
    };
    let result = read
        .json_ld_value()
        .unwrap_or_else(|| json!({"title": read.title, "text": read.text}));
    let url = url.unwrap_or(read.url);
    let cross_origin = cross_origin(tool, Some(&url));
    Ended::InFrame {
        frame_id,
        url,
        text: result.to_string(),
        cross_origin,
    }
    .into()
}

/// A navigation's answer given the destination's result: its JSON-LD as the result's text,
/// or a note that it has none (or could not be read); `cross_origin` names the destination's
/// origin when it is not the tool's.
fn with_destination_result(
    to: &mut Destination,
    tool: &PageTool,
    url: Option<&str>,
    read: Result<PageResult, String>,
) {
    match read {
        Ok(read) => match read.json_ld_value() {
            Some(value) => to.result = Some(value.to_string()),
            None => {
                to.result_note = Some(format!(
                    "the destination has no JSON-LD (script[type=\"application/ld+json\"]){}",
                    match read.skipped {
                        0 => String::new(),
                        n => format!("; {n} unreadable or over {MAX_PAGE_RESULT_BYTES} bytes"),
                    }
                ))
            }
        },
        Err(error) => {
            to.result_note = Some(format!(
                "the destination's result could not be read: {error}"
            ))
        }
    }
    if let Some(origin) = cross_origin(tool, url) {
        to.cross_origin = Some(origin);
    }
}
