//! `vwr draw verify`: recomputes a position of the randomized open from the revealed seed, so
//! anyone can check the draw (docs/fairness.md). Offline: no network, no keys.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use clap::Subcommand;
use serde_json::{Map, Value, json};
use vwr_tier1::draw::{self, Seed};

/// Why `vwr draw verify` refuses its input, or the seed is not the one committed to.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    /// A seed, a size, a rank or counts the draw does not take.
    #[error(transparent)]
    Draw(#[from] draw::DrawError),
    #[error(
        "the seed does not match the commitment: SHA-256 of the seed is {computed}, \
         the published commitment is {published}"
    )]
    Mismatch { computed: String, published: String },
    #[error("--counts needs --pre-index or --ticket")]
    NoPreIndex,
    #[error("give --size and --index, or --counts and --pre-index")]
    NoDraw,
    #[error("the ticket is malformed: expected v1.<kid>.<payload>.<mac>")]
    MalformedTicket,
    #[error(
        "this is a regular ticket (it joined after the open): its position is P + its join index, not drawn"
    )]
    RegularTicket,
}

/// Draw operations.
#[derive(Debug, Clone, Subcommand)]
pub enum DrawCommand {
    /// Recompute a position: `--size P --index r` (r the 0-based rank), or `--counts c1,c2,…`
    /// (the sealed counts) with `--pre-index i` or `--ticket <requestId>`. With
    /// `--commitment`, first checks that the seed is the one committed to (exit code 1 if not).
    Verify(VerifyArgs),
}

/// Arguments of `vwr draw verify`.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("draw").required(true).args(["size", "counts"])))]
pub struct VerifyArgs {
    /// The revealed seed: 64 hex characters.
    #[arg(long)]
    pub seed: String,
    /// The commitment published before the pre-queue opened (hex SHA-256 of the seed's bytes).
    #[arg(long)]
    pub commitment: Option<String>,
    /// P, the number of pre-queue visitors.
    #[arg(long, requires = "index", conflicts_with = "counts")]
    pub size: Option<u64>,
    /// The visitor's rank r in 0..P (0-based).
    #[arg(long, conflicts_with_all = ["counts", "pre_index", "ticket"])]
    pub index: Option<u64>,
    /// The sealed pre-queue counts, one per shard: `3,2,4`.
    #[arg(long, value_delimiter = ',')]
    pub counts: Option<Vec<u64>>,
    /// The pre-queue index i of a ticket (1-based, as the ticket carries it `q{i}`).
    #[arg(long, requires = "counts", conflicts_with = "ticket")]
    pub pre_index: Option<u64>,
    /// A pre-queue ticket (`requestId`); its pre-queue index is read from it (the signature is
    /// not checked: that needs the operator's key).
    #[arg(long, requires = "counts")]
    pub ticket: Option<String>,
    /// Print JSON: `{"seed","commitment","size","rank","position"}` (and `"preIndex"` with
    /// `--counts`).
    #[arg(long)]
    pub json: bool,
}

/// The result of one verification.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verified {
    seed: String,
    commitment: String,
    commitment_checked: bool,
    counts: Option<Vec<u64>>,
    pre_index: Option<u64>,
    size: u64,
    rank: u64,
    position: u64,
}

/// Runs a draw command; returns the text to print, or an error message (exit non-zero).
pub fn run(cmd: DrawCommand) -> Result<String, DrawError> {
    match cmd {
        DrawCommand::Verify(args) => {
            let v = verify(&args)?;
            Ok(if args.json { to_json(&v).to_string() } else { to_text(&v) })
        }
    }
}

fn verify(args: &VerifyArgs) -> Result<Verified, DrawError> {
    let seed = Seed::from_hex(args.seed.trim())?;
    let commitment = seed.commitment();
    if let Some(published) = &args.commitment
        && !seed.matches_commitment(published)
    {
        return Err(DrawError::Mismatch { computed: commitment, published: published.trim().to_owned() });
    }
    let (counts, pre_index, size, rank) = match (&args.counts, args.size, args.index) {
        (Some(counts), _, _) => {
            let pre_index = match (args.pre_index, &args.ticket) {
                (Some(i), _) => i,
                (None, Some(ticket)) => pre_index_of_ticket(ticket)?,
                (None, None) => return Err(DrawError::NoPreIndex),
            };
            let size = draw::prequeue_size(counts)?;
            let rank = draw::rank_of_pre_index(counts, pre_index)?;
            (Some(counts.clone()), Some(pre_index), size, rank)
        }
        (None, Some(size), Some(rank)) => (None, None, size, rank),
        _ => return Err(DrawError::NoDraw),
    };
    let position = draw::position(&seed, size, rank)?;
    Ok(Verified {
        seed: seed.to_hex(),
        commitment,
        commitment_checked: args.commitment.is_some(),
        counts,
        pre_index,
        size,
        rank,
        position,
    })
}

