// The proof-of-work solver (static/assets/pow-worker.js) against Node's crypto: its SHA-256,
// its count of leading zero BITS (vwr_tier1::pow::work, not hex digits), its nonces, and the
// three ways the file runs (a Web Worker, a script on the page, a Node module).
import assert from 'node:assert/strict';
import { createHash, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, test } from 'node:test';

const FILE = join(import.meta.dirname, '..', 'assets', 'pow-worker.js');
const pow = createRequire(import.meta.url)(FILE);

const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest();
/** Leading zero bits of `bytes` (as vwr_tier1::pow::leading_zero_bits). */
function zeroBits(bytes) {
  let n = 0;
  for (const b of bytes) {
    if (b !== 0) return n + Math.clz32(b) - 24;
    n += 8;
  }
  return n;
}
/** The server's rule: leading zero bits of SHA-256(`challenge:nonce`). */
const work = (challenge, nonce) => zeroBits(sha256(`${challenge}:${nonce}`));
/** The rule a page must not use: whole leading zero hex digits, times 4. */
const hexWork = (challenge, nonce) => sha256(`${challenge}:${nonce}`).toString('hex').match(/^0*/)[0].length * 4;

const NONCE = /^[A-Za-z0-9_-]{1,64}$/;
const CHALLENGES = ['k1.29999999.qL3kD9vS0xXb_7Gm', 'k2.30000001.AAAAAAAAAAAAAAAA', 'x', 'kid-with-a-long-name.123.' + 'm'.repeat(100)];

describe('SHA-256', () => {
  test('matches Node for every length around the block boundaries, and UTF-8 text', () => {
    for (let len = 0; len <= 200; len++) {
      const s = 'abcdefghij'.repeat(21).slice(0, len);
      assert.equal(pow.sha256Hex(s), sha256(s).toString('hex'), `length ${len}`);
    }
    for (const s of ['대기실', 'ü€😀'.repeat(20), 'k1.29999999.abc:0']) assert.equal(pow.sha256Hex(s), sha256(s).toString('hex'), s);
  });

  test('zero bits are counted across words (vwr_tier1::pow tests)', () => {
    // The digest as 8 big-endian 32-bit words.
    assert.equal(pow.zeroBits([0x000010ff, 1, 0, 0, 0, 0, 0, 0]), 19);
    assert.equal(pow.zeroBits([0x80000000 | 0, 0, 0, 0, 0, 0, 0, 0]), 0);
    assert.equal(pow.zeroBits([0, 0x0fffffff, 0, 0, 0, 0, 0, 0]), 36);
    assert.equal(pow.zeroBits([0, 0, 0, 0, 0, 0, 0, 0]), 256);
  });
});

describe('the search', () => {
  test('nonces are the prefix and a hex counter, in order (an odometer over digit counts)', () => {
    const s = pow.searcher('c', 0, 'p');
    for (let i = 0; i < 5000; i++) assert.equal(s.next(1), 'p' + i.toString(16));
    assert.equal(s.tried(), 5000);
  });

  test('the first nonce found is the first that meets the difficulty by the server rule (bits), for every difficulty 0–14', () => {
    for (const c of CHALLENGES) {
      for (let d = 0; d <= 14; d++) {
        const s = pow.searcher(c, d, 'ab12');
        let nonce = null;
        while (!nonce) nonce = s.next(4096);
        const n = parseInt(nonce.slice(4), 16);
        assert.equal(nonce, 'ab12' + n.toString(16));
        assert.ok(work(c, nonce) >= d, `${c} d=${d}: ${nonce} has ${work(c, nonce)} bits`);
        for (let i = 0; i < n; i++) assert.ok(work(c, 'ab12' + i.toString(16)) < d, `${c} d=${d}: ab12${i.toString(16)} met it earlier`);
      }
    }
  });

  test('bits, not hex digits: odd difficulties take solutions a hex-digit rule would refuse', () => {
    let differs = 0;
    for (let i = 0; i < 40; i++) {
      const c = `k1.${29999999 + i}.vector`;
      for (const d of [5, 6, 7, 9, 10, 11]) {
        const nonce = pow.solve(c, d, 'v');
        assert.ok(work(c, nonce) >= d);
        if (hexWork(c, nonce) < d) differs++;
      }
    }
    assert.ok(differs > 0, 'some solutions have a zero-bit count that is not a multiple of 4');
  });

  test('fixed vectors (computed with Node crypto; prefix "" is vwr_tier1::pow::solve exactly)', () => {
    // vwr_tier1::pow::solve tries format!("{n:x}") from 0: the same nonces as prefix "".
    for (const [c, d, nonce] of VECTORS) {
      assert.equal(pow.solve(c, d, ''), nonce, `${c} at ${d}`);
      assert.ok(work(c, nonce) >= d);
    }
    assert.equal(work('k2.30000001.AAAAAAAAAAAAAAAA', '8a5'), 13, 'accepted at 13 bits, though only 3 hex digits are zero');
    assert.equal(hexWork('k2.30000001.AAAAAAAAAAAAAAAA', '8a5'), 12);
  });

  test('solve with a random prefix: valid nonces (1–64 of A-Za-z0-9_-) meeting 8, 12 and 16 bits', () => {
    for (const d of [8, 12, 16]) {
      for (const c of CHALLENGES) {
        const nonce = pow.solve(c, d);
        assert.match(nonce, NONCE);
        assert.ok(work(c, nonce) >= d, `${c} d=${d}: ${nonce}`);
      }
    }
  });

  test('random prefixes: 12 hex digits, different for every page (the same challenge must not give the same nonce)', () => {
    const seen = new Set();
    for (let i = 0; i < 1000; i++) {
      const p = pow.randomPrefix();
      assert.match(p, /^[0-9a-f]{12}$/);
      seen.add(p);
    }
    assert.equal(seen.size, 1000);
    assert.notEqual(pow.solve(CHALLENGES[0], 8), pow.solve(CHALLENGES[0], 8));
  });

  test('sliced (a page without Workers): ~20-ms slices between timer callbacks, then done; stop() ends it', () => {
    let clock = 0;
    const now = () => (clock += 1); // every look at the clock: 1 ms
    const run = (difficulty, slices) => {
      const queue = [];
      const found = [];
      const stop = pow.solveSliced(CHALLENGES[1], difficulty, (n) => found.push(n), (fn, ms) => queue.push({ fn, ms }), now);
      assert.equal(queue.length, 1, 'nothing runs before the first timer');
      for (let i = 0; i < slices && queue.length && !found.length; i++) {
        const t = queue.shift();
        assert.equal(t.ms, 0);
        const before = clock;
        t.fn();
        if (!found.length) assert.ok(clock - before >= 20 && clock - before <= 22, `a slice of ~20 ms: ${clock - before}`);
      }
      return { queue, found, stop };
    };
    // Too hard to finish: every slice returns, and leaves the next one queued.
    const hard = run(48, 5);
    assert.deepEqual(hard.found, []);
    assert.equal(hard.queue.length, 1);
    hard.stop();
    hard.queue.shift().fn();
    assert.equal(hard.queue.length, 0, 'stopped: no more slices');
    assert.deepEqual(hard.found, []);
    // Solvable: done, with a valid nonce.
    const easy = run(12, 1000);
    assert.equal(easy.found.length, 1);
    assert.match(easy.found[0], NONCE);
    assert.ok(work(CHALLENGES[1], easy.found[0]) >= 12);
  });
});

