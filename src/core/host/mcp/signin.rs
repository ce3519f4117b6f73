//! The sign-in operations as machines of the host: `signIn` ([`SigningIn`]: the server found,
//! its challenge noted or probed, the sign-in [`Flow`]'s requests fetched and its
//! authorization step shown to the person, the record stored), `signOut` ([`SigningOut`])
//! and `authState` ([`AuthState`]). After a sign-in or a sign-out every kept connection to
//! the server is closed: none goes on with the token it held. No token is ever returned, put
//! in an event, a log or an error text.

use serde_json::Value;

use super::super::io::{Fetched, Http, Input, Mcp, Output, Step, Storage, Ui};
use super::super::Host;
use super::signins::{ReadRecords, WriteRecords};
use super::text::Text;
use super::ClientId;
use crate::core::mcp::auth::{
    probe, sign_out_server, signed_out, unknown_server, Area, AuthRecord, Flow, FlowSecrets, Probe,
    SignInRequest, SignedIn, Step as FlowStep, Via, MAX_AUTH_BODY_BYTES, REDIRECT_PATH, REQUEST_MS,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::setup::store::{servers, SERVERS_KEY};
use crate::core::storage::Area as StoreArea;

/// What the operations answer.
pub type Answer = Step<Result<Value, String>>;

fn read_servers() -> Output {
    Output::Storage(Storage::Read {
        area: StoreArea::Local,
        key: SERVERS_KEY.into(),
    })
}

/// The configured servers, from what [`read_servers`] read.
fn servers_read(input: Option<Input>) -> Result<Vec<McpServerConfig>, String> {
    match input {
        Some(Input::Read(stored)) => stored.and_then(servers),
        _ => Err("internal error: the servers did not come".into()),
    }
}

/// The kept connections to close after a sign-in or a sign-out, one at a time, then the
/// answer.
#[derive(Debug, Default)]
struct Closes {
    clients: Vec<ClientId>,
    answer: Option<Result<Value, String>>,
}

impl Closes {
    /// Ends every kept connection to `name`, then answers `answer`.
    fn start(&mut self, host: &Host, name: &str, answer: Result<Value, String>) -> Answer {
        self.clients = host.forget_kept_everywhere(name);
        self.answer = Some(answer);
        self.next()
    }

    fn next(&mut self) -> Answer {
        match self.clients.pop() {
            Some(client) => Step::Do(Output::Mcp(Mcp::Close { client })),
            None => Step::Done(self.answer.take().unwrap_or(Ok(Value::Null))),
        }
    }
}

/// `signIn({server, remember?, clientId?, clientSecret?, inTab?})`: resolves to
/// [`SignedIn::answer`].
#[derive(Debug)]
pub struct SigningIn {
    request: Value,
    /// The redirect URI (`chrome.identity.getRedirectURL("mcp")`), or why there is none.
    redirect: Result<String, String>,
    secrets: Option<FlowSecrets>,
    /// The server, once found.
    config: Option<McpServerConfig>,
    asked: Option<SignInRequest>,
    previous: Option<(AuthRecord, Area)>,
    via: Via,
    phase: In,
    closes: Closes,
}

#[derive(Debug)]
enum In {
    Start,
    Servers,
    Records(ReadRecords),
    Probing(u64),
    Aborting(Probe),
    Flowing(Box<Flow>),
    Fetching(Box<Flow>, Text),
    Authorizing(Box<Flow>),
    Stored(Box<AuthRecord>, Area, ReadRecords),
    Writing(Box<AuthRecord>, Area, WriteRecords),
    Closing,
}

impl SigningIn {
    /// A sign-in as `request` asks, with the redirect URI and the flow's random secrets.
    pub fn new(request: Value, redirect: Result<String, String>, secrets: FlowSecrets) -> Self {
        SigningIn {
            request,
            redirect,
            secrets: Some(secrets),
            config: None,
            asked: None,
            previous: None,
            via: Via::Window,
            phase: In::Start,
            closes: Closes::default(),
        }
    }

    fn name(&self) -> String {
        self.config
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default()
    }
}

impl Host {
    /// One step of a [`SigningIn`].
    pub fn sign_in(&self, m: &mut SigningIn, mut input: Option<Input>, now: f64) -> Answer {
        loop {
            let signed = match std::mem::replace(&mut m.phase, In::Closing) {
                In::Closing => return m.closes.next(),
                In::Start => match SignInRequest::parse(&m.request) {
                    Err(e) => return Step::Done(Err(e.to_string())),
                    Ok(asked) => {
                        m.via = asked.via;
                        m.asked = Some(asked);
                        m.phase = In::Servers;
                        return Step::Do(read_servers());
                    }
                },
                In::Servers => {
                    let server = m
                        .asked
                        .as_ref()
                        .map(|a| a.server.clone())
                        .unwrap_or_default();
                    let found = servers_read(input.take()).and_then(|servers| {
                        (servers.into_iter().find(|s| s.name == server))
                            .ok_or_else(|| unknown_server(&server))
                    });
                    match found {
                        Err(e) => return Step::Done(Err(e)),
                        Ok(config) => m.config = Some(config),
                    }
                    m.phase = In::Records(ReadRecords::default());
                    continue;
                }
                In::Records(mut read) => match read.step(input.take()) {
                    Step::Do(output) => {
                        m.phase = In::Records(read);
                        return Step::Do(output);
                    }
                    Step::Done(records) => {
                        let config = m.config.clone().expect("the server");
                        m.previous = records.find(&config);
                        let noted = self.challenges.borrow().get(&config.name).cloned();
                        match noted {
                            Some(challenge) => self.flow(m, &challenge),
                            None => {
                                let id = self.fetch_id();
                                m.phase = In::Probing(id);
                                return Step::Do(Output::Http(Http::Fetch {
                                    id,
                                    request: probe(&config),
                                    within_ms: REQUEST_MS,
                                }));
                            }
                        }
                    }
                },
                // Only the head is read.
                In::Probing(id) => match input.take() {
                    Some(Input::Fetched(Fetched::Head(head))) => {
                        m.phase = In::Aborting(Probe::Answered {
                            status: head.status,
                            www_authenticate: head.www_authenticate,
                        });
                        return Step::Do(Output::Http(Http::Abort { id }));
                    }
                    Some(Input::Fetched(Fetched::TimedOut)) => self.probed(m, Probe::Timeout),
                    Some(Input::Fetched(Fetched::Failed(e))) => {
                        self.probed(m, Probe::Unreachable(e))
                    }
                    _ => Some(SignedIn::Failed("internal error: no probe".into())),
                },
                In::Aborting(probe) => {
                    input = None;
                    self.probed(m, probe)
                }
                In::Flowing(flow) => match flow.step() {
                    FlowStep::Fetch(request) => {
                        let text = Text::new(request, REQUEST_MS, MAX_AUTH_BODY_BYTES);
                        m.phase = In::Fetching(flow, text);
                        None
                    }
                    FlowStep::Authorize { url } => {
                        let redirect = m.redirect.clone().unwrap_or_default();
                        let via = m.asked.as_ref().map_or(Via::Window, |a| a.via);
                        m.phase = In::Authorizing(flow);
                        return Step::Do(Output::Ui(Ui::Authorize { url, redirect, via }));
                    }
                    FlowStep::Done(record) => {
                        let remember = m.asked.as_ref().and_then(|a| a.remember);
                        let area = Area::for_sign_in(remember, m.previous.as_ref().map(|p| p.1));
                        m.phase = In::Stored(Box::new(record), area, ReadRecords::default());
                        None
                    }
                    FlowStep::Failed(why) => Some(SignedIn::Failed(why)),
                },
                In::Fetching(mut flow, mut text) => match text.step(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = In::Fetching(flow, text);
                        return Step::Do(output);
                    }
                    Step::Done(answer) => {
                        let (status, body) = match answer {
                            Ok(Some(answer)) => answer,
                            Ok(None) => (0, "no answer in time".into()),
                            Err(error) => (0, error),
                        };
                        flow.response(status, &body, now);
                        m.phase = In::Flowing(flow);
                        None
                    }
                },
                In::Authorizing(mut flow) => {
                    match input.take() {
                        Some(Input::Authorized(Ok((back, how)))) => {
                            m.via = how;
                            flow.redirected(&back);
                        }
                        Some(Input::Authorized(Err(why))) => flow.abandoned(&why),
                        _ => flow.abandoned("internal error: no authorization came"),
                    }
                    m.phase = In::Flowing(flow);
                    None
                }
                In::Stored(record, area, mut read) => match read.step(input.take()) {
                    Step::Do(output) => {
                        m.phase = In::Stored(record, area, read);
                        return Step::Do(output);
                    }
                    Step::Done(mut records) => {
                        let writes = records.store(&m.name(), &record, area);
                        m.phase = In::Writing(record, area, WriteRecords::new(writes));
                        None
                    }
                },
                In::Writing(record, area, mut write) => match write.step(input.take()) {
                    Step::Do(output) => {
                        m.phase = In::Writing(record, area, write);
                        return Step::Do(output);
                    }
                    Step::Done(Err(e)) => Some(SignedIn::Failed(e)),
                    Step::Done(Ok(())) => {
                        self.challenges.borrow_mut().remove(&m.name());
                        Some(SignedIn::Yes(record, area, m.via))
                    }
                },
            };
            let Some(signed) = signed else { continue };
            let name = m.name();
            let answer = Ok(signed.answer(&name, now));
            if !matches!(signed, SignedIn::Yes(..)) {
                return Step::Done(answer);
            }
            m.phase = In::Closing;
            return m.closes.start(self, &name, answer);
        }
    }

    /// The probe's outcome: the flow after its challenge, or how the sign-in ends.
    fn probed(&self, m: &mut SigningIn, probe: Probe) -> Option<SignedIn> {
        match probe.challenge() {
            Err(e) => Some(SignedIn::Failed(e)),
            Ok(None) => Some(SignedIn::NotNeeded),
            Ok(Some(challenge)) => self.flow(m, &challenge),
        }
    }

    /// The sign-in flow after `challenge` begins.
    fn flow(&self, m: &mut SigningIn, challenge: &str) -> Option<SignedIn> {
        let redirect = match &m.redirect {
            Ok(redirect) => redirect.clone(),
            Err(e) => return Some(SignedIn::Failed(e.clone())),
        };
        let (Some(asked), Some(config), Some(secrets)) = (&m.asked, &m.config, m.secrets.take())
        else {
            return Some(SignedIn::Failed(
                "internal error: a sign-in began twice".into(),
            ));
        };
        let previous = m.previous.clone().map(|p| p.0);
        let config = asked.flow(config, &redirect, challenge, previous);
        m.phase = In::Flowing(Box::new(Flow::new(config, secrets)));
        None
    }
}

