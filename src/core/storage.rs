//! Every key the host writes in `chrome.storage`, in one table: its area, what it holds and who
//! writes it. The modules that read and write a key take its name from here, and a test holds
//! the table, the code and `docs/storage.md` to each other, so a key cannot be added in one
//! place only. A key that ends in `.` is a prefix: one entry per run, conversation or key
//! reference follows it.
//!
//! It also says what an item weighs against its area's quota, as the browser counts it
//! ([`stored_size`]), and what a write that found its area full tells the person
//! ([`full_error`]).

use serde_json::Value;

/// A storage area of the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `chrome.storage.local`: kept across sessions.
    Local,
    /// `chrome.storage.session`: gone when the browser closes.
    Session,
}

impl Area {
    /// The area's name in `chrome.storage`.
    pub fn name(self) -> &'static str {
        match self {
            Area::Local => "local",
            Area::Session => "session",
        }
    }
}

/// The model registry.
pub const MODELS: &str = "webmcpHost.models";
/// The MCP servers.
pub const SERVERS: &str = "webmcpHost.servers";
/// The site policies.
pub const SITES: &str = "webmcpHost.sites";
/// The global middleware layers.
pub const MIDDLEWARE: &str = "webmcpHost.middleware";
/// The person's keys, one entry per key reference after the prefix.
pub const KEY_PREFIX: &str = "webmcpHost.key.";
/// The price table.
pub const PRICES: &str = "webmcpHost.prices";
/// The trace collectors.
pub const COLLECTORS: &str = "webmcpHost.collectors";
/// The MCP tools exposed to origins.
pub const EXPOSURES: &str = "webmcpHost.exposures";
/// MCP sign-ins for this browser session.
pub const SIGN_INS: &str = "webmcpHostAuth";
/// MCP sign-ins the person asked to be remembered.
pub const SIGN_INS_KEPT: &str = "webmcpHostAuthKept";
/// The kept runs' summaries.
pub const RUNS: &str = "webmcpHost.ui.runs";
/// A run's log, one entry per run id after the prefix.
pub const RUN_PREFIX: &str = "webmcpHost.ui.run.";
/// The acting calls under way of a run, one entry per run id after the prefix.
pub const INTENT_PREFIX: &str = "webmcpHost.intent.";
/// The conversations' index.
pub const CONVERSATIONS: &str = "webmcpHost.conversations";
/// A conversation's record, one entry per thread id after the prefix.
pub const CONVERSATION_PREFIX: &str = "webmcpHost.conversation.";
/// The servers' last checks.
pub const SERVER_STATES: &str = "webmcpHost.ui.serverStates";
/// The first definition of every tool seen, per origin (the inventory's "changed").
pub const SEEN: &str = "webmcpHost.seen";
/// The Call view's history of calls by hand: one entry per tab after the prefix, and `mcp`
/// for the calls to MCP servers (written by the popup, `popup/views/call.js`).
pub const MANUAL_CALLS_PREFIX: &str = "webmcpHost.ui.manualCalls.";
/// An origin's last crawl: the fingerprints of each page's tools (`core::crawl`), by origin
/// after the prefix.
pub const CRAWL_PREFIX: &str = "webmcpHost.crawl.";
/// The origins whose crawls are kept and the bytes of each, most recently crawled first
/// (`core::crawl::keeping`).
pub const CRAWLED: &str = "webmcpHost.crawled";

/// One storage key: its name, its area and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageKey {
    /// The key (a prefix when it ends in `.`).
    pub key: &'static str,
    /// The area it lives in.
    pub area: Area,
    /// What it holds.
    pub holds: &'static str,
}

const fn key(key: &'static str, area: Area, holds: &'static str) -> StorageKey {
    StorageKey { key, area, holds }
}

