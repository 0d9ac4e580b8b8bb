// The waiting page script (static/assets/app.js) driven through a fake browser: the real
// index.html's elements, a scripted tier-1 API, a manual clock and localStorage.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const STATIC = join(import.meta.dirname, '..');
const app = createRequire(import.meta.url)(join(STATIC, 'assets', 'app.js'));
const HTML = readFileSync(join(STATIC, 'index.html'), 'utf8');

// ---- Fake browser ---------------------------------------------------------------------

function element(attrs) {
  const listeners = {};
  return {
    attrs: { ...attrs },
    textContent: '',
    hidden: 'hidden' in attrs,
    style: {},
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
  };
}

/** The elements of the real index.html that carry an id or data-i18n. */
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
  const listeners = {};
  return {
    documentElement: element({ lang: 'en' }),
    title: '',
    visibilityState: 'visible',
    getElementById(id) {
      if (!byId[id]) throw new Error(`index.html has no element #${id}`);
      return byId[id];
    },
    querySelectorAll(sel) {
      assert.equal(sel, '[data-i18n]');
      return i18n;
    },
    addEventListener(type, fn) {
      (listeners[type] = listeners[type] || []).push(fn);
    },
    setVisibility(state) {
      this.visibilityState = state;
      (listeners.visibilitychange || []).forEach((fn) => fn({}));
    },
    byId,
    i18n,
  };
}

function storage(initial = {}) {
  const m = new Map(Object.entries(initial));
  return {
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
    map: m,
  };
}

/**
 * A page at `path` with a scripted API: `api(method, url, n)` answers
 * {status, body, headers} (n counts calls). Answers the harness.
 */
