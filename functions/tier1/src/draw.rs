//! The verifiable draw of the randomized open (docs/fairness.md):
//! the P pre-queue visitors get positions 1..P by a permutation of their dense rank, keyed by a
//! seed committed to before the first join and revealed at the open.
//!
//! - [`Seed`]: 32 random bytes, 64 lowercase hex characters; its commitment is the hex SHA-256
//!   of the 32 bytes.
//! - [`permute`]: π(seed, P, x), a 16-round Feistel network on the smallest even number of bits
//!   that holds P − 1, restricted to 0..P by cycle walking. A bijection for any P, computed per
//!   ticket without storing anything.
//! - [`rank_of_pre_index`]: the dense rank of a pre-queue index given the sealed counts
//!   (docs/lifecycle.md#pre-queue-and-the-randomized-open).
//!
//! The vectors in `functions/tier1/tests/draw-vectors.json` are the reference for other
//! implementations (`static/assets/draw.js`).

use std::fmt;

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::{digest, hmac};

/// Seed length in bytes.
pub const SEED_BYTES: usize = 32;
/// The largest draw: 2^62 visitors.
pub const MAX_SIZE: u64 = 1 << 62;
/// Prefix of the message of the round function.
pub const ROUND_LABEL: &str = "vwr/draw/v1:";
/// Feistel rounds. Not 4: the halves can be 1 or 2 bits wide (P ≤ 16), where 4 rounds left
/// the draw measurably biased (docs/fairness.md#why-this-construction); the uniformity tests
/// below fail at 8.
pub const ROUNDS: u64 = 16;

/// Why a draw computation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawError {
    #[error("the draw size is 0: nobody is in the pre-queue")]
    SizeZero,
    #[error("the draw size {0} is above the largest supported size 2^62")]
    SizeTooLarge(u64),
    #[error("index {index} is out of range for a draw of size {size} (indices are 0..{size})")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("the seed must be 64 hexadecimal characters (32 bytes)")]
    BadHex,
    #[error("pre-queue index {0} is not part of the sealed pre-queue")]
    NotInPrequeue(u64),
    #[error("random generator failed")]
    Random,
}

/// The draw's secret: 32 bytes. Kept secret until the open; only its [commitment](Seed::commitment)
/// is shown before. `Debug` never prints the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed([u8; SEED_BYTES]);

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(…)")
    }
}

impl Seed {
    /// A fresh seed from the system's secure random generator.
    pub fn generate() -> Result<Seed, DrawError> {
        let mut b = [0u8; SEED_BYTES];
        SystemRandom::new().fill(&mut b).map_err(|_| DrawError::Random)?;
        Ok(Seed(b))
    }

    /// A seed from its bytes.
    pub fn from_bytes(bytes: [u8; SEED_BYTES]) -> Seed {
        Seed(bytes)
    }

    /// The seed's bytes (secret until the open).
    pub fn as_bytes(&self) -> &[u8; SEED_BYTES] {
        &self.0
    }

    /// Parses 64 hex characters (either case; written lowercase by [`Seed::to_hex`]).
    pub fn from_hex(s: &str) -> Result<Seed, DrawError> {
        let s = s.as_bytes();
        if s.len() != 2 * SEED_BYTES {
            return Err(DrawError::BadHex);
        }
        let mut b = [0u8; SEED_BYTES];
        for (out, pair) in b.iter_mut().zip(s.chunks_exact(2)) {
            let (Some(hi), Some(lo)) = (hex_value(pair[0]), hex_value(pair[1])) else {
                return Err(DrawError::BadHex);
            };
            *out = (hi << 4) | lo;
        }
        Ok(Seed(b))
    }

    /// 64 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// The commitment shown before the open: lowercase hex SHA-256 of the 32 seed bytes (not of
    /// the hex text).
    pub fn commitment(&self) -> String {
        hex(digest::digest(&digest::SHA256, &self.0).as_ref())
    }

