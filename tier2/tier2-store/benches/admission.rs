//! Tier-2 capacity on a real Redis: joins/s through the check script, Redis memory per
//! waiting user, and admissions/s through the worker script, for a large line (default
//! 1,000,000 users). Reports figures; asserts nothing.
//!
//! `cargo bench -p vwr-tier2-store --bench admission` — env: `VWR_BENCH_REDIS_URL` (default
//! `redis://127.0.0.1:6379/9`, a database the bench empties), `VWR_BENCH_USERS` (1000000),
//! `VWR_BENCH_USER_ID_LEN` (36, a UUID), `VWR_BENCH_CONCURRENCY` (64).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use vwr_core::EventId;
use vwr_tier2::model::{LineOrder, LineScore, Tier2Settings};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::{RedisConfig, RedisStore};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn used_memory(url: &str) -> u64 {
    let client = redis::Client::open(url).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let info: String = redis::cmd("INFO").arg("memory").query_async(&mut c).await.unwrap();
    info.lines().find_map(|l| l.strip_prefix("used_memory:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

fn user(i: u64, len: usize) -> String {
    let base = format!("u{i:x}-");
    let pad = len.saturating_sub(base.len());
    format!("{base}{}", "0".repeat(pad))
}

#[tokio::main]
async fn main() {
    let url = std::env::var("VWR_BENCH_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/9".into());
    let users = env_u64("VWR_BENCH_USERS", 1_000_000);
    let id_len = env_u64("VWR_BENCH_USER_ID_LEN", 36) as usize;
    let conc = env_u64("VWR_BENCH_CONCURRENCY", 64);
    {
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("FLUSHDB").query_async(&mut c).await.unwrap();
    }
    let store = Arc::new(RedisStore::connect(&RedisConfig::single(&url)).await.unwrap());
    let event = EventId::parse("bench").unwrap();
    let settings = Tier2Settings { batch_max: 500, ..Tier2Settings::default() };
    store.register(&event, 1, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    let mem_before = used_memory(&url).await;

    // Phase 1: `users` checks (everyone but the first joins the line).
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let (store, event, next) = (Arc::clone(&store), event.clone(), Arc::clone(&next));
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= users {
                    break;
                }
                store.check(&event, &user(i, id_len), LineScore::Arrival, "j", &settings).await.unwrap();
                if i > 0 && i % 100_000 == 0 {
                    eprintln!("  … {i} joined");
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let join_secs = start.elapsed().as_secs_f64();
    let snap = store.snapshot(&event).await.unwrap();
    let mem_after = used_memory(&url).await;
    let keys_bytes = store.memory_usage(&event).await.unwrap();

    // Phase 2: admissions through the worker script.
    store.register(&event, users, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    let admit_target = (users / 2).min(500_000);
    let start = Instant::now();
    let mut admitted = 0u64;
    let mut steps = 0u64;
    while admitted < admit_target {
        let r = store.admit(&event, &format!("b{steps}"), &settings).await.unwrap();
        if r.admitted.is_empty() {
            break;
        }
        admitted += r.admitted.len() as u64;
        steps += 1;
        // Drain notices as the worker would (they are part of an admission's cost).
        while !store.take_notices(&event, 1000, 30_000).await.unwrap().is_empty() {}
    }
    let admit_secs = start.elapsed().as_secs_f64();

    let joins_per_s = users as f64 / join_secs;
    let admits_per_s = admitted as f64 / admit_secs;
    println!(
        "tier-2 capacity on Redis ({url}), {users} users, ids of {id_len} chars, {conc} concurrent clients"
    );
    println!("| figure | value |");
    println!("|---|---|");
    println!("| joins through check.lua | {joins_per_s:.0}/s ({users} in {join_secs:.1} s) |");
    println!("| users waiting after the joins | {} |", snap.waiting);
    println!(
        "| Redis memory per waiting user (MEMORY USAGE of the event's keys) | {:.0} bytes |",
        keys_bytes as f64 / snap.waiting.max(1) as f64
    );
    println!(
        "| Redis memory per waiting user (used_memory delta) | {:.0} bytes |",
        mem_after.saturating_sub(mem_before) as f64 / snap.waiting.max(1) as f64
    );
    println!(
        "| admissions through admit.lua (batches of {}) | {admits_per_s:.0}/s ({admitted} in {admit_secs:.1} s, {steps} steps) |",
        settings.batch_max
    );
    println!("| admissions/s ÷ joins/s (same run) | {:.2} |", admits_per_s / joins_per_s);
    store.unregister(&event).await.unwrap();
}
