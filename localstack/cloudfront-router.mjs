#!/usr/bin/env node
// Stand-in for the CloudFront distribution's behaviors in front of the LocalStack REST API
// (CloudFront is not in LocalStack's free edition), routing by the distribution's own
// behaviours (terraform/modules/edge/behaviours.json, read at start). Put edge/local/proxy.mjs
// in front of it to run the shipped edge verifier, as CloudFront would:
//
//   the tier-1 API's behaviours (/vwr-api/*, its documents)
//                              → the REST API, prefix removed by the shipped CloudFront Function
//                                (terraform/modules/edge/functions/strip-prefix.js)
//   tier 2's and the protected APIs' (/api/queue/*, /api/seats/*, /api/reservations/*)
//                              → the REST API as is (tier 2, the entry-token gate)
//   anything else              → a stand-in for the operator's site (a page naming the path)
//
//   node localstack/cloudfront-router.mjs [--listen 127.0.0.1:8082] [--api URL]
// --api defaults to `api_url` of localstack/.state/state.json (written by the ready hook).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { behaviourFor, loadBehaviours } from '../edge/local/behaviours.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
if (args.includes('--help')) {
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  console.log(lines.slice(1, lines.findIndex((l) => l.startsWith('import'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}

function stateApi() {
  try {
    return JSON.parse(readFileSync(join(here, '.state', 'state.json'), 'utf8')).api_url;
  } catch {
    return undefined;
  }
}

const api = opt('--api', stateApi());
if (!api) {
  console.error('cloudfront-router: no --api and no localstack/.state/state.json (is LocalStack up?)');
  process.exit(1);
}
const [host, port] = opt('--listen', '127.0.0.1:8082').split(':');

const behaviours = loadBehaviours();
// The API origins: the LocalStack REST API serves them all.
const API_ORIGINS = new Set(['tier1-api', 'tier2-api', 'protected-api']);

// The shipped strip-prefix function, run as CloudFront would run it.
const stripSource = readFileSync(join(here, '..', 'terraform', 'modules', 'edge', 'functions', 'strip-prefix.js'), 'utf8');
const sandbox = {};
vm.runInNewContext(`${stripSource}\nthis.handler = handler;`, sandbox);

function target(path) {
  const [uri, query] = path.split(/\?(.*)/s, 2);
  const behaviour = behaviourFor(behaviours, uri);
  if (!API_ORIGINS.has(behaviour.origin)) return null;
  if (behaviour.viewerRequest === 'strip-prefix') {
    const out = sandbox.handler({ request: { uri, method: 'GET', headers: {}, querystring: {} } });
    return api + out.uri + (query !== undefined ? `?${query}` : '');
  }
  return api + path;
}

function site(req, res) {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><meta charset="utf-8"><title>site</title><h1>Site stand-in</h1><p>${req.method} ${req.url.replace(/[<&>"]/g, '')} reached the origin.</p>\n`);
}

http
  .createServer((req, res) => {
    const url = target(req.url);
    if (!url) return site(req, res);
    const u = new URL(url);
    const headers = { ...req.headers, host: u.host };
    const client = u.protocol === 'https:' ? https : http;
    const up = client.request(u, { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.rawHeaders);
      r.pipe(res);
    });
    up.on('error', (e) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad_gateway', message: e.message }));
    });
    req.pipe(up);
  })
  .listen(Number(port), host, () => console.log(`cloudfront-router on http://${host}:${port} → ${api}`));
