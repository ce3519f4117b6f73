//! A crawl driven by hand: the pages loaded and listed in order, what is skipped and why, the
//! sitemap read, the diff against the previous crawl, and the HTML report escaped.

use serde_json::{json, Value};

use super::*;
use crate::core::page::tabs::fixture;
use crate::core::page::tool::DeclarativeForm;

mod budget;

pub(super) const START: &str = "https://shop.test/start";

pub(super) fn request(extra: Value) -> CrawlRequest {
    let mut r = json!({"tabId": 7});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    CrawlRequest::parse(&r).expect("parses")
}

/// A listing of `tools` (`(name, description)`), the first a declarative form.
pub(super) fn listing(url: &str, tools: &[(&str, &str)]) -> Listed {
    let mut tab = fixture::tab(url, &[]);
    tab.tools = (tools.iter().enumerate())
        .map(|(i, (name, description))| {
            let mut t = fixture::tool(name, "https://shop.test");
            t.description = (*description).into();
            t.input_schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "what"}}});
            if i == 0 {
                t.form = Some(DeclarativeForm {
                    auto_submit: true,
                    navigates: false,
                    action: String::new(),
                    target: String::new(),
                });
            }
            t
        })
        .collect();
    if let Some(page) = &mut tab.page {
        page.title = format!("Page {url}");
    }
    Ok(std::rc::Rc::new(tab))
}

/// Drives a crawl to its end: `site` answers each loaded URL's listing (or an error); a URL at
/// `/broken` does not load, one at `/moved` redirects to `/landed`, one at `/away` lands on
/// another origin.
pub(super) fn drive(
    crawl: &mut Crawl,
    site: &dyn Fn(&str) -> Listed,
    previous: Option<Value>,
) -> (Value, Vec<Next>, Value) {
    let mut seen = Vec::new();
    let mut kept = Value::Null;
    let mut shown = String::new();
    for _ in 0..1000 {
        let next = crawl.poll();
        seen.push(next.clone());
        let reply = match next {
            Next::Done(answer) => return (answer, seen, kept),
            Next::ReadSitemap { .. } => panic!("no sitemap here"),
            Next::Previous { .. } => Reply::Previous(previous.clone()),
            Next::Load { url, .. } => {
                shown = url.clone();
                if url.ends_with("/moved") {
                    shown = "https://shop.test/landed".into();
                } else if url.ends_with("/away") {
                    shown = "https://evil.test/phish".into();
                }
                match url.ends_with("/broken") {
                    true => Reply::Loaded(Err("the page did not load (net::ERR_FAILED)".into())),
                    false => Reply::Loaded(Ok(shown.clone())),
                }
            }
            Next::List { .. } => Reply::Listed(site(&shown)),
            Next::Keep { value, .. } => {
                kept = value;
                Reply::Kept(Ok(()))
            }
        };
        crawl.handle(reply);
    }
    panic!("the crawl did not end")
}

#[test]
fn requests_are_checked_with_the_field_named() {
    let r = request(json!({"urls": ["/a"], "limit": 3, "format": "html"}));
    assert_eq!((r.limit, r.html, r.urls.len()), (3, true, 1));
    assert_eq!(
        request(json!({"sitemap": "/sitemap.xml"})).limit,
        DEFAULT_CRAWL_PAGES
    );
    for (bad, says) in [
        (json!({"urls": []}), "give `urls` or a `sitemap`"),
        (json!({"urls": ["/a"], "sitemap": "/s.xml"}), "not both"),
        (
            json!({"urls": ["/a"], "sameOrigin": false}),
            "stays on the origin",
        ),
        (
            json!({"urls": ["/a"], "limit": 0}),
            "`limit` must be 1 to 100",
        ),
        (
            json!({"urls": ["/a"], "limit": 101}),
            "`limit` must be 1 to 100",
        ),
        (json!({"urls": "/a"}), "not an array"),
        (json!({"urls": [7]}), "must be strings"),
        (json!({"urls": ["/a"], "format": "pdf"}), "unknown format"),
        (
            json!({"urls": vec!["/a"; MAX_CRAWL_URLS + 1]}),
            "over the cap",
        ),
    ] {
        let mut r = bad.clone();
        r["tabId"] = json!(7);
        let error = CrawlRequest::parse(&r).unwrap_err();
        assert!(error.contains(says), "{bad}: {error}");
    }
    assert!(CrawlRequest::parse(&json!({"urls": ["/a"]}))
        .unwrap_err()
        .contains("tabId"));
    assert!(Crawl::new(request(json!({"urls": ["/a"]})), "chrome://newtab/", 0.0).is_err());
    assert!(Crawl::new(
        request(json!({"sitemap": "https://other.test/s.xml"})),
        START,
        0.0
    )
    .unwrap_err()
    .contains("another origin"));
}

