//! Abusive actors beside the real visitors (`--bots N --bot-kind …`, docs/abuse.md). They join
//! with the page's `assign` and use what the visitors let slip (both in [`super::ctx`]).
//!
//! The kinds, each what a ticket-sale attacker does:
//! - `multi-place`: one account (one login at the site) joins `--bot-places` times, solving
//!   any proof of work like a determined farm. Places obtained = distinct tickets; with enqueue
//!   tokens required, every join of the account answers its one ticket.
//! - `no-pow`: joins `--bot-places` times without solving the proof of work.
//! - `stolen-ticket`: takes the `requestId`s of real visitors whose turn has come (as found in a
//!   CDN log line or a pasted link) and calls `check` with them, without the request secret and
//!   with a made-up one. Admissions obtained = `check`s that answered a token.
//! - `shared-cookie`: takes real visitors' tier-1 cookies (copied to another device) and goes
//!   on with them: the edge, then tier 2. The edge lets a copied cookie through until it expires
//!   (a bearer token, docs/tokens.md); tier 2 keys its identity on the tier-1 subject, so the
//!   copy shares its owner's place or slot and never obtains one of its own: `extraSlots` counts
//!   entry tokens whose tier-2 subject is no real visitor's (0 with `lineOrder: tier1`).
//!
//! Bots use their own endpoint names (`bot.*`), so the visitors' latencies and costs stay
//! theirs.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http::Method;
use serde::{Deserialize, Serialize};

use super::ctx::{Ctx, Leaks, Rng, SECRET_HEADER, Step, subject};
use crate::client::Reply;

/// What an abusive actor does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum BotKind {
    MultiPlace,
    StolenTicket,
    SharedCookie,
    NoPow,
}

impl BotKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::MultiPlace => "multi-place",
            Self::StolenTicket => "stolen-ticket",
            Self::SharedCookie => "shared-cookie",
            Self::NoPow => "no-pow",
        }
    }
}

/// Most leaked tickets or cookies one bot tries.
const MAX_LEAKS_PER_BOT: usize = 50;
/// A bot looks for new leaks this often.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// What one bot got.
#[derive(Debug, Clone, Default)]
pub struct BotOutcome {
    pub kind: Option<BotKind>,
    /// Requests it made.
    pub attempts: u64,
    /// Distinct tickets (places in line) it obtained.
    pub tickets: HashSet<String>,
    /// Tier-1 admissions (a `check` that answered a token) it obtained.
    pub admissions: u64,
    /// Requests the edge let through with a copied cookie.
    pub edge_passes: u64,
    /// Tier-2 entry tokens it obtained, and their subjects.
    pub entry_subjects: Vec<String>,
    /// Refusals by error code (`challenge_required`, `proof_required`, …) or status.
    pub refused: BTreeMap<String, u64>,
}

impl BotOutcome {
    fn refuse(&mut self, r: &Reply) {
        let v = r.json();
        let code = v["error"].as_str().map_or_else(|| r.status.as_u16().to_string(), str::to_owned);
        *self.refused.entry(code).or_default() += 1;
    }
}

/// Runs bot `id` of `kind` until it has done its work or the visitors are done.
pub async fn run(ctx: Arc<Ctx>, kind: BotKind, id: u64, places: u64) -> BotOutcome {
    let leaks = &ctx.leaks;
    let mut rng = Rng::new(0xB07 ^ (id + 1).wrapping_mul(0x9E37));
    let mut out = BotOutcome { kind: Some(kind), ..BotOutcome::default() };
    match kind {
        BotKind::MultiPlace | BotKind::NoPow => {
            // One account, many joins; the farm solves proofs of work unless it is `no-pow`.
            let account = format!("bot-{id}");
            for _ in 0..places {
                if leaks.stop.load(Ordering::Relaxed) {
                    break;
                }
                let Step::Reply(r) =
                    ctx.assign(&mut rng, "bot.assign", Some(&account), kind == BotKind::MultiPlace).await
                else {
                    break;
                };
                out.attempts += 1;
                match r.json()["requestId"].as_str() {
                    Some(t) if r.status.is_success() => {
                        out.tickets.insert(t.to_owned());
                    }
                    _ => out.refuse(&r),
                }
            }
        }
        BotKind::StolenTicket => {
            let made_up = format!("{:016x}{:016x}", rng.next_f64().to_bits(), id);
            let mut i = 0;
            while i < MAX_LEAKS_PER_BOT && !leaks.stop.load(Ordering::Relaxed) {
                let Some(ticket) = leaks.ticket_at(i) else {
                    tokio::time::sleep(LOOK_EVERY).await;
                    continue;
                };
                i += 1;
                let path = format!("/vwr-api/vwr/check/{}/{ticket}", ctx.event);
                for headers in [vec![], vec![(SECRET_HEADER, made_up.as_str())]] {
                    let Step::Reply(r) =
                        ctx.send(&mut rng, "bot.check", Method::GET, &path, &headers, None).await
                    else {
                        return out;
                    };
                    out.attempts += 1;
                    if r.status.is_success() && r.json()["token"].is_string() {
                        out.admissions += 1;
                    } else {
                        out.refuse(&r);
                    }
                }
            }
        }
        BotKind::SharedCookie => {
            let mut i = 0;
            while i < MAX_LEAKS_PER_BOT && !leaks.stop.load(Ordering::Relaxed) {
                let Some(cookie) = leaks.cookie_at(i) else {
                    tokio::time::sleep(LOOK_EVERY).await;
                    continue;
                };
                i += 1;
                let headers = [("cookie", cookie.as_str())];
                let page = format!("/events/{}", ctx.event);
                let Step::Reply(r) = ctx.send(&mut rng, "bot.edge", Method::GET, &page, &headers, None).await
                else {
                    return out;
                };
                out.attempts += 1;
                if r.status.as_u16() == 200 {
                    out.edge_passes += 1;
                } else {
                    out.refuse(&r);
                }
                let check = format!("/api/queue/check/{}", ctx.event);
                let Step::Reply(r) =
                    ctx.send(&mut rng, "bot.tier2", Method::POST, &check, &headers, None).await
                else {
                    return out;
                };
                out.attempts += 1;
                let v = r.json();
                match v["entryToken"].as_str().and_then(subject) {
                    Some(sub) if r.status.is_success() => out.entry_subjects.push(sub),
                    _ if r.status.is_success() => {}
                    _ => out.refuse(&r),
                }
            }
        }
    }
    out
}

