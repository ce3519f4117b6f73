// A form generated from a JSON Schema (a tool's input schema): strings (format and pattern
// shown), numbers and integers (bounds), booleans, enums, arrays (items added and removed),
// nested objects, required marks, defaults and each property's description. Each field sits in
// an element whose `data-path` is its JSON pointer, so that the host's validation errors show at
// their field. Invariant: it only collects what the person typed (a number field that does not
// read as a number gives its text, for the host to reject); the host validates; every text from
// the schema is set with textContent.

import { button, element } from '../dom.js';

/**
 * The most fields one form builds (`max_form_fields`): a schema, a page's or a server's, that
 * would make more (an array whose `default` nests arrays with defaults of their own grows as a
 * power of its depth) throws `FormTooLarge`, and the Call view falls back to the JSON editor.
 */
export const MAX_FORM_FIELDS = 2000;

/** A form past `MAX_FORM_FIELDS`. */
export class FormTooLarge extends Error {}

// Fields the form being built may still make (Infinity: no build under way), and whether
// fields take their schema's `default` (not when a value is written over them at once).
let left = Infinity;
let defaults = true;
const spend = () => {
  left -= 1;
  if (left < 0) throw new FormTooLarge(`the schema makes a form of more than ${MAX_FORM_FIELDS} fields (max_form_fields)`);
};
/** `build()` within a fresh budget of fields. */
const bounded = (build) => {
  if (left !== Infinity) return build();
  left = MAX_FORM_FIELDS;
  try {
    return build();
  } finally {
    left = Infinity;
  }
};
/** `build()` with the schema's defaults applied or not. */
const withDefaults = (apply, build) => {
  const was = defaults;
  defaults = was && apply;
  try {
    return build();
  } finally {
    defaults = was;
  }
};
const defaultOf = (schema) => (defaults ? schema.default : undefined);

let serial = 0;
const nextId = () => `f${++serial}`;

const escapePointer = (key) => String(key).replaceAll('~', '~0').replaceAll('/', '~1');
const typeOf = (schema) => (Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type);

/** A number as typed: a number when it reads as one, else the text itself (`''`: unset). */
function readNumber(text) {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const number = Number(trimmed);
  return Number.isFinite(number) && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? number : trimmed;
}

