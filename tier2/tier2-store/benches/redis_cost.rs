//! Redis CPU per tier-2 operation with a long line (default 1,000,000 waiting): a join
//! (`check` of a new user), a status poll of a waiting user (`status`, as the service calls
//! it), a heartbeat (`status` without a token), a status poll of an active user, an admission
//! (the worker's `admit` step, per admitted user), taking and acknowledging the admission
//! notices (per notice), and a leave (of a waiting and of an active user).
//!
//! `cargo bench -p vwr-tier2-store --bench redis_cost`
//!
//! The bench starts its own throwaway `redis-server` on a free loopback port (never the one
//! the tests use), with no persistence, and kills it at the end. Two events live side by side
//! in it, each with the same line: `base` is served by a frozen copy of the scripts as they
//! were before the cost work (`benches/redis_cost_baseline/`, invoked with the same keys and
//! arguments the store used then), `cur` by the store itself (`RedisStore`, today's scripts).
//! Every phase runs on one event, then on the other, so both see the same machine and the
//! same moment. A third event, `scr`, is served by the store made to run its Lua as scripts
//! (`EVALSHA`), as where Redis refuses functions (`VWR_BENCH_SCRIPTS=0` leaves it out).
//!
//! The line is filled with pipelined `ZADD`s of the line and heartbeat sets (what `check`
//! writes for a waiting user: an arrival stamp in µs and a heartbeat in ms, spread over the
//! last minute as polls at most 60 s apart leave them), 1,000 members a command; the fill is
//! not measured. Each measured phase is `CONFIG RESETSTAT`, the
//! operations (`VWR_BENCH_CONCURRENCY` clients at once), then `INFO commandstats`: the
//! figure is the `usec` of the script commands (`evalsha`, `eval`, `fcall`) divided by the
//! operations — Redis's own time in the scripts, nested commands included. The server's whole
//! `used_cpu_user + used_cpu_sys` over the phase (networking and parsing included) is the
//! cross-check. Each phase runs `VWR_BENCH_ROUNDS` times; the table shows the lowest round
//! (the least disturbed by other work on the machine), the JSON every round.
//!
//! Timeouts are set long (an hour) so that nothing goes stale or expires during the run: the
//! admission figures are those of the steady state, where a worker step's cleanup finds nothing.
//!
//! Env: `VWR_BENCH_WAITING` (1000000), `VWR_BENCH_OPS` (ops per phase and round, 10000),
//! `VWR_BENCH_ADMISSIONS` (per round, in steps of 500: 20000), `VWR_BENCH_SMALL_ADMISSIONS` (per
//! round, in steps of 5: a quarter of those), `VWR_BENCH_ROUNDS` (3), `VWR_BENCH_SAMPLES` (per
//! phase and round, 5), `VWR_BENCH_CONCURRENCY` (8), `VWR_BENCH_USER_ID_LEN` (36, a UUID),
//! `VWR_BENCH_RATE_BUCKETS` (121, the rate hash a worker admitting every second leaves),
//! `VWR_BENCH_BASELINE` (1; 0 leaves `base` out), `VWR_BENCH_SCRIPTS` (1; 0 leaves `scr` out),
//! `VWR_BENCH_REDIS_SERVER` (`redis-server`),
//! `VWR_BENCH_RENICE` (a niceness for the server, if allowed), `VWR_BENCH_OUT`
//! (target/bench/redis-cost.json).
//! When target/bench/redis-cost-baseline.json exists (a saved earlier run), its `cur` figures
//! are shown too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::panic)]

mod common;
#[path = "redis_cost/measure.rs"]
mod measure;
#[path = "redis_cost/sets.rs"]
mod sets;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use common::{
    FRONT_HEARTBEAT_AGE_MS, HOUR_MS, RedisServer, connect, cpu_model, env_u64, info, round2, run_all, spread,
    user,
};
use measure::{Cost, Stats, fill, measure, top_up_rate};
use serde_json::json;
use sets::{Baseline, Set, Target, keys};
use vwr_core::EventId;
use vwr_tier2::model::Tier2Settings;
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::{RedisConfig, RedisStore};

