//! Conversations (AG-UI threads) as the worker keeps them: each one's messages, tool calls and
//! results included, in session storage, so that `run({threadId, prompt})` continues it; the
//! list `conversations()` answers; and the decisions a run's start takes about its
//! conversation:
//!
//! - a conversation's tools are fixed when it is created: when the run's tools differ (the
//!   tab's tools or the enabled servers changed since), the run starts a **new conversation
//!   carrying the history**, says so in a `CUSTOM` event ([`CUSTOM_CONVERSATION`](crate::core::agui::CUSTOM_CONVERSATION)), and the
//!   old one stays as it was;
//! - a conversation whose last run was cut (the worker stopped) is continued from that run's
//!   stored log: its messages are rebuilt from its events, and each call with no stored result
//!   gets a tool message telling the model it **may have run**, so that it checks before acting
//!   again.
//!
//! Invariants: the stored list holds at most [`MAX_CONVERSATIONS`] conversations, most recently
//! updated first; a stored conversation's messages stay under [`MAX_CONVERSATION_BYTES`] by
//! dropping its oldest whole turns (counted in `droppedTurns`), never part of a turn; stored
//! values are read as untrusted (what does not parse is an error naming the conversation).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::core::agui::Message;
use crate::core::history::rebuild;
use crate::core::limits::MAX_CONVERSATIONS_BYTES;
use crate::core::run::RunTool;

/// Where the list of conversations lives (session storage).
pub const INDEX_KEY: &str = crate::core::storage::CONVERSATIONS;
/// The prefix of a conversation's record in session storage (then its thread id).
pub const THREAD_KEY: &str = crate::core::storage::CONVERSATION_PREFIX;
/// The most conversations kept; the least recently updated goes first.
pub const MAX_CONVERSATIONS: usize = crate::core::limits::MAX_CONVERSATIONS;
/// The most bytes of a conversation's stored messages (as JSON).
pub const MAX_CONVERSATION_BYTES: usize = crate::core::limits::MAX_CONVERSATION_BYTES;

/// Where a conversation's record lives.
pub fn thread_key(thread_id: &str) -> String {
    format!("{THREAD_KEY}{thread_id}")
}

/// A conversation as `conversations()` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    /// The conversation's id (the AG-UI thread id).
    pub thread_id: String,
    /// Its first prompt, shortened.
    pub title: String,
    /// The tab of its last run, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<i64>,
    /// How many runs (turns) it had.
    pub turns: usize,
    /// When it was last updated (ms since the epoch).
    pub updated_ms: f64,
    /// The conversation it was carried over from, when its tools changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// Its last run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<String>,
    /// Its oldest turns dropped to stay under [`MAX_CONVERSATION_BYTES`].
    #[serde(default)]
    pub dropped_turns: usize,
    /// The top-frame origin of the tab its runs were made on (as Chrome lists it; none when
    /// it had no tab): a run on another origin starts a new conversation without its
    /// history, unless the caller asks for the carry-over (`carryOver: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Bytes of its stored record (the list keeps [`MAX_CONVERSATIONS_BYTES`] in all).
    #[serde(default)]
    pub bytes: usize,
}

/// A tool as a conversation fixed it: its name and a digest of its definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolMark {
    /// The tool's name as the model sees it.
    pub name: String,
    /// A digest of its description and input schema.
    pub digest: String,
}

/// A conversation as stored under [`thread_key`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRecord {
    /// What the list shows of it.
    #[serde(flatten)]
    pub summary: ThreadSummary,
    /// Its tools, fixed when it was created (sorted by name).
    pub tools: Vec<ToolMark>,
    /// Its messages, tool calls and results included (through its last ended run; with the
    /// new messages of its open run).
    pub messages: Vec<Message>,
    /// The run going on in it (or cut): its messages past the new ones are in that run's log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_run: Option<String>,
}

impl ThreadRecord {
    /// A stored record read back; `None` when nothing is stored.
    pub fn from_stored(thread_id: &str, stored: Option<Value>) -> Result<Option<Self>, String> {
        let Some(value) = stored.filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let record: ThreadRecord = serde_json::from_value(value).map_err(|e| {
            format!("run: the stored conversation `{thread_id}` is unreadable ({e}): forget it with `forget` or start a new one")
        })?;
        if record.summary.thread_id != thread_id {
            return Err(format!(
                "run: the stored conversation `{thread_id}` names another thread"
            ));
        }
        Ok(Some(record))
    }

