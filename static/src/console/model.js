/* The console's rules (docs/console.md): roles and what each may do, the confirmation asked
 * before an action, the sign-in token in the address, the figures kept for the live charts and
 * the rates read off them, the answers of the API sorted by what the console does next. Plain
 * functions and data, no DOM and no network: static/test/console.test.mjs runs them under Node. */

// The roles, least first: each can do what the ones before it can (docs/console.md#roles).
var ROLES = ['viewer', 'operator', 'admin'];

// The least role of each thing the console offers: the server's own table of routes (the
// admin API refuses anything else with 403 `forbidden_role`), so the console hides, rather than
// disables, what the signed-in role cannot do.
var ACTIONS = {
  read: 'viewer',
  pause: 'operator',
  resume: 'operator',
  message: 'operator',
  advance: 'operator',
  health: 'operator',
  threshold: 'operator',
  passCreate: 'operator',
  passRevoke: 'operator',
  activate: 'admin',
  deactivate: 'admin',
  close: 'admin',
};

// What an action asks before it is sent: one that opens a sale or lets everybody in asks to
// confirm; one that ends the sale or drops the line asks for the event id typed.
var CONFIRM = {
  activate: 'confirm',
  resume: 'confirm',
  deactivate: 'type',
  close: 'type',
};

// The live charts keep the last 30 minutes of status reads, in memory.
var WINDOW_MS = 30 * 60 * 1000;
// A rate is read over the last minute of reads (or what there is of it).
var RATE_SPAN_MS = 60 * 1000;
// The languages of the waiting page's message (static/README.md#languages).
var MESSAGE_LANGS = ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant'];
// The longest message per language (docs/lifecycle.md#admin-routes).
var MESSAGE_MAX = 500;
// The waiting page's preview states (docs/brand.md#previews).
var PREVIEW_STATES = ['prequeue', 'waiting', 'turn', 'paused', 'closed'];

/** The rank of `role` (0 viewer … 2 admin), -1 for anything else. */
function roleRank(role) {
  return ROLES.indexOf(role);
}

/** Whether `role` may do `action` (a key of ACTIONS). */
function allowed(role, action) {
  var need = ACTIONS[action];
  return need !== undefined && roleRank(role) >= 0 && roleRank(role) >= roleRank(need);
}

/** The actions `role` may do, in ACTIONS' order. */
function visibleActions(role) {
  return Object.keys(ACTIONS).filter(function (a) {
    return allowed(role, a);
  });
}

/** How `action` is confirmed: 'none', 'confirm' or 'type' (the event id). */
function confirmation(action) {
  return CONFIRM[action] || 'none';
}

/** Whether an action may be sent: `agreed` (the dialog's confirm) for 'confirm', the event id
 *  typed exactly (spaces around it aside) for 'type'. */
function confirmed(action, eventId, answer) {
  var rule = confirmation(action);
  if (rule === 'none') return true;
  if (!answer || answer.agreed !== true) return false;
  return rule === 'confirm' || String(answer.typed || '').trim() === eventId;
}

/** The sign-in token of an address's fragment, `#token=JWT` (what `vwr admin console-token`
 *  prints, optionally followed by `&/events/ID`): `{token, hash}` where `hash` is what is left
 *  for the address, without the token. `token` is null when there is none, or when it is not
 *  made of a JWT's characters (then it is dropped from the address all the same). */
function tokenFromHash(hash) {
  var h = String(hash || '').replace(/^#/, '');
  if (!/^token=/.test(h)) return { token: null, hash: h ? '#' + h : '' };
  var amp = h.indexOf('&');
  var raw = amp < 0 ? h.slice(6) : h.slice(6, amp);
  var rest = amp < 0 ? '' : h.slice(amp + 1);
  var token = null;
  try {
    token = decodeURIComponent(raw);
  } catch (e) {
    token = null;
  }
  if (token !== null && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*){0,2}$/.test(token)) token = null;
  return { token: token, hash: rest ? '#' + rest : '' };
}

/** The console's place from the address fragment: `{view: 'events'}` or `{view: 'event', id,
 *  tab}` for `#/events/ID[/TAB]`. */
function route(hash) {
  var m = /^#\/events\/([A-Za-z0-9_-]{1,64})(?:\/([a-z]+))?\/?$/.exec(String(hash || ''));
  if (!m) return { view: 'events' };
  return { view: 'event', id: m[1], tab: m[2] || 'live' };
}

/** What the console keeps of one status read at `t` (ms): the counters the charts follow. */
function sampleOf(status, tier2, t) {
  var t2 = tier2 || (status && status.tier2) || null;
  return {
    t: t,
    state: status.state,
    joins: num(status.issued),
    served: num(status.servingCounter),
    redeemed: num(status.admitted),
    line: num(status.waiting),
    active: t2 ? num(t2.active) : null,
    threshold: t2 && t2.threshold !== undefined ? num(t2.threshold) : null,
  };
}

