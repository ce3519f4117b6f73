//! `bugReport({runId})`: gathers what `core::observe::bundle` puts in a bug report (the run's
//! log, the tab's tools and audit, a screenshot, versions, the settings) and has it assemble
//! the file, every key masked. Resolves to `{fileName, report}`.

use serde_json::{json, Value};
use wasm_bindgen::JsValue;

use super::pages::storage_all;
use super::{convert, io, runlog, settings};
use crate::core::observe::bundle::{assemble, file_name, session_keys, still_shown, Parts};
use crate::core::ops::AuditRequest;
use crate::core::setup::store::Area::Session;

/// `bugReport({runId})` → `{fileName, report}`.
pub(crate) async fn bug_report(run_id: &str) -> Result<Value, String> {
    let log = runlog::run_log(run_id, 0).await?;
    let tab_id = log.pointer("/run/tabId").and_then(Value::as_i64);
    // The tab's top frame now, to tell whether it still shows the run's page.
    let listed = match tab_id {
        Some(tab_id) => Some(super::tab_tools(tab_id).await),
        None => None,
    };
    let snapshot = io::tab_snapshot(tab_id.map_or(JsValue::NULL, |t| JsValue::from(t as f64)));
    let mut snapshot = convert::to_json(&snapshot.await).unwrap_or_default();
    let open = snapshot.get("page").is_some();
    let now_document = listed
        .as_ref()
        .and_then(|l| l.as_ref().ok()?.documents.get(&0).cloned());
    let now_url = snapshot.pointer("/page/url").and_then(Value::as_str);
    let shown = still_shown(log.pointer("/run/page"), now_url, now_document.as_deref());
    let (tools, audit) = match (tab_id, listed, &shown) {
        (Some(tab_id), Some(listed), Ok(())) if open => {
            let request = AuditRequest::parse(&json!({"tabId": tab_id})).map_err(|e| e.0)?;
            let tools = listed.map(std::rc::Rc::unwrap_or_clone);
            (Some(tools), Some(super::audit(request).await))
        }
        _ => (None, None),
    };
    if let (Err(why), true) = (&shown, open) {
        // Another page's facts never go into this run's report.
        snapshot["page"] = json!({"movedOn": why, "recorded": log.pointer("/run/page")});
        snapshot["screenshotError"] = json!(why);
        if let Some(map) = snapshot.as_object_mut() {
            map.remove("screenshot");
        }
    }
    let text = |key: &str| snapshot.get(key).and_then(Value::as_str).map(str::to_owned);
    let session = storage_all(Session.name()).await.ok();
    let session = session
        .and_then(|v| convert::to_json(&v).ok())
        .unwrap_or_default();
    let parts = Parts {
        log,
        page: snapshot.get("page").cloned(),
        tools,
        audit,
        screenshot: text("screenshot").ok_or_else(|| text("screenshotError").unwrap_or_default()),
        user_agent: text("userAgent").unwrap_or_default(),
        extension_version: text("version").unwrap_or_default(),
        settings: settings::settings()
            .await
            .unwrap_or_else(|e| json!({"error": e})),
        created_ms: io::now_ms(),
    };
    let report = assemble(parts, &session_keys(&session));
    Ok(json!({"fileName": file_name(run_id), "report": report}))
}
