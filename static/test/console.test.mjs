// The console (static/console/, docs/console.md): its rules as console/console.js exports them
// under Node, and its files. The built files themselves are checked by build.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

const STATIC = join(import.meta.dirname, '..');
const DIR = join(STATIC, 'console');
const require = createRequire(import.meta.url);
const c = require(join(DIR, 'console.js'));
const read = (f) => readFileSync(join(DIR, f), 'utf8');

describe('roles', () => {
  test('each role sees what its rank allows, as the server decides (i36: route → least role)', () => {
    assert.deepEqual(c.visibleActions('viewer'), ['read']);
    assert.deepEqual(c.visibleActions('operator'), ['read', 'pause', 'resume', 'message', 'advance', 'health', 'threshold', 'passCreate', 'passRevoke']);
    assert.deepEqual(c.visibleActions('admin'), Object.keys(c.ACTIONS));
    for (const a of ['activate', 'deactivate', 'close']) {
      assert.equal(c.allowed('operator', a), false, a);
      assert.equal(c.allowed('admin', a), true, a);
    }
  });

  test('an unknown role or action shows nothing', () => {
    assert.deepEqual(c.visibleActions('root'), []);
    assert.deepEqual(c.visibleActions(undefined), []);
    assert.equal(c.allowed('admin', 'drop-table'), false);
  });

  test('whoami gives the role; any other answer gives no role', () => {
    assert.deepEqual(c.whoamiFrom({ status: 200, body: { name: 'kim@example.com', role: 'operator', via: 'oidc' } }), { name: 'kim@example.com', role: 'operator', via: 'oidc' });
    assert.equal(c.whoamiFrom({ status: 404, body: { error: 'not_found' } }), null);
    assert.equal(c.whoamiFrom({ status: 200, body: { name: 'x', role: 'owner' } }), null);
    assert.equal(c.whoamiFrom({ status: 403, body: { error: 'forbidden_role' } }), null);
    assert.equal(c.whoamiFrom({ network: true }), null);
  });

  test('a refusal by role says the role and what is needed', () => {
    const m = c.roleMessage({ error: 'forbidden_role', message: 'close needs the admin role' }, 'operator', 'close');
    assert.equal(m, 'Refused for your role (operator): close needs the admin role');
    assert.equal(c.roleMessage({ error: 'forbidden_role' }, 'viewer', 'pause'), 'Your role (viewer) cannot do this: it needs the operator role.');
    assert.equal(c.roleMessage(null, undefined, 'read-all'), 'Your role (unknown) cannot do this.');
  });
});

describe('confirmation', () => {
  test('opening or ending a sale asks first; ending it asks for the event id typed', () => {
    assert.equal(c.confirmation('activate'), 'confirm');
    assert.equal(c.confirmation('resume'), 'confirm');
    assert.equal(c.confirmation('close'), 'type');
    assert.equal(c.confirmation('deactivate'), 'type');
    for (const a of ['pause', 'message', 'advance', 'health', 'threshold', 'passCreate', 'passRevoke']) assert.equal(c.confirmation(a), 'none', a);
  });

  test('what lets an action be sent', () => {
    assert.equal(c.confirmed('pause', 'e1', undefined), true);
    assert.equal(c.confirmed('activate', 'e1', { agreed: true }), true);
    assert.equal(c.confirmed('activate', 'e1', { agreed: false }), false);
    assert.equal(c.confirmed('close', 'spring-sale', { agreed: true, typed: 'spring-sale' }), true);
    assert.equal(c.confirmed('close', 'spring-sale', { agreed: true, typed: '  spring-sale ' }), true);
    assert.equal(c.confirmed('close', 'spring-sale', { agreed: true, typed: 'Spring-sale' }), false);
    assert.equal(c.confirmed('close', 'spring-sale', { agreed: true, typed: 'spring' }), false);
    assert.equal(c.confirmed('close', 'spring-sale', { agreed: false, typed: 'spring-sale' }), false);
    assert.equal(c.confirmed('deactivate', 'e1', { agreed: true, typed: '' }), false);
  });
});

