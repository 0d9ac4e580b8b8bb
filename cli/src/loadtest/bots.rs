//! Abusive actors beside the real visitors (`--bots N --bot-kind …`, docs/abuse.md), and the
//! proofs a real visitor brings to `assign` (the site's enqueue token, a proof of work).
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use serde_json::{Value, json};
use vwr_core::EventId;
use vwr_core::keys::EcKeyring;

use super::visitor::{Ctx, Rng, Step};
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

/// Most proof-of-work refusals in a row before a join gives up (a real page backs off then).
const MAX_CHALLENGES: usize = 3;
/// Most leaked tickets or cookies one bot tries.
const MAX_LEAKS_PER_BOT: usize = 50;
/// A bot looks for new leaks this often.
const LOOK_EVERY: Duration = Duration::from_millis(500);
/// The header of the site's enqueue token (docs/abuse.md#one-place-per-account).
const ENQUEUE_HEADER: &str = "x-vwr-enqueue-token";
const SECRET_HEADER: &str = "x-vwr-request-secret";

/// What a join needs beyond the call: the site's key (to sign the enqueue token of an
/// account, as the site does after its login) and whether to solve a proof of work.
pub struct Proofs {
    site: Option<EcKeyring>,
    event: EventId,
}

impl Proofs {
    /// `site_key`: the site's private key as `vwr keys generate` prints `SITE_ENQUEUE_KEY`.
    pub fn new(site_key: Option<&str>, event: &str) -> Result<Self, String> {
        let event = EventId::parse(event).map_err(|e| e.to_string())?;
        let site = match site_key {
            Some(text) => Some(EcKeyring::from_text(text, None).map_err(|e| format!("--enqueue-key: {e}"))?),
            None => None,
        };
        Ok(Self { site, event })
    }

    /// The site's enqueue token for `account`, valid 10 minutes (none without a site key).
    pub fn enqueue_token(&self, account: &str) -> Option<String> {
        let site = self.site.as_ref()?;
        vwr_tier1::enqueue::sign(site, account, &self.event, vwr_core::time::now_secs() + 600).ok()
    }
}

/// Solves a proof of work off the async threads (it is CPU work), with nonces from a random
/// 12-hex-digit prefix as the page's (a server takes each solution once).
async fn solve(challenge: String, difficulty: u32, rng: &mut Rng) -> Option<String> {
    let prefix = format!("{:012x}", (rng.next_f64() * (1u64 << 48) as f64) as u64);
    tokio::task::spawn_blocking(move || vwr_tier1::pow::solve_from(&challenge, difficulty, &prefix))
        .await
        .ok()
}

/// `assign` as the waiting page makes it: with the account's enqueue token when there is one,
/// and, asked for a proof of work, solving it (`solve_pow`) and asking again with `{pow}` —
/// at most [`MAX_CHALLENGES`] times. The last answer (`None`: the deadline passed).
pub(super) async fn assign(
    ctx: &Ctx,
    rng: &mut Rng,
    endpoint: &'static str,
    account: Option<&str>,
    solve_pow: bool,
) -> Step {
    let token = account.and_then(|a| ctx.proofs.enqueue_token(a));
    let headers: Vec<(&str, &str)> = token.as_deref().map(|t| (ENQUEUE_HEADER, t)).into_iter().collect();
    let path = format!("/vwr-api/vwr/assign/{}", ctx.event);
    let mut body = None;
    let mut challenges = 0;
    loop {
        let step = ctx.send(rng, endpoint, Method::POST, &path, &headers, body.as_ref()).await;
        let Step::Reply(r) = &step else {
            return step;
        };
        let v = r.json();
        let challenged = r.status.as_u16() == 403 && v["error"] == "challenge_required";
        challenges += 1;
        if !(challenged && solve_pow) || challenges > MAX_CHALLENGES {
            return step;
        }
        let (Some(challenge), Some(difficulty)) = (v["challenge"].as_str(), v["difficulty"].as_u64()) else {
            return step;
        };
        let Some(nonce) =
            solve(challenge.to_owned(), u32::try_from(difficulty).unwrap_or(u32::MAX), rng).await
        else {
            return Step::GaveUp;
        };
        body = Some(json!({"pow": {"challenge": challenge, "nonce": nonce}}));
    }
}

