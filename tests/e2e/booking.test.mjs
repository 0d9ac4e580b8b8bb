// Browser test of the booking page (static/queue/, docs/adr/0027-booking-page-path.md), in
// Debian Chromium driven by playwright-core, against `vwr dev` with 10-s entry tokens
// (VWR_ENTRY_TOKEN_TTL_SECONDS, the lowest allowed) and a tier-2 threshold of 1:
//   1. two visitors pass the waiting room (tier 1) onto the booking page, /queue/q1;
//   2. the first is admitted at once; the second waits at place 1, reading only the line
//      document, and keeps that place across a reload at the deployed path /vwr/queue/q1;
//   3. the first stays admitted across three entry-token expiries: each expired token is
//      refused by the protected /api/seats/q1, while tier2.fetch gets 200 after each expiry —
//      the last time after renewals failed (status blocked) past the token's end;
//   4. the first leaves; the second is admitted and its tier2.fetch gets 200.
// Both pages pass a basic accessibility check, in English and Korean, with no CSP violation.
// Screenshots: target/e2e/booking-{waiting,waiting-ko,admitted}.png.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTIFACTS, devSession } from './harness.mjs';

const TTL = 10;
let session, devUrl, browser, admin;

before(async () => {
  session = await devSession('booking', { VWR_ENTRY_TOKEN_TTL_SECONDS: String(TTL) });
  ({ devUrl, browser, admin } = session);
});

after(async () => {
  if (session) await session.close();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The `exp` claim (unix s) of an entry token. */
const expOf = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).exp;
/** Waits until the wall clock is past unix second `exp` by `margin` seconds. */
async function past(exp, margin = 1) {
  const ms = (exp + margin) * 1000 - Date.now();
  if (ms > 0) await sleep(ms);
}

/** A visitor: a browser context of its own, its page, the paths it requested, its CSP reports. */
async function visitor() {
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const requests = [];
  const problems = [];
  page.on('request', (r) => requests.push({ path: new URL(r.url()).pathname, at: Date.now() }));
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  return { context, page, requests, problems };
}

/** A call of the page: the protected API through the page's client (`token` null), or with `token`. */
const seats = (page, path, token) =>
  page.evaluate(async ([p, t]) => {
    const r = t === null ? await window.tier2.fetch(p, { headers: { accept: 'application/json' } }) : await fetch(p, { headers: { accept: 'application/json', 'x-queue-entry-token': t } });
    return { status: r.status, body: await r.json() };
  }, [path, token]);

/**
 * Basic accessibility, as the waiting page promises (static/README.md, "Accessibility"): the
 * language set, one h1, every button and link named (Chromium's accessibility tree), unique
 * ids, a polite status region and an alert region, 44-px buttons, nothing focusable hidden,
 * and no horizontal scrolling at this width.
 */
async function accessibilityProblems(page) {
  const problems = await page.evaluate(() => {
    const out = [];
    const lang = document.documentElement.lang;
    if (!['en', 'ko'].includes(lang)) out.push(`html lang ${JSON.stringify(lang)}`);
    if (!document.title.trim()) out.push('no document title');
    if (document.querySelectorAll('h1').length !== 1) out.push('not exactly one h1');
    const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length) out.push(`duplicate ids ${dup}`);
    if (!document.querySelector('[role="status"][aria-live="polite"]')) out.push('no polite status region');
    if (!document.querySelector('[role="alert"]')) out.push('no alert region');
    if (!document.querySelector('main[aria-labelledby]')) out.push('main is not labelled');
    for (const b of document.querySelectorAll('button')) {
      const r = b.getBoundingClientRect();
      if (b.offsetParent !== null && (r.height < 44 || r.width < 44)) out.push(`button #${b.id} is ${r.width}×${r.height}`);
    }
    for (const e of document.querySelectorAll('[hidden] a, [hidden] button, a[hidden], button[hidden]')) {
      if (e.offsetParent !== null) out.push(`#${e.id} is hidden yet shown`);
    }
    if (document.documentElement.scrollWidth > window.innerWidth) out.push('horizontal scrolling');
    return out;
  });
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  for (const n of nodes) {
    const role = n.role && n.role.value;
    if (!n.ignored && (role === 'button' || role === 'link') && !(n.name && String(n.name.value).trim())) problems.push(`a ${role} without a name`);
  }
  await cdp.detach();
  return problems;
}

