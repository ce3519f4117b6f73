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

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::LATEST_PROTOCOL;
use crate::core::provider::HttpRequest;

/// Authorizations at most for one request: the first one, then two step-ups (403
/// `insufficient_scope`); a server that still refuses is an error, not a loop.
pub const MAX_AUTHORIZATIONS: u32 = 3;
/// A token this close to its expiry is refreshed before use.
pub const REFRESH_MARGIN_MS: f64 = 60_000.0;
/// Metadata, registration and token answers larger than this are refused.
pub const MAX_AUTH_BODY_BYTES: usize = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// WWW-Authenticate

/// One challenge of a `WWW-Authenticate` header: its scheme and auth-params (names lowercased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
}

/// Parses a `WWW-Authenticate` header (RFC 9110 §11.6.1): challenges separated by commas,
/// auth-params as `name=token` or `name="quoted \"string\""`. A token68 is skipped.
pub fn parse_www_authenticate(header: &str) -> Vec<Challenge> {
    let bytes = header.as_bytes();
    let mut at = 0;
    let mut out: Vec<Challenge> = Vec::new();
    let skip_ws = |at: &mut usize| {
        while *at < bytes.len() && (bytes[*at] == b' ' || bytes[*at] == b'\t' || bytes[*at] == b',')
        {
            *at += 1;
        }
    };
    let token_end = |mut at: usize| {
        while at < bytes.len() && !matches!(bytes[at], b' ' | b'\t' | b',' | b'=' | b'"') {
            at += 1;
        }
        at
    };
    loop {
        skip_ws(&mut at);
        if at >= bytes.len() {
            break;
        }
        let start = at;
        let end = token_end(at);
        if end == start {
            at += 1; // a stray quote or `=`
            continue;
        }
        let word = &header[start..end];
        // After the word: `=` makes it a parameter of the current challenge.
        let mut look = end;
        while look < bytes.len() && (bytes[look] == b' ' || bytes[look] == b'\t') {
            look += 1;
        }
        let is_param = look < bytes.len() && bytes[look] == b'=' && !out.is_empty() && {
            // `token68=` (trailing `=` padding) is not a parameter.
            let mut after = look + 1;
            while after < bytes.len() && bytes[after] == b'=' {
                after += 1;
            }
            after == look + 1
        };
        if !is_param {
            out.push(Challenge {
                scheme: word.to_ascii_lowercase(),
                params: Vec::new(),
            });
            at = end;
            // A padded token68 right after the scheme (`Basic dXNlcjpw==`): skip it. (One
            // without padding reads as a scheme of its own, with no parameter: harmless.)
            let mut probe = end;
            while probe < bytes.len() && bytes[probe] == b' ' {
                probe += 1;
            }
            let t_end = token_end(probe);
            let mut eq = t_end;
            while eq < bytes.len() && bytes[eq] == b'=' {
                eq += 1;
            }
            if t_end > probe && eq - t_end >= 2 {
                at = eq;
            }
            continue;
        }
        // name = value
        at = look + 1;
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b'\t') {
            at += 1;
        }
        let value = if at < bytes.len() && bytes[at] == b'"' {
            at += 1;
            let mut value = String::new();
            let mut chars = header[at..].char_indices();
            let mut consumed = header.len() - at;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        consumed = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            at += consumed;
            value
        } else {
            let v_end = token_end(at);
            let value = header[at..v_end].to_owned();
            at = v_end;
            value
        };
        if let Some(challenge) = out.last_mut() {
            challenge.params.push((word.to_ascii_lowercase(), value));
        }
    }
    out
}

/// What a Bearer challenge says to this client.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BearerChallenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge of a `WWW-Authenticate` header (empty when there is none).
    pub fn from_header(header: Option<&str>) -> Self {
        let Some(header) = header else {
            return Self::default();
        };
        let Some(bearer) = parse_www_authenticate(header)
            .into_iter()
            .find(|c| c.scheme == "bearer")
        else {
            return Self::default();
        };
        let get = |name: &str| {
            bearer
                .params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.trim().is_empty())
        };
        BearerChallenge {
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
            error_description: get("error_description"),
        }
    }

    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

// ---------------------------------------------------------------------------------------------
// URLs

/// The parts of an absolute http(s) URL this module needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    /// `http` or `https`, lowercased.
    pub scheme: String,
    /// The host, lowercased (IPv6 in brackets).
    pub host: String,
    pub port: Option<u16>,
    /// The path, `""` when there is none; no query, no fragment.
    pub path: String,
    pub query: Option<String>,
}

impl UrlParts {
    pub fn parse(url: &str) -> Option<UrlParts> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (inside, after) = v6.split_once(']')?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p.parse().ok()?),
                None if after.is_empty() => None,
                None => return None,
            };
            (format!("[{}]", inside.to_ascii_lowercase()), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p.parse().ok()?)),
                None => (authority.to_ascii_lowercase(), None),
            }
        };
        if host.is_empty() || host.contains(char::is_whitespace) {
            return None;
        }
        let rest = &rest[authority_end..];
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
            None => (rest.to_owned(), None),
        };
        Some(UrlParts {
            scheme,
            host,
            port,
            path,
            query,
        })
    }

    /// `scheme://host[:port]`, without the scheme's default port.
    pub fn origin(&self) -> String {
        let default = match self.scheme.as_str() {
            "https" => 443,
            _ => 80,
        };
        match self.port {
            Some(port) if port != default => format!("{}://{}:{port}", self.scheme, self.host),
            _ => format!("{}://{}", self.scheme, self.host),
        }
    }

    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

/// `localhost`, `127.x.x.x` or `[::1]`.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host == "[::1]"
        || host.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|p| p.parse::<u8>().is_ok())
        })
}

/// Discovery and OAuth endpoints must be https; plain http only on loopback.
pub fn check_endpoint_url(url: &str, what: &str) -> Result<UrlParts, String> {
    let parts = UrlParts::parse(url)
        .ok_or_else(|| format!("the {what} `{}` is not an http(s) URL", strip_query(url)))?;
    if parts.scheme != "https" && !parts.is_loopback() {
        return Err(format!(
            "the {what} {} must use https (plain http only on loopback)",
            strip_query(url)
        ));
    }
    Ok(parts)
}

/// A URL without its query and fragment, for messages.
pub fn strip_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// The server URL as a resource indicator (RFC 8707): scheme and host lowercased, no
/// fragment, no default port, no trailing slash (unless the path is just `/`).
pub fn canonical_resource(server_url: &str) -> String {
    match UrlParts::parse(server_url) {
        Some(parts) => {
            let mut path = parts.path.clone();
            while path.len() > 1 && path.ends_with('/') {
                path.pop();
            }
            if path == "/" {
                path.clear();
            }
            let query = parts
                .query
                .as_deref()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            format!("{}{path}{query}", parts.origin())
        }
        None => server_url.to_owned(),
    }
}

