// Browser test of place safety (docs/invariants.md#15), in Debian Chromium driven by
// playwright-core: a small HTTP proxy between Chromium and `vwr dev` plays a WAF and API Gateway
// for a while, answering the public status document and `check` with 403s that are not the
// tier-1 API's verdict on the ticket — a WAF block page (HTML), API Gateway's own
// `{"message":"Forbidden"}`, and `origin_forbidden` (CloudFront's origin secret being
// rotated). The visitor keeps the same requestId and place throughout (no second `assign`),
// and once the faults end is admitted with the original ticket.
// Screenshot: target/e2e/place-safety-fault.png.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import http from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTIFACTS, devSession, freePort } from './harness.mjs';

let session, devUrl, browser, admin, proxy, siteUrl;

const BLOCK_PAGE = '<!DOCTYPE html><html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1><p>Request blocked.</p></body></html>';
// What a WAF, API Gateway and a tier-1 API behind a rotating origin secret answer.
const WAF = { status: 403, headers: { 'content-type': 'text/html' }, body: BLOCK_PAGE };
const GATEWAY = { status: 403, headers: { 'content-type': 'application/json' }, body: '{"message":"Forbidden"}' };
const ORIGIN = { status: 403, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: '{"error":"origin_forbidden","message":"this API is only reachable through the site\'s CDN"}' };

// The proxy's state: faults still to answer per kind of call (taken in order), and every
// request it saw ({kind, path, status}).
const faults = { status: [], check: [] };
const seen = [];

before(async () => {
  session = await devSession('place');
  ({ devUrl, browser, admin } = session);
  const port = await freePort();
  siteUrl = `http://127.0.0.1:${port}`;
  proxy = http.createServer((req, res) => {
    const path = new URL(req.url, siteUrl).pathname;
    const kind = (/^\/vwr-api\/vwr\/(assign|check|status)\//.exec(path) || [])[1] || 'other';
    const entry = { kind, path, status: 0 };
    seen.push(entry);
    const fault = (faults[kind] || []).shift();
    if (fault) {
      entry.status = fault.status;
      entry.fault = true;
      res.writeHead(fault.status, fault.headers);
      res.end(fault.body);
      return;
    }
    const up = http.request(devUrl + req.url, { method: req.method, headers: req.headers }, (r) => {
      entry.status = r.statusCode;
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise((ok) => proxy.listen(port, '127.0.0.1', ok));
});

after(async () => {
  if (proxy) proxy.close();
  if (session) await session.close();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('403s from a WAF, API Gateway and a rotating origin secret on the status document and check never cost the visitor their place', async () => {
  // A manual sale (batchSize 0: only the operator advances the line), three people ahead.
  await admin('POST', '/api/admin/vwr/activate/ps1', { batchSize: 0 });
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${devUrl}/vwr-api/vwr/assign/ps1`, { method: 'POST' });
    assert.equal(r.status, 200);
  }
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(`${siteUrl}/vwr/ps1?next=%2Fevents%2Fps1`);
  await page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
  await page.waitForFunction(() => document.getElementById('position').textContent.trim() === '4');
  const ticket = JSON.parse(await page.evaluate(() => localStorage.getItem('vwr.ticket.ps1')));
  assert.equal(ticket.position, 4);
  const calls = (kind) => seen.filter((s) => s.kind === kind);
  assert.equal(calls('assign').length, 1);

  // What must hold at every moment: the one ticket, the same place, no second join.
  const holds = async (when) => {
    assert.equal(calls('assign').length, 1, `${when}: no second assign (${JSON.stringify(calls('assign'))})`);
    const now = JSON.parse(await page.evaluate(() => localStorage.getItem('vwr.ticket.ps1')));
    assert.equal(now && now.requestId, ticket.requestId, `${when}: the same ticket`);
    assert.equal(now.position, 4, `${when}: the same place`);
    for (const c of calls('check')) assert.equal(c.path, `/vwr-api/vwr/check/ps1/${encodeURIComponent(ticket.requestId)}`, `${when}: only the original ticket is checked`);
  };
  const until = async (what, done) => {
    const deadline = Date.now() + 60000;
    while (!done()) {
      await holds(what);
      assert.ok(Date.now() < deadline, `${what}: timed out (${JSON.stringify(seen.filter((s) => s.kind !== 'other'))})`);
      await sleep(200);
    }
    await holds(what);
  };

  // The window, while the visitor waits in line: the status document and check are refused.
  faults.status.push(WAF, GATEWAY, ORIGIN);
  faults.check.push(WAF, GATEWAY, ORIGIN);
  await until('the status document refused while in line', () => faults.status.length === 0);
  await page.screenshot({ path: join(ARTIFACTS, 'place-safety-fault.png'), fullPage: true });
  assert.equal((await page.textContent('#position')).trim(), '4');
  assert.equal(await page.getAttribute('#room', 'data-state'), 'waiting');
  // Still in the window, the turn comes: the status document says so, and `check` is refused.
  const adv = await admin('POST', '/api/admin/vwr/advance/ps1', { by: 4 });
  assert.equal(adv.servingCounter, 4);
  await until('check refused at the turn', () => faults.check.length === 0);
  assert.equal(calls('check').filter((c) => c.fault).length, 3);

  // After the window: admitted with the original ticket, on to next.
  await page.waitForURL(`${siteUrl}/events/ps1`, { timeout: 60000 });
  await page.waitForSelector('text=Demo event');
  await holds('admitted');
  const last = calls('check').at(-1);
  assert.equal(last.status, 200, 'the last check (with the original ticket) got the pass');
  assert.equal(calls('status').filter((c) => c.fault).length, 3);
  await context.close();
});
