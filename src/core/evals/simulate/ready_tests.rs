//! A simulation on a tab that is still loading: after the reload, and before an agent turn,
//! the tab is listed again until its page is ready, and a page that never is ends the case as
//! an error saying what was seen.

use serde_json::json;

use super::tests::{judge_answer, listed, play, request, runs, world};
use super::*;
use crate::core::page::ready::PAGE_READY_MS;

/// A listing taken while the tab loads: the old document gone and the new one not answering
/// yet (`0`), or the new one still parsing (`1`).
fn mid_load(kind: u8) -> Reply {
    Reply::Listed(Ok(match kind {
        0 => {
            json!({"tools": [], "problems": [{"frameId": 0, "message": "no answer: the message port closed before a response was received"}]})
        }
        _ => {
            json!({"tools": [], "page": {"url": "https://shop.test/", "origin": "https://shop.test", "title": "", "loading": true}})
        }
    }))
}

/// One case of two mugs, its tab reloaded first or not.
fn mugs(reload: bool) -> Simulate {
    let case = json!([{"name": "mugs", "userMessage": "Two mugs, please.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]}]);
    Simulate::new(request(case, json!({"reload": reload})), None, "s".into())
}

#[test]
fn a_tab_still_loading_after_the_reload_or_before_a_turn_is_listed_again_until_its_page_is_ready() {
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    for reload in [true, false] {
        let mut sim = mugs(reload);
        let mut listings = 0;
        let mut scripted = world(&calls, "2", judge_answer(true, &[]));
        let (answer, asked) = play(&mut sim, |next| match next {
            Next::Reload { .. } => Reply::Reloaded(Ok(())),
            Next::ListTools { .. } => {
                listings += 1;
                match listings {
                    1 => mid_load(0),
                    2 => mid_load(1),
                    _ => listed(&["add_to_cart"]),
                }
            }
            other => scripted(other),
        });
        let result = &answer["results"][0];
        assert_eq!(result["outcome"], "pass", "reload {reload}: {result:#}");
        assert_eq!(runs(&asked, Role::Agent).len(), 1);
        // Listed again after a pause, never at once.
        let pauses: Vec<u32> = (asked.iter())
            .filter_map(|n| match n {
                Next::ListTools { after_ms, .. } => Some(*after_ms),
                _ => None,
            })
            .collect();
        let want: &[u32] = match reload {
            // After the reload: until ready and the same tools twice, then before the turn.
            true => &[0, 100, 100, 100, 0],
            false => &[0, 100, 100],
        };
        assert_eq!(pauses, want, "reload {reload}");
    }
}

#[test]
fn a_page_that_never_becomes_ready_fails_the_case_once_the_budget_is_spent_saying_what_it_saw() {
    for reload in [true, false] {
        let mut sim = mugs(reload);
        let mut scripted = world(&[], "2", judge_answer(true, &[]));
        let (answer, asked) = play(&mut sim, |next| match next {
            Next::Reload { .. } => Reply::Reloaded(Ok(())),
            Next::ListTools { .. } => mid_load(1),
            other => scripted(other),
        });
        let result = &answer["results"][0];
        assert_eq!(result["outcome"], "error", "{result:#}");
        let error = result["error"].as_str().unwrap();
        assert!(
            error.contains("was not ready after") && error.contains("still loading"),
            "{error}"
        );
        assert!(runs(&asked, Role::Agent).is_empty(), "no turn on no page");
        // One listing a second of the test's clock, until the 10 s budget is spent.
        let listings = asked
            .iter()
            .filter(|n| matches!(n, Next::ListTools { .. }))
            .count();
        assert_eq!(
            listings as u32,
            PAGE_READY_MS / 1_000 + 1,
            "reload {reload}"
        );
    }
}
