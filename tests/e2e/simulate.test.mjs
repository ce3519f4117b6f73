// evaluate({mode: "simulate"}) in the extension, on Google's own example simulations.json files
// (webmcp-evals, copied unchanged in tests/fixtures/simulate/) run against fixture pages made from
// their demos' tools, with three scripted model endpoints: a user, the agent, a judge.
// Checked: a goal reached by two call sequences passes both times; a missed goal fails on the DOM
// assertion, or with the judge's reasoning; a judge that passes the agent's bare claim does not
// pass the case; a recorded failure replays to the same verdict with no model request; the files
// are written back unchanged; setup calls go through the gate; the DOM is read where the page
// cannot lie about it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { validateRunEvents } from '../agui/validate.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures');
const file = (name) => readFile(join(FIXTURES, 'simulate', `${name}.simulations.json`), 'utf8');
const call = (name, args = {}) => ({ calls: [{ name, arguments: args }] });
const say = (text) => ({ text });
const verdict = (passed, reasoning, evidence) => call('submit_result', { reasoning, evidence, passed });
const END = '[[END_CONVERSATION]]';

// The shopping file's two cases: a jacket (badge 1), a jacket and gloves (badge 2); each goal by
// a search (A) or by product pages (B).
const JACKET_A = [call('search_store', { query: 'leather jacket' }), call('add_search_result_to_cart', { identifier: 'leather jacket' }), say('Added the jacket.')];
const JACKET_B = [call('view_product', { slug: 'biker-leather-jacket' }), call('add_to_cart', { variations: [{ color: 'Black', quantity: 1 }] }), say('Added the jacket.')];
const BOTH_A = [
  call('search_store', { query: 'leather' }),
  call('add_search_result_to_cart', { identifier: 'jacket' }),
  call('add_search_result_to_cart', { identifier: 'gloves' }),
  say('Added both.'),
];
const BOTH_B = [
  call('view_product', { slug: 'biker-leather-jacket' }),
  call('add_to_cart', { variations: [{ color: 'Mahogany', quantity: 1 }] }),
  call('view_product', { slug: 'artisan-leather-gloves' }),
  call('add_to_cart', { variations: [{ color: 'Black', quantity: 1 }] }),
  say('Added both.'),
];

const PIZZA_AGENT = [
  // Case 1: the family pesto pizza, then its link.
  call('set_pizza_size', { number_of_persons: 5 }),
  call('set_pizza_style', { style: 'Pesto' }),
  call('toggle_layer', { layer: 'sauce-layer', action: 'add' }),
  call('toggle_layer', { layer: 'cheese-layer', action: 'add' }),
  call('add_topping', { topping: '🍄' }),
  call('add_topping', { topping: '🫑' }),
  call('share_pizza', {}),
  say('Your pesto pizza is ready; here is the link to share.'),
  // Case 2: the revised pizza.
  call('remove_topping', { topping: '🌽', all: true }),
  call('set_pizza_style', { style: 'BBQ' }),
  call('share_pizza', {}),
  say('Corn removed, BBQ style, and here is the new link.'),
];
const PIZZA_USER = [
  say('Pizza for five people: pesto, extra sauce and cheese, mushrooms and bell peppers. I need a link to send everyone.'),
  say(`Perfect, thanks!\n${END}`),
  say('Please take all the corn off my pizza, make it BBQ style, and give me a link.'),
  say(`Great.\n${END}`),
];