/// Whether a protected resource's `resource` covers the server URL: same origin, and the
/// server's path within the resource's.
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some(r), Some(s)) = (UrlParts::parse(resource), UrlParts::parse(server_url)) else {
        return false;
    };
    if r.origin() != s.origin() {
        return false;
    }
    let trim = |p: &str| p.trim_end_matches('/').to_owned();
    let (rp, sp) = (trim(&r.path), trim(&s.path));
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// Where to look for the protected resource metadata, in order: the header's URL, the
/// path-based well-known URL, the root one.
pub fn resource_metadata_urls(server_url: &str, from_header: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(url) = from_header {
        out.push(url.to_owned());
    }
    if let Some(parts) = UrlParts::parse(server_url) {
        let path = parts.path.trim_end_matches('/');
        let origin = parts.origin();
        if !path.is_empty() {
            out.push(format!(
                "{origin}/.well-known/oauth-protected-resource{path}"
            ));
        }
        out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    out.dedup();
    out
}

/// Where to look for an authorization server's metadata, in order (RFC 8414 §3.1 and OpenID
/// Connect discovery): for an issuer with a path, the path goes after the well-known part
/// (`oauth-authorization-server`, then `openid-configuration`), then the OpenID form with the
/// well-known part appended; without a path, the two root documents.
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(parts) = UrlParts::parse(issuer) else {
        return Vec::new();
    };
    let origin = parts.origin();
    let path = parts.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// Encodings

const B64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Base64url without padding (RFC 4648 §5), as PKCE uses it.
pub fn base64url(bytes: &[u8]) -> String {
    base64_with(bytes, B64_URL, false)
}

/// Standard base64 with padding, for HTTP Basic.
pub fn base64_standard(bytes: &[u8]) -> String {
    base64_with(bytes, B64_STD, true)
}

/// The PKCE S256 challenge of a verifier: `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
pub fn pkce_challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// Whether a string can be a PKCE verifier: 43 to 128 unreserved characters.
pub fn valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Percent-encodes everything but the unreserved characters (for queries and forms).
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `a=1&b=2`, each part percent-encoded.
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A query parameter of a URL, decoded.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split('#').next()?.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k) == name).then(|| percent_decode(v))
    })
}

// ---------------------------------------------------------------------------------------------
// Metadata

/// Protected resource metadata (RFC 9728), what this client uses of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceMetadata {
    pub resource: Option<String>,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

fn json_object(body: &str, what: &str) -> Result<Value, String> {
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
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Vec<String>,
    /// Empty when not advertised (then `client_secret_basic` is the default, RFC 8414 §2).
    pub token_endpoint_auth_methods_supported: Vec<String>,
    pub client_id_metadata_document_supported: bool,
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
        if issuer.trim_end_matches('/') != expected.trim_end_matches('/') {
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

// ---------------------------------------------------------------------------------------------
// Clients and tokens

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuth {
    ClientSecretBasic,
    ClientSecretPost,
    None,
}

impl TokenAuth {
    pub fn name(self) -> &'static str {
        match self {
            TokenAuth::ClientSecretBasic => "client_secret_basic",
            TokenAuth::ClientSecretPost => "client_secret_post",
            TokenAuth::None => "none",
        }
    }

    fn from_name(name: &str) -> Option<TokenAuth> {
        match name {
            "client_secret_basic" => Some(TokenAuth::ClientSecretBasic),
            "client_secret_post" => Some(TokenAuth::ClientSecretPost),
            "none" => Some(TokenAuth::None),
            _ => None,
        }
    }

    /// The method for a client with (or without) a secret, among what the server supports
    /// (`supported` empty: not advertised, so `client_secret_basic`, RFC 8414 §2).
    pub fn choose(has_secret: bool, supported: &[String]) -> TokenAuth {
        if !has_secret {
            return TokenAuth::None;
        }
        let has = |m: &str| supported.iter().any(|s| s == m);
        if supported.is_empty() || has("client_secret_basic") {
            TokenAuth::ClientSecretBasic
        } else if has("client_secret_post") {
            TokenAuth::ClientSecretPost
        } else {
            TokenAuth::ClientSecretBasic
        }
    }
}

/// A client of an authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentials {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Chosen from the server's metadata when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<TokenAuth>,
}

