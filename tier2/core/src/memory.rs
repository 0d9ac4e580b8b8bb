//! In-memory admission store: the local default and the model of the Redis store. Each
//! operation mirrors one Lua script and runs under one lock.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use vwr_core::EventId;
use vwr_core::time::Clock;

use crate::model::{
    Admission, AdmitReport, Admitted, Cleaned, EventMeta, Figures, Left, LineOrder, LineScore, PendingNotice,
    Place, Snapshot, StoreError, Tier2Settings,
};
use crate::ranked::RankedSet;
use crate::store::AdmissionStore;

/// A sorted set: members with scores, ordered by (score, member).
#[derive(Default)]
struct ZSet {
    order: RankedSet,
    scores: HashMap<String, u64>,
}

impl ZSet {
    fn score(&self, m: &str) -> Option<u64> {
        self.scores.get(m).copied()
    }

    fn add(&mut self, score: u64, m: &str) {
        if let Some(old) = self.scores.insert(m.to_owned(), score) {
            self.order.remove(old, m);
        }
        self.order.insert(score, m.to_owned());
    }

    fn add_nx(&mut self, score: u64, m: &str) {
        if !self.scores.contains_key(m) {
            self.add(score, m);
        }
    }

    fn rem(&mut self, m: &str) -> bool {
        match self.scores.remove(m) {
            Some(s) => self.order.remove(s, m),
            None => false,
        }
    }

    fn rank(&self, m: &str) -> Option<usize> {
        self.order.rank(self.score(m)?, m)
    }

    fn len(&self) -> u64 {
        self.order.len() as u64
    }

    /// Members with score < `max` (exclusive) when `exclusive`, else ≤ `max`; at most `limit`.
    fn below(&self, max: u64, exclusive: bool, limit: usize) -> Vec<String> {
        let bound = if exclusive { max.saturating_sub(1) } else { max };
        if exclusive && max == 0 {
            return Vec::new();
        }
        self.order.up_to(bound, limit).into_iter().map(|(_, m)| m).collect()
    }

    fn count_above(&self, min: u64) -> u64 {
        (self.order.len() - self.order.count_le(min)) as u64
    }
}

#[derive(Default)]
struct Event {
    meta: Option<(u64, LineOrder)>,
    full: u64,
    waiting: ZSet,
    active: ZSet,
    wseen: ZSet,
    aseen: ZSet,
    jti: HashMap<String, Admission>,
    rate: BTreeMap<u64, u64>,
    notices: VecDeque<PendingNotice>,
    owners: HashMap<u64, String>,
}

#[derive(Default)]
struct State {
    events: BTreeMap<EventId, Event>,
    last_arrival: u64,
}

/// Process-local admission store.
pub struct MemoryStore {
    state: Mutex<State>,
    clock: Arc<dyn Clock>,
}

impl MemoryStore {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { state: Mutex::new(State::default()), clock }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Event {
    fn threshold(&self) -> Option<u64> {
        self.meta.map(|m| m.0)
    }

    fn remove_active(&mut self, u: &str) {
        self.active.rem(u);
        self.aseen.rem(u);
        self.jti.remove(u);
    }

    fn remove_waiting(&mut self, u: &str) {
        self.waiting.rem(u);
        self.wseen.rem(u);
    }

    fn active_count(&self, now: u64) -> u64 {
        self.active.count_above(now)
    }

    fn rate60(&self, now: u64) -> u64 {
        let cutoff = (now / 1000).saturating_sub(60);
        self.rate.range(cutoff + 1..).map(|(_, c)| c).sum()
    }

    fn figures(&self, now: u64) -> Figures {
        Figures {
            queue_size: self.waiting.len(),
            active: self.active_count(now),
            threshold: self.threshold().unwrap_or(0),
            admitted_last_60s: self.rate60(now),
        }
    }

    fn describe(&self, u: &str, now: u64) -> Option<Place> {
        if let Some(rank) = self.waiting.rank(u) {
            return Some(Place::Queued { position: rank as u64 + 1, figures: self.figures(now) });
        }
        match self.active.score(u) {
            Some(exp) if exp > now => {
                let admission = self.jti.get(u).cloned().unwrap_or(Admission {
                    jti: String::new(),
                    admitted_at_ms: 0,
                    expires_at_ms: exp,
                });
                Some(Place::Active { admission, fresh: false, figures: self.figures(now) })
            }
            _ => None,
        }
    }

