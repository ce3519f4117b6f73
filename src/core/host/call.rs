//! A page tool call as the [`Host`] runs it, whichever operation asks (`callTool`, a smoke
//! evaluation, `replayDiff`, an audit probe, a run's page call): the gate first, then the
//! page call machine, with the tab's kept listing taken from the host's own state. The shell
//! sees one [`Output`] at a time and answers each with one [`Input`] through
//! [`Host::advance`] (what a reply means, a cancel unanswered, frames not listed: the host
//! reads it, for the page call machine): a call on a kept listing crosses from the shell into the core twice (the
//! message sent, its reply; three times when the stored layers must be read first), where the
//! page call machine alone took a `step` and a `handle` for each of its states.
//!
//! Invariant: the only way to the page is through [`Host::advance`], and a call asked for by
//! an operation reaches the page only once the gate passed it ([`crate::core::gate`]: the
//! person's stored layers as the host keeps them, [`super::StoredLayers`], read again after
//! every change); a run's call arrives with the permit its drive got from the gate.

use std::rc::Rc;

use super::io::{Frames, Input, Output, Step, Tabs};
use super::listing::{Listing, Settle};
use super::screen::Screening;
use super::Host;
use crate::core::gate::{Asker, Permit};
use crate::core::page::bridge::Reply;
use crate::core::page::call::{
    CallAnswer, CallRequest, Input as PageInput, PageCall, Step as PageStep, CANCEL_REPLY_MS,
    PAGE_RESULT_MS,
};
use crate::core::page::tabs::TabTools;

/// One page call under way.
#[derive(Debug)]
pub struct HostCall {
    phase: Phase,
    id: String,
    /// The tab's listing the call makes, while it makes it.
    listing: Option<Listing>,
    /// The page call's step the shell performs now.
    asked: Option<Asked>,
}

/// A step of the page call machine the shell performs, for reading its input back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Asked {
    Send,
    Frame,
    Tabs,
    Cancel,
    Wait,
    Frames,
    ReadResult,
}

#[derive(Debug)]
enum Phase {
    /// Screened by the gate (the host's [`Screening`]), then held for a `delay` layer.
    Gate {
        screening: Screening,
        request: CallRequest,
    },
    /// Passed (and held): the call with its permit.
    Held(Permit<CallRequest>),
    /// The page call machine.
    Call(Box<PageCall>),
    /// Taken during a step.
    Gone,
}

impl HostCall {
    /// A call that `asker` asks for: it passes the gate first. `id` is its id in the page
    /// unless the request names one.
    pub fn asked(asker: Asker, request: CallRequest, id: String) -> HostCall {
        HostCall {
            phase: Phase::Gate {
                screening: Screening::new(asker, &[&request.name]),
                request,
            },
            id,
            listing: None,
            asked: None,
        }
    }

    /// A call that already passed the gate (a run's: its drive screened it).
    pub fn permitted(permit: Permit<CallRequest>, id: String) -> HostCall {
        HostCall {
            phase: Phase::Held(permit),
            id,
            listing: None,
            asked: None,
        }
    }
}

