//! The person's side as the rest of the worker reaches it: a run's start, events and end
//! (kept and pushed by [`super::runlog`]), the waits for the person ([`super::waits`]), and
//! the news that a frame's tools changed.
//!
//! Invariant: nothing here decides; each hook hands its news to the one module that keeps it.

use serde_json::json;

use super::pages::push;
pub use super::runlog::recover;
pub(crate) use super::runlog::{on_event, on_finish, on_start};
pub(crate) use super::waits::{confirm_without_tab, wait_for_inputs};

/// A frame's tools changed: the open pages list the tab's tools again.
pub(crate) fn on_tools_changed(tab_id: i64, frame_id: i64) {
    push(
        "toolsChanged",
        json!({"tabId": tab_id, "frameId": frame_id}),
    );
}
