//! A run read as a person reads it: the timeline of its AG-UI events. One pure function,
//! [`timeline`], from a run's log (its events and the time each was kept) to the prompt, each
//! model step with its streamed text merged into one message and its duration, each call with
//! its arguments as run (after repair), the repair notes, the confirmation and its answer, the
//! result or error and the call's duration, the run's errors, and the answer.
//!
//! Shared by the popup's log (`timeline({runId})`) and anything else that reports a run.
//! Invariant: nothing is dropped silently: an event the timeline does not know becomes a
//! `note`; every text is kept as written (the popup sets it with `textContent`).

#![warn(missing_docs)]

#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

use crate::core::agui::ToolContent;

/// One tool call of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// The call's id.
    pub id: String,
    /// The tool, as run (after name repair).
    pub name: String,
    /// The name as the model wrote it, when repair changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_name: Option<String>,
    /// The arguments as run: the final ones (repaired when repair changed them), parsed when
    /// they are JSON, else the text as written.
    pub args: Value,
    /// What repair changed, one note each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<String>,
    /// Why the call was not run (rejected), when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// The person's answer to a confirmation or a question, when the call asked one; or how a
    /// call that acts was allowed without one (`allowed by site policy <origin>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
    /// The result text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// How the result breaks the tool's own output schema (`[{pointer, message}]`), when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_errors: Option<Value>,
    /// The error the call ended with, when its result is `{"error": …}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// From the end of its arguments to its result, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(skip)]
    ended_at: Option<f64>,
    #[serde(skip)]
    args_text: String,
}

/// One model step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Its name (`step_1`, …).
    pub name: String,
    /// The model's text of the step, its streamed pieces merged.
    pub text: String,
    /// Its calls, in the order they started.
    pub calls: Vec<Call>,
    /// From its start to its end, in ms, when both were logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Its tokens and cost, from the step's `webmcp_host.usage` event; `unknown` when the
    /// provider reported none or the log holds no such event.
    pub tokens: Tokens,
    #[serde(skip)]
    started_at: Option<f64>,
}

/// A step's tokens, as its `webmcp_host.usage` event (`core::observe::CUSTOM_USAGE`)
/// reported them; every count `null` when `usage` is `unknown`, never guessed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// `reported` (the provider gave the counts) or `unknown`.
    pub usage: &'static str,
    /// Prompt tokens, cached ones included.
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Of the input tokens, those read from the provider's cache, when reported.
    pub cached_input_tokens: Option<u64>,
    /// The step's cost in US dollars, when the model is priced.
    pub cost: Option<f64>,
}

impl Default for Tokens {
    fn default() -> Self {
        Tokens {
            usage: "unknown",
            input_tokens: None,
            output_tokens: None,
            cached_input_tokens: None,
            cost: None,
        }
    }
}

impl Tokens {
    /// The tokens of a `webmcp_host.usage` event's value.
    pub fn of_event(value: &Value) -> Tokens {
        let count = |key: &str| value.get(key).and_then(Value::as_u64);
        let (input, output) = (count("inputTokens"), count("outputTokens"));
        if value.get("usage").and_then(Value::as_str) != Some("reported")
            || input.is_none()
            || output.is_none()
        {
            return Tokens::default();
        }
        Tokens {
            usage: "reported",
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: count("cachedInputTokens"),
            cost: value.get("cost").and_then(Value::as_f64),
        }
    }
}

/// One entry of the timeline, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Entry {
    /// A model step.
    Step(Step),
    /// The run failed.
    Error {
        /// What went wrong.
        message: String,
        /// Its code, when given.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// Anything else worth knowing (a tool source that failed, a conversation forked, …).
    Note {
        /// The event's name.
        name: String,
        /// Its value.
        value: Value,
    },
}

/// A run as a timeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// The person's prompt, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Steps, errors and notes, in order.
    pub entries: Vec<Entry>,
    /// The answer (the last step's text, or the result of `submit_result`), once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// How it ended: `finished`, `error`, or `running`.
    pub state: &'static str,
    /// From the first event to the last, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// How many events it was read from.
    pub events: usize,
}

