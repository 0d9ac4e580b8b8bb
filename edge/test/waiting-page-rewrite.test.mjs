// The CloudFront Function that serves /vwr/{eventId} from the one waiting page and
// /vwr/queue/{eventId} from the one booking page (docs/adr/0027-booking-page-path.md).
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

test('/vwr/queue/{eventId} is served from /vwr/queue/index.html, query untouched; /vwr/queue alone is the waiting page of an event "queue"', () => {
  const rewrite = load();
  for (const uri of ['/vwr/queue/e1', '/vwr/queue/e1/', '/vwr/queue/Concert_2026-Seoul', `/vwr/queue/${'x'.repeat(64)}`, '/vwr/queue/queue', '/vwr/queue/assets']) {
    const req = rewrite(uri);
    assert.equal(req.uri, '/vwr/queue/index.html', uri);
    assert.equal(req.querystring.next.value, '%2Fevents%2Fe1');
  }
  assert.equal(rewrite('/vwr/queue').uri, '/vwr/index.html');
  assert.equal(rewrite('/vwr/queue/').uri, '/vwr/index.html');
});

test('assets and everything else are left alone', () => {
  const rewrite = load();
  for (const uri of ['/vwr/assets/app.js', '/vwr/assets/style.css', '/vwr/assets', '/vwr/assets/', '/vwr/index.html', '/vwr/', '/vwr', '/vwr/e1/x', '/vwr/bad%20id', `/vwr/${'x'.repeat(65)}`, '/events/e1', '/vwr/e.1',
    '/vwr/queue/tier2.js', '/vwr/queue/index.html', '/vwr/queue/e1/x', '/vwr/queue//', '/queue/e1', '/vwr/queue/e.1', `/vwr/queue/${'x'.repeat(65)}`]) {
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

test('the booking page is served exactly where it reads an event id under /vwr/ (static/queue/tier2.js, eventIdFrom)', () => {
  const rewrite = load();
  const page = createRequire(import.meta.url)(join(import.meta.dirname, '..', '..', 'static', 'queue', 'tier2.js'));
  const uris = ['/vwr/queue/e1', '/vwr/queue/e1/', '/vwr/queue/E_1-x', `/vwr/queue/${'x'.repeat(64)}`, `/vwr/queue/${'x'.repeat(65)}`, '/vwr/queue/e1//', '/vwr/queue/e1/x', '/vwr/queue/e.1', '/vwr/queue/e%31', '/VWR/queue/e1', '/vwr/Queue/e1', '/x/vwr/queue/e1', '/vwr/queue/tier2.js'];
  for (const uri of uris) {
    assert.equal(rewrite(uri).uri === '/vwr/queue/index.html', page.eventIdFrom(uri) !== null, uri);
  }
  // /queue/{eventId} is where `vwr dev` serves it too; behind CloudFront that path is the site's.
  assert.equal(page.eventIdFrom('/queue/e1'), 'e1');
  assert.equal(rewrite('/queue/e1').uri, '/queue/e1');
});
