//! One model output (one step of a run) turned into AG-UI events and the calls to run.
//!
//! [`StepStream`] takes the [`Piece`]s of the text parser or of [`super::native::NativeCalls`]
//! and emits:
//!
//! | When | Events |
//! |---|---|
//! | text outside calls | `TEXT_MESSAGE_START` (once), `TEXT_MESSAGE_CONTENT` |
//! | name complete, tool known | `TOOL_CALL_START` (with the repaired name) |
//! | arguments arrive | `TOOL_CALL_ARGS` deltas |
//! | done, repair changed nothing | `TOOL_CALL_ARGS` (the rest), `TOOL_CALL_END` |
//! | repair changed name or arguments | `CUSTOM webmcp_host.tool_repair`, then (now or later) `MESSAGES_SNAPSHOT`, `TOOL_CALL_END` |
//! | not repairable, cut off, aborted | `CUSTOM webmcp_host.tool_call_rejected`, then (now or later) `MESSAGES_SNAPSHOT` (call removed), `TOOL_CALL_END` |
//!
//! An unknown name streams nothing. Every call that will not run is also reported as
//! `CUSTOM webmcp_host.tool_call_rejected` with the reason, and is returned in
//! [`StepOutcome::rejected`] so the run can tell the model. At `TOOL_CALL_END` the joined
//! deltas, or the last snapshot, always hold arguments that parse to a JSON object.
//!
//! **One snapshot for many calls.** A `MESSAGES_SNAPSHOT` carries the whole history, so one
//! per repaired call would make an output with many of them quadratic. A call that needs a
//! snapshot waits for one (its `TOOL_CALL_END` with it): the snapshot is sent at once when the
//! history has grown at least sixteenfold since the last snapshot of this step (always for the
//! step's first), and otherwise when the output ends; it then ends every call waiting for it.
//! The snapshots of a step thus carry at most about 2.1 times the history's final size in all
//! (usually little more than once), and a call's end waits at most until the output ends (the
//! calls run only then).

#![warn(missing_docs)]

use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::agui::{Event, Message, Role, ToolCall, CUSTOM_TOOL_CALL_REJECTED, CUSTOM_TOOL_REPAIR};
use super::parse::Piece;
use super::repair::{self, name::resolve_name, Fix, Repaired, Unrepaired};
use super::toolset::ToolSet;

/// Deterministic ids: `{prefix}{kind}_{n}`. The shell picks a prefix unique to the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids {
    prefix: String,
    next: u64,
}

impl Ids {
    /// Ids that start with `prefix` and count from 1.
    pub fn new(prefix: impl Into<String>) -> Self {
        Ids {
            prefix: prefix.into(),
            next: 1,
        }
    }

    /// The next id, for a thing of this kind (`msg`, `call`): `{prefix}{kind}_{n}`, `n` one
    /// more than the last id's, whatever its kind.
    pub fn next(&mut self, kind: &str) -> String {
        let id = format!("{}{kind}_{}", self.prefix, self.next);
        self.next += 1;
        id
    }
}

/// A call ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadyCall {
    /// The call's id, as its AG-UI events carried it.
    pub id: String,
    /// The tool to call, after name repair.
    pub name: String,
    /// The arguments, after repair; valid against the tool's schema.
    pub arguments: Map<String, Value>,
    /// What repair changed, in order (empty when the call was valid as written).
    pub fixes: Vec<Fix>,
}

/// Why a call will not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The name matches no tool, even after name repair (`unknown_tool`).
    UnknownTool,
    /// The body or the arguments are invalid and repair could not fix them (`invalid`).
    Invalid,
    /// The output ended inside the call (`cut_off`).
    CutOff,
    /// The step was stopped while the call was being written (`aborted`).
    Aborted,
}

impl Rejection {
    fn as_str(self) -> &'static str {
        match self {
            Rejection::UnknownTool => "unknown_tool",
            Rejection::Invalid => "invalid",
            Rejection::CutOff => "cut_off",
            Rejection::Aborted => "aborted",
        }
    }
}