    /// The record with the run's messages once it ended: the open run closed, one more turn,
    /// and the oldest turns dropped while over [`MAX_CONVERSATION_BYTES`].
    pub fn ended(&self, messages: &[Message], now_ms: f64) -> ThreadRecord {
        let mut record = self.clone();
        record.messages = messages.to_vec();
        record.open_run = None;
        record.summary.turns += 1;
        record.summary.updated_ms = now_ms;
        record.summary.dropped_turns += trim(&mut record.messages, MAX_CONVERSATION_BYTES);
        record
    }

    /// The record as stored, its summary's `bytes` set to its size. A record still over
    /// [`MAX_CONVERSATION_BYTES`] once its oldest turns are dropped (one turn of huge
    /// results) is stored with its messages' long strings cut to 64 KiB, each with a marker
    /// (`max_conversation_bytes`).
    pub fn to_stored(&self) -> Value {
        let mut record = self.clone();
        record.summary.bytes = 0;
        let mut value = serde_json::to_value(&record).expect("records serialize");
        if value.to_string().len() > MAX_CONVERSATION_BYTES {
            value["messages"] = crate::core::ops::runlog::cut_long_strings(
                &value["messages"],
                64 * 1024,
                "max_conversation_bytes",
            );
        }
        let size = value.to_string().len();
        value["bytes"] = serde_json::json!(size);
        value
    }

    /// The record as stored ([`ThreadRecord::to_stored`]) and its summary for the list, with
    /// the stored size in `bytes`.
    pub fn for_storage(&self) -> (Value, ThreadSummary) {
        let value = self.to_stored();
        let mut summary = self.summary.clone();
        summary.bytes = value["bytes"].as_u64().unwrap_or(0) as usize;
        (value, summary)
    }
}

/// Drops the oldest whole turns (a turn starts at a user message) while the messages are over
/// `cap` bytes as JSON; the last turn always stays. How many turns went.
fn trim(messages: &mut Vec<Message>, cap: usize) -> usize {
    let mut dropped = 0;
    while serde_json::to_string(messages).map_or(0, |s| s.len()) > cap {
        let next = messages
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, m)| matches!(m, Message::User { .. }))
            .map(|(i, _)| i);
        let Some(next) = next else { break };
        messages.drain(..next);
        dropped += 1;
    }
    dropped
}

/// The marks of a run's tools, sorted by name.
pub fn marks(tools: &[RunTool]) -> Vec<ToolMark> {
    let mut marks: Vec<ToolMark> = tools
        .iter()
        .map(|t| ToolMark {
            name: t.spec.name.clone(),
            digest: digest(&format!(
                "{}\u{0}{}",
                t.spec.description, t.spec.input_schema
            )),
        })
        .collect();
    marks.sort();
    marks.dedup();
    marks
}

/// FNV-1a, 64 bits, as hex: a digest to notice a change, not to resist one (the definitions
/// are the host's own reading of the sources).
fn digest(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// What changed between a conversation's tools and a run's: `{added, removed, changed}`
/// names, or `None` when nothing did.
pub fn tool_changes(fixed: &[ToolMark], now: &[ToolMark]) -> Option<Value> {
    let find = |list: &[ToolMark], name: &str| list.iter().find(|m| m.name == name).cloned();
    let added: Vec<&str> = (now.iter().filter(|m| find(fixed, &m.name).is_none()))
        .map(|m| m.name.as_str())
        .collect();
    let removed: Vec<&str> = (fixed.iter().filter(|m| find(now, &m.name).is_none()))
        .map(|m| m.name.as_str())
        .collect();
    let changed: Vec<&str> = (now.iter())
        .filter(|m| find(fixed, &m.name).is_some_and(|f| f.digest != m.digest))
        .map(|m| m.name.as_str())
        .collect();
    (!added.is_empty() || !removed.is_empty() || !changed.is_empty())
        .then(|| json!({"added": added, "removed": removed, "changed": changed}))
}

/// The conversation a run starts in, decided once its tools are known.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The record to store before the run acts (its open run set).
    pub record: ThreadRecord,
    /// The history the run continues (the new messages come after it).
    pub history: Vec<Message>,
    /// `CUSTOM` event values to emit after `RUN_STARTED` ([`CUSTOM_CONVERSATION`](crate::core::agui::CUSTOM_CONVERSATION)).
    pub notices: Vec<Value>,
}

/// What a run knows of its conversation before its tools are read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Opening {
    /// The stored record, when the asked thread has one.
    pub record: Option<ThreadRecord>,
    /// Its messages, the cut run's rebuilt and marked.
    pub history: Vec<Message>,
    /// Notices so far (a resumed cut run).
    pub notices: Vec<Value>,
}

