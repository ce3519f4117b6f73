//! A run's start, decided: the request checked against the stored registry, the run's ids,
//! its conversation read (and the log of a run of it a worker restart cut), the run's record
//! stored, then its tool sources read one after the other (the tab's page tools, each enabled MCP
//! server with its key and time limit, the model's key), and the run and its drive built from
//! what came back: local, page, MCP, frontend and visitor tools, the sources' errors, the
//! page and MCP bindings, and its conversation settled and stored (continued, or a new one
//! carrying the history when the tools changed: `core::ops::threads`). Drive it like the other machines: perform [`Start::poll`](crate::core::setup::start::Start::poll)'s [`Need`](crate::core::setup::start::Need),
//! feed what came of it to [`Start::handle`](crate::core::setup::start::Start::handle), until [`Need::Ready`](crate::core::setup::start::Need::Ready); then [`Start::finish`](crate::core::setup::start::Start::finish).
//! Invariants: a source that fails is a [`SourceError`](crate::core::run::SourceError) of the run, never the run's failure;
//! every secret the run sends (the model's key, each server's key, each sign-in's tokens and
//! client secret) is redacted from every tool result and error before anything sees it.

use std::collections::VecDeque;

use serde_json::{json, Value};

use crate::core::agui::Message;
use crate::core::limits::MAX_TOOLS_PER_REQUEST;
use crate::core::limits::MCP_SOURCE_MS;
use crate::core::mcp::auth::AuthRecord;
use crate::core::mcp::secrets_of;
use crate::core::mcp::source::{run_tools as mcp_run_tools, McpServerConfig};
use crate::core::mcp::tools::McpTool;
use crate::core::ops::request::{visitor_tools, RunRequest};
pub use crate::core::ops::threads::ThreadRecord;
use crate::core::ops::threads::{marks, Opening, RunPlace};
use crate::core::page::call::Listed;
use crate::core::provider::{ModelConfig, ModelRegistry};
use crate::core::run::drive::{Binding, Drive, Setup};
use crate::core::run::local::local_tools;
use crate::core::run::page::page_run_tools;
use crate::core::run::{Middleware, Run, RunInput, RunTool, SourceError, ToolKind};
use crate::core::toolset::ToolSpec;

/// What the start needs next from the worker.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The stored record of the conversation the run continues (session storage, under
    /// [`thread_key`](crate::core::ops::threads::thread_key)): [`Got::Conversation`].
    Conversation(String),
    /// The log of the conversation's open run (a cut run), as `runLog` answers it from its
    /// first event: [`Got::RunLog`].
    RunLog(String),
    /// The run cannot start: answer this error (nothing of it was stored).
    Refused(String),
    /// The global middleware layers as stored (local storage, under
    /// [`MIDDLEWARE_KEY`](crate::core::setup::store::MIDDLEWARE_KEY)): [`Got::Middleware`].
    Middleware,
    /// Store the run's record (the run log) before anything of it acts: [`Got::Recorded`].
    Record,
    /// Store the conversation's record (session storage, and its place in the list) before
    /// the run acts: [`Got::ConversationSaved`]. Once the run ended, store
    /// [`ThreadRecord::ended`] of it.
    SaveConversation(Box<ThreadRecord>),
    /// The tools of the run's tab: [`Got::TabTools`].
    TabTools(i64),
    /// The stored MCP servers: [`Got::Servers`].
    Servers,
    /// A key from session storage, by its reference: [`Got::Key`].
    Key(String),
    /// Connect to this server and list its tools within `within_ms`: [`Got::Opened`]. The
    /// host keeps the connection for the run's calls and closes it at the run's end.
    Open {
        /// The server.
        server: McpServerConfig,
        /// Its key, if it wants one.
        key: Option<String>,
        /// How long connecting and listing may take in all.
        within_ms: u32,
    },
    /// Every source is read: [`Start::finish`].
    Ready,
}

