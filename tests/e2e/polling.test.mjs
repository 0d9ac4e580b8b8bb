// Browser test of how the waiting page follows the line (issue 12), in Debian Chromium driven
// by playwright-core, against `vwr dev` (its 1-s cache of the status document included): while
// waiting, the page fetches only the public status document, never `check`; in a hidden tab the
// turn changes the title and shows the notification the visitor asked for (window.Notification
// is mocked: headless Chromium has no notification centre to look at), then exactly one `check`
// gets the pass and the page goes on to `next`. Screenshots: target/e2e/polling-{waiting,turn}.png.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTIFACTS, devSession } from './harness.mjs';

let session, devUrl, browser, admin;

before(async () => {
  session = await devSession('poll');
  ({ devUrl, browser, admin } = session);
});

after(async () => {
  if (session) await session.close();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('waiting polls only the status document; the turn in a hidden tab alerts, then one check and on to next', async () => {
  // A manual sale (batchSize 0: only the operator advances the line), three people ahead.
  await admin('POST', '/api/admin/vwr/activate/p1', { batchSize: 0 });
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${devUrl}/vwr-api/vwr/assign/p1`, { method: 'POST' });
    assert.equal(r.status, 200);
  }
  // The CDN emulation of `vwr dev`: the status document is shared for a second.
  const first = await fetch(`${devUrl}/vwr-api/vwr/status/p1`);
  const second = await fetch(`${devUrl}/vwr-api/vwr/status/p1`);
  assert.match(first.headers.get('cache-control') || '', /max-age=1/);
  assert.match(`${first.headers.get('x-cache')} ${second.headers.get('x-cache')}`, /Hit from vwr-dev/);

  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const notes = [];
  await page.exposeFunction('vwrNotified', (title, body) => notes.push({ title, body }));
  // A Notification that records what is shown; it grants the permission when asked.
  await page.addInitScript(() => {
    function N(title, options) {
      window.vwrNotified(title, options && options.body);
    }
    N.permission = 'default';
    N.requestPermission = () => {
      N.permission = 'granted';
      return Promise.resolve('granted');
    };
    Object.defineProperty(window, 'Notification', { value: N, configurable: true, writable: true });
  });
  const requests = [];
  page.on('request', (r) => requests.push({ path: new URL(r.url()).pathname, at: Date.now() }));
  const vwr = (part) => requests.filter((r) => r.path.startsWith(`/vwr-api/vwr/${part}/`));

  await page.goto(`${devUrl}/vwr/p1?next=%2Fevents%2Fp1`);
  await page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
  await page.waitForFunction(() => document.getElementById('position').textContent.trim() === '4');
  assert.equal((await page.textContent('#ahead')).trim(), '3');

  // The visitor asks for a notification and a sound.
  assert.equal(await page.isVisible('#alerts'), true);
  await page.click('#notify');
  await page.waitForFunction(() => !document.getElementById('notified').hidden);
  assert.match(await page.textContent('#notified'), /You will get a notification/);
  await page.check('#sound');
  assert.equal(await page.evaluate(() => localStorage.getItem('vwr.sound')), '1');
  await page.screenshot({ path: join(ARTIFACTS, 'polling-waiting.png'), fullPage: true });

  // Waiting: only the status document, at the pace of the expected wait (≥ 1 s).
  const joinedAt = Date.now();
  await sleep(5000);
  const waiting = requests.filter((r) => r.at >= joinedAt && r.path.startsWith('/vwr-api/'));
  assert.ok(waiting.length >= 2, `the page polls: ${JSON.stringify(waiting)}`);
  assert.ok(waiting.every((r) => r.path === '/vwr-api/vwr/status/p1'), `only the status document: ${JSON.stringify(waiting)}`);
  assert.equal(vwr('check').length, 0, 'no check while waiting');
  assert.equal(vwr('assign').length, 1);
  const ticket = JSON.parse(await page.evaluate(() => localStorage.getItem('vwr.ticket.p1')));
  assert.equal(ticket.position, 4, 'the place is kept with the ticket');

  // The visitor switches to another tab.
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { get: () => 'hidden', configurable: true });
    Object.defineProperty(document, 'hidden', { get: () => true, configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  const hiddenAt = Date.now();

  // The operator lets four through: the page's turn. A hidden tab looks every 30–42 s.
  const adv = await admin('POST', '/api/admin/vwr/advance/p1', { by: 4 });
  assert.equal(adv.servingCounter, 4);
  await page.waitForFunction(() => document.title.startsWith('✅'), null, { timeout: 60000 });
  const seenAt = Date.now();
  assert.equal(await page.title(), '✅ It is your turn!');
  // Hidden: the first look 30–42 s later (not at the 1-s pace of a place this near), no other.
  // (A poll already on its way when the tab hid may land just after: not counted.)
  const hiddenPolls = vwr('status').filter((r) => r.at >= hiddenAt + 500).map((r) => r.at - hiddenAt);
  assert.equal(hiddenPolls.length, 1, `one slow look: ${hiddenPolls}`);
  assert.ok(hiddenPolls[0] >= 28000 && hiddenPolls[0] <= 44000, `30–42 s after hiding: ${hiddenPolls}`);
  assert.deepEqual(notes, [{ title: '✅ It is your turn!', body: 'It is your turn! Taking you there now…' }]);
  assert.equal(await page.getAttribute('#room', 'data-state'), 'leaving');
  await page.screenshot({ path: join(ARTIFACTS, 'polling-turn.png'), fullPage: true });
  assert.equal(vwr('check').length, 1, 'exactly one check, at the turn');

  // Still hidden: the page stays 10 s (so the alerts are seen), then goes on to next.
  await page.waitForURL(`${devUrl}/events/p1`, { timeout: 20000 });
  assert.ok(Date.now() - seenAt >= 8000, 'held a moment for the alerts');
  await page.waitForSelector('text=Demo event');
  assert.equal(vwr('check').length, 1, 'and no more checks');
  assert.equal(notes.length, 1);
  await context.close();
});
