use serde_json::{json, Value};

use super::*;

/// A pattern whose negative lookahead backtracks exponentially before it fails (so that the
/// value is valid): `(a|a)*\1b` (a backreference: the backtracking engine) against `n`
/// letters `a` and a `!`, about 2^n steps.
fn hostile(n: usize) -> (Value, Value) {
    let schema = json!({"type": "string", "pattern": "^(?!(a|a)*\\1b)"});
    (schema, json!(format!("{}!", "a".repeat(n))))
}

#[test]
fn a_backtracking_pattern_stops_at_the_bound_with_an_error_that_says_so() {
    // 2^14 ≈ 16,000 steps: within fancy-regex's default of 1,000,000, past this host's bound.
    let (schema, value) = hostile(14);
    let default = jsonschema::validator_for(&schema).unwrap();
    assert!(default.is_valid(&value), "the engine's default lets it run");
    let bounded = validator_for(&schema).unwrap();
    let errors: Vec<String> = bounded.iter_errors(&value).map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_lowercase().contains("backtrack"), "{errors:?}");
    let error = bounded.iter_errors(&value).next().unwrap();
    assert!(error_text(&error).contains("pattern_backtrack_limit"));
    // A short value still matches as written.
    assert!(bounded.is_valid(&json!("aaaa")));
    assert!(!bounded.is_valid(&json!("aaab")));
}

#[test]
fn patterns_without_lookaround_are_not_bounded_by_backtracking() {
    let schema = json!({"type": "string", "pattern": "^(a|a)*$"});
    let bounded = validator_for(&schema).unwrap();
    assert!(bounded.is_valid(&json!("a".repeat(5_000))));
}

#[test]
fn a_schema_with_too_many_patterns_is_not_used() {
    let properties: serde_json::Map<String, Value> = (0..=MAX_SCHEMA_PATTERNS)
        .map(|i| {
            (
                format!("p{i}"),
                json!({"type": "string", "pattern": "^(?=a)"}),
            )
        })
        .collect();
    let schema = json!({"type": "object", "properties": properties});
    let refused = validator_for(&schema).unwrap_err();
    assert!(refused.contains("max_schema_patterns"), "{refused}");
    let keys = json!({"patternProperties": {"^a": {}, "^b": {"pattern": "c"}}});
    assert_eq!(count_patterns(&keys, 100), 3);
    assert_eq!(count_patterns(&schema, 10), 10, "the walk stops at `most`");
}

#[test]
fn patterns_are_read_as_a_browser_reads_them() {
    use super::ecma_pattern;
    // Google's webmcp-evals example (events/schema.json): legal in a browser's RegExp.
    let email = r"^[\w-\.]+@([\w-]+\.)+[\w-]{2,4}$";
    assert_eq!(
        ecma_pattern(email).as_deref(),
        Some(r"^[\w\-\.]+@([\w\-]+\.)+[\w\-]{2,4}$")
    );
    let validator = validator_for(&json!({"type": "string", "pattern": email}))
        .expect("a pattern a browser takes compiles");
    assert!(validator.is_valid(&json!("ann.lee@mail.example.com")));
    assert!(validator.is_valid(&json!("a-b@x-y.org")));
    assert!(!validator.is_valid(&json!("not an address")));
    // Classes Rust reads otherwise: any, none, a `[`, set operators, a backspace.
    assert_eq!(ecma_pattern("^[^]*$").as_deref(), Some(r"^[\s\S]*$"));
    assert_eq!(ecma_pattern("a[]b").as_deref(), Some(r"a[^\s\S]b"));
    assert_eq!(ecma_pattern("[[a]").as_deref(), Some(r"[\[a]"));
    assert_eq!(ecma_pattern("[a&&b~~c]").as_deref(), Some(r"[a\&\&b\~\~c]"));
    assert_eq!(ecma_pattern(r"[\b]").as_deref(), Some(r"[\x08]"));
    assert_eq!(ecma_pattern(r"[\d-z]").as_deref(), Some(r"[\d\-z]"));
    // What both read alike is left as it is: ranges, escapes outside classes.
    for same in [
        r"^[a-z0-9_-]+$",
        r"\[not a class\]",
        r"^\d{3}-\d{4}$",
        r"[\]x]",
        "[A-Z]",
    ] {
        assert_eq!(ecma_pattern(same), None, "{same}");
    }
    let any = validator_for(&json!({"type": "string", "pattern": "^[^]{2}$"})).unwrap();
    assert!(any.is_valid(&json!("a\n")));
    assert!(!any.is_valid(&json!("abc")));
    // patternProperties keys too, and nested schemas.
    let nested = json!({"type": "object", "properties": {"tags": {"type": "object",
        "patternProperties": {r"^[\w-]+$": {"type": "string"}}, "additionalProperties": false}}});
    let validator = validator_for(&nested).expect("compiles");
    assert!(validator.is_valid(&json!({"tags": {"a-b": "x"}})));
    assert!(!validator.is_valid(&json!({"tags": {"a b": "x"}})));
}
