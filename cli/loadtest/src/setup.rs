//! The first phase of a run: the harness's admin access, the event gated in tier 1 (at once, or
//! scheduled with its pre-queue) and registered for tier 2, the front proxy when a fault needs
//! it, and the context the visitors and bots share.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use http::Method;
use serde_json::json;

use super::admin::{admin_call, proxy_stats};
use super::ctx::{Ctx, Leaks, Proofs};
use super::faults::{self, FaultKind, ProxyFaults, ProxyReport, ProxyStats};
use super::open::{self, OpenPlan};
use super::options::{LoadOptions, Scenario, tier1_config};
use super::stats::{Counters, Latencies, Timeline};
use crate::client::{Auth, HttpClient};
use crate::error::LoadtestError;

/// What the harness reaches vwr with.
pub(crate) struct Harness {
    pub client: HttpClient,
    /// vwr itself (the harness's admin calls go here, never through the front proxy).
    pub base: String,
    pub auth: Auth,
    pub event: String,
    /// `--aws-proxy`, and its counters before the run.
    proxy: Option<(String, ProxyReport)>,
}

/// The event, gated: when the run started, and the sale's plan of a `prequeue` run.
pub(crate) struct Gate {
    pub start: Instant,
    /// Unix time (seconds) at `start`.
    pub unix_start: f64,
    pub plan: Option<OpenPlan>,
}

/// The front proxy's switches and counters (a WAF's and API Gateway's place).
#[derive(Default)]
pub(crate) struct Front {
    pub faults: Arc<ProxyFaults>,
    pub stats: Arc<ProxyStats>,
}

impl Harness {
    /// The admin key (`--admin-key`; `vwr loadtest` fills it from the stack it addresses,
    /// docs/cli.md#addressing-a-stack), a client, the event id, and the
    /// AWS proxy's counters before the run.
    pub async fn new(opts: &LoadOptions) -> Result<Self, LoadtestError> {
        let base = opts.base_url().trim_end_matches('/').to_owned();
        let key = opts.admin_key.clone().ok_or(LoadtestError::NoAdminKey)?;
        let client = HttpClient::new(Duration::from_secs(20))?;
        let event = opts.event.clone().unwrap_or_else(|| format!("lt{}", vwr_core::time::now_millis()));
        let proxy = match &opts.aws_proxy {
            Some(u) => {
                let url = u.trim_end_matches('/').to_owned();
                let before = proxy_stats(&client, &url).await?;
                Some((url, before))
            }
            None => None,
        };
        Ok(Self { client, base, auth: Auth::Bearer(key), event, proxy })
    }

    /// The URL of `--aws-proxy`, if any.
    pub fn proxy_url(&self) -> Option<&str> {
        self.proxy.as_ref().map(|(url, _)| url.as_str())
    }

    /// Gates the event in tier 1 (now, or from its pre-queue) and registers it for tier 2.
    pub async fn gate(&self, opts: &LoadOptions) -> Result<Gate, LoadtestError> {
        let (client, base, auth, event) = (&self.client, self.base.as_str(), &self.auth, &self.event);
        match opts.scenario {
            Scenario::Steady => {
                admin_call(
                    client,
                    base,
                    auth,
                    Method::POST,
                    &format!("/api/admin/vwr/activate/{event}"),
                    Some(tier1_config(opts)),
                )
                .await?;
                admin_call(
                    client,
                    base,
                    auth,
                    Method::PUT,
                    &format!("/api/queue/admin/threshold/{event}"),
                    Some(json!({"threshold": opts.threshold})),
                )
                .await?;
                Ok(Gate { start: Instant::now(), unix_start: open::unix_now(), plan: None })
            }
            Scenario::Prequeue => {
                let (start, unix_start) = (Instant::now(), open::unix_now());
                let plan = open::schedule(client, base, auth, event, opts, start, unix_start).await?;
                Ok(Gate { start, unix_start, plan: Some(plan) })
            }
        }
    }

    /// The context the visitors and bots share; between them and vwr, where a WAF and API
    /// Gateway stand, a proxy that can answer their 403s (only when a fault needs it).
    pub async fn context(&self, opts: &LoadOptions, gate: &Gate) -> Result<(Arc<Ctx>, Front), LoadtestError> {
        let front = Front::default();
        let visitors_base = if opts.faults.iter().any(|f| f.kind == FaultKind::Check403) {
            let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let addr = faults::start_front_proxy(
                listen,
                &self.base,
                Arc::clone(&front.faults),
                Arc::clone(&front.stats),
            )
            .await?;
            format!("http://{addr}")
        } else {
            self.base.clone()
        };
        let start = gate.start;
        let ctx = Ctx {
            client: self.client.clone(),
            base: visitors_base,
            origin: self.base.clone(),
            event: self.event.clone(),
            counters: Counters::default(),
            latencies: Latencies::default(),
            timeline: Timeline::default(),
            start,
            unix_start: gate.unix_start,
            deadline: start + Duration::from_secs(opts.max_seconds),
            dwell: Duration::from_secs_f64(opts.dwell_seconds.max(0.0)),
            abandon_rate: opts.abandon_rate,
            threshold: AtomicU64::new(opts.threshold),
            in_flight: tokio::sync::Semaphore::new(opts.connections.max(1)),
            legacy_polling: opts.legacy_polling,
            legacy_tier2: opts.legacy_tier2,
            no_show_rate: opts.no_show_rate,
            proofs: Proofs::new(opts.enqueue_key.as_deref(), &self.event)?,
            leaks: Leaks::default(),
        };
        Ok((Arc::new(ctx), front))
    }

    /// `--aws-proxy`: the AWS calls through it since [`Harness::new`], by operation, and the
    /// writes it throttled (`None` without a proxy, or when it no longer answers).
    pub async fn aws_calls(&self) -> Option<(BTreeMap<String, u64>, u64)> {
        let (url, before) = self.proxy.as_ref()?;
        let after = proxy_stats(&self.client, url).await.ok()?;
        let calls = after
            .calls
            .iter()
            .map(|(k, n)| (k.clone(), n.saturating_sub(before.calls.get(k).copied().unwrap_or(0))))
            .collect();
        Some((calls, after.throttled_writes.saturating_sub(before.throttled_writes)))
    }
}
