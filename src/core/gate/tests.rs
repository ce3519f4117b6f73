use serde_json::json;

use super::*;
use crate::core::run::declared;

fn layers(value: serde_json::Value) -> Vec<Middleware> {
    declared(&value, "layers").expect("layers parse")
}

#[test]
fn a_block_refuses_the_call_for_every_asker_and_either_name() {
    let layers = layers(json!([{"kind": "block", "tool": "transfer", "reason": "not here"}]));
    for asker in Asker::ALL {
        let refused = screen(&layers, asker, &["transfer"], 1).unwrap_err();
        assert_eq!(refused, "blocked: not here", "{asker:?}");
        // An MCP tool named as a run knows it, or by its own name.
        assert!(screen(&layers, asker, &["bank__transfer", "transfer"], 1).is_err());
        assert!(screen(&layers, asker, &["lookup"], 1).is_ok());
    }
}

#[test]
fn fail_counts_calls_and_delay_adds_up_to_its_cap() {
    let layers = layers(json!([
        {"kind": "delay", "ms": 40_000},
        {"kind": "fail", "tool": "flaky", "error": "boom", "times": 2},
        {"kind": "delay", "tool": "flaky", "ms": 40_000},
    ]));
    assert_eq!(
        screen(&layers, Asker::Run, &["flaky"], 2).unwrap_err(),
        "boom"
    );
    let pass = screen(&layers, Asker::Run, &["flaky"], 3).unwrap();
    assert_eq!(pass.delay_ms(), MAX_DELAY_MS);
    assert_eq!(
        screen(&layers, Asker::Smoke, &["other"], 1)
            .unwrap()
            .delay_ms(),
        40_000
    );
}

#[test]
fn layers_after_a_refusal_are_not_reached() {
    let layers =
        layers(json!([{"kind": "observe"}, {"kind": "block", "tool": "x"}, {"kind": "observe"}]));
    let mut seen = 0;
    let screened = screen_each(&layers, Asker::Run, &["x"], 1, |l| {
        seen += usize::from(*l == Middleware::Observe)
    });
    assert!(screened.is_err());
    assert_eq!(seen, 1);
}

#[test]
fn stored_layers_that_cannot_be_used_refuse_the_call() {
    let broken = screen_stored(
        Ok(Some(json!([{"kind": "nonsense"}]))),
        Asker::Replay,
        &["a"],
    );
    assert!(broken
        .unwrap_err()
        .starts_with("replayDiff: the call was not made"));
    let unread = screen_stored(Err("quota".into()), Asker::Probe, &["a"]);
    assert!(unread.unwrap_err().contains("could not be read: quota"));
    let none = screen_stored(Ok(None), Asker::CallTool, &["a"]).unwrap();
    let permit = none.permit(7);
    assert_eq!((*permit.call(), permit.asker()), (7, Asker::CallTool));
}
