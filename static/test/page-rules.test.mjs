// The page's rules against the vectors of page-rules.json, which the load test's visitor
// (cli/loadtest/tests/page_rules.rs) and the rehearsal's (rehearsal/test_page_rules.py) run
// too. The pure rules through the scripts' exports; the rest (what a refused `check` does, the
// pace of each state, the open's spread, a Retry-After's wait, the booking line's reads) by
// driving the waiting page and the tier-2 client on a manual clock and a scripted API.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const STATIC = join(import.meta.dirname, '..');

/** The scripts under test: the waiting page, the booking line's client, and the page's
 *  English strings (run as the browser runs them: registered in `self.VWR_LANGS`). */
function pageRules() {
  const load = createRequire(import.meta.url);
  const english = readFileSync(join(STATIC, 'assets', 'i18n', 'en.js'), 'utf8');
  return {
    page: load(join(STATIC, 'assets', 'app.js')),
    booking: load(join(STATIC, 'queue', 'tier2.js')),
    strings: (self) => new Function('self', english)(self),
  };
}
const rules = pageRules();

const VECTORS = JSON.parse(readFileSync(join(import.meta.dirname, 'page-rules.json'), 'utf8'));
const SECTIONS = ['verdicts', 'statusPacing', 'openSpread', 'hints', 'waits', 'pollForWait', 'backoff', 'jitter', 'retryAfterWait', 'retryAfter', 'marks', 'lineDelay', 'nextRead', 'firstLineRead', 'lineReadDelay'];

const near = (got, want, what) => assert.ok(Math.abs(got - want) < 1e-9, `${what}: got ${got}, want ${want}`);
const label = (section, i, c) => `${section}[${i}] ${JSON.stringify(c)}`;

/** Runs `f(case, label)` on every case of `section`, one after the other; fails with every
 *  case that disagrees. */
async function each(section, f) {
  const cases = VECTORS[section].cases;
  assert.ok(cases.length > 0, `${section}: no cases`);
  const failures = [];
  for (const [i, c] of cases.entries()) {
    try {
      await f(c, label(section, i, c));
    } catch (e) {
      failures.push(e.message);
    }
  }
  assert.equal(failures.length, 0, `${failures.length} case(s) disagree with the page:\n${failures.join('\n')}`);
}

// ---- A manual clock and a scripted API ----------------------------------------------------

const T0 = 1_000_000_000_000;

/** fetch, setTimeout and a clock; `answer(call)` answers each call ({status, body, headers}:
 *  `body: null` is an HTML page; 'network': a failed fetch; 'hang': never answered). */
function world(answer) {
  const timers = [];
  const calls = [];
  let now = T0;
  let seq = 0;
  const env = {
    now: () => now,
    setTimeout: (fn, ms) => {
      timers.push({ id: ++seq, at: now + Math.max(0, Number(ms) || 0), fn });
      return seq;
    },
    clearTimeout: (id) => {
      const i = timers.findIndex((t) => t.id === id);
      if (i >= 0) timers.splice(i, 1);
    },
    fetch: async (url, init = {}) => {
      const call = { url, method: init.method || 'GET', at: now };
      calls.push(call);
      const r = answer(call, calls);
      if (r === 'hang') return new Promise(() => {});
      if (r === 'network') throw new TypeError('Failed to fetch');
      const headers = Object.fromEntries(Object.entries(r.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
      const text = r.body === null ? '<html><body>Request blocked</body></html>' : JSON.stringify(r.body ?? {});
      return { status: r.status, headers: { get: (k) => headers[k.toLowerCase()] ?? null }, text: async () => text, clone: () => ({ json: async () => JSON.parse(text) }) };
    },
  };
  const settle = async () => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    env,
    calls,
    settle,
    get now() {
      return now;
    },
    /** Runs the timers in order until a call matching `which` is made (at most `limit` s on). */
    async until(which, limit = 4000) {
      await settle();
      for (;;) {
        const found = calls.find(which);
        if (found) return found;
        timers.sort((a, b) => a.at - b.at || a.id - b.id);
        const t = timers[0];
        if (!t || t.at > T0 + limit * 1000) return null;
        timers.shift();
        now = t.at;
        t.fn();
        await settle();
      }
    },
  };
}

/** A document with any element the page asks for. */
function fakeDocument() {
  const byId = new Map();
  const element = () => ({ textContent: '', hidden: false, checked: false, value: 'en', options: [{ value: 'en' }], style: {}, attrs: {}, setAttribute(k, v) { this.attrs[k] = String(v); }, getAttribute(k) { return this.attrs[k] ?? null; }, addEventListener() {} });
  return {
    documentElement: element(),
    head: { appendChild() {} },
    title: '',
    visibilityState: 'visible',
    createElement: () => ({}),
    querySelectorAll: () => [],
    addEventListener() {},
    getElementById(id) {
      if (!byId.has(id)) byId.set(id, element());
      return byId.get(id);
    },
  };
}

const isStatus = (c) => c.url.startsWith('/vwr-api/vwr/status/');
const isCheck = (c) => c.url.startsWith('/vwr-api/vwr/check/');
const isAssign = (c) => c.url.startsWith('/vwr-api/vwr/assign/');

/** The waiting page of e1 with `ticket` kept, every draw `random`, the API `answer`. */
async function waitingPage(ticket, answer, random = 0.5) {
  const store = new Map([['vwr.ticket.e1', JSON.stringify(ticket)]]);
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, String(v)), removeItem: (k) => store.delete(k) };
  const w = world((call, calls) => (call.url.startsWith('/vwr-api/vwr/page/') ? { status: 404, body: { error: 'not_found' } } : answer(call, calls)));
  const tab = { name: '' };
  rules.strings(tab);
  const page = rules.page.start({ ...w.env, document: fakeDocument(), storage, random: () => random, location: { pathname: '/vwr/e1', search: '', origin: 'https://shop.example', replace() {} }, languages: ['en'], tab, addEventListener() {} });
  await w.settle();
  return { w, page, ticket: () => JSON.parse(store.get('vwr.ticket.e1') ?? 'null') };
}

