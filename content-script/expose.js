// WebMCP Host: MCP tools the person exposed to this site, registered in the page's own
// WebMCP (`document.modelContext`), so that the browser's agents can call them.
//
// Isolated world, top frame only (it shares its content-script entry with isolated.js). At
// load it asks the worker which tools this page gets (`exposedTools`: the worker decides by
// the page's origin as Chrome reports it, never by anything this script says) and registers
// each with an AbortController; a call goes to the worker (`callExposed`), which confirms in
// the page when the tool needs it and runs it on the MCP server: its text is the result, an
// error is thrown. When the person switches an exposure on or off, the worker says `sync` and
// this script asks again: tools no longer given are unregistered (aborted), new ones added.
// Where the page has no WebMCP it does nothing at all.
(() => {
  'use strict';
  if (window !== window.top) return;
  const context = document.modelContext;
  if (!context || typeof context.registerTool !== 'function') return;

  const KEY = 'webmcpHostExpose';
  const VERSION = 1;
  // name → {controller, signature}
  const registered = new Map();
  // isolated.js (same world; the page cannot see this) leaves these out of the page's tools:
  // they are the host's own, and runs reach them as MCP tools already.
  globalThis.webmcpHostExposed = registered;

  const domReady = new Promise((resolve) => {
    if (document.readyState !== 'loading') resolve();
    else document.addEventListener('DOMContentLoaded', () => resolve(), { once: true });
  });

  const ask = async (message) => {
    try {
      return await chrome.runtime.sendMessage(message);
    } catch (error) {
      // The extension was reloaded or removed: this script is orphaned.
      return { ok: false, error: `the WebMCP Host extension did not answer (${error?.message ?? error})` };
    }
  };

  const execute = (name) => async (input) => {
    const args = input && typeof input === 'object' && !Array.isArray(input) ? input : {};
    const answer = await ask({ op: 'callExposed', name, args });
    if (answer?.ok === true && typeof answer.value === 'string') return answer.value;
    throw new Error(String(answer?.error ?? 'the host did not answer'));
  };

  const sync = async () => {
    const answer = await ask({ op: 'exposedTools' });
    if (answer?.ok !== true || !Array.isArray(answer.value)) return;
    await domReady;
    const wanted = new Map(answer.value.map((tool) => [tool.name, tool]));
    for (const [name, entry] of registered) {
      const now = wanted.get(name);
      if (!now || JSON.stringify(now) !== entry.signature) {
        entry.controller.abort();
        registered.delete(name);
      }
    }
    // Names the page registered itself stay the page's.
    let taken = new Set();
    try {
      taken = new Set(Array.from((await context.getTools()) ?? [], (tool) => tool.name));
    } catch {
      // No listing: registration below still refuses duplicates.
    }
    for (const tool of answer.value) {
      if (registered.has(tool.name) || taken.has(tool.name)) continue;
      const controller = new AbortController();
      try {
        context.registerTool(
          {
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
            annotations: tool.annotations,
            execute: execute(tool.name),
          },
          { signal: controller.signal },
        );
        registered.set(tool.name, { controller, signature: JSON.stringify(tool) });
      } catch (error) {
        console.warn(`WebMCP Host: the exposed tool "${tool.name}" was not registered: ${error?.message ?? error}`);
      }
    }
  };

  // One sync at a time, in order.
  let syncing = Promise.resolve();
  const resync = () => {
    syncing = syncing.then(sync, sync).catch(() => {});
    return syncing;
  };

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    // Only this extension's worker (no tab) may say so; other messages are not ours.
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    if (!message || typeof message !== 'object' || message[KEY] !== VERSION || message.op !== 'sync') return false;
    resync();
    sendResponse({ ok: true });
    return false;
  });

  resync();
})();
