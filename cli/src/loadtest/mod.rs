//! `vwr loadtest`: drives N virtual visitors through the whole flow against a running vwr and
//! reports throughput, latency, time to admission, fairness and safety counters, optionally
//! under injected faults. See docs/performance.md.
//!
//! Scenarios: `steady` activates the event and lets everyone arrive over the curve;
//! `prequeue` schedules a sale (docs/lifecycle.md), has a share of the visitors join its
//! pre-queue, and reports the open: the request rate right after `openAt`, the draw
//! (positions 1..=P, the seed against its commitment, rank correlation with arrival order).
//!
//! Visitors wait in line as the waiting page does (the CDN-cached status document, `check` at
//! their turn) or, with `--legacy-polling`, poll `check` at the server's hints; the report's
//! `costs` (Lambda calls per visitor per tier, status fetches and origin fetches) and
//! `estimate` (the wait estimate at the join against the real wait) compare the two, and
//! `--html` draws the run as one self-contained page.

pub mod bots;
pub mod cost;
pub mod ctx;
pub mod faults;
pub mod html;
pub mod open;
pub mod options;
pub mod outflow;
pub mod series;
pub mod stats;
pub mod visitor;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::Method;
use serde::Serialize;
use serde_json::{Value, json};

use self::ctx::{CHECK, Ctx, RECHECK};
use self::faults::FaultKind;
use self::open::OpenWatch;
pub use self::options::{Action, ActionKind, Curve, LoadOptions, Mode, Scenario};
use self::options::{arrival_of, tier1_config};
use self::stats::{
    Counters, Latencies, Percentiles, Timeline, histogram, kendall_tau, largest_inversion, quantile,
};
use self::visitor::{Outcome, visit};
use crate::client::{Auth, HttpClient};
use crate::devstate;

/// The safety counters (all must be zero).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Safety {
    /// Joined, did not abandon, and the system ended its run without getting it through
    /// (admitted, served and left). Visitors still on their way when the run ended are
    /// `flow.unfinished`, not lost.
    pub lost: u64,
    /// A second identity (jti) seen for one admission.
    pub double_admitted: u64,
    /// Samples or answers with more active users than the threshold.
    pub over_threshold_moments: u64,
    /// 5xx answers other than a 503 with Retry-After.
    pub server_errors: u64,
    /// Visitors whose place moved backwards (`placesLost.byCause` says how): a ticket replaced
    /// after a verdict the visitor did not cause, a position changed, an admitted ticket
    /// answered as waiting, a tier-2 place not given back after tier 2 stopped holding a
    /// visitor who never left, an active visitor demoted, a tier-1 position taken in tier 2.
    #[serde(default)]
    pub places_lost_to_faults: u64,
    /// `prequeue` only: draw violations — pre-queue positions not exactly 1..=P, a position
    /// seen twice, a post-open position ≤ P, the revealed seed not matching its commitment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prequeue_violations: Option<u64>,
}

impl Safety {
    pub fn clean(&self) -> bool {
        self.lost == 0
            && self.places_lost_to_faults == 0
            && self.double_admitted == 0
            && self.over_threshold_moments == 0
            && self.server_errors == 0
            && self.prequeue_violations.unwrap_or(0) == 0
    }
}

pub(crate) async fn admin_call(
    client: &HttpClient,
    base: &str,
    auth: &Auth,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let r = client
        .send(method, &format!("{base}{path}"), body.as_ref(), auth)
        .await
        .map_err(|e| e.to_string())?;
    if r.status.is_success() {
        Ok(r.json())
    } else {
        Err(format!("{path}: {} {}", r.status, String::from_utf8_lossy(&r.body)))
    }
}

async fn proxy_stats(client: &HttpClient, proxy: &str) -> Result<Value, String> {
    let r = client
        .send(Method::GET, &format!("{proxy}/_vwr/stats"), None, &Auth::None)
        .await
        .map_err(|e| e.to_string())?;
    if !r.status.is_success() {
        return Err(format!("{proxy} is not a vwr aws-proxy ({})", r.status));
    }
    Ok(r.json())
}

fn pct(sorted: &[f64], q: f64) -> Option<f64> {
    quantile(sorted, q).map(|x| (x * 1000.0).round() / 1000.0)
}