    /// Whether `commitment` (hex, either case, surrounding whitespace ignored) is this seed's.
    pub fn matches_commitment(&self, commitment: &str) -> bool {
        commitment.trim().eq_ignore_ascii_case(&self.commitment())
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `n` in decimal ASCII, written at the end of `buf` (20 digits hold any u64).
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        // n % 10 < 10: the cast cannot truncate.
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// π(seed, P, ·): the permutation of 0..P for one seed and size, built once to compute many
/// indices. See [`permute`].
pub struct Permutation {
    /// HMAC-SHA256 keyed with the seed, fed "vwr/draw/v1:{P}:" already.
    prefix: hmac::Context,
    size: u64,
    half: u32,
    mask: u64,
}

impl fmt::Debug for Permutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("Permutation").field("size", &self.size).field("half", &self.half).finish()
    }
}

impl Permutation {
    /// The permutation of 0..`size` keyed by `seed`; `size` in 1..=2^62.
    pub fn new(seed: &Seed, size: u64) -> Result<Permutation, DrawError> {
        if size == 0 {
            return Err(DrawError::SizeZero);
        }
        if size > MAX_SIZE {
            return Err(DrawError::SizeTooLarge(size));
        }
        // Bits of P − 1, at least 2, rounded up to even: the Feistel domain 0..2^b holds 0..P
        // and is less than 4·P, so cycle walking takes under 4 steps on average.
        let bits = (u64::BITS - (size - 1).leading_zeros()).max(2);
        let bits = bits + bits % 2;
        let half = bits / 2;
        let mut prefix = hmac::Context::with_key(&hmac::Key::new(hmac::HMAC_SHA256, &seed.0));
        prefix.update(ROUND_LABEL.as_bytes());
        prefix.update(decimal(size, &mut [0; 20]));
        prefix.update(b":");
        Ok(Permutation { prefix, size, half, mask: (1u64 << half) - 1 })
    }

    /// The size P.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// π(x) for x in 0..P.
    pub fn permute(&self, index: u64) -> Result<u64, DrawError> {
        if index >= self.size {
            return Err(DrawError::IndexOutOfRange { index, size: self.size });
        }
        if self.size == 1 {
            return Ok(0);
        }
        // Cycle walking: the Feistel network permutes 0..2^b; following its cycle from x until
        // it is back below P restricts it to a permutation of 0..P. It ends: x itself is on
        // the cycle.
        let mut y = self.feistel(index);
        while y >= self.size {
            y = self.feistel(y);
        }
        Ok(y)
    }

    /// The round function: the first 8 bytes (big-endian) of HMAC-SHA256(seed,
    /// "vwr/draw/v1:{P}:{round}:{R}"), masked to `half` bits.
    fn round(&self, round: u64, r: u64) -> u64 {
        let mut ctx = self.prefix.clone();
        ctx.update(decimal(round, &mut [0; 20]));
        ctx.update(b":");
        ctx.update(decimal(r, &mut [0; 20]));
        let tag = ctx.sign();
        let mut first = [0u8; 8];
        first.copy_from_slice(&tag.as_ref()[..8]);
        u64::from_be_bytes(first) & self.mask
    }

    /// The balanced Feistel network on `2·half` bits: (L, R) → (R, L ⊕ F(round, R)).
    fn feistel(&self, x: u64) -> u64 {
        let mut l = x >> self.half;
        let mut r = x & self.mask;
        for round in 0..ROUNDS {
            (l, r) = (r, l ^ self.round(round, r));
        }
        (l << self.half) | r
    }
}

/// π(seed, size, index): where the draw puts 0-based `index` among 0..`size` (0-based).
pub fn permute(seed: &Seed, size: u64, index: u64) -> Result<u64, DrawError> {
    Permutation::new(seed, size)?.permute(index)
}

/// The 1-based position of the pre-queue visitor of 0-based `rank`: 1 + π(seed, size, rank).
pub fn position(seed: &Seed, size: u64, rank: u64) -> Result<u64, DrawError> {
    Ok(1 + permute(seed, size, rank)?)
}

/// The pre-queue index of the `count`-th pre-queue join on shard `shard` (1-based) of `shards`:
/// (count − 1)·shards + shard. `count` ≥ 1 and `shard` in 1..=`shards`; saturates rather than
/// overflows.
pub fn pre_index(shard: u64, count: u64, shards: u64) -> u64 {
    count.saturating_sub(1).saturating_mul(shards).saturating_add(shard)
}