/** The status document of an open sale whose turn has come for position 5. */
const served = { status: 200, body: { eventId: 'e1', state: 'open', servingCounter: 5, updatedAt: 900 } };

// ---- The vectors ------------------------------------------------------------------------

test('every section of page-rules.json is run', () => {
  assert.deepEqual(Object.keys(VECTORS).filter((k) => k !== 'about').sort(), [...SECTIONS].sort());
});

describe('the waiting page (static/assets/app.js)', () => {
  test('verdicts: a refused check forgets the ticket only on a verdict', async () => {
    await each('verdicts', async (c, what) => {
      const { w, page, ticket } = await waitingPage({ requestId: 'r1', secret: 's1', position: 5 }, (call) => {
        if (isStatus(call)) return served;
        if (isCheck(call)) return c.status === 0 ? 'network' : { status: c.status, body: c.body };
        return { status: 503, body: {} };
      });
      await w.settle();
      const st = page.state();
      const then = st.stopped ? 'end' : w.calls.some(isAssign) ? 'rejoin' : st.errors > 0 && ticket()?.requestId === 'r1' ? 'backoff' : 'nothing';
      assert.equal(then, c.then, what);
    });
  });

  test('statusPacing: the status document is read at the pace of each state', async () => {
    await each('statusPacing', async (c, what) => {
      const ticket = { requestId: 'r1', secret: 's1', position: c.position, ...(c.rate === undefined ? {} : { rate: c.rate }) };
      let answeredAt = null;
      const { w, page } = await waitingPage(ticket, (call, calls) => {
        if (isStatus(call) && calls.filter(isStatus).length === 1) {
          answeredAt = call.at;
          return { status: 200, body: { eventId: 'e1', updatedAt: 900, ...c.doc } };
        }
        return 'hang';
      });
      const st = page.state();
      if (st.stopped || st.errors > 0) return assert.equal(st.stopped ? 'end' : 'backoff', c.then, what);
      const next = await w.until((x) => isCheck(x) || (isStatus(x) && x !== w.calls.find(isStatus)));
      assert.ok(next, `${what}: no call after the document`);
      assert.equal(isCheck(next) ? 'check' : 'status', c.then, what);
      if (c.then === 'status') near((next.at - answeredAt) / 1000, c.seconds, what);
      else assert.equal(next.at, answeredAt, `${what}: check at once`);
    });
  });

  test('openSpread: at the open, a random 0-5 s before the first call', async () => {
    await each('openSpread', async (c, what) => {
      // A pre-queue ticket (no position yet): its check says pre-queue, the document then open.
      let openAt = null;
      const { w } = await waitingPage(
        { requestId: 'r1', secret: 's1' },
        (call, calls) => {
          if (isCheck(call) && calls.filter(isCheck).length === 1) return { status: 200, body: { admitted: false, state: 'prequeue', nextPollSeconds: 5 } };
          if (isStatus(call) && openAt === null) {
            openAt = call.at;
            return { status: 200, body: { eventId: 'e1', state: 'open', servingCounter: 0, updatedAt: 900 } };
          }
          return 'hang';
        },
        c.random
      );
      const first = await w.until((x) => isCheck(x) && openAt !== null && x.at >= openAt && x !== w.calls.find(isCheck));
      assert.ok(first, `${what}: no check after the open`);
      near((first.at - openAt) / 1000, c.seconds, what);
    });
  });

  test('retryAfterWait: a refusal with Retry-After waits at least as long', async () => {
    await each('retryAfterWait', async (c, what) => {
      let refusedAt = null;
      const { w } = await waitingPage(
        { requestId: 'r1', secret: 's1', position: 5 },
        (call, calls) => {
          if (isStatus(call)) return served;
          if (isCheck(call) && calls.filter(isCheck).length === 1) {
            refusedAt = call.at;
            return { status: 503, body: { message: 'Service Unavailable' }, headers: { 'Retry-After': String(c.after) } };
          }
          return 'hang';
        },
        c.random
      );
      const again = await w.until((x) => isCheck(x) && x.at > refusedAt);
      assert.ok(again, `${what}: not asked again`);
      near((again.at - refusedAt) / 1000, c.seconds, what);
    });
  });

  test('hints, waits, pollForWait, backoff, jitter, retryAfter: the exported rules', async () => {
    const { page, booking } = rules;
    await each('hints', (c, what) => near(page.pollSeconds(c.nextPollSeconds), c.seconds, what));
    await each('waits', (c, what) => {
      near(page.waitSeconds(c.place, c.rate), c.seconds, what);
      near(booking.waitSeconds(c.place, c.rate), c.seconds, `${what} (tier2.js)`);
    });
    await each('pollForWait', (c, what) => near(page.pollForWait(c.wait), c.seconds, what));
    // The back-off before jitter: at the middle draw, jitter changes nothing.
    await each('backoff', (c, what) => {
      near(page.backoffSeconds(c.errors, 0.5), c.seconds, what);
      near(booking.backoffSeconds(c.errors, 0.5), c.seconds, `${what} (tier2.js)`);
    });
    await each('jitter', (c, what) => near(page.jitter(c.seconds, c.random), c.delay, what));
    await each('retryAfter', (c, what) => {
      assert.equal(page.retryAfterSeconds(c.header, c.nowMs), c.seconds, what);
      assert.equal(booking.retryAfterSeconds(c.header, c.nowMs), c.seconds, `${what} (tier2.js)`);
    });
  });
});

