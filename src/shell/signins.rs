//! The sign-ins the worker's MCP client sends: the stored records of both areas, read fresh
//! and refreshed when due (`record_for`, `refresh_after_refusal`), and the step-up
//! challenges a server sent (`note_challenge`). The operations that sign in and out are
//! `auth.rs`'s; this module is what both it and the connections (`mcp.rs`, `kept.rs`) use,
//! and it uses neither.

use std::collections::HashMap;

use super::convert::{self, describe};
use super::io::{fetch_text, now_ms, storage_get, storage_set};
use crate::core::http::HttpRequest;
use crate::core::mcp::auth::{
    Area, AuthRecord, Records, TokenState, Write, MAX_AUTH_BODY_BYTES, REQUEST_MS,
};
use crate::core::mcp::source::McpServerConfig;

/// `f` on the last step-up challenge per server (for the next sign-in).
pub(crate) fn with_challenges<T>(f: impl FnOnce(&mut HashMap<String, String>) -> T) -> T {
    super::state::host(|host| f(&mut host.challenges.borrow_mut()))
}

/// Both storage areas' records, as they are now.
pub(crate) async fn records() -> Records {
    let read = |area: Area| async move {
        let stored = storage_get(area.name(), area.key()).await.ok()?;
        convert::to_json(&stored).ok()
    };
    Records::read(read(Area::Session).await, read(Area::Local).await)
}

pub(crate) async fn write(writes: Vec<Write>) -> Result<(), String> {
    for Write { area, map } in writes {
        let value = convert::from_json(&map);
        if let Err(e) = storage_set(area.name(), area.key(), value).await {
            // A full area names what fills it.
            let store_area = match area {
                Area::Local => crate::core::storage::Area::Local,
                Area::Session => crate::core::storage::Area::Session,
            };
            return Err(super::store::failed(store_area, area.key(), &describe(&e)).await);
        }
    }
    Ok(())
}

/// The record to use for a connection to `config`: refreshed first when due; `None` when
/// there is none (or it expired and cannot be refreshed).
pub(crate) async fn record_for(config: &McpServerConfig) -> Option<AuthRecord> {
    let (record, area) = records().await.find(config)?;
    match record.token_state(now_ms()) {
        TokenState::Fresh => Some(record),
        TokenState::Refresh => refresh(config, record, area).await,
        TokenState::Expired => None,
    }
}

/// After a 401 with a record: a refresh, when the record can be refreshed.
pub(crate) async fn refresh_after_refusal(
    config: &McpServerConfig,
    record: &AuthRecord,
) -> Option<AuthRecord> {
    record.tokens.refresh_token.as_ref()?;
    let area = records().await.find(config).map_or(Area::Session, |f| f.1);
    refresh(config, record.clone(), area).await
}

async fn refresh(
    config: &McpServerConfig,
    mut record: AuthRecord,
    area: Area,
) -> Option<AuthRecord> {
    let (status, body) = http(&record.refresh_request()?).await;
    record.refreshed(status, &body, now_ms()).ok()?;
    let _ = write(records().await.store(&config.name, &record, area)).await;
    Some(record)
}

/// A 403 `insufficient_scope` seen on a server: the next sign-in asks for that scope.
pub(crate) fn note_challenge(server: &str, www_authenticate: Option<&str>) {
    if let Some(header) = www_authenticate {
        with_challenges(|c| c.insert(server.to_owned(), header.to_owned()));
    }
}

/// One request of a sign-in: status (0 when there was no answer) and body (capped).
pub(crate) async fn http(request: &HttpRequest) -> (u16, String) {
    match fetch_text(request.clone(), REQUEST_MS, MAX_AUTH_BODY_BYTES).await {
        Ok(Some(answer)) => answer,
        Ok(None) => (0, "no answer in time".into()),
        Err(error) => (0, error),
    }
}
