// "Why no tools?": the host's diagnosis of the tab (`diagnose`), shown in the Run view when the
// tab has no tools and on demand: each finding with what to do. Invariant: the host decides the
// findings; this only shows them, as text.

import { $, element, errorText, say, withCode } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

/** Diagnoses the tab and shows the findings. */
export async function runDiagnosis() {
  if (typeof state.tabId !== 'number') return;
  $('diagnosis-box').hidden = false;
  say('diagnosis-status', 'Looking into this tab…');
  try {
    const diagnosis = await call('diagnose', { tabId: state.tabId });
    $('diagnosis').replaceChildren(
      ...diagnosis.findings.map((finding) => {
        const item = element('li', `finding ${finding.level}`);
        item.dataset.finding = finding.id;
        const head = element('div');
        head.append(element('span', `hint severity ${finding.level}`, finding.level), element('code', '', ` ${finding.id}`));
        item.append(head, withCode('p', '', finding.message), withCode('p', 'fix', `What to do: ${finding.fix}`));
        return item;
      }),
    );
    say('diagnosis-status', `${diagnosis.tools} tool${diagnosis.tools === 1 ? '' : 's'} shown${diagnosis.chromeVersion ? ` · Chrome ${diagnosis.chromeVersion}` : ''}`);
  } catch (error) {
    say('diagnosis-status', errorText(error), true);
  }
}
