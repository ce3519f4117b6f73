//! The run's drive against scripted model bytes, page answers and timeouts: no I/O, no clock.

use serde_json::json;

use super::*;
use crate::core::agui::Message;
use crate::core::mcp::tools::McpTool;
use crate::core::page::call::Listed;
use crate::core::page::tool::Annotations;
use crate::core::page::tool::PageTool;
use crate::core::provider::ModelConfig;
use crate::core::provider::Provider;
use crate::core::run::RunOutcome;
use crate::core::run::{RunInput, RunTool, ToolKind};
use crate::core::toolset::ToolSpec;

const OK_STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

fn model(provider: Provider, transcript: Option<&str>) -> ModelConfig {
    ModelConfig {
        name: "m".into(),
        provider,
        base_url: "https://api.test/v1".into(),
        model: "m-1".into(),
        native_tools: true,
        key_ref: None,
        max_tokens: None,
        transcript: transcript.map(str::to_owned),
        idle_timeout_ms: None,
    }
}

fn user(text: &str) -> Message {
    serde_json::from_value(json!({"id": "u1", "role": "user", "content": text}))
        .expect("a user message")
}

fn page_tool(name: &str, consequential: bool) -> PageTool {
    PageTool {
        name: name.into(),
        title: None,
        description: "Buys".into(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: Annotations {
            consequential_hint: consequential,
            ..Annotations::default()
        },
        origin: "https://shop.test".into(),
        frame_id: 0,
        form: None,
        polyfill: None,
    }
}

/// `tool` as a run's listing bound it, listed from document `d1`.
fn listed(tool: PageTool) -> Listed {
    Listed {
        tool,
        document_id: Some("d1".into()),
    }
}

/// A drive over a run with the page tool `buy` in tab 7.
fn drive(model: ModelConfig) -> (Drive, Vec<Action>) {
    drive_storing(model, None)
}

/// [`drive`], with every intent store answered by `error` (`None`: stored).
fn drive_storing(model: ModelConfig, error: Option<&str>) -> (Drive, Vec<Action>) {
    let mut input = RunInput::new("t1", "r1", vec![user("Buy it")]);
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
            model,
            key: Ok(None),
            tab_id: Some(7),
            origin: Some("https://shop.example".into()),
            bindings: vec![("buy".into(), Binding::Page(listed(page_tool("buy", true))))],
            hook: false,
        },
    );
    let actions = drain_storing(&mut drive, error);
    (drive, actions)
}

/// The drive's actions until it waits; an intent to store is stored (answered at once).
fn drain(drive: &mut Drive) -> Vec<Action> {
    drain_storing(drive, None)
}

/// [`drain`], with every intent store answered by `error` (`None`: stored).
fn drain_storing(drive: &mut Drive, error: Option<&str>) -> Vec<Action> {
    let mut out = Vec::new();
    while let Some(action) = drive.poll() {
        let stored = match &action {
            Action::StoreIntents { call_id, .. } => Some(call_id.clone()),
            _ => None,
        };
        // The tab listed again after a page call: it cannot be (no tab here), so the run keeps
        // its tools.
        let relist = matches!(action, Action::ListTabTools { .. });
        out.push(action);
        if relist {
            drive.handle(Answer::TabTools(Err("not listed in this test".into())));
        }
        if let Some(call_id) = stored {
            drive.handle(Answer::IntentsStored {
                call_id,
                error: error.map(str::to_owned),
            });
        }
    }
    out
}

fn feed(drive: &mut Drive, answer: Answer) -> Vec<Action> {
    drive.handle(answer);
    drain(drive)
}

fn fetch_of(actions: &[Action]) -> FetchId {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Fetch { id, .. } => Some(*id),
            _ => None,
        })
        .expect("a fetch")
}

fn timer_of(actions: &[Action]) -> (TimerId, u32) {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Timer { id, ms } => Some((*id, *ms)),
            _ => None,
        })
        .expect("a timer")
}

