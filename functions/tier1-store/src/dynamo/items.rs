//! The items of the table: their keys — one builder per kind, here and nowhere else — and how
//! they are read back ([`parse_event`], [`decode`]) and updated ([`Expr`]). What each item
//! holds, who writes and reads it, and when it expires: docs/data.md.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Deserialize;
use vwr_core::EventId;
use vwr_tier1::model::{
    CloseReason, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_SESSION_SECONDS, DEFAULT_REENTRY_GRACE_SECONDS,
    EventConfig, EventRecord, EventState, Hold, Message, OutflowMode, Pass, Redemption, Sample, Schedule,
    StoreError,
};

/// Name of the sparse index of active events.
pub const ACTIVE_INDEX: &str = "active-index";
/// `gsi1pk` of every event item that is not `inactive`: the sparse index's one partition, so
/// the advancer lists the live events without a scan (`gsi1sk` is the event id).
pub(super) const ACTIVE: &str = "ACTIVE";

/// An item, or a key, as the SDK takes it.
pub(super) type Item = HashMap<String, AttributeValue>;

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// A key as the SDK takes it. Every key builder below goes through here, so a kind's
/// `pk` / `sk` pattern is one line that docs/data.md names (the contract test compares them).
fn key(pk: String, sk: impl Into<String>) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
}

/// The event item, `EVT#{e}` / `META`: the lifecycle fields, the serving counter and its
/// samples. One item per event, read by every check (through the instance cache).
pub(super) fn event_key(e: &EventId) -> Item {
    key(format!("EVT#{e}"), "META")
}

/// Shard `k` (1-based) of an event, `EVT#{e}#S#{k}` / `S`: its counters. A partition of its
/// own per shard, so N shards take N × one item's write rate.
pub(super) fn shard_key(e: &EventId, k: u64) -> Item {
    key(format!("EVT#{e}#S#{k}"), "S")
}

/// The ticket an account holds, `EVT#{e}#A#{account}` / `A` (`account`: the digest the
/// enqueue-token check answers, never the site's own id): one place per account.
pub(super) fn account_key(e: &EventId, account: &str) -> Item {
    key(format!("EVT#{e}#A#{account}"), "A")
}

/// A proof-of-work solution taken, `EVT#{e}#U#{digest}` / `U`: a conditional put makes it
/// good once across all instances; `expiresAt` lets DynamoDB forget it.
pub(super) fn proof_key(e: &EventId, digest: &str) -> Item {
    key(format!("EVT#{e}#U#{digest}"), "U")
}

/// The partition of an event's audit trail, `EVT#{e}#AUDIT`: one query reads it in order.
pub(super) fn audit_pk(e: &EventId) -> String {
    format!("EVT#{e}#AUDIT")
}

/// Audit entry `seq` of an event, `EVT#{e}#AUDIT` / `{seq:012}`: the sort key zero-padded to
/// 12 digits, so the entries sort in write order as strings.
pub(super) fn audit_key(e: &EventId, seq: u64) -> Item {
    key(audit_pk(e), format!("{seq:012}"))
}

/// The partition of an event's report, `EVT#{e}#M`: one query reads its minutes in order.
pub(super) fn report_pk(e: &EventId) -> String {
    format!("EVT#{e}#M")
}

/// The report's counts of an event in unix minute `minute`, `EVT#{e}#M` / `{minute:010}`
/// (zero-padded, so the minutes sort as strings); every instance adds to it.
pub(super) fn report_key(e: &EventId, minute: u64) -> Item {
    key(report_pk(e), format!("{minute:010}"))
}

/// The admission of `position`, `EVT#{e}#R#{position}` / `R`: its `jti`, token window and
/// release; the conditional put that creates it is what makes an admission happen once.
pub(super) fn redemption_key(e: &EventId, position: u64) -> Item {
    key(format!("EVT#{e}#R#{position}"), "R")
}

/// An UpdateExpression under construction. Every attribute goes through a name alias, so
/// reserved words (`state`, `action`…) never break an expression.
#[derive(Default)]
pub(super) struct Expr {
    sets: Vec<String>,
    removes: Vec<String>,
    pub(super) names: HashMap<String, String>,
    pub(super) values: Item,
}

impl Expr {
    pub(super) fn name(&mut self, attr: &str) -> String {
        let alias = format!("#{attr}");
        self.names.insert(alias.clone(), attr.to_owned());
        alias
    }

    pub(super) fn set(&mut self, attr: &str, v: AttributeValue) {
        let a = self.name(attr);
        self.values.insert(format!(":{attr}"), v);
        self.sets.push(format!("{a} = :{attr}"));
    }