/// A call that will not run, with what the model should be told.
#[derive(Debug, Clone, PartialEq)]
pub struct RejectedCall {
    /// The call's id, as its AG-UI events carried it.
    pub id: String,
    /// The name as written.
    pub written_name: String,
    /// The tool, when the name resolved (an invalid call to a known tool can be re-asked).
    pub name: Option<String>,
    /// The body or arguments as written.
    pub raw: String,
    /// Why the call will not run.
    pub reason: Rejection,
    /// What the model is told, as the call's result.
    pub error: String,
}

/// What a step produced, once its output ended.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// The assistant message as the client holds it (calls that will not run left out).
    pub message: Message,
    /// The calls to run, in the order the model wrote them.
    pub calls: Vec<ReadyCall>,
    /// The calls that will not run, in the order the model wrote them.
    pub rejected: Vec<RejectedCall>,
    /// The id source, handed back for the run's next step.
    pub ids: Ids,
}

#[derive(Debug)]
struct Call {
    slot: usize,
    id: String,
    written_name: String,
    /// The tool name `TOOL_CALL_START` carried, once sent.
    started: Option<String>,
    streamed: String,
    held: String,
}

/// The events of one model output. Feed it pieces with [`StepStream::piece`], then call
/// [`StepStream::finish`] (or [`StepStream::abort`]).
pub struct StepStream {
    tools: Rc<ToolSet>,
    ids: Ids,
    history: Vec<Message>,
    message_id: String,
    text: String,
    text_open: bool,
    /// Whitespace seen before the text message started: it opens the message only when
    /// something other than whitespace follows (a newline between calls is no message).
    pending_space: String,
    open: Vec<Call>,
    done: Vec<ToolCall>,
    calls: Vec<ReadyCall>,
    rejected: Vec<RejectedCall>,
    /// Calls whose `TOOL_CALL_END` waits for the next snapshot.
    waiting: Vec<String>,
    /// The size of the history (a measure in bytes, see [`StepStream::size`]) before this
    /// step, of the settled calls so far, and at the last snapshot (`None`: none yet).
    history_size: usize,
    done_size: usize,
    snapshot_size: Option<usize>,
    /// A reply that may be one call written without markers, held to its end ([`bare`]).
    bare: bare::Bare,
}

impl StepStream {
    /// `history`: the messages before this step (the run's input and its earlier steps), as
    /// `MESSAGES_SNAPSHOT` must carry them.
    /// `ids` comes back with the outcome, advanced past the ids this step used.
    pub fn new(tools: Rc<ToolSet>, mut ids: Ids, history: Vec<Message>) -> Self {
        let message_id = ids.next("msg");
        let history_size = history.iter().map(message_size).sum();
        StepStream {
            bare: bare::Bare::new(!tools.is_empty()),
            tools,
            ids,
            history,
            history_size,
            done_size: 0,
            snapshot_size: None,
            waiting: Vec::new(),
            message_id,
            text: String::new(),
            text_open: false,
            pending_space: String::new(),
            open: Vec::new(),
            done: Vec::new(),
            calls: Vec::new(),
            rejected: Vec::new(),
        }
    }

    /// The id of this step's assistant message (its text and its calls).
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// Takes one piece of the output and returns the events it makes, as the table above
    /// says.
    pub fn piece(&mut self, piece: Piece) -> Vec<Event> {
        let mut out = Vec::new();
        if let Piece::Text(text) = piece {
            if let Some(text) = self.bare.text(text) {
                self.text(text, &mut out);
            }
            return out;
        }
        if let Some(held) = self.bare.release() {
            self.text(held, &mut out);
        }
        match piece {
            Piece::Text(_) => {}
            Piece::CallOpen { slot } => {
                let id = self.ids.next("call");
                self.open.push(Call {
                    slot,
                    id,
                    written_name: String::new(),
                    started: None,
                    streamed: String::new(),
                    held: String::new(),
                });
            }
            Piece::CallName { slot, name } => self.name(slot, name, &mut out),
            Piece::CallArgs { slot, delta } => {
                if let Some(call) = self.open.iter_mut().find(|c| c.slot == slot) {
                    if call.started.is_some() {
                        call.streamed.push_str(&delta);
                        out.push(Event::ToolCallArgs {
                            tool_call_id: call.id.clone(),
                            delta,
                        });
                    } else {
                        call.held.push_str(&delta);
                    }
                }
            }
            Piece::CallClose {
                slot,
                body,
                complete,
            } => {
                if let Some(call) = self.take(slot) {
                    if !complete {
                        self.reject_open(call, body, Rejection::CutOff, &mut out);
                    } else {
                        self.close_text_call(call, body, &mut out);
                    }
                }
            }
            Piece::NativeClose {
                slot,
                name,
                arguments,
                complete,
            } => {
                if let Some(mut call) = self.take(slot) {
                    if call.written_name.is_empty() {
                        call.written_name = name.clone();
                    }
                    if !complete {
                        self.reject_open(call, arguments, Rejection::CutOff, &mut out);
                    } else {
                        let result = repair::repair_native(&name, &arguments, &self.tools);
                        self.settle(call, arguments, result, &mut out);
                    }
                }
            }
        }
        out
    }