use crate::core::agui::{
    CUSTOM_TOOL_CALL_REJECTED as REJECTED, CUSTOM_TOOL_CONFIRMATION as CONFIRMATION,
    CUSTOM_TOOL_INPUT as INPUT, CUSTOM_TOOL_OBSERVE as OBSERVE,
    CUSTOM_TOOL_OUTPUT_ERRORS as OUTPUT_ERRORS, CUSTOM_TOOL_REASK as REASK,
    CUSTOM_TOOL_REPAIR as REPAIR, CUSTOM_USAGE as USAGE,
};

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The timeline of a run's log: `events` with the time each was kept (`times`, ms; missing
/// times leave durations out), and the run's prompt when the shell knows it.
pub fn timeline(events: &[Value], times: &[f64], prompt: Option<&str>) -> Timeline {
    let mut out = Timeline {
        prompt: prompt.filter(|p| !p.is_empty()).map(str::to_owned),
        state: "running",
        events: events.len(),
        ..Timeline::default()
    };
    let time = |i: usize| times.get(i).copied().filter(|t| t.is_finite());
    let mut current: Option<usize> = None; // index of the open step in entries
    for (i, event) in events.iter().enumerate() {
        let at = time(i);
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "STEP_STARTED" => {
                out.entries.push(Entry::Step(Step {
                    name: text(event, "stepName"),
                    started_at: at,
                    ..Step::default()
                }));
                current = Some(out.entries.len() - 1);
            }
            "STEP_FINISHED" => {
                if let Some(step) = step_at(&mut out.entries, current) {
                    step.duration_ms = step.started_at.zip(at).map(|(a, b)| b - a);
                }
                current = None;
            }
            "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_CHUNK" => {
                let delta = text(event, "delta");
                open_step(&mut out.entries, &mut current, at)
                    .text
                    .push_str(&delta);
            }
            "TOOL_CALL_START" => {
                open_step(&mut out.entries, &mut current, at)
                    .calls
                    .push(Call {
                        id: text(event, "toolCallId"),
                        name: text(event, "toolCallName"),
                        ..Call::default()
                    });
            }
            "TOOL_CALL_ARGS" => {
                let delta = text(event, "delta");
                if let Some(call) = call_by_id(&mut out.entries, &text(event, "toolCallId")) {
                    call.args_text.push_str(&delta);
                }
            }
            "TOOL_CALL_END" => {
                if let Some(call) = call_by_id(&mut out.entries, &text(event, "toolCallId")) {
                    call.ended_at = at;
                }
            }
            "TOOL_CALL_RESULT" => {
                let id = text(event, "toolCallId");
                let content = ToolContent::text_of(&event["content"]);
                if call_by_id(&mut out.entries, &id).is_none() {
                    // A call from an earlier run (a visitor answer) or cut from the log.
                    open_step(&mut out.entries, &mut current, at)
                        .calls
                        .push(Call {
                            id: id.clone(),
                            ..Call::default()
                        });
                }
                if let Some(call) = call_by_id(&mut out.entries, &id) {
                    call.duration_ms = call.ended_at.zip(at).map(|(a, b)| b - a);
                    let error = serde_json::from_str::<Value>(&content)
                        .ok()
                        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
                    if let Some(error) = &error {
                        if error.starts_with("declined") {
                            call.confirmation = Some("declined".into());
                        }
                    }
                    call.error = error;
                    call.result = Some(content);
                }
            }
            "MESSAGES_SNAPSHOT" => {
                for message in event
                    .get("messages")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    for tool_call in message
                        .get("toolCalls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let id = text(tool_call, "id");
                        let args = tool_call
                            .pointer("/function/arguments")
                            .and_then(Value::as_str);
                        if let (Some(call), Some(args)) = (call_by_id(&mut out.entries, &id), args)
                        {
                            call.args_text = args.to_owned();
                        }
                    }
                }
            }
            "CUSTOM" => custom(&mut out.entries, &mut current, event, at),
            "RUN_ERROR" => {
                out.state = "error";
                out.entries.push(Entry::Error {
                    message: text(event, "message"),
                    code: event.get("code").and_then(Value::as_str).map(str::to_owned),
                });
            }
            "RUN_FINISHED" => {
                out.state = "finished";
                out.answer = answer(event.get("result"), &out.entries);
            }
            _ => {}
        }
    }
    for entry in &mut out.entries {
        if let Entry::Step(step) = entry {
            for call in &mut step.calls {
                call.args = serde_json::from_str(&call.args_text)
                    .unwrap_or_else(|_| Value::String(call.args_text.clone()));
            }
        }
    }
    let first = times.iter().copied().find(|t| t.is_finite());
    let last = times.iter().copied().rev().find(|t| t.is_finite());
    out.duration_ms = first.zip(last).map(|(a, b)| b - a);
    out
}

