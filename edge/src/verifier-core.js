// vwr edge verifier core: tier-1 token verification and the gate decision, shared by the
// CloudFront Function and the Lambda@Edge handler (build.mjs inlines this file into both).
//
// Written for the CloudFront Functions JavaScript runtime 2.0: var/let/const, function
// declarations, arrow functions and template literals only (no for-of, classes,
// destructuring, spread, optional chaining or default parameters), and only `Buffer` and
// `crypto.createHmac` from the platform. Keep it small: the built CloudFront Function,
// this file included, must stay under 10 KB (a test checks it).
//
// Token checks mirror functions/core/src/token.rs one by one, in the same order, with the
// same reason codes (TokenError::code()); edge/test/vectors.json holds the proof.

var MAX_TOKEN_LEN = 4096;
var B64URL = /^[A-Za-z0-9_-]*$/;
var KID = /^[A-Za-z0-9_-]{1,32}$/;
var NAME = /^[A-Za-z0-9_-]+$/;
var EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
var BAD_PATH = { error: 'bad_path', message: 'Bad path, or no event id in it.' };
// JWT header fields the Rust decoder reads as strings / lists of strings; another type there
// makes it refuse the token as malformed before looking at the signature.
var HEADER_STRINGS = ['typ', 'cty', 'jku', 'x5u', 'x5t', 'x5t#S256', 'url', 'nonce', 'enc', 'zip'];
var HEADER_LISTS = ['x5c', 'crit'];
var has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
// Names used many times, kept once: the minified CloudFront Function has a size budget.
var isArray = Array.isArray;
var MALFORMED = 'malformed';
var B64 = 'base64url';

