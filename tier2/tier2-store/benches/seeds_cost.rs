//! Redis CPU of vwr's tier-2 store side by side with the scripts of the design vwr started
//! from (the "seeds": the queue service of the public repository `cchriscode/URR`), on the same
//! line: a waiting user's status poll, and an admission (per admitted user, in worker steps of
//! 500 and of 5); and, vwr only, the line document (ADR 0026) that replaced most polls.
//!
//! `VWR_BENCH_URR_DIR=<a checkout of URR> cargo bench -p vwr-tier2-store --bench seeds_cost`
//!
//! Their code is not part of vwr and never copied into it: the bench reads their two scripts
//! at run time from `$VWR_BENCH_URR_DIR/services-spring/queue-service/src/main/resources/redis/`
//! (`queue_check.lua`, `admission_control.lua`). Without the variable, or without the files,
//! it says what to set and exits 0 (skips).
//!
//! **Mode.** By default vwr runs as deployed by default (ADR 0026, invariant 26): no waiting
//! timeout (`Tier2Settings::default().waiting_timeout_ms`, 0), so waiting users are not heard
//! from while they wait: the poll is `status` as `Tier2Service::status` calls it
//! (`Tier2Settings::touch()`, here `Touch::Active`: an active user's heartbeat only, and the
//! entry-token TTL), the store never writes waiting heartbeats (vwr's line is filled without
//! them), the admission steps' cleanup reads none, and of an admission only its judging at the
//! collect window is left for later (below). `VWR_BENCH_WAITING_TIMEOUT=<seconds>` (> 0) runs vwr as before ADR 0026 instead: that
//! waiting timeout, `Touch::Any` (the poll is also the waiting user's heartbeat), vwr's line
//! filled with waiting heartbeats like the seeds', and the deferred cleanup of admitted users'
//! waiting heartbeats measured and added (below). It must outlast the run by more than ten
//! minutes (the admitted users' heartbeats are that much older; a shorter one would let the
//! steps' cleanup take waiting users): 3600, what the bench used then. The seeds' side is the
//! same in both modes (their poll is their heartbeat). The output says which mode ran.
//!
//! The bench starts its own throwaway `redis-server` on a free loopback port (never the one
//! the tests use), with no persistence, and kills it at the end. Side by side in it:
//! - `seeds`: their keys of one event, `{eventId}:queue` (line, score = arrival stamp in ms),
//!   `:active` (score = end of the admission), `:seen` (waiting heartbeats), `:active-seen`,
//!   `:threshold` (a string), served by their scripts with `EVALSHA` and the keys and
//!   arguments their service passes (the poll: user, now in ms, a default threshold, the active
//!   TTL in ms; an admission step: how many at most, now, the active TTL, the threshold);
//! - `vwr`: an event of the store itself (`RedisStore`, its function library, `FCALL`),
//!   registered with `register` and with its keys from `redis::keys::event_keys`;
//! - `vwr_scripts` (unless `VWR_BENCH_SCRIPTS=0`): the same store made to run its Lua as
//!   scripts (`EVALSHA`, as where Redis refuses functions), the seeds' way of calling Redis.
//!
//! vwr's other settings: active TTL and heartbeat timeout of an hour, and a collect window
//! (`collect_ms`) equal to that heartbeat timeout, so that no admission of the run is freed for
//! not being collected mid-run (the bench collects none); a silence bound of an hour, so that
//! the pauses between phases are not taken for an outage.
//!
//! Fill (not measured): each side's line gets the same `VWR_BENCH_WAITING` users plus those the
//! rounds admit, 36-character ids, by pipelined `ZADD`s of 1,000 members, as
//! `benches/redis_cost.rs` fills vwr's: the line in arrival order (distinct stamps: µs for vwr,
//! as `check` writes them, ms for the seeds, as their service writes them; the same order, so
//! both lines are sorted sets of the same shape), and the waiting heartbeats (the seeds', and
//! vwr's only with a waiting timeout) spread over the last minute (the same ms on both sides).
//! The users the rounds admit have heartbeats ten minutes older (see the deferred cleanup
//! below). vwr's rate hash is given one bucket for each of the last 121 seconds before each
//! round, what a worker admitting every second leaves (`VWR_BENCH_RATE_BUCKETS`).
//!
//! Phases, in each of `VWR_BENCH_ROUNDS` rounds, each sample run on every side in turn, the
//! order rotating from one sample to the next so that no side always goes first:
//! - **admission**: `VWR_BENCH_ADMISSIONS` users in worker steps of 500 (vwr's `batch_max`),
//!   then a quarter of that in steps of 5 (a steady sale), split into `VWR_BENCH_SAMPLES`
//!   samples. vwr: `RedisStore::admit`; seeds: `admission_control`. Slots: both sides get the
//!   same threshold, large enough for every admission of the run (nobody's slot is freed, and
//!   both active sets grow alike); timeouts of an hour, so that vwr's cleanup inside each step
//!   finds nothing (the steady state), and the seeds' expiry pass inside theirs too.
//! - **poll**: `VWR_BENCH_OPS` status polls of waiting users spread over the line
//!   (`VWR_BENCH_CONCURRENCY` clients at once), each user once in the whole run. vwr:
//!   `RedisStore::status(event, user, settings.touch(), entry-token TTL)`, as the service's
//!   status route calls it; seeds: `queue_check`, as their status route calls it.
//! - **line document** (vwr only): `VWR_BENCH_LINE_CALLS` calls of `RedisStore::line(event)`
//!   (the same clients at once), per call. One call serves every waiting visitor of the event
//!   for a second through the CDN (about one per second per edge location and event), so the
//!   row is what the shared document costs per second per event. Its once-a-second write (meta
//!   `hd`, as in `status`) falls on few of the bench's calls, on a larger share in production.
//!
//! After the rounds, **the deferred part of vwr's admissions**, each shown on its own, per
//! admitted user, and added to the admission rows ("with vwr's deferred part"); the seeds
//! leave nothing behind:
//! - with a waiting timeout only, **the heartbeat cleanup**: vwr then leaves an admitted user's
//!   waiting heartbeat to the cleanup (which takes the stale front of the heartbeat set as one
//!   range) where the seeds remove it in the admission. Cleanup passes (each takes up to 1,000)
//!   with a waiting timeout that reaches back to between the admitted users' heartbeats and
//!   everybody else's take exactly those leftovers, in `VWR_BENCH_SAMPLES` samples. By default
//!   there are no waiting heartbeats: no such phase, no such rows.
//! - in both modes, **the collect judging**: the worker's admissions get no heartbeat until a
//!   call collects them, and a later step's cleanup judges each once, `collect` after it was
//!   made (one range of the active set from a mark, one `ZMSCORE` of the active heartbeats;
//!   `lua/lib.lua`, `collect_uncollected`); in the rounds no admission is due (the collect
//!   window is an hour), so each step pays only the empty range. The bench's admissions are
//!   then collected (their active heartbeats written, as each visitor's call at the turn does:
//!   not measured, as the seeds' visitors' calls are not), and cleanup passes with no collect
//!   window judge them all (none is freed), in samples, per admission judged.
//!
//! The figure: each sample is `CONFIG RESETSTAT`, the operations, then `INFO commandstats`:
//! the `usec` of the script commands (`evalsha`, `eval`, `fcall`, nested commands included)
//! divided by the operations (polls, admitted users, or line documents) — Redis's own time in
//! the scripts. The server's whole `used_cpu_user + used_cpu_sys` over the sample (networking
//! and parsing included) is the cross-check. The table shows, per side, the lowest sample (the
//! least disturbed by other work on the machine) and the ratio of the medians; the JSON has
//! every sample and, per phase and side, every command's calls and µs per operation over all
//! samples (where the time goes). Only the scripts are counted: the commands the seeds' worker
//! sends around its script (a lock, the threshold, the line's size) and vwr's registry are not
//! run.
//!
//! Env: `VWR_BENCH_URR_DIR` (required, else the bench skips), `VWR_BENCH_WAITING_TIMEOUT`
//! (seconds; 0, the default: none, as deployed), `VWR_BENCH_WAITING` (1000000),
//! `VWR_BENCH_OPS` (polls per round, 10000), `VWR_BENCH_LINE_CALLS` (line documents per round,
//! 2000), `VWR_BENCH_ADMISSIONS` (per round, in steps of 500: 20000),
//! `VWR_BENCH_SMALL_ADMISSIONS` (per round, in steps of 5: a quarter of those),
//! `VWR_BENCH_ROUNDS` (3), `VWR_BENCH_SAMPLES` (per phase and round, 5),
//! `VWR_BENCH_CONCURRENCY` (8), `VWR_BENCH_USER_ID_LEN` (36, a UUID), `VWR_BENCH_RATE_BUCKETS`
//! (121), `VWR_BENCH_SCRIPTS` (1; 0 leaves `vwr_scripts` out), `VWR_BENCH_REDIS_SERVER`
//! (`redis-server`), `VWR_BENCH_RENICE` (a niceness for the server, if allowed),
//! `VWR_BENCH_OUT` (target/bench/seeds-cost.json).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::panic)]