/// The id of the first tool call among `actions`.
fn call_id_of(actions: &[Action]) -> String {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Tool { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .expect("a tool call")
}

fn outcome(actions: &[Action]) -> Option<RunOutcome> {
    actions.iter().find_map(|a| match a {
        Action::Finished(outcome) => Some(outcome.clone()),
        _ => None,
    })
}

fn head(drive: &mut Drive, id: FetchId, status: u16) -> Vec<Action> {
    feed(
        drive,
        Answer::Head {
            id,
            status,
            retry_after: None,
        },
    )
}

fn body(drive: &mut Drive, id: FetchId, text: Option<&str>) -> Vec<Action> {
    feed(
        drive,
        Answer::Body {
            id,
            text: text.map(str::to_owned),
        },
    )
}

#[test]
fn a_stream_is_decoded_and_recorded() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    assert_eq!(first[0], Action::KeepAlive(true));
    assert_eq!(timer_of(&first).1, FIRST_BYTE_MS);
    let id = fetch_of(&first);
    let opened = head(&mut drive, id, 200);
    assert!(opened.contains(&Action::Read { id }));
    assert_eq!(timer_of(&opened).1, STREAM_IDLE_MS);
    // Any chunking: the body arrives in two pieces cut mid-event.
    let (a, b) = OK_STREAM.split_at(40);
    let read = body(&mut drive, id, Some(a));
    assert!(read.contains(&Action::Read { id }));
    let rest = [body(&mut drive, id, Some(b)), body(&mut drive, id, None)].concat();
    assert_eq!(
        outcome(&rest),
        Some(RunOutcome::Completed {
            text: "Hello".into()
        })
    );
    assert!(drive.transcript().contains("\"text\":\"Hello\""));
}

#[test]
fn a_refused_call_is_retried_after_its_wait() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    let id = fetch_of(&first);
    head(&mut drive, id, 503);
    let more = body(&mut drive, id, Some(r#"{"error":{"message":"busy"}}"#));
    assert!(more.contains(&Action::Read { id }));
    let failed = body(&mut drive, id, None);
    assert!(failed.contains(&Action::Abort { id }));
    let (wait, ms) = timer_of(&failed);
    assert_eq!(ms, 500);
    assert!(outcome(&failed).is_none());
    let again = feed(&mut drive, Answer::Timeout(wait));
    let second = fetch_of(&again);
    assert_ne!(second, id);
    head(&mut drive, second, 429);
    let failed = body(&mut drive, second, None);
    assert_eq!(timer_of(&failed).1, 1000);
    let third = fetch_of(&feed(&mut drive, Answer::Timeout(timer_of(&failed).0)));
    head(&mut drive, third, 503);
    let failed = body(&mut drive, third, Some("down"));
    let failed = [failed, body(&mut drive, third, None)].concat();
    match outcome(&failed) {
        Some(RunOutcome::Failed { message }) => {
            assert!(message.contains("failed (503): down"), "{message}")
        }
        other => panic!("not failed: {other:?}"),
    }
    assert_eq!(
        failed.last(),
        Some(&Action::Finished(outcome(&failed).unwrap()))
    );
}

#[test]
fn no_first_byte_in_time_is_retried_then_fails() {
    let (mut drive, mut actions) = drive(model(Provider::Openai, None));
    for wait in [500, 1000] {
        let id = fetch_of(&actions);
        let timed_out = feed(&mut drive, Answer::Timeout(timer_of(&actions).0));
        assert!(timed_out.contains(&Action::Abort { id }));
        assert_eq!(timer_of(&timed_out).1, wait);
        // The late head of the aborted request is ignored.
        assert!(head(&mut drive, id, 200).is_empty());
        actions = feed(&mut drive, Answer::Timeout(timer_of(&timed_out).0));
    }
    let last = feed(&mut drive, Answer::Timeout(timer_of(&actions).0));
    assert_eq!(
        outcome(&last),
        Some(RunOutcome::Failed {
            message: "https://api.test sent nothing within 60 s".into()
        })
    );
}

#[test]
fn a_silent_stream_is_dropped_and_a_stale_timer_ignored() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    let id = fetch_of(&first);
    let opened = head(&mut drive, id, 200);
    let (stale, _) = timer_of(&opened);
    let read = body(
        &mut drive,
        id,
        Some("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"),
    );
    assert!(read.contains(&Action::CancelTimer { id: stale }));
    assert!(feed(&mut drive, Answer::Timeout(stale)).is_empty());
    let (idle, ms) = timer_of(&read);
    assert_eq!(ms, STREAM_IDLE_MS);
    let dropped = feed(&mut drive, Answer::Timeout(idle));
    assert!(dropped.contains(&Action::Abort { id }));
    assert_eq!(
        outcome(&dropped),
        Some(RunOutcome::Failed {
            message: "the model's stream sent nothing for 120000 ms; the connection was dropped"
                .into()
        })
    );
}

