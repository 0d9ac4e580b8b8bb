//! DynamoDB position store.
//!
//! One table (`pk`, `sk` strings) with a sparse global secondary index for active events:
//! - event item `pk = EVT#{e}`, `sk = META`: `state`, configuration, schedule, `seed`,
//!   `sealedCounts`, `message` (JSON), `rev`, `servingCounter`, `lastStepAt`, `samples`
//!   (JSON), `active`, and `gsi1pk = ACTIVE` unless `inactive`;
//! - shard items `pk = EVT#{e}#S#{k}`, `sk = S`: `n` (regular joins), `r` (redeemed), `pq`
//!   (pre-queue joins), `sealed`. Each shard has its own partition key, so N shards take
//!   N × an item's write rate;
//! - redemption items `pk = EVT#{e}#R#{position}`, `sk = R`: `jti`, `at`, `expiresAt` (TTL);
//! - account items `pk = EVT#{e}#A#{sha256(account)}`, `sk = A`: `ticket`, `expiresAt` (TTL):
//!   one place per account (docs/abuse.md#one-place-per-account);
//! - used-proof items `pk = EVT#{e}#U#{digest}`, `sk = U`: `expiresAt` (TTL): a proof-of-work
//!   solution is taken once across all instances (docs/abuse.md#proof-of-work);
//! - audit items `pk = EVT#{e}#AUDIT`, `sk = {seq:012}`: `at`, `actor`, `action`, `before`,
//!   `after` (JSON). Written in the same transaction as the change they record; `auditSeq` on
//!   the event item counts them.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    KeysAndAttributes, Projection, ProjectionType, Put, ReturnValue, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType, TableStatus, TimeToLiveSpecification, TransactWriteItem, Update,
};
use serde::Deserialize;
use vwr_core::EventId;
use vwr_tier1::model::{
    AuditEntry, CloseReason, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_SESSION_SECONDS,
    DEFAULT_REENTRY_GRACE_SECONDS, EventConfig, EventRecord, EventState, Hold, Message, OutflowMode,
    Redemption, Sample, Schedule, ShardCounts, StoreError, shard_of,
};
use vwr_tier1::store::{PositionStore, ServingUpdate};

/// Name of the sparse index of active events.
pub const ACTIVE_INDEX: &str = "active-index";
const ACTIVE: &str = "ACTIVE";
/// BatchGetItem takes at most 100 keys.
const BATCH_GET_MAX: usize = 100;

type Item = HashMap<String, AttributeValue>;

/// Position store on one DynamoDB table.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
    page_size: Option<i32>,
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn event_key(e: &EventId) -> Item {
    HashMap::from([("pk".to_owned(), s(format!("EVT#{e}"))), ("sk".to_owned(), s("META"))])
}

fn shard_key(e: &EventId, k: u64) -> Item {
    HashMap::from([("pk".to_owned(), s(format!("EVT#{e}#S#{k}"))), ("sk".to_owned(), s("S"))])
}

fn account_key(e: &EventId, account: &str) -> Item {
    HashMap::from([("pk".to_owned(), s(format!("EVT#{e}#A#{account}"))), ("sk".to_owned(), s("A"))])
}

fn proof_key(e: &EventId, digest: &str) -> Item {
    HashMap::from([("pk".to_owned(), s(format!("EVT#{e}#U#{digest}"))), ("sk".to_owned(), s("U"))])
}

fn audit_pk(e: &EventId) -> String {
    format!("EVT#{e}#AUDIT")
}