mod common;
#[path = "seeds_cost/measure.rs"]
mod measure;
#[path = "seeds_cost/report.rs"]
mod report;
#[path = "seeds_cost/sides.rs"]
mod sides;

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use common::{FRONT_HEARTBEAT_AGE_MS, HOUR_MS, RedisServer, connect, env_u64, info, run_all, spread, user};
use measure::{Cost, fill, measure, top_up_rate};
use redis::Script;
use redis::aio::MultiplexedConnection;
use report::{Run, report};
use sides::{Seeds, Set, Side, read_seeds};
use vwr_core::EventId;
use vwr_tier2::model::{Cleaned, Tier2Settings};
use vwr_tier2_store::redis::keys::event_keys;
use vwr_tier2_store::redis::{RedisConfig, RedisStore};

/// Users each side admits in the warm-up (in one step of 5), before the rounds.
const WARM_ADMISSIONS: u64 = 5;

/// vwr's waiting timeout in the bench (`VWR_BENCH_WAITING_TIMEOUT`, seconds): 0 (none, the
/// default and as deployed by default), or the mode of before ADR 0026.
static WAITING_TIMEOUT_MS: LazyLock<u64> = LazyLock::new(|| {
    env_u64("VWR_BENCH_WAITING_TIMEOUT", Tier2Settings::default().waiting_timeout_ms / 1000) * 1000
});