    /// The output ended: a held reply becomes its call or its text, open calls are cut off,
    /// the text message ends.
    pub fn finish(mut self) -> (Vec<Event>, StepOutcome) {
        let mut out = Vec::new();
        match self.bare.end() {
            Ok(Some(held)) => match bare::read(&held, &self.tools) {
                Some((body, fix)) => {
                    let call = Call {
                        slot: usize::MAX,
                        id: self.ids.next("call"),
                        written_name: String::new(),
                        started: None,
                        streamed: String::new(),
                        held: String::new(),
                    };
                    let result = repair::repair_body(&body, &self.tools).map(|mut repaired| {
                        repaired.fixes.insert(0, fix);
                        repaired
                    });
                    self.settle(call, body, result, &mut out);
                }
                None => self.text(held, &mut out),
            },
            Ok(None) => {}
            Err(held) => self.text(held, &mut out),
        }
        let (tail, outcome) = self.end_all(Rejection::CutOff);
        out.extend(tail);
        (out, outcome)
    }

    /// The run was stopped mid-output: open calls are dropped as aborted.
    pub fn abort(mut self) -> (Vec<Event>, StepOutcome) {
        // A held reply is not decided once stopped: it is kept as the text it was.
        let mut out = Vec::new();
        if let Some(held) = self.bare.release() {
            self.text(held, &mut out);
        }
        let (tail, outcome) = self.end_all(Rejection::Aborted);
        out.extend(tail);
        (out, outcome)
    }

    fn end_all(&mut self, reason: Rejection) -> (Vec<Event>, StepOutcome) {
        let mut out = Vec::new();
        for call in std::mem::take(&mut self.open) {
            let raw = call.streamed.clone() + &call.held;
            self.reject_open(call, raw, reason, &mut out);
        }
        if !self.waiting.is_empty() {
            self.flush(&mut out);
        }
        if self.text_open {
            out.push(Event::TextMessageEnd {
                message_id: self.message_id.clone(),
            });
            self.text_open = false;
        }
        let outcome = StepOutcome {
            message: self.assistant_message(),
            calls: std::mem::take(&mut self.calls),
            rejected: std::mem::take(&mut self.rejected),
            ids: std::mem::replace(&mut self.ids, Ids::new("")),
        };
        (out, outcome)
    }

    fn text(&mut self, text: String, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let text = if self.text_open {
            text
        } else {
            if text.trim().is_empty() {
                self.pending_space.push_str(&text);
                return;
            }
            self.text_open = true;
            out.push(Event::TextMessageStart {
                message_id: self.message_id.clone(),
                role: Role::Assistant,
            });
            std::mem::take(&mut self.pending_space) + &text
        };
        self.text.push_str(&text);
        out.push(Event::TextMessageContent {
            message_id: self.message_id.clone(),
            delta: text,
        });
    }

    fn name(&mut self, slot: usize, written: String, out: &mut Vec<Event>) {
        let Some(call) = self.open.iter_mut().find(|c| c.slot == slot) else {
            return;
        };
        call.written_name = written;
        if let Ok((name, _)) = resolve_name(&call.written_name, &self.tools) {
            out.push(Event::ToolCallStart {
                tool_call_id: call.id.clone(),
                tool_call_name: name.clone(),
                parent_message_id: Some(self.message_id.clone()),
            });
            call.started = Some(name);
            if !call.held.is_empty() {
                let held = std::mem::take(&mut call.held);
                call.streamed.push_str(&held);
                out.push(Event::ToolCallArgs {
                    tool_call_id: call.id.clone(),
                    delta: held,
                });
            }
        }
    }

