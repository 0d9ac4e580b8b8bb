/* The console's calls of the admin APIs (docs/api.md#admin-routes-apiadminvwr, the tier-2 admin
 * routes) and the pacing of its reads: every call sends `Authorization: Bearer <token>` to the
 * configured API (empty: this origin), without cookies; a read that gets no answer, a 5xx or a
 * 429 is tried again after a back-off (2, 4, 8 … 60 s, never before a Retry-After). */

/** A client of the API at `base` for `env` ({fetch, now}); `token()` gives the bearer token. */
function apiClient(env, base, token) {
  var root = String(base || '').replace(/\/+$/, '');
  /** `{status, body, retryAfter}` of one call, or `{network: true}` when no answer came. */
  function call(method, path, body) {
    var headers = { accept: 'application/json', authorization: 'Bearer ' + token() };
    var init = { method: method, headers: headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return env.fetch(root + path, init).then(
      function (r) {
        return r.text().then(function (text) {
          var parsed = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch (e) {
            parsed = null;
          }
          return { status: r.status, body: parsed, retryAfter: r.headers.get('retry-after') };
        });
      },
      function () {
        return { network: true };
      }
    );
  }
  return {
    call: call,
    get: function (path) {
      return call('GET', path);
    },
  };
}

// The admin routes the console uses, by what they do (docs/api.md, docs/passes.md).
var T1 = '/api/admin/vwr/';
var T2 = '/api/queue/admin/';
function apiPath(kind, eventId, extra) {
  var id = encodeURIComponent(eventId || '');
  switch (kind) {
    case 'whoami':
      return T1 + 'whoami';
    case 'events':
      return T1 + 'events';
    case 'tier2status':
      return T2 + 'status/' + id;
    case 'tier2report':
      return T2 + 'report/' + id;
    case 'threshold':
      return T2 + 'threshold/' + id;
    case 'passRevoke':
      return T1 + 'pass/' + id + '/' + encodeURIComponent(extra);
    case 'passes':
    case 'passCreate':
      return T1 + 'pass/' + id;
    default:
      return T1 + kind + '/' + id;
  }
}

/** Of several answers' outcomes, the one that decides what happens next: a needed sign-in
 *  first, then a retry, then a refusal by role. */
function worst(outcomes) {
  var order = ['signin', 'retry', 'forbidden_role', 'refused', 'missing', 'ok'];
  var best = 'ok';
  outcomes.forEach(function (o) {
    if (order.indexOf(o) < order.indexOf(best)) best = o;
  });
  return best;
}

/** Milliseconds until the next read after one whose outcome was `kind`, the `errors`-th such
 *  failure in a row: `everyMs` after a good one, a back-off (never before `retryAfter`) after a
 *  failure to answer. */
function nextDelay(kind, errors, retryAfter, everyMs, random, nowMs) {
  if (kind !== 'retry') return everyMs;
  var s = backoffSeconds(errors, random);
  var after = retryAfterSeconds(retryAfter, nowMs);
  return Math.round(Math.max(s, after || 0) * 1000);
}

/** Runs `task` (a function giving a promise of `{outcome, retryAfter}`) now and again every
 *  `everyMs`, backing off while it fails to get answers; `report(outcome, delayMs, errors)`
 *  after each run. `stop()` ends it; `now()` runs it at once. */
function poller(env, task, everyMs, report) {
  var errors = 0;
  var timer = null;
  var stopped = false;
  var running = false;
  function run() {
    if (stopped || running) return;
    running = true;
    clear();
    task().then(
      function (r) {
        done(r || { outcome: 'ok' });
      },
      function () {
        done({ outcome: 'retry' });
      }
    );
  }
  function done(r) {
    running = false;
    if (stopped) return;
    errors = r.outcome === 'retry' ? errors + 1 : 0;
    var delay = nextDelay(r.outcome, errors, r.retryAfter, everyMs, env.random(), env.now());
    report(r.outcome, delay, errors);
    if (r.outcome !== 'signin') timer = env.setTimeout(run, delay);
  }
  function clear() {
    if (timer !== null) env.clearTimeout(timer);
    timer = null;
  }
  run();
  return {
    stop: function () {
      stopped = true;
      clear();
    },
    now: run,
  };
}
