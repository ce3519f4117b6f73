use super::*;
use serde_json::json;

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

/// What Chrome's dialog keeps of a question: fewer lines than it drops, none rewrapped.
fn fits_the_dialog(text: &str) {
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        lines.len() <= CONFIRM_ROWS,
        "{} lines:\n{text}",
        lines.len()
    );
    for line in lines {
        assert!(width(line) < CONFIRM_COLUMNS, "too wide: {line}");
    }
    assert!(text.ends_with("\n\nAllow it?"));
}

#[test]
fn questions_name_what_runs_where() {
    let a = args(json!({"a": 2}));
    assert_eq!(
        mcp_tool("own", "delete", &a).unwrap(),
        "WebMCP Host\n\nThe agent wants to run “delete” of the MCP server own with:\n{\n  \"a\": 2\n}\n\nAllow it?"
    );
    assert_eq!(
        exposed_tool("https://a.example", "own", "delete", &a).unwrap(),
        "WebMCP Host\n\nThis page (https://a.example) wants to run “delete” of the MCP server own\nwith:\n{\n  \"a\": 2\n}\n\nAllow it?"
    );
    assert_eq!(
        page_tool("buy", "https://shop.test", &Map::new(), false).unwrap(),
        "WebMCP Host\n\nThe agent wants to run “buy” on https://shop.test with:\n{}\n\nAllow it?"
    );
    // A tool asked about only because its page's polyfill says nothing of what acts: said so.
    let why = page_tool("remove_topping", "https://pizza.test", &Map::new(), true).unwrap();
    assert!(
        why.replace('\n', " ")
            .contains("(asked because this page's WebMCP polyfill does not say which tools act)"),
        "{why}"
    );
    assert!(
        why.lines().all(|l| l.chars().count() < CONFIRM_COLUMNS),
        "{why}"
    );
}

#[test]
fn a_long_first_value_cannot_push_the_others_out_of_view() {
    let a = args(json!({"note": "x".repeat(700), "payee": "attacker", "amount": 5}));
    let text = page_tool("send_payment", "https://shop.test", &a, false).unwrap();
    fits_the_dialog(&text);
    let lines: Vec<&str> = text.lines().collect();
    let note = lines
        .iter()
        .find(|l| l.starts_with("  \"note\": "))
        .unwrap();
    let shown = note.matches('x').count();
    assert!(
        note.ends_with(&format!("\"… {} more characters,", 700 - shown)),
        "{note}"
    );
    assert!(shown > 20, "{note}");
    assert!(lines.contains(&"  \"payee\": \"attacker\","));
    assert!(lines.contains(&"  \"amount\": 5"));
}

#[test]
fn a_value_that_fits_exactly_is_whole_and_one_more_character_is_counted() {
    // `  "k": ` is 7 wide: a string of WIDTH - 9 characters fits with its quotes.
    let fits = "y".repeat(WIDTH - 9);
    let text = mcp_tool("s", "t", &args(json!({"k": fits}))).unwrap();
    assert!(text.contains(&format!("  \"k\": \"{fits}\"\n")), "{text}");
    let over = "y".repeat(WIDTH - 8);
    let text = mcp_tool("s", "t", &args(json!({"k": over}))).unwrap();
    fits_the_dialog(&text);
    assert!(text.contains("more characters\n}"), "{text}");
    let one = args(json!({"k": format!("{}z", "y".repeat(49))}));
    let long_key = args(json!({"a_key_long_enough_to_leave_little_room_for_it": one["k"]}));
    let text = mcp_tool("s", "t", &long_key).unwrap();
    fits_the_dialog(&text);
    assert!(
        text.contains("more characters\n}") || text.contains("yz\"\n}"),
        "{text}"
    );
}

#[test]
fn hiding_characters_are_escaped_everywhere() {
    let a = args(json!({"payee": "bob\u{202E}kcatta", "note": "a\u{2028}b\u{200B}\n\"q\\"}));
    let text = page_tool("pay\u{2066}", "https://a.example\u{200F}", &a, false).unwrap();
    fits_the_dialog(&text);
    for hidden in ['\u{202E}', '\u{2028}', '\u{200B}', '\u{2066}', '\u{200F}'] {
        assert!(!text.contains(hidden), "{hidden:?} in {text}");
    }
    assert!(text.contains("\"payee\": \"bob\\u{202E}kcatta\""), "{text}");
    assert!(
        text.contains("\"note\": \"a\\u{2028}b\\u{200B}\\n\\\"q\\\\\""),
        "{text}"
    );
    assert!(text.contains("“pay\\u{2066}” on https://a.example\\u{200F} with"));
    let server = mcp_tool("own\u{2029}x", "t\u{0}", &Map::new()).unwrap();
    assert!(
        server.contains("“t\\u{0000}” of the MCP server own\\u{2029}x"),
        "{server}"
    );
    // A key is escaped too, and cannot close its quotes.
    let key = mcp_tool("s", "t", &args(json!({"a\": 1, \"b\u{202E}": 2}))).unwrap();
    assert!(key.contains("  \"a\\\": 1, \\\"b\\u{202E}\": 2"), "{key}");
}