#[test]
fn each_page_of_the_origin_is_loaded_listed_and_audited_then_the_tab_goes_back() {
    let urls = json!([
        "/a",
        "https://shop.test/b#top",
        "/a",
        "https://evil.test/c",
        "javascript:alert(1)",
        "/broken",
        "/late",
        "/d"
    ]);
    let mut crawl = Crawl::new(request(json!({"urls": urls, "limit": 4})), START, 1000.0).unwrap();
    let listed_late = std::cell::Cell::new(0);
    let site = |url: &str| -> Listed {
        match url {
            // Registers its tools a moment after loading: the first listing is empty.
            "https://shop.test/late" => {
                listed_late.set(listed_late.get() + 1);
                if listed_late.get() == 1 {
                    listing(url, &[])
                } else {
                    listing(url, &[("late_tool", "Lists late.")])
                }
            }
            _ => listing(url, &[("search", "Searches the shop."), ("get", "")]),
        }
    };
    let (answer, seen, kept) = drive(&mut crawl, &site, None);
    let loads: Vec<String> = seen
        .iter()
        .filter_map(|n| match n {
            Next::Load { url, .. } => Some(url.clone()),
            _ => None,
        })
        .collect();
    // Same origin only, fragments dropped, duplicates once, at most `limit`, then back.
    assert_eq!(
        loads,
        [
            "https://shop.test/a",
            "https://shop.test/b",
            "https://shop.test/broken",
            "https://shop.test/late",
            START
        ]
    );
    // Each loaded page listed once ready (the host's listing waits until its tools hold
    // still); the late page, empty then, listed again a moment later as it is.
    let lists: Vec<&Next> = (seen.iter())
        .filter(|n| matches!(n, Next::List { .. }))
        .collect();
    let ready = Next::List {
        tab_id: 7,
        after_ms: 0,
        settle: Settle::AfterLoad,
    };
    let again = Next::List {
        tab_id: 7,
        after_ms: CRAWL_SETTLE_MS,
        settle: Settle::Now,
    };
    assert_eq!(lists, [&ready, &ready, &ready, &again], "{lists:?}");
    assert_eq!(listed_late.get(), 2, "empty, then its tool");
    let pages = answer["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 4);
    assert_eq!(pages[0]["forms"], json!(["search"]));
    assert_eq!(
        pages[0]["tools"][0]["form"],
        json!({"autoSubmit": true, "navigates": false})
    );
    assert!(
        pages[0]["score"].as_u64().unwrap() < 100,
        "the tool without a description is found"
    );
    assert!(pages[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "description-missing"));
    assert_eq!(pages[0]["title"], "Page https://shop.test/a");
    assert!(pages[0].get("fingerprints").is_none(), "kept, not answered");
    assert_eq!(pages[2]["error"], "the page did not load (net::ERR_FAILED)");
    assert_eq!(pages[3]["tools"][0]["name"], "late_tool");
    let skipped: Vec<&str> = answer["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["why"].as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped[0].contains("another origin (https://evil.test)"));
    assert!(skipped[1].contains("not an http(s) URL"));
    assert!(skipped[2].contains("over the limit of 4 pages"));
    // The totals add the pages up.
    let ok: Vec<&Value> = pages.iter().filter(|p| p.get("error").is_none()).collect();
    let findings: usize = ok
        .iter()
        .map(|p| p["findings"].as_array().unwrap().len())
        .sum();
    let lowest = ok
        .iter()
        .map(|p| p["score"].as_u64().unwrap())
        .min()
        .unwrap();
    assert!(findings > 0 && lowest < 100);
    assert_eq!(
        answer["totals"],
        json!({"pages": 4, "failed": 1, "tools": 5, "forms": 3, "findings": findings, "lowestScore": lowest})
    );
    assert_eq!(answer["diff"], Value::Null, "the origin's first crawl");
    // Kept: fingerprints of the pages that loaded, no text of them.
    assert_eq!(kept["at"], 1000.0);
    assert_eq!(kept["pages"].as_object().unwrap().len(), 3);
    assert!(!kept.to_string().contains("Searches the shop"), "{kept}");
}

#[test]
fn a_second_crawl_names_the_tools_added_removed_and_redefined_and_the_pages_new_or_missing() {
    let first = |url: &str| -> Listed {
        match url {
            "https://shop.test/a" => {
                listing(url, &[("search", "Searches."), ("cart", "The cart.")])
            }
            _ => listing(url, &[("other", "Other.")]),
        }
    };
    let mut one = Crawl::new(request(json!({"urls": ["/a", "/b", "/gone"]})), START, 1.0).unwrap();
    let (_, _, kept) = drive(&mut one, &first, None);
    let second = |url: &str| -> Listed {
        match url {
            // `search` redefined, `cart` removed, `checkout` added.
            "https://shop.test/a" => listing(
                url,
                &[
                    ("search", "Searches the whole shop."),
                    ("checkout", "Pays."),
                ],
            ),
            _ => listing(url, &[("other", "Other.")]),
        }
    };
    let mut two = Crawl::new(request(json!({"urls": ["/a", "/b", "/new"]})), START, 2.0).unwrap();
    let (answer, _, _) = drive(&mut two, &second, Some(kept));
    assert_eq!(
        answer["diff"],
        json!({"previousAt": 1.0,
               "pages": [{"url": "https://shop.test/a", "since": 1.0, "added": ["checkout"], "removed": ["cart"], "redefined": ["search"]}],
               "newPages": ["https://shop.test/new"],
               "missingPages": ["https://shop.test/gone"]})
    );
}

#[test]
fn a_partial_crawl_keeps_what_it_did_not_reach() {
    let site = |url: &str| -> Listed { listing(url, &[("t", "T.")]) };
    let mut full = Crawl::new(request(json!({"urls": ["/a", "/b"]})), START, 1.0).unwrap();
    let (_, _, kept) = drive(&mut full, &site, None);
    let mut part = Crawl::new(request(json!({"urls": ["/a"]})), START, 2.0).unwrap();
    let (answer, _, kept) = drive(&mut part, &site, Some(kept));
    assert_eq!(
        answer["diff"]["missingPages"],
        json!(["https://shop.test/b"])
    );
    assert_eq!(kept["pages"]["https://shop.test/a"]["at"], 2.0);
    assert_eq!(
        kept["pages"]["https://shop.test/b"]["at"], 1.0,
        "kept from the first crawl"
    );
    // A later full crawl compares /b with its state of the first crawl.
    let changed = |url: &str| -> Listed {
        let description = if url.ends_with("/b") {
            "T, changed."
        } else {
            "T."
        };
        listing(url, &[("t", description)])
    };
    let mut again = Crawl::new(request(json!({"urls": ["/a", "/b"]})), START, 3.0).unwrap();
    let (answer, _, _) = drive(&mut again, &changed, Some(kept));
    assert_eq!(
        answer["diff"]["pages"],
        json!([{"url": "https://shop.test/b", "since": 1.0, "added": [], "removed": [], "redefined": ["t"]}])
    );
    assert_eq!(answer["diff"]["newPages"], json!([]));
}

#[test]
fn a_sitemap_is_read_on_the_origin_and_its_locs_crawled() {
    let sitemap = r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc>https://shop.test/p?a=1&amp;b=2</loc></url><url><loc> https://shop.test/q </loc></url>
        <url><loc>https://evil.test/x</loc></url></urlset>"#;
    let mut crawl = Crawl::new(request(json!({"sitemap": "/sitemap.xml"})), START, 0.0).unwrap();
    assert_eq!(
        crawl.poll(),
        Next::ReadSitemap {
            tab_id: 7,
            url: "https://shop.test/sitemap.xml".into()
        }
    );
    crawl.handle(Reply::Sitemap(Ok(sitemap.into())));
    assert_eq!(crawl.progress(), (0, 2));
    let (answer, _, _) = drive(&mut crawl, &|url: &str| listing(url, &[("t", "T.")]), None);
    let urls: Vec<&str> = answer["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, ["https://shop.test/p?a=1&b=2", "https://shop.test/q"]);
    assert_eq!(answer["skipped"][0]["url"], "https://evil.test/x");
    // An index of sitemaps is not followed: it says so; an unreadable sitemap says why.
    let index =
        "<sitemapindex><sitemap><loc>https://shop.test/s1.xml</loc></sitemap></sitemapindex>";
    assert_eq!(sitemap_locs(index), (vec![], 1));
    let mut crawl = Crawl::new(request(json!({"sitemap": "/sitemap.xml"})), START, 0.0).unwrap();
    crawl.handle(Reply::Sitemap(Err("404".into())));
    let (answer, _, _) = drive(&mut crawl, &|url: &str| listing(url, &[]), None);
    assert_eq!(answer["sitemapNote"], "the sitemap was not read: 404");
    assert_eq!(answer["pages"], json!([]));
}

#[test]
fn the_html_report_escapes_what_pages_wrote() {
    let evil = "<img src=x onerror=alert(1)>";
    let mut crawl = Crawl::new(
        request(json!({"urls": ["/a"], "format": "html"})),
        START,
        0.0,
    )
    .unwrap();
    let (answer, _, _) = drive(
        &mut crawl,
        // A name, a description and a finding's message quoting them, as a page could write.
        &|url: &str| listing(url, &[(evil, evil)]),
        None,
    );
    let report = answer["report"].as_str().unwrap();
    assert!(report.starts_with("<!doctype html>"));
    assert!(
        report.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the name is printed, escaped"
    );
    assert!(!report.contains("<img"), "{report}");
    assert!(report.contains("default-src 'none'"));
}

#[test]
fn a_fingerprint_changes_with_the_definition_only() {
    let a = json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}});
    let mut b = a.clone();
    b["frameId"] = json!(3);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    b["description"] = json!("e");
    assert_ne!(fingerprint(&a), fingerprint(&b));
    let mut titled = a.clone();
    titled["title"] = json!("T");
    assert_ne!(
        fingerprint(&a),
        fingerprint(&titled),
        "the title is part of the definition"
    );
    assert_eq!(fingerprint(&a).len(), 32);
}

#[test]
fn a_page_that_leaves_the_origin_is_an_error_and_a_redirect_within_it_is_followed() {
    let site = |url: &str| -> Listed {
        match url {
            // Listed after it moved itself to another origin.
            "https://shop.test/drifts" => listing("https://evil.test/x", &[("steal", "S.")]),
            _ => listing(url, &[("t", "T.")]),
        }
    };
    let urls = json!(["/moved", "/away", "/drifts", "https://SHOP.test:443/b c"]);
    let mut crawl = Crawl::new(request(json!({"urls": urls})), START, 0.0).unwrap();
    let (answer, seen, kept) = drive(&mut crawl, &site, None);
    let pages = answer["pages"].as_array().unwrap();
    assert_eq!(pages[0]["url"], "https://shop.test/moved");
    assert_eq!(pages[0]["landed"], "https://shop.test/landed");
    assert!(pages[1]["error"]
        .as_str()
        .unwrap()
        .contains("another origin (https://evil.test)"));
    assert!(pages[2]["error"]
        .as_str()
        .unwrap()
        .contains("another origin (https://evil.test)"));
    assert!(
        !kept.to_string().contains("steal"),
        "a tool of another origin's page is not kept"
    );
    // Written as Chrome writes it: lowercase host, no default port, spaces encoded.
    assert!(seen.contains(&Next::Load {
        tab_id: 7,
        url: "https://shop.test/b%20c".into()
    }));
}

#[test]
fn a_crawl_past_its_time_budget_skips_the_pages_left_and_ends_with_those_it_has() {
    let mut crawl = Crawl::new(request(json!({"urls": ["/a", "/b", "/c"]})), START, 0.0).unwrap();
    let site = |url: &str| -> Listed { listing(url, &[("t", "T.")]) };
    crawl.handle(Reply::Previous(None));
    assert!(matches!(crawl.poll(), Next::Load { .. }));
    crawl.handle(Reply::Loaded(Ok("https://shop.test/a".into())));
    assert!(matches!(crawl.poll(), Next::List { .. }));
    crawl.handle(Reply::Listed(site("https://shop.test/a")));
    crawl.tick(f64::from(MAX_CRAWL_MS) + 1.0);
    let (answer, _, _) = drive(&mut crawl, &site, None);
    assert_eq!(answer["pages"].as_array().unwrap().len(), 1);
    let skipped: Vec<&str> = answer["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["why"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["over the crawl's time budget of 15 minutes"; 2]);
}

#[test]
fn a_crawl_with_nothing_to_load_leaves_the_tab_alone() {
    let mut crawl = Crawl::new(
        request(json!({"urls": ["https://evil.test/a"]})),
        START,
        0.0,
    )
    .unwrap();
    let (answer, seen, kept) = drive(&mut crawl, &|url: &str| listing(url, &[]), None);
    assert!(
        !seen
            .iter()
            .any(|n| matches!(n, Next::Load { .. } | Next::Keep { .. })),
        "{seen:?}"
    );
    assert_eq!((answer["pages"].clone(), kept), (json!([]), Value::Null));
}

#[test]
fn a_stopped_crawl_ends_with_the_pages_it_has() {
    let stop = CrawlRequest::parse(&json!({"tabId": 7, "stop": true})).unwrap();
    assert!(stop.stop, "a stop needs no pages");
    assert!(CrawlRequest::parse(&json!({"tabId": 7, "stop": "yes"})).is_err());
    let mut crawl = Crawl::new(request(json!({"urls": ["/a", "/b", "/c"]})), START, 0.0).unwrap();
    let site = |url: &str| -> Listed { listing(url, &[("t", "T.")]) };
    crawl.handle(Reply::Previous(None));
    crawl.poll();
    crawl.handle(Reply::Loaded(Ok("https://shop.test/a".into())));
    assert!(matches!(crawl.poll(), Next::List { .. }));
    crawl.handle(Reply::Listed(site("https://shop.test/a")));
    crawl.stop();
    let (answer, seen, kept) = drive(&mut crawl, &site, None);
    assert_eq!(answer["pages"].as_array().unwrap().len(), 1);
    assert_eq!(answer["skipped"].as_array().unwrap().len(), 2);
    assert_eq!(answer["skipped"][0]["why"], "the crawl was stopped");
    assert!(
        seen.contains(&Next::Load {
            tab_id: 7,
            url: START.into()
        }),
        "the tab goes back"
    );
    assert!(
        kept["pages"]["https://shop.test/a"].is_object(),
        "what it saw is kept"
    );
}

#[test]
fn a_page_listed_while_it_still_loads_is_listed_again_and_one_that_never_loads_is_its_error() {
    use crate::core::host::listing::{played, Listing};
    use crate::core::host::Host;
    use crate::core::page::ready::PAGE_READY_MS;
    use crate::core::page::tabs::fixture::{reloading, top_frame};
    let url = "https://shop.test/a";
    // Through the host's listing: the old document gone and the new one not answering, then
    // the new one still parsing, then the page, twice alike.
    let host = Host::default();
    let mut now = 0.0;
    let mut shown = 0;
    let mut frames = || {
        shown += 1;
        reloading(url, shown, &["t"])
    };
    let mut crawl = Crawl::new(request(json!({"urls": ["/a"]})), START, 0.0).unwrap();
    crawl.handle(Reply::Previous(None));
    crawl.poll();
    crawl.handle(Reply::Loaded(Ok(url.into())));
    let Next::List { tab_id, settle, .. } = crawl.poll() else {
        panic!("listed")
    };
    let listed = played(&host, Listing::kept(tab_id, settle), &mut now, &mut frames);
    let page = crawl
        .handle(Reply::Listed(listed))
        .expect("the page's entry");
    assert!(page.get("error").is_none(), "{page}");
    assert_eq!(page["tools"].as_array().map(Vec::len), Some(1), "{page}");
    assert_eq!(shown, 4, "listed until ready and its tools twice alike");

    // A page that never finishes loading: the page's error once the budget is spent.
    let mut crawl = Crawl::new(request(json!({"urls": ["/a"]})), START, 0.0).unwrap();
    crawl.handle(Reply::Previous(None));
    crawl.poll();
    crawl.handle(Reply::Loaded(Ok(url.into())));
    let Next::List { tab_id, settle, .. } = crawl.poll() else {
        panic!("listed")
    };
    let listed = played(&host, Listing::kept(tab_id, settle), &mut now, || {
        vec![top_frame(url, &[], true)]
    });
    let entry = crawl
        .handle(Reply::Listed(listed))
        .expect("the page's entry");
    let error = entry["error"].as_str().unwrap();
    assert!(
        error.contains("the page https://shop.test/a was still loading")
            && error.contains(&format!("budget {PAGE_READY_MS} ms")),
        "{entry}"
    );
}