impl Host {
    /// Feeds the input of the last output (`None` for the first) and says what to do next.
    /// An input the output did not ask for ends the call with an error (a bug in the shell,
    /// said as such).
    pub fn advance(
        &self,
        call: &mut HostCall,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<CallAnswer> {
        let mut input = input;
        loop {
            let phase = std::mem::replace(&mut call.phase, Phase::Gone);
            let (phase, output) = match (phase, input.take()) {
                (
                    Phase::Gate {
                        mut screening,
                        request,
                    },
                    fed,
                ) => match self.screen(&mut screening, fed) {
                    Step::Do(output) => (Phase::Gate { screening, request }, Some(output)),
                    Step::Done(Ok(pass)) => (Phase::Held(pass.permit(request)), None),
                    Step::Done(Err(error)) => return Step::Done(CallAnswer::failed(error)),
                },
                (Phase::Held(permit), None) => {
                    let page = PageCall::new(permit, call.id.clone());
                    (Phase::Call(Box::new(page)), None)
                }
                (Phase::Call(mut page), fed) => {
                    if let Some(fed) = fed {
                        if let Some(mut listing) = call.listing.take() {
                            match self.list(&mut listing, Some(fed), now_ms) {
                                Step::Done(listed) => page.handle(PageInput::Tools(listed)),
                                Step::Do(output) => {
                                    call.listing = Some(listing);
                                    call.phase = Phase::Call(page);
                                    return Step::Do(output);
                                }
                            }
                        } else {
                            let Some(asked) = call.asked.take() else {
                                return unasked(fed.what());
                            };
                            if let Err(what) = fed_to_page(&mut page, asked, fed) {
                                return unasked(what);
                            }
                        }
                    }
                    match page.step() {
                        PageStep::KeptTools { tab_id } => match self.kept_listing(tab_id, now_ms) {
                            Some(tools) => {
                                page.handle(PageInput::Kept(tools));
                                (Phase::Call(page), None)
                            }
                            None => {
                                let output = self.call_listing(call, &mut page, tab_id, now_ms);
                                (Phase::Call(page), output)
                            }
                        },
                        PageStep::ListTools { tab_id } => {
                            let output = self.call_listing(call, &mut page, tab_id, now_ms);
                            (Phase::Call(page), output)
                        }
                        PageStep::Done(answer) => return Step::Done(answer),
                        step => {
                            let Some((asked, output)) = page_output(step) else {
                                let error = "internal error: a step the host answers itself";
                                return Step::Done(CallAnswer::failed(error));
                            };
                            call.asked = Some(asked);
                            (Phase::Call(page), Some(output))
                        }
                    }
                }
                (_, Some(other)) => return unasked(other.what()),
                (Phase::Gone, None) => {
                    return Step::Done(CallAnswer::failed("the call has ended"));
                }
            };
            call.phase = phase;
            if let Some(output) = output {
                return Step::Do(output);
            }
        }
    }

    /// Starts listing the call's tab: its first step, or none when it ended at once (then the
    /// page call has the listing).
    fn call_listing(
        &self,
        call: &mut HostCall,
        page: &mut PageCall,
        tab_id: i64,
        now_ms: f64,
    ) -> Option<Output> {
        let mut listing = Listing::kept(tab_id, Settle::Now);
        match self.list(&mut listing, None, now_ms) {
            Step::Done(listed) => {
                page.handle(PageInput::Tools(listed));
                None
            }
            Step::Do(output) => {
                call.listing = Some(listing);
                Some(output)
            }
        }
    }

    /// The tab's kept listing, while it is fresh.
    pub fn kept_listing(&self, tab_id: i64, now_ms: f64) -> Option<Rc<TabTools>> {
        self.listings.borrow().get(tab_id, now_ms)
    }

    /// Keeps a tab's listing for the calls that follow, unless the listings were forgotten
    /// since `epoch` (then it is stale already).
    pub fn keep_listing(&self, tab_id: i64, now_ms: f64, tools: Rc<TabTools>, epoch: u64) {
        self.listings.borrow_mut().put(tab_id, now_ms, tools, epoch);
    }
}

/// What the shell performs for a step of the page call machine; `None` for a step the host
/// answers itself (its kept listing, its own listing, the end).
fn page_output(step: PageStep) -> Option<(Asked, Output)> {
    Some(match step {
        PageStep::Send {
            tab_id,
            target,
            message,
            timeout_ms,
            list_tabs,
        } => (
            Asked::Send,
            Output::Frames(Frames::Send {
                tab_id,
                target,
                message,
                timeout_ms,
                list_tabs,
            }),
        ),
        PageStep::Frame { tab_id, frame_id } => (
            Asked::Frame,
            Output::Frames(Frames::State { tab_id, frame_id }),
        ),
        PageStep::Tabs => (Asked::Tabs, Output::Tabs(Tabs::List)),
        PageStep::Cancel {
            tab_id,
            target,
            message,
        } => (
            Asked::Cancel,
            Output::Frames(Frames::Ask {
                tab_id,
                target,
                message,
                ms: CANCEL_REPLY_MS,
            }),
        ),
        PageStep::Wait { ms } => (Asked::Wait, Output::Sleep { ms }),
        PageStep::Frames { tab_id } => (Asked::Frames, Output::Frames(Frames::All { tab_id })),
        PageStep::ReadResult {
            tab_id,
            target,
            message,
        } => (
            Asked::ReadResult,
            Output::Frames(Frames::Ask {
                tab_id,
                target,
                message,
                ms: PAGE_RESULT_MS,
            }),
        ),
        PageStep::KeptTools { .. } | PageStep::ListTools { .. } | PageStep::Done(_) => return None,
    })
}

/// The input of a step the shell performed, read as the page call machine reads it: a cancel
/// whose reply did not come was performed all the same; frames that could not be listed are
/// none. `Err`: not the input of that step (what it was).
fn fed_to_page(page: &mut PageCall, asked: Asked, fed: Input) -> Result<(), &'static str> {
    let input = match (asked, fed) {
        (Asked::Send, Input::Sent { tabs, reply }) => {
            if let Some(tabs) = tabs {
                page.handle(PageInput::Tabs(tabs));
            }
            reply.into()
        }
        (Asked::Frame, Input::Frame(state)) => PageInput::Frame(state),
        (Asked::Tabs, Input::Tabs(tabs)) => PageInput::Tabs(tabs),
        (Asked::Cancel, Input::Reply(Reply::Answered(reply))) => PageInput::Reply(reply),
        (Asked::Cancel, Input::Reply(_)) | (Asked::Wait, Input::Slept) => PageInput::Performed,
        (Asked::Frames, Input::Frames(frames)) => PageInput::Frames(frames.unwrap_or_default()),
        (Asked::ReadResult, Input::Reply(reply)) => reply.into(),
        (_, other) => return Err(other.what()),
    };
    page.handle(input);
    Ok(())
}

fn unasked(what: &str) -> Step<CallAnswer> {
    Step::Done(CallAnswer::failed(format!(
        "internal error: {what} came where the call did not ask for it"
    )))
}

#[cfg(test)]
mod tests;
