//! A step's usage as the drive reports it: a `CUSTOM` event in the run's order, priced, and
//! the run answer's total; replay is unknown.

use super::*;
use crate::core::agui::Event;
use crate::core::observe::{cost, CUSTOM_USAGE};

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
    let total = drive.usage();
    assert_eq!(
        (&total["inputTokens"], &total["steps"]),
        (&json!(1000), &json!(1))
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
    assert_eq!(drive.usage(), Value::Null);
}
