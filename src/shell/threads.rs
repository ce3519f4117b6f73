//! A run's conversation saved in the worker: the host's [`Conversations`] machine stores its
//! record and the list of them in `chrome.storage.session`, as `core::ops::threads` decides
//! (`conversations`, `conversation` and `forget` are the door's machines).

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
