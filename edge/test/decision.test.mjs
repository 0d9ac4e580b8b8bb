// The decision table of the edge check, run through BOTH shipped handlers (the built
// CloudFront Function and the built Lambda@Edge handler) with keys generated at test time.
import assert from 'node:assert/strict';
import nodeCrypto from 'node:crypto';
import { describe, test } from 'node:test';

import {
  LAYOUT_RULES,
  atTime,
  captureLogs,
  cloudFrontEvent,
  keysText,
  lambdaEdgeEvent,
  loadCloudFrontFunction,
  loadLambdaEdge,
  newKey,
  outcome,
  runBoth,
  signToken,
  tier1Claims,
} from './harness.mjs';

// Every check of a token runs at NOW (setNow / atTime), never on the real clock, so the
// outcome does not depend on how long the suite takes.
const NOW = Math.floor(Date.now() / 1000);
const K1 = newKey();
const K0 = newKey();
const KEYS = keysText({ k1: K1, k0: K0 });
const CONFIG = {
  events: { e1: { active: true }, e2: { active: true }, off: { active: false } },
  rules: LAYOUT_RULES,
  cookiePrefix: 'vwr_t1_',
  issuer: 'vwr',
  audience: 'vwr-edge',
  failMode: 'closed',
  leewaySeconds: 30,
};
const VALID = signToken(K1, 'k1', tier1Claims(NOW));

async function both(spec, opts = {}) {
  return runBoth(spec, { config: CONFIG, keys: KEYS, now: NOW, ...opts });
}

function assertRedirect(results, location) {
  for (const { platform, outcome: o } of results) {
    assert.equal(o.status, 302, `${platform}: status`);
    assert.equal(o.headers.location, location, `${platform}: location`);
    assert.equal(o.headers['cache-control'], 'no-store', `${platform}: cache-control`);
  }
}

function assertPass(results) {
  for (const { platform, outcome: o } of results) assert.deepEqual(o, { pass: true }, platform);
}

describe('gating', () => {
  test('a navigation without a token is sent to the waiting page with next = path and query', async () => {
    const r = await both({ uri: '/events/e1', query: 'seat=A1&q=%20x', accept: 'text/html,application/xhtml+xml' });
    assertRedirect(r, `/vwr/e1?next=${encodeURIComponent('/events/e1?seat=A1&q=%20x')}`);
    for (const { logs } of r) assert.deepEqual(logs, [], 'no cookie: nothing to log');
  });

  test('an API call without a token gets 403 JSON naming the waiting page', async () => {
    for (const spec of [
      { uri: '/api/seats/e1/A12', query: 'x=1' },
      { uri: '/events/e1', accept: 'application/json' },
    ]) {
      const next = spec.uri + (spec.query ? `?${spec.query}` : '');
      for (const { platform, outcome: o } of await both(spec)) {
        assert.equal(o.status, 403, platform);
        assert.equal(o.headers['content-type'], 'application/json');
        const body = JSON.parse(o.body);
        assert.equal(body.error, 'waiting_room_token_required');
        assert.equal(typeof body.message, 'string');
        assert.equal(body.redirectTo, `/vwr/e1?next=${encodeURIComponent(next)}`);
      }
    }
  });

  test('a valid token passes the request through unchanged', async () => {
    const event = cloudFrontEvent({ uri: '/events/e1', query: 'a=1', cookies: [['vwr_t1_e1', VALID]] });
    const before = JSON.stringify(event.request);
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
    cff.setNow(NOW);
    assert.equal(await cff.handler(event), event.request);
    assert.equal(JSON.stringify(event.request), before);

    const edge = loadLambdaEdge();
    assert.equal(edge.setConfig({ ...CONFIG, keys: KEYS }), null);
    const le = lambdaEdgeEvent({ uri: '/api/seats/e1/A1', cookies: [['other', 'x'], ['vwr_t1_e1', VALID]] });
    const request = le.Records[0].cf.request;
    const beforeLe = JSON.stringify(request);
    assert.equal(await atTime(NOW, () => edge.handler(le)), request);
    assert.equal(JSON.stringify(request), beforeLe);
  });

  test('a token signed with the older kid still passes (rotation)', async () => {
    assertPass(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', signToken(K0, 'k0', tier1Claims(NOW))]] }));
  });

  test('a token of another event, or in the other event\'s cookie, does not pass', async () => {
    const forE2 = signToken(K1, 'k1', tier1Claims(NOW, { eid: 'e2' }));
    assertRedirect(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', forE2]] }), `/vwr/e1?next=${encodeURIComponent('/events/e1')}`);
    const r = await both({ uri: '/events/e2', cookies: [['vwr_t1_e2', VALID]] });
    assertRedirect(r, `/vwr/e2?next=${encodeURIComponent('/events/e2')}`);
    for (const { logs } of r) assert.deepEqual(logs, [{ src: 'vwr-edge', evt: 'token_rejected', eventId: 'e2', reason: 'wrong_event' }]);
    assertPass(await both({ uri: '/events/e2', cookies: [['vwr_t1_e2', forE2]] }));
  });

  test('an expired token, or one that is not a tier-1 token, does not pass', async () => {
    for (const claims of [tier1Claims(NOW - 700), tier1Claims(NOW, { tier: 2 }), tier1Claims(NOW, { exp: undefined })]) {
      assertRedirect(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', signToken(K1, 'k1', claims)]] }), `/vwr/e1?next=${encodeURIComponent('/events/e1')}`);
    }
  });

  test('the cookie prefix is configurable', async () => {
    const config = { ...CONFIG, cookiePrefix: 'wr_' };
    assertPass(await both({ uri: '/events/e1', cookies: [['wr_e1', VALID]] }, { config }));
    assertRedirect(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] }, { config }), `/vwr/e1?next=${encodeURIComponent('/events/e1')}`);
  });

  test('a very long address keeps only its path in next, or nothing', async () => {
    const longQuery = `q=${'x'.repeat(3000)}`;
    assertRedirect(await both({ uri: '/events/e1/seats', query: longQuery }), `/vwr/e1?next=${encodeURIComponent('/events/e1/seats')}`);
    const longPath = `/events/e1/${'p'.repeat(2100)}`;
    assertRedirect(await both({ uri: longPath }), '/vwr/e1');
  });
});

