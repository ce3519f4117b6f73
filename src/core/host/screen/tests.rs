//! The host's door to the gate: the stored layers read once and kept, a change forgotten, a
//! call blocked, failed or held as the layers say, and an input the gate did not ask for.

use serde_json::json;

use super::*;
use crate::core::host::io::Storage;

fn layers(value: serde_json::Value) -> Option<Input> {
    Some(Input::Read(Ok(Some(value))))
}

/// Whether the screening asks for the stored layers.
fn reads(step: &Step<Result<Pass, String>>) -> bool {
    matches!(step, Step::Do(Output::Storage(Storage::Read { area: Area::Local, key })) if key == MIDDLEWARE_KEY)
}

#[test]
fn the_stored_layers_are_read_once_and_kept_until_they_change() {
    let host = Host::default();
    let mut first = Screening::new(Asker::ByHand, &["search"]);
    assert!(reads(&host.screen(&mut first, None)));
    let passed = host.screen(&mut first, layers(json!([])));
    assert!(matches!(passed, Step::Done(Ok(_))), "{passed:?}");
    // Kept: the next call does not read them again.
    let mut second = Screening::new(Asker::Exposure, &["search"]);
    assert!(matches!(host.screen(&mut second, None), Step::Done(Ok(_))));
    // Changed: read again.
    host.layers.borrow_mut().forget();
    let mut third = Screening::new(Asker::CallTool, &["search"]);
    assert!(reads(&host.screen(&mut third, None)));
}

#[test]
fn a_read_that_raced_a_change_is_not_kept_and_a_failed_read_refuses() {
    let host = Host::default();
    let mut call = Screening::new(Asker::ByHand, &["search"]);
    host.screen(&mut call, None);
    host.layers.borrow_mut().forget();
    host.screen(&mut call, layers(json!([])));
    assert_eq!(host.layers.borrow().get(), None, "stale before it was kept");

    let mut call = Screening::new(Asker::ByHand, &["search"]);
    host.screen(&mut call, None);
    let refused = host.screen(&mut call, Some(Input::Read(Err("quota".into()))));
    let Step::Done(Err(why)) = refused else {
        panic!("{refused:?}")
    };
    assert!(
        why.contains("quota") && why.contains("the call was not made"),
        "{why}"
    );
    assert_eq!(
        host.layers.borrow().get(),
        None,
        "a failed read is not kept"
    );
}

#[test]
fn a_block_refuses_by_either_name_and_a_delay_holds_the_call_first() {
    let host = Host::default();
    let stored = json!([{"kind": "block", "tool": "docs__search", "reason": "not today"},
                        {"kind": "delay", "ms": 250}]);
    let mut blocked = Screening::new(Asker::ByHand, &["search", "docs__search"]);
    host.screen(&mut blocked, None);
    let effect = host.screen(&mut blocked, layers(stored));
    assert!(
        matches!(&effect, Step::Done(Err(why)) if why == "blocked: not today"),
        "{effect:?}"
    );

    let mut held = Screening::new(Asker::Exposure, &["lookup"]);
    assert!(matches!(
        host.screen(&mut held, None),
        Step::Do(Output::Sleep { ms: 250 })
    ));
    let Step::Done(Ok(pass)) = host.screen(&mut held, Some(Input::Slept)) else {
        panic!("passed after the hold")
    };
    assert_eq!(pass.delay_ms(), 0, "held once");
    assert_eq!(pass.permit(()).asker(), Asker::Exposure);
}

#[test]
fn an_input_the_gate_did_not_ask_for_refuses_the_call() {
    let host = Host::default();
    let mut call = Screening::new(Asker::ByHand, &["search"]);
    let effect = host.screen(&mut call, Some(Input::Slept));
    let Step::Done(Err(why)) = effect else {
        panic!("{effect:?}")
    };
    assert!(why.starts_with("internal error: a wait came"), "{why}");
}
