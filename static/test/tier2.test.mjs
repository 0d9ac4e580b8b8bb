// The tier-2 client and booking page (static/queue/tier2.js) with a scripted tier-2 API, a
// manual clock and, for the page, a fake document built from the real static/queue/index.html.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';

const STATIC = join(import.meta.dirname, '..');
const tier2 = createRequire(import.meta.url)(join(STATIC, 'queue', 'tier2.js'));
const HTML = readFileSync(join(STATIC, 'queue', 'index.html'), 'utf8');
const JS = readFileSync(join(STATIC, 'queue', 'tier2.js'), 'utf8');

const T0 = 1_000_000_000; // the clock at start (ms)
/** A time as the API answers it: seconds since the epoch, to the millisecond (docs/api.md#times). */
const secs = (ms) => ms / 1000;
/** An entry token (only its payload matters to the client): issued now (`at` ms), `life` s. */
let minted = 0;
const jwt = (at, life = 30) => `h.${Buffer.from(JSON.stringify({ iat: Math.floor(at / 1000), exp: Math.floor(at / 1000) + life, n: ++minted })).toString('base64url')}.s`;
const json = (status, body, headers = {}) => ({ status, body, headers });
const queued = (over = {}) => json(200, { status: 'queued', position: 5, peopleAhead: 4, peopleBehind: 0, queueSize: 5, estimatedWaitSeconds: 10, nextPollSeconds: 1, currentUsers: 2, threshold: 2, lineScore: 500, checkedAt: secs(T0), ...over });
const active = (now, over = {}) => json(200, { status: 'active', position: 0, peopleAhead: 0, queueSize: 0, estimatedWaitSeconds: 0, nextPollSeconds: 10, currentUsers: 1, threshold: 2, entryToken: jwt(now), expiresAt: Math.floor(now / 1000) + 30, admissionEndsAt: Math.floor(now / 1000) + 600, admittedAt: secs(now), ...over });
const lineDoc = (over = {}) => json(200, { eventId: 'e1', waiting: 5, active: 2, threshold: 2, front: 100, marks: [[1, 100], [3, 300], [5, 500]], admittedPerSecond: 0, estimateRate: 0.5, updatedAt: secs(T0 + 1), ...over });

/**
 * A client env whose fetch answers from `api(route, n, now, call)` ({status, body | raw,
 * headers} or 'network'); `calls` lists every call ({route, method, url, headers, at}).
 */
function harness(api) {
  const timers = [];
  let now = T0;
  let seq = 0;
  let inFlight = 0;
  const calls = [];
  const docListeners = {};
  const counts = {};
  const env = {
    fetch: async (url, init = {}) => {
      const route = /\/api\/queue\/(\w+)\//.exec(url)?.[1] || 'site';
      const headers = new Map((Array.isArray(init.headers) ? init.headers : Object.entries(init.headers || {})).map(([k, v]) => [k.toLowerCase(), v]));
      const call = { route, method: init.method || 'GET', url, headers, at: now, init };
      calls.push(call);
      counts[route] = (counts[route] || 0) + 1;
      inFlight++;
      let r;
      try {
        r = await api(route, counts[route], now, call);
      } catch (e) {
        inFlight--;
        throw e;
      }
      if (r === 'network') {
        inFlight--;
        throw new TypeError('Failed to fetch');
      }
      const h = Object.fromEntries(Object.entries(r.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
      const text = r.raw !== undefined ? r.raw : r.body === undefined ? '' : JSON.stringify(r.body);
      const res = {
        status: r.status,
        headers: { get: (k) => h[k.toLowerCase()] ?? null },
        text: async () => {
          inFlight--;
          return text;
        },
        clone: () => ({ json: async () => JSON.parse(text) }),
      };
      if (route === 'site' || route === 'leave') inFlight--;
      return res;
    },
    setTimeout: (fn, ms) => {
      timers.push({ id: ++seq, at: now + ms, fn });
      return seq;
    },
    clearTimeout: (id) => {
      const i = timers.findIndex((t) => t.id === id);
      if (i >= 0) timers.splice(i, 1);
    },
    now: () => now,
    random: () => 0.5,
    document: {
      visibilityState: 'visible',
      addEventListener: (type, fn) => (docListeners[type] = docListeners[type] || []).push(fn),
    },
  };
  const settle = async () => {
    for (let turns = 0; turns < 10_000; turns++) {
      await new Promise((r) => setImmediate(r));
      if (inFlight === 0) {
        await new Promise((r) => setImmediate(r));
        if (inFlight === 0) return;
      }
    }
    throw new Error(`did not settle: ${inFlight} call(s) in flight`);
  };
  return {
    env,
    calls,
    timers,
    settle,
    get now() {
      return now;
    },
    of: (route) => calls.filter((c) => c.route === route),
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > end) break;
        timers.shift();
        now = t.at;
        t.fn();
        await settle();
      }
      now = end;
    },
    async show(state) {
      env.document.visibilityState = state;
      (docListeners.visibilitychange || []).forEach((fn) => fn({}));
      await settle();
    },
  };
}

