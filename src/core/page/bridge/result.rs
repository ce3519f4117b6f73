//! What a document's content script read of it, capped here whatever the frame sent: the
//! result of a document a call loaded (a navigation's destination, a frame a form targeted),
//! [`FrameRequest::ReadResult`](super::FrameRequest::ReadResult)'s answer; and a crawl's
//! sitemap, [`FrameRequest::ReadSitemap`](super::FrameRequest::ReadSitemap)'s; and the final DOM state an eval asserts on,
//! [`FrameRequest::QueryDom`](super::FrameRequest::QueryDom)'s.

use serde_json::{Map, Value};

use super::{parse_reply, DomObserved};
use crate::core::limits::{Limits, MAX_PAGE_RESULT_BYTES, PAGE_TEXT_CHARS};
use crate::core::naming::kind;

/// What a document a call loaded says of the call ([`FrameRequest::ReadResult`](super::FrameRequest::ReadResult)): page text,
/// capped, shown as text only.
#[derive(Debug, Clone, PartialEq)]
pub struct PageResult {
    /// The document's URL.
    pub url: String,
    /// Its title (at most 200 characters).
    pub title: String,
    /// Its JSON-LD (`script[type="application/ld+json"]`), each script's value, in document
    /// order, at most [`MAX_PAGE_RESULT_BYTES`] of JSON text in all.
    pub json_ld: Vec<Value>,
    /// JSON-LD scripts left out: not JSON, or beyond the cap.
    pub skipped: u64,
    /// Its main text (`main`, else `body`), whitespace folded, at most [`PAGE_TEXT_CHARS`].
    pub text: String,
}

impl PageResult {
    /// The JSON-LD as one value: the object when the document has one, else the array;
    /// `None` when it has none.
    pub fn json_ld_value(&self) -> Option<Value> {
        match self.json_ld.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(Value::Array(many.to_vec())),
        }
    }
}

/// Parses a frame's answer to [`FrameRequest::ReadResult`](super::FrameRequest::ReadResult), capping what the frame sent (its
/// content script caps too; a reply is never trusted to).
pub fn parse_page_result(raw: &str, limits: &Limits) -> Result<PageResult, String> {
    let map = match parse_reply(raw, limits).map_err(|e| e.to_string())? {
        Ok(map) => map,
        Err((name, message)) => return Err(format!("{name}: {message}")),
    };
    let text = |key: &str, cap: usize| {
        map.get(key)
            .and_then(Value::as_str)
            .map(|s| s.chars().take(cap).collect::<String>())
            .unwrap_or_default()
    };
    let mut skipped = map.get("skipped").and_then(Value::as_u64).unwrap_or(0);
    let mut json_ld = Vec::new();
    let mut bytes = 0;
    for value in map
        .get("jsonLd")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let size = value.to_string().len();
        if bytes + size > MAX_PAGE_RESULT_BYTES {
            skipped += 1;
            continue;
        }
        bytes += size;
        json_ld.push(value.clone());
    }
    Ok(PageResult {
        url: text("url", 2_000),
        title: text("title", 200),
        json_ld,
        skipped,
        text: text("text", PAGE_TEXT_CHARS),
    })
}

/// A `readSitemap` reply (JSON text): the sitemap's text (cut at `MAX_SITEMAP_BYTES` here
/// too), or the frame's error as a message.
pub fn parse_sitemap_reply(raw: &str) -> Result<String, String> {
    let cap = crate::core::limits::MAX_SITEMAP_BYTES;
    let value: Value =
        serde_json::from_str(raw).map_err(|_| "the page answered no sitemap".to_owned())?;
    if value["ok"] != Value::Bool(true) {
        let message = value["error"]["message"]
            .as_str()
            .unwrap_or("the page could not read it");
        return Err(message.chars().take(300).collect());
    }
    let text = value["text"]
        .as_str()
        .ok_or("the page answered no sitemap text")?;
    Ok(crate::core::limits::cut_to(text, cap).to_owned())
}

/// The characters of a frame's error message kept.
const ERROR_CHARS: usize = 300;

