//! What crawls keep in `chrome.storage.local`, and within which budgets: an origin's kept
//! crawl is one item under [`MAX_CRAWL_KEPT_BYTES`] as the browser counts it (its key, every
//! URL, tool name, fingerprint and time), and every kept crawl together, with the index of the
//! origins, stays under [`MAX_CRAWLS_KEPT_BYTES`]: the least recently crawled origins are
//! forgotten first. Sizes are values ([`stored_size`]); the host's crawl (`host::crawling`) reads and writes what these
//! functions say.

use serde_json::{json, Map, Value};

use crate::core::limits::{
    MAX_CRAWLED_ORIGINS, MAX_CRAWLS_KEPT_BYTES, MAX_CRAWL_KEPT_BYTES, MAX_CRAWL_URLS,
    MAX_CRAWL_URL_BYTES,
};
use crate::core::storage::{stored_size, string_size, CRAWLED, CRAWL_PREFIX};

/// The storage key of `origin`'s kept crawl.
pub fn kept_key(origin: &str) -> String {
    format!("{CRAWL_PREFIX}{origin}")
}

/// An origin's kept crawl, as it is to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// `{at, pages: {url: {at, tools: {tool: fingerprint}}}}`.
    pub value: Value,
    /// What the item weighs against the quota, key included (at least the browser's count).
    pub bytes: usize,
    /// This crawl's pages left out (over the budget).
    pub left_out: usize,
    /// Pages kept before that are forgotten now (over the budget).
    pub forgotten: usize,
}

/// The kept crawl of `origin` at `now_ms`: this crawl's `pages` (`(url, {tool: fingerprint})`,
/// in the order crawled) first, then the pages `previous` kept that this crawl did not reach,
/// most recently crawled first; each page while the whole item stays within
/// [`MAX_CRAWL_KEPT_BYTES`] and [`MAX_CRAWL_URLS`] pages. `None` when not even an empty crawl
/// of the origin fits (an origin's name longer than [`MAX_CRAWL_URL_BYTES`] is not kept).
pub fn kept(
    origin: &str,
    now_ms: f64,
    pages: &[(String, Value)],
    previous: Option<&Value>,
) -> Option<Kept> {
    let key = kept_key(origin);
    let empty = json!({"at": now_ms, "pages": {}});
    let mut bytes = stored_size(&key, &empty);
    if origin.len() > MAX_CRAWL_URL_BYTES || bytes > MAX_CRAWL_KEPT_BYTES {
        return None;
    }
    let mut kept = Map::new();
    // One page's share of the item: its URL, the colon, its entry and a comma.
    let mut fits = |kept: &Map<String, Value>, url: &str, entry: &Value| {
        let size = string_size(url) + 1 + stored_size("", entry) + 1;
        let fit = kept.len() < MAX_CRAWL_URLS && bytes + size <= MAX_CRAWL_KEPT_BYTES;
        if fit {
            bytes += size;
        }
        fit
    };
    let mut left_out = 0;
    for (url, tools) in pages {
        if kept.contains_key(url) {
            continue;
        }
        let entry = json!({"at": now_ms, "tools": tools});
        if fits(&kept, url, &entry) {
            kept.insert(url.clone(), entry);
        } else {
            left_out += 1;
        }
    }
    let before = previous.and_then(|p| p["pages"].as_object());
    let mut earlier: Vec<(&String, &Value)> = (before.into_iter().flatten())
        .filter(|(url, page)| {
            !kept.contains_key(*url)
                && page["tools"].is_object()
                && url.len() <= MAX_CRAWL_URL_BYTES
        })
        .collect();
    let at = |page: &Value| page["at"].as_f64().unwrap_or(0.0);
    earlier.sort_by(|a, b| at(b.1).total_cmp(&at(a.1)).then_with(|| a.0.cmp(b.0)));
    let mut forgotten = 0;
    for (url, page) in earlier {
        let entry = json!({"at": page["at"], "tools": page["tools"]});
        if fits(&kept, url, &entry) {
            kept.insert(url.clone(), entry);
        } else {
            forgotten += 1;
        }
    }
    Some(Kept {
        value: json!({"at": now_ms, "pages": kept}),
        bytes,
        left_out,
        forgotten,
    })
}

