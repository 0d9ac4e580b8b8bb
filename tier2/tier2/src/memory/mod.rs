//! In-memory admission store: the local default and the model of the Redis store. Each
//! operation mirrors one Lua script (`lua/`) and runs under one lock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use vwr_core::EventId;
use vwr_core::hold::Held;
use vwr_core::time::Clock;

use crate::model::{
    AdmitReport, Admitted, Cleaned, EventMeta, HoldProof, Left, LineOrder, LineScore, LineView,
    MAX_LINE_MARKS, PendingNotice, Place, RegisterMode, Snapshot, StoreError, Tier2Settings, Touch,
};
use crate::report::Tier2Minute;
use crate::store::{AdmissionStore, Retire};

mod event;
mod ranked;

use event::{Event, Ghost};

#[derive(Default)]
struct State {
    events: BTreeMap<EventId, Event>,
    /// The worker's index of events (the Redis `vwr:events` set).
    index: BTreeSet<EventId>,
    last_arrival: u64,
    /// The report's minutes (`vwr:{e}:report`); kept for the process's life here.
    reports: vwr_core::tally::Minutes<Tier2Minute>,
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

    /// Drops everything of `event`, as the Redis store's `purge`: what a Redis restarted without
    /// its data does to it (tests; docs/invariants.md#27).
    pub fn purge(&self, event: &EventId) {
        let mut st = self.lock();
        st.events.remove(event);
        st.index.remove(event);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A queued place with the user's line score (what `check` answers).
fn with_score(place: Place, line_score: u64) -> Place {
    match place {
        Place::Queued { position, figures, restored, .. } => {
            Place::Queued { position, figures, restored, score: Some(line_score) }
        }
        other => other,
    }
}

/// The 0-based ranks the line document marks in a line of `size` (lib.lua `mark_ranks`):
/// [`MAX_LINE_MARKS`] spread evenly, the first and the last included.
pub fn mark_ranks(size: u64) -> Vec<u64> {
    let k = MAX_LINE_MARKS as u64;
    if size <= k {
        return (0..size).collect();
    }
    let mut out: Vec<u64> = (0..k).map(|i| i * (size - 1) / (k - 1)).collect();
    out.dedup();
    out
}

fn registered<'a>(st: &'a mut State, event: &EventId) -> Result<&'a mut Event, StoreError> {
    st.events.get_mut(event).filter(|e| e.registered()).ok_or(StoreError::UnknownEvent)
}

