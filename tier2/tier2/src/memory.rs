//! In-memory admission store: the local default and the model of the Redis store. Each
//! operation mirrors one Lua script (`lua/`) and runs under one lock.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use vwr_core::EventId;
use vwr_core::time::Clock;

use crate::model::{
    Admission, AdmitReport, Admitted, Cleaned, EventMeta, Figures, Left, LineOrder, LineScore, LineView,
    MAX_LINE_MARKS, PendingNotice, Place, RegisterMode, Snapshot, StoreError, Tier2Settings, Touch,
};
use crate::ranked::ZSet;
use crate::report::Tier2Minute;
use crate::store::{AdmissionStore, Retire};

/// What a timeout took from a user (`:gh`), kept for their return (docs/invariants.md#23).
#[derive(Clone)]
enum Ghost {
    /// A place in line: its score.
    Place(u64),
    /// An admission, given back as it was.
    Admission(Admission),
}

/// At most this many silences are kept (lib.lua `MAX_SILENCES`).
const MAX_SILENCES: usize = 8;

/// The time before which a heartbeat is older than `timeout` of time the servers could hear
/// (lib.lua `audible_cutoff`): walking back from now, the silences do not count.
fn audible_cutoff(now: u64, timeout: u64, silences: &[(u64, u64)]) -> u64 {
    let (mut t, mut rem) = (now, timeout);
    for &(from, to) in silences.iter().rev() {
        if to <= t.saturating_sub(rem) && t >= rem {
            break;
        }
        if to < t {
            rem -= t - to;
        }
        t = t.min(from);
    }
    t.saturating_sub(rem)
}

#[derive(Default)]
struct Event {
    meta: Option<(u64, LineOrder)>,
    removed: bool,
    full: u64,
    dropped: u64,
    last: u64,
    retired: bool,
    tail: u64,
    /// The first admission (ms), set once (meta `first`).
    first_admission: Option<u64>,
    waiting: ZSet,
    active: ZSet,
    /// Last waiting heartbeat; an admitted user's stays until the cleanup finds it stale.
    wseen: ZSet,
    aseen: ZSet,
    held: ZSet,
    jti: HashMap<String, Admission>,
    rate: BTreeMap<u64, u64>,
    notices: VecDeque<String>,
    /// (lease end, stored notice) of notices taken and not acknowledged.
    inflight: BTreeSet<(u64, String)>,
    owners: HashMap<u64, String>,
    /// Users admitted at least once (tier-1-ordered lines): a re-entry goes to the back.
    admitted_once: HashSet<String>,
    /// The last cleanup (meta `clean`).
    clean: Option<u64>,
    /// The last second a status or heartbeat reached the store (meta `hd`).
    heard_sec: Option<u64>,
    /// The admission end up to which uncollected admissions were judged (meta `cc`).
    collect_mark: Option<u64>,
    /// Spans (from, to) in which the servers could not hear visitors, oldest first (meta `sil`).
    silences: Vec<(u64, u64)>,
    /// What timeouts took (`:gh`); an admission stays while its user waits at the front for it.
    ghosts: HashMap<String, Ghost>,
    /// When each ghost is forgotten (`:ghd`).
    ghost_ends: ZSet,
}

#[derive(Default)]
struct State {
    events: BTreeMap<EventId, Event>,
    /// The worker's index of events (the Redis `vwr:events` set).
    index: BTreeSet<EventId>,
    last_arrival: u64,
    /// The report's minutes (`vwr:{e}:report`); kept for the process's life here.
    reports: BTreeMap<EventId, BTreeMap<u64, Tier2Minute>>,
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

