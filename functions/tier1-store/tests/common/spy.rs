//! [`Spy`]: a position store in front of a real one, for the tests.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use vwr_core::EventId;
use vwr_tier1::model::{AuditEntry, EventRecord, Redemption, ShardCounts, StoreError};
use vwr_tier1::report::MinuteCounts;
use vwr_tier1::store::{PositionStore, ServingUpdate};

/// A store in front of a real one, for what the real one cannot show: with [`Spy::lagging`]
/// its active-event index lags — `list_active` answers from a copy taken at the last
/// `catch_up`, or with `every` > 0 refreshed at every `every`-th listing (after answering it)
/// — and `get_event` yields, so racing callers interleave; it counts the report's writes.
/// Everything else goes to the real store.
pub struct Spy {
    inner: Arc<dyn PositionStore>,
    lag: bool,
    seen: Mutex<Vec<EventRecord>>,
    every: u64,
    calls: AtomicU64,
    /// `add_report_minute` calls.
    pub report_writes: AtomicUsize,
}

impl Spy {
    /// Everything as the real store, the report's writes counted.
    pub fn counting(inner: Arc<dyn PositionStore>) -> Self {
        Self { lag: false, ..Self::lagging(inner, 0) }
    }

    /// The index lags (see above).
    pub fn lagging(inner: Arc<dyn PositionStore>, every: u64) -> Self {
        Self {
            inner,
            lag: true,
            seen: Mutex::new(Vec::new()),
            every,
            calls: AtomicU64::new(0),
            report_writes: AtomicUsize::new(0),
        }
    }

    pub async fn catch_up(&self) {
        let now = self.inner.list_active().await.unwrap();
        *self.seen.lock().unwrap() = now;
    }
}

#[async_trait]
impl PositionStore for Spy {
    async fn get_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError> {
        let rec = self.inner.get_event(event).await;
        tokio::task::yield_now().await;
        rec
    }
    async fn write_event(
        &self,
        expected: Option<u64>,
        rec: &EventRecord,
        audit: &AuditEntry,
    ) -> Result<bool, StoreError> {
        self.inner.write_event(expected, rec, audit).await
    }
    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError> {
        self.inner.next_in_shard(event, shard).await
    }
    async fn join_prequeue(&self, event: &EventId, shard: u32) -> Result<Option<u64>, StoreError> {
        self.inner.join_prequeue(event, shard).await
    }
    async fn seal(&self, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError> {
        self.inner.seal(event, shards).await
    }
    async fn set_prequeue_size(&self, event: &EventId, size: u64, now: u64) -> Result<(), StoreError> {
        self.inner.set_prequeue_size(event, size, now).await
    }
    async fn set_issued_count(&self, event: &EventId, issued: u64, now: u64) -> Result<(), StoreError> {
        self.inner.set_issued_count(event, issued, now).await
    }
    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        self.inner.shard_counts(event, shards).await
    }
    async fn update_serving(
        &self,
        event: &EventId,
        update: ServingUpdate,
        audit: Option<&AuditEntry>,
    ) -> Result<bool, StoreError> {
        self.inner.update_serving(event, update, audit).await
    }
    async fn redeem(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
        expires_at: u64,
    ) -> Result<Redemption, StoreError> {
        self.inner.redeem(event, position, shards, jti, now, expires_at).await
    }
    async fn redemption(&self, event: &EventId, position: u64) -> Result<Option<Redemption>, StoreError> {
        self.inner.redemption(event, position).await
    }
    async fn renew(
        &self,
        event: &EventId,
        position: u64,
        current_exp: u64,
        iat: u64,
        exp: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        self.inner.renew(event, position, current_exp, iat, exp).await
    }
    async fn release(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        self.inner.release(event, position, shards, jti, now).await
    }
    async fn replace_account_ticket(
        &self,
        event: &EventId,
        account: &str,
        old: &str,
        new: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        self.inner.replace_account_ticket(event, account, old, new, expires_at).await
    }
    async fn use_proof_once(
        &self,
        event: &EventId,
        key: &str,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, StoreError> {
        self.inner.use_proof_once(event, key, expires_at, now).await
    }
    async fn account_ticket(&self, event: &EventId, account: &str) -> Result<Option<String>, StoreError> {
        self.inner.account_ticket(event, account).await
    }
    async fn claim_account(
        &self,
        event: &EventId,
        account: &str,
        request_id: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        self.inner.claim_account(event, account, request_id, expires_at).await
    }
    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError> {
        if !self.lag {
            return self.inner.list_active().await;
        }
        // A moment between the read and the answer, as over a network (the in-memory store
        // would otherwise answer before any other task runs).
        let answer = self.seen.lock().unwrap().clone();
        tokio::task::yield_now().await;
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.every > 0 && n.is_multiple_of(self.every) {
            let now = self.inner.list_active().await?;
            *self.seen.lock().unwrap() = now;
        }
        Ok(answer)
    }
    async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, StoreError> {
        self.inner.audit(event).await
    }
    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &MinuteCounts,
        expires_at: u64,
    ) -> Result<(), StoreError> {
        self.report_writes.fetch_add(1, Ordering::SeqCst);
        self.inner.add_report_minute(event, minute, counts, expires_at).await
    }
    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, MinuteCounts)>, StoreError> {
        self.inner.report_minutes(event).await
    }
}
