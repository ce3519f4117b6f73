//! `bugReport({runId})`: the host's [`BugReport`] gathers what `core::observe::bundle` puts in
//! a bug report (the run's log, the tab's tools and audit, a snapshot, versions, the settings)
//! and has it assemble the file, every key masked; this takes the tab's snapshot (page,
//! screenshot, versions). Resolves to `{fileName, report}`.

use serde_json::Value;
use wasm_bindgen::JsValue;

use super::pages::extension_origin;
use super::{convert, drive, io};
use crate::core::host::report::BugReport;

/// `bugReport({runId})` → `{fileName, report}`.
pub(crate) async fn bug_report(run_id: &str) -> Result<Value, String> {
    let calls = format!("call_{}", io::random_id());
    let mut report = BugReport::new(run_id, &extension_origin(), calls);
    drive(|host, input, now| host.bug_report(&mut report, input, now)).await
}

/// The tab's snapshot (`Tabs::Snapshot`): its page and screenshot, the user agent and the
/// extension's version (`null` when it could not be read).
pub(crate) async fn snapshot(tab_id: Option<i64>) -> Value {
    let tab_id = tab_id.map_or(JsValue::NULL, |t| JsValue::from(t as f64));
    convert::to_json(&io::tab_snapshot(tab_id).await).unwrap_or_default()
}
