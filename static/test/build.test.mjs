// The pages' scripts are built from static/src by static/build.mjs: the committed files are what
// the sources build, the rules the pages share have one home (src/rules.js), and a name declared
// twice in one script is refused.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { BUNDLES, SRC, banner, build, bundle } from '../build.mjs';

const STATIC = join(import.meta.dirname, '..');
const read = (f) => readFileSync(join(SRC, f), 'utf8');

test('the built scripts are what static/src builds (run `node static/build.mjs` after editing a source)', async () => {
  const built = await build();
  // The console's libraries and their licences are built too (console.test.mjs).
  const vendored = ['console/LICENSES.txt', 'console/vendor.css', 'console/vendor.js'];
  assert.deepEqual(Object.keys(built).sort(), ['assets/app.js', 'assets/verify.js', 'console/console.js', ...vendored, 'queue/tier2.js'].sort());
  for (const [f, text] of Object.entries(built)) {
    assert.equal(readFileSync(join(STATIC, f), 'utf8'), text, `static/${f} is stale`);
    if (!vendored.includes(f)) assert.ok(text.startsWith(banner(BUNDLES[f])), `static/${f} names its sources`);
  }
  const check = spawnSync(process.execPath, [join(STATIC, 'build.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('every source is in a script, and the shared rules are in each page', () => {
  const sources = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else sources.push(relative(SRC, join(dir, e.name)));
    }
  };
  walk(SRC);
  assert.deepEqual([...new Set(Object.values(BUNDLES).flat())].sort(), sources.sort());
  for (const list of Object.values(BUNDLES)) assert.equal(list[0], 'rules.js');
});

test('a change of a shared rule reaches all three pages', async () => {
  const before = await build();
  const after = await build((f) => (f === 'rules.js' ? read(f).replace('return values[k] === undefined ? m : String(values[k]);', 'return String(values[k]);') : read(f)));
  for (const f of Object.keys(BUNDLES)) assert.notEqual(after[f], before[f], f);
});

test('one scope, one name: a page that declares a shared rule again is refused', async () => {
  const again = { 'rules.js': read('rules.js'), 'verify.js': `${read('verify.js')}\nfunction jitter(s) {\n  return s;\n}\n` };
  await assert.rejects(bundle(again), /src\/verify\.js and src\/rules\.js both declare `jitter`/);
  await assert.rejects(bundle({ 'rules.js': read('rules.js'), 'bad.js': 'function (' }), /src\/bad\.js: /);
});

test('the built pages keep their exports (tests and sites use them)', async () => {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const app = require(join(STATIC, 'assets', 'app.js'));
  const tier2 = require(join(STATIC, 'queue', 'tier2.js'));
  const verify = require(join(STATIC, 'assets', 'verify.js'));
  assert.deepEqual(Object.keys(app).sort(), ['backoffSeconds', 'clockBounds', 'clockOffset', 'eventIdFrom', 'fill', 'formatCountdown', 'formatWait', 'jitter', 'localized', 'pickLang', 'pollForWait', 'pollSeconds', 'progress', 'queryParam', 'retryAfterSeconds', 'safeNext', 'start', 'waitSeconds']);
  assert.deepEqual(Object.keys(tier2).sort(), ['STRINGS', 'TOKEN_HEADER', 'backoffSeconds', 'client', 'eventIdFrom', 'fill', 'formatWait', 'lineDelay', 'nextRead', 'page', 'pickLang', 'placeOf', 'queryParam', 'retryAfterSeconds', 'safeNext', 'tokenTimes', 'waitSeconds', 'withHeader']);
  assert.deepEqual(Object.keys(verify).sort(), ['STRINGS', 'fill', 'parseCounts', 'pickLang', 'queryParam', 'start']);
});