test('the booking page: a place while waiting, admitted across entry-token expiries, protected calls after each, leave', async () => {
  // A manual sale (only the operator advances tier 1); tier 2 lets one visitor in at a time.
  await admin('POST', '/api/admin/vwr/activate/q1', { batchSize: 0 });
  const reg = await admin('PUT', '/api/queue/admin/threshold/q1', { threshold: 1 });
  assert.equal(reg.lineOrder, 'tier1');

  // 1. Through the waiting room onto the booking page.
  const a = await visitor();
  const b = await visitor();
  for (const v of [a, b]) {
    await v.page.goto(`${devUrl}/vwr/q1?next=%2Fqueue%2Fq1`);
    await v.page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
  }
  await admin('POST', '/api/admin/vwr/advance/q1', { by: 1 });
  await a.page.waitForURL(`${devUrl}/queue/q1`, { timeout: 20000 });

  // 2. The first is admitted at once; the second waits at place 1 of tier 2.
  await a.page.waitForSelector('#booking[data-state="admitted"]', { timeout: 10000 });
  assert.match(await a.page.textContent('#until'), /^You can book until /);
  assert.equal(await a.page.title(), '✅ Your turn to book');
  const arrived = Date.now();
  await admin('POST', '/api/admin/vwr/advance/q1', { by: 1 });
  await b.page.waitForURL(`${devUrl}/queue/q1`, { timeout: 20000 });
  await b.page.waitForSelector('#booking[data-state="waiting"]', { timeout: 10000 });
  assert.equal((await b.page.textContent('#position')).trim(), '1');
  assert.equal((await b.page.textContent('#ahead')).trim(), '0');
  assert.notEqual((await b.page.textContent('#wait')).trim(), '–');
  assert.match(await b.page.textContent('#status'), /^You are number 1 in line\. 0 people ahead of you\.$/);
  await b.page.screenshot({ path: join(ARTIFACTS, 'booking-waiting.png'), fullPage: true });
  assert.deepEqual(await accessibilityProblems(b.page), []);

  // Waiting makes no tier-2 call of its own: one check, then only the line document, read
  // every 1-2 s near the front (docs/adr/0032-line-reads-at-scale.md): twice within 6 s.
  const queue = () => b.requests.filter((r) => r.at >= arrived && r.path.startsWith('/api/queue/'));
  for (const end = Date.now() + 6000; queue().length < 3 && Date.now() < end; ) await sleep(200);
  assert.deepEqual(queue().filter((r) => r.path !== '/api/queue/line/q1').map((r) => r.path), ['/api/queue/check/q1'], JSON.stringify(queue()));
  assert.ok(queue().length >= 3, `the line document is read every 1-2 s near the front: ${JSON.stringify(queue())}`);

  // A reload at the deployed path keeps the place (the tier-2 identity cookie); in Korean too.
  await b.page.goto(`${devUrl}/vwr/queue/q1`);
  await b.page.waitForSelector('#booking[data-state="waiting"]', { timeout: 10000 });
  assert.equal((await b.page.textContent('#position')).trim(), '1');
  await b.page.click('#lang');
  await b.page.waitForFunction(() => document.documentElement.lang === 'ko');
  assert.equal(await b.page.textContent('#title'), '예매 대기열에 있습니다');
  assert.equal(await b.page.textContent('#lang'), 'English');
  assert.deepEqual(await accessibilityProblems(b.page), []);
  await b.page.screenshot({ path: join(ARTIFACTS, 'booking-waiting-ko.png'), fullPage: true });
  await b.page.click('#lang');
  await b.page.waitForFunction(() => document.documentElement.lang === 'en');

  // 3. Admitted across expiries: each token expires (the gate refuses it), the page renews
  //    before that, and a protected call through tier2.fetch after each expiry succeeds.
  const tokens = new Set();
  for (let round = 1; round <= 2; round++) {
    const held = await a.page.evaluate(() => window.tier2.token());
    assert.ok(held, `round ${round}: a token is held`);
    tokens.add(held);
    await past(expOf(held));
    const stale = await seats(a.page, '/api/seats/q1', held);
    assert.equal(stale.status, 403, `round ${round}: the expired token is refused`);
    assert.equal(stale.body.error, 'queue_entry_token_required');
    assert.equal(stale.body.redirectTo, '/vwr/queue/q1');
    const fresh = await seats(a.page, round === 1 ? '/api/seats/q1' : '/api/seats/q1/A1', null);
    assert.equal(fresh.status, 200, `round ${round}: ${JSON.stringify(fresh.body)}`);
    assert.equal(fresh.body.eventId, 'q1');
    assert.equal(await a.page.getAttribute('#booking', 'data-state'), 'admitted');
    tokens.add(await a.page.evaluate(() => window.tier2.token()));
  }
  assert.ok(tokens.size >= 3, `renewed: ${tokens.size} tokens`);

  // Renewals fail (status blocked) until the held token has expired; tier2.fetch then renews
  // first and gets 200, and the page is still admitted.
  const held = await a.page.evaluate(() => window.tier2.token());
  await a.page.route('**/api/queue/status/**', (route) => route.abort());
  await past(expOf(held));
  assert.equal(await a.page.getAttribute('#booking', 'data-state'), 'admitted');
  await a.page.unroute('**/api/queue/status/**');
  const late = await seats(a.page, '/api/seats/q1', null);
  assert.equal(late.status, 200, JSON.stringify(late.body));
  assert.notEqual(await a.page.evaluate(() => window.tier2.token()), held);
  assert.equal(await a.page.getAttribute('#booking', 'data-state'), 'admitted');
  await a.page.screenshot({ path: join(ARTIFACTS, 'booking-admitted.png'), fullPage: true });
  assert.deepEqual(await accessibilityProblems(a.page), []);
  // The second visitor waited all along, at place 1.
  assert.equal(await b.page.getAttribute('#booking', 'data-state'), 'waiting');

  // 4. The first leaves (the focus goes to the heading); the second is admitted once the
  //    leaver's last token has expired (ADR 0012), and books.
  await a.page.focus('#leave');
  await a.page.click('#leave');
  await a.page.waitForSelector('#booking[data-state="left"]');
  assert.equal(await a.page.evaluate(() => document.activeElement.id), 'title');
  assert.equal(await a.page.evaluate(() => window.tier2.token()), null);
  await b.page.waitForSelector('#booking[data-state="admitted"]', { timeout: (TTL + 15) * 1000 });
  const booked = await seats(b.page, '/api/seats/q1', null);
  assert.equal(booked.status, 200, JSON.stringify(booked.body));

  assert.deepEqual(a.problems, [], 'no CSP violation or page error');
  assert.deepEqual(b.problems, [], 'no CSP violation or page error');
  await a.context.close();
  await b.context.close();
});
