//! The listing machine: frames asked, the bridge injected once into an orphaned tab, the site
//! policies applied, the listing kept unless it went stale, and the waits for a ready page.

use super::*;
use crate::core::limits::{PAGE_READY_MS, PAGE_READY_POLL_MS};
use crate::core::page::tabs::fixture;

fn top(names: &[&str], loading: bool) -> FrameAnswer {
    fixture::top_frame("http://shop.test/", names, loading)
}

fn unreachable(message: &str) -> FrameAnswer {
    fixture::top_unreachable("http://shop.test/", message)
}

fn frames(answers: Vec<FrameAnswer>) -> Option<Input> {
    Some(Input::Listed {
        answers: Ok(answers),
        sites: Some(Ok(Vec::new())),
    })
}

fn names(listed: &Step<Listed>) -> Vec<String> {
    match listed {
        Step::Done(Ok(tools)) => tools.tools.iter().map(|t| t.name.clone()).collect(),
        other => panic!("not a listing: {other:?}"),
    }
}

#[test]
fn a_listing_asks_every_frame_and_the_site_policies_once_and_is_kept_for_the_calls() {
    let host = Host::default();
    let mut listing = Listing::kept(7, Settle::Now);
    assert_eq!(
        host.list(&mut listing, None, 0.0),
        Step::Do(Output::Frames(Frames::List {
            tab_id: 7,
            sites: true
        }))
    );
    let done = host.list(&mut listing, frames(vec![top(&["search"], false)]), 10.0);
    assert_eq!(names(&done), ["search"]);
    let kept = host
        .kept_listing(7, 20.0)
        .expect("kept for the calls that follow");
    let Step::Done(Ok(tools)) = done else {
        unreachable!()
    };
    assert!(Rc::ptr_eq(&kept, &tools), "shared, not copied");
}

#[test]
fn a_listing_that_went_stale_while_the_frames_answered_is_not_kept() {
    let host = Host::default();
    let mut listing = Listing::kept(7, Settle::Now);
    host.list(&mut listing, None, 0.0);
    // A tool change reported meanwhile.
    host.listings.borrow_mut().forget(7);
    let done = host.list(&mut listing, frames(vec![top(&["search"], false)]), 10.0);
    assert_eq!(names(&done), ["search"]);
    assert!(host.kept_listing(7, 20.0).is_none());
}

#[test]
fn an_orphaned_tab_gets_the_bridge_once_and_is_asked_again() {
    let host = Host::default();
    let orphan = || unreachable("Could not establish connection. Receiving end does not exist.");
    let mut listing = Listing::kept(3, Settle::Now);
    host.list(&mut listing, None, 0.0);
    assert_eq!(
        host.list(&mut listing, frames(vec![orphan()]), 1.0),
        Step::Do(Output::Frames(Frames::Inject { tab_id: 3 }))
    );
    assert_eq!(
        host.list(&mut listing, Some(Input::Done(Ok(()))), 2.0),
        Step::Do(Output::Frames(Frames::List {
            tab_id: 3,
            sites: true
        }))
    );
    // Still orphaned after the injection: no second one, the listing says so.
    let Step::Done(Ok(tools)) = host.list(&mut listing, frames(vec![orphan()]), 3.0) else {
        panic!("done")
    };
    assert!(
        tools.problems[0].message.contains("Receiving end"),
        "{tools:?}"
    );

    // An injection that failed: the first answers are the listing.
    let mut listing = Listing::kept(3, Settle::Now);
    host.list(&mut listing, None, 0.0);
    host.list(&mut listing, frames(vec![orphan()]), 1.0);
    let failed = Some(Input::Done(Err("Cannot access a chrome:// URL".into())));
    let Step::Done(Ok(tools)) = host.list(&mut listing, failed, 2.0) else {
        panic!("done")
    };
    assert!(
        tools.page.is_none() && tools.problems.len() == 1,
        "{tools:?}"
    );
}

#[test]
fn the_site_policies_are_applied_and_a_failed_read_offers_nothing() {
    let host = Host::default();
    let mut listing = Listing::kept(1, Settle::Now);
    host.list(&mut listing, None, 0.0);
    let policy: SitePolicy = serde_json::from_value(
        serde_json::json!({"origin": "http://shop.test", "filter": ["search"]}),
    )
    .unwrap();
    let input = Some(Input::Listed {
        answers: Ok(vec![top(&["search", "buy"], false)]),
        sites: Some(Ok(vec![policy])),
    });
    assert_eq!(names(&host.list(&mut listing, input, 1.0)), ["search"]);

    let mut listing = Listing::kept(1, Settle::Now);
    host.list(&mut listing, None, 0.0);
    let input = Some(Input::Listed {
        answers: Ok(vec![top(&["search"], false)]),
        sites: None,
    });
    let Step::Done(Ok(tools)) = host.list(&mut listing, input, 1.0) else {
        panic!("done")
    };
    assert!(tools.tools.is_empty(), "no policy known, no tool offered");
    assert!(
        tools.problems[0].message.contains("site policies"),
        "{tools:?}"
    );
}

