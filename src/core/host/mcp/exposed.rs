//! Exposures as the host decides them: a change (`expose`, [`Exposing`]), and the tools
//! exposed to a page's origin (`exposedTools`, and the tools a `callExposed`
//! chooses from), from each exposed server's kept connection (the exposures' pool, opened on
//! first use). A server that is not configured or fails is left out with a warning for the
//! worker's console; the page is not told why.

use std::collections::HashSet;

use serde_json::Value;

use super::super::io::{ClientId, Frames, Input, Mcp, Output, Pool, Step, Storage, Tabs, Ui};
use super::super::Host;
use super::pools::Connecting;
use crate::core::expose::{
    apply, check_configured, for_origin, page_tools, sync_message, tells, tools_reply, unused,
    ExposeRequest, Exposure, PageTool,
};
use crate::core::limits::EXPOSE_NOTIFY_MS;
use crate::core::mcp::source::McpServerConfig;
use crate::core::setup::store::{servers, SERVERS_KEY};
use crate::core::storage::{Area, EXPOSURES};

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

/// `expose({server, origin, enabled, tools?})` → the exposures after the change: the server
/// checked to be configured (when switched on), the exposures stored, the kept connections
/// no exposure names any more closed, and the top frame of every open tab of the origin
/// told to ask for its tools again.
#[derive(Debug)]
pub struct Exposing {
    request: ExposeRequest,
    phase: Change,
    value: Value,
    closing: Vec<ClientId>,
    tabs: Vec<i64>,
    told: Vec<i64>,
}

#[derive(Debug, PartialEq)]
enum Change {
    Start,
    Servers,
    Exposures,
    Stored(Vec<Exposure>),
    Closing,
    Tabs,
    Frames(i64),
    Told,
}

impl Exposing {
    /// The change `request` asks for.
    pub fn new(request: ExposeRequest) -> Exposing {
        Exposing {
            request,
            phase: Change::Start,
            value: Value::Null,
            closing: Vec::new(),
            tabs: Vec::new(),
            told: Vec::new(),
        }
    }

    /// The next tab's frames, or the tabs of the origin told.
    fn next_tab(&mut self) -> Step<Result<Value, String>> {
        match self.tabs.pop() {
            Some(tab_id) => {
                self.phase = Change::Frames(tab_id);
                Step::Do(Output::Frames(Frames::All { tab_id }))
            }
            None => {
                self.phase = Change::Told;
                Step::Do(Output::Frames(Frames::Tell {
                    tab_ids: std::mem::take(&mut self.told),
                    message: sync_message(),
                    ms: EXPOSE_NOTIFY_MS,
                }))
            }
        }
    }
}