/** A client of e1 on `api`, started; `states` collects what onChange heard. */
async function started(api) {
  const h = harness(api);
  const states = [];
  const q = tier2.client({ eventId: 'e1', env: h.env, onChange: (s) => states.push(s) });
  q.start();
  await h.settle();
  return { h, q, states, last: () => states[states.length - 1] };
}

describe('helpers', () => {
  test('the event id of the booking page: /vwr/queue/{id} and /queue/{id} (vwr dev), nothing else', () => {
    assert.equal(tier2.eventIdFrom('/vwr/queue/e1'), 'e1');
    assert.equal(tier2.eventIdFrom('/vwr/queue/E_1-x/'), 'E_1-x');
    assert.equal(tier2.eventIdFrom('/queue/e1'), 'e1');
    for (const p of ['/vwr/e1', '/vwr/queue/', '/vwr/queue/tier2.js', '/vwr/queue/e1/x', `/queue/${'x'.repeat(65)}`, '/x/queue/e1', '/vwr/queue/e%31', '']) {
      assert.equal(tier2.eventIdFrom(p), null, p);
    }
  });

  // placeOf, lineDelay and nextRead themselves: page-rules.json (page-rules.test.mjs).

  test('an entry token\'s times from its claims; anything else is null', () => {
    assert.deepEqual(tier2.tokenTimes(jwt(T0, 30)), { iat: T0 / 1000, exp: T0 / 1000 + 30 });
    for (const t of ['', 'a.b.c', 'x', null, `h.${Buffer.from('{"exp":1}').toString('base64url')}.s`]) assert.equal(tier2.tokenTimes(t), null);
  });

  test('the token header is added to any shape of headers, replacing one of that name', () => {
    const pairs = (init) => tier2.withHeader(init, 'x-queue-entry-token', 'T').headers;
    assert.deepEqual(pairs({}), [['x-queue-entry-token', 'T']]);
    assert.deepEqual(pairs({ headers: { Accept: 'a', 'X-Queue-Entry-Token': 'old' } }), [['Accept', 'a'], ['x-queue-entry-token', 'T']]);
    assert.deepEqual(pairs({ headers: [['a', '1'], ['a', '2']] }), [['a', '1'], ['a', '2'], ['x-queue-entry-token', 'T']]);
    const h = new Headers({ b: '2' });
    assert.deepEqual(pairs({ headers: h, method: 'POST' }), [['b', '2'], ['x-queue-entry-token', 'T']]);
    assert.equal(tier2.withHeader({ method: 'POST', body: 'x' }, 'n', 'v').method, 'POST');
  });

  test('next must be a same-site path outside the waiting room', () => {
    const o = 'https://tickets.example.com';
    assert.equal(tier2.safeNext('/book/e1?seat=A1', o), '/book/e1?seat=A1');
    for (const n of ['//evil.example', 'https://evil.example/', '/vwr/e1', '/vwr-api/x', '/\\evil', 'book', null]) assert.equal(tier2.safeNext(n, o), null, n);
  });

  test('an eventId that is not one is refused at once', () => {
    assert.throws(() => tier2.client({ eventId: 'a/b', env: harness(() => assert.fail()).env }), TypeError);
  });
});

