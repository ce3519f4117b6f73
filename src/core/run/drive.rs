//! The run as the worker drives it: [`Drive`] wraps a [`Run`] and asks for everything a run
//! needs from the outside, performing nothing.
//!
//! It owns what the shell used to decide: the model call (the HTTP request, the provider's
//! decoder fed with the raw body text, a replayed transcript, Chrome's built-in model), the
//! transcript recorder, the retries and their waits, every deadline (first byte, stream idle),
//! stop, which calls act (their intents are stored before the call starts and removed after),
//! the MCP confirmation asked before a call starts (`tools`), and the worker's keep-alive: on
//! while the run works, off while it only waits for the person (a visitor input, a
//! confirmation). Drive it like the run: feed an
//! [`Answer`] to [`Drive::handle`], then take [`Action`]s from [`Drive::poll`] until `None`.
//! Invariants: a timer or fetch that is no longer current is ignored when it reports; every
//! timer asked for runs out or is cancelled before [`Action::Finished`]; once that went out,
//! nothing else does.

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::{Input, ModelRequest, Output, Run, ToolInvocation};
use crate::core::agui::Message;
use crate::core::provider::prompt::text_conversation;
use crate::core::provider::replay::{parse_transcript, replay_events, Recorder};
use crate::core::provider::{
    build_request, classify_status, decoder, redact, retry_delay, Decoder, ModelEvent, Provider,
    ProviderError,
};
use crate::core::restart::Intent;
use crate::core::url::origin_of;

use crate::core::limits::ERROR_BODY_CHARS;
pub use crate::core::limits::{FIRST_BYTE_MS, MCP_SOURCE_MS, PAGE_TOOL_MS, STREAM_IDLE_MS};

mod actions;
mod tools;
mod usage;

pub use actions::{
    own_names, Action, Answer, Binding, Confirmation, FetchId, Gated, Setup, TimerId, ToolCall,
};

/// A model call in progress.
enum Model {
    Idle,
    /// Waiting before the next attempt.
    Backoff {
        request: ModelRequest,
        attempt: u32,
        timer: TimerId,
    },
    /// Waiting for the status and headers.
    Opening {
        request: ModelRequest,
        attempt: u32,
        id: FetchId,
        timer: TimerId,
    },
    /// An error status: its body is read to say what went wrong.
    Refused {
        request: ModelRequest,
        attempt: u32,
        id: FetchId,
        timer: TimerId,
        status: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// The body streams through the provider's decoder.
    Streaming {
        request: ModelRequest,
        attempt: u32,
        id: FetchId,
        timer: TimerId,
        decoder: Box<dyn Decoder>,
        /// Whether output went to the run already (then a failure is not retried).
        fed: bool,
    },
    /// Chrome's built-in model.
    Chrome {
        id: FetchId,
        request: ModelRequest,
    },
}

/// A run and everything it asks of the worker.
pub struct Drive {
    run: Run,
    setup: Setup,
    model: Model,
    next_id: u64,
    out: VecDeque<Action>,
    /// Answers the drive gives itself (tools it refuses, the repair hook it lacks).
    own: VecDeque<Own>,
    /// Tool calls running in the shell (or asked for: `confirming`), with whether they act.
    running: Vec<(String, bool)>,
    /// The MCP calls that wait for the person's confirmation before they start.
    confirming: Vec<tools::Confirming>,
    /// Page calls still running, with their frame (to cancel them).
    page_calls: Vec<(String, i64)>,
    /// The acting calls under way (see `core::restart`).
    intents: Vec<Intent>,
    /// Acting calls waiting for their intent to be stored before they start.
    storing: Vec<(String, Box<crate::core::gate::Permit<ToolCall>>, Value)>,
    /// Calls a `delay` middleware layer holds, each until its timer runs out.
    delayed: Vec<(TimerId, ToolInvocation)>,
    /// The timers asked for that neither ran out nor were cancelled.
    timers: Vec<TimerId>,
    waiting: bool,
    /// Whether the worker is kept from idling out (the last [`Action::KeepAlive`]).
    alive: bool,
    finished: bool,
    recorder: Option<Recorder>,
    transcript: Vec<String>,
    /// The tokens and cost of each step (see `usage`).
    usage: usage::Meter,
}

/// The id under which a listing of the tab's tools is under way (no call id has it).
const RELISTING: &str = "\u{0}relisting";

enum Own {
    ToolDone {
        call_id: String,
        answer: crate::core::run::ToolAnswer,
    },
    Run(Input),
}

impl Drive {
    /// Starts driving `run` (already started): keep-alive on, then the run's first asks.
    pub fn new(run: Run, setup: Setup) -> Drive {
        let mut drive = Drive {
            run,
            setup,
            model: Model::Idle,
            next_id: 0,
            timers: Vec::new(),
            out: VecDeque::from([Action::KeepAlive(true)]),
            own: VecDeque::new(),
            running: Vec::new(),
            confirming: Vec::new(),
            page_calls: Vec::new(),
            intents: Vec::new(),
            storing: Vec::new(),
            delayed: Vec::new(),
            waiting: false,
            alive: true,
            finished: false,
            recorder: None,
            transcript: Vec::new(),
            usage: usage::Meter::default(),
        };
        drive.settle();
        drive
    }

