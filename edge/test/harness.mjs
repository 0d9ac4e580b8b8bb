// Test harness: loads the SHIPPED edge files as they are and runs requests through them.
//
// - The CloudFront Function (an ES module importing 'crypto' and 'cloudfront') runs in a
//   node:vm context. Only its two import lines are rewritten, into context globals: a fake
//   `cloudfront` module whose KeyValueStore is a stub, and Node's `crypto`.
// - The Lambda@Edge handler is loaded with require(), fresh each time.
import { createHmac, randomBytes } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
export const EDGE = join(here, '..');
export const DIST = join(EDGE, 'dist');
const require = createRequire(import.meta.url);

const tempDirs = [];
process.on('exit', () => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

export const TEST_KVS_ID = 'a1b2c3d4-0000-4000-8000-00000000kvs0';

/** Replaces the ES `import` lines the CloudFront runtime resolves by context globals. */
export function cloudFrontScript(source) {
  const imports = [];
  const body = source.replace(/^import (\w+) from '([\w-]+)';$/gm, (line, name, mod) => {
    imports.push({ name, mod });
    return '';
  });
  if (/^\s*(import|export)\b/m.test(body)) throw new Error('unexpected import/export left in the function');
  return { body, imports };
}

/**
 * Loads a built CloudFront Function. `kvs` is the KeyValueStore content ({key: string});
 * `kvsId` replaces the deploy placeholder (as Terraform will); `failMode` likewise.
 * Answers {handler, logs, kvs, setNow(seconds), context}.
 */
export function loadCloudFrontFunction({ file = 'cloudfront-function.js', kvs = {}, kvsId = TEST_KVS_ID, failMode } = {}) {
  let source = readFileSync(join(DIST, file), 'utf8');
  if (kvsId !== null) source = source.split('__VWR_KVS_ID__').join(kvsId);
  if (failMode !== undefined) source = source.split('__VWR_FAIL_MODE__').join(failMode);
  const { body, imports } = cloudFrontScript(source);
  const logs = [];
  const store = { entries: { ...kvs }, broken: false, reads: [] };
  const cloudfront = {
    kvs(id) {
      if (id !== TEST_KVS_ID) throw new Error(`no KeyValueStore ${id} is associated with this function`);
      return {
        async get(key) {
          store.reads.push(key);
          if (store.broken) throw new Error('KeyValueStore read failed');
          if (!Object.prototype.hasOwnProperty.call(store.entries, key)) throw new Error(`key ${key} not found`);
          return store.entries[key];
        },
      };
    },
  };
  const modules = { crypto: nodeCrypto, cloudfront };
  const context = { Buffer, console: { log: (line) => logs.push(line) } };
  for (const { name, mod } of imports) {
    if (!modules[mod]) throw new Error(`the CloudFront runtime has no module ${mod}`);
    context[name] = mod === 'crypto' ? { createHmac: nodeCrypto.createHmac, createHash: nodeCrypto.createHash } : modules[mod];
  }
  vm.createContext(context);
  vm.runInContext(body, context, { filename: file });
  let now = null;
  context.__now = () => (now === null ? Date.now() : now * 1000);
  vm.runInContext('Date.now = function () { return __now(); };', context);
  return {
    handler: (event) => context.handler(event),
    logs,
    kvs: store,
    setNow: (seconds) => {
      now = seconds;
    },
    context,
  };
}

/**
 * Loads the built Lambda@Edge handler afresh. With `config`, it is written as config.json
 * beside a copy of index.js (the bundled form); without, the module loads from dist
 * (where no config.json exists) and setConfig() can feed it.
 */
export function loadLambdaEdge({ config, configText, failMode } = {}) {
  let file = join(DIST, 'lambda-edge', 'index.js');
  if (config !== undefined || configText !== undefined || failMode !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'vwr-edge-'));
    tempDirs.push(dir);
    let source = readFileSync(file, 'utf8');
    if (failMode !== undefined) source = source.split('__VWR_FAIL_MODE__').join(failMode);
    writeFileSync(join(dir, 'index.js'), source);
    if (config !== undefined || configText !== undefined) {
      writeFileSync(join(dir, 'config.json'), configText !== undefined ? configText : JSON.stringify(config));
    }
    file = join(dir, 'index.js');
  }
  delete require.cache[require.resolve(file)];
  return require(file);
}

