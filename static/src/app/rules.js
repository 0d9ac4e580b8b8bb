/* The waiting page's constants and its own pure rules (the ones it shares with the other pages
 * are in ../rules.js): the address, the poll of the line, the wait and the countdown as shown,
 * the server's clock, the operator's texts. Part of assets/app.js (static/build.mjs). */

var API = '/vwr-api/vwr';
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

// ---- Pure rules (unit-tested) ----

/** The event id of /vwr/{eventId}(/), or null (edge/build.mjs gives this pattern to the
 *  CloudFront rewrite, so the page is served exactly where it reads an event id). */
function eventIdFrom(pathname) {
  var m = /^\/vwr\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname || '');
  return m ? m[1] : null;
}

/** Seconds between polls in line: a quarter of the wait, 1–30 s (as `nextPollSeconds`). */
function pollForWait(wait) {
  return Math.min(30, Math.max(1, (Number(wait) || 0) / 4));
}

/** `n` `u`s ('minute', 'day'…) in `lang`. */
function unit(n, u, lang, long) {
  try {
    return new Intl.NumberFormat(lang, { style: 'unit', unit: u, unitDisplay: long ? 'long' : 'short' }).format(n);
  } catch (e) {
    return n + ' ' + u;
  }
}

function formatWait(seconds, s, lang) {
  var m = Math.ceil(Math.max(0, Number(seconds) || 0) / 60);
  if (seconds < 60) return s.waitLess;
  if (m < 60) return fill(s.waitMin, { m: unit(m, 'minute', lang) });
  return fill(s.waitHours, { h: unit(Math.floor(m / 60), 'hour', lang), m: unit(m % 60, 'minute', lang) });
}

/** A countdown: 04:59, 1:04:59, 2 days 04:05:06. */
function formatCountdown(seconds, lang) {
  var t = Math.max(0, Math.floor(seconds));
  var two = function (n) {
    return (n < 10 ? '0' : '') + n;
  };
  var d = Math.floor(t / 86400);
  var h = Math.floor(t / 3600) % 24;
  var ms = two(Math.floor(t / 60) % 60) + ':' + two(t % 60);
  if (d > 0) return unit(d, 'day', lang, true) + ' ' + two(h) + ':' + ms;
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

/** {code: text} (or a string) in `lang`, else `fallback`, en, any: [text, its language]. */
function localized(m, lang, fallback) {
  if (typeof m === 'string') return [m.trim(), lang];
  var order = m && typeof m === 'object' ? [lang, fallback, 'en'].concat(Object.keys(m)) : [];
  for (var i = 0; i < order.length; i++) {
    var text = m[order[i]];
    if (typeof text === 'string' && text.trim()) return [text.trim(), order[i]];
  }
  return ['', lang];
}
