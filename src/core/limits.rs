//! Every cap on untrusted input, and every deadline of what the host waits for, in one place,
//! grouped by area. Every cap is checked before the data it guards is parsed or passed on;
//! exceeding one is an error that names the cap (the name in its doc comment, e.g.
//! `max_answer_bytes`). Every deadline is a timer the core asks for; the shells only report
//! that it ran out. The modules that apply a cap re-export it under the name they use; a test
//! (`tests/one_place.rs`) fails on a cap or deadline defined anywhere else.

#![warn(missing_docs)]

// --- Pages --------------------------------------------------------------------------------------

/// Caps for what a page (through its content script) may hand the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one message from a content script, as JSON text.
    pub max_message_bytes: usize,
    /// Tools one frame may offer.
    pub max_tools_per_frame: usize,
    /// Bytes of a tool name.
    pub max_name_bytes: usize,
    /// Bytes of a tool description.
    pub max_description_bytes: usize,
    /// Bytes of a tool's input schema, as JSON text.
    pub max_schema_bytes: usize,
    /// Nesting depth of a tool's input schema.
    pub max_schema_depth: usize,
    /// Bytes of a tool result.
    pub max_result_bytes: usize,
}

impl Limits {
    /// The caps the host applies unless told otherwise.
    pub const DEFAULT: Limits = Limits {
        max_message_bytes: 8 * 1024 * 1024,
        max_tools_per_frame: 256,
        max_name_bytes: 128,
        max_description_bytes: 16 * 1024,
        max_schema_bytes: 64 * 1024,
        max_schema_depth: 32,
        max_result_bytes: 4 * 1024 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Tools one tab may offer, all its frames together (`max_tools_per_tab`): the frames are read
/// top frame first, and the tools past the cap are left out, named in the listing's problems.
pub const MAX_TOOLS_PER_TAB: usize = 512;

/// Tools one model request may carry, of every source together (`max_tools_per_request`):
/// past it the rest are left out, and the run says how many and which sources.
pub const MAX_TOOLS_PER_REQUEST: usize = 512;

// --- Schemas (a page's, a server's, a model's, a person's) -------------------------------------

/// Regular expressions (`pattern`, `patternProperties`) one schema may have; a schema with
/// more is not used (`max_schema_patterns`): its arguments are only checked to be an object.
pub const MAX_SCHEMA_PATTERNS: usize = 64;
/// Backtracking steps one match of a schema's pattern may take (lookaround and backreferences
/// backtrack; other patterns run in linear time); past it the value is invalid with an error
/// that says so. `fancy-regex`'s own default is 1,000,000, which 200 patterns turned into
/// seconds of a frozen worker.
pub const PATTERN_BACKTRACK_LIMIT: usize = 10_000;
/// Bytes one compiled pattern (and its lazy DFA's cache) may take.
pub const PATTERN_SIZE_LIMIT: usize = 1024 * 1024;

// --- Model providers ----------------------------------------------------------------------------

/// The longest wait for a model's first byte (status and headers).
pub const FIRST_BYTE_MS: u32 = 60_000;
/// The longest a model's stream may stay silent once it started (unless the model says).
pub const STREAM_IDLE_MS: u32 = 120_000;
/// The most characters of a model's error answer read to say what went wrong.
pub const ERROR_BODY_CHARS: usize = 4_000;
/// How many times a failed model call is retried before the run gives up.
pub const MAX_RETRIES: u32 = 2;
/// The longest wait before a retry the host accepts (a longer `retry-after` ends the run).
pub const MAX_RETRY_WAIT_MS: u64 = 20_000;
/// Bytes of one SSE line and of one event's data, for model streams and MCP answers alike
/// (`max_sse_event_bytes`).
pub const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;

// --- Runs ---------------------------------------------------------------------------------------

/// `chrome.storage.session`'s quota is 10 MiB for everything the worker keeps there. The run
/// logs and the conversations have byte budgets well under it, so that keys, sign-ins,
/// intents and the inventory's first-seen definitions (2 MiB) always have room (2 MiB at
/// least are kept for them).
///
/// Bytes of one event as a run log stores it (`max_stored_event_bytes`): a longer event's
/// long strings (a large tool result) are stored cut, with a marker saying how much.
pub const MAX_STORED_EVENT_BYTES: usize = 64 * 1024;
/// Bytes of one run's stored log (`max_run_log_bytes`): events past it are counted, not kept.
pub const MAX_RUN_LOG_BYTES: usize = 1024 * 1024;
/// Bytes of all kept run logs together (`max_run_logs_bytes`): the oldest runs are forgotten
/// first (the newest is always kept).
pub const MAX_RUN_LOGS_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of all kept conversations together (`max_conversations_bytes`): the least recently
/// updated are forgotten first (the newest is always kept).
pub const MAX_CONVERSATIONS_BYTES: usize = 2 * 1024 * 1024;

/// The tool calls a turn may make unless the request says.
pub const DEFAULT_MAX_STEPS: usize = 10;
/// The most tool calls a caller may allow in one turn (a request asking for more is refused).
pub const MAX_MAX_STEPS: usize = 100;
/// Bytes of model output (text, call names and arguments) one step may produce: a model that
/// writes on and on, or a hostile endpoint, ends the run with an error naming the cap
/// (`max_model_output_bytes`).
pub const MAX_MODEL_OUTPUT_BYTES: usize = 4 * 1024 * 1024;
/// How many of the person's runs the worker keeps (oldest dropped first).
pub const MAX_STORED_RUNS: usize = 20;
/// How many runs of evaluations the worker keeps besides (oldest dropped first): a suite's
/// runs never push the person's out.
pub const MAX_STORED_EVAL_RUNS: usize = 40;
/// Characters kept of each text of a run's eval tag (suite id, case name, model).
pub const EVAL_TAG_CHARS: usize = 200;
/// How many events of one run the worker keeps; later events are counted, not kept.
pub const MAX_STORED_EVENTS: usize = 5_000;

// --- Page tools ---------------------------------------------------------------------------------

/// The longest a page tool may run inside a run.
pub const PAGE_TOOL_MS: u32 = 30_000;
/// Default time a page tool called directly (`callTool`) may take before its call ends with a
/// timeout error.
pub const DEFAULT_CALL_TIMEOUT_MS: u32 = 30_000;
/// The longest a direct caller (`callTool`) may let a page tool run.
pub const MAX_CALL_TIMEOUT_MS: u32 = 10 * 60 * 1000;
/// How long a failed page call waits, at most, for the browser to report a new document in
/// its frame (the message channel closes a moment before).
pub const SETTLE_MS: u32 = 1_500;
/// The pause between two looks at the frame while settling.
pub const SETTLE_POLL_MS: u32 = 50;
/// How long, at most, a tab's page may take to be ready after a load the host caused (and
/// before a simulation's agent turn): its top frame answering from a loaded document, its tools
/// the same in two listings in a row (`core::page::ready`), ms.
pub const PAGE_READY_MS: u32 = 10_000;
/// The pause between two listings while waiting for the page to be ready, ms.
pub const PAGE_READY_POLL_MS: u32 = 100;
/// How long a navigation's destination may take to load before the call's answer goes
/// without what it offers.
pub const DESTINATION_MS: u32 = 5_000;
/// The pause between two looks for the destination.
pub const DESTINATION_POLL_MS: u32 = 100;
/// How long one frame may take to list its tools.
pub const FRAME_LIST_MS: u32 = 5_000;
/// How long a frame may take to answer the cancel of a call that reached its deadline (the
/// answer only adds to the call's error why it waited).
pub const CANCEL_REPLY_MS: u32 = 500;
/// How long a document a call loaded (a navigation's destination, a frame a form targeted)
/// may take to give its result: its content script waits for the document's `load` first.
pub const PAGE_RESULT_MS: u32 = 3_000;
/// The most JSON-LD text a call's answer carries from the document it loaded.
pub const MAX_PAGE_RESULT_BYTES: usize = 64 * 1024;
/// The most characters of a loaded document's main text a call's answer carries.
pub const PAGE_TEXT_CHARS: usize = 2_000;
/// Bytes of a declarative tool's form `action` kept in a listing (the content script cuts it
/// there too).
pub const MAX_FORM_ACTION_BYTES: usize = 2_048;
/// Bytes of a declarative tool's form `target` kept in a listing.
pub const MAX_FORM_TARGET_BYTES: usize = 64;

// --- The person ---------------------------------------------------------------------------------

/// How long the person has to answer a confirmation.
pub const CONFIRM_MS: u32 = 5 * 60 * 1000;
/// How long a page's calls of an exposed tool that asks are refused after the person declined
/// one (`core::host::server_call`): a page cannot put the same question again at once.
pub const EXPOSED_QUIET_MS: u32 = 30_000;
/// The lines Chrome's `confirm()` dialog keeps (it drops the rest, marking it with "...").
pub const CONFIRM_ROWS: usize = 24;
/// A `confirm()` line this long or longer is rewrapped by Chrome (and counts as more lines).
pub const CONFIRM_COLUMNS: usize = 80;

// --- Exposure of MCP tools to pages -------------------------------------------------------------

/// Origins one exposure may name (later ones are dropped).
pub const MAX_ORIGINS: usize = 256;
/// Exposures in all (later ones are dropped).
pub const MAX_EXPOSURES: usize = 256;

// --- MCP servers --------------------------------------------------------------------------------

/// Default time for one MCP request.
pub const MCP_TIMEOUT_MS: u32 = 30_000;
/// The longest an MCP server may take to connect and list its tools at a run's start.
pub const MCP_SOURCE_MS: u32 = 20_000;
/// Pages of `tools/list` read at most (a server that never stops paging).
pub const MAX_MCP_PAGES: usize = 1000;
/// Tools one MCP server may list (`max_mcp_tools`).
pub const MAX_MCP_TOOLS: usize = 20_000;
/// Bytes of one JSON answer of an MCP server (`max_answer_bytes`; an SSE stream is capped per
/// event by [`MAX_SSE_EVENT_BYTES`]).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// How many times a broken SSE answer of an MCP server is resumed before giving up.
pub const MAX_RESUMES: u32 = 5;
/// How long the CLI's session end waits for notifications still being posted (a timed-out
/// call's `notifications/cancelled`) before its `DELETE`.
pub const NOTIFY_WAIT_MS: u64 = 3_000;
/// The wait before resuming an MCP stream when the server named none (`retry`), and the
/// longest wait accepted when it did.
pub const MCP_RESUME_WAIT_MS: (u64, u64) = (1000, 30_000);
/// Rounds of `input_required` (MCP 2026-07-28) one request may take before it fails: each
/// round answers the server's input requests and sends the request again.
pub const MAX_MCP_INPUT_ROUNDS: u32 = 8;
/// Input requests one `input_required` result may carry.
pub const MAX_MCP_INPUT_REQUESTS: usize = 16;
/// Bytes of the `requestState` an MCP server may ask the client to echo.
pub const MAX_MCP_REQUEST_STATE_BYTES: usize = 64 * 1024;
/// How deep a tool's input schema is searched for `x-mcp-header` annotations.
pub const MAX_MCP_HEADER_SCHEMA_DEPTH: usize = 64;
/// MCP servers (by URL) the worker remembers as speaking only the revisions up to 2025-11-25.
pub const MAX_KEPT_ERAS: usize = 64;
/// The longest a listing's `ttlMs` (MCP 2026-07-28) is honoured: one hour.
pub const MAX_MCP_TTL_MS: u64 = 60 * 60 * 1000;
/// How long progress notifications can keep one MCP request going, from when it was sent.
pub const MAX_EXTENDED_MS: f64 = 10.0 * 60.0 * 1000.0;

// --- MCP authorization --------------------------------------------------------------------------

/// Authorizations at most for one request: the first one, then two step-ups (403
/// `insufficient_scope`); a server that still refuses is an error, not a loop.
pub const MAX_AUTHORIZATIONS: u32 = 3;
/// Bytes of a metadata, registration or token answer; larger ones are refused.
pub const MAX_AUTH_BODY_BYTES: usize = 256 * 1024;
/// A token this close to its expiry (in milliseconds) is refreshed before use.
pub const REFRESH_MARGIN_MS: f64 = 60_000.0;

// --- Tools offered to a model -------------------------------------------------------------------

/// Bytes of the name of a tool offered to a model, whatever its source (toolsets, MCP
/// servers, exposures, page tools as a run names them); a longer name leaves its tool out.
pub const MAX_TOOL_NAME_BYTES: usize = 128;

// --- Model text ---------------------------------------------------------------------------------

/// The longest header a `tool_call` fence may carry after its name (`s`, `json`, spaces);
/// a longer one is prose, not a fence.
pub const MAX_FENCE_HEADER: usize = 16;

// --- Page tools, applied in the module each names ------------------------------------------------

/// The ports to frames' page bridges the worker keeps open at most (one per frame document
/// asked lately; the oldest idle ones close first); `shell/frames.js`.
pub const FRAME_PORTS_MAX: u32 = 256;

/// How long a listing is kept (ms).
/// (Used as `KEPT_MS` in `core/page/kept.rs`.)
pub const KEPT_LISTING_MS: f64 = 30_000.0;

/// The most requests [`crate::core::page::bridge::parse_watched`] keeps.
/// (Used as `MAX_WATCHED` in `core/page/bridge.rs`.)
pub const MAX_WATCHED_REQUESTS: usize = 100;

// --- Runs, applied in the module each names ------------------------------------------------------

/// How often a run keeps the service worker awake (an extension API call resets Chrome's 30 s
/// idle timer), ms; `shell/io.js` `keepAlive`.
pub const KEEP_ALIVE_MS: u32 = 20_000;
/// How long the person's repair hook (`webmcpHost.repairHook`) may take before its answer is
/// ignored, ms; `shell/io.js` `askRepairHook`.
pub const REPAIR_HOOK_MS: u32 = 5_000;

/// How long the stored record of a running run may lag behind (ms).
/// (Used as `SAVE_EVERY_MS` in `core/ops/runlog.rs`.)
pub const RUN_LOG_SAVE_EVERY_MS: u32 = 250;

/// The most conversations kept; the least recently updated goes first.
/// (Used as `MAX_CONVERSATIONS` in `core/ops/threads.rs`.)
pub const MAX_CONVERSATIONS: usize = 20;

/// The most bytes of a conversation's stored messages (as JSON).
/// (Used as `MAX_CONVERSATION_BYTES` in `core/ops/threads.rs`.)
pub const MAX_CONVERSATION_BYTES: usize = 1_000_000;

/// The longest `delay` a layer may declare (ms).
/// (Used as `MAX_DELAY_MS` in `core/gate/layers.rs`.)
pub const MAX_DELAY_MS: u32 = 60_000;

// --- Model providers, applied in the module each names -------------------------------------------

/// The `max_tokens` an Anthropic request asks for when the model's settings give none.
/// (Used as `DEFAULT_MAX_TOKENS` in `core/provider/anthropic.rs`.)
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

// --- MCP servers, applied in the module each names -----------------------------------------------

/// How long a server called by hand stays open unused, ms; `shell/workbench.rs`.
pub const BY_HAND_IDLE_MS: u32 = 5 * 60_000;

/// How long opening a server (connect and list) may take, unless it sets its own timeout;
/// `core/host/mcp/pools.rs`.
pub const MCP_OPEN_MS: u32 = 20_000;

/// How long a session's end (its `DELETE`) may take before the connection is dropped all the
/// same, ms; `core/host/mcp/session.rs`.
pub const MCP_CLOSE_MS: u32 = 3_000;

/// How long a server has to answer the head of the stream it sends notifications on (its
/// `GET`), ms; past it the host listens no more; `core/host/mcp/listen.rs`.
pub const MCP_LISTEN_MS: u32 = 5_000;

/// How often a call waiting on the listing another call makes after `tools/list_changed`
/// looks whether it is done, ms; `core/host/mcp`.
pub const MCP_RELIST_POLL_MS: u32 = 20;

/// How long a connection check may take (ms), unless the server sets its own timeout.
/// (Used as `CHECK_MS` in `core/ops/checks.rs`.)
pub const SERVER_CHECK_MS: u32 = 15_000;

/// How many of a checked server's tools its state names.
/// (Used as `MAX_NAMED_TOOLS` in `core/ops/checks.rs`.)
pub const MAX_CHECK_NAMED_TOOLS: usize = 200;

/// How many characters of a named tool's description its state keeps.
/// (Used as `MAX_DESCRIPTION_CHARS` in `core/ops/checks.rs`.)
pub const MAX_CHECK_DESCRIPTION_CHARS: usize = 300;

/// The longest wait (ms) the worker's timers are given when nothing waits on time.
/// (Used as `NO_DEADLINE_MS` in `core/mcp/client.rs`.)
pub const NO_DEADLINE_MS: u32 = u32::MAX / 2;

// --- MCP authorization, applied in the module each names -----------------------------------------

/// Time for each request of a sign-in (and the probe), in ms.
/// (Used as `REQUEST_MS` in `core/mcp/auth/signin.rs`.)
pub const SIGN_IN_REQUEST_MS: u32 = 15_000;

/// The person's time to sign in, in ms.
/// (Used as `SIGN_IN_MS` in `core/mcp/auth/signin.rs`.)
pub const SIGN_IN_MS: u32 = 5 * 60 * 1000;

/// A sign-in window that fails sooner than this (ms) could not be shown: a tab is used.
/// (Used as `WINDOW_FAILS_WITHIN_MS` in `core/mcp/auth/signin.rs`.)
pub const WINDOW_FAILS_WITHIN_MS: f64 = 1500.0;

// --- Exposure, applied in the module each names --------------------------------------------------

/// How long a tab has to take the news of a change; `core/host/mcp/exposed.rs`.
pub const EXPOSE_NOTIFY_MS: u32 = 2_000;

// --- Workbench, applied in the module each names -------------------------------------------------

/// At most this many tools' first definitions are kept per tab (older pages' are dropped).
/// (Used as `MAX_SEEN_PER_TAB` in `core/workbench/inventory.rs`.)
pub const MAX_SEEN_PER_TAB: usize = 1_000;

/// At most this many tabs' first definitions are kept (the least recently listed dropped).
/// (Used as `MAX_SEEN_TABS` in `core/workbench/inventory.rs`.)
pub const MAX_SEEN_TABS: usize = 64;

/// At most this many bytes of definitions are stored (the most recently listed tabs first;
/// what does not fit is kept only while the worker lives).
/// (Used as `MAX_SEEN_STORED_BYTES` in `core/workbench/inventory.rs`.)
pub const MAX_SEEN_STORED_BYTES: usize = 2 * 1024 * 1024;

/// At most this many errors are reported (a form shows them all at once).
/// (Used as `MAX_ERRORS` in `core/workbench/validate.rs`.)
pub const MAX_VALIDATION_ERRORS: usize = 50;

/// How many tabs `inventory` lists at once (a slow tab holds up no other of its group, and a
/// window of a hundred tabs is not asked all at once); `shell/workbench.rs`.
pub const INVENTORY_TABS_AT_ONCE: usize = 16;

/// How long a tab's top frame has to tell its facts (`inventory`, `diagnose`), ms;
/// `shell/workbench.rs`.
pub const TAB_FACTS_MS: u32 = 2_000;

// --- Audit, applied in the module each names -----------------------------------------------------

/// How long a probe call may take (ms).
/// (Used as `PROBE_MS` in `core/audit/probe.rs`.)
pub const PROBE_MS: u32 = 5_000;

/// How long a frame has to start or stop watching its network requests around a probe
/// (`watchNetwork`), ms; `shell/mod.rs`.
pub const PROBE_WATCH_MS: u32 = 2_000;

/// A result over this many bytes is `probe-oversized`.
/// (Used as `OVERSIZED_BYTES` in `core/audit/probe.rs`.)
pub const PROBE_OVERSIZED_BYTES: usize = 100_000;

// --- DOM assertions (queryDom) -------------------------------------------------------------------

/// The most queries one `queryDom` request carries.
pub const MAX_DOM_QUERIES: usize = 64;
/// Bytes of one `queryDom` selector.
pub const MAX_SELECTOR_BYTES: usize = 1_000;
/// Characters of an element's text or attribute kept (the content script cuts them there too).
pub const DOM_TEXT_CHARS: usize = 2_000;
/// How long the frame may take to answer `queryDom`, ms.
pub const DOM_QUERY_MS: u32 = 3_000;

// --- Crawls (`core/crawl.rs`, `core/host/crawling.rs`) -------------------------------------------

/// The pages a crawl loads when it names no `limit`.
pub const DEFAULT_CRAWL_PAGES: usize = 20;
/// The most pages one crawl loads (`limit`).
pub const MAX_CRAWL_PAGES: usize = 100;
/// The most URLs a crawl request or a sitemap gives (those over `limit` are skipped).
pub const MAX_CRAWL_URLS: usize = 1_000;
/// Bytes of a sitemap read (the content script cuts it there too).
pub const MAX_SITEMAP_BYTES: usize = 1024 * 1024;
/// The wait before a page whose tools were not there yet is listed again, ms.
pub const CRAWL_SETTLE_MS: u32 = 1_000;
/// How long a crawled page may take to load, ms.
pub const CRAWL_LOAD_MS: u32 = 30_000;
/// How long the page's content script may take to read the sitemap, ms.
pub const SITEMAP_MS: u32 = 10_000;
/// A crawl's whole time, ms: past it, the pages not loaded yet are skipped.
pub const MAX_CRAWL_MS: u32 = 15 * 60 * 1000;
/// Bytes of one URL a crawl loads or keeps.
pub const MAX_CRAWL_URL_BYTES: usize = 2_048;
/// Bytes of one origin's kept crawl, its whole stored item as Chrome counts it (key, pages,
/// URLs, tool names, fingerprints, times; `max_crawl_kept_bytes`): this crawl's pages first,
/// then the pages kept before, most recent first; what does not fit is not kept, and the
/// crawl's answer says how many of its pages were left out (`keptNote`).
pub const MAX_CRAWL_KEPT_BYTES: usize = 512 * 1024;
/// Origins whose crawls are kept: past it, the least recently crawled is forgotten.
pub const MAX_CRAWLED_ORIGINS: usize = 50;
/// Bytes of every kept crawl together, the index of the origins included, as Chrome counts
/// them (`max_crawls_kept_bytes`): past it, the least recently crawled origins are forgotten
/// until the rest fit (the newest crawl always fits: it is under
/// [`MAX_CRAWL_KEPT_BYTES`]). Crawls are all that a site can grow in `chrome.storage.local`,
/// so the person's settings always keep [`LOCAL_SETTINGS_RESERVE_BYTES`].
pub const MAX_CRAWLS_KEPT_BYTES: usize = 2 * 1024 * 1024;
/// Bytes of each `chrome.storage` area the extension may fill (`QUOTA_BYTES`, the same for
/// `local` and `session`): a write past it fails, and the error names what fills the area.
pub const STORAGE_QUOTA_BYTES: usize = 10 * 1024 * 1024;
/// Bytes of `chrome.storage.local` that no site can take: what the kept crawls leave of the
/// quota (8 MiB), for the person's settings (models, servers, site policies, layers, prices,
/// collectors, exposures) and remembered sign-ins.
pub const LOCAL_SETTINGS_RESERVE_BYTES: usize = STORAGE_QUOTA_BYTES - MAX_CRAWLS_KEPT_BYTES;

// What sites and runs grow leaves its reserve, checked as the crate builds. Local: the kept
// crawls (the newest always fits among them) leave the settings 8 MiB. Session: run logs,
// conversations and the inventory's first definitions leave 2 MiB for keys, sign-ins and
// intents.
const _: () = assert!(2 * MAX_CRAWL_KEPT_BYTES <= MAX_CRAWLS_KEPT_BYTES);
const _: () = assert!(LOCAL_SETTINGS_RESERVE_BYTES >= 8 * 1024 * 1024);
const _: () = assert!(
    STORAGE_QUOTA_BYTES - (MAX_RUN_LOGS_BYTES + MAX_CONVERSATIONS_BYTES + MAX_SEEN_STORED_BYTES)
        >= 2 * 1024 * 1024
);

// --- Evals, applied in the module each names -----------------------------------------------------

/// The most results a Markdown summary of an evaluation lists (failures, passes with a warning).
pub const MAX_SUMMARY_RESULTS: usize = 50;
/// Bytes of a Markdown summary: under what a pull-request comment holds (65,536 characters).
pub const MAX_SUMMARY_BYTES: usize = 60_000;

/// How long a page may take to load again (`reload`), ms: evaluations and simulations
/// (`core/host/suite/evaluate.rs`), and the audit's probes (`core/host/probe.rs`).
pub const EVAL_RELOAD_MS: u32 = 30_000;

/// The longest wait for an expected tool to appear, ms.
/// (Used as `TOOL_WAIT_MS` in `core/evals/wait.rs`.)
pub const EVAL_TOOL_WAIT_MS: u32 = 5_000;

/// The pause between two listings while waiting, ms.
/// (Used as `POLL_MS` in `core/evals/wait.rs`.)
pub const EVAL_POLL_MS: u32 = 100;

/// The most nodes an `unordered` group may hold (its orders are searched).
/// (Used as `MAX_UNORDERED` in `core/evals/mod.rs`.)
pub const MAX_UNORDERED: usize = 15;

/// The most runs of each case with each model.
/// (Used as `MAX_RUNS` in `core/evals/request.rs`.)
pub const MAX_EVAL_RUNS: u32 = 20;

/// The most models of one evaluation.
/// (Used as `MAX_MODELS` in `core/evals/request.rs`.)
pub const MAX_EVAL_MODELS: usize = 10;

/// The most results (cases × models × runs) of one evaluation.
/// (Used as `MAX_RESULTS` in `core/evals/request.rs`.)
pub const MAX_EVAL_RESULTS: usize = 2_000;

// --- Simulations (`evaluate({mode: "simulate"})`), in `core/evals/simulate/` -----------------------

/// The most turns a simulation case may ask for (`maxTurns`).
pub const MAX_SIM_TURNS: u32 = 30;
/// A conversation's wall-clock budget when the case states none (`maxDurationMs`), ms.
pub const SIM_DURATION_MS: u64 = 300_000;
/// The longest budget a case may state (`maxDurationMs`), ms.
pub const MAX_SIM_DURATION_MS: u64 = 1_800_000;
/// The most setup calls of one case.
pub const MAX_SIM_SETUP: usize = 50;
/// The agent's tool calls within one turn when the request names no `maxSteps`.
pub const SIM_AGENT_STEPS: usize = 6;
/// Characters of one value (a tool result, an argument list, a message) in the judge's
/// transcript; longer ones are cut and say so.
pub const SIM_JUDGE_VALUE_CHARS: usize = 2_000;
/// Bytes of the judge's whole transcript: past it, the earliest turns' values are cut first.
pub const MAX_SIM_TRANSCRIPT_BYTES: usize = 200_000;
/// Evidence items of a verdict kept, and characters of each.
pub const MAX_SIM_EVIDENCE: usize = 20;
/// Characters of a verdict's evidence item or reasoning kept.
pub const SIM_VERDICT_CHARS: usize = 4_000;

// --- Observability, applied in the module each names ---------------------------------------------

/// How long one attempt may take (ms) before it is abandoned.
/// (Used as `EXPORT_TIMEOUT_MS` in `core/observe/collector.rs`.)
pub const EXPORT_TIMEOUT_MS: u32 = 5_000;

/// The length of `value` written as compact JSON, counted without writing it out (a value
/// that cannot be written counts as `usize::MAX`, over every cap).
pub fn json_size(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// The longest start of `text` of at most `bytes` bytes that ends between two characters: a
/// text cut at a byte cap.
pub fn cut_to(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Depth of a JSON value: a scalar is 0, `[]` and `{}` are 1, `[[1]]` is 2.
pub fn json_depth(value: &serde_json::Value) -> usize {
    // Iterative, so a hostile value cannot exhaust the stack here.
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            serde_json::Value::Object(map) => {
                deepest = deepest.max(depth + 1);
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// At most this many origin-trial tokens of a page are read by "Why no tools?".
/// (Used as `MAX_TOKENS` in `core/workbench/trial.rs`.)
pub const MAX_TRIAL_TOKENS: usize = 20;

/// An origin-trial token longer than this (characters) is not read.
pub const MAX_TRIAL_TOKEN_CHARS: usize = 4_096;

/// A model's reply that may be one JSON call without the host's markers is held (not streamed)
/// while it is at most this long; past it, it is text (`core::stream::bare`).
pub const MAX_BARE_CALL_BYTES: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_text_is_cut_at_its_cap_between_two_characters() {
        assert_eq!(cut_to("abc", 10), "abc");
        assert_eq!(cut_to("abc", 2), "ab");
        // "é" is 2 bytes: a cap inside it keeps the text before it.
        assert_eq!(cut_to("aé", 2), "a");
        assert_eq!(cut_to("aé", 3), "aé");
        assert_eq!(cut_to("é", 0), "");
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(json_depth(&json!(1)), 0);
        assert_eq!(json_depth(&json!({})), 1);
        assert_eq!(json_depth(&json!({"a": [1, {"b": []}]})), 4);
    }
}
