use serde_json::json;

use super::matcher::matches;
use super::*;

fn call(name: &str, args: Value) -> ActualCall {
    ActualCall {
        name: name.into(),
        args,
        result: None,
    }
}

#[test]
fn arguments_match_as_subsets_arrays_strictly_and_constraints_as_declared() {
    let m = |e: Value, a: Value| matches(&e, &a).expect("usable");
    assert!(
        m(
            json!({"query": "mugs"}),
            json!({"query": "mugs", "page": 2})
        ),
        "extra keys allowed"
    );
    assert!(!m(
        json!({"query": "mugs", "page": 1}),
        json!({"query": "mugs"})
    ));
    assert!(
        m(json!({}), json!({"anything": true})),
        "an empty object constrains nothing"
    );
    assert!(!m(json!([1, 2]), json!([1, 2, 3])), "arrays are strict");
    assert!(m(json!([{"$gt": 0}, "b"]), json!([5, "b"])));
    assert!(m(json!(2), json!(2.0)), "numbers by value");
    assert!(m(
        json!({"size": {"$pattern": "(?i)^small$"}}),
        json!({"size": "SMALL"})
    ));
    assert!(!m(
        json!({"size": {"$pattern": "^small$"}}),
        json!({"size": "SMALL"})
    ));
    assert!(
        m(json!({"$pattern": "(?gu)^a"}), json!("abc")),
        "flags that change no match are accepted"
    );
    assert!(m(json!({"$contains": "shoe"}), json!("red shoes")));
    assert!(!m(json!({"$contains": "shoe"}), json!(["shoe"])));
    assert!(m(json!({"$gte": 2, "$lt": 5}), json!(2)));
    assert!(
        !m(json!({"$gt": 2}), json!("3")),
        "a number constraint takes numbers only"
    );
    for (t, yes, no) in [
        ("array", json!([]), json!({})),
        ("object", json!({}), json!([])),
        ("null", json!(null), json!(0)),
        ("number", json!(1.5), json!("1")),
        ("string", json!(""), json!(null)),
        ("boolean", json!(false), json!(0)),
    ] {
        assert!(m(json!({"$type": t}), yes.clone()), "{t} {yes}");
        assert!(!m(json!({"$type": t}), no.clone()), "{t} {no}");
    }
    assert!(
        !m(json!({"$type": "integer"}), json!(1)),
        "an unknown type matches nothing, as typeof does"
    );
    assert!(m(json!({"id": {"$any": true}}), json!({"id": 7})));
    assert!(
        !m(json!({"id": {"$any": true}}), json!({})),
        "a key that must be present"
    );
    let error =
        matches(&json!({"$pattern": "(?x)a"}), &json!("a")).expect_err("an unsupported flag");
    assert!(
        error.contains("unsupported inline flag \"(?x)\""),
        "{error}"
    );
    assert!(
        matches(&json!({"$pattern": "(?=a)"}), &json!("a")).is_err(),
        "lookaround is an error, not a silent no"
    );
}

#[test]
fn eval_files_are_read_written_and_refused_with_their_case_named() {
    let text = r#"[
      {"name": "Small pesto", "messages": [{"role": "user", "type": "message", "content": "A small pesto pizza."},
        {"role": "model", "type": "functioncall", "name": "get_menu", "arguments": {}},
        {"role": "user", "type": "functionresponse", "name": "get_menu", "response": {"styles": ["Pesto"]}}],
       "expectedCall": [{"unordered": [{"functionName": "set_style", "arguments": {"style": "Pesto"}},
         {"functionName": "set_size", "arguments": {"size": {"$pattern": "(?i)small"}}}]},
         {"functionName": "share", "optional": true, "mockOutput": {"shared": true}},
         {"ordered": [{"functionName": "checkout", "result": {"$contains": "ok"}}]}]},
      {"messages": [{"role": "user", "type": "message", "content": "Hello"}], "expectedCall": null}
    ]"#;
    let cases = parse_evals(text).expect("a file");
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[1].expected_call, None);
    assert_eq!(parse_evals(&write_evals(&cases)).expect("read back"), cases);
    assert!(
        write_evals(&cases).contains("\"mockOutput\""),
        "nothing written is lost"
    );
    for (bad, says) in [
        ("{}", "evals: the file must be an array of cases"),
        (
            r#"[{"messages": []}]"#,
            "evals: case 0: `expectedCall` is required",
        ),
        (
            r#"[{"name": "x", "messages": [{"type": "shout"}], "expectedCall": null}]"#,
            "evals: case 0 (x): ",
        ),
    ] {
        let error = parse_evals(bad).expect_err(bad);
        assert!(error.starts_with(says), "{error}");
    }
    let many: Vec<Value> = (0..16)
        .map(|i| json!({"functionName": format!("t{i}")}))
        .collect();
    let big = json!([{"messages": [], "expectedCall": [{"unordered": many}]}]).to_string();
    assert!(parse_evals(&big)
        .expect_err("too many")
        .contains("at most 15"));
}

