//! The host's page call: the gate, the kept listing and the page call machine, one effect at
//! a time, counted as the shell would cross into the core.

use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::*;
use crate::core::host::io::Storage;
use crate::core::page::call::FrameState;
use crate::core::page::tabs::{fixture, TabTools};
use crate::core::page::tool::PageTool;
use crate::core::setup::store::{Area, MIDDLEWARE_KEY};

fn listing(names: &[&str]) -> Rc<TabTools> {
    let tools: Vec<PageTool> = names.iter().map(|n| PageTool::sample(n, false)).collect();
    Rc::new(TabTools {
        documents: [(0, "d1".into())].into_iter().collect(),
        versions: tools
            .iter()
            .map(|t| ((t.frame_id, t.name.clone()), 1))
            .collect(),
        tools,
        problems: Vec::new(),
        ..TabTools::default()
    })
}

fn request(name: &str) -> CallRequest {
    CallRequest {
        tab_id: 7,
        name: name.into(),
        args: Map::new(),
        frame_id: None,
        timeout_ms: 30_000,
        call: None,
        expect: None,
    }
}

fn layers(value: Value) -> Option<Input> {
    Some(Input::Read(Ok(Some(value))))
}

/// The output that reads the person's stored layers.
fn read_layers() -> Step<CallAnswer> {
    Step::Do(Output::Storage(Storage::Read {
        area: Area::Local,
        key: MIDDLEWARE_KEY.into(),
    }))
}

const NOW: f64 = 1_000.0;
const ANSWER: &str = r#"{"ok":true,"result":"3 mugs"}"#;

/// Runs a call to its answer, answering each effect as a browser would, and counts the
/// crossings into the core (`advance` calls). The page's spy: every message sent.
fn run(host: &Host, mut call: HostCall, stored: Value) -> (Value, usize, Vec<Value>) {
    let mut crossings = 1;
    let mut effect = host.advance(&mut call, None, NOW);
    let mut sent = Vec::new();
    loop {
        let outcome = match effect {
            Step::Done(answer) => return (answer.to_json(), crossings, sent),
            Step::Do(Output::Storage(Storage::Read { .. })) => {
                Input::Read(Ok(Some(stored.clone())))
            }
            Step::Do(Output::Sleep { .. }) => Input::Slept,
            // The tab's top frame, document `d1`, offers `search` and `buy`.
            Step::Do(Output::Frames(Frames::List { .. })) => {
                let mut frame = fixture::top_frame("https://shop.test/", &["search", "buy"], false);
                if let Ok(listing) = &mut frame.answer {
                    listing.document_id = Some("d1".into());
                }
                Input::Listed {
                    answers: Ok(vec![frame]),
                    sites: Some(Ok(Vec::new())),
                }
            }
            Step::Do(Output::Frames(Frames::Send {
                message, list_tabs, ..
            })) => {
                sent.push(message);
                Input::Sent {
                    tabs: list_tabs.then(Vec::new),
                    reply: Reply::Answered(Ok(ANSWER.into())),
                }
            }
            Step::Do(Output::Frames(Frames::State { .. })) => Input::Frame(Some(FrameState {
                url: "https://shop.test/".into(),
                document_id: Some("d1".into()),
            })),
            Step::Do(Output::Tabs(Tabs::List)) => Input::Tabs(Vec::new()),
            Step::Do(other) => panic!("not expected here: {other:?}"),
        };
        crossings += 1;
        effect = host.advance(&mut call, Some(outcome), NOW);
    }
}

#[test]
fn a_first_call_on_a_kept_listing_crosses_three_times() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    let (answer, crossings, sent) = run(&host, call, Value::Null);
    assert_eq!(answer["ok"], json!(true), "{answer}");
    assert_eq!(answer["result"], json!("3 mugs"));
    assert_eq!(sent.len(), 1);
    assert_eq!(crossings, 3, "the layers, the message and its reply");
}

#[test]
fn a_call_on_a_tab_listed_fresh_keeps_its_listing_for_the_next() {
    let host = Host::default();
    let call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    let (answer, crossings, _) = run(&host, call, Value::Null);
    assert_eq!(answer["ok"], json!(true), "{answer}");
    assert_eq!(
        crossings, 4,
        "the layers, the listing, the message and its reply"
    );
    assert!(host.kept_listing(7, NOW).is_some());
    let next = HostCall::asked(Asker::Smoke, request("buy"), "c2".into());
    assert_eq!(
        run(&host, next, Value::Null).1,
        2,
        "the layers and the listing are known: the message and its reply"
    );
}