    fn take(&mut self, slot: usize) -> Option<Call> {
        let at = self.open.iter().position(|c| c.slot == slot)?;
        Some(self.open.remove(at))
    }

    fn close_text_call(&mut self, call: Call, body: String, out: &mut Vec<Event>) {
        // Several calls in one block (`[{…}, {…}]`): each is a call of its own.
        if let Some(bodies) = split_call_list(&body) {
            if call.started.is_some() {
                self.reject_open(call, body, Rejection::Invalid, out);
                return;
            }
            for (i, one) in bodies.into_iter().enumerate() {
                let id = if i == 0 {
                    call.id.clone()
                } else {
                    self.ids.next("call")
                };
                let part = Call {
                    slot: call.slot,
                    id,
                    written_name: String::new(),
                    started: None,
                    streamed: String::new(),
                    held: String::new(),
                };
                let result = repair::repair_body(&one, &self.tools);
                self.settle(part, one, result, out);
            }
            return;
        }
        let result = repair::repair_body(&body, &self.tools);
        self.settle(call, body, result, out);
    }

    /// Ends a call with repair's verdict.
    fn settle(
        &mut self,
        mut call: Call,
        raw: String,
        result: Result<Repaired, Unrepaired>,
        out: &mut Vec<Event>,
    ) {
        let repaired = match result {
            Ok(repaired) => repaired,
            Err(unrepaired) => {
                let reason =
                    if unrepaired.name.is_none() && unrepaired.error.starts_with("unknown tool") {
                        Rejection::UnknownTool
                    } else {
                        Rejection::Invalid
                    };
                if call.written_name.is_empty() {
                    call.written_name = written_name_of(&raw);
                }
                let error = unrepaired.error.clone();
                self.reject(call, raw, unrepaired.name, reason, error, out);
                return;
            }
        };
        let id = call.id.clone();
        let final_arguments = Value::Object(repaired.arguments.clone());
        let final_text = final_arguments.to_string();
        if call.started.is_none() {
            // Nothing was streamed for this call (its name came late or only resolved now).
            out.push(Event::ToolCallStart {
                tool_call_id: id.clone(),
                tool_call_name: repaired.name.clone(),
                parent_message_id: Some(self.message_id.clone()),
            });
            out.push(Event::ToolCallArgs {
                tool_call_id: id.clone(),
                delta: final_text.clone(),
            });
            call.streamed = final_text.clone();
            call.started = Some(repaired.name.clone());
        }
        // Does the client already hold the final call through the deltas?
        let holds = call.started.as_deref() == Some(repaired.name.as_str())
            && (call.streamed.is_empty()
                || serde_json::from_str::<Value>(&call.streamed).ok().as_ref()
                    == Some(&final_arguments));
        if holds && call.streamed.is_empty() {
            out.push(Event::ToolCallArgs {
                tool_call_id: id.clone(),
                delta: final_text.clone(),
            });
        }
        self.done_size += id.len() + repaired.name.len() + final_text.len() + TOOL_CALL_SIZE;
        self.done.push(ToolCall::function(
            id.clone(),
            repaired.name.clone(),
            final_text,
        ));
        if !holds || !repaired.fixes.is_empty() {
            out.push(Event::Custom {
                name: CUSTOM_TOOL_REPAIR.into(),
                value: json!({
                    "toolCallId": id,
                    "toolCallName": repaired.name,
                    "writtenName": call.written_name,
                    "fixes": repaired.fixes,
                }),
            });
            self.end_with_snapshot(id.clone(), out);
        } else {
            out.push(Event::ToolCallEnd {
                tool_call_id: id.clone(),
            });
        }
        self.calls.push(ReadyCall {
            id,
            name: repaired.name,
            arguments: repaired.arguments,
            fixes: repaired.fixes,
        });
    }

