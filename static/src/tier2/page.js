/* vwr tier 2's booking page, /vwr/queue/{eventId} (queue/index.html): its texts in English and
 * Korean, the page on its client (client.js), and the script's end: under Node (tests) it only
 * exports; in a browser it defines window.VwrTier2 and, on the booking page, runs it. Part of
 * queue/tier2.js (static/build.mjs); static/queue/README.md. */

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

/**
 * Runs the booking page: `env` = {document, storage, location: {pathname, search, origin},
 * languages, client: the client's env}. Returns its client (window.tier2), or null for an
 * address without an event id.
 */
function page(env) {
  var doc = env.document;
  var eventId = eventIdFrom(env.location.pathname);
  var next = safeNext(queryParam(env.location.search, 'next'), env.location.origin);
  var lang = pickLang(getItem(env.storage, 'vwr.lang'), env.languages);
  var last = { phase: 'idle' };
  var said = { at: -Infinity, position: null, phase: null };
  var problem = eventId ? null : 'badAddress';
  var now = env.client && env.client.now ? env.client.now : Date.now;

  function el(id) {
    return doc.getElementById(id);
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
      el('position').textContent = formatNumber(q.position, lang);
      el('ahead').textContent = formatNumber(q.ahead, lang);
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
      text = fill(s.waiting, { position: formatNumber(q.position, lang), ahead: formatNumber(q.ahead, lang) });
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
    setItem(env.storage, 'vwr.lang', lang); // (storage blocked: the choice lasts for this page)
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