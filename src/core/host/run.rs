//! A run as the [`Host`] composes it: its start ([`Start`]: the conversation, the tab's tools,
//! the MCP servers, the keys), then its drive ([`Drive`]: the model, the tools, the person),
//! with the tab's listings and the page calls resolved inside the host, as children of the
//! run: a listing is the host's [`Listing`], a page call the host's [`HostCall`] on the permit
//! the drive's gate gave, a model's stream the host's [`Http`](super::io::Http) outputs (the
//! drive's fetch ids mapped to the host's; a fetch aborted or ended is forgotten, and what
//! comes of it after is dropped), a timer the host's `Timers` outputs, a confirmation
//! `Ui::Confirm`, an intents store a `RunStore`, the start's needs (storage read, the
//! conversation saved, the MCP servers opened) its machines. The shell performs what is left
//! (the run's record, the tool calls through the person's layers, the person's answers) and
//! each child's outputs, and feeds every result back; a child's answer goes to the start or
//! the drive as a value, never through the shell.
//!
//! The shell sees [`RunEffect`]s, any number in flight at once, and feeds each one's answer
//! back as one [`RunFeed`] through [`Host::run_handle`]; [`Host::run_poll`] says what to do
//! next until nothing is ready.
//!
//! Invariant: a run's page call reaches the page only as a [`HostCall`] of the permit its
//! drive's gate gave ([`HostCall::permitted`]); when the person's JavaScript layers
//! (`webmcpHost.use`) wrap the run's calls, the call goes to the shell as the drive asked it
//! ([`RunEffect::Act`] with [`Action::Tool`]), for the layers to see it first, and comes back
//! through the same permit.

use std::collections::{BTreeMap, VecDeque};

mod acts;
mod intents;
mod needs;

use super::call::HostCall;
use super::io::{ClientId, Input, Output, Step};
use super::listing::{Listing, Settle};
use super::Host;
use crate::core::observe::cost::Prices;
use serde_json::Value;

use crate::core::ops::threads::ThreadRecord;
use crate::core::page::tabs::Listed;
use crate::core::run::drive::{Action, Answer, Drive, FetchId, Gated, TimerId, ToolCall};
use crate::core::setup::call::Called;
use crate::core::setup::start::{Got, Need, Start};

/// What the shell does next for a run. Each is answered by the [`RunFeed`] it names, but
/// [`RunEffect::Page`] and the drive's actions that want no answer.
pub enum RunEffect {
    /// What the start needs (never [`Need::TabTools`], which the host lists itself):
    /// [`RunFeed::Got`]. [`Need::Ready`] is never asked: the host finishes the start.
    Need(Need),
    /// What the drive asks (never a page tool call the host makes itself, nor
    /// [`Action::ListTabTools`], nor a model's fetch, read or abort): [`RunFeed::Drive`] when
    /// it wants an answer. After
    /// [`Action::Finished`] the run has ended: [`HostRun::drive`] gives its messages.
    Act(Action),
    /// An output of one of the run's children (a listing of its tab, a page call, a model's
    /// stream):
    /// [`RunFeed::Child`] with the same `child`.
    Child {
        /// The child's id in the run.
        child: u64,
        /// Its output.
        output: Output,
    },
    /// The page the run is made on, as its start listed its tab (no answer): the shell
    /// records it in the run's log.
    Page(Value),
    /// What the run log asks of the shell after a store of the run's record (a save loop to
    /// start; no answer).
    Log(Vec<crate::core::ops::runlog::Effect>),
}

/// What the shell feeds back for a [`RunEffect`].
#[derive(Debug)]
pub enum RunFeed {
    /// What a [`RunEffect::Need`] got.
    Got(Got),
    /// The answer to a [`RunEffect::Act`] (or a stop: [`Answer::Stop`], at any time).
    Drive(Answer),
    /// The input of a [`RunEffect::Child`].
    Child {
        /// The child's id in the run.
        child: u64,
        /// Its input.
        input: Input,
    },
}

/// A child of the run: one of its listings, page calls or model fetches.
#[derive(Debug)]
enum Child {
    /// The drive's fetch `id` (a model's stream), performed as the host's fetch `http`.
    Fetch { id: FetchId, http: u64 },
    /// A need of the start, or a step of the run's end.
    Need(Box<needs::Needing>),
    /// A store of the run's intents (the one under way).
    Store(Box<intents::Storing>),
    /// The drive's timer `id`, set as the host's `timer`.
    Timer { id: TimerId, timer: u64 },
    /// The person asked to confirm the drive's call `call_id`.
    Confirm(String),
    /// A listing, for the start or for the drive.
    Listing(Listing),
    /// A page call of the drive's call `call_id`.
    Call {
        call_id: String,
        call: Box<HostCall>,
    },
}

enum Phase {
    /// Starting: the start, and whether its current need was asked already.
    Start { start: Box<Start>, asked: bool },
    /// Driving.
    Drive(Box<Drive>),
    /// The drive finished (`Action::Finished`, said once the end's steps left are done).
    Ending(Action, usize),
    /// Refused before it started, or ended.
    Over,
    /// Taken during a step.
    Gone,
}

