//! Calls that real models write without the host's markers: a reply that is wholly one JSON
//! call (`{"name": …, "arguments": …}` and the shapes repair reads: `parameters`, `args`,
//! `{"function": {…}}`, `{"tool", "args"}`), a ```` ```json ```` fence around one, Llama's
//! `<|python_tag|>` or Mistral's `[TOOL_CALLS]` before one.
//!
//! Such a reply can be told from text only once it has ended, so a reply that starts like one
//! is held (nothing of it is streamed) until the output ends; then it is a call when the whole
//! of it is that JSON and names a tool of the run, else it goes on as the text it was. A reply
//! that starts otherwise goes on as text at once, so prose that merely contains JSON is never
//! a call. Held text is capped ([`MAX_BARE_CALL_BYTES`]): past it, it is text.
//!
//! Invariant: what is held and decided depends on the text only, never on how it was chunked.

use crate::core::limits::MAX_BARE_CALL_BYTES;
use crate::core::repair::{self, Fix};
use crate::core::toolset::ToolSet;

/// The markers a held reply may start with (besides `{`).
const OPENERS: [&str; 3] = ["```", "<|python_tag|>", "[TOOL_CALLS]"];

/// Whether the output so far may still be a bare call.
#[derive(Debug)]
pub(super) enum Bare {
    /// Only whitespace, or the start of an opener, so far: held.
    Undecided(String),
    /// It starts like a call: held to the end.
    Holding(String),
    /// Text: passed on as it comes.
    Text,
}

impl Bare {
    /// At the start of an output; `active` when the run offers tools.
    pub(super) fn new(active: bool) -> Bare {
        if active {
            Bare::Undecided(String::new())
        } else {
            Bare::Text
        }
    }

    /// Text of the output: what goes on as text now (`None`: held).
    pub(super) fn text(&mut self, text: String) -> Option<String> {
        match self {
            Bare::Text => Some(text),
            Bare::Holding(held) => {
                held.push_str(&text);
                if held.len() > MAX_BARE_CALL_BYTES {
                    return self.release();
                }
                None
            }
            Bare::Undecided(held) => {
                held.push_str(&text);
                let start = held.trim_start();
                if start.is_empty()
                    || OPENERS
                        .iter()
                        .any(|o| o.starts_with(start) && o.len() > start.len())
                {
                    None
                } else if start.starts_with('{') || OPENERS.iter().any(|o| start.starts_with(o)) {
                    let held = std::mem::take(held);
                    *self = Bare::Holding(held);
                    None
                } else {
                    self.release()
                }
            }
        }
    }

    /// Something other than text came (a call with the host's markers): what was held goes
    /// on as text, and nothing is held again.
    pub(super) fn release(&mut self) -> Option<String> {
        match std::mem::replace(self, Bare::Text) {
            Bare::Undecided(held) | Bare::Holding(held) => Some(held).filter(|h| !h.is_empty()),
            Bare::Text => None,
        }
    }

    /// The output ended: the reply held whole, if one was (`Err`: held text that can only be
    /// text, such as whitespace).
    pub(super) fn end(&mut self) -> Result<Option<String>, String> {
        match std::mem::replace(self, Bare::Text) {
            Bare::Holding(held) => Ok(Some(held)),
            Bare::Undecided(held) => Err(held),
            Bare::Text => Ok(None),
        }
    }
}

