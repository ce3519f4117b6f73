//! The wasm shell in a real service worker (headless Chromium through wasm-bindgen-test):
//! conversions at the edge, timeouts, and the message and listing paths against a scripted
//! `chrome` object. Run with `make test-wasm` (it builds the module without debug info, which
//! makes it load in seconds rather than minutes).
#![cfg(target_arch = "wasm32")]

use js_sys::{Promise, Reflect};
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;
use webmcp_host::shell::{self, convert, timer};

wasm_bindgen_test_configure!(run_in_service_worker);

#[wasm_bindgen(inline_js = r#"
export function js(source) { return (0, eval)(`(${source})`); }
export function install_chrome(replies) {
  globalThis.chrome = {
    runtime: { id: 'testextensionid' },
    storage: {
      local: { get: async () => ({}) },
      session: {
        items: {},
        async get(key) { return key in this.items ? { [key]: this.items[key] } : {}; },
        async set(entries) { Object.assign(this.items, JSON.parse(JSON.stringify(entries))); },
        async remove(key) { delete this.items[key]; },
      },
    },
    webNavigation: {
      getAllFrames: async ({ tabId }) =>
        tabId === 1 ? Object.keys(replies).map((id) => ({ frameId: Number(id), url: `http://a.test/${id}` })) : null,
    },
    tabs: {
      sent: [],
      // The page bridge's channel as Chrome gives it: a port per frame, each request
      // `{id, message}` answered `{id, answer}`; no listener there closes it with lastError.
      connect(tabId, { frameId }) {
        const sent = this.sent;
        const listeners = { message: [], disconnect: [] };
        const event = (list) => ({ addListener: (f) => list.push(f) });
        const port = {
          onMessage: event(listeners.message),
          onDisconnect: event(listeners.disconnect),
          disconnect() {},
          postMessage({ id, message }) {
            sent.push({ tabId, frameId, message });
            const reply = replies[frameId];
            if (reply === 'never') return;
            setTimeout(() => {
              if (reply === 'reject') {
                globalThis.chrome.runtime.lastError = { message: 'Could not establish connection. Receiving end does not exist.' };
                for (const f of listeners.disconnect) f(port);
                delete globalThis.chrome.runtime.lastError;
                return;
              }
              const answer = typeof reply === 'function' ? reply(message) : reply;
              for (const f of listeners.message) f({ id, answer }, port);
            }, 0);
          },
        };
        return port;
      },
    },
  };
}
export function remove_chrome() { delete globalThis.chrome; }
"#)]
extern "C" {
    fn js(source: &str) -> JsValue;
    fn install_chrome(replies: &JsValue);
    fn remove_chrome();
}

/// `webmcpHost[op](request)` through the router's automation surface: `{ok, value | error}`.
async fn operation(op: &str, request: &str) -> serde_json::Value {
    convert::to_json(&shell::router::call(op.to_owned(), js(request)).await).unwrap()
}

#[wasm_bindgen_test]
async fn version_is_the_crate_version() {
    assert_eq!(
        operation("version", "({})").await,
        json!({"ok": true, "value": env!("CARGO_PKG_VERSION")})
    );
}

#[wasm_bindgen_test]
fn conversions_never_panic() {
    let value = js("{a: [1, 'x', null], b: true}");
    assert_eq!(
        convert::to_json(&value),
        Ok(json!({"a": [1, "x", null], "b": true}))
    );
    assert_eq!(
        convert::to_json(&JsValue::UNDEFINED),
        Err("the value is not JSON (undefined or a function)".into())
    );
    let cyclic = js("(() => { const o = {}; o.self = o; return o; })()");
    assert!(convert::to_json(&cyclic)
        .unwrap_err()
        .starts_with("the value cannot be written as JSON"));
    assert!(convert::to_json(&js("{n: 10n}")).is_err());
    let back = convert::from_json(&json!({"k": [1, 2]}));
    assert_eq!(
        js_sys::JSON::stringify(&back).unwrap().as_string().unwrap(),
        r#"{"k":[1,2]}"#
    );
}

#[wasm_bindgen_test]
fn sender_fields_are_read_from_a_message_sender() {
    let sender =
        js("{id: 'ext', url: 'http://a.test/', origin: 'http://a.test', tab: {id: 4}, frameId: 2}");
    let info = convert::sender_info(&sender);
    assert_eq!(info.id.as_deref(), Some("ext"));
    assert_eq!((info.tab_id, info.frame_id), (Some(4), Some(2)));
    let odd = convert::sender_info(&js("{id: 5, tab: 'x', frameId: 1.5}"));
    assert_eq!((odd.id, odd.tab_id, odd.frame_id), (None, None, None));
    assert_eq!(convert::sender_info(&JsValue::NULL), Default::default());
}

#[wasm_bindgen_test]
async fn timeouts_resolve_reject_or_expire() {
    let never = Promise::new(&mut |_, _| {});
    assert_eq!(timer::within(never, 20).await, Ok(None));
    let value = timer::within(Promise::resolve(&JsValue::from_str("done")), 1000)
        .await
        .unwrap();
    assert_eq!(value.and_then(|v| v.as_string()).as_deref(), Some("done"));
    let failed = timer::within(Promise::reject(&js("new Error('nope')")), 1000).await;
    assert_eq!(failed, Err("nope".into()));
}