describe('waiting on the line document (ADR 0026)', () => {
  test('one check, then only the line document until its front passes the visitor; then one check, admitted', async () => {
    let front = 100;
    const { h, last } = await started((route, n, now) => {
      if (route === 'check' || route === 'status') return n === 1 && route === 'check' ? queued() : active(now);
      // Each 100 of score is one person: the visitor (500) is at place (500 - front) / 100 + 1.
      if (route === 'line') return lineDoc({ front, marks: front > 500 ? [] : [[1, front], [(500 - front) / 100 + 1, 500]], updatedAt: secs(now) });
      return assert.fail(route);
    });
    assert.equal(last().phase, 'waiting');
    assert.equal(last().position, 5);
    assert.equal(h.of('line').length, 0, 'the first read waits for the place to move');
    // Place 5, threshold 2, 0.5/s: 3 beyond the threshold, a quarter of 6 s → 2 s (±20 %).
    await h.advance(2000);
    assert.equal(h.of('line').length, 1);
    await h.advance(60_000);
    assert.equal(h.of('check').length, 1, 'no call of its own while in line');
    assert.equal(h.of('status').length, 0);
    front = 300;
    await h.advance(30_000);
    assert.equal(last().position, 3);
    assert.equal(last().ahead, 2);
    front = 501;
    await h.advance(30_000);
    assert.equal(h.of('check').length, 2, 'exactly one check at the turn');
    assert.equal(last().phase, 'admitted');
  });

  test('a document older than the join is read again in half a second', async () => {
    const { h } = await started((route, n, now) => (route === 'check' ? queued({ position: 1, peopleAhead: 0, estimatedWaitSeconds: 1 }) : lineDoc({ updatedAt: n === 1 ? secs(T0 - 5) : secs(now) })));
    await h.advance(1000);
    assert.equal(h.of('line').length, 1);
    await h.advance(500);
    assert.equal(h.of('line').length, 2);
  });

  test('times are seconds with a millisecond fraction: a document a millisecond older than the join is not believed', async () => {
    const joined = secs(T0 + 1234);
    const { h } = await started((route, n) =>
      route === 'check'
        ? queued({ position: 1, peopleAhead: 0, estimatedWaitSeconds: 1, checkedAt: joined })
        : lineDoc({ front: null, marks: [], updatedAt: n === 1 ? secs(T0 + 1233) : joined })
    );
    await h.advance(1000);
    assert.equal(h.of('line').length, 1);
    assert.equal(h.of('check').length, 1, 'nobody in line, a millisecond before the join: read again');
    await h.advance(500);
    assert.equal(h.of('line').length, 2);
    assert.equal(h.of('check').length, 2, 'nobody in line, read at the join: the visitor has left it');
  });

  test('the line document\'s errors back off on the document (no check), never sooner than Retry-After', async () => {
    const { h, last } = await started((route, n, now) => {
      if (route === 'check') return queued({ position: 1, peopleAhead: 0, estimatedWaitSeconds: 1 });
      if (n === 1) return { status: 403, raw: '<html>Request blocked</html>' };
      if (n === 2) return json(503, { error: 'service_unavailable', message: 'x' }, { 'Retry-After': '9' });
      return lineDoc({ updatedAt: secs(now) });
    });
    await h.advance(1000);
    assert.equal(last().trouble.seconds, 2);
    await h.advance(2000);
    assert.equal(h.of('line').length, 2);
    assert.deepEqual(last().trouble, { seconds: 9, busy: true });
    await h.advance(8000);
    assert.equal(h.of('line').length, 2);
    await h.advance(1000);
    assert.equal(h.of('line').length, 3);
    assert.equal(last().trouble, null);
    assert.equal(h.of('check').length, 1);
  });

  test('an API without the line document (its router\'s 404 not_found): status is polled instead', async () => {
    const { h, last } = await started((route, n, now) => {
      if (route === 'check') return queued({ position: 1, peopleAhead: 0, estimatedWaitSeconds: 1 });
      if (route === 'line') return json(404, { error: 'not_found', message: 'x' });
      return n < 3 ? queued({ position: 1, peopleAhead: 0, lineScore: undefined }) : active(now);
    });
    await h.advance(1000);
    assert.equal(h.of('status').length, 1);
    await h.advance(3000);
    assert.equal(h.of('status').length, 3);
    assert.equal(h.of('line').length, 1);
    assert.equal(last().phase, 'admitted');
  });

  test('a tab shown again reads the document at once', async () => {
    const { h } = await started((route, n, now) => (route === 'check' ? queued({ position: 500, peopleAhead: 499 }) : lineDoc({ updatedAt: secs(now), marks: [[1, 100], [600, 600]] })));
    assert.equal(h.of('line').length, 0);
    await h.show('hidden');
    await h.show('visible');
    assert.equal(h.of('line').length, 1);
  });
});

