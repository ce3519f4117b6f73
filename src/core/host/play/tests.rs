//! The host played end to end natively: simulations (the user model, the agent's turns with
//! page calls, DOM assertions, the judge), runs, page calls by hand, under simulated time.

use serde_json::{json, Value};

use super::model::{last, offers, Said};
use super::*;
use crate::core::crawl::CrawlRequest;
use crate::core::evals::plan::EvaluateRequest;
use crate::core::evals::simulate::SimulateRequest;
use crate::core::ops::AuditRequest;

const USER_ASKS: &str = "I'd like two blue mugs please.";
const USER_ENDS: &str = "Great, thanks!\n[[END_CONVERSATION]]";

/// The shop with an agent that adds `qty` mugs once asked, a user who asks then ends, and a
/// judge who passes the conversation when the agent's answer says the mugs were added, quoting
/// the cart's result.
fn shop(qty: u64) -> Play {
    let mut play = Play::shop(&["agent", "user", "judge"]);
    play.models.serve(
        "agent-1",
        Box::new(move |request| match last(request)["role"].as_str() {
            Some("tool") => Said::Text("Added two mugs.".into()),
            _ => Said::Call("add_to_cart".into(), json!({"id": "mug-1", "qty": qty})),
        }),
    );
    let mut turns = 0;
    play.models.serve(
        "user-1",
        Box::new(move |_| {
            turns += 1;
            Said::Text(if turns == 1 { USER_ASKS } else { USER_ENDS }.into())
        }),
    );
    play.models.serve(
        "judge-1",
        Box::new(|request| {
            let text = request.to_string();
            let passed = text.contains("Added two mugs");
            Said::Call(
                "submit_result".into(),
                json!({"passed": passed, "reasoning": "The cart holds two mugs.", "evidence": ["add_to_cart: {\"cart\":2}"]}),
            )
        }),
    );
    play
}

fn cart_case() -> Value {
    json!([{
        "name": "two mugs",
        "setup": [{"functionName": "empty_cart", "arguments": {}}],
        "userScenario": "You want two blue mugs in your cart.",
        "maxTurns": 4,
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}],
        "successCriteria": "a cart with two mugs",
    }])
}

fn simulation(cases: Value, extra: Value) -> SimulateRequest {
    let mut value = json!({"tabId": 4, "mode": "simulate", "simulations": cases,
        "models": ["agent"], "userModel": "user", "judgeModel": "judge"});
    for (k, v) in extra.as_object().expect("an object") {
        value[k] = v.clone();
    }
    SimulateRequest::parse(&value).expect("a simulation request")
}

#[test]
fn a_simulation_plays_end_to_end_through_the_host() {
    let mut play = shop(2);
    let started = play.now;
    let answer = play.simulate(simulation(cart_case(), json!({})));
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "pass", "{answer:#}");
    assert_eq!(result["setupCalls"][0]["outcome"], "pass", "{result:#}");
    assert_eq!(result["verdict"]["passed"], true);
    assert_eq!(result["verdict"]["endedBy"], "user");
    assert_eq!(result["conversation"]["closingMessage"], "Great, thanks!");
    let turns = result["conversation"]["turns"].as_array().expect("turns");
    assert_eq!(
        turns[0]["toolCalls"][0]["functionName"], "add_to_cart",
        "{result:#}"
    );
    // The page ran the setup, then the agent's call; its DOM showed the cart.
    let page = &play.pages[&4];
    let ran: Vec<&str> = page.ran.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(ran, ["empty_cart", "add_to_cart"]);
    assert_eq!(page.cart, 2);
    assert_eq!(answer["passCount"], 1);
    // Its result pushed to the extension's pages as the suite went.
    let pushed = json!({"done": 1, "total": 1, "result": result});
    assert_eq!(play.pushes, [("evalProgress".to_owned(), pushed)]);
    // Every model was asked through the provider's real request: the user and the judge
    // with no page tool, the agent with the page's.
    let asked = |model: &str| {
        (play.models.asked.iter())
            .filter(|(m, _)| m == model)
            .count()
    };
    assert_eq!(
        (asked("user-1"), asked("agent-1"), asked("judge-1")),
        (2, 2, 1)
    );
    for (model, request) in &play.models.asked {
        assert_eq!(
            offers(request, "add_to_cart"),
            model == "agent-1",
            "{model}"
        );
    }
    assert!(offers(
        &play.models.asked.last().unwrap().1,
        "submit_result"
    ));
    // The clock moved only by what waited (nothing did).
    assert_eq!(play.now, started);
}

