/* vwr waiting page: joins the line for the event in the address (/vwr/{eventId}), keeps the
 * ticket across refreshes and tabs, polls until admitted, then goes on to `next`.
 * Vanilla JS, no dependencies, no build step. Loaded with `defer`; under Node (tests)
 * it only exports its functions. See static/README.md. */
(function () {
  'use strict';

  var API = '/vwr-api/vwr';
  var MAX_NEXT = 2048;
  var ANNOUNCE_EVERY_MS = 15000;
  var LOOP_WINDOW_MS = 60000;
  var LOOP_MAX = 3;
  // Messages that end the page's work; each shows a link to `next`.
  var TERMINAL = { notFound: 'back', badAddress: 'back', notOpen: 'back', noPass: 'continue' };

  var STRINGS = {
    en: {
      htmlTitle: 'Waiting room',
      title: 'You are in line',
      lead: 'Many people are trying to get in right now, so we let them in a few at a time. When it is your turn, this page takes you on automatically.',
      position: 'Your number',
      ahead: 'People ahead of you',
      wait: 'Estimated wait',
      progress: 'Progress through the line',
      keep: 'Keep this page open. Refreshing it, or opening it in another tab, keeps your place.',
      joining: 'Getting your place in line…',
      rejoin: 'Your place expired, so we are getting you a new one…',
      waiting: 'You are number {position}. {ahead} people ahead of you.',
      admitted: 'It is your turn! Taking you there now…',
      retry: 'We could not reach the waiting room. Trying again in {seconds} seconds.',
      busy: 'The waiting room is very busy. Trying again in {seconds} seconds.',
      notFound: 'There is no waiting room for this event. Check the address, or go back to the event page.',
      badAddress: 'This waiting room address is not valid.',
      back: 'Back to the event page',
      noPass: 'It is your turn, but your browser did not keep the entry pass. Allow cookies for this site, then continue.',
      notOpen: 'This sale is not open right now. Please try again later.',
      continue: 'Continue',
      waitLess: 'under a minute',
      waitMin: 'about {m} min',
      waitHours: 'about {h} h {m} min',
      other: '한국어',
    },
    ko: {
      htmlTitle: '대기실',
      title: '대기열에 들어왔습니다',
      lead: '지금 접속한 분이 많아 순서대로 입장하고 있습니다. 차례가 되면 이 페이지가 자동으로 이동합니다.',
      position: '내 순번',
      ahead: '내 앞 대기 인원',
      wait: '예상 대기 시간',
      progress: '대기 진행률',
      keep: '이 페이지를 닫지 마세요. 새로고침하거나 다른 탭에서 열어도 순서는 그대로입니다.',
      joining: '대기 순번을 받는 중입니다…',
      rejoin: '대기 순번이 만료되어 새 순번을 받는 중입니다…',
      waiting: '내 순번은 {position}번이며, 앞에 {ahead}명이 있습니다.',
      admitted: '차례가 되었습니다! 지금 이동합니다…',
      retry: '대기실에 연결하지 못했습니다. {seconds}초 후 다시 시도합니다.',
      busy: '대기실 접속이 많습니다. {seconds}초 후 다시 시도합니다.',
      notFound: '이 공연의 대기실이 없습니다. 주소를 확인하거나 공연 페이지로 돌아가세요.',
      badAddress: '대기실 주소가 올바르지 않습니다.',
      back: '공연 페이지로 돌아가기',
      noPass: '차례가 되었지만 브라우저에 입장권이 저장되지 않았습니다. 이 사이트의 쿠키를 허용한 뒤 계속하세요.',
      notOpen: '지금은 판매가 열려 있지 않습니다. 잠시 후 다시 시도해 주세요.',
      continue: '계속하기',
      waitLess: '1분 미만',
      waitMin: '약 {m}분',
      waitHours: '약 {h}시간 {m}분',
      other: 'English',
    },
  };

  // ---- Pure helpers (unit-tested) ------------------------------------------------------

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (m, k) {
      return values[k] === undefined ? m : String(values[k]);
    });
  }

  /** The event id of /vwr/{eventId}(/), or null. */
  function eventIdFrom(pathname) {
    var m = /^\/vwr\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
    return m ? m[1] : null;
  }

  /** One query parameter, or null (never throws on bad percent-encoding). */
  function queryParam(search, name) {
    var parts = (search || '').replace(/^\?/, '').split('&');
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf('=');
      var key = eq < 0 ? parts[i] : parts[i].slice(0, eq);
      if (key !== name) continue;
      try {
        return decodeURIComponent(parts[i].slice(eq + 1).replace(/\+/g, ' '));
      } catch (e) {
        return null;
      }
    }
    return null;
  }

  /** `next` if it is a same-site path (one leading "/", no "//", no scheme, no backslash,
   *  no control characters, not the waiting room itself), else null. */
  function safeNext(next, origin) {
    if (typeof next !== 'string' || next.length > MAX_NEXT) return null;
    if (next.charAt(0) !== '/' || next.charAt(1) === '/' || /[\\\u0000-\u001f\u007f]/.test(next)) return null;
    if (/^\/vwr(-api)?(\/|$|\?|#)/.test(next)) return null;
    if (origin) {
      try {
        if (new URL(next, origin).origin !== origin) return null;
      } catch (e) {
        return null;
      }
    }
    return next;
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

  function formatWait(seconds, s) {
    var m = Math.ceil(Math.max(0, Number(seconds) || 0) / 60);
    if (seconds < 60) return s.waitLess;
    if (m < 60) return fill(s.waitMin, { m: m });
    return fill(s.waitHours, { h: Math.floor(m / 60), m: m % 60 });
  }

  /** Progress 0–1 from the first people-ahead count seen to zero. */
  function progress(firstAhead, ahead) {
    if (!(firstAhead > 0)) return ahead > 0 ? 0 : 1;
    return Math.min(1, Math.max(0, (firstAhead - ahead) / firstAhead));
  }

  // ---- The page ------------------------------------------------------------------------

  /**
   * Runs the waiting room. `env` holds everything it touches, so tests can drive it:
   * {document, storage, fetch, setTimeout, clearTimeout, now, random, location: {pathname,
   * search, origin, replace}, languages, locks, tab (whose `name` is window.name),
   * addEventListener}.
   */
  function start(env) {
    var doc = env.document;
    var eventId = eventIdFrom(env.location.pathname);
    var next = safeNext(queryParam(env.location.search, 'next'), env.location.origin) || (eventId ? '/events/' + eventId : '/');
    var ticketKey = 'vwr.ticket.' + eventId;
    var loopKey = 'vwr.redirects.' + eventId;
    var lang = pickLang(read('vwr.lang'), env.languages);
    var ticket = null;
    var last = null;
    var message = null;
    var timer = null;
    var pending = null;
    var resumeAt = 0;
    var errors = 0;
    var rejoins = 0;
    var stopped = false;
    var announced = { at: -Infinity, ahead: null };

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
    function write(key, value) {
      try {
        if (value === null) env.storage.removeItem(key);
        else env.storage.setItem(key, value);
        return true;
      } catch (e) {
        // Storage disabled or full: the place is still kept for this page's life.
        return false;
      }
    }
    function loadTicket() {
      var t = null;
      try {
        t = JSON.parse(read(ticketKey));
      } catch (e) {
        t = null;
      }
      return t && typeof t.requestId === 'string' && t.requestId ? t : null;
    }
    function saveTicket() {
      write(ticketKey, ticket ? JSON.stringify(ticket) : null);
    }
    function number(n) {
      try {
        return new Intl.NumberFormat(lang === 'ko' ? 'ko-KR' : 'en-US').format(n);
      } catch (e) {
        return String(n);
      }
    }

    // -- Rendering --
    function applyLang() {
      var s = STRINGS[lang];
      doc.documentElement.setAttribute('lang', lang);
      doc.title = s.htmlTitle;
      var nodes = doc.querySelectorAll('[data-i18n]');
      for (var i = 0; i < nodes.length; i++) nodes[i].textContent = s[nodes[i].getAttribute('data-i18n')];
      var toggle = el('lang');
      toggle.textContent = s.other;
      toggle.setAttribute('lang', lang === 'ko' ? 'en' : 'ko');
      el('bar').setAttribute('aria-label', s.progress);
      el('back').setAttribute('href', next);
      if (last) {
        render(last, false);
        el('status').textContent = fill(s.waiting, { position: number(last.position), ahead: number(last.ahead) });
      }
      if (message) show(message.key, message.values, message.isError);
    }

    function show(key, values, isError) {
      message = key ? { key: key, values: values || {}, isError: !!isError } : null;
      var text = key ? fill(STRINGS[lang][key], message.values) : '';
      var box = el('error');
      // Errors go to the alert box; other messages to the visible line and the live region.
      box.hidden = !isError;
      box.textContent = isError ? text : '';
      el('message').hidden = isError || !key;
      el('message').textContent = isError ? '' : text;
      if (key && !isError) el('status').textContent = text;
      el('backwrap').hidden = !TERMINAL.hasOwnProperty(key);
      el('back').textContent = STRINGS[lang][TERMINAL[key] || 'back'];
    }

    function render(data, announce) {
      last = data;
      var s = STRINGS[lang];
      el('queue').hidden = false;
      el('position').textContent = number(data.position);
      el('ahead').textContent = number(data.ahead);
      el('wait').textContent = formatWait(data.wait, s);
      var pct = Math.round(progress(ticket ? ticket.firstAhead : data.ahead, data.ahead) * 100);
      el('fill').style.width = pct + '%';
      el('bar').setAttribute('aria-valuenow', String(pct));
      // The live region speaks on a change of people ahead, at most every 15 s, so screen
      // readers are not interrupted at every poll.
      var t = env.now();
      if (announce && data.ahead !== announced.ahead && t - announced.at >= ANNOUNCE_EVERY_MS) {
        announced = { at: t, ahead: data.ahead };
        el('status').textContent = fill(s.waiting, { position: number(data.position), ahead: number(data.ahead) });
      }
    }

    // A waiting answer; `checked` = from a check (a fresh assign proves less: the ticket
    // could still be refused right after, so it does not reset the back-off counters).
    function waiting(body, checked) {
      if (checked) {
        errors = 0;
        rejoins = 0;
      }
      if (message) show(null);
      var ahead = Math.max(0, Number(body.peopleAhead !== undefined ? body.peopleAhead : body.position - body.servingCounter - 1) || 0);
      if (ticket.firstAhead === undefined || ticket.firstAhead === null || ahead > ticket.firstAhead) {
        ticket.firstAhead = ahead;
        saveTicket();
      }
      render({ position: body.position, ahead: ahead, wait: body.estimatedWaitSeconds }, true);
      schedule(check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
    }

    // -- Timers: nothing runs while the tab is hidden; showing it again polls at once --
    function hidden() {
      return doc.visibilityState === 'hidden';
    }
    function schedule(fn, seconds) {
      pending = fn;
      env.clearTimeout(timer);
      timer = hidden() ? null : env.setTimeout(runPending, seconds * 1000);
    }
    function runPending() {
      timer = null;
      var fn = pending;
      pending = null;
      if (fn && !stopped) fn();
    }
    function onVisibility() {
      env.clearTimeout(timer);
      timer = null;
      if (!hidden() && pending && !stopped) timer = env.setTimeout(runPending, Math.max(0, resumeAt - env.now()));
    }

    // -- Talking to the tier-1 API --
    function call(method, path) {
      return env
        .fetch(path, { method: method, headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' })
        .then(function (res) {
          return res.text().then(function (text) {
            var body = null;
            try {
              body = text ? JSON.parse(text) : null;
            } catch (e) {
              body = null;
            }
            return { status: res.status, body: body || {}, retryAfter: res.headers.get('retry-after') };
          });
        })
        .catch(function () {
          return { status: 0, body: {}, retryAfter: null };
        });
    }

    function go(url) {
      stopped = true;
      env.clearTimeout(timer);
      show('admitted');
      env.location.replace(url);
    }

    // Redirects to `next` made lately, {n, at}: in localStorage or — storage blocked, as it is
    // when the browser blocks cookies — in the tab's window.name, which lasts across same-site
    // navigations in the tab.
    function redirects(record) {
      var tabKey = loopKey + '=';
      if (record) {
        if (!write(loopKey, JSON.stringify(record)) && env.tab) env.tab.name = tabKey + JSON.stringify(record);
        return record;
      }
      var text = read(loopKey);
      var name = env.tab ? String(env.tab.name || '') : '';
      if (text === null && name.indexOf(tabKey) === 0) text = name.slice(tabKey.length);
      try {
        record = JSON.parse(text);
      } catch (e) {
        record = null;
      }
      return record && Number(record.n) > 0 && env.now() - record.at < LOOP_WINDOW_MS ? record : { n: 0 };
    }

    // On to `next`: admitted, or the event is not gated (409). Being sent back here again and
    // again within a minute means something in between does not let the visitor through —
    // the pass cookie is not kept (cookies blocked), or the edge still gates an event the API
    // says is not active (its configuration lags): the third time, stop and say so
    // (`stopKey`) instead of looping.
    function leave(stopKey) {
      var n = redirects().n + 1;
      redirects({ n: n, at: env.now() });
      if (n < LOOP_MAX) return go(next);
      stopped = true;
      env.clearTimeout(timer);
      show(stopKey, {}, true);
    }

    function forget() {
      ticket = null;
      last = null;
      saveTicket();
    }

    // What an error answer means for the page; `retry` is what to try again.
    function failed(r, retry) {
      var code = r.body && r.body.error;
      if (r.status === 404 && code !== undefined) {
        stopped = true;
        return show('notFound', {}, true);
      }
      if (r.status === 400 && retry === join) {
        stopped = true;
        return show('badAddress', {}, true);
      }
      if (r.status === 409) return leave('notOpen');
      // An expired or unusable ticket: join again; after three times in a row, with back-off.
      if (r.status === 410 || (retry === check && (r.status === 400 || r.status === 403))) {
        forget();
        if (++rejoins <= 3) return join('rejoin');
        retry = join;
      }
      errors++;
      var after = r.status === 429 || r.status === 503 ? retryAfterSeconds(r.retryAfter, env.now()) : null;
      var seconds = after !== null ? after * (1 + 0.2 * env.random()) : backoffSeconds(errors, env.random());
      resumeAt = env.now() + seconds * 1000;
      show(r.status === 429 || r.status === 503 ? 'busy' : 'retry', { seconds: Math.ceil(seconds) }, true);
      schedule(retry, seconds);
    }

    function check() {
      return call('GET', API + '/check/' + eventId + '/' + encodeURIComponent(ticket.requestId)).then(function (r) {
        if (stopped) return;
        if (r.status === 200 && r.body.admitted === true) return leave('noPass');
        if (r.status === 200 && r.body.admitted === false) return waiting(r.body, true);
        failed(r, check);
      });
    }

    function assign() {
      var existing = loadTicket();
      if (existing) {
        ticket = existing;
        return check();
      }
      return call('POST', API + '/assign/' + eventId).then(function (r) {
        if (stopped) return;
        if (r.status === 200 && typeof r.body.requestId === 'string') {
          ticket = { requestId: r.body.requestId, position: r.body.position };
          saveTicket();
          return waiting(r.body, false);
        }
        failed(r, join);
      });
    }

    // Joining holds a cross-tab lock where the browser has one, so two tabs opened together
    // get one place, not two.
    function join(reason) {
      if (!message || !message.isError) show(reason === 'rejoin' ? 'rejoin' : 'joining');
      if (env.locks && env.locks.request) return env.locks.request('vwr-join-' + eventId, assign);
      return assign();
    }

    // -- Start --
    el('lang').addEventListener('click', function () {
      lang = lang === 'ko' ? 'en' : 'ko';
      write('vwr.lang', lang);
      applyLang();
    });
    applyLang();
    if (!eventId) {
      stopped = true;
      show('badAddress', {}, true);
      return;
    }
    doc.addEventListener('visibilitychange', onVisibility);
    // Another tab replacing the ticket (after re-joining): use the same place here.
    env.addEventListener('storage', function (e) {
      var t = e.key === ticketKey ? loadTicket() : null;
      if (t && (!ticket || t.requestId !== ticket.requestId)) ticket = t;
    });
    // Deliberately no unload handler: leaving or refreshing the page never gives up the place.
    ticket = loadTicket();
    if (ticket) check();
    else join();
    return {
      state: function () {
        return { ticket: ticket, pending: !!pending, timer: timer !== null, errors: errors, stopped: stopped, lang: lang, next: next };
      },
    };
  }

  var api = {
    STRINGS: STRINGS,
    fill: fill,
    eventIdFrom: eventIdFrom,
    queryParam: queryParam,
    safeNext: safeNext,
    pickLang: pickLang,
    retryAfterSeconds: retryAfterSeconds,
    jitter: jitter,
    backoffSeconds: backoffSeconds,
    pollSeconds: pollSeconds,
    formatWait: formatWait,
    progress: progress,
    start: start,
  };

  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else {
    var storage = null;
    try {
      storage = window.localStorage;
    } catch (e) {
      // Storage blocked: the place is kept for this page's life only.
    }
    start({
      document: document,
      storage: storage,
      fetch: window.fetch.bind(window),
      setTimeout: window.setTimeout.bind(window),
      clearTimeout: window.clearTimeout.bind(window),
      now: Date.now,
      random: Math.random,
      location: {
        pathname: location.pathname,
        search: location.search,
        origin: location.origin,
        replace: function (url) {
          location.replace(url);
        },
      },
      languages: navigator.languages || [navigator.language],
      locks: navigator.locks,
      tab: window,
      addEventListener: window.addEventListener.bind(window),
    });
  }
})();