#[test]
fn trajectories_match_in_order_in_any_order_with_optional_calls_and_nothing_else() {
    let expected: Vec<Expected> = serde_json::from_value(json!([
        {"unordered": [
            {"functionName": "add_topping", "arguments": {"topping": "pepper"}},
            {"functionName": "add_topping", "arguments": {"topping": {"$type": "string"}}},
            {"functionName": "set_size", "arguments": {"size": "Small"}}]},
        {"functionName": "get_summary", "optional": true},
        {"functionName": "share"}
    ]))
    .expect("nodes");
    let ok = |calls: &[ActualCall]| trajectory_matches(Some(&expected), calls).expect("usable");
    let (pepper, onion, size, share) = (
        call("add_topping", json!({"topping": "pepper"})),
        call("add_topping", json!({"topping": "onion"})),
        call("set_size", json!({"size": "Small"})),
        call("share", json!({})),
    );
    // The loose topping must not take the pepper the strict one needs: any assignment counts.
    assert!(ok(&[
        pepper.clone(),
        onion.clone(),
        size.clone(),
        share.clone()
    ]));
    assert!(ok(&[
        onion.clone(),
        size.clone(),
        pepper.clone(),
        share.clone()
    ]));
    assert!(ok(&[
        size.clone(),
        pepper.clone(),
        onion.clone(),
        call("get_summary", json!({})),
        share.clone()
    ]));
    assert!(
        !ok(&[pepper.clone(), onion.clone(), size.clone()]),
        "share is missing"
    );
    assert!(
        !ok(&[
            pepper.clone(),
            onion.clone(),
            size.clone(),
            share.clone(),
            share.clone()
        ]),
        "an extra call"
    );
    assert!(
        !ok(&[share.clone(), pepper.clone(), onion.clone(), size.clone()]),
        "out of order"
    );
    assert!(
        !ok(&[onion.clone(), onion.clone(), size.clone(), share.clone()]),
        "no pepper"
    );
    assert!(trajectory_matches(None, &[]).expect("usable"));
    assert!(
        !trajectory_matches(None, std::slice::from_ref(&share)).expect("usable"),
        "null expects no call"
    );
    // A result constraint needs the call's result.
    let checkout: Vec<Expected> = serde_json::from_value(
        json!([{"functionName": "checkout", "result": {"total": {"$lte": 20}}}]),
    )
    .expect("nodes");
    let mut done = call("checkout", json!({}));
    assert!(
        !trajectory_matches(Some(&checkout), &[done.clone()]).expect("usable"),
        "no result"
    );
    done.result = Some(json!({"total": 18.5, "currency": "EUR"}));
    assert!(trajectory_matches(Some(&checkout), &[done]).expect("usable"));
}

#[test]
fn an_answer_file_with_markup_for_a_count_is_refused_and_never_written() {
    use super::report::eval_report;
    let markup = "<meta http-equiv=\"refresh\" content=\"0;url=https://attacker.test\">";
    let answer = json!({"mode": "smoke", "results": [], "testCount": markup, "passCount": 0});
    let refused = eval_report(&json!({"report": answer, "format": "html"})).unwrap_err();
    assert!(
        refused.contains("`report.testCount` must be a whole number"),
        "{refused}"
    );
    let runs = json!({"mode": "agent", "results": [], "models": {"m": {"runs": markup}}});
    assert!(eval_report(&json!({"report": runs, "format": "html"})).is_err());
    let fine = json!({"mode": "smoke", "results": [], "testCount": 3, "passCount": 2, "failCount": 1, "errorCount": 0});
    let html = eval_report(&json!({"report": fine, "format": "html"})).unwrap();
    assert!(html.as_str().unwrap().contains("<b>3</b> results"));
}
