// The conversation of the Run view: the earlier turns of the shown run's conversation (the
// person's prompts, the agent's answers, the calls it made), "New conversation", and "Continue"
// for a run a worker restart cut. The worker keeps the conversation; the next prompt continues
// it. Invariant: every text from a model, a page or a server is set with textContent; nothing
// remote is loaded; which messages and tools the model gets is the worker's decision.

import { $, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

/** What the Continue button asks when the prompt box is empty. */
export const CONTINUE_PROMPT =
  'Continue the task. Before you act again, check whether the calls marked as possibly run did run.';

function turnItem(message) {
  if (message.role === 'user') return element('li', 'turn user', message.content);
  if (message.role !== 'assistant') return null;
  const item = element('li', 'turn agent');
  if (message.content) item.append(element('div', '', message.content));
  for (const toolCall of message.toolCalls ?? []) {
    item.append(element('div', 'turn-call muted', `called ${toolCall.function.name}`));
  }
  return item.childNodes.length ? item : null;
}

/** Shows the earlier turns of the conversation `state.threadId` (those of the shown run are in the answer). */
export async function renderThread() {
  const threadId = state.threadId;
  if (!threadId) {
    $('thread').replaceChildren();
    $('thread-label').textContent = 'New conversation';
    return;
  }
  let shown;
  try {
    shown = await call('conversation', { threadId });
  } catch {
    // Not kept (yet, or any more): the next prompt starts it afresh under the same id.
    $('thread').replaceChildren();
    $('thread-label').textContent = 'New conversation';
    return;
  }
  if (threadId !== state.threadId) return;
  const own = state.runId ? `${state.runId}-` : null;
  const earlier = shown.messages.filter((m) => !own || !m.id.startsWith(own));
  $('thread').replaceChildren(...earlier.map(turnItem).filter(Boolean));
  const forked = shown.forkedFrom ? ' · carried over: the tools changed' : '';
  $('thread-label').textContent = `Conversation: ${shown.title || threadId} · ${shown.turns} turn${shown.turns === 1 ? '' : 's'}${forked}`;
}

/** Starts afresh: the next prompt begins a new conversation. */
export function newConversation() {
  state.threadId = null;
  state.runId = null;
  state.log = { runId: null, events: [], times: [], run: null };
  $('answer').replaceChildren();
  $('run-prompt').textContent = '';
  say('run-status', '');
  document.body.dataset.run = 'none';
  $('continue').hidden = true;
  renderThread();
}

/** The shown run's state, for the conversation: its thread (a new one when the tools changed) and Continue. */
export function followRun() {
  const run = state.log.run;
  if (!run) return;
  const changed = run.threadId !== state.threadId;
  state.threadId = run.threadId;
  $('run-prompt').textContent = run.prompt ?? '';
  $('continue').hidden = run.state !== 'interrupted';
  if (changed || run.state !== 'running') renderThread().catch((e) => say('run-status', errorText(e), true));
}
