//! `listTools({server})`: an MCP server's tools listed by hand, on the person's kept
//! connection to it (the by-hand pool: opened as a run opens it, then kept as one session for
//! the person's later listings and calls); the use is counted by the host
//! ([`Host::use_begins`]), and its end hands the shell the timer that closes the connection
//! once idle ([`Mcp::Idle`]).

use serde_json::Value;

use super::super::io::{Input, Mcp, Output, Pool, Step};
use super::super::stored::read;
use super::super::Host;
use super::ListedNow;
use crate::core::mcp::source::McpServerConfig;
use crate::core::setup::store::{servers, SERVERS_KEY};
use crate::core::storage::Area::Local;
use crate::core::workbench::server::{find_server, tools_response};

/// The machine: see the module's documentation.
#[derive(Debug)]
pub struct ServerTools {
    name: String,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    Start,
    Servers,
    Listing(Box<McpServerConfig>, Box<ListedNow>),
    /// The use ended: the answer, once the idle timer is armed.
    Ended(Result<Value, String>),
}

impl ServerTools {
    /// The tools of the configured server `name`.
    pub fn new(name: &str) -> ServerTools {
        ServerTools {
            name: name.to_owned(),
            phase: Phase::Start,
        }
    }
}

impl Host {
    /// One step of a [`ServerTools`].
    pub fn server_tools(
        &self,
        m: &mut ServerTools,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<Result<Value, String>> {
        loop {
            let answer = match std::mem::replace(&mut m.phase, Phase::Servers) {
                Phase::Start => {
                    self.use_begins(&m.name);
                    return Step::Do(read(Local, SERVERS_KEY));
                }
                Phase::Servers => {
                    let found = match input.take() {
                        Some(Input::Read(stored)) => stored.and_then(servers),
                        _ => Err("internal error: the servers did not come".into()),
                    }
                    .and_then(|servers| find_server(&servers, &m.name).cloned());
                    match found {
                        Err(error) => Err(error),
                        Ok(server) => {
                            let listed = ListedNow::new(Pool::ByHand, server.clone());
                            m.phase = Phase::Listing(Box::new(server), Box::new(listed));
                            continue;
                        }
                    }
                }
                Phase::Listing(server, mut listed) => {
                    match self.mcp_listed_now(&mut listed, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Phase::Listing(server, listed);
                            return Step::Do(output);
                        }
                        Step::Done(done) => done.map(|(_, tools)| tools_response(&server, &tools)),
                    }
                }
                Phase::Ended(answer) => return Step::Done(answer),
            };
            m.phase = Phase::Ended(answer);
            let idle = self.use_ends(&m.name);
            return Step::Do(Output::Mcp(Mcp::Idle {
                pool: Pool::ByHand,
                idle,
            }));
        }
    }
}
