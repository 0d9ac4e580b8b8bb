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
pub mod report;
pub mod series;
pub mod stats;
pub mod tally;
pub mod text;
pub mod visitor;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};

use self::ctx::Ctx;
use self::faults::{FaultKind, FaultRecord};
use self::open::OpenWatch;
pub use self::options::{Action, ActionKind, Curve, LoadOptions, Mode, Scenario};
use self::options::{arrival_of, tier1_config};
pub use self::report::{Report, Safety};
use self::stats::{Counters, Latencies, Timeline};
use self::visitor::{Outcome, visit};
use crate::client::{Auth, HttpClient};
use crate::devstate;

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

async fn proxy_stats(client: &HttpClient, proxy: &str) -> Result<faults::ProxyReport, String> {
    let r = client
        .send(Method::GET, &format!("{proxy}/_vwr/stats"), None, &Auth::None)
        .await
        .map_err(|e| e.to_string())?;
    if !r.status.is_success() {
        return Err(format!("{proxy} is not a vwr aws-proxy ({})", r.status));
    }
    Ok(serde_json::from_value(r.json()).unwrap_or_default())
}

/// Runs the load test, prints the report and writes its files; answers the report (whether
/// safety held: [`Safety::clean`]).
pub async fn run(opts: LoadOptions) -> Result<Report, String> {
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
    let fault_log: Arc<std::sync::Mutex<Vec<FaultRecord>>> = Arc::default();
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
            let entry = FaultRecord {
                kind: f.kind.name().to_owned(),
                started_at: at,
                ended_at: start.elapsed().as_secs_f64(),
                injected: ok,
                recovered,
                responses: (f.kind == FaultKind::Check403)
                    .then(|| front_stats.forbidden().saturating_sub(forbidden_before)),
                effect: observed.as_ref().map(|o| o.effect().to_owned()),
                observed,
            };
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

    let aws = match (&proxy, proxy_stats_before) {
        (Some(p), Some(before)) => proxy_stats(&client, p).await.ok().map(|after| {
            let calls = after
                .calls
                .iter()
                .map(|(k, n)| (k.clone(), n.saturating_sub(before.calls.get(k).copied().unwrap_or(0))))
                .collect();
            (calls, after.throttled_writes.saturating_sub(before.throttled_writes))
        }),
        _ => None,
    };
    let points = samples.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let ran = tally::Ran {
        event: event.clone(),
        outcomes,
        aborted,
        bots: bot_outcomes,
        elapsed,
        over_samples: over.load(Ordering::Relaxed),
        max_active: max_active.load(Ordering::Relaxed),
        faults: fault_log.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        points,
        open: plan.map(|p| (p, watched.unwrap_or_default())),
        aws,
    };
    let report = tally::report(&opts, &ctx, ran);
    let json = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    print_text(&text::render(&report));
    if let Some(path) = &opts.json {
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &opts.html {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, html::render(&report)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(report)
}

#[allow(clippy::print_stdout)]
fn print_text(text: &str) {
    print!("{text}");
}