/// Where and what a run is, as [`Opening::settle`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct RunPlace<'a> {
    /// The run's id.
    pub run_id: &'a str,
    /// Its tab, if any.
    pub tab_id: Option<i64>,
    /// Its new messages.
    pub messages: &'a [Message],
    /// The top-frame origin of its tab, as Chrome lists it (none without a tab).
    pub origin: Option<&'a str>,
    /// Whether the caller asked to continue a conversation of another origin here.
    pub carry_over: bool,
}

impl Opening {
    /// The stored record read; the run whose log must be read next, if it left one open.
    pub fn read(record: Option<ThreadRecord>) -> (Opening, Option<String>) {
        let open = record.as_ref().and_then(|r| r.open_run.clone());
        let history = record
            .as_ref()
            .map(|r| r.messages.clone())
            .unwrap_or_default();
        let opening = Opening {
            record,
            history,
            notices: Vec::new(),
        };
        (opening, open)
    }

    /// The open run's log (the `runLog` answer `{run, events}`, or why it could not be read):
    /// its messages continue the history. A run still going is refused.
    pub fn with_log(&mut self, run_id: &str, log: Result<Value, String>) -> Result<(), String> {
        let thread = self.record.as_ref().map(|r| r.summary.thread_id.clone());
        let thread = thread.unwrap_or_default();
        let log = match log {
            Ok(log) => log,
            Err(message) => {
                self.notices.push(json!({"type": "logLost", "threadId": thread, "runId": run_id, "message": message}));
                return Ok(());
            }
        };
        let state = log.pointer("/run/state").and_then(Value::as_str);
        if state == Some("running") {
            return Err(format!("run: conversation `{thread}` has a run going (`{run_id}`): wait for its end, or stop it, before continuing"));
        }
        let events = log.get("events").and_then(Value::as_array);
        let events = events.map(Vec::as_slice).unwrap_or_default();
        let (messages, cut) = rebuild(std::mem::take(&mut self.history), events);
        self.history = messages;
        if state == Some("interrupted") || !cut.is_empty() {
            self.notices.push(
                json!({"type": "resumed", "threadId": thread, "runId": run_id, "mayHaveRun": cut}),
            );
        }
        Ok(())
    }

    /// The conversation the run starts in, given its tools: this one, a new one (nothing was
    /// stored under `thread_id`), or a new one carrying the history (the tools changed: its
    /// id is `fork_id`).
    pub fn settle(
        self,
        thread_id: &str,
        fork_id: &str,
        tools: Vec<ToolMark>,
        run: RunPlace<'_>,
        now_ms: f64,
    ) -> Settled {
        let RunPlace {
            run_id,
            tab_id,
            messages: new,
            origin,
            carry_over,
        } = run;
        let Opening {
            mut record,
            mut history,
            mut notices,
        } = self;
        let mut thread_id = thread_id;
        // Another origin than the conversation's: a new conversation, without the history
        // (data one site's tools gave never reaches another site's run unasked).
        let moved = record.as_ref().and_then(|r| {
            let was = r.summary.origin.as_deref()?;
            (origin.is_some_and(|now| now != was) && !carry_over).then(|| was.to_owned())
        });
        if let Some(was) = moved {
            let from = record.take().expect("a record").summary.thread_id;
            notices.push(json!({
                "type": "fresh",
                "from": from,
                "threadId": fork_id,
                "reason": format!(
                    "the conversation was made on {was}; this tab shows {}: a new conversation starts without its history (carryOver: true continues it)",
                    origin.unwrap_or_default()
                ),
            }));
            thread_id = fork_id;
        }
        let title = |messages: &[Message]| {
            let first = messages.iter().find_map(|m| match m {
                Message::User { content, .. } => Some(content.trim()),
                _ => None,
            });
            first
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect::<String>()
        };
        let mut record = match record {
            Some(mut record) => {
                if let Some(changes) = tool_changes(&record.tools, &tools) {
                    let from = record.summary.thread_id.clone();
                    let mut notice = json!({"type": "forked", "from": from, "threadId": fork_id, "reason": "the tools changed since the conversation was created"});
                    notice
                        .as_object_mut()
                        .expect("an object")
                        .extend(changes.as_object().cloned().unwrap_or_default());
                    notices.push(notice);
                    record.summary.forked_from = Some(from);
                    record.summary.thread_id = fork_id.to_owned();
                    record.summary.turns = 0;
                    record.tools = tools;
                }
                record
            }
            None => {
                history.clear();
                ThreadRecord {
                    summary: ThreadSummary {
                        thread_id: thread_id.to_owned(),
                        title: title(new),
                        tab_id,
                        turns: 0,
                        updated_ms: now_ms,
                        forked_from: None,
                        last_run: None,
                        dropped_turns: 0,
                        origin: origin.map(str::to_owned),
                        bytes: 0,
                    },
                    tools,
                    messages: Vec::new(),
                    open_run: None,
                }
            }
        };
        record.summary.tab_id = tab_id;
        if origin.is_some() {
            record.summary.origin = origin.map(str::to_owned);
        }
        record.summary.updated_ms = now_ms;
        record.summary.last_run = Some(run_id.to_owned());
        record.open_run = Some(run_id.to_owned());
        record.messages = history.iter().chain(new).cloned().collect();
        Settled {
            record,
            history,
            notices,
        }
    }
}

