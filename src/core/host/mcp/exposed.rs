//! The tools exposed to a page's origin (`exposedTools`, and the tools a `callExposed`
//! chooses from), from each exposed server's kept connection (the exposures' pool, opened on
//! first use). A server that is not configured or fails is left out with a warning for the
//! worker's console; the page is not told why.

use std::collections::HashSet;

use super::super::io::{Input, Output, Pool, Step, Storage};
use super::super::Host;
use super::pools::Connecting;
use crate::core::expose::{for_origin, page_tools, Exposure, PageTool};
use crate::core::mcp::source::McpServerConfig;
use crate::core::setup::store::{servers, SERVERS_KEY};
use crate::core::storage::Area;

/// The machine: see the module's documentation.
#[derive(Debug)]
pub struct ExposedTools {
    origin: String,
    phase: Phase,
    /// The origin's exposures still to go through, and the servers.
    left: Vec<Exposure>,
    servers: Vec<McpServerConfig>,
    taken: HashSet<String>,
    tools: Vec<PageTool>,
    warnings: Vec<String>,
}

#[derive(Debug)]
enum Phase {
    Start,
    Exposures,
    Servers,
    Next,
    Connecting(Box<(Exposure, McpServerConfig, Connecting)>),
}

/// The tools, and the warnings for the worker's console.
pub type Exposed = (Vec<PageTool>, Vec<String>);

impl ExposedTools {
    /// The tools exposed to `origin` (as Chrome reported the page's sender).
    pub fn new(origin: String) -> ExposedTools {
        ExposedTools {
            origin,
            phase: Phase::Start,
            left: Vec::new(),
            servers: Vec::new(),
            taken: HashSet::new(),
            tools: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn done(&mut self) -> Step<Exposed> {
        let tools = std::mem::take(&mut self.tools);
        Step::Done((tools, std::mem::take(&mut self.warnings)))
    }
}

impl Host {
    /// One step of an [`ExposedTools`].
    pub fn exposed_tools(
        &self,
        m: &mut ExposedTools,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<Exposed> {
        let origin = m.origin.clone();
        loop {
            match std::mem::replace(&mut m.phase, Phase::Next) {
                Phase::Start => {
                    m.phase = Phase::Exposures;
                    return Step::Do(Output::Storage(Storage::Exposures));
                }
                Phase::Exposures => {
                    let Some(Input::Exposures(exposures)) = input.take() else {
                        return m.done();
                    };
                    m.left = for_origin(&exposures, &origin)
                        .into_iter()
                        .cloned()
                        .collect();
                    m.left.reverse();
                    if m.left.is_empty() {
                        return m.done();
                    }
                    m.phase = Phase::Servers;
                    return Step::Do(Output::Storage(Storage::Read {
                        area: Area::Local,
                        key: SERVERS_KEY.into(),
                    }));
                }
                Phase::Servers => {
                    let Some(Input::Read(stored)) = input.take() else {
                        return m.done();
                    };
                    match stored.and_then(servers) {
                        Ok(servers) => m.servers = servers,
                        Err(e) => {
                            m.warnings.push(format!("webmcp-host: exposures: {e}"));
                            return m.done();
                        }
                    }
                }
                Phase::Next => {
                    let Some(exposure) = m.left.pop() else {
                        return m.done();
                    };
                    let found = m.servers.iter().find(|s| s.name == exposure.server);
                    let Some(server) = found.cloned() else {
                        m.warnings.push(format!(
                            "webmcp-host: the MCP server `{}` exposed to {origin} is not configured",
                            exposure.server
                        ));
                        continue;
                    };
                    let connecting = Connecting::new(Pool::Exposures, server.clone());
                    m.phase = Phase::Connecting(Box::new((exposure, server, connecting)));
                }
                Phase::Connecting(mut under_way) => {
                    let (exposure, server, connecting) = &mut *under_way;
                    match self.mcp_connect(connecting, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Phase::Connecting(under_way);
                            return Step::Do(output);
                        }
                        Step::Done(Ok((kept, _))) => {
                            let (found, problems) =
                                page_tools(exposure, server, &kept.tools, &mut m.taken);
                            (m.warnings.extend(problems.into_iter().map(|problem| {
                                format!("webmcp-host: exposed to {origin}: {problem}")
                            })));
                            m.tools.extend(found);
                        }
                        Step::Done(Err(e)) => m.warnings.push(format!(
                            "webmcp-host: the MCP server `{}` exposed to {origin} failed: {e}",
                            server.name
                        )),
                    }
                }
            }
        }
    }
}