describe('what is never gated', () => {
  test('the waiting room itself, even with no configuration at all', async () => {
    for (const uri of ['/vwr/e1', '/vwr/assets/app.js', '/vwr-api/vwr/assign/e1', '/vwr-api/vwr/check/e1/abc']) {
      const cff = loadCloudFrontFunction({ kvs: {} });
      assert.deepEqual(outcome(await cff.handler(cloudFrontEvent({ uri }))), { pass: true }, uri);
      assert.deepEqual(cff.kvs.reads, [], 'the waiting room needs no KeyValueStore read');
      const edge = loadLambdaEdge();
      assert.deepEqual(outcome(await edge.handler(lambdaEdgeEvent({ uri }))), { pass: true }, uri);
    }
  });

  test('inactive and unknown events, and paths outside the rules', async () => {
    for (const uri of ['/events/off', '/events/zzz', '/events', '/events/', '/', '/about', '/api/other/e1', '/api/seats', '/static/e1.css']) {
      assertPass(await both({ uri }));
    }
  });
});

describe('x-vwr-* viewer headers never pass the edge (docs/invariants.md, rule 25)', () => {
  // A viewer's own x-vwr-* headers, spelled as a viewer might. The origins trust x-vwr-user and
  // x-vwr-event only from the protected-API gate, and CloudFront adds x-vwr-origin-secret itself
  // after the function; tokens and request secrets go to /vwr-api/* and /api/queue/*, where the
  // verifier does not run.
  const VIEWER = { 'X-VWR-User': 'admin', 'x-vwr-event': 'e2', 'x-vwr-origin-secret': 'guess', 'X-Vwr-Token': VALID, 'x-vwr-request-secret': 's', 'x-other': 'kept' };
  const xHeaders = (headers) => Object.keys(headers).filter((n) => n.startsWith('x-')).sort();
  const cases = [
    { uri: '/api/seats/e1/A1', cookies: [['vwr_t1_e1', VALID]] },
    { uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] },
    { uri: '/about' },
    { uri: '/events/off' },
    { uri: '/vwr/e1/..' },
    { uri: '/%76wr-api/vwr/check/e1/x' },
  ];
  for (const c of cases) {
    test(`${c.uri}: passed on without them`, async () => {
      const spec = { ...c, accept: 'text/html', headers: VIEWER };
      const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
      cff.setNow(NOW);
      const a = await cff.handler(cloudFrontEvent(spec));
      assert.equal(typeof a.uri, 'string', 'CloudFront Function: passed');
      assert.deepEqual(xHeaders(a.headers), ['x-other'], 'CloudFront Function');
      assert.equal(a.headers.accept.value, 'text/html');
      const edge = loadLambdaEdge();
      edge.setConfig({ ...CONFIG, keys: KEYS });
      const b = await atTime(NOW, () => edge.handler(lambdaEdgeEvent(spec)));
      assert.equal(typeof b.uri, 'string', 'Lambda@Edge: passed');
      assert.deepEqual(xHeaders(b.headers), ['x-other'], 'Lambda@Edge');
      assert.equal(b.headers.accept[0].value, 'text/html');
    });
  }

  test('also when a missing configuration lets requests through (fail mode open)', async () => {
    const cff = loadCloudFrontFunction({ kvs: {}, failMode: 'open' });
    const a = await cff.handler(cloudFrontEvent({ uri: '/events/e1', headers: VIEWER }));
    assert.deepEqual(xHeaders(a.headers), ['x-other'], 'CloudFront Function');
    const edge = loadLambdaEdge({ failMode: 'open' });
    const b = await captureLogs(() => edge.handler(lambdaEdgeEvent({ uri: '/events/e1', headers: VIEWER })));
    assert.deepEqual(xHeaders(b.result.headers), ['x-other'], 'Lambda@Edge');
  });
});

