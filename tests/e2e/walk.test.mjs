// Browser walk through the whole system, in Debian Chromium driven by playwright-core:
// the SHIPPED Lambda@Edge verifier (edge/local/proxy.mjs runs edge/dist/lambda-edge/index.js)
// in front of `vwr dev --edge off`.
//   1. /events/e1 without a cookie → redirected to the waiting page, which shows a position;
//   2. a reload keeps the same position;
//   3. the operator advances the counter → the page goes back to /events/e1, which loads;
//   4. tier 2 is registered for e1: the event page checks in, gets an entry token, and the
//      protected /api/seats/e1 answers 200 with it and 403 without it.
// Screenshots of the waiting page (en, ko) go to target/e2e/.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ROOT, VWR, adminClient, freePort, start as startChild, waitFor as waitUntil } from './harness.mjs';

const ADMIN_KEY = 'e2e-admin-key-' + Math.random().toString(36).slice(2);

const children = [];
let devDir, devUrl, siteUrl, browser;

const admin = adminClient(() => devUrl, ADMIN_KEY);

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  devDir = mkdtempSync(join(tmpdir(), 'vwr-e2e-'));
  const [devPort, sitePort] = [await freePort(), await freePort()];
  devUrl = `http://127.0.0.1:${devPort}`;
  siteUrl = `http://127.0.0.1:${sitePort}`;
  const env = { VWR_DEV_DIR: devDir, VWR_ADMIN_KEY: ADMIN_KEY, RUST_LOG: 'warn' };
  const dev = startChild(children, VWR, ['dev', '--addr', `127.0.0.1:${devPort}`, '--store', 'memory', '--edge', 'off', '--no-dev-user-header'], env);
  await waitUntil(`${devUrl}/healthz`, () => `vwr dev (${dev.output()})`);
  // The proxy reads the edge keys (derived from the tier-1 keys) from the dev state file `vwr dev` wrote.
  const proxy = startChild(children, 'node', [join(ROOT, 'edge', 'local', 'proxy.mjs'), '--listen', `127.0.0.1:${sitePort}`,
    '--upstream', devUrl, '--dev-dir', devDir, '--admin-key', ADMIN_KEY, '--poll-ms', '200'], env);
  await waitUntil(`${siteUrl}/vwr/e1`, () => `edge proxy (${proxy.output()})`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
});

after(async () => {
  if (browser) await browser.close();
  for (const c of children) c.kill('SIGTERM');
  if (devDir) rmSync(devDir, { recursive: true, force: true });
});

test('waiting room walk: redirect, position kept on reload, admission, tier-2 entry token', async () => {
  await admin('POST', '/api/admin/vwr/activate/e1', { batchSize: 0 });
  // Someone already in line, so our browser waits behind them.
  await fetch(`${devUrl}/vwr-api/vwr/assign/e1`, { method: 'POST' });
  // Wait until the proxy has picked up the active event.
  const deadline = Date.now() + 10000;
  while ((await fetch(`${siteUrl}/events/e1`, { redirect: 'manual' })).status !== 302) {
    assert.ok(Date.now() < deadline, 'the edge never gated /events/e1');
    await new Promise((r) => setTimeout(r, 100));
  }

  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(`${siteUrl}/events/e1`);
  await page.waitForURL(/\/vwr\/e1\?next=%2Fevents%2Fe1$/);
  await page.waitForFunction(() => /^\d+$/.test(document.getElementById('position').textContent.replace(/[^\d]/g, '')) && document.getElementById('position').textContent.trim() !== '–');
  const position = (await page.textContent('#position')).replace(/[^\d]/g, '');
  assert.equal(position, '2');
  await page.screenshot({ path: join(ARTIFACTS, 'waiting-page-en.png'), fullPage: true });

  await page.reload();
  await page.waitForFunction(() => document.getElementById('position').textContent.trim() !== '–');
  assert.equal((await page.textContent('#position')).replace(/[^\d]/g, ''), position, 'a reload keeps the place');

  await page.selectOption('#lang', 'ko');
  await page.waitForFunction(() => document.documentElement.lang === 'ko');
  await page.screenshot({ path: join(ARTIFACTS, 'waiting-page-ko.png'), fullPage: true });

  // Tier 2 for e1 (line ordered by tier-1 position, since tier 1 gates e1).
  const reg = await admin('PUT', '/api/queue/admin/threshold/e1', { threshold: 5 });
  assert.equal(reg.lineOrder, 'tier1');

  await admin('POST', '/api/admin/vwr/advance/e1', { by: 2 });
  await page.waitForURL(`${siteUrl}/events/e1`, { timeout: 15000 });
  await page.waitForSelector('text=Demo event');

  // The event page checked in to tier 2 with the tier-1 cookie and called the seats API.
  await page.waitForFunction(() => document.getElementById('state').textContent === 'admitted', null, { timeout: 10000 });
  await page.waitForFunction(() => document.getElementById('seats-state').textContent === '200', null, { timeout: 10000 });
  const without = await page.evaluate(async () => {
    const r = await fetch('/api/seats/e1', { headers: { accept: 'application/json' } });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(without.status, 403);
  assert.equal(without.body.error, 'queue_entry_token_required');
  assert.equal(without.body.redirectTo, '/vwr/queue/e1');
  const withToken = await page.evaluate(async () => {
    const r = await fetch('/api/seats/e1', { headers: { 'x-queue-entry-token': window.vwrEntryToken } });
    return r.status;
  });
  assert.equal(withToken, 200);

  // A fresh browser (no cookie) is still sent to the waiting room.
  const other = await browser.newContext();
  const p2 = await other.newPage();
  await p2.goto(`${siteUrl}/events/e1`);
  await p2.waitForURL(/\/vwr\/e1/);
  await other.close();
  await context.close();
});
