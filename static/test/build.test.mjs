// The helpers the "Check the draw" page shares with the waiting page: one home (assets/app.js),
// copied into assets/verify.js by static/build.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { APP, SHARED, TIER2, TIER2_SHARED, VERIFY, build, buildTier2, extract } from '../build.mjs';

test("verify.js carries app.js's shared helpers as they are (run `node static/build.mjs` after editing them)", () => {
  assert.equal(readFileSync(VERIFY, 'utf8'), build());
  const check = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'build.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('each shared helper is defined once in each page, and only in the copy in verify.js', () => {
  const app = readFileSync(APP, 'utf8');
  const verify = readFileSync(VERIFY, 'utf8');
  for (const { indent, names } of SHARED) {
    for (const name of names) {
      const body = extract(app, name, indent);
      for (const [file, text] of [['app.js', app], ['verify.js', verify]]) {
        assert.equal(text.split(`function ${name}(`).length, 2, `${file} defines ${name} once`);
      }
      assert.ok(verify.includes(body), `verify.js has app.js's ${name}`);
    }
  }
});

test('a changed helper in app.js makes the copy stale', () => {
  const app = readFileSync(APP, 'utf8').replace("have = have || ['en', 'ko'];", "have = have || ['ko'];");
  assert.notEqual(build(app), readFileSync(VERIFY, 'utf8'));
  assert.throws(() => build(readFileSync(APP, 'utf8').replace('function pickLang(', 'function chooseLang(')), /function pickLang\(/);
});

test("tier2.js (the booking page's client) carries app.js's shared helpers as they are, once each", () => {
  const app = readFileSync(APP, 'utf8');
  const tier2 = readFileSync(TIER2, 'utf8');
  assert.equal(tier2, buildTier2());
  for (const { indent, names } of TIER2_SHARED) {
    for (const name of names) {
      assert.equal(tier2.split(`function ${name}(`).length, 2, `tier2.js defines ${name} once`);
      assert.ok(tier2.includes(extract(app, name, indent)), `tier2.js has app.js's ${name}`);
    }
  }
  assert.notEqual(buildTier2(app.replace('return seconds * (0.8 + 0.4 * random);', 'return seconds;')), tier2);
});
