// The draw in the browser (static/assets/draw.js) against the reference vectors written by the
// Rust implementation (functions/tier1/tests/draw-vectors.json), and the "Check the draw" page
// (static/assets/verify.html + verify.js) driven through a fake browser.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const STATIC = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const draw = require(join(STATIC, 'assets', 'draw.js'));
const verify = require(join(STATIC, 'assets', 'verify.js'));
const VECTORS = JSON.parse(readFileSync(join(STATIC, '..', 'functions', 'tier1', 'tests', 'draw-vectors.json'), 'utf8'));
const HTML = readFileSync(join(STATIC, 'assets', 'verify.html'), 'utf8');
const INDEX_HTML = readFileSync(join(STATIC, 'index.html'), 'utf8');

const SEED = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const SEED_COMMITMENT = '630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd';

const b64url = (s) => Buffer.from(s).toString('base64url');

/** A ticket as the tier-1 API issues it: v1.<kid>.<base64url(eventId:place:issuedAt)>.<mac>. */
function ticket(place, { event = 'e1', kid = 'k20260101', issuedAt = 1_800_000_000, key = randomBytes(32) } = {}) {
  const signed = `v1.${kid}.${b64url(`${event}:${place}:${issuedAt}`)}`;
  const mac = createHmac('sha256', key).update(signed).digest().subarray(0, 16).toString('base64url');
  return `${signed}.${mac}`;
}

async function rejects(promiseOrFn, code) {
  await assert.rejects(async () => (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn), (e) => e.code === code);
}

describe('draw.js against the Rust vectors', () => {
  test('the vector file is complete', () => {
    const sizes = new Set(VECTORS.permutations.map((v) => v.size));
    for (const s of ['1', '2', '3', '5', '8', '100', '1000', '65537', '1000003', '4611686018427387904']) assert.ok(sizes.has(s), s);
    assert.ok(VECTORS.ranks.some((v) => v.rank === null) && VECTORS.ranks.some((v) => v.rank !== null));
    assert.ok(VECTORS.draws.length > 0);
  });

  test('every permutation vector: commitment and position', async () => {
    for (const v of VECTORS.permutations) {
      assert.equal(await draw.commitment(v.seed), v.commitment, v.seed);
      assert.equal((await draw.position(v.seed, v.size, v.index)).toString(), v.position, JSON.stringify(v));
      assert.equal((await draw.permute(v.seed, BigInt(v.size), BigInt(v.index))) + 1n, BigInt(v.position));
    }
  });

  test('every rank vector', () => {
    for (const v of VECTORS.ranks) {
      if (v.rank === null) assert.throws(() => draw.rankOfPreIndex(v.counts, v.preIndex), (e) => e.code === 'not_in_prequeue', JSON.stringify(v));
      else assert.equal(draw.rankOfPreIndex(v.counts, v.preIndex), BigInt(v.rank), JSON.stringify(v));
    }
  });

  test('every draw vector, end to end', async () => {
    for (const v of VECTORS.draws) {
      assert.equal(await draw.commitment(v.seed), v.commitment);
      const size = draw.prequeueSize(v.counts);
      assert.equal(size, BigInt(v.size));
      const rank = draw.rankOfPreIndex(v.counts, v.preIndex);
      assert.equal(rank, BigInt(v.rank));
      assert.equal(await draw.position(v.seed, size, rank), BigInt(v.position), JSON.stringify(v));
      // The same through a ticket carrying the pre-queue index.
      assert.equal(draw.rankOfPreIndex(v.counts, draw.preIndexOfTicket(ticket(`q${v.preIndex}`))), rank);
    }
  });
});