function page({ path = '/vwr/e1', search = '?next=%2Fevents%2Fe1%3Fseat%3DA1', api, languages = ['en-US'], store = storage(), locks, random = 0.5, at = 1_000_000, tab = { name: '' } } = {}) {
  const doc = fakeDocument();
  const timers = [];
  let now = at;
  let seq = 0;
  const calls = [];
  const windowListeners = [];
  let inFlight = 0;
  const env = {
    document: doc,
    storage: store,
    // A call is in flight from fetch() until its body has been read (or it failed); what
    // the page does next is promise callbacks only.
    fetch: async (url, init) => {
      calls.push({ method: init.method, url, at: now });
      inFlight++;
      let r;
      try {
        r = await api(init.method, url, calls.length);
      } catch (e) {
        inFlight--;
        throw e;
      }
      if (r === 'network') {
        inFlight--;
        throw new TypeError('Failed to fetch');
      }
      const headers = Object.fromEntries(Object.entries(r.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
      return {
        status: r.status,
        headers: { get: (k) => headers[k.toLowerCase()] ?? null },
        text: async () => {
          inFlight--;
          return r.body === undefined ? '' : JSON.stringify(r.body);
        },
      };
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
    random: () => random,
    location: { pathname: path, search, origin: 'https://tickets.example.com', replaced: null, replace(url) { this.replaced = url; } },
    languages,
    locks,
    tab,
    addEventListener: (type, fn) => windowListeners.push({ type, fn }),
  };
  // Waits until the page has caught up: no call in flight, then one more turn of the event
  // loop for the promise callbacks that follow. Bounded generously; never a fixed count.
  const settle = async () => {
    for (let turns = 0; turns < 10_000; turns++) {
      await new Promise((r) => setImmediate(r));
      if (inFlight === 0) {
        await new Promise((r) => setImmediate(r));
        if (inFlight === 0) return;
      }
    }
    throw new Error(`the page did not settle: ${inFlight} call(s) still in flight`);
  };
  return {
    env,
    doc,
    calls,
    store,
    timers,
    windowListeners,
    text: (id) => doc.byId[id].textContent,
    get now() {
      return now;
    },
    async start() {
      this.ctl = app.start(env);
      await settle();
      return this;
    },
    /** Advances the clock by `ms`, firing due timers in order. */
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
    nextTimerIn: () => (timers.length ? Math.min(...timers.map((t) => t.at)) - now : null),
  };
}

const ok = (body, headers) => ({ status: 200, body, headers });
const err = (status, error, headers) => ({ status, body: { error, message: 'x' }, headers });
const assigned = (over = {}) => ok({ requestId: 'req-1', position: 101, queueLength: 100, servingCounter: 0, estimatedWaitSeconds: 130, nextPollSeconds: 5, ...over });
const waitingBody = (over = {}) => ok({ admitted: false, position: 101, servingCounter: 0, peopleAhead: 100, estimatedWaitSeconds: 130, nextPollSeconds: 5, ...over });
const admitted = () => ok({ admitted: true, token: 't', expiresAt: 1 });

// ---- Behaviour ------------------------------------------------------------------------

describe('joining and polling', () => {
  test('joins, keeps the ticket, polls at the hinted interval, and goes to next when admitted', async () => {
    let ahead = 100;
    const p = await page({
      api: (method, url) => {
        if (method === 'POST') return assigned();
        ahead -= 40;
        return ahead <= 0 ? admitted() : waitingBody({ peopleAhead: ahead, position: 101 });
      },
    }).start();
    assert.deepEqual(p.calls.map((c) => `${c.method} ${c.url}`), ['POST /vwr-api/vwr/assign/e1']);
    assert.deepEqual(JSON.parse(p.store.getItem('vwr.ticket.e1')), { requestId: 'req-1', position: 101, firstAhead: 100 });
    assert.equal(p.text('position'), '101');
    assert.equal(p.text('ahead'), '100');
    assert.equal(p.text('wait'), 'about 3 min');
    assert.equal(p.doc.byId.queue.hidden, false);
    assert.equal(p.nextTimerIn(), 5000, 'nextPollSeconds with zero jitter at random=0.5');
    await p.advance(5000);
    assert.equal(p.calls[1].url, '/vwr-api/vwr/check/e1/req-1');
    assert.equal(p.text('ahead'), '60');
    assert.equal(p.doc.byId.fill.style.width, '40%');
    assert.equal(p.doc.byId.bar.attrs['aria-valuenow'], '40');
    await p.advance(10000);
    assert.equal(p.env.location.replaced, '/events/e1?seat=A1');
    assert.equal(p.nextTimerIn(), null, 'stops polling once admitted');
  });

  test('a refresh (or a second tab) keeps the place: it checks the stored ticket instead of joining', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: 'old-req', position: 7, firstAhead: 50 }) });
    const p = await page({ store, api: () => waitingBody({ position: 7, peopleAhead: 25 }) }).start();
    assert.deepEqual(p.calls.map((c) => `${c.method} ${c.url}`), ['GET /vwr-api/vwr/check/e1/old-req']);
    assert.equal(p.doc.byId.fill.style.width, '50%', 'progress from the first people-ahead ever seen');
  });

  test('polls with ±20 % jitter and keeps the hint within 1–60 s', async () => {
    const low = await page({ random: 0, api: (m) => (m === 'POST' ? assigned({ nextPollSeconds: 10 }) : waitingBody()) }).start();
    assert.equal(low.nextTimerIn(), 8000);
    const high = await page({ random: 1, api: (m) => (m === 'POST' ? assigned({ nextPollSeconds: 10 }) : waitingBody()) }).start();
    assert.equal(high.nextTimerIn(), 12000);
    const silly = await page({ api: (m) => (m === 'POST' ? assigned({ nextPollSeconds: 0 }) : waitingBody()) }).start();
    assert.equal(silly.nextTimerIn(), 1000);
  });

  test('an unsafe next falls back to the event page', async () => {
    for (const next of ['https://evil.example', '//evil.example', '/\\evil.example', '%2F%2Fevil.example', 'javascript:alert(1)', '/\n/evil.example', '/vwr/e1']) {
      const p = await page({ search: `?next=${encodeURIComponent(next)}`, api: (m) => (m === 'POST' ? assigned() : admitted()) }).start();
      await p.advance(6000);
      assert.equal(p.env.location.replaced, '/events/e1', next);
    }
  });

  test('sent back admitted three times within a minute (cookie not kept): stops and explains', async () => {
    const store = storage();
    for (let i = 1; i <= 3; i++) {
      const p = await page({ store, api: (m) => (m === 'POST' ? assigned() : admitted()) }).start();
      await p.advance(6000);
      if (i < 3) {
        assert.equal(p.env.location.replaced, '/events/e1?seat=A1', `visit ${i} goes on`);
      } else {
        assert.equal(p.env.location.replaced, null, 'no third redirect');
        assert.match(p.text('error'), /did not keep the entry pass/);
        assert.equal(p.doc.byId.backwrap.hidden, false);
        assert.equal(p.text('back'), 'Continue');
        assert.equal(p.doc.byId.back.attrs.href, '/events/e1?seat=A1');
      }
    }
  });

  test('never gives up the place on unload', async () => {
    const p = await page({ api: (m) => (m === 'POST' ? assigned() : waitingBody()) }).start();
    assert.deepEqual(p.windowListeners.map((l) => l.type), ['storage']);
    await p.advance(60000);
    assert.ok(p.calls.every((c) => /\/vwr-api\/vwr\/(assign|check)\//.test(c.url)));
  });
});

