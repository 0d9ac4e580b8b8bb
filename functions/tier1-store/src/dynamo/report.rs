//! The report's minutes (docs/operate.md#the-report-after-the-sale): one item per event and
//! minute, `EVT#{e}#M` / `{minute:010}`, to which each instance adds its counts with one
//! `UpdateItem` of `ADD`s — atomic, so instances flushing the same minute never lose each
//! other's counts. Counters are top-level numbers (`ADD` takes no nested map path that may be
//! missing): `joins`, `served`, `redeemed`, `released`, `w{bucket}` for the wait histogram and
//! `r_{code}` for refusals; `expiresAt` lets DynamoDB drop the item after 90 days.

use std::collections::BTreeMap;

use vwr_core::EventId;
use vwr_core::tally::Counts;
use vwr_tier1::model::StoreError;
use vwr_tier1::report::MinuteCounts;

use super::items::{Item, n, report_key, report_pk};
use super::{DynamoStore, unavailable};

const COUNTERS: [&str; 4] = ["joins", "served", "redeemed", "released"];

pub(super) async fn add_minute(
    store: &DynamoStore,
    event: &EventId,
    minute: u64,
    c: &MinuteCounts,
    expires_at: u64,
) -> Result<(), StoreError> {
    if c.is_empty() {
        return Ok(());
    }
    let mut adds: Vec<(String, u64)> = COUNTERS
        .iter()
        .zip([c.joins, c.served, c.redeemed, c.released])
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| ((*k).to_owned(), v))
        .collect();
    adds.extend(c.waits.iter().map(|(b, v)| (format!("w{b}"), *v)));
    for (code, v) in &c.refusals {
        // Error codes are snake_case words; anything else could not be an attribute alias.
        if !code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())
        {
            adds.push((format!("r_{code}"), *v));
        }
    }
    let mut req =
        store.client.update_item().table_name(&store.table).set_key(Some(report_key(event, minute)));
    let mut parts = Vec::with_capacity(adds.len());
    for (i, (attr, v)) in adds.iter().enumerate() {
        parts.push(format!("#a{i} :a{i}"));
        req = req
            .expression_attribute_names(format!("#a{i}"), attr)
            .expression_attribute_values(format!(":a{i}"), n(v));
    }
    req.update_expression(format!("ADD {} SET #exp = :exp, #min = :min", parts.join(", ")))
        .expression_attribute_names("#exp", "expiresAt")
        .expression_attribute_names("#min", "minute")
        .expression_attribute_values(":exp", n(expires_at))
        .expression_attribute_values(":min", n(minute))
        .send()
        .await
        .map_err(|e| unavailable("UpdateItem(report)", e))?;
    Ok(())
}

pub(super) async fn minutes(
    store: &DynamoStore,
    event: &EventId,
) -> Result<Vec<(u64, MinuteCounts)>, StoreError> {
    store.partition(report_pk(event), "Query(report)").await?.iter().map(parse).collect()
}

fn parse(item: &Item) -> Result<(u64, MinuteCounts), StoreError> {
    let num = |k: &str, v: &aws_sdk_dynamodb::types::AttributeValue| {
        v.as_n()
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or_else(|| StoreError::Corrupt(format!("report item: {k} is not a count")))
    };
    let mut c = MinuteCounts::default();
    let mut minute = None;
    let mut waits = BTreeMap::new();
    for (k, v) in item {
        match k.as_str() {
            "pk" | "sk" | "expiresAt" => {}
            "minute" => minute = Some(num(k, v)?),
            "joins" => c.joins = num(k, v)?,
            "served" => c.served = num(k, v)?,
            "redeemed" => c.redeemed = num(k, v)?,
            "released" => c.released = num(k, v)?,
            _ => {
                if let Some(b) = k.strip_prefix('w').and_then(|b| b.parse::<u32>().ok()) {
                    waits.insert(b, num(k, v)?);
                } else if let Some(code) = k.strip_prefix("r_") {
                    c.refusals.insert(code.to_owned(), num(k, v)?);
                }
            }
        }
    }
    c.waits = waits;
    let minute = minute.ok_or_else(|| StoreError::Corrupt("report item without its minute".into()))?;
    Ok((minute, c))
}
