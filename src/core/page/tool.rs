//! Page tools as plain data.
//!
//! A frame's content script reports the tools `document.modelContext.getTools()` gave it. That
//! report is untrusted: [`parse_tools`] turns it into [`PageTool`]s and a list of
//! [`ToolProblem`]s for the entries it had to skip. It never fails as a whole because of one bad
//! entry, and it never lets an entry through that breaks the rules of a tool (a name of
//! `[A-Za-z0-9_-]`, an object schema, sizes within [`Limits`]).
//!
//! Invariant: a tool's origin is its frame's, never the entry's word. An `origin` field in an
//! entry is ignored: a polyfill takes it from `globalThis.origin`, which page script can
//! replace, and a hand-written `document.modelContext` can name any site.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::limits::{
    cut_to, json_depth, Limits, MAX_FORM_ACTION_BYTES, MAX_FORM_TARGET_BYTES,
};
use crate::core::naming::{is_valid_name, kind};

/// A tool offered by one frame of a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageTool {
    /// The tool's name.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Its title, if it gave one.
    pub title: Option<String>,
    /// What it does.
    pub description: String,
    /// Always a JSON object.
    pub input_schema: Value,
    /// What its results are (Chrome 159's `outputSchema`): a JSON object schema, when it gave
    /// one. A result that breaks it is reported with the call's answer (`outputErrors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Its hints.
    pub annotations: Annotations,
    /// The origin of the frame that reported the tool (its content script's own location, as
    /// Chrome's frame URL agrees); never what the page said.
    pub origin: String,
    /// The frame whose content script reported the tool (0 is the top frame).
    pub frame_id: i64,
    /// The declarative form behind the tool (`<form toolname>`), as the frame's content
    /// script read it from the DOM; absent for an imperative tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<DeclarativeForm>,
    /// The polyfill that served the tool (`google-demo`, `mcp-b`, `unknown`); absent on a page
    /// whose WebMCP is the browser's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polyfill: Option<&'static str>,
}

/// A declarative tool's form, as the content script read it from the frame's DOM (the page's
/// script does not write it: entries' own `form` fields are replaced).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeForm {
    /// It has `toolautosubmit`: it is sent once filled in. Without, a call waits for someone to
    /// submit it in the page.
    pub auto_submit: bool,
    /// It sends its document elsewhere: a `target` other than `_self`, or an `action` other
    /// than the page's own URL. Unless the page answers the submit itself, the call's result
    /// comes from another document.
    pub navigates: bool,
    /// Where it submits (its `action`, resolved), at most [`MAX_FORM_ACTION_BYTES`].
    #[serde(skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// Its `target`, when it has one (at most [`MAX_FORM_TARGET_BYTES`]).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub target: String,
}

impl DeclarativeForm {
    /// The content script's `form` field: `None` when it is absent or not an object; strings
    /// beyond their caps are cut at a character boundary.
    pub fn parse(raw: Option<&Value>) -> Option<DeclarativeForm> {
        let map = raw?.as_object()?;
        let flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
        let text = |key: &str, cap: usize| -> String {
            let s = map.get(key).and_then(Value::as_str).unwrap_or_default();
            cut_to(s, cap).to_owned()
        };
        Some(DeclarativeForm {
            auto_submit: flag("autoSubmit"),
            navigates: flag("navigates"),
            action: text("action", MAX_FORM_ACTION_BYTES),
            target: text("target", MAX_FORM_TARGET_BYTES),
        })
    }
}

