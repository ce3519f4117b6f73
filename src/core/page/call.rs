//! One page tool call as a sans-IO machine, for `callTool` and for the page calls of runs.
//!
//! The call goes resolve → confirm → send → settle → destination, each a state: the tab's
//! tools are taken from its kept listing ([`super::kept`]) or listed, and the call's tool
//! resolved (and, for a run, checked to be the tool the run began with); the call is sent with
//! its confirmation question and the tool's version as listed, to the document the tool was
//! listed from only (`{frameId, documentId}`; a frame without a document id is looked at
//! first), the browser's tabs listed as it leaves. The frame runs the tool only while its
//! definition is the one listed under that version: a tool changed since (read-only when
//! listed, acting now) is refused there, and the call lists the tab again, once, and decides
//! again (whether to confirm, from the hints as they are now); so does a call on a kept
//! listing that does not hold (the name unknown, the document gone, the tool gone). A failure
//! or timeout is settled against the frame's document (navigated, frame removed, tab closed);
//! a navigation of the top frame waits for its destination (or a tab the call opened) and
//! lists its tools. [`PageCall::step`] says what to do next; the shell does it
//! and feeds back [`Input`]. Time never enters: waits are steps and the call's timeout comes
//! back as [`Input::Timeout`]. Invariant: every path ends in [`Step::Done`] with a typed
//! [`CallAnswer`] (a result, a navigation, a result in a frame, or why it failed), which
//! `callTool` writes as its JSON answer.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::bridge::{
    parse_call_reply, parse_page_result, CallOutcome, FrameRequest, Reply, Target, TOOL_CHANGED,
};
use super::tabs::{undelivered, Frame, TabTools};
use super::tool::PageTool;
use crate::core::gate::{Acting, Asker, Decision, Permit};
use crate::core::limits::Limits;

pub use crate::core::limits::{CANCEL_REPLY_MS, DESTINATION_MS, PAGE_RESULT_MS, SETTLE_MS};

pub use crate::core::limits::{DESTINATION_POLL_MS, SETTLE_POLL_MS};

mod answer;
mod browser;
mod destination;
mod listed;
pub use answer::{CallAnswer, Destination, Ended};
pub use browser::{FrameState, Tab};
use destination::Look;
pub use listed::{still_listed, still_listed_document, still_same_page_tool, Listed};

/// What the shell does next for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The tab's kept listing ([`Input::Kept`]) if the shell keeps one
    /// ([`super::kept::Kept`]), else its tools listed as for [`Step::ListTools`].
    KeptTools {
        /// The tab.
        tab_id: i64,
    },
    /// List the tools of the tab (every frame, site policies applied): [`Input::Tools`].
    /// The tab to list.
    ListTools {
        /// The tab.
        tab_id: i64,
    },
    /// Read where a frame stands (`webNavigation.getFrame`): [`Input::Frame`].
    Frame {
        /// The tab.
        tab_id: i64,
        /// The frame.
        frame_id: i64,
    },
    /// List the browser's tabs: [`Input::Tabs`].
    Tabs,
    /// Send `message` to the frame; the reply, the channel's failure, or [`Input::Timeout`]
    /// when `timeout_ms` passes first.
    Send {
        /// The tab of the frame.
        tab_id: i64,
        /// The frame that offers the tool, and the document it was listed from.
        target: Target,
        /// The bridge message (`callTool`).
        message: Value,
        /// How long the frame may take.
        timeout_ms: u32,
        /// Also list the browser's tabs, started before the message: feed [`Input::Tabs`],
        /// then the reply (a tab above the newest one was opened by the call).
        list_tabs: bool,
    },
    /// Abort the call in its frame: the frame's reply ([`Input::Reply`], within
    /// [`CANCEL_REPLY_MS`]), or [`Input::Performed`] when it gave none (a frame that is gone or
    /// busy). The reply only adds to the call's error why the call waited (see
    /// `cancel_reason`); the call ends either way.
    Cancel {
        /// The tab of the frame.
        tab_id: i64,
        /// The frame and document where the call runs.
        target: Target,
        /// The bridge message (`cancel`).
        message: Value,
    },
    /// Every frame of the tab (`webNavigation.getAllFrames`): [`Input::Frames`].
    Frames {
        /// The tab.
        tab_id: i64,
    },
    /// Ask the document the call loaded for its result ([`FrameRequest::ReadResult`]), within
    /// [`PAGE_RESULT_MS`]: the reply, the channel's failure, or [`Input::Timeout`].
    ReadResult {
        /// The tab of the document.
        tab_id: i64,
        /// The frame and the document.
        target: Target,
        /// The bridge message (`readResult`).
        message: Value,
    },
    /// Wait this long: [`Input::Performed`].
    /// How long.
    Wait {
        /// How long, in milliseconds.
        ms: u32,
    },
    /// The call's answer.
    Done(CallAnswer),
}