/// The worker's list of conversations, read from storage once per worker and kept here; every
/// change is made on it and stored whole (so two runs ending together lose nothing).
#[derive(Debug, Default)]
pub struct Threads {
    list: Option<Vec<ThreadSummary>>,
}

impl Threads {
    /// The list, when read already in this worker.
    pub fn list(&self) -> Option<Vec<ThreadSummary>> {
        self.list.clone()
    }

    /// The stored list read back (what does not parse is left out); kept unless a concurrent
    /// read kept one first. The list kept.
    pub fn keep(&mut self, stored: Option<Value>) -> Vec<ThreadSummary> {
        let read = || {
            let items = stored
                .and_then(|v| v.as_array().cloned())
                .unwrap_or_default();
            items
                .into_iter()
                .filter_map(|v| serde_json::from_value(v).ok())
                .collect()
        };
        self.list.get_or_insert_with(read).clone()
    }

    /// A conversation saved: its summary first in the list. The list to store, and the
    /// conversations dropped past [`MAX_CONVERSATIONS`] (their records are removed).
    pub fn saved(&mut self, summary: ThreadSummary) -> (Value, Vec<String>) {
        let list = self.list.get_or_insert_with(Vec::new);
        list.retain(|t| t.thread_id != summary.thread_id);
        list.insert(0, summary);
        list.sort_by(|a, b| b.updated_ms.total_cmp(&a.updated_ms));
        let mut keep = list.len().min(MAX_CONVERSATIONS);
        // Within the byte budget of all conversations: the least recently updated go first.
        let mut total: usize = list[..keep].iter().map(|t| t.bytes).sum();
        while keep > 1 && total > MAX_CONVERSATIONS_BYTES {
            keep -= 1;
            total -= list[keep].bytes;
        }
        let dropped = list.split_off(keep);
        let dropped = dropped.into_iter().map(|t| t.thread_id).collect();
        (json!(list), dropped)
    }

    /// `forget({threadId})`: the list to store, or an error when no such conversation is kept.
    pub fn forget(&mut self, thread_id: &str) -> Result<Value, String> {
        let list = self.list.get_or_insert_with(Vec::new);
        let before = list.len();
        list.retain(|t| t.thread_id != thread_id);
        if list.len() == before {
            return Err(format!("forget: no conversation `{thread_id}` is kept"));
        }
        Ok(json!(list))
    }

    /// `conversations({tabId?})` → the kept conversations, most recently updated first.
    pub fn conversations(&self, tab_id: Option<i64>) -> Value {
        let list = self.list.as_deref().unwrap_or_default().iter();
        json!(list
            .filter(|t| tab_id.is_none() || t.tab_id == tab_id)
            .collect::<Vec<_>>())
    }
}

/// `conversation({threadId})` → the kept conversation with its messages, from its stored
/// record (`None` stored: an error).
pub fn conversation(thread_id: &str, stored: Option<Value>) -> Result<Value, String> {
    let record = ThreadRecord::from_stored(thread_id, stored)
        .map_err(|e| e.replacen("run:", "conversation:", 1))?
        .ok_or_else(|| format!("conversation: no conversation `{thread_id}` is kept"))?;
    let mut value = serde_json::to_value(&record.summary).expect("summaries serialize");
    let map = value.as_object_mut().expect("an object");
    map.insert("messages".into(), json!(record.messages));
    map.insert("tools".into(), json!(record.tools));
    if let Some(run) = record.open_run {
        map.insert("openRun".into(), json!(run));
    }
    Ok(value)
}

#[cfg(test)]
mod tests;
