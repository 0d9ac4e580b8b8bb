/* vwr waiting page: follows the sale of /vwr/{eventId} through its states (docs/lifecycle.md):
 * counts down, joins the pre-queue, keeps the ticket and its place across refreshes and tabs,
 * follows the line in the CDN-cached status document, calls `check` at its turn, then goes on
 * to `next`. Vanilla JS, no build step; under Node (tests) it only exports. static/README.md. */
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
  // A hidden tab calls every 30–42 s at most; at its turn it alerts and goes on 10 s later.
  var HIDDEN_POLL_S = 30;
  var TURN_HOLD_S = 10;
  // Countdown values (seconds left) at which the live region reads the countdown again.
  var MARKS = [3600, 600, 300, 60, 10];
  // A proof of work (docs/abuse.md): loaded only when `assign` asks; a challenge is good for
  // its minute and the next, so one not solved within 55 s is dropped for a new one.
  var POW_URL = '/vwr/assets/pow-worker.js';
  var POW_MAX_S = 55;
  // The tier-1 API's verdicts on a ticket (docs/api.md), the only answers that forget it; any
  // other keeps the ticket and its place, and is backed off (docs/invariants.md#15).
  var VERDICTS = /^(invalid_request_id|wrong_event|proof_required|request_id_expired|admission_expired|session_ended)$/;
  // Messages that end the page's work; each shows a link to `next`.
  var TERMINAL = { notFound: 'back', badAddress: 'back', notOpen: 'back', noPass: 'continue', signIn: 'back' };
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
      resumedLine: 'The sale has resumed — you keep your place.',
      turnTitle: '✅ It is your turn!',
      notify: 'Notify me when it is my turn',
      notifyOn: 'You will get a notification when it is your turn.',
      notifyOff: 'Notifications are blocked in this browser.',
      sound: 'Play a sound when it is my turn',
      pow: 'Checking your browser… this takes a few seconds.',
      signIn: 'Sign in on the site first, then come back.',
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
      resumedLine: '판매가 다시 시작되었습니다. 내 순서는 그대로 유지됩니다.',
      turnTitle: '✅ 내 차례가 되었습니다!',
      notify: '내 차례가 되면 알림 받기',
      notifyOn: '차례가 되면 알림을 보내 드립니다.',
      notifyOff: '이 브라우저에서 알림이 차단되어 있습니다.',
      sound: '내 차례가 되면 소리로 알리기',
      pow: '브라우저를 확인하는 중입니다… 몇 초 정도 걸립니다.',
      signIn: '먼저 사이트에 로그인한 뒤 다시 와 주세요.',
    },
  };

  // ---- Pure helpers (unit-tested) ----

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

  /** Seconds until the turn of `place` (1 = next) at `rate`/s; no rate: max(place ÷ 50, 5). */
  function waitSeconds(place, rate) {
    if (!(place > 0)) return 0;
    return rate > 0 ? Math.ceil(place / rate) : Math.max(Math.floor(place / 50), 5);
  }

  /** Seconds between polls in line: a quarter of the wait, 1–30 s (as `nextPollSeconds`). */
  function pollForWait(wait) {
    return Math.min(30, Math.max(1, (Number(wait) || 0) / 4));
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

  /** Bounds {lo, hi} on server minus page clock (ms), narrowed by one answer: its `Date` plus
   *  `Age` (whole s) was the server's time between sending and reading. Bounds that stop
   *  overlapping (the page's clock was set) start again. */
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

  // ---- The page ----

  /**
   * Runs the waiting room. `env` holds everything it touches, so tests can drive it:
   * {document, storage, fetch, setTimeout, clearTimeout, now, random, location: {pathname,
   * search, origin, replace}, languages, locks, tab (whose `name` is window.name),
   * addEventListener, Notification?, AudioContext?, Worker?}.
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
    var dueAt = 0;
    var resumeAt = 0;
    var errors = 0;
    var rejoins = 0;
    var refused = 0;
    var quit = null;
    var stopped = false;
    var announced = { at: -Infinity, ahead: null };
    // The page's state (MODES, `leaving`, `stopped`), the opening time (unix s), the
    // operator's message, the server's clock.
    var mode = 'starting';
    var opensAt = null;
    var spreadFor = null;
    var banner = null;
    var clock = null;
    var statusAt = -Infinity;
    var tickTimer = null;
    var mark = 0;
    var markFor = null;
    // What the live region says in reply to one answer (the operator's message last).
    var speech = null;
    var tail = null;
    // An API without the status document: `check` is polled in line, as before.
    var noStatus = false;
    var leaveTo = null;
    var turned = false;
    // The alerts at the turn in a hidden tab: a sound and a notification, both opt-in.
    var Notify = env.Notification || null;
    var sound = read('vwr.sound') === '1';
    var notifyOpt = read('vwr.notify') === '1';
    var asked = false;
    var audio = null;

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

    // -- The live region: one announcement per answer or tick --
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
      doc.title = turned ? s.turnTitle : s.htmlTitle;
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
      renderAlerts();
      countdown(false);
    }

    function show(key, values, isError) {
      message = key ? { key: key, values: values || {}, isError: !!isError } : null;
      var text = key ? fill(STRINGS[lang][key], message.values) : '';
      var box = el('error');
      // Errors to the alert box; others to the visible line and (changed) the live region.
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
      el('alerts').hidden = !/^(scheduled|prequeue|opening|waiting|paused)$/.test(m);
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
      // The live region: a change of people ahead, at most every 15 s.
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

    // -- The alerts of a hidden tab at its turn --
    function renderAlerts() {
      var s = STRINGS[lang];
      var p = Notify ? Notify.permission : 'denied';
      var on = notifyOpt && p === 'granted';
      // The button while the browser can still be asked; a note once on, or refused.
      el('notify').hidden = !Notify || on || p === 'denied';
      el('notified').hidden = !(on || (asked && p !== 'granted'));
      el('notified').textContent = on ? s.notifyOn : s.notifyOff;
      el('soundwrap').hidden = !env.AudioContext;
      el('sound').checked = sound;
    }
    function askNotify() {
      var done = function (p) {
        asked = true;
        if (p === 'granted') {
          notifyOpt = true;
          write('vwr.notify', '1');
        }
        renderAlerts();
      };
      try {
        // Old Safari: a callback; the others: a promise.
        var r = Notify.requestPermission(done);
        if (r && r.then) r.then(done, done);
      } catch (e) {
        done('denied');
      }
    }
    // Sound needs a touch of the page first: the toggle (after a reload: any click or key).
    function audioOn() {
      if (!sound || !env.AudioContext) return null;
      try {
        if (!audio) audio = new env.AudioContext();
        if (audio.state === 'suspended' && audio.resume) audio.resume();
      } catch (e) {
        audio = null;
      }
      return audio;
    }
    function beep() {
      var a = audioOn();
      if (!a) return;
      try {
        var o = a.createOscillator();
        var g = a.createGain();
        var t = a.currentTime;
        o.frequency.value = 880;
        g.gain.setValueAtTime(0.2, t);
        g.gain.exponentialRampToValueAtTime(0.001, t + 0.5);
        o.connect(g);
        g.connect(a.destination);
        o.start(t);
        o.stop(t + 0.5);
      } catch (e) {
        // No sound; the title and the notification still tell.
      }
    }
    function alertTurn() {
      var s = STRINGS[lang];
      turned = true;
      doc.title = s.turnTitle;
      if (sound) beep();
      if (!Notify || !notifyOpt || Notify.permission !== 'granted') return;
      try {
        var n = new Notify(s.turnTitle, { body: s.admitted, tag: 'vwr-' + eventId, lang: lang });
        n.onclick = function () {
          if (env.tab && env.tab.focus) env.tab.focus();
        };
      } catch (e) {
        // Android Chrome: service-worker notifications only.
      }
    }

    // The draw's commitment (hex SHA-256 of the seed) with a link to check it.
    function setDraw(commitment) {
      var ok = typeof commitment === 'string' && /^[0-9a-f]{64}$/i.test(commitment);
      if (ok) el('commitment').textContent = commitment;
      el('draw').hidden = !ok;
    }

    // The countdown to the open on the server's clock, read aloud on entering a state and at
    // a few marks, never every second. `run`: keep it ticking, and open at zero.
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

    // -- Timers: hidden, every 30–42 s at most; shown again, at once --
    function hidden() {
      return doc.visibilityState === 'hidden';
    }
    function schedule(fn, seconds) {
      pending = fn;
      dueAt = env.now() + seconds * 1000;
      arm(false);
    }
    function arm(atOnce) {
      env.clearTimeout(timer);
      timer = null;
      if (!pending || stopped) return;
      var ms = (atOnce ? resumeAt : dueAt) - env.now();
      if (hidden()) ms = Math.max(ms, HIDDEN_POLL_S * 1000 * (1 + 0.4 * env.random()));
      timer = env.setTimeout(runPending, Math.max(0, ms));
    }
    function runPending() {
      timer = null;
      var fn = pending;
      pending = null;
      if (fn && !stopped) fn();
    }
    function onVisibility() {
      if (leaveTo) return hidden() ? null : out();
      arm(!hidden());
    }
    function halt(state) {
      stopped = true;
      env.clearTimeout(timer);
      env.clearTimeout(tickTimer);
      timer = tickTimer = null;
      pending = null;
      if (quit) quit(null);
      setMode(state);
    }

    // -- Talking to the tier-1 API --
    function call(method, path, init) {
      var sent = env.now();
      init = init || {};
      var headers = init.headers || {};
      headers.accept = 'application/json';
      return env
        .fetch(path, { method: method, headers: headers, body: init.body, cache: init.cache || 'no-store', credentials: init.credentials || 'same-origin' })
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

    // On to `url`; admitted (`turn`) in a hidden tab: the alerts, then 10 s (or until shown).
    function go(url, turn) {
      halt('leaving');
      show('admitted');
      leaveTo = url;
      if (!turn || !hidden()) return out();
      alertTurn();
      timer = env.setTimeout(out, TURN_HOLD_S * 1000);
    }
    function out() {
      var url = leaveTo;
      leaveTo = null;
      env.clearTimeout(timer);
      if (url) env.location.replace(url);
    }

    // Redirects to `next` made lately, {n, at}: in localStorage, or (blocked with cookies) in
    // window.name, which lasts across the tab's same-site navigations.
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

    // On to `next`: admitted, or not gated (409, `inactive`). Sent back here again and again
    // within a minute (cookie not kept, or the edge lags the API): the third time, stop and
    // say so (`stopKey`) instead of looping.
    function leave(stopKey) {
      var n = redirects().n + 1;
      redirects({ n: n, at: env.now() });
      if (n < LOOP_MAX) return go(next, stopKey === 'noPass');
      halt('stopped');
      show(stopKey, {}, true);
    }

    function forget() {
      ticket = null;
      last = null;
      saveTicket();
    }

    // What an error answer means for the page (by the API's code); `retry`: what to try again.
    function failed(r, retry) {
      var code = r.body.error;
      if (code === 'event_not_found') {
        halt('stopped');
        return show('notFound', {}, true);
      }
      if (code === 'invalid_event_id' || code === 'enqueue_token_required') {
        // A bad address, or only the site's signed-in visitors may join: nothing to retry.
        halt('stopped');
        return show(code === 'invalid_event_id' ? 'badAddress' : 'signIn', {}, true);
      }
      if (code === 'event_not_open') {
        // Not even in the pre-queue yet: count down, and join when the status document says so.
        setOpensAt(r.body.opensAt);
        return preOpen('scheduled');
      }
      if (code === 'event_closed') {
        if (r.body.message && typeof r.body.message === 'object') setBanner(r.body.message);
        return closed(r.body.closeReason);
      }
      if (code === 'event_not_active') return leave('notOpen');
      // A verdict on the ticket (403 proof_required: one stored without its secret): join
      // again; after three times in a row, with back-off.
      if (retry === check && VERDICTS.test(code)) {
        forget();
        if (++rejoins <= 3) return join('rejoin');
        retry = join;
      }
      backoff(r, retry, 0);
    }

    // Try `retry` again later: exponential back-off, or any Retry-After given; never sooner
    // than `least` seconds.
    function backoff(r, retry, least) {
      errors++;
      var after = retryAfterSeconds(r.retryAfter, env.now());
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

    // Before the open: the countdown, and the status document every ~10 s.
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

    // A pre-queue answer: count down; past the opening time (a late server), ask again.
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

    // A 200 answer of assign or check, not an admission; `checked`: from a check (only that
    // resets the back-off counters: a fresh ticket could still be refused).
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
      // Kept with the ticket: the place (a pre-queue ticket learns it at its first check) and
      // the rate the estimate implies.
      var wait = Number(body.estimatedWaitSeconds);
      var changed = track(ahead);
      if (body.position !== undefined) changed = keep('position', body.position) || changed;
      if (wait > 0) changed = keep('rate', (ahead + 1) / wait) || changed;
      if (changed) saveTicket();
      render({ position: body.position, ahead: ahead, wait: body.estimatedWaitSeconds }, true);
      if (body.state === 'paused') return paused();
      setMode('waiting');
      // The first look after the server's hint; then the page's own.
      schedule(placed() && !noStatus ? pollStatus : check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
    }

    function placed() {
      return !!ticket && ticket.position > 0;
    }
    function keep(k, v) {
      var was = ticket[k];
      ticket[k] = v;
      return was !== v;
    }
    // The first people-ahead count seen (where the progress bar starts).
    function track(ahead) {
      return !(typeof ticket.firstAhead === 'number' && ahead <= ticket.firstAhead) && keep('firstAhead', ahead);
    }

    // The place from the status document: ahead = position − servingCounter − 1; the wait at
    // its servedPerSecond, else at the rate of the last estimate. Answers the wait (s).
    function local(d) {
      var place = Math.max(1, ticket.position - Math.max(0, Number(d.servingCounter) || 0));
      var wait = waitSeconds(place, Number(d.servedPerSecond) > 0 ? Number(d.servedPerSecond) : ticket.rate);
      if (track(place - 1)) saveTicket();
      render({ position: ticket.position, ahead: place - 1, wait: wait }, true);
      return wait;
    }

    // In line: only the status document, every quarter of the wait (1–30 s), until the turn.
    function inLine(d, key) {
      setMode('waiting');
      show(key || null);
      schedule(pollStatus, jitter(pollForWait(local(d)), env.random()));
    }

    // The public status document (CDN-cached): polled in every state before the close.
    function pollStatus() {
      // No header that skips a cache, no cookies: the same document for everyone.
      return call('GET', API + '/status/' + eventId, { cache: 'default', credentials: 'omit' }).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && typeof r.body.state === 'string') {
            errors = 0;
            statusAt = env.now();
            return onStatus(r.body);
          }
          if (r.body.error === 'event_not_found') return failed(r, pollStatus);
          // No status document here (an older API's router: 404 not_found): assign and check say
          // the state too.
          if ((mode === 'starting' || mode === 'waiting') && r.status === 404 && r.body.error === 'not_found') {
            noStatus = true;
            return ticket ? check() : join();
          }
          backoff(r, pollStatus, mode === 'starting' || mode === 'waiting' ? 0 : mode === 'paused' ? PAUSED_POLL_S : STATUS_POLL_S);
        })
      );
    }

    function onStatus(d) {
      setBanner(d.message);
      setDraw(d.seedCommitment);
      setOpensAt(d.opensAt);
      // Without a Date header the last change is still a lower bound on the server's time.
      if (!clock && Number(d.updatedAt) > 0) clock = { lo: Number(d.updatedAt) * 1000 - env.now(), hi: Infinity };
      var served = placed() && Number(d.servingCounter) >= ticket.position;
      if (d.state === 'inactive' || d.state === 'standby') return leave('notOpen');
      if (d.state === 'closed') return served ? check() : closed(d.closeReason);
      if (d.state === 'scheduled') return preOpen('scheduled');
      if (d.state === 'prequeue') return ticket ? preOpen('prequeue') : join();
      if (served) {
        if (mode === 'waiting') local(d);
        return check();
      }
      // No place yet (no ticket, a pre-queue ticket): join, or check the ticket.
      if (mode === 'starting' && !placed()) return ticket ? check() : join();
      if (d.state === 'paused') {
        if (!ticket) return join();
        if (placed()) local(d);
        return paused();
      }
      // open (or a state this page does not know)
      if (placed()) return inLine(d, mode === 'paused' ? 'resumedLine' : null);
      opening(mode === 'paused' ? 'resumed' : 'opening');
    }

    // The secret proves the ticket is this browser's: a header only, never in a URL or the page.
    function check() {
      var h = ticket.secret ? { 'x-vwr-request-secret': ticket.secret } : {};
      return call('GET', API + '/check/' + eventId + '/' + encodeURIComponent(ticket.requestId), { headers: h }).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && r.body.admitted === true) return leave('noPass');
          if (r.status === 200 && r.body.admitted === false) return answered(r.body, true);
          failed(r, check);
        })
      );
    }

    // `pow`: a solved proof of work {challenge, nonce}. Answers when the join is done (the
    // proof included, so the tabs' lock is held throughout).
    function assign(pow) {
      var existing = loadTicket();
      if (existing) {
        ticket = existing;
        return check();
      }
      var init = pow ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pow: pow }) } : null;
      return call('POST', API + '/assign/' + eventId, init).then(
        batch(function (r) {
          if (stopped) return;
          if (r.status === 200 && typeof r.body.requestId === 'string') {
            refused = 0;
            ticket = { requestId: r.body.requestId, secret: r.body.requestSecret, position: r.body.position };
            saveTicket();
            return answered(r.body, false);
          }
          // A proof of work first; a refused one (expired, replayed) with the new challenge,
          // three times in a row, then with back-off.
          if (r.status === 403 && r.body.error === 'challenge_required' && typeof r.body.challenge === 'string') {
            if (!pow || ++refused < 3) return work(r.body);
            refused = 0;
          }
          failed(r, join);
        })
      );
    }

    // Solves challenge `c` in a Web Worker (pow-worker.js), else (no Worker) with the same file
    // as a script, here in slices; then joins with it, or after POW_MAX_S without (a new one).
    function work(c) {
      show('pow');
      return new Promise(function (resolve) {
        var w, stop;
        var timer = env.setTimeout(end, POW_MAX_S * 1000);
        function end(nonce) {
          env.clearTimeout(timer);
          if (w) w.terminate();
          if (stop) stop();
          w = stop = quit = null;
          resolve(nonce);
        }
        function here() {
          if (w) w.terminate();
          var s = doc.createElement('script');
          s.src = POW_URL;
          // (Not loaded: the timer above tries a new challenge.)
          s.onload = function () {
            if (quit === end) stop = env.tab.vwrPow.solveSliced(c.challenge, c.difficulty, end, env.setTimeout);
          };
          doc.head.appendChild(s);
        }
        quit = end;
        try {
          w = new env.Worker(POW_URL);
          w.onmessage = function (e) {
            end(e.data.nonce);
          };
          w.onerror = here;
          w.postMessage(c);
        } catch (e) {
          here();
        }
      }).then(function (nonce) {
        if (!stopped) return assign(nonce ? { challenge: c.challenge, nonce: nonce } : null);
      });
    }

    // A cross-tab lock where there is one: two tabs opened together get one place.
    function join(reason) {
      if (!message || !message.isError) show(reason === 'rejoin' ? 'rejoin' : 'joining');
      if (env.locks && env.locks.request) {
        return env.locks.request('vwr-join-' + eventId, function () {
          return assign();
        });
      }
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
    el('notify').addEventListener('click', askNotify);
    el('sound').addEventListener('change', function () {
      sound = !!el('sound').checked;
      write('vwr.sound', sound ? '1' : null);
      beep(); // a sample (and the audio starts)
    });
    doc.addEventListener('click', audioOn);
    doc.addEventListener('keydown', audioOn);
    // A ticket without a place (pre-queue, older page) is checked first; otherwise the status
    // document says the state (and no page joins before the pre-queue).
    ticket = loadTicket();
    if (ticket && !placed()) check();
    else pollStatus();
    return {
      state: function () {
        return { ticket: ticket, pending: !!pending, timer: timer !== null, errors: errors, stopped: stopped, lang: lang, next: next, mode: mode, opensAt: opensAt, clockOffset: clockOffset(clock), noStatus: noStatus };
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
    waitSeconds: waitSeconds,
    pollForWait: pollForWait,
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
      Notification: window.Notification,
      AudioContext: window.AudioContext || window.webkitAudioContext,
      Worker: window.Worker,
    });
  }
})();