describe('canonical variants of a protected path are gated as it', () => {
  for (const uri of ['/events/%65%31', '/events/E1', '/events/%45%31/seats']) {
    test(uri, async () => {
      for (const { platform, outcome: o } of await both({ uri })) {
        assert.equal(o.status, 302, `${platform} ${uri}`);
        assert.equal(o.headers.location, `/vwr/e1?next=${encodeURIComponent(uri)}`, `${platform}: the configured id, e1`);
      }
    });
  }

  test('the pass checked is the configured event\'s: a token for "E1" in vwr_t1_E1 does not open /events/E1', async () => {
    const upper = signToken(K1, 'k1', tier1Claims(NOW, { eid: 'E1' }));
    assertRedirect(await both({ uri: '/events/E1', cookies: [['vwr_t1_E1', upper], ['vwr_t1_e1', upper]] }), `/vwr/e1?next=${encodeURIComponent('/events/E1')}`);
    assertPass(await both({ uri: '/events/E1', cookies: [['vwr_t1_e1', VALID]] }));
  });
});

describe('non-canonical variants of a protected path are refused with 400 (more in path-vectors.json)', () => {
  for (const uri of ['//events/e1', '/x/../events/e1', '/vwr/../events/e1', '/events/e1;jsessionid=1', '/events\\e1', '/events/./e1/', '/events%2Fe1', '/events/e1/..', '/events/e1%20', '/events/e1.', '/EVENTS/e1', '/Events/%45%31/seats', '/%65vents/e1', '/events/e1/%252e%252e/x', '/events/e1/%u002e']) {
    test(uri, async () => {
      for (const { platform, outcome: o, logs } of await both({ uri, cookies: [['vwr_t1_e1', VALID]] })) {
        assert.equal(o.status, 400, `${platform} ${uri}`);
        assert.equal(o.headers['cache-control'], 'no-store', platform);
        assert.match(o.headers['content-type'], /^text\/plain/, platform);
        assert.deepEqual(logs, [], `${platform}: a refused path is not logged`);
      }
    });
  }

  test('a prefix passes only in the spelling it is configured in', async () => {
    const config = { ...CONFIG, rules: [{ pathPrefix: '/Shop/Tickets/', eventSegment: 3 }] };
    assertRedirect(await both({ uri: '/Shop/Tickets/e1' }, { config }), `/vwr/e1?next=${encodeURIComponent('/Shop/Tickets/e1')}`);
    assertPass(await both({ uri: '/Shop/Tickets' }, { config }));
    for (const uri of ['/shop/tickets/e1', '/Shop/tickets/e1', '/SHOP/TICKETS/e1', '/%53hop/Tickets/e1', '/Shop/Tickets%2Fe1']) {
      for (const { platform, outcome: o } of await both({ uri, cookies: [['vwr_t1_e1', VALID]] }, { config })) {
        assert.equal(o.status, 400, `${platform} ${uri}`);
      }
    }
  });

  test('API calls get the JSON refusal', async () => {
    for (const spec of [{ uri: '/api/seats/e1/..%5c..%5cx' }, { uri: '/events/e1/%2e%2e/x', accept: 'application/json' }]) {
      for (const { platform, outcome: o } of await both(spec)) {
        assert.equal(o.status, 400, platform);
        assert.equal(o.headers['content-type'], 'application/json', platform);
        const body = JSON.parse(o.body);
        assert.equal(body.error, 'bad_path');
        assert.equal(typeof body.message, 'string');
      }
    }
  });

  test('platform shapes of the 400', async () => {
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
    const a = await cff.handler(cloudFrontEvent({ uri: '/events/e1/..' }));
    assert.equal(a.statusCode, 400);
    // Optional in a CloudFront Function's own response, and its bytes count: left out.
    assert.equal(a.statusDescription, undefined);
    const edge = loadLambdaEdge();
    edge.setConfig({ ...CONFIG, keys: KEYS });
    const b = await edge.handler(lambdaEdgeEvent({ uri: '/events/e1/..' }));
    assert.equal(b.status, '400');
    assert.equal(b.statusDescription, 'Bad Request');
  });
});

