//! One event of the in-memory admission store: its sets and bookkeeping, and what each script
//! does to them (cleanup, admission, notices); `mod.rs` holds the store around the events.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::ranked::ZSet;
use crate::model::{Admission, Cleaned, Figures, LineOrder, PendingNotice, Place, Tier2Settings};

/// What a timeout took from a user (`:gh`), kept for their return (docs/invariants.md#23).
#[derive(Clone)]
pub(super) enum Ghost {
    /// A place in line: its score.
    Place(u64),
    /// An admission, given back as it was.
    Admission(Admission),
}

/// At most this many silences are kept (lib.lua `MAX_SILENCES`).
pub(super) const MAX_SILENCES: usize = 8;

/// The time before which a heartbeat is older than `timeout` of time the servers could hear
/// (lib.lua `audible_cutoff`): walking back from now, the silences do not count.
pub(super) fn audible_cutoff(now: u64, timeout: u64, silences: &[(u64, u64)]) -> u64 {
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
pub(super) struct Event {
    pub(super) meta: Option<(u64, LineOrder)>,
    pub(super) removed: bool,
    pub(super) full: u64,
    pub(super) dropped: u64,
    pub(super) last: u64,
    pub(super) retired: bool,
    pub(super) tail: u64,
    /// The first admission (ms), set once (meta `first`).
    pub(super) first_admission: Option<u64>,
    pub(super) waiting: ZSet,
    pub(super) active: ZSet,
    /// Last waiting heartbeat; an admitted user's stays until the cleanup finds it stale.
    pub(super) wseen: ZSet,
    pub(super) aseen: ZSet,
    pub(super) held: ZSet,
    pub(super) jti: HashMap<String, Admission>,
    pub(super) rate: BTreeMap<u64, u64>,
    pub(super) notices: VecDeque<String>,
    /// (lease end, stored notice) of notices taken and not acknowledged.
    pub(super) inflight: BTreeSet<(u64, String)>,
    pub(super) owners: HashMap<u64, String>,
    /// Users admitted at least once (tier-1-ordered lines): a re-entry goes to the back.
    pub(super) admitted_once: HashSet<String>,
    /// The last cleanup (meta `clean`).
    pub(super) clean: Option<u64>,
    /// The last second a status or heartbeat reached the store (meta `hd`).
    pub(super) heard_sec: Option<u64>,
    /// The admission end up to which uncollected admissions were judged (meta `cc`).
    pub(super) collect_mark: Option<u64>,
    /// Spans (from, to) in which the servers could not hear visitors, oldest first (meta `sil`).
    pub(super) silences: Vec<(u64, u64)>,
    /// What timeouts took (`:gh`); an admission stays while its user waits at the front for it.
    pub(super) ghosts: HashMap<String, Ghost>,
    /// When each ghost is forgotten (`:ghd`).
    pub(super) ghost_ends: ZSet,
    /// When the registration was re-hydrated after the store had lost it (meta `lost`).
    pub(super) lost: Option<u64>,
}

impl Event {
    pub(super) fn threshold(&self) -> Option<u64> {
        self.meta.map(|m| m.0)
    }

    pub(super) fn remove_active(&mut self, u: &str) {
        self.active.rem(u);
        self.aseen.rem(u);
        self.jti.remove(u);
    }

    /// `release_actives` of lib.lua: the slot stays held until the user's last token ends;
    /// with `ghost_ttl` (an eviction by a timeout) the admission is kept as a ghost.
    pub(super) fn release_active(&mut self, u: &str, now: u64, ghost_ttl: Option<u64>) {
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
    pub(super) fn reactivate(&mut self, u: &str, a: Admission, now: u64) {
        self.active.add(a.expires_at_ms, u);
        self.aseen.add(now, u);
        self.held.rem(u);
        self.jti.insert(u.to_owned(), a);
    }

    /// `hear` of lib.lua: records a silence, forgets those out of reach, notes the cleanup.
    pub(super) fn hear(&mut self, now: u64, s: &Tier2Settings) {
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

    pub(super) fn active_count(&self, now: u64) -> u64 {
        self.active.count_above(now) + self.held.count_above(now)
    }

    pub(super) fn rate60(&self, now: u64) -> u64 {
        let cutoff = (now / 1000).saturating_sub(60);
        self.rate.range(cutoff + 1..).map(|(_, c)| c).sum()
    }

    pub(super) fn figures(&self, now: u64) -> Figures {
        Figures {
            queue_size: self.waiting.len(),
            active: self.active_count(now),
            threshold: self.threshold().unwrap_or(0),
            admitted_last_60s: self.rate60(now),
            since_first_admission_secs: self.first_admission.map(|f| (now / 1000).saturating_sub(f / 1000)),
        }
    }

    pub(super) fn describe(&mut self, u: &str, now: u64, tok_ttl: u64) -> Option<Place> {
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
    pub(super) fn admit(&mut self, u: &str, now: u64, ttl: u64, jti: &str, cap: u64, collected: bool) {
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
    pub(super) fn collect_uncollected(&mut self, now: u64, s: &Tier2Settings, limit: usize) -> u64 {
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

    pub(super) fn cleanup(&mut self, now: u64, s: &Tier2Settings) -> Cleaned {
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

    pub(super) fn registered(&self) -> bool {
        self.meta.is_some()
    }
}