#[test]
fn a_dom_assertion_that_fails_fails_the_case_before_the_judge_is_asked() {
    let mut play = shop(1);
    let answer = play.simulate(simulation(cart_case(), json!({})));
    let result = &answer["results"][0];
    assert_eq!(play.pages[&4].cart, 1);
    assert_eq!(result["outcome"], "fail", "{result:#}");
    assert_eq!(result["assertionResults"][0]["actual"], "1");
    let judged = play
        .models
        .asked
        .iter()
        .any(|(model, _)| model == "judge-1");
    assert!(!judged, "the judge was asked");
    assert_eq!(answer["passCount"], 0);
}

#[test]
fn a_reloaded_page_is_awaited_before_the_setup_calls() {
    let mut play = shop(2);
    play.pages.get_mut(&4).unwrap().cart = 5;
    let answer = play.simulate(simulation(cart_case(), json!({"reload": true})));
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "pass", "{result:#}");
    let page = &play.pages[&4];
    assert_eq!(page.loads, 2, "loaded once again");
    // The setup was called only once the page offered its tools again.
    assert_eq!(page.ran[0].0, "empty_cart");
    assert_eq!(page.cart, 2);
}

#[test]
fn a_slow_agent_is_stopped_at_the_conversation_deadline_in_simulated_time() {
    let mut play = shop(2);
    // Each model answers after 20 s: the user's first turn leaves 10 s of the case's 30 s to
    // the agent, whose run is stopped there, before its model answered.
    play.models.latency_ms = 20_000.0;
    let mut case = cart_case();
    case[0]["maxDurationMs"] = json!(30_000);
    let started = play.now;
    let answer = play.simulate(simulation(case, json!({})));
    let result = &answer["results"][0];
    assert_eq!(result["conversation"]["endedBy"], "timeout", "{result:#}");
    let stopped = RunOutcome::Stopped {
        reason: "the simulation's time budget ran out".into(),
    };
    assert_eq!(play.outcomes[1], stopped, "{:?}", play.outcomes);
    assert!(play.pages[&4]
        .ran
        .iter()
        .all(|(name, _)| name != "add_to_cart"));
    // The cart stayed empty, so the DOM assertion failed the case before any judge; the
    // clock stands at the deadline.
    assert_eq!(result["outcome"], "fail", "{result:#}");
    assert_eq!(play.now - started, 30_000.0);
}