/// What the real visitors let slip, for the bots to use.
#[derive(Default)]
pub struct Leaks {
    /// `requestId`s of visitors whose turn came (their owners were admitted).
    tickets: Mutex<Vec<String>>,
    /// Tier-1 cookies (`vwr_t1_{e}=…`) of admitted visitors.
    cookies: Mutex<Vec<String>>,
    /// The tier-2 subjects (`sub`) of the real visitors' entry tokens.
    subjects: Mutex<HashSet<String>>,
    /// Set when the visitors are done: the bots stop.
    pub stop: AtomicBool,
}

impl Leaks {
    pub fn ticket(&self, request_id: &str) {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner()).push(request_id.to_owned());
    }

    pub fn cookie(&self, cookie: &str) {
        self.cookies.lock().unwrap_or_else(|p| p.into_inner()).push(cookie.to_owned());
    }

    /// A real visitor's tier-2 entry token.
    pub fn entry_token(&self, token: &str) {
        if let Some(sub) = subject(token) {
            self.subjects.lock().unwrap_or_else(|p| p.into_inner()).insert(sub);
        }
    }

    fn nth(list: &Mutex<Vec<String>>, i: usize) -> Option<String> {
        list.lock().unwrap_or_else(|p| p.into_inner()).get(i).cloned()
    }
}

fn subject(token: &str) -> Option<String> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let v: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).ok()?)
            .ok()?;
    v["sub"].as_str().map(str::to_owned)
}

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
                    assign(&ctx, &mut rng, "bot.assign", Some(&account), kind == BotKind::MultiPlace).await
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
                let Some(ticket) = Leaks::nth(&leaks.tickets, i) else {
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
                let Some(cookie) = Leaks::nth(&leaks.cookies, i) else {
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

/// The `bots` section of the report: per kind, what the bots obtained.
pub fn report(outcomes: &[BotOutcome], leaks: &Leaks, defences: Value) -> Value {
    let real: HashSet<String> = leaks.subjects.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut kinds = serde_json::Map::new();
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
        let mut k = json!({
            "bots": of.len(),
            "attempts": of.iter().map(|o| o.attempts).sum::<u64>(),
            "refused": refused,
        });
        match kind {
            BotKind::MultiPlace | BotKind::NoPow => {
                k["placesObtained"] = json!(places);
                k["extraPlaces"] = json!(extra);
            }
            BotKind::StolenTicket => {
                k["admissionsObtained"] = json!(of.iter().map(|o| o.admissions).sum::<u64>());
            }
            BotKind::SharedCookie => {
                k["edgePasses"] = json!(of.iter().map(|o| o.edge_passes).sum::<u64>());
                k["entryTokens"] = json!(entries);
                k["extraSlots"] = json!(extra_slots);
            }
        }
        kinds.insert(kind.name().to_owned(), k);
    }
    json!({"count": outcomes.len(), "defences": defences, "kinds": kinds})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_counts_extra_places_and_foreign_slots() {
        let leaks = Leaks::default();
        leaks.subjects.lock().unwrap().insert("owner".into());
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
        let r = report(&[multi, shared, stolen], &leaks, json!({}));
        assert_eq!(r["kinds"]["multi-place"]["placesObtained"], 2);
        assert_eq!(r["kinds"]["multi-place"]["extraPlaces"], 1);
        assert_eq!(r["kinds"]["shared-cookie"]["extraSlots"], 1);
        assert_eq!(r["kinds"]["shared-cookie"]["edgePasses"], 2);
        assert_eq!(r["kinds"]["stolen-ticket"]["admissionsObtained"], 0);
        assert_eq!(r["kinds"]["stolen-ticket"]["refused"]["proof_required"], 2);
    }
}