/// What came of a [`Need`].
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// The conversation's stored record (`None`: nothing stored), or why it could not be read.
    Conversation(Result<Option<Value>, String>),
    /// The open run's log, or why it could not be read.
    RunLog(Result<Value, String>),
    /// The stored global middleware (`None`: none), or why it could not be read.
    Middleware(Result<Option<Value>, String>),
    /// The run's record is stored; the time now (ms since the epoch).
    Recorded(f64),
    /// The conversation's record is stored (or could not be: the run goes on).
    ConversationSaved,
    /// The tab's tools, or why they could not be listed.
    TabTools(crate::core::page::tabs::Listed),
    /// The stored MCP servers, or why they could not be read.
    Servers(Result<Vec<McpServerConfig>, String>),
    /// The key asked for, or why it could not be read.
    Key(Result<Option<String>, String>),
    /// The server's tools, the sign-in the connection uses (if any) and the protocol
    /// revision it speaks, or why it could not be opened.
    Opened(Result<ServerOpened, String>),
}

/// An MCP server opened: its tools, the sign-in the connection uses (if any) and the protocol
/// revision it speaks.
pub type ServerOpened = (Vec<McpTool>, Option<Box<AuthRecord>>, String);

/// Where the start stands.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Thread(String),
    CutRun(String),
    Refused(String),
    Middleware,
    Record,
    Tab(i64),
    Servers,
    ServerKey(McpServerConfig),
    Open(McpServerConfig, Option<String>),
    ModelKey(String),
    SaveThread(Box<ThreadRecord>),
    Ready,
}

/// A run being started.
#[derive(Debug)]
pub struct Start {
    request: RunRequest,
    visitor: Vec<ToolSpec>,
    model: ModelConfig,
    run_id: String,
    thread_id: String,
    phase: Phase,
    /// The top-frame origin of the run's tab, as Chrome lists it.
    origin: Option<String>,
    servers: VecDeque<McpServerConfig>,
    tools: Vec<RunTool>,
    errors: Vec<SourceError>,
    /// The MCP servers opened: `webmcp_host.tool_source` values.
    sources: Vec<Value>,
    bindings: Vec<(String, Binding)>,
    key: Result<Option<String>, String>,
    /// Every secret the run's connections send, redacted from tool results and errors.
    secrets: Vec<String>,
    /// The conversation as read, until it is settled.
    opening: Opening,
    /// The id of a new conversation carrying the history, if the tools changed.
    fork_id: String,
    /// When the run's record was stored.
    now_ms: f64,
    /// The conversation's history and notices, once settled.
    settled: Option<(Vec<Message>, Vec<Value>)>,
    /// Whether a repair hook is set (`webmcpHost.repairHook`).
    hook: bool,
    /// The global middleware layers, once read.
    global: Vec<Middleware>,
}