#[test]
fn a_broken_stream_before_output_is_retried_not_after() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    let id = fetch_of(&first);
    head(&mut drive, id, 200);
    let broke = feed(
        &mut drive,
        Answer::FetchFailed {
            id,
            message: "reset".into(),
        },
    );
    let retry = fetch_of(&feed(&mut drive, Answer::Timeout(timer_of(&broke).0)));
    head(&mut drive, retry, 200);
    body(
        &mut drive,
        retry,
        Some("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"),
    );
    let broke = feed(
        &mut drive,
        Answer::FetchFailed {
            id: retry,
            message: "reset".into(),
        },
    );
    assert_eq!(
        outcome(&broke),
        Some(RunOutcome::Failed {
            message: "the model's stream broke: reset".into()
        })
    );
}

#[test]
fn stop_mid_stream_aborts_and_ends_stopped() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    let id = fetch_of(&first);
    head(&mut drive, id, 200);
    body(
        &mut drive,
        id,
        Some("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"),
    );
    let stopped = feed(
        &mut drive,
        Answer::Stop {
            reason: "stopped by the person".into(),
        },
    );
    assert!(stopped.contains(&Action::Abort { id }));
    assert_eq!(
        outcome(&stopped),
        Some(RunOutcome::Stopped {
            reason: "stopped by the person".into()
        })
    );
    assert!(stopped.contains(&Action::KeepAlive(false)));
    // Nothing after the end.
    assert!(body(&mut drive, id, Some("more")).is_empty());
}

const BUY: &str = r#"{"text":"","calls":[{"name":"buy","arguments":{"item":"tea"}}],"finish":"stop"}
{"text":"Bought.","finish":"stop"}"#;

#[test]
fn a_key_that_cannot_be_read_fails_the_first_call() {
    let mut input = RunInput::new("t1", "r1", vec![user("Hi")]);
    input.tools = Vec::new();
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model: model(Provider::Openai, None),
            key: Err("no API key `k`".into()),
            tab_id: None,
            origin: None,
            bindings: Vec::new(),
            hook: false,
        },
    );
    assert_eq!(
        outcome(&drain(&mut drive)),
        Some(RunOutcome::Failed {
            message: "no API key `k`".into()
        })
    );
}

#[test]
fn chrome_model_unavailable_or_answering() {
    let (mut drive, first) = drive(model(Provider::Chrome, None));
    let id = first
        .iter()
        .find_map(|a| match a {
            Action::ChromeAvailability { id } => Some(*id),
            _ => None,
        })
        .expect("asked");
    let prompt = feed(
        &mut drive,
        Answer::ChromeAvailability {
            id,
            availability: "available".into(),
        },
    );
    assert!(matches!(prompt[0], Action::ChromePrompt { .. }));
    let done = feed(
        &mut drive,
        Answer::ChromeOutput {
            id,
            output: Ok(vec!["Hel".into(), "lo".into()]),
        },
    );
    assert_eq!(
        outcome(&done),
        Some(RunOutcome::Completed {
            text: "Hello".into()
        })
    );
}