/// P, the size of the draw: the sum of the sealed counts.
pub fn prequeue_size(counts: &[u64]) -> Result<u64, DrawError> {
    let mut total: u64 = 0;
    for &c in counts {
        total = total.checked_add(c).ok_or(DrawError::SizeTooLarge(u64::MAX))?;
    }
    Ok(total)
}

/// The dense rank (0-based) of pre-queue index `index` among the sealed pre-queue of counts
/// c₁…c_N: r = Σ_k min(c_k, m_k(i)), m_k(i) = ⌊(i − k − 1) / N⌋ + 1 if i > k, else 0 — the
/// number of sealed pre-queue indices below i. The ranks of all sealed indices are exactly
/// 0..P. An index whose join was not counted by its shard's seal is refused.
pub fn rank_of_pre_index(counts: &[u64], index: u64) -> Result<u64, DrawError> {
    let shards = u64::try_from(counts.len()).map_err(|_| DrawError::NotInPrequeue(index))?;
    if shards == 0 || index == 0 {
        return Err(DrawError::NotInPrequeue(index));
    }
    let shard = (index - 1) % shards; // 0-based k − 1
    let count = (index - 1) / shards + 1;
    let sealed = usize::try_from(shard).ok().and_then(|k| counts.get(k)).copied().unwrap_or(0);
    if count > sealed {
        return Err(DrawError::NotInPrequeue(index));
    }
    let mut rank: u64 = 0;
    for (k, &c) in (1..=shards).zip(counts) {
        let below = if index > k { (index - k - 1) / shards + 1 } else { 0 };
        rank = rank.saturating_add(c.min(below));
    }
    Ok(rank)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use proptest::prelude::*;

    use super::*;

    /// Test seed number `n`: SHA-256 of `n` (8 bytes, big-endian). Deterministic, so the
    /// statistical tests below pass or fail the same way on every run (they cannot flake).
    fn test_seed(n: u64) -> Seed {
        let d = digest::digest(&digest::SHA256, &n.to_be_bytes());
        let mut b = [0u8; SEED_BYTES];
        b.copy_from_slice(d.as_ref());
        Seed(b)
    }

    #[test]
    fn permute_is_a_bijection_for_every_size_up_to_300() {
        for n in 0..3 {
            let seed = test_seed(n);
            for size in 1..=300u64 {
                let p = Permutation::new(&seed, size).unwrap();
                let out: HashSet<u64> = (0..size).map(|x| p.permute(x).unwrap()).collect();
                assert_eq!(out.len() as u64, size, "seed {n}, size {size}: outputs not distinct");
                assert!(out.iter().all(|&y| y < size), "seed {n}, size {size}: output out of range");
                assert_eq!(permute(&seed, size, size - 1).unwrap(), p.permute(size - 1).unwrap());
            }
        }
    }

    #[test]
    fn different_seeds_give_different_orders() {
        let orders: HashSet<Vec<u64>> =
            (0..20).map(|n| (0..50).map(|x| permute(&test_seed(n), 50, x).unwrap()).collect()).collect();
        assert_eq!(orders.len(), 20);
        assert_ne!(
            (0..50).map(|x| permute(&test_seed(0), 50, x).unwrap()).collect::<Vec<_>>(),
            (0..50).collect::<Vec<_>>()
        );
    }

    #[test]
    fn decimal_matches_display() {
        for n in [0, 1, 9, 10, 99, 100, 65_537, MAX_SIZE, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string().as_bytes());
        }
    }

    #[test]
    fn round_function_is_the_documented_hmac() {
        // F(round, R) = first 8 bytes (big-endian) of HMAC-SHA256(seed, "vwr/draw/v1:P:round:R")
        // AND mask, written out the slow way.
        let seed = test_seed(3);
        for size in [2, 5, 100, 1_000_003, MAX_SIZE] {
            let p = Permutation::new(&seed, size).unwrap();
            for (round, r) in [(0, 0), (1, 3), (15, p.mask)] {
                let msg = format!("vwr/draw/v1:{size}:{round}:{r}");
                let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, seed.as_bytes()), msg.as_bytes());
                let want = u64::from_be_bytes(tag.as_ref()[..8].try_into().unwrap()) & p.mask;
                assert_eq!(p.round(round, r), want, "size {size} round {round} R {r}");
            }
        }
    }

    #[test]
    fn positions_are_one_based() {
        let seed = test_seed(7);
        assert_eq!(position(&seed, 1, 0), Ok(1));
        let all: BTreeSet<u64> = (0..10).map(|r| position(&seed, 10, r).unwrap()).collect();
        assert_eq!(all, (1..=10).collect());
    }

    #[test]
    fn refuses_bad_sizes_and_indices() {
        let seed = test_seed(1);
        assert_eq!(permute(&seed, 0, 0), Err(DrawError::SizeZero));
        assert_eq!(permute(&seed, MAX_SIZE + 1, 0), Err(DrawError::SizeTooLarge(MAX_SIZE + 1)));
        assert_eq!(permute(&seed, u64::MAX, 0), Err(DrawError::SizeTooLarge(u64::MAX)));
        assert_eq!(permute(&seed, 5, 5), Err(DrawError::IndexOutOfRange { index: 5, size: 5 }));
        assert_eq!(position(&seed, 1, 1), Err(DrawError::IndexOutOfRange { index: 1, size: 1 }));
        for x in [0, 1, MAX_SIZE / 2, MAX_SIZE - 1] {
            assert!(permute(&seed, MAX_SIZE, x).unwrap() < MAX_SIZE);
        }
    }

    #[test]
    fn seed_hex_round_trip_commitment_and_debug() {
        // The bytes 00 01 … 1f; expected commitment from `sha256sum` of those 32 bytes.
        let hex_text = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let seed = Seed::from_hex(hex_text).unwrap();
        assert_eq!(seed.to_hex(), hex_text);
        assert_eq!(Seed::from_hex(&hex_text.to_uppercase()), Ok(seed.clone()));
        assert_eq!(seed.commitment(), "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd");
        assert!(
            seed.matches_commitment(" 630DCD2966C4336691125448BBB25B4FF412A49C732DB2C8ABC1B8581BD710DD\n")
        );
        assert!(!seed.matches_commitment(&test_seed(0).commitment()));
        assert_eq!(format!("{seed:?}"), "Seed(…)");
        assert!(!format!("{:?}", Permutation::new(&seed, 3).unwrap()).contains("0102"));
        for bad in [
            "",
            "00",
            &hex_text[1..],
            &format!("{hex_text}00"),
            &hex_text.replace('a', "g"),
            &format!("{}é", &hex_text[..62]),
        ] {
            assert_eq!(Seed::from_hex(bad), Err(DrawError::BadHex), "{bad}");
        }
        let a = Seed::generate().unwrap();
        assert_ne!(a, Seed::generate().unwrap());
        assert_eq!(Seed::from_hex(&a.to_hex()), Ok(a.clone()));
        assert_eq!(Seed::from_bytes(*a.as_bytes()), a);
    }

    /// Pearson's chi-square statistic of `counts` against a uniform distribution.
    fn chi_square(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum()
    }

    /// Over many seeds, the position of rank 0 is uniform over the P cells and the pair
    /// (π(0), π(1)) is uniform over the P·(P − 1) ordered pairs. The statistic must stay below
    /// the 0.999 quantile of its chi-square distribution. Seeds come from [`test_seed`], so the
    /// result is the same on every run: no flakes.
    fn assert_uniform(size: u64, seeds: u64, first_limit: f64, pair_limit: f64) {
        let cells = usize::try_from(size).unwrap();
        let mut first = vec![0u64; cells];
        let mut pairs = vec![0u64; cells * cells];
        for n in 0..seeds {
            let p = Permutation::new(&test_seed(n), size).unwrap();
            let a = usize::try_from(p.permute(0).unwrap()).unwrap();
            let b = usize::try_from(p.permute(1).unwrap()).unwrap();
            first[a] += 1;
            pairs[a * cells + b] += 1;
        }
        // The diagonal (a == b) is impossible for a permutation; leave it out.
        let pairs: Vec<u64> =
            (0..cells * cells).filter(|i| i / cells != i % cells).map(|i| pairs[i]).collect();
        assert!(pairs.iter().all(|&c| c > 0));
        let (x1, x2) = (chi_square(&first), chi_square(&pairs));
        assert!(
            x1 < first_limit,
            "size {size}: rank 0 not uniform: chi-square {x1} ≥ {first_limit} ({first:?})"
        );
        assert!(x2 < pair_limit, "size {size}: pairs not uniform: chi-square {x2} ≥ {pair_limit}");
    }

    #[test]
    fn draw_is_uniform_for_8_visitors() {
        // 0.999 quantiles: df 7 → 24.32, df 55 → 93.17.
        assert_uniform(8, 40_000, 24.32, 93.17);
    }

    #[test]
    fn draw_is_uniform_for_5_visitors_through_cycle_walking() {
        // P = 5 runs on a 16-value Feistel domain, so most inputs walk. 0.999 quantiles:
        // df 4 → 18.47, df 19 → 43.82.
        assert_uniform(5, 20_000, 18.47, 43.82);
    }

    /// Every sealed pre-queue index with its shard and count, in index order.
    fn sealed_indices(counts: &[u64]) -> Vec<u64> {
        let n = counts.len() as u64;
        let mut all: Vec<u64> = (1..=n)
            .zip(counts)
            .flat_map(|(k, &c)| (1..=c).map(move |count| pre_index(k, count, n)))
            .collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn ranks_of_a_small_prequeue() {
        // Shard 1 holds 1, 4, 7; shard 2 holds 2, 5; shard 3 holds 3, 6, 9, 12.
        let counts = [3, 2, 4];
        let want = [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (9, 7), (12, 8)];
        for (i, r) in want {
            assert_eq!(rank_of_pre_index(&counts, i), Ok(r), "index {i}");
        }
        for i in [0, 8, 10, 11, 13, 15, u64::MAX] {
            assert_eq!(rank_of_pre_index(&counts, i), Err(DrawError::NotInPrequeue(i)), "index {i}");
        }
        assert_eq!(rank_of_pre_index(&[], 1), Err(DrawError::NotInPrequeue(1)));
        assert_eq!(rank_of_pre_index(&[0, 0], 1), Err(DrawError::NotInPrequeue(1)));
        assert_eq!(prequeue_size(&counts), Ok(9));
        assert_eq!(prequeue_size(&[u64::MAX, 1]), Err(DrawError::SizeTooLarge(u64::MAX)));
        assert_eq!(pre_index(3, 4, 3), 12);
        assert_eq!(pre_index(1, 1, 1), 1);
    }

    proptest! {
        #[test]
        fn ranks_are_exactly_0_to_p(counts in prop::collection::vec(0u64..40, 1..9)) {
            let size = prequeue_size(&counts).unwrap();
            let valid = sealed_indices(&counts);
            let ranks: Vec<u64> = valid.iter().map(|&i| rank_of_pre_index(&counts, i).unwrap()).collect();
            // In index order, the ranks are 0, 1, 2 … P − 1: dense and order-preserving.
            prop_assert_eq!(ranks, (0..size).collect::<Vec<_>>());
            // Every other index up to past the end is refused.
            let n = counts.len() as u64;
            let top = counts.iter().max().copied().unwrap_or(0) * n + n;
            let valid: HashSet<u64> = valid.into_iter().collect();
            for i in 0..=top {
                if !valid.contains(&i) {
                    prop_assert_eq!(rank_of_pre_index(&counts, i), Err(DrawError::NotInPrequeue(i)));
                }
            }
        }

        #[test]
        fn ranks_hold_for_large_counts(counts in prop::collection::vec(0u64..1_000_000_000, 1..6), pick in 0usize..100) {
            // One sealed index; its rank is the number of sealed indices below it, counted
            // shard by shard without the formula.
            let n = counts.len() as u64;
            let nonempty: Vec<u64> = (1..=n).filter(|k| counts[(*k - 1) as usize] > 0).collect();
            prop_assume!(!nonempty.is_empty());
            let k = nonempty[pick % nonempty.len()];
            let c = counts[(k - 1) as usize];
            let count = 1 + (pick as u64 * 7_919) % c;
            let i = pre_index(k, count, n);
            let below: u64 = (1..=n).zip(&counts).map(|(j, &cj)| {
                // Counts c' on shard j with (c' − 1)·n + j < i.
                if j < k { cj.min(count) } else if j == k { count - 1 } else { cj.min(count - 1) }
            }).sum();
            prop_assert_eq!(rank_of_pre_index(&counts, i), Ok(below));
        }
    }
}
