//! Listings for the tests of the machines that read them: typed, as the host hands them over.

use std::rc::Rc;

use serde_json::json;

use super::{FrameAnswer, FrameFailure, Listed, TabTools, TopPage};
use crate::core::limits::Limits;
use crate::core::page::bridge::parse_listing;
use crate::core::page::tool::{Annotations, PageTool, ToolProblem};

/// A read-only tool of the top frame of `origin`, taking an object.
pub(crate) fn tool(name: &str, origin: &str) -> PageTool {
    PageTool {
        name: name.into(),
        title: None,
        description: format!("{name}."),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: Annotations {
            read_only_hint: true,
            ..Annotations::default()
        },
        origin: origin.into(),
        frame_id: 0,
        form: None,
        polyfill: None,
    }
}

/// The tab showing `url` (loaded), offering `names` from its top frame.
pub(crate) fn tab(url: &str, names: &[&str]) -> TabTools {
    let origin = crate::core::url::http_origin(url).unwrap_or_default();
    TabTools {
        tools: names.iter().map(|n| tool(n, &origin)).collect(),
        page: Some(TopPage {
            url: url.into(),
            origin,
            title: "Shop".into(),
            loading: false,
        }),
        ..TabTools::default()
    }
}

/// [`tab`] as a listing.
pub(crate) fn listed(url: &str, names: &[&str]) -> Listed {
    Ok(Rc::new(tab(url, names)))
}

/// The tab showing `url` while its document is still being parsed: no tools yet.
pub(crate) fn loading(url: &str) -> Listed {
    let mut tab = tab(url, &[]);
    if let Some(page) = &mut tab.page {
        page.loading = true;
    }
    Ok(Rc::new(tab))
}

/// A listing whose top frame did not answer (`message`: Chrome's words).
pub(crate) fn unanswered(message: &str) -> Listed {
    Ok(Rc::new(TabTools {
        problems: vec![ToolProblem {
            frame_id: 0,
            tool: None,
            message: format!("frame 0 (about:blank): no answer: {message}"),
        }],
        ..TabTools::default()
    }))
}

/// The top frame's answer to `listTools` from `url`: `names` offered, its document parsed
/// unless `loading`; read as the bridge reads a frame's reply.
pub(crate) fn top_frame(url: &str, names: &[&str], loading: bool) -> FrameAnswer {
    let origin = crate::core::url::http_origin(url).unwrap_or_default();
    let tools: Vec<_> = (names.iter())
        .map(|n| json!({"name": n, "description": format!("{n}."), "inputSchema": {"type": "object"}}))
        .collect();
    let state = if loading { "loading" } else { "complete" };
    let raw = json!({"ok": true, "supported": true, "origin": origin, "title": "Shop",
        "readyState": state, "tools": tools});
    FrameAnswer {
        frame_id: 0,
        url: url.into(),
        answer: Ok(parse_listing(&raw.to_string(), 0, &Limits::DEFAULT).expect("a listing")),
    }
}

/// The top frame of `url` not answering (`message`: Chrome's words).
pub(crate) fn top_unreachable(url: &str, message: &str) -> FrameAnswer {
    FrameAnswer {
        frame_id: 0,
        url: url.into(),
        answer: Err(FrameFailure::Unreachable(message.into())),
    }
}

/// The tab showing `url` as its top frame answers at its `n`th listing (from 1) after a load:
/// the old document gone and the new one not answering yet, then the new one still parsing,
/// then the page offering `names`.
pub(crate) fn reloading(url: &str, n: usize, names: &[&str]) -> Vec<FrameAnswer> {
    vec![match n {
        1 => top_unreachable(
            url,
            "The message port closed before a response was received.",
        ),
        2 => top_frame(url, &[], true),
        _ => top_frame(url, names, false),
    }]
}