/// Every storage key of the host.
pub const TABLE: &[StorageKey] = &[
    key(
        MODELS,
        Area::Local,
        "the model registry and the default model",
    ),
    key(SERVERS, Area::Local, "the MCP servers"),
    key(SITES, Area::Local, "the site policies"),
    key(MIDDLEWARE, Area::Local, "the global middleware layers"),
    key(PRICES, Area::Local, "the price table"),
    key(COLLECTORS, Area::Local, "the trace collectors"),
    key(EXPOSURES, Area::Local, "the MCP tools exposed to origins"),
    key(
        SIGN_INS_KEPT,
        Area::Local,
        "MCP sign-ins the person asked to be remembered",
    ),
    key(KEY_PREFIX, Area::Session, "a key, by its reference"),
    key(
        SIGN_INS,
        Area::Session,
        "MCP sign-ins of this browser session",
    ),
    key(RUNS, Area::Session, "the kept runs' summaries"),
    key(RUN_PREFIX, Area::Session, "a run's log, by run id"),
    key(
        INTENT_PREFIX,
        Area::Session,
        "a run's acting calls under way, by run id",
    ),
    key(CONVERSATIONS, Area::Session, "the conversations' index"),
    key(
        CONVERSATION_PREFIX,
        Area::Session,
        "a conversation's record, by thread id",
    ),
    key(SERVER_STATES, Area::Session, "the servers' last checks"),
    key(
        SEEN,
        Area::Session,
        "the first definition of each tool seen, by origin",
    ),
    key(
        MANUAL_CALLS_PREFIX,
        Area::Session,
        "the Call view's calls by hand: by tab, and `mcp` for MCP servers' (the popup's)",
    ),
    key(
        CRAWL_PREFIX,
        Area::Local,
        "an origin's last crawl: its pages' tool fingerprints, by origin",
    ),
    key(
        CRAWLED,
        Area::Local,
        "the origins whose crawls are kept and the bytes of each, most recently crawled first",
    ),
];

/// The bytes `key` and `value` count against their area's quota, as Chrome counts them: the
/// key's length and the value written as JSON by the browser, which escapes `<` and the line
/// and paragraph separators as `\uXXXX` (six bytes each) and writes a number that is not a
/// 32-bit integer as a double in its shortest digits, fixed from 1e-6 to under 1e12
/// (`3000000000.0`), else with an exponent (`1.712345678901e+12`). Measured against Chrome's
/// `getBytesInUse`.
pub fn stored_size(key: &str, value: &Value) -> usize {
    key.len() + json_size(value)
}

fn json_size(value: &Value) -> usize {
    // Iterative, so a deep value cannot exhaust the stack here.
    let mut size = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        size += match v {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => n.as_f64().map_or(24, number_size),
            Value::String(s) => string_size(s),
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values());
                let keys: usize = map.keys().map(|k| string_size(k) + 1).sum();
                2 + keys + map.len().saturating_sub(1)
            }
        };
    }
    size
}

/// A number written as JSON as Chrome writes it: a 32-bit integer as one (`-7`), any other as
/// a double, in its shortest digits, fixed from 1e-6 to under 1e12 (`0.5`, `3000000000.0`),
/// else with an exponent (`1.712345678901e+12`, `1e-7`).
fn number_size(f: f64) -> usize {
    if f.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&f) {
        return (f as i32).to_string().len();
    }
    if !f.is_finite() {
        return 4;
    }
    // The shortest digits that read back as `f`, and where the decimal point goes.
    let shortest = format!("{:e}", f.abs());
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let digits = mantissa.chars().filter(char::is_ascii_digit).count();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let point = exponent + 1;
    let sign = usize::from(f < 0.0);
    let written = if (-5..=12).contains(&point) {
        match usize::try_from(point) {
            // `0.000001`
            Err(_) | Ok(0) => 2 + point.unsigned_abs() as usize + digits,
            // `3000000000.0`: a point and a zero are added to a whole number.
            Ok(point) if digits <= point => point + 2,
            Ok(_) => digits + 1,
        }
    } else {
        // `1.7e+12`: the digits, their point when there are two or more, `e` and its sign.
        let point = usize::from(digits > 1);
        digits + point + 2 + exponent.unsigned_abs().to_string().len()
    };
    sign + written
}

