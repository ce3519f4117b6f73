//! The host's one effect vocabulary: what the shell does for a machine of the [`Host`]
//! ([`Output`], in families: timers, storage, frames, tabs, the person's side, MCP
//! connections) and what it feeds back ([`Input`]). Every machine that speaks it steps as
//! `Host::x(&mut machine, Option<Input>, now_ms) -> Step<Answer>`, so the shell drives them
//! all with one loop and performs each output in one place, and the native play harness
//! performs the same vocabulary against scripted pages.
//!
//! Invariant: an output says what to do, never why; every decision (what a reply means, what
//! to read, when to give up) stays with the machine that asked.
//!
//! [`Host`]: super::Host

use serde_json::{Map, Value};

use crate::core::run::RunEnded;

// The edge's types that appear in this vocabulary's outputs and inputs, named here too, so
// that whoever performs the vocabulary names it alone (its own surface, as a boundary crate
// re-exports its types).
pub use super::uses::Idle;
pub use crate::core::expose::{Exposure, PageTool};
pub use crate::core::gate::{McpCall, Permit};
pub use crate::core::http::HttpRequest;
pub use crate::core::mcp::auth::Via;
pub use crate::core::mcp::exchange::Head;
pub use crate::core::mcp::source::McpServerConfig;
pub use crate::core::mcp::tools::McpTool;
pub use crate::core::mcp::CallResult;
pub use crate::core::page::bridge::{Reply, Target};
pub use crate::core::page::call::{FrameState, Tab};
pub use crate::core::page::site::SitePolicy;
pub use crate::core::page::tabs::{Frame, FrameAnswer, Listed};
pub use crate::core::storage::Area;

/// A machine's next move: an output for the shell to perform, or its answer.
#[derive(Debug, PartialEq)]
pub enum Step<A> {
    /// Perform this, then feed back its [`Input`].
    Do(Output),
    /// The machine is done.
    Done(A),
}

/// What the shell does next, by family.
#[derive(Debug, PartialEq)]
pub enum Output {
    /// Wait this long: [`Input::Slept`].
    Sleep {
        /// How long (ms).
        ms: u32,
    },
    /// Storage.
    Storage(Storage),
    /// The tab's frames (the page bridge in each).
    Frames(Frames),
    /// The browser's tabs.
    Tabs(Tabs),
    /// The person's side: the extension's own pages.
    Ui(Ui),
    /// The kept MCP connections.
    Mcp(Mcp),
    /// Agent runs, as `run` makes them.
    Runs(Runs),
    /// Plain HTTP: fetches with a streaming body.
    Http(Http),
    /// Chrome's built-in model.
    Model(Model),
    /// Timers that may be cancelled.
    Timers(Timers),
}

/// Timers a machine sets and may cancel before they fire, each under an id the machine took
/// from [`super::Host::timer_id`]; the shell holds each timer's handle under its id until it
/// fired or was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timers {
    /// Set a timer of `ms`: [`Input::Slept`] when it fires, [`Input::Done`] when it was
    /// cancelled first.
    Set {
        /// The timer's id.
        id: u64,
        /// How long (ms).
        ms: u32,
    },
    /// Cancel the timer (one that fired already is left alone): [`Input::Done`] at once.
    Cancel {
        /// The timer's id.
        id: u64,
    },
}

/// Outputs about Chrome's built-in model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Model {
    /// Its availability (`LanguageModel.availability()`, `absent` when there is none):
    /// [`Input::Availability`].
    Availability,
}

/// Plain HTTP outputs: fetches with a streaming body, each under an id the machine took from
/// [`super::Host::fetch_id`] (one counter for the whole host), so that several fetches may be
/// in flight at once, of one machine or of many (an MCP session's requests and its listening
/// stream; a run's model streams). The shell holds each
/// fetch's handle under its id until the body ended or the fetch is aborted; redirects are
/// refused (fetch's `redirect: "error"`), so a key header never follows one.
#[derive(Debug, Clone, PartialEq)]
pub enum Http {
    /// Start the fetch and wait at most `within_ms` for its answer's head: [`Input::Fetched`].
    Fetch {
        /// The id its body is read and aborted by.
        id: u64,
        /// The request (every header decided).
        request: HttpRequest,
        /// How long the head may take (ms).
        within_ms: u32,
    },
    /// The next piece of the fetch's body, waiting at most `within_ms` (`None`: as long as
    /// it takes); a piece not come then is still read, and the next `Read` of the same id
    /// gets it (never two reads at once): [`Input::Piece`].
    Read {
        /// The fetch.
        id: u64,
        /// How long to wait (ms).
        within_ms: Option<u32>,
    },
    /// Abort the fetch (its body is not read on) and forget its handle: [`Input::Done`].
    Abort {
        /// The fetch.
        id: u64,
    },
    /// Send a request whose answer nobody reads: [`Input::Done`] at once.
    Post {
        /// The request.
        request: HttpRequest,
    },
}

