/* vwr proof of work (docs/abuse.md#proof-of-work): a nonce such that SHA-256 of the UTF-8
 * string `challenge:nonce` starts with `difficulty` zero bits — bits, not hex digits, as
 * vwr_tier1::pow::work counts them. The waiting page (app.js) loads this file only when
 * `assign` asks for a proof: as a Web Worker, or (no Worker) as a script whose sliced solver it
 * runs on its own thread; under Node (tests) it only exports.
 *
 * SHA-256 is computed here in plain JavaScript, not with crypto.subtle.digest: the search hashes
 * one short message after another, and subtle's per-call promise and thread hop cost more than
 * the hash itself (measured in headless Chromium: static/README.md, "Proof of work").
 *
 * Nonces are a random 12-hex-digit prefix and a hex counter: every visitor in the same minute
 * gets the same challenge, and a server accepts a solution once, so two pages must not find
 * the same nonce. */
(function (self) {
  'use strict';

  var K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ];
  var IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  for (var k = 0; k < 64; k++) K[k] |= 0;
  for (k = 0; k < 8; k++) IV[k] |= 0;
  var W = new Int32Array(64);

  /** UTF-8 bytes of `s`. */
  function utf8(s) {
    if (typeof TextEncoder === 'function') return new TextEncoder().encode(s);
    var b = unescape(encodeURIComponent(s));
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out;
  }

  /** A message buffer of `len` bytes with SHA-256 padding: the blocks to hash. */
  function padded(len) {
    var buf = new Uint8Array((((len + 8) >> 6) + 1) * 64);
    buf[len] = 0x80;
    var bits = len * 8;
    var end = buf.length;
    buf[end - 5] = bits / 0x100000000;
    buf[end - 4] = bits >>> 24;
    buf[end - 3] = bits >>> 16;
    buf[end - 2] = bits >>> 8;
    buf[end - 1] = bits;
    return buf;
  }

  /** SHA-256 of the padded blocks in `buf` into `h` (8 signed 32-bit words, big-endian). */
  function compress(buf, h) {
    for (var i = 0; i < 8; i++) h[i] = IV[i];
    for (var off = 0; off < buf.length; off += 64) {
      var t, t2, j;
      for (j = 0; j < 16; j++) {
        var p = off + j * 4;
        W[j] = (buf[p] << 24) | (buf[p + 1] << 16) | (buf[p + 2] << 8) | buf[p + 3];
      }
      for (j = 16; j < 64; j++) {
        var x = W[j - 15];
        var y = W[j - 2];
        W[j] =
          ((((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
            W[j - 7] +
            (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
            W[j - 16]) |
          0;
      }
      var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
      for (j = 0; j < 64; j++) {
        t =
          (hh +
            (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
            ((e & f) ^ (~e & g)) +
            K[j] +
            W[j]) |
          0;
        t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        hh = g;
        g = f;
        f = e;
        e = (d + t) | 0;
        d = c;
        c = b;
        b = a;
        a = (t + t2) | 0;
      }
      h[0] = (h[0] + a) | 0;
      h[1] = (h[1] + b) | 0;
      h[2] = (h[2] + c) | 0;
      h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0;
      h[5] = (h[5] + f) | 0;
      h[6] = (h[6] + g) | 0;
      h[7] = (h[7] + hh) | 0;
    }
    return h;
  }

  /** Leading zero bits of the digest words `h` (as vwr_tier1::pow::leading_zero_bits). */
  function zeroBits(h) {
    for (var i = 0; i < 8; i++) if (h[i] !== 0) return i * 32 + Math.clz32(h[i]);
    return 256;
  }

  /** SHA-256 of the UTF-8 string `s`, in hex (for tests). */
  function sha256Hex(s) {
    var bytes = utf8(s);
    var buf = padded(bytes.length);
    buf.set(bytes);
    var h = compress(buf, new Int32Array(8));
    var out = '';
    for (var i = 0; i < 8; i++) out += ('0000000' + (h[i] >>> 0).toString(16)).slice(-8);
    return out;
  }

  /** 12 random hex digits (48 bits): this page's nonces differ from every other page's. */
  function randomPrefix() {
    var w = new Uint32Array(2);
    var c = typeof crypto === 'object' ? crypto : null;
    if (c && c.getRandomValues) c.getRandomValues(w);
    else for (var i = 0; i < 2; i++) w[i] = Math.floor(Math.random() * 0x100000000);
    return ('0000000' + w[0].toString(16)).slice(-8) + ('000' + (w[1] & 0xffff).toString(16)).slice(-4);
  }

  /**
   * Tries the nonces `prefix` + hex(0), hex(1), …: `next(count)` tries `count` more and answers
   * the first nonce whose work meets `difficulty`, or null; `tried()` counts the hashes.
   */
  function searcher(challenge, difficulty, prefix) {
    var head = utf8(challenge + ':' + prefix);
    var h = new Int32Array(8);
    var digits = 0;
    var buf = null;
    var n = 0;
    // The counter's hex digits, in place in the message (an odometer; one more digit: a new
    // buffer).
    function grow() {
      digits++;
      buf = padded(head.length + digits);
      buf.set(head);
      buf[head.length] = 0x31; // "1000…", the first number with this many digits
      for (var i = 1; i < digits; i++) buf[head.length + i] = 0x30;
      if (digits === 1) buf[head.length] = 0x30;
    }
    function step() {
      for (var i = head.length + digits - 1; i >= head.length; i--) {
        var ch = buf[i];
        if (ch === 0x66) {
          buf[i] = 0x30; // f → 0, carry
          continue;
        }
        buf[i] = ch === 0x39 ? 0x61 : ch + 1; // 9 → a
        return;
      }
      grow();
    }
    grow();
    return {
      next: function (count) {
        for (var i = 0; i < count; i++) {
          if (n > 0) step();
          n++;
          if (zeroBits(compress(buf, h)) >= difficulty) {
            var s = prefix;
            for (var j = 0; j < digits; j++) s += String.fromCharCode(buf[head.length + j]);
            return s;
          }
        }
        return null;
      },
      tried: function () {
        return n;
      },
    };
  }

  /** A nonce for `challenge` at `difficulty` (all at once: in a Worker, or tests). */
  function solve(challenge, difficulty, prefix) {
    var s = searcher(challenge, difficulty, prefix === undefined ? randomPrefix() : prefix);
    for (;;) {
      var nonce = s.next(65536);
      if (nonce) return nonce;
    }
  }

  /**
   * The same on a page without Workers: slices of ~`sliceMs` (default 20 ms), each followed by
   * `later(fn, 0)` so the page stays responsive; `done(nonce)` at the end. Answers `stop()`.
   */
  function solveSliced(challenge, difficulty, done, later, now, sliceMs) {
    var s = searcher(challenge, difficulty, randomPrefix());
    var stopped = false;
    now = now || Date.now;
    function slice() {
      if (stopped) return;
      var t = now();
      do {
        var nonce = s.next(1000);
        if (nonce) return done(nonce);
      } while (now() - t < (sliceMs || 20));
      later(slice, 0);
    }
    later(slice, 0);
    return function () {
      stopped = true;
    };
  }

  var api = { sha256Hex: sha256Hex, zeroBits: zeroBits, randomPrefix: randomPrefix, searcher: searcher, solve: solve, solveSliced: solveSliced };

  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else if (typeof document === 'undefined') {
    // A Web Worker: {challenge, difficulty} in, {nonce, hashes, ms} out.
    self.onmessage = function (e) {
      var d = e.data || {};
      var t = Date.now();
      var s = searcher(String(d.challenge), Number(d.difficulty) || 0, randomPrefix());
      var nonce = null;
      while (!nonce) nonce = s.next(65536);
      self.postMessage({ nonce: nonce, hashes: s.tried(), ms: Date.now() - t });
    };
  } else {
    // A script on the page (no Worker): app.js runs solveSliced.
    self.vwrPow = api;
  }
})(typeof self === 'object' ? self : this);
