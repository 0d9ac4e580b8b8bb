/* The rules the three pages share — the waiting page (assets/app.js), the "Check the draw" page
 * (assets/verify.js) and the booking page's client (queue/tier2.js): texts, addresses,
 * languages, storage, and the pacing of calls (poll hints, back-off, jitter, Retry-After).
 * One source: static/build.mjs puts this file first in each of those scripts, in the same
 * function scope as the page's own sources (static/README.md). Plain functions, no state. */

// The longest `next` a page follows.
var MAX_NEXT = 2048;

/** `text` with each {name} replaced by `values[name]` (left as it is when not given). */
function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, function (m, k) {
    return values[k] === undefined ? m : String(values[k]);
  });
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

/** The language among `have` (default en, ko): saved, else the browser's first we have (zh-TW, -HK,
 *  -MO, -Hant → zh-Hant; zh → zh-Hans), else `fallback`, else en. */
function pickLang(saved, languages, have, fallback) {
  have = have || ['en', 'ko'];
  var list = [saved].concat(languages || []);
  for (var i = 0; i < list.length; i++) {
    var l = String(list[i]);
    if (/^zh\b/i.test(l)) l = /hant|-(tw|hk|mo)\b/i.test(l) ? 'zh-Hant' : 'zh-Hans';
    for (var j = 0; j < have.length; j++) {
      if (have[j] === l || (i > 0 && have[j] === l.split('-')[0].toLowerCase())) return have[j];
    }
  }
  return have.indexOf(fallback) >= 0 ? fallback : have.indexOf('en') >= 0 ? 'en' : have[0];
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

/** Seconds until the turn of `place` (1 = next) at `rate`/s; no rate: max(place ÷ 50, 5)
 *  (docs/api.md#poll-hints-and-estimates). */
function waitSeconds(place, rate) {
  if (!(place > 0)) return 0;
  return rate > 0 ? Math.ceil(place / rate) : Math.max(Math.floor(place / 50), 5);
}

/** `storage.getItem(key)`, or null where storage is blocked (getItem throws) or missing. */
function getItem(storage, key) {
  try {
    return storage.getItem(key);
  } catch (e) {
    return null;
  }
}

/** `n` with the digit grouping of `lang` (1,234 or 1.234), or as it is where Intl cannot. */
function formatNumber(n, lang) {
  try {
    return new Intl.NumberFormat(lang).format(n);
  } catch (e) {
    return String(n);
  }
}

/** `storage.setItem(key, value)` (`null`: removeItem); false where storage is blocked or full
 *  (the page then keeps what it has for its own life). */
function setItem(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
    return true;
  } catch (e) {
    return false;
  }
}
