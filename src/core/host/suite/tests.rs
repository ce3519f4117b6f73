//! The suites played through the host ([`Play::drive`]): a smoke evaluation whose cases each
//! start on the page loaded afresh, a simulation's run stopped at its deadline by the shell,
//! a replay diff of a kept run and of a transcript.

use serde_json::{json, Value};

use super::*;
use crate::core::evals::plan::EvaluateRequest;
use crate::core::host::io::{Frames, Runs, Storage, Tabs};
use crate::core::host::play::Play;
use crate::core::ops::ReplaySource;
use crate::core::page::call::FrameState;
use crate::core::setup::store::{MIDDLEWARE_KEY, REGISTRY_KEY};

/// An output in a few words, for the order of what a suite asks.
pub(crate) fn label(output: &Output) -> String {
    match output {
        Output::Storage(Storage::Read { key, .. }) => format!("read {key}"),
        Output::Storage(Storage::Write { key, value, .. }) => match value {
            Some(_) => format!("write {key}"),
            None => format!("remove {key}"),
        },
        Output::Storage(Storage::Keys { .. }) => "keys".into(),
        Output::Frames(Frames::State { .. }) => "page".into(),
        Output::Frames(Frames::List { .. }) => "list".into(),
        Output::Frames(Frames::Send { .. }) => "send".into(),
        Output::Frames(Frames::Ask { .. }) => "ask".into(),
        Output::Tabs(Tabs::Reload { url, .. }) => format!("reload {url}"),
        Output::Tabs(Tabs::Load { url, .. }) => format!("load {url}"),
        Output::Ui(Ui::Push { kind, .. }) => format!("push {kind}"),
        Output::Runs(Runs::Start { .. }) => "run".into(),
        Output::Runs(Runs::Log { .. }) => "log".into(),
        other => format!("{other:?}"),
    }
}

/// Two smoke cases that each add two mugs and expect the cart to hold two.
fn two_mugs_twice(reload: bool) -> EvaluateRequest {
    let case = |name: &str| {
        json!({"name": name, "messages": [{"role": "user", "type": "message", "content": "Two mugs."}],
            "expectedCall": [{"functionName": "add_to_cart", "arguments": {"id": "mug-1", "qty": 2},
                "result": {"cart": 2}}]})
    };
    let request = json!({"tabId": 4, "mode": "smoke", "reload": reload,
        "evals": [case("first"), case("second")]});
    EvaluateRequest::parse(&request).expect("a request")
}

/// Plays an evaluation; its answer and what it asked for, in order.
fn evaluate(play: &mut Play, request: EvaluateRequest) -> (Value, Vec<String>) {
    let mut e = Evaluating::new(request, "eval_test".into(), "call_t".into());
    let mut asked = Vec::new();
    let answer = play.drive(|host, input, now| {
        let step = host.evaluate(&mut e, input, now);
        if let Step::Do(output) = &step {
            asked.push(label(output));
        }
        step
    });
    (answer.expect("an answer"), asked)
}

fn outcomes(answer: &Value) -> Vec<&str> {
    let results = answer["results"].as_array().expect("results");
    results
        .iter()
        .map(|r| r["outcome"].as_str().unwrap_or("?"))
        .collect()
}

#[test]
fn a_smoke_evaluation_starts_each_case_on_its_first_page_loaded_again() {
    let mut play = Play::shop(&["agent"]);
    play.loading = (0, 0);
    let (answer, asked) = evaluate(&mut play, two_mugs_twice(true));
    assert_eq!(outcomes(&answer), ["pass", "pass"], "{answer:#}");
    // The registry read (no model named), the page read, then per case the page loaded
    // again and (listed until ready) the call sent, the first after the layers were read.
    let asked: Vec<&str> = (asked.iter().map(String::as_str))
        .filter(|a| *a != "list" && !a.starts_with("Sleep"))
        .collect();
    let reload = "reload https://shop.test/";
    let (registry, layers) = (
        format!("read {REGISTRY_KEY}"),
        format!("read {MIDDLEWARE_KEY}"),
    );
    let expected = [&registry, "page", reload, &layers, "send", reload, "send"];
    assert_eq!(asked, expected);
    assert_eq!(play.pages[&4].loads, 3);
    assert_eq!(play.pages[&4].cart, 2);
}