/// The tokens of a sign-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (ms since the epoch), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// A token endpoint's answer: tokens, or the refusal as text (without any secret).
pub fn parse_token_response(status: u16, body: &str, now_ms: f64) -> Result<Tokens, String> {
    let value = json_object(body, "token endpoint's answer");
    if !(200..300).contains(&status) {
        let (error, description) = match &value {
            Ok(v) => (
                v.get("error").and_then(Value::as_str).unwrap_or(""),
                v.get("error_description")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            Err(_) => ("", ""),
        };
        return Err(match (error, description) {
            ("", _) => format!("the token endpoint answered {status}"),
            (e, "") => format!("the token endpoint refused ({status}): {}", clip(e, 100)),
            (e, d) => format!(
                "the token endpoint refused ({status}): {}: {}",
                clip(e, 100),
                clip(d, 300)
            ),
        });
    }
    let value = value?;
    let access_token = value
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("the token endpoint's answer has no access_token")?
        .to_owned();
    if let Some(kind) = value.get("token_type").and_then(Value::as_str) {
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(format!(
                "the token endpoint gave a `{}` token; this client uses Bearer tokens only",
                clip(kind, 40)
            ));
        }
    }
    let expires_at_ms = value
        .get("expires_in")
        .and_then(|v| {
            v.as_f64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| now_ms + s * 1000.0);
    Ok(Tokens {
        access_token,
        refresh_token: value
            .get("refresh_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        expires_at_ms,
        scope: value
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn clip(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// What to do with a record's access token now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenState {
    /// Use it.
    Fresh,
    /// Refresh it first (expired or about to, and there is a refresh token).
    Refresh,
    /// Expired with no way to refresh: sign in again.
    Expired,
}

/// What a sign-in leaves, kept by the shell (never shown to pages, events or logs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthRecord {
    /// The MCP server URL signed in to.
    pub server_url: String,
    /// The `resource` the tokens were asked for.
    pub resource: String,
    pub issuer: String,
    pub token_endpoint: String,
    pub client: ClientCredentials,
    pub tokens: Tokens,
    /// The scope asked for (the tokens' own `scope` may differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// When the sign-in (or the last refresh) happened, ms since the epoch.
    pub obtained_ms: f64,
}

impl AuthRecord {
    /// The header every request to the server carries.
    pub fn bearer(&self) -> (String, String) {
        (
            "authorization".to_owned(),
            format!("Bearer {}", self.tokens.access_token),
        )
    }

    pub fn token_state(&self, now_ms: f64) -> TokenState {
        match self.tokens.expires_at_ms {
            Some(at) if now_ms + REFRESH_MARGIN_MS >= at => {
                if self.tokens.refresh_token.is_some() {
                    TokenState::Refresh
                } else if now_ms >= at {
                    TokenState::Expired
                } else {
                    TokenState::Fresh
                }
            }
            _ => TokenState::Fresh,
        }
    }

    /// The refresh request (RFC 6749 §6), when there is a refresh token.
    pub fn refresh_request(&self) -> Option<HttpRequest> {
        let refresh = self.tokens.refresh_token.as_deref()?;
        let mut fields = vec![("grant_type", "refresh_token"), ("refresh_token", refresh)];
        fields.push(("resource", self.resource.as_str()));
        Some(token_request(&self.token_endpoint, &self.client, fields))
    }

    /// Takes the refresh answer in; an error means: sign in again.
    pub fn refreshed(&mut self, status: u16, body: &str, now_ms: f64) -> Result<(), String> {
        let mut tokens = parse_token_response(status, body, now_ms).map_err(|e| self.redact(&e))?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = self.tokens.refresh_token.take();
        }
        self.tokens = tokens;
        self.obtained_ms = now_ms;
        Ok(())
    }

    /// The secrets this record holds.
    pub fn secrets(&self) -> Vec<&str> {
        [
            Some(self.tokens.access_token.as_str()),
            self.tokens.refresh_token.as_deref(),
            self.client.client_secret.as_deref(),
        ]
        .into_iter()
        .flatten()
        .filter(|s| s.len() >= 4)
        .collect()
    }

    /// `text` with every secret of the record replaced by `[token]`.
    pub fn redact(&self, text: &str) -> String {
        redact_all(text, &self.secrets())
    }

    /// What may be shown about the sign-in: no secret.
    pub fn summary(&self, now_ms: f64) -> Value {
        json!({
            "signedIn": true,
            "issuer": self.issuer,
            "scope": self.tokens.scope.clone().or_else(|| self.scope.clone()),
            "expiresAtMs": self.tokens.expires_at_ms,
            "refreshable": self.tokens.refresh_token.is_some(),
            "state": match self.token_state(now_ms) {
                TokenState::Fresh => "fresh",
                TokenState::Refresh => "refresh",
                TokenState::Expired => "expired",
            },
        })
    }
}

/// `text` with each secret (and any 12-character run of a long one) replaced by `[token]`.
pub fn redact_all(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret, "[token]");
        if secret.len() > 16 {
            for start in 0..=secret.len() - 12 {
                if let Some(fragment) = secret.get(start..start + 12) {
                    if out.contains(fragment) {
                        out = out.replace(fragment, "[token]");
                    }
                }
            }
        }
    }
    out
}

/// A form POST to the token endpoint, authenticated as the client's method says.
fn token_request(
    endpoint: &str,
    client: &ClientCredentials,
    fields: Vec<(&str, &str)>,
) -> HttpRequest {
    let mut fields = fields;
    let mut headers = vec![
        (
            "content-type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
        ("accept".to_owned(), "application/json".to_owned()),
    ];
    let method = client
        .auth_method
        .unwrap_or(if client.client_secret.is_some() {
            TokenAuth::ClientSecretBasic
        } else {
            TokenAuth::None
        });
    match (method, client.client_secret.as_deref()) {
        (TokenAuth::ClientSecretBasic, Some(secret)) => {
            // RFC 6749 §2.3.1: both parts form-encoded before base64.
            let pair = format!(
                "{}:{}",
                percent_encode(&client.client_id),
                percent_encode(secret)
            );
            headers.push((
                "authorization".to_owned(),
                format!("Basic {}", base64_standard(pair.as_bytes())),
            ));
        }
        (TokenAuth::ClientSecretPost, Some(secret)) => {
            fields.push(("client_id", &client.client_id));
            fields.push(("client_secret", secret));
        }
        _ => fields.push(("client_id", &client.client_id)),
    }
    HttpRequest {
        method: "POST".into(),
        url: endpoint.to_owned(),
        headers,
        body: form_encode(&fields),
    }
}

// ---------------------------------------------------------------------------------------------
// The flow

/// What the person (or the configuration) gives a sign-in.
#[derive(Debug, Clone, Default)]
pub struct FlowConfig {
    pub server_url: String,
    /// Where the authorization server sends the person back.
    pub redirect_uri: String,
    pub client_name: String,
    /// Pre-registered credentials, used first.
    pub preregistered: Option<ClientCredentials>,
    /// The URL of this client's metadata document, used as its client id where the server
    /// supports that.
    pub metadata_document: Option<String>,
    /// The challenge that started the sign-in (from a 401 or 403), if any.
    pub challenge: BearerChallenge,
    /// The previous sign-in to this server (its client is reused, its scope kept on a step-up).
    pub previous: Option<AuthRecord>,
}

/// The random values of one sign-in, made by the shell.
#[derive(Debug, Clone)]
pub struct FlowSecrets {
    /// The PKCE code verifier (43–128 unreserved characters).
    pub verifier: String,
    /// The `state` parameter.
    pub state: String,
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Perform this request; give the status and body to [`Flow::response`].
    Fetch(HttpRequest),
    /// Show the person this URL; give the redirect (to `redirect_uri`) to [`Flow::redirected`].
    Authorize {
        url: String,
    },
    Done(AuthRecord),
    Failed(String),
}

#[derive(Debug, Clone)]
enum State {
    ResourceMetadata {
        candidates: Vec<String>,
        at: usize,
    },
    ServerMetadata {
        issuer: String,
        candidates: Vec<String>,
        at: usize,
        /// The resource metadata was not found: the server's origin is tried as the
        /// authorization server (2025-03-26 servers).
        legacy: bool,
    },
    Register,
    Authorize,
    Token,
    Done(Box<AuthRecord>),
    Failed(String),
}

/// One sign-in, from a challenge to tokens.
#[derive(Debug, Clone)]
pub struct Flow {
    config: FlowConfig,
    secrets: FlowSecrets,
    state: State,
    resource_metadata: Option<ResourceMetadata>,
    server: Option<ServerMetadata>,
    client: Option<ClientCredentials>,
    resource: String,
    scope: Option<String>,
    /// The authorization code, once the person came back with it.
    code: Option<String>,
    /// Why the last candidate URL failed, for the message when all do.
    misses: Vec<String>,
}

impl Flow {
    pub fn new(config: FlowConfig, secrets: FlowSecrets) -> Flow {
        let mut flow = Flow {
            resource: canonical_resource(&config.server_url),
            state: State::Failed(String::new()),
            config,
            secrets,
            resource_metadata: None,
            server: None,
            client: None,
            scope: None,
            code: None,
            misses: Vec::new(),
        };
        flow.state = flow.first_state();
        flow
    }

    fn first_state(&self) -> State {
        if !valid_verifier(&self.secrets.verifier) || self.secrets.state.len() < 8 {
            return State::Failed("the sign-in's random values are malformed".into());
        }
        if let Err(e) = check_endpoint_url(&self.config.server_url, "MCP server URL") {
            return State::Failed(e);
        }
        let from_header = match self.config.challenge.resource_metadata.as_deref() {
            Some(url) => match check_endpoint_url(url, "resource metadata URL") {
                Ok(_) => Some(url),
                Err(_) => None, // ignored: the well-known URLs are tried
            },
            None => None,
        };
        State::ResourceMetadata {
            candidates: resource_metadata_urls(&self.config.server_url, from_header),
            at: 0,
        }
    }

    /// The resource the tokens are for (the resource metadata's, else the server URL).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scope asked for, once known.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// What to do now.
    pub fn step(&self) -> Step {
        match &self.state {
            State::ResourceMetadata { candidates, at } => Step::Fetch(HttpRequest {
                method: "GET".into(),
                url: candidates[*at].clone(),
                headers: vec![
                    ("accept".into(), "application/json".into()),
                    ("mcp-protocol-version".into(), LATEST_PROTOCOL.into()),
                ],
                body: String::new(),
            }),
            State::ServerMetadata { candidates, at, .. } => Step::Fetch(HttpRequest {
                method: "GET".into(),
                url: candidates[*at].clone(),
                headers: vec![("accept".into(), "application/json".into())],
                body: String::new(),
            }),
            State::Register => Step::Fetch(self.registration_request()),
            State::Authorize => Step::Authorize {
                url: self.authorization_url(),
            },
            State::Token => Step::Fetch(self.code_request()),
            State::Done(record) => Step::Done((**record).clone()),
            State::Failed(message) => Step::Failed(message.clone()),
        }
    }

    /// The answer to the last [`Step::Fetch`]: its status and body (`status` 0: no answer,
    /// `body` then says why).
    pub fn response(&mut self, status: u16, body: &str, now_ms: f64) {
        let ok = (200..300).contains(&status);
        let state = std::mem::replace(&mut self.state, State::Failed(String::new()));
        self.state = match state {
            State::ResourceMetadata { candidates, at } => {
                let parsed = if ok {
                    parse_resource_metadata(body)
                } else {
                    Err(describe_status(status, body))
                };
                match parsed {
                    Ok(metadata) => self.after_resource_metadata(metadata),
                    Err(why) => {
                        self.misses
                            .push(format!("{}: {why}", strip_query(&candidates[at])));
                        if at + 1 < candidates.len() {
                            State::ResourceMetadata {
                                candidates,
                                at: at + 1,
                            }
                        } else {
                            // No resource metadata: the 2025-03-26 way, the server's origin
                            // as the authorization server.
                            let origin = UrlParts::parse(&self.config.server_url)
                                .map(|p| p.origin())
                                .unwrap_or_default();
                            State::ServerMetadata {
                                candidates: authorization_server_metadata_urls(&origin),
                                issuer: origin,
                                at: 0,
                                legacy: true,
                            }
                        }
                    }
                }
            }
            State::ServerMetadata {
                issuer,
                candidates,
                at,
                legacy,
            } => {
                let parsed = if ok {
                    parse_server_metadata(body, (!legacy).then_some(issuer.as_str()))
                } else {
                    Err(describe_status(status, body))
                };
                match parsed {
                    Ok(metadata) => self.after_server_metadata(metadata),
                    // A server that is there but unfit (no S256, wrong issuer) is final.
                    Err(why) if ok => State::Failed(why),
                    Err(why) => {
                        self.misses
                            .push(format!("{}: {why}", strip_query(&candidates[at])));
                        if at + 1 < candidates.len() {
                            State::ServerMetadata {
                                issuer,
                                candidates,
                                at: at + 1,
                                legacy,
                            }
                        } else {
                            State::Failed(format!(
                                "no authorization server metadata was found ({})",
                                self.misses.join("; ")
                            ))
                        }
                    }
                }
            }
            State::Register => match parse_registration(status, body, self.server.as_ref()) {
                Ok(client) => {
                    self.client = Some(client);
                    State::Authorize
                }
                Err(why) => State::Failed(why),
            },
            State::Token => match parse_token_response(status, body, now_ms) {
                Ok(tokens) => {
                    let server = self.server.clone().unwrap_or_default();
                    State::Done(Box::new(AuthRecord {
                        server_url: self.config.server_url.clone(),
                        resource: self.resource.clone(),
                        issuer: server.issuer,
                        token_endpoint: server.token_endpoint,
                        client: self.client.clone().expect("a client before the token"),
                        tokens,
                        scope: self.scope.clone(),
                        obtained_ms: now_ms,
                    }))
                }
                Err(why) => State::Failed(self.redact(&why)),
            },
            other => other,
        };
    }

    /// Where the authorization server sent the person back (the full redirect URL).
    pub fn redirected(&mut self, url: &str) {
        if !matches!(self.state, State::Authorize) {
            return;
        }
        let expected = strip_query(&self.config.redirect_uri);
        if strip_query(url) != expected {
            self.state = State::Failed(
                "the sign-in ended somewhere else than this client's redirect URI".into(),
            );
            return;
        }
        if query_param(url, "state").as_deref() != Some(self.secrets.state.as_str()) {
            self.state = State::Failed(
                "the sign-in's answer does not carry this sign-in's state; it was ignored".into(),
            );
            return;
        }
        if let Some(error) = query_param(url, "error") {
            let description = query_param(url, "error_description")
                .map(|d| format!(": {}", clip(&d, 300)))
                .unwrap_or_default();
            self.state = State::Failed(format!(
                "the authorization server refused the sign-in ({}){description}",
                clip(&error, 100)
            ));
            return;
        }
        match query_param(url, "code").filter(|c| !c.is_empty()) {
            Some(code) => {
                self.code = Some(code);
                self.state = State::Token;
            }
            None => self.state = State::Failed("the sign-in's answer carries no code".into()),
        }
    }

    /// The person gave up (closed the window) or the shell could not show the page.
    pub fn abandoned(&mut self, why: &str) {
        self.state = State::Failed(format!("the sign-in did not finish: {why}"));
    }

    fn after_resource_metadata(&mut self, metadata: ResourceMetadata) -> State {
        if let Some(resource) = &metadata.resource {
            if !resource_covers(resource, &self.config.server_url) {
                return State::Failed(format!(
                    "the protected resource metadata is for {}, not for this server ({})",
                    strip_query(resource),
                    strip_query(&self.config.server_url)
                ));
            }
            self.resource = resource.clone();
        }
        let issuer = metadata.authorization_servers[0].clone();
        if let Err(e) = check_endpoint_url(&issuer, "authorization server") {
            return State::Failed(e);
        }
        self.resource_metadata = Some(metadata);
        State::ServerMetadata {
            candidates: authorization_server_metadata_urls(&issuer),
            issuer,
            at: 0,
            legacy: false,
        }
    }

    fn after_server_metadata(&mut self, metadata: ServerMetadata) -> State {
        let supported = self
            .resource_metadata
            .as_ref()
            .and_then(|m| m.scopes_supported.as_deref());
        let previous_scope = self
            .config
            .previous
            .as_ref()
            .filter(|_| self.config.challenge.insufficient_scope())
            .and_then(|p| p.tokens.scope.clone().or_else(|| p.scope.clone()));
        self.scope = select_scope(
            self.config.challenge.scope.as_deref(),
            supported,
            previous_scope.as_deref(),
        );
        let methods = metadata.token_endpoint_auth_methods_supported.clone();
        let same_issuer = |r: &AuthRecord| {
            r.issuer.trim_end_matches('/') == metadata.issuer.trim_end_matches('/')
        };
        let state = if let Some(mut client) = self.config.preregistered.clone() {
            if client.auth_method.is_none() {
                client.auth_method =
                    Some(TokenAuth::choose(client.client_secret.is_some(), &methods));
            }
            self.client = Some(client);
            State::Authorize
        } else if let Some(previous) = self.config.previous.as_ref().filter(|r| same_issuer(r)) {
            self.client = Some(previous.client.clone());
            State::Authorize
        } else if let Some(url) = self
            .config
            .metadata_document
            .clone()
            .filter(|_| metadata.client_id_metadata_document_supported)
        {
            self.client = Some(ClientCredentials {
                client_id: url,
                client_secret: None,
                auth_method: Some(TokenAuth::None),
            });
            State::Authorize
        } else if metadata.registration_endpoint.is_some() {
            State::Register
        } else {
            State::Failed(format!(
                "the authorization server {} does not register clients by itself: register this client there (redirect URI {}) and give its client id for this server",
                strip_query(&metadata.issuer),
                self.config.redirect_uri
            ))
        };
        self.server = Some(metadata);
        state
    }

    fn registration_request(&self) -> HttpRequest {
        let server = self.server.as_ref().expect("metadata before registration");
        let supported = &server.token_endpoint_auth_methods_supported;
        let has = |m: &str| supported.iter().any(|s| s == m);
        // A public client where allowed (a browser extension and a CLI keep no secret well).
        let method = if supported.is_empty() || has("none") {
            "none"
        } else if has("client_secret_basic") {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        let mut body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        });
        if let Some(scope) = &self.scope {
            body["scope"] = json!(scope);
        }
        HttpRequest {
            method: "POST".into(),
            url: server.registration_endpoint.clone().unwrap_or_default(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: body.to_string(),
        }
    }

    fn authorization_url(&self) -> String {
        let server = self.server.as_ref().expect("metadata before authorization");
        let client = self.client.as_ref().expect("a client before authorization");
        let challenge = pkce_challenge(&self.secrets.verifier);
        let mut fields = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", self.config.redirect_uri.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", self.secrets.state.as_str()),
            ("resource", self.resource.as_str()),
        ];
        if let Some(scope) = &self.scope {
            fields.push(("scope", scope));
        }
        let endpoint = &server.authorization_endpoint;
        let joiner = if endpoint.contains('?') { '&' } else { '?' };
        format!("{endpoint}{joiner}{}", form_encode(&fields))
    }

    fn code_request(&self) -> HttpRequest {
        let server = self.server.as_ref().expect("metadata before the token");
        let client = self.client.as_ref().expect("a client before the token");
        let code = self.code.as_deref().unwrap_or("");
        token_request(
            &server.token_endpoint,
            client,
            vec![
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", &self.config.redirect_uri),
                ("code_verifier", &self.secrets.verifier),
                ("resource", &self.resource),
            ],
        )
    }

    fn redact(&self, text: &str) -> String {
        let mut secrets: Vec<&str> = vec![self.secrets.verifier.as_str()];
        if let Some(code) = self.code.as_deref() {
            secrets.push(code);
        }
        if let Some(secret) = self
            .client
            .as_ref()
            .and_then(|c| c.client_secret.as_deref())
        {
            secrets.push(secret);
        }
        redact_all(text, &secrets)
    }
}

