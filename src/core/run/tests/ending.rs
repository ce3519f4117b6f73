//! How a run ends in AG-UI 1.0's terms: the usage of its model steps on `RUN_FINISHED` and
//! `RUN_ERROR`, a stopped run cancelled, the frontend calls left to the client named, and a
//! result's media as content parts while the model keeps its text.

use super::*;
use crate::core::agui::{ContentPart, Outcome, PartSource, TokenUsage, ToolContent};
use crate::core::provider::usage::{StepUsage, Usage};

fn input(tools: Vec<RunTool>) -> RunInput {
    let mut input = RunInput::new(
        "t",
        "r",
        vec![Message::User {
            id: "u1".into(),
            content: "Go.".into(),
        }],
    );
    input.tools = tools;
    input
}

fn tool(name: &str, kind: ToolKind) -> RunTool {
    RunTool {
        spec: ToolSpec {
            name: name.into(),
            description: "A tool.".into(),
            input_schema: json!({"type": "object"}),
        },
        kind,
        data_source: None,
    }
}

fn used(step: usize, input_tokens: u64, output_tokens: u64) -> StepUsage {
    StepUsage {
        step,
        model: "claude".into(),
        model_id: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        usage: Some(Usage {
            input_tokens,
            output_tokens,
            cached_input_tokens: Some(0),
            cache_write_input_tokens: Some(10),
            reasoning_tokens: None,
        }),
        finish_reason: Some("end_turn".into()),
        cost: None,
    }
}

/// Every output from now on: the events, and the tool calls asked for.
fn drain(run: &mut Run) -> (Vec<Event>, Vec<String>) {
    let (mut events, mut calls) = (Vec::new(), Vec::new());
    while let Some(output) = run.poll() {
        match output {
            Output::Event(event) => events.push(event),
            Output::CallTool(call) => calls.push(call.call_id),
            // The page is listed again after a page call: it offers what it offered.
            Output::ListPageTools => run.handle(Input::PageTools {
                tools: None,
                own_names: Vec::new(),
            }),
            _ => {}
        }
    }
    (events, calls)
}

/// One model step's output, then its use, then its end.
fn step(run: &mut Run, text: &str, usage: Option<StepUsage>) -> (Vec<Event>, Vec<String>) {
    run.handle(Input::ModelText(text.into()));
    if let Some(usage) = usage {
        run.handle(Input::Usage(usage));
    }
    run.handle(Input::ModelDone {
        cut_by_limit: false,
    });
    drain(run)
}

fn call(name: &str) -> String {
    format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {{}}}}</tool_call>")
}

