'use strict';
// vwr edge check as a Lambda@Edge viewer-request handler (Node.js 22), for distributions
// that do not use a CloudFront KeyValueStore. Source: edge/build.mjs inlines
// edge/src/verifier-core.js at the VWR_CORE marker and writes edge/dist/lambda-edge/index.js.
//
// Configuration is bundled beside it as config.json (Lambda@Edge has no environment
// variables): the object of the KVS `config` entry plus "keys": "kid:base64url,…". The file
// holds secrets: the deploy step writes it into the bundle, it is never committed.
// The local proxy (edge/local/proxy.mjs) feeds it live configuration through setConfig().
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

// Deployment placeholder: 'open' lets requests through when config.json cannot be read;
// anything else (the default) answers 503 outside the waiting room.
var FAIL_MODE = '__VWR_FAIL_MODE__' === 'open' ? 'open' : 'closed';

/*@@VWR_CORE@@*/

// Reason phrases of the answers the verifier makes (a CloudFront Function may leave them out:
// its bytes are counted, edge/README.md "Build").
var STATUS_TEXT = { 302: 'Found', 400: 'Bad Request', 403: 'Forbidden', 503: 'Service Unavailable' };

// The configuration in use: {cfg, keys, error}. cfg null = unusable configuration (FAIL_MODE
// applies); keys null with a cfg = keys unusable (cfg.failMode applies where a token must be
// checked).
var state = fromObject(parseJson(readConfigFile(path.join(__dirname, 'config.json'))));

function readConfigFile(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    return null;
  }
}

function fromObject(o) {
  if (o === undefined || o === null) return { cfg: null, keys: null, error: 'config.json missing, unreadable or not JSON' };
  var cfg = parseConfig(o, FAIL_MODE);
  if (typeof cfg === 'string') return { cfg: null, keys: null, error: cfg };
  var keys = parseKeys(o.keys);
  return { cfg: cfg, keys: keys, error: keys ? null : 'keys missing or invalid' };
}

// Replaces the configuration (the object config.json would hold; null = none). Answers the
// problem found, or null when it is fully usable.
function setConfig(o) {
  state = fromObject(o);
  return state.error;
}

function headerValue(headers, name) {
  var list = (headers && headers[name]) || [];
  return list.length ? String(list[0].value) : '';
}

// Values of cookie `name` from the raw Cookie headers, at most 4. Tolerant by design:
// nothing is URL-decoded (a token never needs it), odd pairs are skipped, nothing throws.
function cookieValues(headers, name) {
  var out = [];
  var list = (headers && headers.cookie) || [];
  for (var i = 0; i < list.length && out.length < 4; i++) {
    var pairs = String(list[i] && list[i].value).split(';');
    for (var j = 0; j < pairs.length && out.length < 4; j++) {
      var eq = pairs[j].indexOf('=');
      if (eq > 0 && pairs[j].slice(0, eq).trim() === name) out.push(pairs[j].slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
    }
  }
  return out;
}

// Neutral response → Lambda@Edge response.
function toEdge(res) {
  if (!res) return null;
  var headers = {};
  for (var k in res.headers) {
    headers[k] = [{ key: k.replace(/(^|-)([a-z])/g, (m, d, c) => d + c.toUpperCase()), value: res.headers[k] }];
  }
  return { status: String(res.status), statusDescription: STATUS_TEXT[res.status], headers: headers, body: res.body };
}

exports.handler = async (event) => {
  var r = event.Records[0].cf.request;
  dropViewerHeaders(r.headers || {});
  var req = request(r.uri, r.querystring || '', headerValue(r.headers, 'accept'));
  if (req.room) return r;
  var s = state;
  if (!s.cfg) return toEdge(failResponse(FAIL_MODE, req, 'config.json', s.error)) || r;
  var eventId = gatedEvent(s.cfg, req);
  if (eventId === null) return r;
  if (!eventId) return toEdge(refusal(req, 400, BAD_PATH, {}));
  var tokens = withBearer(s.cfg, req, cookieValues(r.headers, s.cfg.cookiePrefix + eventId), headerValue(r.headers, 'authorization'));
  if (tokens.length && !s.keys) return toEdge(failResponse(s.cfg.failMode, req, 'keys', s.error)) || r;
  // A check that throws applies the fail mode, as in the CloudFront Function.
  try {
    return toEdge(checkTokens(req, s.cfg, eventId, tokens, s.keys, Math.floor(Date.now() / 1000))) || r;
  } catch (e) {
    return toEdge(failResponse(s.cfg.failMode, req, 'keys', 'missing or invalid')) || r;
  }
};
exports.setConfig = setConfig;
// For tests and tooling: verifyToken(token, eventId, nowSeconds, keys, {issuer, audience, leewaySeconds}).
exports.verifyToken = verifyToken;
exports.parseKeys = parseKeys;