/// A fetch's head, as [`Http::Fetch`] got it.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// The answer's status and the headers the core reads.
    Head(Head),
    /// No answer within the time given.
    TimedOut,
    /// The fetch failed (no answer, a refused redirect, …).
    Failed(String),
}

/// A piece of a fetch's body, as [`Http::Read`] got it.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// The next text.
    Text(String),
    /// The body ended (the handle is forgotten).
    End,
    /// Reading failed (the handle is forgotten).
    Failed(String),
    /// Nothing came within the time given; the read goes on.
    Late,
}

/// Storage outputs.
#[derive(Debug, Clone, PartialEq)]
pub enum Storage {
    /// Read one key: [`Input::Read`].
    Read {
        /// Its area.
        area: Area,
        /// The key.
        key: String,
    },
    /// The exposures as stored, read leniently (a problem warned of in the worker's console):
    /// [`Input::Exposures`].
    Exposures,
    /// Store `value` under one key (`None`: remove what is stored): [`Input::Done`], whose
    /// error, when the area is full, names what fills it and how to clear it.
    Write {
        /// Its area.
        area: Area,
        /// The key.
        key: String,
        /// The value; `None` removes the key.
        value: Option<Value>,
    },
    /// Every key the area holds: [`Input::Keys`].
    Keys {
        /// The area.
        area: Area,
    },
    /// Everything the area holds, as one object: [`Input::Read`].
    All {
        /// The area.
        area: Area,
    },
}

/// Outputs to a tab's frames.
#[derive(Debug, Clone, PartialEq)]
pub enum Frames {
    /// Ask every frame of the tab for its tools, all at once within one deadline (and, with
    /// `sites`, read the site policies meanwhile): [`Input::Listed`].
    List {
        /// The tab.
        tab_id: i64,
        /// Whether the site policies are to be read too.
        sites: bool,
    },
    /// Inject the page bridge into the tab's frames (its scripts are orphaned):
    /// [`Input::Done`].
    Inject {
        /// The tab.
        tab_id: i64,
    },
    /// Send a message to a frame's document and read its reply within `ms`: [`Input::Reply`].
    Ask {
        /// The tab.
        tab_id: i64,
        /// The frame (and document).
        target: Target,
        /// The message.
        message: Value,
        /// How long the reply may take (ms).
        ms: u32,
    },
    /// A page call's message: the browser's tabs listed first when `list_tabs` (a tab the call
    /// opens comes after them), then the message sent and its reply read within
    /// `timeout_ms`: [`Input::Sent`].
    Send {
        /// The tab.
        tab_id: i64,
        /// The frame (and document).
        target: Target,
        /// The message.
        message: Value,
        /// How long the reply may take (ms).
        timeout_ms: u32,
        /// Whether the tabs are to be listed first.
        list_tabs: bool,
    },
    /// Tell the top frame of each tab, all at once, and wait at most `ms` for each to take
    /// it (a tab without the content script does not answer): [`Input::Done`].
    Tell {
        /// The tabs.
        tab_ids: Vec<i64>,
        /// The message.
        message: Value,
        /// How long each may take (ms).
        ms: u32,
    },
    /// The tab's frames (`webNavigation.getAllFrames`): [`Input::Frames`].
    All {
        /// The tab.
        tab_id: i64,
    },
    /// Tabs surveyed all at once, each within its own deadlines: its top frame asked
    /// `message` (its reply read within `ms`) while the tab is listed as calls use it (the
    /// host's [`Listing`], kept): [`Input::Surveyed`].
    ///
    /// [`Listing`]: super::listing::Listing
    Survey {
        /// The tabs.
        tab_ids: Vec<i64>,
        /// The message to each top frame.
        message: Value,
        /// How long each reply may take (ms).
        ms: u32,
    },
    /// One frame's state (`webNavigation.getFrame`): [`Input::Frame`].
    State {
        /// The tab.
        tab_id: i64,
        /// The frame.
        frame_id: i64,
    },
}

/// Outputs to the browser's tabs.
#[derive(Debug, Clone, PartialEq)]
pub enum Tabs {
    /// The open tabs: [`Input::Tabs`].
    List,
    /// The tab's page (`{url, title}`) and, when it is the visible tab of its window, its
    /// screenshot (`screenshot`: a PNG data URL, else `screenshotError`), with the browser's
    /// `userAgent` and the extension's `version`: [`Input::Snapshot`].
    Snapshot {
        /// The tab (none: the run had none).
        tab_id: Option<i64>,
    },
    /// Load `url` in the tab again, within `ms`: [`Input::Done`].
    Reload {
        /// The tab.
        tab_id: i64,
        /// The page to load.
        url: String,
        /// How long the load may take (ms).
        ms: u32,
    },
    /// Load `url` in the tab once, within `ms`: [`Input::Landed`].
    Load {
        /// The tab.
        tab_id: i64,
        /// The page to load.
        url: String,
        /// How long the load may take (ms).
        ms: u32,
    },
}

