//! In-memory position store: the local default and the model of the DynamoDB store.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{ConfigPatch, EventConfig, EventRecord, Redemption, ShardCounts, StoreError, shard_of};
use crate::store::{PositionStore, ServingUpdate};

#[derive(Default)]
struct State {
    events: HashMap<EventId, EventRecord>,
    /// (event, shard) → (issued, redeemed)
    shards: HashMap<(EventId, u32), (u64, u64)>,
    /// (event, position) → (jti, redeemed_at)
    redemptions: HashMap<(EventId, u64), (String, u64)>,
}

/// A process-local store guarded by one mutex (every operation is atomic).
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-done operation: every operation
        // computes first and writes last. Recover the guard instead of propagating poison.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl PositionStore for MemoryStore {
    async fn get_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError> {
        Ok(self.lock().events.get(event).cloned())
    }

    async fn activate(
        &self,
        event: &EventId,
        patch: ConfigPatch,
        now: u64,
    ) -> Result<EventRecord, StoreError> {
        let mut st = self.lock();
        let rec = match st.events.get(event) {
            Some(old) => {
                if let Some(s) = patch.shards
                    && s != old.config.shards
                {
                    return Err(StoreError::ShardsImmutable { current: old.config.shards });
                }
                EventRecord { active: true, config: patch.apply(old.config), updated_at: now, ..old.clone() }
            }
            None => {
                let mut config = patch.apply(EventConfig::default());
                config.shards = patch.shards.unwrap_or(config.shards);
                EventRecord {
                    event: event.clone(),
                    active: true,
                    config,
                    serving_counter: 0,
                    last_step_at: 0,
                    samples: Vec::new(),
                    created_at: now,
                    updated_at: now,
                }
            }
        };
        st.events.insert(event.clone(), rec.clone());
        Ok(rec)
    }

    async fn deactivate(&self, event: &EventId, now: u64) -> Result<EventRecord, StoreError> {
        let mut st = self.lock();
        let rec = st.events.get_mut(event).ok_or(StoreError::NotFound)?;
        rec.active = false;
        rec.updated_at = now;
        Ok(rec.clone())
    }

    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError> {
        let mut st = self.lock();
        let entry = st.shards.entry((event.clone(), shard)).or_default();
        entry.0 += 1;
        Ok(entry.0)
    }

    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        let st = self.lock();
        let mut c = ShardCounts::default();
        for k in 1..=shards {
            let (i, r) = st.shards.get(&(event.clone(), k)).copied().unwrap_or_default();
            c.issued.push(i);
            c.redeemed.push(r);
        }
        Ok(c)
    }

    async fn update_serving(&self, event: &EventId, u: ServingUpdate) -> Result<bool, StoreError> {
        let mut st = self.lock();
        let Some(rec) = st.events.get_mut(event) else {
            return Ok(false);
        };
        if rec.serving_counter != u.expected {
            return Ok(false);
        }
        if let Some(step) = u.step {
            if !rec.active || rec.last_step_at >= step {
                return Ok(false);
            }
            rec.last_step_at = step;
        }
        rec.serving_counter = u.new;
        rec.samples = u.samples;
        rec.updated_at = u.now;
        Ok(true)
    }

    async fn redeem(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
        _expires_at: u64,
    ) -> Result<Redemption, StoreError> {
        let mut st = self.lock();
        let key = (event.clone(), position);
        if let Some((jti, at)) = st.redemptions.get(&key) {
            return Ok(Redemption { jti: jti.clone(), redeemed_at: *at, fresh: false });
        }
        st.redemptions.insert(key, (jti.to_owned(), now));
        let shard = shard_of(position, u64::from(shards.max(1)));
        let shard = u32::try_from(shard).map_err(|_| StoreError::Corrupt("shard out of range".into()))?;
        st.shards.entry((event.clone(), shard)).or_default().1 += 1;
        Ok(Redemption { jti: jti.to_owned(), redeemed_at: now, fresh: true })
    }

    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError> {
        let st = self.lock();
        let mut v: Vec<EventRecord> = st.events.values().filter(|r| r.active).cloned().collect();
        v.sort_by(|a, b| a.event.cmp(&b.event));
        Ok(v)
    }
}
