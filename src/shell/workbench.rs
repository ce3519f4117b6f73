//! The workbench's operations performed: `validateArguments`, `inventory`, `diagnose`,
//! `timeline`, and an MCP server's tools listed and called by hand (`listTools` / `callTool`
//! with `server`: opened as a run opens it, closed after). The core (`core::workbench`,
//! `core::timeline`) decides; this lists tabs and frames (every tab at once), asks the top
//! frame for its facts, reads the run log, and keeps the first definitions seen (`Seen`, in
//! `chrome.storage.session` too, so that a worker restart forgets none).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::io::random_id;
use super::{ask, chrome, frame_listings, mcp, runlog, store, tab_tools, timer, waits};
use crate::core::bridge::Target;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::McpTool;
use crate::core::page::tabs::TabTools;
use crate::core::setup::store::Area;
use crate::core::workbench::diagnose::{diagnose as decide, facts_of, listing, request};
use crate::core::workbench::inventory::{inventory as list, open_tab, tab_ids, Seen};
use crate::core::workbench::server::{self as by_hand, ServerCallRequest};
use crate::core::workbench::validate::{validate_arguments, Against, ValidateRequest};

/// Where the first definitions are kept between workers.
const SEEN_KEY: &str = "webmcpHost.seen";

thread_local! {
    /// The first definitions; `None` until read from `chrome.storage.session`.
    static SEEN: RefCell<Option<Seen>> = const { RefCell::new(None) };
}

fn with_seen<T>(f: impl FnOnce(&mut Seen) -> T) -> T {
    SEEN.with(|s| f(s.borrow_mut().get_or_insert_with(Seen::default)))
}

/// Reads the kept first definitions once per worker (the closed tabs' forgotten).
async fn loaded() {
    if SEEN.with(|s| s.borrow().is_some()) {
        return;
    }
    let stored = store::read(Area::Session, SEEN_KEY).await;
    let mut seen = Seen::from_stored(&stored.ok().flatten().unwrap_or(Value::Null));
    seen.keep_tabs(&tab_ids(&chrome::tab_list().await));
    SEEN.with(|s| {
        s.borrow_mut().get_or_insert(seen);
    });
}

async fn save() {
    let stored = with_seen(|seen| seen.to_stored());
    if let Err(e) = store::put(Area::Session, SEEN_KEY, Some(&stored)).await {
        chrome::warn(&format!("webmcp-host: keeping the tools first seen: {e}"));
    }
}

/// Every listing of a tab passes here: the first definition of each tool is kept (and
/// stored when new).
pub(crate) fn observe(tab_id: i64, tools: Rc<TabTools>) {
    spawn_local(async move {
        loaded().await;
        if with_seen(|seen| seen.observe(tab_id, &tools.tools)) {
            save().await;
        }
    });
}

