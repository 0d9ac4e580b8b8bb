// Browser walk of the abuse defences (docs/abuse.md) in Debian Chromium driven by playwright-core,
// against `vwr dev`: an event with a proof of work — the waiting page solves the challenge in a
// Web Worker (pow-worker.js), gets its place, keeps it and its request secret across a reload,
// checks with the secret (X-VWR-Request-Secret) at its turn and goes on to `next`; then the
// solve time by difficulty in this headless Chromium (target/e2e/pow-times.json); and one place
// per account with the site's enqueue token, signed by docs/examples/enqueue-token.mjs.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTIFACTS, CHROMIUM, VWR, devSession } from './harness.mjs';
import { enqueueCookie, enqueueToken, siteKey } from '../../docs/examples/enqueue-token.mjs';

let session, devUrl, browser, admin, site;

before(async () => {
  // The site's enqueue key pair, made here: the private half signs, vwr gets the JWKS.
  const keys = execFileSync(VWR, ['keys', 'generate', '--kid', 'e2e'], { encoding: 'utf8' });
  const line = (name) => keys.split('\n').find((l) => l.startsWith(name + '=')).slice(name.length + 1);
  site = siteKey(line('SITE_ENQUEUE_KEY'));
  session = await devSession('abuse', { VWR_ENQUEUE_JWKS: line('VWR_ENQUEUE_JWKS').replace(/^'|'$/g, '') });
  ({ devUrl, browser, admin } = session);
});

