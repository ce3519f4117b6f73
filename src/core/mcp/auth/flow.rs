//! [`Flow`], the sign-in machine: the shell performs each [`Step`] it asks and feeds the
//! answer back; it ends in a record or a clear failure, never in a loop.

use serde_json::{json, Value};

use super::challenge::BearerChallenge;
use super::encoding::{base64url, form_encode, pkce_challenge, query_param, valid_verifier};
use super::metadata::{
    json_object, parse_resource_metadata, parse_server_metadata, select_scope, ResourceMetadata,
    ServerMetadata,
};
use super::token::{
    clip, parse_token_response, token_request, AuthRecord, ClientCredentials, TokenAuth,
};
use super::url::{
    authorization_server_metadata_urls, canonical_resource, check_endpoint_url, resource_covers,
    resource_metadata_urls, strip_query, UrlParts,
};
use crate::core::http::HttpRequest;
use crate::core::mcp::LATEST_PROTOCOL;

/// What the person (or the configuration) gives a sign-in.
#[derive(Debug, Clone, Default)]
pub struct FlowConfig {
    /// The MCP server signed in to.
    pub server_url: String,
    /// Where the authorization server sends the person back.
    pub redirect_uri: String,
    /// The client's name, for dynamic registration.
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

impl FlowSecrets {
    /// The verifier from 32 random bytes and the state from the 16 after them.
    pub fn from_random(bytes: &[u8; 48]) -> Self {
        FlowSecrets {
            verifier: base64url(&bytes[..32]),
            state: base64url(&bytes[32..]),
        }
    }
}

/// What the shell does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Perform this request; give the status and body to [`Flow::response`].
    Fetch(HttpRequest),
    /// Show the person this URL; give the redirect (to `redirect_uri`) to [`Flow::redirected`].
    Authorize {
        /// The authorization URL, with every parameter.
        url: String,
    },
    /// Signed in: the record to keep.
    Done(AuthRecord),
    /// Why the sign-in failed (no secret in it).
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
    /// A sign-in from its configuration and random values; [`Flow::step`] says what to do.
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
        // RFC 9207: an answer that names another issuer came from another authorization server
        // (a mix-up); one that names none, where the server said it always would, is refused.
        let issuer = self.server.as_ref().map(|s| s.issuer.as_str());
        let named = query_param(url, "iss");
        let iss_promised = self
            .server
            .as_ref()
            .is_some_and(|s| s.authorization_response_iss_parameter_supported);
        match (named.as_deref(), issuer) {
            (Some(named), Some(issuer)) if named != issuer => {
                self.state = State::Failed(format!(
                    "the sign-in's answer names another issuer (iss `{}`, not `{}`); it was ignored",
                    clip(strip_query(named), 200),
                    strip_query(issuer)
                ));
                return;
            }
            (None, Some(issuer)) if iss_promised => {
                self.state = State::Failed(format!(
                    "the sign-in's answer does not name its issuer (iss), which `{}` promises; it was ignored",
                    strip_query(issuer)
                ));
                return;
            }
            _ => {}
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
        // A registered client belongs to the authorization server that issued it, by its
        // exact issuer identifier (no normalization): another one registers anew.
        let same_issuer = |r: &AuthRecord| r.issuer == metadata.issuer;
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
            "application_type": application_type(&self.config.redirect_uri),
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
        crate::core::egress::redact(text, &secrets)
    }
}

pub(super) fn describe_status(status: u16, body: &str) -> String {
    if status == 0 {
        format!("not reachable ({})", clip(body, 200))
    } else {
        format!("{status}")
    }
}

/// A registration answer (RFC 7591 §3.2.1): the client, with its token endpoint method.
pub(super) fn parse_registration(
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

/// The `application_type` a registration names (RFC 7591 / OpenID registration, required by
/// MCP 2026-07-28): `native` for a loopback redirect (the CLI), `web` for an https one (the
/// extension's `chromiumapp.org` redirect, which is not on the device's loopback).
pub fn application_type(redirect_uri: &str) -> &'static str {
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"];
    let is_loopback = loopback.iter().any(|l| {
        redirect_uri
            .strip_prefix(l)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
    });
    if is_loopback {
        "native"
    } else {
        "web"
    }
}
