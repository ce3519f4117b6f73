//! The browser's answers a page call reads: its tabs and where a frame stands.

use serde_json::Value;

/// A tab as the browser lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The tab's id.
    pub id: i64,
    /// The tab that opened it, if any.
    pub opener: Option<i64>,
    /// Whether it finished loading.
    pub complete: bool,
}

impl Tab {
    /// The tabs of `chrome.tabs.query`'s answer (entries without a numeric `id` are
    /// skipped; anything but a list is no tab).
    pub fn list(listed: &Value) -> Vec<Tab> {
        let Value::Array(items) = listed else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|tab| {
                Some(Tab {
                    id: tab.get("id")?.as_f64()? as i64,
                    opener: tab
                        .get("openerTabId")
                        .and_then(Value::as_f64)
                        .map(|v| v as i64),
                    complete: tab.get("status").and_then(Value::as_str) == Some("complete"),
                })
            })
            .collect()
    }
}

/// Where a frame stood, as `chrome.webNavigation.getFrame` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameState {
    /// The frame's document URL.
    pub url: String,
    /// The document's id; a new one means the frame navigated.
    pub document_id: Option<String>,
}

impl FrameState {
    /// The page a tab's top frame (`top`, `None`: the tab is gone) shows, to load it again;
    /// or why there is none, for operation `op`.
    pub fn page_url(op: &str, tab_id: i64, top: Option<FrameState>) -> Result<String, String> {
        let top = top.ok_or_else(|| format!("{op}: tab {tab_id}: no such tab"))?;
        Some(top.url)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| format!("{op}: tab {tab_id} shows no page"))
    }

    /// A frame as `chrome.webNavigation.getFrame` describes it; `None` when it is gone.
    pub fn of(frame: &Value) -> Option<FrameState> {
        if !frame.is_object() {
            return None;
        }
        let text = |key: &str| frame.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(FrameState {
            url: text("url").unwrap_or_default(),
            document_id: text("documentId"),
        })
    }
}