/// Outputs to agent runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Runs {
    /// Start a run (`run`'s request) and wait for its end, stopped with `stop_reason` once
    /// `within_ms` passed (when set): [`Input::Ran`].
    Start {
        /// The `run` request.
        request: Value,
        /// At most this long (ms), when set.
        within_ms: Option<u64>,
        /// Why it is stopped at `within_ms`.
        stop_reason: String,
    },
    /// A run's log (`runLog({runId})`): [`Input::Logged`].
    Log {
        /// The run.
        run_id: String,
    },
}

/// Outputs to the person's side.
#[derive(Debug, Clone, PartialEq)]
pub enum Ui {
    /// Ask the person in the extension's own UI (`pending`), never on the page, for at most
    /// the confirmation's time: [`Input::Confirmed`].
    Confirm {
        /// The id the question is filed under, as a run's.
        asked: String,
        /// Its call id.
        call_id: String,
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The whole arguments, as they will be sent.
        args: Map<String, Value>,
        /// The question.
        question: String,
    },
    /// Show the person a sign-in's authorization `url` (`chrome.identity.launchWebAuthFlow`,
    /// else, or with `via` a tab, a tab whose navigation to `redirect` is caught):
    /// [`Input::Authorized`].
    Authorize {
        /// The authorization URL.
        url: String,
        /// The redirect URI.
        redirect: String,
        /// Where the person asked to sign in.
        via: Via,
    },
    /// Push to the extension's open pages: [`Input::Pushed`].
    Push {
        /// The push's kind (`pending`, …).
        kind: String,
        /// Its body.
        body: Value,
    },
    /// Warn in the worker's console, for whoever debugs the extension: [`Input::Pushed`].
    Warn {
        /// The warning.
        message: String,
    },
    /// A sign-in's redirect URI for `path` (`chrome.identity.getRedirectURL(path)`) and
    /// `uuids` random UUIDs' worth of hex digits for its secrets: [`Input::Redirect`].
    Redirect {
        /// The redirect's path.
        path: String,
        /// How many UUIDs of random hex digits (32 each).
        uuids: u32,
    },
}

/// Which kept MCP connections: each caller keeps its own, so that a person's calls and a
/// page's never share a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// The servers called by hand.
    ByHand,
    /// The servers exposed to pages.
    Exposures,
}

/// An MCP client held by the host (`Host::with_client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientId(pub u64);

/// Outputs to the kept MCP connections.
#[derive(Debug, PartialEq)]
pub enum Mcp {
    /// The server's kept connection (opened when there is none for its settings and key, or
    /// when the kept one no longer answers a listing) and its tools as listed now:
    /// [`Input::McpTools`].
    Tools {
        /// The pool.
        pool: Pool,
        /// The server as configured.
        server: McpServerConfig,
    },
    /// The tools exposed to a page's origin, from each exposed server's kept connection:
    /// [`Input::Exposed`].
    Exposed {
        /// The page's origin, as Chrome reported its sender.
        origin: String,
    },
    /// Read the client's listening stream in the background until it ends (a task of its
    /// own: `Host::mcp_listen` on a `Listener::new(client)`, which goes on with the stream
    /// the client opened, or opens one): [`Input::Done`] at once.
    Listen {
        /// The client.
        client: ClientId,
    },
    /// Close the client (`Host::mcp_close`) in a task of its own: [`Input::Done`] at once.
    Close {
        /// The client.
        client: ClientId,
    },
    /// Send a call on the server's kept connection (the one its tools were just listed on, if
    /// any): [`Input::McpCalled`].
    Call {
        /// The pool.
        pool: Pool,
        /// The server's name.
        server: String,
        /// The call, as the gate let it through.
        permit: Box<Permit<McpCall>>,
        /// At most this long (ms), when the caller set a limit.
        within_ms: Option<u32>,
        /// Whether the connection is to be closed when the call fails.
        forget_on_error: bool,
    },
    /// The end of a use by hand: in a task of its own, wait the time `idle` asks for and
    /// close the server's connection when the host says it has been unused since
    /// (`Host::mcp_idling` on an `Idling::new(pool, idle)`): [`Input::Done`] at once.
    Idle {
        /// The pool.
        pool: Pool,
        /// The end of the use.
        idle: Idle,
    },
}

