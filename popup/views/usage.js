// The Run view's tokens and cost: the shown run's total from its last `webmcp_host.usage`
// event (the worker counts and prices every step), and its conversation's runs added up from
// the run list. Invariant: numbers shown as the worker reported them; "unknown" is never a 0.

import { $ } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

const number = (n) => Number(n).toLocaleString('en-US');

/** `$0.0123`: four significant digits under a cent, cents above. */
export function money(cost) {
  if (typeof cost !== 'number') return 'cost unknown (model not priced)';
  return cost >= 0.01 ? `$${cost.toFixed(2)}` : `$${cost.toPrecision(2)}`;
}

/** One line for a usage total: tokens in (cached), out, and cost. */
export function usageText(usage) {
  if (!usage || typeof usage.inputTokens !== 'number') return 'tokens unknown (the model reported none)';
  const cached = usage.cachedInputTokens ? ` (${number(usage.cachedInputTokens)} cached)` : '';
  const unknown = usage.unknownSteps ? ` · ${usage.unknownSteps} step(s) unknown` : '';
  return `${number(usage.inputTokens)} tokens in${cached} · ${number(usage.outputTokens)} out · ${money(usage.cost)}${unknown}`;
}

let summed = null; // the run whose conversation total is shown

export function renderUsage() {
  const last = state.log.events.findLast((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.usage');
  $('run-usage').textContent = last ? `This run: ${usageText(last.value?.run)}` : '';
  const run = state.log.run;
  if (!run || run.state === 'running' || summed === run.runId) return;
  summed = run.runId;
  renderConversation(run.threadId, run.runId);
}

async function renderConversation(threadId, runId) {
  const runs = (await call('runs', {}).catch(() => [])).filter((r) => r.threadId === threadId);
  if (summed !== runId) return;
  const known = runs.filter((r) => typeof r.usage?.inputTokens === 'number');
  const add = (key) => known.reduce((sum, r) => sum + (r.usage[key] ?? 0), 0);
  const priced = known.every((r) => typeof r.usage.cost === 'number');
  const total = known.length
    ? { inputTokens: add('inputTokens'), outputTokens: add('outputTokens'), cachedInputTokens: add('cachedInputTokens'), cost: priced ? add('cost') : null }
    : null;
  $('conversation-usage').textContent = runs.length > 1 ? `This conversation (${runs.length} runs): ${usageText(total)}` : '';
}