describe('the token in the address', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJrIn0.c2ln';

  test('is taken from #token=…, and the rest of the fragment stays', () => {
    assert.deepEqual(c.tokenFromHash('#token=' + jwt), { token: jwt, hash: '' });
    assert.deepEqual(c.tokenFromHash('#token=' + jwt + '&/events/e1'), { token: jwt, hash: '#/events/e1' });
    assert.deepEqual(c.tokenFromHash('token=' + jwt), { token: jwt, hash: '' });
  });

  test('anything else is no token, and a fragment without one is left alone', () => {
    assert.deepEqual(c.tokenFromHash('#/events/e1'), { token: null, hash: '#/events/e1' });
    assert.deepEqual(c.tokenFromHash(''), { token: null, hash: '' });
    assert.deepEqual(c.tokenFromHash(undefined), { token: null, hash: '' });
    // Not a JWT's characters, or bad escapes: no token, and still dropped from the address.
    for (const bad of ['#token=<script>', '#token=a b', '#token=%E0%A4%A', '#token=', '#token=a.b.c.d']) {
      assert.equal(c.tokenFromHash(bad).token, null, bad);
      assert.equal(c.tokenFromHash(bad).hash, '', bad);
    }
  });

  test('vwr dev: signIn keeps it for the tab and takes it out of the address', async () => {
    const kept = new Map();
    const session = { getItem: (k) => (kept.has(k) ? kept.get(k) : null), setItem: (k, v) => kept.set(k, v), removeItem: (k) => kept.delete(k) };
    const replaced = [];
    const env = (hash) => ({ location: { hash, pathname: '/console/', search: '', origin: 'http://127.0.0.1:8080' }, history: { replaceState: (s, t, url) => replaced.push(url) }, session });
    const s = await c.signIn(env('#token=' + jwt + '&/events/e1'), { devTokens: true, issuer: 'http://127.0.0.1:8080', clientId: '' });
    assert.equal(s.token, jwt);
    assert.deepEqual(replaced, ['/console/#/events/e1']);
    // A reload: the address has no token now, the tab still has it.
    const again = await c.signIn(env('#/events/e1'), { devTokens: true });
    assert.equal(again.token, jwt);
    assert.equal(replaced.length, 1);
    assert.deepEqual(await again.renew(), { needed: 'dev' });
    assert.deepEqual(await c.signIn(env(''), { devTokens: true }), { needed: 'dev' });
    // A deployed console never reads a token from its address.
    const deployed = await c.signIn(env('#token=' + jwt), { issuer: 'https://issuer.example', clientId: 'abc' });
    assert.deepEqual(deployed, { needed: 'config' }, 'no OIDC library under Node');
    assert.equal(kept.size, 0);
  });

  test('OIDC: the code flow with PKCE from config.json, the ID token sent', async () => {
    const made = [];
    class UserManager {
      constructor(settings) {
        made.push(settings);
      }
      getUser() {
        return Promise.resolve({ expired: false, id_token: 'id.tok.en', access_token: 'acc.ess.tok' });
      }
    }
    class WebStorageStateStore {}
    const env = { location: { hash: '', pathname: '/vwr-console/index.html', search: '', origin: 'https://shop.example' }, history: {}, session: {}, oidc: { UserManager, WebStorageStateStore } };
    const s = await c.signIn(env, { api: 'https://api.example', issuer: 'https://cognito.example/pool', clientId: 'app1', scopes: 'openid email' });
    assert.equal(s.token, 'id.tok.en');
    assert.equal(made[0].authority, 'https://cognito.example/pool');
    assert.equal(made[0].client_id, 'app1');
    assert.equal(made[0].response_type, 'code');
    assert.equal(made[0].scope, 'openid email');
    assert.equal(made[0].redirect_uri, 'https://shop.example/vwr-console/');
  });
});

