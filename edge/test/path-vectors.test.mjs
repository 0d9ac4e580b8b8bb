// The hand-written path decision vectors (edge/test/path-vectors.json; format in
// edge/README.md, "Path vectors") through BOTH shipped builds, with keys made at test time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { DEFAULT_BASE_CONFIG } from '../local/proxy.mjs';
import { keysText, newKey, runBoth, signToken, tier1Claims } from './harness.mjs';

const file = JSON.parse(readFileSync(join(import.meta.dirname, 'path-vectors.json'), 'utf8'));
const NOW = 1_800_000_000;
const KEY = newKey();
const KEYS = keysText({ k1: KEY });

/** "valid": for every active event, its own cookie holding a valid tier-1 token for it. */
function cookiesFor(v) {
  if (v.cookie === undefined || v.cookie === 'none') return [];
  assert.equal(v.cookie, 'valid', `${v.name}: cookie is "none", "valid" or absent`);
  return v.active.map((id) => [`${file.cookiePrefix}${id}`, signToken(KEY, 'k1', tier1Claims(NOW, { eid: id }))]);
}

function run(v, cookies) {
  const config = { events: v.active, rules: file.rules, cookiePrefix: file.cookiePrefix, failMode: 'closed' };
  return runBoth({ uri: v.uri, query: v.query, accept: v.accept, cookies }, { config, keys: KEYS, now: NOW });
}

const target = (v, event) => `/vwr/${event}?next=${encodeURIComponent(v.uri + (v.query ? `?${v.query}` : ''))}`;
// An API call: first segment `api` in any case, percent-escapes decoded (`/%61pi/…`), or Accept naming JSON.
const firstSegment = (uri) => uri.split('/')[1].replace(/%([0-9A-Fa-f]{2})/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
const isApi = (v) => /^api$/i.test(firstSegment(v.uri)) || /application\/json/i.test(v.accept);

/** Asserts that `results` (one per build) answer `status` for `event`. */
function expectAnswer(v, results, status, event) {
  for (const { platform, outcome: o } of results) {
    const where = `${platform} ${v.name} (${v.uri})`;
    if (status === null) {
      assert.deepEqual(o, { pass: true }, `${where}: expected to reach the origin`);
      continue;
    }
    assert.equal(o.status, status, `${where}: status`);
    assert.equal(o.headers['cache-control'], 'no-store', `${where}: cache-control`);
    if (status === 302) assert.equal(o.headers.location, target(v, event), `${where}: location`);
    if (status === 403) {
      assert.equal(o.headers['content-type'], 'application/json', where);
      const body = JSON.parse(o.body);
      assert.equal(body.error, 'waiting_room_token_required', where);
      assert.equal(body.redirectTo, target(v, event), `${where}: redirectTo`);
    }
    if (status === 400 && isApi(v)) {
      assert.equal(o.headers['content-type'], 'application/json', where);
      const body = JSON.parse(o.body);
      assert.deepEqual(Object.keys(body), ['error', 'message'], where);
      assert.equal(body.error, 'bad_path', where);
      assert.equal(typeof body.message, 'string', where);
    } else if (status === 400) {
      assert.match(o.headers['content-type'], /^text\/plain/, where);
    }
  }
}

test('the path vector file is well formed and uses the demo rules', () => {
  assert.deepEqual(file.rules, DEFAULT_BASE_CONFIG.rules);
  assert.ok(file.vectors.length >= 40);
  const names = new Set();
  for (const v of file.vectors) {
    assert.ok(!names.has(v.name), `duplicate name ${v.name}`);
    names.add(v.name);
    assert.equal(typeof v.description, 'string', v.name);
    for (const k of ['uri', 'query', 'accept']) assert.equal(typeof v[k], 'string', `${v.name}.${k}`);
    assert.ok(Array.isArray(v.active), `${v.name}.active`);
    assert.ok([undefined, 'none', 'valid'].includes(v.cookie), `${v.name}.cookie`);
    assert.ok([302, 403, 400, null].includes(v.expect.status), `${v.name}.expect.status`);
    if (v.expect.status === 400) assert.equal(v.expect.event, null, `${v.name}: a refused path gates no event`);
    if (v.expect.status === 302 || v.expect.status === 403) assert.equal(typeof v.expect.event, 'string', `${v.name}.expect.event`);
    if (v.expect.event !== null) assert.ok(v.active.includes(v.expect.event), `${v.name}: the gated event is an active one`);
  }
});

for (const v of file.vectors) {
  test(`path vector ${v.name}: ${v.uri}${v.query ? `?${v.query}` : ''} → ${v.expect.status ?? 'origin'}`, async () => {
    expectAnswer(v, await run(v, cookiesFor(v)), v.expect.status, v.expect.event);
    // A pass of a gated event: the same request without the pass is gated as that event.
    if (v.expect.status === null && v.expect.event !== null) {
      expectAnswer(v, await run(v, []), isApi(v) ? 403 : 302, v.expect.event);
    }
  });
}
