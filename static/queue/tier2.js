/* vwr tier 2 in the browser: the client a booking page waits and books with, and the booking
 * page of /vwr/queue/{eventId} (index.html next to this file). The client joins the event's
 * booking line (`check`), waits on the CDN-cached line document without calls of its own,
 * holds the entry token once admitted and renews it before it expires (`status`), adds it to
 * protected calls (`fetch`) and leaves on demand. Vanilla JS, no build step; under Node (tests)
 * it only exports. Its API: static/queue/README.md; the routes: docs/api.md#tier-2; waiting on
 * the line document: docs/adr/0026-tier2-line-document.md. */
(function () {
  'use strict';

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

  var STRINGS = {
    en: {
      htmlTitle: 'Booking',
      turnTitle: '✅ Your turn to book',
      titleStarting: 'Booking',
      leadStarting: 'Checking your place in the booking line…',
      titleWaiting: 'You are in the booking line',
      leadWaiting: 'Only so many people can book at the same time. When it is your turn, this page lets you in by itself: there is no need to refresh.',
      titleAdmitted: 'It is your turn to book',
      leadAdmitted: 'Keep this page open while you book: it keeps your turn.',
      titleLeft: 'You left the booking line',
      leadLeft: 'Your place went to the next person. You can join again, at the back of the line.',
      titleEnded: 'Your booking time is over',
      leadEnded: 'Your turn has ended. You can join the line again, at the back.',
      titleStopped: 'Booking',
      position: 'Your place in line',
      ahead: 'People ahead of you',
      wait: 'Estimated wait',
      waiting: 'You are number {position} in line. {ahead} people ahead of you.',
      admitted: 'It is your turn to book.',
      until: 'You can book until {time}.',
      next: 'Continue to booking',
      leave: 'Leave the line',
      done: 'I am done: free my place',
      rejoin: 'Join the line again',
      keep: 'Keep this page open. Refreshing it keeps your place.',
      needsPass: 'To book, first go through the waiting room of this sale.',
      room: 'Go to the waiting room',
      taken: 'Your place from the waiting room is already used in another browser.',
      notFound: 'There is no booking line for this sale.',
      badAddress: 'This booking page address is not valid.',
      retry: 'We could not reach the booking line. Trying again in {seconds} seconds.',
      busy: 'The booking line is very busy. Trying again in {seconds} seconds.',
      waitLess: 'under a minute',
      waitMin: 'about {m} min',
      waitHours: 'about {h} h {m} min',
      other: '한국어',
    },
    ko: {
      htmlTitle: '예매',
      turnTitle: '✅ 예매하실 차례입니다',
      titleStarting: '예매',
      leadStarting: '예매 대기열의 내 순서를 확인하는 중입니다…',
      titleWaiting: '예매 대기열에 있습니다',
      leadWaiting: '동시에 예매할 수 있는 인원이 정해져 있습니다. 차례가 되면 이 페이지에서 자동으로 입장하므로 새로고침할 필요가 없습니다.',
      titleAdmitted: '예매하실 차례입니다',
      leadAdmitted: '예매하는 동안 이 페이지를 열어 두세요. 차례가 유지됩니다.',
      titleLeft: '예매 대기열에서 나왔습니다',
      leadLeft: '내 자리는 다음 분께 넘어갔습니다. 다시 줄을 서면 대기열 맨 뒤로 들어갑니다.',
      titleEnded: '예매 시간이 끝났습니다',
      leadEnded: '내 차례가 끝났습니다. 다시 줄을 서면 대기열 맨 뒤로 들어갑니다.',
      titleStopped: '예매',
      position: '내 대기 순서',
      ahead: '내 앞 대기 인원',
      wait: '예상 대기 시간',
      waiting: '내 순서는 {position}번이며, 앞에 {ahead}명이 있습니다.',
      admitted: '예매하실 차례입니다.',
      until: '{time}까지 예매할 수 있습니다.',
      next: '예매 계속하기',
      leave: '대기열에서 나가기',
      done: '예매 마치고 자리 비우기',
      rejoin: '다시 줄 서기',
      keep: '이 페이지를 닫지 마세요. 새로고침해도 순서는 그대로입니다.',
      needsPass: '예매하려면 먼저 이 판매의 대기실을 거쳐 주세요.',
      room: '대기실로 가기',
      taken: '대기실에서 받은 순번이 이미 다른 브라우저에서 사용되고 있습니다.',
      notFound: '이 판매의 예매 대기열이 없습니다.',
      badAddress: '예매 페이지 주소가 올바르지 않습니다.',
      retry: '예매 대기열에 연결하지 못했습니다. {seconds}초 후 다시 시도합니다.',
      busy: '예매 대기열 접속이 많습니다. {seconds}초 후 다시 시도합니다.',
      waitLess: '1분 미만',
      waitMin: '약 {m}분',
      waitHours: '약 {h}시간 {m}분',
      other: 'English',
    },
  };

  // ---- Pure helpers (unit-tested) ----

  // ---- Copied from app.js by static/build.mjs (edit it there): fill, retryAfterSeconds, jitter, backoffSeconds, pollSeconds ----
  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (m, k) {
      return values[k] === undefined ? m : String(values[k]);
    });
  }

  /** Seconds from a Retry-After header (delta-seconds or HTTP date), or null. */
  function retryAfterSeconds(header, nowMs) {
    if (header === null || header === undefined || header === '') return null;
    if (/^\d+$/.test(String(header).trim())) return Math.min(3600, Number(header));
    var at = Date.parse(header);
    return isNaN(at) ? null : Math.min(3600, Math.max(0, Math.ceil((at - nowMs) / 1000)));
  }

  /** `seconds` ± 20 %. */
  function jitter(seconds, random) {
    return seconds * (0.8 + 0.4 * random);
  }

  /** Exponential back-off after `errors` failures in a row: 2, 4, 8 … 60 s, ± 20 %. */
  function backoffSeconds(errors, random) {
    return jitter(Math.min(60, Math.pow(2, Math.max(1, errors))), random);
  }

  /** The server's poll hint, kept within 1–60 s. */
  function pollSeconds(hint) {
    var s = Number(hint);
    return isFinite(s) ? Math.min(60, Math.max(1, s)) : 5;
  }
  // ---- End of the copy ----

  /** The event id of the booking page's address, or null: /vwr/queue/{eventId}(/) as deployed
   *  (edge/build.mjs gives this pattern to the CloudFront rewrite, docs/adr/0027-booking-page-path.md),
   *  or /queue/{eventId}(/), where `vwr dev` serves it too. */
  function eventIdFrom(pathname) {
    var m = /^\/vwr\/queue\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
    var dev = /^\/queue\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
    return m ? m[1] : dev ? dev[1] : null;
  }

  /** 'ko' or 'en': a saved choice first, else the first of the browser's languages we have. */
  function pickLang(saved, languages) {
    if (saved === 'ko' || saved === 'en') return saved;
    var list = languages || [];
    for (var i = 0; i < list.length; i++) {
      var l = String(list[i]).toLowerCase();
      if (l.indexOf('ko') === 0) return 'ko';
      if (l.indexOf('en') === 0) return 'en';
    }
    return 'en';
  }

  /** `next` if it is a same-site path outside the waiting room (the waiting page's rule), else null. */
  function safeNext(next, origin) {
    if (typeof next !== 'string' || next.length > 2048) return null;
    if (next.charAt(0) !== '/' || next.charAt(1) === '/' || /[\\\u0000-\u001f\u007f]/.test(next)) return null;
    if (/^\/vwr(-api)?(\/|$|\?|#)/.test(next)) return null;
    try {
      return new URL(next, origin).origin === origin ? next : null;
    } catch (e) {
      return null;
    }
  }

  /** One query parameter, or null (never throws on bad percent-encoding). */
  function queryParam(search, name) {
    var parts = (search || '').replace(/^\?/, '').split('&');
    for (var i = 0; i < parts.length; i++) {
      var kv = parts[i].split('=');
      if (kv[0] !== name) continue;
      try {
        return decodeURIComponent((kv.slice(1).join('=') || '').replace(/\+/g, ' '));
      } catch (e) {
        return null;
      }
    }
    return null;
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


  /** Seconds until the turn of `place` (1 = next) at `rate`/s; no rate: max(place ÷ 50, 5) (docs/api.md#poll-hints-and-estimates). */
  function waitSeconds(place, rate) {
    if (!(place > 0)) return 0;
    return rate > 0 ? Math.ceil(place / rate) : Math.max(Math.floor(place / 50), 5);
  }

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

  // ---- The booking page (index.html) ----

  /**
   * Runs the booking page: `env` = {document, storage, location: {pathname, search, origin},
   * languages, client: the client's env}. Returns its client (window.tier2), or null for an
   * address without an event id.
   */
  function page(env) {
    var doc = env.document;
    var eventId = eventIdFrom(env.location.pathname);
    var next = safeNext(queryParam(env.location.search, 'next'), env.location.origin);
    var lang = pickLang(read('vwr.lang'), env.languages);
    var last = { phase: 'idle' };
    var said = { at: -Infinity, position: null, phase: null };
    var problem = eventId ? null : 'badAddress';
    var now = env.client && env.client.now ? env.client.now : Date.now;

    function el(id) {
      return doc.getElementById(id);
    }
    function read(key) {
      try {
        return env.storage.getItem(key);
      } catch (e) {
        return null;
      }
    }
    function number(n) {
      try {
        return new Intl.NumberFormat(lang === 'ko' ? 'ko-KR' : 'en-US').format(n);
      } catch (e) {
        return String(n);
      }
    }
    function clockTime(ms) {
      try {
        return new Intl.DateTimeFormat(lang === 'ko' ? 'ko-KR' : 'en-US', { hour: 'numeric', minute: '2-digit' }).format(new Date(ms));
      } catch (e) {
        return new Date(ms).toTimeString().slice(0, 5);
      }
    }
    function show(id, on) {
      var node = el(id);
      // A control that disappears while focused hands the focus to the heading.
      if (!on && !node.hidden && doc.activeElement && node.contains && node.contains(doc.activeElement)) el('title').focus();
      node.hidden = !on;
    }

    function draw(q, announce) {
      var s = STRINGS[lang];
      var phase = problem ? 'refused' : q.phase;
      var mode = { idle: 'starting', joining: 'starting', refused: 'stopped' }[phase] || phase;
      var key = mode.charAt(0).toUpperCase() + mode.slice(1);
      el('booking').setAttribute('data-state', mode);
      doc.documentElement.setAttribute('lang', lang);
      doc.title = mode === 'admitted' ? s.turnTitle : s.htmlTitle;
      el('title').textContent = s['title' + key];
      el('lead').textContent = mode === 'stopped' ? '' : s['lead' + key];
      show('lead', mode !== 'stopped');
      var nodes = doc.querySelectorAll('[data-i18n]');
      for (var i = 0; i < nodes.length; i++) nodes[i].textContent = s[nodes[i].getAttribute('data-i18n')];
      el('lang').textContent = s.other;
      el('lang').setAttribute('lang', lang === 'ko' ? 'en' : 'ko');

      show('queue', mode === 'waiting');
      if (mode === 'waiting') {
        el('position').textContent = number(q.position);
        el('ahead').textContent = number(q.ahead);
        el('wait').textContent = formatWait(q.waitSeconds, s);
      }
      show('admitted', mode === 'admitted');
      if (mode === 'admitted') el('until').textContent = q.admissionEndsAt ? fill(s.until, { time: clockTime(q.admissionEndsAt) }) : '';
      show('nextwrap', mode === 'admitted' && !!next);
      if (next) el('next').setAttribute('href', next);
      show('leave', mode === 'waiting' || mode === 'admitted');
      el('leave').textContent = mode === 'admitted' ? s.done : s.leave;
      show('rejoin', mode === 'left' || mode === 'ended');
      show('keep', mode === 'starting' || mode === 'waiting');

      // Why the page stopped, or why it is waiting longer than it should (role=alert).
      var err = problem || (mode === 'stopped' ? refusal(q.error) : null);
      var text = err ? s[err] : q.trouble ? fill(q.trouble.busy ? s.busy : s.retry, { seconds: q.trouble.seconds }) : '';
      el('error').textContent = text;
      show('error', !!text);
      show('roomwrap', err === 'needsPass');
      if (eventId) el('room').setAttribute('href', '/vwr/' + eventId + (/^\/vwr\//.test(env.location.pathname) ? '' : '?next=' + encodeURIComponent(env.location.pathname)));

      if (announce) speak(q, mode, s);
    }

    function refusal(c) {
      if (c === 'event_not_found') return 'notFound';
      if (c === 'position_taken') return 'taken';
      if (c === 'invalid_event_id') return 'badAddress';
      return 'needsPass';
    }

    // The live region: each state once; the place when it changes, at most every 15 s.
    function speak(q, mode, s) {
      var text = '';
      var t = now();
      if (mode === 'waiting' && (said.phase !== 'waiting' || (q.position !== said.position && t - said.at >= ANNOUNCE_EVERY_MS))) {
        text = fill(s.waiting, { position: number(q.position), ahead: number(q.ahead) });
        said.position = q.position;
        said.at = t;
      } else if (mode !== said.phase && mode !== 'waiting' && mode !== 'starting' && mode !== 'stopped') {
        text = mode === 'admitted' ? s.admitted + ' ' + el('until').textContent : el('title').textContent + '. ' + el('lead').textContent;
      }
      said.phase = mode;
      if (text) el('status').textContent = text;
    }

    el('lang').addEventListener('click', function () {
      lang = lang === 'ko' ? 'en' : 'ko';
      try {
        env.storage.setItem('vwr.lang', lang);
      } catch (e) {
        // Storage blocked: the choice lasts for this page.
      }
      draw(last, false);
    });

    if (!eventId) {
      draw(last, false);
      return null;
    }
    var q = client({
      eventId: eventId,
      env: env.client,
      onChange: function (st) {
        last = st;
        draw(st, true);
      },
    });
    el('leave').addEventListener('click', function () {
      q.leave();
    });
    el('rejoin').addEventListener('click', function () {
      q.start();
    });
    draw(last, false);
    q.start();
    return q;
  }

  var api = {
    STRINGS: STRINGS,
    TOKEN_HEADER: TOKEN_HEADER,
    fill: fill,
    eventIdFrom: eventIdFrom,
    pickLang: pickLang,
    safeNext: safeNext,
    queryParam: queryParam,
    placeOf: placeOf,
    lineDelay: lineDelay,
    nextRead: nextRead,
    waitSeconds: waitSeconds,
    formatWait: formatWait,
    retryAfterSeconds: retryAfterSeconds,
    backoffSeconds: backoffSeconds,
    tokenTimes: tokenTimes,
    withHeader: withHeader,
    client: client,
    page: page,
  };

  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else {
    window.VwrTier2 = api;
    // The booking page: its client is window.tier2 (a site's own page makes its own).
    if (document.getElementById('booking')) {
      var storage = null;
      try {
        storage = window.localStorage;
      } catch (e) {
        // Storage blocked: the language choice is not kept.
      }
      window.tier2 = page({
        document: document,
        storage: storage,
        location: { pathname: location.pathname, search: location.search, origin: location.origin },
        languages: navigator.languages || [navigator.language],
        client: browserEnv(),
      });
    }
  }
})();