    /// The next action; `None` until the next answer.
    pub fn poll(&mut self) -> Option<Action> {
        self.out.pop_front()
    }

    /// The conversation as the client holds it.
    pub fn messages(&self) -> &[Message] {
        self.run.messages()
    }

    /// The model's outputs so far as replay transcript lines (a `replay` model repeats them).
    pub fn transcript(&self) -> String {
        self.transcript.join("\n")
    }

    /// Feeds what the shell learnt.
    pub fn handle(&mut self, answer: Answer) {
        if self.finished {
            return;
        }
        match answer {
            Answer::Head {
                id,
                status,
                retry_after,
            } => self.head(id, status, retry_after),
            Answer::Body { id, text } => self.body(id, text),
            Answer::FetchFailed { id, message } => self.fetch_failed(id, message),
            Answer::ChromeAvailability { id, availability } => {
                let Model::Chrome {
                    id: current,
                    request,
                } = &self.model
                else {
                    return;
                };
                if *current != id {
                    return;
                }
                if availability == "available" {
                    let (system, turns) = text_conversation(&request.messages, &request.tools);
                    self.out
                        .push_back(Action::ChromePrompt { id, system, turns });
                } else {
                    self.model = Model::Idle;
                    self.fail(format!("Chrome's built-in model is not available in this browser (LanguageModel.availability(): {availability})"));
                }
            }
            Answer::ChromeOutput { id, output } => {
                if !matches!(self.model, Model::Chrome { id: current, .. } if current == id) {
                    return;
                }
                self.model = Model::Idle;
                match output {
                    Ok(pieces) => {
                        let mut events: Vec<ModelEvent> =
                            pieces.into_iter().map(ModelEvent::Text).collect();
                        events.push(ModelEvent::Done {
                            cut_by_limit: false,
                        });
                        self.events(events);
                    }
                    Err(error) => self.fail(format!("Chrome's built-in model failed: {error}")),
                }
            }
            Answer::Timeout(timer) => self.timeout(timer),
            Answer::IntentsStored { call_id, error } => self.intents_stored(call_id, error),
            Answer::ToolDone { call_id, answer } => self.tool_done(call_id, answer),
            Answer::Hook { call_id, call } => {
                self.running.retain(|(id, _)| *id != call_id);
                self.feed(Input::HookAnswer { call_id, call });
            }
            Answer::Person(answers) => {
                self.waiting = false;
                self.keep_alive(true);
                for answer in answers {
                    self.feed(answer);
                }
            }
            Answer::Confirmed { call_id, allowed } => self.confirmed(call_id, allowed),
            Answer::TabTools(found) => self.relisted(found),
            Answer::Stop { reason } => {
                self.drop_model();
                self.running.clear();
                self.confirming.clear();
                self.storing.clear();
                self.feed(Input::Stop { reason });
            }
        }
        self.settle();
    }

