//! Tier-1 micro-benchmarks (in-memory store): token sign/verify, ticket issue/verify, assign,
//! and check with the 1 s serving-counter cache against the same check without it (baseline).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use vwr_core::config::Env;
use vwr_core::time::SystemClock;
use vwr_core::token::{Tier1Claims, Tier1Tokens};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::config::Tier1Config;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::ticket::{Ticket, TicketSigner};
use vwr_tier1::{Tier1Clients, Tier1Service};

fn tokens() -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::generate("b1").unwrap(), "vwr", "vwr-edge")
}

fn crypto(c: &mut Criterion) {
    let t = tokens();
    let ev = EventId::parse("e1").unwrap();
    let now = vwr_core::time::now_secs();
    let claims = Tier1Claims {
        iss: "vwr".into(),
        aud: "vwr-edge".into(),
        sub: "v1.b1.ZTE6MToxODAwMDAwMDAw.AAAAAAAAAAAAAAAAAAAAAA".into(),
        eid: "e1".into(),
        pos: 12345,
        tier: 1,
        iat: now,
        nbf: now,
        exp: now + 600,
        jti: "jti-123".into(),
        t2: None,
    };
    let tok = t.sign(&claims).unwrap();
    c.bench_function("token/sign", |b| b.iter(|| t.sign(&claims).unwrap()));
    c.bench_function("token/verify", |b| b.iter(|| t.verify(&tok, &ev, now).unwrap()));
    let signer = TicketSigner::new(t.ring(), 86_400);
    let ticket = Ticket { event: ev.clone(), place: vwr_tier1::ticket::Place::Join(12345), issued_at: now };
    let id = signer.issue(&ticket);
    c.bench_function("ticket/issue", |b| b.iter(|| signer.issue(&ticket)));
    c.bench_function("ticket/verify", |b| b.iter(|| signer.verify(&id, &ev, now).unwrap()));
    // Abuse resistance: what a join or check adds on the server (docs/abuse.md).
    let pow = vwr_tier1::pow::PowIssuer::new(t.ring());
    let challenge = pow.challenge(&ev, now);
    let nonce = vwr_tier1::pow::solve(&challenge, 16);
    c.bench_function("pow/verify_d16", |b| b.iter(|| pow.verify(&ev, now, &challenge, &nonce, 16).unwrap()));
    c.bench_function("request_secret/verify", |b| {
        let secret = signer.secret_for(&id).unwrap();
        b.iter(|| assert!(signer.secret_matches(&id, &secret)))
    });
    let site = vwr_core::keys::EcKeyring::generate("site").unwrap();
    let jwks = serde_json::to_string(&site.jwks()).unwrap();
    let verifier = vwr_tier1::enqueue::EnqueueVerifier::from_jwks(&jwks).unwrap();
    let et = vwr_tier1::enqueue::sign(&site, "account-1", &ev, now + 300).unwrap();
    c.bench_function("enqueue_token/verify", |b| b.iter(|| verifier.verify(&et, &ev, now).unwrap()));
    // The draw: what a check of a pre-queue ticket adds (rank over 16 shards + permutation).
    let seed = vwr_tier1::draw::Seed::generate().unwrap();
    let counts = vec![31_250u64; 16];
    c.bench_function("draw/position_500k", |b| {
        b.iter(|| {
            let r = vwr_tier1::draw::rank_of_pre_index(&counts, 250_001).unwrap();
            vwr_tier1::draw::position(&seed, 500_000, r).unwrap()
        })
    });
}

fn service(cache: Duration) -> Arc<Tier1Service> {
    let tokens = tokens();
    let keys = tokens.ring().to_text();
    let mut cfg = Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", keys.as_str())])).unwrap();
    cfg.settings.cache_ttl = cache;
    let clients = Tier1Clients::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock));
    Arc::new(vwr_tier1::assemble(&cfg, tokens, clients))
}

fn api(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let ev = EventId::parse("e1").unwrap();
    let cached = service(Duration::from_secs(1));
    let uncached = service(Duration::ZERO);
    let mut ids = Vec::new();
    for svc in [&cached, &uncached] {
        rt.block_on(async {
            let p = ConfigPatch { batch_size: Some(0), ..Default::default() };
            svc.activate(&ev, p, "bench").await.unwrap();
            ids.push(
                svc.assign(&ev, &vwr_tier1::service::JoinProof::default())
                    .await
                    .unwrap()
                    .request_id()
                    .to_owned(),
            );
        });
    }
    c.bench_function("assign/memory", |b| {
        b.to_async(&rt)
            .iter(|| async { cached.assign(&ev, &vwr_tier1::service::JoinProof::default()).await.unwrap() })
    });
    let id = ids[0].clone();
    c.bench_function("check_waiting/cached", |b| {
        b.to_async(&rt)
            .iter(|| async { cached.check(&ev, &id, cached.request_secret(&id).as_deref()).await.unwrap() })
    });
    let id = ids[1].clone();
    c.bench_function("check_waiting/uncached_baseline", |b| {
        b.to_async(&rt).iter(|| async {
            uncached.check(&ev, &id, uncached.request_secret(&id).as_deref()).await.unwrap()
        })
    });
}

criterion_group!(benches, crypto, api);
criterion_main!(benches);
