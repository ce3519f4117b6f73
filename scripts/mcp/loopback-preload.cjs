// Preload (`node --require scripts/mcp/loopback-preload.cjs ...`) that makes every TCP server of
// the process bind to the loopback interface. The MCP conformance suite's mock servers
// (`listen(0)`), server-everything (`app.listen(PORT)`) and the SDK's example server
// (`app.listen(MCP_PORT)`) give no host, so Node would bind them to every interface (`::`).
// A listen on a wildcard or missing host is rewritten to 127.0.0.1 (or the IPv4/IPv6 literal in
// MCP_LOOPBACK_HOST); an explicit non-wildcard host, a pipe path, a handle or an fd is left alone.
//
// The bind stays synchronous, as Node's own listen without a host is: the conformance suite
// reads `server.address().port` on the line after `listen(0)`. Passing a host to listen() would
// go through an asynchronous DNS lookup and leave address() null there, so the rewritten call
// goes straight to the server's bind step (`_listen2`, the same one listen() ends in).
'use strict';

const net = require('node:net');
const cluster = require('node:cluster');

const LOOPBACK = process.env.MCP_LOOPBACK_HOST || '127.0.0.1';
const LOOPBACK_FAMILY = net.isIP(LOOPBACK);
if (LOOPBACK_FAMILY === 0) throw new Error(`MCP_LOOPBACK_HOST must be an IP literal, not ${LOOPBACK}`);
const WILDCARD = new Set([undefined, null, '', '0.0.0.0', '::', '0:0:0:0:0:0:0:0']);
const original = net.Server.prototype.listen;

function isPort(value) {
  return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^\d+$/.test(value));
}

function bindLoopback(server, port, backlog, callback) {
  if (server._handle || typeof server._listen2 !== 'function' || !cluster.isPrimary) {
    // Already listening (let Node throw its error), or no synchronous bind step here.
    const options = { port, host: LOOPBACK };
    if (backlog !== undefined) options.backlog = backlog;
    return callback ? original.call(server, options, callback) : original.call(server, options);
  }
  if (callback) server.once('listening', callback);
  server._listen2(LOOPBACK, Number(port), LOOPBACK_FAMILY, backlog, undefined, 0);
  return server;
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0];
  const callback = typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
  // listen(options[, callback]) with a TCP port.
  if (first !== null && typeof first === 'object' && !('_handle' in first) && !('handle' in first)
      && first.fd === undefined && first.path === undefined && (first.port === undefined || isPort(first.port))
      && WILDCARD.has(first.host) && !first.exclusive && !first.reusePort && !first.ipv6Only) {
    return bindLoopback(this, first.port ?? 0, first.backlog, callback);
  }
  // listen([port[, host[, backlog]]][, callback]); listen() and listen(callback) mean port 0.
  if (first === undefined || typeof first === 'function' || isPort(first)) {
    const rest = callback ? args.slice(1, -1) : args.slice(1);
    const port = first === undefined || typeof first === 'function' ? 0 : first;
    let host;
    let backlog;
    if (typeof rest[0] === 'number') backlog = rest[0];
    else [host, backlog] = rest;
    if (WILDCARD.has(host)) return bindLoopback(this, port, typeof backlog === 'number' ? backlog : undefined, callback);
  }
  // A pipe path, an explicit host, a handle, an fd: unchanged.
  return original.apply(this, args);
};