#[async_trait]
impl AdmissionStore for MemoryStore {
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
        mode: RegisterMode,
    ) -> Result<Option<EventMeta>, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = st.events.entry(event.clone()).or_default();
        match mode {
            RegisterMode::Admin => {
                ev.removed = false;
                let order = ev.meta.map_or(order, |m| m.1);
                ev.meta = Some((threshold, order));
            }
            RegisterMode::Implicit | RegisterMode::Rehydrate if ev.removed => return Ok(None),
            RegisterMode::Implicit | RegisterMode::Rehydrate => {
                if ev.meta.is_none() {
                    ev.meta = Some((threshold, order));
                    if mode == RegisterMode::Rehydrate && ev.lost.is_none() {
                        ev.lost = Some(now);
                    }
                }
            }
        }
        if ev.last == 0 {
            ev.last = now;
        }
        let meta = ev.meta.map(|(threshold, order)| EventMeta { threshold, order });
        st.index.insert(event.clone());
        Ok(meta)
    }

    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError> {
        let st = self.lock();
        Ok(st.events.get(event).and_then(|e| e.meta).map(|(threshold, order)| EventMeta { threshold, order }))
    }

    async fn events(&self) -> Result<Vec<EventId>, StoreError> {
        Ok(self.lock().index.iter().cloned().collect())
    }

    /// check.lua: `may_join` false for a caller who may only find a place or ghost they have;
    /// `proof` gives back the place the store lost since it was signed.
    async fn check_in(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
        may_join: bool,
        proof: Option<&HoldProof>,
    ) -> Result<Place, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let arrival = (now * 1000).max(st.last_arrival + 1);
        let ev = registered(&mut st, event)?;
        let (th, order) = ev.meta.ok_or(StoreError::UnknownEvent)?;
        if order != score.order() {
            return Err(StoreError::OrderMismatch(order.as_str().to_owned()));
        }
        if let LineScore::Tier1Position(p) = score {
            match ev.owners.get(&p) {
                Some(owner) if owner != user => return Err(StoreError::PositionTaken),
                Some(_) => {}
                None if may_join => {
                    ev.owners.insert(p, user.to_owned());
                }
                None => {}
            }
        }
        ev.last = now;
        let reindex = std::mem::take(&mut ev.retired);
        let lost = || StoreError::Protocol("lost user".into());
        let mut used_arrival = false;
        let track = s.waiting_timeout_ms > 0;
        let place = if let Some(score) = ev.waiting.score(user) {
            if track {
                ev.wseen.add(now, user);
            }
            Ok(with_score(ev.describe(user, now, 0).ok_or_else(lost)?, score))
        } else {
            match ev.active.score(user) {
                Some(exp) if exp > now => {
                    ev.aseen.add(now, user);
                    Ok(ev.describe(user, now, s.entry_token_ttl_ms).ok_or_else(lost)?)
                }
                other => {
                    if other.is_some() {
                        ev.remove_active(user);
                    }
                    // A place or admission a timeout took comes back (docs/invariants.md#23).
                    let mut ghost = None;
                    if let Some(g) = ev.ghosts.get(user).cloned() {
                        let ends = ev.ghost_ends.score(user);
                        ev.ghost_ends.rem(user);
                        let over = match (&g, ends) {
                            (_, None) => true,
                            (_, Some(e)) if e <= now => true,
                            (Ghost::Admission(a), _) => a.expires_at_ms <= now,
                            (Ghost::Place(_), _) => false,
                        };
                        if over || matches!(g, Ghost::Place(_)) {
                            ev.ghosts.remove(user);
                        }
                        if !over {
                            ghost = Some(g);
                        }
                    }
                    // A place the store lost since the caller's hold was signed comes back the
                    // same way (docs/invariants.md#27).
                    if ghost.is_none()
                        && let (Some(p), Some(lost)) = (proof, ev.lost)
                        && p.issued_by_ms() < lost
                    {
                        ghost = match &p.held {
                            Held::Waiting { score } => Some(Ghost::Place(*score)),
                            Held::Admitted(a) if a.expires_at_ms > now => {
                                ev.ghosts.insert(user.to_owned(), Ghost::Admission(a.clone()));
                                if let LineScore::Tier1Position(p) = score {
                                    ev.admitted_once.insert(user.to_owned());
                                    ev.owners.entry(p).or_insert_with(|| user.to_owned());
                                }
                                Some(Ghost::Admission(a.clone()))
                            }
                            Held::Admitted(_) => None,
                        };
                        if let (Some(Ghost::Place(_)), LineScore::Tier1Position(p)) = (&ghost, score) {
                            ev.owners.entry(p).or_insert_with(|| user.to_owned());
                        }
                    }
                    let restored = ghost.is_some();
                    let active = ev.active_count(now);
                    if ghost.is_none() && !may_join {
                        Err(StoreError::NoPlace)
                    } else if ev.waiting.len() == 0 && active < th {
                        if let Some(Ghost::Admission(a)) = ghost {
                            ev.ghosts.remove(user);
                            ev.reactivate(user, a, now);
                            match ev.describe(user, now, s.entry_token_ttl_ms) {
                                Some(Place::Active { admission, figures, .. }) => {
                                    Ok(Place::Active { admission, fresh: false, restored, figures })
                                }
                                _ => return Err(StoreError::Protocol("admission lost".into())),
                            }
                        } else {
                            ev.admit(user, now, s.active_ttl_ms, jti, s.notice_cap, true);
                            match ev.describe(user, now, s.entry_token_ttl_ms) {
                                Some(Place::Active { admission, figures, .. }) => {
                                    Ok(Place::Active { admission, fresh: true, restored, figures })
                                }
                                _ => return Err(StoreError::Protocol("admission lost".into())),
                            }
                        }
                    } else {
                        if active >= th {
                            ev.full += 1;
                        }
                        let line_score = match (ghost, score) {
                            // Admitted before the timeout: ahead of everyone waiting.
                            (Some(Ghost::Admission(_)), _) => 0,
                            (Some(Ghost::Place(p)), _) => p,
                            (None, LineScore::Tier1Position(p)) if ev.admitted_once.contains(user) => {
                                let tail = ev.tail.max(ev.waiting.max_score().unwrap_or(0)).max(p) + 1;
                                ev.tail = tail;
                                tail
                            }
                            (None, LineScore::Tier1Position(p)) => p,
                            (None, LineScore::Arrival) => {
                                used_arrival = true;
                                arrival
                            }
                        };
                        ev.waiting.add_nx(line_score, user);
                        if track {
                            ev.wseen.add(now, user);
                        }
                        let score = ev.waiting.score(user).unwrap_or(line_score);
                        match ev.describe(user, now, 0).ok_or_else(lost)? {
                            Place::Queued { position, figures, .. } => {
                                Ok(Place::Queued { position, figures, restored, score: Some(score) })
                            }
                            other => Ok(other),
                        }
                    }
                }
            }
        };
        if used_arrival {
            st.last_arrival = arrival;
        }
        if reindex {
            st.index.insert(event.clone());
        }
        place
    }

    async fn status(
        &self,
        event: &EventId,
        user: &str,
        touch: Touch,
        token_ttl_ms: u64,
    ) -> Result<Option<Place>, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = registered(&mut st, event)?;
        ev.heard_sec = Some(now / 1000);
        let place = ev.describe(user, now, token_ttl_ms);
        match (&place, touch) {
            (Some(Place::Queued { .. }), Touch::Any) => ev.wseen.add(now, user),
            (Some(Place::Active { .. }), Touch::Any | Touch::Active) => ev.aseen.add(now, user),
            _ => {}
        }
        Ok(place)
    }

    async fn line(&self, event: &EventId) -> Result<LineView, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = registered(&mut st, event)?;
        ev.heard_sec = Some(now / 1000);
        let size = ev.waiting.len();
        let marks: Vec<(u64, u64)> = mark_ranks(size)
            .into_iter()
            .filter_map(|r| ev.waiting.order.nth(usize::try_from(r).ok()?).map(|(sc, _)| (r + 1, *sc)))
            .collect();
        // The first score above 0: users back for their admission wait at 0 (line.lua).
        let front = ev.waiting.order.nth(ev.waiting.order.count_le(0)).map(|(sc, _)| *sc);
        Ok(LineView { figures: ev.figures(now), front, marks })
    }

    async fn leave(&self, event: &EventId, user: &str) -> Result<Left, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let ev = registered(&mut st, event)?;
        let was_waiting = ev.waiting.rem(user);
        ev.wseen.rem(user);
        if ev.ghosts.remove(user).is_some() {
            ev.ghost_ends.rem(user);
        }
        let was_active = ev.active.score(user).is_some();
        if was_active {
            ev.release_active(user, now, None);
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
        let ev = registered(&mut st, event)?;
        let th = ev.threshold().unwrap_or(0);
        let c = ev.cleanup(now, s);
        let over_threshold = std::mem::take(&mut ev.full);
        let free = th.saturating_sub(ev.active_count(now));
        let n = free.min(s.batch_max);
        let mut admitted = Vec::new();
        // As admit.lua: users back for the admission a timeout took (score 0, at the front)
        // get it back first, if it still runs.
        let back = ev.waiting.order.count_le(0);
        let mut restored = 0;
        for (i, (_, user)) in
            ev.waiting.order.pop_min(usize::try_from(n).unwrap_or(0)).into_iter().enumerate()
        {
            ev.waiting.scores.remove(&user);
            if i < back {
                if let Some(Ghost::Admission(a)) = ev.ghosts.remove(&user)
                    && a.expires_at_ms > now
                {
                    ev.reactivate(&user, a, now);
                    restored += 1;
                }
                continue;
            }
            let jti = format!("{jti_prefix}.{}", admitted.len() + 1);
            ev.admit(&user, now, s.active_ttl_ms, &jti, s.notice_cap, false);
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
            notices_dropped: std::mem::take(&mut ev.dropped),
            idle_ms: now.saturating_sub(if ev.last == 0 { now } else { ev.last }),
            restored,
        })
    }

    async fn cleanup(&self, event: &EventId, s: &Tier2Settings) -> Result<Cleaned, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        Ok(registered(&mut st, event)?.cleanup(now, s))
    }

    async fn take_notices(
        &self,
        event: &EventId,
        max: usize,
        lease_ms: u64,
    ) -> Result<Vec<PendingNotice>, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let Some(ev) = st.events.get_mut(event) else {
            return Ok(Vec::new());
        };
        let max = max.max(1);
        let lease = now + lease_ms;
        // As take.lua: expired leases in the order of their text.
        let mut expired: Vec<(u64, String)> =
            ev.inflight.iter().take_while(|(l, _)| *l <= now).take(1000).cloned().collect();
        expired.sort_by(|a, b| a.1.cmp(&b.1));
        expired.truncate(max);
        let mut raw = Vec::with_capacity(max);
        for e in expired {
            ev.inflight.remove(&e);
            ev.inflight.insert((lease, e.1.clone()));
            raw.push(e.1);
        }
        while raw.len() < max {
            let Some(n) = ev.notices.pop_front() else { break };
            ev.inflight.retain(|(_, r)| *r != n);
            ev.inflight.insert((lease, n.clone()));
            raw.push(n);
        }
        Ok(raw.iter().filter_map(|r| PendingNotice::decode(r).ok()).collect())
    }

    async fn ack_notices(
        &self,
        event: &EventId,
        done: &[PendingNotice],
        retry: &[PendingNotice],
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        let ev = st.events.entry(event.clone()).or_default();
        for n in done {
            ev.inflight.retain(|(_, r)| *r != n.raw);
        }
        ev.notices.extend(retry.iter().map(PendingNotice::encode));
        Ok(())
    }

    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError> {
        let mut st = self.lock();
        st.index.remove(event);
        let was = st.events.remove(event).is_some_and(|e| e.registered());
        st.events.insert(event.clone(), Event { removed: true, ..Event::default() });
        Ok(was)
    }

    async fn retire(&self, event: &EventId, idle_ms: u64) -> Result<Retire, StoreError> {
        let now = self.clock.now_millis();
        let mut st = self.lock();
        let Some(ev) = st.events.get_mut(event).filter(|e| e.registered()) else {
            st.index.remove(event);
            return Ok(Retire::Retired);
        };
        let busy = ev.waiting.len() > 0
            || ev.active_count(now) > 0
            || !ev.notices.is_empty()
            || !ev.inflight.is_empty()
            || now.saturating_sub(ev.last) < idle_ms;
        if busy {
            return Ok(Retire::Busy);
        }
        ev.retired = true;
        st.index.remove(event);
        Ok(Retire::Retired)
    }

    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &Tier2Minute,
    ) -> Result<(), StoreError> {
        self.lock().reports.add(event, minute, counts);
        Ok(())
    }

    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, Tier2Minute)>, StoreError> {
        Ok(self.lock().reports.of(event))
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
                held: 0,
                pending_notices: 0,
                ghosts: 0,
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
            held: ev.held.count_above(now),
            pending_notices: (ev.notices.len() + ev.inflight.len()) as u64,
            ghosts: ev.ghosts.len() as u64,
        })
    }
}
