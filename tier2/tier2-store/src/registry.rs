//! The durable copy of tier-2 registrations in the tier-1 DynamoDB table: one item per event,
//! `pk = EVT#{eventId}#T2`, `sk = T2`, with `threshold`, `lineOrder` and `removed`. A partition
//! of its own, so that an IAM condition on `dynamodb:LeadingKeys` lets the tier-2 role write it
//! and no tier-1 item (docs/invariants.md#24). Items written before under `pk = EVT#{eventId}`
//! (the tier-1 event's partition) are still read, and moved on the next write. Why tier 1's
//! table rather than one of tier 2's: docs/adr/0025-tier2-registrations-in-the-tier1-table.md.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use vwr_core::EventId;
use vwr_tier2::model::{DEFAULT_THRESHOLD, LineOrder, StoreError};
use vwr_tier2::registry::{Registration, Registry};

/// Registrations in the tier-1 DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoRegistry {
    client: aws_sdk_dynamodb::Client,
    table: String,
}

type Item = HashMap<String, AttributeValue>;

/// A key as the SDK takes it. Both key builders below go through here, so each pattern is one
/// line that docs/data.md names (the contract test compares them).
fn key(pk: String, sk: &str) -> Item {
    HashMap::from([
        ("pk".to_owned(), AttributeValue::S(pk)),
        ("sk".to_owned(), AttributeValue::S(sk.to_owned())),
    ])
}

/// The registration of event `e`, `EVT#{e}#T2` / `T2`: a partition of its own, because IAM
/// conditions see the partition key alone — the tier-2 role's `dynamodb:LeadingKeys` grant
/// (`EVT#*#T2`) then covers this item and no tier-1 item
/// (docs/adr/0025-tier2-registrations-in-the-tier1-table.md).
fn registration_key(e: &EventId) -> Item {
    key(format!("EVT#{e}#T2"), "T2")
}

/// Where registrations were kept before they had a partition of their own, `EVT#{e}` / `T2`
/// (the tier-1 event's partition): read, and copied to the new key by the next write; never
/// written.
fn legacy_registration_key(e: &EventId) -> Item {
    key(format!("EVT#{e}"), "T2")
}

fn unavailable<E: ProvideErrorMetadata + std::error::Error + 'static, R: std::fmt::Debug>(
    op: &str,
    e: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> StoreError {
    let detail = format!("{op}: {}", aws_sdk_dynamodb::error::DisplayErrorContext(e));
    tracing::warn!(event = "tier2.registry_error", op, error = %detail);
    StoreError::Unavailable(detail)
}

/// The registration item as stored.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct RegistrationItem {
    threshold: u64,
    line_order: String,
    #[serde(default)]
    removed: bool,
}

fn parse(item: &Item) -> Result<Registration, StoreError> {
    let it: RegistrationItem = serde_dynamo::from_item(item.clone())
        .map_err(|e| StoreError::Protocol(format!("registration item: {e}")))?;
    let order = LineOrder::parse(&it.line_order)
        .ok_or_else(|| StoreError::Protocol(format!("lineOrder {}", it.line_order)))?;
    Ok(Registration { threshold: it.threshold, order, removed: it.removed })
}

impl DynamoRegistry {
    pub fn new(client: aws_sdk_dynamodb::Client, table: impl Into<String>) -> Self {
        Self { client, table: table.into() }
    }

    async fn read(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable("GetItem(registration)", &e))?;
        Ok(out.item().cloned())
    }

    /// Copies a registration kept under the old key to its own partition, unless one is there
    /// already, so a write never loses its line order or tombstone.
    async fn move_legacy(&self, event: &EventId) -> Result<(), StoreError> {
        if self.read(registration_key(event)).await?.is_some() {
            return Ok(());
        }
        let Some(mut item) = self.read(legacy_registration_key(event)).await? else {
            return Ok(());
        };
        item.extend(registration_key(event));
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        match put {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_conditional_check_failed_exception()) => {
                Ok(())
            }
            Err(e) => Err(unavailable("PutItem(registration)", &e)),
        }
    }

    async fn update(
        &self,
        event: &EventId,
        expr: &str,
        values: Item,
        op: &str,
    ) -> Result<Registration, StoreError> {
        self.move_legacy(event).await?;
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(registration_key(event)))
            .update_expression(expr)
            .set_expression_attribute_values(Some(values))
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .map_err(|e| unavailable(op, &e))?;
        parse(out.attributes().ok_or_else(|| StoreError::Protocol("UpdateItem returned nothing".into()))?)
    }
}

#[async_trait]
impl Registry for DynamoRegistry {
    async fn get(&self, event: &EventId) -> Result<Option<Registration>, StoreError> {
        let item = match self.read(registration_key(event)).await? {
            Some(item) => Some(item),
            None => self.read(legacy_registration_key(event)).await?,
        };
        item.as_ref().map(parse).transpose()
    }

    async fn set(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError> {
        let values = HashMap::from([
            (":t".to_owned(), AttributeValue::N(threshold.to_string())),
            (":o".to_owned(), AttributeValue::S(order.as_str().to_owned())),
            (":f".to_owned(), AttributeValue::Bool(false)),
        ]);
        self.update(
            event,
            "SET threshold = :t, lineOrder = if_not_exists(lineOrder, :o), removed = :f",
            values,
            "UpdateItem(registration)",
        )
        .await
    }

    async fn create(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError> {
        let values = HashMap::from([
            (":t".to_owned(), AttributeValue::N(threshold.to_string())),
            (":o".to_owned(), AttributeValue::S(order.as_str().to_owned())),
            (":f".to_owned(), AttributeValue::Bool(false)),
        ]);
        self.update(
            event,
            "SET threshold = if_not_exists(threshold, :t), lineOrder = if_not_exists(lineOrder, :o), \
             removed = if_not_exists(removed, :f)",
            values,
            "UpdateItem(registration)",
        )
        .await
    }

    async fn remove(&self, event: &EventId) -> Result<(), StoreError> {
        let values = HashMap::from([
            (":t".to_owned(), AttributeValue::N(DEFAULT_THRESHOLD.to_string())),
            (":o".to_owned(), AttributeValue::S(LineOrder::Arrival.as_str().to_owned())),
            (":r".to_owned(), AttributeValue::Bool(true)),
        ]);
        self.update(
            event,
            "SET removed = :r, threshold = if_not_exists(threshold, :t), lineOrder = if_not_exists(lineOrder, :o)",
            values,
            "UpdateItem(registration)",
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pk_sk(item: &Item) -> (&str, &str) {
        (item["pk"].as_s().unwrap(), item["sk"].as_s().unwrap())
    }

    /// Stored keys never change shape: registrations written by an older release must still be
    /// found, and the IAM grant (`EVT#*#T2`) names this one.
    #[test]
    fn keys_keep_their_stored_shape() {
        let e = EventId::parse("sale-1").unwrap();
        assert_eq!(pk_sk(&registration_key(&e)), ("EVT#sale-1#T2", "T2"));
        assert_eq!(pk_sk(&legacy_registration_key(&e)), ("EVT#sale-1", "T2"));
    }
}
