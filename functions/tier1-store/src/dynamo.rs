//! DynamoDB position store.
//!
//! One table (`pk`, `sk` strings) with a sparse global secondary index for active events:
//! - event item `pk = EVT#{e}`, `sk = META`: configuration, `servingCounter`, `lastStepAt`,
//!   `samples` (JSON), `active`, and `gsi1pk = ACTIVE` only while active;
//! - shard items `pk = EVT#{e}#S#{k}`, `sk = S`: `n` (positions handed out), `r` (redeemed).
//!   Each shard has its own partition key, so N shards take N × an item's write rate;
//! - redemption items `pk = EVT#{e}#R#{position}`, `sk = R`: `jti`, `at`, `expiresAt` (TTL).

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    KeysAndAttributes, Projection, ProjectionType, ReturnValue, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType, TableStatus, TimeToLiveSpecification,
};
use serde::Deserialize;
use vwr_core::EventId;
use vwr_tier1::model::{
    ConfigPatch, EventConfig, EventRecord, Redemption, Sample, ShardCounts, StoreError, shard_of,
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

/// The event item as stored (`serde_dynamo` reads it; absent numbers are 0).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventItem {
    event_id: String,
    #[serde(default)]
    active: bool,
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

/// A shard item: positions handed out (`n`) and redeemed (`r`).
#[derive(Debug, Deserialize)]
struct ShardItem {
    pk: String,
    #[serde(default)]
    n: u64,
    #[serde(default)]
    r: u64,
}

/// A redemption item: the first admission of a position.
#[derive(Debug, Deserialize)]
struct RedemptionItem {
    jti: String,
    #[serde(default)]
    at: u64,
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
    Ok(EventRecord {
        event,
        active: it.active,
        config: EventConfig {
            batch_size: it.batch_size,
            interval_seconds: it.interval_seconds.max(1),
            shards: it.shards.max(1),
            token_ttl_seconds: it.token_ttl_seconds,
        },
        serving_counter: it.serving_counter,
        last_step_at: it.last_step_at,
        samples,
        created_at: it.created_at,
        updated_at: it.updated_at,
    })
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

    async fn activate(
        &self,
        event: &EventId,
        patch: ConfigPatch,
        now: u64,
    ) -> Result<EventRecord, StoreError> {
        let d = EventConfig::default();
        let mut sets = vec![
            "active = :t".to_owned(),
            "gsi1pk = :act".to_owned(),
            "gsi1sk = :eid".to_owned(),
            "eventId = :eid".to_owned(),
            "updatedAt = :now".to_owned(),
            "createdAt = if_not_exists(createdAt, :now)".to_owned(),
            "servingCounter = if_not_exists(servingCounter, :zero)".to_owned(),
            "lastStepAt = if_not_exists(lastStepAt, :zero)".to_owned(),
            "shards = if_not_exists(shards, :shards)".to_owned(),
        ];
        let mut values: Item = HashMap::from([
            (":t".to_owned(), AttributeValue::Bool(true)),
            (":act".to_owned(), s(ACTIVE)),
            (":eid".to_owned(), s(event.as_str())),
            (":now".to_owned(), n(now)),
            (":zero".to_owned(), n(0)),
            (":shards".to_owned(), n(patch.shards.unwrap_or(d.shards))),
        ]);
        let fields = [
            ("batchSize", patch.batch_size, d.batch_size),
            ("intervalSeconds", patch.interval_seconds, d.interval_seconds),
            ("tokenTtlSeconds", patch.token_ttl_seconds, d.token_ttl_seconds),
        ];
        for (name, given, default) in fields {
            match given {
                Some(v) => {
                    sets.push(format!("{name} = :{name}"));
                    values.insert(format!(":{name}"), n(v));
                }
                None => {
                    sets.push(format!("{name} = if_not_exists({name}, :{name})"));
                    values.insert(format!(":{name}"), n(default));
                }
            }
        }
        let mut req = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .update_expression(format!("SET {}", sets.join(", ")))
            .set_expression_attribute_values(Some(values))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        if patch.shards.is_some() {
            req = req.condition_expression("attribute_not_exists(pk) OR shards = :shards");
        }
        match req.send().await {
            Ok(out) => {
                let item = out
                    .attributes()
                    .ok_or_else(|| StoreError::Corrupt("UpdateItem returned nothing".into()))?;
                parse_event(item)
            }
            Err(e) if is_condition_failed(&e) => {
                let current = match self.get_event(event).await? {
                    Some(r) => r.config.shards,
                    None => 0,
                };
                Err(StoreError::ShardsImmutable { current })
            }
            Err(e) => Err(unavailable("UpdateItem(activate)", e)),
        }
    }

    async fn deactivate(&self, event: &EventId, now: u64) -> Result<EventRecord, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .update_expression("SET active = :f, updatedAt = :now REMOVE gsi1pk, gsi1sk")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":f", AttributeValue::Bool(false))
            .expression_attribute_values(":now", n(now))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match res {
            Ok(out) => parse_event(out.attributes().ok_or(StoreError::NotFound)?),
            Err(e) if is_condition_failed(&e) => Err(StoreError::NotFound),
            Err(e) => Err(unavailable("UpdateItem(deactivate)", e)),
        }
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

    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        let keys = (1..=u64::from(shards)).map(|k| shard_key(event, k)).collect();
        let items = self.batch_get(keys).await?;
        let mut counts = ShardCounts { issued: vec![0; shards as usize], redeemed: vec![0; shards as usize] };
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
        }
        Ok(counts)
    }

    async fn update_serving(&self, event: &EventId, u: ServingUpdate) -> Result<bool, StoreError> {
        let samples = serde_json::to_string(&u.samples).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut req = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(event_key(event)))
            .expression_attribute_values(":old", n(u.expected))
            .expression_attribute_values(":new", n(u.new))
            .expression_attribute_values(":samples", s(samples))
            .expression_attribute_values(":now", n(u.now));
        req = match u.step {
            Some(step) => req
                .update_expression(
                    "SET servingCounter = :new, samples = :samples, updatedAt = :now, lastStepAt = :step",
                )
                .condition_expression(
                    "servingCounter = :old AND active = :t AND (attribute_not_exists(lastStepAt) OR lastStepAt < :step)",
                )
                .expression_attribute_values(":step", n(step))
                .expression_attribute_values(":t", AttributeValue::Bool(true)),
            None => req
                .update_expression("SET servingCounter = :new, samples = :samples, updatedAt = :now")
                .condition_expression("servingCounter = :old"),
        };
        match req.send().await {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failed(&e) => Ok(false),
            Err(e) => Err(unavailable("UpdateItem(serving)", e)),
        }
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
                let shard = shard_of(position, u64::from(shards.max(1)));
                let counted = self
                    .client
                    .update_item()
                    .table_name(&self.table)
                    .set_key(Some(shard_key(event, shard)))
                    .update_expression("ADD r :one")
                    .expression_attribute_values(":one", n(1))
                    .send()
                    .await;
                if let Err(e) = counted {
                    // The redemption itself is recorded; only the statistic misses one.
                    tracing::warn!(event = "tier1.redeem_count_failed", event_id = %event, error = %unavailable("UpdateItem(redeemed)", e));
                }
                Ok(Redemption { jti: jti.to_owned(), redeemed_at: now, fresh: true })
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
                Ok(Redemption { jti: old.jti, redeemed_at: old.at, fresh: false })
            }
            Err(e) => Err(unavailable("PutItem(redeem)", e)),
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
                    Ok(r) if r.active => out.push(r),
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
