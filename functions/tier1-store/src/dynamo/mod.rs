//! DynamoDB position store.
//!
//! One table (`pk`, `sk` strings) with a sparse global secondary index of the active events
//! (`active-index`). Every item kind — its key pattern, attributes, writers, readers and TTL —
//! is in docs/data.md; its key is built by one function of `items.rs`.
//!
//! The store in rooms, each operation of [`PositionStore`] in the file of its concern (the
//! trait's impl below only forwards):
//! - `items.rs`: the key builders, one function each, and the items' (de)serialization;
//! - `events.rs`: the event item: lifecycle writes, the serving counter, the active index;
//! - `counters.rs`: the shard counters, the pre-queue seal and the redemptions (admissions);
//! - `accounts.rs`: one place per account, and proofs of work taken once;
//! - `audit.rs`: the audit trail, written in the transaction of the change it records;
//! - `report.rs`: the report's minutes, added to by every instance;
//! - `table.rs`: creating the table (`vwr bootstrap`, tests).

mod accounts;
mod audit;
mod counters;
mod events;
mod items;
mod report;
mod table;

pub use items::ACTIVE_INDEX;

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use vwr_core::EventId;
use vwr_tier1::model::{AuditEntry, EventRecord, Redemption, ShardCounts, StoreError};
use vwr_tier1::report::MinuteCounts;
use vwr_tier1::store::{PositionStore, ServingUpdate};

/// Position store on one DynamoDB table.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
    page_size: Option<i32>,
}

/// Maps an SDK error to a store error; everything but a failed condition is "unavailable"
/// (throttling, 5xx, timeouts, a missing table) and logged with its code.
fn unavailable<E, R>(op: &'static str, err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let code = err.code().unwrap_or("none").to_owned();
    let msg = err.message().unwrap_or_default().to_owned();
    let detail = format!("{op}: {code}: {msg} ({})", aws_sdk_dynamodb::error::DisplayErrorContext(&err));
    tracing::warn!(event = "tier1.dynamodb_error", op, code = %code, error = %detail);
    StoreError::Unavailable(detail)
}

fn is_condition_failed<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool {
    err.code() == Some("ConditionalCheckFailedException")
}

/// A transaction cancelled because a condition failed (not a conflict with another
/// transaction, not throttling: those are "unavailable").
fn is_transaction_condition_failed<R>(
    err: &SdkError<aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError, R>,
) -> bool {
    match err.as_service_error() {
        Some(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(
            c,
        )) => {
            let reasons = c.cancellation_reasons();
            if reasons.is_empty() {
                // Some emulators leave the reasons out; the message still names the cause.
                return c.message().is_some_and(|m| m.contains("ConditionalCheckFailed"));
            }
            reasons.iter().any(|r| r.code() == Some("ConditionalCheckFailed"))
        }
        _ => false,
    }
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self { client, table: table.into(), page_size: None }
    }

    /// Limits the items per page of listings (tests use it to force pagination).
    pub fn with_page_size(mut self, items: i32) -> Self {
        self.page_size = Some(items);
        self
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Every item of partition `pk`, in sort-key order, read consistently page by page (the
    /// audit trail, the report's minutes); `op` names the call in errors.
    async fn partition(&self, pk: String, op: &'static str) -> Result<Vec<items::Item>, StoreError> {
        let mut out = Vec::new();
        let mut start: Option<items::Item> = None;
        loop {
            let res = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(":pk", items::s(pk.clone()))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .set_limit(self.page_size)
                .send()
                .await
                .map_err(|e| unavailable(op, e))?;
            out.extend_from_slice(res.items());
            match res.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => return Ok(out),
            }
        }
    }
}

#[async_trait]
impl PositionStore for DynamoStore {
    async fn get_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError> {
        events::get_event(self, event).await
    }

    async fn write_event(
        &self,
        expected: Option<u64>,
        rec: &EventRecord,
        audit: &AuditEntry,
    ) -> Result<bool, StoreError> {
        events::write_event(self, expected, rec, audit).await
    }

    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError> {
        counters::next_in_shard(self, event, shard).await
    }

    async fn join_prequeue(&self, event: &EventId, shard: u32) -> Result<Option<u64>, StoreError> {
        counters::join_prequeue(self, event, shard).await
    }

    async fn seal(&self, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError> {
        counters::seal(self, event, shards).await
    }

    async fn set_prequeue_size(&self, event: &EventId, size: u64, now: u64) -> Result<(), StoreError> {
        events::set_prequeue_size(self, event, size, now).await
    }

    async fn set_issued_count(&self, event: &EventId, issued: u64, now: u64) -> Result<(), StoreError> {
        events::set_issued_count(self, event, issued, now).await
    }

    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        counters::shard_counts(self, event, shards).await
    }

    async fn update_serving(
        &self,
        event: &EventId,
        u: ServingUpdate,
        audit: Option<&AuditEntry>,
    ) -> Result<bool, StoreError> {
        events::update_serving(self, event, u, audit).await
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
        counters::redeem(self, event, position, shards, jti, now, expires_at).await
    }

    async fn redemption(&self, event: &EventId, position: u64) -> Result<Option<Redemption>, StoreError> {
        counters::redemption(self, event, position).await
    }

    async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, StoreError> {
        audit::audit(self, event).await
    }

    async fn renew(
        &self,
        event: &EventId,
        position: u64,
        current_exp: u64,
        iat: u64,
        exp: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        counters::renew(self, event, position, current_exp, iat, exp).await
    }

    async fn release(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        counters::release(self, event, position, shards, jti, now).await
    }

    async fn account_ticket(&self, event: &EventId, account: &str) -> Result<Option<String>, StoreError> {
        accounts::account_ticket(self, event, account).await
    }

    async fn claim_account(
        &self,
        event: &EventId,
        account: &str,
        request_id: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        accounts::claim_account(self, event, account, request_id, expires_at).await
    }

    async fn replace_account_ticket(
        &self,
        event: &EventId,
        account: &str,
        old: &str,
        new: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        accounts::replace_account_ticket(self, event, account, old, new, expires_at).await
    }

    async fn use_proof_once(
        &self,
        event: &EventId,
        key: &str,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, StoreError> {
        accounts::use_proof_once(self, event, key, expires_at, now).await
    }

    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError> {
        events::list_active(self).await
    }

    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &MinuteCounts,
        expires_at: u64,
    ) -> Result<(), StoreError> {
        report::add_minute(self, event, minute, counts, expires_at).await
    }

    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, MinuteCounts)>, StoreError> {
        report::minutes(self, event).await
    }
}