/// Runs the load test and prints the report; returns the report and whether safety held.
pub async fn run(opts: LoadOptions) -> Result<(Value, bool), String> {
    opts.validate()?;
    let base = opts.base_url.trim_end_matches('/').to_owned();
    let key = match &opts.admin_key {
        Some(k) => k.clone(),
        None => devstate::read().map_err(|e| e.to_string())?.map(|s| s.admin_key).ok_or(
            "no admin key: pass --admin-key, set VWR_ADMIN_KEY, or run in the directory of `vwr dev`",
        )?,
    };
    let auth = Auth::Bearer(key);
    let client = HttpClient::new(Duration::from_secs(20)).map_err(|e| e.to_string())?;
    let event = opts.event.clone().unwrap_or_else(|| format!("lt{}", vwr_core::time::now_millis()));

    let proxy = opts.aws_proxy.as_ref().map(|u| u.trim_end_matches('/').to_owned());
    let proxy_stats_before = match &proxy {
        Some(p) => Some(proxy_stats(&client, p).await?),
        None => None,
    };
    // Set-up: gate the event in tier 1 (now, or from its pre-queue) and register it for tier 2.
    let (start, unix_start, plan) = match opts.scenario {
        Scenario::Steady => {
            admin_call(
                &client,
                &base,
                &auth,
                Method::POST,
                &format!("/api/admin/vwr/activate/{event}"),
                Some(tier1_config(&opts)),
            )
            .await?;
            admin_call(
                &client,
                &base,
                &auth,
                Method::PUT,
                &format!("/api/queue/admin/threshold/{event}"),
                Some(json!({"threshold": opts.threshold})),
            )
            .await?;
            (Instant::now(), open::unix_now(), None)
        }
        Scenario::Prequeue => {
            let (start, unix_start) = (Instant::now(), open::unix_now());
            let plan = open::schedule(&client, &base, &auth, &event, &opts, start, unix_start).await?;
            (start, unix_start, Some(plan))
        }
    };
    // Between the visitors and vwr, where a WAF and API Gateway stand: a proxy that can answer
    // their 403s (only when a fault needs it).
    let front_faults = Arc::new(faults::ProxyFaults::default());
    let front_stats = Arc::new(faults::ProxyStats::default());
    let visitors_base = if opts.faults.iter().any(|f| f.kind == FaultKind::Check403) {
        let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let addr =
            faults::start_front_proxy(listen, &base, Arc::clone(&front_faults), Arc::clone(&front_stats))
                .await?;
        format!("http://{addr}")
    } else {
        base.clone()
    };
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        base: visitors_base,
        origin: base.clone(),
        event: event.clone(),
        counters: Counters::default(),
        latencies: Latencies::default(),
        timeline: Timeline::default(),
        start,
        unix_start,
        deadline: start + Duration::from_secs(opts.max_seconds),
        dwell: Duration::from_secs_f64(opts.dwell_seconds.max(0.0)),
        abandon_rate: opts.abandon_rate,
        threshold: AtomicU64::new(opts.threshold),
        in_flight: tokio::sync::Semaphore::new(opts.connections.max(1)),
        legacy_polling: opts.legacy_polling,
        no_show_rate: opts.no_show_rate,
        proofs: ctx::Proofs::new(opts.enqueue_key.as_deref(), &event)?,
        leaks: ctx::Leaks::default(),
    });

    // Faults and scripted actions on their timers.
    let fault_log: Arc<std::sync::Mutex<Vec<Value>>> = Arc::default();
    let mut timers = Vec::new();
    for f in opts.faults.clone() {
        let (pc, log, stop, startc) = (
            client.clone(),
            Arc::clone(&fault_log),
            opts.redis_stop_cmd.clone(),
            opts.redis_start_cmd.clone(),
        );
        let proxy = proxy.clone().unwrap_or_default();
        let (front_faults, front_stats) = (Arc::clone(&front_faults), Arc::clone(&front_stats));
        let (base, auth, event) = (base.clone(), auth.clone(), event.clone());
        timers.push(tokio::spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(start + f.start)).await;
            let at = start.elapsed().as_secs_f64();
            let toggle = |on: bool| {
                let (pc, proxy) = (pc.clone(), proxy.clone());
                async move {
                    let url =
                        format!("{proxy}/_vwr/fault/{}/{}", f.kind.name(), if on { "on" } else { "off" });
                    pc.send(Method::POST, &url, None, &Auth::None).await.is_ok_and(|r| r.status.is_success())
                }
            };
            let forbidden_before = front_stats.forbidden();
            let ok = match f.kind {
                FaultKind::Redis => faults::run_cmd(stop.as_deref().unwrap_or("false")).await,
                FaultKind::Check403 => {
                    front_faults.set(f.kind, true);
                    true
                }
                _ => toggle(true).await,
            };
            // A Redis fault must drop requests (Redis stopped: connections refused), not pause
            // them: watch what vwr's tier 2 answers meanwhile.
            let observed = if f.kind == FaultKind::Redis {
                let end = tokio::time::Instant::now() + f.duration;
                Some(faults::watch_outage(&base, &auth, &event, end).await)
            } else {
                tokio::time::sleep(f.duration).await;
                None
            };
            let recovered = match f.kind {
                FaultKind::Redis => faults::run_cmd(startc.as_deref().unwrap_or("false")).await,
                FaultKind::Check403 => {
                    front_faults.set(f.kind, false);
                    true
                }
                _ => toggle(false).await,
            };
            let mut entry = json!({
                "kind": f.kind.name(), "startedAt": at, "endedAt": start.elapsed().as_secs_f64(),
                "injected": ok, "recovered": recovered
            });
            if f.kind == FaultKind::Check403 {
                entry["responses"] = json!(front_stats.forbidden().saturating_sub(forbidden_before));
            }
            if let Some(o) = observed {
                entry["effect"] = json!(o.effect());
                entry["observed"] = serde_json::to_value(&o).unwrap_or(Value::Null);
            }
            log.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
        }));
    }
    for a in opts.script.clone() {
        let (client, base, auth, event, ctx) =
            (client.clone(), base.clone(), auth.clone(), event.clone(), Arc::clone(&ctx));
        timers.push(tokio::spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(start + a.at)).await;
            let res = match a.what {
                ActionKind::Advance(n) => {
                    admin_call(
                        &client,
                        &base,
                        &auth,
                        Method::POST,
                        &format!("/api/admin/vwr/advance/{event}"),
                        Some(json!({"by": n})),
                    )
                    .await
                }
                ActionKind::Threshold(n) => {
                    let r = admin_call(
                        &client,
                        &base,
                        &auth,
                        Method::PUT,
                        &format!("/api/queue/admin/threshold/{event}"),
                        Some(json!({"threshold": n})),
                    )
                    .await;
                    if r.is_ok() {
                        ctx.threshold.fetch_max(n, Ordering::Relaxed);
                    }
                    r
                }
            };
            if let Err(e) = res {
                tracing::warn!(event = "loadtest.action_failed", error = %e);
            }
        }));
    }

    // Sampler: the tier-2 view of active users against the threshold, 4 times a second.
    let over = Arc::new(AtomicU64::new(0));
    let max_active = Arc::new(AtomicU64::new(0));
    let last_active = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (client, base, auth, event, over, max_active, last_active) = (
            client.clone(),
            base.clone(),
            auth.clone(),
            event.clone(),
            Arc::clone(&over),
            Arc::clone(&max_active),
            Arc::clone(&last_active),
        );
        tokio::spawn(async move {
            loop {
                if let Ok(v) = admin_call(
                    &client,
                    &base,
                    &auth,
                    Method::GET,
                    &format!("/api/queue/admin/status/{event}"),
                    None,
                )
                .await
                    && let (Some(active), Some(th)) = (v["active"].as_u64(), v["threshold"].as_u64())
                {
                    max_active.fetch_max(active, Ordering::Relaxed);
                    last_active.store(active, Ordering::Relaxed);
                    if active > th {
                        over.fetch_add(1, Ordering::Relaxed);
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };

    // The run over time, once a second, for the charts.
    let samples = series::Samples::default();
    let series_task =
        series::spawn(Arc::clone(&ctx), auth.clone(), Arc::clone(&last_active), Arc::clone(&samples));

    // The open, watched from the public status document.
    let watcher = plan
        .as_ref()
        .map(|p| tokio::spawn(open::watch(client.clone(), base.clone(), event.clone(), p.clone())));

    // Visitors.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..opts.visitors {
        let salt = ctx::Rng::new(i ^ 0xABCD).next_f64();
        let arrival = match &plan {
            None => arrival_of(opts.arrival, i, opts.visitors, opts.arrival_seconds, salt),
            Some(p) => p.arrival(opts.arrival, i, opts.arrival_seconds, salt),
        };
        set.spawn(visit(Arc::clone(&ctx), i, arrival));
    }
    // Bots, from the start, their kinds in turn.
    let kinds = if opts.bot_kind.is_empty() {
        vec![
            bots::BotKind::MultiPlace,
            bots::BotKind::StolenTicket,
            bots::BotKind::SharedCookie,
            bots::BotKind::NoPow,
        ]
    } else {
        opts.bot_kind.clone()
    };
    let mut bot_set = tokio::task::JoinSet::new();
    for b in 0..opts.bots {
        let kind = kinds[(b as usize) % kinds.len()];
        bot_set.spawn(bots::run(Arc::clone(&ctx), kind, b, opts.bot_places));
    }

    // Progress bar on stderr.
    let progress = {
        let ctx = Arc::clone(&ctx);
        let n = opts.visitors;
        tokio::spawn(async move {
            let tty = std::io::stderr().is_terminal();
            let mut tick = 0u64;
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                tick += 1;
                let c = &ctx.counters;
                let finished = Counters::get(&c.done)
                    + Counters::get(&c.abandoned)
                    + Counters::get(&c.no_shows)
                    + Counters::get(&c.failed);
                let filled = (finished * 30 / n.max(1)) as usize;
                let line = format!(
                    "[{}{}] {:>3}% {:>5}s joined {} admitted {} active {} done {} abandoned {} no-shows {} 503s {} 5xx {}",
                    "#".repeat(filled),
                    ".".repeat(30 - filled.min(30)),
                    finished * 100 / n.max(1),
                    ctx.start.elapsed().as_secs(),
                    Counters::get(&c.joined),
                    Counters::get(&c.admitted_tier1),
                    Counters::get(&c.active_tier2),
                    Counters::get(&c.done),
                    Counters::get(&c.abandoned),
                    Counters::get(&c.no_shows),
                    Counters::get(&c.degraded),
                    Counters::get(&c.server_errors),
                );
                let mut err = std::io::stderr().lock();
                if tty {
                    let _ = write!(err, "\r{line}");
                } else if tick.is_multiple_of(5) {
                    let _ = writeln!(err, "{line}");
                }
            }
        })
    };

    let mut outcomes: Vec<Outcome> = Vec::with_capacity(opts.visitors as usize);
    let hard_stop = tokio::time::Instant::from_std(start + Duration::from_secs(opts.max_seconds + 70));
    // Visitors still running at the hard stop: on their way, so unfinished.
    let mut aborted = 0u64;
    loop {
        match tokio::time::timeout_at(hard_stop, set.join_next()).await {
            Ok(Some(Ok(o))) => outcomes.push(o),
            Ok(Some(Err(_))) => Counters::inc(&ctx.counters.failed),
            Ok(None) => break,
            Err(_) => {
                aborted = set.len() as u64;
                set.abort_all();
                break;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    // The visitors are done: so are the bots (each stops within a second).
    ctx.leaks.stop.store(true, Ordering::Relaxed);
    let mut bot_outcomes = Vec::new();
    let bots_stop = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(bots_stop, bot_set.join_next()).await {
            Ok(Some(Ok(o))) => bot_outcomes.push(o),
            Ok(Some(Err(_))) => {}
            Ok(None) => break,
            Err(_) => {
                bot_set.abort_all();
                break;
            }
        }
    }
    progress.abort();
    sampler.abort();
    series_task.abort();
    let watched: Option<OpenWatch> = match watcher {
        Some(w) if w.is_finished() => w.await.ok(),
        Some(w) => {
            w.abort();
            Some(OpenWatch::default())
        }
        None => None,
    };
    for t in timers {
        t.abort();
    }
    if std::io::stderr().is_terminal() {
        eprintln!();
    }

    let mut report = build_report(
        &opts,
        &event,
        &ctx,
        &outcomes,
        elapsed,
        over.load(Ordering::Relaxed),
        max_active.load(Ordering::Relaxed),
        &fault_log,
        aborted,
    );
    if opts.bots > 0 {
        let defences = json!({
            "requestSecret": true,
            "powDifficulty": opts.pow_difficulty.unwrap_or(0),
            "enqueueTokenRequired": opts.enqueue_key.is_some(),
        });
        report["bots"] = bots::report(&bot_outcomes, &ctx.leaks, defences);
    }
    report["estimate"] = cost::estimate(&outcomes, plan.as_ref().map_or(0.0, |p| p.open_offset));
    {
        let points = samples.lock().unwrap_or_else(|p| p.into_inner());
        let target = opts.target_per_minute.filter(|_| opts.mode == Mode::TargetArrivals);
        report["outflow"] = outflow::report(&points, &outcomes, target);
        report["series"] = series::to_json(&points);
    }
    if let Some(p) = &plan {
        let o = open::report(p, &watched.unwrap_or_default(), &ctx, &outcomes, elapsed);
        report["safety"]["prequeueViolations"] = o["violations"].clone();
        report["open"] = o;
    }
    if let (Some(p), Some(before)) = (&proxy, proxy_stats_before)
        && let Ok(after) = proxy_stats(&client, p).await
    {
        let mut calls = serde_json::Map::new();
        if let Some(a) = after["calls"].as_object() {
            for (k, v) in a {
                let n = v.as_u64().unwrap_or(0).saturating_sub(before["calls"][k].as_u64().unwrap_or(0));
                calls.insert(k.clone(), json!(n));
            }
        }
        report["awsCalls"] = Value::Object(calls);
        report["awsThrottledWrites"] = json!(
            after["throttledWrites"]
                .as_u64()
                .unwrap_or(0)
                .saturating_sub(before["throttledWrites"].as_u64().unwrap_or(0))
        );
    }
    let safety: Safety = serde_json::from_value(report["safety"].clone()).map_err(|e| e.to_string())?;
    print_report(&report);
    if let Some(path) = &opts.json {
        std::fs::write(path, serde_json::to_string_pretty(&report).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &opts.html {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, html::render(&report)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok((report, safety.clean()))
}

/// How the visitors' runs ended, as the report counts them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs the system ended without getting the visitor through (`safety.lost`).
    pub lost: u64,
    /// Runs still going when the run ended (`flow.unfinished`): `aborted` visitors still
    /// running at the hard stop included.
    pub unfinished: u64,
    /// Why the lost runs ended.
    pub lost_by: std::collections::BTreeMap<&'static str, u64>,
}

impl Tally {
    pub fn of(outcomes: &[Outcome], aborted: u64) -> Self {
        let mut t = Tally { unfinished: aborted, ..Tally::default() };
        for o in outcomes {
            match o.end {
                visitor::End::Unfinished => t.unfinished += 1,
                visitor::End::Lost(why) => {
                    t.lost += 1;
                    *t.lost_by.entry(why).or_default() += 1;
                }
                _ => {}
            }
        }
        t
    }
}

#[allow(clippy::too_many_arguments)]
fn build_report(
    opts: &LoadOptions,
    event: &str,
    ctx: &Ctx,
    outcomes: &[Outcome],
    elapsed: f64,
    over_samples: u64,
    max_active: u64,
    fault_log: &std::sync::Mutex<Vec<Value>>,
    aborted: u64,
) -> Value {
    let c = &ctx.counters;
    let lat = ctx.latencies.summary();
    let joined: Vec<&Outcome> = outcomes.iter().filter(|o| o.position.is_some()).collect();
    // Joins per second while joins were happening: first to last successful assign.
    let joins: Vec<f64> = joined.iter().map(|o| o.joined_s).collect();
    let join_window =
        joins.iter().copied().fold(f64::MIN, f64::max) - joins.iter().copied().fold(f64::MAX, f64::min);
    let Tally { lost, unfinished, lost_by } = Tally::of(outcomes, aborted);
    let mut t1: Vec<f64> =
        joined.iter().filter_map(|o| o.tier1_admitted_s.map(|a| a - o.arrived_s)).collect();
    let mut t2: Vec<f64> =
        joined.iter().filter_map(|o| o.tier2_admitted_s.map(|a| a - o.arrived_s)).collect();
    t1.sort_by(f64::total_cmp);
    t2.sort_by(f64::total_cmp);
    let (bin, counts) = histogram(&t1, 24);
    let fairness = |pick: fn(&Outcome) -> Option<f64>| {
        let pairs: Vec<(f64, f64)> =
            joined.iter().filter_map(|o| pick(o).map(|a| (o.position.unwrap_or(0) as f64, a))).collect();
        let inv: Vec<(f64, f64, u64)> = joined
            .iter()
            .filter_map(|o| pick(o).map(|a| (a, o.arrived_s, o.position.unwrap_or(0))))
            .collect();
        let (pos, secs) = largest_inversion(inv);
        json!({
            "kendallTau": kendall_tau(&pairs).map(|t| (t * 10_000.0).round() / 10_000.0),
            "largestInversionPositions": pos,
            "largestInversionSeconds": (secs * 1000.0).round() / 1000.0,
        })
    };
    let checks = ctx.latencies.count(CHECK) + ctx.latencies.count(RECHECK);
    let safety = Safety {
        lost,
        double_admitted: Counters::get(&c.double_admitted),
        over_threshold_moments: over_samples + Counters::get(&c.over_threshold_responses),
        server_errors: Counters::get(&c.server_errors),
        places_lost_to_faults: Counters::get(&c.places_lost),
        prequeue_violations: None,
    };
    let latency: serde_json::Map<String, Value> = lat
        .iter()
        .map(|(k, p): (&&str, &Percentiles)| {
            ((*k).to_owned(), serde_json::to_value(p).unwrap_or(Value::Null))
        })
        .collect();
    json!({
        "event": event,
        "baseUrl": opts.base_url,
        "visitors": opts.visitors,
        "scenario": format!("{:?}", opts.scenario).to_lowercase(),
        "arrival": format!("{:?}", opts.arrival).to_lowercase(),
        "config": {"batchSize": opts.batch_size, "intervalSeconds": opts.interval_seconds, "shards": opts.shards,
                   "threshold": opts.threshold, "dwellSeconds": opts.dwell_seconds, "abandonRate": opts.abandon_rate,
                   "mode": match opts.mode { Mode::Fixed => "fixed", Mode::TargetArrivals => "targetArrivals" },
                   "targetPerMinute": opts.target_per_minute, "maxBatchSize": opts.max_batch_size,
                   "noShowRate": opts.no_show_rate, "arrivalSeconds": opts.arrival_seconds},
        "durationSeconds": (elapsed * 100.0).round() / 100.0,
        "flow": {
            "joined": Counters::get(&c.joined), "admittedTier1": Counters::get(&c.admitted_tier1),
            "passedEdge": Counters::get(&c.passed_edge), "activeTier2": Counters::get(&c.active_tier2),
            "done": Counters::get(&c.done), "abandoned": Counters::get(&c.abandoned),
            "noShows": Counters::get(&c.no_shows), "unfinished": unfinished,
        },
        "throughput": {
            "joinsPerSecond": if join_window > 0.0 { (joined.len() as f64 / join_window).round() } else { joined.len() as f64 },
            "checksPerSecond": (checks as f64 / elapsed).round(),
            "requestsPerSecond": (ctx.latencies.total() as f64 / elapsed).round(),
        },
        "latency": latency,
        "timeToAdmission": {"tier1P50Seconds": pct(&t1, 0.5), "tier1P99Seconds": pct(&t1, 0.99),
                            "entryP50Seconds": pct(&t2, 0.5), "entryP99Seconds": pct(&t2, 0.99),
                            "tier1Histogram": {"binSeconds": bin, "counts": counts}},
        "fairness": {"tier1": fairness(|o| o.tier1_admitted_s), "tier2": fairness(|o| o.tier2_admitted_s)},
        "maxActiveSeen": max_active,
        "degraded": {"responses503": Counters::get(&c.degraded), "networkErrors": Counters::get(&c.network_errors),
                     "unexpected4xx": Counters::get(&c.unexpected_4xx), "edgeRefused": Counters::get(&c.edge_refused),
                     "seatsRefused": Counters::get(&c.seats_refused), "rejoinedTier2": Counters::get(&c.rejoined_tier2),
                     "transientRefusals": Counters::get(&c.transient_refusals)},
        "placesLost": {"visitors": Counters::get(&c.places_lost), "byCause": Counters::counts(&c.place_losses),
                       "verdicts": Counters::counts(&c.verdicts)},
        "lostBy": lost_by,
        "faults": fault_log.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        "costs": cost::costs(ctx, opts.visitors, elapsed),
        "safety": safety,
    })
}

#[allow(clippy::print_stdout)]
fn print_report(r: &Value) {
    let f = |v: &Value| match v {
        Value::Null => "–".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let arrival = match r["open"]["beforeOpenVisitors"].as_u64() {
        Some(n) => format!("pre-queue: {n} before the open, then {}", f(&r["arrival"])),
        None => f(&r["arrival"]),
    };
    println!(
        "\nvwr loadtest — {} visitors ({arrival}), event {}, {} s",
        f(&r["visitors"]),
        f(&r["event"]),
        f(&r["durationSeconds"])
    );
    println!(
        "\n| flow | joined | admitted (tier 1) | passed edge | active (tier 2) | done | abandoned | no-shows | unfinished |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let fl = &r["flow"];
    println!(
        "| visitors | {} | {} | {} | {} | {} | {} | {} | {} |",
        f(&fl["joined"]),
        f(&fl["admittedTier1"]),
        f(&fl["passedEdge"]),
        f(&fl["activeTier2"]),
        f(&fl["done"]),
        f(&fl["abandoned"]),
        f(&fl["noShows"]),
        f(&fl["unfinished"])
    );
    let t = &r["throughput"];
    println!(
        "\nsustained: {} joins/s, {} checks/s, {} requests/s",
        f(&t["joinsPerSecond"]),
        f(&t["checksPerSecond"]),
        f(&t["requestsPerSecond"])
    );
    println!("\n| endpoint | requests | p50 ms | p95 ms | p99 ms | max ms |");
    println!("|---|---|---|---|---|---|");
    if let Some(m) = r["latency"].as_object() {
        for (k, p) in m {
            println!(
                "| {k} | {} | {} | {} | {} | {} |",
                f(&p["requests"]),
                f(&p["p50Ms"]),
                f(&p["p95Ms"]),
                f(&p["p99Ms"]),
                f(&p["maxMs"])
            );
        }
    }
    let a = &r["timeToAdmission"];
    println!(
        "\ntime from arrival to tier-1 admission: p50 {} s, p99 {} s; to entry token: p50 {} s, p99 {} s",
        f(&a["tier1P50Seconds"]),
        f(&a["tier1P99Seconds"]),
        f(&a["entryP50Seconds"]),
        f(&a["entryP99Seconds"])
    );
    for tier in ["tier1", "tier2"] {
        let x = &r["fairness"][tier];
        println!(
            "fairness ({tier}): Kendall tau {}, largest inversion {} positions / {} s",
            f(&x["kendallTau"]),
            f(&x["largestInversionPositions"]),
            f(&x["largestInversionSeconds"])
        );
    }
    let c = &r["costs"];
    println!(
        "\ncosts ({} polling): {} tier-1 Lambda calls per visitor ({} checks), {} tier-2; {} status fetches per visitor ({} of them from the CDN), {} origin status fetches/s; not counted: {} re-checks of admitted tickets",
        f(&c["polling"]),
        f(&c["tier1LambdaCallsPerVisitor"]),
        f(&c["checksPerVisitor"]),
        f(&c["tier2LambdaCallsPerVisitor"]),
        f(&c["statusFetchesPerVisitor"]),
        f(&c["statusCacheHitShare"]),
        f(&c["originStatusFetchesPerSecond"]),
        f(&c["notCounted"]["tier1Rechecks"])
    );
    let e = &r["estimate"];
    println!(
        "wait estimate at the join vs the real wait: p50 {} %, p90 {} % over {} visitors (mean signed {} %); joined after the first minute: p50 {} %, p90 {} % over {}; {} waits under {} s left out",
        f(&e["p50ErrorPct"]),
        f(&e["p90ErrorPct"]),
        f(&e["samples"]),
        f(&e["meanSignedErrorPct"]),
        f(&e["afterFirstMinute"]["p50ErrorPct"]),
        f(&e["afterFirstMinute"]["p90ErrorPct"]),
        f(&e["afterFirstMinute"]["samples"]),
        f(&e["excludedShortWaits"]),
        f(&e["minRealWaitSeconds"])
    );
    let o = &r["outflow"];
    if o["redeemedPerMinute"].is_null() {
        println!(
            "outflow: no steady part of {} s or more (it starts {} s after the first served position and ends when the line is empty); whole run: served {}, redeemed {}, no-show share {}",
            outflow::MIN_STEADY_SECONDS,
            outflow::WARM_UP_SECONDS,
            f(&o["wholeRun"]["served"]),
            f(&o["wholeRun"]["redeemed"]),
            f(&o["wholeRun"]["noShowShare"])
        );
    } else {
        println!(
            "outflow over the steady part ({}–{} s): redeemed {} /min (target {}, {} %; worst minute {} %), served {} /min, no-show share {}",
            f(&o["steady"]["fromSeconds"]),
            f(&o["steady"]["toSeconds"]),
            f(&o["redeemedPerMinute"]),
            f(&o["targetPerMinute"]),
            f(&o["deviationPct"]),
            f(&o["worstMinuteDeviationPct"]),
            f(&o["servedPerMinute"]),
            f(&o["noShowShare"])
        );
    }
    if let Some(kinds) = r["bots"]["kinds"].as_object() {
        println!(
            "\n| bot kind | bots | requests | places obtained | extra places | admissions obtained | edge passes | entry tokens | extra tier-2 slots | refused |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for (name, k) in kinds {
            println!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f(&k["bots"]),
                f(&k["attempts"]),
                f(&k["placesObtained"]),
                f(&k["extraPlaces"]),
                f(&k["admissionsObtained"]),
                f(&k["edgePasses"]),
                f(&k["entryTokens"]),
                f(&k["extraSlots"]),
                k["refused"]
            );
        }
    }
    let d = &r["degraded"];
    println!(
        "degradation: {} × 503 with Retry-After, {} network errors, {} unexpected 4xx, {} refusals that were no verdict (place kept), {} tier-2 re-check-ins; max active seen {}",
        f(&d["responses503"]),
        f(&d["networkErrors"]),
        f(&d["unexpected4xx"]),
        f(&d["transientRefusals"]),
        f(&d["rejoinedTier2"]),
        f(&r["maxActiveSeen"])
    );
    if let Some(faults) = r["faults"].as_array() {
        for x in faults {
            let mut more = String::new();
            if let Some(n) = x["responses"].as_u64() {
                more = format!(", {n} × 403 answered in place of vwr");
            }
            if let Some(e) = x["effect"].as_str() {
                let o = &x["observed"];
                more = format!(
                    ", {e}: {} probes — {} refused fast, {} slow, {} answered (p50 {} ms, max {} ms)",
                    f(&o["probes"]),
                    f(&o["refused"]),
                    f(&o["slow"]),
                    f(&o["answered"]),
                    f(&o["p50Ms"]),
                    f(&o["maxMs"])
                );
            }
            println!(
                "fault {}: {}–{} s (injected {}, recovered {}{more})",
                f(&x["kind"]),
                f(&x["startedAt"]),
                f(&x["endedAt"]),
                f(&x["injected"]),
                f(&x["recovered"])
            );
        }
    }
    if let Some(calls) = r["awsCalls"].as_object() {
        let list: Vec<String> =
            calls.iter().map(|(k, v)| format!("{} {}", k.rsplit('.').next().unwrap_or(k), v)).collect();
        println!(
            "AWS calls through the proxy: {} (throttled writes: {})",
            list.join(", "),
            f(&r["awsThrottledWrites"])
        );
    }
    if r["open"].is_object() {
        open::print(&r["open"]);
    }
    let s = &r["safety"];
    let (head, rule, extra) = match s.get("prequeueViolations") {
        Some(v) => (" prequeueViolations |", "---|", format!(" {} |", f(v))),
        None => ("", "", String::new()),
    };
    println!(
        "\n| safety | lost | placesLostToFaults | doubleAdmitted | overThresholdMoments | serverErrors |{head}"
    );
    println!("|---|---|---|---|---|---|{rule}");
    println!(
        "| counters | {} | {} | {} | {} | {} |{extra}",
        f(&s["lost"]),
        f(&s["placesLostToFaults"]),
        f(&s["doubleAdmitted"]),
        f(&s["overThresholdMoments"]),
        f(&s["serverErrors"])
    );
    let by = |v: &Value| {
        v.as_object()
            .filter(|m| !m.is_empty())
            .map(|m| m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "))
    };
    if let Some(causes) = by(&r["placesLost"]["byCause"]) {
        let verdicts = by(&r["placesLost"]["verdicts"]).unwrap_or_else(|| "none".into());
        println!("places moved backwards: {causes} (tier-1 verdicts: {verdicts})");
    }
    if let Some(why) = by(&r["lostBy"]) {
        println!("lost: {why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_runs_the_system_ended_are_lost() {
        use visitor::End;
        let o = |end: End| Outcome { end, position: Some(1), ..Outcome::default() };
        let outcomes = [
            o(End::Done),
            o(End::Abandoned),
            o(End::NoShow),
            o(End::Refused),
            // Still in a line when the run ended: unfinished.
            o(End::Unfinished),
            o(End::Unfinished),
            o(End::Lost("edge_refused")),
            o(End::Lost("closed")),
            o(End::Lost("closed")),
        ];
        let t = Tally::of(&outcomes, 3);
        assert_eq!((t.lost, t.unfinished), (3, 5), "2 in line at the end, 3 still running at the hard stop");
        assert_eq!(t.lost_by.into_iter().collect::<Vec<_>>(), [("closed", 2), ("edge_refused", 1)]);
        assert_eq!(Tally::of(&[], 0), Tally::default());
    }

    #[test]
    fn a_place_lost_makes_the_run_unsafe() {
        let safe = Safety {
            lost: 0,
            double_admitted: 0,
            over_threshold_moments: 0,
            server_errors: 0,
            places_lost_to_faults: 0,
            prequeue_violations: None,
        };
        assert!(safe.clean());
        assert!(!Safety { places_lost_to_faults: 1, ..safe.clone() }.clean());
        let json = serde_json::to_value(&safe).unwrap();
        assert_eq!(json["placesLostToFaults"], 0);
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["doubleAdmitted", "lost", "overThresholdMoments", "placesLostToFaults", "serverErrors"],
            "the report's key names"
        );
    }
}