    /// check.lua: `may_join` false for a caller who may only find a place or ghost they have.
    fn check_in(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
        may_join: bool,
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

impl Event {
    fn threshold(&self) -> Option<u64> {
        self.meta.map(|m| m.0)
    }

    fn remove_active(&mut self, u: &str) {
        self.active.rem(u);
        self.aseen.rem(u);
        self.jti.remove(u);
    }

    /// `release_actives` of lib.lua: the slot stays held until the user's last token ends;
    /// with `ghost_ttl` (an eviction by a timeout) the admission is kept as a ghost.
    fn release_active(&mut self, u: &str, now: u64, ghost_ttl: Option<u64>) {
        let rec = self.jti.get(u).cloned();
        let tok = rec.as_ref().map_or(0, |a| a.token_expires_at_ms);
        self.remove_active(u);
        if tok > now {
            self.held.add(tok, u);
        }
        if let (Some(ttl), Some(a)) = (ghost_ttl, rec)
            && a.expires_at_ms > now
        {
            self.ghost_ends.add((now + ttl).min(a.expires_at_ms), u);
            self.ghosts.insert(u.to_owned(), Ghost::Admission(a));
        }
    }

    /// `reactivate` of lib.lua: an evicted user's admission back as it was.
    fn reactivate(&mut self, u: &str, a: Admission, now: u64) {
        self.active.add(a.expires_at_ms, u);
        self.aseen.add(now, u);
        self.held.rem(u);
        self.jti.insert(u.to_owned(), a);
    }

    /// `hear` of lib.lua: records a silence, forgets those out of reach, notes the cleanup.
    fn hear(&mut self, now: u64, s: &Tier2Settings) {
        let mut from = self.clean.filter(|c| now.saturating_sub(*c) > s.silence_after_ms);
        let heard = self.heard_sec.map_or(0, |h| h * 1000).max(self.last);
        if s.silence_crowd > 0
            && heard > 0
            && now.saturating_sub(heard) > s.silence_after_ms
            && self.waiting.len() + self.active.len() >= s.silence_crowd
        {
            from = Some(from.map_or(heard, |f| f.min(heard)));
        }
        if let Some(from) = from {
            match self.silences.last_mut() {
                Some(last) if last.1 >= from => {
                    last.0 = last.0.min(from);
                    last.1 = now;
                }
                _ => self.silences.push((from, now)),
            }
        }
        let keep = s.active_heartbeat_timeout_ms.max(s.waiting_timeout_ms);
        let horizon = audible_cutoff(now, keep, &self.silences);
        let mut first = self.silences.iter().take_while(|(_, to)| *to <= horizon).count();
        first = first.max(self.silences.len().saturating_sub(MAX_SILENCES));
        self.silences.drain(..first);
        self.clean = Some(now);
    }

    fn active_count(&self, now: u64) -> u64 {
        self.active.count_above(now) + self.held.count_above(now)
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
            since_first_admission_secs: self.first_admission.map(|f| (now / 1000).saturating_sub(f / 1000)),
        }
    }

    fn describe(&mut self, u: &str, now: u64, tok_ttl: u64) -> Option<Place> {
        if let Some(rank) = self.waiting.rank(u) {
            return Some(Place::Queued {
                position: rank as u64 + 1,
                figures: self.figures(now),
                restored: false,
                score: None,
            });
        }
        match self.active.score(u) {
            Some(exp) if exp > now => {
                let mut admission = self.jti.get(u).cloned().unwrap_or(Admission {
                    jti: String::new(),
                    admitted_at_ms: 0,
                    expires_at_ms: exp,
                    token_expires_at_ms: 0,
                });
                if tok_ttl > 0 {
                    let tok = (now + tok_ttl).min(exp);
                    if tok > admission.token_expires_at_ms {
                        admission.token_expires_at_ms = tok;
                        self.jti.insert(u.to_owned(), admission.clone());
                    }
                }
                Some(Place::Active { admission, fresh: false, restored: false, figures: self.figures(now) })
            }
            _ => None,
        }
    }

    /// `admit_all` of lib.lua for one user; `collected`: its caller has it at once (a `check`),
    /// so its heartbeat starts now; the worker's admissions get theirs from the first call
    /// that finds them (`collect_uncollected`).
    fn admit(&mut self, u: &str, now: u64, ttl: u64, jti: &str, cap: u64, collected: bool) {
        let exp = now + ttl;
        self.active.add(exp, u);
        if collected {
            self.aseen.add(now, u);
        }
        self.held.rem(u);
        self.jti.insert(
            u.to_owned(),
            Admission {
                jti: jti.to_owned(),
                admitted_at_ms: now,
                expires_at_ms: exp,
                token_expires_at_ms: 0,
            },
        );
        *self.rate.entry(now / 1000).or_default() += 1;
        self.first_admission.get_or_insert(now);
        if self.meta.is_some_and(|m| m.1 == LineOrder::Tier1) {
            self.admitted_once.insert(u.to_owned());
        }
        let n = PendingNotice {
            user_id: u.to_owned(),
            jti: jti.to_owned(),
            admitted_at: now,
            attempts: 0,
            raw: String::new(),
        };
        self.notices.push_back(n.encode());
        while self.notices.len() as u64 > cap {
            self.notices.pop_front();
            self.dropped += 1;
        }
    }

    /// `collect_uncollected` of lib.lua: frees the worker's admissions nobody came for within
    /// `collect_ms`, judged from the mark on, `limit` at most; returns how many.
    fn collect_uncollected(&mut self, now: u64, s: &Tier2Settings, limit: usize) -> u64 {
        let upto = audible_cutoff(now, s.collect_ms, &self.silences) + s.active_ttl_ms;
        let mark = self.collect_mark;
        if mark.is_some_and(|m| m >= upto) {
            return 0;
        }
        if self.active.len() == self.aseen.len() {
            // Every admission collected: the mark just moves on.
            self.collect_mark = Some(upto);
            return 0;
        }
        let due: Vec<(u64, String)> = self
            .active
            .order
            .iter()
            .skip_while(|(end, _)| mark.is_some_and(|m| *end <= m))
            .take_while(|(end, _)| *end <= upto)
            .take(limit)
            .cloned()
            .collect();
        let mut freed = 0;
        for (_, u) in &due {
            if self.aseen.score(u).is_none() {
                self.release_active(u, now, Some(s.ghost_ttl_ms));
                freed += 1;
            }
        }
        // As lib.lua: a cut range leaves the mark before the last end read, if any.
        self.collect_mark = Some(match due.last() {
            Some((last, _)) if due.len() == limit => {
                due.iter().rev().map(|(end, _)| *end).find(|end| end != last).unwrap_or(*last)
            }
            _ => upto,
        });
        freed
    }

    fn cleanup(&mut self, now: u64, s: &Tier2Settings) -> Cleaned {
        let limit = usize::try_from(s.cleanup_limit).unwrap_or(usize::MAX);
        let expired = self.active.below(now, false, limit);
        for u in &expired {
            self.remove_active(u);
        }
        self.hear(now, s);
        let cutoff = audible_cutoff(now, s.active_heartbeat_timeout_ms, &self.silences);
        let evicted = self.aseen.below(cutoff, true, limit);
        for u in &evicted {
            self.release_active(u, now, Some(s.ghost_ttl_ms));
        }
        let uncollected = self.collect_uncollected(now, s, 10 * limit);
        // As lib.lua `remove_stale_waitings`: the oldest `limit` heartbeats; those of users
        // admitted since (an admission leaves them) go uncounted. Each leaves a ghost.
        let cutoff = audible_cutoff(now, s.waiting_timeout_ms, &self.silences);
        // Without a waiting timeout, waiting users are not heard from: none goes stale.
        let old = if s.waiting_timeout_ms == 0 { Vec::new() } else { self.wseen.below(cutoff, true, limit) };
        let mut stale = Vec::new();
        for u in old {
            self.wseen.rem(&u);
            let Some(score) = self.waiting.score(&u) else { continue };
            self.waiting.rem(&u);
            if score == 0 {
                // Back for their admission: it stays their ghost.
                if let Some(Ghost::Admission(a)) = self.ghosts.get(&u) {
                    self.ghost_ends.add((now + s.ghost_ttl_ms).min(a.expires_at_ms), &u);
                }
            } else {
                self.ghosts.insert(u.clone(), Ghost::Place(score));
                self.ghost_ends.add(now + s.ghost_ttl_ms, &u);
            }
            stale.push(u);
        }
        for u in self.held.below(now, false, usize::MAX) {
            self.held.rem(&u);
        }
        for u in self.ghost_ends.below(now, false, limit) {
            self.ghost_ends.rem(&u);
            self.ghosts.remove(&u);
        }
        let cutoff = (now / 1000).saturating_sub(120);
        self.rate.retain(|sec, _| *sec >= cutoff);
        Cleaned {
            expired: expired.len() as u64,
            evicted: evicted.len() as u64 + uncollected,
            stale: stale.len() as u64,
        }
    }

    fn registered(&self) -> bool {
        self.meta.is_some()
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
            RegisterMode::Implicit if ev.removed => return Ok(None),
            RegisterMode::Implicit => {
                if ev.meta.is_none() {
                    ev.meta = Some((threshold, order));
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

    async fn check(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        self.check_in(event, user, score, jti, s, true)
    }

    async fn recheck(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        self.check_in(event, user, score, jti, s, false)
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
        Ok(LineView { figures: ev.figures(now), front: marks.first().map(|m| m.1), marks })
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
        use vwr_core::tally::Counts;
        // As Redis: nothing to add writes nothing.
        if counts.is_empty() {
            return Ok(());
        }
        self.lock().reports.entry(event.clone()).or_default().entry(minute).or_default().merge(counts);
        Ok(())
    }

    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, Tier2Minute)>, StoreError> {
        Ok(self
            .lock()
            .reports
            .get(event)
            .map(|m| m.iter().map(|(k, v)| (*k, v.clone())).collect())
            .unwrap_or_default())
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
