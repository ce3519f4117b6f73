// WebMCP Host page bridge, isolated world, every frame.
//
// Answers the extension's worker, and only it: lists this frame's WebMCP tools and runs one.
// It takes no request from the page (no window messages; the only DOM events it hears are
// answers from the MAIN-world companion, on event types named after a secret the page does
// not know), so a page cannot make it call a tool; and it answers no message that does not
// come from this extension's own worker.
//
// Native WebMCP is used directly. Where the page has none, the MAIN-world companion
// (main.js) lists and runs the tools of a polyfilled `document.modelContext`.
(() => {
  'use strict';
  const KEY = 'webmcpHost';
  const VERSION = 1;
  const PARSE_FAILURE = 'Failed to parse input arguments';

  // Pairing with the MAIN-world companion (see main.js). Both scripts run at document_start,
  // before any page script, in either order: whichever runs second completes the pairing.
  const main = (() => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const secret = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    const pending = new Map();
    let paired = false;
    let readySeen = false;
    let next = 0;
    const hello = () => document.dispatchEvent(new CustomEvent('webmcp-host:hello', { detail: secret }));
    document.addEventListener(`webmcp-host:${secret}:paired`, () => {
      paired = true;
    }, true);
    document.addEventListener(`webmcp-host:${secret}:response`, (event) => {
      let answer;
      try {
        answer = JSON.parse(event.detail);
      } catch {
        return;
      }
      const resolve = pending.get(answer?.id);
      if (!resolve) return;
      pending.delete(answer.id);
      delete answer.id;
      resolve(answer);
    }, true);
    // The companion ran first: its ready went unheard, and this hello pairs at once. Otherwise
    // its ready (the first one, before any page script) asks for the hello.
    const onReady = () => {
      if (paired || readySeen) return;
      readySeen = true;
      document.removeEventListener('webmcp-host:main-ready', onReady, true);
      hello();
    };
    document.addEventListener('webmcp-host:main-ready', onReady, true);
    hello();
    if (paired) document.removeEventListener('webmcp-host:main-ready', onReady, true);
    return {
      secret,
      get paired() {
        return paired;
      },
      ask(request) {
        const id = `r${++next}`;
        return new Promise((resolve) => {
          pending.set(id, resolve);
          document.dispatchEvent(new CustomEvent(`webmcp-host:${secret}:request`, {
            detail: JSON.stringify({ ...request, id }),
          }));
        });
      },
    };
  })();

  const modelContext = () => {
    const context = document.modelContext;
    return context && typeof context.getTools === 'function' ? context : null;
  };

  // A plain, JSON-safe copy of a value from the page; null when it has none.
  const plain = (value) => {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    try {
      return JSON.parse(JSON.stringify(value));
    } catch {
      return null;
    }
  };

  // The tools registered by this frame's own document. getTools() can also return tools of
  // other frames that exposed themselves to us; those are reported by their own frame.
  const ownTools = async (context) => {
    const tools = Array.from((await context.getTools()) ?? []);
    // The MCP tools expose.js registered for the browser's agents are the host's, not the page's.
    const exposed = globalThis.webmcpHostExposed;
    return tools.filter((tool) => registeredHere(tool) && !(exposed instanceof Map && exposed.has(tool.name)));
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

  // Each tool as this frame last listed it: its definition as reported (JSON text) and a
  // number for that definition. A call names the number the worker decided on (whether to
  // confirm, from the hints); the tool runs only while its definition is still that one.
  let listed = new Map();
  let versions = 0;
  const definitionOf = ({ form: _form, ...definition }) => definition;
  const numbered = (tools) => {
    const now = new Map();
    const out = tools.map((tool) => {
      // The definition as the page gave it: the form read from the DOM is no part of it (a
      // call compares the definition then with this text).
      const text = JSON.stringify(tool && typeof tool === 'object' ? definitionOf(tool) : tool);
      const seen = listed.get(tool?.name);
      const entry = seen && seen.text === text ? seen : { version: ++versions, text };
      if (!now.has(tool?.name)) now.set(tool?.name, entry);
      return { ...tool, version: entry.version };
    });
    listed = now;
    return out;
  };
  const changed = (name) =>
    failure('ToolChangedError', `tool changed: "${name}" is not defined as it was when listed; not run`);

  // The DOM read through the prototypes' own methods: a form's controls are properties of the
  // form (`<input name="getAttribute">`), and a document's named elements of the document.
  const attr = (element, name) => Element.prototype.getAttribute.call(element, name);
  const hasAttr = (element, name) => Element.prototype.hasAttribute.call(element, name);
  // This frame's declarative forms by tool name (the first form of each name), read once.
  const toolForms = () => {
    const forms = new Map();
    for (const form of Document.prototype.querySelectorAll.call(document, 'form[toolname]')) {
      const name = attr(form, 'toolname');
      if (!forms.has(name)) forms.set(name, form);
    }
    return forms;
  };
  const formNamed = (name) => toolForms().get(name);
  const withoutHash = (url) => url.split('#')[0];
  const baseUriOf = (node) => Object.getOwnPropertyDescriptor(Node.prototype, 'baseURI').get.call(node);
  // The declarative form behind a tool, as this frame's DOM has it (an entry's own `form`
  // field, which a polyfill's page script could write, is replaced): whether it submits by
  // itself, and whether it sends its document elsewhere (a target other than `_self`, an action
  // other than this page).
  const formOf = (form) => {
    const target = (attr(form, 'target') ?? '').trim();
    // A form without an action (or an empty one) submits to its document's URL, whatever its
    // <base>; `baseURI` is read through Node's own getter (`<img name="baseURI">` shadows it).
    const written = (attr(form, 'action') ?? '').trim();
    let action = location.href;
    try {
      if (written !== '') action = new URL(written, baseUriOf(document)).href;
    } catch {
      // an action that is no URL: the form submits to this page
    }
    const elsewhere = (target !== '' && target.toLowerCase() !== '_self') || withoutHash(action) !== withoutHash(location.href);
    return { autoSubmit: hasAttr(form, 'toolautosubmit'), navigates: elsewhere, action: action.slice(0, 2048), target: target.slice(0, 64) };
  };
  const withForms = (tools) => {
    const forms = toolForms();
    return tools.map((tool) => {
      if (tool === null || typeof tool !== 'object') return tool;
      const rest = definitionOf(tool);
      const form = typeof rest.name === 'string' && forms.has(rest.name) ? formOf(forms.get(rest.name)) : undefined;
      return form ? { ...rest, form } : rest;
    });
  };

  // The frame's URL and origin are this world's own, never the page's word: a tool names no
  // origin, and the companion's answer (a page's own modelContext, a polyfill that takes
  // `globalThis.origin`) keeps only its tools. Those are marked polyfilled, with the polyfill
  // the companion recognised: one that drops consequentialHint (or one not known) has every
  // tool that is not read-only confirmed by the worker, its hints "unknown".
  const listTools = async () => {
    const context = modelContext();
    const frame = { url: location.href, origin: location.origin, title: String(document.title ?? '').slice(0, 200), readyState: document.readyState };
    if (context) return { ok: true, supported: true, ...frame, tools: numbered(withForms((await ownTools(context)).map(describe))) };
    if (!main.paired) return { ok: true, supported: false, ...frame, tools: [] };
    const answer = await main.ask({ op: 'listTools' });
    if (answer?.ok !== true) return answer;
    const tools = Array.isArray(answer.tools) ? numbered(withForms(answer.tools)) : answer.tools;
    const polyfill = typeof answer.polyfill === 'string' ? answer.polyfill : 'unknown';
    return { ok: true, supported: answer.supported === true, polyfilled: true, polyfill, ...frame, tools };
  };

  // Native executeTool takes an object; a polyfill wants a JSON string and says so before the
  // tool runs, so the string is tried only after that refusal (no tool runs twice).
  const execute = async (context, tool, args, signal) => {
    try {
      return { result: await context.executeTool(tool, args, { signal }), asText: false };
    } catch (error) {
      if (String(error?.message ?? '').includes(PARSE_FAILURE)) {
        return { result: await context.executeTool(tool, JSON.stringify(args), { signal }), asText: true };
      }
      throw error;
    }
  };

  // Calls running here, by the name the worker gave them, so that it can cancel them: each
  // `{controller, name, activated, onEvent}`. `active` holds every running call, named or not.
  const running = new Map();
  const active = new Set();
  // Calls cancelled before they started (a cancel that came while `confirm()` was open): at
  // most the 256 latest are remembered.
  const cancelled = new Set();

  // What Chrome tells the page of a call: `toolactivated` once a declarative tool's form is
  // filled in, `toolcancel` when a call is cancelled; fired on `window` up to Chrome 155, on
  // `document.modelContext` from 156 (both are heard, each event once). Events name the tool,
  // not the call: the `toolcancel` Chrome fires for a call this script aborted (by name, so a
  // call of the same tool cut earlier counts too) is recognised by a count per tool, and only
  // another one is the page's. A page can dispatch such events itself, so they are only
  // believed as far as the page could act anyway: a cancel ends the page's own call (it could
  // reject it), an activation is only said where the frame has the tool's form.
  const CALL_EVENTS = ['toolactivated', 'toolcancel'];
  const heard = new WeakSet();
  const ourCancels = new Map();
  const onCallEvent = (event) => {
    if (heard.has(event)) return;
    heard.add(event);
    const name = event.toolName;
    if (typeof name !== 'string') return;
    if (event.type === 'toolcancel') {
      const ours = ourCancels.get(name) ?? 0;
      if (ours > 0) {
        if (ours === 1) ourCancels.delete(name);
        else ourCancels.set(name, ours - 1);
        return;
      }
    }
    for (const entry of active) if (entry.name === name) entry.onEvent(event.type);
  };
  const listening = new WeakSet();
  const hearCallEvents = () => {
    for (const target of [modelContext(), window]) {
      if (typeof target?.addEventListener !== 'function' || listening.has(target)) continue;
      listening.add(target);
      for (const type of CALL_EVENTS) target.addEventListener(type, onCallEvent);
    }
  };
  /** Aborts a running call; the `toolcancel` Chrome fires for it is ours. */
  const abortCall = (entry, reason) => {
    if (ourCancels.size < 1024) ourCancels.set(entry.name, (ourCancels.get(entry.name) ?? 0) + 1);
    entry.controller.abort(reason);
  };
  // A declarative tool whose form is filled in but not sent by itself (no `toolautosubmit`)
  // waits for someone to submit it in the page.
  const awaitsSubmit = (name) => {
    const form = formNamed(name);
    return form !== undefined && !hasAttr(form, 'toolautosubmit');
  };

  const cancel = (call) => {
    const entry = running.get(call);
    if (entry) {
      running.delete(call);
      abortCall(entry, new DOMException('the agent cancelled this call', 'AbortError'));
      return { ok: true, cancelled: true, awaitingSubmit: entry.activated && awaitsSubmit(entry.name) };
    }
    cancelled.add(call);
    if (cancelled.size > 256) cancelled.delete(cancelled.values().next().value);
    if (main.paired) return main.ask({ op: 'cancel', call });
    return { ok: true, cancelled: false };
  };

  // After the person allowed a call: is it still wanted? `confirm()` blocked this script, so
  // a cancel sent meanwhile may still be queued. The worker answers after every message it
  // sent before (one channel, in order), and says whether the call's run still goes on.
  const stillWanted = async (call) => {
    if (typeof call !== 'string') return true;
    const answer = await chrome.runtime.sendMessage({ [KEY]: VERSION, op: 'callWanted', call }).catch(() => null);
    return !cancelled.has(call) && answer?.ok === true && answer.value?.wanted === true;
  };

  const callTool = async (name, args, confirmText, call, within, version) => {
    const context = modelContext();
    if (!context && !main.paired) return failure('NotSupportedError', 'this frame has no document.modelContext');
    const find = async () => (await ownTools(context)).find((t) => t.name === name);
    const found = context ? await find() : null;
    if (context && !found) return failure('NotFoundError', `this frame has no tool named "${name}"`);
    // The definition the worker decided on: the one listed under the call's version.
    const decided = listed.get(name);
    if (!decided || decided.version !== version) return changed(name);
    // The browser's own dialog, shown by this script: the page can neither see nor answer it.
    const asked = performance.now();
    if (typeof confirmText === 'string' && !window.confirm(confirmText)) {
      return failure('NotAllowedError', 'declined: the person did not allow this call');
    }
    // `confirm()` blocks this script: a call allowed after its caller stopped waiting was
    // reported as cancelled already, and must not run behind that report.
    if (typeof confirmText === 'string' && typeof within === 'number' && performance.now() - asked > within) {
      return failure('TimeoutError', `allowed after the call's ${within} ms had passed: not run`);
    }
    if (typeof confirmText === 'string' && !(await stillWanted(call))) {
      return failure('AbortError', 'allowed after the call was cancelled (its run ended or was stopped): not run');
    }
    if (!context) return main.ask({ op: 'callTool', name, args, call, expect: decided.text });
    // The page may change its tools while the person is asked: look again after a question.
    const tool = typeof confirmText === 'string' ? await find() : found;
    if (!tool) return failure('NotFoundError', `this frame has no tool named "${name}"`);
    // Checked with no await before the tool starts: the page cannot change it in between.
    if (JSON.stringify(describe(tool)) !== decided.text) return changed(name);
    let pageCancelled;
    const cancelledByPage = new Promise((resolve) => (pageCancelled = resolve));
    const entry = {
      controller: new AbortController(),
      name,
      activated: false,
      onEvent: (type) => (type === 'toolactivated' ? (entry.activated = true) : pageCancelled()),
    };
    if (typeof call === 'string') running.set(call, entry);
    active.add(entry);
    hearCallEvents();
    let result, asText;
    try {
      const outcome = await Promise.race([execute(context, tool, args, entry.controller.signal), cancelledByPage]);
      if (outcome === undefined) {
        abortCall(entry, new DOMException('the page cancelled this call', 'AbortError'));
        return failure('AbortError', 'the page cancelled the call (toolcancel) before it answered');
      }
      ({ result, asText } = outcome);
    } finally {
      active.delete(entry);
      if (running.get(call) === entry) running.delete(call);
    }
    if (result === null) return { ok: true, result: null, url: location.href };
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return asText ? { ok: true, result: text, input: 'text' } : { ok: true, result: text };
  };

  // The result of this document, when a call loaded it (a navigation's destination, a frame a
  // form targeted): its JSON-LD, title and main text, read here once it has loaded (never by
  // page script), capped; the worker caps again.
  const RESULT_SCRIPTS = 16;
  const RESULT_JSON_LD_CHARS = 64 * 1024;
  const RESULT_TEXT_CHARS = 2000;
  // A crawl's sitemap, fetched from this page's own origin only (with its cookies, as the page
  // would), its text cut at 1 MiB; a sitemap elsewhere, or a redirect, is refused.
  const SITEMAP_BYTES = 1024 * 1024;
  const readSitemap = async (url) => {
    let target;
    try {
      target = new URL(String(url), location.href);
    } catch {
      return failure('TypeError', 'the sitemap is not a URL');
    }
    if (target.origin !== location.origin) return failure('SecurityError', `the sitemap is not on ${location.origin}`);
    try {
      const response = await fetch(target.href, { credentials: 'same-origin', redirect: 'error', cache: 'no-store' });
      if (!response.ok) return failure('NetworkError', `${target.pathname} answered ${response.status}`);
      const text = await response.text();
      return { ok: true, text: text.slice(0, SITEMAP_BYTES), truncated: text.length > SITEMAP_BYTES };
    } catch (error) {
      return failure('NetworkError', `${target.pathname} could not be read: ${String(error?.message ?? error)}`);
    }
  };

  // The final state of this document for an eval's DOM assertions, read here (never by page
  // script) through the prototypes' own methods, as `attr` does: a page can shadow
  // `document.querySelectorAll` with a named element, and an element's methods and
  // `textContent` with a form control's name. Each result: how many elements matched and, of
  // the first, its text (trimmed, as webmcp-evals reads it, cut at 2000 characters) and the attribute asked.
  const DOM_QUERIES = 64;
  const SELECTOR_CHARS = 1000;
  const DOM_TEXT_CHARS = 2000;
  const textContent = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent').get;
  const queryOne = (query) => {
    const selector = query?.selector;
    if (typeof selector !== 'string' || selector.length > SELECTOR_CHARS) {
      return { error: `the selector is not a string of at most ${SELECTOR_CHARS} characters` };
    }
    let matches;
    try {
      matches = Document.prototype.querySelectorAll.call(document, selector);
    } catch (error) {
      return { error: `invalid selector: ${String(error?.message ?? error)}`.slice(0, 300) };
    }
    const count = matches.length;
    if (count === 0) return { count };
    const first = matches[0];
    const text = String(textContent.call(first) ?? '').trim().slice(0, DOM_TEXT_CHARS);
    const result = { count, text };
    const name = query.attribute;
    if (typeof name === 'string') {
      const value = attr(first, name);
      if (value !== null) result.attribute = value.slice(0, DOM_TEXT_CHARS);
    }
    return result;
  };
  const queryDom = (queries) => {
    if (!Array.isArray(queries) || queries.length > DOM_QUERIES) {
      return failure('TypeError', `queryDom needs an array of at most ${DOM_QUERIES} queries`);
    }
    return { ok: true, results: queries.map(queryOne) };
  };

  const readResult = async () => {
    if (document.readyState !== 'complete') {
      await new Promise((resolve) => {
        window.addEventListener('load', resolve, { once: true });
        setTimeout(resolve, 2500);
      });
    }
    const jsonLd = [];
    let skipped = 0;
    let chars = 0;
    const scripts = Array.from(document.querySelectorAll('script[type="application/ld+json" i]'));
    skipped += Math.max(0, scripts.length - RESULT_SCRIPTS);
    for (const script of scripts.slice(0, RESULT_SCRIPTS)) {
      const text = String(script.textContent ?? '');
      if (chars + text.length > RESULT_JSON_LD_CHARS) {
        skipped += 1;
        continue;
      }
      try {
        jsonLd.push(JSON.parse(text));
        chars += text.length;
      } catch {
        skipped += 1;
      }
    }
    const main = document.querySelector('main') ?? document.body;
    const text = String(main?.innerText ?? '').replace(/\s+/g, ' ').trim().slice(0, RESULT_TEXT_CHARS);
    return { ok: true, url: location.href, title: String(document.title ?? '').slice(0, 200), jsonLd, skipped, text };
  };

  // What the worker's diagnosis of the tab needs ("why no tools?"): facts only, the worker
  // decides what they mean.
  const diagnose = async () => {
    const policy = document.featurePolicy;
    let toolsAllowed = null;
    try {
      if (policy?.features?.().includes('tools')) toolsAllowed = policy.allowsFeature('tools');
    } catch {
      toolsAllowed = null;
    }
    let polyfill = false;
    let polyfillName = '';
    if (!modelContext() && main.paired) {
      const answer = await main.ask({ op: 'listTools' });
      polyfill = answer?.supported === true;
      if (polyfill && typeof answer.polyfill === 'string') polyfillName = answer.polyfill;
    }
    const frames = Array.from(document.querySelectorAll('iframe'), (frame) => ({
      src: String(frame.src ?? ''),
      allow: String(frame.getAttribute('allow') ?? ''),
    })).slice(0, 100);
    return {
      ok: true,
      facts: {
        url: location.href,
        title: String(document.title ?? '').slice(0, 200),
        native: modelContext() !== null,
        polyfill,
        polyfillName,
        polyfillScript: document.querySelector('script[src*="webmcp-polyfill"], script[src*="mcp-b"]') !== null,
        toolsAllowed,
        documentDomain: document.domain !== location.hostname,
        frames,
        userAgent: navigator.userAgent,
        originTrialTokens: Array.from(document.querySelectorAll('meta[http-equiv="origin-trial" i]'), (meta) => String(meta.content ?? '').slice(0, 4096)).slice(0, 20),
        originAgentCluster: typeof window.originAgentCluster === 'boolean' ? window.originAgentCluster : null,
      },
    };
  };

  const handle = async (message) => {
    switch (message.op) {
      case 'diagnose':
        return diagnose();
      case 'listTools':
        return listTools();
      case 'callTool':
        if (typeof message.name !== 'string' || !message.args || typeof message.args !== 'object') {
          return failure('TypeError', 'callTool needs a name and an object of arguments');
        }
        return callTool(message.name, message.args, message.confirm, message.call, message.within, message.version);
      case 'cancel':
        return typeof message.call === 'string' ? cancel(message.call) : failure('TypeError', 'cancel needs a call');
      case 'readResult':
        return readResult();
      case 'readSitemap':
        return readSitemap(message.url);
      case 'queryDom':
        return queryDom(message.queries);
      case 'watch':
        // The page's requests during an audit probe: only the MAIN-world companion sees them.
        if (!main.paired) return failure('NotSupportedError', 'this frame cannot watch its requests');
        return main.ask({ op: 'watch', on: message.on === true });
      default:
        return failure('NotSupportedError', `unknown op "${String(message.op)}"`);
    }
  };

  // A page that adds or removes tools tells the person's side, at most every 250 ms. The
  // notice carries nothing from the page: the worker lists again if anyone is looking.
  let noticeTimer = null;
  const toolsChanged = () => {
    if (noticeTimer !== null) return;
    noticeTimer = setTimeout(() => {
      noticeTimer = null;
      if (!chrome.runtime?.id) return; // orphaned by an extension reload
      chrome.runtime.sendMessage({ [KEY]: VERSION, op: 'toolsChanged' }).catch(() => {});
    }, 250);
  };
  // On `document.modelContext` from Chrome 156, on `window` before.
  modelContext()?.addEventListener?.('toolchange', toolsChanged);
  window.addEventListener('toolchange', toolsChanged);
  document.addEventListener(`webmcp-host:${main.secret}:toolchange`, toolsChanged, true);

  // A listing (hundreds of tools, each with its schema) goes as its JSON text: one string
  // crosses to the worker faster than the objects, and the worker reads JSON text anyway.
  const answer = (message) =>
    handle(message).then(
      (reply) => (message.op === 'listTools' ? JSON.stringify(reply) : reply),
      (error) => failure(String(error?.name ?? 'Error'), String(error?.message ?? error)),
    );
  // Only this extension's worker (no tab) may ask; other messages are not ours to answer.
  const fromWorker = (sender) => sender?.id === chrome.runtime.id && !sender.tab;
  const ours = (message) => message && typeof message === 'object' && message[KEY] === VERSION;

  // The worker's channel, and the only one this bridge hears: a port the worker opens to this
  // frame and keeps (src/shell/frames.js), each request `{id, message}` answered
  // `{id, answer}`, in any order.
  chrome.runtime.onConnect.addListener((port) => {
    if (port.name !== 'webmcp-host-bridge') return;
    if (!fromWorker(port.sender)) {
      port.disconnect();
      return;
    }
    let open = true;
    port.onDisconnect.addListener(() => {
      open = false;
    });
    port.onMessage.addListener((request) => {
      const id = request?.id;
      if (typeof id !== 'number') return;
      const reply = ours(request.message)
        ? answer(request.message)
        : Promise.resolve(failure('TypeError', 'not a request of the page bridge'));
      reply.then((value) => {
        if (!open) return; // the worker stopped, or this document is going away
        try {
          port.postMessage({ id, answer: value });
        } catch {
          // disconnected meanwhile
        }
      });
    });
  });
})();
