/* vwr waiting page: follows the sale for the event in the address (/vwr/{eventId}) through its
 * states (docs/lifecycle.md): counts down to the open, joins the pre-queue, keeps the ticket
 * across refreshes and tabs, polls until admitted, then goes on to `next`; says so when the
 * sale is paused or closed. Vanilla JS, no dependencies, no build step. Loaded with `defer`;
 * under Node (tests) it only exports its functions. See static/README.md. */
(function () {
  'use strict';

  var API = '/vwr-api/vwr';
  var MAX_NEXT = 2048;
  var ANNOUNCE_EVERY_MS = 15000;
  var LOOP_WINDOW_MS = 60000;
  var LOOP_MAX = 3;
  // The status document is polled every ~10 s before the open, every ~15 s while paused.
  var STATUS_POLL_S = 10;
  var PAUSED_POLL_S = 15;
  // At the open (and when a pause ends) each page waits a random 0–5 s before its first call.
  var OPEN_SPREAD_S = 5;
  // Countdown values (seconds left) at which the live region reads the countdown again.
  var MARKS = [3600, 600, 300, 60, 10];
  // Messages that end the page's work; each shows a link to `next`.
  var TERMINAL = { notFound: 'back', badAddress: 'back', notOpen: 'back', noPass: 'continue' };
  // Title and lead of each state of the page (`closed` depends on the reason).
  var MODES = {
    starting: ['htmlTitle', 'lead'],
    scheduled: ['titleSoon', 'leadScheduled'],
    prequeue: ['titleSoon', 'leadPrequeue'],
    opening: ['titleOpen', 'lead'],
    waiting: ['title', 'lead'],
    paused: ['title', 'lead'],
    sold_out: ['titleSoldOut', 'leadSoldOut'],
    ended: ['titleEnded', 'leadEnded'],
  };

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
      titleSoon: 'The sale opens soon',
      leadScheduled: 'Keep this page open: it joins the pre-queue for you shortly before the sale. When the sale opens, everyone in the pre-queue gets a random place in line, so there is no need to refresh.',
      leadPrequeue: 'Keep this page open. You get your place when the sale opens, and when it is your turn this page takes you on automatically.',
      prequeued: 'You are in the pre-queue. When the sale opens, everyone in the pre-queue gets a random place in line.',
      countdown: 'The sale opens in {time}',
      day: '1 day',
      days: '{d} days',
      titleOpen: 'The sale is open',
      opening: 'The sale is open! Getting your place in line…',
      paused: 'The sale is paused — you keep your place.',
      resumed: 'The sale has resumed. Getting your place in line…',
      titleSoldOut: 'Sold out',
      leadSoldOut: 'Everything on sale has been sold. Thank you for waiting.',
      titleEnded: 'The sale has ended',
      leadEnded: 'This sale is over. Thank you for waiting.',
      commitment: 'Draw commitment:',
      verify: 'How the draw works',
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
      titleSoon: '곧 판매가 시작됩니다',
      leadScheduled: '이 페이지를 열어 두세요. 판매 시작 전에 자동으로 사전 대기열에 들어갑니다. 판매가 시작되면 사전 대기열의 모든 분께 무작위로 순번이 배정되므로 새로고침할 필요가 없습니다.',
      leadPrequeue: '이 페이지를 열어 두세요. 판매가 시작되면 순번이 정해지고, 차례가 되면 이 페이지가 자동으로 이동합니다.',
      prequeued: '사전 대기열에 들어왔습니다. 판매가 시작되면 사전 대기열의 모든 분께 무작위로 순번이 배정됩니다.',
      countdown: '판매 시작까지 {time}',
      day: '1일',
      days: '{d}일',
      titleOpen: '판매가 시작되었습니다',
      opening: '판매가 시작되었습니다! 대기 순번을 받는 중입니다…',
      paused: '판매가 일시 중지되었습니다. 내 순서는 그대로 유지됩니다.',
      resumed: '판매가 다시 시작되었습니다. 대기 순번을 확인하는 중입니다…',
      titleSoldOut: '매진되었습니다',
      leadSoldOut: '준비된 수량이 모두 판매되었습니다. 기다려 주셔서 감사합니다.',
      titleEnded: '판매가 종료되었습니다',
      leadEnded: '이번 판매는 끝났습니다. 기다려 주셔서 감사합니다.',
      commitment: '추첨 사전 공개값:',
      verify: '추첨 방식 알아보기',
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

  /** A countdown: 04:59, 1:04:59, 2 days 04:05:06. */
  function formatCountdown(seconds, s) {
    var t = Math.max(0, Math.floor(seconds));
    var two = function (n) {
      return (n < 10 ? '0' : '') + n;
    };
    var d = Math.floor(t / 86400);
    var h = Math.floor(t / 3600) % 24;
    var ms = two(Math.floor(t / 60) % 60) + ':' + two(t % 60);
    if (d > 0) return (d === 1 ? s.day : fill(s.days, { d: d })) + ' ' + two(h) + ':' + ms;
    return h > 0 ? h + ':' + ms : ms;
  }

  /** Progress 0–1 from the first people-ahead count seen to zero. */
  function progress(firstAhead, ahead) {
    if (!(firstAhead > 0)) return ahead > 0 ? 0 : 1;
    return Math.min(1, Math.max(0, (firstAhead - ahead) / firstAhead));
  }

  /**
   * Bounds {lo, hi} on the server clock minus the page's clock (ms), narrowed by one answer:
   * its `Date` header (whole seconds) plus `Age` (whole seconds, from a cache) was the server's
   * time somewhere between sending the request and reading the answer. Bounds that no longer
   * overlap (the page's clock was changed) start again from this answer.
   */
  function clockBounds(bounds, date, age, sent, received) {
    var at = Date.parse(date || '');
    if (isNaN(at) || !(received >= sent)) return bounds;
    var a = /^\d+$/.test(String(age || '').trim()) ? Number(age) * 1000 : 0;
    var lo = at + a - received;
    var hi = at + a + (a ? 2000 : 1000) - sent;
    if (bounds && lo <= bounds.hi && hi >= bounds.lo) return { lo: Math.max(lo, bounds.lo), hi: Math.min(hi, bounds.hi) };
    return { lo: lo, hi: hi };
  }

  /** The best guess of server minus page clock (ms) within `bounds`; 0 when unknown. */
  function clockOffset(bounds) {
    if (!bounds) return 0;
    if (isFinite(bounds.lo) && isFinite(bounds.hi)) return (bounds.lo + bounds.hi) / 2;
    return Math.min(Math.max(0, bounds.lo), bounds.hi);
  }

  /** The operator's message {en?, ko?} in `lang`, else in the other language; '' if none. */
  function messageText(message, lang) {
    if (typeof message === 'string') return message.trim();
    if (!message || typeof message !== 'object') return '';
    var other = lang === 'ko' ? 'en' : 'ko';
    var text = typeof message[lang] === 'string' && message[lang].trim() ? message[lang] : message[other];
    return typeof text === 'string' ? text.trim() : '';
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
    var shown = '';
    var timer = null;
    var pending = null;
    var resumeAt = 0;
    var errors = 0;
    var rejoins = 0;
    var stopped = false;
    var announced = { at: -Infinity, ahead: null };
    // The sale as the page knows it: the page's state (MODES, plus `leaving`, `stopped`), the
    // opening time (unix s), the operator's message, the server's clock.
    var mode = 'starting';
    var opensAt = null;
    var spreadFor = null;
    var banner = null;
    var clock = null;
    var statusAt = -Infinity;
    var tickTimer = null;
    var mark = 0;
    var markFor = null;
    // What the live region says in reply to one answer, said together at its end (the
    // operator's message last).
    var speech = null;
    var tail = null;

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
    function serverNow() {
      return env.now() + clockOffset(clock);
    }

    // -- The live region: one polite announcement per answer or tick, never every second --
    function say(text, atEnd) {
      if (!text) return;
      if (speech) (atEnd ? tail : speech).push(text);
      else el('status').textContent = text;
    }
    function batch(fn) {
      return function (arg) {
        speech = [];
        tail = [];
        try {
          return fn(arg);
        } finally {
          var text = speech.concat(tail).join(' ');
          speech = tail = null;
          if (text) el('status').textContent = text;
        }
      };
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
      if (last && mode !== 'closed') {
        render(last, false);
        el('status').textContent = fill(s.waiting, { position: number(last.position), ahead: number(last.ahead) });
      }
      if (message) show(message.key, message.values, message.isError);
      renderBanner(false);
      countdown(false);
    }

    function show(key, values, isError) {
      message = key ? { key: key, values: values || {}, isError: !!isError } : null;
      var text = key ? fill(STRINGS[lang][key], message.values) : '';
      var box = el('error');
      // Errors go to the alert box; other messages to the visible line and the live region
      // (when they change).
      box.hidden = !isError;
      box.textContent = isError ? text : '';
      el('message').hidden = isError || !key;
      el('message').textContent = isError ? '' : text;
      if (key && !isError && text !== shown) say(text);
      shown = key && !isError ? text : '';
      el('backwrap').hidden = !TERMINAL.hasOwnProperty(key) && mode !== 'closed';
      el('back').textContent = STRINGS[lang][TERMINAL[key] || 'back'];
    }

    // The page's state: `data-state` on #room, the title and lead, what is shown.
    function setMode(m, reason) {
      mode = m;
      el('room').setAttribute('data-state', m);
      var keys = MODES[m === 'closed' ? reason : m];
      if (keys) {
        el('title').setAttribute('data-i18n', keys[0]);
        el('title').textContent = STRINGS[lang][keys[0]];
        el('lead').setAttribute('data-i18n', keys[1]);
        el('lead').textContent = STRINGS[lang][keys[1]];
      }
      if (m === 'scheduled' || m === 'prequeue' || m === 'closed') el('queue').hidden = true;
      el('keep').hidden = m === 'closed';
      countdown(false);
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
        say(fill(s.waiting, { position: number(data.position), ahead: number(data.ahead) }));
      }
    }

    // The operator's message: plain text (textContent only), in the page's language.
    function setBanner(m) {
      banner = m === undefined || m === null ? null : m;
      renderBanner(true);
    }
    function renderBanner(announce) {
      var text = messageText(banner, lang);
      var box = el('banner');
      if (box.textContent !== text && announce) say(text, true);
      box.textContent = text;
      box.hidden = !text;
    }

    // The draw's commitment (hex SHA-256 of the seed) with a link to check it.
    function setDraw(commitment) {
      var ok = typeof commitment === 'string' && /^[0-9a-f]{64}$/i.test(commitment);
      if (ok) el('commitment').textContent = commitment;
      el('draw').hidden = !ok;
    }

    // The countdown to the open, by the server's clock; read aloud when the page enters a
    // state before the open and at a few marks (10 min, 1 min …), never every second. `run`:
    // also keep it ticking, and at zero open (only a tick or preOpen, never a re-render).
    function countdown(entering, run) {
      var box = el('countdown');
      box.hidden = (mode !== 'scheduled' && mode !== 'prequeue') || opensAt === null || stopped;
      if (box.hidden || run) {
        env.clearTimeout(tickTimer);
        tickTimer = null;
      }
      if (box.hidden) return;
      var left = opensAt * 1000 - serverNow();
      var secs = Math.max(0, Math.ceil(left / 1000));
      var text = fill(STRINGS[lang].countdown, { time: formatCountdown(secs, STRINGS[lang]) });
      box.textContent = text;
      var m = MARKS.filter(function (x) {
        return secs <= x;
      }).length;
      if (!run) return;
      if (entering || m > mark || markFor !== opensAt) say(text);
      mark = m;
      markFor = opensAt;
      if (left > 0) tickTimer = env.setTimeout(batch(tick), left % 1000 || 1000);
      else if (spreadFor !== opensAt) {
        // Once per opening time: if the server is late, the status document says when it opens.
        spreadFor = opensAt;
        opening('opening');
      }
    }
    function tick() {
      countdown(false, true);
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
    function halt(state) {
      stopped = true;
      env.clearTimeout(timer);
      env.clearTimeout(tickTimer);
      timer = tickTimer = null;
      pending = null;
      setMode(state);
    }

    // -- Talking to the tier-1 API --
    function call(method, path, init) {
      var sent = env.now();
      init = init || {};
      return env
        .fetch(path, { method: method, headers: { accept: 'application/json' }, cache: init.cache || 'no-store', credentials: init.credentials || 'same-origin' })
        .then(function (res) {
          return res.text().then(function (text) {
            var body = null;
            try {
              body = text ? JSON.parse(text) : null;
            } catch (e) {
              body = null;
            }
            clock = clockBounds(clock, res.headers.get('date'), res.headers.get('age'), sent, env.now());
            return { status: res.status, body: body && typeof body === 'object' ? body : {}, retryAfter: res.headers.get('retry-after') };
          });
        })
        .catch(function () {
          return { status: 0, body: {}, retryAfter: null };
        });
    }

    function go(url) {
      halt('leaving');
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

    // On to `next`: admitted, or the event is not gated (409, or `inactive`). Being sent back
    // here again and again within a minute means something in between does not let the
    // visitor through — the pass cookie is not kept (cookies blocked), or the edge still gates
    // an event the API says is not active (its configuration lags): the third time, stop and
    // say so (`stopKey`) instead of looping.
    function leave(stopKey) {
      var n = redirects().n + 1;
      redirects({ n: n, at: env.now() });
      if (n < LOOP_MAX) return go(next);
      halt('stopped');
      show(stopKey, {}, true);
    }

    function forget() {
      ticket = null;
      last = null;
      saveTicket();
    }

    // What an error answer means for the page; `retry` is what to try again.
    function failed(r, retry) {
      var code = r.body.error;
      if (r.status === 404 && code !== undefined) {
        halt('stopped');
        return show('notFound', {}, true);
      }
      if (r.status === 400 && retry === join) {
        halt('stopped');
        return show('badAddress', {}, true);
      }
      if (r.status === 409 && code === 'event_not_open') {
        // Not even in the pre-queue yet: count down, and join when the status document says so.
        setOpensAt(r.body.opensAt);
        return preOpen('scheduled');
      }
      if (r.status === 409 && code === 'event_closed') {
        if (r.body.message && typeof r.body.message === 'object') setBanner(r.body.message);
        return closed(r.body.closeReason);
      }
      if (r.status === 409) return leave('notOpen');
      // An expired or unusable ticket: join again; after three times in a row, with back-off.
      if (r.status === 410 || (retry === check && (r.status === 400 || r.status === 403))) {
        forget();
        if (++rejoins <= 3) return join('rejoin');
        retry = join;
      }
      backoff(r, retry, 0);
    }

    // Try `retry` again later: exponential back-off, or the server's Retry-After on 503/429;
    // never sooner than `least` seconds.
    function backoff(r, retry, least) {
      errors++;
      var after = r.status === 429 || r.status === 503 ? retryAfterSeconds(r.retryAfter, env.now()) : null;
      var seconds = Math.max(least, after !== null ? after * (1 + 0.2 * env.random()) : backoffSeconds(errors, env.random()));
      resumeAt = env.now() + seconds * 1000;
      show(r.status === 429 || r.status === 503 ? 'busy' : 'retry', { seconds: Math.ceil(seconds) }, true);
      schedule(retry, seconds);
    }

    function setOpensAt(value) {
      var t = Number(value);
      if (value !== null && value !== undefined && isFinite(t) && t > 0) opensAt = t;
    }

    // -- The states of the sale --

    // Before the open: the countdown, and the status document every ~10 s (fetched at once
    // unless it was just read).
    function preOpen(state) {
      var entering = mode !== state;
      setMode(state);
      show(state === 'prequeue' && ticket ? 'prequeued' : null);
      schedule(pollStatus, env.now() - statusAt < (STATUS_POLL_S * 1000) / 2 ? jitter(STATUS_POLL_S, env.random()) : 0);
      countdown(entering, true);
    }

    // The open (or the end of a pause): a random 0–5 s first, so a crowd does not call at once.
    function opening(key) {
      setMode('opening');
      show(key);
      schedule(ticket ? check : join, OPEN_SPREAD_S * env.random());
    }

    // Paused: keep the place and the numbers; read the status document every ~15 s.
    function paused() {
      setMode('paused');
      show('paused');
      schedule(pollStatus, jitter(PAUSED_POLL_S, env.random()));
    }

    function closed(reason) {
      halt('closed');
      show(null);
      setMode('closed', reason === 'sold_out' ? 'sold_out' : 'ended');
      el('backwrap').hidden = false;
      say(el('title').textContent + '. ' + el('lead').textContent);
    }

    // A pre-queue answer (assign or check): count down; once the opening time has come and the
    // server has not opened yet, ask again when it says.
    function prequeued(body) {
      setOpensAt(body.opensAt);
      var left = opensAt === null ? 1 : opensAt * 1000 - serverNow();
      if (left > (mode === 'opening' ? 10000 : 0)) return preOpen('prequeue');
      if (mode !== 'opening') {
        setMode('opening');
        show('opening');
      }
      schedule(check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
    }

    // A 200 answer of assign or check that is not an admission; `checked` = from a check (a
    // fresh assign proves less: the ticket could still be refused right after, so it does not
    // reset the back-off counters).
    function answered(body, checked) {
      setBanner(body.message);
      if (body.state === 'prequeue') return prequeued(body);
      if (body.state === 'closed') return closed(body.closeReason);
      if (checked) {
        errors = 0;
        rejoins = 0;
      }
      if (message) show(null);
      var ahead = Math.max(0, Number(body.peopleAhead !== undefined ? body.peopleAhead : body.position - body.servingCounter - 1) || 0);
      var first = ticket.firstAhead === undefined || ticket.firstAhead === null || ahead > ticket.firstAhead;
      if (first) ticket.firstAhead = ahead;
      // A pre-queue ticket learns its position from its first check after the open.
      var moved = body.position !== undefined && ticket.position !== body.position;
      if (moved) ticket.position = body.position;
      if (first || moved) saveTicket();
      render({ position: body.position, ahead: ahead, wait: body.estimatedWaitSeconds }, true);
      if (body.state === 'paused') return paused();
      setMode('waiting');
      schedule(check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
    }

    // The public status document (CDN-cached): read before joining, before the open and while
    // paused; never while waiting in an open sale (that is `check`).
    function pollStatus() {
      // The browser's own cache may answer (max-age=1); no request headers that ask a cache
      // to go to the origin, and no cookies: it is the same document for everyone.
      return call('GET', API + '/status/' + eventId, { cache: 'default', credentials: 'omit' }).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && typeof r.body.state === 'string') {
            errors = 0;
            statusAt = env.now();
            return onStatus(r.body);
          }
          if (r.status === 404 && r.body.error === 'event_not_found') return failed(r, pollStatus);
          // No status document here (an API without it, or not this answer): join; the
          // answers of assign and check say the state too.
          if (mode === 'starting' && r.status >= 200 && r.status < 500 && r.status !== 429) return join();
          backoff(r, pollStatus, mode === 'starting' ? 0 : mode === 'paused' ? PAUSED_POLL_S : STATUS_POLL_S);
        })
      );
    }

    function onStatus(d) {
      setBanner(d.message);
      setDraw(d.seedCommitment);
      setOpensAt(d.opensAt);
      // Without a Date header the last change is still a lower bound on the server's time.
      if (!clock && Number(d.updatedAt) > 0) clock = { lo: Number(d.updatedAt) * 1000 - env.now(), hi: Infinity };
      var served = ticket && ticket.position > 0 && Number(d.servingCounter) >= ticket.position;
      if (d.state === 'inactive') return leave('notOpen');
      if (d.state === 'closed') return served ? check() : closed(d.closeReason);
      if (d.state === 'scheduled') return preOpen('scheduled');
      if (d.state === 'prequeue') return ticket ? preOpen('prequeue') : join();
      if (mode === 'starting') return ticket ? check() : join();
      if (d.state === 'paused') return served ? check() : ticket ? paused() : join();
      // open (or a state this page does not know)
      opening(mode === 'paused' ? 'resumed' : 'opening');
    }

    function check() {
      return call('GET', API + '/check/' + eventId + '/' + encodeURIComponent(ticket.requestId)).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && r.body.admitted === true) return leave('noPass');
          if (r.status === 200 && r.body.admitted === false) return answered(r.body, true);
          failed(r, check);
        })
      );
    }

    function assign() {
      var existing = loadTicket();
      if (existing) {
        ticket = existing;
        return check();
      }
      return call('POST', API + '/assign/' + eventId).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && typeof r.body.requestId === 'string') {
            ticket = { requestId: r.body.requestId, position: r.body.position };
            saveTicket();
            return answered(r.body, false);
          }
          failed(r, join);
        })
      );
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
    setMode('starting');
    applyLang();
    if (!eventId) {
      halt('stopped');
      show('badAddress', {}, true);
      return;
    }
    el('verify').setAttribute('href', '/vwr/assets/verify.html?event=' + encodeURIComponent(eventId));
    doc.addEventListener('visibilitychange', onVisibility);
    // Another tab replacing the ticket (after re-joining): use the same place here.
    env.addEventListener('storage', function (e) {
      var t = e.key === ticketKey ? loadTicket() : null;
      if (t && (!ticket || t.requestId !== ticket.requestId)) ticket = t;
    });
    // Deliberately no unload handler: leaving or refreshing the page never gives up the place.
    // With a ticket, its check says the state; without one, the status document does (so a
    // page opened before the pre-queue does not call assign in vain).
    ticket = loadTicket();
    if (ticket) check();
    else pollStatus();
    return {
      state: function () {
        return { ticket: ticket, pending: !!pending, timer: timer !== null, errors: errors, stopped: stopped, lang: lang, next: next, mode: mode, opensAt: opensAt, clockOffset: clockOffset(clock) };
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
    formatCountdown: formatCountdown,
    progress: progress,
    clockBounds: clockBounds,
    clockOffset: clockOffset,
    messageText: messageText,
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
