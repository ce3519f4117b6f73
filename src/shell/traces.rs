//! A finished run's trace sent to the collectors the person configured
//! (`core::observe::collector` builds every request and says when to try again): in the
//! background, after the run answered, never holding a run up; each attempt is bounded.

use std::collections::BTreeMap;

use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::io::{post_bytes, sleep};
use super::store::{read, read_key};
use super::{chrome, convert};
use crate::core::observe::collector::{
    self, retry_after, Export, COLLECTORS_KEY, EXPORT_TIMEOUT_MS,
};
use crate::core::setup::store::Area::Local;

/// Exports run `run_id` (its kept log) to every enabled collector, in the background.
pub(crate) fn export(run_id: String) {
    spawn_local(async move {
        let collectors = collector::stored(read(Local, COLLECTORS_KEY).await.ok().flatten());
        if !collectors.iter().any(|c| c.enabled) {
            return;
        }
        let Ok(log) = super::runlog::run_log(&run_id, 0).await else {
            return;
        };
        let mut keys = BTreeMap::new();
        for name in collector::needed_keys(&collectors) {
            if let Ok(Some(value)) = read_key(&name).await {
                keys.insert(name, value);
            }
        }
        let routes = super::store::key_routes(&collectors).await;
        let (exports, errors) =
            collector::exports(&collectors, &log, &keys, &routes, crate::VERSION);
        for error in errors {
            chrome::warn(&format!("webmcp-host: run {run_id}: {error}"));
        }
        for export in exports {
            spawn_local(send(run_id.clone(), export));
        }
    });
}

/// Sends one export, trying again as the core says.
async fn send(run_id: String, export: Export) {
    let mut attempt = 1;
    loop {
        let headers = convert::headers(&export.headers).into();
        let status = post_bytes(&export.url, headers, &export.body, EXPORT_TIMEOUT_MS).await;
        let status = status.as_f64().map(|s| s as u16).filter(|s| *s != 0);
        match retry_after(status, attempt) {
            Some(wait) => {
                let _ = JsFuture::from(sleep(wait)).await;
                attempt += 1;
            }
            None => {
                if !matches!(status, Some(200..=299)) {
                    let answer = status.map_or("no answer".into(), |s| format!("status {s}"));
                    chrome::warn(&format!(
                        "webmcp-host: run {run_id}'s trace was not taken by collector `{}` ({answer} after {attempt} attempts)",
                        export.collector
                    ));
                }
                return;
            }
        }
    }
}
