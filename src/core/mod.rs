//! The sans-IO core. Nothing in here performs I/O, reads a clock, or names a browser type:
//! the shells hand it JSON values and strings and carry out what it returns.
//!
//! - [`agui`]: AG-UI events and messages, as the host emits them to its clients.
//! - [`audit`]: a page's tools reviewed against rules: findings, scores, JSON and SARIF.
//! - [`cli`]: the pure part of the native CLI's commands (arguments in, output out).
//! - [`confirm`]: the questions the host asks the person before a call that acts.
//! - [`conversation`]: the history of turns, with the tools fixed when it is created.
//! - [`crawl`]: a site's coverage: one origin's pages loaded in a tab, each one's tools listed,
//!   audited and compared with the previous crawl.
//! - [`egress`]: what leaves the worker: every secret redacted in one place, and each key
//!   sent only where its own settings name it.
//! - [`error`]: the error of a request that cannot be carried out as written.
//! - [`evals`]: eval files in the `webmcp-evals` format, and a case's calls judged.
//! - [`expose`]: an MCP server's tools offered to chosen origins' own WebMCP.
//! - [`gate`]: the one gate every tool call passes, whichever operation asks; its permit is
//!   the only value a call can be performed with.
//! - [`history`]: a conversation's history rebuilt from a run's stored events.
//! - [`http`]: an HTTP request as the core asks the shells to perform it.
//! - [`host`]: the host's state in one value and the machines it runs for every caller: a
//!   tab's listing, a page call.
//! - [`limits`]: every cap on untrusted input and every deadline, in one place.
//! - [`mcp`]: the MCP client over Streamable HTTP: sessions, tools, the request exchange
//!   machine and authorization.
//! - [`naming`]: whether a name is a tool name, and what a JSON value is called in an error.
//! - [`native`]: native function-call deltas of providers, assembled into calls.
//! - [`observe`]: what a run cost, its OpenTelemetry trace, and the bug report.
//! - [`ops`]: the host's operations: their one list, parser and sender authorization, their
//!   requests, the person's settings, pending items and the capped run list.
//! - [`page`]: page tools: what a tab offers and how a call to one of them runs.
//! - [`parse`]: the streaming parser of calls written as text in a model's output.
//! - [`provider`]: model providers: request builders, stream decoders and the retry policy.
//! - [`repair`]: a call as a model wrote it, made into a call that can run, or a clear error.
//! - [`restart`]: what survives a worker restart, and how a cut run's log is ended.
//! - [`run`]: a run (one turn of a conversation) as a machine that asks for everything and
//!   performs nothing.
//! - [`schema`]: every JSON Schema compiled within budgets (patterns counted, backtracking
//!   bounded).
//! - [`setup`]: what a run and the host's settings are set up from (a run's start, `configure`).
//! - [`storage`]: every `chrome.storage` key the host writes, in one table.
//! - [`stream`]: one model output turned into AG-UI events and the calls to run.
//! - [`text`]: characters that change what a reader sees without showing themselves.
//! - [`timeline`]: a run's events read as a timeline: steps, calls, errors, the answer.
//! - [`toolset`]: the tools a model may call in one run, their schemas compiled once.
//! - [`url`]: URLs and origins: parsing, normal origins, loopback.
//! - [`workbench`]: calling tools by hand: arguments validated at their fields, every tab's
//!   tools, why a tab has none.

#![warn(missing_docs)]

pub mod agui;
pub mod audit;
pub mod cli;
pub mod confirm;
pub mod conversation;
pub mod crawl;
pub mod egress;
pub mod error;
pub mod evals;
pub mod expose;
pub mod gate;
pub mod history;
pub mod host;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod naming;
pub mod native;
pub mod observe;
pub mod ops;
pub mod page;
pub mod parse;
pub mod provider;
pub mod repair;
pub mod restart;
pub mod run;
pub mod schema;
pub mod setup;
pub mod storage;
pub mod stream;
pub mod text;
pub mod timeline;
pub mod toolset;
pub mod url;
pub mod workbench;
