//! The durable copy of tier-2 registrations (threshold, line order, unregistration), so that
//! losing Redis (a failover without persistence, a FLUSHALL) never silently raises an event's
//! threshold to the default: the service re-hydrates a missing registration from here.
//! In AWS it is one item per event in the tier-1 DynamoDB table (`vwr_tier2_store::registry`);
//! locally and in tests an in-memory map.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
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
