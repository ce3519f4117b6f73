//! The person's settings checks as machines of the [`Host`]: `testModel` ([`TestModel`]: the
//! model found, its key read, its endpoint asked for its model list over the
//! [`Http`](super::io::Http) family, or Chrome asked for its built-in model) and
//! `checkServer` ([`CheckServer`]: the server found, its key read, a connection opened with
//! the host's [`Opening`], its tools listed and the revision it speaks noted, then closed; the
//! state kept per server in session storage for the popup). The answers are the core's
//! (`core::ops::checks`).
//!
//! Invariant: a key is never answered, only its mask; a check's message is redacted of the
//! key it used.

use serde_json::{json, Value};

use super::io::{Input, Model, Output, Step};
use super::mcp::text::Text;
use super::mcp::{Closing, Opening};
use super::stored::{read, write};
use super::Host;
use crate::core::limits::MAX_ANSWER_BYTES;
use crate::core::mcp::source::McpServerConfig;
use crate::core::ops::checks::{
    chrome_model_report, listed_server, model_report, replay_report, server_state, subject,
    with_state, Fetched, Subject, CHECK_MS, SERVER_STATES_KEY,
};
use crate::core::ops::settings::connection_check;
use crate::core::ops::OpName;
use crate::core::provider::{ModelConfig, Provider};
use crate::core::setup::store::{key, key_slot, registry, servers, REGISTRY_KEY, SERVERS_KEY};
use crate::core::storage::Area::{Local, Session};

type Answer = Step<Result<Value, String>>;

/// The stored value an input brought, or why there is none.
fn stored(input: Option<Input>) -> Result<Option<Value>, String> {
    match input {
        Some(Input::Read(read)) => read,
        other => Err(format!(
            "internal error: {} came where a stored value was asked for",
            super::io::unasked(other.as_ref())
        )),
    }
}

/// `testModel({name} | {model})` → `{ok, message, models?}`.
#[derive(Debug)]
pub struct TestModel {
    request: Value,
    origin: String,
    phase: Tm,
}

#[derive(Debug)]
enum Tm {
    Start,
    Registry(String),
    Key(Box<ModelConfig>, String),
    Fetching(Box<ModelConfig>, Option<String>, Box<Text>),
    Availability,
}

impl TestModel {
    /// A check as `request` asks, for the extension whose origin is `origin` (an endpoint's
    /// CORS advice names it).
    pub fn new(request: Value, origin: &str) -> TestModel {
        TestModel {
            request,
            origin: origin.to_owned(),
            phase: Tm::Start,
        }
    }
}

impl Host {
    /// One step of a [`TestModel`].
    pub fn test_model(&self, m: &mut TestModel, input: Option<Input>, now: f64) -> Answer {
        let model = match std::mem::replace(&mut m.phase, Tm::Start) {
            Tm::Start => {
                let name = OpName::TestModel.as_str();
                match subject::<ModelConfig>(&m.request, name, "model") {
                    Err(error) => return Step::Done(Err(error)),
                    Ok(Subject::Given(model)) => model,
                    Ok(Subject::Named(name)) => {
                        m.phase = Tm::Registry(name);
                        return Step::Do(read(Local, REGISTRY_KEY));
                    }
                }
            }
            Tm::Registry(name) => {
                let found = stored(input).and_then(registry).and_then(|registry| {
                    (registry.resolve(Some(&name)).cloned()).map_err(|e| format!("testModel: {e}"))
                });
                match found {
                    Err(error) => return Step::Done(Err(error)),
                    Ok(model) => model,
                }
            }
            Tm::Key(model, reference) => {
                match stored(input).and_then(|stored| key(&reference, stored)) {
                    Err(message) => {
                        return Step::Done(Ok(json!({"ok": false, "message": message})))
                    }
                    Ok(found) => return self.fetch_check(m, *model, found, now),
                }
            }
            Tm::Fetching(model, key, mut text) => {
                let fetched = match text.step(self, input, now) {
                    Step::Do(output) => {
                        m.phase = Tm::Fetching(model, key, text);
                        return Step::Do(output);
                    }
                    Step::Done(Ok(Some((status, text)))) => Fetched::Answer(status, text),
                    Step::Done(Ok(None)) => Fetched::Timeout,
                    Step::Done(Err(error)) => Fetched::Failed(error),
                };
                let report = model_report(&model, &fetched, key.as_deref(), &m.origin);
                return Step::Done(Ok(report));
            }
            Tm::Availability => {
                let availability = match input {
                    Some(Input::Availability(availability)) => availability,
                    _ => String::new(),
                };
                return Step::Done(Ok(chrome_model_report(&availability)));
            }
        };
        match (&model.provider, model.key_ref.clone()) {
            (Provider::Replay, _) => Step::Done(Ok(replay_report())),
            (Provider::Chrome, _) => {
                m.phase = Tm::Availability;
                Step::Do(Output::Model(Model::Availability))
            }
            (_, Some(reference)) => {
                let slot = key_slot(&reference);
                m.phase = Tm::Key(Box::new(model), reference);
                Step::Do(read(Session, &slot))
            }
            (_, None) => self.fetch_check(m, model, None, now),
        }
    }

