//! Conversations in the worker: each one's record and the list of them in
//! `chrome.storage.session`, as `core::ops::threads` decides. The list is read once per worker
//! and changed in memory before it is stored whole, so runs ending together lose nothing.

use serde_json::{json, Value};

use super::chrome;
use super::store::{put, read};
use crate::core::ops::threads::{
    conversation as shown, thread_key, ThreadRecord, Threads, INDEX_KEY,
};
use crate::core::setup::store::Area::Session;

fn with<T>(f: impl FnOnce(&mut Threads) -> T) -> T {
    super::state::host(|host| f(&mut host.threads.borrow_mut()))
}

async fn read_list() {
    if with(|t| t.list()).is_none() {
        let stored = read(Session, INDEX_KEY).await.ok().flatten();
        with(|t| t.keep(stored));
    }
}

/// Stores a conversation's record and its place in the list (removing those dropped from it).
pub(crate) async fn save(record: &ThreadRecord) {
    read_list().await;
    let (value, summary) = record.for_storage();
    let (list, dropped) = with(|t| t.saved(summary));
    let id = &record.summary.thread_id;
    let stored = [
        put(Session, &thread_key(id), Some(&value)).await,
        put(Session, INDEX_KEY, Some(&list)).await,
    ];
    for error in stored.into_iter().filter_map(Result::err) {
        chrome::warn(&format!(
            "webmcp-host: conversation {id} was not stored: {error}"
        ));
    }
    for old in dropped {
        let _ = put(Session, &thread_key(&old), None).await;
    }
}

/// `conversations({tabId?})`.
pub(crate) async fn conversations(tab_id: Option<i64>) -> Value {
    read_list().await;
    with(|t| t.conversations(tab_id))
}

/// `conversation({threadId})`.
pub(crate) async fn conversation(thread_id: &str) -> Result<Value, String> {
    shown(thread_id, read(Session, &thread_key(thread_id)).await?)
}

/// `forget({threadId})` → `true`, or an error when no such conversation is kept.
pub(crate) async fn forget(thread_id: &str) -> Result<Value, String> {
    read_list().await;
    let list = with(|t| t.forget(thread_id))?;
    put(Session, INDEX_KEY, Some(&list)).await?;
    put(Session, &thread_key(thread_id), None).await?;
    Ok(json!(true))
}