/// A string written as JSON as Chrome writes it (quotes included).
pub fn string_size(text: &str) -> usize {
    2 + text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            '<' | '\u{2028}' | '\u{2029}' => 6,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// Whether a storage error says its area is full (Chrome's words: `QUOTA_BYTES quota
/// exceeded`, `Resource::kQuotaBytes quota exceeded`).
pub fn is_full(error: &str) -> bool {
    error.contains("QUOTA_BYTES")
        || error.contains("QuotaBytes")
        || error.contains("quota exceeded")
}

/// The table's entry a stored key belongs to (its own, or its prefix's).
pub fn entry_of(stored: &str) -> Option<&'static StorageKey> {
    TABLE
        .iter()
        .find(|k| stored == k.key || (k.key.ends_with('.') && stored.starts_with(k.key)))
}

/// The operation that frees what an entry of the table keeps, where one does.
fn cleared_by(key: &str) -> Option<&'static str> {
    match key {
        CRAWL_PREFIX | CRAWLED => Some("crawl({clear: true}) clears every kept crawl"),
        CONVERSATION_PREFIX | CONVERSATIONS => Some("forget({threadId}) forgets a conversation"),
        KEY_PREFIX => Some("configure({keys: {<reference>: null}}) removes a key"),
        SIGN_INS | SIGN_INS_KEPT => Some("signOut({server}) forgets a server's sign-in"),
        _ => None,
    }
}

/// The error of a write of `key` to `area` that failed because the area is full (`error`, the
/// browser's words): how much of its `quota` is in use, what fills it (everything it holds,
/// `items`, grouped by the table's entries, the biggest first, with their entries and bytes)
/// and the operation that clears the biggest group one can clear.
pub fn full_error(area: Area, key: &str, error: &str, items: &Value, quota: usize) -> String {
    // (the table's key, or the stray key itself; entries; bytes), one per group.
    let mut groups: Vec<(&str, usize, usize)> = Vec::new();
    let mut in_use = 0;
    for (key, value) in items.as_object().into_iter().flatten() {
        let bytes = stored_size(key, value);
        in_use += bytes;
        let group = entry_of(key).map_or(key.as_str(), |entry| entry.key);
        match groups.iter_mut().find(|g| g.0 == group) {
            Some(found) => {
                found.1 += 1;
                found.2 += bytes;
            }
            None => groups.push((group, 1, bytes)),
        }
    }
    groups.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(b.0)));
    let named: Vec<String> = (groups.iter().take(4))
        .map(|(group, entries, bytes)| {
            let (shown, holds) = match entry_of(group) {
                Some(entry) if entry.key.ends_with('.') => (format!("{group}*"), entry.holds),
                Some(entry) => (group.to_string(), entry.holds),
                None => (group.to_string(), "a key the host does not write"),
            };
            let plural = if *entries == 1 { "entry" } else { "entries" };
            format!(
                "{shown} ({holds}): {entries} {plural}, {} bytes",
                thousands(*bytes)
            )
        })
        .collect();
    let mut text = format!(
        "{key} was not saved: chrome.storage.{} is full ({}): {} of its {} bytes in use, the most by {}",
        area.name(),
        error.trim(),
        thousands(in_use),
        thousands(quota),
        named.join("; ")
    );
    match groups.iter().find_map(|(group, ..)| cleared_by(group)) {
        Some(how) => text.push_str(&format!(". To free room: {how}")),
        None => text.push_str(". Nothing kept there is cleared by an operation"),
    }
    text
}

