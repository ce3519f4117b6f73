//! How an MCP tool call ended, and the secrets a connection sends (redacted from what its
//! server answers by [`crate::core::egress`]).

use serde_json::Value;

use super::auth::AuthRecord;
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
/// text, its structured content and its error: what the connection sends now, a token
/// refreshed during a run included, never comes back through a result.
pub fn redact_result<S: AsRef<str>>(result: CallResult, secrets: &[S]) -> CallResult {
    match result {
        CallResult::Ok { text, structured } => CallResult::Ok {
            text: redact(&text, secrets),
            structured: structured.map(|value| redact_value(&value, secrets)),
        },
        CallResult::Error(error) => CallResult::Error(redact(&error, secrets)),
    }
}