#[test]
fn a_visitor_call_waits_for_the_person_with_the_worker_let_idle() {
    let mut input = RunInput::new("t1", "r1", vec![user("Ask me")]);
    input.tools = vec![RunTool {
        spec: ToolSpec {
            name: "ask".into(),
            description: "Asks the visitor".into(),
            input_schema: json!({"type": "object"}),
        },
        kind: ToolKind::Visitor,
        data_source: None,
    }];
    let transcript = r#"{"text":"","calls":[{"name":"ask","arguments":{}}],"finish":"stop"}
{"text":"Thanks.","finish":"stop"}"#;
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model: model(Provider::Replay, Some(transcript)),
            key: Ok(None),
            tab_id: None,
            origin: None,
            bindings: Vec::new(),
            hook: false,
        },
    );
    let actions = drain(&mut drive);
    let pending = actions
        .iter()
        .find_map(|a| match a {
            Action::WaitForPerson(pending) => Some(pending.clone()),
            _ => None,
        })
        .expect("a wait for the person");
    let idle = actions
        .iter()
        .position(|a| *a == Action::KeepAlive(false))
        .expect("the worker may idle");
    assert!(idle < actions.len() - 1);
    let done = feed(
        &mut drive,
        Answer::Person(vec![Input::SubmitToolResult {
            call_id: pending[0].call_id.clone(),
            value: "yes".into(),
        }]),
    );
    assert_eq!(done[0], Action::KeepAlive(true));
    assert_eq!(
        outcome(&done),
        Some(RunOutcome::Completed {
            text: "Thanks.".into()
        })
    );
}

#[test]
fn stop_during_a_retry_wait_cancels_the_wait() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    let id = fetch_of(&first);
    head(&mut drive, id, 503);
    let failed = body(&mut drive, id, None);
    let (wait, _) = timer_of(&failed);
    let stopped = feed(
        &mut drive,
        Answer::Stop {
            reason: "enough".into(),
        },
    );
    assert!(stopped.contains(&Action::CancelTimer { id: wait }));
    assert!(!stopped.iter().any(|a| matches!(a, Action::Fetch { .. })));
    assert_eq!(
        outcome(&stopped),
        Some(RunOutcome::Stopped {
            reason: "enough".into()
        })
    );
    assert!(feed(&mut drive, Answer::Timeout(wait)).is_empty());
}

/// Every timer asked for ran out (`fired`) or was cancelled when the run finished, and the
/// end is the last action: the shell keeps no timer past a run.
fn no_timer_outlives(actions: &[Action], fired: &[TimerId]) {
    let mut live = Vec::new();
    for action in actions {
        match action {
            Action::Timer { id, .. } => live.push(*id),
            Action::CancelTimer { id } => live.retain(|t| t != id),
            _ => {}
        }
    }
    live.retain(|t| !fired.contains(t));
    assert!(live.is_empty(), "{live:?}");
    assert!(matches!(actions.last(), Some(Action::Finished(_))));
}

#[test]
fn no_timer_outlives_the_run() {
    let stop = || Answer::Stop {
        reason: "enough".into(),
    };
    // Stopped mid-stream.
    let (mut drive_a, mut all) = drive(model(Provider::Openai, None));
    let id = fetch_of(&all);
    all.extend(head(&mut drive_a, id, 200));
    let chunk = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
    all.extend(body(&mut drive_a, id, Some(chunk)));
    all.extend(feed(&mut drive_a, stop()));
    no_timer_outlives(&all, &[]);
    // Stopped in a retry wait, after the first byte's timer was answered.
    let (mut drive_b, mut all) = drive(model(Provider::Openai, None));
    let id = fetch_of(&all);
    all.extend(head(&mut drive_b, id, 503));
    all.extend(body(&mut drive_b, id, None));
    all.extend(feed(&mut drive_b, stop()));
    no_timer_outlives(&all, &[]);
}

mod calls;
mod relist;
mod usage;
