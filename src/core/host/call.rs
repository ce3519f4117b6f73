//! A page tool call as the [`Host`] runs it, whichever operation asks (`callTool`, a smoke
//! evaluation, `replayDiff`, an audit probe, a run's page call): the gate first, then the
//! page call machine, with the tab's kept listing taken from the host's own state. The shell
//! sees one [`Effect`] at a time and answers each with one [`Outcome`] through
//! [`Host::advance`]: a call on a kept listing crosses from the shell into the core twice (the
//! message sent, its reply; three times when the stored layers must be read first), where the
//! page call machine alone took a `step` and a `handle` for each of its states.
//!
//! Invariant: the only way to the page is through [`Host::advance`], and a call asked for by
//! an operation reaches the page only once the gate passed it ([`crate::core::gate`]: the
//! person's stored layers as the host keeps them, [`super::StoredLayers`], read again after
//! every change); a run's call arrives with the permit its drive got from the gate.

use std::rc::Rc;

use serde_json::Value;

use super::listing::{ListEffect, ListInput, Listing, Settle};
use super::screen::{ScreenEffect, ScreenInput, Screening};
use super::Host;
use crate::core::gate::{Asker, Permit};
use crate::core::page::call::{CallAnswer, CallRequest, Input, PageCall, Step, Tab};
use crate::core::page::tabs::TabTools;

/// What the shell does next for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Read the person's stored layers (`configure({middleware})`): [`Outcome::Layers`]. Asked
    /// only when the host does not know them ([`super::StoredLayers`]).
    ReadLayers,
    /// Hold the call this long (a `delay` layer): [`Outcome::Held`].
    Hold {
        /// How long (ms).
        ms: u32,
    },
    /// A step of the tab's listing, which the call makes itself (no fresh kept listing: every
    /// frame, the site policies applied, kept in the host): [`Outcome::Listing`]. Never
    /// [`ListEffect::Done`].
    List(ListEffect),
    /// A step of the page call machine that the browser performs (never
    /// [`Step::KeptTools`] nor [`Step::ListTools`], which the host answers with its kept or
    /// its own listing): [`Outcome::Page`], or for a [`Step::Send`] [`Outcome::Sent`].
    Page(Step),
    /// How the call ended (`callTool` writes it as its answer).
    Done(CallAnswer),
}

/// What the shell feeds back.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The stored layers as read (`None`: none stored), or why they could not be read.
    Layers(Result<Option<Value>, String>),
    /// An [`Effect::Hold`] was performed.
    Held,
    /// The input of an [`Effect::List`] step.
    Listing(ListInput),
    /// The input of the page call step asked for.
    Page(Input),
    /// A [`Step::Send`] performed: the browser's tabs when the step asked for them (listed
    /// before the message left), and the reply.
    Sent {
        /// The tabs, for `list_tabs`.
        tabs: Option<Vec<Tab>>,
        /// The reply, the channel's failure or the timeout.
        reply: Input,
    },
}

/// One page call under way.
#[derive(Debug)]
pub struct HostCall {
    phase: Phase,
    id: String,
    /// The tab's listing the call makes, while it makes it.
    listing: Option<Listing>,
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
        }
    }

    /// A call that already passed the gate (a run's: its drive screened it).
    pub fn permitted(permit: Permit<CallRequest>, id: String) -> HostCall {
        HostCall {
            phase: Phase::Held(permit),
            id,
            listing: None,
        }
    }
}

