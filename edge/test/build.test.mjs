// The built files: current with the sources, within the CloudFront Functions limits, and
// written in the subset of JavaScript the CloudFront runtime 2.0 accepts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import vm from 'node:vm';

import { PLACEHOLDERS, build, squeeze } from '../build.mjs';
import { DIST, EDGE, cloudFrontScript } from './harness.mjs';

const CLOUDFRONT_FUNCTIONS = ['cloudfront-function.js', 'waiting-page-rewrite.js'];
const MAX_FUNCTION_BYTES = 10 * 1024;

test('edge/dist is what the sources build (run `node edge/build.mjs` after editing edge/src)', () => {
  for (const [name, text] of Object.entries(build())) {
    assert.equal(readFileSync(join(DIST, name), 'utf8'), text, `edge/dist/${name} is stale`);
  }
  const check = spawnSync(process.execPath, [join(EDGE, 'build.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('each CloudFront Function is at most 10 KB', () => {
  for (const name of CLOUDFRONT_FUNCTIONS) {
    const bytes = readFileSync(join(DIST, name)).length;
    assert.ok(bytes <= MAX_FUNCTION_BYTES, `${name} is ${bytes} bytes`);
  }
});

test('the committed files keep the deployment placeholders; filled builds replace them all', () => {
  const cff = readFileSync(join(DIST, 'cloudfront-function.js'), 'utf8');
  const lambda = readFileSync(join(DIST, 'lambda-edge', 'index.js'), 'utf8');
  assert.equal(cff.split(PLACEHOLDERS.kvsId).length, 2, 'one KVS id placeholder');
  assert.equal(cff.split(PLACEHOLDERS.failMode).length, 2, 'one fail-mode placeholder');
  assert.equal(lambda.split(PLACEHOLDERS.failMode).length, 2, 'one fail-mode placeholder');
  const filled = build({ kvsId: 'abc-123', failMode: 'open' });
  for (const text of Object.values(filled)) {
    assert.ok(!text.includes('__VWR_'), 'no placeholder left');
  }
  assert.ok(filled['cloudfront-function.js'].includes("var KVS_ID='abc-123';"));
});

test('the build command refuses bad arguments with a clear message', () => {
  const run = (...args) => spawnSync(process.execPath, [join(EDGE, 'build.mjs'), ...args], { encoding: 'utf8' });
  let r = run('--fail-mode', 'sometimes', '--out', '/nonexistent');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--fail-mode must be "open" or "closed"/);
  r = run('--kvs-id', 'abc');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--out DIR/);
  r = run('--kvs-id', "x'; evil()");
  assert.match(r.stderr, /--kvs-id/);
  r = run('--bogus');
  assert.match(r.stderr, /unknown or incomplete argument/);
});

test('CloudFront Functions use only what runtime 2.0 supports', () => {
  // Statements and syntax the runtime lacks (see the runtime 2.0 feature list): for-of,
  // classes, destructuring, spread, optional chaining, nullish coalescing, default
  // parameters, async closures, require/export, and imports other than its own modules.
  const forbidden = [
    [/\bfor\s*\([^)]*\bof\b/, 'for-of'],
    [/\bclass\s/, 'class'],
    [/\b(var|let|const)\s*[{[]/, 'destructuring'],
    [/\.\.\.\w/, 'spread or rest'],
    [/\?\.[\w[(]/, 'optional chaining'],
    [/\?\?/, 'nullish coalescing'],
    [/function\s*\w*\([^)]*=/, 'default parameters'],
    [/async\s*(\(|\w+\s*=>)/, 'async arrow function'],
    [/\brequire\(|\bexport\b|\bmodule\.exports/, 'CommonJS or exports'],
  ];
  for (const name of CLOUDFRONT_FUNCTIONS) {
    const text = readFileSync(join(DIST, name), 'utf8');
    for (const [re, what] of forbidden) assert.ok(!re.test(text), `${name} uses ${what}: ${text.match(re)}`);
    for (const line of text.split('\n')) {
      if (/^import /.test(line)) assert.match(line, /^import (crypto from 'crypto'|cf from 'cloudfront');$/);
      if (/\basync\b/.test(line)) assert.match(line, /^async function \w+\(/, `async functions must be top-level: ${line}`);
    }
    assert.match(text, /^(async )?function handler\(event\)\{$/m, `${name} defines handler(event)`);
    // It compiles, once its imports are taken out.
    new vm.Script(cloudFrontScript(text).body, { filename: name });
  }
});

test('squeeze drops only spaces that separate nothing', () => {
  assert.equal(squeeze("var a = 'x = y' + b; return 'z';"), "var a='x = y'+b;return 'z';");
  assert.equal(squeeze('var r = /a b/g.test(x) ? n / 2 : /[/ ]/;'), 'var r=/a b/g.test(x)?n/2:/[/ ]/;');
  assert.equal(squeeze('a + +b; c - -d; typeof x'), 'a+ +b;c- -d;typeof x');
  assert.equal(squeeze("import cf from 'cloudfront';"), "import cf from 'cloudfront';");
  assert.throws(() => squeeze("var a = 'open"), /unterminated/);
});

test('the Lambda@Edge bundle loads under plain Node (CommonJS)', () => {
  const out = execFileSync(process.execPath, ['-e', `const m = require(${JSON.stringify(join(DIST, 'lambda-edge', 'index.js'))}); console.log(typeof m.handler, typeof m.setConfig)`], { encoding: 'utf8' });
  assert.equal(out.trim(), 'function function');
});
