//! An HTTP request as the core asks the shells to perform it (a model call, an MCP request, a
//! sign-in's token request, a trace export): a leaf, so that every area that asks for one
//! names it without importing another area.

use serde::Serialize;

/// An HTTP request for the shell to perform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The whole URL; never carries a key.
    pub url: String,
    /// Header names and values in order, keys included (only ever sent to their own model).
    pub headers: Vec<(String, String)>,
    /// The request body (JSON text), empty when there is none.
    pub body: String,
}
