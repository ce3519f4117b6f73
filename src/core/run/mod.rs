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

mod calls;
pub mod control;
pub mod drive;
mod end;
mod ended;
mod exchange;
mod hook;
pub mod local;
pub mod middleware;
pub mod page;
mod step;
mod tools;

pub use crate::core::gate::{declared, Middleware, Pattern, MAX_DELAY_MS};
pub use crate::core::provider::ModelRequest;
pub use ended::RunEnded;
pub use exchange::{HookRequest, Input, Output, RunInput, RunOutcome};
pub use middleware::wrap_as_data;
use tools::distinct;
pub use tools::{
    PendingInput, RunTool, SourceError, ToolAnswer, ToolInvocation, ToolKind, ToolOutcome,
};

use std::collections::VecDeque;
use std::rc::Rc;

use serde_json::{json, Map};

use super::agui::{Event, Message, ToolCall};
use super::agui::{
    CUSTOM_CONVERSATION, CUSTOM_TOOLS_CHANGED, CUSTOM_TOOL_INPUT, CUSTOM_TOOL_OBSERVE,
    CUSTOM_TOOL_REASK, CUSTOM_TOOL_SOURCE, CUSTOM_TOOL_SOURCE_ERROR, CUSTOM_USAGE,
};
use super::native::NativeCalls;
use super::parse::{CallParser, Piece};
use super::provider::usage::RunUsage;
use super::stream::{Ids, ReadyCall, RejectedCall, StepStream};
use super::toolset::{ToolSet, ToolSpec};

/// The reserved name of the structured-output tool.
pub const SUBMIT_RESULT: &str = "submit_result";
pub use crate::core::limits::{DEFAULT_MAX_STEPS, MAX_MODEL_OUTPUT_BYTES};
/// The result of a visitor call the person declined without a reason.
pub const VISITOR_DECLINED: &str = "The visitor declined.";

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
}

#[cfg(test)]
mod tests;
