//! The turn-scenario harness: a scripted model's outputs fed to a [`Run`] as the shells would
//! feed them, its tool calls answered by closures, and the AG-UI events kept as golden logs in
//! tests/golden/turns/ (`UPDATE_EXPECT=1` rewrites them). Used by `turn_scenarios.rs` and
//! `turn_failures.rs`.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::Path;
use webmcp_host::core::agui::{coalesce, Event, Message};
use webmcp_host::core::native::NativeDelta;
use webmcp_host::core::provider::usage::StepUsage;
use webmcp_host::core::run::*;
use webmcp_host::core::toolset::ToolSpec;

/// One model output of the script.
pub enum Step {
    Text(&'static str),
    Cut(&'static str),
    Native(Vec<NativeDelta>),
    /// Some text, then the model call fails.
    Fail(&'static str, &'static str),
    /// Some text, and the output never ends (until the run is stopped).
    Hang(&'static str),
    /// Some text, then the step's use (as the drive reports it just before the output ends).
    Used(&'static str, StepUsage),
}

pub struct Harness {
    pub script: VecDeque<Step>,
    pub events: Vec<Event>,
    pub requests: Vec<ModelRequest>,
    pub invocations: Vec<ToolInvocation>,
    pub cancels: Vec<String>,
    pub outcome: Option<RunOutcome>,
    pub pending_seen: Vec<PendingInput>,
    pub hooks: Vec<HookRequest>,
}

pub type ToolFn<'a> = dyn FnMut(&ToolInvocation) -> Option<ToolOutcome> + 'a;
pub type VisitorFn<'a> = dyn FnMut(&PendingInput) -> Input + 'a;

pub type HookFn<'a> = dyn FnMut(&HookRequest) -> Option<Value> + 'a;

pub fn drive(
    input: RunInput,
    script: Vec<Step>,
    tools: &mut ToolFn,
    visitor: &mut VisitorFn,
    stop_when_stuck: bool,
) -> Harness {
    let mut no_hook = |request: &HookRequest| -> Option<Value> {
        panic!("no hook in this scenario: {request:?}")
    };
    drive_with_hook(input, script, tools, visitor, &mut no_hook, stop_when_stuck)
}

pub fn drive_with_hook(
    input: RunInput,
    script: Vec<Step>,
    tools: &mut ToolFn,
    visitor: &mut VisitorFn,
    hook: &mut HookFn,
    stop_when_stuck: bool,
) -> Harness {
    let mut h = Harness {
        script: script.into(),
        events: Vec::new(),
        requests: Vec::new(),
        invocations: Vec::new(),
        cancels: Vec::new(),
        outcome: None,
        pending_seen: Vec::new(),
        hooks: Vec::new(),
    };
    let mut run = Run::start(input);
    let mut inputs: VecDeque<Input> = VecDeque::new();
    for _ in 0..10_000 {
        while let Some(output) = run.poll() {
            match output {
                Output::Event(event) => h.events.push(event),
                Output::CallModel(request) => {
                    h.requests.push(request);
                    match h
                        .script
                        .pop_front()
                        .expect("the script has an output for every model call")
                    {
                        Step::Text(text) | Step::Cut(text) if text.is_empty() => {
                            inputs.push_back(Input::ModelDone {
                                cut_by_limit: false,
                            })
                        }
                        Step::Text(text) => {
                            chunked(text, &mut inputs);
                            inputs.push_back(Input::ModelDone {
                                cut_by_limit: false,
                            });
                        }
                        Step::Cut(text) => {
                            chunked(text, &mut inputs);
                            inputs.push_back(Input::ModelDone { cut_by_limit: true });
                        }
                        Step::Native(deltas) => {
                            inputs.extend(deltas.into_iter().map(Input::ModelNative));
                            inputs.push_back(Input::ModelDone {
                                cut_by_limit: false,
                            });
                        }
                        Step::Fail(text, message) => {
                            chunked(text, &mut inputs);
                            inputs.push_back(Input::ModelFailed {
                                message: message.into(),
                            });
                        }
                        Step::Hang(text) => chunked(text, &mut inputs),
                        Step::Used(text, usage) => {
                            chunked(text, &mut inputs);
                            inputs.push_back(Input::Usage(usage));
                            inputs.push_back(Input::ModelDone {
                                cut_by_limit: false,
                            });
                        }
                    }
                }
                Output::CallTool(invocation) => {
                    if let Some(outcome) = tools(&invocation) {
                        inputs.push_back(Input::ToolDone {
                            call_id: invocation.call_id.clone(),
                            outcome,
                        });
                    }
                    h.invocations.push(invocation);
                }
                Output::CancelTool { call_id } => h.cancels.push(call_id),
                // The page listed again after a page call: it offers what it offered.
                Output::ListPageTools => inputs.push_back(Input::PageTools {
                    tools: None,
                    own_names: Vec::new(),
                }),
                Output::RepairHook(request) => {
                    let call = hook(&request);
                    h.hooks.push(request);
                    inputs.push_back(Input::HookAnswer {
                        call_id: h.hooks.last().unwrap().call_id.clone(),
                        call,
                    });
                }
                Output::Finished(outcome) => h.outcome = Some(outcome),
            }
        }
        if h.outcome.is_some() {
            // Late input after the end is dropped without a panic or an event.
            run.handle(Input::ModelText("late".into()));
            assert!(run.poll().is_none());
            return h;
        }
        let next = match inputs.pop_front() {
            Some(input) => input,
            None => match run.pending_inputs().first() {
                Some(pending) => {
                    h.pending_seen.push(pending.clone());
                    visitor(pending)
                }
                None if stop_when_stuck => Input::Stop {
                    reason: "stopped by the person".into(),
                },
                None => panic!("the run waits for nothing it asked for"),
            },
        };
        run.handle(next);
    }
    panic!("the run did not end");
}

pub fn chunked(text: &str, inputs: &mut VecDeque<Input>) {
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 7).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        inputs.push_back(Input::ModelText(text[start..end].to_owned()));
        start = end;
    }
}

pub fn tool(name: &str, kind: ToolKind, schema: Value) -> RunTool {
    RunTool {
        spec: ToolSpec {
            name: name.into(),
            description: format!("The {name} tool."),
            input_schema: schema,
        },
        kind,
        data_source: None,
    }
}

pub fn base(prompt: &str) -> RunInput {
    let mut input = RunInput::new(
        "thread_1",
        "run_1",
        vec![Message::User {
            id: "user_1".into(),
            content: prompt.into(),
        }],
    );
    input.tools = vec![
        tool(
            "add",
            ToolKind::Page,
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        ),
        tool(
            "current_time",
            ToolKind::Local,
            json!({"type": "object", "properties": {}}),
        ),
    ];
    input
}

pub fn add_tool(invocation: &ToolInvocation) -> Option<ToolOutcome> {
    match invocation.name.as_str() {
        "add" => {
            let a = invocation.arguments["a"].as_f64().unwrap_or(0.0);
            let b = invocation.arguments["b"].as_f64().unwrap_or(0.0);
            Some(ToolOutcome::Ok((a + b).to_string()))
        }
        "current_time" => Some(ToolOutcome::Ok("2026-11-29T12:00:00Z".into())),
        _ => Some(ToolOutcome::Error(format!(
            "no such tool {}",
            invocation.name
        ))),
    }
}

pub fn no_visitor(_: &PendingInput) -> Input {
    panic!("no visitor tool in this scenario")
}

pub fn types(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

pub fn customs<'a>(events: &'a [Event], name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Custom { name: n, value } if n == name => Some(value),
            _ => None,
        })
        .collect()
}

/// The text of each tool result (what the model was given).
pub fn results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResult { content, .. } => Some(content.text()),
            _ => None,
        })
        .collect()
}

/// Compares (or with UPDATE_EXPECT=1 writes) the scenario's coalesced events.
pub fn golden(name: &str, events: &[Event]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/turns")
        .join(format!("{name}.events.jsonl"));
    let text: String = coalesce(events.to_vec())
        .iter()
        .map(|e| e.to_json_line() + "\n")
        .collect();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    } else {
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            expected == text,
            "{name}: events differ from {} (UPDATE_EXPECT=1 to rewrite)\n{text}",
            path.display()
        );
    }
}