/// What keeping a crawl does to the others: the index to store and the keys to remove first.
#[derive(Debug, Clone, PartialEq)]
pub struct Keeping {
    /// The index of the origins kept, most recently crawled first: `[{origin, bytes}]`.
    pub index: Value,
    /// The kept crawls to remove (storage keys), before the index and the crawl are written.
    pub remove: Vec<String>,
}

/// Keeping `origin`'s crawl of `bytes` (as [`kept`] weighed it), with the stored `index` and
/// the keys the area holds (`stored`): the origin first in the index, then the others as they
/// were, the least recently crawled forgotten until at most [`MAX_CRAWLED_ORIGINS`] are kept
/// and every kept crawl and the index together weigh at most [`MAX_CRAWLS_KEPT_BYTES`]. A kept
/// crawl the index does not weigh (an entry of an earlier version, a plain origin; a crawl
/// the index does not name) is forgotten: its size is not known.
pub fn keeping(index: Option<&Value>, stored: &[String], origin: &str, bytes: usize) -> Keeping {
    let mut entries: Vec<(String, usize)> = vec![(origin.to_owned(), bytes)];
    let mut remove = Vec::new();
    for entry in index.and_then(Value::as_array).into_iter().flatten() {
        let named = entry["origin"].as_str().or(entry.as_str());
        let weighed = entry["bytes"]
            .as_u64()
            .and_then(|b| usize::try_from(b).ok());
        match (named, weighed) {
            (Some(other), _) if other == origin => {}
            (Some(other), _) if entries.iter().any(|(o, _)| o == other) => {}
            (Some(other), Some(bytes)) => entries.push((other.to_owned(), bytes)),
            (Some(other), None) => remove.push(kept_key(other)),
            (None, _) => {}
        }
    }
    let weight = |entries: &[(String, usize)]| -> usize {
        let crawls: usize = entries.iter().map(|(_, b)| b).sum();
        crawls.saturating_add(stored_size(CRAWLED, &index_value(entries)))
    };
    while entries.len() > 1
        && (entries.len() > MAX_CRAWLED_ORIGINS || weight(&entries) > MAX_CRAWLS_KEPT_BYTES)
    {
        if let Some((other, _)) = entries.pop() {
            remove.push(kept_key(&other));
        }
    }
    // Crawls kept that the index does not name.
    for key in stored {
        let named = (key.strip_prefix(CRAWL_PREFIX))
            .is_some_and(|o| entries.iter().any(|(kept, _)| kept == o));
        if key.starts_with(CRAWL_PREFIX) && !named && !remove.contains(key) {
            remove.push(key.clone());
        }
    }
    Keeping {
        index: index_value(&entries),
        remove,
    }
}

fn index_value(entries: &[(String, usize)]) -> Value {
    let entries: Vec<Value> = (entries.iter())
        .map(|(origin, bytes)| json!({"origin": origin, "bytes": bytes}))
        .collect();
    Value::Array(entries)
}

/// `crawl({clear: true})`: the keys to remove (every kept crawl among the `stored` keys, and
/// the index), and the answer: `{cleared: [origin]}`.
pub fn clearing(stored: &[String]) -> (Vec<String>, Value) {
    let mut keys: Vec<String> = (stored.iter())
        .filter(|k| k.starts_with(CRAWL_PREFIX))
        .cloned()
        .collect();
    keys.sort();
    let origins: Vec<&str> = (keys.iter())
        .filter_map(|k| k.strip_prefix(CRAWL_PREFIX))
        .collect();
    let answer = json!({"cleared": origins});
    if stored.iter().any(|k| k == CRAWLED) {
        keys.push(CRAWLED.to_owned());
    }
    (keys, answer)
}