describe('malformed cookies never throw', () => {
  const redirect = `/vwr/e1?next=${encodeURIComponent('/events/e1')}`;

  test('bad percent escapes, huge values, empty values', async () => {
    for (const value of ['%', '%E0%A4%A', '%%%', 'a'.repeat(10000), '', '"', `${VALID}%`, 'é.é.é', '\u0000']) {
      assertRedirect(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', value]] }), redirect);
    }
  });

  test('duplicate names: a valid one among the first four passes', async () => {
    assertPass(await both({ uri: '/events/e1', cookies: [['vwr_t1_e1', 'junk'], ['vwr_t1_e1', VALID]] }));
    // Only four values are tried: the verification work per request stays bounded.
    const many = [...Array(4)].map(() => ['vwr_t1_e1', 'junk']).concat([['vwr_t1_e1', VALID]]);
    assertRedirect(await both({ uri: '/events/e1', cookies: many }), redirect);
  });

  test('hundreds of cookies', async () => {
    const cookies = [...Array(400)].map((_, i) => [`c${i}`, `v${i}%zz`]);
    assertPass(await both({ uri: '/events/e1', cookies: [...cookies, ['vwr_t1_e1', VALID]] }));
    assertRedirect(await both({ uri: '/events/e1', cookies }), redirect);
  });

  test('raw Cookie headers of any shape (Lambda@Edge parses them itself)', async () => {
    const edge = loadLambdaEdge();
    edge.setConfig({ ...CONFIG, keys: KEYS });
    const headers = [
      ['vwr_t1_e1=%E0%A4%A; =; ;;; novalue; =x; a=b=c'],
      [`vwr_t1_e1="${VALID}"`],
      [`${'x=y; '.repeat(2000)}vwr_t1_e1=${VALID}`],
      ['', 'vwr_t1_e1', `  vwr_t1_e1 =  ${VALID}  `],
    ];
    const expected = ['redirect', 'pass', 'pass', 'pass'];
    for (let i = 0; i < headers.length; i++) {
      const { result } = await captureLogs(() => atTime(NOW, () => edge.handler(lambdaEdgeEvent({ uri: '/events/e1', cookieHeaders: headers[i] }))));
      const o = outcome(result);
      assert.equal(o.pass ? 'pass' : 'redirect', expected[i], `case ${i}`);
    }
  });

  test('random bytes in cookies, paths and queries (fuzz)', async () => {
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
    const edge = loadLambdaEdge();
    edge.setConfig({ ...CONFIG, keys: KEYS });
    let seed = 12345;
    const rnd = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = 'ab%;=., "\\/éE1e.%2F%zz\u0000\u00ff\ud800-_';
    const junk = (len) => [...Array(len)].map(() => alphabet[rnd(alphabet.length)]).join('');
    for (let i = 0; i < 500; i++) {
      const spec = { uri: `/events/e1${junk(rnd(8))}`, query: junk(rnd(10)), cookies: [['vwr_t1_e1', junk(rnd(60))]], cookieHeaders: [junk(rnd(80))] };
      const a = outcome(await cff.handler(cloudFrontEvent(spec)));
      const { result } = await captureLogs(() => edge.handler(lambdaEdgeEvent(spec)));
      const b = outcome(result);
      assert.ok(a.pass || [302, 400, 403].includes(a.status), `cloudfront-function case ${i}`);
      assert.ok(b.pass || [302, 400, 403].includes(b.status), `lambda-edge case ${i}`);
      assert.equal(a.status, b.status, `both builds agree, case ${i}`);
    }
  });
});

describe('missing or unreadable configuration follows failMode, and is logged', () => {
  const config = JSON.stringify(CONFIG);

  test('CloudFront Function: no config entry, closed by default (placeholder kept)', async () => {
    const cff = loadCloudFrontFunction({ kvs: { keys: KEYS } });
    const page = outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1' })));
    assert.equal(page.status, 503);
    assert.equal(page.headers['retry-after'], '5');
    assert.match(page.headers['content-type'], /^text\/plain/);
    const api = outcome(await cff.handler(cloudFrontEvent({ uri: '/api/seats/e1/A1' })));
    assert.equal(api.status, 503);
    assert.equal(JSON.parse(api.body).error, 'waiting_room_unavailable');
    // Without configuration nothing is known to be unprotected.
    assert.equal(outcome(await cff.handler(cloudFrontEvent({ uri: '/about' }))).status, 503);
    assert.deepEqual(JSON.parse(cff.logs[0]), { src: 'vwr-edge', evt: 'config_unavailable', entry: 'config', reason: 'missing or unreadable', failMode: 'closed' });
  });

  test('CloudFront Function: fail mode "open" lets requests through, and still logs', async () => {
    const cff = loadCloudFrontFunction({ kvs: {}, failMode: 'open' });
    assert.deepEqual(outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1' }))), { pass: true });
    assert.equal(JSON.parse(cff.logs[0]).failMode, 'open');
  });

  test('CloudFront Function: a broken store, a wrong KVS id or invalid config are unavailable too', async () => {
    const broken = loadCloudFrontFunction({ kvs: { config, keys: KEYS } });
    broken.kvs.broken = true;
    assert.equal(outcome(await broken.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 503);
    const placeholder = loadCloudFrontFunction({ kvs: { config, keys: KEYS }, kvsId: null });
    assert.equal(outcome(await placeholder.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 503);
    for (const bad of ['{not json', '[]', JSON.stringify({ ...CONFIG, failMode: 'maybe' }), JSON.stringify({ ...CONFIG, rules: undefined })]) {
      const cff = loadCloudFrontFunction({ kvs: { config: bad, keys: KEYS } });
      assert.equal(outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 503, bad);
      assert.equal(JSON.parse(cff.logs[0]).evt, 'config_unavailable');
    }
  });

  test('CloudFront Function: keys are read only when a cookie must be checked; missing keys follow config.failMode', async () => {
    const noKeys = loadCloudFrontFunction({ kvs: { config } });
    noKeys.setNow(NOW);
    assert.equal(outcome(await noKeys.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 302);
    assert.deepEqual(noKeys.kvs.reads, ['config']);
    const withCookie = outcome(await noKeys.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] })));
    assert.equal(withCookie.status, 503);
    assert.deepEqual(JSON.parse(noKeys.logs[0]), { src: 'vwr-edge', evt: 'config_unavailable', entry: 'keys', reason: 'missing or invalid', failMode: 'closed' });
    const open = loadCloudFrontFunction({ kvs: { config: JSON.stringify({ ...CONFIG, failMode: 'open' }), keys: 'k1:tooshort' } });
    assert.deepEqual(outcome(await open.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] }))), { pass: true });
  });

  test('Lambda@Edge: no config.json, invalid config.json, or setConfig(null): closed by default', async () => {
    const cases = [
      { edge: loadLambdaEdge(), reason: 'config.json missing, unreadable or not JSON' },
      { edge: loadLambdaEdge({ configText: '{oops' }), reason: 'config.json missing, unreadable or not JSON' },
      { edge: loadLambdaEdge({ config: { ...CONFIG, rules: 'x', keys: KEYS } }), reason: 'rules must be a list' },
    ];
    const nulled = loadLambdaEdge({ config: { ...CONFIG, keys: KEYS } });
    assert.equal(nulled.setConfig(null), 'config.json missing, unreadable or not JSON');
    cases.push({ edge: nulled, reason: 'config.json missing, unreadable or not JSON' });
    for (const { edge, reason } of cases) {
      const { result, lines } = await captureLogs(() => edge.handler(lambdaEdgeEvent({ uri: '/api/seats/e1/A1' })));
      const o = outcome(result);
      assert.equal(o.status, 503);
      assert.equal(JSON.parse(o.body).error, 'waiting_room_unavailable');
      assert.deepEqual(JSON.parse(lines[0]), { src: 'vwr-edge', evt: 'config_unavailable', entry: 'config.json', reason, failMode: 'closed' });
    }
  });

  test('Lambda@Edge: a bundled config.json is used; fail mode "open" passes', async () => {
    const bundled = loadLambdaEdge({ config: { ...CONFIG, keys: KEYS } });
    const { result } = await captureLogs(() => atTime(NOW, () => bundled.handler(lambdaEdgeEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] }))));
    assert.deepEqual(outcome(result), { pass: true });
    const open = loadLambdaEdge({ failMode: 'open' });
    const r = await captureLogs(() => open.handler(lambdaEdgeEvent({ uri: '/events/e1' })));
    assert.deepEqual(outcome(r.result), { pass: true });
    assert.equal(JSON.parse(r.lines[0]).failMode, 'open');
  });

  test('Lambda@Edge: keys missing with a cookie to check follow config.failMode', async () => {
    const edge = loadLambdaEdge();
    assert.equal(edge.setConfig({ ...CONFIG }), 'keys missing or invalid');
    const { result } = await captureLogs(() => edge.handler(lambdaEdgeEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] })));
    assert.equal(outcome(result).status, 503);
    const { result: noCookie } = await captureLogs(() => edge.handler(lambdaEdgeEvent({ uri: '/events/e1' })));
    assert.equal(outcome(noCookie).status, 302);
  });
});