/// The hints WebMCP defines for page tools; each defaults to false.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// The tool only reads.
    pub read_only_hint: bool,
    /// The tool acts: each call is confirmed by the person.
    pub consequential_hint: bool,
    /// Its results are untrusted content (wrapped as data).
    pub untrusted_content_hint: bool,
    /// A tool for the site's developers (`debugging: true`): the person's side shows it only
    /// when asked for developer tools.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub debugging: bool,
    /// Set by the person's site policy (`allowActing`), never by the page (no entry's field
    /// is read for it): a consequential call of this tool is made without the in-page
    /// question, and its answer says so. Not listed.
    #[serde(skip)]
    pub allow_acting: bool,
    /// Set by the host, never read from an entry: the tool came from a polyfill that does not
    /// pass `consequentialHint` on (or one the host does not know), so it counts as
    /// consequential although the page may never have said so ("hints unknown").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hints_unknown: bool,
}

/// An entry of a frame's report that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolProblem {
    /// The frame that reported it.
    pub frame_id: i64,
    /// The tool's name when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Why it was skipped.
    pub message: String,
}

/// The tools of one frame and the entries that were skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FrameTools {
    /// The valid tools.
    pub tools: Vec<PageTool>,
    /// What was skipped, and why.
    pub problems: Vec<ToolProblem>,
}

impl FrameTools {
    /// For a source that cannot carry `consequentialHint` (a polyfilled page:
    /// `@mcp-b/webmcp-polyfill` drops it, and a page's own `document.modelContext` is not held
    /// to it): every tool that does not say `readOnlyHint` counts as consequential, so each of
    /// its calls is confirmed, and is marked `hints_unknown` where the page did not say it.
    /// Hints only tighten.
    pub fn confirm_unless_read_only(&mut self) {
        for tool in &mut self.tools {
            let hints = &mut tool.annotations;
            if !hints.read_only_hint && !hints.consequential_hint {
                hints.consequential_hint = true;
                hints.hints_unknown = true;
            }
        }
    }
}

/// Parses the `tools` array of a frame's report. `origin` is the frame's own origin, which
/// every tool gets (an entry's own `origin` field is ignored).
pub fn parse_tools(entries: &[Value], frame_id: i64, origin: &str, limits: &Limits) -> FrameTools {
    parse_owned_tools(entries.to_vec(), frame_id, origin, limits)
}

/// [`parse_tools`] on entries it may take apart: each tool's strings and schema are moved, not
/// copied (a frame's report of hundreds of tools is parsed once, on every listing).
pub fn parse_owned_tools(
    entries: Vec<Value>,
    frame_id: i64,
    origin: &str,
    limits: &Limits,
) -> FrameTools {
    let mut out = FrameTools::default();
    let problem = |tool: Option<&str>, message: String| ToolProblem {
        frame_id,
        tool: tool.map(str::to_owned),
        message,
    };
    if entries.len() > limits.max_tools_per_frame {
        out.problems.push(problem(
            None,
            format!(
                "the frame offers {} tools, over the cap of {} (max_tools_per_frame); \
                 only the first {} are used",
                entries.len(),
                limits.max_tools_per_frame,
                limits.max_tools_per_frame
            ),
        ));
    }
    for entry in entries.into_iter().take(limits.max_tools_per_frame) {
        match parse_one(entry, frame_id, origin, limits) {
            Ok(tool) => {
                if out.tools.iter().any(|t| t.name == tool.name) {
                    out.problems.push(problem(
                        Some(&tool.name),
                        "the frame reported this name twice; the second entry is skipped".into(),
                    ));
                } else {
                    out.tools.push(tool);
                }
            }
            Err((name, message)) => out.problems.push(problem(name.as_deref(), message)),
        }
    }
    out
}

type EntryError = (Option<String>, String);