describe('the live figures', () => {
  const status = (issued, served, admitted, waiting, t2) => ({ state: 'open', issued, servingCounter: served, admitted, waiting, tier2: t2 });

  test('rates per minute come from successive reads, over the last minute of them', () => {
    let s = [];
    // A read every 3 s: 10 joins and 6 served per read, i.e. 200 and 120 a minute.
    for (let i = 0; i <= 40; i++) s = c.keepWindow(s, c.sampleOf(status(10 * i, 6 * i, 5 * i, 4 * i), null, 1_000_000 + 3000 * i));
    assert.equal(c.ratePerMinute(s, 'joins', 0), null, 'one read: no rate');
    assert.equal(c.ratePerMinute(s, 'joins', 1), 200);
    assert.equal(c.ratePerMinute(s, 'joins', 40), 200);
    assert.equal(c.ratePerMinute(s, 'served', 40), 120);
    assert.equal(c.ratePerMinute(s, 'redeemed', 40), 100);
    const live = c.liveSeries(s);
    assert.equal(live.t.length, 41);
    assert.equal(live.t[1], 1003);
    assert.deepEqual(live.joins.slice(0, 3), [null, 200, 200]);
    assert.deepEqual(live.line.slice(0, 3), [0, 4, 8]);
  });

  test('a counter that went down (the event made anew) or a gap is no rate', () => {
    let s = [];
    s = c.keepWindow(s, c.sampleOf(status(100, 50, 40, 50), null, 0));
    s = c.keepWindow(s, c.sampleOf(status(3, 1, 0, 2), null, 3000));
    assert.equal(c.ratePerMinute(s, 'joins', 1), null);
    // Two reads five minutes apart (the tab slept): the rise is not a rate of the last minute.
    s = c.keepWindow(s, c.sampleOf(status(600, 1, 0, 2), null, 303000));
    assert.equal(c.ratePerMinute(s, 'joins', 2), null);
  });

  test('tier 2: from the status (vwr dev) or its own', () => {
    assert.deepEqual(c.sampleOf(status(1, 1, 1, 0, { active: 7, threshold: 50 }), null, 1), { t: 1, state: 'open', joins: 1, served: 1, redeemed: 1, line: 0, active: 7, threshold: 50 });
    assert.equal(c.sampleOf(status(1, 1, 1, 0), { active: 3, threshold: null }, 1).threshold, null);
    assert.equal(c.sampleOf(status(1, 1, 1, 0), null, 1).active, null);
  });

  test('the charts keep 30 minutes, and reads answered out of order are dropped', () => {
    let s = [];
    const minute = 60_000;
    for (let m = 0; m <= 45; m++) s = c.keepWindow(s, c.sampleOf(status(m, m, m, 0), null, m * minute));
    assert.equal(c.WINDOW_MS, 30 * minute);
    assert.equal(s[0].t, 15 * minute);
    assert.equal(s[s.length - 1].t, 45 * minute);
    assert.equal(s.length, 31);
    assert.equal(c.keepWindow(s, c.sampleOf(status(0, 0, 0, 0), null, 44 * minute)), s);
  });

  test("the report's minutes: refusals per minute and by code, within the window", () => {
    const report = {
      minutes: [
        { at: 600, joins: 5, served: 4, redeemed: 3, refusals: {} },
        { at: 3000, joins: 9, served: 8, redeemed: 7, refusals: { proof_required: 2, invalid_request_id: 1 } },
        { at: 3060, joins: 1, served: 1, redeemed: 1, refusals: { proof_required: 4 } },
      ],
    };
    const all = c.reportSeries(report);
    assert.deepEqual(all.t, [600, 3000, 3060]);
    assert.deepEqual(all.refusals, [0, 3, 4]);
    assert.deepEqual(all.byCode, { invalid_request_id: [0, 1, 0], proof_required: [0, 2, 4] });
    const last = c.reportSeries(report, 3100, 1800);
    assert.deepEqual(last.t, [3000, 3060]);
    assert.deepEqual(last.joins, [9, 1]);
    assert.deepEqual(c.reportSeries({}).t, []);
  });

  test('a row of every event', () => {
    const row = c.listRow({
      id: 'e1',
      outcome: 'ok',
      status: { state: 'open', waiting: 1234, outflow: { servedPerMinute: 59.6, redeemedPerMinute: 4.25 }, heldBy: 'health', holdReason: 'db slow', standbyAlarm: 'site-5xx', standbyAlarmState: 'ok' },
      tier2: { active: 10, threshold: 150 },
    });
    assert.equal(row.state, 'open');
    assert.equal(row.served, '60');
    assert.equal(row.redeemed, '4.3');
    assert.match(row.line, /^1.?234$/);
    assert.equal(row.tier2, '10 / 150');
    assert.equal(row.hold, 'Held: db slow');
    assert.equal(row.standby, 'site-5xx (ok)');
    const bare = c.listRow({ id: 'e2', outcome: 'ok', status: { state: 'inactive', waiting: 0, outflow: { servedPerMinute: null } }, tier2: null });
    assert.deepEqual([bare.served, bare.tier2, bare.hold, bare.standby], ['–', '–', 'No', '–']);
  });
});

