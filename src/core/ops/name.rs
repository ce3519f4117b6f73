//! The names of the host's operations, and who may ask for each: the one place an
//! operation's name is written ([`OpName::as_str`]) and the authorization table
//! ([`OpName::audience`]).

use serde_json::Value;

use super::request::RequestError;
use crate::core::naming::kind;

/// Declares the operations once: each variant with its doc and its name. [`OpName`], its
/// [`OpName::ALL`] (in this order, the order the docs list them) and [`OpName::as_str`] are
/// derived from this one list, so that no operation can be added to one and not the others.
macro_rules! operations {
    ($($(#[doc = $doc:literal])+ $variant:ident => $name:literal,)+) => {
        /// Every operation the worker performs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum OpName {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl OpName {
            /// Every operation, in the order the docs list them.
            pub const ALL: &'static [OpName] = &[$(OpName::$variant,)+];

            /// The operation's name, as messages and `webmcpHost` spell it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(OpName::$variant => $name,)+
                }
            }
        }
    };
}

operations! {
    /// The host's version.
    Version => "version",
    /// A tab's page tools, every frame merged.
    ListTools => "listTools",
    /// Calls one page tool.
    CallTool => "callTool",
    /// Audits a tab's tools.
    Audit => "audit",
    /// Loads one origin's pages in a tab, lists and audits each one's tools, and compares them
    /// with the previous crawl.
    Crawl => "crawl",
    /// Checks arguments against a tool's input schema, each error at its field.
    ValidateArguments => "validateArguments",
    /// Every open tab's tools, searchable, with the definitions that changed.
    Inventory => "inventory",
    /// Why a tab shows no tools.
    Diagnose => "diagnose",
    /// Runs a turn and resolves when it ends.
    Run => "run",
    /// Starts a turn and resolves at once with its ids.
    StartRun => "startRun",
    /// A run's AG-UI events so far.
    Events => "events",
    /// Stops a run.
    Stop => "stop",
    /// The kept runs, newest first.
    Runs => "runs",
    /// A run's bug report: one file with its events, the tab's tools, a screenshot, versions.
    BugReport => "bugReport",
    /// A run's log, also after a worker restart.
    RunLog => "runLog",
    /// A run's log read as a timeline.
    Timeline => "timeline",
    /// The kept conversations, most recently updated first.
    Conversations => "conversations",
    /// One kept conversation with its messages.
    Conversation => "conversation",
    /// Deletes a kept conversation.
    Forget => "forget",
    /// The items waiting for the person.
    Pending => "pending",
    /// Answers a visitor input or allows a confirmation.
    Answer => "answer",
    /// Declines a visitor input or a confirmation.
    Decline => "decline",
    /// Runs an eval suite on a tab (smoke or agent mode).
    Evaluate => "evaluate",
    /// Writes an evaluation's answer as JSON, JUnit XML, HTML, Markdown or SARIF.
    EvalReport => "evalReport",
    /// Makes an eval case of a finished run.
    ToEval => "toEval",
    /// Plays a recorded run's calls against the site now and reports what changed.
    ReplayDiff => "replayDiff",
    /// Changes the model registry, keys, servers or site policies.
    Configure => "configure",
    /// What the person's side shows: models, servers, masked keys, presets.
    Settings => "settings",
    /// Checks a model's endpoint and key.
    TestModel => "testModel",
    /// Connects to an MCP server, lists its tools and closes.
    CheckServer => "checkServer",
    /// Signs in to an MCP server (OAuth).
    SignIn => "signIn",
    /// Forgets an MCP server's tokens.
    SignOut => "signOut",
    /// Each configured server's sign-in.
    AuthState => "authState",
    /// Offers (or takes back) an MCP server's tools to an origin's own WebMCP.
    Expose => "expose",
    /// The exposures.
    Exposures => "exposures",
    /// The MCP tools exposed to the sender's page origin.
    ExposedTools => "exposedTools",
    /// Runs one of them.
    CallExposed => "callExposed",
    /// A frame's tools changed: the person's side lists them again.
    ToolsChanged => "toolsChanged",
    /// Whether a page call the person just allowed in the page is still wanted (its run
    /// still going): asked by the content script before the tool starts.
    CallWanted => "callWanted",
}

/// Who may ask for an operation by runtime message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Only the extension's own pages (popup, side panel).
    ExtensionPages,
    /// Also the content script of a tab's top frame.
    TopFrame,
    /// Also the content script of any frame.
    AnyFrame,
}

impl OpName {
    /// Who may ask for it (the authorization table; see [`super::sender::authorize`]).
    pub fn audience(self) -> Audience {
        match self {
            OpName::ExposedTools | OpName::CallExposed => Audience::TopFrame,
            OpName::ToolsChanged | OpName::CallWanted => Audience::AnyFrame,
            _ => Audience::ExtensionPages,
        }
    }

    /// Whether the automation surface (`globalThis.webmcpHost`) offers it: every operation
    /// but those that answer a page's content script.
    pub fn automated(self) -> bool {
        self.audience() == Audience::ExtensionPages
    }

    /// The operation a name asks for, or an error listing the known names.
    pub fn parse(name: &str) -> Result<OpName, RequestError> {
        OpName::ALL
            .iter()
            .copied()
            .find(|op| op.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = OpName::ALL.iter().map(|op| op.as_str()).collect();
                RequestError(format!(
                    "unknown op `{}`; known: {}",
                    name.chars().take(64).collect::<String>(),
                    known.join(", ")
                ))
            })
    }

    /// The name of a runtime message's operation (its `op`).
    pub fn of_message(message: &Value) -> Result<OpName, RequestError> {
        match message.get("op") {
            Some(Value::String(op)) => OpName::parse(op),
            Some(other) => Err(RequestError(format!(
                "`op` must be a string, not {}",
                kind(other)
            ))),
            None => Err(RequestError("the message has no `op`".into())),
        }
    }
}