    /// Runs what the run asked, and the drive's own answers, until nothing is left; then,
    /// when nothing is under way, waits for the person or says the run is stuck.
    fn settle(&mut self) {
        loop {
            while let Some(output) = self.run.poll() {
                self.output(output);
            }
            if self.finished {
                return;
            }
            match self.own.pop_front() {
                Some(Own::ToolDone { call_id, answer }) => self.tool_done(call_id, answer),
                Some(Own::Run(input)) => self.run.handle(input),
                None => break,
            }
        }
        if !matches!(self.model, Model::Idle) || !self.running.is_empty() || self.waiting {
            // Waiting for confirmations alone is not work either.
            let working = !self.waiting && !self.only_confirming();
            return self.keep_alive(working || !matches!(self.model, Model::Idle));
        }
        let pending = self.run.pending_inputs().to_vec();
        if pending.is_empty() {
            self.run.handle(Input::ModelFailed {
                message: "the run waits for nothing it asked for (a bug in the host)".into(),
            });
            self.settle();
        } else {
            // Waiting for the person is not work: the worker may idle meanwhile.
            self.waiting = true;
            self.keep_alive(false);
            self.out.push_back(Action::WaitForPerson(pending));
        }
    }

    /// The tab's tools listed again: its page tools (and their bindings) replace the run's,
    /// when the tab still shows the origin the run began on; otherwise the run keeps its own.
    fn relisted(&mut self, found: crate::core::page::tabs::Listed) {
        let Some(at) = self.running.iter().position(|(id, _)| id == RELISTING) else {
            return;
        };
        self.running.remove(at);
        let same_origin = |found: &crate::core::page::tabs::TabTools| {
            let origin = found.page.as_ref().map(|p| &p.origin);
            origin.is_some() && origin == self.setup.origin.as_ref()
        };
        let tools = match found {
            Ok(found) if same_origin(&found) => {
                let (tools, bindings, _) = crate::core::run::page::page_run_tools(&found);
                let bound = bindings.into_iter().map(|b| {
                    let listed = crate::core::page::call::Listed {
                        tool: b.tool,
                        document_id: b.document_id,
                    };
                    (b.run_name, Binding::Page(listed))
                });
                self.setup
                    .bindings
                    .retain(|(_, b)| !matches!(b, Binding::Page(_)));
                self.setup.bindings.extend(bound);
                Some(tools)
            }
            _ => None,
        };
        let own_names = actions::own_names(&self.setup.bindings);
        self.feed(Input::PageTools { tools, own_names });
    }

    fn feed(&mut self, input: Input) {
        self.own.push_back(Own::Run(input));
    }

    fn fail(&mut self, message: String) {
        self.feed(Input::ModelFailed { message });
    }

    fn output(&mut self, output: Output) {
        match output {
            Output::Event(event) => self.out.push_back(Action::Event(event)),
            Output::CallModel(request) => self.call_model(request, 0),
            Output::CallTool(invocation) => self.start_tool(invocation),
            Output::CancelTool { call_id } => {
                self.running.retain(|(id, _)| *id != call_id);
                if let Some(at) = self.delayed.iter().position(|(_, c)| c.call_id == call_id) {
                    let (timer, _) = self.delayed.remove(at);
                    self.cancel_timer(timer);
                }
                self.intent_done(&call_id);
                if let Some(at) = self.page_calls.iter().position(|(id, _)| *id == call_id) {
                    let (call_id, frame_id) = self.page_calls.remove(at);
                    if let Some(tab_id) = self.setup.tab_id {
                        self.out.push_back(Action::CancelInFrame {
                            tab_id,
                            frame_id,
                            call_id,
                        });
                    }
                }
            }
            Output::ListPageTools => match self.setup.tab_id {
                Some(tab_id) => {
                    // Under way until the listing comes, like a tool call.
                    self.running.push((RELISTING.into(), false));
                    self.out.push_back(Action::ListTabTools { tab_id });
                }
                None => self.feed(Input::PageTools {
                    tools: None,
                    own_names: Vec::new(),
                }),
            },
            Output::RepairHook(request) if self.setup.hook => {
                let tools: Vec<Value> = (request.tools.iter())
                    .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
                    .collect();
                let value = json!({"raw": request.raw, "name": request.written_name,
                    "error": request.error, "tools": tools});
                // Under way until the hook answers, like a tool call.
                self.running.push((request.call_id.clone(), false));
                self.out.push_back(Action::RepairHook {
                    call_id: request.call_id,
                    request: value,
                });
            }
            // No repair hook: the call's error goes to the model.
            Output::RepairHook(request) => self.feed(Input::HookAnswer {
                call_id: request.call_id,
                call: None,
            }),
            Output::Finished(outcome) => {
                // A run that ended mid-stream (a cap, a failure) drops the model's stream.
                self.drop_model();
                self.finished = true;
                // No timer of the run outlives it.
                for id in std::mem::take(&mut self.timers) {
                    self.out.push_back(Action::CancelTimer { id });
                }
                self.keep_alive(false);
                self.out.push_back(Action::Finished(outcome));
            }
        }
    }

