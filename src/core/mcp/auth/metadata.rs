//! Protected resource and authorization server metadata: parsed, checked against the issuer
//! and the resource they claim, and the scope to ask for.

use serde_json::Value;

use super::url::{check_endpoint_url, strip_query};

pub use crate::core::limits::MAX_AUTH_BODY_BYTES;

/// Protected resource metadata (RFC 9728), what this client uses of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceMetadata {
    /// `resource`: the resource's identifier.
    pub resource: Option<String>,
    /// `authorization_servers`: the issuers, in the server's order.
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`, if advertised.
    pub scopes_supported: Option<Vec<String>>,
}

/// The strings of a JSON array (what is not a string left out), when it is one.
pub(in crate::core::mcp) fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

pub(super) fn json_object(body: &str, what: &str) -> Result<Value, String> {
    if body.len() > MAX_AUTH_BODY_BYTES {
        return Err(format!(
            "the {what} is larger than {MAX_AUTH_BODY_BYTES} bytes"
        ));
    }
    match serde_json::from_str::<Value>(body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(format!("the {what} is not a JSON object")),
    }
}

/// Reads protected resource metadata (RFC 9728); the error says what is wrong.
pub fn parse_resource_metadata(body: &str) -> Result<ResourceMetadata, String> {
    let value = json_object(body, "protected resource metadata")?;
    let authorization_servers = strings(value.get("authorization_servers")).unwrap_or_default();
    if authorization_servers.is_empty() {
        return Err("the protected resource metadata names no authorization server".into());
    }
    Ok(ResourceMetadata {
        resource: value
            .get("resource")
            .and_then(Value::as_str)
            .map(str::to_owned),
        authorization_servers,
        scopes_supported: strings(value.get("scopes_supported")),
    })
}

/// Authorization server metadata (RFC 8414 / OpenID Connect discovery).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerMetadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `registration_endpoint` (dynamic registration), if any.
    pub registration_endpoint: Option<String>,
    /// `scopes_supported`, if advertised.
    pub scopes_supported: Option<Vec<String>>,
    /// `code_challenge_methods_supported` (PKCE needs `S256`).
    pub code_challenge_methods_supported: Vec<String>,
    /// Empty when not advertised (then `client_secret_basic` is the default, RFC 8414 §2).
    pub token_endpoint_auth_methods_supported: Vec<String>,
    /// `client_id_metadata_document_supported`.
    pub client_id_metadata_document_supported: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207): every authorization
    /// answer must then name the issuer.
    pub authorization_response_iss_parameter_supported: bool,
}

/// Parses and checks an authorization server's metadata: the endpoints are https (or
/// loopback http), the issuer is the one it was looked up for (`expected_issuer`, compared
/// without a trailing slash), and PKCE S256 is advertised.
pub fn parse_server_metadata(
    body: &str,
    expected_issuer: Option<&str>,
) -> Result<ServerMetadata, String> {
    let value = json_object(body, "authorization server metadata")?;
    let text = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let issuer = text("issuer").unwrap_or_default();
    if let Some(expected) = expected_issuer {
        // Identical, as RFC 8414 and MCP 2026-07-28 say: no trailing-slash or case folding.
        if issuer != expected {
            return Err(format!(
                "the authorization server metadata is for issuer `{}`, not `{}`",
                strip_query(&issuer),
                strip_query(expected)
            ));
        }
    }
    let authorization_endpoint = text("authorization_endpoint")
        .ok_or("the authorization server metadata has no authorization_endpoint")?;
    let token_endpoint =
        text("token_endpoint").ok_or("the authorization server metadata has no token_endpoint")?;
    check_endpoint_url(&authorization_endpoint, "authorization endpoint")?;
    check_endpoint_url(&token_endpoint, "token endpoint")?;
    let registration_endpoint = text("registration_endpoint");
    if let Some(url) = &registration_endpoint {
        check_endpoint_url(url, "registration endpoint")?;
    }
    let code_challenge_methods_supported =
        strings(value.get("code_challenge_methods_supported")).unwrap_or_default();
    if !code_challenge_methods_supported.iter().any(|m| m == "S256") {
        return Err(format!(
            "the authorization server {} does not advertise PKCE S256 (code_challenge_methods_supported), so this client will not sign in there",
            strip_query(&issuer)
        ));
    }
    Ok(ServerMetadata {
        issuer,
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        scopes_supported: strings(value.get("scopes_supported")),
        code_challenge_methods_supported,
        token_endpoint_auth_methods_supported: strings(
            value.get("token_endpoint_auth_methods_supported"),
        )
        .unwrap_or_default(),
        authorization_response_iss_parameter_supported: value
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        client_id_metadata_document_supported: value
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// The scope to ask for: the challenge's, else the resource's `scopes_supported`, else none.
/// On a step-up (`previous` set), what was granted before is kept too.
pub fn select_scope(
    challenge: Option<&str>,
    scopes_supported: Option<&[String]>,
    previous: Option<&str>,
) -> Option<String> {
    let mut scopes: Vec<String> = Vec::new();
    let mut add = |text: &str| {
        for s in text.split_whitespace() {
            if !scopes.iter().any(|x| x == s) {
                scopes.push(s.to_owned());
            }
        }
    };
    if let Some(previous) = previous {
        add(previous);
    }
    match (challenge, scopes_supported) {
        (Some(scope), _) => add(scope),
        (None, Some(supported)) => add(&supported.join(" ")),
        (None, None) => {}
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}