describe('admitted: the entry token', () => {
  test('renewed with status every nextPollSeconds, before it expires; state says when the admission ends', async () => {
    const { h, q, last } = await started((route, n, now) => (route === 'check' || route === 'status' ? active(now, { nextPollSeconds: 10 }) : assert.fail(route)));
    assert.equal(last().phase, 'admitted');
    assert.equal(last().admissionEndsAt, T0 + 600_000 - 500);
    const first = q.token();
    await h.advance(9_999);
    assert.equal(h.of('status').length, 0);
    await h.advance(1);
    assert.equal(h.of('status').length, 1);
    assert.notEqual(q.token(), first);
    await h.advance(100_000);
    assert.equal(h.of('status').length, 11);
  });

  test('a token shorter than three hints is renewed before it expires', async () => {
    const { h } = await started((route, n, now) => active(now, { entryToken: jwt(now, 5), nextPollSeconds: 20 }));
    await h.advance(3000);
    assert.equal(h.of('status').length, 1, 'at its life minus 2 s');
  });

  test('a failing renewal is tried again before the token expires, and Retry-After is kept', async () => {
    const { h, q, last } = await started((route, n, now) => {
      if (route === 'check') return active(now);
      if (n === 1) return 'network';
      if (n === 2) return json(503, { error: 'service_unavailable', message: 'x' }, { 'Retry-After': '6' });
      return active(now);
    });
    const first = q.token();
    await h.advance(10_000);
    assert.equal(h.of('status').length, 1);
    assert.equal(last().phase, 'admitted', 'an error keeps the admission');
    // Back-off 2 s, then 4 s; 6 s, as the server asks.
    await h.advance(2000);
    assert.equal(h.of('status').length, 2);
    await h.advance(5999);
    assert.equal(h.of('status').length, 2);
    await h.advance(1);
    assert.equal(h.of('status').length, 3);
    assert.notEqual(q.token(), first);
    assert.ok(h.now < T0 + 29_000, 'renewed before the first token expired');
  });

  test('fetch adds the token; a 403 queue_entry_token_required renews once and tries once more', async () => {
    const site = [];
    const { h, q } = await started((route, n, now, call) => {
      if (route !== 'site') return active(now);
      site.push(call.headers.get('x-queue-entry-token'));
      return site.length === 1 ? json(403, { error: 'queue_entry_token_required', message: 'x', redirectTo: '/queue/e1' }) : json(200, { ok: true });
    });
    const first = q.token();
    const res = await q.fetch('/api/seats/e1', { headers: { accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.equal(h.of('status').length, 1);
    assert.equal(site[0], first);
    assert.ok(site[1] && site[1] !== first, 'the retry carries the new token');
    assert.equal(h.of('site')[0].headers.get('accept'), 'application/json');
    assert.equal(h.of('site')[1].headers.get('accept'), 'application/json');
  });

  test('fetch: a refusal that is not about the token is returned as it is, without a renewal', async () => {
    const { h, q } = await started((route, n, now) => (route === 'site' ? json(403, { error: 'forbidden', message: 'x' }) : active(now)));
    assert.equal((await q.fetch('/api/seats/e1')).status, 403);
    const blocked = await started((route, n, now) => (route === 'site' ? { status: 403, raw: '<html>WAF</html>' } : active(now)));
    assert.equal((await blocked.q.fetch('/api/seats/e1')).status, 403);
    assert.equal(h.of('status').length + blocked.h.of('status').length, 0);
    assert.equal(h.of('site').length, 1);
  });

  test('fetch: the token refused twice gives the second answer; one renewal only', async () => {
    const { h, q } = await started((route, n, now) => (route === 'site' ? json(403, { error: 'queue_entry_token_required', message: 'x' }) : active(now)));
    const res = await q.fetch('/api/seats/e1');
    assert.equal(res.status, 403);
    assert.equal(h.of('site').length, 2);
    assert.equal(h.of('status').length, 1);
  });

  test('fetch with a token known to have expired (renewals failed meanwhile) renews first', async () => {
    let down = false;
    const { h, q } = await started((route, n, now) => {
      if (route === 'site') return json(200, {});
      if (route === 'status' && down) return 'network';
      return active(now);
    });
    down = true;
    await h.advance(31_000);
    down = false;
    const before = h.of('status').length;
    const p = q.fetch('/api/seats/e1');
    await h.settle();
    assert.equal((await p).status, 200);
    assert.equal(h.of('status').length, before + 1);
    assert.equal(h.of('site')[0].headers.get('x-queue-entry-token'), q.token());
  });

  test('fetch while not admitted sends the call as it is', async () => {
    const { h, q } = await started((route) => (route === 'site' ? json(403, { error: 'queue_entry_token_required', message: 'x' }) : queued()));
    assert.equal((await q.fetch('/api/seats/e1', { headers: { 'x-queue-entry-token': 'mine' } })).status, 403);
    assert.equal(h.of('site')[0].init.headers['x-queue-entry-token'], 'mine');
    assert.equal(h.of('status').length, 0);
  });

  test('not_in_queue while admitted: check gives the admission back; at the admission\'s end, ended', async () => {
    const { h, last } = await started((route, n, now) => {
      if (route === 'status') return n === 1 ? json(404, { error: 'not_in_queue', message: 'x' }) : n === 2 ? active(now, { admissionEndsAt: Math.floor(now / 1000) + 12 }) : json(404, { error: 'not_in_queue', message: 'x' });
      return active(now, { restored: n > 1 });
    });
    await h.advance(10_000);
    assert.equal(h.of('check').length, 2);
    assert.equal(last().restored, true);
    await h.advance(10_000);
    assert.equal(h.of('status').length, 2);
    await h.advance(10_000);
    assert.equal(last().phase, 'ended');
    const calls = h.calls.length;
    await h.advance(120_000);
    assert.equal(h.calls.length, calls, 'nothing more');
  });

  test('put back in line while admitted: check for the new line score, then the document', async () => {
    const { h, last } = await started((route, n, now) => {
      if (route === 'check') return n === 1 ? active(now) : queued();
      if (route === 'status') return queued({ lineScore: undefined });
      return lineDoc({ updatedAt: secs(now) });
    });
    await h.advance(10_000);
    assert.equal(h.of('check').length, 2);
    assert.equal(last().phase, 'waiting');
    await h.advance(3000);
    assert.equal(h.of('line').length, 1);
  });
});

describe('refusals, errors and leaving', () => {
  for (const [status, error] of [[401, 'identity_required'], [403, 'tier1_token_required'], [403, 'invalid_identity'], [409, 'position_taken'], [404, 'event_not_found']]) {
    test(`${status} ${error}: refused, nothing more`, async () => {
      const { h, last } = await started(() => json(status, { error, message: 'x' }));
      assert.equal(last().phase, 'refused');
      assert.equal(last().error, error);
      await h.advance(600_000);
      assert.equal(h.calls.length, 1);
    });
  }

  test('answers that are not tier 2\'s keep the place: backed off, the same call again', async () => {
    const answers = [{ status: 403, raw: '<html>blocked</html>' }, json(403, { message: 'Forbidden' }), json(429, { message: 'Too Many Requests' }), json(403, { error: 'origin_forbidden', message: 'x' }), 'network', { status: 200, raw: 'not json' }];
    const { h, last } = await started((route, n, now) => (n <= answers.length ? answers[n - 1] : active(now)));
    for (let i = 1; i <= answers.length; i++) {
      assert.equal(last().phase, 'joining');
      assert.equal(h.calls.length, i);
      // 2, 4, 8 … 60 s (the harness's random is the middle: no jitter).
      await h.advance(Math.min(60, 2 ** i) * 1000);
    }
    assert.equal(last().phase, 'admitted');
    assert.ok(h.calls.every((c) => c.route === 'check'));
  });

  test('leave: one call, then nothing; answers of before are dropped; a failed leave is tried again', async () => {
    let slow;
    const { h, q, last } = await started((route, n, now) => {
      if (route === 'leave') return n === 1 ? 'network' : { status: 204 };
      if (route === 'status') return new Promise((r) => (slow = () => r(active(now))));
      return active(now);
    });
    const renewal = q.renew();
    const left = q.leave();
    assert.equal(last().phase, 'left');
    slow();
    await h.settle();
    assert.equal(await renewal, null);
    assert.equal(last().phase, 'left', 'the renewal answered after the leave is dropped');
    assert.equal(q.token(), null);
    await h.advance(2000);
    assert.equal(await left, true);
    assert.equal(h.of('leave').length, 2);
    await h.advance(600_000);
    assert.equal(h.of('status').length, 1);
    // Joining again works.
    q.start();
    await h.settle();
    assert.equal(last().phase, 'admitted');
  });
});

// ---- The booking page -----------------------------------------------------------------

function element(attrs) {
  const listeners = {};
  return {
    attrs: { ...attrs },
    textContent: '',
    hidden: 'hidden' in attrs,
    focused: 0,
    setAttribute(k, v) {
      this.attrs[k] = String(v);
    },
    getAttribute(k) {
      return this.attrs[k] === undefined ? null : this.attrs[k];
    },
    addEventListener(type, fn) {
      (listeners[type] = listeners[type] || []).push(fn);
    },
    fire(type) {
      (listeners[type] || []).forEach((fn) => fn({}));
    },
    contains(other) {
      return other === this;
    },
    focus() {
      this.focused++;
    },
  };
}

function fakeDocument() {
  const byId = {};
  const i18n = [];
  for (const m of HTML.matchAll(/<(\w+)((?:\s+[\w-]+(?:="[^"]*")?)*)\s*>/g)) {
    const attrs = {};
    for (const a of m[2].matchAll(/([\w-]+)(?:="([^"]*)")?/g)) attrs[a[1]] = a[2] === undefined ? '' : a[2];
    const el = element(attrs);
    if (attrs.id) byId[attrs.id] = el;
    if (attrs['data-i18n']) i18n.push(el);
  }
  return {
    documentElement: element({ lang: 'en' }),
    title: '',
    activeElement: null,
    visibilityState: 'visible',
    getElementById(id) {
      if (!byId[id]) throw new Error(`index.html has no element #${id}`);
      return byId[id];
    },
    querySelectorAll(sel) {
      assert.equal(sel, '[data-i18n]');
      return i18n;
    },
    addEventListener() {},
    byId,
  };
}

function bookingPage(api, { path = '/vwr/queue/e1', search = '', languages = ['en-US'] } = {}) {
  const h = harness(api);
  const doc = fakeDocument();
  const store = new Map();
  const q = tier2.page({
    document: doc,
    storage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) },
    location: { pathname: path, search, origin: 'https://tickets.example.com' },
    languages,
    client: { ...h.env, document: doc },
  });
  return { h, q, doc, text: (id) => doc.byId[id].textContent, shown: (id) => !doc.byId[id].hidden, state: () => doc.byId.booking.attrs['data-state'] };
}

describe('the booking page', () => {
  test('waiting: the place, people ahead and the estimate, said once in the live region; then admitted, with the end of the admission', async () => {
    let turn = false;
    const p = bookingPage((route, n, now) => {
      if (route === 'line') return lineDoc({ updatedAt: secs(now), front: turn ? 501 : 100 });
      return route === 'check' && !turn ? queued({ position: 1234, peopleAhead: 1233, estimatedWaitSeconds: 150 }) : active(now);
    });
    await p.h.settle();
    assert.equal(p.state(), 'waiting');
    assert.equal(p.text('position'), '1,234');
    assert.equal(p.text('ahead'), '1,233');
    assert.equal(p.text('wait'), 'about 3 min');
    assert.equal(p.text('status'), 'You are number 1,234 in line. 1,233 people ahead of you.');
    assert.ok(p.shown('leave') && !p.shown('admitted'));
    assert.equal(p.text('leave'), 'Leave the line');
    turn = true;
    // Place 1,234 at 8 a second, 2 slots: a quarter of the 150 s beyond them, 38 s (ADR 0032).
    await p.h.advance(40_000);
    assert.equal(p.state(), 'admitted');
    assert.equal(p.doc.title, '✅ Your turn to book');
    assert.match(p.text('until'), /^You can book until \d{1,2}:\d\d\s?[AP]M\.$/);
    assert.match(p.text('status'), /^It is your turn to book\. You can book until/);
    assert.equal(p.text('leave'), 'I am done: free my place');
    assert.ok(!p.shown('queue') && p.shown('admitted') && !p.shown('nextwrap'));
  });

  test('the live region says a new place at most every 15 s', async () => {
    let front = 100;
    const p = bookingPage((route, n, now) => (route === 'check' ? queued({ position: 5, peopleAhead: 4 }) : lineDoc({ updatedAt: secs(now), front, marks: [[1, front], [(500 - front) / 100 + 1, 500]] })));
    await p.h.settle();
    const said = [p.text('status')];
    p.doc.byId.status.textContent = '';
    front = 200;
    await p.h.advance(3000);
    assert.equal(p.text('status'), '', 'a change within 15 s is shown, not said');
    assert.notEqual(p.text('position'), '5');
    await p.h.advance(15_000);
    front = 300;
    await p.h.advance(3000);
    assert.match(p.text('status'), /^You are number \d in line/);
    assert.notEqual(p.text('status'), said[0]);
  });

  test('Korean from the browser, the switch to English and back, remembered', async () => {
    const p = bookingPage((route, n, now) => active(now), { languages: ['ko-KR', 'en'] });
    await p.h.settle();
    assert.equal(p.doc.documentElement.attrs.lang, 'ko');
    assert.equal(p.text('title'), '예매하실 차례입니다');
    assert.match(p.text('until'), /까지 예매할 수 있습니다\.$/);
    assert.equal(p.text('lang'), 'English');
    assert.equal(p.doc.byId.lang.attrs.lang, 'en');
    p.doc.byId.lang.fire('click');
    assert.equal(p.doc.documentElement.attrs.lang, 'en');
    assert.equal(p.text('title'), 'It is your turn to book');
    assert.equal(p.text('keep'), 'Keep this page open. Refreshing it keeps your place.');
  });

  test('no pass from the waiting room: says so and links there (with next on a site path, not under /vwr)', async () => {
    const p = bookingPage(() => json(403, { error: 'tier1_token_required', message: 'x' }), { path: '/queue/e1' });
    await p.h.settle();
    assert.equal(p.state(), 'stopped');
    assert.equal(p.text('error'), 'To book, first go through the waiting room of this sale.');
    assert.ok(p.shown('roomwrap') && !p.shown('leave'));
    assert.equal(p.doc.byId.room.attrs.href, '/vwr/e1?next=%2Fqueue%2Fe1');
    const prod = bookingPage(() => json(401, { error: 'identity_required', message: 'x' }));
    await prod.h.settle();
    assert.equal(prod.doc.byId.room.attrs.href, '/vwr/e1');
  });

  test('an address without an event id: a message, no call', async () => {
    const p = bookingPage(() => assert.fail('no call'), { path: '/vwr/queue/' });
    assert.equal(p.q, null);
    assert.equal(p.text('error'), 'This booking page address is not valid.');
    assert.equal(p.h.calls.length, 0);
  });

  test('leave and join again; the focus goes to the heading when the button it was on goes away', async () => {
    const p = bookingPage((route, n, now) => (route === 'leave' ? { status: 204 } : active(now)), { search: '?next=%2Fbook%2Fe1' });
    await p.h.settle();
    assert.ok(p.shown('nextwrap'));
    assert.equal(p.doc.byId.next.attrs.href, '/book/e1');
    p.doc.activeElement = p.doc.byId.leave;
    p.doc.byId.leave.fire('click');
    await p.h.settle();
    assert.equal(p.state(), 'left');
    assert.equal(p.doc.byId.title.focused, 1);
    assert.ok(p.shown('rejoin') && !p.shown('leave'));
    assert.equal(p.text('status'), 'You left the booking line. Your place went to the next person. You can join again, at the back of the line.');
    p.doc.byId.rejoin.fire('click');
    await p.h.settle();
    assert.equal(p.state(), 'admitted');
  });

  test('a back-off is said in the alert box, and goes away when a call works', async () => {
    const p = bookingPage((route, n, now) => (n === 1 ? json(503, { error: 'service_unavailable', message: 'x' }, { 'retry-after': '5' }) : active(now)));
    await p.h.settle();
    assert.equal(p.text('error'), 'The booking line is very busy. Trying again in 5 seconds.');
    await p.h.advance(5000);
    assert.ok(!p.shown('error'));
  });
});

describe('the page\'s files', () => {
  test('strings: the same keys in both languages, and every data-i18n names one', () => {
    assert.deepEqual(Object.keys(tier2.STRINGS.ko).sort(), Object.keys(tier2.STRINGS.en).sort());
    for (const m of HTML.matchAll(/data-i18n="(\w+)"/g)) assert.ok(tier2.STRINGS.en[m[1]], m[1]);
  });

  test('Content-Security-Policy first in <head>; nothing inline, no eval, no markup from strings', () => {
    const head = HTML.slice(HTML.indexOf('<head>'), HTML.indexOf('</head>'));
    assert.match(head.split('\n')[2], /^<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'">$/);
    assert.doesNotMatch(HTML, /<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son\w+=/);
    assert.doesNotMatch(JS, /\beval\(|new Function|innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    assert.match(HTML, /<script src="\/vwr\/queue\/tier2\.js" defer><\/script>/);
    assert.match(HTML, /<link rel="stylesheet" href="\/vwr\/assets\/style\.css">/);
  });

  // static/queue/README.md, "Page weight": lighter than the waiting page (52 KB, 17 KB gzipped).
  test('lighter than the waiting page: at most 38 KB, 13 KB gzipped (with the shared stylesheet)', () => {
    const files = [HTML, JS, readFileSync(join(STATIC, 'assets', 'style.css'), 'utf8')];
    const raw = files.reduce((n, f) => n + Buffer.byteLength(f), 0);
    const gz = files.reduce((n, f) => n + gzipSync(f, { level: 9 }).length, 0);
    assert.ok(raw <= 38 * 1024, `${raw} bytes`);
    assert.ok(gz <= 13 * 1024, `${gz} bytes gzipped`);
  });
});
