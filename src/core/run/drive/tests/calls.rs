//! The drive's tool calls: intents stored before acting calls, cancellation in the frame,
//! confirmations of MCP calls, refusals, and the repair hook.

use serde_json::json;

use super::*;
use crate::core::run::{ToolAnswer, ToolOutcome};

/// The tool `name` of a run: an MCP server's `delete`, as the model sees it.
fn mcp_delete_tool(name: &str) -> RunTool {
    RunTool {
        spec: ToolSpec {
            name: name.into(),
            description: "Deletes".into(),
            input_schema: json!({"type": "object"}),
        },
        kind: ToolKind::Mcp,
        data_source: None,
    }
}

/// Server `own`'s `delete`, which acts and needs confirmation.
fn own_delete() -> Binding {
    Binding::Mcp {
        server: "own".into(),
        tool: McpTool {
            name: "delete".into(),
            title: None,
            description: "Deletes".into(),
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            annotations: Default::default(),
        },
        needs_confirmation: true,
        acting: true,
    }
}

#[test]
fn an_acting_call_is_recorded_before_it_starts_and_removed_after() {
    let (mut drive, first) = drive(model(Provider::Replay, Some(BUY)));
    let store = first
        .iter()
        .position(|a| matches!(a, Action::StoreIntents { intents: list, .. } if list.iter().any(|i| i.name == "buy" && i.source == "page https://shop.test")))
        .expect("the intent is stored");
    let (tool, call_id, request) = first
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a {
            Action::Tool { call_id, call, .. } => match call.call() {
                ToolCall::Page(request) => Some((i, call_id.clone(), request.clone())),
                _ => None,
            },
            _ => None,
        })
        .expect("the page call");
    assert!(store < tool);
    assert_eq!(request.timeout_ms, PAGE_TOOL_MS);
    assert_eq!(request.call.as_deref(), Some(call_id.as_str()));
    assert_eq!(
        request.expect.as_ref(),
        Some(&listed(page_tool("buy", true)))
    );
    let done = feed(
        &mut drive,
        Answer::ToolDone {
            call_id: call_id.clone(),
            answer: ToolOutcome::Ok("done".into()).into(),
        },
    );
    assert!(first.contains(&Action::StoreIntents {
        call_id: call_id.clone(),
        intents: vec![Intent {
            call_id: call_id.clone(),
            name: "buy".into(),
            source: "page https://shop.test".into(),
        }]
    }));
    let result = done.iter().position(|a| {
        matches!(a, Action::Event(e) if serde_json::to_value(e).unwrap()["type"] == "TOOL_CALL_RESULT")
    });
    let dropped = done.iter().position(|a| *a == Action::Intents(Vec::new()));
    let (result, dropped) = (
        result.expect("the result"),
        dropped.expect("the intent goes"),
    );
    assert!(
        result < dropped,
        "the result's event goes out before the intent is dropped"
    );
    assert_eq!(
        outcome(&done),
        Some(RunOutcome::Completed {
            text: "Bought.".into()
        })
    );
    assert!(drive.transcript().lines().count() == 2);
}

#[test]
fn a_page_result_that_breaks_its_output_schema_is_logged_so_before_its_result() {
    let (mut drive, first) = drive(model(Provider::Replay, Some(BUY)));
    let call_id = call_id_of(&first);
    let errors = json!([{"pointer": "/orderId", "message": "7 is not of type \"string\""}]);
    let done = feed(
        &mut drive,
        Answer::ToolDone {
            call_id: call_id.clone(),
            answer: ToolAnswer {
                output_errors: errors.as_array().cloned(),
                ..ToolOutcome::Ok("{\"orderId\": 7}".into()).into()
            },
        },
    );
    let events: Vec<serde_json::Value> = done
        .iter()
        .filter_map(|a| match a {
            Action::Event(e) => Some(serde_json::to_value(e).unwrap()),
            _ => None,
        })
        .collect();
    let noted = (events.iter())
        .position(|e| e["name"] == "webmcp_host.tool_output_errors")
        .expect("the output errors are an event");
    assert_eq!(
        events[noted]["value"],
        json!({"toolCallId": call_id, "outputErrors": errors})
    );
    let result = (events.iter())
        .position(|e| e["type"] == "TOOL_CALL_RESULT")
        .expect("the result");
    assert!(noted < result);
}