fn parse_one(
    entry: Value,
    frame_id: i64,
    origin: &str,
    limits: &Limits,
) -> Result<PageTool, EntryError> {
    let mut obj = match entry {
        Value::Object(obj) => obj,
        other => {
            return Err((
                None,
                format!("a tool entry is {}, not an object", kind(&other)),
            ))
        }
    };
    let name = match obj.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err((
                None,
                format!("a tool name is {}, not a string", kind(other)),
            ))
        }
        None => return Err((None, "a tool entry has no name".into())),
    };
    if name.len() > limits.max_name_bytes {
        let shown: String = name.chars().take(40).collect();
        return Err((
            Some(shown),
            format!(
                "the name is {} bytes, over the cap of {} (max_name_bytes)",
                name.len(),
                limits.max_name_bytes
            ),
        ));
    }
    if !is_valid_name(&name, limits.max_name_bytes) {
        return Err((
            Some(name),
            "the name must be 1 or more of A-Z, a-z, 0-9, '_' and '-'".into(),
        ));
    }
    let fail = |message: String| (Some(name.clone()), message);

    let description = optional_string(&mut obj, "description")
        .map_err(&fail)?
        .unwrap_or_default();
    if description.len() > limits.max_description_bytes {
        return Err(fail(format!(
            "the description is {} bytes, over the cap of {} (max_description_bytes)",
            description.len(),
            limits.max_description_bytes
        )));
    }
    let title = optional_string(&mut obj, "title")
        .map_err(&fail)?
        .filter(|t| !t.is_empty());

    let input_schema = parse_schema(obj.remove("inputSchema"), limits, "input").map_err(&fail)?;
    // Absent, or `null` (Chrome 160 reads an absent one so): no output schema.
    let output_schema = match obj.remove("outputSchema") {
        None | Some(Value::Null) => None,
        raw => Some(parse_schema(raw, limits, "output").map_err(&fail)?),
    };
    let annotations = parse_annotations(obj.get("annotations")).map_err(&fail)?;
    let form = DeclarativeForm::parse(obj.get("form"));

    Ok(PageTool {
        name,
        title,
        description,
        input_schema,
        output_schema,
        annotations,
        origin: origin.to_owned(),
        frame_id,
        form,
        polyfill: None,
    })
}

/// The schema as WebMCP hands it over: an object, a JSON string of one (older
/// implementations), or absent (a tool without input); `what` says which (`input`, `output`).
fn parse_schema(raw: Option<Value>, limits: &Limits, what: &str) -> Result<Value, String> {
    let schema = match raw {
        None | Some(Value::Null) => {
            return Ok(serde_json::json!({"type": "object", "properties": {}}))
        }
        Some(Value::String(text)) => {
            if text.len() > limits.max_schema_bytes {
                return Err(schema_too_big(text.len(), limits, what));
            }
            serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("the {what} schema is a string that is not JSON: {e}"))?
        }
        Some(other) => {
            let size = crate::core::limits::json_size(&other);
            if size > limits.max_schema_bytes {
                return Err(schema_too_big(size, limits, what));
            }
            other
        }
    };
    if !schema.is_object() {
        return Err(format!(
            "the {what} schema is {}, not an object",
            kind(&schema)
        ));
    }
    let depth = json_depth(&schema);
    if depth > limits.max_schema_depth {
        return Err(format!(
            "the {what} schema is nested {depth} deep, over the cap of {} (max_schema_depth)",
            limits.max_schema_depth
        ));
    }
    Ok(schema)
}

fn schema_too_big(size: usize, limits: &Limits, what: &str) -> String {
    format!(
        "the {what} schema is {size} bytes, over the cap of {} (max_schema_bytes)",
        limits.max_schema_bytes
    )
}

fn parse_annotations(raw: Option<&Value>) -> Result<Annotations, String> {
    let map = match raw {
        None | Some(Value::Null) => return Ok(Annotations::default()),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(format!(
                "the annotations are {}, not an object",
                kind(other)
            ))
        }
    };
    // A hint that is not `true` leaves the default; hints only ever tighten what we do, and
    // a page that writes `"yes"` has not said `true`.
    let hint = |key: &str| map.get(key) == Some(&Value::Bool(true));
    Ok(Annotations {
        read_only_hint: hint("readOnlyHint"),
        consequential_hint: hint("consequentialHint"),
        untrusted_content_hint: hint("untrustedContentHint"),
        debugging: hint("debugging"),
        allow_acting: false,
        hints_unknown: false,
    })
}