#[test]
fn a_run_calls_the_page_through_the_host_and_reuses_its_listing() {
    let mut play = shop(2);
    let run = json!({"tabId": 4, "model": "agent",
        "messages": [{"id": "u1", "role": "user", "content": USER_ASKS}]});
    let answer = play.run(&run).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    assert_eq!(play.pages[&4].cart, 2);
    // The tab was listed at the run's start, its page call made on that kept listing, and
    // listed again after the call (the page may have changed its tools).
    assert_eq!(play.pages[&4].listed, 2);
    // Both listings were kept, and are there for the shell to observe (the first definitions
    // seen), as every kept listing is, whoever made it.
    let listed = play.host.take_listed();
    assert_eq!(listed.len(), 2);
    assert!(listed
        .iter()
        .all(|(tab, tools)| *tab == 4 && tools.tools.len() == 2));
    assert!(play.host.take_listed().is_empty(), "taken once");
    // The run's page call crossed twice: its message handed out, its reply fed back (the host
    // made it from the drive's permit on the kept listing, and handed its answer to the drive).
    assert_eq!(play.call_crossings, [2]);
    // By hand: on the kept listing, with the stored layers the run's start read and kept.
    let args = json!({"id": "mug-1", "qty": 1})
        .as_object()
        .cloned()
        .unwrap();
    let answer = play.asked(
        Asker::CallTool,
        CallRequest::asked(4, "add_to_cart".into(), args, 5_000),
    );
    assert_eq!(answer, CallAnswer::text(r#"{"cart":3}"#));
    assert_eq!(play.pages[&4].listed, 2);
    assert_eq!(play.call_crossings, [2, 2]);
}

/// A run of the agent on the shop, asked for two mugs.
fn mugs_run() -> Value {
    json!({"tabId": 4, "model": "agent",
        "messages": [{"id": "u1", "role": "user", "content": USER_ASKS}]})
}

#[test]
fn a_stop_while_the_run_starts_ends_it_before_anything_acts() {
    let mut play = shop(2);
    let started = play.now;
    // The stop is due at once: it comes while the start still reads its sources, and is
    // kept for the drive, which ends on it (its first model request aborted unread).
    let answer = play
        .run_within(&mugs_run(), Some(0))
        .expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "stopped", "{answer:#}");
    assert_eq!(play.now, started, "nothing was waited for");
    assert!(
        play.pages[&4].ran.is_empty(),
        "the page ran {:?}",
        play.pages[&4].ran
    );
}

#[test]
fn with_layers_a_runs_page_call_is_made_by_the_shell_on_the_drives_permit() {
    let mut play = shop(2);
    play.layered = true;
    let answer = play.run(&mugs_run()).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    assert_eq!(play.pages[&4].cart, 2);
    // Made by the shell's page call driver, from the drive's permit: no layers read, the
    // kept listing used (sent, then its reply).
    assert_eq!(play.call_crossings, [2]);
}

#[test]
fn an_agent_evaluation_reloads_and_runs_each_time_once_the_page_lists_the_tool() {
    let mut play = shop(2);
    // After each load the page parses (one listing), then registers its tools late (three).
    play.loading = (1, 3);
    let case = json!({"name": "mugs",
        "messages": [{"role": "user", "type": "message", "content": USER_ASKS}],
        "expectedCall": [{"functionName": "add_to_cart", "arguments": {"id": "mug-1", "qty": 2}}]});
    let request = json!({"tabId": 4, "evals": [case], "mode": "agent", "models": ["agent"],
        "runs": 2, "reload": true});
    let started = play.now;
    let answer = play.evaluate(EvaluateRequest::parse(&request).expect("a request"));
    let results = answer["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{answer:#}");
    for result in results {
        assert_eq!(result["outcome"], "pass", "{result:#}");
        assert_eq!(
            result["calls"][0]["result"],
            json!({"cart": 2}),
            "{result:#}"
        );
    }
    // Loaded again for each run; each run began once the tool was listed: the model was
    // offered it every time, and the page's cart holds the second run's mugs alone.
    let page = &play.pages[&4];
    assert_eq!(page.loads, 3);
    assert_eq!(page.cart, 2);
    assert_eq!(play.models.asked.len(), 4);
    assert!(play
        .models
        .asked
        .iter()
        .all(|(_, r)| offers(r, "add_to_cart")));
    assert!(
        play.now > started,
        "the waits for the page took simulated time"
    );
}

#[test]
fn a_cut_run_is_continued_and_its_unanswered_call_said_to_have_maybe_run() {
    let mut play = shop(2);
    // The agent calls once; told that a call may have run, it checks rather than calls again.
    play.models.serve(
        "agent-1",
        Box::new(|request| {
            if request.to_string().contains("The call may have run") {
                return Said::Text("It may have run: I checked the cart.".into());
            }
            match last(request)["role"].as_str() {
                Some("tool") => Said::Text("Added two mugs.".into()),
                _ => Said::Call("add_to_cart".into(), json!({"id": "mug-1", "qty": 2})),
            }
        }),
    );
    // The worker stops once the page ran the call, before its result was recorded, and starts
    // again.
    play.cut = Some(Box::new(|event| event["type"] == "TOOL_CALL_RESULT"));
    let mut first = mugs_run();
    first["threadId"] = json!("t-mugs");
    let cut = play.run(&first).expect_err("the run was cut");
    assert!(cut.starts_with("the worker stopped"), "{cut}");
    assert_eq!(play.pages[&4].cart, 2);
    play.cut = None;
    play.restart();
    let next = json!({"tabId": 4, "model": "agent", "threadId": "t-mugs",
        "messages": [{"id": "u2", "role": "user", "content": "Did it work?"}]});
    let answer = play.run(&next).expect("the conversation goes on");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    assert_eq!(
        answer["outcome"]["text"],
        "It may have run: I checked the cart."
    );
    // The cut run's call is in the history the model got, said to have maybe run, and the
    // page ran it once.
    let (_, request) = play.models.asked.last().expect("asked");
    assert!(request.to_string().contains("add_to_cart"), "{request:#}");
    assert_eq!(play.pages[&4].ran.len(), 1, "{:?}", play.pages[&4].ran);
    assert_eq!(play.pages[&4].cart, 2);
}

#[test]
fn a_crawl_lists_each_page_once_ready_and_the_next_one_names_what_changed() {
    let mut play = shop(2);
    // Each page parses (one listing), then registers its tools (one more).
    play.loading = (1, 1);
    let sitemap = ["/", "/mugs", "/about"]
        .map(|path| format!("<url><loc>https://shop.test{path}</loc></url>"))
        .concat();
    play.pages.get_mut(&4).unwrap().sitemap = format!("<urlset>{sitemap}</urlset>");
    let request = json!({"tabId": 4, "sitemap": "/sitemap.xml"});
    let crawl = |play: &mut Play| {
        let request = CrawlRequest::parse(&request).expect("a request");
        play.crawl(request).expect("a crawl")
    };
    let first = crawl(&mut play);
    let names = |page: &Value| -> Vec<String> {
        let tools = page["tools"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<String> = (tools.iter())
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names
    };
    let pages = first["pages"].as_array().expect("pages");
    let seen: Vec<(&str, Vec<String>)> = (pages.iter())
        .map(|p| (p["url"].as_str().unwrap_or_default(), names(p)))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "https://shop.test/",
                vec!["add_to_cart".into(), "empty_cart".into()]
            ),
            ("https://shop.test/mugs", vec!["add_to_cart".into()]),
            ("https://shop.test/about", vec![]),
        ],
        "{first:#}"
    );
    // The tab went back to the page it showed.
    assert_eq!(play.pages[&4].url, "https://shop.test/");
    // The shop adds a tool on every page: the next crawl names it.
    let checkout =
        json!({"name": "checkout", "description": "Pays.", "inputSchema": {"type": "object"}});
    play.pages.get_mut(&4).unwrap().extra.push(checkout);
    let second = crawl(&mut play);
    let changed = second["diff"]["pages"].as_array().expect("changed pages");
    assert_eq!(changed.len(), 3, "{:#}", second["diff"]);
    assert!(
        changed.iter().all(|p| p["added"] == json!(["checkout"])),
        "{changed:#?}"
    );
}