#[test]
fn a_page_call_allowed_by_a_site_policy_is_logged_so_before_its_result() {
    let (mut drive, first) = drive(model(Provider::Replay, Some(BUY)));
    let call_id = call_id_of(&first);
    let allowed = "allowed by site policy https://shop.test";
    let done = feed(
        &mut drive,
        Answer::ToolDone {
            call_id: call_id.clone(),
            answer: ToolAnswer {
                confirmation: Some(allowed.into()),
                ..ToolOutcome::Ok("done".into()).into()
            },
        },
    );
    let events: Vec<serde_json::Value> = done
        .iter()
        .filter_map(|a| match a {
            Action::Event(e) => Some(serde_json::to_value(e).unwrap()),
            _ => None,
        })
        .collect();
    let noted = events
        .iter()
        .position(|e| e["name"] == "webmcp_host.tool_confirmation")
        .expect("the allowance is an event");
    assert_eq!(
        events[noted]["value"],
        json!({"toolCallId": call_id, "confirmation": allowed})
    );
    let result = events
        .iter()
        .position(|e| e["type"] == "TOOL_CALL_RESULT")
        .expect("the result");
    assert!(noted < result);
    assert_eq!(
        events[result]["content"], "done",
        "the model sees the result only"
    );
}

#[test]
fn stop_during_a_page_call_cancels_it_in_its_frame() {
    let (mut drive, first) = drive(model(Provider::Replay, Some(BUY)));
    let call_id = call_id_of(&first);
    let stopped = feed(
        &mut drive,
        Answer::Stop {
            reason: "enough".into(),
        },
    );
    assert!(stopped.contains(&Action::CancelInFrame {
        tab_id: 7,
        frame_id: 0,
        call_id: call_id.clone()
    }));
    // The call's intent goes with it.
    assert!(stopped.contains(&Action::Intents(Vec::new())));
    assert_eq!(
        outcome(&stopped),
        Some(RunOutcome::Stopped {
            reason: "enough".into()
        })
    );
}

#[test]
fn an_mcp_call_that_acts_is_confirmed_in_the_page() {
    let mut input = RunInput::new("t1", "r1", vec![user("Delete")]);
    input.tools = vec![mcp_delete_tool("delete")];
    let transcript =
        r#"{"text":"","calls":[{"name":"delete","arguments":{"a":2}}],"finish":"stop"}"#;
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model: model(Provider::Replay, Some(transcript)),
            key: Ok(None),
            tab_id: Some(7),
            origin: None,
            hook: false,
            // A page tool of the same name (left out of the run) does not take the call.
            bindings: vec![
                (
                    "delete".into(),
                    Binding::Page(listed(page_tool("delete", true))),
                ),
                ("delete".into(), own_delete()),
            ],
        },
    );
    let actions = drain(&mut drive);
    // Asked first: not under way yet, so no intent, and the worker may idle meanwhile.
    assert!(!actions
        .iter()
        .any(|a| matches!(a, Action::Intents(_) | Action::StoreIntents { .. })));
    assert!(!actions.iter().any(|a| matches!(a, Action::Tool { .. })));
    assert_eq!(actions.last(), Some(&Action::KeepAlive(false)));
    let ask = actions
        .iter()
        .find_map(|a| match a {
            Action::Confirm(ask) => Some(ask.as_ref().clone()),
            _ => None,
        })
        .expect("a confirmation");
    assert_eq!((ask.server.as_str(), ask.tool.as_str()), ("own", "delete"));
    // Asked in the extension's own UI, even for a run on a tab (whose renderer must not
    // answer for a server's call): the question names the run and shows every argument.
    assert_eq!(ask.turn_id, "r1");
    assert_eq!(
        ask.question,
        crate::core::confirm::mcp_tool(
            "own",
            "delete",
            &json!({"a": 2}).as_object().unwrap().clone()
        )
        .unwrap()
    );
    // Allowed: the worker works again, the intent is stored, then the call starts.
    let allowed = feed(
        &mut drive,
        Answer::Confirmed {
            call_id: ask.call_id.clone(),
            allowed: true,
        },
    );
    let stored = allowed
        .iter()
        .position(|a| matches!(a, Action::StoreIntents { intents: list, .. } if list.iter().any(|i| i.source == "MCP server own")))
        .expect("the intent");
    let started = allowed
        .iter()
        .position(|a| matches!(a, Action::Tool { .. }))
        .expect("the call");
    assert!(stored < started);
    assert!(allowed.contains(&Action::KeepAlive(true)));
    let tool = match &allowed[started] {
        Action::Tool { call, .. } => match call.call() {
            ToolCall::Mcp { tool, .. } => tool.clone(),
            other => panic!("not an MCP call: {other:?}"),
        },
        _ => unreachable!(),
    };
    // The call carries the tool as the server listed it: the shell needs only the client.
    assert_eq!(tool.name, "delete");
}

