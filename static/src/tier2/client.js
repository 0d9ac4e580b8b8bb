/* vwr tier 2 in the browser, the client a booking page waits and books with: it joins the
 * event's booking line (`check`), waits on the CDN-cached line document without calls of its
 * own, holds the entry token once admitted and renews it before it expires (`status`), adds it
 * to protected calls (`fetch`) and leaves on demand. Part of queue/tier2.js (static/build.mjs),
 * with the rules of ../rules.js; the booking page is page.js. Its API: static/queue/README.md;
 * the routes: docs/api.md#tier-2; waiting on the line document:
 * docs/adr/0026-tier2-line-document.md. */

var API = '/api/queue';
var TOKEN_HEADER = 'x-queue-entry-token';
var EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
// Tier 2's answers that end the client's work (docs/api.md#tier-2): this browser can have no
// place. Any other answer that is not a success keeps the place and is backed off
// (docs/invariants.md#15): a WAF's page, API Gateway's own 403 or 429, a 5xx, the network.
var REFUSALS = /^(identity_required|invalid_identity|tier1_token_required|position_taken|event_not_found|invalid_event_id|invalid_user_id)$/;
// What the gates in front of protected APIs answer (403) to a missing, expired or foreign
// entry token, or a lapsed tier-1 cookie (docs/api.md#protected-apis-apiseatseventid-apireservationseventid):
// a renewal (`status` renews both) and one more try.
var RENEWABLE = /^(queue_entry_token_required|waiting_room_token_required)$/;
var ANNOUNCE_EVERY_MS = 15000;

// ---- Pure rules (unit-tested) ----

/** The event id of the booking page's address, or null: /vwr/queue/{eventId}(/) as deployed
 *  (edge/build.mjs gives this pattern to the CloudFront rewrite, docs/adr/0027-booking-page-path.md),
 *  or /queue/{eventId}(/), where `vwr dev` serves it too. */
function eventIdFrom(pathname) {
  var m = /^\/vwr\/queue\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
  var dev = /^\/queue\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
  return m ? m[1] : dev ? dev[1] : null;
}

/** The place of line score `score` from the line document's marks ([place, score], in line order), interpolated between the two around it. */
function placeOf(marks, score) {
  var p = 1;
  for (var i = 0; i < marks.length; i++) {
    if (marks[i][1] > score) {
      var a = marks[i - 1];
      return a ? Math.round(a[0] + ((marks[i][0] - a[0]) * (score - a[1])) / (marks[i][1] - a[1])) : marks[i][0];
    }
    p = marks[i][0];
  }
  return p;
}

/** Seconds to the next line read (ADR 0032): near the front, ¼ of the own wait, 1–2 s; beyond `threshold`, ¼ of the wait to it, 2–120 s. */
function lineDelay(place, threshold, rate) {
  if (!(rate > 0)) return place <= threshold ? 1 : 120;
  if (place <= threshold) return Math.min(2, Math.max(1, place / rate / 4));
  return Math.min(120, Math.max(2, (place - threshold) / rate / 4));
}

/** The next read (s, ADR 0032): lineDelay paced by the fastest rate (document, own progress), ≤ 30 s until the place is seen to move. */
function nextRead(place, threshold, docRate, seen) {
  var secs = lineDelay(place, threshold, Math.max(docRate > 0 ? docRate : 0, seen || 0));
  return seen ? secs : Math.min(30, secs);
}

/** The wait as shown: under a minute, about M min, about H h M min (`s`: the strings). */
function formatWait(seconds, s) {
  var m = Math.ceil(Math.max(0, Number(seconds) || 0) / 60);
  if (seconds < 60) return s.waitLess;
  if (m < 60) return fill(s.waitMin, { m: m });
  return fill(s.waitHours, { h: Math.floor(m / 60), m: m % 60 });
}

/** {iat, exp} (unix s) from a JWT's payload, or null (docs/tokens.md#entry-tokens). */
function tokenTimes(token) {
  try {
    var part = String(token).split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    var c = JSON.parse(atob(part + '==='.slice((part.length + 3) % 4)));
    return typeof c.iat === 'number' && typeof c.exp === 'number' && c.exp >= c.iat ? { iat: c.iat, exp: c.exp } : null;
  } catch (e) {
    return null;
  }
}

/** A copy of fetch's `init` whose headers (a Headers, pairs or an object; `from` instead of
 *  its own if given) carry `name: value` in place of any of that name (none for name ''). */