describe('answers that change course', () => {
  test('410: forgets the ticket and joins again', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: 'stale', position: 3, firstAhead: 2 }) });
    const p = await page({ store, api: (m) => (m === 'POST' ? assigned({ requestId: 'fresh' }) : err(410, 'request_id_expired')) }).start();
    assert.deepEqual(p.calls.map((c) => c.method), ['GET', 'POST']);
    assert.equal(JSON.parse(p.store.getItem('vwr.ticket.e1')).requestId, 'fresh');
  });

  test('400/403 on check (a bad or foreign ticket) also joins again; three times in a row backs off', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: 'foreign' }) });
    const p = await page({ store, api: (m) => (m === 'POST' ? assigned() : err(403, 'wrong_event')) }).start();
    assert.deepEqual(p.calls.map((c) => c.method), ['GET', 'POST']);
    await p.advance(5000);
    await p.advance(5000);
    await p.advance(5000);
    const methods = p.calls.map((c) => c.method).join(',');
    assert.equal(methods, 'GET,POST,GET,POST,GET,POST,GET');
    assert.ok(p.nextTimerIn() >= 1600, 'the fourth rejoin waits for a back-off');
    assert.equal(p.doc.byId.error.hidden, false);
  });

  test('409 event_not_active: goes straight to next', async () => {
    const p = await page({ api: () => err(409, 'event_not_active') }).start();
    assert.equal(p.env.location.replaced, '/events/e1?seat=A1');
  });

  test('409 loop guard: sent back three times within a minute (the edge still gates), it stops and explains, in en and ko', async () => {
    for (const [languages, text, back] of [
      [['en-US'], /This sale is not open right now. Please try again later./, 'Back to the event page'],
      [['ko-KR'], /지금은 판매가 열려 있지 않습니다/, '공연 페이지로 돌아가기'],
    ]) {
      const store = storage();
      let calls = 0;
      for (let i = 1; i <= 3; i++) {
        const p = await page({ store, languages, at: 1_000_000 + i * 5000, api: () => (calls++, err(409, 'event_not_active')) }).start();
        if (i < 3) {
          assert.equal(p.env.location.replaced, '/events/e1?seat=A1', `visit ${i} goes on`);
          continue;
        }
        assert.equal(p.env.location.replaced, null, 'no third redirect');
        assert.equal(p.doc.byId.error.hidden, false);
        assert.match(p.text('error'), text);
        assert.equal(p.doc.byId.backwrap.hidden, false, 'a way back, as in the other terminal states');
        assert.equal(p.text('back'), back);
        assert.equal(p.doc.byId.back.attrs.href, '/events/e1?seat=A1');
        assert.equal(p.nextTimerIn(), null, 'nothing scheduled: no loop');
        await p.advance(10 * 60_000);
        assert.equal(p.calls.length, 1, 'and no more calls');
      }
      assert.equal(calls, 3);
    }
  });

  test('409 loop guard: redirects more than a minute apart are not a loop', async () => {
    const store = storage();
    for (let i = 0; i < 5; i++) {
      const p = await page({ store, at: 1_000_000 + i * 61_000, api: () => err(409, 'event_not_active') }).start();
      assert.equal(p.env.location.replaced, '/events/e1?seat=A1', `visit ${i}`);
    }
  });

  test('409 loop guard: one count for every way back to next (admitted, then 409)', async () => {
    const store = storage();
    const first = await page({ store, api: (m) => (m === 'POST' ? assigned() : admitted()) }).start();
    await first.advance(6000);
    assert.equal(first.env.location.replaced, '/events/e1?seat=A1');
    const second = await page({ store, at: 1_010_000, api: () => err(409, 'event_not_active') }).start();
    assert.equal(second.env.location.replaced, '/events/e1?seat=A1');
    const third = await page({ store, at: 1_020_000, api: () => err(409, 'event_not_active') }).start();
    assert.equal(third.env.location.replaced, null);
    assert.match(third.text('error'), /not open right now/);
  });

  test('409 loop guard without localStorage (blocked with cookies): the tab keeps the count in window.name', async () => {
    const blocked = {
      getItem() {
        throw new Error('SecurityError');
      },
      setItem() {
        throw new Error('SecurityError');
      },
      removeItem() {
        throw new Error('SecurityError');
      },
    };
    const tab = { name: '' };
    const replaced = [];
    for (let i = 1; i <= 3; i++) {
      const p = await page({ store: blocked, tab, at: 1_000_000 + i * 1000, api: () => err(409, 'event_not_active') }).start();
      replaced.push(p.env.location.replaced);
    }
    assert.deepEqual(replaced, ['/events/e1?seat=A1', '/events/e1?seat=A1', null]);
    // Another tab has its own name: it is not stopped by this one.
    const other = await page({ store: blocked, at: 1_004_000, api: () => err(409, 'event_not_active') }).start();
    assert.equal(other.env.location.replaced, '/events/e1?seat=A1');
  });

  test('404 event_not_found: a clear message, a way back, no more polling', async () => {
    const p = await page({ api: () => err(404, 'event_not_found') }).start();
    assert.equal(p.doc.byId.error.hidden, false);
    assert.match(p.text('error'), /no waiting room for this event/);
    assert.equal(p.doc.byId.backwrap.hidden, false);
    assert.equal(p.doc.byId.back.attrs.href, '/events/e1?seat=A1');
    assert.equal(p.nextTimerIn(), null);
    assert.equal(p.env.location.replaced, null);
  });

  test('an invalid address: a message and no request at all', async () => {
    const p = await page({ path: '/vwr/bad%20id', api: () => assert.fail('no request expected') }).start();
    assert.match(p.text('error'), /not valid/);
    assert.equal(p.calls.length, 0);
  });
});

