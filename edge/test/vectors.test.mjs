// The shipped edge files against the conformance vectors made by the Rust issuer
// (cli/tests/edge_vectors.rs → edge/test/vectors.json): same decision for every vector,
// and the same reason code as Rust's TokenError::code().
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  LAYOUT_RULES,
  atTime,
  captureLogs,
  cloudFrontEvent,
  lambdaEdgeEvent,
  loadCloudFrontFunction,
  loadLambdaEdge,
  outcome,
} from './harness.mjs';

const file = JSON.parse(readFileSync(join(import.meta.dirname, 'vectors.json'), 'utf8'));

function configFor(vector) {
  return {
    events: [vector.event],
    rules: LAYOUT_RULES,
    issuer: file.issuer,
    audience: file.audience,
    leewaySeconds: file.leewaySeconds,
    failMode: 'closed',
  };
}

function spec(vector) {
  return { uri: `/events/${vector.event}`, query: 'seat=A1', accept: 'text/html', cookies: [[`vwr_t1_${vector.event}`, vector.token]] };
}

test('the vector file is usable', () => {
  assert.ok(file.vectors.length >= 60, 'expected the full vector set');
  assert.ok(file.vectors.some((v) => v.valid) && file.vectors.some((v) => !v.valid));
  for (const v of file.vectors) assert.equal(v.decision, v.valid ? 'pass' : 'redirect', v.name);
});

// The minified CloudFront Function keeps no names but `handler`: it is held to every vector
// through its handler (below); the Lambda@Edge bundle also exports its verifier.
test('the verifier inside the Lambda@Edge bundle gives the Rust result for every exact token', () => {
  const edge = loadLambdaEdge();
  const opts = { issuer: file.issuer, audience: file.audience, leewaySeconds: file.leewaySeconds };
  const verifiers = {
    'lambda-edge': (v) => edge.verifyToken(v.token, v.event, v.now, edge.parseKeys(file.keys), opts),
  };
  for (const [platform, verify] of Object.entries(verifiers)) {
    for (const v of file.vectors) {
      const res = verify(v);
      assert.equal(res.ok, v.valid, `${platform} ${v.name}: valid`);
      assert.equal(res.ok ? null : res.error, v.error, `${platform} ${v.name}: reason`);
      if (res.ok) assert.equal(res.claims.eid, v.event);
    }
  }
});

// Through the handlers the token travels in a cookie. A Cookie header cannot carry leading
// or trailing spaces (parsers trim them, as RFC 6265 says), so that one vector is checked
// above only (a CloudFront Function is never handed such a cookie).
const transportable = file.vectors.filter((v) => v.token === v.token.trim());

test('CloudFront Function: every vector gets the Rust decision and reason', async () => {
  for (const v of transportable) {
    const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(configFor(v)), keys: file.keys } });
    cff.setNow(v.now);
    const got = outcome(await cff.handler(cloudFrontEvent(spec(v))));
    if (v.decision === 'pass') {
      assert.deepEqual(got, { pass: true }, `${v.name}: expected pass`);
      assert.deepEqual(cff.logs, [], `${v.name}: nothing to log`);
    } else {
      assert.equal(got.status, 302, `${v.name}: expected a redirect`);
      assert.equal(got.headers.location, `/vwr/${v.event}?next=${encodeURIComponent(`/events/${v.event}?seat=A1`)}`);
      const logged = cff.logs.map((l) => JSON.parse(l));
      assert.deepEqual(logged, [{ src: 'vwr-edge', evt: 'token_rejected', eventId: v.event, reason: v.error }], v.name);
    }
  }
});

test('Lambda@Edge: every vector gets the Rust decision and reason', async () => {
  for (const v of transportable) {
    const edge = loadLambdaEdge({ config: { ...configFor(v), keys: file.keys } });
    const { result, lines } = await captureLogs(() => atTime(v.now, () => edge.handler(lambdaEdgeEvent(spec(v)))));
    const got = outcome(result);
    if (v.decision === 'pass') {
      assert.deepEqual(got, { pass: true }, `${v.name}: expected pass`);
    } else {
      assert.equal(got.status, 302, `${v.name}: expected a redirect`);
      assert.deepEqual(JSON.parse(lines[0]), { src: 'vwr-edge', evt: 'token_rejected', eventId: v.event, reason: v.error }, v.name);
    }
  }
});

test('API calls with a vector token get 403 JSON exactly when the decision is not pass', async () => {
  for (const v of transportable) {
    const edge = loadLambdaEdge({ config: { ...configFor(v), keys: file.keys } });
    const api = { uri: `/api/seats/${v.event}/A1`, cookies: [[`vwr_t1_${v.event}`, v.token]] };
    const got = outcome(await captureLogs(() => atTime(v.now, () => edge.handler(lambdaEdgeEvent(api)))).then((r) => r.result));
    assert.equal(got.pass ? 'pass' : got.status, v.decision === 'pass' ? 'pass' : 403, v.name);
  }
});
