/* vwr dev's preview of the waiting page (docs/brand.md#previews): loaded only by
 * `/vwr/{eventId}?preview=STATE&lang=L`, before app.js. It shows the real page in one state
 * without joining the line: app.js's calls of the tier-1 API (status document, assign, check)
 * are answered here with what a visitor in STATE would get, and its storage is this page's own
 * (a Map), so a preview neither takes a place nor touches a real ticket or the remembered
 * language. Everything else — the language files, the event's page document (its branding),
 * the logo — is fetched for real. Never deployed: vwr dev serves it. */
(function () {
  'use strict';

  var params = new URLSearchParams(location.search);
  var state = params.get('preview');
  var lang = params.get('lang');
  var now = Math.floor(Date.now() / 1000);
  var eventId = (/^\/vwr\/([A-Za-z0-9_-]{1,64})\/?$/.exec(location.pathname) || [])[1];

  // The figures a visitor in line sees: number 1,543 with 342 ahead, about 7 minutes.
  var POSITION = 1543;
  var SERVING = 1200;
  var RATE = 0.8;
  var SHOWS = {
    prequeue: { state: 'prequeue', opensAt: now + 2 * 3600 + 15 * 60, servingCounter: 0 },
    waiting: { state: 'open', servingCounter: SERVING, servedPerSecond: RATE },
    paused: { state: 'paused', servingCounter: SERVING, servedPerSecond: 0 },
    // In line, next; then (every later look) served: the page as a visitor who waited sees it.
    turn: { state: 'open', servingCounter: POSITION - 1, servedPerSecond: RATE },
    closed: { state: 'closed', closeReason: 'sold_out', servingCounter: SERVING },
  };
  var show = SHOWS[state];
  var real = window.fetch.bind(window);
  if (!show || !eventId || params.getAll('preview').length !== 1) {
    // Not a preview this script can show: it fails closed, so the page can never join the line
    // (vwr dev refuses such queries with 400 before this runs).
    window.fetch = function (input, init) {
      var path = new URL(typeof input === 'string' ? input : input.url, location.href).pathname;
      if (/^\/vwr-api\//.test(path)) return Promise.reject(new TypeError('preview: no tier-1 call'));
      return real(input, init);
    };
    return;
  }

  // The page's storage: the language shown, and a ticket with its place (none before the open).
  var kept = new Map();
  if (lang) kept.set('vwr.lang', lang);
  if (state !== 'prequeue' && state !== 'closed') {
    kept.set(
      'vwr.ticket.' + eventId,
      JSON.stringify({ requestId: 'preview', secret: 'preview', position: POSITION, firstAhead: POSITION - 1, rate: RATE })
    );
  }
  var storage = {
    getItem: function (k) {
      return kept.has(k) ? kept.get(k) : null;
    },
    setItem: function (k, v) {
      kept.set(k, String(v));
    },
    removeItem: function (k) {
      kept.delete(k);
    },
  };
  Object.defineProperty(window, 'localStorage', { value: storage, configurable: true });

  // At the turn the page goes on to `next`: here a vwr dev address that answers 204 No
  // Content, so the browser stays on the page saying "It is your turn!".
  if (state === 'turn') {
    params.set('next', '/vwr-dev/stay');
    history.replaceState(null, '', location.pathname + '?' + params.toString());
  }

  function answer(body) {
    return Promise.resolve(
      new Response(JSON.stringify(Object.assign({ eventId: eventId, updatedAt: now }, body)), {
        status: 200,
        headers: { 'content-type': 'application/json', date: new Date().toUTCString() },
      })
    );
  }
  var place = { position: POSITION, servingCounter: SERVING, peopleAhead: POSITION - SERVING - 1, estimatedWaitSeconds: Math.round((POSITION - SERVING) / RATE), nextPollSeconds: 30 };
  var looks = 0;
  window.fetch = function (input, init) {
    var path = new URL(typeof input === 'string' ? input : input.url, location.href).pathname;
    if (/^\/vwr-api\/vwr\/status\//.test(path)) {
      var doc = show;
      if (state === 'turn' && looks++) doc = Object.assign({}, show, { servingCounter: POSITION });
      return answer(doc);
    }
    if (/^\/vwr-api\/vwr\/assign\//.test(path)) {
      if (state === 'prequeue') return answer({ requestId: 'preview', requestSecret: 'preview', state: 'prequeue', opensAt: show.opensAt, nextPollSeconds: 30 });
      return answer(Object.assign({ requestId: 'preview', requestSecret: 'preview', state: show.state, admitted: false }, place));
    }
    if (/^\/vwr-api\/vwr\/check\//.test(path)) {
      // The turn a moment after the page's language has loaded: the page it leaves is whole.
      if (state === 'turn') {
        return new Promise(function (ok) {
          setTimeout(ok, 1500);
        }).then(function () {
          return answer({ admitted: true, eventId: eventId });
        });
      }
      return answer(Object.assign({ state: show.state, admitted: false }, place));
    }
    return real(input, init);
  };
})();