#[test]
fn crawls_of_five_heavy_origins_keep_within_their_budgets_the_oldest_forgotten() {
    use crate::core::crawl::{kept_key, MAX_CRAWLS_KEPT_BYTES, MAX_CRAWL_KEPT_BYTES};
    use crate::core::storage::{stored_size, CRAWLED};
    let mut play = shop(2);
    // 100 pages at URLs of 1,900 `<` (six bytes each to the browser): 1.1 MB an origin.
    let paths: Vec<String> = (0..100)
        .map(|i| format!("/p/{i:03}/{}", "<".repeat(1_900)))
        .collect();
    let request = json!({"tabId": 4, "urls": paths, "limit": 100});
    let origins: Vec<String> = ["a", "b", "c", "d", "e"]
        .map(|o| format!("https://{o}.test"))
        .into();
    for origin in &origins {
        play.pages.get_mut(&4).unwrap().url = format!("{origin}/");
        let answer = play
            .crawl(CrawlRequest::parse(&request).expect("a request"))
            .expect("a crawl");
        assert_eq!(answer["totals"]["pages"], 100, "{answer:#}");
        assert!(answer["keptNote"].as_str().is_some(), "{answer:#}");
        // Each origin within its budget, every crawl and the index within theirs.
        let kept = &play.local[&kept_key(origin)];
        assert!(stored_size(&kept_key(origin), kept) <= MAX_CRAWL_KEPT_BYTES);
        let all: usize = play.local.iter().map(|(k, v)| stored_size(k, v)).sum();
        assert!(
            all <= MAX_CRAWLS_KEPT_BYTES,
            "{all} bytes kept by the crawls"
        );
    }
    // The newest origins are kept, the oldest forgotten.
    let index: Vec<String> = (play.local[CRAWLED].as_array().unwrap().iter())
        .map(|e| e["origin"].as_str().unwrap().to_owned())
        .collect();
    assert!(index.len() >= 2 && index.len() < 5, "{index:?}");
    let newest: Vec<String> = origins.iter().rev().cloned().collect();
    assert_eq!(index, newest[..index.len()]);
    assert_eq!(
        play.local.len(),
        index.len() + 1,
        "the index and each kept crawl"
    );
    // A forgotten origin crawled again: its first crawl once more, and it pushes out the oldest.
    play.pages.get_mut(&4).unwrap().url = "https://a.test/".into();
    let again = play.crawl(CrawlRequest::parse(&request).unwrap()).unwrap();
    assert_eq!(again["diff"], Value::Null);
    assert!(play.local.contains_key(&kept_key("https://a.test")));
    assert!(!play.local.contains_key(&kept_key(&index[index.len() - 1])));
    // And every kept crawl can be cleared.
    let cleared = play
        .crawl(CrawlRequest::parse(&json!({"clear": true})).unwrap())
        .unwrap();
    assert_eq!(
        cleared["cleared"].as_array().map(Vec::len),
        Some(index.len())
    );
    assert!(play.local.is_empty());
}