function parseJson(text) {
  if (!isString(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    return undefined;
  }
}

function isString(x) {
  return typeof x === 'string';
}

function isObject(x) {
  return x !== null && typeof x === 'object' && !isArray(x);
}

// Absent and null are both "not there", as for a Rust Option.
function optString(x) {
  return x == null || isString(x);
}

function optU64(x) {
  return x == null || (typeof x === 'number' && x >= 0 && x % 1 === 0 && x < 18446744073709551616);
}

function optStringList(x) {
  return x == null || (isArray(x) && x.every(isString));
}

// Canonical unpadded base64url → UTF-8 text, or null. Encoding the result again must give
// the input back, which refuses padding, foreign characters, non-zero trailing bits and
// invalid UTF-8, exactly as the Rust decoder followed by serde_json does.
function b64Text(s) {
  if (!B64URL.test(s)) return null;
  var text = Buffer.from(s, B64).toString('utf8');
  return Buffer.from(text, 'utf8').toString(B64) === s ? text : null;
}

// Constant-time comparison of two ASCII strings.
function sameString(a, b) {
  if (a.length !== b.length) return false;
  var diff = 0;
  for (var i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function refuse(code) {
  return { ok: false, error: code };
}

// Verifies a tier-1 token for `eventId` at `now` (epoch seconds). `keys` maps kid → key
// bytes (Buffer); `cfg` gives issuer, audience and leeway. Answers {ok: true, claims} or
// {ok: false, error: <TokenError::code()>}. Never throws.
function verifyToken(token, eventId, now, keys, cfg) {
  if (!isString(token) || token.length > MAX_TOKEN_LEN || /[^\x00-\x7f]/.test(token)) {
    return refuse(MALFORMED);
  }
  var seg = token.split('.');
  if (seg.length !== 3) return refuse(MALFORMED);
  var head = parseJson(b64Text(seg[0]));
  if (!isObject(head) || !optString(head.alg) || !optString(head.kid)) return refuse(MALFORMED);
  if (head.alg !== 'HS256') return refuse('unsupported_alg');
  if (head.kid == null || !has(keys, head.kid)) return refuse('unknown_kid');
  if (HEADER_STRINGS.some((k) => !optString(head[k])) || HEADER_LISTS.some((k) => !optStringList(head[k]))) {
    return refuse(MALFORMED);
  }
  // The signature must be canonical base64url; comparing the text then compares the bytes.
  if (!B64URL.test(seg[2]) || Buffer.from(seg[2], B64).toString(B64) !== seg[2]) {
    return refuse(MALFORMED);
  }
  var mac = crypto.createHmac('sha256', keys[head.kid]).update(seg[0] + '.' + seg[1]).digest(B64);
  if (!sameString(mac, seg[2])) return refuse('bad_signature');
  var c = parseJson(b64Text(seg[1]));
  if (!isObject(c)) return refuse(MALFORMED);
  if (!optString(c.iss) || !optString(c.sub) || !optString(c.eid) || !optString(c.jti)) return refuse(MALFORMED);
  if (!optU64(c.pos) || !optU64(c.iat) || !optU64(c.nbf) || !optU64(c.exp)) return refuse(MALFORMED);
  if (c.exp == null) return refuse('missing_exp');
  if (now >= c.exp) return refuse('expired');
  if (c.nbf != null && c.nbf > now + cfg.leewaySeconds) return refuse('not_yet_valid');
  if (c.tier !== 1) return refuse('wrong_tier');
  if (c.eid !== eventId) return refuse('wrong_event');
  var aud = c.aud;
  var audOk = aud === cfg.audience || (isArray(aud) && aud.indexOf(cfg.audience) >= 0);
  if (c.iss !== cfg.issuer || !audOk) return refuse('wrong_issuer');
  if (c.sub == null || c.pos == null || c.jti == null) return refuse('missing_claim');
  return { ok: true, claims: c };
}

// Parses key text `kid:base64url,kid2:base64url` (standard base64, padded or not, is accepted
// too, as in Rust) into kid → Buffer. Any bad entry makes the whole set invalid (null): a
// typo must not silently drop a key.
function parseKeys(text) {
  if (!isString(text)) return null;
  var keys = {};
  var count = 0;
  var entries = text.split(',');
  for (var i = 0; i < entries.length; i++) {
    var entry = entries[i].trim();
    if (!entry) continue;
    var at = entry.indexOf(':');
    var kid = entry.slice(0, at).trim();
    var b64 = entry.slice(at + 1).trim().replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
    if (at < 0 || !KID.test(kid) || !B64URL.test(b64) || has(keys, kid)) return null;
    keys[kid] = Buffer.from(b64, B64);
    if (keys[kid].length < 32) return null;
    count++;
  }
  return count ? keys : null;
}

// `x`, or `fallback` when x is absent or null.
function or(x, fallback) {
  return x == null ? fallback : x;
}

// Validates the configuration object (shape in edge/README.md) and fills in defaults.
// Answers the normalized config, or a string saying what is wrong.
function parseConfig(o, defaultFailMode) {
  if (!isObject(o)) return 'not a JSON object';
  var cfg = {
    active: {},
    rules: [],
    cookiePrefix: or(o.cookiePrefix, 'vwr_t1_'),
    issuer: or(o.issuer, 'vwr'),
    audience: or(o.audience, 'vwr-edge'),
    failMode: or(o.failMode, defaultFailMode),
    leewaySeconds: or(o.leewaySeconds, 30),
    apiPrefix: or(o.apiPrefix, '/api/'),
    revoked: or(o.revoked, {}),
  };
  // The string fields, each with what it must match (one loop: the CloudFront Function's
  // bytes are counted, edge/README.md "Build").
  var want = { cookiePrefix: NAME, issuer: /^/, audience: /^/, failMode: /^(open|closed)$/, apiPrefix: /^\/([\w.-]+\/)*$/ };
  for (var k in want) if (!isString(cfg[k]) || !want[k].test(cfg[k])) return 'bad ' + k;
  if (!optU64(cfg.leewaySeconds) || cfg.leewaySeconds > 300) return 'bad leewaySeconds';
  if (!isObject(cfg.revoked)) return 'bad revoked';
  // Events: {"e1": {"active": true}} or, more compact, a list of active ids ["e1"].
  var ev = or(o.events, []);
  if (!isObject(ev) && !isArray(ev)) return 'bad events';
  var ids = isArray(ev) ? ev : Object.keys(ev);
  // active: "~" + id → id, and "~" + lower-case id → the first id spelled so (the "~" keeps
  // ids such as __proto__ ordinary keys); an exact spelling overwrites a lower-cased one.
  for (var i = 0; i < ids.length; i++) {
    var id = ids[i];
    if (!isString(id) || !EVENT_ID.test(id)) return 'bad event id';
    var low = '~' + id.toLowerCase();
    if (isArray(ev) || (isObject(ev[id]) && ev[id].active === true)) {
      cfg.active['~' + id] = id;
      cfg.active[low] = cfg.active[low] || id;
    }
  }
  if (!isArray(o.rules)) return 'rules must be a list';
  for (i = 0; i < o.rules.length; i++) {
    var r = o.rules[i];
    var prefix = isObject(r) && isString(r.pathPrefix) ? segments(r.pathPrefix) : null;
    if (!prefix || r.pathPrefix.charAt(0) !== '/' || !optU64(r.eventSegment) || !(r.eventSegment > prefix.length)) {
      return 'bad rule ' + i;
    }
    cfg.rules.push({ prefix: prefix.map((s) => s.toLowerCase()), exact: '/' + prefix.join('/') + '/', at: r.eventSegment - 1 });
  }
  return cfg;
}

// Splits a request path (no query) into segments as an origin would resolve it: split at
// "/", "\" and their escapes %2f, %5c; ";params" cut; each segment then percent-decoded
// (never throwing; an escaped ";" stays in it); empty and "." segments dropped and ".."
// going up. With `keepDots`, ".." stays a segment instead: the path as an origin that does
// not resolve dot segments would route it.
function segments(path, keepDots) {
  var raw = path.split(/[\/\\]|%2f|%5c/i);
  var out = [];
  for (var i = 0; i < raw.length; i++) {
    var s = raw[i].split(';')[0].replace(/%([0-9A-Fa-f]{2})/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
    if (s === '..' && !keepDots) out.pop();
    else if (s !== '' && s !== '.') out.push(s);
  }
  return out;
}

// The platform-neutral request: raw path and query (without "?"); api: an API call (path
// under /api/, or Accept naming JSON); segs and lit: the path's segments resolved and
// unresolved; odd: the path is not canonical (an empty, "." or ".." segment, raw or
// %2e-encoded; an encoded "/" or "\"; a "\"; a ";param"; an escaped "%" or a "%u" escape, which
// a second decoding or an IIS-style one turns into dots and slashes); room: the waiting room
// itself (/vwr/…, /vwr-api/…), in both forms, so neither /vwr/../events/e1 nor
// /events/e1/../../vwr/e1 is — the waiting room is never gated.
function request(uri, query, accept) {
  var path = String(uri).split('?')[0];
  var segs = segments(path);
  var lit = segments(path, 1);
  var api = /^api$/i;
  var room = /^vwr(-api)?$/;
  return {
    uri: uri,
    query: query,
    path: path,
    segs: segs,
    lit: lit,
    odd: /\/\/|\\|;|%2f|%5c|%25|%u|\/(\.|%2e){1,2}(\/|$)/i.test(path),
    api: api.test(segs[0]) || api.test(lit[0]) || /application\/json/i.test(accept || ''),
    room: room.test(segs[0]) && room.test(lit[0]),
  };
}

// Whether `segs` start with the rule's prefix (compared case-insensitively).
function under(rule, segs) {
  for (var j = 0; j < rule.prefix.length; j++) if (!segs[j] || segs[j].toLowerCase() !== rule.prefix[j]) return false;
  return true;
}

// The gate for a request: null (no active event's protected path: pass), false (a path under
// a rule's prefix — in any case or encoding, resolved or unresolved — that is not canonical,
// whose prefix is not spelled exactly as configured, or that has no valid event id where the
// rule expects one: refuse with 400), or the configured id of the active event (ids match
// case-insensitively; an exact spelling wins). The exact spelling matters because CloudFront's
// path patterns and many origins are case-sensitive and do not decode: /Api/seats/… would miss
// the protected behaviour and reach the site origin.
function gatedEvent(cfg, req) {
  for (var i = 0; i < cfg.rules.length; i++) {
    var rule = cfg.rules[i];
    var id = req.segs[rule.at];
    // bad: not canonical, or not starting with the prefix as configured (indexOf answers 0,
    // falsy, only when it does).
    var bad = req.odd || (req.path + '/').indexOf(rule.exact);
    if (bad ? under(rule, req.lit) || under(rule, req.segs) : id) {
      if (bad || !EVENT_ID.test(id)) return false;
      id = cfg.active['~' + id] || cfg.active['~' + id.toLowerCase()];
      if (id) return id;
    }
  }
  return null;
}

// Deletes the viewer's own x-vwr-* request headers (names are lower case on both platforms):
// origins trust x-vwr-user and x-vwr-event only from the protected-API gate, and CloudFront adds
// x-vwr-origin-secret after this function. The handlers call it on every request they see;
// the behaviours whose origins read viewer x-vwr-* headers (/vwr-api/*, /api/queue/*) never
// run the verifier.
function dropViewerHeaders(headers) {
  for (var k in headers) if (/^x-vwr-/.test(k)) delete headers[k];
}

// A refusal: JSON `body` for API calls, else its message as text; never cached.
function refusal(req, status, body, headers) {
  headers['cache-control'] = 'no-store';
  headers['content-type'] = req.api ? 'application/json' : 'text/plain; charset=utf-8';
  return { status: status, headers: headers, body: req.api ? JSON.stringify(body) : body.message + '\n' };
}

// No valid token: navigation → 302 to the waiting page with `next` = where the user was
// going; API call → 403 JSON naming the same place. Responses are platform-neutral
// {status, headers: {name: value}, body}; the handlers translate them.
function gateResponse(req, eventId) {
  var next = req.uri + (req.query ? '?' + req.query : '');
  if (next.length > 2000) next = req.uri.length > 2000 ? '' : req.uri;
  var to = '/vwr/' + eventId;
  try {
    if (next) to += '?next=' + encodeURIComponent(next);
  } catch (e) {
    // A lone surrogate cannot be encoded: send the user to the waiting page without `next`.
  }
  if (req.api) {
    return refusal(req, 403, { error: 'waiting_room_token_required', message: 'Join the waiting room first.', redirectTo: to, statusUrl: '/vwr-api/vwr/status/' + eventId }, {});
  }
  return { status: 302, headers: { location: to, 'cache-control': 'no-store' }, body: '' };
}

// The configured failure policy when configuration (`entry`) or keys cannot be read, logged
// with the `reason`: "open" lets the request through (null); "closed" answers 503 so the origin
// stays shielded. A 503 rather than a redirect: without keys or event list the waiting page
// could only loop.
function failResponse(mode, req, entry, reason) {
  log('config_unavailable', { entry: entry, reason: reason, failMode: mode });
  return mode === 'open' ? null : refusal(req, 503, { error: 'waiting_room_unavailable', message: 'Waiting room unavailable; retry shortly.' }, { 'retry-after': '5' });
}

// One JSON log line of a stable shape: {"src":"vwr-edge","evt":…, …fields}.
function log(evt, fields) {
  var line = { src: 'vwr-edge', evt: evt };
  for (var k in fields) line[k] = fields[k];
  console.log(JSON.stringify(line));
}

// The tokens to try: the cookie's values, then, on an API path (the raw path starts with
// `apiPrefix` as configured), the token of an `Authorization: Bearer …` header: an app's
// way of sending it (docs/apps.md). The cookie stays first.
function withBearer(cfg, req, tokens, auth) {
  var m = !req.path.indexOf(cfg.apiPrefix) && /^Bearer +([!-~]+)$/i.exec(auth);
  if (m) tokens.push(m[1]);
  return tokens;
}

// Decides a request for an active event's protected path given the cookie values found
// (at most a few; duplicates are tried in turn). Answers null to let it through, or the
// gate response. A cookie that is present but invalid is logged with the reason. The tokens
// tried weigh at most MAX_TOKEN_LEN together, so a request costs at most one long token's HMAC
// however many it carries (a real token is ~500 characters; edge/README.md#cost-per-request).
function checkTokens(req, cfg, eventId, tokens, keys, now) {
  var reason = null;
  for (var i = 0, left = MAX_TOKEN_LEN; i < tokens.length; i++) {
    var res = (left -= tokens[i].length) < 0 ? refuse(MALFORMED) : verifyToken(tokens[i], eventId, now, keys, cfg);
    // A valid token the operator revoked (a pass, docs/passes.md) is refused as `revoked`.
    if (res.ok && !has(cfg.revoked, res.claims.jti)) return null;
    reason = reason || res.error || 'revoked';
  }
  if (reason) log('token_rejected', { eventId: eventId, reason: reason });
  return gateResponse(req, eventId);
}