/// The `bots` section of the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bots {
    pub count: u64,
    pub defences: Defences,
    /// By kind name (`multi-place`, …): what the bots of that kind obtained.
    pub kinds: BTreeMap<String, KindReport>,
}

/// The defences the run's event had on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Defences {
    pub request_secret: bool,
    pub pow_difficulty: u32,
    pub enqueue_token_required: bool,
}

/// What the bots of one kind obtained; each kind reports the figures of its attack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KindReport {
    pub bots: u64,
    pub attempts: u64,
    /// Refusals by error code or status.
    pub refused: BTreeMap<String, u64>,
    /// `multi-place`, `no-pow`: distinct tickets, and those beyond one per bot's account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub places_obtained: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_places: Option<u64>,
    /// `stolen-ticket`: `check`s that answered a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admissions_obtained: Option<u64>,
    /// `shared-cookie`: edge passes, entry tokens, and slots of no real visitor's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_passes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_slots: Option<u64>,
}

/// The `bots` section of the report: per kind, what the bots obtained.
pub fn report(outcomes: &[BotOutcome], leaks: &Leaks, defences: Defences) -> Bots {
    let real: HashSet<String> = leaks.subjects();
    let mut kinds = BTreeMap::new();
    let mut all: Vec<BotKind> = outcomes.iter().filter_map(|o| o.kind).collect();
    all.sort();
    all.dedup();
    for kind in all {
        let of: Vec<&BotOutcome> = outcomes.iter().filter(|o| o.kind == Some(kind)).collect();
        let mut refused: BTreeMap<String, u64> = BTreeMap::new();
        for o in &of {
            for (k, n) in &o.refused {
                *refused.entry(k.clone()).or_default() += n;
            }
        }
        let places: usize = of.iter().map(|o| o.tickets.len()).sum();
        // One place per bot is its account's fair share; the rest were taken from the line.
        let extra: usize = of.iter().map(|o| o.tickets.len().saturating_sub(1)).sum();
        let entries: usize = of.iter().map(|o| o.entry_subjects.len()).sum();
        let extra_slots: usize = of
            .iter()
            .flat_map(|o| o.entry_subjects.iter())
            .filter(|s| !real.contains(*s))
            .collect::<HashSet<_>>()
            .len();
        let mut k = KindReport {
            bots: of.len() as u64,
            attempts: of.iter().map(|o| o.attempts).sum::<u64>(),
            refused,
            ..KindReport::default()
        };
        match kind {
            BotKind::MultiPlace | BotKind::NoPow => {
                k.places_obtained = Some(places as u64);
                k.extra_places = Some(extra as u64);
            }
            BotKind::StolenTicket => {
                k.admissions_obtained = Some(of.iter().map(|o| o.admissions).sum::<u64>());
            }
            BotKind::SharedCookie => {
                k.edge_passes = Some(of.iter().map(|o| o.edge_passes).sum::<u64>());
                k.entry_tokens = Some(entries as u64);
                k.extra_slots = Some(extra_slots as u64);
            }
        }
        kinds.insert(kind.name().to_owned(), k);
    }
    Bots { count: outcomes.len() as u64, defences, kinds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_counts_extra_places_and_foreign_slots() {
        let leaks = Leaks::default();
        use base64::Engine;
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"owner"}"#);
        leaks.entry_token(&format!("h.{claims}.s"));
        let multi = BotOutcome {
            kind: Some(BotKind::MultiPlace),
            attempts: 3,
            tickets: ["a".to_owned(), "b".to_owned()].into(),
            ..BotOutcome::default()
        };
        let shared = BotOutcome {
            kind: Some(BotKind::SharedCookie),
            entry_subjects: vec!["owner".into(), "stranger".into()],
            edge_passes: 2,
            ..BotOutcome::default()
        };
        let mut stolen =
            BotOutcome { kind: Some(BotKind::StolenTicket), attempts: 2, ..BotOutcome::default() };
        stolen.refused.insert("proof_required".into(), 2);
        let r = report(&[multi, shared, stolen], &leaks, Defences::default());
        let kind = |name: &str| r.kinds[name].clone();
        assert_eq!(kind("multi-place").places_obtained, Some(2));
        assert_eq!(kind("multi-place").extra_places, Some(1));
        assert_eq!(kind("shared-cookie").extra_slots, Some(1));
        assert_eq!(kind("shared-cookie").edge_passes, Some(2));
        assert_eq!(kind("stolen-ticket").admissions_obtained, Some(0));
        assert_eq!(kind("stolen-ticket").refused["proof_required"], 2);
    }
}
