//! How an MCP tool call ended, and the secrets a connection sends (redacted from what its
//! server answers by [`crate::core::egress`]).

use serde_json::Value;

use super::auth::AuthRecord;
use crate::core::agui::ContentPart;
use crate::core::egress::{redact, redact_value};

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// The result for the model, as text.
    Ok {
        /// The result as text.
        text: String,
        /// `structuredContent`, if any.
        structured: Option<Value>,
        /// The result's images, audio and resources as AG-UI content parts (none for a
        /// text-only result): the model gets a note of each in `text`, a run's
        /// `TOOL_CALL_RESULT` carries them.
        parts: Vec<ContentPart>,
    },
    /// `isError: true`, or a JSON-RPC error.
    Error(String),
}

/// Every secret a connection sends: its key, and its sign-in's access and refresh tokens and
/// client secret.
pub fn secrets_of(key: Option<&str>, auth: Option<&AuthRecord>) -> Vec<String> {
    let sign_in = auth.map(AuthRecord::secrets).unwrap_or_default();
    key.into_iter().chain(sign_in).map(str::to_owned).collect()
}

/// An MCP call's result with every secret of `secrets` redacted ([`redact`]) from its
/// text, its structured content, its parts and its error: what the connection sends now, a token
/// refreshed during a run included, never comes back through a result.
pub fn redact_result<S: AsRef<str>>(result: CallResult, secrets: &[S]) -> CallResult {
    match result {
        CallResult::Ok {
            text,
            structured,
            parts,
        } => CallResult::Ok {
            text: redact(&text, secrets),
            structured: structured.map(|value| redact_value(&value, secrets)),
            parts: (parts.iter())
                .filter_map(|part| serde_json::to_value(part).ok())
                .filter_map(|part| serde_json::from_value(redact_value(&part, secrets)).ok())
                .collect(),
        },
        CallResult::Error(error) => CallResult::Error(redact(&error, secrets)),
    }
}
