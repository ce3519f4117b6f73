//! A run (one turn of a conversation) as a sans-IO state machine.
//!
//! The caller drives it like quinn-proto or str0m: [`Run::start`], then after every
//! [`Run::handle`] drain [`Run::poll`] until it returns `None`. The run asks for model output
//! ([`Output::CallModel`]) and tool executions ([`Output::CallTool`]) as values; the shell
//! performs them and feeds back [`Input`]s. Time never enters: timeouts are inputs.
//!
//! What a run does (product.md §5):
//! - each step streams one model output through the parser and repair ([`StepStream`]);
//! - ready calls run by kind: local, page and MCP tools through the shell, frontend tools end
//!   the run (the client runs them and starts a follow-up run), visitor tools wait for the
//!   person (`pendingInputs`, answered by [`Input::SubmitToolResult`] or
//!   [`Input::RejectToolCall`]);
//! - `maxSteps` caps the tool calls of the turn; past it the model is told the budget is spent
//!   and is offered no tools;
//! - a call that repair could not make valid is asked again once (reask) when the run allows
//!   it; its error always goes to the model as the call's result;
//! - a tool may end the turn at once ([`ToolOutcome::EndTurn`]); later output is dropped;
//! - with an output schema, `submit_result` (reserved) ends the turn with valid arguments;
//! - middleware wraps every call: global layers first, then the conversation's; built in are
//!   observe, redact, block and the data-not-instructions wrapper.

pub mod control;
pub mod drive;
mod exchange;
mod hook;
pub mod local;
mod middleware;
pub mod page;
mod tools;

pub use crate::core::gate::{declared, Middleware, Pattern, MAX_DELAY_MS};
pub use crate::core::provider::ModelRequest;
pub use exchange::{HookRequest, Input, Output, RunInput, RunOutcome};
pub use middleware::wrap_as_data;
use tools::distinct;
pub use tools::{PendingInput, RunTool, SourceError, ToolInvocation, ToolKind, ToolOutcome};

use std::collections::VecDeque;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::agui::{ContentPart, Event, Message, Outcome, ToolCall, ToolContent};
use super::native::NativeCalls;
use super::parse::{CallParser, Piece};
use super::provider::usage::{RunUsage, CUSTOM_USAGE};
use super::stream::{Ids, ReadyCall, RejectedCall, Rejection, StepOutcome, StepStream};
use super::toolset::{ToolSet, ToolSpec};

/// The reserved name of the structured-output tool.
pub const SUBMIT_RESULT: &str = "submit_result";
pub use crate::core::limits::{DEFAULT_MAX_STEPS, MAX_MODEL_OUTPUT_BYTES};
/// The result of a visitor call the person declined without a reason.
pub const VISITOR_DECLINED: &str = "The visitor declined.";

/// `CUSTOM` event: what became of the run's conversation (`forked`: a new one carrying the
/// history, since the tools changed; `resumed`: a cut run's calls that may have run).
pub const CUSTOM_CONVERSATION: &str = "webmcp_host.conversation";
/// `CUSTOM` event: the page's tools changed during the run, listed again after a page call:
/// `{added: [names], removed: [names]}` (the next model step has the new tools).
pub const CUSTOM_TOOLS_CHANGED: &str = "webmcp_host.tools_changed";
/// `CUSTOM` event: an MCP server opened as a tool source: `{source, protocol, tools}` (the
/// protocol revision it speaks, the tools it listed).
pub const CUSTOM_TOOL_SOURCE: &str = "webmcp_host.tool_source";
/// `CUSTOM` event: a tool source failed or a tool was left out.
pub const CUSTOM_TOOL_SOURCE_ERROR: &str = "webmcp_host.tool_source_error";
/// `CUSTOM` event: a visitor call waits for the person.
pub const CUSTOM_TOOL_INPUT: &str = "webmcp_host.tool_input";
/// `CUSTOM` event: a call and its result (observe middleware).
pub const CUSTOM_TOOL_OBSERVE: &str = "webmcp_host.tool_observe";
/// `CUSTOM` event: an invalid call is asked again.
pub const CUSTOM_TOOL_REASK: &str = "webmcp_host.tool_reask";
/// `CUSTOM` event: how a call that acts was allowed without asking the person
/// (`{toolCallId, confirmation: "allowed by site policy <origin>"}`), just before its result.
pub const CUSTOM_TOOL_CONFIRMATION: &str = "webmcp_host.tool_confirmation";
/// A page call whose result breaks the tool's own output schema: `{toolCallId, outputErrors:
/// [{pointer, message}]}`, just before its result.
pub const CUSTOM_TOOL_OUTPUT_ERRORS: &str = "webmcp_host.tool_output_errors";

