// The CloudFront Function that serves /vwr/{eventId} from the one static page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

test('the page is served exactly where it reads an event id (static/assets/app.js, eventIdFrom)', () => {
  const rewrite = load();
  const page = createRequire(import.meta.url)(join(import.meta.dirname, '..', '..', 'static', 'assets', 'app.js'));
  const uris = ['/vwr/e1', '/vwr/e1/', '/vwr/E_1-x', `/vwr/${'x'.repeat(64)}`, `/vwr/${'x'.repeat(65)}`, '/vwr/', '/vwr', '/vwr//', '/vwr/e1//', '/vwr/e1/x', '/vwr/e.1', '/vwr/e%31', '/VWR/e1', '/x/vwr/e1', '/vwr/assets', '/vwr/assets/'];
  for (const uri of uris) {
    const id = page.eventIdFrom(uri);
    assert.equal(rewrite(uri).uri === '/vwr/index.html', id !== null && id !== 'assets', uri);
  }
});