describe('the booking line (static/queue/tier2.js)', () => {
  test('marks, lineDelay, nextRead: the exported rules', async () => {
    const { booking } = rules;
    await each('marks', (c, what) => assert.equal(booking.placeOf(c.marks, c.score), c.place, what));
    await each('lineDelay', (c, what) => near(booking.lineDelay(c.place, c.threshold, c.rate), c.seconds, what));
    // No progress seen yet: 0 to the page.
    await each('nextRead', (c, what) => near(booking.nextRead(c.place, c.threshold, c.docRate ?? 0, c.observed ?? 0), c.seconds, what));
  });

  /** A client of e1 whose check answers a place (`answer` over a default), every draw `random`. */
  function inLine(answer, random, line) {
    const w = world((call) => {
      if (call.url.startsWith('/api/queue/check/')) return { status: 200, body: { status: 'queued', lineScore: 500, checkedAt: T0 / 1000, nextPollSeconds: 1, ...answer } };
      if (call.url.startsWith('/api/queue/line/') && line) return line(call);
      return 'hang';
    });
    rules.booking.client({ eventId: 'e1', env: { ...w.env, random: () => random } }).start();
    return w;
  }
  const isLine = (c) => c.url.startsWith('/api/queue/line/');

  test('firstLineRead: the first read of the line document after a place', async () => {
    await each('firstLineRead', async (c, what) => {
      const w = inLine(c.answer, 0.5);
      const first = await w.until(isLine);
      assert.ok(first, `${what}: no read`);
      near((first.at - T0) / 1000, c.seconds, what);
    });
  });

  test('lineReadDelay: the next read after a line document, jittered above 1 s', async () => {
    await each('lineReadDelay', async (c, what) => {
      // The visitor's score is a mark's: that mark's place is its own.
      const doc = { eventId: 'e1', waiting: c.place, active: 0, front: 1, marks: [[c.place, 500]], updatedAt: T0 / 1000 + 1, ...c.doc };
      let readAt = null;
      const w = inLine({ position: c.place, threshold: c.doc.threshold }, c.random, (call) => {
        if (readAt !== null) return 'hang';
        readAt = call.at;
        return { status: 200, body: doc };
      });
      const second = await w.until((x) => isLine(x) && readAt !== null && x.at > readAt, 10_000);
      assert.ok(second, `${what}: no second read`);
      near((second.at - readAt) / 1000, c.seconds, what);
    });
  });
});