#[test]
fn without_reload_the_second_case_finds_what_the_first_left() {
    let mut play = Play::shop(&["agent"]);
    let (answer, asked) = evaluate(&mut play, two_mugs_twice(false));
    assert_eq!(outcomes(&answer), ["pass", "fail"], "{answer:#}");
    assert!(!asked.iter().any(|a| a.starts_with("reload") || a == "page"));
    assert_eq!(play.pages[&4].cart, 4);
    // The case that failed on its call's result is pushed as it is judged.
    let pushed = json!({"done": 2, "total": 2, "result": answer["results"][1]});
    assert_eq!(play.pushes, [("evalProgress".to_owned(), pushed)]);
    assert_eq!(
        asked.iter().filter(|a| *a == "push evalProgress").count(),
        1
    );
}

#[test]
fn a_suite_whose_page_cannot_be_read_or_whose_registry_is_unreadable_runs_nothing() {
    let mut play = Play::shop(&["agent"]);
    play.pages.clear();
    let mut e = Evaluating::new(two_mugs_twice(true), "eval_test".into(), "call_t".into());
    let answer = play.drive(|host, input, now| host.evaluate(&mut e, input, now));
    assert_eq!(
        answer,
        Err(FrameState::page_url("evaluate", 4, None).unwrap_err())
    );
    let mut play = Play::shop(&["agent"]);
    play.instead = Some(Box::new(|output| match output {
        Output::Storage(Storage::Read { key, .. }) if key == REGISTRY_KEY => {
            Some(Input::Read(Err("storage is gone".into())))
        }
        _ => None,
    }));
    let mut e = Evaluating::new(two_mugs_twice(true), "eval_test".into(), "call_t".into());
    let answer = play.drive(|host, input, now| host.evaluate(&mut e, input, now));
    assert_eq!(answer, Err("storage is gone".into()));
    assert!(play.pages[&4].ran.is_empty());
}

#[test]
fn an_input_a_suite_did_not_ask_for_ends_it_as_an_internal_error() {
    let host = Host::default();
    let mut e = Evaluating::new(two_mugs_twice(false), "eval_test".into(), "call_t".into());
    let Step::Do(Output::Storage(Storage::Read { .. })) = host.evaluate(&mut e, None, 0.0) else {
        panic!("the registry is read first");
    };
    let answer = host.evaluate(&mut e, Some(Input::Pushed), 0.0);
    assert_eq!(
        answer,
        Step::Done(Err(
            "internal error: a push came where the evaluation did not ask for it".into()
        ))
    );
}

#[test]
fn a_replay_diff_reads_the_runs_log_or_says_why_it_cannot() {
    let mut play = Play::shop(&["agent"]);
    let source = ReplaySource::Run("run_gone".into());
    let mut r = Replaying::new(4, source, "call_t".into());
    let answer = play.drive(|host, input, now| host.replay_diff(&mut r, input, now));
    assert_eq!(answer, Err("runLog: no run `run_gone` is kept".into()));
    // A transcript's calls played on the page now, through the gate.
    let transcript = "{\"calls\": [{\"name\": \"add_to_cart\", \"arguments\": {\"id\": \"mug-1\", \"qty\": 1}}]}\n{\"text\": \"done\"}\n";
    let source = ReplaySource::Transcript(transcript.into());
    let mut r = Replaying::new(4, source, "call_t".into());
    let diff = play.drive(|host, input, now| host.replay_diff(&mut r, input, now));
    let diff = diff.expect("a diff");
    assert_eq!(
        diff["calls"][0]["now"],
        json!({"result": {"cart": 1}}),
        "{diff:#}"
    );
    assert_eq!(play.pages[&4].cart, 1);
    // A transcript that is not one is refused before anything is asked.
    let source = ReplaySource::Transcript("not json".into());
    let mut r = Replaying::new(4, source, "call_t".into());
    let answer = Host::default().replay_diff(&mut r, None, 0.0);
    let Step::Done(Err(error)) = answer else {
        panic!("refused: {answer:?}");
    };
    assert!(
        error.starts_with("replayDiff: transcript line 1"),
        "{error}"
    );
}
