//! The front door: who may open what, and a page call opened whole in one step.

use serde_json::{json, Value};

use super::*;
use crate::core::host::io::{Mcp, Output, Step};
use crate::core::host::play::model::{last, Said};
use crate::core::host::play::Play;
use crate::core::page::call::CallAnswer;
use crate::core::page::call::CallRequest;

const OWN: &str = "abcdefghijklmnopabcdefghijklmnop";

fn popup() -> SenderInfo {
    SenderInfo {
        id: Some(OWN.into()),
        url: Some(format!("chrome-extension://{OWN}/popup/popup.html")),
        origin: Some(format!("chrome-extension://{OWN}")),
        tab_id: None,
        frame_id: None,
    }
}

fn page_script(frame_id: i64) -> SenderInfo {
    SenderInfo {
        id: Some(OWN.into()),
        url: Some("https://shop.test/".into()),
        origin: Some("https://shop.test".into()),
        tab_id: Some(4),
        frame_id: Some(frame_id),
    }
}

fn call_tool(qty: u64) -> Value {
    json!({"op": "callTool", "tabId": 4, "name": "add_to_cart", "args": {"id": "mug-1", "qty": qty}})
}

fn message(host: &Host, value: &Value, sender: &SenderInfo) -> Result<Opened, Closed> {
    let text = value.to_string();
    let arrival = Arrival::Message {
        text: &text,
        sender,
        own_id: OWN,
    };
    host.open(arrival, &fresh())
}

fn fresh() -> Fresh {
    Fresh {
        id: "1".into(),
        origin: format!("chrome-extension://{OWN}"),
    }
}

#[test]
fn a_page_may_not_call_a_tool_and_is_warned_of() {
    let host = Host::default();
    for frame in [0, 3] {
        let closed = message(&host, &call_tool(1), &page_script(frame)).unwrap_err();
        assert!(closed.error.starts_with("refused: "), "{closed:?}");
        assert!(closed.warning.is_some(), "{closed:?}");
    }
    // A message that cannot be read is an error, not a refusal.
    let closed = message(&host, &json!({"tabId": 4}), &popup()).unwrap_err();
    assert_eq!(closed.warning, None, "{closed:?}");
}

#[test]
fn an_mcp_call_opens_as_the_hosts_own_and_an_exposed_one_only_for_a_pages_top_frame() {
    let host = Host::default();
    let by_hand = json!({"op": "callTool", "server": "records", "name": "add", "args": {"a": 1}});
    let Ok(Opened::Server(call)) = message(&host, &by_hand, &popup()) else {
        panic!("not the host's call")
    };
    assert!(call.is_by_hand());

    let exposed = json!({"op": "callExposed", "name": "rec__add", "args": {"a": 1}});
    let Ok(Opened::Server(mut call)) = message(&host, &exposed, &page_script(0)) else {
        panic!("not the host's call")
    };
    assert!(!call.is_by_hand());
    // For the origin Chrome reported, whatever the message says.
    let effect = host.server_call(&mut call, None, 0.0);
    assert!(
        matches!(&effect, Step::Do(Output::Mcp(Mcp::Exposed { origin })) if origin == "https://shop.test"),
        "{effect:?}"
    );
    // Not from a subframe, the popup or the automation surface.
    for sender in [page_script(2), popup()] {
        assert!(message(&host, &exposed, &sender).is_err());
    }
    let request = json!({"name": "rec__add"});
    let automated = host.open(
        Arrival::Automation {
            op: "callExposed",
            request: &request,
        },
        &fresh(),
    );
    assert!(automated.is_err());
}

#[test]
fn the_popup_and_the_automation_surface_open_a_page_call_and_other_operations() {
    let host = Host::default();
    assert!(matches!(
        message(&host, &call_tool(1), &popup()),
        Ok(Opened::Machine(m)) if matches!(*m, Machine::Call(_))
    ));
    let listed = message(&host, &json!({"op": "listTools", "tabId": 4}), &popup());
    assert!(matches!(listed, Ok(Opened::Listing(_))), "{listed:?}");
    let audit = message(&host, &json!({"op": "audit", "tabId": 4}), &popup());
    let audit = matches!(&audit, Ok(Opened::Machine(m)) if matches!(**m, Machine::Audit(_)));
    assert!(audit, "an audit is the host's machine");
    let runs = message(&host, &json!({"op": "runs"}), &popup());
    let runs = matches!(&runs, Ok(Opened::Machine(m)) if matches!(**m, Machine::Runs(_)));
    assert!(runs, "the run list is the host's machine");
    let pending = message(&host, &json!({"op": "pending"}), &popup());
    let Ok(Opened::Op { op, sender }) = pending else {
        panic!("not an operation: {pending:?}");
    };
    assert!(matches!(*op, Op::Pending), "{op:?}");
    assert_eq!(sender, Some(Sender::ExtensionPage));
    let request = call_tool(1);
    let automated = host.open(
        Arrival::Automation {
            op: "callTool",
            request: &request,
        },
        &fresh(),
    );
    let automated = matches!(automated, Ok(Opened::Machine(m)) if matches!(*m, Machine::Call(_)));
    assert!(automated, "callTool is the host's page call");
    let unknown = host.open(
        Arrival::Automation {
            op: "nope",
            request: &request,
        },
        &fresh(),
    );
    assert!(unknown.is_err());
}