/// One run under way.
pub struct HostRun {
    phase: Phase,
    /// Kept once it ended, for its messages and transcript.
    ended: Option<Box<Drive>>,
    children: BTreeMap<u64, Child>,
    next_child: u64,
    out: VecDeque<RunEffect>,
    hook: bool,
    prices: Option<Prices>,
    layered: bool,
    /// Names the run's page calls in their pages: `<calls>_<n>`.
    calls: String,
    /// What came for the drive before it existed (a stop while the run started).
    early: Vec<Answer>,
    /// The conversation's id, once the start settled it.
    thread_id: String,
    /// The conversation's record, once saved (saved again as it ended).
    thread: Option<ThreadRecord>,
    /// The MCP clients the start opened, by server: for the run's calls, closed at its end.
    clients: BTreeMap<String, ClientId>,
    /// The run's id.
    run_id: String,
    /// The stores of its intents waiting for their turn, and whether one is under way.
    stores: VecDeque<intents::Storing>,
    storing: bool,
}

impl HostRun {
    /// The run `start` will start; `hook` says whether a repair hook is set, `prices` are the
    /// stored prices of tokens, `calls` is a fresh name from which its page calls' ids are
    /// made.
    pub fn new(start: Start, hook: bool, prices: Prices, calls: String) -> HostRun {
        HostRun {
            run_id: start.run_id().to_owned(),
            stores: VecDeque::new(),
            storing: false,
            phase: Phase::Start {
                start: Box::new(start),
                asked: false,
            },
            ended: None,
            children: BTreeMap::new(),
            next_child: 0,
            out: VecDeque::new(),
            hook,
            prices: Some(prices),
            layered: false,
            calls,
            early: Vec::new(),
            thread_id: String::new(),
            thread: None,
            clients: BTreeMap::new(),
        }
    }

    /// The start, while the run starts (its ids, its tab).
    pub fn start(&self) -> Option<&Start> {
        match &self.phase {
            Phase::Start { start, .. } => Some(start),
            _ => None,
        }
    }

    /// The client the start opened for `server`, for the run's calls to it.
    pub fn client(&self, server: &str) -> Option<ClientId> {
        self.clients.get(server).copied()
    }

    /// Whether the run's child `child` is one of its page calls (not a listing).
    pub fn is_call(&self, child: u64) -> bool {
        matches!(self.children.get(&child), Some(Child::Call { .. }))
    }

    /// The conversation the run belongs to (as its start settled it, once it started).
    pub fn thread_id(&self) -> &str {
        match &self.phase {
            Phase::Start { start, .. } => start.thread_id(),
            _ => &self.thread_id,
        }
    }

    /// The drive, once the run started (and after it ended).
    pub fn drive(&self) -> Option<&Drive> {
        match &self.phase {
            Phase::Drive(drive) => Some(drive),
            _ => self.ended.as_deref(),
        }
    }

    /// Whether the person's JavaScript layers wrap tool calls now (`webmcpHost.use`): then
    /// the run's page calls go to the shell, through them. Asked again before every step.
    pub fn set_layered(&mut self, layered: bool) {
        self.layered = layered;
    }

    fn child(&mut self, child: Child) -> u64 {
        self.next_child += 1;
        self.children.insert(self.next_child, child);
        self.next_child
    }
}

impl Host {
    /// What the run needs next, until nothing is ready (then feed an answer).
    pub fn run_poll(&self, run: &mut HostRun, now_ms: f64) -> Option<RunEffect> {
        loop {
            if let Some(effect) = run.out.pop_front() {
                return Some(effect);
            }
            match std::mem::replace(&mut run.phase, Phase::Gone) {
                Phase::Start { mut start, asked } => match start.poll() {
                    Need::Ready => {
                        run.thread_id = start.thread_id().to_owned();
                        start.set_repair_hook(run.hook);
                        let mut drive = start.finish();
                        drive.set_prices(run.prices.take().unwrap_or_default());
                        for answer in run.early.drain(..) {
                            drive.handle(answer);
                        }
                        run.phase = Phase::Drive(Box::new(drive));
                    }
                    _ if asked => {
                        run.phase = Phase::Start { start, asked };
                        return None;
                    }
                    Need::TabTools(tab_id) => {
                        run.phase = Phase::Start { start, asked: true };
                        self.list_for(run, tab_id, now_ms);
                    }
                    need @ Need::Refused(_) => {
                        run.phase = Phase::Over;
                        return Some(RunEffect::Need(need));
                    }
                    need => {
                        run.phase = Phase::Start { start, asked: true };
                        if let Some(effect) = self.need(run, need, now_ms) {
                            return Some(effect);
                        }
                    }
                },
                Phase::Drive(mut drive) => {
                    let Some(action) = drive.poll() else {
                        run.phase = Phase::Drive(drive);
                        return None;
                    };
                    match action {
                        Action::ListTabTools { tab_id } => {
                            run.phase = Phase::Drive(drive);
                            self.list_for(run, tab_id, now_ms);
                        }
                        Action::Tool {
                            call_id,
                            call,
                            info,
                        } if run.layered || !matches!(call.call(), ToolCall::Page(_)) => {
                            run.phase = Phase::Drive(drive);
                            return Some(RunEffect::Act(Action::Tool {
                                call_id,
                                call,
                                info,
                            }));
                        }
                        Action::Tool { call_id, call, .. } => {
                            run.phase = Phase::Drive(drive);
                            let Gated::Page(permit) = call.gated() else {
                                unreachable!("a page tool call, matched above");
                            };
                            let id = format!("{}_{}", run.calls, run.next_child + 1);
                            let call = Box::new(HostCall::permitted(permit, id));
                            let child = run.child(Child::Call { call_id, call });
                            self.advance_child(run, child, None, now_ms);
                        }
                        finished @ Action::Finished(_) => {
                            run.ended = Some(drive);
                            self.end(run, finished, now_ms);
                        }
                        action => {
                            run.phase = Phase::Drive(drive);
                            if let Some(action) = self.act(run, action, now_ms) {
                                return Some(RunEffect::Act(action));
                            }
                        }
                    }
                }
                phase @ (Phase::Ending(..) | Phase::Over | Phase::Gone) => {
                    run.phase = phase;
                    return None;
                }
            }
        }
    }