impl Start {
    /// Checks the raw `run` request against the stored `registry`; ids the request leaves out
    /// are `run_<fresh>` and `thread_<fresh>`.
    pub fn new(
        raw: &Value,
        registry: &ModelRegistry,
        mut fresh: impl FnMut() -> String,
    ) -> Result<Start, String> {
        let request = RunRequest::parse(raw).map_err(|e| e.0)?;
        // Visitor tools (answered by the person in the popup or side panel).
        let visitor = visitor_tools(raw)?;
        let model = match &request.replay {
            // A replayed run: the recorded outputs stand in for the model (which need not be
            // configured any more): no key, no request.
            Some(transcript) => crate::core::provider::ModelConfig {
                name: (request.model.clone()).unwrap_or_else(|| "replay".into()),
                provider: crate::core::provider::Provider::Replay,
                base_url: String::new(),
                model: String::new(),
                native_tools: true,
                key_ref: None,
                max_tokens: None,
                transcript: Some(transcript.clone()),
                idle_timeout_ms: None,
            },
            None => registry
                .resolve(request.model.as_deref())
                .map_err(|e| format!("run: {e}"))?
                .clone(),
        };
        if request.no_tools && !visitor.is_empty() {
            return Err("run: `noTools` offers no tool: give no `visitorTools` with it".into());
        }
        let run_id = request
            .run_id
            .clone()
            .unwrap_or_else(|| format!("run_{}", fresh()));
        let thread_id = request
            .thread_id
            .clone()
            .unwrap_or_else(|| format!("thread_{}", fresh()));
        let fork_id = format!("thread_{}", fresh());
        let phase = match &request.thread_id {
            Some(thread_id) => Phase::Thread(thread_id.clone()),
            None => Phase::Middleware,
        };
        let tools = match request.no_tools {
            true => Vec::new(),
            false => local_tools(),
        };
        Ok(Start {
            request,
            visitor,
            model,
            run_id,
            thread_id,
            phase,
            origin: None,
            servers: VecDeque::new(),
            tools,
            errors: Vec::new(),
            sources: Vec::new(),
            bindings: Vec::new(),
            key: Ok(None),
            secrets: Vec::new(),
            opening: Opening::default(),
            fork_id,
            now_ms: 0.0,
            settled: None,
            hook: false,
            global: Vec::new(),
        })
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The run's thread id.
    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// Sets whether a repair hook is set: the run hands it the calls repair could not make
    /// valid.
    pub fn set_repair_hook(&mut self, hook: bool) {
        self.hook = hook;
    }

    /// The run's tab, if any.
    pub fn tab_id(&self) -> Option<i64> {
        self.request.tab_id
    }

    /// What the start needs now.
    pub fn poll(&self) -> Need {
        match &self.phase {
            Phase::Thread(thread_id) => Need::Conversation(thread_id.clone()),
            Phase::CutRun(run_id) => Need::RunLog(run_id.clone()),
            Phase::Refused(message) => Need::Refused(message.clone()),
            Phase::Middleware => Need::Middleware,
            Phase::Record => Need::Record,
            Phase::SaveThread(record) => Need::SaveConversation(record.clone()),
            Phase::Tab(tab_id) => Need::TabTools(*tab_id),
            Phase::Servers => Need::Servers,
            Phase::ServerKey(server) => {
                Need::Key(server.key_ref.clone().expect("asked only with a key"))
            }
            Phase::Open(server, key) => Need::Open {
                server: server.clone(),
                key: key.clone(),
                within_ms: server.timeout_ms.unwrap_or(MCP_SOURCE_MS),
            },
            Phase::ModelKey(reference) => Need::Key(reference.clone()),
            Phase::Ready => Need::Ready,
        }
    }

    /// Feeds what came of the last [`Need`]; an answer to another need is ignored.
    pub fn handle(&mut self, got: Got) {
        match (std::mem::replace(&mut self.phase, Phase::Ready), got) {
            (Phase::Thread(thread_id), Got::Conversation(stored)) => {
                let read = stored
                    .map_err(|e| {
                        format!("run: the conversation `{thread_id}` could not be read: {e}")
                    })
                    .and_then(|stored| ThreadRecord::from_stored(&thread_id, stored));
                self.phase = match read {
                    Ok(record) => {
                        let (opening, open) = Opening::read(record);
                        self.opening = opening;
                        open.map_or(Phase::Middleware, Phase::CutRun)
                    }
                    Err(message) => Phase::Refused(message),
                };
            }
            (Phase::CutRun(run_id), Got::RunLog(log)) => {
                self.phase = match self.opening.with_log(&run_id, log) {
                    Ok(()) => Phase::Middleware,
                    Err(message) => Phase::Refused(message),
                };
            }
            (Phase::Middleware, Got::Middleware(stored)) => {
                let read = stored
                    .map_err(|e| format!("run: the stored middleware could not be read: {e}"));
                self.phase = match read.and_then(crate::core::gate::stored) {
                    Ok(layers) => {
                        self.global = layers;
                        Phase::Record
                    }
                    Err(message) => Phase::Refused(message),
                };
            }
            (Phase::Record, Got::Recorded(now_ms)) => {
                self.now_ms = now_ms;
                if self.request.no_tools {
                    return self.next_server();
                }
                self.phase = self.request.tab_id.map_or(Phase::Servers, Phase::Tab);
            }
            (Phase::SaveThread(_), Got::ConversationSaved) => self.phase = Phase::Ready,
            (Phase::Tab(tab_id), Got::TabTools(found)) => {
                let shown = found.as_ref().ok().and_then(|f| f.page.as_ref());
                let shown = shown.map(|page| page.origin.clone());
                let elsewhere = match (&self.request.expect_origin, &shown) {
                    (Some(expected), shown) if shown.as_ref() != Some(expected) => Some(format!(
                        "the tab shows {}, not {expected} where the run was asked to act: none of its tools is offered",
                        shown.as_deref().unwrap_or("no page")
                    )),
                    _ => None,
                };
                let found = match elsewhere {
                    Some(message) => Err(message),
                    None => found,
                };
                match found {
                    Ok(found) => {
                        self.origin = found.page.as_ref().map(|page| page.origin.clone());
                        let (run_tools, bindings, errors) = page_run_tools(&found);
                        self.tools.extend(run_tools);
                        self.errors.extend(errors);
                        let bound = bindings.into_iter().map(|b| {
                            let listed = Listed {
                                tool: b.tool,
                                document_id: b.document_id,
                            };
                            (b.run_name, Binding::Page(listed))
                        });
                        self.bindings.extend(bound);
                    }
                    Err(message) => self.errors.push(SourceError {
                        source: format!("page (tab {tab_id})"),
                        message,
                    }),
                }
                self.phase = Phase::Servers;
            }
            (Phase::Servers, Got::Servers(servers)) => {
                match servers {
                    Ok(servers) => {
                        self.servers = servers.into_iter().filter(|s| s.enabled).collect()
                    }
                    Err(message) => self.errors.push(SourceError {
                        source: "MCP servers".into(),
                        message,
                    }),
                }
                self.next_server();
            }
            (Phase::ServerKey(server), Got::Key(key)) => match key {
                Ok(key) => {
                    self.secrets.extend(secrets_of(key.as_deref(), None));
                    self.phase = Phase::Open(server, key)
                }
                Err(message) => {
                    self.server_failed(&server, message);
                    self.next_server();
                }
            },
            (Phase::Open(server, _), Got::Opened(listed)) => {
                match listed {
                    Ok((listed, auth, protocol)) => {
                        self.secrets.extend(secrets_of(None, auth.as_deref()));
                        self.sources.push(json!({
                            "source": format!("MCP server {}", server.name),
                            "protocol": protocol,
                            "tools": listed.len(),
                        }));
                        self.listed(&server, &listed)
                    }
                    Err(message) => self.server_failed(&server, message),
                }
                self.next_server();
            }
            (Phase::ModelKey(_), Got::Key(key)) => {
                if let Ok(key) = &key {
                    self.secrets.extend(secrets_of(key.as_deref(), None));
                }
                self.key = key;
                self.settle();
            }
            (phase, _) => self.phase = phase,
        }
    }

    fn server_failed(&mut self, server: &McpServerConfig, message: String) {
        self.errors.push(SourceError {
            source: format!("MCP server {}", server.name),
            message,
        });
    }

    /// A server's listing as run tools, each bound to its tool at the server.
    fn listed(&mut self, server: &McpServerConfig, listed: &[McpTool]) {
        let (run_tools, map) = mcp_run_tools(server, listed);
        self.tools.extend(run_tools);
        // By name: a server may list 20,000 tools, and a scan per tool would be quadratic.
        let by_name: std::collections::HashMap<&str, &McpTool> =
            listed.iter().map(|t| (t.name.as_str(), t)).collect();
        for entry in map {
            let tool = *by_name
                .get(entry.name.as_str())
                .expect("mapped from the list");
            let binding = Binding::Mcp {
                server: server.name.clone(),
                acting: tool.needs_confirmation(false),
                tool: tool.clone(),
                needs_confirmation: entry.needs_confirmation,
            };
            self.bindings.push((entry.run_name, binding));
        }
    }

    /// The next enabled server (its key first, when it wants one); then the model's key.
    fn next_server(&mut self) {
        self.phase = match self.servers.pop_front() {
            Some(server) if server.key_ref.is_some() => Phase::ServerKey(server),
            Some(server) => Phase::Open(server, None),
            None => match &self.model.key_ref {
                Some(reference) => Phase::ModelKey(reference.clone()),
                None => return self.settle(),
            },
        };
    }

    /// Every tool is known: the run's conversation is settled (continued, new, or new with
    /// the history when the tools changed), and its record is to be stored.
    fn settle(&mut self) {
        let mut all = self.tools.clone();
        let tool = |kind: ToolKind| {
            move |spec: &ToolSpec| RunTool {
                spec: spec.clone(),
                kind,
                data_source: None,
            }
        };
        all.extend(
            self.request
                .frontend_tools
                .iter()
                .map(tool(ToolKind::Frontend)),
        );
        all.extend(self.visitor.iter().map(tool(ToolKind::Visitor)));
        name_user_messages(&mut self.request.messages, &self.run_id);
        let place = RunPlace {
            run_id: &self.run_id,
            tab_id: self.request.tab_id,
            messages: &self.request.messages,
            origin: self.origin.as_deref(),
            carry_over: self.request.carry_over,
        };
        let settled = std::mem::take(&mut self.opening).settle(
            &self.thread_id,
            &self.fork_id,
            marks(&all),
            place,
            self.now_ms,
        );
        self.thread_id = settled.record.summary.thread_id.clone();
        self.settled = Some((settled.history, settled.notices));
        self.phase = Phase::SaveThread(Box::new(settled.record));
    }

    /// The run and its drive, from every source read (call at [`Need::Ready`]).
    pub fn finish(self) -> Drive {
        let Start {
            request,
            visitor,
            model,
            run_id,
            thread_id,
            mut tools,
            mut errors,
            sources,
            bindings,
            key,
            secrets,
            settled,
            hook,
            global,
            origin,
            ..
        } = self;
        let tool = |kind: ToolKind| {
            move |spec| RunTool {
                spec,
                kind,
                data_source: None,
            }
        };
        tools.extend(
            request
                .frontend_tools
                .into_iter()
                .map(tool(ToolKind::Frontend)),
        );
        tools.extend(visitor.into_iter().map(tool(ToolKind::Visitor)));
        if let Some(error) = cap_tools(&mut tools) {
            errors.push(error);
        }
        let mut messages = request.messages;
        name_user_messages(&mut messages, &run_id);
        let (history, notices) = settled.unwrap_or_default();
        let messages = history.into_iter().chain(messages).collect();
        let mut input = RunInput::new(thread_id, run_id, messages);
        input.notices = notices;
        input.tools = tools;
        input.source_errors = errors;
        input.sources = sources;
        input.max_steps = request.max_steps;
        input.context = request.context;
        input.output_schema = request.output_schema;
        input.hook = hook;
        // Global layers first, then the run's own.
        input.middleware = global.into_iter().chain(request.middleware).collect();
        if !secrets.is_empty() {
            input.middleware.push(Middleware::Redact { secrets });
        }
        input.own_names = crate::core::run::drive::own_names(&bindings);
        let setup = Setup {
            model,
            key,
            tab_id: request.tab_id,
            origin,
            bindings,
            hook,
        };
        Drive::new(Run::start(input), setup)
    }
}

/// Names the user messages that came without an id, `<runId>-user_<n>`: unique in the
/// conversation.
fn name_user_messages(messages: &mut [Message], run_id: &str) {
    for (i, message) in messages.iter_mut().enumerate() {
        if let Message::User { id, .. } = message {
            if id.is_empty() {
                *id = format!("{run_id}-user_{}", i + 1);
            }
        }
    }
}

/// Leaves out the tools past [`MAX_TOOLS_PER_REQUEST`] (the last ones: the page's and the
/// servers' come first, then the caller's), and says how many of each source were left out.
pub(super) fn cap_tools(tools: &mut Vec<RunTool>) -> Option<SourceError> {
    if tools.len() <= MAX_TOOLS_PER_REQUEST {
        return None;
    }
    let dropped = tools.split_off(MAX_TOOLS_PER_REQUEST);
    let mut by_source: Vec<(String, usize)> = Vec::new();
    for tool in &dropped {
        let source = match tool.kind {
            ToolKind::Local => "the host's",
            ToolKind::Page => "the page's",
            ToolKind::Mcp => "the servers'",
            ToolKind::Frontend => "the client's",
            ToolKind::Visitor => "the person's",
        }
        .to_owned();
        match by_source.iter_mut().find(|(s, _)| *s == source) {
            Some((_, n)) => *n += 1,
            None => by_source.push((source, 1)),
        }
    }
    let which: Vec<String> = by_source
        .iter()
        .map(|(s, n)| format!("{n} of {s}"))
        .collect();
    Some(SourceError {
        source: "tools".into(),
        message: format!(
            "{} tools left out ({}): a model request carries at most {MAX_TOOLS_PER_REQUEST} (max_tools_per_request)",
            dropped.len(),
            which.join(", ")
        ),
    })
}