/// What the shell feeds back: the input of the output performed.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// An [`Output::Sleep`] passed.
    Slept,
    /// The key's value (`None`: not stored), or why it could not be read.
    Read(Result<Option<Value>, String>),
    /// The exposures as stored.
    Exposures(Vec<Exposure>),
    /// Every frame's answer, or why the tab's frames could not be listed; the site policies
    /// when asked for (`None` when not, or when they could not be read in time).
    Listed {
        /// The frames' answers.
        answers: Result<Vec<FrameAnswer>, String>,
        /// The site policies as read.
        sites: Option<Result<Vec<SitePolicy>, String>>,
    },
    /// The frame's reply, the channel's failure or the timeout.
    Reply(Reply),
    /// A [`Frames::Send`] performed: the tabs when asked for, and the reply.
    Sent {
        /// The tabs, for `list_tabs`.
        tabs: Option<Vec<Tab>>,
        /// The reply.
        reply: Reply,
    },
    /// The tab's frames, or why they could not be listed.
    Frames(Result<Vec<Frame>, String>),
    /// Each tab surveyed, in the order asked: its top frame's reply and its listing.
    Surveyed(Vec<(i64, Reply, Listed)>),
    /// The frame's state; `None` when the frame (or its tab) is gone.
    Frame(Option<FrameState>),
    /// The open tabs.
    Tabs(Vec<Tab>),
    /// A tab's snapshot (`null` when it could not be taken).
    Snapshot(Value),
    /// An output that only succeeds or fails was performed.
    Done(Result<(), String>),
    /// The person's answer: yes, or anything else (no, closed, no answer in time).
    Confirmed(bool),
    /// An [`Ui::Push`] (or [`Ui::Warn`]) was sent.
    Pushed,
    /// The URL the authorization redirected to, and which way it came; or why none.
    Authorized(Result<(String, Via), String>),
    /// The server's tools as listed now, or why it could not be reached.
    McpTools(Result<Vec<McpTool>, String>),
    /// The tools exposed to the origin.
    Exposed(Vec<PageTool>),
    /// A fetch's head, or why there is none.
    Fetched(Fetched),
    /// A piece of a fetch's body.
    Piece(Piece),
    /// The call's result (`None`: it gave none within its limit, or there was no kept
    /// connection), with the connection's secrets (its key, its sign-in's tokens) to redact.
    McpCalled {
        /// The result.
        result: Option<CallResult>,
        /// Every secret the connection sends.
        secrets: Vec<String>,
    },
    /// The area's keys, or why they could not be read.
    Keys(Result<Vec<String>, String>),
    /// The URL the tab's top frame landed on, or why the page did not load.
    Landed(Result<String, String>),
    /// How a run ended (typed), or why it did not run.
    Ran(Result<RunEnded, String>),
    /// A run's log (as `runLog` answers), or why it could not be read.
    Logged(Result<Value, String>),
    /// Chrome's built-in model's availability.
    Availability(String),
    /// The redirect URI (or why there is none) and the random hex digits asked for.
    Redirect {
        /// The redirect URI.
        url: Result<String, String>,
        /// The random hex digits.
        random: String,
    },
}

impl Input {
    /// What it is, for an error that says an input came where it was not asked for.
    pub fn what(&self) -> &'static str {
        match self {
            Input::Slept => "a wait",
            Input::Read(_) => "a stored value",
            Input::Exposures(_) => "the exposures",
            Input::Listed { .. } => "the frames' listings",
            Input::Reply(_) => "a frame's reply",
            Input::Sent { .. } => "a page call's reply",
            Input::Frames(_) => "the tab's frames",
            Input::Surveyed(_) => "the tabs surveyed",
            Input::Frame(_) => "a frame's state",
            Input::Tabs(_) => "the tabs",
            Input::Snapshot(_) => "a tab's snapshot",
            Input::Done(_) => "an output's end",
            Input::Confirmed(_) => "an answer of the person",
            Input::Pushed => "a push",
            Input::Authorized(_) => "an authorization",
            Input::McpTools(_) => "the server's tools",
            Input::Exposed(_) => "the exposed tools",
            Input::Fetched(_) => "a fetch's head",
            Input::Piece(_) => "a piece of a body",
            Input::McpCalled { .. } => "a call's result",
            Input::Keys(_) => "the stored keys",
            Input::Landed(_) => "a page loaded",
            Input::Ran(_) => "a run's end",
            Input::Logged(_) => "a run's log",
            Input::Availability(_) => "the built-in model's availability",
            Input::Redirect { .. } => "a redirect URI",
        }
    }
}

/// An input not asked for: what it was, or `a step asked again` for none.
pub fn unasked(input: Option<&Input>) -> &'static str {
    input.map_or("a step asked again", Input::what)
}
