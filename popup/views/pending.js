// The Pending view: the items waiting for the person, visitor inputs (answered or declined) and
// confirmations of MCP calls (of runs, calls by hand, and pages' calls of exposed tools: never
// asked in the tab, whose renderer a hostile site may control). Invariant: names, questions and arguments
// are set only through textContent; nothing remote is loaded; the worker decides what waits and
// what an answer does. Headings are the host's words: a confirmation shows the worker's question
// (every argument, escaped and capped; none when it cannot be shown, and then it can only be
// declined), and ask_person's question is shown as the agent's, with a warning against secrets.

import { $, button, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { state, SURFACE } from '../state.js';
import { ASK_PERSON } from './run.js';

/** Who asks, from the id the worker gave the wait: a run, a call by hand, or a page's call of an exposed tool. */
function askedBy(runId) {
  if (runId.startsWith('manual-')) return 'a call by hand';
  if (runId.startsWith('exposed_')) return 'a page calling an MCP tool exposed to it';
  return `run ${runId}`;
}

function renderPending() {
  const items = state.pending;
  $('pending-count').textContent = items.length ? String(items.length) : '';
  $('pending-empty').hidden = items.length > 0;
  $('pending').replaceChildren(
    ...items.map((item) => {
      const li = element('li', `pending ${item.kind}`);
      li.dataset.callId = item.callId;
      li.dataset.kind = item.kind;
      const asks = item.kind === 'input' && item.name === ASK_PERSON.name && typeof item.args?.question === 'string';
      if (item.kind === 'confirmation') {
        li.append(element('p', 'pending-title', 'Allow this call?'));
        li.append(item.question
          ? element('pre', 'pending-question', item.question)
          : element('p', 'error', 'This call cannot be shown in full, so it can only be declined.'));
      } else if (asks) {
        li.append(element('p', 'pending-title', 'The agent asks you:'));
        li.append(element('blockquote', 'pending-question', item.args.question));
        li.append(element('p', 'pending-warning', 'Written by the agent, not by WebMCP Host or a site: never answer with a password, an API key or a one-time code.'));
      } else {
        li.append(element('p', 'pending-title', `The agent asks you to run “${item.name}”`));
        li.append(element('pre', 'pending-args', JSON.stringify(item.args, null, 2)));
      }
      li.append(element('p', 'muted', askedBy(item.runId)));
      // A page's further calls, refused while this question waits, are counted here.
      if (Number.isInteger(item.repeats) && item.repeats > 0) {
        const times = item.repeats === 1 ? 'once more' : `${item.repeats} more times`;
        li.append(element('p', 'pending-repeats', `The page called ${times} while this question waited; those calls were refused.`));
      }
      const actions = element('div', 'row');
      // An answer to what no longer waits (its run ended, the worker restarted) is an error:
      // said above the list, which is then read again.
      const done = (op, body) => async () => {
        let failure = '';
        try {
          await call(op, { runId: item.runId, callId: item.callId, ...body });
        } catch (error) {
          failure = errorText(error);
        }
        await refreshPending();
        say('pending-status', failure, Boolean(failure));
      };
      if (item.kind === 'input') {
        const id = `answer-${item.callId}`;
        const label = element('label', '', 'Your answer');
        label.htmlFor = id;
        const input = element('textarea');
        input.id = id;
        input.rows = 2;
        actions.append(
          button('Answer', async () => done('answer', { value: input.value })()),
          button('Decline', done('decline', {})),
        );
        li.append(label, input, actions);
      } else {
        if (item.question) actions.append(button('Allow', done('answer', { value: true })));
        actions.append(button('Decline', done('decline', {})));
        li.append(actions);
      }
      return li;
    }),
  );
}

export async function refreshPending() {
  try {
    state.pending = await call('pending');
    renderPending();
  } catch (error) {
    say('pending-empty', errorText(error), true);
  }
  closeWhenAnswered();
}

// The extension's window that asks the person (`?surface=window`) closes once nothing waits:
// after a short look, so that a question asked right after the last answer keeps it open.
let closing = null;
function closeWhenAnswered() {
  if (SURFACE !== 'window' || state.pending.length > 0 || closing) return;
  closing = setTimeout(async () => {
    closing = null;
    state.pending = await call('pending').catch(() => state.pending);
    if (state.pending.length === 0) window.close();
    else renderPending();
  }, 1500);
}