/// What the shell feeds back.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The tab's tools just listed, or why they could not be listed.
    Tools(Result<Rc<TabTools>, String>),
    /// The tab's kept listing (for [`Step::KeptTools`]).
    Kept(Rc<TabTools>),
    /// The frame's state; `None` when the frame (or its tab) is gone.
    Frame(Option<FrameState>),
    /// The browser's tabs.
    Tabs(Vec<Tab>),
    /// The tab's frames (none when they could not be listed).
    Frames(Vec<Frame>),
    /// The frame's reply as JSON text, or why it could not be read.
    Reply(Result<String, String>),
    /// The message channel failed (the frame's document may be going away).
    ChannelFailed(String),
    /// The call's timeout passed before its reply.
    Timeout,
    /// A [`Step::Wait`] or [`Step::Cancel`] was performed.
    Performed,
}

impl From<Reply> for Input {
    fn from(reply: Reply) -> Input {
        match reply {
            Reply::Answered(text) => Input::Reply(text),
            Reply::TimedOut => Input::Timeout,
            Reply::Failed(error) => Input::ChannelFailed(error),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Resolve,
    Before {
        tool: PageTool,
        target: Target,
        version: Option<u64>,
    },
    Newest {
        tool: PageTool,
        target: Target,
        version: Option<u64>,
        before: Option<FrameState>,
    },
    Send {
        sent: Sent,
    },
    Cancel {
        sent: Sent,
        failure: String,
    },
    Settle {
        sent: Sent,
        failure: String,
        channel_failed: bool,
        after: Option<Option<FrameState>>,
        waited: u32,
    },
    TabOpen {
        sent: Sent,
        failure: String,
    },
    Destination {
        sent: Sent,
        outcome: CallOutcome,
        waited: u32,
        look: Look,
    },
    Done(CallAnswer),
}

/// A call sent to its frame, with what was known before.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    tool: PageTool,
    /// The frame and the document the tool was listed from.
    target: Target,
    /// The tool's version as listed, which the frame checks before it runs the tool.
    version: Option<u64>,
    before: Option<FrameState>,
    /// The highest tab id before the call (once known): a tab above it was opened since.
    newest: Option<i64>,
}

/// A page tool call as asked (`callTool`, or a run's page call).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRequest {
    /// The tab whose page offers the tool.
    pub tab_id: i64,
    /// The tool's name in the page.
    pub name: String,
    /// The arguments.
    pub args: Map<String, Value>,
    /// The frame, when several frames offer the name.
    pub frame_id: Option<i64>,
    /// How long the frame may take to answer.
    pub timeout_ms: u32,
    /// The call's id in the page, if the caller chose it.
    pub call: Option<String>,
    /// The tool as a run began with it, and the document it was listed from: a tool found
    /// changed is not called, and the call goes to that document or nowhere.
    pub expect: Option<Listed>,
}