describe('draw.js', () => {
  test('permute is a bijection for small sizes', async () => {
    for (const seed of [SEED, 'ff'.repeat(32)]) {
      for (let size = 1; size <= 40; size++) {
        const p = await draw.permutation(seed, size);
        const out = await Promise.all(Array.from({ length: size }, (_, i) => p.permute(i)));
        assert.equal(new Set(out).size, size, `size ${size}`);
        assert.ok(out.every((y) => typeof y === 'bigint' && y >= 0n && y < BigInt(size)), `size ${size}`);
      }
    }
  });

  test('inputs as numbers, strings or BigInts; refusals with codes', async () => {
    const want = await draw.position(SEED, 100n, 42n);
    assert.equal(await draw.position(SEED, 100, 42), want);
    assert.equal(await draw.position(SEED, '100', '42'), want);
    assert.equal(await draw.position(SEED.toUpperCase(), 100, 42), want, 'hex in either case');
    assert.equal(await draw.commitment(SEED), SEED_COMMITMENT);
    await rejects(draw.permute(SEED, 0, 0), 'size_zero');
    await rejects(draw.permute(SEED, 2n ** 62n + 1n, 0), 'size_too_large');
    await rejects(draw.permute(SEED, 5, 5), 'index_out_of_range');
    await rejects(draw.permute(SEED, 5, -1), 'bad_number');
    await rejects(draw.permute(SEED, 5, 1.5), 'bad_number');
    await rejects(draw.permute(SEED, 2 ** 60, 0), 'bad_number'); // not a safe integer: pass a BigInt or a string
    for (const bad of ['', 'abc', SEED.slice(1), `${SEED}00`, SEED.replace('a', 'g'), null]) await rejects(draw.commitment(bad), 'bad_hex');
    assert.throws(() => draw.rankOfPreIndex([], 1), (e) => e.code === 'not_in_prequeue');
    assert.throws(() => draw.rankOfPreIndex([3, 'x'], 1), (e) => e.code === 'bad_number');
    assert.equal(draw.prequeueSize([3, '2', 4n]), 9n);
    assert.equal(draw.preIndex(3, 4, 3), 12n);
  });

  test('preIndexOfTicket reads pre-queue tickets and returns null for regular ones', () => {
    assert.equal(draw.preIndexOfTicket(ticket('q7')), 7n);
    assert.equal(draw.preIndexOfTicket(ticket('q18446744073709551615')), 18446744073709551615n);
    assert.equal(draw.preIndexOfTicket(`  ${ticket('q1', { event: 'summer-sale_2026' })}\n`), 1n);
    assert.equal(draw.preIndexOfTicket(ticket('42')), null);
    assert.deepEqual(draw.parseTicket(ticket('42', { event: 'e9', issuedAt: 5 })), { eventId: 'e9', preIndex: null, join: 42n, issuedAt: 5n });
    assert.deepEqual(draw.parseTicket(ticket('q3')), { eventId: 'e1', preIndex: 3n, join: null, issuedAt: 1_800_000_000n });
    const good = ticket('q7').split('.');
    for (const bad of [
      '',
      'junk',
      ticket('q0'),
      ticket('0'),
      ticket('q'),
      ticket('x7'),
      ticket('q-1'),
      ticket('q7', { event: 'bad event' }),
      `v2.${good.slice(1).join('.')}`,
      `${good.join('.')}.extra`,
      `v1.${good[1]}.${b64url('e1:q7')}.${good[3]}`,
      `v1.${good[1]}.${b64url('e1:q7:1:2')}.${good[3]}`,
      `v1.${good[1]}.***.${good[3]}`,
      `v1.${good[1]}.${Buffer.from([0xff, 0xfe, 0x3a]).toString('base64url')}.${good[3]}`,
    ]) {
      assert.throws(() => draw.preIndexOfTicket(bad), (e) => e.code === 'bad_ticket', bad);
    }
  });
});

// ---- The verify page in a fake browser -------------------------------------------------

function element(attrs) {
  const listeners = {};
  return {
    attrs: { ...attrs },
    textContent: '',
    value: '',
    className: attrs.class || '',
    hidden: 'hidden' in attrs,
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
      const e = { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
      (listeners[type] || []).forEach((fn) => fn(e));
      return e;
    },
  };
}

