// The other sides of `make bench`'s MCP comparison, each run as its own process (as the CLI is),
// against the same server:
//
//   node scripts/mcp/bench-clients.mjs ts-list URL       the TS SDK client: every page of tools/list, then one call
//   node scripts/mcp/bench-clients.mjs ts-calls URL N    the TS SDK client: N calls on one session
//   node scripts/mcp/bench-clients.mjs bare-list URL     a bare HTTP loop: the same requests, bodies read, nothing parsed
//                                                         but the cursor (the physical floor of a listing)
//
// Each prints one JSON line: {tools, calls, ms} (ms: from the first request to the last answer).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, url, count] = process.argv.slice(2);
if (!mode || !url) throw new Error('usage: bench-clients.mjs ts-list|ts-calls|bare-list URL [N]');

async function tsClient() {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function tsList() {
  const started = performance.now();
  const client = await tsClient();
  let tools = 0;
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  if (!JSON.stringify(result).includes('42')) throw new Error(`add answered ${JSON.stringify(result)}`);
  await client.close();
  return { tools, calls: 1, ms: performance.now() - started };
}

async function tsCalls() {
  const n = Number(count ?? 1000);
  const started = performance.now();
  const client = await tsClient();
  for (let i = 0; i < n; i += 1) {
    const result = await client.callTool({ name: 'add', arguments: { a: i, b: 1 } });
    if (!JSON.stringify(result).includes(`= ${i + 1}`)) throw new Error(`add answered ${JSON.stringify(result)}`);
  }
  await client.close();
  return { tools: 0, calls: n, ms: performance.now() - started };
}

async function bareList() {
  const started = performance.now();
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = async (body, session) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: session ? { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : headers,
      body: JSON.stringify(body),
    });
    return { session: response.headers.get('mcp-session-id'), text: await response.text() };
  };
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
  });
  const session = init.session;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  let cursor;
  let pages = 0;
  let bytes = 0;
  for (let id = 1; ; id += 1) {
    const { text } = await post({ jsonrpc: '2.0', id, method: 'tools/list', params: cursor ? { cursor } : {} }, session);
    pages += 1;
    bytes += text.length;
    cursor = text.match(/"nextCursor":"([^"]*)"/)?.[1];
    if (!cursor) break;
  }
  const call = await post({ jsonrpc: '2.0', id: 1e6, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 40 } } }, session);
  if (!call.text.includes('42')) throw new Error(`add answered ${call.text}`);
  return { pages, bytes, calls: 1, ms: performance.now() - started };
}

const run = { 'ts-list': tsList, 'ts-calls': tsCalls, 'bare-list': bareList }[mode];
if (!run) throw new Error(`unknown mode ${mode}`);
console.log(JSON.stringify(await run()));