impl CallRequest {
    /// A call of `name` as an operation asks it (`callTool`'s shape): whichever frame offers
    /// the name, its id in the page chosen by the host, no listing expected.
    pub fn asked(tab_id: i64, name: String, args: Map<String, Value>, timeout_ms: u32) -> Self {
        CallRequest {
            tab_id,
            name,
            args,
            frame_id: None,
            timeout_ms,
            call: None,
            expect: None,
        }
    }
}

/// One page tool call.
#[derive(Debug, Clone)]
pub struct PageCall {
    request: CallRequest,
    /// The call's id in the page (for cancelling).
    call: String,
    state: State,
    /// Whether the listing the call was decided on is a kept one.
    kept: bool,
    /// Whether the tab was listed again (once at most: a kept listing that did not hold, or a
    /// tool the frame found changed).
    relisted: bool,
    /// How the call was allowed without the question, once sent so ([`allowed_by_site`]).
    allowed: Option<String>,
    /// The document each frame was listed from (by frame id), as the call was decided: a
    /// frame holding another one after the call loaded it.
    listed_documents: BTreeMap<i64, String>,
}

impl PageCall {
    /// A call for the request the gate let through ([`crate::core::gate`]: no page call
    /// starts without its permit); `call` is its id in the page (the request's own, if it has
    /// one).
    pub fn new(permit: Permit<CallRequest>, call: String) -> PageCall {
        let request = permit.into_call();
        PageCall {
            call: request.call.clone().unwrap_or(call),
            request,
            state: State::Resolve,
            kept: false,
            relisted: false,
            allowed: None,
            listed_documents: BTreeMap::new(),
        }
    }

    /// The call's id in the page.
    pub fn call_id(&self) -> &str {
        &self.call
    }

    /// What to do next.
    pub fn step(&self) -> Step {
        let tab_id = self.request.tab_id;
        match &self.state {
            State::Resolve if self.relisted => Step::ListTools { tab_id },
            State::Resolve => Step::KeptTools { tab_id },
            State::Before { tool, .. } => Step::Frame {
                tab_id,
                frame_id: tool.frame_id,
            },
            State::Newest { .. } | State::TabOpen { .. } => Step::Tabs,
            State::Send { sent } => Step::Send {
                tab_id,
                target: sent.target.clone(),
                message: FrameRequest::CallTool {
                    name: sent.tool.name.clone(),
                    args: self.request.args.clone(),
                    // `resolved` refused a call whose confirmation cannot be shown.
                    confirm: confirmation(&sent.tool, &self.request.args).unwrap_or_else(Some),
                    call: Some(self.call.clone()),
                    within_ms: Some(self.request.timeout_ms),
                    version: sent.version,
                }
                .to_message(),
                timeout_ms: self.request.timeout_ms,
                list_tabs: sent.newest.is_none(),
            },
            State::Cancel { sent, .. } => Step::Cancel {
                tab_id,
                target: sent.target.clone(),
                message: FrameRequest::Cancel {
                    call: self.call.clone(),
                }
                .to_message(),
            },
            State::Settle {
                sent, after: None, ..
            } => Step::Frame {
                tab_id,
                frame_id: sent.tool.frame_id,
            },
            State::Settle { .. } => Step::Wait { ms: SETTLE_POLL_MS },
            State::Destination { look, .. } => match look {
                Look::Tabs => Step::Tabs,
                Look::Moved { .. } | Look::Last => Step::Frame {
                    tab_id,
                    frame_id: 0,
                },
                Look::Url { tab_id, .. } => Step::Frame {
                    tab_id: *tab_id,
                    frame_id: 0,
                },
                Look::Tools { tab_id, .. } => Step::ListTools { tab_id: *tab_id },
                Look::Frames => Step::Frames { tab_id },
                Look::Result { tab_id, target, .. } => Step::ReadResult {
                    tab_id: *tab_id,
                    target: target.clone(),
                    message: FrameRequest::ReadResult.to_message(),
                },
                Look::Wait => Step::Wait {
                    ms: DESTINATION_POLL_MS,
                },
            },
            State::Done(answer) => Step::Done(CallAnswer {
                confirmation: self.allowed.clone(),
                ..answer.clone()
            }),
        }
    }

