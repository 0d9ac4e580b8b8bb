//! Faults and scripted operator actions, each on its timer from the start of the run: a fault
//! is switched on, held, switched off and recorded for the report; an action (`advance`,
//! `threshold`) is sent to vwr's admin API.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use http::Method;
use serde_json::json;
use tokio::task::JoinHandle;

use super::admin::admin_call;
use super::ctx::Ctx;
use super::faults::{self, Fault, FaultKind, FaultRecord};
use super::options::{Action, ActionKind, LoadOptions};
use super::setup::{Front, Harness};
use crate::client::{Auth, HttpClient};

/// The timers of a run, and the faults they recorded.
pub(crate) struct Timers {
    handles: Vec<JoinHandle<()>>,
    log: Arc<Mutex<Vec<FaultRecord>>>,
}

impl Timers {
    /// Stops the timers still waiting or running; the faults recorded so far.
    pub fn stop(self) -> Vec<FaultRecord> {
        for t in self.handles {
            t.abort();
        }
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Starts a timer for every `--fault` and every `--script` action.
pub(crate) fn spawn(opts: &LoadOptions, h: &Harness, ctx: &Arc<Ctx>, front: &Front) -> Timers {
    let log: Arc<Mutex<Vec<FaultRecord>>> = Arc::default();
    let mut handles = Vec::new();
    for f in opts.faults.clone() {
        let switch = Switch {
            client: h.client.clone(),
            proxy: h.proxy_url().unwrap_or_default().to_owned(),
            stop_cmd: opts.redis_stop_cmd.clone(),
            start_cmd: opts.redis_start_cmd.clone(),
            front_faults: Arc::clone(&front.faults),
            front_stats: Arc::clone(&front.stats),
        };
        let (base, auth, event, log) = (h.base.clone(), h.auth.clone(), h.event.clone(), Arc::clone(&log));
        let start = ctx.start;
        handles.push(tokio::spawn(async move {
            let entry = fault(f, start, &switch, &base, &auth, &event).await;
            log.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
        }));
    }
    for a in opts.script.clone() {
        let (client, base, auth, event, ctx) =
            (h.client.clone(), h.base.clone(), h.auth.clone(), h.event.clone(), Arc::clone(ctx));
        handles.push(tokio::spawn(async move { action(a, &client, &base, &auth, &event, &ctx).await }));
    }
    Timers { handles, log }
}

/// What switches faults on and off.
struct Switch {
    client: HttpClient,
    /// The AWS fault proxy (`dynamodb`, `sqs`).
    proxy: String,
    /// `--redis-stop-cmd`, `--redis-start-cmd`.
    stop_cmd: Option<String>,
    start_cmd: Option<String>,
    /// The front proxy (`check403`).
    front_faults: Arc<faults::ProxyFaults>,
    front_stats: Arc<faults::ProxyStats>,
}

impl Switch {
    /// Turns fault `kind` on or off; whether that took.
    async fn set(&self, kind: FaultKind, on: bool) -> bool {
        match kind {
            FaultKind::Redis => {
                let cmd = if on { &self.stop_cmd } else { &self.start_cmd };
                faults::run_cmd(cmd.as_deref().unwrap_or("false")).await
            }
            FaultKind::Check403 => {
                self.front_faults.set(kind, on);
                true
            }
            _ => {
                let url =
                    format!("{}/_vwr/fault/{}/{}", self.proxy, kind.name(), if on { "on" } else { "off" });
                self.client
                    .send(Method::POST, &url, None, &Auth::None)
                    .await
                    .is_ok_and(|r| r.status.is_success())
            }
        }
    }
}

/// Fault `f` at its time: on, held for its duration, off; what happened.
async fn fault(
    f: Fault,
    start: Instant,
    switch: &Switch,
    base: &str,
    auth: &Auth,
    event: &str,
) -> FaultRecord {
    tokio::time::sleep_until(tokio::time::Instant::from_std(start + f.start)).await;
    let at = start.elapsed().as_secs_f64();
    let forbidden_before = switch.front_stats.forbidden();
    let injected = switch.set(f.kind, true).await;
    // A Redis fault must drop requests (Redis stopped: connections refused), not pause
    // them: watch what vwr's tier 2 answers meanwhile.
    let observed = if f.kind == FaultKind::Redis {
        let end = tokio::time::Instant::now() + f.duration;
        Some(faults::watch_outage(base, auth, event, end).await)
    } else {
        tokio::time::sleep(f.duration).await;
        None
    };
    let recovered = switch.set(f.kind, false).await;
    FaultRecord {
        kind: f.kind.name().to_owned(),
        started_at: at,
        ended_at: start.elapsed().as_secs_f64(),
        injected,
        recovered,
        responses: (f.kind == FaultKind::Check403)
            .then(|| switch.front_stats.forbidden().saturating_sub(forbidden_before)),
        effect: observed.as_ref().map(|o| o.effect().to_owned()),
        observed,
    }
}

/// Operator action `a` at its time.
async fn action(a: Action, client: &HttpClient, base: &str, auth: &Auth, event: &str, ctx: &Ctx) {
    tokio::time::sleep_until(tokio::time::Instant::from_std(ctx.start + a.at)).await;
    let res = match a.what {
        ActionKind::Advance(n) => {
            admin_call(
                client,
                base,
                auth,
                Method::POST,
                &format!("/api/admin/vwr/advance/{event}"),
                Some(json!({"by": n})),
            )
            .await
        }
        ActionKind::Threshold(n) => {
            let r = admin_call(
                client,
                base,
                auth,
                Method::PUT,
                &format!("/api/queue/admin/threshold/{event}"),
                Some(json!({"threshold": n})),
            )
            .await;
            if r.is_ok() {
                ctx.threshold.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
            }
            r
        }
    };
    if let Err(e) = res {
        tracing::warn!(event = "loadtest.action_failed", error = %e);
    }
}
