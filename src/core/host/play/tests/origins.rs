//! A suite on a site whose checkout takes the tab to a payment site of another origin, which
//! offers tools of the same names and shows its own cart: no later case (smoke, agent,
//! simulate), no later agent turn and no DOM read reaches the payment site; with `reload` the
//! later case starts on the shop's first page again.

use serde_json::{json, Value};

use super::super::model::{last, Said};
use super::super::page::ShopPage;
use super::*;
use crate::core::evals::plan::EvaluateRequest;
use crate::core::evals::simulate::SimulateRequest;

const SHOP: &str = "https://shop.test";
const PAY: &str = "https://pay.test";

/// What the suite says when the tab shows the payment site.
fn elsewhere() -> String {
    format!("the tab shows {PAY}, not {SHOP} where the suite began")
}

/// The shop, whose `checkout` takes the tab to the payment site; the payment site, whose own
/// cart holds 7 mugs; an agent that pays when asked to, adds two mugs otherwise; a user who
/// says `lines` in turn, and a judge who passes.
fn shop_and_pay(lines: &'static [&'static str]) -> Play {
    let mut play = Play::shop(&["agent", "user", "judge"]);
    let shop = play.pages.get_mut(&4).expect("the shop");
    let checkout = json!({"name": "checkout", "description": "Pays for the cart.",
        "inputSchema": {"type": "object"}});
    shop.extra.push(checkout);
    shop.links.push(("checkout".into(), format!("{PAY}/")));
    let mut pay = ShopPage::new(&format!("{PAY}/"));
    pay.cart = 7;
    play.elsewhere.insert(PAY.into(), pay);
    play.models.serve(
        "agent-1",
        Box::new(|request| {
            let last = last(request);
            match (last["role"].as_str(), last["content"].as_str()) {
                (Some("tool"), _) => Said::Text("Done.".into()),
                (_, Some(text)) if text.contains("Pay") => Said::Call("checkout".into(), json!({})),
                _ => Said::Call("add_to_cart".into(), json!({"id": "mug-1", "qty": 2})),
            }
        }),
    );
    let mut said = 0;
    play.models.serve(
        "user-1",
        Box::new(move |_| {
            said += 1;
            Said::Text(
                lines
                    .get(said - 1)
                    .unwrap_or(&"Bye.\n[[END_CONVERSATION]]")
                    .to_string(),
            )
        }),
    );
    play.models.serve(
        "judge-1",
        Box::new(|_| {
            // It quotes the checkout's result: the page it took the tab to.
            let evidence = [format!("checkout: {PAY}")];
            let verdict = json!({"passed": true, "reasoning": "Paid.", "evidence": evidence});
            Said::Call("submit_result".into(), verdict)
        }),
    );
    play
}

/// The payment site's page, wherever the tab is.
fn pay(play: &Play) -> &ShopPage {
    play.site(PAY).expect("the payment site")
}

/// Two eval cases: the first pays, the second adds two mugs.
fn pay_then_add() -> Value {
    json!([
        {"name": "pays", "messages": [{"role": "user", "type": "message", "content": "Pay for my cart."}],
         "expectedCall": [{"functionName": "checkout", "arguments": {}}]},
        {"name": "adds", "messages": [{"role": "user", "type": "message", "content": "Add two mugs."}],
         "expectedCall": [{"functionName": "add_to_cart", "arguments": {"id": "mug-1", "qty": 2}}]},
    ])
}

fn evaluation(mode: &str, extra: Value) -> EvaluateRequest {
    let mut request =
        json!({"tabId": 4, "evals": pay_then_add(), "mode": mode, "models": ["agent"]});
    for (k, v) in extra.as_object().expect("an object") {
        request[k] = v.clone();
    }
    EvaluateRequest::parse(&request).expect("a request")
}