    /// Feeds the answer of one of the run's effects.
    pub fn run_handle(&self, run: &mut HostRun, feed: RunFeed, now_ms: f64) {
        match feed {
            RunFeed::Got(got) => {
                if let Phase::Start { start, asked } = &mut run.phase {
                    *asked = false;
                    start.handle(got);
                }
            }
            RunFeed::Drive(answer) => self.to_drive(run, answer),
            RunFeed::Child { child, input } => match run.children.remove(&child) {
                Some(Child::Listing(mut listing)) => {
                    match self.list(&mut listing, Some(input), now_ms) {
                        Step::Done(listed) => self.run_listed(run, listed),
                        Step::Do(output) => {
                            run.children.insert(child, Child::Listing(listing));
                            run.out.push_back(RunEffect::Child { child, output });
                        }
                    }
                }
                Some(Child::Call { call_id, call }) => {
                    run.children.insert(child, Child::Call { call_id, call });
                    self.advance_child(run, child, Some(input), now_ms)
                }
                Some(store @ Child::Store(_)) => {
                    run.children.insert(child, store);
                    self.advance_store(run, child, Some(input), now_ms);
                }
                Some(need @ Child::Need(_)) => {
                    run.children.insert(child, need);
                    self.advance_need(run, child, Some(input), now_ms);
                }
                Some(Child::Fetch { id, http }) => self.fetch_input(run, child, (id, http), input),
                // A timer fired (a cancelled one is gone already).
                Some(Child::Timer { id, .. }) if input == Input::Slept => {
                    self.to_drive(run, Answer::Timeout(id));
                }
                Some(Child::Confirm(call_id)) => {
                    let allowed = input == Input::Confirmed(true);
                    self.to_drive(run, Answer::Confirmed { call_id, allowed });
                }
                // Gone: an aborted fetch's head or piece, an abort's end, a cancelled timer (or
                // its cancel's end).
                Some(Child::Timer { .. }) | None => {}
            },
        }
    }

    /// Lists the run's tab for its start or its drive, as a child.
    fn list_for(&self, run: &mut HostRun, tab_id: i64, now_ms: f64) {
        let mut listing = Listing::kept(tab_id, Settle::Now);
        match self.list(&mut listing, None, now_ms) {
            Step::Done(listed) => self.run_listed(run, listed),
            Step::Do(output) => {
                let child = run.child(Child::Listing(listing));
                run.out.push_back(RunEffect::Child { child, output });
            }
        }
    }

    /// A listing of the run's tab, to whichever asked for it.
    fn run_listed(&self, run: &mut HostRun, listed: Listed) {
        let page = listed.as_ref().ok().and_then(|tools| tools.top_page());
        match &mut run.phase {
            Phase::Start { start, asked } => {
                *asked = false;
                start.handle(Got::TabTools(listed));
                run.out.extend(page.map(RunEffect::Page));
            }
            _ => self.to_drive(run, Answer::TabTools(listed)),
        }
    }

    /// Steps a page call of the run; its answer goes to the drive.
    fn advance_child(&self, run: &mut HostRun, child: u64, input: Option<Input>, now: f64) {
        let Some(Child::Call { call_id, mut call }) = run.children.remove(&child) else {
            return;
        };
        match self.advance(&mut call, input, now) {
            Step::Done(answer) => {
                let answer = Called::Page(answer).answer();
                self.to_drive(run, Answer::ToolDone { call_id, answer });
            }
            Step::Do(output) => {
                run.children.insert(child, Child::Call { call_id, call });
                run.out.push_back(RunEffect::Child { child, output });
            }
        }
    }

    fn to_drive(&self, run: &mut HostRun, answer: Answer) {
        match &mut run.phase {
            Phase::Drive(drive) => drive.handle(answer),
            Phase::Start { .. } => run.early.push(answer),
            Phase::Ending(..) | Phase::Over | Phase::Gone => {}
        }
    }
}
