#!/usr/bin/env node
// Micro-benchmark of the shipped edge verifier: µs per token verification (HMAC-SHA256,
// JSON parsing, all claim checks) and per whole viewer-request decision, with a key made
// up at run time.   node edge/bench.mjs [iterations]
import { loadCloudFrontFunction, cloudFrontEvent, keysText, lambdaEdgeEvent, loadLambdaEdge, newKey, signToken, tier1Claims, LAYOUT_RULES } from './test/harness.mjs';

const N = Number(process.argv[2] || 50000);
const now = Math.floor(Date.now() / 1000);
const key = newKey();
const keys = keysText({ k1: key });
const token = signToken(key, 'k1', tier1Claims(now));
const config = { events: ['e1'], rules: LAYOUT_RULES };
const opts = { issuer: 'vwr', audience: 'vwr-edge', leewaySeconds: 30 };

async function measure(label, fn) {
  for (let i = 0; i < Math.min(N, 5000); i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / N;
  console.log(`${label.padEnd(58)} ${us.toFixed(2)} µs/op`);
}

const edge = loadLambdaEdge();
edge.setConfig({ ...config, keys });
const parsedKeys = edge.parseKeys(keys);
const cff = loadCloudFrontFunction({ kvs: { config: JSON.stringify(config), keys } });
const cfKeys = cff.context.parseKeys(keys);

console.log(`node ${process.version}, ${N} iterations, token ${token.length} chars`);
await measure('verifyToken (Lambda@Edge build, Node realm)', () => {
  if (!edge.verifyToken(token, 'e1', now, parsedKeys, opts).ok) throw new Error('token refused');
});
await measure('verifyToken (CloudFront Function build, vm context)', () => {
  if (!cff.context.verifyToken(token, 'e1', now, cfKeys, opts).ok) throw new Error('token refused');
});
const leEvent = lambdaEdgeEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', token]] });
await measure('Lambda@Edge handler, valid cookie (whole decision)', () => edge.handler(leEvent));
const cfEvent = cloudFrontEvent({ uri: '/events/e1', cookies: [['vwr_t1_e1', token]] });
await measure('CloudFront Function handler, valid cookie (+ 2 stub KVS reads)', () => cff.handler(cfEvent));
