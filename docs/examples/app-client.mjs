#!/usr/bin/env node
// An app's way through vwr, end to end (docs/apps.md): join tier 1, wait on the cached status
// document, check at the turn, carry the tier-1 token as `Authorization: Bearer` on API
// calls, join tier 2, wait on its line document, and call the protected API with the entry
// token, renewing it before it expires. Node 20+, no dependencies.
//
//   node docs/examples/app-client.mjs --base http://127.0.0.1:8080 --event e1 [--call /api/seats/e1/A1]
//
// Prints one JSON line per step; the last is {"step":"done",…}. Exits 1 with the answer that
// stopped it. A sale with proof of work or enqueue tokens needs more (docs/abuse.md).

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []),
);
const base = (args.base || 'http://127.0.0.1:8080').replace(/\/$/, '');
const event = args.event || 'e1';
const protectedPath = args.call || `/api/seats/${event}/A1`;
const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));
const say = (step, fields = {}) => console.log(JSON.stringify({ step, ...fields }));
const cookies = {}; // name → value: an app keeps the cookies tier 2 sets (its identity)

async function call(method, path, headers = {}) {
  const jar = Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(base + path, { method, headers: { accept: 'application/json', ...(jar ? { cookie: jar } : {}), ...headers } });
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const at = pair.indexOf('=');
    cookies[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = text; }
  return { status: res.status, body };
}

function fail(step, r) {
  say(step, { failed: true, status: r.status, body: r.body });
  process.exit(1);
}

// 1. Tier 1: a place in line, and the secret that proves the ticket is ours.
const joined = await call('POST', `/vwr-api/vwr/assign/${event}`);
if (joined.status !== 200) fail('assign', joined);
const { requestId, requestSecret, position } = joined.body;
say('assign', { position });

// 2. Wait on the public status document (cached 1 s at the CDN: no call of our own reaches
// vwr), then `check` once at the turn.
let token = null;
for (;;) {
  const doc = await call('GET', `/vwr-api/vwr/status/${event}`);
  if (doc.status !== 200) fail('status document', doc);
  if (doc.body.servingCounter >= position) {
    const c = await call('GET', `/vwr-api/vwr/check/${event}/${encodeURIComponent(requestId)}`, { 'x-vwr-request-secret': requestSecret });
    if (c.status !== 200) fail('check', c);
    if (c.body.admitted) { token = c.body.token; break; }
  }
  await sleep(1);
}
say('tier1 admitted', { tokenLength: token.length });
const bearer = { authorization: `Bearer ${token}` };

// 3. Tier 2 (the booking line): the tier-1 token identifies us once; the identity cookie
// vwr_t2_{event} it sets does from then on.
let t2 = await call('POST', `/api/queue/check/${event}`, { 'x-vwr-token': token });
if (t2.status !== 200) fail('tier2 check', t2);
while (t2.body.status !== 'active') {
  const { lineScore, checkedAt } = t2.body;
  say('tier2 waiting', { position: t2.body.position });
  for (;;) {
    await sleep(1);
    const line = await call('GET', `/api/queue/line/${event}`);
    if (line.status !== 200) fail('line document', line);
    // Both times are the server's, in seconds with a millisecond fraction (docs/api.md#times):
    // a document older than the join does not know of it yet.
    if (line.body.updatedAt >= checkedAt && (line.body.front === null || line.body.front > lineScore)) break;
  }
  t2 = await call('POST', `/api/queue/check/${event}`);
  if (t2.status !== 200) fail('tier2 check', t2);
}
let entry = t2.body;
say('tier2 admitted', { expiresAt: entry.expiresAt });

// 4. The protected API: the tier-1 token for the edge (Bearer), the entry token for tier 2's
// gate. Renew the entry token (`status`) when a third of its life is left.
const renew = async () => {
  const s = await call('GET', `/api/queue/status/${event}`);
  if (s.status !== 200 || s.body.status !== 'active') fail('renew', s);
  entry = s.body;
};
const calls = Number(args.calls || 2);
for (let i = 0; i < calls; i++) {
  if (entry.expiresAt - Date.now() / 1000 < 10) await renew();
  const r = await call('GET', protectedPath, { ...bearer, 'x-queue-entry-token': entry.entryToken });
  if (r.status !== 200) fail('protected call', r);
  say('protected call', { status: r.status });
  if (i === 0) { await renew(); say('renewed', { expiresAt: entry.expiresAt }); }
}

// 5. Done: leave, so the slot is freed for the next in line.
const left = await call('POST', `/api/queue/leave/${event}`);
say('done', { left: left.status === 204 });