    fn reject_open(
        &mut self,
        mut call: Call,
        raw: String,
        reason: Rejection,
        out: &mut Vec<Event>,
    ) {
        let error = match reason {
            Rejection::CutOff => {
                "the output ended before this call was complete (token limit?); it was not run"
                    .to_owned()
            }
            Rejection::Aborted => {
                "the run was stopped while this call was being written; it was not run".to_owned()
            }
            _ => "this call could not be read".to_owned(),
        };
        if call.written_name.is_empty() {
            call.written_name = written_name_of(&raw);
        }
        let name = call.started.clone();
        self.reject(call, raw, name, reason, error, out);
    }

    fn reject(
        &mut self,
        call: Call,
        raw: String,
        name: Option<String>,
        reason: Rejection,
        error: String,
        out: &mut Vec<Event>,
    ) {
        out.push(Event::Custom {
            name: CUSTOM_TOOL_CALL_REJECTED.into(),
            value: json!({
                "toolCallId": call.id,
                "writtenName": call.written_name,
                "reason": reason.as_str(),
                "error": error,
            }),
        });
        if call.started.is_some() {
            self.end_with_snapshot(call.id.clone(), out);
        }
        self.rejected.push(RejectedCall {
            id: call.id,
            written_name: call.written_name,
            name,
            raw,
            reason,
            error,
        });
    }

    /// Ends the call `id` with a snapshot that holds its final form (or leaves it out): now,
    /// when the history has at least doubled since the step's last snapshot, else with a
    /// later one (see the module's docs).
    fn end_with_snapshot(&mut self, id: String, out: &mut Vec<Event>) {
        self.waiting.push(id);
        let due = match self.snapshot_size {
            None => true,
            Some(last) => self.size() >= last.saturating_mul(SNAPSHOT_GROWTH),
        };
        if due {
            self.flush(out);
        }
    }

    /// Sends a snapshot and ends every call waiting for one.
    fn flush(&mut self, out: &mut Vec<Event>) {
        out.push(Event::MessagesSnapshot {
            messages: self.snapshot(),
        });
        for id in std::mem::take(&mut self.waiting) {
            out.push(Event::ToolCallEnd { tool_call_id: id });
        }
        self.snapshot_size = Some(self.size());
    }

    /// A measure of what a snapshot carries now, in bytes: the history, the text and the
    /// settled calls (each with a fixed allowance for its JSON around the values).
    fn size(&self) -> usize {
        self.history_size + self.text.len() + self.done_size + MESSAGE_SIZE
    }

    /// The assistant message so far: its text and its settled calls, and the calls still being
    /// written with what they streamed (a snapshot must not take those away).
    fn assistant_message(&self) -> Message {
        let mut tool_calls = self.done.clone();
        for call in &self.open {
            if let Some(name) = &call.started {
                tool_calls.push(ToolCall::function(
                    call.id.clone(),
                    name.clone(),
                    call.streamed.clone(),
                ));
            }
        }
        Message::Assistant {
            id: self.message_id.clone(),
            content: (!self.text.is_empty()).then(|| self.text.clone()),
            tool_calls,
        }
    }

    fn snapshot(&self) -> Vec<Message> {
        let mut messages = self.history.clone();
        let message = self.assistant_message();
        if matches!(&message, Message::Assistant { content, tool_calls, .. } if content.is_some() || !tool_calls.is_empty())
        {
            messages.push(message);
        }
        messages
    }
}

/// How much the history must have grown since a step's last snapshot for a call to get a
/// snapshot at once (otherwise it waits for the next, at the latest at the output's end): the
/// larger, the fewer bytes the snapshots carry in all; the smaller, the sooner a repaired call
/// of a long output ends.
const SNAPSHOT_GROWTH: usize = 16;

/// The fixed part of [`StepStream::size`] for one message, and for one call in it.
const MESSAGE_SIZE: usize = 64;
const TOOL_CALL_SIZE: usize = 64;

