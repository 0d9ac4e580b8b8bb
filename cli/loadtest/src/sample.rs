//! What the harness watches while the visitors run (its reads are not visitor load): tier 2's
//! active users against the threshold 4 times a second, the run over time once a second (the
//! `series` and `outflow` sections), and a `prequeue` run's open from the status document.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::Method;
use tokio::task::JoinHandle;

use super::admin::admin_call;
use super::ctx::Ctx;
use super::open::{self, OpenPlan, OpenWatch};
use super::series::{self, Point, Samples};
use super::setup::Harness;

/// The running samplers.
pub(crate) struct Samplers {
    threshold: JoinHandle<()>,
    series: JoinHandle<()>,
    open: Option<JoinHandle<OpenWatch>>,
    over: Arc<AtomicU64>,
    max_active: Arc<AtomicU64>,
    samples: Samples,
}

/// What the samplers saw.
pub(crate) struct Sampled {
    /// Samples with more tier-2 active users than the threshold.
    pub over_threshold: u64,
    /// The most tier-2 active users seen.
    pub max_active: u64,
    /// The run, once a second.
    pub points: Vec<Point>,
    /// `prequeue`: the open (empty when it was not seen before the end).
    pub open: Option<OpenWatch>,
}

/// Starts the samplers.
pub(crate) fn spawn(h: &Harness, ctx: &Arc<Ctx>, plan: Option<&OpenPlan>) -> Samplers {
    let over = Arc::new(AtomicU64::new(0));
    let max_active = Arc::new(AtomicU64::new(0));
    let last_active = Arc::new(AtomicU64::new(0));
    let threshold = {
        let (client, base, auth, event) = (h.client.clone(), h.base.clone(), h.auth.clone(), h.event.clone());
        let (over, max_active, last_active) =
            (Arc::clone(&over), Arc::clone(&max_active), Arc::clone(&last_active));
        tokio::spawn(async move {
            let path = format!("/api/queue/admin/status/{event}");
            loop {
                if let Ok(v) = admin_call(&client, &base, &auth, Method::GET, &path, None).await
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
    let samples = Samples::default();
    let series = series::spawn(Arc::clone(ctx), h.auth.clone(), last_active, Arc::clone(&samples));
    let open =
        plan.map(|p| tokio::spawn(open::watch(h.client.clone(), h.base.clone(), h.event.clone(), p.clone())));
    Samplers { threshold, series, open, over, max_active, samples }
}

impl Samplers {
    /// Stops the samplers; what they saw.
    pub async fn stop(self) -> Sampled {
        self.threshold.abort();
        self.series.abort();
        let open = match self.open {
            Some(w) if w.is_finished() => w.await.ok(),
            Some(w) => {
                w.abort();
                Some(OpenWatch::default())
            }
            None => None,
        };
        Sampled {
            over_threshold: self.over.load(Ordering::Relaxed),
            max_active: self.max_active.load(Ordering::Relaxed),
            points: self.samples.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            open,
        }
    }
}