/// vwr's settings in the bench: the waiting timeout of the mode (none by default); other
/// timeouts of an hour, so that nothing goes stale or expires during the run, and a collect
/// window as long as the heartbeat timeout, so that no admission is freed for not being
/// collected mid-run; a silence bound of an hour, so that the pauses between phases (no worker
/// step, no poll) are not taken for an outage: the path of a worker stepping every second.
fn settings() -> Tier2Settings {
    Tier2Settings {
        active_ttl_ms: HOUR_MS,
        active_heartbeat_timeout_ms: HOUR_MS,
        waiting_timeout_ms: *WAITING_TIMEOUT_MS,
        collect_ms: HOUR_MS,
        silence_after_ms: HOUR_MS,
        notice_cap: 10_000_000,
        ..Tier2Settings::default()
    }
}

#[tokio::main]
async fn main() {
    let (check_src, admit_src) = match read_seeds() {
        Ok(s) => s,
        Err(why) => {
            println!("{why}");
            return;
        }
    };
    let waiting = env_u64("VWR_BENCH_WAITING", 1_000_000);
    let ops = env_u64("VWR_BENCH_OPS", 10_000).max(1);
    let line_calls = env_u64("VWR_BENCH_LINE_CALLS", 2000).max(1);
    let admissions = env_u64("VWR_BENCH_ADMISSIONS", 20_000).max(1);
    let small = env_u64("VWR_BENCH_SMALL_ADMISSIONS", admissions / 4).max(5);
    let rounds = env_u64("VWR_BENCH_ROUNDS", 3).max(1);
    let samples = env_u64("VWR_BENCH_SAMPLES", 5).max(1);
    let conc = env_u64("VWR_BENCH_CONCURRENCY", 8).max(1) as usize;
    let id_len = env_u64("VWR_BENCH_USER_ID_LEN", 36) as usize;
    let rate_buckets = env_u64("VWR_BENCH_RATE_BUCKETS", 121);
    let with_scripts = env_u64("VWR_BENCH_SCRIPTS", 1) == 1;
    let waiting_timeout_ms = *WAITING_TIMEOUT_MS;
    if waiting_timeout_ms > 0 && waiting_timeout_ms < 2 * FRONT_HEARTBEAT_AGE_MS {
        println!(
            "seeds_cost: VWR_BENCH_WAITING_TIMEOUT must outlast the run by more than ten minutes \
             (3600, as before ADR 0026), else the steps' cleanup takes waiting users; 0: none, as deployed"
        );
        return;
    }
    let mode = if waiting_timeout_ms == 0 {
        "as deployed by default (ADR 0026): no waiting timeout, status touches active users only \
         (Touch::Active), no waiting heartbeats; of an admission only the collect judging is deferred"
            .to_owned()
    } else {
        format!(
            "before ADR 0026: waiting timeout {} s, status touches waiting users too (Touch::Any), \
             waiting heartbeats kept, admitted users' left to the cleanup (measured and added)",
            waiting_timeout_ms / 1000
        )
    };
    eprintln!("mode: {mode}");

    let server = RedisServer::start("seeds-cost");
    let url = server.url();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut admin = connect(&client).await;
    let redis_version = info(&mut admin, "server")
        .await
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:").map(str::to_owned))
        .unwrap_or_default();

    let mut sets = vec![
        Set {
            name: "seeds",
            event: EventId::parse("seeds").unwrap(),
            side: Side::Seeds(Seeds {
                check: Script::new(&check_src),
                admit: Script::new(&admit_src),
                conn: connect(&client).await,
            }),
        },
        Set {
            name: "vwr",
            event: EventId::parse("vwr").unwrap(),
            side: Side::Vwr(RedisStore::connect(&RedisConfig::single(&url)).await.unwrap()),
        },
    ];
    if with_scripts {
        let scripts = RedisStore::connect(&RedisConfig::single(&url)).await.unwrap();
        scripts.run_as_scripts();
        sets.push(Set {
            name: "vwr_scripts",
            event: EventId::parse("vwrs").unwrap(),
            side: Side::Vwr(scripts),
        });
    }
    let sets = Arc::new(sets);

    // The line: `waiting` users stay after the warm-up's and every round's admissions.
    let total_admissions = (admissions + small) * rounds;
    let front = WARM_ADMISSIONS + total_admissions;
    let line = waiting + front;
    // Room for every admission of the run, on both sides.
    let threshold = 2 * front + 1000;
    let start = Instant::now();
    let fill_ms = vwr_core::time::now_millis();
    for set in sets.iter() {
        set.register(threshold, &mut admin).await;
        fill(&mut admin, set, line, front, id_len, fill_ms).await;
        assert_eq!(set.waiting(&mut admin).await, line, "{}: fill", set.name);
        eprintln!("{}: {line} users in line ({:.1} s)", set.name, start.elapsed().as_secs_f64());
    }
    // Warm-up: every script once (the first call of a script loads it); each side admits the
    // same first users.
    let s = settings();
    for set in sets.iter() {
        assert!(!set.poll("warm-up", s.entry_token_ttl_ms, threshold).await);
        assert_eq!(set.admit("warm", WARM_ADMISSIONS, threshold).await, WARM_ADMISSIONS, "{}", set.name);
        if set.is_vwr() {
            assert_eq!(set.cleanup(&s).await, Cleaned::default(), "{}", set.name);
            assert_eq!(set.line().await, line - WARM_ADMISSIONS, "{}: line document", set.name);
        }
    }

    let mut results: BTreeMap<(&str, &str), Vec<Cost>> = BTreeMap::new();
    let mut record = |set: &'static str, phase: &'static str, c: Cost| {
        eprintln!(
            "  {set:>11} {phase:<16} {:>7.2} µs/op (server CPU {:>7.2} µs/op)",
            c.per_op(),
            c.cpu_per_op()
        );
        results.entry((set, phase)).or_default().push(c);
    };
    // Each sample runs every side, starting from the next one each time.
    let n_sets = sets.len();
    let mut turn = 0usize;
    let mut order = || {
        turn += 1;
        (0..n_sets).map(move |i| (turn + i) % n_sets).collect::<Vec<_>>()
    };
    let wait_lo = front;
    for r in 0..rounds {
        eprintln!("round {}/{rounds}", r + 1);
        top_up_rate(&mut admin, &sets, rate_buckets).await;
        for (phase, want, batch) in [("admission", admissions, s.batch_max), ("admission_small", small, 5)] {
            for sample in 0..samples {
                let part = want / samples + u64::from(sample < want % samples);
                if part == 0 {
                    continue;
                }
                for si in order() {
                    let set = &sets[si];
                    let c = measure(&mut admin, || async {
                        let mut n = 0u64;
                        let mut step = 0;
                        while n < part {
                            let b = batch.min(part - n);
                            let got = set.admit(&format!("r{r}{phase}{sample}s{step}"), b, threshold).await;
                            assert_eq!(got, b, "{}: admitted fewer than asked", set.name);
                            n += got;
                            step += 1;
                        }
                        n
                    })
                    .await;
                    record(set.name, phase, c);
                }
            }
        }
        // Polls: one walk over the users who stay in line, in disjoint blocks.
        let pollers = spread(wait_lo, line, r * ops, ops, id_len);
        let per = pollers.len().div_ceil(samples as usize).max(1);
        for chunk in pollers.chunks(per) {
            for si in order() {
                let users = chunk.to_vec();
                let name = sets[si].name;
                let sets = Arc::clone(&sets);
                let tok = s.entry_token_ttl_ms;
                let c = measure(&mut admin, || {
                    run_all(users, conc, move |u| {
                        let sets = Arc::clone(&sets);
                        async move {
                            let set = &sets[si];
                            assert!(set.poll(&u, tok, threshold).await, "{} poll {u}: not in line", set.name);
                        }
                    })
                })
                .await;
                record(name, "poll", c);
            }
        }
        // Line documents (vwr only), in as many samples, the same clients at once.
        for sample in 0..samples {
            let part = line_calls / samples + u64::from(sample < line_calls % samples);
            if part == 0 {
                continue;
            }
            for si in order() {
                if !sets[si].is_vwr() {
                    continue;
                }
                let name = sets[si].name;
                let sets = Arc::clone(&sets);
                let calls = (0..part).map(|i| i.to_string()).collect();
                let c = measure(&mut admin, || {
                    run_all(calls, conc, move |_| {
                        let sets = Arc::clone(&sets);
                        async move {
                            let set = &sets[si];
                            assert!(set.line().await > 0, "{}: empty line document", set.name);
                        }
                    })
                })
                .await;
                record(name, "line", c);
            }
        }
    }
    // vwr's deferred part of the admissions (with a waiting timeout only: by default there are
    // no waiting heartbeats, and nothing is deferred): a waiting timeout that reaches back to
    // between the admitted users' heartbeats and everybody else's (see `fill`) makes the
    // cleanup find exactly the admitted users' leftover heartbeats; each sample is a share of
    // the passes it takes, per heartbeat taken.
    let since_fill_ms = vwr_core::time::now_millis() - fill_ms;
    let cutoff_age = since_fill_ms + FRONT_HEARTBEAT_AGE_MS / 2;
    let passes = if waiting_timeout_ms > 0 { front.div_ceil(s.cleanup_limit) } else { 0 };
    let reach_back = Tier2Settings { waiting_timeout_ms: cutoff_age, ..s };
    let per_sample = passes.div_ceil(samples).max(1);
    let mut done = 0;
    while done < passes {
        let k = per_sample.min(passes - done);
        for si in order() {
            let set = &sets[si];
            if !set.is_vwr() {
                continue;
            }
            let seen = set.line_keys().1;
            let before: u64 = redis::cmd("ZCARD").arg(&seen).query_async(&mut admin).await.unwrap();
            let c = measure(&mut admin, || async {
                for _ in 0..k {
                    assert_eq!(
                        set.cleanup(&reach_back).await.stale,
                        0,
                        "{}: a waiting user was stale",
                        set.name
                    );
                }
                0
            })
            .await;
            let after: u64 = redis::cmd("ZCARD").arg(&seen).query_async(&mut admin).await.unwrap();
            record(set.name, "admission_cleanup", Cost { ops: before - after, ..c });
        }
        done += k;
    }
    for set in sets.iter().filter(|s| s.is_vwr()) {
        if waiting_timeout_ms == 0 {
            // As deployed by default the store writes no waiting heartbeat.
            let seen: u64 = redis::cmd("ZCARD").arg(set.line_keys().1).query_async(&mut admin).await.unwrap();
            assert_eq!(seen, 0, "{}: waiting heartbeats without a waiting timeout", set.name);
            continue;
        }
        assert_eq!(set.cleanup(&reach_back).await.stale, 0, "{}: a waiting user was stale", set.name);
        let left: u64 = redis::cmd("ZCOUNT")
            .arg(set.line_keys().1)
            .arg("-inf")
            .arg(format!("({}", fill_ms - FRONT_HEARTBEAT_AGE_MS / 2))
            .query_async(&mut admin)
            .await
            .unwrap();
        assert_eq!(left, 0, "{}: leftover heartbeats the cleanup did not take", set.name);
    }
    // The rest of vwr's admissions, in both modes: the worker's admissions get no heartbeat until
    // a call collects them, and a later step's cleanup judges each of them once, `collect` after
    // it was made (lib.lua, collect_uncollected). The bench's admissions are collected now (their
    // active heartbeats written, as each visitor's call at the turn writes it: not measured, on
    // neither side), then cleanup passes with no collect window judge them all, in samples, per
    // admission judged (how far the mark `cc` got); none is freed.
    for set in sets.iter().filter(|s| s.is_vwr()) {
        let k = event_keys(&set.event);
        let act: u64 = redis::cmd("ZCARD").arg(&k[1]).query_async(&mut admin).await.unwrap();
        let seen: u64 = redis::cmd("ZCARD").arg(&k[3]).query_async(&mut admin).await.unwrap();
        assert_eq!((act, seen), (front, 0), "{}: admissions, and heartbeats before any collect", set.name);
        let now = vwr_core::time::now_millis();
        for part in (0..front).collect::<Vec<_>>().chunks(1000) {
            let mut z = redis::cmd("ZADD");
            z.arg(&k[3]);
            for &j in part {
                z.arg(now).arg(user('u', j, id_len));
            }
            let _: () = z.query_async(&mut admin).await.unwrap();
        }
    }
    let judge = Tier2Settings { collect_ms: 0, ..s };
    // A pass judges up to ten times the cleanup limit, less the last end read when it is cut.
    let passes = front.div_ceil(10 * s.cleanup_limit - s.batch_max) + 1;
    let per_sample = passes.div_ceil(samples).max(1);
    let mut done = 0;
    while done < passes {
        let k = per_sample.min(passes - done);
        for si in order() {
            let set = &sets[si];
            if !set.is_vwr() {
                continue;
            }
            let keys = event_keys(&set.event);
            let mark = |admin: &mut MultiplexedConnection| {
                let keys = keys.clone();
                let mut admin = admin.clone();
                async move {
                    let cc: Option<String> =
                        redis::cmd("HGET").arg(&keys[4]).arg("cc").query_async(&mut admin).await.unwrap();
                    cc.unwrap_or_else(|| "-inf".into())
                }
            };
            let before = mark(&mut admin).await;
            let c = measure(&mut admin, || async {
                for _ in 0..k {
                    assert_eq!(set.cleanup(&judge).await, Cleaned::default(), "{}: judging", set.name);
                }
                0
            })
            .await;
            let after = mark(&mut admin).await;
            let judged: u64 = redis::cmd("ZCOUNT")
                .arg(&keys[1])
                .arg(format!("({before}"))
                .arg(&after)
                .query_async(&mut admin)
                .await
                .unwrap();
            if judged > 0 {
                record(set.name, "admission_collect", Cost { ops: judged, ..c });
            }
        }
        done += k;
    }
    for set in sets.iter().filter(|s| s.is_vwr()) {
        let keys = event_keys(&set.event);
        let cc: String = redis::cmd("HGET").arg(&keys[4]).arg("cc").query_async(&mut admin).await.unwrap();
        let left: u64 = redis::cmd("ZCOUNT")
            .arg(&keys[1])
            .arg(format!("({cc}"))
            .arg("+inf")
            .query_async(&mut admin)
            .await
            .unwrap();
        let act: u64 = redis::cmd("ZCARD").arg(&keys[1]).query_async(&mut admin).await.unwrap();
        assert_eq!((left, act), (0, front), "{}: admissions left unjudged, or freed", set.name);
    }
    // The seeds removed their admitted users' heartbeats in the admission.
    let seen_left: u64 =
        redis::cmd("ZCARD").arg(sets[0].line_keys().1).query_async(&mut admin).await.unwrap();
    let end_waiting = sets[0].waiting(&mut admin).await;
    assert_eq!(end_waiting, waiting, "seeds: line at the end");
    assert_eq!(seen_left, waiting, "seeds: heartbeats at the end");
    for set in &sets[1..] {
        assert_eq!(set.waiting(&mut admin).await, waiting, "{}: line at the end", set.name);
    }

    // Report.
    let run = Run {
        mode,
        waiting_timeout_ms,
        touch: s.touch(),
        redis_version,
        waiting,
        line,
        ops,
        line_calls,
        admissions,
        small,
        rounds,
        samples,
        conc,
        id_len,
        rate_buckets,
        threshold,
    };
    report(&run, &sets, &results);
    drop(server);
}