/// `n` with its thousands separated by commas (`10,485,760`).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_listed_once_and_none_is_a_prefix_of_another() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.key, b.key, "listed twice");
                let overlap = |p: &str, k: &str| p.ends_with('.') && k.starts_with(p);
                assert!(
                    !overlap(a.key, b.key) && !overlap(b.key, a.key),
                    "{} and {} overlap",
                    a.key,
                    b.key
                );
            }
        }
    }

    #[test]
    fn an_item_weighs_what_chrome_counts() {
        use serde_json::json;
        // Chrome's `getBytesInUse` for each value under the key "k", measured.
        for (value, chrome) in [
            (json!("abc"), 6),
            (json!("<<<<"), 27),
            (json!(">>>>"), 7),
            (json!("\u{2028}"), 9),
            (json!("\u{1}"), 9),
            (json!("é"), 5),
            (json!("😀"), 7),
            (json!("\u{2029}\u{0}\u{1f}\"\\/\u{8}\t\n"), 32),
            (json!({"a": 1, "b": [1, 2]}), 18),
            (json!({"<": "<"}), 20),
            (json!(2_147_483_647), 11),
            (json!(-2_147_483_648i64), 12),
            (json!([]), 3),
            (json!({}), 3),
            (json!([null, true, false]), 18),
        ] {
            assert_eq!(stored_size("k", &value), chrome, "{value}");
        }
        // Doubles (a time in ms is one), measured the same way, less the key's byte.
        for (value, chrome) in [
            (1_712_345_678_901.0, 18),
            (1_712_345_678_900.0, 16),
            (1_700_000_000_000.0, 7),
            (1_712_345_678_901.25, 20),
            (1_712_345_678_901.5, 19),
            (2_147_483_648.0, 12),
            (4_294_967_296.0, 12),
            (1e10, 13),
            (123_456_789_012.0, 14),
            (1e12, 5),
            (1e15, 5),
            (9_007_199_254_740_992.0, 21),
            (1e21, 5),
            (1e300, 6),
            (0.1, 3),
            (0.000_001, 8),
            (1e-7, 4),
            (123_456.789, 10),
            (1.5, 3),
            (-1.5, 4),
            (-2_147_483_649.0, 13),
            (12_345_678_901_234_567_890.0, 22),
        ] {
            assert_eq!(stored_size("k", &json!(value)), 1 + chrome, "{value}");
        }
        assert_eq!(stored_size("k", &json!(1_712_345_678_901u64)), 19);
    }

    #[test]
    fn a_full_area_says_what_fills_it_and_how_to_clear_it() {
        use serde_json::json;
        let crawl = json!({"at": 1, "pages": {"https://a.test/": {"at": 1, "tools": {"t": "x".repeat(5000)}}}});
        let items = json!({
            "webmcpHost.crawl.https://a.test": crawl,
            "webmcpHost.crawl.https://b.test": crawl,
            "webmcpHost.crawled": ["https://a.test", "https://b.test"],
            "webmcpHost.middleware": [{"kind": "block", "tool": "x", "reason": "y"}],
            "someone.else": "z".repeat(200),
        });
        let text = full_error(
            Area::Local,
            MIDDLEWARE,
            "Resource::kQuotaBytes quota exceeded",
            &items,
            10_485_760,
        );
        assert!(text.starts_with("webmcpHost.middleware was not saved: chrome.storage.local is full (Resource::kQuotaBytes quota exceeded): "), "{text}");
        let total: usize = (items.as_object().unwrap().iter())
            .map(|(k, v)| stored_size(k, v))
            .sum();
        assert!(
            text.contains(&format!(
                "{} of its 10,485,760 bytes in use",
                thousands(total)
            )),
            "{text}"
        );
        // The biggest first, with its entries and bytes; a stray key named as one.
        let crawls = 2 * stored_size("webmcpHost.crawl.https://a.test", &crawl);
        let first = format!("the most by webmcpHost.crawl.* (an origin's last crawl: its pages' tool fingerprints, by origin): 2 entries, {} bytes; ", thousands(crawls));
        assert!(text.contains(&first), "{text}");
        assert!(
            text.contains("someone.else (a key the host does not write): 1 entry, 214 bytes"),
            "{text}"
        );
        assert!(
            text.ends_with(". To free room: crawl({clear: true}) clears every kept crawl"),
            "{text}"
        );
        // Nothing an operation clears: said so.
        let text = full_error(
            Area::Local,
            MODELS,
            "QUOTA_BYTES quota exceeded",
            &json!({"webmcpHost.models": {}}),
            10,
        );
        assert!(
            text.ends_with("Nothing kept there is cleared by an operation"),
            "{text}"
        );
        assert!(
            is_full("QUOTA_BYTES quota exceeded")
                && is_full("Resource::kQuotaBytes quota exceeded")
        );
        assert!(!is_full("No tab with id: 4."));
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
