// A hostile authorization server (RFC 9207 mix-up): its metadata promises that every
// authorization answer names its issuer (`authorization_response_iss_parameter_supported`),
// then its authorization endpoint answers naming another issuer, or none. The sign-in must
// refuse the answer before any token request.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { launchHost } from '../support/browser.mjs';

/** One server that is the MCP server (401 until signed in) and its authorization server. */
async function startMixUpServer() {
  const seen = [];
  let answer = 'other'; // how /authorize answers: 'other' issuer, 'none', or 'own'
  const server = createServer((request, response) => {
    const url = new URL(request.url, base);
    seen.push(`${request.method} ${url.pathname}`);
    const json = (status, value) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (url.pathname === '/mcp') {
      response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` }).end();
    } else if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
      json(200, { resource: `${base}/mcp`, authorization_servers: [base] });
    } else if (url.pathname === '/.well-known/oauth-authorization-server') {
      json(200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        authorization_response_iss_parameter_supported: true,
      });
    } else if (url.pathname === '/register') {
      json(201, { client_id: 'mixup-client' });
    } else if (url.pathname === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri'));
      back.searchParams.set('code', 'the-code');
      back.searchParams.set('state', url.searchParams.get('state'));
      if (answer === 'other') back.searchParams.set('iss', 'https://evil.example');
      if (answer === 'own') back.searchParams.set('iss', base);
      response.writeHead(302, { location: back.href }).end();
    } else if (url.pathname === '/token') {
      json(200, { access_token: 'mixup-token', token_type: 'Bearer', expires_in: 3600 });
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: `${base}/mcp`,
    seen,
    answer: (how) => (answer = how),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('a hostile authorization server (mix-up)', () => {
  let server, host;

  before(async () => {
    server = await startMixUpServer();
    host = await launchHost();
    await host.worker.evaluate((c) => webmcpHost.configure(c), { servers: [{ name: 'mixup', url: server.url }] });
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  const signIn = () => host.worker.evaluate(() => webmcpHost.signIn({ server: 'mixup', inTab: true }));

  test('an answer naming another issuer is refused, and no token is asked for', async () => {
    server.answer('other');
    const signed = await signIn();
    assert.equal(signed.ok, false, JSON.stringify(signed));
    assert.match(signed.error, /another issuer \(iss `https:\/\/evil\.example`/);
    assert.ok(server.seen.includes('GET /authorize'), server.seen.join(', '));
    assert.ok(!server.seen.includes('POST /token'), 'the code was never exchanged');
  });

  test('an answer without the issuer its server promised is refused', async () => {
    server.answer('none');
    const signed = await signIn();
    assert.equal(signed.ok, false, JSON.stringify(signed));
    assert.match(signed.error, /does not name its issuer/);
    assert.ok(!server.seen.includes('POST /token'), 'the code was never exchanged');
  });

  test('an answer naming its own issuer signs in', async () => {
    server.answer('own');
    const signed = await signIn();
    assert.equal(signed.ok, true, JSON.stringify(signed));
    assert.ok(server.seen.includes('POST /token'));
    await host.worker.evaluate(() => webmcpHost.signOut({ server: 'mixup' }));
  });
});