    /// Feeds the result of the last step. An input the step did not ask for ends the call
    /// with an error (a bug in the shell, said as such).
    pub fn handle(&mut self, input: Input) {
        let state = std::mem::replace(&mut self.state, State::Resolve);
        self.state = match (state, input) {
            (State::Resolve, Input::Tools(tools)) => {
                self.kept = false;
                self.resolved(tools.as_deref().map_err(String::clone))
            }
            (State::Resolve, Input::Kept(tools)) => {
                self.kept = true;
                self.resolved(Ok(&tools))
            }
            (
                State::Before {
                    tool,
                    target,
                    version,
                },
                Input::Frame(before),
            ) => {
                match still_listed(&tool.name, &target, before.as_ref()) {
                    Ok(()) => State::Newest {
                        tool,
                        target,
                        version,
                        before,
                    },
                    Err(error) => State::Done(CallAnswer::of(&Err(error))),
                }
            }
            (
                State::Newest {
                    tool,
                    target,
                    version,
                    before,
                },
                Input::Tabs(tabs),
            ) => {
                self.allowed = allowed_by_site(&tool);
                State::Send {
                    sent: Sent {
                        tool,
                        target,
                        version,
                        before,
                        newest: Some(newest(&tabs)),
                    },
                }
            }
            (State::Send { mut sent }, Input::Tabs(tabs)) if sent.newest.is_none() => {
                sent.newest = Some(newest(&tabs));
                State::Send { sent }
            }
            (State::Send { sent }, Input::Reply(reply)) => {
                let answer = reply.and_then(|text| {
                    parse_call_reply(&text, &Limits::DEFAULT).map_err(|e| e.to_string())
                });
                match answer {
                    // The frame did not run the tool: its definition is not the one the call
                    // was decided on (or, on a kept listing, it is gone). List again, decide again.
                    Ok(CallOutcome::Failed { name, .. })
                        if !self.relisted
                            && (name == TOOL_CHANGED || (self.kept && name == "NotFoundError")) =>
                    {
                        self.relist()
                    }
                    Ok(outcome) => self.answered(sent, outcome),
                    Err(failure) => settle(sent, failure, false),
                }
            }
            // Sent to the listed document only: no listener there means the frame holds
            // another document by now, and the call never reached a page. On a kept listing,
            // the tab is listed again.
            (State::Send { sent }, Input::ChannelFailed(failure))
                if sent.target.document_id.is_some() && undelivered(&failure) =>
            {
                if self.kept && !self.relisted {
                    self.relist()
                } else {
                    State::Done(CallAnswer::of(&Err(format!(
                        "the frame that offered `{}` holds another document since its tools were listed; the call was not sent ({failure})",
                        sent.tool.name
                    ))))
                }
            }
            (State::Send { sent }, Input::ChannelFailed(failure)) => settle(sent, failure, true),
            (State::Send { sent }, Input::Timeout) => State::Cancel {
                failure: format!(
                    "`{}` did not finish within {} ms; it was cancelled in the page",
                    sent.tool.name, self.request.timeout_ms
                ),
                sent,
            },
            (State::Cancel { sent, failure }, Input::Reply(Ok(reply))) => {
                let failure = match cancel_reason(&reply) {
                    Some(reason) => format!("{failure}; {reason}"),
                    None => failure,
                };
                settle(sent, failure, false)
            }
            (
                State::Cancel { sent, failure },
                Input::Performed
                | Input::Reply(Err(_))
                | Input::ChannelFailed(_)
                | Input::Timeout,
            ) => settle(sent, failure, false),
            (
                State::Settle {
                    sent,
                    failure,
                    channel_failed,
                    waited,
                    after: None,
                },
                Input::Frame(after),
            ) => {
                let same_document = after.as_ref().is_some_and(|a| {
                    Some(&a.document_id) == sent.before.as_ref().map(|b| &b.document_id)
                });
                if channel_failed && waited < SETTLE_MS && same_document {
                    State::Settle {
                        sent,
                        failure,
                        channel_failed,
                        waited,
                        after: Some(after),
                    }
                } else if after.is_some() {
                    self.decide(sent, failure, true, after)
                } else {
                    State::TabOpen { sent, failure }
                }
            }
            (
                State::Settle {
                    sent,
                    failure,
                    channel_failed,
                    waited,
                    after: Some(_),
                },
                Input::Performed,
            ) => State::Settle {
                sent,
                failure,
                channel_failed,
                waited: waited + SETTLE_POLL_MS,
                after: None,
            },
            (State::TabOpen { sent, failure }, Input::Tabs(tabs)) => {
                let open = tabs.iter().any(|t| t.id == self.request.tab_id);
                self.decide(sent, failure, open, None)
            }
            (
                State::Destination {
                    sent,
                    outcome,
                    waited,
                    look,
                },
                input,
            ) => self.look(sent, outcome, waited, look, input),
            (state, input) => State::Done(CallAnswer::of(&Err(format!(
                "the host fed the page call {input:?} in state {}, which did not ask for it (a bug in the host)",
                state.name()
            )))),
        };
    }

