// The distribution's behaviours as the local stand-ins read them (edge/local/behaviours.mjs,
// terraform/modules/edge/behaviours.json): CloudFront's choice, the first ordered pattern that
// matches the raw path, case-sensitively, else the default; a file they cannot match is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { behaviourFor, loadBehaviours } from '../local/behaviours.mjs';

test('the shipped behaviours route as CloudFront does', () => {
  const b = loadBehaviours();
  const pattern = (uri) => behaviourFor(b, uri).pathPattern || 'default';
  assert.equal(pattern('/vwr-api/vwr/status/e1'), '/vwr-api/vwr/status/*', 'the first match wins');
  assert.equal(pattern('/vwr-api/vwr/check/e1/r'), '/vwr-api/*');
  assert.equal(pattern('/api/queue/line/e1'), '/api/queue/line/*');
  assert.equal(pattern('/api/queue/status/e1'), '/api/queue/*');
  for (const uri of ['/events/e1', '/', '/vwr', '/VWR-API/x', '/%76wr-api/x']) assert.equal(pattern(uri), 'default', uri);
});

test('a pattern that is not a literal prefix and one trailing * is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vwr-behaviours-'));
  try {
    const file = join(dir, 'b.json');
    for (const bad of ['/a/*/b*', '/a/', 'a/*', '/a?/*', null]) {
      writeFileSync(file, JSON.stringify({ default: {}, ordered: [{ pathPattern: bad }] }));
      assert.throws(() => loadBehaviours(file), /not a path prefix/, String(bad));
    }
    writeFileSync(file, JSON.stringify({ ordered: [] }));
    assert.throws(() => loadBehaviours(file), /expected/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
