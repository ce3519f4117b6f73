//! Crawls played through the host ([`Play::drive`]): one stopped midway by the person, one
//! refused while the tab is being crawled, the kept crawls within their budget, a crawl whose
//! keeping failed.

use serde_json::{json, Value};

use super::*;
use crate::core::crawl::kept_key;
use crate::core::host::play::Play;
use crate::core::host::suite::tests::label;

const SHOP: &str = "https://shop.test";

/// The shop's tab with a sitemap of `paths`, each page parsed at once.
fn shop(paths: &[&str]) -> Play {
    let mut play = Play::shop(&["agent"]);
    play.loading = (0, 0);
    let sitemap = (paths.iter())
        .map(|path| format!("<url><loc>{SHOP}{path}</loc></url>"))
        .collect::<String>();
    play.pages.get_mut(&4).unwrap().sitemap = format!("<urlset>{sitemap}</urlset>");
    play
}

fn request(value: Value) -> CrawlRequest {
    CrawlRequest::parse(&value).expect("a request")
}

fn sitemap() -> CrawlRequest {
    request(json!({"tabId": 4, "sitemap": "/sitemap.xml"}))
}

fn stop() -> Crawling {
    Crawling::new(request(json!({"tabId": 4, "stop": true})))
}

#[test]
fn a_crawl_stopped_midway_ends_with_the_pages_it_has_and_keeps_them() {
    let mut play = shop(&["/", "/mugs", "/about"]);
    let mut crawl = Crawling::new(sitemap());
    let mut asked = Vec::new();
    let answer = play.drive(|host, input, now| {
        let step = host.crawl(&mut crawl, input, now);
        if let Step::Do(output) = &step {
            // Once the first page is pushed, the person stops the crawl.
            if label(output) == "push crawlProgress" {
                let stopped = host.crawl(&mut stop(), None, now);
                assert_eq!(stopped, Step::Done(Ok(json!(true))));
            }
            asked.push(label(output));
        }
        step
    });
    let answer = answer.expect("a crawl");
    let pages = answer["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), 1, "{answer:#}");
    let skipped: Vec<(&str, &str)> = (answer["skipped"].as_array().unwrap().iter())
        .map(|s| (s["url"].as_str().unwrap(), s["why"].as_str().unwrap()))
        .collect();
    let why = "the crawl was stopped";
    assert_eq!(
        skipped,
        [
            (&*format!("{SHOP}/mugs"), why),
            (&*format!("{SHOP}/about"), why)
        ]
    );
    // The tab went back to its page, what the crawl saw is kept, and the tab is free again.
    let loads: Vec<&str> = (asked.iter().map(String::as_str))
        .filter(|a| a.starts_with("load"))
        .collect();
    assert_eq!(
        loads,
        [&*format!("load {SHOP}/"), &*format!("load {SHOP}/")]
    );
    assert!(play.local.contains_key(&kept_key(SHOP)));
    assert!(play.host.crawls.borrow().is_empty());
    let none = play.drive(|host, input, now| host.crawl(&mut stop(), input, now));
    assert_eq!(none, Ok(json!(false)));
}

#[test]
fn a_second_crawl_of_a_tab_being_crawled_is_refused_and_the_first_goes_on() {
    let mut play = shop(&["/", "/mugs"]);
    let mut crawl = Crawling::new(sitemap());
    let mut refused = None;
    let answer = play.drive(|host, input, now| {
        let step = host.crawl(&mut crawl, input, now);
        if refused.is_none() {
            let mut again = Crawling::new(sitemap());
            refused = Some(host.crawl(&mut again, None, now));
        }
        step
    });
    let error =
        "crawl: tab 4 is being crawled already (stop it with crawl({tabId: 4, stop: true}))";
    assert_eq!(refused, Some(Step::Done(Err(error.into()))));
    let answer = answer.expect("the first crawl");
    assert_eq!(
        answer["pages"].as_array().map(Vec::len),
        Some(2),
        "{answer:#}"
    );
    // Once it ended, the tab can be crawled again.
    let again = play.crawl(sitemap());
    assert!(again.is_ok(), "{again:?}");
}

#[test]
fn a_crawl_that_cannot_start_leaves_the_tab_free() {
    let mut play = shop(&["/"]);
    play.pages.get_mut(&4).unwrap().url = "about:blank".into();
    let answer = play.crawl(sitemap());
    assert_eq!(
        answer,
        Err("crawl: the tab shows no http(s) page to crawl from".into())
    );
    assert!(play.host.crawls.borrow().is_empty());
}

#[test]
fn the_kept_crawls_stay_within_their_budget_and_a_failed_keeping_is_said_and_undone() {
    let mut play = shop(&["/", "/mugs"]);
    // Another origin's crawl kept before, in the index.
    let other = "https://other.test";
    // And one of an earlier version, which the index does not weigh: forgotten.
    let old = "https://old.test";
    let index = json!([{"origin": other, "bytes": 100}, old]);
    play.local
        .insert(crate::core::storage::CRAWLED.into(), index);
    play.local.insert(kept_key(other), json!({"pages": []}));
    play.local.insert(kept_key(old), json!({"pages": []}));
    let answer = play.crawl(sitemap());
    assert!(answer.is_ok(), "{answer:?}");
    let index = &play.local[crate::core::storage::CRAWLED];
    let origins: Vec<&str> = (index.as_array().unwrap().iter())
        .filter_map(|e| e["origin"].as_str())
        .collect();
    assert_eq!(origins, [SHOP, other], "{index:#}");
    assert!(!play.local.contains_key(&kept_key(old)));
    assert!(play.local.contains_key(&kept_key(other)));
    // The storage is full when the crawl is written: it is removed again, and the answer
    // says why nothing was kept.
    play.local.remove(&kept_key(SHOP));
    play.instead = Some(Box::new(|output| match output {
        Output::Storage(Storage::Write {
            key,
            value: Some(_),
            ..
        }) if *key == kept_key(SHOP) => Some(Input::Done(Err("the storage is full".into()))),
        _ => None,
    }));
    let answer = play.crawl(sitemap());
    let answer = answer.expect("a crawl");
    assert_eq!(answer["keptError"], "the storage is full", "{answer:#}");
    assert!(!play.local.contains_key(&kept_key(SHOP)));
    // And the kept crawls are cleared: every one, and the index.
    let clear = request(json!({"clear": true}));
    let cleared = play.crawl(clear);
    let cleared = cleared.expect("cleared");
    assert!(cleared["cleared"].as_array().is_some(), "{cleared:#}");
    assert!(play.local.is_empty(), "{:?}", play.local);
}