describe('errors and back-off', () => {
  test('503 with Retry-After: a visible message and no retry before the server allows it', async () => {
    let n = 0;
    const p = await page({ api: () => (++n === 1 ? err(503, 'store_unavailable', { 'Retry-After': '7' }) : assigned()) }).start();
    assert.equal(p.doc.byId.error.hidden, false);
    assert.match(p.text('error'), /very busy.*8 seconds/);
    await p.advance(6999);
    assert.equal(p.calls.length, 1);
    await p.advance(1500);
    assert.equal(p.calls.length, 2);
    assert.equal(p.doc.byId.error.hidden, true, 'the message goes once it works again');
  });

  test('network errors back off exponentially, then recover', async () => {
    let n = 0;
    const p = await page({ api: () => (++n <= 4 ? 'network' : assigned()) }).start();
    assert.equal(p.doc.byId.error.hidden, false);
    assert.match(p.text('error'), /could not reach the waiting room. Trying again in 2 seconds/);
    const gaps = [];
    for (let i = 0; i < 4; i++) {
      gaps.push(p.nextTimerIn());
      await p.advance(p.nextTimerIn());
    }
    assert.deepEqual(gaps, [2000, 4000, 8000, 16000]);
    assert.equal(p.text('position'), '101');
    assert.equal(p.doc.byId.error.hidden, true, 'the message goes once it works again');
  });

  test('back-off is capped at a minute', () => {
    assert.equal(app.backoffSeconds(1, 0.5), 2);
    assert.equal(app.backoffSeconds(10, 0.5), 60);
    assert.ok(Math.abs(app.backoffSeconds(10, 1) - 72) < 1e-9);
  });
});