function num(v) {
  return typeof v === 'number' && isFinite(v) ? v : null;
}

/** `samples` with `sample` added and those older than `windowMs` before it left out (a sample
 *  not later than the last one replaces nothing and is dropped: reads answered out of order). */
function keepWindow(samples, sample, windowMs) {
  var w = windowMs === undefined ? WINDOW_MS : windowMs;
  var last = samples[samples.length - 1];
  if (last && sample.t <= last.t) return samples;
  return samples
    .filter(function (s) {
      return s.t >= sample.t - w;
    })
    .concat([sample]);
}

/** The rate per minute of the counter `field` at `samples[i]`: its rise since the earliest read
 *  within `spanMs` before it, over the time between. Null with no earlier read, a counter
 *  missing, or one that went down (the event was made anew). */
function ratePerMinute(samples, field, i, spanMs) {
  var span = spanMs === undefined ? RATE_SPAN_MS : spanMs;
  var cur = samples[i];
  if (!cur || cur[field] === null) return null;
  var j = i;
  while (j > 0 && samples[j - 1].t >= cur.t - span) j--;
  if (j === i) return i > 0 && cur.t - samples[i - 1].t <= 2 * span ? rateBetween(samples[i - 1], cur, field) : null;
  return rateBetween(samples[j], cur, field);
}

function rateBetween(a, b, field) {
  if (a[field] === null || b[field] === null || b.t <= a.t || b[field] < a[field]) return null;
  return ((b[field] - a[field]) * 60000) / (b.t - a.t);
}

/** The live charts' data from the kept reads: times (unix seconds) and, per series, one value
 *  per read (null where unknown: the chart leaves a gap). */
function liveSeries(samples) {
  var out = { t: [], joins: [], served: [], redeemed: [], line: [], active: [], threshold: [] };
  for (var i = 0; i < samples.length; i++) {
    var s = samples[i];
    out.t.push(s.t / 1000);
    out.joins.push(ratePerMinute(samples, 'joins', i));
    out.served.push(ratePerMinute(samples, 'served', i));
    out.redeemed.push(ratePerMinute(samples, 'redeemed', i));
    out.line.push(s.line);
    out.active.push(s.active);
    out.threshold.push(s.threshold);
  }
  return out;
}

/** The sum of a map of counts (`{code: n}`). */
function total(counts) {
  var n = 0;
  for (var k in counts || {}) if (Object.prototype.hasOwnProperty.call(counts, k)) n += Number(counts[k]) || 0;
  return n;
}

/** The report's minutes (docs/operate.md#the-report-after-the-sale) as chart data: times (unix
 *  seconds), joins, served, redeemed and refusals per minute, and the refusals by code; only
 *  those within `windowSec` of `nowSec` when given. */
function reportSeries(report, nowSec, windowSec) {
  var rows = (report && report.minutes) || [];
  if (nowSec !== undefined) {
    rows = rows.filter(function (m) {
      return m.at >= nowSec - windowSec;
    });
  }
  var codes = {};
  rows.forEach(function (m) {
    for (var c in m.refusals || {}) codes[c] = true;
  });
  var out = { t: [], joins: [], served: [], redeemed: [], refusals: [], byCode: {} };
  Object.keys(codes)
    .sort()
    .forEach(function (c) {
      out.byCode[c] = [];
    });
  rows.forEach(function (m) {
    out.t.push(m.at);
    out.joins.push(m.joins);
    out.served.push(m.served);
    out.redeemed.push(m.redeemed);
    out.refusals.push(total(m.refusals));
    for (var c in out.byCode) out.byCode[c].push((m.refusals && m.refusals[c]) || 0);
  });
  return out;
}

/** What the console does with an answer of the API (`{status, body}`, or `{network: true}` when
 *  none came): 'ok'; 'forbidden_role' (the role may not: say so); 'signin' (no or a stale
 *  token: sign in again); 'retry' (the network, a 5xx or a 429: say "retrying", back off);
 *  'missing' (404); 'refused' (any other 4xx: show the API's message). */
function outcome(res) {
  if (!res || res.network) return 'retry';
  var s = res.status;
  if (s >= 200 && s < 300) return 'ok';
  var code = res.body && res.body.error;
  if (s === 403 && code === 'forbidden_role') return 'forbidden_role';
  // 401: the admin API's `unauthorized`, or an API Gateway JWT authorizer's {"message":"Unauthorized"}.
  if (s === 401) return 'signin';
  if (s === 429 || s >= 500) return 'retry';
  if (s === 404) return 'missing';
  return 'refused';
}

/** Who is signed in, from the answer of `GET /api/admin/vwr/whoami`: `{name, role, via}`, or
 *  null when the answer says nothing usable. */
