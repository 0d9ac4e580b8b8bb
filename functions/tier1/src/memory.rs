//! In-memory position store: the local default and the model of the DynamoDB store.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{AuditEntry, EventRecord, Redemption, ShardCounts, StoreError, shard_of};
use crate::report::MinuteCounts;
use crate::store::{PositionStore, ServingUpdate};

#[derive(Debug, Default, Clone, Copy)]
struct Shard {
    issued: u64,
    redeemed: u64,
    pre: u64,
    released: u64,
    sealed: bool,
}

#[derive(Debug, Clone)]
struct Red {
    jti: String,
    at: u64,
    token: Option<(u64, u64)>,
    released_at: Option<u64>,
}

impl Red {
    fn view(&self, fresh: bool) -> Redemption {
        Redemption {
            jti: self.jti.clone(),
            redeemed_at: self.at,
            token: self.token,
            released_at: self.released_at,
            fresh,
        }
    }
}

#[derive(Default)]
struct State {
    events: HashMap<EventId, EventRecord>,
    shards: HashMap<(EventId, u32), Shard>,
    redemptions: HashMap<(EventId, u64), Red>,
    audit: HashMap<EventId, Vec<AuditEntry>>,
    /// (event, account digest) → ticket
    accounts: HashMap<(EventId, String), String>,
    /// (event, proof digest) → until when it is used
    proofs: HashMap<(EventId, String), u64>,
    /// Size of `proofs` at which the expired ones are swept next.
    proofs_sweep_at: usize,
    /// The report's minutes (no expiry here: a process lives less than 90 days).
    reports: vwr_core::tally::Minutes<MinuteCounts>,
}

/// Used proofs kept before the expired ones are swept.
const PROOFS_SWEEP_AT: usize = 10_000;