describe('configuration is validated', () => {
  const edge = loadLambdaEdge();
  const cases = [
    [{ ...CONFIG, keys: KEYS }, null],
    [{ rules: [], keys: KEYS }, null],
    [{ ...CONFIG, events: ['e1', 'e2'], keys: KEYS }, null],
    [{ ...CONFIG, keys: KEYS, cookiePrefix: 'bad prefix' }, 'bad cookiePrefix'],
    [{ ...CONFIG, keys: KEYS, failMode: 'sometimes' }, 'bad failMode'],
    [{ ...CONFIG, keys: KEYS, events: { 'bad id': { active: true } } }, 'bad event id'],
    [{ ...CONFIG, keys: KEYS, rules: [{ pathPrefix: '/events/', eventSegment: 1 }] }, 'bad rule 0'],
    [{ ...CONFIG, keys: KEYS, rules: [{ pathPrefix: 'events/', eventSegment: 2 }] }, 'bad rule 0'],
    [{ ...CONFIG, keys: KEYS, leewaySeconds: -1 }, 'bad leewaySeconds'],
    [{ ...CONFIG, keys: KEYS, issuer: 7 }, 'bad issuer'],
    [{ ...CONFIG, keys: KEYS, apiPrefix: '/api/', revoked: { p1: 1 } }, null],
    [{ ...CONFIG, keys: KEYS, apiPrefix: '/' }, null],
    [{ ...CONFIG, keys: KEYS, apiPrefix: 'api/' }, 'bad apiPrefix'],
    [{ ...CONFIG, keys: KEYS, apiPrefix: '/api' }, 'bad apiPrefix'],
    [{ ...CONFIG, keys: KEYS, apiPrefix: '/a//' }, 'bad apiPrefix'],
    [{ ...CONFIG, keys: KEYS, revoked: ['p1'] }, 'bad revoked'],
    [{ ...CONFIG, keys: 'k1:c2hvcnQ' }, 'keys missing or invalid'],
    [{ ...CONFIG, keys: `${KEYS},k1:${K0.toString('base64url')}` }, 'keys missing or invalid'],
    [{ ...CONFIG, keys: `bad kid:${K0.toString('base64url')}` }, 'keys missing or invalid'],
    [{ ...CONFIG, keys: `k1:${K1.toString('base64')}` }, null],
  ];
  for (const [config, problem] of cases) {
    test(problem || `accepted: ${JSON.stringify(config).slice(0, 60)}`, () => assert.equal(edge.setConfig(config), problem));
  }
});