    pub(super) fn set_if_absent(&mut self, attr: &str, v: AttributeValue) {
        let a = self.name(attr);
        self.values.insert(format!(":{attr}"), v);
        self.sets.push(format!("{a} = if_not_exists({a}, :{attr})"));
    }

    pub(super) fn remove(&mut self, attr: &str) {
        let a = self.name(attr);
        self.removes.push(a);
    }

    /// Sets `attr` to `v`, or removes it.
    pub(super) fn opt(&mut self, attr: &str, v: Option<AttributeValue>) {
        match v {
            Some(v) => self.set(attr, v),
            None => self.remove(attr),
        }
    }

    pub(super) fn expression(&self) -> String {
        let mut e = format!("SET {}", self.sets.join(", "));
        if !self.removes.is_empty() {
            e.push_str(&format!(" REMOVE {}", self.removes.join(", ")));
        }
        e
    }
}

/// The event item as stored (`serde_dynamo` reads it; absent numbers are 0).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventItem {
    event_id: String,
    #[serde(default)]
    active: bool,
    /// Absent on items written before the lifecycle existed: then `active` decides.
    state: Option<String>,
    #[serde(default)]
    rev: u64,
    prequeue_at: Option<u64>,
    open_at: Option<u64>,
    close_at: Option<u64>,
    opened_at: Option<u64>,
    seed: Option<String>,
    sealed_counts: Option<Vec<u64>>,
    close_reason: Option<String>,
    message: Option<String>,
    #[serde(default)]
    prequeue_size: u64,
    #[serde(default)]
    issued_count: u64,
    #[serde(default)]
    audit_seq: u64,
    mode: Option<String>,
    #[serde(default)]
    target_arrivals_per_minute: u64,
    max_batch_size: Option<u64>,
    reentry_grace_seconds: Option<u64>,
    max_session_seconds: Option<u64>,
    #[serde(default)]
    pow_difficulty: u32,
    #[serde(default)]
    enqueue_token_required: bool,
    /// The health gate (JSON of `Hold`), absent when not held.
    hold: Option<String>,
    resumed_at: Option<u64>,
    /// The passes' records (JSON of a list of `Pass`), absent when there are none.
    passes: Option<String>,
    /// The alarm that opens a standby event.
    standby_alarm: Option<String>,
    /// The page settings (JSON of `PageSettings`), absent when none.
    page: Option<String>,
    #[serde(default)]
    batch_size: u64,
    #[serde(default)]
    interval_seconds: u64,
    #[serde(default)]
    shards: u32,
    #[serde(default)]
    token_ttl_seconds: u64,
    #[serde(default)]
    serving_counter: u64,
    /// Items written before `lastStepAt` existed kept a step number (`lastStep`) in the
    /// units of the interval of the time; it cannot be converted safely, so such an item
    /// counts as "no step yet" (the `servingCounter` compare-and-set still stops racing runs;
    /// at most the step in progress at the upgrade is applied once more).
    #[serde(default)]
    last_step_at: u64,
    samples: Option<String>,
    #[serde(default)]
    created_at: u64,
    #[serde(default)]
    updated_at: u64,
}

/// A shard item: regular joins (`n`), redeemed (`r`), pre-queue joins (`pq`).
#[derive(Debug, Deserialize)]
pub(super) struct ShardItem {
    pub(super) pk: String,
    #[serde(default)]
    pub(super) n: u64,
    #[serde(default)]
    pub(super) r: u64,
    #[serde(default)]
    pub(super) pq: u64,
    #[serde(default)]
    pub(super) rl: u64,
}

/// An audit item.
#[derive(Debug, Deserialize)]
pub(super) struct AuditItem {
    pub(super) seq: u64,
    pub(super) at: u64,
    pub(super) actor: String,
    pub(super) action: String,
    pub(super) before: String,
    pub(super) after: String,
}

/// A redemption item: the first admission of a position.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RedemptionItem {
    jti: String,
    #[serde(default)]
    at: u64,
    /// The current token after a renewal (absent: the first token, `at + ttl`).
    token_iat: Option<u64>,
    token_exp: Option<u64>,
    released_at: Option<u64>,
}

impl RedemptionItem {
    pub(super) fn view(self, fresh: bool) -> Redemption {
        let token = match (self.token_iat, self.token_exp) {
            (Some(i), Some(e)) => Some((i, e)),
            _ => None,
        };
        Redemption { jti: self.jti, redeemed_at: self.at, token, released_at: self.released_at, fresh }
    }
}

