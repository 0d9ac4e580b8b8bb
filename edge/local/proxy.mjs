#!/usr/bin/env node
// Local edge proxy: puts the SHIPPED Lambda@Edge handler (edge/dist/lambda-edge/index.js,
// the very file deployed) in front of a local vwr server, the way CloudFront would.
// Every request goes through the handler where CloudFront runs the verifier (the behaviours of
// terraform/modules/edge/behaviours.json, read at start: edge/local/behaviours.mjs); what it
// lets through is forwarded to the upstream and the answer streamed back (all Set-Cookie
// headers included). No dependencies.
//
//   node edge/local/proxy.mjs [options]
//     --listen HOST:PORT      where to listen (default 127.0.0.1:8081)
//     --upstream URL          the vwr server (default http://127.0.0.1:8080)
//     --keys TEXT             the edge's tier-1 token keys `kid:base64url,…` — the keys derived
//                             for the edge, never the tier-1 master keys (default: env
//                             VWR_EDGE_KEYS, else `edgeKeys` of the dev state file)
//     --events admin          gated events and revoked passes from the upstream admin API
//                             (its `gated` and `revoked`), polled (default)
//     --events FILE           gated events from a JSON file, re-read on every poll:
//                             ["e1", …] or {"events": ["e1", …], "revoked": {…}} or
//                             {"e1": {"active": true}}
//     --admin-key KEY         bearer key for --events admin (default: env VWR_ADMIN_KEY,
//                             else `adminKey` of the dev state file)
//     --dev-dir DIR           where `vwr dev` keeps dev.json (default: env VWR_DEV_DIR, else .vwr)
//     --config FILE           base edge configuration (rules, cookiePrefix, issuer, audience,
//                             failMode, leewaySeconds); default: the demo site layout
//     --static DIR            also serve the waiting and booking pages from DIR (e.g. static/):
//                             /vwr/{eventId}, /vwr/assets/…, /vwr/queue/{eventId} and
//                             /vwr/queue/tier2.js, as S3 + CloudFront would
//     --poll-ms N             events poll interval (default 1000)
//     --stale-after-ms N      how long the last good events list is used while polls fail
//                             (default 10000); after that the configuration counts as
//                             unavailable and the handler applies its failMode
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { behaviourFor, loadBehaviours } from './behaviours.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DIST = join(here, '..', 'dist');

/** The demo site layout (docs/api.md#layout-behind-cloudfront): pages /events/{id}, protected APIs under /api/seats and /api/reservations. */
export const DEFAULT_BASE_CONFIG = {
  rules: [
    { pathPrefix: '/events/', eventSegment: 2 },
    { pathPrefix: '/api/seats/', eventSegment: 3 },
    { pathPrefix: '/api/reservations/', eventSegment: 3 },
  ],
  failMode: 'closed',
};

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authenticate', 'proxy-authorization']);
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8' };

function log(evt, fields = {}) {
  console.log(JSON.stringify({ src: 'vwr-edge-proxy', evt, ...fields }));
}

/** Gated event ids from any of the accepted shapes: the admin API's `gated` (the events the
 *  edge sends to the waiting room; scheduled and standby events are known but not gated) where
 *  it has one, else its `events`. */
export function eventIds(doc) {
  const list = Array.isArray(doc) ? doc : doc && Array.isArray(doc.gated) ? doc.gated : doc && doc.events !== undefined ? doc.events : doc;
  if (Array.isArray(list)) return list;
  if (list && typeof list === 'object') return Object.keys(list).filter((id) => list[id] && list[id].active === true);
  throw new Error('expected ["e1", …], {"events": ["e1", …]} or {"e1": {"active": true}}');
}

// A fresh instance of the handler per proxy: the handler keeps its configuration in module
// state, so two proxies in one process (the tests start several) sharing one instance would
// overwrite each other's active-event lists on every poll.
function loadHandler(file) {
  const require = createRequire(import.meta.url);
  const resolved = require.resolve(file);
  delete require.cache[resolved];
  const mod = require(resolved);
  delete require.cache[resolved];
  if (typeof mod.handler !== 'function' || typeof mod.setConfig !== 'function') throw new Error(`${file} is not the vwr Lambda@Edge handler`);
  return mod;
}

/** The shipped CloudFront Function mapping /vwr/{eventId} and /vwr/queue/{eventId} to their pages. */
function loadRewrite() {
  const context = {};
  vm.createContext(context);
  vm.runInContext(readFileSync(join(DIST, 'waiting-page-rewrite.js'), 'utf8'), context);
  return (uri) => context.handler({ request: { uri } }).uri;
}

