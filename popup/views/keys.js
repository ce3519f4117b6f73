// The Keys view: the keys kept in the worker's session storage, shown masked, saved and cleared.
// Invariant: a key's value goes to the worker once and is never shown again (the worker answers
// only its masked form); text only through textContent; nothing remote is loaded.

import { $, button, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { loadSettings } from '../settings.js';
import { state } from '../state.js';

export function renderKeys() {
  $('keys').replaceChildren(
    ...state.settings.keys.map((key) => {
      const li = element('li', 'card key');
      li.dataset.key = key.ref;
      li.append(element('span', 'tool-name', key.ref), element('code', 'masked', key.masked));
      // Where the key is sent: only to the endpoints whose settings name it.
      const goes = key.goesTo ?? [];
      li.append(
        element('span', 'goes-to', goes.length ? `Sent to: ${goes.join('; ')}` : 'Sent nowhere: no setting names it.'),
      );
      li.append(
        button(`Clear`, async () => {
          await call('configure', { keys: { [key.ref]: null } });
          say('keys-status', `Cleared ${key.ref}.`);
          await loadSettings();
        }),
      );
      li.lastChild.setAttribute('aria-label', `Clear key ${key.ref}`);
      return li;
    }),
  );
}

export async function submitKey(event) {
  event.preventDefault();
  const ref = $('key-ref').value.trim();
  const value = $('key-value').value;
  $('key-value').value = '';
  try {
    await call('configure', { keys: { [ref]: value } });
    say('keys-status', `Saved ${ref} for this browser session.`);
    $('key-ref').value = '';
    await loadSettings();
  } catch (error) {
    say('keys-status', errorText(error), true);
  }
}