/// The pre-queue index `i` of a ticket `v1.<kid>.<payload>.<mac>` whose payload is base64url of
/// `eventId:q{i}:issuedAt`.
fn pre_index_of_ticket(ticket: &str) -> Result<u64, DrawError> {
    let malformed = || DrawError::MalformedTicket;
    let parts: Vec<&str> = ticket.trim().split('.').collect();
    let [ver, _kid, payload, _mac] = parts[..] else {
        return Err(malformed());
    };
    if ver != "v1" {
        return Err(malformed());
    }
    let raw = URL_SAFE_NO_PAD.decode(payload).map_err(|_| malformed())?;
    let raw = String::from_utf8(raw).map_err(|_| malformed())?;
    let fields: Vec<&str> = raw.split(':').collect();
    let [_event, place, _issued_at] = fields[..] else {
        return Err(malformed());
    };
    match place.strip_prefix('q') {
        Some(i) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => {
            i.parse().ok().filter(|&i| i > 0).ok_or_else(malformed)
        }
        _ if !place.is_empty() && place.bytes().all(|b| b.is_ascii_digit()) => Err(DrawError::RegularTicket),
        _ => Err(malformed()),
    }
}

fn to_json(v: &Verified) -> Value {
    let mut m = Map::new();
    m.insert("seed".into(), json!(v.seed));
    m.insert("commitment".into(), json!(v.commitment));
    m.insert("size".into(), json!(v.size));
    m.insert("rank".into(), json!(v.rank));
    m.insert("position".into(), json!(v.position));
    if let Some(i) = v.pre_index {
        m.insert("preIndex".into(), json!(i));
    }
    Value::Object(m)
}