    /// Keeps the worker from idling out, or lets it idle, when that changes.
    fn keep_alive(&mut self, alive: bool) {
        if self.alive != alive {
            self.alive = alive;
            self.out.push_back(Action::KeepAlive(alive));
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn timer(&mut self, ms: u32) -> TimerId {
        let id = TimerId(self.id());
        self.timers.push(id);
        self.out.push_back(Action::Timer { id, ms });
        id
    }

    /// A timer no longer needed: the shell cancels it.
    fn cancel_timer(&mut self, id: TimerId) {
        self.timers.retain(|t| *t != id);
        self.out.push_back(Action::CancelTimer { id });
    }

    fn idle_ms(&self) -> u32 {
        self.setup.model.idle_timeout_ms.unwrap_or(STREAM_IDLE_MS)
    }

    fn key(&self) -> Option<&str> {
        self.setup.key.as_ref().ok().and_then(|k| k.as_deref())
    }

    /// Ends the model call in progress, if any: its fetch aborted, its timer cancelled.
    fn drop_model(&mut self) {
        match std::mem::replace(&mut self.model, Model::Idle) {
            Model::Idle | Model::Chrome { .. } => {}
            Model::Backoff { timer, .. } => self.cancel_timer(timer),
            Model::Opening { id, timer, .. }
            | Model::Refused { id, timer, .. }
            | Model::Streaming { id, timer, .. } => {
                self.cancel_timer(timer);
                self.out.push_back(Action::Abort { id });
            }
        }
    }

    fn call_model(&mut self, request: ModelRequest, attempt: u32) {
        self.usage.step = request.step;
        if let Err(message) = &self.setup.key {
            let message = message.clone();
            return self.fail(message);
        }
        match self.setup.model.provider {
            Provider::Replay => {
                let transcript = self.setup.model.transcript.as_deref().unwrap_or_default();
                match parse_transcript(transcript) {
                    Ok(steps) => self.events(replay_events(&steps, request.step, 8)),
                    Err(message) => self.fail(message),
                }
            }
            Provider::Chrome => {
                let id = FetchId(self.id());
                self.out.push_back(Action::ChromeAvailability { id });
                self.model = Model::Chrome { id, request };
            }
            _ => match build_request(&self.setup.model, &request, self.key()) {
                Ok(http) => {
                    let id = FetchId(self.id());
                    self.out.push_back(Action::Fetch { id, request: http });
                    let timer = self.timer(FIRST_BYTE_MS);
                    self.model = Model::Opening {
                        request,
                        attempt,
                        id,
                        timer,
                    };
                }
                Err(message) => self.fail(message),
            },
        }
    }

    /// A model call failed before any output: retried after a wait when worth it.
    fn retry_or_fail(&mut self, request: ModelRequest, attempt: u32, error: ProviderError) {
        match retry_delay(&error, attempt + 1) {
            Some(wait) => {
                let timer = self.timer(u32::try_from(wait).unwrap_or(u32::MAX));
                self.model = Model::Backoff {
                    request,
                    attempt: attempt + 1,
                    timer,
                };
            }
            None => self.fail(error.message),
        }
    }

    fn head(&mut self, id: FetchId, status: u16, retry_after: Option<String>) {
        let Model::Opening { id: current, .. } = &self.model else {
            return;
        };
        if *current != id {
            return;
        }
        let Model::Opening {
            request,
            attempt,
            timer,
            ..
        } = std::mem::replace(&mut self.model, Model::Idle)
        else {
            unreachable!("matched above");
        };
        self.cancel_timer(timer);
        self.out.push_back(Action::Read { id });
        let timer = self.timer(self.idle_ms());
        self.model = if status >= 400 || status == 0 {
            Model::Refused {
                request,
                attempt,
                id,
                timer,
                status,
                retry_after,
                body: String::new(),
            }
        } else {
            Model::Streaming {
                request,
                attempt,
                id,
                timer,
                decoder: decoder(&self.setup.model),
                fed: false,
            }
        };
    }

    /// Whether `id` is the fetch of the call in progress (a stale one is ignored).
    fn current(&self, id: FetchId) -> bool {
        match &self.model {
            Model::Opening { id: current, .. }
            | Model::Refused { id: current, .. }
            | Model::Streaming { id: current, .. }
            | Model::Chrome { id: current, .. } => *current == id,
            _ => false,
        }
    }

    fn body(&mut self, id: FetchId, text: Option<String>) {
        if !self.current(id) {
            return;
        }
        match &mut self.model {
            Model::Refused { body, timer, .. } => {
                let timer = *timer;
                let more = match text {
                    Some(text) => {
                        body.push_str(&text);
                        body.chars().count() < ERROR_BODY_CHARS
                    }
                    None => false,
                };
                self.cancel_timer(timer);
                if more {
                    self.out.push_back(Action::Read { id });
                    let timer = self.timer(self.idle_ms());
                    if let Model::Refused { timer: t, .. } = &mut self.model {
                        *t = timer;
                    }
                } else {
                    self.refused();
                }
            }
            Model::Streaming { decoder, timer, .. } => {
                let timer = *timer;
                let events = match &text {
                    Some(text) => decoder.push(text),
                    None => decoder.finish(),
                };
                self.cancel_timer(timer);
                self.events(events);
                if let Model::Streaming { id, .. } = &self.model {
                    let id = *id;
                    if text.is_none() {
                        // The decoder settles every stream at its end; this one did not.
                        self.model = Model::Idle;
                        return self.fail("the model's stream ended without an end".into());
                    }
                    self.out.push_back(Action::Read { id });
                    let timer = self.timer(self.idle_ms());
                    if let Model::Streaming { timer: t, .. } = &mut self.model {
                        *t = timer;
                    }
                }
            }
            _ => {}
        }
    }

    /// The error answer's body is read (or no more of it is wanted): say what went wrong.
    fn refused(&mut self) {
        let Model::Refused {
            request,
            attempt,
            id,
            timer,
            status,
            retry_after,
            body,
        } = std::mem::replace(&mut self.model, Model::Idle)
        else {
            return;
        };
        self.cancel_timer(timer);
        self.out.push_back(Action::Abort { id });
        let body: String = body.chars().take(ERROR_BODY_CHARS).collect();
        let error = classify_status(
            status,
            retry_after.as_deref(),
            &body,
            &self.setup.model,
            self.key(),
        );
        self.retry_or_fail(request, attempt, error);
    }

    fn fetch_failed(&mut self, id: FetchId, message: String) {
        if !self.current(id) {
            return;
        }
        match &self.model {
            Model::Opening { .. } => {
                let origin = origin_of(&self.setup.model.base_url).to_owned();
                let error = ProviderError {
                    message: redact(
                        &format!("{origin} could not be reached: {message}"),
                        self.key(),
                    ),
                    retryable: true,
                    retry_after_ms: None,
                };
                self.open_failed(error);
            }
            // The error's body could not be read: what came of it says what went wrong.
            Model::Refused { .. } => self.refused(),
            Model::Streaming { .. } => self.events(vec![ModelEvent::Error(ProviderError {
                message: format!("the model's stream broke: {message}"),
                retryable: true,
                retry_after_ms: None,
            })]),
            _ => {}
        }
    }

    /// The request in progress failed before its head: retried when worth it.
    fn open_failed(&mut self, error: ProviderError) {
        if let Model::Opening {
            request,
            attempt,
            id,
            timer,
        } = std::mem::replace(&mut self.model, Model::Idle)
        {
            self.cancel_timer(timer);
            self.out.push_back(Action::Abort { id });
            self.retry_or_fail(request, attempt, error);
        }
    }

    fn timeout(&mut self, fired: TimerId) {
        self.timers.retain(|t| *t != fired);
        if let Some(at) = self.delayed.iter().position(|(timer, _)| *timer == fired) {
            let (_, invocation) = self.delayed.remove(at);
            self.running.retain(|(id, _)| *id != invocation.call_id);
            return self.start_tool(invocation);
        }
        match &self.model {
            Model::Backoff { timer, .. } if *timer == fired => {
                if let Model::Backoff {
                    request, attempt, ..
                } = std::mem::replace(&mut self.model, Model::Idle)
                {
                    self.call_model(request, attempt);
                }
            }
            Model::Opening { timer, .. } if *timer == fired => {
                let origin = origin_of(&self.setup.model.base_url);
                let error = ProviderError {
                    message: format!("{origin} sent nothing within {} s", FIRST_BYTE_MS / 1000),
                    retryable: true,
                    retry_after_ms: None,
                };
                self.open_failed(error);
            }
            Model::Refused { timer, .. } if *timer == fired => self.refused(),
            Model::Streaming { timer, .. } if *timer == fired => {
                // A stream that goes silent for too long is a dead connection, not a slow model.
                let idle_ms = self.idle_ms();
                self.events(vec![ModelEvent::Error(ProviderError::fatal(format!(
                    "the model's stream sent nothing for {idle_ms} ms; the connection was dropped"
                )))]);
            }
            _ => {}
        }
    }

    /// Model events into the run, recorded for the transcript. An error ends the call: it is
    /// retried when no output went to the run yet and it is worth it.
    fn events(&mut self, events: Vec<ModelEvent>) {
        let fed_before = match &self.model {
            Model::Streaming { fed, .. } => *fed,
            _ => true,
        };
        for event in events {
            let recorder = self.recorder.get_or_insert_with(Default::default);
            recorder.observe(&event);
            if matches!(event, ModelEvent::Done { .. }) {
                if let Some(done) = self.recorder.take() {
                    self.transcript.push(done.line());
                }
            }
            match event {
                ModelEvent::Text(text) => self.run.handle(Input::ModelText(text)),
                ModelEvent::Native(delta) => self.run.handle(Input::ModelNative(delta)),
                ModelEvent::Report {
                    usage,
                    finish_reason,
                } => self.usage.report = Some((usage, finish_reason)),
                ModelEvent::Done { cut_by_limit } => {
                    self.step_used();
                    self.end_stream();
                    self.run.handle(Input::ModelDone { cut_by_limit });
                }
                ModelEvent::Error(error) => {
                    let message = redact(&error.message, self.key());
                    match std::mem::replace(&mut self.model, Model::Idle) {
                        Model::Streaming {
                            request,
                            attempt,
                            id,
                            timer,
                            ..
                        } => {
                            self.cancel_timer(timer);
                            self.out.push_back(Action::Abort { id });
                            if fed_before {
                                self.run.handle(Input::ModelFailed { message });
                            } else {
                                self.retry_or_fail(
                                    request,
                                    attempt,
                                    ProviderError { message, ..error },
                                );
                            }
                        }
                        _ => self.run.handle(Input::ModelFailed { message }),
                    }
                    break;
                }
            }
            if let Model::Streaming { fed, .. } = &mut self.model {
                *fed = true;
            }
        }
    }

    /// The model's output ended: its request is done with.
    fn end_stream(&mut self) {
        if let Model::Streaming { timer, .. } = std::mem::replace(&mut self.model, Model::Idle) {
            self.cancel_timer(timer);
        }
    }
}

#[cfg(test)]
mod tests;
