//! The shell's side of `core::restart`: the intents of acting calls, kept in memory and in
//! `chrome.storage.session` (written before the call starts), so that a worker that comes
//! back after a restart can say which calls were under way.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use super::convert;
use super::io::{storage_get, storage_remove, storage_set};
use crate::core::restart::Intent;

const AREA: &str = "session";
const INTENT_KEY: &str = "webmcpHost.intent.";

thread_local! {
    static INTENTS: RefCell<HashMap<String, Vec<Intent>>> = RefCell::new(HashMap::new());
}

async fn save(run_id: &str) {
    let key = format!("{INTENT_KEY}{run_id}");
    let list = INTENTS.with(|i| i.borrow().get(run_id).cloned().unwrap_or_default());
    let result = if list.is_empty() {
        storage_remove(AREA, &key).await.map(|_| ())
    } else {
        let value = serde_json::to_value(&list).unwrap_or(Value::Null);
        storage_set(AREA, &key, convert::from_json(&value))
            .await
            .map(|_| ())
    };
    if let Err(error) = result {
        super::chrome::warn(&format!(
            "webmcp-host: the intents of run {run_id} could not be stored: {}",
            convert::describe(&error)
        ));
    }
}

/// Records a call that acts; resolves once it is stored.
pub async fn record(run_id: &str, intent: Intent) {
    INTENTS.with(|i| {
        i.borrow_mut()
            .entry(run_id.to_owned())
            .or_default()
            .push(intent)
    });
    save(run_id).await;
}

/// The call ended (or was cancelled): its intent goes.
pub async fn done(run_id: &str, call_id: &str) {
    let had = INTENTS.with(|i| {
        let mut intents = i.borrow_mut();
        let list = intents.entry(run_id.to_owned()).or_default();
        let before = list.len();
        list.retain(|intent| intent.call_id != call_id);
        before != list.len()
    });
    if had {
        save(run_id).await;
    }
}

/// The run ended, or was ended after a restart: nothing of it is kept.
pub async fn forget(run_id: &str) {
    INTENTS.with(|i| i.borrow_mut().remove(run_id));
    let _ = storage_remove(AREA, &format!("{INTENT_KEY}{run_id}")).await;
}

/// The intents a previous worker stored for a run.
pub async fn stored(run_id: &str) -> Vec<Intent> {
    storage_get(AREA, &format!("{INTENT_KEY}{run_id}"))
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}