    /// The call's tool found in the tab's listing and judged: a target that names its
    /// document is sent to at once (Chrome delivers there or nowhere); one that does not is
    /// checked against the frame first. On a kept listing, a tool not found (or not as a run
    /// began with it) lists the tab again.
    fn resolved(&mut self, tools: Result<&TabTools, String>) -> State {
        if let Ok(tools) = &tools {
            self.listed_documents = tools.documents.clone();
        }
        let found = tools.and_then(|tools| {
            let tool = tools.resolve(&self.request.name, self.request.frame_id)?;
            confirmation(tool, &self.request.args)?;
            let mut target = tools.target(tool);
            if let Some(expected) = &self.request.expect {
                still_same_page_tool(&expected.tool, tool)?;
                target = still_listed_document(expected, target)?;
            }
            Ok((tool.clone(), target, tools.version(tool)))
        });
        if let Ok((tool, target, _)) = &found {
            // Sent at once when its document is known, else once the frame is checked.
            self.allowed = target
                .document_id
                .as_ref()
                .and_then(|_| allowed_by_site(tool));
        }
        match found {
            Ok((tool, target, version)) => match &target.document_id {
                Some(document) => State::Send {
                    sent: Sent {
                        before: Some(FrameState {
                            url: String::new(),
                            document_id: Some(document.clone()),
                        }),
                        tool,
                        target,
                        version,
                        newest: None,
                    },
                },
                None => State::Before {
                    tool,
                    target,
                    version,
                },
            },
            Err(_) if self.kept && !self.relisted => self.relist(),
            Err(error) => State::Done(CallAnswer::of(&Err(error))),
        }
    }

    /// Lists the tab again (once) and decides the call again.
    fn relist(&mut self) -> State {
        self.relisted = true;
        self.allowed = None;
        State::Resolve
    }

    /// The frame answered, or the settling found a navigation: a top frame's navigation
    /// looks for its destination.
    fn answered(&self, sent: Sent, outcome: CallOutcome) -> State {
        match outcome {
            CallOutcome::Navigated { .. } if sent.tool.frame_id == 0 => State::Destination {
                sent,
                outcome,
                waited: 0,
                look: Look::Tabs,
            },
            CallOutcome::Text { text, text_input } => {
                let output_errors = (sent.tool.output_schema.as_ref())
                    .and_then(|schema| output_errors(schema, &text));
                State::Done(
                    Ended::Result {
                        text,
                        text_input,
                        output_errors,
                    }
                    .into(),
                )
            }
            outcome => State::Done(CallAnswer::of(&Ok(outcome))),
        }
    }