function whoamiFrom(res) {
  if (res && res.status === 200 && res.body && roleRank(res.body.role) >= 0) {
    return { name: String(res.body.name || ''), role: res.body.role, via: String(res.body.via || '') };
  }
  return null;
}

/** The words for a refusal by role: what the server said, else the role the console knows is
 *  needed. */
function roleMessage(body, role, action) {
  var said = body && typeof body.message === 'string' ? body.message : '';
  var need = ACTIONS[action];
  return fill(said ? 'Refused for your role ({role}): {said}' : need ? 'Your role ({role}) cannot do this: it needs the {need} role.' : 'Your role ({role}) cannot do this.', {
    role: role || 'unknown',
    said: said,
    need: need,
  });
}

/** The message body of `PUT message` from the five fields (`{lang: text}`): the languages with
 *  text, trimmed; `null` (clears the message) when none has any. */
function messageBody(fields) {
  var m = {};
  var any = false;
  MESSAGE_LANGS.forEach(function (l) {
    var t = String((fields && fields[l]) || '').trim();
    if (t) {
      m[l] = t;
      any = true;
    }
  });
  return { message: any ? m : null };
}

/** The problems of a message (`{lang: text}`): the languages over MESSAGE_MAX characters. */
function messageProblems(fields) {
  return MESSAGE_LANGS.filter(function (l) {
    return Array.from(String((fields && fields[l]) || '').trim()).length > MESSAGE_MAX;
  });
}

/** The waiting page's preview address (docs/brand.md#previews). */
function previewUrl(eventId, state, lang) {
  var s = PREVIEW_STATES.indexOf(state) >= 0 ? state : 'waiting';
  var l = MESSAGE_LANGS.indexOf(lang) >= 0 ? lang : 'en';
  return '/vwr/' + encodeURIComponent(eventId) + '?preview=' + s + '&lang=' + encodeURIComponent(l);
}

/** The event's health hold, standby alarm and other warnings from its status, as short texts. */
function holds(status) {
  var out = [];
  if (!status) return out;
  if (status.heldBy) out.push('held (' + status.heldBy + ')' + (status.holdReason ? ': ' + status.holdReason : ''));
  if (status.standbyAlarm) out.push('standby on ' + status.standbyAlarm + ': ' + (status.standbyAlarmState || 'unknown'));
  return out;
}

/** An audit entry (docs/lifecycle.md#admin-routes) in words: who did what, and what changed. */
function describeAudit(entry) {
  var b = entry.before || {};
  var a = entry.after || {};
  var who = entry.actor || 'someone';
  var what = AUDIT_WORDS[entry.action] || entry.action;
  var changes = [];
  if (entry.action === 'advance') {
    changes.push('serving counter ' + (b.servingCounter === undefined ? '?' : b.servingCounter) + ' → ' + a.servingCounter);
  } else {
    if (b.state !== a.state && a.state !== undefined) changes.push('state ' + (b.state || 'none') + ' → ' + a.state);
    if (JSON.stringify(b.message) !== JSON.stringify(a.message)) changes.push(a.message ? 'message set' : 'message cleared');
    if (a.closeReason && b.closeReason !== a.closeReason) changes.push('reason ' + a.closeReason);
    if (JSON.stringify(b.hold) !== JSON.stringify(a.hold)) changes.push(a.hold ? 'hold: ' + (a.hold.reason || 'on') : 'hold lifted');
    var cb = b.config || {};
    var ca = a.config || {};
    Object.keys(ca)
      .sort()
      .forEach(function (k) {
        if (JSON.stringify(cb[k]) !== JSON.stringify(ca[k])) changes.push(k + ' ' + show(cb[k]) + ' → ' + show(ca[k]));
      });
  }
  return { who: who, what: what, changes: changes };
}

var AUDIT_WORDS = {
  schedule: 'scheduled the sale',
  activate: 'activated',
  deactivate: 'deactivated',
  open: 'opened the sale',
  prequeue: 'opened the pre-queue',
  pause: 'paused',
  resume: 'resumed',
  close: 'closed the sale',
  message: 'changed the message',
  health: 'changed the health hold',
  advance: 'moved the line on',
  page: 'changed the page',
  standby: 'set a standby alarm',
  standby_end: 'ended the standby',
  standby_open: 'opened on the standby alarm',
  pass_create: 'created a pass',
  pass_revoke: 'revoked a pass',
};

function show(v) {
  return v === undefined || v === null ? '–' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A rate for a table cell: one decimal under 10, whole above; '–' unknown. */
function formatRate(v) {
  if (v === null || v === undefined || !isFinite(v)) return '–';
  return v < 10 ? String(Math.round(v * 10) / 10) : String(Math.round(v));
}

/** A unix time (seconds) as the browser's local date and time. */
function formatTime(sec, locale) {
  if (!sec) return '–';
  try {
    return new Date(sec * 1000).toLocaleString(locale || undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  } catch (e) {
    return new Date(sec * 1000).toISOString();
  }
}
