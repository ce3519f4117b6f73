// The Servers view: the MCP servers (added, removed, enabled, checked), Context7, the host
// permission of each server's origin, and OAuth sign-in and sign-out with each server's state.
// Invariant: text from servers is set only through textContent; no token reaches this page;
// nothing remote is loaded; the worker connects, signs in and decides what a server may do.

import { $, button, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { loadSettings } from '../settings.js';
import { state } from '../state.js';

function serverState(server) {
  const known = state.settings.serverStates?.[server.name];
  if (!known) return 'not checked yet';
  const when = new Date(known.checkedMs).toLocaleTimeString();
  const protocol = known.protocol ? ` · MCP ${known.protocol}` : '';
  return known.ok ? `connected · ${known.tools} tools${protocol} · checked ${when}` : `error: ${known.error} · checked ${when}`;
}

export function renderServers() {
  const servers = state.settings.servers;
  $('context7').checked = servers.some((s) => s.url === state.settings.context7.url);
  $('servers').replaceChildren(
    ...servers.map((server) => {
      const li = element('li', 'card');
      li.dataset.server = server.name;
      const title = element('div');
      title.append(element('span', 'tool-name', server.name));
      if (server.trusted) title.append(element('span', 'hint consequential', 'trusted'));
      li.append(title);
      li.append(element('div', 'tool-meta', `${server.url}${server.namespace ? ` · ${server.namespace}__` : ''}${server.keyRef ? ` · key ${server.keyRef} in ${server.keyHeader}` : ''}`));
      const status = element('p', 'server-state', serverState(server));
      status.setAttribute('role', 'status');
      const enabledId = `enabled-${server.name}`;
      const enabled = element('input');
      enabled.type = 'checkbox';
      enabled.id = enabledId;
      enabled.checked = server.enabled !== false;
      enabled.addEventListener('change', () =>
        saveServers(servers.map((s) => (s === server ? { ...s, enabled: enabled.checked } : s))),
      );
      const label = element('label', 'check');
      label.append(enabled, document.createTextNode(' Enabled'));
      const actions = element('div', 'row');
      actions.append(
        label,
        button('Check', async () => {
          status.textContent = 'Checking…';
          try {
            await call('checkServer', { name: server.name });
          } catch (error) {
            status.textContent = errorText(error);
          }
          await loadSettings();
        }),
        button('Remove', () => saveServers(servers.filter((s) => s !== server))),
      );
      const access = element('p', 'server-access muted');
      access.dataset.origin = originPattern(server.url);
      // OAuth sign-in (MCP authorization): the state only, never a token.
      const auth = element('p', 'server-auth', 'Sign-in: …');
      auth.dataset.server = server.name;
      auth.setAttribute('role', 'status');
      const authActions = element('div', 'row');
      authActions.append(
        button('Sign in', async () => {
          auth.textContent = 'Signing in… (finish in the window the browser opens)';
          try {
            await call('signIn', { server: server.name });
          } catch (error) {
            auth.textContent = `Sign-in failed: ${errorText(error)}`;
            return;
          }
          await refreshAuth();
        }),
        button('Sign out', async () => {
          try {
            await call('signOut', { server: server.name });
          } catch (error) {
            auth.textContent = `Sign-out failed: ${errorText(error)}`;
            return;
          }
          await refreshAuth();
        }),
      );
      li.append(actions, status, access, auth, authActions);
      describeAccess(server.url, access);
      return li;
    }),
  );
  refreshAuth();
}

/** Each server's sign-in state, as `authState` reports it (no token ever reaches this page). */
async function refreshAuth() {
  let states = [];
  try {
    states = await call('authState');
  } catch (error) {
    for (const node of document.querySelectorAll('.server-auth')) node.textContent = `Sign-in: unknown (${errorText(error)})`;
    return;
  }
  for (const node of document.querySelectorAll('.server-auth')) {
    const known = states.find((s) => s.server === node.dataset.server);
    if (!known?.signedIn) {
      node.textContent = 'Not signed in (only needed when the server asks for it).';
      continue;
    }
    const until = known.expiresAtMs ? ` · token until ${new Date(known.expiresAtMs).toLocaleTimeString()}` : '';
    node.textContent = `Signed in${known.issuer ? ` at ${known.issuer}` : ''}${known.scope ? ` · scope ${known.scope}` : ''}${until}.`;
  }
}

/** The host permission pattern of a server's origin (any port). */
function originPattern(url) {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}/*`;
  } catch {
    return '';
  }
}

const CORS_NOTE = 'without it, requests rely on the server allowing this extension through CORS';

async function describeAccess(url, node) {
  const pattern = originPattern(url);
  if (!pattern) return;
  const granted = await chrome.permissions.contains({ origins: [pattern] }).catch(() => false);
  node.textContent = granted ? `Host access to ${pattern}: granted.` : `Host access to ${pattern}: not granted; ${CORS_NOTE}.`;
}

/** Asks for the server's origin (a prompt the person answers); never blocks saving it. */
async function requestAccess(url) {
  const pattern = originPattern(url);
  if (!pattern) return;
  let outcome;
  try {
    outcome = (await chrome.permissions.request({ origins: [pattern] }))
      ? `Host access to ${pattern} granted.`
      : `Host access to ${pattern} was not granted; ${CORS_NOTE}.`;
  } catch (error) {
    outcome = `Host access to ${pattern} could not be asked for (${errorText(error)}); ${CORS_NOTE}.`;
  }
  say('servers-status', outcome);
  for (const node of document.querySelectorAll('.server-access')) {
    if (node.dataset.origin === pattern) describeAccess(url, node);
  }
}

async function saveServers(servers) {
  try {
    await call('configure', { servers });
    await loadSettings();
    return true;
  } catch (error) {
    say('servers-status', errorText(error), true);
    return false;
  }
}

export async function submitServer(event) {
  event.preventDefault();
  const server = {
    name: $('server-name').value.trim(),
    url: $('server-url').value.trim(),
    trusted: $('server-trusted').checked,
    enabled: true,
  };
  const namespace = $('server-ns').value.trim();
  if (namespace) server.namespace = namespace;
  const keyRef = $('server-key').value.trim();
  if (keyRef) {
    server.keyRef = keyRef;
    server.keyHeader = $('server-header').value.trim() || 'authorization';
  }
  // Ask for the origin now, while the click still counts as the person's gesture; the
  // answer is reported when it comes (a test browser may never show the prompt).
  const asking = requestAccess(server.url);
  const servers = state.settings.servers.filter((s) => s.name !== server.name).concat(server);
  if (await saveServers(servers)) {
    say('servers-status', `Added ${server.name}. The browser asks you for access to ${originPattern(server.url)}; until you allow it, requests rely on the server allowing this extension through CORS.`);
    $('server-form').reset();
    $('server-header').value = 'authorization';
  }
  return asking;
}

export async function toggleContext7() {
  const preset = state.settings.context7;
  const key = $('context7-key').value;
  const others = state.settings.servers.filter((s) => s.url !== preset.url);
  if (!$('context7').checked) {
    await saveServers(others);
    return;
  }
  const server = key ? { ...state.settings.context7WithKey } : { ...preset };
  if (key) {
    await call('configure', { keys: { [server.keyRef]: key } });
    $('context7-key').value = '';
  }
  requestAccess(server.url);
  if (await saveServers(others.concat(server))) say('servers-status', 'Context7 added.');
}