impl Host {
    /// Feeds the outcome of the last effect (`None` for the first) and says what to do next.
    /// An outcome the effect did not ask for ends the call with an error (a bug in the shell,
    /// said as such).
    pub fn advance(&self, call: &mut HostCall, outcome: Option<Outcome>, now_ms: f64) -> Effect {
        let mut outcome = outcome;
        loop {
            let phase = std::mem::replace(&mut call.phase, Phase::Gone);
            let (phase, effect) = match (phase, outcome.take()) {
                (
                    Phase::Gate {
                        mut screening,
                        request,
                    },
                    fed @ (None | Some(Outcome::Layers(_)) | Some(Outcome::Held)),
                ) => {
                    let input = match fed {
                        None => None,
                        Some(Outcome::Layers(stored)) => Some(ScreenInput::Layers(stored)),
                        Some(_) => Some(ScreenInput::Held),
                    };
                    match self.screen(&mut screening, input) {
                        ScreenEffect::ReadLayers => {
                            let phase = Phase::Gate { screening, request };
                            (phase, Some(Effect::ReadLayers))
                        }
                        ScreenEffect::Hold { ms } => {
                            let phase = Phase::Gate { screening, request };
                            (phase, Some(Effect::Hold { ms }))
                        }
                        ScreenEffect::Done(Ok(pass)) => (Phase::Held(pass.permit(request)), None),
                        ScreenEffect::Done(Err(error)) => {
                            (Phase::Gone, Some(Effect::Done(CallAnswer::failed(error))))
                        }
                    }
                }
                (Phase::Held(permit), None) => {
                    let page = PageCall::new(permit, call.id.clone());
                    (Phase::Call(Box::new(page)), None)
                }
                (Phase::Call(mut page), fed) => {
                    match fed {
                        None => {}
                        Some(Outcome::Listing(input)) => {
                            let Some(mut listing) = call.listing.take() else {
                                return unasked(&Outcome::Listing(input));
                            };
                            match self.list(&mut listing, Some(input), now_ms) {
                                ListEffect::Done(listed) => page.handle(Input::Tools(listed)),
                                effect => {
                                    call.listing = Some(listing);
                                    call.phase = Phase::Call(page);
                                    return Effect::List(effect);
                                }
                            }
                        }
                        Some(Outcome::Page(input)) => page.handle(input),
                        Some(Outcome::Sent { tabs, reply }) => {
                            if let Some(tabs) = tabs {
                                page.handle(Input::Tabs(tabs));
                            }
                            page.handle(reply);
                        }
                        Some(other) => return unasked(&other),
                    }
                    match page.step() {
                        Step::KeptTools { tab_id } => match self.kept_listing(tab_id, now_ms) {
                            Some(tools) => {
                                page.handle(Input::Kept(tools));
                                (Phase::Call(page), None)
                            }
                            None => {
                                let effect = self.call_listing(call, &mut page, tab_id, now_ms);
                                (Phase::Call(page), effect)
                            }
                        },
                        Step::ListTools { tab_id } => {
                            let effect = self.call_listing(call, &mut page, tab_id, now_ms);
                            (Phase::Call(page), effect)
                        }
                        Step::Done(answer) => (Phase::Gone, Some(Effect::Done(answer))),
                        step => (Phase::Call(page), Some(Effect::Page(step))),
                    }
                }
                (_, Some(other)) => return unasked(&other),
                (Phase::Gone, None) => {
                    return Effect::Done(CallAnswer::failed("the call has ended"));
                }
            };
            call.phase = phase;
            if let Some(effect) = effect {
                return effect;
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
    ) -> Option<Effect> {
        let mut listing = Listing::kept(tab_id, Settle::Now);
        match self.list(&mut listing, None, now_ms) {
            ListEffect::Done(listed) => {
                page.handle(Input::Tools(listed));
                None
            }
            effect => {
                call.listing = Some(listing);
                Some(Effect::List(effect))
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

fn unasked(outcome: &Outcome) -> Effect {
    let what = match outcome {
        Outcome::Layers(_) => "the stored layers",
        Outcome::Held => "a hold",
        Outcome::Listing(_) => "a listing's step",
        Outcome::Page(_) => "a page step's input",
        Outcome::Sent { .. } => "a message's reply",
    };
    Effect::Done(CallAnswer::failed(format!(
        "internal error: {what} came where the call did not ask for it"
    )))
}

#[cfg(test)]
mod tests;
