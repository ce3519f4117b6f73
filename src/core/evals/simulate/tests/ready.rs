//! A simulation on a tab that is still loading: after the reload, before each agent turn and
//! before the DOM reads, the tab is listed through the host's listing (`core::host::listing`),
//! which waits until its page is ready; a page that never is ends the case as an error saying
//! what was seen. (The suite's start, which reads the tab's origin, finds the page ready.)

use serde_json::json;

use super::super::*;
use super::{judge_answer, listed, play, request, runs, world};
use crate::core::host::listing::{played, Listing};
use crate::core::host::Host;
use crate::core::page::ready::PAGE_READY_MS;
use crate::core::page::tabs::fixture::reloading;
use crate::core::page::tabs::FrameAnswer;

/// One case of two mugs, its tab reloaded first or not.
fn mugs(reload: bool) -> Simulate {
    let case = json!([{"name": "mugs", "userMessage": "Two mugs, please.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]}]);
    Simulate::new(request(case, json!({"reload": reload})), None, "s".into())
}

/// The shop as its top frame answers at its `n`th listing (from 1): not answering, then
/// parsing, then offering `add_to_cart`.
fn mid_load(n: usize) -> Vec<FrameAnswer> {
    reloading("https://shop.test/", n, &["add_to_cart"])
}

#[test]
fn a_tab_still_loading_after_the_reload_or_before_a_turn_is_listed_until_its_page_is_ready() {
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    for reload in [true, false] {
        let host = Host::default();
        let mut sim = mugs(reload);
        let (mut listings, mut now) = (0, 0.0);
        let mut scripted = world(&calls, "2", judge_answer(true, &[]));
        let mut started = false;
        let (answer, asked) = play(&mut sim, |next| match next {
            Next::Reload { .. } => Reply::Reloaded(Ok(())),
            Next::ListTools { .. } if !std::mem::replace(&mut started, true) => {
                listed(&["add_to_cart"])
            }
            Next::ListTools {
                tab_id,
                after_ms,
                settle,
            } => {
                let listing = Listing::kept(*tab_id, *settle).after(*after_ms);
                Reply::Listed(played(&host, listing, &mut now, || {
                    listings += 1;
                    mid_load(listings)
                }))
            }
            other => scripted(other),
        });
        let result = &answer["results"][0];
        assert_eq!(result["outcome"], "pass", "reload {reload}: {result:#}");
        assert_eq!(runs(&asked, Role::Agent).len(), 1);
        let settles: Vec<Settle> = (asked.iter())
            .filter_map(|n| match n {
                Next::ListTools { settle, .. } => Some(*settle),
                _ => None,
            })
            .collect();
        let (want, lists): (&[Settle], usize) = match reload {
            // The suite's start; after the reload: until ready and the same tools twice; then,
            // before the turn and before the DOM reads, the page as it is once loaded.
            true => (
                &[
                    Settle::Loaded,
                    Settle::AfterLoad,
                    Settle::Loaded,
                    Settle::Loaded,
                ],
                6,
            ),
            false => (&[Settle::Loaded, Settle::Loaded, Settle::Loaded], 4),
        };
        assert_eq!(
            (settles.as_slice(), listings),
            (want, lists),
            "reload {reload}"
        );
    }
}

#[test]
fn a_page_that_never_becomes_ready_fails_the_case_once_the_budget_is_spent_saying_what_it_saw() {
    for reload in [true, false] {
        let host = Host::default();
        let mut sim = mugs(reload);
        let mut now = 0.0;
        let mut scripted = world(&[], "2", judge_answer(true, &[]));
        let mut started = false;
        let (answer, asked) = play(&mut sim, |next| match next {
            Next::Reload { .. } => Reply::Reloaded(Ok(())),
            Next::ListTools { .. } if !std::mem::replace(&mut started, true) => {
                listed(&["add_to_cart"])
            }
            Next::ListTools { tab_id, settle, .. } => {
                let listing = Listing::kept(*tab_id, *settle);
                Reply::Listed(played(&host, listing, &mut now, || mid_load(2)))
            }
            other => scripted(other),
        });
        let result = &answer["results"][0];
        assert_eq!(result["outcome"], "error", "{result:#}");
        let error = result["error"].as_str().unwrap();
        assert!(
            error.contains(&format!("was not ready after {PAGE_READY_MS} ms"))
                && error.contains("still loading"),
            "{error}"
        );
        assert!(runs(&asked, Role::Agent).is_empty(), "no turn on no page");
    }
}