describe('answers of the API', () => {
  test('sorted by what the console does next', () => {
    assert.equal(c.outcome({ status: 200, body: {} }), 'ok');
    assert.equal(c.outcome({ status: 201, body: {} }), 'ok');
    assert.equal(c.outcome({ status: 403, body: { error: 'forbidden_role' } }), 'forbidden_role');
    assert.equal(c.outcome({ status: 403, body: { message: 'Forbidden' } }), 'refused');
    assert.equal(c.outcome({ status: 401, body: { message: 'Unauthorized' } }), 'signin');
    for (const s of [500, 502, 503, 504, 429]) assert.equal(c.outcome({ status: s, body: null }), 'retry', s);
    assert.equal(c.outcome({ network: true }), 'retry');
    assert.equal(c.outcome({ status: 404, body: { error: 'event_not_found' } }), 'missing');
    assert.equal(c.outcome({ status: 409, body: { error: 'invalid_transition' } }), 'refused');
    assert.equal(c.worst(['ok', 'missing', 'retry', 'forbidden_role']), 'retry');
    assert.equal(c.worst(['retry', 'signin']), 'signin');
    assert.equal(c.worst([]), 'ok');
  });

  test('reads back off while unanswered: 2, 4, 8 … 60 s ± 20 %, never before Retry-After', () => {
    assert.equal(c.nextDelay('ok', 0, null, 3000, 0.5, 0), 3000);
    assert.equal(c.nextDelay('retry', 1, null, 3000, 0.5, 0), 2000);
    assert.equal(c.nextDelay('retry', 3, null, 3000, 0.5, 0), 8000);
    assert.equal(c.nextDelay('retry', 9, null, 3000, 0.5, 0), 60000);
    assert.equal(c.nextDelay('retry', 1, null, 3000, 0, 0), 1600);
    assert.equal(c.nextDelay('retry', 1, '7', 3000, 0.5, 0), 7000);
  });

  test('the poller: "retrying" with a growing delay, back to its pace once answered', async () => {
    const answers = ['retry', 'retry', 'ok', 'signin'];
    const reports = [];
    const timers = [];
    const env = { now: () => 0, random: () => 0.5, setTimeout: (fn, ms) => timers.push([fn, ms]), clearTimeout: () => {} };
    c.poller(env, () => Promise.resolve({ outcome: answers.shift() }), 3000, (o, d, e) => reports.push([o, d, e]));
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setImmediate(r));
      if (timers[i]) timers[i][0]();
    }
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(reports, [
      ['retry', 2000, 1],
      ['retry', 4000, 2],
      ['ok', 3000, 0],
      ['signin', 3000, 0],
    ]);
    assert.equal(timers.length, 3, 'no read after a sign-in is needed');
  });

  test('every call carries the bearer token, to the configured API, without cookies', async () => {
    const calls = [];
    const fetch = (url, init) => {
      calls.push([url, init]);
      return Promise.resolve({ status: 503, headers: { get: (h) => (h === 'retry-after' ? '2' : null) }, text: () => Promise.resolve('{"error":"service_unavailable"}') });
    };
    const api = c.apiClient({ fetch }, 'https://api.example/', () => 'tok');
    const res = await api.call('PUT', c.apiPath('threshold', 'e1'), { threshold: 5 });
    assert.deepEqual(res, { status: 503, body: { error: 'service_unavailable' }, retryAfter: '2' });
    assert.equal(calls[0][0], 'https://api.example/api/queue/admin/threshold/e1');
    assert.equal(calls[0][1].headers.authorization, 'Bearer tok');
    assert.equal(calls[0][1].credentials, 'omit');
    assert.equal(calls[0][1].body, '{"threshold":5}');
    const same = c.apiClient({ fetch: () => Promise.reject(new TypeError('offline')) }, '', () => 'tok');
    assert.deepEqual(await same.get(c.apiPath('whoami')), { network: true });
    assert.equal(c.apiPath('passRevoke', 'e1', 'pAb'), '/api/admin/vwr/pass/e1/pAb');
    assert.equal(c.apiPath('status', 'e1'), '/api/admin/vwr/status/e1');
  });
});

