//! The workbench's operations played through the host: the tools first seen kept across a
//! restart, an inventory, a diagnosis, a validation and a timeline.

use serde_json::json;

use super::*;
use crate::core::host::play::Play;

#[test]
fn the_tools_first_seen_are_stored_and_read_back_by_a_new_worker() {
    let mut play = Play::shop(&[]);
    let tools = play.list(Listing::kept(4, Settle::Now)).unwrap();
    let mut observe = Observe::new(4, tools.clone());
    play.drive(|host, input, now| host.observe(&mut observe, input, now));
    assert!(play.session.contains_key(SEEN));
    let stored = play.session[SEEN].clone();

    // Seen again: nothing new, nothing stored.
    play.session.remove(SEEN);
    let mut again = Observe::new(4, tools);
    play.drive(|host, input, now| host.observe(&mut again, input, now));
    assert!(!play.session.contains_key(SEEN));

    // A new worker's inventory reads them back.
    play.session.insert(SEEN.into(), stored);
    play.host = Host::default();
    let mut inventory = Inventory::new(None, false);
    let listed = play.drive(|host, input, now| host.inventory(&mut inventory, input, now));
    let listed = listed.unwrap();
    assert_eq!(listed["tabs"], 1);
    assert!(listed["total"].as_u64().unwrap() > 0, "{listed}");
    assert!(play.host.seen.borrow().is_some());
}

#[test]
fn an_inventory_forgets_the_closed_tabs_and_stores_that() {
    let mut play = Play::shop(&[]);
    let tool = json!({"origin": "https://old.test", "name": "t", "description": "d"});
    let closed = json!({"tabs": [{"tabId": 9, "tools": [tool]}]});
    play.host.seen.replace(Some(Seen::from_stored(&closed)));
    let mut inventory = Inventory::new(Some("nothing matches this".into()), false);
    let listed = play.drive(|host, input, now| host.inventory(&mut inventory, input, now));
    assert_eq!(listed.unwrap()["tools"], json!([]));
    assert_eq!(play.session[SEEN], json!({"tabs": []}));
}

#[test]
fn validate_checks_the_arguments_against_a_tabs_tool() {
    let mut play = Play::shop(&[]);
    let request = |against| ValidateRequest {
        args: json!({"id": 1}),
        against,
    };
    let mut given = Validate::new(request(Against::Schema(json!({"type": "object"}))));
    let valid = play.drive(|host, input, now| host.validate(&mut given, input, now));
    assert_eq!(valid.unwrap()["valid"], true);
    let tool = Against::Tool {
        tab_id: 4,
        name: "add_to_cart".into(),
        frame_id: None,
    };
    let mut of_tool = Validate::new(request(tool));
    let checked = play.drive(|host, input, now| host.validate(&mut of_tool, input, now));
    assert_eq!(checked.unwrap()["valid"], false);
    let gone = Against::Tool {
        tab_id: 9,
        name: "add_to_cart".into(),
        frame_id: None,
    };
    let mut of_gone = Validate::new(request(gone));
    let failed = play.drive(|host, input, now| host.validate(&mut of_gone, input, now));
    assert_eq!(failed, Err("No tab with id: 9.".into()));
}

#[test]
fn diagnose_lists_the_tab_reads_the_site_policies_and_asks_the_page() {
    let mut play = Play::shop(&[]);
    let mut diagnose = Diagnose::new(4);
    let diagnosis = play.drive(|host, input, now| host.diagnose(&mut diagnose, input, now));
    let diagnosis = diagnosis.unwrap();
    assert!(diagnosis.get("findings").is_some(), "{diagnosis}");
    let mut gone = Diagnose::new(9);
    let failed = play.drive(|host, input, now| host.diagnose(&mut gone, input, now));
    assert_eq!(failed, Err("No tab with id: 9.".into()));
}

#[test]
fn a_timeline_of_an_unknown_run_says_so() {
    let mut play = Play::shop(&[]);
    let mut timeline = Timeline::new("r9");
    let answer = play.drive(|host, input, now| host.timeline(&mut timeline, input, now));
    assert_eq!(answer, Err("runLog: no run `r9` is kept".into()));
}
