/* vwr "Check the draw" page (verify.html?event={eventId}): recomputes a visitor's drawn
 * position from the revealed seed, the sealed counts and their ticket, and checks the seed
 * against the commitment published before the pre-queue opened (docs/fairness.md).
 * Everything is computed here with draw.js (loaded first); the only request is the public
 * status document. Under Node (tests) the script only exports its functions. assets/verify.js
 * is this file after ../rules.js (static/build.mjs). */

var API = '/vwr-api/vwr';
var EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

var STRINGS = {
  en: {
    htmlTitle: 'Check the draw',
    title: 'Check the draw',
    lead: 'At the opening, everyone in the pre-queue got a place by a random draw. The draw was fixed before anyone joined: its seed was committed to in advance and revealed at the opening. Here you can recompute your place yourself.',
    event: 'Event',
    load: 'Load the published draw',
    seed: 'Seed (revealed at the opening)',
    commitment: 'Commitment (published before the pre-queue opened)',
    counts: 'Sealed counts (one per shard, separated by commas)',
    ticket: 'Your ticket',
    manual: 'Or without a ticket: the number of people in the pre-queue (P) and a rank from 0 to P − 1.',
    size: 'People in the pre-queue (P)',
    rank: 'Rank (0 to P − 1)',
    check: 'Check',
    preIndex: 'Pre-queue index',
    rankOut: 'Rank',
    sizeOut: 'Pre-queue size (P)',
    position: 'Drawn position',
    how: 'Position = 1 + π(seed, P, rank): a permutation of 0 … P − 1 keyed by the seed. The rank is the number of pre-queue tickets below yours, from the sealed counts. Everything is computed in this browser.',
    commitOk: 'The seed matches the commitment published before the pre-queue opened (SHA-256 of the seed: {commitment}).',
    commitBad: 'The seed does NOT match the published commitment: SHA-256 of the seed is {commitment}, the commitment is {published}.',
    commitNone: 'No commitment given to check the seed against. SHA-256 of the seed: {commitment}.',
    result: 'Your drawn position is {position} of {size}.',
    regular: 'This ticket joined after the opening, so it was not part of the draw: its position is P + {join} = {position}.',
    regularNoP: 'This ticket joined after the opening, so it was not part of the draw (join index {join}).',
    notRevealed: 'The seed is revealed at the opening. Until then, keep its commitment: {commitment}',
    noDraw: 'This event has no draw: it had no pre-queue.',
    loading: 'Loading the published draw…',
    needSeed: 'Enter the seed (64 hexadecimal characters).',
    badSeed: 'The seed must be 64 hexadecimal characters.',
    needInput: 'Enter your ticket and the sealed counts, or P and a rank.',
    needCounts: 'Enter the sealed counts to find the rank of your ticket.',
    badCounts: 'The sealed counts must be whole numbers separated by commas.',
    badNumber: 'P and the rank must be whole numbers.',
    badTicket: 'This ticket is not valid.',
    notInPrequeue: 'This ticket (pre-queue index {index}) is not in the sealed pre-queue.',
    outOfRange: 'The rank must be between 0 and P − 1.',
    sizeZero: 'P must be at least 1.',
    sizeTooLarge: 'P is larger than the largest supported draw (2^62).',
    noCrypto: 'This browser cannot compute SHA-256 on this page (Web Crypto needs a secure https page).',
    wrongEvent: 'This ticket is for event {ticketEvent}, not {eventId}.',
    badEvent: 'This event id is not valid.',
    notFound: 'There is no event with this id.',
    loadFailed: 'Could not load the published draw. You can still enter the values by hand.',
    failed: 'The check failed: {detail}',
    other: '한국어',
  },
  ko: {
    htmlTitle: '추첨 확인',
    title: '추첨 확인',
    lead: '판매가 열리는 순간, 사전 대기열의 모든 분이 무작위 추첨으로 순번을 받았습니다. 추첨은 첫 입장 전에 이미 정해져 있었습니다. 추첨 시드의 커밋먼트를 미리 공개했고, 시드는 오픈 시각에 공개합니다. 여기에서 내 순번을 직접 다시 계산해 볼 수 있습니다.',
    event: '공연 ID',
    load: '공개된 추첨 정보 불러오기',
    seed: '시드 (오픈 시각에 공개)',
    commitment: '커밋먼트 (사전 대기열 시작 전에 공개)',
    counts: '확정된 인원 수 (샤드별, 쉼표로 구분)',
    ticket: '내 티켓',
    manual: '티켓 없이 확인하려면: 사전 대기열 인원(P)과 0부터 P − 1 사이의 순위를 입력하세요.',
    size: '사전 대기열 인원 (P)',
    rank: '순위 (0부터 P − 1)',
    check: '확인',
    preIndex: '사전 대기 번호',
    rankOut: '순위',
    sizeOut: '사전 대기열 인원 (P)',
    position: '추첨된 순번',
    how: '순번 = 1 + π(시드, P, 순위): 시드로 정해지는 0 … P − 1의 순열입니다. 순위는 확정된 인원 수로 계산한, 내 티켓보다 앞선 사전 대기 티켓의 수입니다. 모든 계산은 이 브라우저 안에서 이루어집니다.',
    commitOk: '시드가 사전 대기열 시작 전에 공개된 커밋먼트와 일치합니다 (시드의 SHA-256: {commitment}).',
    commitBad: '시드가 공개된 커밋먼트와 일치하지 않습니다: 시드의 SHA-256은 {commitment}, 커밋먼트는 {published}입니다.',
    commitNone: '비교할 커밋먼트가 없습니다. 시드의 SHA-256: {commitment}.',
    result: '추첨된 내 순번은 {size}명 중 {position}번입니다.',
    regular: '이 티켓은 오픈 이후에 입장하여 추첨 대상이 아닙니다. 순번은 P + {join} = {position}번입니다.',
    regularNoP: '이 티켓은 오픈 이후에 입장하여 추첨 대상이 아닙니다 (입장 번호 {join}).',
    notRevealed: '시드는 오픈 시각에 공개됩니다. 그때까지 이 커밋먼트를 보관해 두세요: {commitment}',
    noDraw: '이 공연에는 추첨이 없습니다 (사전 대기열이 없었습니다).',
    loading: '공개된 추첨 정보를 불러오는 중…',
    needSeed: '시드(16진수 64자)를 입력하세요.',
    badSeed: '시드는 16진수 64자여야 합니다.',
    needInput: '내 티켓과 확정된 인원 수, 또는 P와 순위를 입력하세요.',
    needCounts: '티켓의 순위를 계산하려면 확정된 인원 수를 입력하세요.',
    badCounts: '확정된 인원 수는 쉼표로 구분한 정수여야 합니다.',
    badNumber: 'P와 순위는 정수여야 합니다.',
    badTicket: '티켓 형식이 올바르지 않습니다.',
    notInPrequeue: '이 티켓(사전 대기 번호 {index})은 확정된 사전 대기열에 없습니다.',
    outOfRange: '순위는 0부터 P − 1 사이여야 합니다.',
    sizeZero: 'P는 1 이상이어야 합니다.',
    sizeTooLarge: 'P가 지원하는 최대 크기(2^62)보다 큽니다.',
    noCrypto: '이 페이지에서는 브라우저가 SHA-256을 계산할 수 없습니다 (Web Crypto는 https 페이지에서만 동작합니다).',
    wrongEvent: '이 티켓은 {eventId} 공연이 아니라 {ticketEvent} 공연의 티켓입니다.',
    badEvent: '공연 ID가 올바르지 않습니다.',
    notFound: '이 ID의 공연이 없습니다.',
    loadFailed: '공개된 추첨 정보를 불러오지 못했습니다. 값을 직접 입력해도 됩니다.',
    failed: '확인하지 못했습니다: {detail}',
    other: 'English',
  },
};

