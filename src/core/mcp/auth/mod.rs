//! MCP authorization (spec revision 2025-11-25, `basic/authorization`), the client side, sans-IO.
//!
//! A server that answers 401 (or 403 `insufficient_scope`) names, in `WWW-Authenticate`, its
//! protected resource metadata (RFC 9728) and the scope it wants. [`Flow`] walks from there to
//! a token: the resource metadata (the header's URL, else the path-based, then the root
//! `/.well-known/oauth-protected-resource`), the authorization server's metadata (RFC 8414 and
//! OpenID Connect discovery, with the path-insertion rules), the client (pre-registered, a
//! client ID metadata document, or dynamic registration, RFC 7591), the authorization code
//! with PKCE S256 and `resource` (RFC 8707), and the token request. The shell performs what it
//! asks ([`Step`]): an HTTP exchange, or showing the authorization URL to the person and
//! bringing back the redirect. Randomness (the PKCE verifier, `state`) and the clock come in
//! as values.
//!
//! [`AuthRecord`] is what a sign-in leaves: the client, the tokens and where to refresh them.
//! Its secrets never go into a URL, and [`AuthRecord::redact`] takes them out of any text.
//!
//! The sections live in their own modules and are re-exported here: [`challenge`],
//! [`url`], [`encoding`], [`metadata`], [`token`], [`flow`], [`loopback`], and for the
//! extension [`keep`] (where sign-ins are kept) and [`signin`] (its sign-in operations).

pub use crate::core::limits::MAX_AUTHORIZATIONS;

pub mod challenge;
pub mod encoding;
pub mod flow;
pub mod keep;
pub mod loopback;
pub mod metadata;
pub mod signin;
pub mod token;
pub mod url;

pub use challenge::*;
pub use encoding::*;
pub use flow::*;
pub use keep::*;
pub use loopback::*;
pub use metadata::*;
pub use signin::*;
pub use token::*;
pub use url::*;

#[cfg(test)]
mod tests;