/// `signOut({server})`: forgets the server's tokens (both storage areas); resolves to
/// `{ok: true, signedOut}` (`signedOut`: there was a sign-in).
#[derive(Debug)]
pub struct SigningOut {
    request: Value,
    phase: Out,
    closes: Closes,
}

#[derive(Debug)]
enum Out {
    Start,
    Records(String, ReadRecords),
    Writing(String, bool, WriteRecords),
    Closing,
}

impl SigningOut {
    /// A sign-out as `request` asks.
    pub fn new(request: Value) -> SigningOut {
        SigningOut {
            request,
            phase: Out::Start,
            closes: Closes::default(),
        }
    }
}

impl Host {
    /// One step of a [`SigningOut`].
    pub fn sign_out(&self, m: &mut SigningOut, mut input: Option<Input>) -> Answer {
        loop {
            match std::mem::replace(&mut m.phase, Out::Closing) {
                Out::Closing => return m.closes.next(),
                Out::Start => match sign_out_server(&m.request) {
                    Err(e) => return Step::Done(Err(e)),
                    Ok(name) => m.phase = Out::Records(name.to_owned(), ReadRecords::default()),
                },
                Out::Records(name, mut read) => match read.step(input.take()) {
                    Step::Do(output) => {
                        m.phase = Out::Records(name, read);
                        return Step::Do(output);
                    }
                    Step::Done(mut records) => {
                        let writes = records.forget(&name);
                        let found = !writes.is_empty();
                        m.phase = Out::Writing(name, found, WriteRecords::new(writes));
                    }
                },
                Out::Writing(name, found, mut write) => match write.step(input.take()) {
                    Step::Do(output) => {
                        m.phase = Out::Writing(name, found, write);
                        return Step::Do(output);
                    }
                    Step::Done(Err(e)) => return Step::Done(Err(e)),
                    Step::Done(Ok(())) => {
                        self.challenges.borrow_mut().remove(&name);
                        return m.closes.start(self, &name, Ok(signed_out(&name, found)));
                    }
                },
            }
        }
    }
}