function hintOf(schema) {
  const parts = [];
  if (schema.format) parts.push(`format: ${schema.format}`);
  if (schema.pattern) parts.push(`pattern: ${schema.pattern}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.exclusiveMaximum !== undefined) parts.push(`< ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  return parts.join(' · ');
}

/** The label, required mark, description, hint and error slot of a field, around `control`. */
function wrap(path, label, schema, required, control, id) {
  const box = element('div', 'field');
  box.dataset.path = path;
  const head = element('label', 'field-label');
  head.htmlFor = id;
  head.append(element('span', '', label));
  if (required) {
    const mark = element('span', 'required', ' *');
    mark.title = 'required';
    head.append(mark);
  }
  const type = typeOf(schema) ?? (schema.enum ? 'enum' : 'any');
  head.append(element('span', 'muted field-type', ` ${schema.format ? `${type}, ${schema.format}` : type}`));
  box.append(head, control);
  const described = [];
  if (schema.description) {
    const note = element('p', 'field-desc', schema.description);
    note.id = `${id}-desc`;
    described.push(note.id);
    box.append(note);
  }
  const hint = hintOf(schema);
  if (hint) {
    const note = element('p', 'field-hint muted', hint);
    note.id = `${id}-hint`;
    described.push(note.id);
    box.append(note);
  }
  const error = element('p', 'field-error');
  error.id = `${id}-error`;
  error.setAttribute('role', 'alert');
  described.push(error.id);
  box.append(error);
  const focusable = control.matches?.('input, select, textarea') ? control : null;
  if (focusable) {
    focusable.setAttribute('aria-describedby', described.join(' '));
    if (required) focusable.setAttribute('aria-required', 'true');
  }
  return box;
}

/**
 * A field for `schema` at `path` (a JSON pointer). Returns `{node, read(), write(value)}`:
 * `read()` gives the value or `undefined` (unset), `write(value)` shows a value.
 */
export function field(schema, path, label, required, onChange) {
  spend();
  schema = schema && typeof schema === 'object' ? schema : {};
  const id = nextId();
  const type = typeOf(schema);
  if (Array.isArray(schema.enum)) {
    const select = element('select');
    select.id = id;
    select.append(Object.assign(element('option', '', required ? '— choose —' : '— unset —'), { value: '' }));
    // A string is shown as it reads ("S", not "\"S\""), unless it could be taken for another
    // option (`"1"` beside `1`, or the empty string): then as JSON, as every other value is.
    const literals = new Set(schema.enum.filter((v) => typeof v !== 'string').map((v) => JSON.stringify(v)));
    const shown = (value) => (typeof value === 'string' && value !== '' && !literals.has(value) ? value : JSON.stringify(value));
    schema.enum.forEach((value, index) => {
      const option = element('option', '', shown(value));
      option.value = String(index);
      select.append(option);
    });
    select.addEventListener('change', onChange);
    const write = (value) => {
      const at = schema.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
      select.value = at < 0 ? '' : String(at);
    };
    if (defaultOf(schema) !== undefined) write(defaultOf(schema));
    return { node: wrap(path, label, schema, required, select, id), read: () => (select.value === '' ? undefined : schema.enum[Number(select.value)]), write };
  }
  if (type === 'boolean') {
    const input = element('input');
    input.type = 'checkbox';
    input.id = id;
    let touched = defaultOf(schema) !== undefined;
    input.checked = defaultOf(schema) === true;
    input.addEventListener('change', () => {
      touched = true;
      onChange();
    });
    const write = (value) => {
      touched = value !== undefined;
      input.checked = value === true;
    };
    return { node: wrap(path, label, schema, required, input, id), read: () => (touched || required ? input.checked : undefined), write };
  }
  if (type === 'object' || (schema.properties && !type)) return objectField(schema, path, label, required, onChange, id);
  if (type === 'array') return arrayField(schema, path, label, required, onChange, id);
  if (type === 'string' || type === 'number' || type === 'integer') {
    const input = element('input');
    input.id = id;
    input.type = 'text';
    input.autocomplete = 'off';
    if (type !== 'string') input.inputMode = type === 'integer' ? 'numeric' : 'decimal';
    if (schema.format === 'email') input.inputMode = 'email';
    if (defaultOf(schema) !== undefined) input.value = String(defaultOf(schema));
    if (schema.examples?.[0] !== undefined) input.placeholder = String(schema.examples[0]);
    input.addEventListener('input', onChange);
    const read = () => (type === 'string' ? (input.value === '' ? undefined : input.value) : readNumber(input.value));
    const write = (value) => {
      input.value = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    };
    return { node: wrap(path, label, schema, required, input, id), read, write };
  }
  // Anything else (no type, oneOf, null): its value as JSON.
  const area = element('textarea', 'json-field');
  area.id = id;
  area.rows = 2;
  area.spellcheck = false;
  if (defaultOf(schema) !== undefined) area.value = JSON.stringify(defaultOf(schema));
  area.addEventListener('input', onChange);
  const read = () => {
    if (area.value.trim() === '') return undefined;
    try {
      return JSON.parse(area.value);
    } catch {
      return area.value;
    }
  };
  const write = (value) => {
    area.value = value === undefined ? '' : JSON.stringify(value);
  };
  return { node: wrap(path, label, schema, required, area, id), read, write };
}

/** The fieldset of an object or array field: its legend (required marked), its description, and its error slot (placed by the caller). */
function fieldset(kind, schema, path, label, required, id) {
  const box = element('fieldset', `field ${kind}-field`);
  box.dataset.path = path;
  box.id = id;
  const legend = element('legend', '', label);
  if (required) legend.append(element('span', 'required', ' *'));
  box.append(legend);
  if (schema.description) box.append(element('p', 'field-desc', schema.description));
  const error = element('p', 'field-error');
  error.setAttribute('role', 'alert');
  return { box, error };
}

function objectField(schema, path, label, required, onChange, id) {
  const { box, error } = fieldset('object', schema, path, label, required, id);
  box.append(error);
  const needed = new Set(Array.isArray(schema.required) ? schema.required : []);
  // Its own default is written over its fields at once: they are built without theirs.
  const own = defaultOf(schema);
  const children = withDefaults(!(own && typeof own === 'object'), () =>
    Object.entries(schema.properties ?? {}).map(([key, sub]) => {
      const child = field(sub, `${path}/${escapePointer(key)}`, key, needed.has(key), onChange);
      box.append(child.node);
      return [key, child];
    }),
  );
  const read = () => {
    const out = {};
    for (const [key, child] of children) {
      const value = child.read();
      if (value !== undefined) out[key] = value;
    }
    return Object.keys(out).length === 0 && !required && path !== '' ? undefined : out;
  };
  const write = (value) => {
    for (const [key, child] of children) child.write(value && typeof value === 'object' ? value[key] : undefined);
  };
  if (own && typeof own === 'object') write(own);
  return { node: box, read, write };
}

function arrayField(schema, path, label, required, onChange, id) {
  const { box, error } = fieldset('array', schema, path, label, required, id);
  const hint = hintOf(schema);
  if (hint) box.append(element('p', 'field-hint muted', hint));
  const list = element('ol', 'array-items');
  let items = [];
  let touched = defaultOf(schema) !== undefined;
  const renumber = () => {
    items.forEach((item, index) => {
      item.row.dataset.index = String(index);
    });
  };
  const add = (value) => {
    const index = items.length;
    // An item built for a value is built from that value only, not from its schema's defaults.
    const child = withDefaults(value === undefined, () => field(schema.items ?? {}, `${path}/${index}`, `${label} ${index + 1}`, true, onChange));
    const row = element('li', 'array-item');
    const item = { child, row };
    const remove = button('Remove', () => {
      items = items.filter((i) => i !== item);
      row.remove();
      rebuild(items.map((i) => i.child.read()));
      onChange();
    }, 'small');
    remove.setAttribute('aria-label', `Remove ${label} ${index + 1}`);
    row.append(child.node, remove);
    list.append(row);
    items.push(item);
    if (value !== undefined) child.write(value);
    renumber();
    return item;
  };
  const rebuild = (values) => {
    list.replaceChildren();
    items = [];
    for (const value of values) add(value);
  };
  const addButton = button(`Add ${label} item`, () => {
    touched = true;
    let item;
    try {
      item = bounded(() => add(undefined));
    } catch (failure) {
      if (!(failure instanceof FormTooLarge)) throw failure;
      error.textContent = `Not added: ${failure.message}; write this item in the JSON editor.`;
      return;
    }
    item.child.node.querySelector('input, select, textarea')?.focus();
    onChange();
  }, 'small');
  box.append(list, addButton, error);
  const read = () => {
    if (!touched && !required && items.length === 0) return undefined;
    return items.map((i) => i.child.read() ?? null);
  };
  const write = (value) => {
    touched = Array.isArray(value);
    rebuild(Array.isArray(value) ? value : []);
  };
  if (Array.isArray(defaultOf(schema))) rebuild(defaultOf(schema));
  return { node: box, read, write };
}

/**
 * The form of a tool's input schema: `{node, read(), write(args), showErrors(errors)}`. Throws
 * `FormTooLarge` for a schema whose form (defaults included) would pass `MAX_FORM_FIELDS`;
 * `write` throws it too for a value that would.
 */
export function schemaForm(schema, onChange) {
  const root = bounded(() => field(schema?.type ? schema : { type: 'object', ...schema }, '', 'Arguments', true, onChange));
  const showErrors = (errors) => {
    for (const slot of root.node.querySelectorAll('.field-error')) slot.textContent = '';
    for (const marked of root.node.querySelectorAll('[aria-invalid]')) marked.removeAttribute('aria-invalid');
    for (const box of root.node.querySelectorAll('.invalid')) box.classList.remove('invalid');
    const unplaced = [];
    for (const error of errors) {
      // The deepest field that holds the path (an error of a missing nested field shows at it,
      // or at its nearest field that the form has).
      let path = error.path;
      let box = null;
      while (true) {
        box = [...root.node.querySelectorAll('[data-path]'), root.node].find((b) => b.dataset.path === path) ?? null;
        if (box || path === '') break;
        path = path.slice(0, path.lastIndexOf('/'));
      }
      if (!box) {
        unplaced.push(error);
        continue;
      }
      box.classList.add('invalid');
      const slot = [...box.children].find((c) => c.classList.contains('field-error'));
      const text = error.path === path ? error.message : `${error.path}: ${error.message}`;
      if (slot) slot.textContent = slot.textContent ? `${slot.textContent}; ${text}` : text;
      if (box.tagName !== 'FIELDSET') box.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
    }
    return unplaced;
  };
  return { node: root.node, read: () => root.read() ?? {}, write: (value) => bounded(() => root.write(value)), showErrors };
}
