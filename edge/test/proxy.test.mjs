// The local edge proxy in front of a fake upstream (an in-process stand-in for `vwr dev`):
// the shipped Lambda@Edge handler decides, allowed requests are streamed through.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startProxy } from '../local/proxy.mjs';
import { EDGE, keysText, newKey, signToken, tier1Claims } from './harness.mjs';

const ADMIN_KEY = `test-admin-${newKey().toString('hex')}`;
const KEY = newKey();
const KEYS = keysText({ k1: KEY });
const now = () => Math.floor(Date.now() / 1000);

// The fake upstream: admin events list, an event page, a check answer with two cookies,
// a streamed body whose second chunk waits for the test, and an echo.
const upstream = { active: ['e1'], gated: null, revoked: undefined, adminStatus: 200, requests: [], releaseStream: null };
let upstreamServer;
let upstreamUrl;

function startUpstream() {
  upstreamServer = http.createServer((req, res) => {
    upstream.requests.push({ method: req.method, url: req.url, headers: req.headers });
    if (req.url === '/api/admin/vwr/events') {
      if (req.headers.authorization !== `Bearer ${ADMIN_KEY}`) return res.writeHead(401).end();
      res.writeHead(upstream.adminStatus, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ events: upstream.active, gated: upstream.gated || upstream.active, revoked: upstream.revoked }));
    }
    if (req.url.startsWith('/vwr-api/vwr/check/')) {
      res.writeHead(200, [['content-type', 'application/json'], ['set-cookie', 'vwr_t1_e1=abc; Path=/; HttpOnly'], ['set-cookie', 'other=1; Path=/']].flat());
      return res.end('{"admitted":true}');
    }
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first;');
      return new Promise((ok) => (upstream.releaseStream = ok)).then(() => res.end('second'));
    }
    if (req.method === 'POST') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      return req.on('end', () => res.writeHead(200).end(`echo:${Buffer.concat(chunks)}`));
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`origin ${req.url}`);
  });
  return new Promise((ok) => upstreamServer.listen(0, '127.0.0.1', () => ok(`http://127.0.0.1:${upstreamServer.address().port}`)));
}

/** Polls `probe` until it answers `want` (the other side catching up), or fails after a
 *  generous deadline with the last answer. Never a fixed sleep standing in for "caught up". */