function withHeader(init, name, value, from) {
  var out = {};
  var k;
  for (k in init) if (Object.prototype.hasOwnProperty.call(init, k)) out[k] = init[k];
  var pairs = [];
  var given = from || init.headers;
  if (Array.isArray(given)) {
    pairs = given.map(function (p) {
      return [String(p[0]), p[1]];
    });
  } else if (given && typeof given.forEach === 'function') {
    given.forEach(function (v, n) {
      pairs.push([n, v]);
    });
  } else if (given) {
    for (k in given) if (Object.prototype.hasOwnProperty.call(given, k)) pairs.push([k, given[k]]);
  }
  pairs = pairs.filter(function (p) {
    return p[0].toLowerCase() !== name;
  });
  if (name) pairs.push([name, value]);
  out.headers = pairs;
  return out;
}

// ---- The client ----

/**
 * A visitor's place in the booking line of `opts.eventId`. `opts.onChange(state)` hears every
 * change; `opts.api` is the tier-2 API's path ('/api/queue'); `opts.env` replaces the browser
 * (tests): {fetch, setTimeout, clearTimeout, now, random, document?}. static/queue/README.md.
 */
function client(opts) {
  opts = opts || {};
  var env = opts.env || browserEnv();
  var eventId = String(opts.eventId || '');
  if (!EVENT_ID.test(eventId)) throw new TypeError('vwr tier 2: eventId must be 1-64 characters of A-Z a-z 0-9 _ -');
  var base = (opts.api || API) + '/';
  var listeners = opts.onChange ? [opts.onChange] : [];
  var state = { eventId: eventId, phase: 'idle' };
  // Answers to calls of an earlier run (before a leave, stop or start) are dropped.
  var run = 0;
  var timer = null;
  var task = null;
  var dueAt = 0;
  var soon = false;
  var errors = 0;
  // The entry token, and the local time (ms) until which it is surely valid.
  var token = null;
  var validUntil = 0;
  var renewing = null;
  // Where the visitor stands in line, and when `check` said so (ADR 0026, 0034).
  var score = null;
  var checkedAt = 0;
  // The last place read, and when.
  var seenPlace = null;
  var seenAt = 0;
  var seenRate = 0;
  // An API without the line document: `status` is polled in line instead.
  var polling = false;

  function url(route) {
    return base + route + '/' + eventId;
  }
  function emit(changes) {
    for (var k in changes) if (Object.prototype.hasOwnProperty.call(changes, k)) state[k] = changes[k];
    var copy = {};
    for (k in state) if (Object.prototype.hasOwnProperty.call(state, k)) copy[k] = state[k];
    listeners.forEach(function (fn) {
      fn(copy);
    });
  }
  function clear() {
    if (timer !== null) env.clearTimeout(timer);
    timer = task = null;
  }
  // `early`: the call may run sooner when the tab is shown again (not a back-off).
  function schedule(fn, ms, early) {
    clear();
    task = fn;
    soon = !!early;
    dueAt = env.now() + ms;
    timer = env.setTimeout(function () {
      timer = task = null;
      fn();
    }, ms);
  }
  function read(res) {
    return res.text().then(function (text) {
      var body = null;
      try {
        body = JSON.parse(text);
      } catch (e) {
        body = null;
      }
      return { status: res.status, body: body && typeof body === 'object' ? body : null, headers: res.headers };
    });
  }
  function call(method, route) {
    return env.fetch(url(route), { method: method, headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' }).then(read);
  }
  function code(r) {
    return r && r.body && typeof r.body.error === 'string' ? r.body.error : '';
  }

  // Not an answer of tier 2's (or one it asks to be waited out): back off, keep the place.
  function trouble(r, again) {
    errors++;
    var secs = backoffSeconds(errors, env.random());
    // A renewal is tried again before the token it replaces expires, if there is time.
    if (again === renewSoon && env.now() < validUntil) secs = Math.min(secs, Math.max(1, (validUntil - env.now()) / 2000));
    var ra = r ? retryAfterSeconds(r.headers && r.headers.get ? r.headers.get('retry-after') : null, env.now()) : null;
    if (ra !== null) secs = Math.max(secs, ra);
    emit({ trouble: { seconds: Math.ceil(secs), busy: !!r && (r.status === 503 || r.status === 429) } });
    schedule(again, secs * 1000, false);
  }

  function refused(c) {
    clear();
    token = null;
    emit({ phase: 'refused', error: c, trouble: null });
  }

  function answered(r, again, via) {
    var b = r.body;
    if (r.status === 200 && b && b.status === 'active' && typeof b.entryToken === 'string') return admit(b);
    if (r.status === 200 && b && b.status === 'queued') return queued(b, via);
    if (r.status === 404 && code(r) === 'not_in_queue') {
      // The admission is over, or a timeout took the place: `check` gives it back, if it can.
      if (state.phase === 'admitted' && state.admissionEndsAt !== null && env.now() >= state.admissionEndsAt - 2000) {
        clear();
        token = null;
        emit({ phase: 'ended', trouble: null });
        return;
      }
      return check();
    }
    if (r.status >= 400 && r.status < 500 && REFUSALS.test(code(r))) return refused(code(r));
    trouble(r, again);
  }

  function check() {
    var at = run;
    return call('POST', 'check').then(
      function (r) {
        if (at === run) return answered(r, check, 'check');
      },
      function () {
        if (at === run) trouble(null, check);
      }
    );
  }

  function status() {
    var at = run;
    return call('GET', 'status').then(
      function (r) {
        if (at === run) return answered(r, state.phase === 'admitted' ? renewSoon : status, 'status');
      },
      function () {
        if (at === run) trouble(null, state.phase === 'admitted' ? renewSoon : status);
      }
    );
  }

  function queued(b, via) {
    errors = 0;
    token = null;
    emit({ phase: 'waiting', position: b.position, ahead: b.peopleAhead, queueSize: b.queueSize, waitSeconds: b.estimatedWaitSeconds, restored: !!b.restored, expiresAt: null, admissionEndsAt: null, trouble: null });
    if (typeof b.lineScore === 'number') {
      // Wait on the line document, first when this place could move (ADR 0026).
      polling = false;
      score = b.lineScore;
      checkedAt = typeof b.checkedAt === 'number' ? b.checkedAt : 0;
      seenPlace = null;
      seenRate = 0;
      var rate = b.estimatedWaitSeconds > 0 ? b.position / b.estimatedWaitSeconds : 0;
      schedule(line, lineDelay(b.position, b.threshold, rate) * 1000, true);
    } else if (via === 'status' && !polling) {
      // Put back in line while admitted: `check` tells the new line score.
      return check();
    } else {
      polling = true;
      schedule(status, jitter(pollSeconds(b.nextPollSeconds), env.random()) * 1000, true);
    }
  }

  function line() {
    var at = run;
    return env.fetch(url('line'), { headers: { accept: 'application/json' }, credentials: 'omit' }).then(read).then(
      function (r) {
        if (at !== run) return;
        var d = r.body;
        if (r.status === 200 && d && Array.isArray(d.marks) && typeof d.updatedAt === 'number') {
          errors = 0;
          // A document read before the visitor joined tells nothing about them yet.
          if (d.updatedAt < checkedAt) return schedule(line, 500, true);
          // The front has passed the visitor: admitted, almost always. One `check`.
          if (d.front === null || d.front > score) return check();
          var place = placeOf(d.marks, score);
          var rate = d.estimateRate > 0 ? d.estimateRate : 0;
          emit({ phase: 'waiting', position: place, ahead: place - 1, queueSize: d.waiting, waitSeconds: waitSeconds(place, rate), trouble: null });
          var now = env.now();
          if (seenPlace !== null && seenPlace > place && now > seenAt) seenRate = (seenPlace - place) / ((now - seenAt) / 1000);
          seenPlace = place;
          seenAt = now;
          var secs = nextRead(place, d.threshold, Math.max(rate, d.admittedPerSecond || 0), seenRate);
          return schedule(line, (secs > 1 ? secs * (0.8 + 0.4 * env.random()) : secs) * 1000, true);
        }
        if (r.status === 404 && code(r) === 'event_not_found') return check();
        if (r.status === 404 && code(r) === 'not_found') {
          // An API without the line document: poll `status`, as pages did before it.
          polling = true;
          return status();
        }
        trouble(r, line);
      },
      function () {
        if (at === run) trouble(null, line);
      }
    );
  }

  function admit(b) {
    var now = env.now();
    var t = tokenTimes(b.entryToken);
    // The token's life from its own claims, so the page's clock does not matter; `iat` is
    // whole seconds, so a second is taken off (docs/tokens.md#entry-tokens).
    var life = t ? (t.exp - t.iat) * 1000 : pollSeconds(b.nextPollSeconds) * 3000;
    var offset = t ? t.iat * 1000 + 500 - now : 0;
    errors = 0;
    token = b.entryToken;
    validUntil = now + life - 1000;
    emit({
      phase: 'admitted',
      position: 0,
      ahead: 0,
      queueSize: b.queueSize,
      waitSeconds: 0,
      restored: !!b.restored,
      expiresAt: b.expiresAt,
      admissionEndsAt: typeof b.admissionEndsAt === 'number' ? b.admissionEndsAt * 1000 - offset : null,
      trouble: null,
      error: null,
    });
    // Renewed every `nextPollSeconds` (a third of the token's life), and before it expires.
    schedule(renewSoon, Math.min(pollSeconds(b.nextPollSeconds) * 1000, Math.max(1000, validUntil - now - 1000)), true);
  }

  function renewSoon() {
    renew();
  }

  /** A fresh entry token now (one `status` call, shared by callers meanwhile): the token, or null when not admitted. */
  function renew() {
    if (renewing) return renewing;
    if (state.phase !== 'admitted') return Promise.resolve(null);
    clear();
    renewing = status().then(function () {
      renewing = null;
      return state.phase === 'admitted' ? token : null;
    });
    return renewing;
  }

  function protectedFetch(input, init) {
    init = init || {};
    // A Request's own headers, unless `init` brings some (fetch would drop them for ours).
    if (init.headers === undefined && input && typeof input === 'object' && input.headers) init = withHeader(init, '', '', input.headers);
    var retried = false;
    function send() {
      return state.phase === 'admitted' && token ? env.fetch(input, withHeader(init, TOKEN_HEADER, token)) : env.fetch(input, init);
    }
    var ready = state.phase === 'admitted' && env.now() >= validUntil ? renew() : Promise.resolve();
    return ready.then(send).then(function (res) {
      if (retried || res.status !== 403 || state.phase !== 'admitted') return res;
      return res
        .clone()
        .json()
        .then(
          function (b) {
            return b && typeof b.error === 'string' ? b.error : '';
          },
          function () {
            return '';
          }
        )
        .then(function (c) {
          if (!RENEWABLE.test(c)) return res;
          retried = true;
          return renew().then(function (t) {
            return t ? send() : res;
          });
        });
    });
  }

  function start() {
    run++;
    clear();
    renewing = null;
    errors = 0;
    polling = false;
    emit({ phase: 'joining', error: null, trouble: null });
    return check();
  }

  function stop() {
    run++;
    clear();
    renewing = null;
    emit({ phase: 'stopped', trouble: null });
  }

  function leave() {
    var at = ++run;
    clear();
    renewing = null;
    token = null;
    var tries = 0;
    // 204 also when nothing was held; a failed call is tried twice more (the place would
    // otherwise stay until its timeout).
    function attempt() {
      tries++;
      return env.fetch(url('leave'), { method: 'POST', headers: { accept: 'application/json' }, credentials: 'same-origin' }).then(
        function (res) {
          if (res.status === 204 || res.status === 200 || tries >= 3) return res.status === 204 || res.status === 200;
          return later(attempt);
        },
        function () {
          return tries >= 3 ? false : later(attempt);
        }
      );
    }
    function later(fn) {
      return new Promise(function (done) {
        env.setTimeout(function () {
          // Not after the visitor joined again.
          done(at === run ? fn() : false);
        }, 2000);
      });
    }
    emit({ phase: 'left', trouble: null, expiresAt: null, admissionEndsAt: null });
    return attempt();
  }

  // A tab shown again reads the line document, or renews, at once (not a back-off's wait).
  var doc = env.document;
  if (doc && doc.addEventListener) {
    doc.addEventListener('visibilitychange', function () {
      if (doc.visibilityState === 'visible' && task && soon && dueAt - env.now() > 1000) {
        var fn = task;
        clear();
        fn();
      }
    });
  }

  return {
    start: start,
    leave: leave,
    stop: stop,
    renew: renew,
    fetch: protectedFetch,
    token: function () {
      return state.phase === 'admitted' ? token : null;
    },
    state: function () {
      var copy = {};
      for (var k in state) if (Object.prototype.hasOwnProperty.call(state, k)) copy[k] = state[k];
      return copy;
    },
    onChange: function (fn) {
      listeners.push(fn);
    },
  };
}

function browserEnv() {
  return {
    fetch: window.fetch.bind(window),
    setTimeout: window.setTimeout.bind(window),
    clearTimeout: window.clearTimeout.bind(window),
    now: Date.now,
    random: Math.random,
    document: typeof document === 'object' ? document : null,
  };
}