/// A held reply read as a call: the body for repair and the note of how it was written, when
/// the whole reply is one call of a tool in `tools`.
pub(super) fn read(held: &str, tools: &ToolSet) -> Option<(String, Fix)> {
    let text = held.trim();
    let (inner, shape) = if let Some(rest) = text.strip_prefix("<|python_tag|>") {
        (
            rest.trim(),
            "read a call written after Llama's <|python_tag|>",
        )
    } else if let Some(rest) = text.strip_prefix("[TOOL_CALLS]") {
        (
            rest.trim(),
            "read a call written after Mistral's [TOOL_CALLS]",
        )
    } else if let Some(rest) = text.strip_prefix("```") {
        // The fence's language (json, or none) up to the line's end, and the closing fence
        // as the reply's end: nothing may follow it.
        let (language, body) = rest.split_once('\n')?;
        if !matches!(language.trim(), "" | "json" | "JSON" | "tool_code") {
            return None;
        }
        (
            body.trim_end().strip_suffix("```")?.trim(),
            "read a reply that is a ```json fence around one JSON call",
        )
    } else {
        (
            text,
            "read a reply that is one JSON call, without the call markers",
        )
    };
    let whole = (inner.starts_with('{') && inner.ends_with('}'))
        || (inner.starts_with('[') && inner.ends_with(']'));
    if !whole || serde_json::from_str::<serde_json::Value>(inner).is_err() {
        return None;
    }
    let mut fixes = Vec::new();
    let raw = repair::read_body(inner, &mut fixes).ok()?;
    tools.get(&raw.name)?;
    let fix = Fix {
        step: repair::Step::Json,
        detail: shape.into(),
    };
    Some((inner.to_owned(), fix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::toolset::ToolSpec;
    use serde_json::json;

    fn tools() -> ToolSet {
        let spec = |name: &str| ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        };
        ToolSet::new([spec("search"), spec("add_to_cart")]).0
    }

    /// Feeds `text` in chunks of `n` bytes (at char boundaries) and ends it.
    fn hold(text: &str, n: usize) -> (String, Result<Option<String>, String>) {
        let mut bare = Bare::new(true);
        let mut passed = String::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut end = rest.len().min(n);
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            if let Some(t) = bare.text(rest[..end].to_owned()) {
                passed.push_str(&t);
            }
            rest = &rest[end..];
        }
        (passed, bare.end())
    }

    #[test]
    fn a_reply_that_starts_like_a_call_is_held_whatever_the_chunks() {
        for text in [
            "{\"name\": \"search\", \"arguments\": {\"q\": \"tea\"}}",
            "  \n```json\n{\"name\": \"search\"}\n```",
            "<|python_tag|>{\"name\": \"search\", \"parameters\": {}}",
            "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {}}]",
        ] {
            for n in [1, 2, 3, 7, 1000] {
                let (passed, end) = hold(text, n);
                assert_eq!(passed, "", "{text:?} in chunks of {n}");
                assert_eq!(end, Ok(Some(text.to_owned())), "{text:?} in chunks of {n}");
            }
        }
    }

    #[test]
    fn prose_goes_on_at_once_and_is_never_a_call() {
        for text in [
            "Here is the call: {\"name\": \"search\"}",
            "`code` and more",
            "[1, 2, 3] are the numbers",
            "<b>bold</b>",
        ] {
            for n in [1, 2, 5, 1000] {
                let (passed, end) = hold(text, n);
                assert_eq!(passed, text, "{text:?} in chunks of {n}");
                assert_eq!(end, Ok(None));
            }
        }
        assert_eq!(
            hold("  \n", 1).1,
            Err("  \n".into()),
            "whitespace alone is held text"
        );
    }

    #[test]
    fn a_held_reply_is_a_call_only_when_whole_and_of_a_known_tool() {
        let tools = tools();
        let call = |text: &str| read(text, &tools).map(|(_, fix)| fix.detail);
        assert!(
            call("{\"name\": \"search\", \"arguments\": {\"q\": \"tea\"}}")
                .unwrap()
                .contains("one JSON call")
        );
        assert!(
            call("```json\n{\"name\": \"search\", \"arguments\": {}}\n```")
                .unwrap()
                .contains("```json fence")
        );
        assert!(
            call("<|python_tag|>{\"name\": \"search\", \"parameters\": {\"q\": \"x\"}}")
                .unwrap()
                .contains("python_tag")
        );
        assert!(
            call("[TOOL_CALLS][{\"name\": \"add_to_cart\", \"arguments\": {}}]")
                .unwrap()
                .contains("TOOL_CALLS")
        );
        assert!(call("{\"function\": {\"name\": \"search\", \"arguments\": \"{}\"}}").is_some());
        assert!(call("{\"tool\": \"search\", \"args\": {}}").is_some());
        for not_a_call in [
            "{\"name\": \"delete_everything\", \"arguments\": {}}",
            "{\"answer\": \"Sencha costs 8 euros\"}",
            "{\"name\": \"search\"} and then some words",
            "```json\n{\"name\": \"search\"}\n```\nThat is the call I would make.",
            "```python\n{\"name\": \"search\"}\n```",
            "{\"name\": \"search\", \"arguments\": {",
            "{\"name\": \"search\",}",
        ] {
            assert_eq!(call(not_a_call), None, "{not_a_call:?}");
        }
    }

    #[test]
    fn a_held_reply_past_the_cap_goes_on_as_text() {
        let mut bare = Bare::new(true);
        assert_eq!(bare.text("{\"name\": \"search\", \"q\": \"".into()), None);
        let long = "x".repeat(MAX_BARE_CALL_BYTES);
        let passed = bare.text(long.clone()).expect("released");
        assert!(passed.ends_with(&long) && passed.starts_with('{'));
        assert_eq!(bare.text("more".into()), Some("more".into()));
        assert_eq!(
            Bare::new(false).text("{".into()),
            Some("{".into()),
            "no tools: nothing is held"
        );
    }
}