pub(super) fn decode<T: serde::de::DeserializeOwned>(item: &Item, what: &str) -> Result<T, StoreError> {
    serde_dynamo::from_item(item.clone()).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

pub(super) fn parse_event(item: &Item) -> Result<EventRecord, StoreError> {
    let it: EventItem = decode(item, "event item")?;
    let event = EventId::parse(&it.event_id)
        .map_err(|e| StoreError::Corrupt(format!("eventId {:?}: {e}", it.event_id)))?;
    let samples: Vec<Sample> = match &it.samples {
        Some(j) => serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("samples: {e}")))?,
        None => Vec::new(),
    };
    let state = match &it.state {
        Some(s) => EventState::parse(s).ok_or_else(|| StoreError::Corrupt(format!("state {s:?}")))?,
        None if it.active => EventState::Open,
        None => EventState::Inactive,
    };
    let schedule = match (it.prequeue_at, it.open_at) {
        (Some(prequeue_at), Some(open_at)) => Some(Schedule { prequeue_at, open_at, close_at: it.close_at }),
        _ => None,
    };
    let close_reason = match &it.close_reason {
        Some(r) => {
            Some(CloseReason::parse(r).ok_or_else(|| StoreError::Corrupt(format!("closeReason {r:?}")))?)
        }
        None => None,
    };
    let hold: Option<Hold> = match &it.hold {
        Some(j) => Some(serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("hold: {e}")))?),
        None => None,
    };
    let passes: Vec<Pass> = match &it.passes {
        Some(j) => serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("passes: {e}")))?,
        None => Vec::new(),
    };
    let message: Option<Message> = match &it.message {
        Some(j) => Some(serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("message: {e}")))?),
        None => None,
    };
    Ok(EventRecord {
        event,
        state,
        rev: it.rev,
        schedule,
        seed: it.seed,
        sealed_counts: it.sealed_counts,
        opened_at: it.opened_at,
        close_reason,
        message,
        prequeue_size: it.prequeue_size,
        issued_count: it.issued_count,
        audit_seq: it.audit_seq,
        config: EventConfig {
            batch_size: it.batch_size,
            interval_seconds: it.interval_seconds.max(1),
            shards: it.shards.max(1),
            token_ttl_seconds: it.token_ttl_seconds,
            mode: match it.mode.as_deref() {
                None => OutflowMode::Fixed,
                Some(m) => OutflowMode::parse(m).ok_or_else(|| StoreError::Corrupt(format!("mode {m:?}")))?,
            },
            target_arrivals_per_minute: it.target_arrivals_per_minute,
            max_batch_size: it.max_batch_size.unwrap_or(DEFAULT_MAX_BATCH_SIZE),
            reentry_grace_seconds: it.reentry_grace_seconds.unwrap_or(DEFAULT_REENTRY_GRACE_SECONDS),
            max_session_seconds: it.max_session_seconds.unwrap_or(DEFAULT_MAX_SESSION_SECONDS),
            pow_difficulty: it.pow_difficulty,
            enqueue_token_required: it.enqueue_token_required,
        },
        hold,
        resumed_at: it.resumed_at,
        passes,
        standby_alarm: it.standby_alarm,
        page: match &it.page {
            Some(j) => Some(serde_json::from_str(j).map_err(|e| StoreError::Corrupt(format!("page: {e}")))?),
            None => None,
        },
        serving_counter: it.serving_counter,
        last_step_at: it.last_step_at,
        samples,
        created_at: it.created_at,
        updated_at: it.updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pk_sk(item: &Item) -> (&str, &str) {
        (item["pk"].as_s().unwrap(), item["sk"].as_s().unwrap())
    }

    /// Stored keys never change shape: items written by an older release must still be found.
    #[test]
    fn keys_keep_their_stored_shape() {
        let e = EventId::parse("sale-1").unwrap();
        assert_eq!(pk_sk(&event_key(&e)), ("EVT#sale-1", "META"));
        assert_eq!(pk_sk(&shard_key(&e, 3)), ("EVT#sale-1#S#3", "S"));
        assert_eq!(pk_sk(&shard_key(&e, 12)), ("EVT#sale-1#S#12", "S"));
        assert_eq!(pk_sk(&redemption_key(&e, 42)), ("EVT#sale-1#R#42", "R"));
        assert_eq!(pk_sk(&account_key(&e, "abc")), ("EVT#sale-1#A#abc", "A"));
        assert_eq!(pk_sk(&proof_key(&e, "d1g")), ("EVT#sale-1#U#d1g", "U"));
        assert_eq!(audit_pk(&e), "EVT#sale-1#AUDIT");
        assert_eq!(pk_sk(&audit_key(&e, 7)), ("EVT#sale-1#AUDIT", "000000000007"));
        assert!(pk_sk(&audit_key(&e, 10)).1 > pk_sk(&audit_key(&e, 9)).1, "entries sort in write order");
        assert_eq!(ACTIVE, "ACTIVE");
    }
}