/// An audit of tab 4 probing every tool, acting ones too.
fn audit() -> AuditRequest {
    let request = json!({"tabId": 4, "probe": true, "allowActing": true});
    AuditRequest::parse(&request).expect("an audit request")
}

#[test]
fn a_probe_that_navigates_has_the_page_loaded_again_and_the_other_tools_probed_there() {
    let mut play = shop(2);
    // The page parses (one listing) and registers its tools (one more) after each load.
    play.loading = (1, 1);
    let about = json!({"name": "open_about", "description": "Opens the about page.",
        "inputSchema": {"type": "object"}});
    play.pages.get_mut(&4).unwrap().extra.push(about);
    let answer = play.audit(audit()).expect("an audit");
    let findings = answer["findings"].as_array().cloned().unwrap_or_default();
    let rules: Vec<(&str, &str)> = (findings.iter())
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or(""),
                f["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        rules.contains(&("probe-navigates", "open_about")),
        "{answer:#}"
    );
    // Back on the page the audit started on, loaded again, where the other tools were probed.
    let page = &play.pages[&4];
    assert_eq!(page.url, "https://shop.test/");
    assert_eq!(page.loads, 3, "to the about page, then back");
    let ran: Vec<&str> = page.ran.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(ran.first(), Some(&"open_about"), "{ran:?}");
    assert!(
        ran.contains(&"add_to_cart") && ran.contains(&"empty_cart"),
        "{ran:?}"
    );
    assert!(
        !rules.iter().any(|(rule, _)| *rule == "probe-skipped"),
        "{rules:?}"
    );
}

#[test]
fn without_a_page_to_load_again_the_tools_left_are_said_skipped() {
    let mut play = shop(2);
    let about = json!({"name": "open_about", "description": "Opens the about page.",
        "inputSchema": {"type": "object"}});
    play.pages.get_mut(&4).unwrap().extra.push(about);
    // The audit asks for open_about first, then the cart's tools; the page cannot be loaded
    // again (its tab is gone once the call navigated it).
    play.lose_tab_on_reload = true;
    let answer = play.audit(audit()).expect("an audit");
    let findings = answer["findings"].as_array().cloned().unwrap_or_default();
    let skipped: Vec<&str> = (findings.iter())
        .filter(|f| f["rule"] == "probe-skipped")
        .filter_map(|f| f["tool"].as_str())
        .collect();
    assert!(
        skipped.contains(&"add_to_cart") && skipped.contains(&"empty_cart"),
        "{answer:#}"
    );
    let ran: Vec<&str> = play.pages[&4]
        .ran
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(ran, ["open_about"]);
}

#[test]
fn a_run_replayed_names_each_call_whose_answer_or_availability_changed() {
    let mut play = shop(2);
    let answer = play.run(&mugs_run()).expect("the run starts");
    let run_id = answer["runId"].as_str().expect("its id").to_owned();
    let entry = |diff: &Value| diff["calls"][0].clone();
    // Played again on the page as it is: the cart holds the run's two mugs already.
    let diff = play.replay_diff(4, &run_id).expect("a diff");
    let first = entry(&diff);
    assert_eq!(first["change"], "result", "{diff:#}");
    assert_eq!(first["before"]["result"], json!({"cart": 2}));
    assert_eq!(first["now"]["result"], json!({"cart": 4}));
    // On the page loaded again, the same answer: nothing changed.
    play.reload(4).expect("reloaded");
    play.pages.get_mut(&4).unwrap().loading_listings = 0;
    let diff = play.replay_diff(4, &run_id).expect("a diff");
    assert_eq!(entry(&diff)["changed"], false, "{diff:#}");
    // On a page without the tool: its call is no longer offered, and not made.
    let ran = play.pages[&4].ran.len();
    play.pages.get_mut(&4).unwrap().url = "https://shop.test/about".into();
    let diff = play.replay_diff(4, &run_id).expect("a diff");
    assert_eq!(entry(&diff)["change"], "availability", "{diff:#}");
    assert_eq!(play.pages[&4].ran.len(), ran, "the page ran nothing more");
}

mod judge;
mod origins;
mod streams;
