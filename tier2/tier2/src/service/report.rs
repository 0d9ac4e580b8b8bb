//! The report after the sale (docs/operate.md#the-report-after-the-sale): what the service
//! counts as it works, its minute-by-minute flush to the store, and the report the admin API
//! answers. A failed flush keeps the counts for the next one.

use vwr_core::EventId;

use super::{Tier2Error, Tier2Service};

impl Tier2Service {
    /// Counts something of `event` now, for the report (docs/operate.md#the-report-after-the-sale).
    pub fn count(&self, event: &EventId, f: impl FnOnce(&mut crate::report::Tier2Minute)) {
        self.tally.record(event, self.clock.now_secs(), f);
    }

    /// Adds this instance's counts to the store when a minute has passed since it last did;
    /// a failed write keeps them for the next time.
    pub async fn flush_report_due(&self) {
        let batch = self.tally.take_due(self.clock.now_secs());
        let _ = self.write_counts(batch).await;
    }

    /// Adds all of this instance's counts to the store now.
    pub async fn flush_report(&self) -> Result<(), Tier2Error> {
        let batch = self.tally.take_all(self.clock.now_secs());
        self.write_counts(batch).await
    }

    /// Writes `batch`; what fails waits in the tally for the next flush.
    async fn write_counts(
        &self,
        batch: vwr_core::tally::Batch<crate::report::Tier2Minute>,
    ) -> Result<(), Tier2Error> {
        let store = &self.store;
        self.tally
            .write_batch(batch, |event, minute, counts| async move {
                let r = store.add_report_minute(&event, minute, &counts).await;
                if let Err(e) = &r {
                    tracing::warn!(event = "tier2.report_flush_failed", event_id = %event, minute, error = %e);
                }
                r
            })
            .await
            .map_err(Tier2Error::from)
    }

    /// `GET /api/queue/admin/report/{eventId}`: tier 2's minutes of the sale; 404 for an
    /// event tier 2 neither holds nor has counted.
    pub async fn report(&self, event: &EventId) -> Result<crate::report::Tier2Report, Tier2Error> {
        self.flush_report().await?;
        let minutes = self.store.report_minutes(event).await?;
        let threshold = self.store.meta(event).await?.map(|m| m.threshold);
        if threshold.is_none() && minutes.is_empty() {
            return Err(Tier2Error::EventNotFound);
        }
        Ok(crate::report::Tier2Report::build(event, threshold, &minutes, self.clock.now_secs()))
    }
}