impl Host {
    /// One step of an [`Exposing`].
    pub fn expose(
        &self,
        m: &mut Exposing,
        mut input: Option<Input>,
    ) -> Step<Result<Value, String>> {
        loop {
            match std::mem::replace(&mut m.phase, Change::Told) {
                Change::Start if m.request.enabled => {
                    m.phase = Change::Servers;
                    return Step::Do(Output::Storage(Storage::Read {
                        area: Area::Local,
                        key: SERVERS_KEY.into(),
                    }));
                }
                Change::Start => m.phase = Change::Exposures,
                Change::Servers => {
                    let Some(Input::Read(stored)) = input.take() else {
                        return Step::Done(Err("internal error: the servers did not come".into()));
                    };
                    let checked = stored
                        .and_then(servers)
                        .and_then(|servers| check_configured(&m.request, &servers));
                    if let Err(e) = checked {
                        return Step::Done(Err(e));
                    }
                    m.phase = Change::Exposures;
                }
                Change::Exposures => match input.take() {
                    Some(Input::Exposures(stored)) => {
                        let exposures = match apply(&stored, &m.request) {
                            Err(e) => return Step::Done(Err(e)),
                            Ok(exposures) => exposures,
                        };
                        m.value = serde_json::to_value(&exposures).expect("exposures serialize");
                        m.phase = Change::Stored(exposures);
                        return Step::Do(Output::Storage(Storage::Write {
                            area: Area::Local,
                            key: EXPOSURES.into(),
                            value: Some(m.value.clone()),
                        }));
                    }
                    _ => {
                        m.phase = Change::Exposures;
                        return Step::Do(Output::Storage(Storage::Exposures));
                    }
                },
                Change::Stored(exposures) => {
                    if let Some(Input::Done(Err(e))) = input.take() {
                        return Step::Done(Err(format!("expose: storing failed: {e}")));
                    }
                    let open = self.kept_names(Pool::Exposures);
                    m.closing = (unused(open.iter(), &exposures).iter())
                        .filter_map(|name| self.forget_kept(Pool::Exposures, name))
                        .collect();
                    m.phase = Change::Closing;
                }
                Change::Closing => match m.closing.pop() {
                    Some(client) => {
                        m.phase = Change::Closing;
                        return Step::Do(Output::Mcp(Mcp::Close { client }));
                    }
                    None => {
                        m.phase = Change::Tabs;
                        return Step::Do(Output::Tabs(Tabs::List));
                    }
                },
                Change::Tabs => {
                    if let Some(Input::Tabs(tabs)) = input.take() {
                        m.tabs = tabs.into_iter().rev().map(|tab| tab.id).collect();
                    }
                    return m.next_tab();
                }
                Change::Frames(tab_id) => {
                    if let Some(Input::Frames(Ok(frames))) = input.take() {
                        let origin = &m.request.origin;
                        if (frames.iter()).any(|f| f.frame_id == 0 && tells(origin, &f.url)) {
                            m.told.push(tab_id);
                        }
                    }
                    return m.next_tab();
                }
                Change::Told => return Step::Done(Ok(std::mem::take(&mut m.value))),
            }
        }
    }
}

/// `exposures()` → `[{server, origins, tools?}]`, as stored (read leniently).
#[derive(Debug, Default)]
pub struct Exposures;

impl Host {
    /// One step of an [`Exposures`].
    pub fn exposures(
        &self,
        _m: &mut Exposures,
        input: Option<Input>,
    ) -> Step<Result<Value, String>> {
        match input {
            None => Step::Do(Output::Storage(Storage::Exposures)),
            Some(Input::Exposures(exposures)) => Step::Done(Ok(
                serde_json::to_value(exposures).expect("exposures serialize")
            )),
            Some(other) => Step::Done(Err(format!(
                "internal error: {} came where the exposures were asked for",
                other.what()
            ))),
        }
    }
}

/// `exposedTools()` of a page's content script → the registrations of the tools exposed to
/// its origin ([`ExposedTools`]); what was left out is warned of in the worker's console
/// first, one warning at a time.
#[derive(Debug)]
pub struct ExposedReply {
    tools: ExposedTools,
    found: Option<Exposed>,
}

impl ExposedReply {
    /// The reply to a page of `origin` (as Chrome reported its sender).
    pub fn new(origin: String) -> ExposedReply {
        ExposedReply {
            tools: ExposedTools::new(origin),
            found: None,
        }
    }
}

impl Host {
    /// One step of an [`ExposedReply`].
    pub fn exposed_reply(
        &self,
        m: &mut ExposedReply,
        input: Option<Input>,
        now: f64,
    ) -> Step<Result<Value, String>> {
        if m.found.is_none() {
            match self.exposed_tools(&mut m.tools, input, now) {
                Step::Do(output) => return Step::Do(output),
                Step::Done((tools, mut warnings)) => {
                    warnings.reverse();
                    m.found = Some((tools, warnings));
                }
            }
        }
        let (tools, warnings) = m.found.as_mut().expect("found");
        match warnings.pop() {
            Some(message) => Step::Do(Output::Ui(Ui::Warn { message })),
            None => Step::Done(Ok(tools_reply(tools))),
        }
    }
}
