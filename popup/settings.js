// The worker's settings (models, servers, keys, presets, servers' last checks) as this page shows
// them: loaded with `settings`, then handed to every view that renders them, in order.
// Invariant: the worker keeps and validates them; the views change them only through
// `configure`; nothing remote is loaded.

import { call } from './host.js';
import { state } from './state.js';

/** The renderers that show the settings, in the order they run after each load. */
const renderers = [];

/** Adds renderers to run, in order, each time the settings are loaded. */
export function onSettings(...render) {
  renderers.push(...render);
}

/** Loads the settings from the worker, then renders every view that shows them. */
export async function loadSettings() {
  state.settings = await call('settings');
  for (const render of renderers) render();
}
