// node --test tests/infra/: the /vwr-api prefix-stripping CloudFront Function, loaded as shipped
// (terraform/modules/edge/functions/strip-prefix.js) in a bare VM context like the runtime's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import vm from 'node:vm';

const source = readFileSync(new URL('../../terraform/modules/edge/functions/strip-prefix.js', import.meta.url), 'utf8');

function load() {
  const ctx = {};
  vm.runInNewContext(`${source}\nthis.handler = handler;`, ctx);
  return ctx.handler;
}

function run(uri, querystring = {}) {
  const request = { method: 'GET', uri, querystring, headers: { host: { value: 'shop.example.com' } }, cookies: {} };
  return load()({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '192.0.2.1' }, request });
}

test('removes the /vwr-api prefix of the tier-1 routes', () => {
  assert.equal(run('/vwr-api/vwr/assign/e1').uri, '/vwr/assign/e1');
  assert.equal(run('/vwr-api/vwr/check/e1/v1.abc').uri, '/vwr/check/e1/v1.abc');
  assert.equal(run('/vwr-api/vwr/status/e1').uri, '/vwr/status/e1');
  assert.equal(run('/vwr-api/').uri, '/');
  assert.equal(run('/vwr-api').uri, '/');
});

test('keeps everything else of the request', () => {
  const out = run('/vwr-api/vwr/check/e1/x', { a: { value: '1' } });
  assert.deepEqual(out.querystring, { a: { value: '1' } });
  assert.equal(out.headers.host.value, 'shop.example.com');
  assert.equal(out.method, 'GET');
});

test('leaves other paths alone (it only runs on /vwr-api/*, but must not break anything)', () => {
  assert.equal(run('/vwr-apix/vwr/assign/e1').uri, '/vwr-apix/vwr/assign/e1');
  assert.equal(run('/vwr/e1').uri, '/vwr/e1');
  assert.equal(run('/').uri, '/');
});

test('fits the CloudFront Functions runtime: small, no modern syntax it refuses', () => {
  assert.ok(Buffer.byteLength(source) < 10240);
  for (const bad of [/\bclass\b/, /=>/, /\?\./, /\?\?/, /\.\.\./, /\bfor\s*\([^)]*\bof\b/, /\blet\b|\bconst\b/]) {
    assert.doesNotMatch(source.replace(/^\s*\/\/.*$/gm, ''), bad);
  }
});
