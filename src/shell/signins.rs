//! The sign-ins the worker's MCP client sends, as the host's sign-in machines
//! ([`crate::core::host::mcp::signins`]) decide them: the stored records of both areas, read
//! fresh and refreshed when due (`record_for`), written back, and the step-up challenges a
//! server sent. The operations that sign in and out are `auth.rs`'s; this module is what both
//! it and the connections (`kept.rs`) use, and it uses neither.

use std::collections::HashMap;

use super::drive;
use crate::core::host::mcp::signins::{ReadRecords, Refresh, WriteRecords};
use crate::core::host::mcp::text::Text;
use crate::core::http::HttpRequest;
use crate::core::mcp::auth::{AuthRecord, Records, Write, MAX_AUTH_BODY_BYTES, REQUEST_MS};
use crate::core::mcp::source::McpServerConfig;

/// `f` on the last step-up challenge per server (for the next sign-in).
pub(crate) fn with_challenges<T>(f: impl FnOnce(&mut HashMap<String, String>) -> T) -> T {
    super::state::host(|host| f(&mut host.challenges.borrow_mut()))
}

/// Both storage areas' records, as they are now.
pub(crate) async fn records() -> Records {
    let mut read = ReadRecords::default();
    Box::pin(drive(|host, input, _| host.read_records(&mut read, input))).await
}

/// Writes the records' areas; a full area names what fills it.
pub(crate) async fn write(writes: Vec<Write>) -> Result<(), String> {
    let mut write = WriteRecords::new(writes);
    Box::pin(drive(|host, input, _| {
        host.write_records(&mut write, input)
    }))
    .await
}

/// The record to use for a connection to `config`: refreshed first when due; `None` when
/// there is none (or it expired and cannot be refreshed).
pub(crate) async fn record_for(config: &McpServerConfig) -> Option<AuthRecord> {
    let mut refresh = Refresh::for_connection(config.clone());
    Box::pin(drive(|host, input, now| {
        host.sign_in_record(&mut refresh, input, now)
    }))
    .await
}

/// One request of a sign-in: status (0 when there was no answer) and body (capped).
pub(crate) async fn http(request: &HttpRequest) -> (u16, String) {
    let mut text = Text::new(request.clone(), REQUEST_MS, MAX_AUTH_BODY_BYTES);
    match Box::pin(drive(|host, input, now| {
        host.fetch_text(&mut text, input, now)
    }))
    .await
    {
        Ok(Some(answer)) => answer,
        Ok(None) => (0, "no answer in time".into()),
        Err(error) => (0, error),
    }
}