    fn decide(
        &self,
        sent: Sent,
        failure: String,
        tab_open: bool,
        after: Option<FrameState>,
    ) -> State {
        match interrupted(
            &sent.tool.name,
            failure,
            sent.before.as_ref(),
            tab_open,
            after.as_ref(),
        ) {
            Ok(outcome) => self.answered(sent, outcome),
            Err(error) => State::Done(CallAnswer::of(&Err(error))),
        }
    }
}

/// The highest tab id of the browser's tabs (-1: none).
fn newest(tabs: &[Tab]) -> i64 {
    tabs.iter().map(|t| t.id).max().unwrap_or(-1)
}

/// Why a call that was cancelled at its deadline had waited, from the frame's reply to the
/// cancel: a declarative tool whose form the page filled in (Chrome's `toolactivated`) and
/// that waits for someone to submit it (no `toolautosubmit`).
fn cancel_reason(reply: &str) -> Option<&'static str> {
    // The bridge's reply is a few fields: anything long is not one.
    if reply.len() > 1024 {
        return None;
    }
    let reply: Value = serde_json::from_str(reply).ok()?;
    (reply.get("awaitingSubmit") == Some(&Value::Bool(true))).then_some(
        "its form was filled in and waited for someone to submit it in the page \
         (a declarative tool without `toolautosubmit`)",
    )
}

/// A failed call: look at the frame again.
fn settle(sent: Sent, failure: String, channel_failed: bool) -> State {
    State::Settle {
        sent,
        failure,
        channel_failed,
        after: None,
        waited: 0,
    }
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Resolve => "resolve",
            State::Before { .. } => "before",
            State::Newest { .. } => "newest",
            State::Send { .. } => "send",
            State::Cancel { .. } => "cancel",
            State::Settle { .. } => "settle",
            State::TabOpen { .. } => "tab open",
            State::Destination { .. } => "destination",
            State::Done(_) => "done",
        }
    }
}

/// The text of the in-page confirmation a call needs, when the tool is consequential and no
/// site policy of its origin allows it ([`allowed_by_site`]), as the gate decides
/// ([`crate::core::gate::decide`]). Hints only tighten: a tool that claims `readOnlyHint` but
/// also `consequentialHint` is confirmed.
/// `Err`: the arguments cannot be shown honestly, and the call is not made.
pub fn confirmation(tool: &PageTool, args: &Map<String, Value>) -> Result<Option<String>, String> {
    Ok(decided(tool, args)?.question().map(str::to_owned))
}

/// How a consequential call made without the question was allowed (`allowed by site policy
/// <origin>`: the person's `allowActing` for the tool's origin), for the call's answer
/// (`confirmation`) and its run's log; `None` for a call asked about or that does not act.
pub fn allowed_by_site(tool: &PageTool) -> Option<String> {
    match decided(tool, &Map::new()) {
        Ok(Decision::Runs { allowed }) => allowed,
        _ => None,
    }
}

/// The gate's decision for a page tool (whoever asks: a page tool is decided alike).
fn decided(tool: &PageTool, args: &Map<String, Value>) -> Result<Decision, String> {
    crate::core::gate::decide(Asker::CallTool, Acting::Page(tool), args)
}

/// How a tool's result breaks the tool's own output schema: `[{pointer, message}]` (at most
/// `max_validation_errors`), or `None` when it matches. WebMCP hands results over as text, so
/// a result is read as JSON first; text that is not JSON cannot match.
pub fn output_errors(schema: &Value, result: &str) -> Option<Vec<Value>> {
    let one = |message: String| Some(vec![json!({"pointer": "", "message": message})]);
    let value = match serde_json::from_str::<Value>(result) {
        Ok(value) => value,
        Err(_) => {
            return one(
                "the result is not JSON, so it cannot match the tool's output schema".into(),
            )
        }
    };
    let validator = match crate::core::schema::validator_for(schema) {
        Ok(validator) => validator,
        Err(e) => return one(format!("the tool's output schema cannot be used: {e}")),
    };
    let errors = crate::core::schema::pointed_errors(&validator, &value);
    (!errors.is_empty()).then_some(errors)
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

#[cfg(test)]
mod tests;
