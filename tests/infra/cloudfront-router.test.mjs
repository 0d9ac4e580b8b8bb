// node --test tests/infra/: the LocalStack kit's stand-in for the distribution
// (localstack/cloudfront-router.mjs) routes as the distribution's behaviours say
// (terraform/modules/edge/behaviours.json): the tier-1 API's with the prefix stripped, tier 2's
// and the protected APIs' as they are, everything else to the site stand-in.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROUTER = fileURLToPath(new URL('../../localstack/cloudfront-router.mjs', import.meta.url));
let api;
let router;
let base;

function listen(server) {
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server.address().port)));
}

before(async () => {
  // The REST API: answers with the path it was asked for.
  api = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url }));
  });
  const apiPort = await listen(api);
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((ok) => probe.close(ok));
  router = spawn(process.execPath, [ROUTER, '--listen', `127.0.0.1:${port}`, '--api', `http://127.0.0.1:${apiPort}/stage`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((ok, fail) => {
    router.stdout.on('data', (d) => String(d).includes('cloudfront-router on') && ok());
    router.once('exit', (code) => fail(new Error(`cloudfront-router exited (${code})`)));
  });
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  router.kill();
  await new Promise((ok) => api.close(ok));
});

async function reached(path) {
  const res = await fetch(base + path);
  const text = await res.text();
  return res.headers.get('content-type').startsWith('application/json') ? JSON.parse(text).url : 'site';
}

test('each path reaches the origin its behaviour names', async () => {
  const cases = {
    '/vwr-api/vwr/status/e1': '/stage/vwr/status/e1',
    '/vwr-api/vwr/assign/e1?x=1': '/stage/vwr/assign/e1?x=1',
    '/api/queue/line/e1': '/stage/api/queue/line/e1',
    '/api/queue/status/e1': '/stage/api/queue/status/e1',
    '/api/seats/e1/A1': '/stage/api/seats/e1/A1',
    '/api/reservations/e1': '/stage/api/reservations/e1',
    '/events/e1': 'site',
    '/vwr/e1': 'site',
    '/vwr-api': 'site',
    '/API/queue/status/e1': 'site',
  };
  for (const [path, want] of Object.entries(cases)) assert.equal(await reached(path), want, path);
});
