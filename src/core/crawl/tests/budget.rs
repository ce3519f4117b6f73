//! What crawls keep, within their budgets: an origin's whole kept item (this crawl's pages
//! counted, not only the pages kept before), every kept crawl together with the index, the
//! least recently crawled forgotten first, and `crawl({clear: true})`.

use serde_json::{json, Value};

use super::{drive, listing, request, START};
use crate::core::crawl::*;
use crate::core::storage::{stored_size, CRAWLED};

/// The crawl of `paths` on `START`'s origin at `now`, each page offering one tool; the answer,
/// and what it asked to keep (value, bytes).
fn crawled(paths: &[String], now: f64, previous: Option<Value>) -> (Value, Value, usize) {
    let limit = paths.len().min(MAX_CRAWL_PAGES);
    let mut crawl =
        Crawl::new(request(json!({"urls": paths, "limit": limit})), START, now).unwrap();
    let site = |url: &str| listing(url, &[("t", "T.")]);
    let (answer, seen, kept) = drive(&mut crawl, &site, previous);
    let bytes = (seen.iter())
        .find_map(|next| match next {
            Next::Keep { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .unwrap_or(0);
    (answer, kept, bytes)
}

fn pages(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("/p/{i}")).collect()
}

#[test]
fn the_whole_kept_item_is_weighed_this_crawls_pages_too() {
    // The attack: 100 pages of 512 tools of 128-byte names (the most a tab and a name may
    // have). Only the pages kept before were counted: this crawl's went in whole, 8 MiB.
    let tools: serde_json::Map<String, Value> = (0..512)
        .map(|i| {
            (
                format!("t{i:03}_{}", "x".repeat(123)),
                json!(fingerprint(&json!({"n": i}))),
            )
        })
        .collect();
    let tools = Value::Object(tools);
    let crawled: Vec<(String, Value)> = (0..100)
        .map(|i| (format!("https://shop.test/p/{i}"), tools.clone()))
        .collect();
    let whole = kept("https://shop.test", 1.0, &crawled[..1], None)
        .unwrap()
        .bytes;
    assert!(
        100 * whole > 8 * 1024 * 1024,
        "the attack weighs {} bytes",
        100 * whole
    );
    let k = kept("https://shop.test", 1_712_345_678_901.0, &crawled, None).unwrap();
    let stored = stored_size(&kept_key("https://shop.test"), &k.value);
    assert!(
        stored <= MAX_CRAWL_KEPT_BYTES,
        "{stored} bytes kept for one origin"
    );
    // The weight the shell is told is the item's (an upper bound, close to it).
    assert!(
        k.bytes >= stored && k.bytes <= stored + stored / 100,
        "{} for {stored}",
        k.bytes
    );
    // This crawl's first pages are kept, in order; the others are counted out.
    let n = k.value["pages"].as_object().unwrap().len();
    assert!((4..100).contains(&n), "{n} pages kept");
    for (url, _) in &crawled[..n] {
        assert!(k.value["pages"][url].is_object(), "{url}");
    }
    assert_eq!((k.left_out, k.forgotten), (100 - n, 0));
}

#[test]
fn a_crawls_answer_says_what_it_left_out_and_urls_weigh_what_the_browser_counts() {
    // 100 pages of one tool at URLs of 1,900 `<`, which the browser writes as six bytes each:
    // 200 KB of text, 1.1 MB to the quota.
    let long: Vec<String> = (0..100)
        .map(|i| format!("/p/{i:03}/{}", "<".repeat(1_900)))
        .collect();
    let (answer, kept, bytes) = crawled(&long, 5.0, None);
    assert_eq!(answer["totals"]["pages"], 100, "{:#}", answer["skipped"]);
    let stored = stored_size(&kept_key("https://shop.test"), &kept);
    assert!(
        stored <= MAX_CRAWL_KEPT_BYTES,
        "{stored} bytes kept for one origin"
    );
    assert!(
        bytes >= stored && bytes <= stored + stored / 100,
        "{bytes} for {stored}"
    );
    let n = kept["pages"].as_object().unwrap().len();
    assert!(n > 10 && n < 100, "{n} pages kept");
    assert!(
        kept.to_string().len() * 4 < stored,
        "as text alone it seems far lighter"
    );
    let note = answer["keptNote"].as_str().unwrap();
    assert_eq!(
        note,
        format!(
            "{} of the 100 pages of this crawl were not kept for the next crawl: an origin keeps at most {MAX_CRAWL_KEPT_BYTES} bytes (max_crawl_kept_bytes)",
            100 - n
        )
    );
    // A crawl within the budget says nothing.
    let (answer, _, _) = crawled(&pages(2), 6.0, None);
    assert!(answer.get("keptNote").is_none(), "{answer}");
}

#[test]
fn pages_kept_before_fill_what_is_left_the_most_recently_crawled_first() {
    // Kept before: 1,000 pages at URLs of 1,980 `<` (six bytes each to the browser), one page
    // of each age.
    let url = |i: usize| format!("https://shop.test/{i:04}{}", "<".repeat(1_980));
    let page = |at: f64| json!({"at": at, "tools": {"t": "0123456789abcdef0123456789abcdef"}});
    let before: serde_json::Map<String, Value> = (0..MAX_CRAWL_URLS)
        .map(|i| (url(i), page(i as f64)))
        .collect();
    let previous = json!({"at": 1.0, "pages": before});
    let (answer, kept, bytes) = crawled(&pages(2), 2_000.0, Some(previous));
    let stored = stored_size(&kept_key("https://shop.test"), &kept);
    assert!(
        stored <= MAX_CRAWL_KEPT_BYTES && bytes >= stored,
        "{stored}, {bytes}"
    );
    // This crawl's pages first, then the most recently crawled of the others.
    let kept_pages = kept["pages"].as_object().unwrap();
    assert!(
        kept_pages.contains_key("https://shop.test/p/0")
            && kept_pages.contains_key("https://shop.test/p/1")
    );
    let n = kept_pages.len() - 2;
    assert!(n > 10 && n < MAX_CRAWL_URLS, "{n} kept before");
    for i in MAX_CRAWL_URLS - n..MAX_CRAWL_URLS {
        assert!(kept_pages.contains_key(&url(i)), "the newest ones: {i}");
    }
    let note = answer["keptNote"].as_str().unwrap();
    assert!(
        note.starts_with(&format!(
            "{} pages kept before were forgotten: ",
            MAX_CRAWL_URLS - n
        )),
        "{note}"
    );
}

#[test]
fn an_origin_too_long_to_name_keeps_nothing() {
    let long = format!("https://{}.test/", "a".repeat(MAX_CRAWL_URL_BYTES));
    assert_eq!(kept(&long, 1.0, &[], None), None);
    // Nor does a crawl reach it: every page of such an origin is over the bytes of a URL.
    let mut crawl = Crawl::new(request(json!({"urls": ["/a"]})), &long, 0.0).unwrap();
    let (answer, seen, _) = drive(&mut crawl, &|url: &str| listing(url, &[("t", "T.")]), None);
    assert!(!seen
        .iter()
        .any(|n| matches!(n, Next::Load { .. } | Next::Keep { .. })));
    assert!(
        answer["skipped"][0]["why"]
            .as_str()
            .unwrap()
            .contains("bytes long"),
        "{answer}"
    );
}

/// An index of `origins` of `bytes` each, most recently crawled first.
fn index_of(origins: &[&str], bytes: usize) -> Value {
    json!(origins
        .iter()
        .map(|o| json!({"origin": o, "bytes": bytes}))
        .collect::<Vec<_>>())
}

fn keys(origins: &[&str]) -> Vec<String> {
    origins.iter().map(|o| kept_key(o)).collect()
}

/// What the kept crawls weigh once `plan` is carried out: the index and each crawl.
fn weight(plan: &Keeping) -> usize {
    let crawls: usize = (plan.index.as_array().unwrap().iter())
        .map(|e| e["bytes"].as_u64().unwrap() as usize)
        .sum();
    crawls + stored_size(CRAWLED, &plan.index)
}

#[test]
fn every_kept_crawl_together_stays_under_its_cap_the_least_recently_crawled_forgotten_first() {
    let full = MAX_CRAWL_KEPT_BYTES;
    // Three full origins kept; a fourth full one crawled: the oldest goes, by bytes.
    let origins = ["https://c.test", "https://b.test", "https://a.test"];
    let plan = keeping(
        Some(&index_of(&origins, full)),
        &keys(&origins),
        "https://d.test",
        full,
    );
    assert_eq!(
        plan.index,
        index_of(
            &["https://d.test", "https://c.test", "https://b.test"],
            full
        )
    );
    assert_eq!(plan.remove, ["webmcpHost.crawl.https://a.test"]);
    assert!(weight(&plan) <= MAX_CRAWLS_KEPT_BYTES);
    // Small crawls: many fit, up to the count of origins.
    let many: Vec<String> = (0..MAX_CRAWLED_ORIGINS)
        .map(|i| format!("https://{i}.test"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let plan = keeping(
        Some(&index_of(&many, 1_000)),
        &keys(&many),
        "https://new.test",
        1_000,
    );
    assert_eq!(plan.index.as_array().unwrap().len(), MAX_CRAWLED_ORIGINS);
    assert_eq!(plan.remove, [kept_key(many[MAX_CRAWLED_ORIGINS - 1])]);
    // A big crawl of an origin kept before: first, once; as many others as fit after it.
    let plan = keeping(
        Some(&index_of(&many, 40_000)),
        &keys(&many),
        "https://7.test",
        full,
    );
    let index = plan.index.as_array().unwrap();
    assert_eq!(index[0], json!({"origin": "https://7.test", "bytes": full}));
    assert_eq!(
        index
            .iter()
            .filter(|e| e["origin"] == "https://7.test")
            .count(),
        1
    );
    assert!(weight(&plan) <= MAX_CRAWLS_KEPT_BYTES, "{}", weight(&plan));
    assert!(
        weight(&plan) + 40_000 > MAX_CRAWLS_KEPT_BYTES,
        "no room was left unused"
    );
    let last = index.last().unwrap()["origin"].as_str().unwrap();
    let at = many.iter().position(|o| *o == last).unwrap();
    let forgotten: Vec<String> = many[at + 1..].iter().rev().map(|o| kept_key(o)).collect();
    assert_eq!(plan.remove, forgotten, "the oldest first, and only those");
    // The newest crawl always stays, whatever the others weighed.
    let plan = keeping(
        Some(&index_of(&["https://a.test"], usize::MAX / 2)),
        &keys(&["https://a.test"]),
        "https://b.test",
        full,
    );
    assert_eq!(plan.index, index_of(&["https://b.test"], full));
    assert_eq!(plan.remove, ["webmcpHost.crawl.https://a.test"]);
}

#[test]
fn a_kept_crawl_whose_weight_is_unknown_is_forgotten() {
    // An earlier version's index (plain origins, nothing weighed), a crawl the index does not
    // name, and other keys of the area.
    let stored: Vec<String> = vec![
        kept_key("https://old.test"),
        kept_key("https://stray.test"),
        kept_key("https://kept.test"),
        kept_key("https://new.test"),
        CRAWLED.into(),
        "webmcpHost.middleware".into(),
    ];
    let index =
        json!(["https://old.test", {"origin": "https://kept.test", "bytes": 10}, {"x": 1}, 7]);
    let plan = keeping(Some(&index), &stored, "https://new.test", 20);
    assert_eq!(
        plan.index,
        json!([{"origin": "https://new.test", "bytes": 20}, {"origin": "https://kept.test", "bytes": 10}])
    );
    assert_eq!(
        plan.remove,
        [kept_key("https://old.test"), kept_key("https://stray.test")]
    );
    // No index at all, or not a list: the crawl alone.
    for index in [None, Some(json!({"x": 1}))] {
        let plan = keeping(index.as_ref(), &[], "https://a.test", 5);
        assert_eq!(
            plan.index,
            json!([{"origin": "https://a.test", "bytes": 5}])
        );
        assert!(plan.remove.is_empty());
    }
}

#[test]
fn clear_forgets_every_kept_crawl_and_needs_no_tab() {
    let stored: Vec<String> = vec![
        kept_key("https://b.test"),
        "webmcpHost.models".into(),
        kept_key("https://a.test"),
        CRAWLED.into(),
    ];
    let (remove, answer) = clearing(&stored);
    assert_eq!(
        remove,
        [
            kept_key("https://a.test"),
            kept_key("https://b.test"),
            CRAWLED.into()
        ]
    );
    assert_eq!(
        answer,
        json!({"cleared": ["https://a.test", "https://b.test"]})
    );
    assert_eq!(clearing(&[]), (vec![], json!({"cleared": []})));
    // `{clear: true}`: no tab, nothing else.
    let clear = CrawlRequest::parse(&json!({"clear": true})).unwrap();
    assert!(clear.clear && !clear.stop);
    for (bad, says) in [
        (json!({"clear": "yes"}), "`clear` is a string, not true"),
        (json!({"clear": true, "urls": ["/a"]}), "takes no `urls`"),
    ] {
        let error = CrawlRequest::parse(&bad).unwrap_err();
        assert!(error.contains(says), "{bad}: {error}");
    }
    assert!(
        !CrawlRequest::parse(&json!({"tabId": 1, "urls": ["/a"], "clear": false}))
            .unwrap()
            .clear
    );
}