fn redemption_key(e: &EventId, position: u64) -> Item {
    HashMap::from([("pk".to_owned(), s(format!("EVT#{e}#R#{position}"))), ("sk".to_owned(), s("R"))])
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

/// An UpdateExpression under construction. Every attribute goes through a name alias, so
/// reserved words (`state`, `action`…) never break an expression.
#[derive(Default)]
struct Expr {
    sets: Vec<String>,
    removes: Vec<String>,
    names: HashMap<String, String>,
    values: Item,
}

impl Expr {
    fn name(&mut self, attr: &str) -> String {
        let alias = format!("#{attr}");
        self.names.insert(alias.clone(), attr.to_owned());
        alias
    }

    fn set(&mut self, attr: &str, v: AttributeValue) {
        let a = self.name(attr);
        self.values.insert(format!(":{attr}"), v);
        self.sets.push(format!("{a} = :{attr}"));
    }

    fn set_if_absent(&mut self, attr: &str, v: AttributeValue) {
        let a = self.name(attr);
        self.values.insert(format!(":{attr}"), v);
        self.sets.push(format!("{a} = if_not_exists({a}, :{attr})"));
    }

    fn remove(&mut self, attr: &str) {
        let a = self.name(attr);
        self.removes.push(a);
    }

    /// Sets `attr` to `v`, or removes it.
    fn opt(&mut self, attr: &str, v: Option<AttributeValue>) {
        match v {
            Some(v) => self.set(attr, v),
            None => self.remove(attr),
        }
    }

    fn expression(&self) -> String {
        let mut e = format!("SET {}", self.sets.join(", "));
        if !self.removes.is_empty() {
            e.push_str(&format!(" REMOVE {}", self.removes.join(", ")));
        }
        e
    }
}

/// The event item as stored (`serde_dynamo` reads it; absent numbers are 0).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventItem {
    event_id: String,
    #[serde(default)]
    active: bool,
    /// Absent on items written before the lifecycle existed: then `active` decides.
    state: Option<String>,
    #[serde(default)]
    rev: u64,
    prequeue_at: Option<u64>,
    open_at: Option<u64>,
    close_at: Option<u64>,
    opened_at: Option<u64>,
    seed: Option<String>,
    sealed_counts: Option<Vec<u64>>,
    close_reason: Option<String>,
    message: Option<String>,
    #[serde(default)]
    prequeue_size: u64,
    #[serde(default)]
    issued_count: u64,
    #[serde(default)]
    audit_seq: u64,
    mode: Option<String>,
    #[serde(default)]
    target_arrivals_per_minute: u64,
    max_batch_size: Option<u64>,
    reentry_grace_seconds: Option<u64>,
    max_session_seconds: Option<u64>,
    #[serde(default)]
    pow_difficulty: u32,
    #[serde(default)]
    enqueue_token_required: bool,
    /// The health gate (JSON of `Hold`), absent when not held.
    hold: Option<String>,
    resumed_at: Option<u64>,
    #[serde(default)]
    batch_size: u64,
    #[serde(default)]
    interval_seconds: u64,
    #[serde(default)]
    shards: u32,
    #[serde(default)]
    token_ttl_seconds: u64,
    #[serde(default)]
    serving_counter: u64,
    /// Items written before `lastStepAt` existed kept a step number (`lastStep`) in the
    /// units of the interval of the time; it cannot be converted safely, so such an item
    /// counts as "no step yet" (the `servingCounter` compare-and-set still stops racing runs;
    /// at most the step in progress at the upgrade is applied once more).
    #[serde(default)]
    last_step_at: u64,
    samples: Option<String>,
    #[serde(default)]
    created_at: u64,
    #[serde(default)]
    updated_at: u64,
}

/// A shard item: regular joins (`n`), redeemed (`r`), pre-queue joins (`pq`).
#[derive(Debug, Deserialize)]
struct ShardItem {
    pk: String,
    #[serde(default)]
    n: u64,
    #[serde(default)]
    r: u64,
    #[serde(default)]
    pq: u64,
    #[serde(default)]
    rl: u64,
}

/// An audit item.
#[derive(Debug, Deserialize)]
struct AuditItem {
    seq: u64,
    at: u64,
    actor: String,
    action: String,
    before: String,
    after: String,
}

/// A redemption item: the first admission of a position.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedemptionItem {
    jti: String,
    #[serde(default)]
    at: u64,
    /// The current token after a renewal (absent: the first token, `at + ttl`).
    token_iat: Option<u64>,
    token_exp: Option<u64>,
    released_at: Option<u64>,
}

impl RedemptionItem {
    fn view(self, fresh: bool) -> Redemption {
        let token = match (self.token_iat, self.token_exp) {
            (Some(i), Some(e)) => Some((i, e)),
            _ => None,
        };
        Redemption { jti: self.jti, redeemed_at: self.at, token, released_at: self.released_at, fresh }
    }
}