describe('platform response shapes', () => {
  test('CloudFront Function and Lambda@Edge formats', async () => {
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
    const a = await cff.handler(cloudFrontEvent({ uri: '/api/seats/e1' }));
    assert.equal(a.statusCode, 403);
    assert.equal(a.statusDescription, undefined);
    assert.equal(a.headers['content-type'].value, 'application/json');
    assert.equal(a.body.encoding, 'text');
    const edge = loadLambdaEdge();
    edge.setConfig({ ...CONFIG, keys: KEYS });
    const b = await edge.handler(lambdaEdgeEvent({ uri: '/events/e1' }));
    assert.equal(b.status, '302');
    assert.equal(b.statusDescription, 'Found');
    assert.deepEqual(b.headers.location, [{ key: 'Location', value: `/vwr/e1?next=${encodeURIComponent('/events/e1')}` }]);
    assert.deepEqual(b.headers['cache-control'], [{ key: 'Cache-Control', value: 'no-store' }]);
  });
});

// Apps send the tier-1 token as `Authorization: Bearer …` on API paths (docs/apps.md); an
// operator revokes a token (a pass) by its jti (docs/passes.md).
describe('apps and passes', () => {
  const bearer = (token) => ({ Authorization: `Bearer ${token}` });
  const API = { uri: '/api/seats/e1/A1', accept: 'application/json' };

  test('a Bearer token passes on an API path, with no cookie', async () => {
    assertPass(await both({ ...API, headers: bearer(VALID) }));
    assertPass(await both({ ...API, headers: { authorization: `bearer  ${VALID}` } }));
  });

  test('a Bearer token does not open a page outside the API prefix (the cookie does)', async () => {
    const r = await both({ uri: '/events/e1', accept: 'text/html', headers: bearer(VALID) });
    assertRedirect(r, `/vwr/e1?next=${encodeURIComponent('/events/e1')}`);
    assertPass(await both({ uri: '/events/e1', accept: 'text/html', headers: bearer(VALID) }, { config: { ...CONFIG, apiPrefix: '/' } }));
  });

  test('the cookie comes first; a bad Bearer after a good cookie changes nothing', async () => {
    const r = await both({ ...API, cookies: [['vwr_t1_e1', VALID]], headers: bearer('x.y.z') });
    assertPass(r);
    for (const { logs } of r) assert.deepEqual(logs, []);
  });

  test('an invalid Bearer token is refused with JSON naming the waiting page and the status document', async () => {
    const expired = signToken(K1, 'k1', tier1Claims(NOW, { exp: NOW - 1 }));
    for (const token of [expired, 'not-a-token', signToken(K1, 'k1', tier1Claims(NOW, { eid: 'e2' }))]) {
      const r = await both({ ...API, headers: bearer(token) });
      for (const { platform, outcome: o } of r) {
        assert.equal(o.status, 403, platform);
        assert.equal(o.headers['content-type'], 'application/json', platform);
        assert.deepEqual(JSON.parse(o.body), {
          error: 'waiting_room_token_required',
          message: 'Join the waiting room first.',
          redirectTo: `/vwr/e1?next=${encodeURIComponent('/api/seats/e1/A1')}`,
          statusUrl: '/vwr-api/vwr/status/e1',
        }, platform);
      }
    }
  });

  test('other schemes and a second token in the header are not read', async () => {
    for (const value of [`Basic ${VALID}`, `Bearer ${VALID} x`, `Bearer${VALID}`, VALID]) {
      for (const { platform, outcome: o } of await both({ ...API, headers: { Authorization: value } })) {
        assert.equal(o.status, 403, `${platform}: ${value.slice(0, 12)}`);
      }
    }
  });

  test('a revoked token (a pass) is refused, cookie or Bearer, and logged as revoked', async () => {
    const pass = signToken(K1, 'k1', tier1Claims(NOW, { jti: 'pAbCdEfGhIj', sub: 'pass:pAbCdEfGhIj', pos: 0 }));
    assertPass(await both({ ...API, headers: bearer(pass) }));
    const config = { ...CONFIG, revoked: { pAbCdEfGhIj: NOW + 3600 } };
    for (const spec of [{ ...API, headers: bearer(pass) }, { uri: '/events/e1', cookies: [['vwr_t1_e1', pass]] }]) {
      const r = await both(spec, { config });
      for (const { platform, outcome: o, logs } of r) {
        assert.notEqual(o.pass, true, platform);
        assert.deepEqual(logs, [{ src: 'vwr-edge', evt: 'token_rejected', eventId: 'e1', reason: 'revoked' }], platform);
      }
    }
    // Another token of the same visitor is not affected.
    assertPass(await both({ ...API, headers: bearer(VALID) }, { config }));
  });

  test('CloudFront Function: revocations in their own entry, read only with a token; the event list never carries them', async () => {
    const pass = signToken(K1, 'k1', tier1Claims(NOW, { jti: 'pAbCdEfGhIj', sub: 'pass:pAbCdEfGhIj', pos: 0 }));
    // 40 live revocations: more than ever fit beside the event list in `config` (1 KB).
    const revoked = Object.fromEntries([...Array(40)].map((_, i) => [`p${String(i).padStart(10, '0')}`, NOW + 3600]));
    revoked.pAbCdEfGhIj = NOW + 3600;
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS, revoked: JSON.stringify(revoked) } });
    cff.setNow(NOW);
    assert.equal(outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 302);
    assert.deepEqual(cff.kvs.reads, ['config'], 'no token: neither keys nor revocations are read');
    const refused = outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', pass]] })));
    assert.equal(refused.status, 302);
    assert.equal(JSON.parse(cff.logs.at(-1)).reason, 'revoked');
    assert.deepEqual(outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] }))), { pass: true });
    // No `revoked` entry (a store from before): the configuration's own map, as before.
    const legacy = loadCloudFrontFunction({ kvs: { config: JSON.stringify({ ...CONFIG, revoked: { pAbCdEfGhIj: NOW + 3600 } }), keys: KEYS } });
    legacy.setNow(NOW);
    assert.equal(outcome(await legacy.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', pass]] }))).status, 302);
    const none = loadCloudFrontFunction({ kvs: { config: JSON.stringify(CONFIG), keys: KEYS } });
    none.setNow(NOW);
    assert.deepEqual(outcome(await none.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', pass]] }))), { pass: true });
  });
});

