//! The shard counters (regular and pre-queue joins, redeemed, released), the seal of a
//! pre-queue, and the redemption items: the admissions, their renewals and releases.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeValue, KeysAndAttributes, ReturnValue, ReturnValuesOnConditionCheckFailure,
};
use serde::Deserialize;
use vwr_core::EventId;
use vwr_tier1::model::{Redemption, ShardCounts, StoreError, shard_of};

use super::items::{Item, RedemptionItem, ShardItem, decode, n, redemption_key, s, shard_key};
use super::{DynamoStore, is_condition_failed, unavailable};

/// BatchGetItem takes at most 100 keys.
const BATCH_GET_MAX: usize = 100;

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

pub(super) async fn next_in_shard(
    store: &DynamoStore,
    event: &EventId,
    shard: u32,
) -> Result<u64, StoreError> {
    let out = store
        .client
        .update_item()
        .table_name(&store.table)
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

pub(super) async fn join_prequeue(
    store: &DynamoStore,
    event: &EventId,
    shard: u32,
) -> Result<Option<u64>, StoreError> {
    let res = store
        .client
        .update_item()
        .table_name(&store.table)
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

pub(super) async fn seal(store: &DynamoStore, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError> {
    let mut counts = Vec::with_capacity(shards as usize);
    for k in 1..=u64::from(shards) {
        // `ADD pq 0` creates the counter on a shard nobody joined, so the answer always
        // carries it; a sealed shard's `pq` never changes again.
        let out = store
            .client
            .update_item()
            .table_name(&store.table)
            .set_key(Some(shard_key(event, k)))
            .update_expression("SET sealed = :t ADD pq :zero")
            .expression_attribute_values(":t", AttributeValue::Bool(true))
            .expression_attribute_values(":zero", n(0))
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .map_err(|e| unavailable("UpdateItem(seal)", e))?;
        let attrs = out.attributes().ok_or_else(|| StoreError::Corrupt("seal returned nothing".into()))?;
        counts.push(decode::<ShardItem>(attrs, "shard item")?.pq);
    }
    Ok(counts)
}

pub(super) async fn shard_counts(
    store: &DynamoStore,
    event: &EventId,
    shards: u32,
) -> Result<ShardCounts, StoreError> {
    let keys: Vec<Item> = (1..=u64::from(shards)).map(|k| shard_key(event, k)).collect();
    // Which shard an item is, by its partition key (BatchGetItem answers in any order).
    let shard_of_pk: HashMap<String, usize> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, key)| Some((key.get("pk")?.as_s().ok()?.clone(), i)))
        .collect();
    let items = store.batch_get(keys).await?;
    let mut counts = ShardCounts {
        issued: vec![0; shards as usize],
        redeemed: vec![0; shards as usize],
        pre: vec![0; shards as usize],
        released: vec![0; shards as usize],
    };
    for item in &items {
        let it: ShardItem = decode(item, "shard item")?;
        let &i =
            shard_of_pk.get(&it.pk).ok_or_else(|| StoreError::Corrupt("unexpected shard item".into()))?;
        counts.issued[i] = it.n;
        counts.redeemed[i] = it.r;
        counts.pre[i] = it.pq;
        counts.released[i] = it.rl;
    }
    Ok(counts)
}

pub(super) async fn redeem(
    store: &DynamoStore,
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
    let res = store
        .client
        .put_item()
        .table_name(&store.table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(pk)")
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await;
    match res {
        Ok(_) => {
            // The redemption itself is recorded; only the statistic can miss one.
            store.count_on_shard(event, position, shards, ShardCount::Redeemed).await;
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
                aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(c) => {
                    c.item().cloned()
                }
                _ => None,
            }) {
                Some(item) => item,
                None => store
                    .client
                    .get_item()
                    .table_name(&store.table)
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

pub(super) async fn redemption(
    store: &DynamoStore,
    event: &EventId,
    position: u64,
) -> Result<Option<Redemption>, StoreError> {
    let res = store
        .client
        .get_item()
        .table_name(&store.table)
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

pub(super) async fn renew(
    store: &DynamoStore,
    event: &EventId,
    position: u64,
    current_exp: u64,
    iat: u64,
    exp: u64,
) -> Result<Option<Redemption>, StoreError> {
    let res = store
        .client
        .update_item()
        .table_name(&store.table)
        .set_key(Some(redemption_key(event, position)))
        .update_expression("SET tokenIat = :iat, tokenExp = :exp")
        .condition_expression("attribute_exists(pk) AND (attribute_not_exists(tokenExp) OR tokenExp = :cur)")
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
        Err(e) if is_condition_failed(&e) => redemption(store, event, position).await,
        Err(e) => Err(unavailable("UpdateItem(renew)", e)),
    }
}

pub(super) async fn release(
    store: &DynamoStore,
    event: &EventId,
    position: u64,
    shards: u32,
    jti: &str,
    now: u64,
) -> Result<Option<Redemption>, StoreError> {
    let res = store
        .client
        .update_item()
        .table_name(&store.table)
        .set_key(Some(redemption_key(event, position)))
        .update_expression("SET releasedAt = :now")
        .condition_expression("attribute_exists(pk) AND attribute_not_exists(releasedAt) AND jti = :jti")
        .expression_attribute_values(":now", n(now))
        .expression_attribute_values(":jti", s(jti))
        .return_values(ReturnValue::AllNew)
        .send()
        .await;
    let item = match res {
        Ok(out) => {
            out.attributes().cloned().ok_or_else(|| StoreError::Corrupt("release returned nothing".into()))?
        }
        Err(e) if is_condition_failed(&e) => return redemption(store, event, position).await,
        Err(e) => return Err(unavailable("UpdateItem(release)", e)),
    };
    // The release is recorded; only the count that hands the place on can miss one.
    store.count_on_shard(event, position, shards, ShardCount::Released).await;
    Ok(Some(decode::<RedemptionItem>(&item, "redemption")?.view(true)))
}
