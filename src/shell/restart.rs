//! The shell's side of `core::restart`: the intents of a run's acting calls, kept in
//! `chrome.storage.session` (written before the call starts, as the core's drive asks), so that
//! a worker that comes back after a restart can say which calls were under way.

use serde_json::Value;

use super::convert;
use super::io::{storage_get, storage_remove, storage_set};
use crate::core::restart::Intent;

const AREA: &str = "session";
const INTENT_KEY: &str = "webmcpHost.intent.";

/// Stores the intents of a run's calls under way (none: removes them); resolves once stored.
pub async fn save(run_id: &str, intents: &[Intent]) {
    let key = format!("{INTENT_KEY}{run_id}");
    let result = if intents.is_empty() {
        storage_remove(AREA, &key).await.map(|_| ())
    } else {
        let value = serde_json::to_value(intents).unwrap_or(Value::Null);
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

/// The run ended, or was ended after a restart: nothing of it is kept.
pub async fn forget(run_id: &str) {
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