#[test]
fn the_stored_layers_are_read_once_and_again_after_every_change() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let ask = || HostCall::asked(Asker::CallTool, request("search"), "c".into());
    assert_eq!(run(&host, ask(), Value::Null).1, 3, "read the first time");
    let block = json!([{"kind": "block", "tool": "search", "reason": "changed"}]);
    let (answer, crossings, sent) = run(&host, ask(), block.clone());
    assert_eq!(crossings, 2, "kept: not read again");
    assert_eq!(answer["ok"], json!(true), "what was kept holds: {answer}");
    assert_eq!(sent.len(), 1);
    host.layers.borrow_mut().forget();
    let (answer, crossings, sent) = run(&host, ask(), block.clone());
    assert_eq!(answer["error"], json!("blocked: changed"), "{answer}");
    assert_eq!(crossings, 2, "read again, refused at once");
    assert!(sent.is_empty());
    let (answer, crossings, _) = run(&host, ask(), Value::Null);
    assert_eq!(crossings, 1, "the block is kept: refused without a read");
    assert_eq!(answer["error"], json!("blocked: changed"));
}

#[test]
fn a_read_that_raced_a_change_is_used_once_and_not_kept() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let mut call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    assert_eq!(host.advance(&mut call, None, NOW), read_layers());
    host.layers.borrow_mut().forget();
    let effect = host.advance(&mut call, layers(Value::Null), NOW);
    assert!(
        matches!(effect, Step::Do(Output::Frames(Frames::Send { .. }))),
        "{effect:?}"
    );
    assert_eq!(
        host.layers.borrow().get(),
        None,
        "the older read is not kept"
    );
    let mut next = HostCall::asked(Asker::CallTool, request("search"), "c2".into());
    assert_eq!(host.advance(&mut next, None, NOW), read_layers());
}

#[test]
fn a_failed_read_is_not_kept() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let mut call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    host.advance(&mut call, None, NOW);
    host.advance(&mut call, Some(Input::Read(Err("quota".into()))), NOW);
    let mut next = HostCall::asked(Asker::CallTool, request("search"), "c2".into());
    assert_eq!(host.advance(&mut next, None, NOW), read_layers());
}

#[test]
fn a_stored_block_layer_refuses_every_asker_before_the_page() {
    let block = json!([{"kind": "block", "tool": "search", "reason": "not today"}]);
    for asker in [
        Asker::CallTool,
        Asker::Smoke,
        Asker::Replay,
        Asker::Simulate,
        Asker::Probe,
    ] {
        let host = Host::default();
        host.keep_listing(7, NOW, listing(&["search"]), 0);
        let call = HostCall::asked(asker, request("search"), "c1".into());
        let (answer, _, sent) = run(&host, call, block.clone());
        assert_eq!(
            answer,
            json!({"ok": false, "error": "blocked: not today"}),
            "{asker:?}"
        );
        assert!(sent.is_empty(), "{asker:?}: nothing reached the page");
    }
}

#[test]
fn stored_layers_that_cannot_be_read_refuse_the_call() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let mut call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    assert_eq!(host.advance(&mut call, None, NOW), read_layers());
    let effect = host.advance(&mut call, Some(Input::Read(Err("quota".into()))), NOW);
    let Step::Done(answer) = effect else {
        panic!("refused: {effect:?}")
    };
    let answer = answer.to_json();
    assert_eq!(answer["ok"], json!(false));
    assert!(
        answer["error"].as_str().unwrap().contains("quota"),
        "{answer}"
    );
}

#[test]
fn a_delay_layer_holds_the_call_once() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let mut call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    host.advance(&mut call, None, NOW);
    let delay = json!([{"kind": "delay", "ms": 250}]);
    assert_eq!(
        host.advance(&mut call, layers(delay), NOW),
        Step::Do(Output::Sleep { ms: 250 })
    );
    let effect = host.advance(&mut call, Some(Input::Slept), NOW);
    assert!(
        matches!(effect, Step::Do(Output::Frames(Frames::Send { .. }))),
        "{effect:?}"
    );
}

#[test]
fn a_run_call_comes_with_its_permit_and_reads_no_layers() {
    let host = Host::default();
    host.keep_listing(7, NOW, listing(&["search"]), 0);
    let pass = crate::core::gate::screen(&[], Asker::Run, &["search"], 1).expect("no layers");
    let call = HostCall::permitted(pass.permit(request("search")), "run-1-c1".into());
    let (answer, crossings, sent) = run(&host, call, json!("never read"));
    assert_eq!(answer["ok"], json!(true), "{answer}");
    assert_eq!(crossings, 2, "the message and its reply");
    assert_eq!(sent[0]["call"], json!("run-1-c1"));
}

#[test]
fn an_outcome_the_call_did_not_ask_for_ends_it_plainly() {
    let host = Host::default();
    let mut call = HostCall::asked(Asker::CallTool, request("search"), "c1".into());
    assert_eq!(host.advance(&mut call, None, NOW), read_layers());
    let effect = host.advance(&mut call, Some(Input::Slept), NOW);
    let Step::Done(answer) = effect else {
        panic!("ended: {effect:?}")
    };
    let answer = answer.to_json();
    assert!(
        answer["error"].as_str().unwrap().contains("internal error"),
        "{answer}"
    );
    let again = host.advance(&mut call, None, NOW);
    assert!(
        matches!(again, Step::Done(_)),
        "an ended call stays ended: {again:?}"
    );
}
