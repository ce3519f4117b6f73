//! The shell's side of `core::restart`: the intents of a run's acting calls, kept in
//! `chrome.storage.session` (written before the call starts, as the core's drive asks), so that
//! a worker that comes back after a restart can say which calls were under way.

use super::store::{put, read};
use crate::core::restart::{intent_slot, stored_intents, Intent};
use crate::core::setup::store::Area;

/// Stores the intents of a run's calls under way (none: removes them); resolves once stored.
pub async fn save(run_id: &str, intents: &[Intent]) {
    let value = (!intents.is_empty()).then(|| serde_json::to_value(intents).unwrap_or_default());
    if let Err(error) = put(Area::Session, &intent_slot(run_id), value.as_ref()).await {
        super::chrome::warn(&format!(
            "webmcp-host: the intents of run {run_id} could not be stored: {error}"
        ));
    }
}

/// The run ended, or was ended after a restart: nothing of it is kept.
pub async fn forget(run_id: &str) {
    let _ = put(Area::Session, &intent_slot(run_id), None).await;
}

/// The intents a previous worker stored for a run.
pub async fn stored(run_id: &str) -> Vec<Intent> {
    stored_intents(
        read(Area::Session, &intent_slot(run_id))
            .await
            .ok()
            .flatten(),
    )
}
