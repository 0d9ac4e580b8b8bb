/* vwr draw: the permutation of the randomized open, in the browser, so a visitor can check
 * their drawn position from the revealed seed (docs/fairness.md; the same computation as
 * vwr-tier1's draw.rs, checked against functions/tier1/tests/draw-vectors.json).
 * Vanilla JS, no dependencies, no build step; BigInt for 64-bit arithmetic, Web Crypto for
 * SHA-256 and HMAC-SHA256 (so the crypto functions are async). Under Node (tests) it exports
 * its functions; in the browser it defines `VwrDraw`. */
(function (root) {
  'use strict';

  var LABEL = 'vwr/draw/v1:';
  var ROUNDS = 16;
  var MAX_SIZE = BigInt(2) ** BigInt(62);
  var ZERO = BigInt(0);
  var ONE = BigInt(1);
  var TWO = BigInt(2);

  /** An Error with a stable `code` (size_zero, size_too_large, index_out_of_range, bad_hex,
   *  bad_number, not_in_prequeue, bad_ticket, no_crypto). */
  function drawError(code, message) {
    var e = new Error(message);
    e.code = code;
    return e;
  }

  /** A non-negative integer from a BigInt, a safe integer Number or a decimal string. */
  function toBig(v) {
    if (typeof v === 'bigint' && v >= ZERO) return v;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
    if (typeof v === 'string' && /^\s*\d{1,20}\s*$/.test(v)) return BigInt(v.trim());
    throw drawError('bad_number', 'not a non-negative integer: ' + String(v));
  }

  function subtle() {
    var c = root.crypto || (typeof crypto === 'object' ? crypto : null);
    if (!c || !c.subtle) throw drawError('no_crypto', 'Web Crypto (crypto.subtle) is not available here');
    return c.subtle;
  }

  /** The 32 seed bytes of 64 hex characters (either case). */
  function seedBytes(seedHex) {
    var s = String(seedHex === undefined || seedHex === null ? '' : seedHex).trim();
    if (!/^[0-9a-fA-F]{64}$/.test(s)) throw drawError('bad_hex', 'the seed must be 64 hexadecimal characters (32 bytes)');
    var b = new Uint8Array(32);
    for (var i = 0; i < 32; i++) b[i] = parseInt(s.substr(2 * i, 2), 16);
    return b;
  }

  function hex(buffer) {
    var b = new Uint8Array(buffer);
    var s = '';
    for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
    return s;
  }

  /** The commitment of a seed: lowercase hex SHA-256 of its 32 bytes (not of the hex text). */
  async function commitment(seedHex) {
    return hex(await subtle().digest('SHA-256', seedBytes(seedHex)));
  }

  /** The number of bits of n (0 for 0). */
  function bitLength(n) {
    return n === ZERO ? 0 : n.toString(2).length;
  }

  /** π(seed, size, ·) built once: an object whose async `permute(index)` gives π(index). */
  async function permutation(seedHex, size) {
    var p = toBig(size);
    if (p === ZERO) throw drawError('size_zero', 'the draw size is 0: nobody is in the pre-queue');
    if (p > MAX_SIZE) throw drawError('size_too_large', 'the draw size ' + p + ' is above the largest supported size 2^62');
    var key = await subtle().importKey('raw', seedBytes(seedHex), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    // Bits of P − 1, at least 2, rounded up to even.
    var bits = Math.max(2, bitLength(p - ONE));
    bits += bits % 2;
    var half = BigInt(bits / 2);
    var mask = (ONE << half) - ONE;
    var encoder = new TextEncoder();
    var prefix = LABEL + p.toString() + ':';

    // F(round, R): the first 8 bytes (big-endian) of HMAC-SHA256(seed, "vwr/draw/v1:P:round:R"), masked.
    async function round(r, right) {
      var tag = await subtle().sign('HMAC', key, encoder.encode(prefix + r + ':' + right.toString()));
      return new DataView(tag).getBigUint64(0, false) & mask;
    }
    // The Feistel network on 2·half bits: (L, R) → (R, L xor F(round, R)), 16 rounds.
    async function feistel(x) {
      var l = x >> half;
      var r = x & mask;
      for (var i = 0; i < ROUNDS; i++) {
        var f = await round(i, r);
        var next = l ^ f;
        l = r;
        r = next;
      }
      return (l << half) | r;
    }
    return {
      size: p,
      permute: async function (index) {
        var x = toBig(index);
        if (x >= p) throw drawError('index_out_of_range', 'index ' + x + ' is out of range for a draw of size ' + p);
        if (p === ONE) return ZERO;
        // Cycle walking: follow the Feistel cycle until it is back below P.
        var y = await feistel(x);
        while (y >= p) y = await feistel(y);
        return y;
      },
    };
  }

  /** π(seed, size, index), 0-based in and out, as a BigInt. */
  async function permute(seedHex, size, index) {
    return (await permutation(seedHex, size)).permute(index);
  }

  /** The 1-based drawn position of 0-based `rank`: 1 + π(seed, size, rank), as a BigInt. */
  async function position(seedHex, size, rank) {
    return ONE + (await permute(seedHex, size, rank));
  }

  function bigCounts(counts) {
    if (!Array.isArray(counts)) throw drawError('bad_number', 'the sealed counts must be a list of numbers');
    return counts.map(toBig);
  }

  /** P: the sum of the sealed counts, as a BigInt. */
  function prequeueSize(counts) {
    return bigCounts(counts).reduce(function (a, b) {
      return a + b;
    }, ZERO);
  }

  /** The dense rank (0-based BigInt) of pre-queue index `index` given the sealed counts c₁…c_N:
   *  Σ_k min(c_k, m_k(i)), m_k(i) = ⌊(i − k − 1)/N⌋ + 1 if i > k else 0. Throws
   *  not_in_prequeue for an index the seal did not count. */
  function rankOfPreIndex(counts, index) {
    var c = bigCounts(counts);
    var i = toBig(index);
    var n = BigInt(c.length);
    if (n === ZERO || i === ZERO) throw drawError('not_in_prequeue', 'pre-queue index ' + i + ' is not part of the sealed pre-queue');
    var shard = (i - ONE) % n;
    var count = (i - ONE) / n + ONE;
    if (count > c[Number(shard)]) throw drawError('not_in_prequeue', 'pre-queue index ' + i + ' is not part of the sealed pre-queue');
    var rank = ZERO;
    for (var k = ONE; k <= n; k++) {
      var below = i > k ? (i - k - ONE) / n + ONE : ZERO;
      var ck = c[Number(k - ONE)];
      rank += ck < below ? ck : below;
    }
    return rank;
  }

  /** The pre-queue index of the count-th join on shard `shard` of `shards`: (count − 1)·shards + shard. */
  function preIndex(shard, count, shards) {
    return (toBig(count) - ONE) * toBig(shards) + toBig(shard);
  }

  function base64urlDecode(s) {
    if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return null;
    var b64 = s.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) b64 += '=';
    try {
      var bin = atob(b64);
      var bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
      return null;
    }
  }

  /** The content of a ticket (`requestId`) `v1.<kid>.<payload>.<mac>`, payload = base64url of
   *  `eventId:place:issuedAt`, place = `q{i}` (pre-queue index i) or `{j}` (join index j):
   *  {eventId, preIndex (BigInt or null), join (BigInt or null), issuedAt}. The signature is
   *  not checked (that needs the operator's key). Throws bad_ticket. */
  function parseTicket(requestId) {
    var bad = drawError('bad_ticket', 'the ticket is malformed: expected v1.<kid>.<payload>.<mac>');
    var parts = String(requestId === undefined || requestId === null ? '' : requestId).trim().split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') throw bad;
    var raw = base64urlDecode(parts[2]);
    var fields = raw === null ? [] : raw.split(':');
    if (fields.length !== 3 || !/^[A-Za-z0-9_-]{1,64}$/.test(fields[0]) || !/^\d{1,20}$/.test(fields[2])) throw bad;
    var m = /^(q?)([1-9]\d{0,19})$/.exec(fields[1]);
    if (!m) throw bad;
    var index = BigInt(m[2]);
    return { eventId: fields[0], preIndex: m[1] ? index : null, join: m[1] ? null : index, issuedAt: BigInt(fields[2]) };
  }

  /** The pre-queue index of a pre-queue ticket (BigInt), or null for a regular ticket. */
  function preIndexOfTicket(requestId) {
    return parseTicket(requestId).preIndex;
  }

  var api = {
    ROUNDS: ROUNDS,
    MAX_SIZE: MAX_SIZE,
    commitment: commitment,
    permutation: permutation,
    permute: permute,
    position: position,
    prequeueSize: prequeueSize,
    rankOfPreIndex: rankOfPreIndex,
    preIndex: preIndex,
    parseTicket: parseTicket,
    preIndexOfTicket: preIndexOfTicket,
  };

  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.VwrDraw = api;
})(typeof globalThis === 'object' ? globalThis : this);