fn to_text(v: &Verified) -> String {
    let mut lines = Vec::new();
    lines.push(format!("seed            {}", v.seed));
    let note = if v.commitment_checked { "  (matches the published commitment)" } else { "" };
    lines.push(format!("commitment      {}{note}", v.commitment));
    if let (Some(counts), Some(i)) = (&v.counts, v.pre_index) {
        let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
        lines.push(format!("sealed counts   {}", counts.join(",")));
        lines.push(format!("pre-queue index {i}"));
    }
    lines.push(format!("size (P)        {}", v.size));
    lines.push(format!("rank (0-based)  {}", v.rank));
    lines.push(format!("position        {}", v.position));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: DrawCommand,
    }

    fn parse(args: &[&str]) -> Result<DrawCommand, clap::Error> {
        Cli::try_parse_from(std::iter::once("vwr-draw").chain(args.iter().copied())).map(|c| c.cmd)
    }

    /// The text `vwr draw` prints, or the error it says (the arguments parse).
    fn run_args(args: &[&str]) -> Result<String, DrawError> {
        run(parse(args).unwrap())
    }

    fn vectors() -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../functions/tier1/tests/draw-vectors.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn s(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    #[test]
    fn every_permutation_vector_through_run() {
        let file = vectors();
        let list = file["permutations"].as_array().unwrap();
        assert!(list.len() > 50);
        for v in list {
            let (seed, size, index) = (s(&v["seed"]), s(&v["size"]), s(&v["index"]));
            let out = run_args(&[
                "verify",
                "--seed",
                &seed,
                "--commitment",
                &s(&v["commitment"]),
                "--size",
                &size,
                "--index",
                &index,
                "--json",
            ])
            .unwrap();
            let got: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(s(&got["position"]), s(&v["position"]), "{v}");
            assert_eq!(s(&got["commitment"]), s(&v["commitment"]), "{v}");
            assert_eq!(s(&got["size"]), size);
            assert_eq!(s(&got["rank"]), index);
            assert_eq!(s(&got["seed"]), seed);
        }
    }

    #[test]
    fn every_draw_and_rank_vector_through_run() {
        let file = vectors();
        for v in file["draws"].as_array().unwrap() {
            let counts: Vec<String> = v["counts"].as_array().unwrap().iter().map(s).collect();
            let out = run_args(&[
                "verify",
                "--seed",
                &s(&v["seed"]),
                "--counts",
                &counts.join(","),
                "--pre-index",
                &s(&v["preIndex"]),
                "--json",
            ])
            .unwrap();
            let got: Value = serde_json::from_str(&out).unwrap();
            for key in ["size", "rank", "position", "preIndex", "commitment"] {
                assert_eq!(got[key], v[key], "{key} of {v}");
            }
        }
        // Rank vectors: valid ones agree, the others are refused with a clear message.
        let seed = "00".repeat(32);
        for v in file["ranks"].as_array().unwrap() {
            let counts: Vec<String> = v["counts"].as_array().unwrap().iter().map(s).collect();
            let out = run_args(&[
                "verify",
                "--seed",
                &seed,
                "--counts",
                &counts.join(","),
                "--pre-index",
                &s(&v["preIndex"]),
                "--json",
            ]);
            match &v["rank"] {
                Value::Null => {
                    assert!(out.unwrap_err().to_string().contains("not part of the sealed pre-queue"), "{v}")
                }
                rank => {
                    assert_eq!(&serde_json::from_str::<Value>(&out.unwrap()).unwrap()["rank"], rank, "{v}")
                }
            }
        }
    }

    #[test]
    fn human_output_and_commitment_mismatch() {
        let seed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let good = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd";
        let text = run_args(&[
            "verify",
            "--seed",
            seed,
            "--commitment",
            good,
            "--counts",
            "3,2,4",
            "--pre-index",
            "7",
        ])
        .unwrap();
        assert!(text.contains("(matches the published commitment)"), "{text}");
        assert!(text.contains("pre-queue index 7"), "{text}");
        assert!(text.contains("size (P)        9"), "{text}");
        assert!(text.contains("rank (0-based)  6"), "{text}");
        assert!(text.contains("position        1"), "{text}");
        let bad = good.replace('6', "7");
        let err = run_args(&["verify", "--seed", seed, "--commitment", &bad, "--size", "9", "--index", "6"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not match the commitment") && err.contains(good), "{err}");
        // Uppercase seed and commitment are accepted; output is lowercase.
        let json = run_args(&[
            "verify",
            "--seed",
            &seed.to_uppercase(),
            "--commitment",
            &good.to_uppercase(),
            "--size",
            "9",
            "--index",
            "6",
            "--json",
        ])
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&json).unwrap(),
            json!({"seed": seed, "commitment": good, "size": 9, "rank": 6, "position": 1})
        );
    }

    #[test]
    fn tickets_give_their_pre_queue_index() {
        let seed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let ticket = |place: &str| {
            format!(
                "v1.k1.{}.AAAAAAAAAAAAAAAAAAAAAA",
                URL_SAFE_NO_PAD.encode(format!("e1:{place}:1800000000"))
            )
        };
        let out =
            run_args(&["verify", "--seed", seed, "--counts", "3,2,4", "--ticket", &ticket("q7"), "--json"])
                .unwrap();
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (got["preIndex"].clone(), got["rank"].clone(), got["position"].clone()),
            (json!(7), json!(6), json!(1))
        );
        let err = run_args(&["verify", "--seed", seed, "--counts", "3,2,4", "--ticket", &ticket("42")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("regular ticket"), "{err}");
        for bad in [
            ticket("q0"),
            ticket("q"),
            ticket("x1"),
            "v1.k1.!!!.x".into(),
            "v2.k1.ZTE6cTE6MQ.x".into(),
            "junk".into(),
        ] {
            let err = run_args(&["verify", "--seed", seed, "--counts", "3,2,4", "--ticket", &bad])
                .unwrap_err()
                .to_string();
            assert!(err.contains("malformed"), "{bad}: {err}");
        }
    }

    #[test]
    fn refuses_bad_input() {
        let seed = "00".repeat(32);
        assert!(
            run_args(&["verify", "--seed", "abc", "--size", "3", "--index", "0"])
                .unwrap_err()
                .to_string()
                .contains("64 hexadecimal")
        );
        assert!(
            run_args(&["verify", "--seed", &seed, "--size", "3", "--index", "3"])
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
        assert!(
            run_args(&["verify", "--seed", &seed, "--size", "0", "--index", "0"])
                .unwrap_err()
                .to_string()
                .contains("size is 0")
        );
        // clap: one of --size / --counts, the right companions, not both.
        assert!(parse(&["verify", "--seed", &seed]).is_err());
        assert!(parse(&["verify", "--seed", &seed, "--size", "3"]).is_err());
        assert!(
            parse(&["verify", "--seed", &seed, "--size", "3", "--index", "1", "--counts", "1,2"]).is_err()
        );
        assert!(
            parse(&["verify", "--seed", &seed, "--pre-index", "1", "--size", "3", "--index", "1"]).is_err()
        );
        assert!(parse(&["verify", "--seed", &seed, "--counts", "1,x", "--pre-index", "1"]).is_err());
        assert!(
            run_args(&["verify", "--seed", &seed, "--counts", "1,2"])
                .unwrap_err()
                .to_string()
                .contains("--pre-index")
        );
    }
}