/// How often a page call crosses from a shell into the core, whole: each call of a core
/// function or method that the shell makes for it (its arrival read, each of its steps fed and
/// the next one taken, its answer written), counted by the play harness, which performs every
/// step as the shell does: on a cold host (a worker's first call: the stored layers to read,
/// the tab to list) and on a warm one (both kept).
#[test]
fn a_page_call_crosses_into_the_core_at_most_six_times_from_every_caller() {
    let mut play = Play::shop(&["agent"]);
    play.models.serve(
        "agent-1",
        Box::new(|request| match last(request)["role"].as_str() {
            Some("tool") => Said::Text("Done.".into()),
            _ => Said::Call("add_to_cart".into(), json!({"id": "mug-1", "qty": 1})),
        }),
    );
    // From the popup (a runtime message) and from `webmcpHost.callTool`.
    let by_hand = |play: &mut Play, arrival: Arrival| {
        let before = play.crossings;
        let Ok(Opened::Machine(mut machine)) = play.host.open(arrival, &fresh()) else {
            panic!("not a page call");
        };
        let answer = play.drive(|host, input, now| host.step(&mut machine, input, now));
        // Opened (1), the steps (counted by the driver), its answer written by the last.
        (answer, play.crossings - before + 1)
    };
    let (text, sender) = (call_tool(1).to_string(), popup());
    let popup = || Arrival::Message {
        text: &text,
        sender: &sender,
        own_id: OWN,
    };
    let (answer, cold) = by_hand(&mut play, popup());
    assert_eq!(answer, Ok(CallAnswer::text(r#"{"cart":1}"#).to_json()));
    let (_, from_popup) = by_hand(&mut play, popup());
    let request = call_tool(1);
    let automated = Arrival::Automation {
        op: "callTool",
        request: &request,
    };
    let (_, from_call_tool) = by_hand(&mut play, automated);
    // From a run: its page call is the host's child; per step, the shell takes it and feeds
    // its outcome back.
    let before = play.call_crossings.len();
    let run = json!({"tabId": 4, "model": "agent",
        "messages": [{"id": "u", "role": "user", "content": "One mug."}]});
    play.run(&run).expect("the run starts");
    let from_run = play.call_crossings[before..].to_vec();
    // From a smoke evaluation: the suite drives the call inside the host as its child, so
    // the call's crossings are the steps of the suite it takes (counted by the driver).
    let before = play.crossings;
    let args = json!({"id": "mug-1", "qty": 1})
        .as_object()
        .cloned()
        .unwrap();
    play.asked(
        Asker::Smoke,
        CallRequest::asked(4, "add_to_cart".into(), args, 5_000),
    );
    let from_eval = play.crossings - before;
    assert_eq!(play.pages[&4].cart, 5, "every call ran");
    // Cold, a worker's first call: the stored layers read and the tab listed first (the
    // listing's step inside the call), one crossing each.
    let counts = [cold, from_popup, from_call_tool, from_eval];
    println!(
        "crossings of a page call: cold {cold}, popup {from_popup}, callTool {from_call_tool}, \
         eval {from_eval}, run {from_run:?}"
    );
    assert!(
        counts.iter().chain(&from_run).all(|n| *n <= 6),
        "{counts:?} {from_run:?}"
    );
    assert_eq!(from_run.len(), 1);
    assert!(cold > from_popup, "the cold call read and listed: {cold}");
}

/// What `value` from `sender` opens, driven through the host to its answer.
fn answered(play: &mut Play, value: &Value, sender: &SenderInfo) -> Result<Value, String> {
    match message(&play.host, value, sender) {
        Ok(Opened::Machine(mut machine)) => {
            play.drive(|host, input, now| host.step(&mut machine, input, now))
        }
        Ok(other) => panic!("not a machine: {other:?}"),
        Err(closed) => Err(closed.error),
    }
}

#[test]
fn the_checks_exposures_sign_ins_and_the_rest_open_as_machines_of_the_host() {
    let host = Host::default();
    let ops = [
        json!({"op": "version"}),
        json!({"op": "testModel", "name": "a"}),
        json!({"op": "checkServer", "name": "a"}),
        json!({"op": "listTools", "server": "a"}),
        json!({"op": "toEval", "runId": "r1"}),
        json!({"op": "evalReport", "report": {"results": []}}),
        json!({"op": "exposures"}),
        json!({"op": "signIn", "server": "a"}),
        json!({"op": "signOut", "server": "a"}),
        json!({"op": "authState"}),
    ];
    for op in ops {
        let opened = message(&host, &op, &popup());
        assert!(matches!(opened, Ok(Opened::Machine(_))), "{op}: {opened:?}");
    }
    // A page's content script asks for its exposed tools; the popup has none.
    let exposed = json!({"op": "exposedTools"});
    let page = message(&host, &exposed, &page_script(0));
    assert!(
        matches!(&page, Ok(Opened::Machine(m)) if matches!(**m, Machine::ExposedTools(_))),
        "{page:?}"
    );
    let mut play = Play::shop(&[]);
    assert_eq!(
        answered(&mut play, &exposed, &popup()),
        Err(NOT_A_PAGE.into())
    );
    // The answers: the version, and a page with nothing exposed to it.
    let version = answered(&mut play, &json!({"op": "version"}), &popup());
    assert_eq!(version, Ok(json!(crate::VERSION)));
    let tools = answered(&mut play, &exposed, &page_script(0));
    assert_eq!(tools, Ok(json!([])));
    // What still holds browser state is the router's.
    let pending = message(&host, &json!({"op": "pending"}), &popup());
    assert!(matches!(pending, Ok(Opened::Op { .. })), "{pending:?}");
}