#[test]
fn a_declined_mcp_call_never_starts_and_a_late_answer_is_ignored() {
    let mut input = RunInput::new("t1", "r1", vec![user("Delete it")]);
    input.tools = vec![mcp_delete_tool("own__delete")];
    let transcript = r#"{"text":"","calls":[{"name":"own__delete","arguments":{}}],"finish":"stop"}
{"text":"Not deleted.","finish":"stop"}"#;
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model: model(Provider::Replay, Some(transcript)),
            key: Ok(None),
            tab_id: None,
            origin: None,
            hook: false,
            bindings: vec![("own__delete".into(), own_delete())],
        },
    );
    let actions = drain(&mut drive);
    let call_id = actions
        .iter()
        .find_map(|a| match a {
            Action::Confirm(ask) => Some(ask.call_id.clone()),
            _ => None,
        })
        .expect("a confirmation in the popup");
    assert_eq!(actions.last(), Some(&Action::KeepAlive(false)));
    let declined = feed(
        &mut drive,
        Answer::Confirmed {
            call_id: call_id.clone(),
            allowed: false,
        },
    );
    assert!(!declined.iter().any(|a| matches!(
        a,
        Action::Tool { .. } | Action::Intents(_) | Action::StoreIntents { .. }
    )));
    assert_eq!(
        outcome(&declined),
        Some(RunOutcome::Completed {
            text: "Not deleted.".into()
        })
    );
    assert!(feed(
        &mut drive,
        Answer::Confirmed {
            call_id,
            allowed: true
        }
    )
    .is_empty());
}

#[test]
fn an_mcp_call_that_cannot_be_shown_is_refused_unasked() {
    let mut input = RunInput::new("t1", "r1", vec![user("Delete")]);
    input.tools = vec![mcp_delete_tool("delete")];
    let args: serde_json::Map<String, Value> =
        (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
    let transcript =
        json!({"text": "", "calls": [{"name": "delete", "arguments": args}], "finish": "stop"})
            .to_string();
    for tab_id in [Some(7), None] {
        let mut drive = Drive::new(
            Run::start(input.clone()),
            Setup {
                model: model(Provider::Replay, Some(&transcript)),
                key: Ok(None),
                tab_id,
                origin: None,
                hook: false,
                bindings: vec![("delete".into(), own_delete())],
            },
        );
        let actions = drain(&mut drive);
        assert!(!actions.iter().any(|a| matches!(a, Action::Tool { .. })));
        assert!(format!("{actions:?}").contains("not run: its arguments cannot all be shown"));
    }
}

#[test]
fn a_call_repair_cannot_fix_goes_to_the_repair_hook_when_one_is_set() {
    let transcript = r#"{"text":"","calls":[{"name":"zzz_unknown","arguments":{"n":1}}],"finish":"stop"}
{"text":"Done.","finish":"stop"}"#;
    for hook in [true, false] {
        let mut input = RunInput::new("t1", "r1", vec![user("Buy it")]);
        input.hook = hook;
        input.tools = vec![RunTool {
            spec: ToolSpec {
                name: "buy".into(),
                description: "Buys".into(),
                input_schema: json!({"type": "object"}),
            },
            kind: ToolKind::Page,
            data_source: None,
        }];
        let mut drive = Drive::new(
            Run::start(input),
            Setup {
                model: model(Provider::Replay, Some(transcript)),
                key: Ok(None),
                tab_id: Some(7),
                origin: None,
                bindings: vec![("buy".into(), Binding::Page(listed(page_tool("buy", false))))],
                hook,
            },
        );
        let actions = drain(&mut drive);
        let asked = actions.iter().find_map(|a| match a {
            Action::RepairHook { call_id, request } => Some((call_id.clone(), request.clone())),
            _ => None,
        });
        if !hook {
            assert!(asked.is_none(), "no hook is asked when none is set");
            assert!(outcome(&actions).is_some(), "the error went to the model");
            continue;
        }
        let (call_id, request) = asked.expect("the hook is asked");
        assert_eq!(request["name"], "zzz_unknown");
        assert!(
            request["raw"].as_str().is_some_and(|r| r.contains("\"n\"")),
            "{request}"
        );
        assert_eq!(request["tools"][0]["name"], "buy");
        let actions = feed(
            &mut drive,
            Answer::Hook {
                call_id: call_id.clone(),
                call: Some(json!({"name": "buy", "arguments": {"n": 1}})),
            },
        );
        let ran = actions
            .iter()
            .any(|a| matches!(a, Action::Tool { call_id: id, .. } if *id == call_id));
        assert!(
            ran,
            "the hook's call runs under the model's call id: {actions:?}"
        );
    }
}

#[test]
fn an_acting_call_whose_intent_cannot_be_stored_is_refused_and_never_starts() {
    let (_, first) = drive_storing(model(Provider::Replay, Some(BUY)), Some("quota exceeded"));
    assert!(first
        .iter()
        .any(|a| matches!(a, Action::StoreIntents { .. })));
    assert!(
        !first.iter().any(|a| matches!(a, Action::Tool { .. })),
        "the call never starts"
    );
    // The intent goes again, and the model is told why the call did not run.
    assert!(first.contains(&Action::Intents(Vec::new())));
    let told = format!("{first:?}");
    assert!(
        told.contains("its intent could not be stored (quota exceeded)"),
        "{told}"
    );
}
