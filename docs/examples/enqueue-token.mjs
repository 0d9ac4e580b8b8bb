// The site's side of "one place per account" (docs/abuse.md#one-place-per-account): after its
// own login, the site signs a short ES256 JWT {k: account, eid: eventId, exp} and sets it as
// the cookie `vwr_enqueue_{eventId}` (or sends it as `X-VWR-Enqueue-Token`). vwr holds only the
// public half (`VWR_ENQUEUE_JWKS`). Node's own crypto, no package: a JWT is three base64url
// parts, and ES256 wants the raw 64-byte (r || s) signature (`dsaEncoding: 'ieee-p1363'`).
// `tests/e2e/abuse.test.mjs` runs this file against `vwr dev`.
import { createPrivateKey, sign } from 'node:crypto';

/**
 * Parses `SITE_ENQUEUE_KEY` as `vwr keys generate` prints it: `kid:base64url(PKCS#8 DER)`.
 * Keep it in the site's secret store, never in the browser.
 */
export function siteKey(text) {
  const i = text.indexOf(':');
  if (i < 1) throw new Error('SITE_ENQUEUE_KEY must be kid:base64url');
  const key = createPrivateKey({ key: Buffer.from(text.slice(i + 1), 'base64url'), format: 'der', type: 'pkcs8' });
  return { kid: text.slice(0, i), key };
}

/** The enqueue token of `account` for `eventId`, valid `ttlSeconds` (keep it short: minutes). */
export function enqueueToken({ kid, key }, account, eventId, ttlSeconds = 600) {
  const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = part({ alg: 'ES256', typ: 'JWT', kid });
  const body = part({ k: String(account), eid: eventId, exp: Math.floor(Date.now() / 1000) + ttlSeconds });
  const sig = sign('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' });
  return `${head}.${body}.${sig.toString('base64url')}`;
}

/**
 * The cookie to set on the site's response once the visitor is signed in: same site as the
 * waiting room (the page's `assign` sends it by itself), HttpOnly, short.
 */
export function enqueueCookie(token, eventId, ttlSeconds = 600) {
  return `vwr_enqueue_${eventId}=${token}; Max-Age=${ttlSeconds}; Path=/vwr-api/; Secure; HttpOnly; SameSite=Lax`;
}
