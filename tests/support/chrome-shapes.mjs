// Test-only shims of every WebMCP API shape Chrome shipped, installed where the content script
// reads `document.modelContext` (the extension's isolated world of a frame, through CDP, with
// `evaluateInIsolatedWorlds`). Debian's Chromium is 156; the other shapes are made from it. No
// part of this ships in the extension. docs/chrome-versions.md has the same table.
//
// | shape | getTools() gives                         | inputSchema  | executeTool input | outputSchema | events on         |
// |-------|------------------------------------------|--------------|-------------------|--------------|-------------------|
// | 154   | dictionaries, `window`                   | a JSON string| a JSON string     | no           | window            |
// | 155   | dictionaries, `window`                   | an object    | an object         | no           | window            |
// | 156   | dictionaries, `window` (this Chromium)   | an object    | an object         | no           | document.modelContext |
// | 159   | dictionaries, `window`                   | an object    | an object         | yes          | document.modelContext |
// | 160   | `Tool` objects: getters, no own properties, `source`, empty attributes `null`; executeTool takes only the very object listed | an object | an object | yes | document.modelContext |
//
// Chromium already lists, in a frame, the tools its same-origin frames registered (each with
// `window`, the registering frame); every shape keeps them, under `window` or `source`. This
// Chromium drops `outputSchema` at `registerTool`, so a page under test may declare its tools'
// output schemas in <script type="application/json" data-output-schemas>; the 159 and 160
// shapes read them back. The 154 shape refuses an object input with the words the content
// script listens for ("Failed to parse input arguments"), as the polyfills of that time did.

const SHAPES = {
  154: { stringSchema: true, stringInput: true, outputSchema: false, toolInterface: false, contextEvents: false },
  155: { stringSchema: false, stringInput: false, outputSchema: false, toolInterface: false, contextEvents: false },
  156: null,
  159: { stringSchema: false, stringInput: false, outputSchema: true, toolInterface: false, contextEvents: true },
  160: { stringSchema: false, stringInput: false, outputSchema: true, toolInterface: true, contextEvents: true },
};

/** Every shape, oldest first. */
export const SHAPE_NAMES = Object.keys(SHAPES);

/** The source of the shim of `shape` (`null` for 156, this Chromium's own). */
export const shapeShim = (shape) => {
  if (!(shape in SHAPES)) throw new Error(`no WebMCP shape ${shape}: ${SHAPE_NAMES.join(', ')}`);
  const config = SHAPES[shape];
  if (!config) return null;
  return String.raw`((config) => {
  const native = document.modelContext;
  if (!native || native.__shape) return 'already';
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
  const declared = (() => {
    try {
      return JSON.parse(document.querySelector('script[data-output-schemas]')?.textContent ?? '{}');
    } catch {
      return {};
    }
  })();
  const wrap = (dictionary) => {
    const { name, title, description, annotations } = dictionary;
    const source = dictionary.window ?? window;
    const schema = dictionary.inputSchema;
    const inputSchema = config.stringSchema && schema != null && typeof schema !== 'string' ? JSON.stringify(schema) : schema;
    const outputSchema = config.outputSchema ? dictionary.outputSchema ?? declared[name] ?? null : undefined;
    const parts = { name, title, description, inputSchema, outputSchema, annotations, source, dictionary };
    let tool;
    if (config.toolInterface) {
      tool = Object.create(Tool.prototype);
    } else {
      tool = { name, title, description, inputSchema, annotations, window: source };
      if (config.outputSchema) tool.outputSchema = outputSchema;
    }
    internal.set(tool, parts);
    return tool;
  };
  const shim = {
    __shape: config,
    async getTools() {
      return ((await native.getTools()) ?? []).map(wrap);
    },
    async executeTool(tool, input, options) {
      let found = internal.get(tool)?.dictionary;
      if (!found && config.toolInterface) throw new TypeError('executeTool: not a Tool that getTools() returned');
      if (!found) found = ((await native.getTools()) ?? []).find((t) => t.name === tool?.name);
      if (!found) throw new DOMException('no such tool', 'NotFoundError');
      if (config.stringInput) {
        if (typeof input !== 'string') throw new TypeError('Failed to parse input arguments: a JSON string is expected');
        input = JSON.parse(input);
      }
      return native.executeTool(found, input, options);
    },
    registerTool: (...a) => native.registerTool(...a),
  };
  if (config.contextEvents) {
    shim.addEventListener = (...a) => native.addEventListener(...a);
    shim.removeEventListener = (...a) => native.removeEventListener(...a);
  } else {
    // Up to Chrome 155 the events fired on window: this Chromium's are moved there.
    const kinds = { toolchange: Event, toolactivated: ToolActivatedEvent, toolcancel: ToolCancelEvent };
    for (const [type, Kind] of Object.entries(kinds)) {
      native.addEventListener(type, (event) => {
        event.stopImmediatePropagation();
        window.dispatchEvent(Kind === Event ? new Event(type) : new Kind(type, { toolName: event.toolName }));
      });
    }
  }
  Object.defineProperty(document, 'modelContext', { value: shim, configurable: true });
  return 'installed';
})(${JSON.stringify(config)})`;
};
