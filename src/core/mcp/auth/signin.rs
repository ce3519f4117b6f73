//! The extension's sign-in, decided here and performed by the worker: what `signIn` is asked
//! ([`SignInRequest`]), the probe that finds out whether a server wants one ([`probe`],
//! [`Probe`]), how the authorization step goes ([`Via`], [`TabWatch`], [`Abandoned`]) and
//! what `signIn` / `signOut` answer.
//!
//! Invariants: no answer holds a token; a sign-in ends in one answer; a tab is taken for the
//! redirect only when its URL starts with the redirect URI.

use serde_json::{json, Value};

use super::challenge::BearerChallenge;
use super::flow::FlowConfig;
use super::keep::Area;
use super::token::{AuthRecord, ClientCredentials};
use crate::core::http::HttpRequest;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::Session;

/// Time for each request of a sign-in (and the probe), in ms.
pub const REQUEST_MS: u32 = crate::core::limits::SIGN_IN_REQUEST_MS;
/// The person's time to sign in, in ms.
pub const SIGN_IN_MS: u32 = crate::core::limits::SIGN_IN_MS;
/// A sign-in window that fails sooner than this (ms) could not be shown: a tab is used.
pub const WINDOW_FAILS_WITHIN_MS: f64 = crate::core::limits::WINDOW_FAILS_WITHIN_MS;
/// The path `chrome.identity.getRedirectURL` is asked for.
pub const REDIRECT_PATH: &str = "mcp";

/// `signIn({server, remember?, clientId?, clientSecret?, inTab?})`, read.
#[derive(Debug, Clone, PartialEq)]
pub struct SignInRequest {
    /// A configured MCP server's name.
    pub server: String,
    /// Keep the sign-in in local storage (`true`), in the session's (`false`), or where the
    /// previous one was (not said).
    pub remember: Option<bool>,
    /// Where the authorization page shows.
    pub via: Via,
    /// A pre-registered client (`clientId`, `clientSecret`), when given.
    pub preregistered: Option<ClientCredentials>,
}

impl SignInRequest {
    /// Reads the operation's request; the error names what is missing.
    pub fn parse(request: &Value) -> Result<SignInRequest, String> {
        let text = |key: &str| {
            request
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let server = request
            .get("server")
            .and_then(Value::as_str)
            .ok_or("signIn needs {server}: a configured MCP server's name")?;
        Ok(SignInRequest {
            server: server.to_owned(),
            remember: request.get("remember").and_then(Value::as_bool),
            via: match request.get("inTab").and_then(Value::as_bool) {
                Some(true) => Via::Tab,
                _ => Via::Window,
            },
            preregistered: ClientCredentials::given(text("clientId"), text("clientSecret")),
        })
    }

    /// The sign-in's [`super::Flow`] configuration for `config`, after `challenge`.
    pub fn flow(
        &self,
        config: &McpServerConfig,
        redirect_uri: &str,
        challenge: &str,
        previous: Option<AuthRecord>,
    ) -> FlowConfig {
        FlowConfig {
            server_url: config.url.clone(),
            redirect_uri: redirect_uri.to_owned(),
            client_name: "WebMCP Host".into(),
            preregistered: self.preregistered.clone(),
            metadata_document: None,
            challenge: BearerChallenge::from_header(Some(challenge)),
            previous,
        }
    }
}

/// `signOut({server})`: the server's name.
pub fn sign_out_server(request: &Value) -> Result<&str, String> {
    request
        .get("server")
        .and_then(Value::as_str)
        .ok_or_else(|| "signOut needs {server}".to_owned())
}

/// Where the person signs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `chrome.identity.launchWebAuthFlow`'s window.
    Window,
    /// A tab whose navigation to the redirect URI is caught.
    Tab,
}

impl Via {
    /// The name `signIn` answers in `via`.
    pub fn name(self) -> &'static str {
        match self {
            Via::Window => "launchWebAuthFlow",
            Via::Tab => "tab",
        }
    }

    /// A window that failed `elapsed_ms` after it was asked for: use a tab when it failed at
    /// once (no window can be shown, as in a headless browser).
    pub fn after_window_failed(elapsed_ms: f64) -> Option<Via> {
        (elapsed_ms < WINDOW_FAILS_WITHIN_MS).then_some(Via::Tab)
    }
}

/// Why the authorization step brought no redirect back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// Nothing within [`SIGN_IN_MS`].
    Timeout,
    /// The person closed the sign-in tab.
    TabClosed,
    /// The window resolved without a URL.
    NoAnswer,
}

impl std::fmt::Display for Abandoned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Abandoned::Timeout => "no sign-in within 5 minutes",
            Abandoned::TabClosed => "the sign-in tab was closed",
            Abandoned::NoAnswer => "the sign-in window gave no answer",
        })
    }
}

/// What the sign-in tab did, as its listeners see it.
#[derive(Debug, Clone, PartialEq)]
pub enum TabEvent {
    /// The sign-in tab was opened (`opened`, before the authorization page loads in it).
    Opened {
        /// The tab.
        tab: f64,
    },
    /// `tabs.onUpdated`, with the new URL if it changed.
    Updated {
        /// The tab.
        tab: f64,
        /// Its new URL.
        url: Option<String>,
    },
    /// `webNavigation.onErrorOccurred` (the redirect URI never loads).
    LoadFailed {
        /// The tab.
        tab: f64,
        /// The URL that failed.
        url: Option<String>,
    },
    /// `tabs.onRemoved`.
    Removed {
        /// The tab.
        tab: f64,
    },
}