const HOTEL_AGENT = [
  // 1: Tokyo, the form opened but not filled.
  call('search_location', { query: 'Tokyo', checkin_date: '2027-04-12', nights: 3, adults: 2, kids: 1 }),
  call('filter_search_results', { max_price: 200, amenities: ['gym', 'breakfast'] }),
  call('view_hotel', { hotel_name_or_id: 'Metropolis Loft Hotel' }),
  call('start_booking', {}),
  say('Metropolis Loft Hotel fits; its booking form is open.'),
  // 2: Cleveland, the details opened.
  call('search_location', { query: 'Cleveland', checkin_date: '2027-06-18', nights: 4, adults: 2, kids: 2, pets: 1 }),
  call('filter_search_results', { max_price: 220, amenities: ['free parking', 'washer'] }),
  call('view_hotel', { hotel_name_or_id: 'cleveland-lakeside' }),
  say('Cleveland Lakeside Suites fits: $195, free parking, a washer, pets welcome.'),
  // 3: after the setup's Cleveland search, Tokyo.
  call('search_location', { query: 'Tokyo', checkin_date: '2027-09-03', nights: 2, adults: 1 }),
  call('reset_filters', {}),
  call('filter_search_results', { amenities: ['spa', 'dining'] }),
  call('lookup_amenity', { hotel_id: 'aurelian', amenity: 'late checkout' }),
  say('The Aurelian Shibuya has a spa and dining; late checkout is on request.'),
  // 4: Paris, nothing matches.
  call('search_location', { query: 'Paris' }),
  call('filter_search_results', { max_price: 200, amenities: ['breakfast', 'spa'] }),
  call('get_current_search_results', {}),
  say('No Paris hotel has breakfast and a spa for $200 or less.'),
];
const HOTEL_USER = [
  say('Three nights in Tokyo from 12 April 2027, two adults and a child; gym and breakfast, under $200.'),
  say(`I will fill it in myself, thanks.\n${END}`),
  say('Four nights in Cleveland from 18 June 2027, two adults, two kids and our dog, under $220 with parking and a washer.'),
  say(`Looks right, thanks.\n${END}`),
  say('A Paris hotel under $200 a night with breakfast and a spa, please.'),
  say(`Too bad, thanks.\n${END}`),
];

const SCENARIOS = {
  seqAB: { steps: [...JACKET_A, ...BOTH_B] },
  seqBA: { steps: [...JACKET_B, ...BOTH_A] },
  // The second case: only the jacket, so the badge says 1.
  short: { steps: [...JACKET_A, ...JACKET_B] },
  pizzaAgent: { steps: PIZZA_AGENT },
  pizzaUser: { steps: PIZZA_USER },
  pizzaJudge: {
    steps: [
      verdict(true, 'The pizza was built and shared.', ['share_pizza: Share URL']),
      verdict(false, 'The corn was removed, but the share link is the one of the old pizza.', ['share_pizza result lacks the BBQ state']),
    ],
  },
  hotelAgent: { steps: HOTEL_AGENT },
  hotelUser: { steps: HOTEL_USER },
  hotelJudge: {
    steps: [
      verdict(false, 'The form was opened but never populated with the guest details.', ['start_booking opened an empty form']),
      verdict(true, 'Cleveland Lakeside Suites was found and opened.', ['view_hotel: "name":"Cleveland Lakeside Suites","price":195']),
      verdict(true, 'The search moved to Tokyo and The Aurelian Shibuya was checked.', ['lookup_amenity: Late checkout until 14:00 on request']),
      verdict(true, 'No Paris hotel matches, and the agent said so.', ['get_current_search_results: count 0']),
    ],
  },
  claim: { steps: [say('Done! The jacket is in your bag.')], after: 'repeat' },
  // Its evidence quotes the jacket's add_to_cart result (a pass whose evidence the application
  // did not answer is overruled); with no call at all, it is overruled all the same.
  lenient: { steps: [verdict(true, 'The assistant says the jacket is in the bag.', ['add_to_cart: Biker Leather Jacket (Black) to the cart'])], after: 'repeat' },
  popupAgent: { steps: JACKET_B },
};