enum Phase {
    Model {
        step: Box<StepStream>,
        parser: CallParser,
        native: NativeCalls,
    },
    Tools,
    Done,
}

/// One run.
pub struct Run {
    /// Bytes of model output in the current step (see [`MAX_MODEL_OUTPUT_BYTES`]).
    step_bytes: usize,
    input: RunInput,
    tools: Rc<ToolSet>,
    kinds: Vec<(String, ToolKind, Option<String>)>,
    /// The run's tools (names distinct), for a new page listing to replace the page's.
    run_tools: Vec<RunTool>,
    /// Whether a page tool ran in this step: the tab is listed again before the next.
    page_called: bool,
    /// Waiting for that listing ([`Input::PageTools`]).
    relisting: bool,
    ids: Option<Ids>,
    phase: Phase,
    out: VecDeque<Output>,
    /// The client's view: input messages and this run's visible messages.
    visible: Vec<Message>,
    /// The model's view.
    model: Vec<Message>,
    model_steps: usize,
    /// Whether the current step's output held calls (run, rejected or waiting). A step that
    /// held none ends the turn, even when it held no text either.
    step_called: bool,
    executed: usize,
    budget_told: bool,
    counts: Vec<(String, usize)>,
    /// Calls running in the shell.
    running: Vec<String>,
    pending_inputs: Vec<PendingInput>,
    frontend: Vec<ReadyCall>,
    /// Invalid calls to ask again about in the next step.
    reask: Vec<RejectedCall>,
    reasked: bool,
    /// Calls handed to the repair hook, waiting for its answer.
    hooks: Vec<RejectedCall>,
    last_text: String,
    /// The model steps' use so far.
    usage: RunUsage,
}

impl Run {
    /// Starts a run: `RUN_STARTED`, source errors, and the first model call are queued.
    pub fn start(mut input: RunInput) -> Run {
        let given = std::mem::take(&mut input.tools);
        let mut tools = distinct(given, &mut input.source_errors);
        if let Some(schema) = &input.output_schema {
            tools.retain(|t| t.spec.name != SUBMIT_RESULT);
            tools.push(RunTool {
                spec: ToolSpec {
                    name: SUBMIT_RESULT.into(),
                    description: "Submit the final result of this task. Call it once, with arguments that match the schema; it ends the turn.".into(),
                    input_schema: schema.clone(),
                },
                kind: ToolKind::Local,
                data_source: None,
            });
        }
        let kinds = tools
            .iter()
            .map(|t| (t.spec.name.clone(), t.kind, t.data_source.clone()))
            .collect();
        let run_tools = tools.clone();
        let (set, problems) = ToolSet::new(tools.into_iter().map(|t| t.spec));
        let mut run = Run {
            step_bytes: 0,
            visible: input.messages.clone(),
            model: input.messages.clone(),
            ids: Some(Ids::new(format!("{}-", input.run_id))),
            input,
            tools: Rc::new(set),
            kinds,
            run_tools,
            page_called: false,
            relisting: false,
            phase: Phase::Tools,
            out: VecDeque::new(),
            model_steps: 0,
            step_called: false,
            executed: 0,
            budget_told: false,
            counts: Vec::new(),
            running: Vec::new(),
            pending_inputs: Vec::new(),
            frontend: Vec::new(),
            reask: Vec::new(),
            reasked: false,
            hooks: Vec::new(),
            last_text: String::new(),
            usage: RunUsage::default(),
        };
        run.emit(Event::RunStarted {
            thread_id: run.input.thread_id.clone(),
            run_id: run.input.run_id.clone(),
        });
        for value in std::mem::take(&mut run.input.notices) {
            run.emit(Event::Custom {
                name: CUSTOM_CONVERSATION.into(),
                value,
            });
        }
        for value in run.input.sources.clone() {
            run.emit(Event::Custom {
                name: CUSTOM_TOOL_SOURCE.into(),
                value,
            });
        }
        for error in run.input.source_errors.clone() {
            let message = run.redact_text(&error.message);
            run.emit(Event::Custom {
                name: CUSTOM_TOOL_SOURCE_ERROR.into(),
                value: json!({"source": error.source, "message": message}),
            });
        }
        for problem in problems {
            run.emit(Event::Custom {
                name: CUSTOM_TOOL_SOURCE_ERROR.into(),
                value: json!({"source": "tools", "message": problem}),
            });
        }
        run.begin_step();
        run
    }

