// The Models view: the models and the default, presets to fill the form, "Test connection".
// Invariant: the worker keeps and checks the models (`configure`, `testModel`); names and its
// reports are set only through textContent; nothing remote is loaded.

import { $, button, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { loadSettings } from '../settings.js';
import { state } from '../state.js';

export function renderModels() {
  const { models, presets } = state.settings;
  const presetSelect = $('model-preset');
  if (presetSelect.options.length === 0) {
    const none = element('option', '', 'Choose a preset…');
    none.value = '';
    presetSelect.append(none, ...presets.map((p) => Object.assign(element('option', '', p.label), { value: p.id })));
  }
  $('models').replaceChildren(
    ...models.map((model) => {
      const li = element('li', 'card');
      li.dataset.model = model.name;
      const title = element('div');
      title.append(element('span', 'tool-name', model.name));
      if (model.name === state.settings.default) title.append(element('span', 'hint', 'default'));
      li.append(title, element('div', 'tool-meta', `${model.provider} · ${model.model || '—'} · ${model.baseUrl || 'in the browser'}${model.keyRef ? ` · key ${model.keyRef}` : ''}`));
      const report = element('p', 'report muted');
      report.setAttribute('role', 'status');
      const actions = element('div', 'row');
      actions.append(
        button('Test connection', async () => {
          report.textContent = 'Testing…';
          try {
            const result = await call('testModel', { name: model.name });
            report.textContent = result.message;
            report.className = `report ${result.ok ? 'ok' : 'error'}`;
          } catch (error) {
            report.textContent = errorText(error);
            report.className = 'report error';
          }
        }),
        button('Edit', () => editModel(model)),
        button('Make default', () => saveRegistry(models, model.name)),
        button('Remove', () => saveRegistry(models.filter((m) => m !== model), state.settings.default === model.name ? null : state.settings.default)),
      );
      li.append(actions, report);
      return li;
    }),
  );
}

function editModel(model) {
  $('model-name').value = model.name;
  $('model-provider').value = model.provider;
  $('model-base').value = model.baseUrl ?? '';
  $('model-id').value = model.model ?? '';
  $('model-key').value = model.keyRef ?? '';
  $('model-native').checked = !!model.nativeTools;
  $('model-default').checked = state.settings.default === model.name;
  $('model-name').focus();
}

export function applyPreset() {
  const preset = state.settings.presets.find((p) => p.id === $('model-preset').value);
  if (!preset) return;
  $('model-provider').value = preset.provider;
  $('model-base').value = preset.baseUrl;
  $('model-id').value = preset.model;
  $('model-native').checked = preset.nativeTools;
  if (!$('model-name').value) $('model-name').value = preset.id;
  if (preset.needsKey && !$('model-key').value) $('model-key').value = preset.id;
  if (!preset.needsKey) $('model-key').value = '';
}

async function saveRegistry(models, defaultName) {
  try {
    await call('configure', { models, default: defaultName ?? null });
    say('models-status', 'Saved.');
    await loadSettings();
  } catch (error) {
    say('models-status', errorText(error), true);
  }
}

export async function submitModel(event) {
  event.preventDefault();
  const model = {
    name: $('model-name').value.trim(),
    provider: $('model-provider').value,
    baseUrl: $('model-base').value.trim(),
    model: $('model-id').value.trim(),
    nativeTools: $('model-native').checked,
  };
  const keyRef = $('model-key').value.trim();
  if (keyRef) model.keyRef = keyRef;
  const models = state.settings.models.filter((m) => m.name !== model.name).concat(model);
  const makeDefault = $('model-default').checked || !state.settings.default;
  await saveRegistry(models, makeDefault ? model.name : state.settings.default);
}