/// A `queryDom` reply (JSON text): one [`DomObserved`] per query of the `asked`, in order, each
/// text and attribute cut at `DOM_TEXT_CHARS` characters here too; or why the reply cannot be
/// read (the frame's own error message, when it answered one).
pub fn parse_dom_reply(raw: &str, asked: usize) -> Result<Vec<DomObserved>, String> {
    let cap = crate::core::limits::DOM_TEXT_CHARS;
    let value: Value = serde_json::from_str(raw)
        .map_err(|_| "the page's answer to the DOM queries is not JSON".to_owned())?;
    if !value.is_object() {
        return Err(format!(
            "the page's answer to the DOM queries is {}, not an object",
            kind(&value)
        ));
    }
    if value["ok"] != Value::Bool(true) {
        let message = value["error"]["message"]
            .as_str()
            .unwrap_or("the page could not run the DOM queries");
        return Err(message.chars().take(ERROR_CHARS).collect());
    }
    let results = match &value["results"] {
        Value::Array(results) => results,
        other => {
            return Err(format!(
                "the page's `results` is {}, not an array",
                kind(other)
            ))
        }
    };
    if results.len() != asked {
        return Err(format!(
            "the page answered {} DOM queries of the {asked} asked",
            results.len()
        ));
    }
    let text = |entry: &Map<String, Value>, key: &str, i: usize, chars: usize| match entry.get(key)
    {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.chars().take(chars).collect::<String>())),
        Some(other) => Err(format!(
            "the page's result {i}: `{key}` is {}, not a string",
            kind(other)
        )),
    };
    (results.iter().enumerate())
        .map(|(i, entry)| {
            let Value::Object(entry) = entry else {
                return Err(format!(
                    "the page's result {i} is {}, not an object",
                    kind(entry)
                ));
            };
            if let Some(error) = text(entry, "error", i, ERROR_CHARS)? {
                return Ok(DomObserved {
                    count: 0,
                    text: None,
                    attribute: None,
                    error: Some(error),
                });
            }
            let count = (entry.get("count").and_then(Value::as_u64)).ok_or_else(|| {
                format!("the page's result {i} has no `count` (a whole number at least 0)")
            })?;
            Ok(DomObserved {
                count,
                text: text(entry, "text", i, cap)?,
                attribute: text(entry, "attribute", i, cap)?,
                error: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_loaded_documents_result_is_capped_whatever_the_frame_sent() {
        let limits = Limits::DEFAULT;
        let big = "x".repeat(MAX_PAGE_RESULT_BYTES);
        let reply = json!({"ok": true, "url": "https://a.test/done", "title": "t".repeat(500),
            "jsonLd": [{"orderId": "o-1"}, {"pad": big}, 5], "skipped": 2,
            "text": "w".repeat(5_000)})
        .to_string();
        let read = parse_page_result(&reply, &limits).unwrap();
        assert_eq!(read.url, "https://a.test/done");
        assert_eq!(read.title.chars().count(), 200);
        assert_eq!(read.text.chars().count(), PAGE_TEXT_CHARS);
        assert_eq!(read.json_ld, vec![json!({"orderId": "o-1"}), json!(5)]);
        assert_eq!(
            read.skipped, 3,
            "the two the frame skipped and the one over the cap"
        );
        assert_eq!(read.json_ld_value(), Some(json!([{"orderId": "o-1"}, 5])));
        let one = r#"{"ok":true,"jsonLd":[{"a":1}]}"#;
        assert_eq!(
            parse_page_result(one, &limits).unwrap().json_ld_value(),
            Some(json!({"a": 1}))
        );
        assert_eq!(
            parse_page_result(r#"{"ok":true}"#, &limits)
                .unwrap()
                .json_ld_value(),
            None
        );
        assert_eq!(
            parse_page_result(
                r#"{"ok":false,"error":{"name":"E","message":"m"}}"#,
                &limits
            ),
            Err("E: m".into())
        );
        assert!(parse_page_result("not json", &limits).is_err());
    }

    #[test]
    fn a_sitemap_reply_is_its_text_capped_or_the_frames_error() {
        use crate::core::limits::MAX_SITEMAP_BYTES;
        let ok = serde_json::json!({"ok": true, "text": "é".repeat(MAX_SITEMAP_BYTES)}).to_string();
        let text = parse_sitemap_reply(&ok).unwrap();
        assert_eq!(
            text.len(),
            MAX_SITEMAP_BYTES,
            "cut at the cap, between characters"
        );
        let refused = r#"{"ok": false, "error": {"name": "SecurityError", "message": "the sitemap is not on https://a.test"}}"#;
        assert_eq!(
            parse_sitemap_reply(refused).unwrap_err(),
            "the sitemap is not on https://a.test"
        );
        assert!(parse_sitemap_reply("nope").is_err());
        assert!(parse_sitemap_reply(r#"{"ok": true}"#)
            .unwrap_err()
            .contains("no sitemap text"));
    }
}