    /// The next thing the shell must do or know; `None` when there is nothing until the next
    /// input.
    pub fn poll(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Whether the run ended.
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Visitor tool calls waiting for the person.
    pub fn pending_inputs(&self) -> &[PendingInput] {
        &self.pending_inputs
    }

    /// The conversation as the client holds it.
    pub fn messages(&self) -> &[Message] {
        &self.visible
    }

    /// The model steps' use so far (each [`Input::Usage`]).
    pub fn usage(&self) -> &RunUsage {
        &self.usage
    }

    /// Feeds the run what the shell learnt; then drain [`Run::poll`].
    pub fn handle(&mut self, input: Input) {
        if self.is_done() {
            return; // late input after the turn ended is dropped
        }
        match input {
            Input::ModelText(text) => {
                if self.over_output_cap(text.len()) {
                    return;
                }
                if let Phase::Model { step, parser, .. } = &mut self.phase {
                    let events: Vec<Event> = parser
                        .push(&text)
                        .into_iter()
                        .flat_map(|p| step.piece(p))
                        .collect();
                    self.emit_all(events);
                }
            }
            Input::ModelNative(delta) => {
                let bytes = [&delta.id, &delta.name, &delta.arguments]
                    .iter()
                    .map(|s| s.as_ref().map_or(0, String::len))
                    .sum();
                if self.over_output_cap(bytes) {
                    return;
                }
                if let Phase::Model { step, native, .. } = &mut self.phase {
                    let events: Vec<Event> = native
                        .push(delta)
                        .into_iter()
                        .flat_map(|p| step.piece(p))
                        .collect();
                    self.emit_all(events);
                }
            }
            Input::ModelDone { cut_by_limit } => {
                if let Phase::Model {
                    mut step,
                    parser,
                    mut native,
                } = std::mem::replace(&mut self.phase, Phase::Tools)
                {
                    let mut pieces: Vec<Piece> = parser.finish(cut_by_limit);
                    pieces.extend(native.finish(cut_by_limit));
                    let events: Vec<Event> =
                        pieces.into_iter().flat_map(|p| step.piece(p)).collect();
                    self.emit_all(events);
                    let (events, outcome) = step.finish();
                    self.emit_all(events);
                    self.after_model(outcome);
                }
            }
            Input::ModelFailed { message } => self.fail(message),
            Input::ToolDone { call_id, outcome } => {
                if let Some(at) = self.running.iter().position(|id| *id == call_id) {
                    self.running.remove(at);
                    self.tool_finished(&call_id, outcome);
                }
            }
            Input::PageTools { tools, own_names } => {
                if std::mem::take(&mut self.relisting) {
                    if let Some(page) = tools {
                        self.replace_page_tools(page, own_names);
                    }
                    self.begin_step();
                }
            }
            Input::SubmitToolResult { call_id, value } => {
                if let Some(at) = self
                    .pending_inputs
                    .iter()
                    .position(|p| p.call_id == call_id)
                {
                    self.pending_inputs.remove(at);
                    self.tool_finished(&call_id, ToolOutcome::Ok(value));
                }
            }
            Input::RejectToolCall { call_id, error } => {
                if let Some(at) = self
                    .pending_inputs
                    .iter()
                    .position(|p| p.call_id == call_id)
                {
                    self.pending_inputs.remove(at);
                    let error = error
                        .filter(|e| !e.trim().is_empty())
                        .unwrap_or_else(|| VISITOR_DECLINED.into());
                    self.tool_finished(&call_id, ToolOutcome::Error(error));
                }
            }
            Input::HookAnswer { call_id, call } => self.hook_answered(&call_id, call),
            Input::Usage(step) => {
                let value = self.usage.add(step);
                self.emit(Event::Custom {
                    name: CUSTOM_USAGE.into(),
                    value,
                });
            }
            Input::Custom { name, value } => self.emit(Event::Custom { name, value }),
            Input::Stop { reason } => self.stop(reason),
        }
    }

    fn emit(&mut self, event: Event) {
        self.out.push_back(Output::Event(event));
    }

    fn emit_all(&mut self, events: impl IntoIterator<Item = Event>) {
        for event in events {
            self.emit(event);
        }
    }

    fn next_id(&mut self, kind: &str) -> String {
        self.ids
            .as_mut()
            .expect("ids are held between model steps")
            .next(kind)
    }

    fn step_name(&self) -> String {
        format!("step_{}", self.model_steps)
    }

    fn begin_step(&mut self) {
        self.model_steps += 1;
        let budget_spent = self.executed >= self.input.max_steps;
        let mut messages = self.model.clone();
        let tools: Vec<ToolSpec> = if budget_spent {
            if !self.budget_told {
                self.budget_told = true;
            }
            messages.push(Message::User {
                id: self.next_id("note"),
                content: format!(
                    "The tool budget of this turn ({} calls) is spent. Answer now with what you have; do not call tools.",
                    self.input.max_steps
                ),
            });
            Vec::new()
        } else {
            self.tools.specs().cloned().collect()
        };
        for rejected in std::mem::take(&mut self.reask) {
            let name = rejected.name.clone().unwrap_or_default();
            let schema = self
                .tools
                .get(&name)
                .map(|t| t.input_schema.to_string())
                .unwrap_or_default();
            self.emit(Event::Custom {
                name: CUSTOM_TOOL_REASK.into(),
                value: json!({"toolCallId": rejected.id, "toolCallName": name, "error": rejected.error}),
            });
            messages.push(Message::User {
                id: self.next_id("note"),
                content: format!(
                    "Your call to `{name}` was not valid and did not run: {}. Its input schema is {schema}. Write the call again, corrected.",
                    rejected.error
                ),
            });
        }
        self.emit(Event::StepStarted {
            step_name: self.step_name(),
        });
        let ids = self.ids.take().expect("ids are held between model steps");
        let step = StepStream::new(Rc::clone(&self.tools), ids, self.visible.clone());
        self.out.push_back(Output::CallModel(ModelRequest {
            step: self.model_steps,
            messages,
            tools,
        }));
        self.phase = Phase::Model {
            step: Box::new(step),
            parser: CallParser::new(),
            native: NativeCalls::default(),
        };
        self.step_bytes = 0;
    }

    /// Counts model output; over the cap, the run fails (and the shell drops the stream).
    fn over_output_cap(&mut self, bytes: usize) -> bool {
        if !matches!(self.phase, Phase::Model { .. }) {
            return false;
        }
        self.step_bytes += bytes;
        if self.step_bytes <= MAX_MODEL_OUTPUT_BYTES {
            return false;
        }
        self.fail(format!(
            "the model's output in this step passed {MAX_MODEL_OUTPUT_BYTES} bytes (max_model_output_bytes); the run was ended"
        ));
        true
    }

    fn after_model(&mut self, outcome: StepOutcome) {
        let StepOutcome {
            message,
            calls,
            rejected,
            ids,
        } = outcome;
        self.ids = Some(ids);
        let Message::Assistant {
            content,
            tool_calls,
            id,
        } = &message
        else {
            unreachable!("a step yields an assistant message")
        };
        self.last_text = content.clone().unwrap_or_default();
        if content.is_some() || !tool_calls.is_empty() {
            self.visible.push(message.clone());
        }
        // The model's view also holds the calls that will not run, with their errors.
        let mut model_calls = tool_calls.clone();
        for r in &rejected {
            let arguments = match serde_json::from_str::<Value>(&r.raw) {
                Ok(Value::Object(_)) => r.raw.clone(),
                _ => "{}".to_owned(),
            };
            let name = r.name.clone().unwrap_or_else(|| r.written_name.clone());
            model_calls.push(ToolCall::function(r.id.clone(), name, arguments));
        }
        self.step_called = !model_calls.is_empty();
        if content.is_some() || !model_calls.is_empty() {
            self.model.push(Message::Assistant {
                id: id.clone(),
                content: content.clone(),
                tool_calls: model_calls,
            });
        }
        let budget_spent = self.budget_told;
        let will_reask = self.input.reask && !self.reasked && !budget_spent;
        for r in &rejected {
            let repairable = matches!(r.reason, Rejection::Invalid | Rejection::UnknownTool);
            let reasked_next = will_reask && r.reason == Rejection::Invalid && r.name.is_some();
            if self.input.hook && repairable && !reasked_next && !budget_spent {
                self.hooks.push(r.clone());
                self.out.push_back(Output::RepairHook(HookRequest {
                    call_id: r.id.clone(),
                    raw: r.raw.clone(),
                    written_name: r.written_name.clone(),
                    error: r.error.clone(),
                    tools: self.tools.specs().cloned().collect(),
                }));
                continue;
            }
            self.push_model_error(&r.id, &r.error);
        }
        if will_reask {
            let invalid: Vec<RejectedCall> = rejected
                .iter()
                .filter(|r| r.reason == Rejection::Invalid && r.name.is_some())
                .cloned()
                .collect();
            if !invalid.is_empty() {
                self.reasked = true;
                self.reask = invalid;
            }
        }

        if budget_spent && !calls.is_empty() {
            // Told to answer without tools, the model called some anyway: they do not run.
            for call in &calls {
                self.finish_call_message(
                    &call.id,
                    ToolOutcome::Error("the tool budget is spent; the call did not run".into()),
                );
            }
            self.end_step();
            let text = self.last_text.clone();
            self.finish(RunOutcome::BudgetSpent { text });
            return;
        }
        for call in calls {
            if self.is_done() {
                break;
            }
            self.dispatch(call);
        }
        if !self.is_done() && !self.busy() {
            self.after_tools(rejected.is_empty());
        }
    }

    /// Whether calls of the current step are still running or waiting.
    fn busy(&self) -> bool {
        !self.running.is_empty() || !self.pending_inputs.is_empty() || !self.hooks.is_empty()
    }

    /// A rejected call's error, in the model's view only (the client saw it rejected).
    fn last_assistant_id(&self) -> Option<String> {
        self.model.iter().rev().find_map(|m| match m {
            Message::Assistant { id, .. } => Some(id.clone()),
            _ => None,
        })
    }

    /// Puts a call that the hook repaired into the last assistant message of both views
    /// (replacing the rejected call's entry in the model's view).
    fn attach_call(&mut self, call: ToolCall) {
        let id = self.last_assistant_id();
        for view in [&mut self.visible, &mut self.model] {
            let found = view.iter_mut().rev().find_map(|m| match m {
                Message::Assistant {
                    id: mid,
                    tool_calls,
                    ..
                } if Some(mid.clone()) == id => Some(tool_calls),
                _ => None,
            });
            match found {
                Some(tool_calls) => {
                    tool_calls.retain(|c| c.id != call.id);
                    tool_calls.push(call.clone());
                }
                None => view.push(Message::Assistant {
                    id: id.clone().unwrap_or_default(),
                    content: None,
                    tool_calls: vec![call.clone()],
                }),
            }
        }
    }

    fn kind(&self, name: &str) -> (ToolKind, Option<String>) {
        self.kinds
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, k, s)| (*k, s.clone()))
            .unwrap_or((ToolKind::Local, None))
    }

    fn dispatch(&mut self, call: ReadyCall) {
        if self.input.output_schema.is_some() && call.name == SUBMIT_RESULT {
            // Valid: repair validated it against the output schema.
            let value = Value::Object(call.arguments.clone());
            self.finish_call_message(&call.id, ToolOutcome::Ok("submitted".into()));
            self.cancel_running("the turn ended");
            self.end_step();
            self.finish(RunOutcome::Submitted { value });
            return;
        }
        let (kind, _) = self.kind(&call.name);
        if kind == ToolKind::Frontend {
            self.frontend.push(call);
            return;
        }
        if self.executed >= self.input.max_steps {
            let error = format!(
                "the tool budget of this turn ({} calls) is spent; the call did not run. Answer with what you have.",
                self.input.max_steps
            );
            self.finish_call_message(&call.id, ToolOutcome::Error(error));
            return;
        }
        self.executed += 1;
        let call_count = {
            match self.counts.iter_mut().find(|(n, _)| *n == call.name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    self.counts.push((call.name.clone(), 1));
                    1
                }
            }
        };
        // Pre-call middleware, in order.
        let pass = match self.before_call(&call.id, &call.name, &call.arguments, call_count) {
            Ok(pass) => pass,
            Err(error) => return self.finish_call_message(&call.id, ToolOutcome::Error(error)),
        };
        if kind == ToolKind::Page {
            self.page_called = true;
        }
        match kind {
            ToolKind::Visitor => {
                let pending = PendingInput {
                    call_id: call.id.clone(),
                    turn_id: self.input.run_id.clone(),
                    name: call.name.clone(),
                    args: call.arguments.clone(),
                };
                self.emit(Event::Custom {
                    name: CUSTOM_TOOL_INPUT.into(),
                    value: serde_json::to_value(&pending).unwrap_or(Value::Null),
                });
                self.pending_inputs.push(pending);
            }
            _ => {
                self.running.push(call.id.clone());
                self.out.push_back(Output::CallTool(ToolInvocation {
                    call_id: call.id,
                    turn_id: self.input.run_id.clone(),
                    name: call.name,
                    kind,
                    arguments: call.arguments,
                    context: self.input.context.clone(),
                    call_count,
                    pass,
                }));
            }
        }
    }

    fn tool_finished(&mut self, call_id: &str, outcome: ToolOutcome) {
        if let ToolOutcome::EndTurn { result, outcome } = outcome {
            let tool = self.call_name(call_id);
            self.finish_call_message(call_id, ToolOutcome::Ok(result));
            self.cancel_running("the turn ended");
            self.end_step();
            self.finish(RunOutcome::EndedByTool { tool, outcome });
            return;
        }
        self.result_message(call_id, outcome, true);
        if !self.busy() {
            self.after_tools(true);
        }
    }

    fn call_name(&self, call_id: &str) -> String {
        self.visible
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls
                    .iter()
                    .find(|c| c.id == call_id)
                    .map(|c| c.function.name.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The result message of a call the host ended itself (blocked, over budget, cancelled,
    /// submitted): see [`Run::result_message`].
    fn finish_call_message(&mut self, call_id: &str, outcome: ToolOutcome) {
        self.result_message(call_id, outcome, false);
    }

    /// The result message of a call: secrets redacted first (before any event, view or
    /// request sees it), post-call middleware (in reverse order), the data wrapper for
    /// untrusted tools (around what the tool said, a failure as well as a result),
    /// `TOOL_CALL_RESULT`, and both views of the conversation.
    fn result_message(&mut self, call_id: &str, outcome: ToolOutcome, from_tool: bool) {
        let name = self.call_name(call_id);
        let (_, data_source) = self.kind(&name);
        let mut media = Vec::new();
        let (ok, mut content) = match outcome {
            ToolOutcome::Ok(text) => (true, self.result_text(&text)),
            ToolOutcome::Media { text, parts } => {
                media = self.redact_parts(parts);
                (true, self.result_text(&text))
            }
            ToolOutcome::Error(error) => (
                false,
                json!({"error": self.result_text(&error)}).to_string(),
            ),
            ToolOutcome::EndTurn { result, .. } => (true, self.result_text(&result)),
        };
        let wrap = ok || from_tool;
        if wrap {
            if let Some(source) = data_source {
                content = wrap_as_data(&source, &content);
            }
        }
        for layer in self.input.middleware.clone().iter().rev() {
            match layer {
                Middleware::DataWrap { source } if wrap => content = wrap_as_data(source, &content),
                Middleware::Observe => self.emit(Event::Custom {
                    name: CUSTOM_TOOL_OBSERVE.into(),
                    value: json!({"phase": "result", "toolCallId": call_id, "toolCallName": name, "ok": ok}),
                }),
                _ => {}
            }
        }
        let message_id = self.next_id("result");
        // The model gets the text alone; the event carries the media besides, after it.
        let shown = if media.is_empty() {
            ToolContent::Text(content.clone())
        } else {
            let text = ContentPart::Text {
                text: content.clone(),
            };
            ToolContent::Parts(std::iter::once(text).chain(media).collect())
        };
        self.emit(Event::ToolCallResult {
            message_id: message_id.clone(),
            tool_call_id: call_id.to_owned(),
            content: shown,
            role: Some(super::agui::Role::Tool),
        });
        let message = Message::Tool {
            id: message_id,
            content,
            tool_call_id: call_id.to_owned(),
        };
        self.visible.push(message.clone());
        self.model.push(message);
    }

    fn after_tools(&mut self, had_no_rejections: bool) {
        self.end_step();
        if !self.frontend.is_empty() {
            let frontend = std::mem::take(&mut self.frontend);
            let pending_tool_call_ids = frontend.iter().map(|c| c.id.clone()).collect();
            let calls = (frontend.into_iter())
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect();
            let outcome = Outcome::Success {
                pending_tool_call_ids,
            };
            self.finish_as(RunOutcome::FrontendTools { calls }, Some(outcome));
            return;
        }
        // An output with no call ends the turn, also an empty one: small local models end
        // their turn with nothing after a result (the model's view then still ends with that
        // result, and asking again got nothing again until the step budget was spent).
        if !self.step_called && had_no_rejections && self.reask.is_empty() {
            let text = self.last_text.clone();
            self.finish(RunOutcome::Completed { text });
            return;
        }
        if self.model_steps > self.input.max_steps + 2 {
            let text = self.last_text.clone();
            self.finish(RunOutcome::BudgetSpent { text });
            return;
        }
        // A page may register other tools once one of its tools ran (a view of its own).
        if std::mem::take(&mut self.page_called) {
            self.relisting = true;
            self.out.push_back(Output::ListPageTools);
            return;
        }
        self.begin_step();
    }

    /// The page's tools listed again: they replace the page's tools of the run (the others
    /// stay); what was added or removed is said (`webmcp_host.tools_changed`).
    fn replace_page_tools(&mut self, page: Vec<RunTool>, own_names: Vec<(String, String)>) {
        let mut errors = Vec::new();
        let Some((tools, added, removed)) =
            tools::with_page_tools(&self.run_tools, page, &mut errors)
        else {
            return;
        };
        self.kinds = (tools.iter())
            .map(|t| (t.spec.name.clone(), t.kind, t.data_source.clone()))
            .collect();
        let (set, _) = ToolSet::new(tools.iter().map(|t| t.spec.clone()));
        self.tools = Rc::new(set);
        self.run_tools = tools;
        self.input.own_names = own_names;
        self.emit(Event::Custom {
            name: CUSTOM_TOOLS_CHANGED.into(),
            value: json!({"added": added, "removed": removed}),
        });
        for error in errors {
            let message = self.redact_text(&error.message);
            self.emit(Event::Custom {
                name: CUSTOM_TOOL_SOURCE_ERROR.into(),
                value: json!({"source": error.source, "message": message}),
            });
        }
    }

    fn end_step(&mut self) {
        self.emit(Event::StepFinished {
            step_name: self.step_name(),
        });
    }

    /// Ends every call still running or waiting: each gets an error result (so the
    /// conversation stays whole) and running ones are cancelled in the shell.
    fn cancel_running(&mut self, reason: &str) {
        for pending in std::mem::take(&mut self.pending_inputs) {
            self.finish_call_message(
                &pending.call_id,
                ToolOutcome::Error(format!("dismissed: {reason}")),
            );
        }
        for call_id in std::mem::take(&mut self.running) {
            // Under way when the run ended: whether it acted is not known, and never hidden.
            let message = format!("cancelled while under way ({reason}): this call may have run; check its effect before calling it again");
            self.finish_call_message(&call_id, ToolOutcome::Error(message));
            self.out.push_back(Output::CancelTool { call_id });
        }
        for hooked in std::mem::take(&mut self.hooks) {
            self.push_model_error(&hooked.id, &hooked.error);
        }
        self.frontend.clear();
    }

    fn stop(&mut self, reason: String) {
        match std::mem::replace(&mut self.phase, Phase::Tools) {
            Phase::Model { step, .. } => {
                let (events, outcome) = step.abort();
                self.emit_all(events);
                self.ids = Some(outcome.ids);
                if let Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } = &outcome.message
                {
                    if content.is_some() || !tool_calls.is_empty() {
                        self.visible.push(outcome.message.clone());
                    }
                }
            }
            Phase::Tools => {}
            Phase::Done => return,
        }
        self.cancel_running(&reason);
        self.end_step();
        self.finish_as(RunOutcome::Stopped { reason }, Some(Outcome::Cancelled));
    }

    fn fail(&mut self, message: String) {
        if let Phase::Model { step, .. } = std::mem::replace(&mut self.phase, Phase::Tools) {
            let (events, outcome) = step.abort();
            self.emit_all(events);
            self.ids = Some(outcome.ids);
        }
        self.cancel_running("the model call failed");
        self.emit(Event::RunError {
            message: message.clone(),
            code: Some("model_error".into()),
            usage: self.usage.token_usage(),
        });
        self.phase = Phase::Done;
        self.out
            .push_back(Output::Finished(RunOutcome::Failed { message }));
    }

    /// Ends the run: `RUN_FINISHED` with the host's outcome as `result`, AG-UI's `outcome`
    /// (absent: success) and the run's usage.
    fn finish(&mut self, outcome: RunOutcome) {
        self.finish_as(outcome, None);
    }

    fn finish_as(&mut self, outcome: RunOutcome, agui: Option<Outcome>) {
        self.emit(Event::RunFinished {
            thread_id: self.input.thread_id.clone(),
            run_id: self.input.run_id.clone(),
            result: Some(serde_json::to_value(&outcome).unwrap_or(Value::Null)),
            outcome: agui,
            usage: self.usage.token_usage(),
        });
        self.phase = Phase::Done;
        self.out.push_back(Output::Finished(outcome));
    }
}

#[cfg(test)]
mod tests;