fn describe_status(status: u16, body: &str) -> String {
    if status == 0 {
        format!("not reachable ({})", clip(body, 200))
    } else {
        format!("{status}")
    }
}

/// A registration answer (RFC 7591 §3.2.1): the client, with its token endpoint method.
fn parse_registration(
    status: u16,
    body: &str,
    server: Option<&ServerMetadata>,
) -> Result<ClientCredentials, String> {
    if !(200..300).contains(&status) {
        let detail = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| {
                let error = v.get("error")?.as_str()?.to_owned();
                let description = v
                    .get("error_description")
                    .and_then(Value::as_str)
                    .map(|d| format!(": {}", clip(d, 300)))
                    .unwrap_or_default();
                Some(format!(" ({}{description})", clip(&error, 100)))
            })
            .unwrap_or_default();
        return Err(format!(
            "the authorization server refused to register this client ({status}){detail}; give a client id for this server instead"
        ));
    }
    let value = json_object(body, "registration answer")?;
    let client_id = value
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("the registration answer has no client_id")?
        .to_owned();
    let client_secret = value
        .get("client_secret")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let supported = server
        .map(|s| s.token_endpoint_auth_methods_supported.clone())
        .unwrap_or_default();
    let auth_method = value
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .and_then(TokenAuth::from_name)
        .filter(|m| *m == TokenAuth::None || client_secret.is_some())
        .unwrap_or_else(|| TokenAuth::choose(client_secret.is_some(), &supported));
    Ok(ClientCredentials {
        client_id,
        client_secret,
        auth_method: Some(auth_method),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    fn secrets() -> FlowSecrets {
        FlowSecrets {
            verifier: VERIFIER.into(),
            state: "state-0123456789".into(),
        }
    }

    fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
        request
            .headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn fetch(flow: &Flow) -> HttpRequest {
        match flow.step() {
            Step::Fetch(request) => request,
            other => panic!("expected a fetch, got {other:?}"),
        }
    }

    #[test]
    fn www_authenticate_challenges_and_params() {
        let header = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", error_description="needs \"write\"""#;
        let challenges = parse_www_authenticate(header);
        assert_eq!(challenges.len(), 1);
        let c = BearerChallenge::from_header(Some(header));
        assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
        );
        assert!(c.insufficient_scope());
        assert_eq!(c.error_description.as_deref(), Some(r#"needs "write""#));

        // Several challenges, a token68, unquoted values, odd case.
        let many = parse_www_authenticate(
            r#"Basic dXNlcjpwYXNz==, DPoP algs="ES256", BEARER realm=mcp,scope="a b" , resource_metadata=https://x.example/m"#,
        );
        let schemes: Vec<&str> = many.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["basic", "dpop", "bearer"]);
        let bearer = BearerChallenge::from_header(Some(
            r#"Basic dXNlcjpwYXNz==, DPoP algs="ES256", BEARER realm=mcp,scope="a b" , resource_metadata=https://x.example/m"#,
        ));
        assert_eq!(bearer.scope.as_deref(), Some("a b"));
        assert_eq!(
            bearer.resource_metadata.as_deref(),
            Some("https://x.example/m")
        );
        assert!(!bearer.insufficient_scope());

        assert_eq!(
            BearerChallenge::from_header(None),
            BearerChallenge::default()
        );
        assert_eq!(
            BearerChallenge::from_header(Some("Basic realm=\"x\"")),
            BearerChallenge::default()
        );
        assert_eq!(
            BearerChallenge::from_header(Some("Bearer")),
            BearerChallenge::default()
        );
        // Broken input is no panic.
        for text in [
            "",
            ",,,",
            "=",
            "Bearer scope=\"unterminated",
            "Bearer ===",
            "\"",
            "Bearer a=\"\\",
        ] {
            let _ = parse_www_authenticate(text);
        }
    }

    #[test]
    fn urls_discovery_order_and_https() {
        assert_eq!(
            resource_metadata_urls("https://mcp.example/api/mcp/", None),
            [
                "https://mcp.example/.well-known/oauth-protected-resource/api/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls("https://mcp.example:8443", Some("https://m.example/prm")),
            [
                "https://m.example/prm",
                "https://mcp.example:8443/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example/tenant1"),
            [
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example/"),
            [
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration"
            ]
        );
        assert!(check_endpoint_url("http://localhost:3000/x", "t").is_ok());
        assert!(check_endpoint_url("http://127.0.0.1/x", "t").is_ok());
        assert!(check_endpoint_url("http://[::1]:9/x", "t").is_ok());
        assert!(check_endpoint_url("http://auth.example/x", "t")
            .unwrap_err()
            .contains("https"));
        assert!(check_endpoint_url("http://127.0.0.1.evil.example/x", "t").is_err());
        assert!(check_endpoint_url("https://user@auth.example/x", "t").is_err());
        assert!(check_endpoint_url("ftp://auth.example/x", "t").is_err());
        assert_eq!(
            canonical_resource("HTTPS://MCP.Example:443/Mcp/#frag"),
            "https://mcp.example/Mcp"
        );
        assert_eq!(
            canonical_resource("https://mcp.example/"),
            "https://mcp.example"
        );
        assert!(resource_covers(
            "https://mcp.example/mcp",
            "https://mcp.example/mcp"
        ));
        assert!(resource_covers(
            "https://mcp.example",
            "https://mcp.example/mcp"
        ));
        assert!(!resource_covers(
            "https://mcp.example/mc",
            "https://mcp.example/mcp"
        ));
        assert!(!resource_covers(
            "https://other.example/mcp",
            "https://mcp.example/mcp"
        ));
    }

    #[test]
    fn pkce_base64_and_forms() {
        // RFC 7636 appendix B.
        assert_eq!(
            pkce_challenge(VERIFIER),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(valid_verifier(VERIFIER));
        assert!(!valid_verifier("short"));
        assert!(!valid_verifier(&"a b".repeat(20)));
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(base64_standard(b"fooba"), "Zm9vYmE=");
        assert_eq!(base64_standard(&[0xfb, 0xff]), "+/8=");
        assert_eq!(form_encode(&[("a b", "c&d=é")]), "a%20b=c%26d%3D%C3%A9");
        assert_eq!(
            query_param("https://x/cb?code=a%2Bb+c&state=s%3D1#f", "code").as_deref(),
            Some("a+b c")
        );
        assert_eq!(
            query_param("https://x/cb?code=1&state=s%3D1", "state").as_deref(),
            Some("s=1")
        );
        assert_eq!(query_param("https://x/cb?code=1", "state"), None);
        assert_eq!(
            query_param("https://x/cb?bad=%zz%4", "bad").as_deref(),
            Some("%zz%4")
        );
    }

    #[test]
    fn scope_selection() {
        let supported = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            select_scope(Some("x"), Some(&supported), None).as_deref(),
            Some("x")
        );
        assert_eq!(
            select_scope(None, Some(&supported), None).as_deref(),
            Some("a b")
        );
        assert_eq!(select_scope(None, None, None), None);
        assert_eq!(select_scope(None, Some(&[]), None), None);
        assert_eq!(
            select_scope(Some("a c"), None, Some("a b")).as_deref(),
            Some("a b c")
        );
    }

    #[test]
    fn token_responses_and_refresh_decisions() {
        let tokens = parse_token_response(
            200,
            r#"{"access_token":"at-1","token_type":"bearer","expires_in":3600,"refresh_token":"rt-1","scope":"a"}"#,
            1000.0,
        )
        .unwrap();
        assert_eq!(tokens.expires_at_ms, Some(3_601_000.0));
        assert_eq!(tokens.refresh_token.as_deref(), Some("rt-1"));
        assert!(
            parse_token_response(200, r#"{"access_token":"x","token_type":"mac"}"#, 0.0)
                .unwrap_err()
                .contains("Bearer")
        );
        assert!(parse_token_response(200, r#"{"token_type":"Bearer"}"#, 0.0).is_err());
        assert!(parse_token_response(200, "<html>", 0.0).is_err());
        assert_eq!(
            parse_token_response(
                400,
                r#"{"error":"invalid_grant","error_description":"expired"}"#,
                0.0
            )
            .unwrap_err(),
            "the token endpoint refused (400): invalid_grant: expired"
        );
        assert_eq!(
            parse_token_response(500, "oops", 0.0).unwrap_err(),
            "the token endpoint answered 500"
        );

        let mut record = record_with(tokens);
        assert_eq!(record.token_state(0.0), TokenState::Fresh);
        assert_eq!(record.token_state(3_560_000.0), TokenState::Refresh);
        let refresh = record.refresh_request().unwrap();
        assert!(refresh.body.contains("grant_type=refresh_token"));
        assert!(refresh.body.contains("refresh_token=rt-1"));
        assert!(refresh
            .body
            .contains("resource=https%3A%2F%2Fmcp.example%2Fmcp"));
        assert!(!refresh.url.contains("rt-1"));
        record
            .refreshed(
                200,
                r#"{"access_token":"at-2","token_type":"Bearer","expires_in":60}"#,
                5_000_000.0,
            )
            .unwrap();
        assert_eq!(record.tokens.access_token, "at-2");
        assert_eq!(record.tokens.refresh_token.as_deref(), Some("rt-1"), "kept");
        assert_eq!(record.bearer().1, "Bearer at-2");
        let refused = record
            .refreshed(
                400,
                r#"{"error":"invalid_grant","error_description":"rt-1 at-2 revoked"}"#,
                0.0,
            )
            .unwrap_err();
        assert!(
            !refused.contains("rt-1") && !refused.contains("at-2"),
            "{refused}"
        );
        record.tokens.refresh_token = None;
        assert_eq!(record.token_state(5_059_000.0), TokenState::Fresh);
        assert_eq!(record.token_state(5_061_000.0), TokenState::Expired);
        record.tokens.expires_at_ms = None;
        assert_eq!(record.token_state(f64::MAX), TokenState::Fresh);
    }

    fn record_with(tokens: Tokens) -> AuthRecord {
        AuthRecord {
            server_url: "https://mcp.example/mcp".into(),
            resource: "https://mcp.example/mcp".into(),
            issuer: "https://auth.example".into(),
            token_endpoint: "https://auth.example/token".into(),
            client: ClientCredentials {
                client_id: "c1".into(),
                client_secret: Some("client-secret-9".into()),
                auth_method: Some(TokenAuth::ClientSecretPost),
            },
            tokens,
            scope: None,
            obtained_ms: 0.0,
        }
    }

    #[test]
    fn redaction() {
        let record = record_with(Tokens {
            access_token: "access-canary-0123456789abcdef".into(),
            refresh_token: Some("refresh-canary-42".into()),
            expires_at_ms: None,
            scope: None,
        });
        let text = "got access-canary-0123456789abcdef and refresh-canary-42 and client-secret-9, part: canary-01234567";
        let clean = record.redact(text);
        assert!(!clean.contains("access-canary"), "{clean}");
        assert!(!clean.contains("refresh-canary-42"));
        assert!(!clean.contains("client-secret-9"));
        assert!(!clean.contains("canary-01234567"), "a fragment: {clean}");
        let summary = record.summary(0.0).to_string();
        for secret in record.secrets() {
            assert!(!summary.contains(secret));
        }
        let stored = serde_json::to_value(&record).unwrap();
        assert_eq!(
            stored["tokens"]["accessToken"],
            "access-canary-0123456789abcdef"
        );
        let back: AuthRecord = serde_json::from_value(stored).unwrap();
        assert_eq!(back, record);
    }

    const PRM: &str = r#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://localhost:4000/tenant1"],"scopes_supported":["mcp:a","mcp:b"]}"#;

    fn as_metadata(extra: Value) -> String {
        let mut m = json!({
            "issuer": "http://localhost:4000/tenant1",
            "authorization_endpoint": "http://localhost:4000/tenant1/authorize",
            "token_endpoint": "http://localhost:4000/tenant1/token",
            "registration_endpoint": "http://localhost:4000/tenant1/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                m.as_object_mut().unwrap().remove(k);
            } else {
                m[k] = v.clone();
            }
        }
        m.to_string()
    }

    fn config(challenge: &str) -> FlowConfig {
        FlowConfig {
            server_url: "http://localhost:3000/mcp".into(),
            redirect_uri: "http://127.0.0.1:9999/callback".into(),
            client_name: "webmcp-host".into(),
            challenge: BearerChallenge::from_header(Some(challenge)),
            ..FlowConfig::default()
        }
    }

    #[test]
    fn a_whole_flow_with_dynamic_registration() {
        let mut flow = Flow::new(
            config(
                r#"Bearer error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#,
            ),
            secrets(),
        );
        let prm = fetch(&flow);
        assert_eq!(
            prm.url,
            "http://localhost:3000/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(header(&prm, "mcp-protocol-version"), Some(LATEST_PROTOCOL));
        flow.response(200, PRM, 0.0);
        // The path-inserted OAuth form 404s, then the OpenID one answers.
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:4000/.well-known/oauth-authorization-server/tenant1"
        );
        flow.response(404, "Not Found", 0.0);
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:4000/.well-known/openid-configuration/tenant1"
        );
        flow.response(200, &as_metadata(json!({})), 0.0);
        let register = fetch(&flow);
        assert_eq!(register.url, "http://localhost:4000/tenant1/register");
        let body: Value = serde_json::from_str(&register.body).unwrap();
        assert_eq!(
            body["redirect_uris"],
            json!(["http://127.0.0.1:9999/callback"])
        );
        assert_eq!(body["token_endpoint_auth_method"], "none");
        flow.response(201, r#"{"client_id":"dyn-1"}"#, 0.0);
        let Step::Authorize { url } = flow.step() else {
            panic!("{:?}", flow.step())
        };
        assert!(url.starts_with("http://localhost:4000/tenant1/authorize?response_type=code&"));
        assert_eq!(query_param(&url, "client_id").as_deref(), Some("dyn-1"));
        assert_eq!(
            query_param(&url, "code_challenge_method").as_deref(),
            Some("S256")
        );
        assert_eq!(
            query_param(&url, "code_challenge").as_deref(),
            Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        );
        assert_eq!(
            query_param(&url, "resource").as_deref(),
            Some("http://localhost:3000/mcp")
        );
        assert_eq!(query_param(&url, "scope").as_deref(), Some("mcp:a mcp:b"));
        assert_eq!(
            query_param(&url, "state").as_deref(),
            Some("state-0123456789")
        );
        assert!(!url.contains(VERIFIER));

        // A forged answer with another state is refused.
        let mut forged = flow.clone();
        forged.redirected("http://127.0.0.1:9999/callback?code=x&state=other");
        assert!(matches!(forged.step(), Step::Failed(m) if m.contains("state")));
        let mut denied = flow.clone();
        denied.redirected(
            "http://127.0.0.1:9999/callback?error=access_denied&state=state-0123456789",
        );
        assert!(matches!(denied.step(), Step::Failed(m) if m.contains("access_denied")));

        flow.redirected("http://127.0.0.1:9999/callback?code=the-code&state=state-0123456789");
        let token = fetch(&flow);
        assert_eq!(token.url, "http://localhost:4000/tenant1/token");
        assert_eq!(header(&token, "authorization"), None);
        for part in [
            "grant_type=authorization_code",
            "code=the-code",
            &format!("code_verifier={VERIFIER}"),
            "resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp",
            "client_id=dyn-1",
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A9999%2Fcallback",
        ] {
            assert!(token.body.contains(part), "{part} in {}", token.body);
        }
        flow.response(
            200,
            r#"{"access_token":"tok","token_type":"Bearer","expires_in":10}"#,
            100.0,
        );
        let Step::Done(record) = flow.step() else {
            panic!("{:?}", flow.step())
        };
        assert_eq!(record.tokens.expires_at_ms, Some(10_100.0));
        assert_eq!(record.issuer, "http://localhost:4000/tenant1");
        assert_eq!(record.client.auth_method, Some(TokenAuth::None));
    }

    #[test]
    fn discovery_falls_back_and_refuses() {
        // No header: path-based, then root; then the server's origin as the authorization
        // server (2025-03-26).
        let mut flow = Flow::new(config("Bearer"), secrets());
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:3000/.well-known/oauth-protected-resource/mcp"
        );
        flow.response(404, "", 0.0);
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:3000/.well-known/oauth-protected-resource"
        );
        flow.response(0, "connection refused", 0.0);
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:3000/.well-known/oauth-authorization-server"
        );
        flow.response(404, "", 0.0);
        flow.response(404, "", 0.0);
        assert!(
            matches!(flow.step(), Step::Failed(m) if m.contains("no authorization server metadata"))
        );

        // A server without S256 is refused.
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"code_challenge_methods_supported": ["plain"]})),
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("S256")));
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"code_challenge_methods_supported": null})),
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("S256")));

        // Plain http off loopback is refused, in metadata and in headers.
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"token_endpoint": "http://auth.example/token"})),
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("https")));
        let flow = Flow::new(
            config(r#"Bearer resource_metadata="http://evil.example/prm""#),
            secrets(),
        );
        assert_eq!(
            fetch(&flow).url,
            "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
            "an http header URL off loopback is ignored"
        );

        // A resource for another server is refused.
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(
            200,
            r#"{"resource":"http://localhost:3001/mcp","authorization_servers":["http://localhost:4000"]}"#,
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("not for this server")));

        // A wrong issuer is refused.
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"issuer": "http://localhost:4000/other"})),
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("issuer")));

        // No registration endpoint and no client id: a clear message.
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"registration_endpoint": null})),
            0.0,
        );
        assert!(matches!(flow.step(), Step::Failed(m) if m.contains("client id")));

        // Malformed random values never start a flow.
        let flow = Flow::new(
            config("Bearer"),
            FlowSecrets {
                verifier: "x".into(),
                state: "s".into(),
            },
        );
        assert!(matches!(flow.step(), Step::Failed(_)));
    }

    #[test]
    fn clients_in_order_and_token_auth_methods() {
        // Pre-registered first, with the method the server supports.
        let mut c = config(r#"Bearer scope="mcp:x""#);
        c.preregistered = Some(ClientCredentials {
            client_id: "pre".into(),
            client_secret: Some("pre-secret".into()),
            auth_method: None,
        });
        c.metadata_document = Some("https://client.example/meta.json".into());
        let mut flow = Flow::new(c, secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"], "client_id_metadata_document_supported": true})),
            0.0,
        );
        let Step::Authorize { url } = flow.step() else {
            panic!()
        };
        assert_eq!(query_param(&url, "client_id").as_deref(), Some("pre"));
        assert_eq!(
            query_param(&url, "scope").as_deref(),
            Some("mcp:x"),
            "the challenge's scope"
        );
        flow.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789");
        let token = fetch(&flow);
        assert_eq!(
            header(&token, "authorization"),
            Some(format!("Basic {}", base64_standard(b"pre:pre-secret")).as_str())
        );
        assert!(!token.body.contains("pre-secret"));
        let mut failing = flow.clone();
        failing.response(
            401,
            r#"{"error":"invalid_client","error_description":"pre-secret is wrong"}"#,
            0.0,
        );
        assert!(
            matches!(failing.step(), Step::Failed(m) if !m.contains("pre-secret") && m.contains("invalid_client"))
        );

        // Then a client ID metadata document where supported.
        let mut c = config("Bearer");
        c.metadata_document = Some("https://client.example/meta.json".into());
        let mut flow = Flow::new(c, secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"client_id_metadata_document_supported": true})),
            0.0,
        );
        let Step::Authorize { url } = flow.step() else {
            panic!()
        };
        assert_eq!(
            query_param(&url, "client_id").as_deref(),
            Some("https://client.example/meta.json")
        );

        // Then dynamic registration; the answer's method (with a secret) is used.
        for (method, basic) in [("client_secret_basic", true), ("client_secret_post", false)] {
            let mut flow = Flow::new(config("Bearer"), secrets());
            flow.response(200, PRM, 0.0);
            flow.response(
                200,
                &as_metadata(json!({"token_endpoint_auth_methods_supported": [method]})),
                0.0,
            );
            let register: Value = serde_json::from_str(&fetch(&flow).body).unwrap();
            assert_eq!(register["token_endpoint_auth_method"], method);
            flow.response(
                201,
                &json!({"client_id": "d", "client_secret": "dyn-secret", "token_endpoint_auth_method": method}).to_string(),
                0.0,
            );
            flow.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789");
            let token = fetch(&flow);
            assert_eq!(header(&token, "authorization").is_some(), basic);
            assert_eq!(token.body.contains("client_secret=dyn-secret"), !basic);
        }

        // A step-up keeps the client and the scope granted before.
        let previous = AuthRecord {
            issuer: "http://localhost:4000/tenant1".into(),
            scope: Some("mcp:basic".into()),
            ..record_with(Tokens {
                access_token: "old".into(),
                refresh_token: None,
                expires_at_ms: None,
                scope: Some("mcp:basic".into()),
            })
        };
        let mut c = config(r#"Bearer error="insufficient_scope", scope="mcp:write""#);
        c.previous = Some(previous);
        let mut flow = Flow::new(c, secrets());
        flow.response(200, PRM, 0.0);
        flow.response(200, &as_metadata(json!({})), 0.0);
        let Step::Authorize { url } = flow.step() else {
            panic!()
        };
        assert_eq!(query_param(&url, "client_id").as_deref(), Some("c1"));
        assert_eq!(
            query_param(&url, "scope").as_deref(),
            Some("mcp:basic mcp:write")
        );
    }

    #[test]
    fn no_scope_when_nothing_names_one() {
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(
            200,
            r#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://localhost:4000/tenant1"]}"#,
            0.0,
        );
        flow.response(
            200,
            &as_metadata(json!({"scopes_supported": ["as-only"]})),
            0.0,
        );
        flow.response(201, r#"{"client_id":"d"}"#, 0.0);
        let Step::Authorize { url } = flow.step() else {
            panic!()
        };
        assert_eq!(query_param(&url, "scope"), None);
    }
}
