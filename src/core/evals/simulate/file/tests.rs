//! Simulation files: Google's examples read and written back, unknown fields kept, a bad
//! case named with its field.

use serde_json::json;

use super::*;

const HOTEL: &str =
    include_str!("../../../../../tests/fixtures/simulate/hotel-chain.simulations.json");
const PIZZA: &str =
    include_str!("../../../../../tests/fixtures/simulate/pizza-maker.simulations.json");
const SHOPPING: &str =
    include_str!("../../../../../tests/fixtures/simulate/shopping.simulations.json");

#[test]
fn googles_example_files_load_and_write_back_unchanged() {
    for (name, text) in [("hotel", HOTEL), ("pizza", PIZZA), ("shopping", SHOPPING)] {
        let cases = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!cases.is_empty(), "{name}");
        let written = write(&cases);
        let (back, read): (Value, Value) = (
            serde_json::from_str(&written).unwrap(),
            serde_json::from_str(text).unwrap(),
        );
        assert_eq!(back, read, "{name}: the same JSON");
        // Key for key in the same order, so a diff of the two shows nothing but layout.
        assert_eq!(
            back.to_string(),
            read.to_string(),
            "{name}: keys in their order"
        );
    }
    let pizza = parse(PIZZA).unwrap();
    assert!(matches!(pizza[0].user, UserSide::Scenario { max_turns, .. } if max_turns > 1));
    assert!(pizza.iter().any(|c| !c.setup.is_empty()));
    assert!(parse(SHOPPING)
        .unwrap()
        .iter()
        .all(|c| !c.assertions.is_empty()));
}

#[test]
fn a_field_this_host_does_not_know_is_kept_and_defaults_are_resolved() {
    let text =
        r#"[{"userMessage": "  hi  ", "successCriteria": "greeted", "x-owner": {"team": 7}}]"#;
    let cases = parse(text).unwrap();
    assert_eq!(cases[0].name, "Simulation 1");
    assert_eq!(cases[0].user, UserSide::Message("hi".into()));
    assert_eq!(cases[0].user.max_turns(), 1);
    let back: Value = serde_json::from_str(&write(&cases)).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
}

#[test]
fn a_bad_case_is_an_error_naming_the_case_and_the_field() {
    let bad = [
        (
            json!([{"userScenario": "a", "userMessage": "b", "successCriteria": "c"}]),
            "exactly one of `userScenario` and `userMessage`",
        ),
        (
            json!([{"userMessage": "b", "maxTurns": 2, "successCriteria": "c"}]),
            "`maxTurns` goes with `userScenario`",
        ),
        (
            json!([{"name": "lonely", "userMessage": "b"}]),
            "case 1 (lonely): a case needs `assertions`, `successCriteria`, or both",
        ),
        (
            json!([{"userMessage": "b", "successCriteria": ["a", "b"]}]),
            "one prose string",
        ),
        (
            json!([{"userMessage": "b", "assertions": [{"type": "dom", "selector": "p", "expect": {"text": {"$near": 1}}}]}]),
            "`$near` is not a matcher key",
        ),
        (
            json!([{"userMessage": "b", "assertions": [{"type": "dom", "selector": "p", "expect": {"exists": true, "count": 1}}]}]),
            "exactly one of exists",
        ),
        (
            json!([{"userMessage": "b", "assertions": [{"type": "dom", "selector": "p", "expect": {"text": {"$pattern": "(a"}}}]}]),
            "`$pattern`",
        ),
        (
            json!([{"userMessage": "b", "assertions": []}]),
            "non-empty array",
        ),
        (
            json!([{"userMessage": "b", "successCriteria": "c", "setup": [{"functionName": "f"}]}]),
            "setup[0]: `arguments` of f must be an object",
        ),
        (
            json!([{"userMessage": "b", "successCriteria": "c", "maxDurationMs": 0}]),
            "`maxDurationMs`",
        ),
        (
            json!([{"name": "a", "userMessage": "b", "successCriteria": "c"}, {"name": "a", "userMessage": "b", "successCriteria": "c"}]),
            "cases 1 and 2 are both named \"a\"",
        ),
        (json!([]), "no case"),
        (json!({}), "an array"),
    ];
    for (file, want) in bad {
        let error = parse_value(&file).expect_err(&file.to_string());
        assert!(error.contains(want), "{file}: {error}");
    }
}