    fn admit(&mut self, u: &str, now: u64, ttl: u64, jti: &str, cap: u64) {
        let exp = now + ttl;
        self.active.add(exp, u);
        self.aseen.add(now, u);
        self.jti
            .insert(u.to_owned(), Admission { jti: jti.to_owned(), admitted_at_ms: now, expires_at_ms: exp });
        *self.rate.entry(now / 1000).or_default() += 1;
        self.notices.push_back(PendingNotice {
            user_id: u.to_owned(),
            jti: jti.to_owned(),
            admitted_at: now,
            attempts: 0,
        });
        while self.notices.len() as u64 > cap {
            self.notices.pop_front();
        }
    }

    fn cleanup(&mut self, now: u64, s: &Tier2Settings) -> Cleaned {
        let limit = usize::try_from(s.cleanup_limit).unwrap_or(usize::MAX);
        let expired = self.active.below(now, false, limit);
        for u in &expired {
            self.remove_active(u);
        }
        let evicted = self.aseen.below(now.saturating_sub(s.active_heartbeat_timeout_ms), true, limit);
        for u in &evicted {
            self.remove_active(u);
        }
        let stale = self.wseen.below(now.saturating_sub(s.waiting_timeout_ms), true, limit);
        for u in &stale {
            self.remove_waiting(u);
        }
        let cutoff = (now / 1000).saturating_sub(120);
        self.rate.retain(|sec, _| *sec >= cutoff);
        Cleaned { expired: expired.len() as u64, evicted: evicted.len() as u64, stale: stale.len() as u64 }
    }
}

#[async_trait]
impl AdmissionStore for MemoryStore {
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<EventMeta, StoreError> {
        let mut st = self.lock();
        let ev = st.events.entry(event.clone()).or_default();
        let order = ev.meta.map_or(order, |m| m.1);
        ev.meta = Some((threshold, order));
        Ok(EventMeta { threshold, order })
    }

    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError> {
        let st = self.lock();
        Ok(st.events.get(event).and_then(|e| e.meta).map(|(threshold, order)| EventMeta { threshold, order }))
    }

    async fn events(&self) -> Result<Vec<EventId>, StoreError> {
        Ok(self.lock().events.iter().filter(|(_, e)| e.meta.is_some()).map(|(k, _)| k.clone()).collect())
    }

    async fn check(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let arrival = (now * 1000).max(st.last_arrival + 1);
        let ev = st.events.get_mut(event).ok_or(StoreError::UnknownEvent)?;
        let (th, order) = ev.meta.ok_or(StoreError::UnknownEvent)?;
        if order != score.order() {
            return Err(StoreError::OrderMismatch(order.as_str().to_owned()));
        }
        if let LineScore::Tier1Position(p) = score {
            match ev.owners.get(&p) {
                Some(owner) if owner != user => return Err(StoreError::PositionTaken),
                Some(_) => {}
                None => {
                    ev.owners.insert(p, user.to_owned());
                }
            }
        }
        if ev.waiting.score(user).is_some() {
            ev.wseen.add(now, user);
            return ev.describe(user, now).ok_or_else(|| StoreError::Protocol("lost user".into()));
        }
        match ev.active.score(user) {
            Some(exp) if exp > now => {
                ev.aseen.add(now, user);
                return ev.describe(user, now).ok_or_else(|| StoreError::Protocol("lost user".into()));
            }
            Some(_) => ev.remove_active(user),
            None => {}
        }
        let active = ev.active_count(now);
        if ev.waiting.len() == 0 && active < th {
            ev.admit(user, now, s.active_ttl_ms, jti, s.notice_cap);
            return match ev.describe(user, now) {
                Some(Place::Active { admission, figures, .. }) => {
                    Ok(Place::Active { admission, fresh: true, figures })
                }
                _ => Err(StoreError::Protocol("admission lost".into())),
            };
        }
        if active >= th {
            ev.full += 1;
        }
        let line_score = match score {
            LineScore::Tier1Position(p) => p,
            LineScore::Arrival => arrival,
        };
        ev.waiting.add_nx(line_score, user);
        ev.wseen.add(now, user);
        let place = ev.describe(user, now).ok_or_else(|| StoreError::Protocol("lost user".into()));
        if matches!(score, LineScore::Arrival) {
            st.last_arrival = arrival;
        }
        place
    }

