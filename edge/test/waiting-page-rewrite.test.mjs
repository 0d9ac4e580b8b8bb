// The CloudFront Function that serves /vwr/{eventId} from the one static page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import vm from 'node:vm';

import { DIST } from './harness.mjs';

function load() {
  const context = {};
  vm.createContext(context);
  vm.runInContext(readFileSync(join(DIST, 'waiting-page-rewrite.js'), 'utf8'), context);
  return (uri) => context.handler({ request: { method: 'GET', uri, querystring: { next: { value: '%2Fevents%2Fe1' } }, headers: {} } });
}

test('/vwr/{eventId} is served from /vwr/index.html, query untouched', () => {
  const rewrite = load();
  for (const uri of ['/vwr/e1', '/vwr/e1/', '/vwr/Concert_2026-Seoul', `/vwr/${'x'.repeat(64)}`]) {
    const req = rewrite(uri);
    assert.equal(req.uri, '/vwr/index.html', uri);
    assert.equal(req.querystring.next.value, '%2Fevents%2Fe1');
  }
});

test('assets and everything else are left alone', () => {
  const rewrite = load();
  for (const uri of ['/vwr/assets/app.js', '/vwr/assets/style.css', '/vwr/assets', '/vwr/assets/', '/vwr/index.html', '/vwr/', '/vwr', '/vwr/e1/x', '/vwr/bad%20id', `/vwr/${'x'.repeat(65)}`, '/events/e1', '/vwr/e.1']) {
    assert.equal(rewrite(uri).uri, uri, uri);
  }
});
