// WebMCP Host page bridge, MAIN-world companion, every frame, document_start.
//
// Pages that polyfill WebMCP (@mcp-b/webmcp-polyfill, @mcp-b/global) keep `document.modelContext`
// as a JS object of the page's own world, which the isolated-world bridge cannot see. This
// companion lists and runs those tools for the isolated bridge, and nothing else:
//
// - It runs before any page script and pairs with the isolated bridge once, over DOM events on
//   `document`: the isolated bridge hands it a random secret, and from then on they talk only
//   on event types named after that secret, which no page script can know. A second pairing
//   is refused.
// - It takes every DOM and JSON function it uses at load, before the page can replace them.
// - It only answers: it never asks the isolated bridge or the extension for anything, so a page
//   that learned the secret anyway could at most answer for its own tools, which it can do
//   already. Confirmations are shown by the isolated bridge before a call gets here.
// - During an audit probe, asked to (`watch`), it notes the requests the page sends through its
//   own fetch, XMLHttpRequest, sendBeacon and forms: the wrappers go in at the first watch, so
//   a page never probed keeps its functions untouched. What it notes is the page's own
//   behaviour, which the page could hide (a reference taken before, another frame's fetch).
(() => {
  'use strict';
  const doc = document;
  const listen = EventTarget.prototype.addEventListener;
  const unlisten = EventTarget.prototype.removeEventListener;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const detailOf = Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail').get;
  const Custom = CustomEvent;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const from = Array.from;
  const PageMap = Map;
  const test = RegExp.prototype.test;
  const SECRET = /^[0-9a-f]{32}$/;
  const HELLO = 'webmcp-host:hello';
  const READY = 'webmcp-host:main-ready';
  const PARSE_FAILURE = 'Failed to parse input arguments';

  let secret = null;

  const plain = (value) => {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    try {
      return parse(stringify(value));
    } catch {
      return null;
    }
  };

  const modelContext = () => {
    const context = doc.modelContext;
    return context && typeof context.getTools === 'function' ? context : null;
  };

  // Which polyfill serves the page, by the marks each leaves: Google's demo polyfill
  // (webmcp-tools' demos/shared/webmcp-polyfill.js) keeps its tools in a Map at
  // window.__webmcp_registered_tools and passes every annotation on; @mcp-b/webmcp-polyfill
  // marks its ModelContext with __isWebMCPPolyfill and keeps only readOnlyHint and
  // untrustedContentHint; @mcp-b/global's (__isBrowserMcpServer) is held to the same. The page can fake either mark; it could as
  // well leave consequentialHint out on a native page, so nothing is lost by believing it.
  const polyfillOf = (context) => {
    try {
      if (window.__webmcp_registered_tools instanceof PageMap) return 'google-demo';
      if (context.__isWebMCPPolyfill === true || context.__isBrowserMcpServer === true) return 'mcp-b';
    } catch {
      // a getter that throws: unknown
    }
    return 'unknown';
  };

  const ownTools = async (context) => {
    const tools = from((await context.getTools()) ?? []);
    return tools.filter(registeredHere);
  };

  // BEGIN SHARED BLOCK: kept identical in isolated.js and main.js, which cannot share a file (one
  // listed in both worlds is injected only into the isolated one);
  // tests/support/content-script-shared.test.mjs fails when the two blocks differ.
  const describe = (tool) => ({
    name: typeof tool.name === 'string' ? tool.name : plain(tool.name),
    title: plain(tool.title),
    description: plain(tool.description),
    inputSchema: plain(tool.inputSchema),
    outputSchema: plain(tool.outputSchema),
    annotations: plain(tool.annotations),
  });

  const failure = (name, message) => ({ ok: false, error: { name, message } });

  // Whether this frame registered a tool: \`source\` names the registering frame from Chrome 160
  // on (its Tool interface has getters, no own properties), \`window\` before; absent or null is
  // this frame's own. A tool another frame exposed to this one is listed by that frame.
  const registeredHere = (tool) => {
    const source = tool.source ?? tool.window;
    return source == null || source === window;
  };
  // END SHARED BLOCK

  // Native executeTool takes an object; the polyfills take a JSON string and say so before the
  // tool runs. The string is tried only after that refusal, so no tool runs twice.
  const execute = async (context, tool, args, signal) => {
    try {
      return { result: await context.executeTool(tool, args, { signal }), asText: false };
    } catch (error) {
      if (String(error?.message ?? '').includes(PARSE_FAILURE)) {
        return { result: await context.executeTool(tool, stringify(args), { signal }), asText: true };
      }
      throw error;
    }
  };

  // Calls running here, by the name the worker gave them, so that they can be cancelled.
  const running = new Map();
  const Controller = AbortController;

  // Once a page's polyfill has been listed, its toolchange events become notices to the
  // isolated bridge (which tells the person's side, debounced).
  let watched = null;
  const watch = (context) => {
    if (watched === context || typeof context.addEventListener !== 'function') return;
    watched = context;
    context.addEventListener('toolchange', () => {
      dispatch.call(doc, new Custom(`webmcp-host:${secret}:toolchange`));
    });
  };

  // Requests noted while an audit probe watches (`watch`), at most 100.
  let noted = null;
  const note = (method, url) => {
    if (noted === null || noted.length >= 100) return;
    try {
      noted.push({ method: String(method ?? 'GET').toUpperCase(), url: String(url ?? '') });
    } catch {
      // a URL or method object that cannot be written: left out
    }
  };
  let wrapped = false;
  const wrapRequests = () => {
    if (wrapped) return;
    wrapped = true;
    const fetch0 = window.fetch;
    if (typeof fetch0 === 'function') {
      window.fetch = function fetch(input, init) {
        const isRequest = typeof Request === 'function' && input instanceof Request;
        note(init?.method ?? (isRequest ? input.method : 'GET'), isRequest ? input.url : input);
        return fetch0.apply(this, arguments);
      };
    }
    const open0 = XMLHttpRequest.prototype.open;
    XMLHttpRequest.prototype.open = function open(method, url) {
      note(method, url);
      return open0.apply(this, arguments);
    };
    const beacon0 = Navigator.prototype.sendBeacon;
    if (typeof beacon0 === 'function') {
      Navigator.prototype.sendBeacon = function sendBeacon(url) {
        note('POST', url);
        return beacon0.apply(this, arguments);
      };
    }
    const submit0 = HTMLFormElement.prototype.submit;
    HTMLFormElement.prototype.submit = function submit() {
      note(this.method, this.action);
      return submit0.apply(this, arguments);
    };
    listen.call(doc, 'submit', (event) => note(event.target?.method, event.target?.action), true);
  };

  const handle = async (request) => {
    const context = modelContext();
    const frame = { url: location.href, origin: location.origin };
    switch (request.op) {
      case 'listTools':
        if (!context) return { ok: true, supported: false, ...frame, tools: [] };
        watch(context);
        return { ok: true, supported: true, polyfilled: true, polyfill: polyfillOf(context), ...frame, tools: (await ownTools(context)).map(describe) };
      case 'callTool': {
        if (!context) return failure('NotSupportedError', 'this frame has no document.modelContext');
        const tool = (await ownTools(context)).find((t) => t.name === request.name);
        if (!tool) return failure('NotFoundError', `this frame has no tool named "${request.name}"`);
        // The definition the worker decided on (as the isolated bridge listed it), checked with
        // no await before the tool starts.
        if (stringify(describe(tool)) !== request.expect) {
          return failure('ToolChangedError', `tool changed: "${request.name}" is not defined as it was when listed; not run`);
        }
        const controller = new Controller();
        const call = typeof request.call === 'string' ? request.call : null;
        if (call !== null) running.set(call, controller);
        let result, asText;
        try {
          ({ result, asText } = await execute(context, tool, request.args, controller.signal));
        } finally {
          if (running.get(call) === controller) running.delete(call);
        }
        if (result === null) return { ok: true, result: null, url: location.href };
        const text = typeof result === 'string' ? result : stringify(result ?? null);
        return asText ? { ok: true, result: text, input: 'text' } : { ok: true, result: text };
      }
      case 'watch': {
        if (request.on === true) {
          wrapRequests();
          noted = [];
          return { ok: true };
        }
        const requests = noted ?? [];
        noted = null;
        return { ok: true, requests };
      }
      case 'cancel': {
        const controller = running.get(request.call);
        if (!controller) return { ok: true, cancelled: false };
        running.delete(request.call);
        controller.abort();
        return { ok: true, cancelled: true };
      }
      default:
        return failure('NotSupportedError', `unknown op "${String(request.op)}"`);
    }
  };

  const respond = (id, body) => {
    dispatch.call(doc, new Custom(`webmcp-host:${secret}:response`, { detail: stringify({ ...body, id }) }));
  };

  const onRequest = (event) => {
    let request;
    try {
      request = parse(detailOf.call(event));
    } catch {
      return;
    }
    if (!request || typeof request !== 'object' || typeof request.id !== 'string') return;
    handle(request).then(
      (body) => respond(request.id, body),
      (error) => respond(request.id, failure(String(error?.name ?? 'Error'), String(error?.message ?? error))),
    );
  };

  const onHello = (event) => {
    const offered = detailOf.call(event);
    if (secret !== null || typeof offered !== 'string' || !test.call(SECRET, offered)) return;
    secret = offered;
    unlisten.call(doc, HELLO, onHello, true);
    listen.call(doc, `webmcp-host:${secret}:request`, onRequest, true);
    dispatch.call(doc, new Custom(`webmcp-host:${secret}:paired`));
  };

  listen.call(doc, HELLO, onHello, true);
  // If the isolated bridge ran first, this asks it for its hello.
  dispatch.call(doc, new Custom(READY));
})();