/// `authState()`: each configured server's sign-in, without any token.
#[derive(Debug, Default)]
pub struct AuthState {
    servers: Option<Vec<McpServerConfig>>,
    read: ReadRecords,
}

impl Host {
    /// One step of an [`AuthState`].
    pub fn auth_state(&self, m: &mut AuthState, input: Option<Input>, now: f64) -> Answer {
        let input = match (&m.servers, input) {
            (None, None) => return Step::Do(read_servers()),
            (None, input) => match servers_read(input) {
                Err(e) => return Step::Done(Err(e)),
                Ok(servers) => {
                    m.servers = Some(servers);
                    None
                }
            },
            (Some(_), input) => input,
        };
        match m.read.step(input) {
            Step::Do(output) => Step::Do(output),
            Step::Done(records) => {
                let servers = m.servers.as_deref().unwrap_or_default();
                Step::Done(Ok(records.state(servers, now)))
            }
        }
    }
}

/// `signIn` as the door opens it: the redirect URI and the flow's random secrets asked of the
/// shell first ([`Ui::Redirect`]), then the [`SigningIn`].
#[derive(Debug)]
pub struct SignIn {
    request: Option<Value>,
    signing: Option<SigningIn>,
}

/// The hex digits of a flow's verifier (the rest of those asked for is its state).
const VERIFIER_HEX: usize = 64;

impl SignIn {
    /// A sign-in as `request` asks.
    pub fn new(request: Value) -> SignIn {
        SignIn {
            request: Some(request),
            signing: None,
        }
    }
}

impl Host {
    /// One step of a [`SignIn`].
    pub fn sign_in_asked(&self, m: &mut SignIn, input: Option<Input>, now: f64) -> Answer {
        if let Some(signing) = m.signing.as_mut() {
            return self.sign_in(signing, input, now);
        }
        let Some(Input::Redirect { url, random }) = input else {
            return Step::Do(Output::Ui(Ui::Redirect {
                path: REDIRECT_PATH.into(),
                uuids: 3,
            }));
        };
        let (verifier, state) = random.split_at(VERIFIER_HEX.min(random.len()));
        let secrets = FlowSecrets {
            verifier: verifier.to_owned(),
            state: state.to_owned(),
        };
        let request = m.request.take().unwrap_or_default();
        let signing = m.signing.insert(SigningIn::new(request, url, secrets));
        self.sign_in(signing, None, now)
    }
}