after(async () => {
  if (session) await session.close();
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Every request (with all its headers) and response of `page`, in order, with Node-side times. */
function networkLog(page) {
  const log = { requests: [], responses: [] };
  page.on('request', (r) => {
    const entry = { path: new URL(r.url()).pathname, method: r.method(), body: r.postData(), at: Date.now(), headers: null };
    log.requests.push(entry);
    r.allHeaders().then((h) => (entry.headers = h), () => {});
  });
  page.on('response', (r) => log.responses.push({ path: new URL(r.url()).pathname, status: r.status(), at: Date.now() }));
  return log;
}

test('proof of work in the browser: solved in a Worker, the place and its secret kept across a reload, the check at the turn carries the secret, on to next', async () => {
  await admin('POST', '/api/admin/vwr/activate/a1', { powDifficulty: 12, batchSize: 0 });
  // Without a solution, assign asks for one.
  const bare = await fetch(`${devUrl}/vwr-api/vwr/assign/a1`, { method: 'POST' });
  const asked = await bare.json();
  assert.equal(bare.status, 403);
  assert.equal(asked.error, 'challenge_required');
  assert.equal(asked.difficulty, 12);

  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (m) => /Content Security Policy|Refused to/i.test(m.text()) && violations.push(m.text()));
  // What the polite live region and the message line said (the progress is brief at 12 bits).
  await page.addInitScript(() => {
    window.vwrSaid = [];
    new MutationObserver(() => {
      for (const id of ['message', 'status']) {
        const t = document.getElementById(id)?.textContent;
        if (t && window.vwrSaid.at(-1) !== t) window.vwrSaid.push(t);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  const net = networkLog(page);
  const api = (part) => net.requests.filter((r) => r.path.startsWith(`/vwr-api/vwr/${part}/`));

  const loadedAt = Date.now();
  await page.goto(`${devUrl}/vwr/a1?next=%2Fevents%2Fa1`);
  await page.waitForSelector('#room[data-state="waiting"]', { timeout: 30000 });
  const challenged = net.responses.find((r) => r.path === '/vwr-api/vwr/assign/a1' && r.status === 403);
  const placed = net.responses.find((r) => r.path === '/vwr-api/vwr/assign/a1' && r.status === 200);
  assert.ok(challenged && placed, JSON.stringify(net.responses));
  console.log(`# difficulty 12: page load → placed ${placed.at - loadedAt} ms (challenge answered → placed ${placed.at - challenged.at} ms)`);

  const position = (await page.textContent('#position')).trim();
  assert.match(position, /^\d+$/);
  const [first, second] = api('assign');
  assert.equal(first.body, null, 'the first assign has no proof');
  const sent = JSON.parse(second.body);
  assert.equal(sent.pow.challenge.split('.').length, 3);
  assert.match(sent.pow.nonce, /^[A-Za-z0-9_-]{1,64}$/);
  assert.ok((await page.evaluate(() => window.vwrSaid)).some((t) => t.startsWith('Checking your browser')), 'the progress was said');
  assert.equal(await page.isVisible('#message'), false, 'and is gone once placed');

  const ticket = JSON.parse(await page.evaluate(() => localStorage.getItem('vwr.ticket.a1')));
  assert.equal(String(ticket.position), position);
  assert.match(ticket.secret, /^[A-Za-z0-9_-]{16,}$/, 'the secret is kept with the ticket');
  assert.ok(!(await page.content()).includes(ticket.secret), 'not in the page');
  assert.ok(!(await page.title()).includes(ticket.secret), 'not in the title');

  // A reload: the same place, no second join.
  await page.reload();
  await page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
  assert.equal((await page.textContent('#position')).trim(), position);
  assert.equal(api('assign').length, 2, 'no new assign after the reload');
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem('vwr.ticket.a1'))).secret, ticket.secret);

  // The operator lets the page's place through: one check, with the secret, and on to next.
  await admin('POST', '/api/admin/vwr/advance/a1', { by: Number(position) });
  await page.waitForURL(`${devUrl}/events/a1`, { timeout: 20000 });
  const checks = api('check');
  assert.equal(checks.length, 1, 'exactly one check, at the turn');
  assert.equal(checks[0].headers['x-vwr-request-secret'], ticket.secret, 'the check carries X-VWR-Request-Secret');
  assert.ok(!checks[0].path.includes(ticket.secret), 'never in the URL');
  assert.ok(net.requests.every((r) => !r.path.includes(ticket.secret)));
  const refused = net.responses.filter((r) => r.path.startsWith('/vwr-api/') && r.status === 403 && r.at > placed.at);
  assert.deepEqual(refused, [], 'no 403 after the place was taken (no proof_required)');
  assert.ok(net.responses.some((r) => r.path === '/vwr/assets/pow-worker.js' && r.status === 200), 'the worker file was served');
  assert.deepEqual(violations, [], 'the Worker is within the page policy');
  await context.close();
});

test('solve time by difficulty in headless Chromium (target/e2e/pow-times.json)', async () => {
  const difficulties = [8, 12, 16, 18, 20];
  const RUNS = 3;
  const result = { chromium: '', cpus: cpus().length, cpuModel: cpus()[0]?.model, loadAverage: loadavg()[0], runs: RUNS, difficulties: {} };
  try {
    result.chromium = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch { /* unknown */ }
  for (const d of difficulties) {
    const event = `pow${d}`;
    await admin('POST', `/api/admin/vwr/activate/${event}`, { powDifficulty: d, batchSize: 0 });
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      // A fresh visitor each time. The Worker is observed, not replaced: its answer
      // ({nonce, hashes, ms}) is recorded beside the page's own handler.
      const context = await browser.newContext({ locale: 'en-US' });
      const page = await context.newPage();
      await page.addInitScript(() => {
        const W = window.Worker;
        window.vwrWork = [];
        window.Worker = function (url) {
          const w = new W(url);
          w.addEventListener('message', (e) => window.vwrWork.push(e.data));
          return w;
        };
      });
      const net = networkLog(page);
      const loadedAt = Date.now();
      await page.goto(`${devUrl}/vwr/${event}?next=%2Fevents%2F${event}`);
      await page.waitForSelector('#room[data-state="waiting"]', { timeout: 120000 });
      const assigns = net.responses.filter((r) => r.path === `/vwr-api/vwr/assign/${event}`);
      assert.deepEqual(assigns.map((r) => r.status), [403, 200], `difficulty ${d}: one challenge, one solution`);
      const solution = net.requests.filter((r) => r.path === `/vwr-api/vwr/assign/${event}` && r.body)[0];
      const [work] = await page.evaluate(() => window.vwrWork);
      runs.push({ pageMs: assigns[1].at - loadedAt, solveMs: solution.at - assigns[0].at, workerMs: work.ms, hashes: work.hashes });
      await context.close();
    }
    const hashes = runs.reduce((n, r) => n + r.hashes, 0);
    const ms = runs.reduce((n, r) => n + r.workerMs, 0);
    result.difficulties[d] = {
      medianSolveMs: median(runs.map((r) => r.solveMs)),
      medianPageLoadToPlacedMs: median(runs.map((r) => r.pageMs)),
      medianWorkerMs: median(runs.map((r) => r.workerMs)),
      expectedHashes: 2 ** d,
      hashesPerSecond: ms > 0 ? Math.round((hashes / ms) * 1000) : null,
      runs,
    };
    console.log(`# difficulty ${d}: median solve ${result.difficulties[d].medianSolveMs} ms (challenge answered → solution sent), worker ${result.difficulties[d].medianWorkerMs} ms; runs ${JSON.stringify(runs)}`);
  }
  // A mid-range phone: Chromium's 4x CPU throttling (Lighthouse's "mid-tier mobile"). It slows
  // the page's thread, not Workers, so the solver runs there (the page's no-Worker fallback),
  // 30 challenges at 16 bits with a fixed prefix (the hash count is the nonce's counter + 1).
  const phone = await browser.newPage();
  const cdp = await phone.context().newCDPSession(phone);
  await phone.goto(`${devUrl}/vwr/assets/verify.html`);
  await phone.addScriptTag({ url: `${devUrl}/vwr/assets/pow-worker.js` });
  for (const rate of [1, 4]) {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate });
    const m = await phone.evaluate(() => {
      const t = performance.now();
      let n = 0;
      for (let i = 0; i < 30; i++) n += parseInt(window.vwrPow.solve(`k1.${i}.x`, 16, '000000000000').slice(12), 16) + 1;
      return { hashes: n, ms: performance.now() - t };
    });
    result[rate === 1 ? 'pageThread' : 'phoneEmulation'] = { cpuThrottlingRate: rate, hashesPerSecond: Math.round((m.hashes / m.ms) * 1000) };
  }
  await phone.close();
  console.log(`# page thread ${result.pageThread.hashesPerSecond} hashes/s; 4x CPU throttling (mid-range phone) ${result.phoneEmulation.hashesPerSecond} hashes/s`);
  writeFileSync(join(ARTIFACTS, 'pow-times.json'), JSON.stringify(result, null, 2) + '\n');
  for (const d of difficulties) assert.ok(result.difficulties[d].medianSolveMs < 60000, `difficulty ${d} solves within the challenge's life`);
  assert.ok(result.phoneEmulation.hashesPerSecond < result.pageThread.hashesPerSecond, 'the throttling slowed the solver');
});

test('one place per account: the site signs an enqueue token (docs/examples/enqueue-token.mjs); a second join of the account gets the same ticket, in the browser too', async () => {
  await admin('POST', '/api/admin/vwr/activate/a2', { enqueueTokenRequired: true, batchSize: 0 });
  const assign = (headers = {}) => fetch(`${devUrl}/vwr-api/vwr/assign/a2`, { method: 'POST', headers }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const none = await assign();
  assert.equal(none.status, 401);
  assert.equal(none.body.error, 'enqueue_token_required');
  const alice = enqueueToken(site, 'alice', 'a2');
  const first = await assign({ 'x-vwr-enqueue-token': alice });
  const again = await assign({ 'x-vwr-enqueue-token': enqueueToken(site, 'alice', 'a2') });
  assert.equal(first.status, 200);
  assert.equal(again.body.requestId, first.body.requestId, 'the same account: the same ticket');
  assert.equal(again.body.requestSecret, first.body.requestSecret);
  const bob = await assign({ 'x-vwr-enqueue-token': enqueueToken(site, 'bob', 'a2') });
  assert.notEqual(bob.body.requestId, first.body.requestId);
  assert.equal((await assign({ 'x-vwr-enqueue-token': enqueueToken(site, 'alice', 'other') })).status, 401, 'a token of another event');
  assert.equal((await assign({ 'x-vwr-enqueue-token': enqueueToken(site, 'alice', 'a2', -120) })).status, 401, 'an expired token');

  // In the browser: the site set its cookie after the login; two devices of one account, one place.
  const host = new URL(devUrl).hostname;
  const cookie = enqueueCookie(enqueueToken(site, 'carol', 'a2'), 'a2');
  assert.match(cookie, /^vwr_enqueue_a2=[^;]+; Max-Age=600; Path=\/vwr-api\/; Secure; HttpOnly; SameSite=Lax$/);
  const value = cookie.slice('vwr_enqueue_a2='.length, cookie.indexOf(';'));
  const positions = [];
  for (let device = 0; device < 2; device++) {
    const context = await browser.newContext({ locale: 'en-US' });
    await context.addCookies([{ name: 'vwr_enqueue_a2', value, domain: host, path: '/vwr-api/', httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    await page.goto(`${devUrl}/vwr/a2?next=%2Fevents%2Fa2`);
    await page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
    positions.push((await page.textContent('#position')).trim());
    await context.close();
  }
  assert.equal(positions[0], positions[1], 'one account, one place, on two devices');
  // Not signed in: the page says so and stops.
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  await page.goto(`${devUrl}/vwr/a2?next=%2Fevents%2Fa2`);
  await page.waitForFunction(() => /Sign in on the site first/.test(document.body.innerText), null, { timeout: 15000 });
  await context.close();
});