async function eventually(probe, want, what, deadlineMs = 15000) {
  const end = Date.now() + deadlineMs;
  let got;
  for (;;) {
    got = await probe();
    if (got === want) return;
    if (Date.now() > end) assert.fail(`${what}: still ${got}, wanted ${want}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let proxy;
before(async () => {
  upstreamUrl = await startUpstream();
  proxy = await startProxy({ listen: '127.0.0.1:0', upstream: upstreamUrl, keys: KEYS, events: 'admin', adminKey: ADMIN_KEY, pollMs: 50, staleAfterMs: 300, staticDir: join(EDGE, '..', 'static') });
});
after(async () => {
  await proxy.close();
  upstreamServer.closeAllConnections();
  await new Promise((ok) => upstreamServer.close(ok));
});

const get = (path, headers = {}) => fetch(proxy.url + path, { headers, redirect: 'manual' });

describe('local proxy with events from the admin API', () => {
  test('no token: navigation is redirected, API calls get 403 JSON; nothing reaches the origin', async () => {
    const seen = upstream.requests.length;
    const page = await get('/events/e1?seat=A1');
    assert.equal(page.status, 302);
    assert.equal(page.headers.get('location'), `/vwr/e1?next=${encodeURIComponent('/events/e1?seat=A1')}`);
    const api = await get('/api/seats/e1/A1');
    assert.equal(api.status, 403);
    assert.equal((await api.json()).error, 'waiting_room_token_required');
    assert.equal(upstream.requests.slice(seen).filter((r) => !r.url.startsWith('/api/admin/')).length, 0);
  });

  test('a valid token is forwarded to the origin', async () => {
    const token = signToken(KEY, 'k1', tier1Claims(now()));
    const res = await get('/events/e1?x=1', { cookie: `a=b; vwr_t1_e1=${token}` });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'origin /events/e1?x=1');
    // The proxy also polls the admin API for events in the background: the page's request is the
    // last one for its path, not necessarily the last one.
    const last = upstream.requests.findLast((r) => r.url === '/events/e1?x=1');
    assert.match(last.headers.cookie, /vwr_t1_e1=/);
    assert.equal(last.headers.host, new URL(upstreamUrl).host);
  });

  test('x-vwr-* viewer headers reach the origin only on the paths CloudFront serves without the verifier', async () => {
    const token = signToken(KEY, 'k1', tier1Claims(now()));
    const viewer = { cookie: `vwr_t1_e1=${token}`, 'x-vwr-user': 'admin', 'x-vwr-event': 'e2', 'x-vwr-token': token, 'x-vwr-request-secret': 's', 'x-other': 'kept' };
    const seenBy = async (path) => {
      const res = await get(path, viewer);
      assert.equal(res.status, 200, path);
      await res.text();
      const last = upstream.requests.findLast((r) => r.url === path);
      assert.equal(last.headers['x-other'], 'kept', path);
      return Object.keys(last.headers).filter((n) => n.startsWith('x-vwr-')).sort();
    };
    // The site and the protected APIs: the verifier's behaviours, even in another spelling of a waiting-room path.
    for (const path of ['/events/e1', '/api/seats/e1/A1', '/about', '/API/queue/status/e1', '/%76wr-api/vwr/check/e1/x']) {
      assert.deepEqual(await seenBy(path), [], path);
    }
    // /vwr-api/* (the request secret, release's token) and /api/queue/* (tier 2's caller): no verifier.
    for (const path of ['/vwr-api/vwr/check/e1/req-2', '/api/queue/status/e1']) {
      assert.deepEqual(await seenBy(path), ['x-vwr-event', 'x-vwr-request-secret', 'x-vwr-token', 'x-vwr-user'], path);
    }
  });

  test('waiting-room API answers are passed back with every Set-Cookie', async () => {
    const res = await get('/vwr-api/vwr/check/e1/req-1');
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers.getSetCookie(), ['vwr_t1_e1=abc; Path=/; HttpOnly', 'other=1; Path=/']);
  });

  test('bodies are forwarded and answers streamed', async () => {
    const post = await fetch(`${proxy.url}/vwr-api/vwr/assign/e1`, { method: 'POST', body: 'hello' });
    assert.equal(await post.text(), 'echo:hello');
    const res = await get('/stream');
    const reader = res.body.getReader();
    // The upstream holds its second chunk until released: the first chunk can only arrive
    // here if the proxy streams instead of buffering the whole answer.
    const first = await reader.read();
    assert.equal(Buffer.from(first.value).toString(), 'first;');
    upstream.releaseStream();
    let rest = '';
    for (let c = await reader.read(); !c.done; c = await reader.read()) rest += Buffer.from(c.value).toString();
    assert.equal(rest, 'second');
  });

  test('the waiting and booking pages are served from --static, as S3 behind the rewrite function would', async () => {
    const page = await get('/vwr/e1?next=%2Fevents%2Fe1');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    assert.match(await page.text(), /<html/);
    const js = await get('/vwr/assets/app.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /javascript/);
    const booking = await get('/vwr/queue/e1');
    assert.equal(booking.status, 200);
    assert.match(await booking.text(), /<main id="booking"/);
    assert.match((await get('/vwr/queue/tier2.js')).headers.get('content-type'), /javascript/);
    for (const path of ['/vwr/..%2f..%2fedge%2fbuild.mjs', '/vwr/assets/nope.js', '/vwr/%E0%A4%A']) {
      assert.ok([400, 404].includes((await get(path)).status), path);
    }
  });

  test('as CloudFront: a scheduled or standby event (known, not gated) passes; a revoked pass is refused', async () => {
    // Before, the proxy gated every known event and never learnt of revocations.
    const token = signToken(KEY, 'k1', tier1Claims(now(), { jti: 'pass-leaked' }));
    upstream.active = ['e1', 'later'];
    upstream.gated = ['e1'];
    upstream.revoked = { 'pass-leaked': now() + 600 };
    try {
      await eventually(async () => (await fetch(`${proxy.url}/events/later`, { redirect: 'manual' })).status, 200, 'the scheduled event passes');
      await eventually(async () => (await fetch(`${proxy.url}/events/e1`, { redirect: 'manual', headers: { cookie: `vwr_t1_e1=${token}` } })).status, 302, 'the revoked pass is refused');
    } finally {
      upstream.active = ['e1'];
      upstream.gated = null;
      upstream.revoked = undefined;
    }
    await eventually(async () => (await fetch(`${proxy.url}/events/e1`, { redirect: 'manual', headers: { cookie: `vwr_t1_e1=${token}` } })).status, 200, 'unrevoked again');
  });

  test('an event activated upstream is gated by the background poll', async () => {
    const status = async () => (await get('/events/e2')).status;
    assert.equal(await status(), 200);
    upstream.active = ['e1', 'e2'];
    await eventually(status, 302, 'e2 after activation');
    upstream.active = ['e1'];
    await eventually(status, 200, 'e2 after deactivation');
  });
});

describe('local proxy when the admin API keeps failing', () => {
  test('the last list is used for staleAfterMs, then the handler fails closed, then recovers', async () => {
    // Time is the test's: no background poll (an hour apart) and a manual clock, so the
    // staleness rule is checked exactly, however slow the machine.
    let clock = 1_000_000;
    const p = await startProxy({ listen: '127.0.0.1:0', upstream: upstreamUrl, keys: KEYS, events: 'admin', adminKey: ADMIN_KEY, pollMs: 3_600_000, staleAfterMs: 300, now: () => clock });
    const status = async (path) => (await fetch(p.url + path, { redirect: 'manual' })).status;
    try {
      assert.equal(await status('/events/e1'), 302, 'the first load is applied before startProxy resolves');
      upstream.adminStatus = 500;
      clock += 299;
      await p.refresh();
      assert.equal(await status('/events/e1'), 302, 'within staleAfterMs the last list still applies');
      clock += 2;
      await p.refresh();
      assert.equal(await status('/events/e1'), 503);
      assert.equal(await status('/vwr-api/vwr/check/e1/x'), 200, 'the waiting room stays reachable');
      upstream.adminStatus = 200;
      await p.refresh();
      assert.equal(await status('/events/e1'), 302);
    } finally {
      upstream.adminStatus = 200;
      await p.close();
    }
  });
});

describe('local proxy with events from a file', () => {
  test('the file is re-read on every poll', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vwr-proxy-'));
    try {
      const file = join(dir, 'events.json');
      writeFileSync(file, JSON.stringify({ events: ['f1'] }));
      const p = await startProxy({ listen: '127.0.0.1:0', upstream: upstreamUrl, keys: KEYS, events: file, pollMs: 50 });
      const status = async (path) => (await fetch(p.url + path, { redirect: 'manual' })).status;
      try {
        // startProxy resolves after the first load; the proxy of the other suite, polling
        // in the same process, has its own handler instance and cannot change this one.
        assert.equal(await status('/events/f1'), 302);
        assert.equal(await status('/events/e1'), 200);
        writeFileSync(file, JSON.stringify({ e1: { active: true } }));
        await eventually(() => status('/events/e1'), 302, 'e1 after the file changed');
        assert.equal(await status('/events/f1'), 200);
      } finally {
        await p.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('two proxies in one process keep their own configuration', async () => {
    // The flake behind this file's old failure: both proxies shared one handler module, so
    // each poll of one replaced the other's active events.
    const dir = mkdtempSync(join(tmpdir(), 'vwr-proxy-'));
    const files = [join(dir, 'a.json'), join(dir, 'b.json')];
    writeFileSync(files[0], JSON.stringify(['a1']));
    writeFileSync(files[1], JSON.stringify(['b1']));
    const [pa, pb] = [
      await startProxy({ listen: '127.0.0.1:0', upstream: upstreamUrl, keys: KEYS, events: files[0], pollMs: 3_600_000 }),
      await startProxy({ listen: '127.0.0.1:0', upstream: upstreamUrl, keys: KEYS, events: files[1], pollMs: 3_600_000 }),
    ];
    const status = async (p, path) => (await fetch(p.url + path, { redirect: 'manual' })).status;
    try {
      await pb.refresh();
      assert.deepEqual([await status(pa, '/events/a1'), await status(pa, '/events/b1')], [302, 200]);
      await pa.refresh();
      assert.deepEqual([await status(pb, '/events/a1'), await status(pb, '/events/b1')], [200, 302]);
    } finally {
      await pa.close();
      await pb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bad options are refused clearly', async () => {
    await assert.rejects(startProxy({ upstream: upstreamUrl, keys: KEYS, events: 'admin' }), /admin key/);
    await assert.rejects(startProxy({ listen: 'nonsense', upstream: upstreamUrl, keys: KEYS, events: 'admin', adminKey: 'x' }), /HOST:PORT/);
  });
});
