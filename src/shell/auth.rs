//! MCP authorization in the worker: `signIn`, `signOut`, `authState`, and the tokens the
//! worker's MCP client ([`super::mcp`]) sends.
//!
//! A sign-in runs the core's [`Flow`]: its requests with fetch, its authorization step with
//! `chrome.identity.launchWebAuthFlow` (redirect URI `chrome.identity.getRedirectURL("mcp")`).
//! Where that cannot show its window (it fails at once, as in a headless browser), the
//! authorization URL opens in a tab instead and the redirect to the same URI is caught from
//! `chrome.tabs.onUpdated` / `chrome.webNavigation.onErrorOccurred` (the tab is closed then).
//! The record (client, tokens) is kept per server name in `chrome.storage.session` (trusted
//! contexts only: never content scripts), or with `remember: true` in `chrome.storage.local`
//! so that it outlives the browser session. No token is ever returned by an operation, put in
//! an event, a log or an error text.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::{self, describe};
use super::io::{abort_fetch, call_method, now_ms, start_fetch, storage_get, storage_set};
use super::store::load_servers;
use super::timer;
use crate::core::mcp::auth::{
    AuthRecord, BearerChallenge, ClientCredentials, Flow, FlowConfig, FlowSecrets, Step,
    TokenState, MAX_AUTH_BODY_BYTES,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::Session;
use crate::core::provider::HttpRequest;

/// Session storage: `{serverName: AuthRecord}`.
const SESSION_KEY: &str = "webmcpHostAuth";
/// Local storage, for servers signed in with `remember: true`.
const LOCAL_KEY: &str = "webmcpHostAuthKept";
/// Each request of a sign-in.
const REQUEST_MS: u32 = 15_000;
/// The person's time to sign in.
const SIGN_IN_MS: u32 = 5 * 60 * 1000;

thread_local! {
    /// The last step-up challenge (403 insufficient_scope) per server, for the next sign-in.
    static CHALLENGES: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

fn js_err(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}

async fn load(area: &str) -> Map<String, Value> {
    let key = if area == "local" {
        LOCAL_KEY
    } else {
        SESSION_KEY
    };
    match storage_get(area, key).await {
        Ok(value) if value.is_object() => match convert::to_json(&value) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

async fn save(area: &str, map: &Map<String, Value>) -> Result<(), String> {
    let key = if area == "local" {
        LOCAL_KEY
    } else {
        SESSION_KEY
    };
    storage_set(area, key, convert::from_json(&Value::Object(map.clone())))
        .await
        .map(|_| ())
        .map_err(|e| describe(&e))
}

/// The server's record and where it is kept, if it is for the server's current URL.
async fn find(config: &McpServerConfig) -> Option<(AuthRecord, &'static str)> {
    for area in ["session", "local"] {
        if let Some(record) = load(area)
            .await
            .get(&config.name)
            .and_then(|v| serde_json::from_value::<AuthRecord>(v.clone()).ok())
            .filter(|r| r.server_url == config.url)
        {
            return Some((record, area));
        }
    }
    None
}

async fn store(name: &str, record: &AuthRecord, area: &str) -> Result<(), String> {
    let other = if area == "local" { "session" } else { "local" };
    let mut elsewhere = load(other).await;
    if elsewhere.remove(name).is_some() {
        save(other, &elsewhere).await?;
    }
    let mut map = load(area).await;
    map.insert(
        name.to_owned(),
        serde_json::to_value(record).map_err(|e| e.to_string())?,
    );
    save(area, &map).await
}

async fn forget(name: &str) -> Result<bool, String> {
    let mut found = false;
    for area in ["session", "local"] {
        let mut map = load(area).await;
        if map.remove(name).is_some() {
            found = true;
            save(area, &map).await?;
        }
    }
    Ok(found)
}

/// The record to use for a connection to `config`: refreshed first when due; `None` when
/// there is none (or it expired and cannot be refreshed).
pub(crate) async fn record_for(config: &McpServerConfig) -> Option<AuthRecord> {
    let (record, area) = find(config).await?;
    match record.token_state(now_ms()) {
        TokenState::Fresh => Some(record),
        TokenState::Refresh => refresh(config, record, area).await,
        TokenState::Expired => None,
    }
}

/// After a 401 with a record: a refresh, when the record can be refreshed.
pub(crate) async fn refresh_after_refusal(
    config: &McpServerConfig,
    record: &AuthRecord,
) -> Option<AuthRecord> {
    record.tokens.refresh_token.as_ref()?;
    let area = find(config)
        .await
        .map(|(_, area)| area)
        .unwrap_or("session");
    refresh(config, record.clone(), area).await
}

async fn refresh(
    config: &McpServerConfig,
    mut record: AuthRecord,
    area: &str,
) -> Option<AuthRecord> {
    let request = record.refresh_request()?;
    let (status, body) = http(&request).await;
    match record.refreshed(status, &body, now_ms()) {
        Ok(()) => {
            let _ = store(&config.name, &record, area).await;
            Some(record)
        }
        Err(_) => None,
    }
}

/// A 403 `insufficient_scope` seen on a server: the next sign-in asks for that scope.
pub(crate) fn note_challenge(server: &str, www_authenticate: Option<&str>) {
    if let Some(header) = www_authenticate {
        CHALLENGES.with(|c| c.borrow_mut().insert(server.to_owned(), header.to_owned()));
    }
}

/// One request of a sign-in: status (0 when there was no answer) and body.
async fn http(request: &HttpRequest) -> (u16, String) {
    let headers = convert::headers(&request.headers);
    let sent = request.clone();
    let start = future_to_promise(async move {
        start_fetch(&sent.url, &sent.method, headers.into(), &sent.body).await
    });
    let handle = match timer::within(start, REQUEST_MS).await {
        Ok(Some(handle)) => handle,
        Ok(None) => return (0, "no answer in time".into()),
        Err(error) => return (0, error),
    };
    let status = Reflect::get(&handle, &"status".into())
        .ok()
        .and_then(|s| s.as_f64())
        .unwrap_or(0.0) as u16;
    let text = match call_method(&handle, "text") {
        Ok(promise) => match timer::within(Promise::from(promise), REQUEST_MS).await {
            Ok(Some(text)) => text.as_string().unwrap_or_default(),
            _ => {
                abort_fetch(&handle);
                String::new()
            }
        },
        Err(_) => String::new(),
    };
    let mut text = text;
    if text.len() > MAX_AUTH_BODY_BYTES {
        text.truncate(MAX_AUTH_BODY_BYTES + 1);
    }
    (status, text)
}

fn chrome_api(name: &str) -> Result<JsValue, String> {
    let chrome = Reflect::get(&js_sys::global(), &"chrome".into()).map_err(|e| describe(&e))?;
    Reflect::get(&chrome, &name.into())
        .ok()
        .filter(|v| v.is_object())
        .ok_or_else(|| format!("chrome.{name} is not available"))
}

fn redirect_uri() -> Result<String, String> {
    let identity = chrome_api("identity")?;
    let get = Reflect::get(&identity, &"getRedirectURL".into())
        .map_err(|e| describe(&e))?
        .dyn_into::<Function>()
        .map_err(|_| "chrome.identity.getRedirectURL is missing".to_owned())?;
    get.call1(&identity, &"mcp".into())
        .map_err(|e| describe(&e))?
        .as_string()
        .ok_or_else(|| "no redirect URL".to_owned())
}

/// Random text from `crypto.randomUUID` (hex digits only).
fn random_hex(uuids: usize) -> String {
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into()).unwrap_or(JsValue::NULL);
    let mut out = String::new();
    for _ in 0..uuids {
        if let Ok(uuid) = call_method(&crypto, "randomUUID") {
            out.push_str(&uuid.as_string().unwrap_or_default().replace('-', ""));
        }
    }
    out
}

/// The authorization step: `launchWebAuthFlow`, else a tab. Resolves to the redirect URL and
/// which way it came (`launchWebAuthFlow` or `tab`).
async fn authorize(
    url: &str,
    redirect: &str,
    in_a_tab: bool,
) -> Result<(String, &'static str), String> {
    if in_a_tab {
        return in_tab(url, redirect).await.map(|u| (u, "tab"));
    }
    let identity = chrome_api("identity")?;
    let launch = Reflect::get(&identity, &"launchWebAuthFlow".into())
        .map_err(|e| describe(&e))?
        .dyn_into::<Function>()
        .map_err(|_| "chrome.identity.launchWebAuthFlow is missing".to_owned())?;
    let details = Object::new();
    let _ = Reflect::set(&details, &"url".into(), &url.into());
    let _ = Reflect::set(&details, &"interactive".into(), &JsValue::TRUE);
    let started = now_ms();
    let outcome = match launch.call1(&identity, &details) {
        Ok(promise) => timer::within(Promise::from(promise), SIGN_IN_MS).await,
        Err(error) => Err(describe(&error)),
    };
    match outcome {
        Ok(Some(value)) => value
            .as_string()
            .map(|url| (url, "launchWebAuthFlow"))
            .ok_or_else(|| "the sign-in window gave no answer".to_owned()),
        Ok(None) => Err("no sign-in within 5 minutes".into()),
        // Failed at once: no window could be shown (a headless browser): use a tab.
        Err(_) if now_ms() - started < 1500.0 => in_tab(url, redirect).await.map(|u| (u, "tab")),
        Err(error) => Err(error),
    }
}

/// Opens `url` in a tab and resolves with the first URL of that tab that starts with
/// `redirect` (the authorization server's redirect, which then fails to load: it is never
/// loaded); the tab is closed. Closing the tab first ends the sign-in.
async fn in_tab(url: &str, redirect: &str) -> Result<String, String> {
    let tabs = chrome_api("tabs")?;
    let navigation = chrome_api("webNavigation")?;
    let done = super::io::deferred();
    let resolve: Function = Reflect::get(&done, &"resolve".into())
        .map_err(|e| describe(&e))?
        .dyn_into()
        .map_err(|_| "no resolver".to_owned())?;
    let tab_id: std::rc::Rc<RefCell<Option<f64>>> = std::rc::Rc::default();
    let redirect = redirect.to_owned();

    let (r1, t1, p1) = (resolve.clone(), tab_id.clone(), redirect.clone());
    let on_updated = Closure::<dyn Fn(JsValue, JsValue, JsValue)>::new(
        move |id: JsValue, change: JsValue, _tab: JsValue| {
            if id.as_f64() != *t1.borrow() {
                return;
            }
            if let Some(url) = Reflect::get(&change, &"url".into())
                .ok()
                .and_then(|u| u.as_string())
            {
                if url.starts_with(&p1) {
                    let _ = r1.call1(&JsValue::NULL, &json_value(json!({"url": url})));
                }
            }
        },
    );
    let (r2, t2, p2) = (resolve.clone(), tab_id.clone(), redirect.clone());
    let on_error = Closure::<dyn Fn(JsValue)>::new(move |details: JsValue| {
        let get = |k: &str| Reflect::get(&details, &k.into()).ok();
        if get("tabId").and_then(|v| v.as_f64()) != *t2.borrow() {
            return;
        }
        if let Some(url) = get("url").and_then(|u| u.as_string()) {
            if url.starts_with(&p2) {
                let _ = r2.call1(&JsValue::NULL, &json_value(json!({"url": url})));
            }
        }
    });
    let (r3, t3) = (resolve.clone(), tab_id.clone());
    let on_removed = Closure::<dyn Fn(JsValue)>::new(move |id: JsValue| {
        if id.as_f64() == *t3.borrow() {
            let _ = r3.call1(&JsValue::NULL, &json_value(json!({"closed": true})));
        }
    });
    let listen = |api: &JsValue, event: &str, f: &Function, add: bool| {
        if let Ok(target) = Reflect::get(api, &event.into()) {
            let method = if add { "addListener" } else { "removeListener" };
            if let Ok(m) = Reflect::get(&target, &method.into()) {
                let _ = Function::from(m).call1(&target, f);
            }
        }
    };
    let updated_fn: &Function = on_updated.as_ref().unchecked_ref();
    let error_fn: &Function = on_error.as_ref().unchecked_ref();
    let removed_fn: &Function = on_removed.as_ref().unchecked_ref();
    listen(&tabs, "onUpdated", updated_fn, true);
    listen(&navigation, "onErrorOccurred", error_fn, true);
    listen(&tabs, "onRemoved", removed_fn, true);

    let properties = Object::new();
    let _ = Reflect::set(&properties, &"url".into(), &"about:blank".into());
    let _ = Reflect::set(&properties, &"active".into(), &JsValue::TRUE);
    let outcome: Result<String, String> = async {
        let create = Reflect::get(&tabs, &"create".into())
            .map_err(|e| describe(&e))?
            .dyn_into::<Function>()
            .map_err(|_| "chrome.tabs.create is missing".to_owned())?;
        let tab = JsFuture::from(Promise::from(
            create.call1(&tabs, &properties).map_err(|e| describe(&e))?,
        ))
        .await
        .map_err(|e| describe(&e))?;
        let id = Reflect::get(&tab, &"id".into())
            .ok()
            .and_then(|v| v.as_f64())
            .ok_or("the sign-in tab has no id")?;
        *tab_id.borrow_mut() = Some(id);
        // Only now the authorization page: every navigation of the tab is watched.
        let update = Reflect::get(&tabs, &"update".into())
            .map_err(|e| describe(&e))?
            .dyn_into::<Function>()
            .map_err(|_| "chrome.tabs.update is missing".to_owned())?;
        let change = Object::new();
        let _ = Reflect::set(&change, &"url".into(), &url.into());
        let _ = JsFuture::from(Promise::from(
            update
                .call2(&tabs, &id.into(), &change)
                .map_err(|e| describe(&e))?,
        ))
        .await;
        let promise = Promise::from(Reflect::get(&done, &"promise".into()).unwrap_or_default());
        match timer::within(promise, SIGN_IN_MS).await? {
            Some(answer) => match Reflect::get(&answer, &"url".into())
                .ok()
                .and_then(|u| u.as_string())
            {
                Some(url) => Ok(url),
                None => Err("the sign-in tab was closed".into()),
            },
            None => Err("no sign-in within 5 minutes".into()),
        }
    }
    .await;
    listen(&tabs, "onUpdated", updated_fn, false);
    listen(&navigation, "onErrorOccurred", error_fn, false);
    listen(&tabs, "onRemoved", removed_fn, false);
    let opened = *tab_id.borrow();
    if let Some(id) = opened {
        if let Ok(remove) = Reflect::get(&tabs, &"remove".into()) {
            if let Ok(p) = Function::from(remove).call1(&tabs, &id.into()) {
                let _ = JsFuture::from(Promise::from(p)).await;
            }
        }
    }
    outcome
}

fn json_value(value: Value) -> JsValue {
    convert::from_json(&value)
}

async fn server_named(name: &str) -> Result<McpServerConfig, String> {
    load_servers()
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no MCP server named `{name}`"))
}

/// Asks the server once without a token: its 401 challenge (`Ok(Some)`), or `Ok(None)` when
/// it does not ask for a sign-in.
async fn probe(config: &McpServerConfig) -> Result<Option<String>, String> {
    let mut session = Session::new(config.url.clone());
    let init = session.initialize("webmcp-host", crate::VERSION, json!({}));
    let headers = convert::headers(&init.request.headers);
    let request = init.request;
    let start = future_to_promise(async move {
        start_fetch(&request.url, &request.method, headers.into(), &request.body).await
    });
    let handle = match timer::within(start, REQUEST_MS).await {
        Ok(Some(handle)) => handle,
        Ok(None) => return Err("the server did not answer in time".into()),
        Err(error) => return Err(format!("the server could not be reached: {error}")),
    };
    let status = Reflect::get(&handle, &"status".into())
        .ok()
        .and_then(|s| s.as_f64())
        .unwrap_or(0.0) as u16;
    let header = Reflect::get(&handle, &"header".into())
        .ok()
        .and_then(|f| {
            Function::from(f)
                .call1(&JsValue::UNDEFINED, &"www-authenticate".into())
                .ok()
        })
        .and_then(|v| v.as_string());
    abort_fetch(&handle);
    match status {
        401 | 403 => Ok(Some(header.unwrap_or_default())),
        200..=299 => Ok(None),
        other => Err(format!("the server answered {other} without a challenge")),
    }
}

/// `signIn({server, remember?, clientId?, clientSecret?, inTab?})`: signs in to a configured
/// MCP server (`inTab`: the authorization page in a tab rather than launchWebAuthFlow's window). Resolves to `{ok: true, signedIn: true, issuer, scope, expiresAtMs, refreshable,
/// kept, via}` (`via`: `launchWebAuthFlow` or `tab`), `{ok: true, signedIn: false, message}` when the server asks for no sign-in, or
/// `{ok: false, error}`; never a token.
pub async fn sign_in(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let name = request
        .get("server")
        .and_then(Value::as_str)
        .ok_or_else(|| js_err("signIn needs {server}: a configured MCP server's name"))?;
    let config = server_named(name).await.map_err(js_err)?;
    let remember = request.get("remember").and_then(Value::as_bool);
    let in_a_tab = request.get("inTab").and_then(Value::as_bool) == Some(true);
    let preregistered = request
        .get("clientId")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(|client_id| ClientCredentials {
            client_id: client_id.to_owned(),
            client_secret: request
                .get("clientSecret")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            auth_method: None,
        });
    let answer = match sign_in_to(&config, remember, preregistered, in_a_tab).await {
        Ok(Some((record, area, via))) => {
            let mut summary = record.summary(now_ms());
            summary["ok"] = json!(true);
            summary["server"] = json!(config.name);
            summary["kept"] = json!(area);
            summary["via"] = json!(via);
            summary
        }
        Ok(None) => json!({
            "ok": true,
            "signedIn": false,
            "server": config.name,
            "message": format!("{} does not ask for a sign-in", config.name),
        }),
        Err(error) => json!({"ok": false, "server": config.name, "error": error}),
    };
    Ok(convert::from_json(&answer))
}

async fn sign_in_to(
    config: &McpServerConfig,
    remember: Option<bool>,
    preregistered: Option<ClientCredentials>,
    in_a_tab: bool,
) -> Result<Option<(AuthRecord, &'static str, &'static str)>, String> {
    let previous = find(config).await;
    let noted = CHALLENGES.with(|c| c.borrow().get(&config.name).cloned());
    let challenge = match noted {
        Some(header) => header,
        None => match probe(config).await? {
            Some(header) => header,
            None => return Ok(None),
        },
    };
    let redirect = redirect_uri()?;
    let flow_config = FlowConfig {
        server_url: config.url.clone(),
        redirect_uri: redirect.clone(),
        client_name: "WebMCP Host".into(),
        preregistered,
        metadata_document: None,
        challenge: BearerChallenge::from_header(Some(&challenge)),
        previous: previous.as_ref().map(|(r, _)| r.clone()),
    };
    let secrets = FlowSecrets {
        verifier: random_hex(2),
        state: random_hex(1),
    };
    let mut flow = Flow::new(flow_config, secrets);
    let mut via = "";
    loop {
        match flow.step() {
            Step::Fetch(request) => {
                let (status, body) = http(&request).await;
                flow.response(status, &body, now_ms());
            }
            Step::Authorize { url } => match authorize(&url, &redirect, in_a_tab).await {
                Ok((back, how)) => {
                    via = how;
                    flow.redirected(&back);
                }
                Err(why) => flow.abandoned(&why),
            },
            Step::Done(record) => {
                let area = match (remember, &previous) {
                    (Some(true), _) => "local",
                    (Some(false), _) | (None, None) => "session",
                    (None, Some((_, area))) => area,
                };
                store(&config.name, &record, area).await?;
                CHALLENGES.with(|c| c.borrow_mut().remove(&config.name));
                return Ok(Some((record, area, via)));
            }
            Step::Failed(why) => return Err(why),
        }
    }
}

/// `signOut({server})`: forgets the server's tokens (both storage areas). Resolves to
/// `{ok: true, signedOut}` (`signedOut`: there was a sign-in).
pub async fn sign_out(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let name = request
        .get("server")
        .and_then(Value::as_str)
        .ok_or_else(|| js_err("signOut needs {server}"))?;
    let found = forget(name).await.map_err(js_err)?;
    CHALLENGES.with(|c| c.borrow_mut().remove(name));
    Ok(convert::from_json(
        &json!({"ok": true, "server": name, "signedOut": found}),
    ))
}

/// `authState()`: each configured server's sign-in, without any token:
/// `[{server, url, signedIn, kept?, issuer?, scope?, expiresAtMs?, refreshable?, state?}]`.
pub async fn auth_state() -> Result<JsValue, JsError> {
    let servers = load_servers().await.map_err(js_err)?;
    let now = now_ms();
    let mut out = Vec::new();
    for server in servers {
        let entry = match find(&server).await {
            Some((record, area)) => {
                let mut summary = record.summary(now);
                summary["kept"] = json!(area);
                summary
            }
            None => json!({"signedIn": false}),
        };
        let mut entry = entry;
        entry["server"] = json!(server.name);
        entry["url"] = json!(server.url);
        out.push(entry);
    }
    Ok(convert::from_json(&Value::Array(out)))
}
