// Browser walk through the life of a sale, in Debian Chromium driven by playwright-core,
// against `vwr dev`: the waiting page counts down before the open (polling only the public
// status document), joins the pre-queue, gets its drawn place at the open, shows the pause
// with the operator's message, and the closed page. Screenshots of each state (en, and ko for
// the pause) go to target/e2e/lifecycle-*.png.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTIFACTS, devSession } from './harness.mjs';

let session, devUrl, browser, admin;

before(async () => {
  session = await devSession('life');
  ({ devUrl, browser, admin } = session);
});

after(async () => {
  if (session) await session.close();
});

const state = (page, s, timeout) =>
  page.waitForSelector(`#room[data-state="${s}"]`, { timeout: timeout ?? 40000 });

test('a sale in the browser: countdown → pre-queue → drawn place → paused → sold out', async () => {
  const now = Math.floor(Date.now() / 1000);
  const sched = await admin('PUT', '/api/admin/vwr/schedule/s1', {
    prequeueAt: now + 4, openAt: now + 24, batchSize: 0, intervalSeconds: 1, shards: 2,
  });
  assert.equal(sched.state, 'scheduled');
  assert.match(sched.seedCommitment, /^[0-9a-f]{64}$/);

  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(`${devUrl}/vwr/s1?next=%2Fevents%2Fs1`);

  // Before the pre-queue: a countdown, and only the status document is fetched.
  await state(page, 'scheduled', 10000);
  await page.waitForFunction(() => /\d+:\d\d/.test(document.getElementById('countdown').textContent));
  assert.match(await page.textContent('#commitment'), new RegExp(sched.seedCommitment.slice(0, 8)));
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-1-countdown-en.png'), fullPage: true });
  assert.ok(!requests.some((p) => p.includes('/assign/') || p.includes('/check/')), `no joins before the pre-queue: ${requests}`);

  // The pre-queue opens: the page joins it (no position yet). Two more visitors join too.
  await state(page, 'prequeue');
  for (let i = 0; i < 2; i++) await fetch(`${devUrl}/vwr-api/vwr/assign/s1`, { method: 'POST' });
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-2-prequeue-en.png'), fullPage: true });
  assert.ok(!requests.some((p) => p.includes('/check/')), 'no check before the open');

  // The open: the draw gives the page a place among the 3 pre-queue joiners.
  await state(page, 'waiting', 45000);
  await page.waitForFunction(() => /\d/.test(document.getElementById('position').textContent));
  const position = Number((await page.textContent('#position')).replace(/[^\d]/g, ''));
  assert.ok(position >= 1 && position <= 3, `a drawn place in 1..=3, got ${position}`);
  const doc = await (await fetch(`${devUrl}/vwr-api/vwr/status/s1`)).json();
  assert.equal(doc.state, 'open');
  assert.equal(doc.prequeueSize, 3);
  assert.match(doc.seed, /^[0-9a-f]{64}$/, 'the seed is revealed after the open');
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-3-open-en.png'), fullPage: true });

  // Paused, with a message in both languages.
  await admin('POST', '/api/admin/vwr/pause/s1', { message: { en: 'A short technical pause.', ko: '잠시 점검 중입니다.' } });
  await state(page, 'paused', 30000);
  await page.waitForFunction(() => document.getElementById('banner').textContent.includes('A short technical pause.'));
  assert.match(await page.textContent('#message'), /you keep your place/);
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-4-paused-en.png'), fullPage: true });
  await page.selectOption('#lang', 'ko');
  await page.waitForFunction(() => document.getElementById('banner').textContent.includes('잠시 점검 중입니다.'));
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-4-paused-ko.png'), fullPage: true });
  await page.selectOption('#lang', 'en');

  // Sold out: the closed page, and the page stops polling.
  await admin('POST', '/api/admin/vwr/close/s1', { reason: 'sold_out' });
  await state(page, 'closed', 40000);
  assert.equal((await page.textContent('#title')).trim(), 'Sold out');
  await page.screenshot({ path: join(ARTIFACTS, 'lifecycle-5-closed-en.png'), fullPage: true });
  const count = requests.length;
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(requests.length, count, 'no polling after the close');

  // The audit trail shows who did what.
  const audit = await admin('GET', '/api/admin/vwr/audit/s1');
  assert.deepEqual(audit.entries.map((e) => e.action), ['schedule', 'prequeue', 'open', 'pause', 'close']);
  assert.deepEqual(audit.entries.map((e) => e.actor), ['dev', 'advancer', 'advancer', 'dev', 'dev']);
  await context.close();
});
