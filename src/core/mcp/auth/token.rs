//! Clients and tokens: how the client authenticates, token answers, and [`AuthRecord`], what a
//! sign-in leaves (refreshed before it expires; its secrets redacted from any text).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::encoding::{base64_standard, form_encode, percent_encode};
use super::metadata::json_object;
use crate::core::http::HttpRequest;

pub use crate::core::limits::REFRESH_MARGIN_MS;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuth {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// The id and secret in the form body.
    ClientSecretPost,
    /// A public client: its id only.
    None,
}

impl TokenAuth {
    /// The method's name in metadata and registration.
    pub fn name(self) -> &'static str {
        match self {
            TokenAuth::ClientSecretBasic => "client_secret_basic",
            TokenAuth::ClientSecretPost => "client_secret_post",
            TokenAuth::None => "none",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<TokenAuth> {
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
    /// The client id.
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// Chosen from the server's metadata when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<TokenAuth>,
}

impl ClientCredentials {
    /// Credentials given to the client (a `--client-id`, its secret if any and not empty).
    pub fn given(client_id: Option<String>, secret: Option<String>) -> Option<Self> {
        Some(ClientCredentials {
            client_id: client_id?,
            client_secret: secret.filter(|s| !s.is_empty()),
            auth_method: None,
        })
    }
}

/// The tokens of a sign-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// The Bearer access token.
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The refresh token, if the server gave one.
    pub refresh_token: Option<String>,
    /// When the access token expires (ms since the epoch), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The scope granted, if the server said.
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

pub(super) fn clip(text: &str, max: usize) -> String {
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
    /// The authorization server's issuer.
    pub issuer: String,
    /// Where tokens are refreshed.
    pub token_endpoint: String,
    /// The client the tokens were issued to.
    pub client: ClientCredentials,
    /// The tokens.
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

    /// Whether the access token can be used now, must be refreshed first, or is gone.
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

    /// What a client notes of the sign-in: the issuer and the scope granted.
    pub fn note(&self) -> String {
        let scope = self.tokens.scope.as_deref().or(self.scope.as_deref());
        format!(
            "signed in at {} (scope {})",
            self.issuer,
            scope.unwrap_or("none")
        )
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

    /// `text` without any secret of the record (the egress's redaction).
    pub fn redact(&self, text: &str) -> String {
        crate::core::egress::redact(text, &self.secrets())
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

/// A form POST to the token endpoint, authenticated as the client's method says.
pub(super) fn token_request(
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