describe('the work per request is bounded, and a check that throws applies the fail mode', () => {
  // A CloudFront Function whose createHmac is watched (counting the bytes it signs) or broken.
  function watched(createHmac, failMode = 'closed') {
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify({ ...CONFIG, failMode }), keys: KEYS } });
    cff.context.crypto = { createHmac };
    cff.setNow(NOW);
    return cff;
  }

  test('four 4-KB cookies and a 4-KB Bearer cost at most one long token of HMAC', async () => {
    // Valid-looking header and kid, signed with another key: each reaches the HMAC. Before, five
    // were signed (~20 KB, ~480 µs in node:vm against a ~1 ms budget).
    const big = signToken(newKey(), 'k1', tier1Claims(NOW, { jti: 'x'.repeat(2800) }));
    assert.ok(big.length > 3900 && big.length <= 4096, `${big.length}`);
    let signed = 0;
    const cff = watched((alg, key) => {
      const h = nodeCrypto.createHmac(alg, key);
      return { update: (t) => ((signed += t.length), h.update(t), { digest: (f) => h.digest(f) }) };
    });
    const cookies = [...Array(4)].map(() => ['vwr_t1_e1', big]);
    const o = outcome(await cff.handler(cloudFrontEvent({ uri: '/api/seats/e1', cookies, headers: { authorization: `Bearer ${big}` } })));
    assert.equal(o.status, 403);
    assert.ok(signed > 0 && signed <= 4096, `${signed} bytes signed`);
    assert.equal(JSON.parse(cff.logs.at(-1)).reason, 'bad_signature', 'the first token is still checked and named');
    // A real token among them, first: it passes.
    signed = 0;
    assert.deepEqual(outcome(await cff.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID], ...cookies] }))), { pass: true });
    assert.ok(signed < 1024, `${signed}`);
  });

  test('a token check that throws answers by the fail mode, never a function error', async () => {
    const broken = () => {
      throw new TypeError('createHmac: key must be a string');
    };
    const closed = watched(broken, 'closed');
    const o = outcome(await closed.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] })));
    assert.equal(o.status, 503);
    assert.deepEqual(JSON.parse(closed.logs.at(-1)), { src: 'vwr-edge', evt: 'config_unavailable', entry: 'keys', reason: 'missing or invalid', failMode: 'closed' });
    const open = watched(broken, 'open');
    assert.deepEqual(outcome(await open.handler(cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', VALID]] }))), { pass: true });
    // No token to check: no HMAC, the usual redirect.
    assert.equal(outcome(await closed.handler(cloudFrontEvent({ uri: '/events/e1' }))).status, 302);
  });
});