describe('the message and the audit', () => {
  test('the five languages: empty ones left out, none at all clears', () => {
    assert.deepEqual(c.messageBody({ en: ' Back at 9 ', ja: '', ko: '9시에' }), { message: { en: 'Back at 9', ko: '9시에' } });
    assert.deepEqual(c.messageBody({ en: '  ' }), { message: null });
    assert.deepEqual(c.messageProblems({ en: 'x'.repeat(500), ja: 'あ'.repeat(501) }), ['ja']);
    assert.deepEqual(c.MESSAGE_LANGS, ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant']);
  });

  test("the preview is vwr dev's (docs/brand.md#previews)", () => {
    assert.equal(c.previewUrl('e1', 'paused', 'zh-Hant'), '/vwr/e1?preview=paused&lang=zh-Hant');
    assert.equal(c.previewUrl('e1', 'bogus', 'fr'), '/vwr/e1?preview=waiting&lang=en');
  });

  test('an audit entry in words: who, what, and what changed', () => {
    const d = c.describeAudit({ actor: 'kim@example.com', action: 'pause', before: { state: 'open', config: { batchSize: 5 } }, after: { state: 'paused', config: { batchSize: 5 }, message: { en: 'Back soon' } } });
    assert.deepEqual(d, { who: 'kim@example.com', what: 'paused', changes: ['state open → paused', 'message set'] });
    const adv = c.describeAudit({ actor: 'dev', action: 'advance', before: { servingCounter: 10 }, after: { servingCounter: 60 } });
    assert.deepEqual(adv.changes, ['serving counter 10 → 60']);
    const act = c.describeAudit({ actor: 'arn:aws:iam::1:user/ops', action: 'activate', before: null, after: { state: 'open', config: { batchSize: 5 } } });
    assert.deepEqual(act.changes, ['state none → open', 'batchSize – → 5']);
    assert.equal(c.describeAudit({ action: 'something_new' }).what, 'something_new');
  });

  test('routes of the address', () => {
    assert.deepEqual(c.route('#/'), { view: 'events' });
    assert.deepEqual(c.route('#/events/e1'), { view: 'event', id: 'e1', tab: 'live' });
    assert.deepEqual(c.route('#/events/spring-sale/audit'), { view: 'event', id: 'spring-sale', tab: 'audit' });
    assert.deepEqual(c.route('#/events/bad.id'), { view: 'events' });
  });
});

describe("the console's files", () => {
  const html = read('index.html');
  const sources = ['dom.js', 'list.js', 'event.js', 'panels.js', 'main.js', 'charts.js'].map((f) => readFileSync(join(STATIC, 'src', 'console', f), 'utf8')).join('\n');

  test('every element the script names is on the page, and ids are unique', () => {
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(new Set(ids).size, ids.length, 'unique ids');
    const named = new Set([...sources.matchAll(/byId\('([^']+)'\)/g)].map((m) => m[1]));
    for (const id of named) assert.ok(ids.includes(id), `#${id}`);
    for (const tab of ['live', 'actions', 'message', 'passes', 'audit', 'report', 'draw']) {
      assert.ok(ids.includes(`tab-${tab}`) && ids.includes(`to-${tab}`), tab);
    }
    for (const l of c.MESSAGE_LANGS) assert.ok(ids.includes(`msg-${l}`) && ids.includes(`count-${l}`), l);
  });

  test('every data-action is an action of the roles table', () => {
    const actions = [...html.matchAll(/data-action="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(actions.length >= 10);
    for (const a of actions) assert.ok(a in c.ACTIONS, a);
  });

  test('keyboard and screen readers: labelled fields, real buttons, no inline script or style', () => {
    const ids = new Set([...html.matchAll(/<(?:input|select|textarea)\b[^>]*\sid="([^"]+)"/g)].map((m) => m[1]));
    const labelled = new Set([...html.matchAll(/<label for="([^"]+)"/g)].map((m) => m[1]));
    for (const id of ids) assert.ok(labelled.has(id), `a label for #${id}`);
    assert.doesNotMatch(html, /<div[^>]*\s(onclick|role="button")/);
    assert.doesNotMatch(html, /\son[a-z]+=/);
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)/);
    assert.doesNotMatch(html, /\sstyle=/);
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.doesNotMatch(sources, /innerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });

  test('its policy comes first and frames only this origin', () => {
    const head = html.slice(0, html.indexOf('</head>'));
    const csp = head.indexOf('Content-Security-Policy');
    assert.ok(csp > 0 && csp < head.indexOf('<link') && csp < head.indexOf('<script'));
    assert.match(head, /script-src 'self';/);
    assert.match(head, /frame-src 'self';/);
  });

  test('the libraries: their licences beside them, and the weight', () => {
    const licences = read('LICENSES.txt');
    for (const name of ['oidc-client-ts@3.5.0 (Apache-2.0)', 'jwt-decode@4.0.0 (MIT)', 'uplot@1.6.32 (MIT)']) assert.ok(licences.includes(name), name);
    assert.match(licences, /Apache License/);
    assert.match(licences, /Permission is hereby granted/);
    const vendor = read('vendor.js');
    assert.match(vendor, /var oidc=/);
    assert.match(vendor, /var uPlot=/);
    assert.doesNotMatch(vendor, /sourceMappingURL/);
    // What a first load fetches (the console is for a few people, but on a phone too).
    const files = ['index.html', 'console.css', 'console.js', 'vendor.js', 'vendor.css'];
    const bytes = files.reduce((n, f) => n + Buffer.byteLength(read(f)), 0);
    const gz = files.reduce((n, f) => n + gzipSync(read(f), { level: 9 }).length, 0);
    assert.ok(bytes < 200 * 1024, `${bytes} bytes`);
    assert.ok(gz < 64 * 1024, `${gz} bytes gzipped`);
  });
});
