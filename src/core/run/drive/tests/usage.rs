//! A step's usage as the drive reports it: a `CUSTOM` event in the run's order, priced, and
//! the run answer's total; replay is unknown.

use super::*;
use crate::core::agui::Event;
use crate::core::agui::CUSTOM_USAGE;
use crate::core::observe::cost;
use crate::core::run::ToolOutcome;

const USAGE_STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":100,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n\
data: [DONE]\n\n";

fn events(actions: &[Action]) -> Vec<Event> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

fn usage_event(events: &[Event]) -> Value {
    events
        .iter()
        .find_map(|e| match e {
            Event::Custom { name, value } if name == CUSTOM_USAGE => Some(value.clone()),
            _ => None,
        })
        .expect("a usage event")
}

#[test]
fn a_steps_usage_is_an_event_before_the_steps_end_and_the_runs_total() {
    let (mut drive, first) = drive(model(Provider::Openai, None));
    drive.set_prices(cost::parse(&json!({"m": {"input": 2.0, "output": 8.0}})).unwrap());
    let id = fetch_of(&first);
    head(&mut drive, id, 200);
    let all = [
        body(&mut drive, id, Some(USAGE_STREAM)),
        body(&mut drive, id, None),
    ]
    .concat();
    let events = events(&all);
    let value = usage_event(&events);
    assert_eq!(value["step"], 1);
    assert_eq!(value["provider"], "openai");
    assert_eq!(value["modelId"], "m-1");
    assert_eq!(
        (&value["inputTokens"], &value["outputTokens"]),
        (&json!(1000), &json!(100))
    );
    assert_eq!(value["finishReason"], "stop");
    // 1000 × 2 + 100 × 8 = 2800 per million.
    assert!((value["cost"].as_f64().unwrap() - 0.0028).abs() < 1e-12);
    assert_eq!(value["run"]["inputTokens"], 1000);
    let at = |f: &dyn Fn(&Event) -> bool| events.iter().position(f).unwrap();
    let usage_at = at(&|e| matches!(e, Event::Custom { name, .. } if name == CUSTOM_USAGE));
    assert!(usage_at > at(&|e| matches!(e, Event::TextMessageContent { .. })));
    assert!(usage_at < at(&|e| matches!(e, Event::StepFinished { .. })));
    let total = drive.usage().to_value();
    assert_eq!(
        (&total["inputTokens"], &total["steps"]),
        (&json!(1000), &json!(1))
    );
    // The run's last event carries it in AG-UI's terms: by provider and model id, with only
    // the counts the provider reported (no reasoning count in this stream).
    let Some(Event::RunFinished { usage, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        serde_json::to_value(usage).unwrap(),
        json!([{"provider": "openai", "model": "m-1", "inputTokens": 1000, "outputTokens": 100,
            "totalTokens": 1100, "cachedInputTokens": 0}])
    );
}

#[test]
fn replay_usage_is_unknown_never_guessed() {
    let transcript = r#"{"text": "Done."}"#;
    let (drive, first) = drive(model(Provider::Replay, Some(transcript)));
    let value = usage_event(&events(&first));
    assert_eq!(value["usage"], "unknown");
    assert_eq!(value["inputTokens"], Value::Null);
    assert_eq!(value["run"]["unknownSteps"], 1);
    assert_eq!(drive.usage().to_value(), Value::Null);
    let end = serde_json::to_value(events(&first).last().unwrap()).unwrap();
    assert_eq!(end["type"], "RUN_FINISHED");
    assert_eq!(end.get("usage"), None, "nothing known: no usage");
}

const CALL_STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Buying.\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"buy\",\"arguments\":\"{\\\"item\\\":\\\"tea\\\"}\"}}]}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":500,\"completion_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":100}}}\n\n\
data: [DONE]\n\n";

/// The events of actions as the run log keeps them (JSON).
fn logged(actions: &[Action]) -> Vec<Value> {
    (events(actions).iter())
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

#[test]
fn the_timeline_of_a_driven_run_shows_each_steps_tokens_and_cost() {
    use crate::core::timeline::{timeline, Entry};
    let (mut drive, first) = drive(model(Provider::Openai, None));
    drive.set_prices(cost::parse(&json!({"m": {"input": 2.0, "output": 8.0}})).unwrap());
    let id = fetch_of(&first);
    let mut all = first.clone();
    all.extend(head(&mut drive, id, 200));
    all.extend(body(&mut drive, id, Some(CALL_STREAM)));
    all.extend(body(&mut drive, id, None));
    let call_id = call_id_of(&all);
    let done = feed(
        &mut drive,
        Answer::ToolDone {
            call_id,
            answer: ToolOutcome::Ok("done".into()).into(),
        },
    );
    let second = fetch_of(&done);
    all.extend(done);
    all.extend(head(&mut drive, second, 200));
    all.extend(body(&mut drive, second, Some(USAGE_STREAM)));
    all.extend(body(&mut drive, second, None));
    let events = logged(&all);
    let t = timeline(&events, &[], Some("Buy it"));
    assert_eq!(t.state, "finished", "{:#?}", t.entries);
    let steps: Vec<_> = (t.entries.iter())
        .filter_map(|e| match e {
            Entry::Step(step) => Some(step),
            _ => None,
        })
        .collect();
    assert_eq!(steps.len(), 2, "{:#?}", t.entries);
    assert_eq!(steps[0].calls[0].name, "buy");
    let (one, two) = (&steps[0].tokens, &steps[1].tokens);
    assert_eq!(one.usage, "reported");
    assert_eq!(
        (one.input_tokens, one.output_tokens, one.cached_input_tokens),
        (Some(500), Some(20), Some(100))
    );
    // 500 × 2 + 20 × 8 = 1160 per million.
    assert!((one.cost.unwrap() - 0.00116).abs() < 1e-12);
    assert_eq!(
        (two.input_tokens, two.output_tokens),
        (Some(1000), Some(100))
    );
    assert!((two.cost.unwrap() - 0.0028).abs() < 1e-12);
    // The usage events are read into their steps, not left as notes.
    assert!(
        !(t.entries.iter()).any(|e| matches!(e, Entry::Note { name, .. } if name == CUSTOM_USAGE))
    );
}

#[test]
fn a_replayed_runs_timeline_says_its_tokens_are_unknown() {
    use crate::core::timeline::{timeline, Entry};
    let (_, first) = drive(model(Provider::Replay, Some(r#"{"text": "Done."}"#)));
    let t = timeline(&logged(&first), &[], None);
    let Some(Entry::Step(step)) = t.entries.first() else {
        panic!("{:#?}", t.entries)
    };
    assert_eq!(step.tokens.usage, "unknown");
    assert_eq!(step.tokens.input_tokens, None);
    assert_eq!(t.answer.as_deref(), Some("Done."));
}