/** The elements of the real verify.html that carry an id or data-i18n. */
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
    getElementById(id) {
      if (!byId[id]) throw new Error(`verify.html has no element #${id}`);
      return byId[id];
    },
    querySelectorAll(sel) {
      assert.equal(sel, '[data-i18n]');
      return i18n;
    },
    byId,
    i18n,
  };
}

function storage(initial = {}) {
  const m = new Map(Object.entries(initial));
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), map: m };
}

/** The page with a scripted status document (`status`: {code, body} or a function of the path). */
function page({ search = '', status = null, store = storage(), languages = ['en-US'] } = {}) {
  const doc = fakeDocument();
  const calls = [];
  const fetch = async (path, init) => {
    calls.push({ path, init });
    const r = typeof status === 'function' ? status(path) : status;
    if (!r) throw new TypeError('network down');
    return { status: r.code, json: async () => r.body };
  };
  const p = verify.start({ document: doc, storage: store, fetch, location: { search }, languages, draw });
  const text = (id) => doc.byId[id].textContent;
  const shown = (id) => !doc.byId[id].hidden;
  return { ...p, doc, calls, store, text, shown };
}

const DRAW = VECTORS.draws[0]; // seed 00…1f, counts [3,2,4], pre-queue index 7 → rank 6, position 1
const OPEN = { code: 200, body: { state: 'open', seed: DRAW.seed, seedCommitment: DRAW.commitment, sealedCounts: DRAW.counts, prequeueSize: DRAW.size } };