describe('simulate', () => {
  let server, models, host, page;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const model = (name, scenario) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${scenario}/v1`, model: 'openai-test', nativeTools: true, keyRef: 'k' });
  const requests = async () => (await (await fetch(`${models.url}/_requests`)).json()).length;
  const open = async (name) => {
    await page.goto(`${server.url}/simulate/${name}.html`);
    return host.tabIdOf(page);
  };

  before(async () => {
    server = await serve(FIXTURES);
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    await op('configure', {
      keys: { k: 'sk-test-simulate' },
      models: [
        model('seqAB', 'seqAB'),
        model('seqBA', 'seqBA'),
        model('short', 'short'),
        model('pizza', 'pizzaAgent'),
        model('pizzaUser', 'pizzaUser'),
        model('pizzaJudge', 'pizzaJudge'),
        model('hotel', 'hotelAgent'),
        model('hotelUser', 'hotelUser'),
        model('hotelJudge', 'hotelJudge'),
        model('claim', 'claim'),
        model('lenient', 'lenient'),
        model('popupAgent', 'popupAgent'),
      ],
      default: 'seqAB',
    });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test("Google's shopping file: each goal reached by two call sequences passes both times, and the file is written back unchanged", async () => {
    const text = await file('shopping');
    const tabId = await open('shopping');
    const answer = await op('evaluate', { tabId, simulations: text, mode: 'simulate', models: ['seqAB', 'seqBA'], reload: true });
    assert.equal(answer.mode, 'simulate');
    assert.deepEqual(answer.results.map((r) => [r.name, r.model, r.outcome]), [
      ['Find and add a leather jacket to the cart', 'seqAB', 'pass'],
      ['Find and add a leather jacket to the cart', 'seqBA', 'pass'],
      ['Add a leather jacket and matching gloves to the cart', 'seqAB', 'pass'],
      ['Add a leather jacket and matching gloves to the cart', 'seqBA', 'pass'],
    ], JSON.stringify(answer.results.map((r) => r.reason)));
    // Two different trajectories for one outcome.
    const names = (r) => r.conversation.turns[0].toolCalls.map((c) => c.functionName);
    assert.notDeepEqual(names(answer.results[0]), names(answer.results[1]));
    for (const r of answer.results) {
      assert.equal(r.conversation.endedBy, 'singleTurn');
      assert.deepEqual(r.assertionResults.map((a) => a.outcome), ['pass']);
      assert.equal(r.verdict, undefined, 'assertions alone: no judge');
    }
    assert.equal(answer.results[2].assertionResults[0].actual, '2');
    assert.deepEqual(JSON.parse(answer.simulations), JSON.parse(text));
    // The agent's runs are kept as this evaluation's, and their events pass AG-UI's validators.
    const log = await op('runLog', { runId: answer.results[0].conversation.turns[0].runId });
    assert.equal(log.summary?.eval?.model ?? 'seqAB', 'seqAB');
    const { ok, errors } = await validateRunEvents(log.events);
    assert.ok(ok, JSON.stringify(errors.slice(0, 3)));
  });

  test('a missed goal fails on its DOM assertion, with what the page showed', async () => {
    const tabId = await open('shopping');
    const answer = await op('evaluate', { tabId, simulations: await file('shopping'), mode: 'simulate', models: ['short'], reload: true });
    const [first, second] = answer.results;
    assert.equal(first.outcome, 'pass');
    assert.equal(second.outcome, 'fail');
    assert.equal(second.assertionResults[0].outcome, 'fail');
    assert.equal(second.assertionResults[0].expected, '2');
    assert.equal(second.assertionResults[0].actual, '1');
    assert.match(second.reason, /DOM \.cart-badge text: expected "2", got "1"/);
  });

  let pizza;
  test("Google's pizza file: a user model plays each scenario, the judge grades, a failure carries its reasoning", async () => {
    const text = await file('pizza-maker');
    const tabId = await open('pizza-maker');
    // Seven calls build and share the first pizza: past the default six, the share would not run,
    // and a pass resting on it would be overruled.
    pizza = await op('evaluate', { tabId, simulations: text, mode: 'simulate', models: ['pizza'], userModel: 'pizzaUser', judgeModel: 'pizzaJudge', reload: true, maxSteps: 10 });
    const [built, revised] = pizza.results;
    assert.equal(built.outcome, 'pass', JSON.stringify({ reason: built.reason, calls: built.conversation.turns.flatMap((t) => t.toolCalls) }));
    assert.equal(built.assertionResults.length, 6);
    assert.equal(built.conversation.endedBy, 'user');
    assert.equal(built.conversation.closingMessage, 'Perfect, thanks!');
    assert.equal(built.verdict.passed, true);
    assert.equal(built.userModel, 'pizzaUser');
    assert.equal(built.judgeModel, 'pizzaJudge');
    // The setup ran before the agent joined, through callTool's path.
    assert.equal(revised.setupCalls.length, 5);
    assert.ok(revised.setupCalls.every((c) => c.outcome === 'pass'), JSON.stringify(revised.setupCalls));
    assert.equal(revised.outcome, 'fail');
    assert.equal(revised.reason, 'The corn was removed, but the share link is the one of the old pizza.');
    assert.deepEqual(revised.verdict.evidence, ['share_pizza result lacks the BBQ state']);
    assert.deepEqual(JSON.parse(pizza.simulations), JSON.parse(text));
    // The user model saw no tool and never the success criteria; the judge saw them.
    const records = await (await fetch(`${models.url}/_requests`)).json();
    const userBodies = records.filter((r) => r.scenario.startsWith('pizzaUser')).map((r) => JSON.stringify(r.body));
    assert.equal(userBodies.length, 4);
    for (const body of userBodies) {
      assert.ok(!body.includes('"tools"'), 'the user model is offered no tool');
      assert.ok(!body.includes('Tool results must corroborate'), 'the user never sees the criteria');
    }
    const judgeBody = JSON.stringify(records.find((r) => r.scenario.startsWith('pizzaJudge')).body);
    assert.ok(judgeBody.includes('submit_result') && judgeBody.includes('Tool results are evidence'));
  });

  test('a recorded failure replays to the same verdict with no model request', async () => {
    const tabId = await open('pizza-maker');
    const before = await requests();
    const again = await op('evaluate', { tabId, simulations: await file('pizza-maker'), mode: 'simulate', replay: pizza, reload: true, maxSteps: 10 });
    assert.equal(await requests(), before, 'no model was asked');
    assert.deepEqual(again.results.map((r) => r.outcome), pizza.results.map((r) => r.outcome));
    const { durationMs: _a, ...replayed } = again.results[1].verdict;
    const { durationMs: _b, ...recorded } = pizza.results[1].verdict;
    assert.deepEqual(replayed, recorded);
    assert.ok(again.results.every((r) => r.replayed));
    // The calls were played on the page again: the DOM says so.
    assert.ok(again.results[0].assertionResults.every((a) => a.outcome === 'pass'));
  });

  test("Google's hotel file: judge-only cases, a setup before a direct message, and the file written back", async () => {
    const text = await file('hotel-chain');
    const tabId = await open('hotel-chain');
    const answer = await op('evaluate', { tabId, simulations: text, mode: 'simulate', models: ['hotel'], userModel: 'hotelUser', judgeModel: 'hotelJudge', reload: true, format: 'markdown' });
    assert.deepEqual(answer.results.map((r) => r.outcome), ['fail', 'pass', 'pass', 'pass'], JSON.stringify(answer.results.map((r) => r.error ?? r.reason)));
    assert.deepEqual(answer.results.map((r) => r.conversation.endedBy), ['user', 'user', 'singleTurn', 'user']);
    assert.deepEqual(answer.results[2].setupCalls.map((c) => [c.functionName, c.outcome]), [['search_location', 'pass'], ['filter_search_results', 'pass']]);
    assert.deepEqual(JSON.parse(answer.simulations), JSON.parse(text));
    assert.match(answer.report, /simulate/);
    assert.equal(answer.models.hotel['pass^k'], 0.75);
  });

  test("a judge that passes the agent's bare claim does not pass the case", async () => {
    const tabId = await open('shopping');
    const simulations = [{ name: 'claims only', userMessage: 'Put a leather jacket in my bag.', successCriteria: 'A leather jacket is in the bag.' }];
    const answer = await op('evaluate', { tabId, simulations, mode: 'simulate', models: ['claim'], judgeModel: 'lenient' });
    const [result] = answer.results;
    assert.equal(result.outcome, 'fail');
    assert.equal(result.verdict.passed, false);
    assert.match(result.verdict.overruled, /claims alone are not evidence/);
  });

  test('setup calls go through the gate: a block layer refuses them', async () => {
    const tabId = await open('pizza-maker');
    await op('configure', { middleware: [{ kind: 'block', tool: 'add_topping', reason: 'no toppings today' }] });
    try {
      const simulations = JSON.parse(await file('pizza-maker')).slice(1);
      const answer = await op('evaluate', { tabId, simulations, mode: 'simulate', models: ['pizza'], judgeModel: 'pizzaJudge', reload: true });
      const [result] = answer.results;
      assert.equal(result.outcome, 'error');
      assert.match(result.error, /setup call 4 \(add_topping\) failed: blocked: no toppings today/);
      assert.equal(result.conversation.turnsUsed, 0);
    } finally {
      await op('configure', { middleware: [] });
    }
  });

  test('the DOM is read by the content script: a page that lies to its own scripts does not fool an assertion', async () => {
    const tabId = await open('shopping');
    // The page's world rewrites what querySelectorAll and textContent say.
    await page.evaluate(() => {
      const badge = document.createElement('span');
      badge.className = 'cart-badge';
      badge.textContent = '7';
      document.body.append(badge);
      Document.prototype.querySelectorAll = () => [];
      Object.defineProperty(Node.prototype, 'textContent', { get: () => '2' });
    });
    const simulations = [{ name: 'lying page', userMessage: 'Hi', assertions: [{ type: 'dom', selector: '.cart-badge', expect: { text: '7' } }] }];
    const answer = await op('evaluate', { tabId, simulations, mode: 'simulate', models: ['claim'] });
    assert.equal(answer.results[0].outcome, 'pass', JSON.stringify(answer.results[0].assertionResults));
  });

  test("the popup's Evals view runs a simulations.json in simulate mode and shows the verdict, the DOM and the turns", async () => {
    const tabId = await open('shopping');
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=evals`);
    await popup.waitForSelector('body[data-state="ready"]');
    const simulations = [
      { name: 'one <b>jacket</b>', userMessage: 'A leather jacket in my bag, please.', successCriteria: 'A leather jacket is in the bag.', assertions: [{ type: 'dom', selector: '.cart-badge', expect: { text: '1' } }] },
    ];
    await popup.fill('#evals-file', JSON.stringify(simulations));
    await popup.selectOption('#evals-mode', 'simulate');
    await popup.selectOption('#evals-models', 'popupAgent');
    await popup.selectOption('#evals-judge-model', 'lenient');
    await popup.check('#evals-reload');
    await popup.click('#evals-run');
    await popup.waitForSelector('#evals-results li.eval-result');
    assert.equal(await popup.getAttribute('#evals-results li.eval-result', 'data-outcome'), 'pass');
    const text = await popup.textContent('#evals-results');
    assert.match(text, /Judge: passed: The assistant says the jacket is in the bag\./);
    assert.match(text, /DOM \.cart-badge text: expected "1", got "1"/);
    assert.match(text, /view_product\(\{"slug":"biker-leather-jacket"\}\)/);
    assert.match(text, /1 turns, ended by singleTurn/);
    assert.equal(await popup.locator('#evals-results b').count(), 0, 'names stay text');
    await popup.close();
  });

  test('a bad simulations file is refused with the case and the field named', async () => {
    const tabId = await open('shopping');
    await assert.rejects(
      op('evaluate', { tabId, simulations: [{ name: 'x', userMessage: 'hi', maxTurns: 3, successCriteria: 'y' }], mode: 'simulate', judgeModel: 'lenient' }),
      /case 1 \(x\): `maxTurns` goes with `userScenario`/,
    );
    await assert.rejects(
      op('evaluate', { tabId, simulations: [{ userMessage: 'hi', successCriteria: 'y' }], mode: 'simulate' }),
      /`judgeModel` is required/,
    );
  });
});