fn optional_string(obj: &mut Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` is {}, not a string", kind(&other))),
    }
}

/// A tool for the core's tests: `name` in the top frame of `https://shop.test`, an object
/// input schema, consequential or not.
#[cfg(test)]
impl PageTool {
    pub(crate) fn sample(name: &str, consequential: bool) -> PageTool {
        PageTool {
            name: name.into(),
            title: None,
            description: "A tool".into(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
            annotations: Annotations {
                consequential_hint: consequential,
                ..Annotations::default()
            },
            origin: "https://shop.test".into(),
            frame_id: 0,
            form: None,
            polyfill: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(entries: Value) -> FrameTools {
        parse_tools(
            entries.as_array().unwrap(),
            0,
            "http://a.test",
            &Limits::DEFAULT,
        )
    }

    #[test]
    fn reads_a_native_entry() {
        let out = parse(json!([{
            "name": "add_to_cart",
            "title": "Add to cart",
            "description": "Adds an item",
            "inputSchema": {"type": "object", "properties": {"sku": {"type": "string"}}},
            "annotations": {"consequentialHint": true},
            "window": {}
        }]));
        assert_eq!(out.problems, vec![]);
        let tool = &out.tools[0];
        assert_eq!(tool.name, "add_to_cart");
        assert_eq!(tool.title.as_deref(), Some("Add to cart"));
        assert_eq!(tool.origin, "http://a.test");
        assert!(tool.annotations.consequential_hint);
        assert!(!tool.annotations.read_only_hint);
        assert_eq!(tool.input_schema["properties"]["sku"]["type"], "string");
    }

    #[test]
    fn an_entry_cannot_name_its_origin() {
        let out = parse(json!([
            {"name": "wire_money", "origin": "https://bank.example"},
            {"name": "odd", "origin": 7}
        ]));
        assert_eq!(out.problems, vec![]);
        assert!(out.tools.iter().all(|t| t.origin == "http://a.test"));
    }

    #[test]
    fn a_source_without_the_hint_confirms_every_tool_that_is_not_read_only() {
        let mut out = parse(json!([
            {"name": "read", "annotations": {"readOnlyHint": true}},
            {"name": "act"},
            {"name": "both", "annotations": {"readOnlyHint": true, "consequentialHint": true}},
            {"name": "vague", "annotations": {"readOnlyHint": "yes"}}
        ]));
        out.confirm_unless_read_only();
        let acting: Vec<_> = out
            .tools
            .iter()
            .map(|t| (t.name.as_str(), t.annotations.consequential_hint))
            .collect();
        assert_eq!(
            acting,
            [
                ("read", false),
                ("act", true),
                ("both", true),
                ("vague", true)
            ]
        );
    }

    #[test]
    fn schema_keeps_the_page_order_of_properties() {
        let out = parse(json!([{"name": "a", "inputSchema": {
            "type": "object", "properties": {"zeta": {}, "alpha": {}, "mid": {}}
        }}]));
        let keys: Vec<&String> = out.tools[0].input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["zeta", "alpha", "mid"]);
    }

    #[test]
    fn an_output_schema_is_kept_when_it_is_an_object_schema() {
        let out = parse(json!([
            {"name": "a", "outputSchema": {"type": "object", "required": ["id"]}},
            {"name": "b", "outputSchema": null},
            {"name": "c"},
            {"name": "d", "outputSchema": "{\"type\":\"string\"}"},
            {"name": "e", "outputSchema": [1]}
        ]));
        let schemas: Vec<Option<Value>> =
            out.tools.iter().map(|t| t.output_schema.clone()).collect();
        assert_eq!(
            schemas,
            [
                Some(json!({"type": "object", "required": ["id"]})),
                None,
                None,
                Some(json!({"type": "string"}))
            ]
        );
        assert_eq!(out.problems.len(), 1);
        assert_eq!(out.problems[0].tool.as_deref(), Some("e"));
        assert_eq!(
            out.problems[0].message,
            "the output schema is an array, not an object"
        );
    }

    #[test]
    fn schema_as_string_absent_or_wrong() {
        let out = parse(json!([
            {"name": "a", "inputSchema": "{\"type\":\"object\"}"},
            {"name": "b"},
            {"name": "c", "inputSchema": "not json"},
            {"name": "d", "inputSchema": [1]}
        ]));
        assert_eq!(out.tools.len(), 2);
        assert_eq!(out.tools[0].input_schema, json!({"type": "object"}));
        assert_eq!(
            out.tools[1].input_schema,
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(out.tools[1].origin, "http://a.test");
        assert_eq!(out.problems.len(), 2);
        assert!(
            out.problems[0].message.contains("not JSON"),
            "{:?}",
            out.problems
        );
        assert!(out.problems[1].message.contains("an array, not an object"));
    }

    #[test]
    fn bad_names_are_skipped_and_reported() {
        let long = "x".repeat(129);
        let out = parse(json!([
            {"name": "ok-1"}, {"name": "has space"}, {"name": ""}, {"name": 7}, {},
            {"name": long}, {"name": "ok-1"}, "tool"
        ]));
        assert_eq!(
            out.tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["ok-1"]
        );
        assert_eq!(out.problems.len(), 7);
        assert!(out.problems[4].message.contains("max_name_bytes"));
        assert!(out.problems[5].message.contains("twice"));
    }

    #[test]
    fn hints_only_count_when_true() {
        let out = parse(json!([{"name": "a", "annotations": {
            "readOnlyHint": "yes", "untrustedContentHint": true, "consequentialHint": 1,
            "allowActing": true
        }, "allowActing": true}]));
        assert_eq!(
            out.tools[0].annotations,
            Annotations {
                read_only_hint: false,
                consequential_hint: false,
                untrusted_content_hint: true,
                debugging: false,
                // Only the person's site policy allows acting; a page saying so is not read.
                allow_acting: false,
                hints_unknown: false,
            }
        );
    }

    #[test]
    fn a_schema_is_measured_as_compact_json() {
        let schema =
            json!({"type": "object", "description": "é\"x", "properties": {"n": {"maximum": 1.5}}});
        let size = serde_json::to_string(&schema).unwrap().len();
        assert_eq!(crate::core::limits::json_size(&schema), size);
        let limits = Limits {
            max_schema_bytes: size - 1,
            ..Limits::DEFAULT
        };
        let out = parse_tools(
            &[json!({"name": "a", "inputSchema": schema})],
            0,
            "o",
            &limits,
        );
        assert!(out.tools.is_empty());
        assert!(
            out.problems[0]
                .message
                .contains(&format!("is {size} bytes")),
            "{:?}",
            out.problems
        );
        let limits = Limits {
            max_schema_bytes: size,
            ..Limits::DEFAULT
        };
        let out = parse_tools(
            &[json!({"name": "a", "inputSchema": schema})],
            0,
            "o",
            &limits,
        );
        assert_eq!(out.tools[0].input_schema, schema);
    }

    #[test]
    fn caps_name_the_limit() {
        let limits = Limits {
            max_tools_per_frame: 2,
            max_schema_depth: 3,
            max_description_bytes: 4,
            ..Limits::DEFAULT
        };
        let entries = json!([
            {"name": "a", "description": "too long"},
            {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"items": {}}}}},
            {"name": "c"}
        ]);
        let out = parse_tools(entries.as_array().unwrap(), 3, "o", &limits);
        assert!(out.tools.is_empty());
        let messages: Vec<_> = out.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(messages[0].contains("max_tools_per_frame"), "{messages:?}");
        assert!(messages[1].contains("max_description_bytes"));
        assert!(messages[2].contains("max_schema_depth"));
        assert!(out.problems.iter().all(|p| p.frame_id == 3));
    }
}