fn decode<T: serde::de::DeserializeOwned>(item: &Item, what: &str) -> Result<T, StoreError> {
    serde_dynamo::from_item(item.clone()).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

fn parse_event(item: &Item) -> Result<EventRecord, StoreError> {
    let it: EventItem = decode(item, "event item")?;
    let event = EventId::parse(&it.event_id)
        .map_err(|e| StoreError::Corrupt(format!("eventId {:?}: {e}", it.event_id)))?;
    let samples: Vec<Sample> = match &it.samples {
        Some(j) => serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("samples: {e}")))?,
        None => Vec::new(),
    };
    let state = match &it.state {
        Some(s) => EventState::parse(s).ok_or_else(|| StoreError::Corrupt(format!("state {s:?}")))?,
        None if it.active => EventState::Open,
        None => EventState::Inactive,
    };
    let schedule = match (it.prequeue_at, it.open_at) {
        (Some(prequeue_at), Some(open_at)) => Some(Schedule { prequeue_at, open_at, close_at: it.close_at }),
        _ => None,
    };
    let close_reason = match &it.close_reason {
        Some(r) => {
            Some(CloseReason::parse(r).ok_or_else(|| StoreError::Corrupt(format!("closeReason {r:?}")))?)
        }
        None => None,
    };
    let hold: Option<Hold> = match &it.hold {
        Some(j) => Some(serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("hold: {e}")))?),
        None => None,
    };
    let message: Option<Message> = match &it.message {
        Some(j) => Some(serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("message: {e}")))?),
        None => None,
    };
    Ok(EventRecord {
        event,
        state,
        rev: it.rev,
        schedule,
        seed: it.seed,
        sealed_counts: it.sealed_counts,
        opened_at: it.opened_at,
        close_reason,
        message,
        prequeue_size: it.prequeue_size,
        issued_count: it.issued_count,
        audit_seq: it.audit_seq,
        config: EventConfig {
            batch_size: it.batch_size,
            interval_seconds: it.interval_seconds.max(1),
            shards: it.shards.max(1),
            token_ttl_seconds: it.token_ttl_seconds,
            mode: match it.mode.as_deref() {
                None => OutflowMode::Fixed,
                Some(m) => OutflowMode::parse(m).ok_or_else(|| StoreError::Corrupt(format!("mode {m:?}")))?,
            },
            target_arrivals_per_minute: it.target_arrivals_per_minute,
            max_batch_size: it.max_batch_size.unwrap_or(DEFAULT_MAX_BATCH_SIZE),
            reentry_grace_seconds: it.reentry_grace_seconds.unwrap_or(DEFAULT_REENTRY_GRACE_SECONDS),
            max_session_seconds: it.max_session_seconds.unwrap_or(DEFAULT_MAX_SESSION_SECONDS),
            pow_difficulty: it.pow_difficulty,
            enqueue_token_required: it.enqueue_token_required,
        },
        hold,
        resumed_at: it.resumed_at,
        serving_counter: it.serving_counter,
        last_step_at: it.last_step_at,
        samples,
        created_at: it.created_at,
        updated_at: it.updated_at,
    })
}

/// The per-shard counts kept beside the join counter.
#[derive(Debug, Clone, Copy)]
enum ShardCount {
    Redeemed,
    Released,
}

