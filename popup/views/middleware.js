// The global middleware layers (Servers view): the declarative layers every run wraps its tool
// calls in (observe, redact, block, fail, delay), edited as JSON and saved with `configure`.
// Invariant: the worker checks and keeps the layers; a refused list is shown with the worker's
// error and nothing changes.

import { $, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';
import { loadSettings } from '../settings.js';

export function renderMiddleware() {
  const layers = state.settings?.middleware ?? [];
  if (document.activeElement !== $('middleware')) $('middleware').value = JSON.stringify(layers, null, 2);
}

export async function saveMiddleware(event) {
  event.preventDefault();
  let layers;
  try {
    const text = $('middleware').value.trim();
    layers = text ? JSON.parse(text) : null;
  } catch (error) {
    return say('middleware-status', `Not JSON: ${errorText(error)}`, true);
  }
  try {
    await call('configure', { middleware: layers });
    await loadSettings();
    const count = Array.isArray(layers) ? layers.length : 0;
    say('middleware-status', `Saved: ${count} layer${count === 1 ? '' : 's'} around every tool call of every run.`);
  } catch (error) {
    say('middleware-status', errorText(error), true);
  }
}