/** Runs `fn` with Date.now() fixed at `seconds` (the Lambda@Edge handler uses the real clock). */
export async function atTime(seconds, fn) {
  const real = Date.now;
  Date.now = () => seconds * 1000;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

/** Captures console.log lines written while `fn` runs. */
export async function captureLogs(fn) {
  const real = console.log;
  const lines = [];
  console.log = (line) => lines.push(String(line));
  try {
    const result = await fn();
    return { result, lines };
  } finally {
    console.log = real;
  }
}

// ---- Requests -------------------------------------------------------------------------

/**
 * A request spec: {uri, query (raw, without '?'), accept, cookies: [[name, value], …],
 * cookieHeaders: ['raw Cookie header', …] (Lambda@Edge only), headers: {Name: value, …}
 * (other viewer headers, names as the viewer spelled them; both platforms key them in lower
 * case)}.
 */
export function cloudFrontEvent(spec) {
  const querystring = {};
  for (const part of (spec.query || '').split('&').filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    addMulti(querystring, name, value);
  }
  const cookies = {};
  for (const [name, value] of spec.cookies || []) addMulti(cookies, name, value);
  const headers = { host: { value: 'tickets.example.com' } };
  if (spec.accept) headers.accept = { value: spec.accept };
  for (const [name, value] of Object.entries(spec.headers || {})) headers[name.toLowerCase()] = { value };
  return {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: '192.0.2.1' },
    request: { method: 'GET', uri: spec.uri, querystring, headers, cookies },
  };
}

function addMulti(obj, name, value) {
  if (!obj[name]) obj[name] = { value };
  else {
    obj[name].multiValue = obj[name].multiValue || [{ value: obj[name].value }];
    obj[name].multiValue.push({ value });
  }
}

export function lambdaEdgeEvent(spec) {
  const headers = { host: [{ key: 'Host', value: 'tickets.example.com' }] };
  if (spec.accept) headers.accept = [{ key: 'Accept', value: spec.accept }];
  for (const [name, value] of Object.entries(spec.headers || {})) headers[name.toLowerCase()] = [{ key: name, value }];
  const raw = [...(spec.cookieHeaders || [])];
  if (spec.cookies && spec.cookies.length) raw.push(spec.cookies.map(([n, v]) => `${n}=${v}`).join('; '));
  if (raw.length) headers.cookie = raw.map((value) => ({ key: 'Cookie', value }));
  return {
    Records: [{ cf: { config: { eventType: 'viewer-request' }, request: { clientIp: '192.0.2.1', method: 'GET', uri: spec.uri, querystring: spec.query || '', headers } } }],
  };
}

/** Reduces either platform's answer to {pass} or {status, headers: {name: value}, body}. */
export function outcome(result) {
  if (result && typeof result.uri === 'string') return { pass: true };
  const headers = {};
  for (const [k, v] of Object.entries(result.headers || {})) headers[k] = Array.isArray(v) ? v[0].value : v.value;
  const status = Number(result.statusCode !== undefined ? result.statusCode : result.status);
  const body = result.body && typeof result.body === 'object' ? result.body.data : result.body;
  return { pass: false, status, headers, body: body || '' };
}

// ---- Tokens (test-time keys) ----------------------------------------------------------

const b64u = (x) => Buffer.from(x).toString('base64url');

export function newKey() {
  return randomBytes(32);
}

export function keysText(keys) {
  return Object.entries(keys).map(([kid, key]) => `${kid}:${key.toString('base64url')}`).join(',');
}

/** An HS256 JWT over `claims` (defaults: a valid tier-1 token for e1 at `now`). */
export function signToken(key, kid, claims) {
  const head = b64u(JSON.stringify({ typ: 'JWT', alg: 'HS256', kid }));
  const body = b64u(JSON.stringify(claims));
  const sig = createHmac('sha256', key).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

export function tier1Claims(now, overrides = {}) {
  return { iss: 'vwr', aud: 'vwr-edge', sub: 'req-1', eid: 'e1', pos: 7, tier: 1, iat: now, nbf: now, exp: now + 600, jti: 'j-1', ...overrides };
}

export const LAYOUT_RULES = [
  { pathPrefix: '/events/', eventSegment: 2 },
  { pathPrefix: '/api/seats/', eventSegment: 3 },
  { pathPrefix: '/api/reservations/', eventSegment: 3 },
];

/** Runs a request spec through both shipped handlers; answers [{platform, outcome, logs}]. */
export async function runBoth(spec, { config, keys, now } = {}) {
  const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(config), keys } });
  if (now !== undefined) cff.setNow(now);
  const cfResult = outcome(await cff.handler(cloudFrontEvent(spec)));
  const edge = loadLambdaEdge();
  edge.setConfig({ ...config, keys });
  const run = () => edge.handler(lambdaEdgeEvent(spec));
  const { result, lines } = await captureLogs(() => (now === undefined ? run() : atTime(now, run)));
  return [
    { platform: 'cloudfront-function', outcome: cfResult, logs: cff.logs.map((l) => JSON.parse(l)) },
    { platform: 'lambda-edge', outcome: outcome(result), logs: lines.map((l) => JSON.parse(l)) },
  ];
}