fn shard_index(position: u64, shards: u32) -> Result<u32, StoreError> {
    u32::try_from(shard_of(position, u64::from(shards.max(1))))
        .map_err(|_| StoreError::Corrupt("shard out of range".into()))
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

    async fn write_event(
        &self,
        expected: Option<u64>,
        rec: &EventRecord,
        audit: &AuditEntry,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        if st.audit.get(&rec.event).is_some_and(|t| t.iter().any(|e| e.seq == audit.seq)) {
            return Ok(false);
        }
        let stored = st.events.get(&rec.event);
        let new = match (expected, stored) {
            (None, None) => EventRecord {
                serving_counter: 0,
                last_step_at: 0,
                samples: Vec::new(),
                prequeue_size: 0,
                issued_count: 0,
                created_at: rec.updated_at,
                ..rec.clone()
            },
            (Some(rev), Some(old)) if old.rev == rev => EventRecord {
                // Only the lifecycle fields: counters, samples and steps are the advancer's.
                serving_counter: old.serving_counter,
                last_step_at: old.last_step_at,
                samples: old.samples.clone(),
                prequeue_size: old.prequeue_size,
                issued_count: old.issued_count,
                created_at: old.created_at,
                ..rec.clone()
            },
            _ => return Ok(false),
        };
        st.events.insert(rec.event.clone(), new);
        st.audit.entry(rec.event.clone()).or_default().push(audit.clone());
        Ok(true)
    }

    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError> {
        let mut st = self.lock();
        let entry = st.shards.entry((event.clone(), shard)).or_default();
        entry.issued += 1;
        Ok(entry.issued)
    }

    async fn join_prequeue(&self, event: &EventId, shard: u32) -> Result<Option<u64>, StoreError> {
        let mut st = self.lock();
        let entry = st.shards.entry((event.clone(), shard)).or_default();
        if entry.sealed {
            return Ok(None);
        }
        entry.pre += 1;
        Ok(Some(entry.pre))
    }

    async fn seal(&self, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError> {
        let mut st = self.lock();
        Ok((1..=shards)
            .map(|k| {
                let entry = st.shards.entry((event.clone(), k)).or_default();
                entry.sealed = true;
                entry.pre
            })
            .collect())
    }

    async fn set_prequeue_size(&self, event: &EventId, size: u64, now: u64) -> Result<(), StoreError> {
        if let Some(rec) = self.lock().events.get_mut(event) {
            rec.prequeue_size = size;
            rec.updated_at = now;
        }
        Ok(())
    }

    async fn set_issued_count(&self, event: &EventId, issued: u64, now: u64) -> Result<(), StoreError> {
        if let Some(rec) = self.lock().events.get_mut(event) {
            rec.issued_count = issued;
            rec.updated_at = now;
        }
        Ok(())
    }

    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError> {
        let st = self.lock();
        let mut c = ShardCounts::default();
        for k in 1..=shards {
            let s = st.shards.get(&(event.clone(), k)).copied().unwrap_or_default();
            c.issued.push(s.issued);
            c.redeemed.push(s.redeemed);
            c.pre.push(s.pre);
            c.released.push(s.released);
        }
        Ok(c)
    }

    async fn update_serving(
        &self,
        event: &EventId,
        u: ServingUpdate,
        audit: Option<&AuditEntry>,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        if let Some(a) = audit
            && st.audit.get(event).is_some_and(|t| t.iter().any(|e| e.seq == a.seq))
        {
            return Ok(false);
        }
        let Some(rec) = st.events.get_mut(event) else {
            return Ok(false);
        };
        if rec.serving_counter != u.expected {
            return Ok(false);
        }
        if let Some(step) = u.step {
            if rec.state != crate::model::EventState::Open || rec.last_step_at >= step {
                return Ok(false);
            }
            rec.last_step_at = step;
        }
        rec.serving_counter = u.new;
        rec.samples = u.samples;
        rec.updated_at = u.now;
        if let Some(a) = audit {
            rec.audit_seq = a.seq;
            st.audit.entry(event.clone()).or_default().push(a.clone());
        }
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
        if let Some(r) = st.redemptions.get(&key) {
            return Ok(r.view(false));
        }
        let red = Red { jti: jti.to_owned(), at: now, token: None, released_at: None };
        let view = red.view(true);
        st.redemptions.insert(key, red);
        let shard = shard_index(position, shards)?;
        st.shards.entry((event.clone(), shard)).or_default().redeemed += 1;
        Ok(view)
    }

    async fn redemption(&self, event: &EventId, position: u64) -> Result<Option<Redemption>, StoreError> {
        Ok(self.lock().redemptions.get(&(event.clone(), position)).map(|r| r.view(false)))
    }

    async fn renew(
        &self,
        event: &EventId,
        position: u64,
        current_exp: u64,
        iat: u64,
        exp: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        let mut st = self.lock();
        let Some(r) = st.redemptions.get_mut(&(event.clone(), position)) else {
            return Ok(None);
        };
        // Without a stored token the current one is the first (`at + ttl`): the caller
        // computed `current_exp` from it.
        let stored_exp = r.token.map(|(_, e)| e);
        if stored_exp.is_none_or(|e| e == current_exp) {
            r.token = Some((iat, exp));
            return Ok(Some(r.view(true)));
        }
        Ok(Some(r.view(false)))
    }

    async fn release(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
    ) -> Result<Option<Redemption>, StoreError> {
        let mut st = self.lock();
        let Some(r) = st.redemptions.get_mut(&(event.clone(), position)) else {
            return Ok(None);
        };
        if r.released_at.is_some() || r.jti != jti {
            return Ok(Some(r.view(false)));
        }
        r.released_at = Some(now);
        let view = r.view(true);
        let shard = shard_index(position, shards)?;
        st.shards.entry((event.clone(), shard)).or_default().released += 1;
        Ok(Some(view))
    }

    async fn account_ticket(&self, event: &EventId, account: &str) -> Result<Option<String>, StoreError> {
        Ok(self.lock().accounts.get(&(event.clone(), account.to_owned())).cloned())
    }

    async fn claim_account(
        &self,
        event: &EventId,
        account: &str,
        request_id: &str,
        _expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut st = self.lock();
        let key = (event.clone(), account.to_owned());
        if let Some(t) = st.accounts.get(&key) {
            return Ok(Some(t.clone()));
        }
        st.accounts.insert(key, request_id.to_owned());
        Ok(None)
    }

    async fn replace_account_ticket(
        &self,
        event: &EventId,
        account: &str,
        old: &str,
        new: &str,
        _expires_at: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut st = self.lock();
        let key = (event.clone(), account.to_owned());
        match st.accounts.get(&key) {
            Some(t) if t != old => Ok(Some(t.clone())),
            _ => {
                st.accounts.insert(key, new.to_owned());
                Ok(None)
            }
        }
    }

    async fn use_proof_once(
        &self,
        event: &EventId,
        key: &str,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        if st.proofs.len() >= st.proofs_sweep_at.max(PROOFS_SWEEP_AT) {
            st.proofs.retain(|_, until| *until > now);
            st.proofs_sweep_at = 2 * st.proofs.len();
        }
        let key = (event.clone(), key.to_owned());
        if st.proofs.get(&key).is_some_and(|until| *until > now) {
            return Ok(false);
        }
        st.proofs.insert(key, expires_at);
        Ok(true)
    }

    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError> {
        let st = self.lock();
        let mut v: Vec<EventRecord> = st.events.values().filter(|r| r.active()).cloned().collect();
        v.sort_by(|a, b| a.event.cmp(&b.event));
        Ok(v)
    }

    async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, StoreError> {
        Ok(self.lock().audit.get(event).cloned().unwrap_or_default())
    }

    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &MinuteCounts,
        _expires_at: u64,
    ) -> Result<(), StoreError> {
        self.lock().reports.add(event, minute, counts);
        Ok(())
    }

    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, MinuteCounts)>, StoreError> {
        Ok(self.lock().reports.of(event))
    }
}
