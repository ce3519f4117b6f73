//! A bug report played through the host.

use serde_json::json;

use super::*;
use crate::core::host::play::Play;

#[test]
fn a_runs_report_has_its_log_tools_audit_and_screenshot_while_its_page_is_shown() {
    let mut play = Play::shop(&[]);
    let page = play.list(Listing::kept(4, Settle::Now)).unwrap();
    let url = play.pages[&4].url.clone();
    let document = page.documents.get(&0).cloned();
    let mut runs = play.host.runs.borrow_mut();
    runs.on_start("r1", "t1", Some(4), &json!({"prompt": "Buy a mug"}), 0.0);
    runs.on_page("r1", json!({"url": url, "documentId": document}));
    drop(runs);
    let mut report = BugReport::new("r1", "chrome-extension://abc", "call_b".into());
    let answer = play.drive(|host, input, now| host.bug_report(&mut report, input, now));
    let answer = answer.unwrap();
    assert_eq!(answer["fileName"], file_name("r1"));
    let text = answer["report"].to_string();
    assert!(text.contains("data:image/png"), "the screenshot: {text}");
    assert!(text.contains("add_to_cart"), "the tools: {text}");

    let mut unknown = BugReport::new("r2", "chrome-extension://abc", "call_c".into());
    let answer = play.drive(|host, input, now| host.bug_report(&mut unknown, input, now));
    assert_eq!(answer, Err("runLog: no run `r2` is kept".into()));
}