describe('verify page', () => {
  test('pre-filled from ?event=, the status document and the stored ticket', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: ticket(`q${DRAW.preIndex}`), position: null, firstAhead: 3 }) });
    const p = page({ search: '?event=e1', status: OPEN, store });
    await p.ready;
    assert.deepEqual(p.calls.map((c) => c.path), ['/vwr-api/vwr/status/e1']);
    assert.equal(p.calls[0].init.credentials, 'omit');
    assert.equal(p.doc.byId.event.value, 'e1');
    assert.equal(p.doc.byId.seed.value, DRAW.seed);
    assert.equal(p.doc.byId.counts.value, '3,2,4');
    assert.ok(p.shown('commitcheck'));
    assert.equal(p.doc.byId.commitcheck.className, 'status');
    assert.match(p.text('commitcheck'), /matches the commitment/);
    assert.ok(p.shown('result'));
    assert.equal(p.text('r-preindex'), String(DRAW.preIndex));
    assert.equal(p.text('r-rank'), String(DRAW.rank));
    assert.equal(p.text('r-size'), String(DRAW.size));
    assert.equal(p.text('r-position'), String(DRAW.position));
    assert.equal(p.text('message'), `Your drawn position is ${DRAW.position} of ${DRAW.size}.`);
    assert.equal(p.text('status'), p.text('message'), 'announced');
    assert.ok(!p.shown('error'));
  });

  test('a seed that does not match the commitment is flagged, and nothing is computed', async () => {
    const body = { ...OPEN.body, seedCommitment: 'ab'.repeat(32) };
    const p = page({ search: '?event=e1', status: { code: 200, body } });
    await p.ready;
    assert.equal(p.doc.byId.commitcheck.className, 'error');
    assert.match(p.text('commitcheck'), /does NOT match/);
    assert.ok(p.text('commitcheck').includes(DRAW.commitment));
    assert.match(p.text('status'), /does NOT match/);
    assert.ok(!p.shown('result'));
  });

  test('before the open: the commitment only', async () => {
    const p = page({ search: '?event=e1', status: { code: 200, body: { state: 'prequeue', seedCommitment: SEED_COMMITMENT } } });
    await p.ready;
    assert.equal(p.doc.byId.commitment.value, SEED_COMMITMENT);
    assert.equal(p.doc.byId.seed.value, '');
    assert.match(p.text('message'), /revealed at the opening/);
    assert.ok(p.text('message').includes(SEED_COMMITMENT));
    assert.ok(!p.shown('result') && !p.shown('commitcheck'));
  });

  test('manual entry works without the status document', async () => {
    const v = VECTORS.permutations.find((x) => x.size === '1000' && x.index === '500');
    const p = page();
    await p.ready;
    assert.equal(p.calls.length, 0, 'no ?event=: no request');
    p.doc.byId.seed.value = v.seed;
    p.doc.byId.size.value = v.size;
    p.doc.byId.rank.value = v.index;
    const e = p.doc.byId.form.fire('submit');
    assert.ok(e.defaultPrevented, 'the form is never submitted (form-action none)');
    await p.check();
    assert.equal(p.text('r-position'), Number(v.position).toLocaleString('en-US'));
    assert.equal(p.text('r-preindex'), '–');
    assert.match(p.text('commitcheck'), /No commitment given/);
    p.doc.byId.commitment.value = v.commitment.toUpperCase();
    await p.check();
    assert.match(p.text('commitcheck'), /matches the commitment/);
  });

  test('the 2^62 vector, and errors in plain words', async () => {
    const v = VECTORS.permutations.find((x) => x.size === '4611686018427387904' && x.index === '4611686018427387903');
    const p = page();
    p.doc.byId.seed.value = v.seed;
    p.doc.byId.size.value = v.size;
    p.doc.byId.rank.value = v.index;
    await p.check();
    assert.equal(p.text('r-position').replace(/,/g, ''), v.position);
    p.doc.byId.rank.value = v.size;
    await p.check();
    assert.equal(p.text('error'), 'The rank must be between 0 and P − 1.');
    assert.ok(!p.shown('result'));
    p.doc.byId.seed.value = 'xyz';
    await p.check();
    assert.equal(p.text('error'), 'The seed must be 64 hexadecimal characters.');
    p.doc.byId.seed.value = '';
    await p.check();
    assert.match(p.text('error'), /Enter the seed/);
    p.doc.byId.seed.value = SEED;
    p.doc.byId.rank.value = '';
    await p.check();
    assert.match(p.text('error'), /Enter your ticket/);
    p.doc.byId.ticket.value = ticket('q8');
    p.doc.byId.counts.value = '3,2,4';
    await p.check();
    assert.equal(p.text('error'), 'This ticket (pre-queue index 8) is not in the sealed pre-queue.');
    p.doc.byId.counts.value = '3,two';
    await p.check();
    assert.match(p.text('error'), /whole numbers separated by commas/);
    p.doc.byId.counts.value = '';
    p.doc.byId.ticket.value = ticket('q1');
    await p.check();
    assert.match(p.text('error'), /Enter the sealed counts/);
    p.doc.byId.ticket.value = 'v1.k.zzz';
    await p.check();
    assert.equal(p.text('error'), 'This ticket is not valid.');
    p.doc.byId.event.value = 'e2';
    p.doc.byId.counts.value = '3,2,4';
    p.doc.byId.ticket.value = ticket('q1');
    await p.check();
    assert.equal(p.text('error'), 'This ticket is for event e1, not e2.');
  });

  test('a regular ticket was not drawn: P + j', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: ticket('5'), position: 14 }) });
    const p = page({ search: '?event=e1', status: OPEN, store });
    await p.ready;
    assert.equal(p.text('message'), 'This ticket joined after the opening, so it was not part of the draw: its position is P + 5 = 14.');
    assert.ok(!p.shown('result'));
  });

  test('unknown event, bad event id, network failure', async () => {
    let p = page({ search: '?event=nope', status: { code: 404, body: { error: 'event_not_found' } } });
    await p.ready;
    assert.equal(p.text('error'), 'There is no event with this id.');
    p = page({ search: '?event=e1', status: null });
    await p.ready;
    assert.match(p.text('error'), /Could not load the published draw/);
    p = page({ search: '?event=%3Cscript%3E' });
    await p.ready;
    assert.equal(p.calls.length, 0, 'an invalid ?event= is not used');
    assert.equal(p.doc.byId.event.value, '');
    p.doc.byId.event.value = '../admin';
    await p.load();
    assert.equal(p.text('error'), 'This event id is not valid.');
    assert.equal(p.calls.length, 0);
  });

  test('Korean, switchable, remembered', async () => {
    const store = storage({ 'vwr.ticket.e1': JSON.stringify({ requestId: ticket(`q${DRAW.preIndex}`) }) });
    const p = page({ search: '?event=e1', status: OPEN, store, languages: ['ko-KR'] });
    await p.ready;
    assert.equal(p.doc.documentElement.attrs.lang, 'ko');
    assert.equal(p.doc.title, '추첨 확인');
    assert.equal(p.doc.byId.title.textContent, '추첨 확인');
    assert.equal(p.text('message'), `추첨된 내 순번은 ${DRAW.size}명 중 ${DRAW.position}번입니다.`);
    assert.equal(p.doc.byId.lang.textContent, 'English');
    p.doc.byId.lang.fire('click');
    assert.equal(p.doc.documentElement.attrs.lang, 'en');
    assert.equal(p.text('message'), `Your drawn position is ${DRAW.position} of ${DRAW.size}.`);
    assert.match(p.text('commitcheck'), /matches/);
    assert.equal(store.getItem('vwr.lang'), 'en');
  });

  test('every string in both languages; every data-i18n key exists', () => {
    assert.deepEqual(Object.keys(verify.STRINGS.ko).sort(), Object.keys(verify.STRINGS.en).sort());
    for (const el of fakeDocument().i18n) assert.ok(verify.STRINGS.en[el.attrs['data-i18n']], el.attrs['data-i18n']);
    assert.deepEqual(verify.parseCounts(' 3, 2 ,4 '), ['3', '2', '4']);
    assert.equal(verify.parseCounts('3,-1'), null);
    assert.equal(verify.parseCounts(''), null);
  });

  test('verify.html: the waiting page CSP, and nothing inline that it would block', () => {
    const csp = (html) => [...html.matchAll(/<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)">/gi)].map((m) => m[1]);
    assert.deepEqual(csp(HTML), csp(INDEX_HTML));
    assert.equal(csp(HTML).length, 1);
    const head = HTML.slice(0, HTML.indexOf('</head>'));
    assert.ok(head.indexOf('Content-Security-Policy') < head.search(/<(script|link)\b/), 'the policy comes before any script or stylesheet');
    const scripts = [...HTML.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert.deepEqual(scripts.map((m) => m[1].trim()), ['src="/vwr/assets/draw.js" defer', 'src="/vwr/assets/verify.js" defer'], 'draw.js first');
    for (const m of scripts) assert.equal(m[2].trim(), '', 'no inline script');
    assert.ok(!/<[^>]*\son[a-z]+\s*=/i.test(HTML), 'no on*= event handler attributes');
    assert.ok(!/<[^>]*\sstyle\s*=/i.test(HTML), 'no style attributes');
    assert.ok(!/<style\b/i.test(HTML), 'no inline style element');
    assert.ok(!/javascript:/i.test(HTML), 'no javascript: URLs');
    assert.ok(!/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//i.test(HTML), 'loads nothing from elsewhere');
    for (const f of ['draw.js', 'verify.js']) {
      const js = readFileSync(join(STATIC, 'assets', f), 'utf8');
      for (const [re, what] of [[/\beval\(|new Function\b/, 'eval'], [/setTimeout\(\s*['"`]/, 'string timers'], [/\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write/, 'markup from strings'], [/setAttribute\(\s*['"](style|on\w+)['"]/, 'style or handler attributes'], [/\.style\b/, 'inline styles']]) {
        assert.ok(!re.test(js), `${f} uses ${what}`);
      }
    }
  });
});