/** Lambda@Edge viewer-request event for a Node request. */
function edgeEvent(req) {
  const url = req.url || '/';
  const q = url.indexOf('?');
  const headers = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const key = req.rawHeaders[i];
    const name = key.toLowerCase();
    (headers[name] = headers[name] || []).push({ key, value: req.rawHeaders[i + 1] });
  }
  const request = {
    clientIp: req.socket.remoteAddress || '',
    method: req.method,
    uri: q < 0 ? url : url.slice(0, q),
    querystring: q < 0 ? '' : url.slice(q + 1),
    headers,
  };
  return { Records: [{ cf: { config: { eventType: 'viewer-request' }, request } }] };
}

function sendEdgeResponse(res, answer) {
  const headers = [];
  for (const list of Object.values(answer.headers || {})) for (const h of list) headers.push(h.key, h.value);
  res.writeHead(Number(answer.status), answer.statusDescription || '', headers);
  res.end(answer.body || '');
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function serveStatic(res, root, uri, rewrite) {
  const path = rewrite(uri);
  let rel;
  try {
    rel = decodeURIComponent(path.replace(/^\/vwr\//, ''));
  } catch {
    return sendJson(res, 400, { error: 'bad_path', message: 'the path is not valid percent-encoding' });
  }
  const file = resolve(root, rel);
  if (!file.startsWith(resolve(root) + sep)) return sendJson(res, 404, { error: 'not_found', message: 'no such file' });
  let body;
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    body = readFileSync(file);
  } catch {
    return sendJson(res, 404, { error: 'not_found', message: 'no such file' });
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-cache', 'content-length': body.length });
  res.end(body);
}

function forward(req, res, request, upstream) {
  const target = new URL(request.uri + (request.querystring ? `?${request.querystring}` : ''), upstream);
  const headers = [];
  for (const [name, list] of Object.entries(request.headers)) {
    if (HOP_BY_HOP.has(name) || name === 'host') continue;
    for (const h of list) headers.push(h.key, h.value);
  }
  headers.push('Host', target.host, 'X-Forwarded-For', request.clientIp);
  const up = http.request(target, { method: request.method, headers }, (upRes) => {
    const out = [];
    for (let i = 0; i < upRes.rawHeaders.length; i += 2) {
      if (!HOP_BY_HOP.has(upRes.rawHeaders[i].toLowerCase())) out.push(upRes.rawHeaders[i], upRes.rawHeaders[i + 1]);
    }
    res.writeHead(upRes.statusCode, upRes.statusMessage, out);
    upRes.pipe(res);
  });
  up.on('error', (e) => {
    log('upstream_error', { url: target.href, message: e.message });
    if (!res.headersSent) sendJson(res, 502, { error: 'upstream_unavailable', message: `the upstream ${upstream} did not answer: ${e.message}` });
    else res.destroy(e);
  });
  req.pipe(up);
}

/**
 * Starts the proxy. Options: {listen: "host:port", upstream, keys, events: "admin" | file,
 * adminKey, baseConfig, staticDir, pollMs, staleAfterMs, handlerFile, behavioursFile, now}.
 * `now` (default Date.now) is the clock of the staleness rule, so tests can move time.
 * Resolves only once the first load of the events has been applied (a failed first load leaves
 * the handler on its failMode, as in production). Answers {url, server, refresh(), close()}.
 */
export async function startProxy(opts) {
  const [host, port] = splitHostPort(opts.listen || '127.0.0.1:8081');
  const upstream = new URL(opts.upstream || 'http://127.0.0.1:8080');
  const base = opts.baseConfig || DEFAULT_BASE_CONFIG;
  const edge = loadHandler(opts.handlerFile || join(DIST, 'lambda-edge', 'index.js'));
  const behaviours = loadBehaviours(opts.behavioursFile);
  const rewrite = loadRewrite();
  const pollMs = opts.pollMs || 1000;
  const staleAfterMs = opts.staleAfterMs === undefined ? 10000 : opts.staleAfterMs;
  const eventsSource = opts.events || 'admin';
  const now = opts.now || Date.now;
  if (eventsSource === 'admin' && !opts.adminKey) throw new Error('--events admin needs an admin key (--admin-key, VWR_ADMIN_KEY or the dev state file)');
  let lastGood = 0;
  let lastEvents = null;
  let failing = false;

  /** The source's document: {events: gated ids, revoked: pass id → expiry}. */
  async function readEvents() {
    let doc;
    if (eventsSource !== 'admin') doc = JSON.parse(readFileSync(eventsSource, 'utf8'));
    else {
      const res = await fetch(new URL('/api/admin/vwr/events', upstream), {
        headers: { authorization: `Bearer ${opts.adminKey}` },
        signal: AbortSignal.timeout(Math.max(500, pollMs)),
      });
      if (!res.ok) throw new Error(`GET /api/admin/vwr/events answered ${res.status}`);
      doc = await res.json();
    }
    const revoked = doc && !Array.isArray(doc) && doc.revoked && typeof doc.revoked === 'object' ? doc.revoked : {};
    return { events: eventIds(doc), revoked };
  }

  async function refresh() {
    try {
      const { events, revoked } = await readEvents();
      const problem = edge.setConfig({ ...base, events, revoked, keys: opts.keys });
      if (problem) throw new Error(`edge configuration: ${problem}`);
      if (failing || JSON.stringify(events) !== JSON.stringify(lastEvents)) log('events', { active: events });
      lastGood = now();
      lastEvents = events;
      failing = false;
    } catch (e) {
      if (!failing) log('events_unavailable', { source: eventsSource, message: e.message });
      failing = true;
      if (now() - lastGood > staleAfterMs && lastEvents !== null) {
        log('events_stale', { staleAfterMs, message: 'using no configuration: the handler applies its failMode' });
        lastEvents = null;
      }
      if (lastEvents === null) edge.setConfig(null);
    }
  }

  await refresh();

  const server = http.createServer(async (req, res) => {
    try {
      const event = edgeEvent(req);
      const viewer = event.Records[0].cf.request;
      // As on the distribution: the behaviour is chosen on the viewer's path, then its
      // viewer-request function runs (here the verifier; the waiting page's rewrite is
      // serveStatic's), then its origin answers.
      const behaviour = behaviourFor(behaviours, viewer.uri);
      const answer = behaviour.viewerRequest === 'verifier' ? await edge.handler(event) : viewer;
      if (answer && answer.status !== undefined) return sendEdgeResponse(res, answer);
      const request = answer || viewer;
      if (opts.staticDir && behaviour.origin === 'waiting-page') return serveStatic(res, opts.staticDir, request.uri, rewrite);
      forward(req, res, request, upstream);
    } catch (e) {
      log('proxy_error', { message: e.message });
      if (!res.headersSent) sendJson(res, 500, { error: 'proxy_error', message: e.message });
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  let timer = null;
  let closed = false;
  const tick = async () => {
    await refresh();
    if (!closed) timer = setTimeout(tick, pollMs);
  };
  timer = setTimeout(tick, pollMs);
  const address = server.address();
  const url = `http://${address.address}:${address.port}`;
  return {
    url,
    server,
    refresh,
    close: () =>
      new Promise((ok) => {
        closed = true;
        clearTimeout(timer);
        server.closeAllConnections();
        server.close(ok);
      }),
  };
}

function splitHostPort(text) {
  const at = text.lastIndexOf(':');
  const port = Number(text.slice(at + 1));
  if (at < 1 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--listen: expected HOST:PORT, got ${JSON.stringify(text)}`);
  return [text.slice(0, at), port];
}

function readDevState(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'dev.json'), 'utf8'));
  } catch {
    return {};
  }
}

function parseArgs(argv) {
  const known = ['--listen', '--upstream', '--keys', '--events', '--admin-key', '--dev-dir', '--config', '--static', '--poll-ms', '--stale-after-ms'];
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--help' || argv[i] === '-h') args.help = true;
    else if (known.includes(argv[i]) && i + 1 < argv.length) args[argv[i].slice(2)] = argv[++i];
    else throw new Error(`unknown or incomplete argument ${JSON.stringify(argv[i])}; see --help`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    console.log(lines.slice(1, lines.findIndex((l) => l.startsWith('import'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    return;
  }
  const dev = readDevState(args['dev-dir'] || process.env.VWR_DEV_DIR || '.vwr');
  const keys = args.keys || process.env.VWR_EDGE_KEYS || dev.edgeKeys;
  if (!keys) throw new Error('no edge keys: pass --keys, set VWR_EDGE_KEYS, or run `vwr dev` first so its dev.json exists (see --dev-dir)');
  const proxy = await startProxy({
    listen: args.listen,
    upstream: args.upstream,
    keys,
    events: args.events || 'admin',
    adminKey: args['admin-key'] || process.env.VWR_ADMIN_KEY || dev.adminKey,
    baseConfig: args.config ? JSON.parse(readFileSync(args.config, 'utf8')) : undefined,
    staticDir: args.static,
    pollMs: args['poll-ms'] ? Number(args['poll-ms']) : undefined,
    staleAfterMs: args['stale-after-ms'] ? Number(args['stale-after-ms']) : undefined,
  });
  log('listening', { url: proxy.url, upstream: args.upstream || 'http://127.0.0.1:8080', events: args.events || 'admin', static: args.static || null });
  const stop = () => proxy.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`edge proxy: ${e.message}`);
    process.exit(1);
  });
}
