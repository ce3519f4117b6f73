//! The sign-in of `webmcp-host mcp`: how the CLI signs in, and the [`Driver`]'s answers to
//! the machine's sign-in requests (a token refreshed, else the core's sign-in [`Flow`] with
//! its requests performed here, the authorization URL followed or opened by the person, the
//! redirect read from a loopback listener).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use webmcp_host::core::http::HttpRequest;
use webmcp_host::core::mcp::auth::{
    loopback_redirect, loopback_response, BearerChallenge, ClientCredentials, Flow, FlowConfig,
    FlowSecrets, Step, TokenState, MAX_AUTH_BODY_BYTES,
};
use webmcp_host::core::mcp::exchange::Refusal;

use super::{header, now_ms, send, Driver};

/// How the CLI signs in: with a given client (id, secret), else this client's metadata
/// document URL where the server supports it, else registration; `wait_s` is how long the
/// person has to sign in in a browser.
pub fn sign_in_setup(
    client_id: Option<String>,
    secret: Option<String>,
    metadata_document: Option<String>,
    wait_s: u64,
) -> (FlowConfig, Duration) {
    let config = FlowConfig {
        client_name: "webmcp-host".into(),
        preregistered: ClientCredentials::given(client_id, secret),
        metadata_document,
        ..FlowConfig::default()
    };
    (config, Duration::from_secs(wait_s))
}

impl Driver {
    /// Answers the machine's sign-in request: a refresh when the token just expired and can
    /// be refreshed, else the whole flow.
    pub(super) fn authorize(&mut self, refusal: Refusal) {
        let status = refusal.status();
        let Some(setup) = self.auth.clone() else {
            return self.machine.unauthorized(refusal.error().to_string());
        };
        let challenge = BearerChallenge::from_header(refusal.challenge());
        let outcome = if !challenge.insufficient_scope() && self.refresh() {
            Ok(())
        } else {
            self.sign_in(&setup, challenge)
        };
        match outcome {
            Ok(()) => self.machine.authorized(&mut self.session, now_ms()),
            Err(why) => self.machine.unauthorized(format!(
                "the server requires authorization ({status}), and signing in failed: {}",
                self.redact(&why)
            )),
        }
    }

    /// The whole sign-in: the core's flow, its requests performed here.
    fn sign_in(
        &mut self,
        setup: &(FlowConfig, Duration),
        challenge: BearerChallenge,
    ) -> Result<(), String> {
        let redirect_uri = self.redirect_uri()?;
        let config = FlowConfig {
            server_url: self.session.url().to_owned(),
            redirect_uri: redirect_uri.clone(),
            challenge,
            previous: self.session.auth().cloned(),
            ..setup.0.clone()
        };
        let mut flow = Flow::new(config, FlowSecrets::from_random(&random_bytes()?));
        loop {
            match flow.step() {
                Step::Fetch(request) => {
                    if self.trace {
                        let url = request.url.split(['?', '#']).next().unwrap_or("");
                        eprintln!("webmcp-host: → {} {url} (sign-in)", request.method);
                    }
                    let (status, body, _) = self.http_once(&request);
                    flow.response(status, &body, now_ms());
                }
                Step::Authorize { url } => match self.follow(&url, &redirect_uri, setup.1) {
                    Ok(redirect) => flow.redirected(&redirect),
                    Err(why) => flow.abandoned(&why),
                },
                Step::Done(record) => {
                    self.log.push(record.note());
                    self.session.set_auth(Some(record));
                    return Ok(());
                }
                Step::Failed(why) => return Err(why),
            }
        }
    }

    /// Refreshes the token when it can; whether it did.
    fn refresh(&mut self) -> bool {
        let Some(mut record) = self.session.auth().cloned() else {
            return false;
        };
        let Some(request) = record.refresh_request() else {
            return false;
        };
        let (status, body, _) = self.http_once(&request);
        if let Err(why) = record.refreshed(status, &body, now_ms()) {
            let line = format!("the token could not be refreshed: {why}");
            self.log.push(line);
            return false;
        }
        self.session.set_auth(Some(record));
        self.log.push("refreshed the access token".into());
        true
    }

    /// Refreshes a token about to expire before it is used (a failure is left to the 401).
    pub(super) fn keep_fresh(&mut self) {
        if self
            .session
            .auth()
            .is_some_and(|r| r.token_state(now_ms()) == TokenState::Refresh)
        {
            self.refresh();
        }
    }

    fn redirect_uri(&mut self) -> Result<String, String> {
        if let Some((_, uri)) = &self.redirect {
            return Ok(uri.clone());
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("no loopback port for the sign-in's redirect: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let uri = format!("http://127.0.0.1:{port}/callback");
        self.redirect = Some((listener, uri.clone()));
        Ok(uri)
    }

    /// One sign-in request, no redirect followed: status (0 when unreachable), body (capped)
    /// and `Location`.
    fn http_once(&self, request: &HttpRequest) -> (u16, String, Option<String>) {
        match send(&self.auth_agent, request) {
            Ok(response) => {
                let status = response.status().as_u16();
                let location = header(&response, "location");
                let mut text = String::new();
                let mut body = response.into_body();
                let _ = body
                    .as_reader()
                    .take(MAX_AUTH_BODY_BYTES as u64 + 1)
                    .read_to_string(&mut text);
                (status, text, location)
            }
            Err(e) => (0, e, None),
        }
    }

    /// The authorization step: the URL fetched without following its redirect; a redirect to
    /// `redirect_uri` is the answer. Otherwise the person signs in in a browser and the
    /// redirect comes to the loopback listener.
    fn follow(&self, url: &str, redirect_uri: &str, wait: Duration) -> Result<String, String> {
        let request = HttpRequest {
            method: "GET".into(),
            url: url.to_owned(),
            headers: vec![("accept".into(), "text/html".into())],
            body: String::new(),
        };
        let (status, _, location) = self.http_once(&request);
        if let Some(location) =
            location.filter(|l| (300..400).contains(&status) && l.starts_with(redirect_uri))
        {
            return Ok(location);
        }
        let Some((listener, _)) = &self.redirect else {
            return Err("no redirect listener".into());
        };
        eprintln!("webmcp-host: sign in to continue: open {url}");
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((mut socket, _)) => {
                    let _ = socket.set_nonblocking(false);
                    let _ = socket.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut head = [0u8; 8192];
                    let n = socket.read(&mut head).unwrap_or(0);
                    let _ = socket.write_all(loopback_response().as_bytes());
                    let text = String::from_utf8_lossy(&head[..n]);
                    if let Some(redirect) = loopback_redirect(&text, redirect_uri) {
                        return Ok(redirect);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => return Err(format!("the redirect listener failed: {e}")),
            }
        }
        Err(format!("no sign-in within {} s", wait.as_secs()))
    }
}

/// Bytes from the operating system's random source, for the sign-in's secrets.
fn random_bytes() -> Result<[u8; 48], String> {
    let mut bytes = [0u8; 48];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no random source for the sign-in: {e}"))?;
    Ok(bytes)
}