fn to_value(value: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// `validateArguments(...)`.
pub(crate) async fn validate(request: ValidateRequest) -> Result<Value, String> {
    let schema = match request.against {
        Against::Schema(schema) => schema,
        Against::Tool {
            tab_id,
            name,
            frame_id,
        } => tab_tools(tab_id)
            .await?
            .resolve(&name, frame_id)?
            .input_schema
            .clone(),
    };
    to_value(validate_arguments(&schema, &request.args))
}

/// How many tabs `inventory` lists at once.
const TABS_AT_ONCE: usize = 16;

/// `inventory({query?, developer?})`: the open tabs listed [`TABS_AT_ONCE`] at a time (each
/// tab's title asked of its top frame, its frames listed, each within its own deadline), so a
/// slow tab holds up no other of its group and a window of a hundred tabs is not asked all at
/// once.
pub(crate) async fn inventory(query: Option<String>, developer: bool) -> Result<Value, String> {
    let tab_ids = tab_ids(&chrome::tab_list().await);
    let mut listed = Vec::with_capacity(tab_ids.len());
    for group in tab_ids.chunks(TABS_AT_ONCE) {
        let listings: Vec<_> = (group.iter().copied())
            .map(|tab_id| {
                timer::started(async move {
                    let facts = ask(tab_id, Target::TOP, &request(), 2_000);
                    let tools = tab_tools(tab_id).await.map(std::rc::Rc::unwrap_or_clone);
                    let facts = facts_of(&facts.await).ok();
                    (open_tab(tab_id, facts.as_ref()), tools)
                })
            })
            .collect();
        for listing in listings {
            listed.extend(listing.await);
        }
    }
    loaded().await;
    let open: Vec<i64> = listed.iter().map(|(t, _)| t.tab_id).collect();
    let (value, forgot) = with_seen(|seen| {
        let forgot = seen.keep_tabs(&open);
        (
            to_value(list(listed, seen, query.as_deref(), developer)),
            forgot,
        )
    });
    if forgot {
        save().await;
    }
    value
}

/// `diagnose({tabId})`.
pub(crate) async fn diagnose(tab_id: i64) -> Result<Value, String> {
    let listed = TabTools::from_frames(frame_listings(tab_id).await?);
    let mut shown = listed.clone();
    crate::core::site::apply_stored(store::load_sites().await, &mut shown);
    let facts = facts_of(&ask(tab_id, Target::TOP, &request(), 2_000).await);
    to_value(decide(
        facts.as_ref().map_err(String::as_str),
        &listing(&listed, &shown),
    ))
}

/// `timeline({runId})`.
pub(crate) async fn timeline(run_id: &str) -> Result<Value, String> {
    let log = runlog::run_log(run_id, 0).await?;
    to_value(crate::core::timeline::of_log(&log))
}

/// How long opening a server (connect and list) may take, unless it sets its own timeout.
const OPEN_MS: u32 = 20_000;

/// A configured server opened as a run opens it (its key, its sign-in), with its tools.
async fn open_server(name: &str) -> Result<(McpServerConfig, Open), String> {
    let servers = store::load_servers().await?;
    let server = by_hand::find_server(&servers, name)?.clone();
    let key = match &server.key_ref {
        Some(reference) => store::read_key(reference).await?,
        None => None,
    };
    let within = server.timeout_ms.unwrap_or(OPEN_MS);
    let (client, tools) = mcp::open(server.clone(), key.clone(), within)
        .await
        .map_err(|e| crate::core::provider::redact(&e, key.as_deref()))?;
    Ok((server, (client, tools, key)))
}

type Open = (mcp::Shared, Vec<McpTool>, Option<String>);

/// `listTools({server})`.
pub(crate) async fn server_tools(name: &str) -> Result<Value, String> {
    let (server, (client, tools, _)) = open_server(name).await?;
    mcp::close(&client).await;
    Ok(by_hand::tools_response(&server, &tools))
}

/// `callTool({server, name, args, timeoutMs?})`: planned by the core, confirmed by the person
/// (`pending`) when the tool acts, then sent within `timeoutMs`.
pub(crate) async fn server_call(request: ServerCallRequest) -> Result<Value, String> {
    let (server, (client, tools, key)) = open_server(&request.server).await?;
    let answer = match by_hand::plan_call(&server, &tools, &request) {
        Err(refused) => refused,
        Ok(planned) => {
            let run_id = format!("{}{}", by_hand::MANUAL_RUN_PREFIX, random_id());
            let (tool, args) = (planned.tool.clone(), request.args.clone());
            let allowed = match planned.question {
                None => true,
                Some(question) => {
                    let names = (server.name.as_str(), tool.name.as_str());
                    waits::confirm_by_hand((&run_id, "call"), names, &args, question).await
                }
            };
            let calling = client.clone();
            let call = async move { Ok(mcp::call(calling, &tool, args).await) };
            match allowed {
                false => by_hand::declined(),
                true => match timer::limit(request.timeout_ms, call).await {
                    Ok(Some(result)) => {
                        let auth = client.borrow().session.auth().cloned();
                        let secrets = crate::core::run::secrets_of(key.as_deref(), auth.as_ref());
                        by_hand::call_answer(&planned.tool, result, &secrets)
                    }
                    _ => by_hand::timed_out(&request),
                },
            }
        }
    };
    mcp::close(&client).await;
    Ok(answer)
}