#[test]
fn run_finished_carries_the_steps_usage_summed_and_the_usage_event_stays() {
    let mut run = Run::start(input(vec![tool("look", ToolKind::Page)]));
    drain(&mut run);
    let (events, calls) = step(&mut run, &call("look"), Some(used(1, 100, 5)));
    let usage_events: Vec<&Value> = (events.iter())
        .filter_map(|e| match e {
            Event::Custom { name, value } if name == CUSTOM_USAGE => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(usage_events.len(), 1, "the CUSTOM event is still emitted");
    assert_eq!(usage_events[0]["inputTokens"], 100);
    assert_eq!(usage_events[0]["run"]["steps"], 1);
    assert_eq!(usage_events[0].get("cacheWriteInputTokens"), None);
    run.handle(Input::ToolDone {
        call_id: calls[0].clone(),
        outcome: ToolOutcome::Ok("seen".into()),
    });
    drain(&mut run);
    let (events, _) = step(&mut run, "Done.", Some(used(2, 200, 7)));
    let Some(Event::RunFinished {
        result,
        outcome,
        usage,
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert_eq!(result.as_ref().unwrap()["type"], "completed");
    assert_eq!(*outcome, None, "a completed run: absent means success");
    assert_eq!(
        *usage,
        vec![TokenUsage {
            provider: Some("anthropic".into()),
            model: Some("claude-sonnet-4-5".into()),
            input_tokens: Some(300),
            output_tokens: Some(12),
            total_tokens: Some(312),
            reasoning_tokens: None,
            cached_input_tokens: Some(0),
            cache_write_input_tokens: Some(20),
        }]
    );
    assert_eq!(run.usage().steps().len(), 2);
}

#[test]
fn run_error_carries_the_usage_of_the_steps_before_the_failure() {
    let mut run = Run::start(input(vec![tool("look", ToolKind::Page)]));
    drain(&mut run);
    let (_, calls) = step(&mut run, &call("look"), Some(used(1, 100, 5)));
    run.handle(Input::ToolDone {
        call_id: calls[0].clone(),
        outcome: ToolOutcome::Ok("seen".into()),
    });
    drain(&mut run);
    run.handle(Input::ModelText("Half".into()));
    run.handle(Input::ModelFailed {
        message: "the provider answered 500".into(),
    });
    let (events, _) = drain(&mut run);
    let Some(Event::RunError { code, usage, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(code.as_deref(), Some("model_error"));
    assert_eq!(usage.len(), 1);
    assert_eq!(
        (usage[0].input_tokens, usage[0].output_tokens),
        (Some(100), Some(5))
    );
    // A run whose tokens nobody reported says nothing of them.
    let mut run = Run::start(input(Vec::new()));
    drain(&mut run);
    run.handle(Input::ModelFailed {
        message: "down".into(),
    });
    let (events, _) = drain(&mut run);
    let value = serde_json::to_value(events.last().unwrap()).unwrap();
    assert_eq!(value.get("usage"), None, "{value}");
}

#[test]
fn a_stopped_run_is_cancelled_and_keeps_its_own_result() {
    let mut run = Run::start(input(vec![tool("look", ToolKind::Page)]));
    drain(&mut run);
    let (_, calls) = step(&mut run, &call("look"), Some(used(1, 100, 5)));
    assert_eq!(calls.len(), 1);
    run.handle(Input::Stop {
        reason: "stopped by the person".into(),
    });
    let (events, _) = drain(&mut run);
    let value = serde_json::to_value(events.last().unwrap()).unwrap();
    assert_eq!(value["type"], "RUN_FINISHED");
    assert_eq!(value["outcome"], json!({"type": "cancelled"}));
    assert_eq!(
        value["result"],
        json!({"type": "stopped", "reason": "stopped by the person"})
    );
    assert_eq!(value["usage"][0]["inputTokens"], 100);
}

#[test]
fn a_run_ended_on_frontend_calls_names_them_pending_in_order() {
    let tools = vec![
        tool("confirm_order", ToolKind::Frontend),
        tool("show_map", ToolKind::Frontend),
        tool("look", ToolKind::Page),
    ];
    let mut run = Run::start(input(tools));
    drain(&mut run);
    let text = [call("confirm_order"), call("look"), call("show_map")].concat();
    let (events, calls) = step(&mut run, &text, None);
    let started: Vec<String> = (events.iter())
        .filter_map(|e| match e {
            Event::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } if tool_call_name != "look" => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 2);
    run.handle(Input::ToolDone {
        call_id: calls[0].clone(),
        outcome: ToolOutcome::Ok("seen".into()),
    });
    let (events, _) = drain(&mut run);
    let Some(Event::RunFinished {
        result,
        outcome,
        usage,
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert_eq!(result.as_ref().unwrap()["type"], "frontendTools");
    assert_eq!(
        *outcome,
        Some(Outcome::Success {
            pending_tool_call_ids: started
        })
    );
    assert!(usage.is_empty());
}

#[test]
fn a_results_media_go_to_the_event_as_parts_and_the_model_keeps_its_text() {
    let mut mcp = tool("chart", ToolKind::Mcp);
    mcp.data_source = Some("MCP server charts".into());
    let key = "sk-live-0123456789abcdef";
    let mut given = input(vec![mcp, tool("plain", ToolKind::Mcp)]);
    given.middleware = vec![Middleware::Redact {
        secrets: vec![key.into()],
    }];
    let mut run = Run::start(given);
    drain(&mut run);
    let (_, calls) = step(&mut run, &[call("chart"), call("plain")].concat(), None);
    let text = "a chart\n[image image/png, 4 bytes of base64 not shown]";
    let image = ContentPart::Image {
        source: PartSource::Data {
            value: "AAAA".into(),
            mime_type: "image/png".into(),
        },
    };
    let link = ContentPart::Document {
        source: PartSource::Url {
            value: format!("https://x.test/r?key={key}"),
            mime_type: None,
        },
    };
    run.handle(Input::ToolDone {
        call_id: calls[0].clone(),
        outcome: ToolOutcome::Media {
            text: text.into(),
            parts: vec![image.clone(), link],
        },
    });
    run.handle(Input::ToolDone {
        call_id: calls[1].clone(),
        outcome: ToolOutcome::Ok("just text".into()),
    });
    let (events, _) = drain(&mut run);
    let results: Vec<(&String, &ToolContent)> = (events.iter())
        .filter_map(|e| match e {
            Event::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => Some((tool_call_id, content)),
            _ => None,
        })
        .collect();
    let model_text = |id: &str| {
        (run.model.iter()).find_map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } if tool_call_id == id => Some(content.clone()),
            _ => None,
        })
    };
    // The model's text is what it always was: the data wrapper around the result's text.
    let wrapped = model_text(&calls[0]).unwrap();
    assert_eq!(wrapped, wrap_as_data("MCP server charts", text));
    let ToolContent::Parts(parts) = results[0].1 else {
        panic!("{:?}", results[0])
    };
    assert_eq!(
        parts[..2],
        [
            ContentPart::Text {
                text: wrapped.clone()
            },
            image
        ]
    );
    assert_eq!(
        parts[2],
        ContentPart::Document {
            source: PartSource::Url {
                value: "https://x.test/r?key=[redacted]".into(),
                mime_type: None
            }
        },
        "secrets are redacted from the parts too"
    );
    assert_eq!(results[0].1.text(), wrapped);
    // The client's view keeps the text as well (what a later turn gives the model).
    assert!((run.visible.iter()).any(
        |m| matches!(m, Message::Tool { content, tool_call_id, .. } if *content == wrapped && *tool_call_id == calls[0])
    ));
    // A text-only result stays a string.
    assert_eq!(*results[1].1, ToolContent::Text("just text".into()));
}