/// [`StepStream::size`]'s measure of a message of the history.
fn message_size(message: &Message) -> usize {
    MESSAGE_SIZE
        + match message {
            Message::Assistant {
                id,
                content,
                tool_calls,
            } => {
                id.len()
                    + content.as_ref().map_or(0, String::len)
                    + tool_calls
                        .iter()
                        .map(|c| {
                            c.id.len()
                                + c.function.name.len()
                                + c.function.arguments.len()
                                + TOOL_CALL_SIZE
                        })
                        .sum::<usize>()
            }
            Message::System { id, content } | Message::User { id, content } => {
                id.len() + content.len()
            }
            Message::Tool {
                id,
                content,
                tool_call_id,
            } => id.len() + content.len() + tool_call_id.len(),
        }
}

/// The longest slice of a chunk [`parse_run`] gives the parser at once.
const PARSE_SLICE: usize = 16 << 10;

/// One model output as a whole AG-UI run: `RUN_STARTED`, the step's events (coalesced),
/// `RUN_FINISHED` whose `result` lists the calls that would run and those rejected. This is
/// what `webmcp-host parse` prints; it does not depend on how `chunks` split the output.
pub fn parse_run<'c>(
    tools: &Rc<ToolSet>,
    chunks: impl IntoIterator<Item = &'c str>,
    cut_by_limit: bool,
) -> Vec<Event> {
    let mut events = Vec::new();
    parse_run_each(tools, chunks, cut_by_limit, |event| events.push(event));
    events
}

/// [`parse_run`], each event handed to `emit` as soon as it is whole (a delta once the next
/// event shows it is not merged with more), so that no more than one event is held: what is
/// held does not grow with the output.
pub fn parse_run_each<'c>(
    tools: &Rc<ToolSet>,
    chunks: impl IntoIterator<Item = &'c str>,
    cut_by_limit: bool,
    mut emit: impl FnMut(Event),
) {
    let (thread_id, run_id) = ("thread_1".to_owned(), "run_1".to_owned());
    // The last event, held while a delta of the same message or call may still join it.
    let mut held = vec![Event::RunStarted {
        thread_id: thread_id.clone(),
        run_id: run_id.clone(),
    }];
    let mut add = |new: Vec<Event>| {
        for event in new {
            super::agui::coalesce_into(&mut held, event);
            if held.len() > 1 {
                emit(held.remove(0));
            }
        }
    };
    let mut parser = super::parse::CallParser::new();
    let mut step = StepStream::new(Rc::clone(tools), Ids::new(""), Vec::new());
    for chunk in chunks {
        // A long chunk goes to the parser in slices (the events do not depend on the chunking):
        // the pieces of one slice are turned into events before the next is read, which keeps
        // what is held at once small however long the chunk.
        let mut rest = chunk;
        while !rest.is_empty() {
            let mut end = rest.len().min(PARSE_SLICE);
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            for piece in parser.push(&rest[..end]) {
                add(step.piece(piece));
            }
            rest = &rest[end..];
        }
    }
    for piece in parser.finish(cut_by_limit) {
        add(step.piece(piece));
    }
    let (tail, outcome) = step.finish();
    add(tail);
    let calls: Vec<Value> = outcome
        .calls
        .iter()
        .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
        .collect();
    let rejected: Vec<Value> = outcome
        .rejected
        .iter()
        .map(|r| json!({"id": r.id, "writtenName": r.written_name, "reason": r.reason.as_str(), "error": r.error}))
        .collect();
    add(vec![Event::RunFinished {
        thread_id,
        run_id,
        result: Some(json!({"calls": calls, "rejected": rejected})),
        outcome: None,
        usage: Vec::new(),
    }]);
    for event in held {
        emit(event);
    }
}

/// The bodies of a block holding a list of calls, or `None` when it is not a list of two or
/// more.
fn split_call_list(body: &str) -> Option<Vec<String>> {
    let trimmed = body.trim();
    if !trimmed.starts_with('[') {
        return None;
    }
    let mut details = Vec::new();
    match repair::json::repair_json(trimmed, &mut details).ok()? {
        Value::Array(items) if items.len() >= 2 && items.iter().all(Value::is_object) => {
            Some(items.iter().map(Value::to_string).collect())
        }
        _ => None,
    }
}

/// The name a body was written with, for messages about it.
fn written_name_of(raw: &str) -> String {
    let mut fixes = Vec::new();
    repair::read_body(raw, &mut fixes)
        .map(|c| c.name)
        .unwrap_or_default()
}

mod bare;

#[cfg(test)]
mod tests;
