//! Reference vectors of the draw (docs/fairness.md), made by `vwr_tier1::draw` and written to
//! `functions/tier1/tests/draw-vectors.json`. Other implementations check themselves against the
//! file: the browser's `static/assets/draw.js` (`node --test static/test/`) and `vwr draw
//! verify` (`cli/src/draw.rs`).
//!
//! `VWR_UPDATE_VECTORS=1 cargo test -p vwr-tier1 --test draw_vectors` (re)writes the file. Without
//! it, the test recomputes every vector in the file and fails when the file differs from what it
//! would write (drift).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vwr_tier1::draw::{self, DrawError, MAX_SIZE, Seed};

/// Published seeds: test material only.
const SEEDS: [&str; 3] = [
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "8f5f5995902333bfe0580b12eac76a58688c08b4f948a92a55e3678438daf2c4",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
];
const SIZES: [u64; 10] = [1, 2, 3, 5, 8, 100, 1000, 65_537, 1_000_003, MAX_SIZE];

const ABOUT: &str = "Reference vectors of the vwr draw (docs/fairness.md), written by \
functions/tier1/tests/draw_vectors.rs. permutations: position = 1 + pi(seed, size, index); size, \
index and position are decimal strings because they reach 2^62, beyond exact JavaScript numbers. \
ranks: the dense rank of a pre-queue index given the sealed counts (one per shard); rank null = \
the index is not part of the sealed pre-queue. draws: both together, as a visitor checks a ticket.";

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Permutation {
    seed: String,
    commitment: String,
    size: String,
    index: String,
    position: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Rank {
    counts: Vec<u64>,
    pre_index: u64,
    rank: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Draw {
    seed: String,
    commitment: String,
    counts: Vec<u64>,
    pre_index: u64,
    size: u64,
    rank: u64,
    position: u64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Vectors {
    about: String,
    permutations: Vec<Permutation>,
    ranks: Vec<Rank>,
    draws: Vec<Draw>,
}

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("draw-vectors.json")
}

fn seed(hex: &str) -> Seed {
    Seed::from_hex(hex).unwrap()
}

fn permutation(hex: &str, size: u64, index: u64) -> Permutation {
    let s = seed(hex);
    Permutation {
        seed: hex.into(),
        commitment: s.commitment(),
        size: size.to_string(),
        index: index.to_string(),
        position: draw::position(&s, size, index).unwrap().to_string(),
    }
}

fn rank(counts: &[u64], pre_index: u64) -> Rank {
    let rank = match draw::rank_of_pre_index(counts, pre_index) {
        Ok(r) => Some(r),
        Err(DrawError::NotInPrequeue(_)) => None,
        Err(e) => panic!("{e}"),
    };
    Rank { counts: counts.to_vec(), pre_index, rank }
}

fn draw_case(hex: &str, counts: &[u64], pre_index: u64) -> Draw {
    let s = seed(hex);
    let size = draw::prequeue_size(counts).unwrap();
    let rank = draw::rank_of_pre_index(counts, pre_index).unwrap();
    Draw {
        seed: hex.into(),
        commitment: s.commitment(),
        counts: counts.to_vec(),
        pre_index,
        size,
        rank,
        position: draw::position(&s, size, rank).unwrap(),
    }
}

/// The vectors, from the code.
fn generate() -> Vectors {
    let mut permutations = Vec::new();
    for hex in SEEDS {
        for size in SIZES {
            let indices: BTreeSet<u64> =
                [0, 1, size / 2, size - 1].into_iter().filter(|&i| i < size).collect();
            permutations.extend(indices.into_iter().map(|i| permutation(hex, size, i)));
        }
    }
    let mut ranks = Vec::new();
    // Every index up to past the end of some small pre-queues, valid or not.
    for counts in [&[3, 2, 4][..], &[1], &[0, 5], &[5, 0, 0, 2], &[2, 2]] {
        let top = counts.iter().max().unwrap() * counts.len() as u64 + 1;
        ranks.extend((0..=top).map(|i| rank(counts, i)));
    }
    // A large one: first, last, around a short shard.
    let big = [1_000_000, 999_999, 1_000_001, 1_000_000];
    for (shard, count) in
        [(1, 1), (2, 1), (4, 1), (1, 500_000), (2, 999_999), (2, 1_000_000), (3, 1_000_001), (4, 1_000_001)]
    {
        ranks.push(rank(&big, draw::pre_index(shard, count, 4)));
    }
    let draws = vec![
        // The worked example of docs/fairness.md (cycle walking: E(3) = 13, E(13) = 2).
        draw_case(SEEDS[0], &[3, 2, 4], 4),
        draw_case(SEEDS[0], &[3, 2, 4], 7),
        draw_case(SEEDS[0], &[3, 2, 4], 12),
        draw_case(SEEDS[1], &[1], 1),
        draw_case(SEEDS[1], &[5, 0, 0, 2], 8),
        draw_case(SEEDS[1], &big, draw::pre_index(3, 1_000_001, 4)),
        draw_case(SEEDS[2], &big, draw::pre_index(2, 123_456, 4)),
    ];
    Vectors { about: ABOUT.into(), permutations, ranks, draws }
}

/// The file's text: one vector per line, so a change reads as a small diff.
fn render(v: &Vectors) -> String {
    fn list<T: Serialize>(items: &[T]) -> String {
        let lines: Vec<String> =
            items.iter().map(|i| format!("    {}", serde_json::to_string(i).unwrap())).collect();
        format!("[\n{}\n  ]", lines.join(",\n"))
    }
    format!(
        "{{\n  \"about\": {},\n  \"permutations\": {},\n  \"ranks\": {},\n  \"draws\": {}\n}}\n",
        serde_json::to_string(&v.about).unwrap(),
        list(&v.permutations),
        list(&v.ranks),
        list(&v.draws)
    )
}

#[test]
fn draw_vectors_file_matches_the_implementation() {
    let want = render(&generate());
    if std::env::var_os("VWR_UPDATE_VECTORS").is_some() {
        std::fs::write(path(), &want).unwrap();
    }
    let text = std::fs::read_to_string(path()).expect(
        "draw-vectors.json is missing: VWR_UPDATE_VECTORS=1 cargo test -p vwr-tier1 --test draw_vectors",
    );
    let file: Vectors = serde_json::from_str(&text).unwrap();

    // Every vector in the file, recomputed.
    for v in &file.permutations {
        let s = seed(&v.seed);
        assert_eq!(s.commitment(), v.commitment, "{v:?}");
        let (size, index) = (v.size.parse().unwrap(), v.index.parse().unwrap());
        assert_eq!(draw::position(&s, size, index).unwrap().to_string(), v.position, "{v:?}");
    }
    for v in &file.ranks {
        let got = draw::rank_of_pre_index(&v.counts, v.pre_index).ok();
        assert_eq!(got, v.rank, "{v:?}");
    }
    for v in &file.draws {
        let s = seed(&v.seed);
        assert_eq!(s.commitment(), v.commitment, "{v:?}");
        assert_eq!(draw::prequeue_size(&v.counts), Ok(v.size), "{v:?}");
        assert_eq!(draw::rank_of_pre_index(&v.counts, v.pre_index), Ok(v.rank), "{v:?}");
        assert_eq!(draw::position(&s, v.size, v.rank), Ok(v.position), "{v:?}");
    }

    // And nothing missing or extra.
    assert!(
        text == want,
        "draw-vectors.json differs from what the code writes: VWR_UPDATE_VECTORS=1 cargo test -p vwr-tier1 --test draw_vectors"
    );
}

#[test]
fn draw_vectors_cover_the_required_cases() {
    let v = generate();
    for size in SIZES {
        let of_size: Vec<&Permutation> =
            v.permutations.iter().filter(|p| p.size == size.to_string()).collect();
        assert_eq!(
            of_size.len(),
            SEEDS.len()
                * [0, 1, size / 2, size - 1].iter().filter(|&&i| i < size).collect::<BTreeSet<_>>().len()
        );
        assert!(of_size.iter().any(|p| p.index == (size - 1).to_string()));
    }
    assert!(v.ranks.iter().any(|r| r.rank.is_none()) && v.ranks.iter().any(|r| r.rank == Some(0)));
}
