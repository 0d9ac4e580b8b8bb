//! The durable copy of tier-2 registrations (threshold, line order, unregistration), so that
//! losing Redis (a failover without persistence, a FLUSHALL) never silently raises an event's
//! threshold to the default: the service re-hydrates a missing registration from here.
//! In AWS it is one item per event in the tier-1 DynamoDB table (`pk = EVT#{eventId}`,
//! `sk = T2`); locally and in tests an in-memory map.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use vwr_core::EventId;

use crate::model::{LineOrder, StoreError};

/// A registration as kept durably.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub threshold: u64,
    pub order: LineOrder,
    /// Unregistered by an admin: never re-created implicitly.
    pub removed: bool,
}

/// Where registrations are kept durably.
#[async_trait]
pub trait Registry: Send + Sync + 'static {
    async fn get(&self, event: &EventId) -> Result<Option<Registration>, StoreError>;

    /// Admin: sets the threshold (lifting any unregistration); the line order is kept from
    /// the first registration. Returns the registration in force.
    async fn set(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError>;

    /// Implicit registration: creates the record only if there is none; returns what is
    /// in force (possibly an admin's, or a tombstone).
    async fn create(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError>;

    /// Admin: marks the event unregistered.
    async fn remove(&self, event: &EventId) -> Result<(), StoreError>;
}

/// In-memory registry (local runs, tests, and Lambdas without `VWR_TABLE`, where Redis is
/// then the only copy).
#[derive(Debug, Default)]
pub struct MemoryRegistry {
    map: Mutex<HashMap<EventId, Registration>>,
}

impl MemoryRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<EventId, Registration>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl Registry for MemoryRegistry {
    async fn get(&self, event: &EventId) -> Result<Option<Registration>, StoreError> {
        Ok(self.lock().get(event).copied())
    }

    async fn set(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError> {
        let mut m = self.lock();
        let order = m.get(event).map_or(order, |r| r.order);
        let reg = Registration { threshold, order, removed: false };
        m.insert(event.clone(), reg);
        Ok(reg)
    }

    async fn create(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<Registration, StoreError> {
        Ok(*self.lock().entry(event.clone()).or_insert(Registration { threshold, order, removed: false }))
    }

    async fn remove(&self, event: &EventId) -> Result<(), StoreError> {
        let mut m = self.lock();
        let reg = m.get(event).copied().unwrap_or(Registration {
            threshold: crate::model::DEFAULT_THRESHOLD,
            order: LineOrder::Arrival,
            removed: true,
        });
        m.insert(event.clone(), Registration { removed: true, ..reg });
        Ok(())
    }
}

/// Registrations in the tier-1 DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoRegistry {
    client: aws_sdk_dynamodb::Client,
    table: String,
}

type Item = HashMap<String, AttributeValue>;

fn key(event: &EventId) -> Item {
    HashMap::from([
        ("pk".to_owned(), AttributeValue::S(format!("EVT#{event}"))),
        ("sk".to_owned(), AttributeValue::S("T2".to_owned())),
    ])
}

fn unavailable<E: ProvideErrorMetadata + std::error::Error + 'static, R: std::fmt::Debug>(
    op: &str,
    e: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> StoreError {
    let detail = format!("{op}: {}", aws_sdk_dynamodb::error::DisplayErrorContext(e));
    tracing::warn!(event = "tier2.registry_error", op, error = %detail);
    StoreError::Unavailable(detail)
}

fn parse(item: &Item) -> Result<Registration, StoreError> {
    let threshold = match item.get("threshold") {
        Some(AttributeValue::N(n)) => {
            n.parse().map_err(|_| StoreError::Protocol(format!("threshold {n}")))?
        }
        _ => return Err(StoreError::Protocol("registration without threshold".into())),
    };
    let order = match item.get("lineOrder") {
        Some(AttributeValue::S(o)) => {
            LineOrder::parse(o).ok_or_else(|| StoreError::Protocol(format!("lineOrder {o}")))?
        }
        _ => return Err(StoreError::Protocol("registration without lineOrder".into())),
    };
    let removed = matches!(item.get("removed"), Some(AttributeValue::Bool(true)));
    Ok(Registration { threshold, order, removed })
}

impl DynamoRegistry {
    pub fn new(client: aws_sdk_dynamodb::Client, table: impl Into<String>) -> Self {
        Self { client, table: table.into() }
    }

    async fn update(
        &self,
        event: &EventId,
        expr: &str,
        values: Item,
        op: &str,
    ) -> Result<Registration, StoreError> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(event)))
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
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(event)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable("GetItem(registration)", &e))?;
        out.item().map(parse).transpose()
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
            (":t".to_owned(), AttributeValue::N(crate::model::DEFAULT_THRESHOLD.to_string())),
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
