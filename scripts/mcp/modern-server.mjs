// An MCP server of the official TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0 with
// @modelcontextprotocol/node 2.1.2), which speaks 2026-07-28 (stateless, server/discover) and,
// unless LEGACY=reject, 2025-11-25 too (initialize, without sessions). Its tools:
//
// - add {a, b}: their sum as text;
// - route {region}: region designated as the header Mcp-Param-Region (`x-mcp-header`); the SDK
//   refuses a call without that header (400, -32020);
// - confirm {}: asks for input (`input_required`, an elicitation whose `ok` defaults to true)
//   and answers "confirmed" once accepted with ok, "declined" otherwise;
// - bump {}: registers one more tool and announces it (notifications/tools/list_changed to
//   subscriptions/listen streams).
//
// Every request it gets is printed as one JSON line on stdout ({method, headers}), for tests
// to read. Run with Node >= 22: PORT=0 node scripts/mcp/modern-server.mjs
import http from 'node:http';
import { McpServer, acceptedContent, createMcpHandler, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const objectOf = (properties, required = []) => fromJsonSchema({ type: 'object', properties, required });
let extra = 0;

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'interop-2026', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.registerTool('add', { description: 'Adds a and b', inputSchema: objectOf({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  server.registerTool('route', {
    description: 'Routes to a region, which travels as a header',
    inputSchema: objectOf({ region: { type: 'string', 'x-mcp-header': 'Region' } }, ['region']),
  }, async ({ region }) => ({ content: [{ type: 'text', text: `region ${region}` }] }));
  const okSchema = objectOf({ ok: { type: 'boolean', default: true } }, ['ok']);
  server.registerTool('confirm', { description: 'Asks first', inputSchema: objectOf({}) }, async (_args, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    if (!responses) {
      return inputRequired({ inputRequests: { ok: inputRequired.elicit({ message: 'Go ahead?', requestedSchema: okSchema }) } });
    }
    return { content: [{ type: 'text', text: acceptedContent(responses, 'ok', okSchema)?.ok === true ? 'confirmed' : 'declined' }] };
  });
  server.registerTool('bump', { description: 'Adds a tool', inputSchema: objectOf({}) }, async () => {
    extra += 1;
    handler.notify?.toolsChanged?.();
    return { content: [{ type: 'text', text: `tools ${extra}` }] };
  });
  for (let i = 1; i <= extra; i++) {
    server.registerTool(`extra_${i}`, { description: 'Added later', inputSchema: objectOf({}) }, async () => ({ content: [] }));
  }
  return server;
}, { legacy: process.env.LEGACY === 'reject' ? 'reject' : 'stateless' });

const node = toNodeHandler(handler);
const srv = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let method = null;
    try { method = JSON.parse(Buffer.concat(chunks).toString()).method ?? null; } catch { /* not JSON */ }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('mcp-')));
    process.stdout.write(`${JSON.stringify({ http: req.method, method, headers })}\n`);
  });
  node(req, res);
});
srv.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stderr.write(`listening at http://127.0.0.1:${srv.address().port}/mcp\n`);
});