#[test]
fn ordinary_text_is_shown_as_it_is() {
    let a = args(json!({"q": "Grüße, 東京 — e\u{301} 👋🏽 ok"}));
    let text = mcp_tool("s", "t", &a).unwrap();
    assert!(
        text.contains("\"q\": \"Grüße, 東京 — e\u{301} 👋🏽 ok\""),
        "{text}"
    );
    // Stacked marks beyond two are escaped.
    let zalgo = mcp_tool(
        "s",
        "t",
        &args(json!({"q": "a\u{301}\u{302}\u{303}\u{304}"})),
    )
    .unwrap();
    assert!(
        zalgo.contains("\"a\u{301}\u{302}\\u{0303}\\u{0304}\""),
        "{zalgo}"
    );
}

#[test]
fn nested_values_show_every_key() {
    let a = args(
        json!({"details": {"note": "n".repeat(300), "payee": "attacker"}, "tags": ["a", 1, [], {}]}),
    );
    let text = mcp_tool("s", "t", &a).unwrap();
    fits_the_dialog(&text);
    assert!(
        text.contains("    \"payee\": \"attacker\"\n  },\n"),
        "{text}"
    );
    assert!(
        text.contains("  \"tags\": [\n    \"a\",\n    1,\n    [],\n    {}\n  ]\n}"),
        "{text}"
    );
}

#[test]
fn a_call_that_cannot_be_shown_is_not_asked_about() {
    let many: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
    let error = page_tool("t", "https://a.example", &many, false).unwrap_err();
    assert!(error.starts_with("not run: its arguments cannot all be shown to the person for confirmation (they need more than"), "{error}");
    // Deep nesting.
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!({ "a": deep });
    }
    assert!(mcp_tool("s", "t", &args(deep)).is_err());
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!([deep]);
    }
    assert!(mcp_tool("s", "t", &args(json!({ "a": deep }))).is_err());
    // A key longer than a line.
    let key = args(json!({ "k".repeat(WIDTH): 1 }));
    let error = mcp_tool("s", "t", &key).unwrap_err();
    assert!(
        error.contains("an argument's name is longer than"),
        "{error}"
    );
    // A huge number of keys is refused without reading them all.
    let huge: Map<String, Value> = (0..100_000).map(|i| (format!("k{i}"), json!(i))).collect();
    assert!(exposed_tool("https://a.example", "s", "t", &huge).is_err());
}

#[test]
fn long_names_wrap_and_count_against_the_lines() {
    let name = "n".repeat(200);
    let text = mcp_tool("s", &name, &args(json!({"a": 1}))).unwrap();
    fits_the_dialog(&text);
    assert_eq!(
        text.matches('n').count()
            - "The agent wants to run  of the MCP server s with:"
                .matches('n')
                .count(),
        200
    );
    // Keys that need a line of their own still fit, their values below them.
    let key = "k".repeat(60);
    let text = mcp_tool("s", "t", &args(json!({ key.clone(): "v" }))).unwrap();
    fits_the_dialog(&text);
    assert!(
        text.contains(&format!("  \"{key}\":\n    \"v\"\n")),
        "{text}"
    );
    // A name too long for the dialog leaves no room for any argument.
    let error = mcp_tool("s", &"n".repeat(2_000), &Map::new()).unwrap_err();
    assert!(error.contains("lines left in a confirmation"), "{error}");
}

#[test]
fn every_question_fits_the_dialog() {
    let texts = [
        "",
        "short",
        &"w ".repeat(500),
        &"\u{202E}".repeat(300),
        &"👋".repeat(300),
        &"\"".repeat(300),
    ];
    for text in texts {
        for key in ["k", "a_fairly_long_key_name_of_thirty"] {
            let a = args(json!({ key: text, "b": [text, {"c": text}] }));
            for question in [
                page_tool("t", "https://a.example", &a, false),
                mcp_tool("s", "t", &a),
                exposed_tool("https://a.example", "s", "t", &a),
            ] {
                fits_the_dialog(&question.unwrap());
            }
        }
    }
}