// draw.js error codes → messages.
var ERRORS = {
  bad_hex: 'badSeed',
  bad_number: 'badNumber',
  size_zero: 'sizeZero',
  size_too_large: 'sizeTooLarge',
  index_out_of_range: 'outOfRange',
  not_in_prequeue: 'notInPrequeue',
  bad_ticket: 'badTicket',
  no_crypto: 'noCrypto',
};

// ---- Pure rules (unit-tested) ----

/** "3, 2,4" → ['3', '2', '4']; null unless every entry is a whole number. */
function parseCounts(text) {
  var list = String(text || '').split(/[\s,]+/).filter(Boolean);
  if (!list.length) return null;
  for (var i = 0; i < list.length; i++) if (!/^\d{1,20}$/.test(list[i])) return null;
  return list;
}

// ---- The page ------------------------------------------------------------------------

/**
 * Runs the page. `env`: {document, storage, fetch, location: {search}, languages, draw (the
 * VwrDraw API of draw.js)}. Returns {ready (a promise: the first load and check),
 * check(), load(), view()}.
 */
function start(env) {
  var doc = env.document;
  var draw = env.draw;
  var lang = pickLang(getItem(env.storage, 'vwr.lang'), env.languages);
  // What is shown, kept so a language switch can render it again.
  var view = { commit: null, message: null, result: null };
  var run = 0;

  function el(id) {
    return doc.getElementById(id);
  }
  function val(id) {
    return String(el(id).value || '').trim();
  }
  /** The ticket the waiting page stored for this event ({requestId, …} in localStorage). */
  function storedTicket(eventId) {
    try {
      var t = JSON.parse(getItem(env.storage, 'vwr.ticket.' + eventId));
      return t && typeof t.requestId === 'string' && t.requestId ? t.requestId : null;
    } catch (e) {
      return null;
    }
  }

  // -- Rendering (textContent only: values come from the page's inputs and the network) --
  function text(m) {
    var values = {};
    for (var k in m.values) if (Object.prototype.hasOwnProperty.call(m.values, k)) values[k] = typeof m.values[k] === 'bigint' ? formatNumber(m.values[k], lang) : m.values[k];
    return fill(STRINGS[lang][m.key], values);
  }
  function render() {
    var s = STRINGS[lang];
    doc.documentElement.setAttribute('lang', lang);
    doc.title = s.htmlTitle;
    var nodes = doc.querySelectorAll('[data-i18n]');
    for (var i = 0; i < nodes.length; i++) nodes[i].textContent = s[nodes[i].getAttribute('data-i18n')];
    var toggle = el('lang');
    toggle.textContent = s.other;
    toggle.setAttribute('lang', lang === 'ko' ? 'en' : 'ko');

    var commit = el('commitcheck');
    commit.hidden = !view.commit;
    commit.className = view.commit && view.commit.isError ? 'error' : 'status';
    commit.textContent = view.commit ? text(view.commit) : '';
    var msg = view.message;
    el('message').hidden = !msg || msg.isError;
    el('message').textContent = msg && !msg.isError ? text(msg) : '';
    el('error').hidden = !msg || !msg.isError;
    el('error').textContent = msg && msg.isError ? text(msg) : '';

    var r = view.result;
    el('result').hidden = !r;
    el('r-preindex').textContent = r && r.preIndex !== null ? formatNumber(r.preIndex, lang) : '–';
    el('r-rank').textContent = r ? formatNumber(r.rank, lang) : '–';
    el('r-size').textContent = r ? formatNumber(r.size, lang) : '–';
    el('r-position').textContent = r ? formatNumber(r.position, lang) : '–';
  }
  function announce(m) {
    el('status').textContent = m ? text(m) : '';
  }
  function setMessage(key, values, isError) {
    view.message = key ? { key: key, values: values || {}, isError: !!isError } : null;
    render();
    announce(view.message);
  }
  function fail(key, values) {
    setMessage(key, values, true);
  }
  function failWith(e, values) {
    var key = e && ERRORS[e.code];
    if (key) fail(key, values);
    else fail('failed', { detail: e && e.message ? e.message : String(e) });
  }

  // -- The check --
  async function check() {
    var mine = ++run;
    view = { commit: null, message: null, result: null };
    render();
    var seed = val('seed');
    if (!seed) return fail('needSeed');
    var digest;
    try {
      digest = await draw.commitment(seed);
    } catch (e) {
      return failWith(e);
    }
    if (mine !== run) return;
    var published = val('commitment').toLowerCase();
    view.commit = { key: published ? (published === digest ? 'commitOk' : 'commitBad') : 'commitNone', values: { commitment: digest, published: published }, isError: !!published && published !== digest };
    // A seed that is not the committed one proves nothing: stop there.
    if (view.commit.isError) {
      render();
      return announce(view.commit);
    }
    var countsText = val('counts');
    var counts = countsText ? parseCounts(countsText) : null;
    if (countsText && !counts) return fail('badCounts');
    var preIndex = null;
    var size;
    var rank;
    try {
      var ticket = val('ticket');
      if (ticket) {
        var t = draw.parseTicket(ticket);
        var eventId = val('event');
        if (eventId && t.eventId !== eventId) return fail('wrongEvent', { ticketEvent: t.eventId, eventId: eventId });
        if (t.preIndex === null) {
          if (!counts) return setMessage('regularNoP', { join: t.join });
          return setMessage('regular', { join: t.join, position: draw.prequeueSize(counts) + t.join });
        }
        if (!counts) return fail('needCounts');
        preIndex = t.preIndex;
        size = draw.prequeueSize(counts);
        rank = draw.rankOfPreIndex(counts, preIndex);
      } else if (val('rank')) {
        size = val('size') || (counts ? draw.prequeueSize(counts) : '');
        rank = val('rank');
        if (!/^\d{1,20}$/.test(String(size)) || !/^\d{1,20}$/.test(rank)) return fail('badNumber');
        size = BigInt(size);
        rank = BigInt(rank);
      } else {
        return fail('needInput');
      }
      var position = await draw.position(seed, size, rank);
      if (mine !== run) return;
      view.result = { preIndex: preIndex, rank: rank, size: size, position: position };
      setMessage('result', { position: position, size: size });
    } catch (e) {
      if (mine === run) failWith(e, { index: preIndex === null ? '' : preIndex });
    }
  }

  // -- The published draw: the public status document --
  async function load() {
    var mine = ++run;
    var eventId = val('event');
    if (!EVENT_ID.test(eventId)) return fail('badEvent');
    var stored = storedTicket(eventId);
    if (stored) el('ticket').value = stored;
    setMessage('loading');
    var res;
    var body = null;
    try {
      res = await env.fetch(API + '/status/' + encodeURIComponent(eventId), { headers: { accept: 'application/json' }, credentials: 'omit', cache: 'default' });
      body = res.status === 200 ? await res.json() : null;
    } catch (e) {
      res = null;
    }
    if (mine !== run) return;
    if (res && res.status === 404) return fail('notFound');
    if (!body || typeof body !== 'object') return fail('loadFailed');
    if (typeof body.seedCommitment === 'string') el('commitment').value = body.seedCommitment;
    if (Array.isArray(body.sealedCounts)) el('counts').value = body.sealedCounts.join(',');
    if (typeof body.seed === 'string' && body.seed) {
      el('seed').value = body.seed;
      return check();
    }
    if (typeof body.seedCommitment === 'string') return setMessage('notRevealed', { commitment: body.seedCommitment });
    setMessage('noDraw');
  }

  // -- Start --
  el('lang').addEventListener('click', function () {
    lang = lang === 'ko' ? 'en' : 'ko';
    setItem(env.storage, 'vwr.lang', lang); // (storage blocked: the choice lasts for this page only)
    render();
    announce(view.message);
  });
  el('form').addEventListener('submit', function (e) {
    e.preventDefault();
    check();
  });
  el('load').addEventListener('click', function () {
    load();
  });
  render();
  var eventId = queryParam(env.location.search, 'event');
  var ready = Promise.resolve();
  if (eventId !== null && EVENT_ID.test(eventId)) {
    el('event').value = eventId;
    ready = load();
  }
  return {
    ready: ready,
    check: check,
    load: load,
    view: function () {
      return { commit: view.commit, message: view.message, result: view.result, lang: lang };
    },
  };
}

var api = { STRINGS: STRINGS, fill: fill, queryParam: queryParam, pickLang: pickLang, parseCounts: parseCounts, start: start };

if (typeof module === 'object' && module.exports) {
  module.exports = api;
} else {
  var storage = null;
  try {
    storage = window.localStorage;
  } catch (e) {
    // Storage blocked: no stored ticket or language; manual entry still works.
  }
  start({
    document: document,
    storage: storage,
    fetch: window.fetch.bind(window),
    location: { search: location.search },
    languages: navigator.languages || [navigator.language],
    draw: window.VwrDraw,
  });
}