#[test]
fn a_raw_listing_reads_no_policy_and_keeps_nothing() {
    let host = Host::default();
    let mut listing = Listing::raw(4);
    assert_eq!(
        host.list(&mut listing, None, 0.0),
        Step::Do(Output::Frames(Frames::List {
            tab_id: 4,
            sites: false
        }))
    );
    let input = Some(Input::Listed {
        answers: Ok(vec![top(&["search"], false)]),
        sites: None,
    });
    assert_eq!(names(&host.list(&mut listing, input, 1.0)), ["search"]);
    assert!(host.kept_listing(4, 2.0).is_none());
}

/// The race the wait exists for: right after a reload the old document is going, the new one
/// does not answer, then answers while parsing, then registers a tool at its load event.
#[test]
fn after_a_load_the_tab_is_listed_until_its_page_is_parsed_and_its_tools_hold_still() {
    let host = Host::default();
    let mut listing = Listing::kept(2, Settle::AfterLoad);
    let mut now = 0.0;
    let mut effect = host.list(&mut listing, None, now);
    let mut listings = 0;
    let mut shown = vec![
        vec![unreachable(
            "The message port closed before a response was received.",
        )],
        vec![top(&[], true)],
        vec![top(&["a"], false)],
        vec![top(&["a", "b"], false)],
        vec![top(&["a", "b"], false)],
    ]
    .into_iter();
    loop {
        let input = match effect {
            Step::Do(Output::Frames(Frames::List { tab_id: 2, .. })) => {
                listings += 1;
                frames(shown.next().expect("listed no more than the page changed"))
            }
            Step::Do(Output::Sleep { ms }) => {
                assert_eq!(ms, PAGE_READY_POLL_MS);
                now += f64::from(ms);
                Some(Input::Slept)
            }
            Step::Done(_) => break,
            other => panic!("unexpected {other:?}"),
        };
        effect = host.list(&mut listing, input, now);
    }
    assert_eq!(names(&effect), ["a", "b"]);
    assert_eq!(listings, 5);
}

#[test]
fn a_page_never_ready_fails_with_what_was_seen_and_a_closed_tab_fails_at_once() {
    let host = Host::default();
    let mut listing = Listing::kept(2, Settle::Loaded).after(250);
    assert_eq!(
        host.list(&mut listing, None, 0.0),
        Step::Do(Output::Sleep { ms: 250 })
    );
    let mut now = 250.0;
    let mut effect = host.list(&mut listing, Some(Input::Slept), now);
    while let Step::Do(Output::Frames(Frames::List { .. })) | Step::Do(Output::Sleep { .. }) =
        effect
    {
        let input = match effect {
            Step::Do(Output::Sleep { ms }) => {
                now += f64::from(ms);
                Some(Input::Slept)
            }
            _ => frames(vec![top(&[], true)]),
        };
        effect = host.list(&mut listing, input, now);
    }
    let Step::Done(Err(why)) = effect else {
        panic!("the budget is spent: {effect:?}")
    };
    assert!(why.contains(&format!("budget {PAGE_READY_MS} ms")), "{why}");
    assert!(why.contains("http://shop.test/ was still loading"), "{why}");
    assert!(now <= 250.0 + f64::from(PAGE_READY_MS), "within the budget");

    let mut listing = Listing::kept(2, Settle::Loaded);
    host.list(&mut listing, None, 0.0);
    let gone = Some(Input::Listed {
        answers: Err("No tab with id: 2.".into()),
        sites: None,
    });
    let Step::Done(Err(why)) = host.list(&mut listing, gone, 0.0) else {
        panic!("a closed tab is final")
    };
    assert!(why.starts_with("the tab is gone"), "{why}");
}

#[test]
fn an_input_the_listing_did_not_ask_for_ends_it_with_an_error() {
    let host = Host::default();
    let mut listing = Listing::kept(2, Settle::Now);
    let effect = host.list(&mut listing, Some(Input::Done(Ok(()))), 0.0);
    let Step::Done(Err(why)) = effect else {
        panic!("{effect:?}")
    };
    assert!(
        why.starts_with("internal error: an output's end came"),
        "{why}"
    );
}