describe('where the file runs', () => {
  const src = readFileSync(FILE, 'utf8');

  test('as a Web Worker: {challenge, difficulty} in, {nonce, hashes, ms} out', () => {
    const out = [];
    const self = { postMessage: (m) => out.push(m) };
    runInNewContext(src, { self, TextEncoder, crypto: webcrypto });
    assert.equal(typeof self.onmessage, 'function');
    assert.equal(self.vwrPow, undefined);
    self.onmessage({ data: { challenge: CHALLENGES[0], difficulty: 10 } });
    assert.equal(out.length, 1);
    assert.match(out[0].nonce, NONCE);
    assert.ok(work(CHALLENGES[0], out[0].nonce) >= 10);
    assert.ok(out[0].hashes >= 1);
  });

  test('as a script on the page (no Worker): window.vwrPow, no message handler', () => {
    const self = {};
    runInNewContext(src, { self, document: {}, TextEncoder, crypto: webcrypto });
    assert.equal(self.onmessage, undefined);
    assert.equal(typeof self.vwrPow.solveSliced, 'function');
    const nonce = self.vwrPow.solve(CHALLENGES[2], 9);
    assert.ok(work(CHALLENGES[2], nonce) >= 9);
  });

  test('stays within the page policy: no eval, no imports, nothing from elsewhere; small', () => {
    assert.ok(!/\beval\(|new Function\b|importScripts|fetch\(|XMLHttpRequest/.test(src));
    assert.ok(!/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//i.test(src), 'loads nothing from elsewhere');
    // Not part of the waiting page's weight (app.test.mjs): it loads only when `assign` asks
    // for a proof of work. Its own budget:
    assert.ok(src.length < 10 * 1024, `${src.length} bytes`);
  });
});

// [challenge, difficulty, nonce]: the first hex counter n (nonce format!("{n:x}"), no prefix)
// with SHA-256(challenge:nonce) starting with `difficulty` zero bits, found with Node crypto.
// In the comments: the zero bits the found nonce has, and its digest's first hex digits.
const VECTORS = [
  ['k1.29999999.qL3kD9vS0xXb_7Gm', 1, '0'], // 2 bits, 2404e293
  ['k1.29999999.qL3kD9vS0xXb_7Gm', 5, '16'], // 7 bits, 013bc7ed
  ['k1.29999999.qL3kD9vS0xXb_7Gm', 8, '50'], // 8 bits, 00d5e002
  ['k1.29999999.qL3kD9vS0xXb_7Gm', 12, '2f5'], // 16 bits, 0000cfe4
  ['k1.29999999.qL3kD9vS0xXb_7Gm', 16, '2f5'], // 16 bits, 0000cfe4
  ['k2.30000001.AAAAAAAAAAAAAAAA', 7, '5'], // 8 bits, 00eb771b
  ['k2.30000001.AAAAAAAAAAAAAAAA', 13, '8a5'], // 13 bits, 00072b77: three zero hex digits only
  ['k2.30000001.AAAAAAAAAAAAAAAA', 18, '55bd0'], // 20 bits, 000009db
];
