//! Conversations in the worker: the host's [`Conversations`] machine stores each one's record
//! and the list of them in `chrome.storage.session`, as `core::ops::threads` decides.

use serde_json::Value;

use super::drive;
use crate::core::host::conversations::Conversations;
use crate::core::ops::threads::ThreadRecord;

async fn perform(mut machine: Conversations) -> Result<Value, String> {
    drive(|host, input, now| host.conversations(&mut machine, input, now)).await
}

/// Stores a conversation's record and its place in the list (removing those dropped from it).
pub(crate) async fn save(record: &ThreadRecord) {
    let _ = perform(Conversations::save(record)).await;
}

/// `conversations({tabId?})`.
pub(crate) async fn conversations(tab_id: Option<i64>) -> Result<Value, String> {
    perform(Conversations::list(tab_id)).await
}

/// `conversation({threadId})`.
pub(crate) async fn conversation(thread_id: &str) -> Result<Value, String> {
    perform(Conversations::show(thread_id)).await
}

/// `forget({threadId})` → `true`, or an error when no such conversation is kept.
pub(crate) async fn forget(thread_id: &str) -> Result<Value, String> {
    perform(Conversations::forget(thread_id)).await
}