    fn fetch_check(
        &self,
        m: &mut TestModel,
        model: ModelConfig,
        key: Option<String>,
        now: f64,
    ) -> Answer {
        let http = connection_check(&model, key.as_deref()).expect("an HTTP provider");
        let text = Box::new(Text::new(http, CHECK_MS, MAX_ANSWER_BYTES));
        m.phase = Tm::Fetching(Box::new(model), key, text);
        self.test_model(m, None, now)
    }
}

/// `checkServer({name} | {server})` → `{ok, tools, names, protocol?, error?, checkedMs}`:
/// the server connected to, its tools listed (as the run will name them), the MCP revision
/// it speaks named, and closed, all within its time; the state kept per server.
#[derive(Debug)]
pub struct CheckServer {
    request: Value,
    server: Option<McpServerConfig>,
    phase: Cs,
}

#[derive(Debug)]
enum Cs {
    Start,
    Servers(String),
    Key(String),
    Opening(Box<Opening>, f64),
    Closing(Closing, Value, f64),
    States(Value),
    Stored(Value),
}

impl CheckServer {
    /// A check as `request` asks.
    pub fn new(request: Value) -> CheckServer {
        CheckServer {
            request,
            server: None,
            phase: Cs::Start,
        }
    }
}

impl Host {
    /// One step of a [`CheckServer`].
    pub fn check_server(&self, m: &mut CheckServer, input: Option<Input>, now: f64) -> Answer {
        let mut input = input;
        loop {
            let checked = match std::mem::replace(&mut m.phase, Cs::Start) {
                Cs::Start => {
                    let name = OpName::CheckServer.as_str();
                    match subject::<McpServerConfig>(&m.request, name, "server") {
                        Err(error) => return Step::Done(Err(error)),
                        Ok(Subject::Given(server)) => {
                            if let Err(error) = server.validate() {
                                return Step::Done(Err(error));
                            }
                            m.server = Some(server);
                            match self.server_key(m, now) {
                                Some(output) => return Step::Do(output),
                                None => continue,
                            }
                        }
                        Ok(Subject::Named(name)) => {
                            m.phase = Cs::Servers(name);
                            return Step::Do(read(Local, SERVERS_KEY));
                        }
                    }
                }
                Cs::Servers(name) => {
                    let found = stored(input.take()).and_then(servers).and_then(|servers| {
                        (servers.into_iter().find(|s| s.name == name))
                            .ok_or_else(|| format!("checkServer: no server `{name}`"))
                    });
                    let server = match found.and_then(|s| s.validate().map(|()| s)) {
                        Err(error) => return Step::Done(Err(error)),
                        Ok(server) => server,
                    };
                    m.server = Some(server);
                    match self.server_key(m, now) {
                        Some(output) => return Step::Do(output),
                        None => continue,
                    }
                }
                Cs::Key(reference) => {
                    match stored(input.take()).and_then(|stored| key(&reference, stored)) {
                        Err(error) => Err(error),
                        Ok(found) => {
                            let server = m.server.clone().expect("the server");
                            let within = server.timeout_ms.unwrap_or(CHECK_MS);
                            let opening = Opening::new(server, found, within, true);
                            m.phase = Cs::Opening(Box::new(opening), now + f64::from(within));
                            continue;
                        }
                    }
                }
                Cs::Opening(mut opening, until) => {
                    match self.mcp_open(&mut opening, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Cs::Opening(opening, until);
                            return Step::Do(output);
                        }
                        // Out of its time, whatever the connection said.
                        Step::Done(Err(_)) if now >= until => Ok(None),
                        Step::Done(Err(error)) => Err(error),
                        Step::Done(Ok((client, tools))) => {
                            let protocol = self.mcp_protocol(client);
                            let server = m.server.as_ref().expect("the server");
                            let listed = listed_server(server, &tools, &protocol);
                            m.phase = Cs::Closing(Closing::new(client), listed, until);
                            continue;
                        }
                    }
                }
                Cs::Closing(mut closing, listed, until) => {
                    match self.mcp_close(&mut closing, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Cs::Closing(closing, listed, until);
                            return Step::Do(output);
                        }
                        Step::Done(()) if now >= until => Ok(None),
                        Step::Done(()) => Ok(Some(listed)),
                    }
                }
                Cs::States(state) => {
                    let states = stored(input.take()).ok().flatten();
                    let name = m
                        .server
                        .as_ref()
                        .map(|s| s.name.clone())
                        .unwrap_or_default();
                    let states = with_state(states, &name, &state);
                    m.phase = Cs::Stored(state);
                    return Step::Do(write(Session, SERVER_STATES_KEY, Some(states)));
                }
                // Kept or not, the check's answer is the same.
                Cs::Stored(state) => return Step::Done(Ok(state)),
            };
            let state = server_state(checked, now);
            m.phase = Cs::States(state);
            return Step::Do(read(Session, SERVER_STATES_KEY));
        }
    }

    /// The read of the server's key, when it names one; else the opening is next.
    fn server_key(&self, m: &mut CheckServer, now: f64) -> Option<Output> {
        let server = m.server.clone().expect("the server");
        match &server.key_ref {
            Some(reference) => {
                m.phase = Cs::Key(reference.clone());
                Some(read(Session, &key_slot(reference)))
            }
            None => {
                let within = server.timeout_ms.unwrap_or(CHECK_MS);
                let opening = Opening::new(server, None, within, true);
                m.phase = Cs::Opening(Box::new(opening), now + f64::from(within));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