    async fn status(&self, event: &EventId, user: &str, touch: bool) -> Result<Option<Place>, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = st.events.get_mut(event).filter(|e| e.meta.is_some()).ok_or(StoreError::UnknownEvent)?;
        let place = ev.describe(user, now);
        if touch {
            match &place {
                Some(Place::Queued { .. }) => ev.wseen.add(now, user),
                Some(Place::Active { .. }) => ev.aseen.add(now, user),
                None => {}
            }
        }
        Ok(place)
    }

    async fn leave(&self, event: &EventId, user: &str) -> Result<Left, StoreError> {
        let mut st = self.lock();
        let ev = st.events.get_mut(event).filter(|e| e.meta.is_some()).ok_or(StoreError::UnknownEvent)?;
        let was_waiting = ev.waiting.rem(user);
        ev.wseen.rem(user);
        let was_active = ev.active.score(user).is_some();
        if was_active {
            ev.remove_active(user);
        }
        Ok(Left { was_waiting, was_active })
    }

    async fn admit(
        &self,
        event: &EventId,
        jti_prefix: &str,
        s: &Tier2Settings,
    ) -> Result<AdmitReport, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = st.events.get_mut(event).filter(|e| e.meta.is_some()).ok_or(StoreError::UnknownEvent)?;
        let th = ev.threshold().unwrap_or(0);
        let c = ev.cleanup(now, s);
        let over_threshold = std::mem::take(&mut ev.full);
        let free = th.saturating_sub(ev.active_count(now));
        let n = free.min(s.batch_max);
        let mut admitted = Vec::new();
        for (i, (_, user)) in
            ev.waiting.order.pop_min(usize::try_from(n).unwrap_or(0)).into_iter().enumerate()
        {
            ev.waiting.scores.remove(&user);
            ev.wseen.rem(&user);
            let jti = format!("{jti_prefix}.{}", i + 1);
            ev.admit(&user, now, s.active_ttl_ms, &jti, s.notice_cap);
            admitted.push(Admitted { user, jti });
        }
        Ok(AdmitReport {
            expired: c.expired,
            evicted: c.evicted,
            stale: c.stale,
            over_threshold,
            admitted,
            waiting: ev.waiting.len(),
            active: ev.active_count(now),
        })
    }

    async fn cleanup(&self, event: &EventId, s: &Tier2Settings) -> Result<Cleaned, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = st.events.get_mut(event).filter(|e| e.meta.is_some()).ok_or(StoreError::UnknownEvent)?;
        Ok(ev.cleanup(now, s))
    }

    async fn take_notices(&self, event: &EventId, max: usize) -> Result<Vec<PendingNotice>, StoreError> {
        let mut st = self.lock();
        let Some(ev) = st.events.get_mut(event) else {
            return Ok(Vec::new());
        };
        let n = max.max(1).min(ev.notices.len());
        Ok(ev.notices.drain(..n).collect())
    }

    async fn requeue_notices(&self, event: &EventId, notices: &[PendingNotice]) -> Result<(), StoreError> {
        let mut st = self.lock();
        let ev = st.events.entry(event.clone()).or_default();
        ev.notices.extend(notices.iter().cloned());
        Ok(())
    }

    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError> {
        Ok(self.lock().events.remove(event).is_some_and(|e| e.meta.is_some()))
    }

    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError> {
        let now = self.clock.now_millis();
        let st = self.lock();
        let Some(ev) = st.events.get(event) else {
            return Ok(Snapshot {
                meta: None,
                waiting: 0,
                active: 0,
                active_members: 0,
                in_both: 0,
                admitted_last_60s: 0,
            });
        };
        let in_both = ev.active.scores.keys().filter(|u| ev.waiting.score(u).is_some()).count() as u64;
        Ok(Snapshot {
            meta: ev.meta.map(|(threshold, order)| EventMeta { threshold, order }),
            waiting: ev.waiting.len(),
            active: ev.active_count(now),
            active_members: ev.active.len(),
            in_both,
            admitted_last_60s: ev.rate60(now),
        })
    }
}