impl TabEvent {
    /// The event a listener of `event` (`opened`, `onUpdated`, `onErrorOccurred`,
    /// `onRemoved`) heard, from its first two arguments as JSON; `None` for anything else.
    pub fn read(event: &str, args: &[Value; 2]) -> Option<TabEvent> {
        let url = |v: &Value| v.get("url").and_then(Value::as_str).map(str::to_owned);
        match event {
            "opened" => Some(TabEvent::Opened {
                tab: args[0].as_f64()?,
            }),
            "onUpdated" => Some(TabEvent::Updated {
                tab: args[0].as_f64()?,
                url: url(&args[1]),
            }),
            "onErrorOccurred" => Some(TabEvent::LoadFailed {
                tab: args[0].get("tabId")?.as_f64()?,
                url: url(&args[0]),
            }),
            "onRemoved" => Some(TabEvent::Removed {
                tab: args[0].as_f64()?,
            }),
            _ => None,
        }
    }
}

/// How the sign-in tab ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabEnd {
    /// It went to the redirect URI: this URL carries the answer.
    Redirected(String),
    /// It was closed first.
    Closed,
}

/// Watches the sign-in tab for the navigation to the redirect URI.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TabWatch {
    redirect: String,
    tab: Option<f64>,
}

impl TabWatch {
    /// A watch for `redirect_uri`; no tab yet.
    pub fn new(redirect_uri: &str) -> TabWatch {
        TabWatch {
            redirect: redirect_uri.to_owned(),
            tab: None,
        }
    }

    /// Whether `event` ends the sign-in: the opening, events of other tabs (and of any tab
    /// before the opening) and other URLs do not.
    pub fn event(&mut self, event: TabEvent) -> Option<TabEnd> {
        let ours = |tab: f64| self.tab == Some(tab);
        match event {
            TabEvent::Opened { tab } => {
                self.tab = Some(tab);
                None
            }
            TabEvent::Updated { tab, url } | TabEvent::LoadFailed { tab, url } if ours(tab) => url
                .filter(|u| u.starts_with(&self.redirect))
                .map(TabEnd::Redirected),
            TabEvent::Removed { tab } if ours(tab) => Some(TabEnd::Closed),
            _ => None,
        }
    }
}

/// The probe: an `initialize` without a token, whose answer's status says whether the server
/// wants a sign-in (only the head is read).
pub fn probe(config: &McpServerConfig) -> HttpRequest {
    let mut session = Session::new(config.url.clone());
    let init = session.initialize("webmcp-host", crate::VERSION, json!({}));
    init.request
}

/// What came of the probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The status and `WWW-Authenticate` of the answer.
    Answered {
        /// The HTTP status.
        status: u16,
        /// The challenge header, if any.
        www_authenticate: Option<String>,
    },
    /// No answer within [`REQUEST_MS`].
    Timeout,
    /// The request failed: why.
    Unreachable(String),
}

impl Probe {
    /// The challenge to sign in after (`Ok(Some)`), `Ok(None)` when the server wants no
    /// sign-in, or the error.
    pub fn challenge(self) -> Result<Option<String>, String> {
        match self {
            Probe::Answered {
                status: 401 | 403,
                www_authenticate,
            } => Ok(Some(www_authenticate.unwrap_or_default())),
            Probe::Answered {
                status: 200..=299, ..
            } => Ok(None),
            Probe::Answered { status, .. } => {
                Err(format!("the server answered {status} without a challenge"))
            }
            Probe::Timeout => Err("the server did not answer in time".into()),
            Probe::Unreachable(error) => Err(format!("the server could not be reached: {error}")),
        }
    }
}

/// How a sign-in ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SignedIn {
    /// Signed in: the record, where it is kept and how the person signed in.
    Yes(Box<AuthRecord>, Area, Via),
    /// The server asks for no sign-in.
    NotNeeded,
    /// Why not.
    Failed(String),
}

impl SignedIn {
    /// `signIn`'s answer: `{ok: true, signedIn: true, issuer, scope, expiresAtMs,
    /// refreshable, kept, via}`, `{ok: true, signedIn: false, message}` or `{ok: false,
    /// error}`; each with `server`, never a token.
    pub fn answer(&self, server: &str, now_ms: f64) -> Value {
        match self {
            SignedIn::Yes(record, area, via) => {
                let mut summary = record.summary(now_ms);
                summary["ok"] = json!(true);
                summary["server"] = json!(server);
                summary["kept"] = json!(area.name());
                summary["via"] = json!(via.name());
                summary
            }
            SignedIn::NotNeeded => json!({
                "ok": true,
                "signedIn": false,
                "server": server,
                "message": format!("{server} does not ask for a sign-in"),
            }),
            SignedIn::Failed(error) => json!({"ok": false, "server": server, "error": error}),
        }
    }
}

/// `signOut`'s answer (`signedOut`: there was a sign-in).
pub fn signed_out(server: &str, found: bool) -> Value {
    json!({"ok": true, "server": server, "signedOut": found})
}

/// The error for a server name that is not configured.
pub fn unknown_server(name: &str) -> String {
    format!("no MCP server named `{name}`")
}