describe('visibility', () => {
  test('no polling while the tab is hidden; polls at once when shown again', async () => {
    const p = await page({ api: (m) => (m === 'POST' ? assigned() : waitingBody()) }).start();
    p.doc.setVisibility('hidden');
    assert.equal(p.nextTimerIn(), null);
    await p.advance(120000);
    assert.equal(p.calls.length, 1, 'nothing while hidden');
    p.doc.setVisibility('visible');
    assert.equal(p.nextTimerIn(), 0);
    await p.advance(0);
    assert.equal(p.calls.length, 2);
  });

  test('a page opened in a background tab joins, then waits to be shown before polling', async () => {
    const p = page({ api: (m) => (m === 'POST' ? assigned() : waitingBody()) });
    p.doc.visibilityState = 'hidden';
    await p.start();
    assert.equal(p.calls.length, 1, 'joined at once: the place is taken early');
    await p.advance(120000);
    assert.equal(p.calls.length, 1, 'no polling while hidden');
    p.doc.setVisibility('visible');
    await p.advance(0);
    assert.equal(p.calls.length, 2);
  });

  test('showing the tab inside a Retry-After window waits for its end', async () => {
    let n = 0;
    const p = await page({ api: () => (++n === 1 ? err(429, 'throttled', { 'retry-after': '30' }) : assigned()) }).start();
    p.doc.setVisibility('hidden');
    await p.advance(10000);
    p.doc.setVisibility('visible');
    assert.ok(p.nextTimerIn() >= 20000 && p.nextTimerIn() <= 26000, String(p.nextTimerIn()));
  });
});

describe('tabs', () => {
  test('with Web Locks, two tabs opened together get one place', async () => {
    let chain = Promise.resolve();
    const locks = { request: (name, fn) => (chain = chain.then(fn)) };
    const store = storage();
    let posts = 0;
    const api = (m) => (m === 'POST' ? (posts++, assigned()) : waitingBody());
    const a = page({ store, locks, api });
    const b = page({ store, locks, api });
    await Promise.all([a.start(), b.start()]);
    assert.equal(posts, 1);
    assert.equal(b.calls[0].method, 'GET');
  });

  test('a ticket replaced by another tab is adopted', async () => {
    const p = await page({ api: (m) => (m === 'POST' ? assigned() : waitingBody()) }).start();
    p.store.setItem('vwr.ticket.e1', JSON.stringify({ requestId: 'other-tab', position: 5 }));
    p.windowListeners.find((l) => l.type === 'storage').fn({ key: 'vwr.ticket.e1' });
    await p.advance(5000);
    assert.equal(p.calls.at(-1).url, '/vwr-api/vwr/check/e1/other-tab');
  });
});

