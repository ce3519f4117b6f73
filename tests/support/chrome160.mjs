// A test-only shim of Chrome 160's WebMCP shape, installed where the content script reads
// `document.modelContext` (the extension's isolated world of a frame, through CDP): `getTools()`
// returns objects of a `Tool` interface whose attributes are getters on its prototype (no own
// properties: `JSON.stringify(tool)` is `"{}"`, a spread copies nothing), `window` renamed
// `source`, empty attributes read as `null`, and `executeTool` accepts only the very object
// `getTools()` returned. No part of it ships in the extension.
//
// Chromium already lists, in a frame, the tools its same-origin frames registered (each with
// `window`, the registering frame); the shim keeps them, under `source`.

export const CHROME_160_SHIM = String.raw`(() => {
  const native = document.modelContext;
  if (!native || native.__chrome160) return 'already';
  const internal = new WeakMap();
  class Tool {
    get name() { return internal.get(this).name; }
    get title() { return internal.get(this).title || null; }
    get description() { return internal.get(this).description; }
    get inputSchema() { return internal.get(this).inputSchema ?? null; }
    get outputSchema() { return internal.get(this).outputSchema ?? null; }
    get annotations() { return internal.get(this).annotations ?? null; }
    get source() { return internal.get(this).source; }
    toJSON() { return {}; }
  }
  // Chrome 159 reads a tool's outputSchema back; this Chromium drops it at registerTool, so a
  // page under test may give it in <script type="application/json" data-output-schemas>.
  const declared = (() => {
    try {
      return JSON.parse(document.querySelector('script[data-output-schemas]')?.textContent ?? '{}');
    } catch {
      return {};
    }
  })();
  const wrap = (dictionary, context, source) => {
    const tool = Object.create(Tool.prototype);
    const { name, title, description, inputSchema, annotations } = dictionary;
    const outputSchema = dictionary.outputSchema ?? declared[name] ?? null;
    internal.set(tool, { name, title, description, inputSchema, outputSchema, annotations, source, context, dictionary });
    return tool;
  };
  const shim = {
    __chrome160: true,
    __native: native,
    // As Chromium lists them (a frame sees the tools its same-origin frames registered too),
    // each with the frame that registered it as \`source\` and no \`window\`.
    async getTools() {
      return ((await native.getTools()) ?? []).map((t) => wrap(t, native, t.window ?? window));
    },
    executeTool(tool, input, options) {
      const found = internal.get(tool);
      if (!found) throw new TypeError("executeTool: not a Tool that getTools() returned");
      return found.context.executeTool(found.dictionary, input, options);
    },
    addEventListener: (...a) => native.addEventListener(...a),
    removeEventListener: (...a) => native.removeEventListener(...a),
    registerTool: (...a) => native.registerTool(...a),
  };
  Object.defineProperty(document, 'modelContext', { value: shim, configurable: true });
  return 'installed';
})()`;