#[test]
fn a_later_smoke_or_agent_case_calls_nothing_on_the_origin_a_case_took_the_tab_to() {
    for mode in ["smoke", "agent"] {
        let mut play = shop_and_pay(&[]);
        let answer = play.evaluate(evaluation(mode, json!({})));
        // The shop's checkout took the tab to the payment site, which ran nothing.
        assert_eq!(play.pages[&4].origin(), PAY, "{mode}");
        let shop = play.site(SHOP).expect("the shop");
        assert_eq!(shop.ran[0].0, "checkout", "{mode}");
        assert!(
            pay(&play).ran.is_empty(),
            "{mode}: the payment site ran {:?}",
            pay(&play).ran
        );
        let second = &answer["results"][1];
        assert_eq!(second["outcome"], "error", "{mode}: {second:#}");
        let reason = second["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(&elsewhere()), "{mode}: {reason}");
        if mode == "agent" {
            // The agent's model was asked for the first case's run only (its call, its end).
            assert_eq!(play.models.asked.len(), 2, "{mode}");
        }
    }
}

#[test]
fn with_reload_a_later_case_starts_on_the_suites_first_page_again() {
    for mode in ["smoke", "agent"] {
        let mut play = shop_and_pay(&[]);
        let answer = play.evaluate(evaluation(mode, json!({"reload": true})));
        let results = answer["results"].as_array().expect("results");
        assert_eq!(results[1]["outcome"], "pass", "{mode}: {:#}", results[1]);
        assert!(pay(&play).ran.is_empty(), "{mode}: {:?}", pay(&play).ran);
        let shop = play.site(SHOP).expect("the shop");
        assert_eq!(shop.ran.last().map(|r| r.0.as_str()), Some("add_to_cart"));
        assert_eq!(
            play.pages[&4].origin(),
            SHOP,
            "{mode}: the tab is back on the shop"
        );
    }
}

/// Simulations: the first case pays, the second adds two mugs (after emptying the cart, with
/// `setup`) and checks the cart.
fn pay_then_add_simulated(setup: bool) -> Value {
    let mut adds = json!({"name": "adds", "userMessage": "Add two mugs.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]});
    if setup {
        adds["setup"] = json!([{"functionName": "empty_cart", "arguments": {}}]);
    }
    json!([{"name": "pays", "userMessage": "Pay for my cart.", "successCriteria": "paid"}, adds])
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
fn a_later_simulation_calls_nothing_on_the_origin_a_case_took_the_tab_to() {
    for setup in [true, false] {
        let mut play = shop_and_pay(&[]);
        let answer = play.simulate(simulation(pay_then_add_simulated(setup), json!({})));
        assert_eq!(answer["results"][0]["outcome"], "pass", "{answer:#}");
        let second = &answer["results"][1];
        // Neither the setup call nor the agent's turn ran on the payment site, and its page was
        // not read.
        assert!(
            pay(&play).ran.is_empty(),
            "setup {setup}: {:?}",
            pay(&play).ran
        );
        assert_eq!(
            pay(&play).read,
            0,
            "setup {setup}: the payment site's DOM was read"
        );
        assert_eq!(second["outcome"], "error", "setup {setup}: {second:#}");
        let error = second["error"].as_str().unwrap_or_default();
        let step = match setup {
            true => "setup call 1 (empty_cart): ",
            false => "before the agent's turn 1, ",
        };
        assert!(error.contains(&format!("{step}{}", elsewhere())), "{error}");
        assert_eq!(second["assertionResults"], json!([]), "{second:#}");
    }
    // Asked to, the suite loads its first page again before each case: the second passes on
    // the shop.
    let mut play = shop_and_pay(&[]);
    let request = simulation(pay_then_add_simulated(true), json!({"reload": true}));
    let answer = play.simulate(request);
    assert_eq!(answer["results"][1]["outcome"], "pass", "{answer:#}");
    assert!(pay(&play).ran.is_empty());
}

#[test]
fn an_agent_turn_after_a_turn_that_left_the_origin_is_not_played() {
    let mut play = shop_and_pay(&["Pay for my cart.", "Add two mugs."]);
    let case = json!([{"name": "pays then adds", "userScenario": "You pay, then want mugs.",
        "maxTurns": 3, "successCriteria": "paid"}]);
    let answer = play.simulate(simulation(case, json!({})));
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "error", "{result:#}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("before the agent's turn 2, {}", elsewhere())),
        "{error}"
    );
    assert!(pay(&play).ran.is_empty(), "{:?}", pay(&play).ran);
    assert_eq!(
        result["conversation"]["turns"].as_array().map(Vec::len),
        Some(1)
    );
}

/// One simulation: the agent is asked `line`, and the cart's DOM checked.
fn one_turn(line: &str) -> SimulateRequest {
    let case = json!([{"name": "cart", "userMessage": line,
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]}]);
    simulation(case, json!({}))
}

/// No assertion result of `result` keeps a value read from a page.
fn no_values(result: &Value) -> bool {
    let results = result["assertionResults"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    results.iter().all(|r| r.get("actual").is_none())
}

#[test]
fn the_dom_of_a_page_on_another_origin_is_not_read() {
    // The agent's last turn took the tab to the payment site before the DOM assertions.
    let mut play = shop_and_pay(&[]);
    let answer = play.simulate(one_turn("Pay for my cart."));
    let result = &answer["results"][0];
    assert_eq!(
        pay(&play).read,
        0,
        "the payment site's DOM was read: {result:#}"
    );
    assert_eq!(result["outcome"], "error", "{result:#}");
    assert!(no_values(result), "{result:#}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("before the DOM assertions, {}", elsewhere())),
        "{error}"
    );
}

#[test]
fn the_dom_is_read_only_in_the_document_checked_before_the_reads() {
    // How many listings the shop answers in a case that passes: the last is the one before the
    // DOM reads.
    let mut play = shop_and_pay(&[]);
    let answer = play.simulate(one_turn("Add two mugs."));
    assert_eq!(answer["results"][0]["outcome"], "pass", "{answer:#}");
    assert_eq!(play.pages[&4].read, 1);
    let listings = play.pages[&4].listed;
    // The same case, the shop's own script taking the tab to the payment site right after
    // that listing: the reads, sent to the document checked, reach no page.
    let mut play = shop_and_pay(&[]);
    let shop = play.pages.get_mut(&4).expect("the shop");
    shop.moves = Some((listings, format!("{PAY}/")));
    let answer = play.simulate(one_turn("Add two mugs."));
    let result = &answer["results"][0];
    assert_eq!(play.pages[&4].origin(), PAY, "the tab moved");
    assert_eq!(
        pay(&play).read,
        0,
        "the payment site's DOM was read: {result:#}"
    );
    assert_eq!(play.site(SHOP).expect("the shop").read, 0);
    assert_eq!(result["outcome"], "error", "{result:#}");
    assert!(no_values(result), "{result:#}");
}

#[test]
fn a_call_goes_to_the_document_its_listing_found_on_the_suites_origin() {
    // Smoke and a simulation's setup: one call, of a tool the payment site offers too.
    let smoke = || {
        let case = json!([{"name": "adds", "messages": [],
            "expectedCall": [{"functionName": "add_to_cart", "arguments": {"id": "mug-1", "qty": 2}}]}]);
        let request = json!({"tabId": 4, "evals": case, "mode": "smoke"});
        EvaluateRequest::parse(&request).expect("a request")
    };
    let setup = || {
        let case = json!([{"name": "empties", "userMessage": "Hello.", "successCriteria": "greeted",
            "setup": [{"functionName": "empty_cart", "arguments": {}}]}]);
        simulation(case, json!({}))
    };
    let play_smoke = |play: &mut Play| play.evaluate(smoke())["results"][0].clone();
    let play_setup = |play: &mut Play| play.simulate(setup())["results"][0].clone();
    for (mode, suite) in [
        ("smoke", &play_smoke as &dyn Fn(&mut Play) -> Value),
        ("simulate", &play_setup),
    ] {
        let mut play = shop_and_pay(&[]);
        let result = suite(&mut play);
        assert_ne!(result["outcome"], "error", "{mode}: {result:#}");
        // The shop's own script takes the tab to the payment site right after its second
        // listing (the suite's start, then the listing before the call): the call, decided on
        // the shop's document, reaches no page.
        let mut play = shop_and_pay(&[]);
        let shop = play.pages.get_mut(&4).expect("the shop");
        shop.moves = Some((2, format!("{PAY}/")));
        let result = suite(&mut play);
        assert_eq!(play.pages[&4].origin(), PAY, "{mode}: the tab moved");
        let shop = play.site(SHOP).expect("the shop");
        assert!(shop.ran.is_empty(), "{mode}: the shop ran {:?}", shop.ran);
        assert!(
            pay(&play).ran.is_empty(),
            "{mode}: the payment site ran {:?}",
            pay(&play).ran
        );
        assert_eq!(result["outcome"], "error", "{mode}: {result:#}");
    }
}

#[test]
fn a_run_whose_tab_moved_after_its_check_is_offered_no_tool_of_the_other_origin() {
    // An agent-mode case that adds two mugs, and a simulation's one agent turn.
    let agent = || {
        let adds = json!([pay_then_add()[1].clone()]);
        let request = json!({"tabId": 4, "evals": adds, "mode": "agent", "models": ["agent"]});
        EvaluateRequest::parse(&request).expect("a request")
    };
    let play_agent = |play: &mut Play| play.evaluate(agent())["results"][0].clone();
    let play_turn =
        |play: &mut Play| play.simulate(one_turn("Add two mugs."))["results"][0].clone();
    for (mode, suite) in [
        ("agent", &play_agent as &dyn Fn(&mut Play) -> Value),
        ("simulate", &play_turn),
    ] {
        // The shop's own script takes the tab to the payment site right after its second
        // listing (the suite's start, then the check before the run): the run's own listing
        // finds the payment site, which offers an `add_to_cart` too.
        let mut play = shop_and_pay(&[]);
        let shop = play.pages.get_mut(&4).expect("the shop");
        shop.moves = Some((2, format!("{PAY}/")));
        let result = suite(&mut play);
        assert_eq!(play.pages[&4].origin(), PAY, "{mode}: the tab moved");
        assert!(
            pay(&play).ran.is_empty(),
            "{mode}: the payment site ran {:?}",
            pay(&play).ran
        );
        assert_ne!(result["outcome"], "pass", "{mode}: {result:#}");
    }
}