fn custom(entries: &mut Vec<Entry>, current: &mut Option<usize>, event: &Value, at: Option<f64>) {
    let name = text(event, "name");
    let value = event.get("value").cloned().unwrap_or(Value::Null);
    let id = value
        .get("toolCallId")
        .or_else(|| value.get("callId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match name.as_str() {
        REPAIR => {
            if let Some(call) = call_by_id(entries, &id) {
                let fixes = value.get("fixes").and_then(Value::as_array);
                call.repairs
                    .extend(fixes.into_iter().flatten().map(|f| text(f, "detail")));
                let written = text(&value, "writtenName");
                let named = text(&value, "toolCallName");
                if !named.is_empty() && named != call.name {
                    call.name = named;
                }
                if !written.is_empty() && written != call.name {
                    call.written_name = Some(written);
                }
            }
        }
        REJECTED => {
            let written = text(&value, "writtenName");
            if call_by_id(entries, &id).is_none() {
                open_step(entries, current, at).calls.push(Call {
                    id: id.clone(),
                    name: written.clone(),
                    ..Call::default()
                });
            }
            if let Some(call) = call_by_id(entries, &id) {
                call.rejected = Some(text(&value, "error"));
            }
        }
        INPUT => {
            if let Some(call) = call_by_id(entries, &id) {
                call.confirmation = Some("asked the person".into());
            }
        }
        CONFIRMATION => match call_by_id(entries, &id) {
            Some(call) => call.confirmation = Some(text(&value, "confirmation")),
            None => entries.push(Entry::Note { name, value }),
        },
        OUTPUT_ERRORS => match call_by_id(entries, &id) {
            Some(call) => call.output_errors = value.get("outputErrors").cloned(),
            None => entries.push(Entry::Note { name, value }),
        },
        REASK => match call_by_id(entries, &id) {
            Some(call) => call.repairs.push("asked the model again".into()),
            None => entries.push(Entry::Note { name, value }),
        },
        USAGE => {
            // Sent just before its step's end: the open step's, else the step it names.
            let named = value
                .get("step")
                .and_then(Value::as_u64)
                .map(|n| format!("step_{n}"));
            let open = current.filter(|&i| matches!(entries.get(i), Some(Entry::Step(_))));
            let at = open.or_else(|| {
                let named = named.as_deref()?;
                (entries.iter()).rposition(|e| matches!(e, Entry::Step(s) if s.name == named))
            });
            match step_at(entries, at) {
                Some(step) => step.tokens = Tokens::of_event(&value),
                None => entries.push(Entry::Note { name, value }),
            }
        }
        // The observe layer repeats a call and its result, which the call already shows.
        OBSERVE if call_by_id(entries, &id).is_some() => {}
        _ => entries.push(Entry::Note { name, value }),
    }
}

fn answer(result: Option<&Value>, entries: &[Entry]) -> Option<String> {
    match result {
        Some(Value::Object(map)) => {
            if let Some(text) = map.get("text").and_then(Value::as_str) {
                return Some(text.to_owned());
            }
            if let Some(value) = map.get("value").or_else(|| map.get("result")) {
                return Some(value.to_string());
            }
        }
        Some(Value::String(text)) => return Some(text.clone()),
        _ => {}
    }
    entries.iter().rev().find_map(|e| match e {
        Entry::Step(step) if !step.text.is_empty() => Some(step.text.clone()),
        _ => None,
    })
}

fn step_at(entries: &mut [Entry], at: Option<usize>) -> Option<&mut Step> {
    match entries.get_mut(at?)? {
        Entry::Step(step) => Some(step),
        _ => None,
    }
}

/// The open step, or a new unnamed one when the log has none open (a log cut at its start).
fn open_step<'a>(
    entries: &'a mut Vec<Entry>,
    current: &mut Option<usize>,
    at: Option<f64>,
) -> &'a mut Step {
    if step_at(entries, *current).is_none() {
        entries.push(Entry::Step(Step {
            started_at: at,
            ..Step::default()
        }));
        *current = Some(entries.len() - 1);
    }
    step_at(entries, *current).expect("just opened")
}

fn call_by_id<'a>(entries: &'a mut [Entry], id: &str) -> Option<&'a mut Call> {
    if id.is_empty() {
        return None;
    }
    entries.iter_mut().rev().find_map(|e| match e {
        Entry::Step(step) => step.calls.iter_mut().find(|c| c.id == id),
        _ => None,
    })
}

/// The prompt of a run's log value (`runLog`'s `{run: {prompt}}`).
pub fn prompt_of(log: &Value) -> Option<&str> {
    log.pointer("/run/prompt").and_then(Value::as_str)
}

/// `timeline` of a `runLog` answer (`{run, events, times}`).
pub fn of_log(log: &Value) -> Timeline {
    let empty = Vec::new();
    let events = log
        .get("events")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let times: Vec<f64> = log
        .get("times")
        .and_then(Value::as_array)
        .map(|t| t.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect())
        .unwrap_or_default();
    let mut out = timeline(events, &times, prompt_of(log));
    if let Some(state) = log.pointer("/run/state").and_then(Value::as_str) {
        if out.state == "running" && state != "running" {
            out.state = "finished";
        }
    }
    out
}