fn settings() -> Tier2Settings {
    Tier2Settings {
        active_ttl_ms: HOUR_MS,
        active_heartbeat_timeout_ms: HOUR_MS,
        waiting_timeout_ms: HOUR_MS,
        collect_ms: HOUR_MS,
        notice_cap: 10_000_000,
        ..Tier2Settings::default()
    }
}

fn out_path() -> PathBuf {
    std::env::var("VWR_BENCH_OUT").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench/redis-cost.json")
    })
}

const PHASES: [(&str, &str); 11] = [
    ("join", "join (`check` of a new user into the line)"),
    ("poll", "status poll of a waiting user (`status`)"),
    ("heartbeat", "heartbeat of a waiting user (`status`, no token)"),
    ("poll_active", "status poll of an active user (fresh entry token)"),
    ("admission", "admission (worker `admit` step of 500, per admitted user)"),
    ("admission_small", "admission (worker `admit` step of 5, per admitted user)"),
    ("admission_cleanup", "cleanup of admitted users' waiting heartbeats (per admitted user)"),
    ("notices", "notice take + ack (per notice)"),
    ("leave", "leave of a waiting user"),
    ("leave_active", "leave of an active user"),
    ("check_waiting", "check of a user already waiting (refresh)"),
];

#[tokio::main]
async fn main() {
    let waiting = env_u64("VWR_BENCH_WAITING", 1_000_000);
    let ops = env_u64("VWR_BENCH_OPS", 10_000);
    let admissions = env_u64("VWR_BENCH_ADMISSIONS", 20_000).max(1);
    let rounds = env_u64("VWR_BENCH_ROUNDS", 3).max(1);
    let conc = env_u64("VWR_BENCH_CONCURRENCY", 8).max(1) as usize;
    let id_len = env_u64("VWR_BENCH_USER_ID_LEN", 36) as usize;
    let with_baseline = env_u64("VWR_BENCH_BASELINE", 1) == 1;
    let with_scripts = env_u64("VWR_BENCH_SCRIPTS", 1) == 1;
    let rate_buckets = env_u64("VWR_BENCH_RATE_BUCKETS", 121);
    let samples = env_u64("VWR_BENCH_SAMPLES", 5).max(1);

    let server = RedisServer::start("redis-cost");
    let url = server.url();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut admin = connect(&client).await;
    let redis_version = info(&mut admin, "server")
        .await
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:").map(str::to_owned))
        .unwrap_or_default();
    let store = RedisStore::connect(&RedisConfig::single(&url)).await.unwrap();
    let mut sets = Vec::new();
    if with_baseline {
        let conn = connect(&client).await;
        sets.push(Set {
            name: "base",
            event: EventId::parse("base").unwrap(),
            target: Target::Raw(conn, Arc::new(Baseline::load())),
        });
    }
    if with_scripts {
        let scripts = RedisStore::connect(&RedisConfig::single(&url)).await.unwrap();
        scripts.run_as_scripts();
        sets.push(Set { name: "scr", event: EventId::parse("scr").unwrap(), target: Target::Store(scripts) });
    }
    sets.push(Set {
        name: "cur",
        event: EventId::parse("cur").unwrap(),
        target: Target::Store(store.clone()),
    });
    let sets = Arc::new(sets);

    // The line: `waiting` users stay after every round's admissions.
    let small = env_u64("VWR_BENCH_SMALL_ADMISSIONS", admissions / 4).max(5);
    let total_admissions = (admissions + small) * rounds;
    let line = waiting + total_admissions;
    let start = Instant::now();
    let fill_ms = vwr_core::time::now_millis();
    for set in sets.iter() {
        set.register(1).await;
        fill(&mut admin, &set.event, line, total_admissions, id_len).await;
        let snap = store.snapshot(&set.event).await.unwrap();
        assert_eq!(snap.waiting, line, "{}: fill", set.name);
        eprintln!("{}: {line} users in line ({:.1} s)", set.name, start.elapsed().as_secs_f64());
    }
    // Warm-up: every script once (the first call of a script loads it).
    for set in sets.iter() {
        set.check("warm-up", "w").await;
        set.status("warm-up", 30_000).await;
        set.leave("warm-up").await;
        set.admit("warm", 5).await;
        set.take_and_ack().await;
    }

    let mut results: BTreeMap<(&str, &str), Vec<Cost>> = BTreeMap::new();
    let mut record = |set: &'static str, phase: &'static str, c: Cost| {
        eprintln!(
            "  {set:>4} {phase:<14} {:>7.2} µs/op (server CPU {:>7.2} µs/op)",
            c.per_op(),
            c.cpu_per_op()
        );
        results.entry((set, phase)).or_default().push(c);
    };
    let mut admitted_before = 0u64;
    let s = settings();
    for r in 0..rounds {
        eprintln!("round {}/{rounds}", r + 1);
        // Admissions: the threshold opens `admissions + small` slots, which the worker fills in
        // steps of `batch_max` (a mass admission), then `small` more in steps of 5 (a steady
        // sale: a few slots free up each second); the event is then full, for the joins.
        for set in sets.iter() {
            top_up_rate(&mut admin, &set.event, rate_buckets).await;
            let active = store.snapshot(&set.event).await.unwrap().active;
            set.register(active + admissions + small).await;
        }
        for (phase, want, batch) in [("admission", admissions, s.batch_max), ("admission_small", small, 5)] {
            for sample in 0..samples {
                let part = want / samples + u64::from(sample < want % samples);
                for set in sets.iter() {
                    let c = measure(&mut admin, || async {
                        let mut n = 0u64;
                        let mut step = 0;
                        while n < part {
                            let got = set.admit(&format!("r{r}{phase}{sample}s{step}"), batch).await as u64;
                            assert!(got > 0, "{}: the worker admitted nobody", set.name);
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
        for set in sets.iter() {
            let c = measure(&mut admin, || async {
                let mut n = 0u64;
                loop {
                    let got = set.take_and_ack().await as u64;
                    if got == 0 {
                        break n;
                    }
                    n += got;
                }
            })
            .await;
            record(set.name, "notices", c);
        }
        // Users admitted this round: admitted_before .. admitted_before + admissions (the line
        // is admitted in the order of the fill). Waiting: from there to `line`.
        let act_lo = admitted_before;
        let act_hi = admitted_before + admissions + small;
        admitted_before = act_hi;
        let wait_lo = total_admissions;

        let joiners: Vec<String> = (0..ops).map(|i| user('j', r * ops + i, id_len)).collect();
        // One walk over the line, in disjoint blocks: polls never meet a user who left.
        let pollers = spread(wait_lo, line, 4 * r * ops, ops, id_len);
        let beaters = spread(wait_lo, line, (4 * r + 1) * ops, ops, id_len);
        let refreshers = spread(wait_lo, line, (4 * r + 2) * ops, ops, id_len);
        let leavers = spread(wait_lo, line, (4 * r + 3) * ops, ops, id_len);
        let active_pollers = spread(act_lo, act_hi, 0, ops, id_len);
        let active_leavers = spread(act_lo, act_hi, 0, (ops / 4).max(1), id_len);

        type Phase = (&'static str, Vec<String>, &'static str);
        let phases: Vec<Phase> = vec![
            ("join", joiners, "queued"),
            ("poll", pollers, "queued"),
            ("heartbeat", beaters, "queued"),
            ("check_waiting", refreshers, "queued"),
            ("poll_active", active_pollers, "active"),
            ("leave", leavers, "left 1 0"),
            ("leave_active", active_leavers, "left 0 1"),
        ];
        for (phase, users, want) in phases {
            let per = users.len().div_ceil(samples as usize).max(1);
            for chunk in users.chunks(per) {
                for (si, set) in sets.iter().enumerate() {
                    let users = chunk.to_vec();
                    let sets = Arc::clone(&sets);
                    let tok = s.entry_token_ttl_ms;
                    let c = measure(&mut admin, || {
                        run_all(users, conc, move |u| {
                            let sets = Arc::clone(&sets);
                            async move {
                                let set = &sets[si];
                                let got = match phase {
                                    "join" | "check_waiting" => set.check(&u, "bench").await,
                                    "poll" | "poll_active" => set.status(&u, tok).await,
                                    "heartbeat" => set.status(&u, 0).await,
                                    _ => set.leave(&u).await,
                                };
                                assert_eq!(got, want, "{} {phase} {u}", set.name);
                            }
                        })
                    })
                    .await;
                    record(set.name, phase, c);
                }
            }
        }
    }
    // The deferred part of the admissions: the store leaves an admitted user's waiting
    // heartbeat to the cleanup, which takes such heartbeats once they are older than the
    // waiting timeout. A timeout that reaches back to between the admitted users' heartbeats
    // and everybody else's (see `fill`) makes the cleanup find exactly the leftovers; the same
    // passes on the baseline, which removed those heartbeats at admission, find nothing. The
    // cost is per admitted user, for the admission rows.
    let since_fill_ms = vwr_core::time::now_millis() - fill_ms;
    let cutoff_age = since_fill_ms + FRONT_HEARTBEAT_AGE_MS / 2;
    let passes = total_admissions.div_ceil(s.cleanup_limit) + 1;
    for set in sets.iter() {
        let c = measure(&mut admin, || async {
            for _ in 0..passes {
                assert_eq!(set.cleanup(cutoff_age).await, 0, "{}: a waiting user was stale", set.name);
            }
            total_admissions
        })
        .await;
        record(set.name, "admission_cleanup", c);
    }
    let left: u64 = redis::cmd("ZCOUNT")
        .arg(&keys(&sets[sets.len() - 1].event)[2])
        .arg("-inf")
        .arg(format!("({}", fill_ms - FRONT_HEARTBEAT_AGE_MS / 2))
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(left, 0, "leftover heartbeats the cleanup did not take");
    let end_waiting = store.snapshot(&sets[sets.len() - 1].event).await.unwrap().waiting;

    // Report: per phase and set, the lowest sample (the least disturbed by other work on the
    // machine) and the median.
    let stats = |set: &str, phase: &str| -> Option<Stats> {
        let v = results.get(&(set, phase))?;
        let best = v.iter().min_by(|a, b| a.per_op().total_cmp(&b.per_op()))?.clone();
        let median = |f: &dyn Fn(&Cost) -> f64| {
            let mut xs: Vec<f64> = v.iter().map(f).collect();
            xs.sort_by(f64::total_cmp);
            xs[xs.len() / 2]
        };
        let min_cpu = v.iter().map(Cost::cpu_per_op).fold(f64::INFINITY, f64::min);
        Some(Stats {
            median: median(&Cost::per_op),
            median_cpu: median(&Cost::cpu_per_op),
            min_cpu,
            samples: v.iter().map(measure::cost_json).collect(),
            best,
        })
    };
    let saved: Option<serde_json::Value> =
        std::fs::read_to_string(out_path().with_file_name("redis-cost-baseline.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = cpu_model();
    println!(
        "\nRedis CPU per tier-2 operation, {waiting} waiting ({line} before the admissions, {end_waiting} at the end), \
         ids of {id_len} chars, {rate_buckets} rate buckets; Redis {redis_version}; {cpu}, {cores} cores; \
         {rounds} rounds × {samples} samples of {ops} ops / {admissions} admissions; {conc} clients. \
         µs/op: script time (INFO commandstats), lowest sample; server CPU: used_cpu_user+sys, lowest sample.\n"
    );
    println!(
        "| operation | before: µs/op | now: µs/op | before ÷ now | medians: before ÷ now | now as scripts: µs/op | server CPU before | server CPU now |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut table = serde_json::Map::new();
    for (phase, label) in PHASES {
        let Some(cur) = stats("cur", phase) else { continue };
        let base = stats("base", phase);
        let (b, ratio, mratio, bcpu) = match &base {
            Some(b) => (
                format!("{:.1}", b.best.per_op()),
                format!("{:.2}×", b.best.per_op() / cur.best.per_op()),
                format!("{:.2}×", b.median / cur.median),
                format!("{:.1}", b.min_cpu),
            ),
            None => ("–".into(), "–".into(), "–".into(), "–".into()),
        };
        let scr = stats("scr", phase);
        println!(
            "| {label} | {b} | {:.1} | {ratio} | {mratio} | {} | {bcpu} | {:.1} |",
            cur.best.per_op(),
            scr.as_ref().map_or("–".into(), |s| format!("{:.1}", s.best.per_op())),
            cur.min_cpu
        );
        let mut entry = serde_json::Map::new();
        entry.insert("label".into(), json!(label));
        entry.insert("cur".into(), cur.json());
        if let Some(s) = &scr {
            entry.insert("scripts".into(), s.json());
        }
        if let Some(b) = &base {
            entry.insert("base".into(), b.json());
            entry.insert("ratio_base_over_cur".into(), json!(round2(b.best.per_op() / cur.best.per_op())));
            entry.insert("ratio_of_medians".into(), json!(round2(b.median / cur.median)));
            entry.insert("ratio_server_cpu".into(), json!(round2(b.min_cpu / cur.min_cpu)));
        }
        if let Some(prev) =
            saved.as_ref().and_then(|s| s["phases"][phase]["cur"]["script_usec_per_op"].as_f64())
        {
            entry.insert("saved_baseline_usec_per_op".into(), json!(prev));
            entry.insert("ratio_saved_over_cur".into(), json!(round2(prev / cur.best.per_op())));
        }
        table.insert(phase.into(), serde_json::Value::Object(entry));
    }
    // An admission's whole cost: the step, and the cleanup it leaves (lowest samples added,
    // medians added).
    let mut totals = serde_json::Map::new();
    for (phase, label) in [("admission", "steps of 500"), ("admission_small", "steps of 5")] {
        let parts = |set: &str| -> Option<(f64, f64)> {
            let (a, c) = (stats(set, phase)?, stats(set, "admission_cleanup")?);
            Some((a.best.per_op() + c.best.per_op(), a.median + c.median))
        };
        if let (Some((b, bm)), Some((c, cm))) = (parts("base"), parts("cur")) {
            let scr = parts("scr").map(|(s, _)| s);
            println!(
                "| admission with its cleanup ({label}) | {b:.1} | {c:.1} | {:.2}× | {:.2}× | {} | | |",
                b / c,
                bm / cm,
                scr.map_or("–".into(), |s| format!("{s:.1}")),
            );
            totals.insert(
                phase.into(),
                json!({ "base": round2(b), "cur": round2(c), "scripts": scr.map(round2), "ratio": round2(b / c), "ratio_of_medians": round2(bm / cm) }),
            );
        }
    }
    table.insert("admission_with_cleanup".into(), serde_json::Value::Object(totals));
    if let Some(saved) = &saved {
        println!(
            "\nAgainst the saved run (target/bench/redis-cost-baseline.json, µs/op of its `cur` scripts):\n"
        );
        println!("| operation | saved | now | saved ÷ now |");
        println!("|---|---:|---:|---:|");
        for (phase, label) in PHASES {
            if let (Some(prev), Some(cur)) =
                (saved["phases"][phase]["cur"]["script_usec_per_op"].as_f64(), stats("cur", phase))
            {
                println!(
                    "| {label} | {prev:.1} | {:.1} | {:.2}× |",
                    cur.best.per_op(),
                    prev / cur.best.per_op()
                );
            }
        }
    }
    let doc = json!({
        "bench": "redis_cost",
        "machine": { "cpu": cpu, "cores": cores, "redis_version": redis_version },
        "config": {
            "waiting": waiting, "ops_per_round": ops, "admissions_per_round": admissions,
            "rounds": rounds, "samples_per_round": samples, "concurrency": conc, "user_id_len": id_len,
            "batch_max": s.batch_max, "rate_buckets": rate_buckets,
            "fill": "pipelined ZADD of the line and heartbeat sets; heartbeats spread over the last minute, those of the users the rounds admit ten minutes older",
            "figure": "script usec (INFO commandstats evalsha+eval+fcall) per operation; `cur`/`base` hold the lowest sample",
        },
        "phases": table,
    });
    let path = out_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    println!("\nwritten: {}", path.display());
    drop(server);
}