describe('language and accessibility', () => {
  test('Korean from navigator.languages, switchable, remembered', async () => {
    const store = storage();
    const p = await page({ store, languages: ['ko-KR', 'en'], api: (m) => (m === 'POST' ? assigned({ position: 12345, servingCounter: 0 }) : waitingBody()) }).start();
    assert.equal(p.doc.documentElement.attrs.lang, 'ko');
    assert.equal(p.doc.title, '대기실');
    assert.equal(p.doc.byId.title.textContent, '대기열에 들어왔습니다');
    assert.equal(p.text('position'), '12,345');
    assert.equal(p.text('wait'), '약 3분');
    assert.equal(p.doc.byId.lang.textContent, 'English');
    assert.equal(p.doc.byId.lang.attrs.lang, 'en');
    assert.match(p.text('status'), /내 순번은 12,345번/);
    p.doc.byId.lang.fire('click');
    assert.equal(p.doc.documentElement.attrs.lang, 'en');
    assert.equal(p.doc.byId.title.textContent, 'You are in line');
    assert.match(p.text('status'), /You are number 12,345/);
    assert.equal(store.getItem('vwr.lang'), 'en');
    const again = await page({ store, languages: ['ko-KR'], api: () => waitingBody() }).start();
    assert.equal(again.doc.documentElement.attrs.lang, 'en', 'the saved choice wins');
  });

  test('the live region speaks on a change of people ahead, at most every 15 s', async () => {
    let ahead = 100;
    const p = await page({ api: (m) => (m === 'POST' ? assigned() : waitingBody({ peopleAhead: --ahead, nextPollSeconds: 1 })) }).start();
    assert.match(p.text('status'), /100 people ahead/);
    await p.advance(9000);
    assert.equal(p.calls.length, 6, 'checks at 5, 6, 7, 8 and 9 s');
    assert.match(p.text('status'), /100 people ahead/, 'not re-announced within 15 s');
    assert.equal(p.text('ahead'), String(ahead), 'the numbers themselves are current');
    await p.advance(6000);
    assert.match(p.text('status'), new RegExp(`number 101. ${ahead} people ahead`), 'announced again after 15 s');
  });

  test('index.html: language, viewport, live region, labelled progress bar, keyboard button, no external resources', () => {
    assert.match(HTML, /<html lang="en">/);
    assert.match(HTML, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(HTML, /id="status"[^>]*aria-live="polite"/);
    assert.match(HTML, /role="progressbar"[^>]*aria-label=/);
    assert.match(HTML, /<button id="lang" type="button"/);
    for (const f of ['index.html', 'assets/app.js', 'assets/style.css']) {
      const text = readFileSync(join(STATIC, f), 'utf8');
      assert.ok(!/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//i.test(text.replace(/https:\/\/tickets\.example\.com/g, '')), `${f} loads nothing from elsewhere`);
      assert.ok(!/@import|@font-face|url\(/.test(text) || f !== 'assets/style.css', 'no web fonts or remote CSS');
    }
    assert.match(HTML, /href="\/vwr\/assets\/style\.css"/);
    assert.match(HTML, /src="\/vwr\/assets\/app\.js" defer/);
  });

  test('index.html: a Content-Security-Policy, and nothing inline that it would block', () => {
    const csp = [...HTML.matchAll(/<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)">/gi)];
    assert.equal(csp.length, 1, 'one CSP meta element');
    assert.equal(csp[0][1], "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'");
    const head = HTML.slice(0, HTML.indexOf('</head>'));
    assert.ok(head.indexOf('Content-Security-Policy') < head.search(/<(script|link)\b/), 'the policy comes before any script or stylesheet');
    for (const m of HTML.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      assert.match(m[1], /\ssrc="\/vwr\/assets\/[\w.-]+"/, 'scripts are files of this site');
      assert.equal(m[2].trim(), '', 'no inline script');
    }
    assert.ok(!/<[^>]*\son[a-z]+\s*=/i.test(HTML), 'no on*= event handler attributes');
    assert.ok(!/<[^>]*\sstyle\s*=/i.test(HTML), 'no style attributes');
    assert.ok(!/<style\b/i.test(HTML), 'no inline style element');
    assert.ok(!/javascript:/i.test(HTML), 'no javascript: URLs');
    // The script stays within the policy: no eval-like calls, no markup or style attributes
    // from strings (setting element.style properties through the CSSOM is allowed).
    const js = readFileSync(join(STATIC, 'assets', 'app.js'), 'utf8');
    for (const [re, what] of [[/\beval\(|new Function\b/, 'eval'], [/setTimeout\(\s*['"`]/, 'string timers'], [/\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write/, 'markup from strings'], [/setAttribute\(\s*['"](style|on\w+)['"]/, 'style or handler attributes'], [/\.style\.cssText/, 'cssText']]) {
      assert.ok(!re.test(js), `app.js uses ${what}`);
    }
    const css = readFileSync(join(STATIC, 'assets', 'style.css'), 'utf8');
    assert.ok(!/url\(|@import/.test(css), 'style.css loads nothing');
  });

  test('every string exists in both languages', () => {
    assert.deepEqual(Object.keys(app.STRINGS.ko).sort(), Object.keys(app.STRINGS.en).sort());
    for (const el of fakeDocument().i18n) assert.ok(app.STRINGS.en[el.attrs['data-i18n']], el.attrs['data-i18n']);
  });

  test('total page weight stays small', () => {
    const bytes = ['index.html', 'assets/app.js', 'assets/style.css'].reduce((n, f) => n + readFileSync(join(STATIC, f)).length, 0);
    assert.ok(bytes < 32 * 1024, `${bytes} bytes`);
  });
});

describe('helpers', () => {
  test('safeNext accepts same-site paths only', () => {
    const origin = 'https://tickets.example.com';
    for (const good of ['/events/e1', '/events/e1?seat=A1&x=%2F', '/api/x#frag', '/']) assert.equal(app.safeNext(good, origin), good);
    for (const bad of [null, '', 'events/e1', '//evil.com', '/\\evil.com', '\\\\evil.com', 'https://evil.com', 'javascript:alert(1)', '/\tx', '/\nx', '/vwr/e1', '/vwr-api/vwr/check/e1/x', `/${'x'.repeat(2048)}`]) {
      assert.equal(app.safeNext(bad, origin), null, JSON.stringify(bad));
      assert.equal(app.safeNext(bad), null, `${JSON.stringify(bad)} without the URL check`);
    }
  });

  test('eventIdFrom, queryParam, pickLang, retryAfterSeconds, formatWait, progress', () => {
    assert.equal(app.eventIdFrom('/vwr/e1'), 'e1');
    assert.equal(app.eventIdFrom('/vwr/e1/'), 'e1');
    for (const p of ['/vwr/', '/vwr/a/b', '/vwr/a%20b', `/vwr/${'x'.repeat(65)}`, '/events/e1']) assert.equal(app.eventIdFrom(p), null, p);
    assert.equal(app.queryParam('?a=1&next=%2Fx%3Fy%3D1', 'next'), '/x?y=1');
    assert.equal(app.queryParam('?next=%E0%A4%A', 'next'), null);
    assert.equal(app.queryParam('', 'next'), null);
    assert.equal(app.pickLang(null, ['fr', 'ko-KR']), 'ko');
    assert.equal(app.pickLang(null, ['en-GB', 'ko']), 'en');
    assert.equal(app.pickLang(null, ['fr']), 'en');
    assert.equal(app.pickLang('ko', ['en']), 'ko');
    assert.equal(app.retryAfterSeconds('12', 0), 12);
    assert.equal(app.retryAfterSeconds(new Date(60_000).toUTCString(), 0), 60);
    assert.equal(app.retryAfterSeconds('soon', 0), null);
    assert.equal(app.retryAfterSeconds(null, 0), null);
    const en = app.STRINGS.en;
    assert.equal(app.formatWait(30, en), 'under a minute');
    assert.equal(app.formatWait(61, en), 'about 2 min');
    assert.equal(app.formatWait(3 * 3600 + 120, en), 'about 3 h 2 min');
    assert.equal(app.progress(100, 25), 0.75);
    assert.equal(app.progress(0, 0), 1);
    assert.equal(app.progress(10, 20), 0);
  });
});
