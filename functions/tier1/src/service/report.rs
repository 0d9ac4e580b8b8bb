//! The report after the sale (docs/operate.md#the-report-after-the-sale): what the service
//! counts as it works, its minute-by-minute flush to the store, and the report the admin API
//! answers. Counting never fails a visitor's call: a failed flush keeps the counts for the
//! next one.

use vwr_core::EventId;

use super::{Tier1Error, Tier1Service};
use crate::model::OutflowMode;
use crate::report::{Batch, KEEP_SECS, MinuteCounts, SaleReport};

impl Tier1Service {
    /// Counts something of `event` now.
    pub(super) fn count(&self, event: &EventId, f: impl FnOnce(&mut MinuteCounts)) {
        self.tally.record(event, self.now(), f);
    }

    /// Counts a refused call of `assign` or `check` by the API's error `code`, for events that
    /// exist only: a made-up event id (a bot's, or a typo's) has no report, and counting it
    /// would let anyone make stored minutes — and flush writes — for ids of their choosing. The
    /// event is read through the instance cache, which keeps an absent event too.
    pub async fn count_refusal(&self, event: &EventId, code: &str) {
        if matches!(self.cached_event(event).await, Ok(Some(_))) {
            self.count(event, |m| *m.refusals.entry(code.to_owned()).or_default() += 1);
        }
    }

    /// Adds this instance's counts to the store when a minute has passed since it last did.
    pub async fn flush_report_due(&self) {
        let batch = self.tally.take_due(self.now());
        if !batch.is_empty() {
            // Logged inside; the counts wait for the next flush.
            let _ = self.write_counts(batch).await;
        }
    }

    /// Adds all of this instance's counts to the store now (`vwr dev` before a report and at
    /// exit, the advancer at the end of its run).
    pub async fn flush_report(&self) -> Result<(), Tier1Error> {
        let batch = self.tally.take_all(self.now());
        self.write_counts(batch).await
    }

    /// Writes `batch`; what fails waits in the tally for the next flush.
    async fn write_counts(&self, batch: Batch) -> Result<(), Tier1Error> {
        let store = &self.store;
        self.tally
            .write_batch(batch, |event, minute, counts| async move {
                let expires_at = minute.saturating_mul(60).saturating_add(KEEP_SECS);
                let r = store.add_report_minute(&event, minute, &counts, expires_at).await;
                if let Err(e) = &r {
                    tracing::warn!(event = "tier1.report_flush_failed", event_id = %event, minute, error = %e);
                }
                r
            })
            .await
            .map_err(Tier1Error::from)
    }

    /// `GET /api/admin/vwr/report/{eventId}`: the sale so far, minute by minute.
    pub async fn report(&self, event: &EventId) -> Result<SaleReport, Tier1Error> {
        self.flush_report().await?;
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        let minutes = self.store.report_minutes(event).await?;
        let c = &rec.config;
        let target = match c.mode {
            OutflowMode::Fixed if c.interval_seconds > 0 => {
                Some(c.batch_size as f64 * 60.0 / c.interval_seconds as f64)
            }
            OutflowMode::Fixed => None,
            OutflowMode::TargetArrivals => Some(c.target_arrivals_per_minute as f64),
        };
        Ok(SaleReport::build(event, rec.state.as_str(), target, &minutes, self.now()))
    }
}