// One test for everything that needs `globalThis.chrome`, so that no other test sees it.
#[wasm_bindgen_test]
async fn messages_and_listing_against_a_scripted_chrome() {
    let page = js("{url: 'http://a.test/', tab: {id: 1}, frameId: 0, id: 'testextensionid'}");
    let popup = js("{url: 'chrome-extension://testextensionid/popup.html', id: 'testextensionid'}");
    let version = js("{op: 'version'}");

    // Without chrome.runtime, a message is answered with an error, not a throw.
    let answer =
        convert::to_json(&shell::router::handle_message(version.clone(), popup.clone()).await)
            .unwrap();
    assert_eq!(
        answer,
        json!({"ok": false, "error": "chrome.runtime is not available in this context"})
    );

    let big = "x".repeat(200_000);
    install_chrome(&js(&format!(
        "{{
          0: {{ok: true, supported: true, url: 'http://a.test/', origin: 'http://a.test',
               tools: [{{name: 'add', description: 'adds', inputSchema: {{type: 'object'}}}}, {{name: 'bad name'}}]}},
          3: 'not an object',
          5: {{ok: true, supported: true, url: 'http://a.test/5', origin: 'http://a.test', tools: [{{name: 'huge', description: '{big}'}}]}},
          7: 'reject',
          9: (m) => m.op === 'callTool' ? {{ok: true, result: 'called ' + m.name + ' ' + JSON.stringify(m.args)}} : {{ok: true, url: 'http://a.test/9', origin: 'http://a.test', tools: [{{name: 'nine'}}]}}
        }}"
    )));

    let answer =
        convert::to_json(&shell::router::handle_message(version.clone(), popup.clone()).await)
            .unwrap();
    assert_eq!(
        answer,
        json!({"ok": true, "value": env!("CARGO_PKG_VERSION")})
    );
    let answer =
        convert::to_json(&shell::router::handle_message(version.clone(), page.clone()).await)
            .unwrap();
    assert_eq!(answer["ok"], false);
    assert_eq!(
        answer["error"],
        "refused: `version` may not be asked by a content script (tab 1, frame 0)"
    );

    let listed = operation("listTools", "({tabId: 1})").await;
    assert_eq!(listed["ok"], true, "{listed}");
    let listed = &listed["value"];
    let names: Vec<_> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("add"), json!("nine")]);
    let problems: Vec<String> = listed["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("A-Z"), "{problems:?}");
    assert_eq!(
        problems[1],
        // A frame answers its listing as JSON text, so a string that is not JSON is refused so.
        "frame 3 (http://a.test/3): the frame's reply is malformed: not JSON (expected ident at line 1 column 2)"
    );
    assert!(
        problems[2].contains("max_description_bytes"),
        "{problems:?}"
    );

    let called = operation("callTool", "({tabId: 1, name: 'nine', args: {q: 1}})").await;
    assert_eq!(
        called,
        json!({"ok": true, "value": {"ok": true, "result": "called nine {\"q\":1}"}})
    );
    let sent = js("globalThis.chrome.tabs.sent.filter((s) => s.message.op === 'callTool')");
    let mut sent = convert::to_json(&sent).unwrap();
    // Each call is named, so that it can be cancelled in the page.
    let call = sent[0]["message"]
        .as_object_mut()
        .unwrap()
        .remove("call")
        .unwrap();
    assert!(
        call.as_str().is_some_and(|c| c.starts_with("call_")),
        "{call}"
    );
    assert_eq!(
        sent,
        json!([{"tabId": 1, "frameId": 9, "message": {"webmcpHost": 1, "op": "callTool", "name": "nine", "args": {"q": 1}}}])
    );

    assert_eq!(
        operation("listTools", "({tabId: 2})").await,
        json!({"ok": false, "error": "tab 2: no such tab, or its frames are not known yet"})
    );

    // A run a previous worker left running, with an acting call under way: the stored log
    // ends with a RUN_ERROR naming the call, the run's summary gets its outcome.
    js("(() => { const items = globalThis.chrome.storage.session.items;
        items['webmcpHost.ui.runs'] = [{runId: 'r1', threadId: 't1', prompt: 'Delete r-9', startedMs: 1, state: 'running', eventCount: 2}];
        items['webmcpHost.ui.run.r1'] = {events: [{type: 'RUN_STARTED', threadId: 't1', runId: 'r1'},
          {type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'own__delete_record'}], times: [1, 2], dropped: 0};
        items['webmcpHost.intent.r1'] = [{callId: 'c1', name: 'own__delete_record', source: 'MCP server own'}];
      })()");
    assert_eq!(shell::runlog::recover().await, 1);
    let items = convert::to_json(&js("globalThis.chrome.storage.session.items")).unwrap();
    let events = items["webmcpHost.ui.run.r1"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[2]["type"], "RUN_ERROR");
    assert_eq!(events[2]["code"], "worker_restarted");
    assert!(events[2]["message"]
        .as_str()
        .unwrap()
        .contains("`own__delete_record` (MCP server own, call c1) was running: it may have run, and it was not run again."));
    let run = &items["webmcpHost.ui.runs"][0];
    assert_eq!(
        (run["state"].as_str(), run["eventCount"].as_u64()),
        (Some("interrupted"), Some(3))
    );
    assert_eq!(run["outcome"]["type"], "failed");
    assert!(
        items.get("webmcpHost.intent.r1").is_none(),
        "the intents are gone"
    );
    assert_eq!(
        items["webmcpHost.ui.run.r1"]["times"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    remove_chrome();
    assert!(!Reflect::has(&js_sys::global(), &"chrome".into()).unwrap_or(true));
}
