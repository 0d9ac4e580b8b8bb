// vwr edge check as a CloudFront Function (runtime cloudfront-js-2.0, viewer request).
// Source: edge/build.mjs inlines edge/src/verifier-core.js at the VWR_CORE marker and
// writes edge/dist/cloudfront-function.js, the file to deploy (see edge/README.md).
//
// Reads three KeyValueStore entries: `config` (JSON: events, rules, cookie prefix, issuer,
// audience, failMode, leeway), and, only when a token has to be checked, `keys`
// (`kid:base64url,…`) and `revoked` (JSON: pass id → expiry).
import crypto from 'crypto';
import cf from 'cloudfront';

// Deployment placeholders, replaced by Terraform (or `node edge/build.mjs --kvs-id …`):
// the KeyValueStore id, and what to do when the `config` entry cannot be read: 'open'
// lets requests through, anything else (the default) answers 503 outside the waiting room.
var KVS_ID = '__VWR_KVS_ID__';
var FAIL_MODE = '__VWR_FAIL_MODE__' === 'open' ? 'open' : 'closed';

/*@@VWR_CORE@@*/

async function kvsGet(name) {
  try {
    return await cf.kvs(KVS_ID).get(name);
  } catch (e) {
    return null;
  }
}

// Neutral response → CloudFront Functions response (no statusDescription: optional for a
// generated response, and its bytes are counted); no response: the request `r`, passed on.
function toViewer(res, r) {
  if (!res) return r;
  var headers = {};
  for (var k in res.headers) headers[k] = { value: res.headers[k] };
  var out = { statusCode: res.status, headers: headers };
  if (res.body) out.body = { encoding: 'text', data: res.body };
  return out;
}

// Every value of a query parameter or cookie as CloudFront hands it over.
function values(x) {
  return x.multiValue && x.multiValue.length ? x.multiValue : [x];
}

function cookieValues(cookies, name) {
  var c = cookies && has(cookies, name) ? cookies[name] : null;
  if (!c) return [];
  var list = values(c);
  var out = [];
  for (var i = 0; i < list.length && i < 4; i++) if (isString(list[i].value)) out.push(list[i].value);
  return out;
}

// The query string as received: CloudFront hands it over parsed, values still encoded.
function queryText(qs) {
  var parts = [];
  for (var k in qs) {
    var list = values(qs[k]);
    for (var i = 0; i < list.length; i++) parts.push(k + '=' + list[i].value);
  }
  return parts.join('&');
}

async function handler(event) {
  var r = event.request;
  var h = r.headers || {};
  dropViewerHeaders(h);
  var req = request(r.uri, queryText(r.querystring || {}), h.accept ? h.accept.value : '');
  if (req.room) return r;
  var raw = await kvsGet('config');
  var cfg = raw === null ? 'missing or unreadable' : parseConfig(parseJson(raw), FAIL_MODE);
  if (isString(cfg)) return toViewer(failResponse(FAIL_MODE, req, 'config', cfg), r);
  var eventId = gatedEvent(cfg, req);
  if (eventId === null) return r;
  if (!eventId) return toViewer(refusal(req, 400, BAD_PATH, {}));
  var tokens = withBearer(cfg, req, cookieValues(r.cookies, cfg.cookiePrefix + eventId), h.authorization && h.authorization.value);
  // Only with a token to check: the keys, and the revoked passes (an entry of their own, so
  // passes never crowd the event list out of `config`; docs/passes.md), else `config`'s.
  var keys = {};
  if (tokens.length) {
    keys = parseKeys(await kvsGet('keys'));
    cfg.revoked = parseJson(await kvsGet('revoked')) || cfg.revoked;
  }
  // A check that throws (a runtime that refused a call) applies the fail mode, as missing
  // keys do: never a function error for every admitted visitor.
  try {
    if (keys) return toViewer(checkTokens(req, cfg, eventId, tokens, keys, Math.floor(Date.now() / 1000)), r);
  } catch (e) {}
  return toViewer(failResponse(cfg.failMode, req, 'keys', 'missing or invalid'), r);
}