impl DynamoStore {
    /// Adds one to a per-shard count of `position`'s shard. Best effort: the record it counts
    /// is already written, so a failure is logged (`tier1.{redeem,release}_count_failed`), not
    /// returned.
    async fn count_on_shard(&self, event: &EventId, position: u64, shards: u32, what: ShardCount) {
        let (attr, op, log) = match what {
            ShardCount::Redeemed => ("r", "UpdateItem(redeemed)", "tier1.redeem_count_failed"),
            ShardCount::Released => ("rl", "UpdateItem(released)", "tier1.release_count_failed"),
        };
        let shard = shard_of(position, u64::from(shards.max(1)));
        let counted = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(shard_key(event, shard)))
            .update_expression(format!("ADD {attr} :one"))
            .expression_attribute_values(":one", n(1))
            .send()
            .await;
        if let Err(e) = counted {
            tracing::warn!(event = log, event_id = %event, error = %unavailable(op, e));
        }
    }

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

    /// Creates the table, its index and TTL if missing, and waits until it is active.
    /// Safe to run again on an existing table.
    pub async fn ensure_table(&self) -> Result<(), StoreError> {
        match self.client.describe_table().table_name(&self.table).send().await {
            Ok(_) => {}
            Err(e) if e.code() == Some("ResourceNotFoundException") => {
                let attr = |name: &str| {
                    AttributeDefinition::builder()
                        .attribute_name(name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()
                        .map_err(|e| StoreError::Corrupt(e.to_string()))
                };
                let key = |name: &str, kt: KeyType| {
                    KeySchemaElement::builder()
                        .attribute_name(name)
                        .key_type(kt)
                        .build()
                        .map_err(|e| StoreError::Corrupt(e.to_string()))
                };
                let gsi = GlobalSecondaryIndex::builder()
                    .index_name(ACTIVE_INDEX)
                    .key_schema(key("gsi1pk", KeyType::Hash)?)
                    .key_schema(key("gsi1sk", KeyType::Range)?)
                    .projection(Projection::builder().projection_type(ProjectionType::All).build())
                    .build()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let created = self
                    .client
                    .create_table()
                    .table_name(&self.table)
                    .billing_mode(BillingMode::PayPerRequest)
                    .attribute_definitions(attr("pk")?)
                    .attribute_definitions(attr("sk")?)
                    .attribute_definitions(attr("gsi1pk")?)
                    .attribute_definitions(attr("gsi1sk")?)
                    .key_schema(key("pk", KeyType::Hash)?)
                    .key_schema(key("sk", KeyType::Range)?)
                    .global_secondary_indexes(gsi)
                    .send()
                    .await;
                match created {
                    Ok(_) => tracing::info!(event = "tier1.table_created", table = %self.table),
                    Err(e) if e.code() == Some("ResourceInUseException") => {}
                    Err(e) => return Err(unavailable("CreateTable", e)),
                }
            }
            Err(e) => return Err(unavailable("DescribeTable", e)),
        }
        for _ in 0..120 {
            let d = self.client.describe_table().table_name(&self.table).send().await;
            let d = d.map_err(|e| unavailable("DescribeTable", e))?;
            if d.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let ttl = self.client.describe_time_to_live().table_name(&self.table).send().await;
        let enabled = ttl
            .ok()
            .and_then(|t| t.time_to_live_description().and_then(|d| d.attribute_name().map(str::to_owned)))
            .is_some_and(|a| a == "expiresAt");
        if !enabled {
            let spec = TimeToLiveSpecification::builder()
                .attribute_name("expiresAt")
                .enabled(true)
                .build()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if let Err(e) = self
                .client
                .update_time_to_live()
                .table_name(&self.table)
                .time_to_live_specification(spec)
                .send()
                .await
            {
                // TTL only tidies old redemptions; a failure here is worth a warning, not a stop.
                tracing::warn!(event = "tier1.ttl_not_enabled", table = %self.table, error = %unavailable("UpdateTimeToLive", e));
            }
        }
        Ok(())
    }

    /// Applies `update` and appends `entry` to the audit trail in one transaction; `Ok(false)`
    /// when a condition failed (a stale revision, a taken audit number).
    async fn with_audit(
        &self,
        update: Update,
        event: &EventId,
        entry: &AuditEntry,
        op: &'static str,
    ) -> Result<bool, StoreError> {
        let put = self.audit_put(event, entry)?;
        let res = self
            .client
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(update).build())
            .transact_items(TransactWriteItem::builder().put(put).build())
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) if is_transaction_condition_failed(&e) => Ok(false),
            Err(e) => Err(unavailable(op, e)),
        }
    }

    /// The audit item of `entry`, as a transaction's Put. The sort key is `entry.seq`, and
    /// the Put requires it to be new: of two changes decided on the same item, the second
    /// one's transaction fails and is retried, so the trail is in write order.
    fn audit_put(&self, event: &EventId, entry: &AuditEntry) -> Result<Put, StoreError> {
        let json =
            |v: &serde_json::Value| serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()));
        let item: Item = HashMap::from([
            ("pk".to_owned(), s(audit_pk(event))),
            ("sk".to_owned(), s(format!("{:012}", entry.seq))),
            ("seq".to_owned(), n(entry.seq)),
            ("at".to_owned(), n(entry.at)),
            ("actor".to_owned(), s(&entry.actor)),
            ("action".to_owned(), s(&entry.action)),
            ("before".to_owned(), s(json(&entry.before)?)),
            ("after".to_owned(), s(json(&entry.after)?)),
        ]);
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    async fn batch_get(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(BATCH_GET_MAX) {
            let mut pending = chunk.to_vec();
            let mut attempt = 0u32;
            while !pending.is_empty() {
                let ka = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(true)
                    .build()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let res = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, ka)
                    .send()
                    .await
                    .map_err(|e| unavailable("BatchGetItem", e))?;
                if let Some(items) = res.responses().and_then(|r| r.get(&self.table)) {
                    out.extend(items.iter().cloned());
                }
                pending = res
                    .unprocessed_keys()
                    .and_then(|u| u.get(&self.table))
                    .map(|k| k.keys().to_vec())
                    .unwrap_or_default();
                if !pending.is_empty() {
                    attempt += 1;
                    if attempt > 8 {
                        return Err(StoreError::Unavailable("BatchGetItem: keys left unprocessed".into()));
                    }
                    tokio::time::sleep(Duration::from_millis(20 << attempt.min(6))).await;
                }
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl PositionStore for DynamoStore {
    async fn get_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError> {
        let res = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable("GetItem", e))?;
        res.item().map(parse_event).transpose()
    }

    async fn write_event(
        &self,
        expected: Option<u64>,
        rec: &EventRecord,
        audit: &AuditEntry,
    ) -> Result<bool, StoreError> {
        let mut ex = Expr::default();
        let c = rec.config;
        ex.set("eventId", s(rec.event.as_str()));
        ex.set("state", s(rec.state.as_str()));
        ex.set("active", AttributeValue::Bool(rec.active()));
        ex.set("rev", n(rec.rev));
        ex.set("auditSeq", n(rec.audit_seq));
        ex.set("updatedAt", n(rec.updated_at));
        ex.set_if_absent("createdAt", n(rec.updated_at));
        ex.set_if_absent("servingCounter", n(0));
        ex.set_if_absent("lastStepAt", n(0));
        ex.set("batchSize", n(c.batch_size));
        ex.set("intervalSeconds", n(c.interval_seconds));
        ex.set("shards", n(c.shards));
        ex.set("tokenTtlSeconds", n(c.token_ttl_seconds));
        ex.set("mode", s(c.mode.as_str()));
        ex.set("targetArrivalsPerMinute", n(c.target_arrivals_per_minute));
        ex.set("maxBatchSize", n(c.max_batch_size));
        ex.set("reentryGraceSeconds", n(c.reentry_grace_seconds));
        ex.set("maxSessionSeconds", n(c.max_session_seconds));
        ex.set("powDifficulty", n(c.pow_difficulty));
        ex.set("enqueueTokenRequired", AttributeValue::Bool(c.enqueue_token_required));
        let hold = match &rec.hold {
            Some(h) => Some(serde_json::to_string(h).map_err(|e| StoreError::Corrupt(e.to_string()))?),
            None => None,
        };
        ex.opt("hold", hold.map(s));
        ex.opt("resumedAt", rec.resumed_at.map(n));
        if rec.active() {
            ex.set("gsi1pk", s(ACTIVE));
            ex.set("gsi1sk", s(rec.event.as_str()));
        } else {
            ex.remove("gsi1pk");
            ex.remove("gsi1sk");
        }
        ex.opt("prequeueAt", rec.schedule.map(|x| n(x.prequeue_at)));
        ex.opt("openAt", rec.schedule.map(|x| n(x.open_at)));
        ex.opt("closeAt", rec.schedule.and_then(|x| x.close_at).map(n));
        ex.opt("openedAt", rec.opened_at.map(n));
        ex.opt("seed", rec.seed.as_deref().map(s));
        ex.opt(
            "sealedCounts",
            rec.sealed_counts.as_ref().map(|v| AttributeValue::L(v.iter().map(n).collect())),
        );
        ex.opt("closeReason", rec.close_reason.map(|r| s(r.as_str())));
        let message = match &rec.message {
            Some(m) => Some(serde_json::to_string(m).map_err(|e| StoreError::Corrupt(e.to_string()))?),
            None => None,
        };
        ex.opt("message", message.map(s));
        let condition = match expected {
            None => "attribute_not_exists(pk)".to_owned(),
            Some(r) => {
                ex.values.insert(":expectedRev".into(), n(r));
                let rev = ex.name("rev");
                if r == 0 {
                    format!("attribute_exists(pk) AND (attribute_not_exists({rev}) OR {rev} = :expectedRev)")
                } else {
                    format!("{rev} = :expectedRev")
                }
            }
        };
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(event_key(&rec.event)))
            .update_expression(ex.expression())
            .condition_expression(condition)
            .set_expression_attribute_names(Some(ex.names))
            .set_expression_attribute_values(Some(ex.values))
            .build()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.with_audit(update, &rec.event, audit, "TransactWriteItems(event)").await
    }

    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(shard_key(event, u64::from(shard))))
            .update_expression("ADD n :one")
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| unavailable("UpdateItem(assign)", e))?;
        let attrs = out.attributes().ok_or_else(|| StoreError::Corrupt("ADD returned nothing".into()))?;
        #[derive(Deserialize)]
        struct Added {
            n: u64,
        }
        match decode::<Added>(attrs, "shard counter")?.n {
            0 => Err(StoreError::Corrupt("ADD returned 0".into())),
            v => Ok(v),
        }
    }

    async fn join_prequeue(&self, event: &EventId, shard: u32) -> Result<Option<u64>, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(shard_key(event, u64::from(shard))))
            .update_expression("ADD pq :one")
            .condition_expression("attribute_not_exists(sealed)")
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        let out = match res {
            Ok(out) => out,
            Err(e) if is_condition_failed(&e) => return Ok(None),
            Err(e) => return Err(unavailable("UpdateItem(prequeue)", e)),
        };
        let attrs = out.attributes().ok_or_else(|| StoreError::Corrupt("ADD returned nothing".into()))?;
        #[derive(Deserialize)]
        struct Added {
            pq: u64,
        }
        match decode::<Added>(attrs, "pre-queue counter")?.pq {
            0 => Err(StoreError::Corrupt("ADD returned 0".into())),
            v => Ok(Some(v)),
        }
    }

    async fn seal(&self, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError> {
        let mut counts = Vec::with_capacity(shards as usize);
        for k in 1..=u64::from(shards) {
            // `ADD pq 0` creates the counter on a shard nobody joined, so the answer always
            // carries it; a sealed shard's `pq` never changes again.
            let out = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(shard_key(event, k)))
                .update_expression("SET sealed = :t ADD pq :zero")
                .expression_attribute_values(":t", AttributeValue::Bool(true))
                .expression_attribute_values(":zero", n(0))
                .return_values(ReturnValue::AllNew)
                .send()
                .await
                .map_err(|e| unavailable("UpdateItem(seal)", e))?;
            let attrs =
                out.attributes().ok_or_else(|| StoreError::Corrupt("seal returned nothing".into()))?;
            counts.push(decode::<ShardItem>(attrs, "shard item")?.pq);
        }
        Ok(counts)
    }

    async fn set_prequeue_size(&self, event: &EventId, size: u64, now: u64) -> Result<(), StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .update_expression("SET prequeueSize = :size, updatedAt = :now")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":size", n(size))
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match res {
            Ok(_) => Ok(()),
            Err(e) if is_condition_failed(&e) => Ok(()),
            Err(e) => Err(unavailable("UpdateItem(prequeueSize)", e)),
        }
    }

    async fn set_issued_count(&self, event: &EventId, issued: u64, now: u64) -> Result<(), StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .update_expression("SET issuedCount = :issued, updatedAt = :now")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":issued", n(issued))
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match res {
            Ok(_) => Ok(()),
            Err(e) if is_condition_failed(&e) => Ok(()),
            Err(e) => Err(unavailable("UpdateItem(issuedCount)", e)),
        }
    }

    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        let keys = (1..=u64::from(shards)).map(|k| shard_key(event, k)).collect();
        let items = self.batch_get(keys).await?;
        let mut counts = ShardCounts {
            issued: vec![0; shards as usize],
            redeemed: vec![0; shards as usize],
            pre: vec![0; shards as usize],
            released: vec![0; shards as usize],
        };
        let prefix = format!("EVT#{event}#S#");
        for item in &items {
            let it: ShardItem = decode(item, "shard item")?;
            let k: usize = it
                .pk
                .strip_prefix(&prefix)
                .and_then(|k| k.parse().ok())
                .filter(|k| (1..=shards as usize).contains(k))
                .ok_or_else(|| StoreError::Corrupt("unexpected shard item".into()))?;
            counts.issued[k - 1] = it.n;
            counts.redeemed[k - 1] = it.r;
            counts.pre[k - 1] = it.pq;
            counts.released[k - 1] = it.rl;
        }
        Ok(counts)
    }

    async fn update_serving(
        &self,
        event: &EventId,
        u: ServingUpdate,
        audit: Option<&AuditEntry>,
    ) -> Result<bool, StoreError> {
        let samples = serde_json::to_string(&u.samples).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut values: Item = HashMap::from([
            (":old".to_owned(), n(u.expected)),
            (":new".to_owned(), n(u.new)),
            (":samples".to_owned(), s(samples)),
            (":now".to_owned(), n(u.now)),
        ]);
        let mut names: HashMap<String, String> = HashMap::new();
        let (update, condition) = match u.step {
            Some(step) => {
                values.insert(":step".into(), n(step));
                values.insert(":open".into(), s(EventState::Open.as_str()));
                values.insert(":t".into(), AttributeValue::Bool(true));
                names.insert("#st".into(), "state".into());
                (
                    "SET servingCounter = :new, samples = :samples, updatedAt = :now, lastStepAt = :step",
                    // Items from before the lifecycle have no `state`: `active` stands for open.
                    "servingCounter = :old AND (#st = :open OR (attribute_not_exists(#st) AND active = :t)) \
                     AND (attribute_not_exists(lastStepAt) OR lastStepAt < :step)",
                )
            }
            None => {
                ("SET servingCounter = :new, samples = :samples, updatedAt = :now", "servingCounter = :old")
            }
        };
        let names = (!names.is_empty()).then_some(names);
        let Some(audit) = audit else {
            let res = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(event_key(event)))
                .update_expression(update)
                .condition_expression(condition)
                .set_expression_attribute_names(names)
                .set_expression_attribute_values(Some(values))
                .send()
                .await;
            return match res {
                Ok(_) => Ok(true),
                Err(e) if is_condition_failed(&e) => Ok(false),
                Err(e) => Err(unavailable("UpdateItem(serving)", e)),
            };
        };
        values.insert(":seq".into(), n(audit.seq));
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .update_expression(format!("{update}, auditSeq = :seq"))
            .condition_expression(condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(Some(values))
            .build()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.with_audit(update, event, audit, "TransactWriteItems(serving)").await
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
        let mut item = redemption_key(event, position);
        item.insert("jti".into(), s(jti));
        item.insert("at".into(), n(now));
        item.insert("expiresAt".into(), n(expires_at));
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match res {
            Ok(_) => {
                // The redemption itself is recorded; only the statistic can miss one.
                self.count_on_shard(event, position, shards, ShardCount::Redeemed).await;
                Ok(Redemption {
                    jti: jti.to_owned(),
                    redeemed_at: now,
                    token: None,
                    released_at: None,
                    fresh: true,
                })
            }
            Err(e) if is_condition_failed(&e) => {
                let old = match e.as_service_error().and_then(|se| match se {
                    aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(
                        c,
                    ) => c.item().cloned(),
                    _ => None,
                }) {
                    Some(item) => item,
                    None => self
                        .client
                        .get_item()
                        .table_name(&self.table)
                        .set_key(Some(redemption_key(event, position)))
                        .consistent_read(true)
                        .send()
                        .await
                        .map_err(|e| unavailable("GetItem(redemption)", e))?
                        .item()
                        .cloned()
                        .ok_or_else(|| StoreError::Unavailable("redemption vanished".into()))?,
                };
                let old: RedemptionItem = decode(&old, "redemption")?;
                Ok(old.view(false))
            }
            Err(e) => Err(unavailable("PutItem(redeem)", e)),
        }
    }

    async fn redemption(&self, event: &EventId, position: u64) -> Result<Option<Redemption>, StoreError> {
        let res = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(redemption_key(event, position)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable("GetItem(redemption)", e))?;
        match res.item() {
            Some(item) => {
                let r: RedemptionItem = decode(item, "redemption")?;
                Ok(Some(r.view(false)))
            }
            None => Ok(None),
        }
    }

    async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, StoreError> {
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let res = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(":pk", s(audit_pk(event)))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .set_limit(self.page_size)
                .send()
                .await
                .map_err(|e| unavailable("Query(audit)", e))?;
            for item in res.items() {
                let it: AuditItem = decode(item, "audit item")?;
                let json = |t: &str| {
                    serde_json::from_str(t).map_err(|e| StoreError::Corrupt(format!("audit item: {e}")))
                };
                out.push(AuditEntry {
                    seq: it.seq,
                    at: it.at,
                    actor: it.actor,
                    action: it.action,
                    before: json(&it.before)?,
                    after: json(&it.after)?,
                });
            }
            match res.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => break,
            }
        }
        Ok(out)
    }

    async fn renew(
        &self,
        event: &EventId,
        position: u64,
        current_exp: u64,
        iat: u64,
        exp: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(redemption_key(event, position)))
            .update_expression("SET tokenIat = :iat, tokenExp = :exp")
            .condition_expression(
                "attribute_exists(pk) AND (attribute_not_exists(tokenExp) OR tokenExp = :cur)",
            )
            .expression_attribute_values(":iat", n(iat))
            .expression_attribute_values(":exp", n(exp))
            .expression_attribute_values(":cur", n(current_exp))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match res {
            Ok(out) => {
                let item =
                    out.attributes().ok_or_else(|| StoreError::Corrupt("renew returned nothing".into()))?;
                Ok(Some(decode::<RedemptionItem>(item, "redemption")?.view(true)))
            }
            // Never admitted, or another renewal won: answer what is stored now.
            Err(e) if is_condition_failed(&e) => self.redemption(event, position).await,
            Err(e) => Err(unavailable("UpdateItem(renew)", e)),
        }
    }

    async fn release(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(redemption_key(event, position)))
            .update_expression("SET releasedAt = :now")
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(releasedAt) AND jti = :jti")
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":jti", s(jti))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        let item = match res {
            Ok(out) => out
                .attributes()
                .cloned()
                .ok_or_else(|| StoreError::Corrupt("release returned nothing".into()))?,
            Err(e) if is_condition_failed(&e) => return self.redemption(event, position).await,
            Err(e) => return Err(unavailable("UpdateItem(release)", e)),
        };
        // The release is recorded; only the count that hands the place on can miss one.
        self.count_on_shard(event, position, shards, ShardCount::Released).await;
        Ok(Some(decode::<RedemptionItem>(&item, "redemption")?.view(true)))
    }

    async fn account_ticket(&self, event: &EventId, account: &str) -> Result<Option<String>, StoreError> {
        let res = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(account_key(event, account)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable("GetItem(account)", e))?;
        #[derive(Deserialize)]
        struct AccountItem {
            ticket: String,
        }
        match res.item() {
            Some(item) => Ok(Some(decode::<AccountItem>(item, "account item")?.ticket)),
            None => Ok(None),
        }
    }

    async fn claim_account(
        &self,
        event: &EventId,
        account: &str,
        request_id: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut item = account_key(event, account);
        item.insert("ticket".into(), s(request_id));
        item.insert("expiresAt".into(), n(expires_at));
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        match res {
            Ok(_) => Ok(None),
            Err(e) if is_condition_failed(&e) => match self.account_ticket(event, account).await? {
                Some(t) => Ok(Some(t)),
                None => Err(StoreError::Unavailable("account item vanished".into())),
            },
            Err(e) => Err(unavailable("PutItem(account)", e)),
        }
    }

    async fn replace_account_ticket(
        &self,
        event: &EventId,
        account: &str,
        old: &str,
        new: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut item = account_key(event, account);
        item.insert("ticket".into(), s(new));
        item.insert("expiresAt".into(), n(expires_at));
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk) OR ticket = :old")
            .expression_attribute_values(":old", s(old))
            .send()
            .await;
        match res {
            Ok(_) => Ok(None),
            Err(e) if is_condition_failed(&e) => match self.account_ticket(event, account).await? {
                Some(t) => Ok(Some(t)),
                None => Err(StoreError::Unavailable("account item vanished".into())),
            },
            Err(e) => Err(unavailable("PutItem(account replace)", e)),
        }
    }

    async fn use_proof_once(
        &self,
        event: &EventId,
        key: &str,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, StoreError> {
        let mut item = proof_key(event, key);
        item.insert("expiresAt".into(), n(expires_at));
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk) OR expiresAt <= :now")
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failed(&e) => Ok(false),
            Err(e) => Err(unavailable("PutItem(proof)", e)),
        }
    }

    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError> {
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let res = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(ACTIVE_INDEX)
                .key_condition_expression("gsi1pk = :a")
                .expression_attribute_values(":a", s(ACTIVE))
                .set_exclusive_start_key(start.take())
                .set_limit(self.page_size)
                .send()
                .await
                .map_err(|e| unavailable("Query(active)", e))?;
            for item in res.items() {
                match parse_event(item) {
                    Ok(r) if r.active() => out.push(r),
                    Ok(_) => {}
                    Err(e) => tracing::error!(event = "tier1.corrupt_event_item", error = %e),
                }
            }
            match res.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => break,
            }
        }
        Ok(out)
    }
}
