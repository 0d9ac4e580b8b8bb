//! The event item: its lifecycle writes (with their audit entry), the pre-queue and issued
//! counts the advancer records, the serving counter's compare-and-set, and the sparse index
//! of active events.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Update};
use vwr_core::EventId;
use vwr_tier1::model::{AuditEntry, EventRecord, EventState, StoreError};
use vwr_tier1::store::ServingUpdate;

use super::items::{ACTIVE, ACTIVE_INDEX, Expr, Item, event_key, n, parse_event, s};
use super::{DynamoStore, is_condition_failed, unavailable};

pub(super) async fn get_event(
    store: &DynamoStore,
    event: &EventId,
) -> Result<Option<EventRecord>, StoreError> {
    let res = store
        .client
        .get_item()
        .table_name(&store.table)
        .set_key(Some(event_key(event)))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| unavailable("GetItem", e))?;
    res.item().map(parse_event).transpose()
}

pub(super) async fn write_event(
    store: &DynamoStore,
    expected: Option<u64>,
    rec: &EventRecord,
    audit: &AuditEntry,
) -> Result<bool, StoreError> {
    let mut ex = Expr::default();
    let c = rec.config;
    ex.set("eventId", s(rec.event.as_str()));
    ex.set("state", s(rec.state.as_str()));
    ex.set("active", AttributeValue::Bool(rec.active()));
    ex.set("rev", n(rec.rev));
    ex.set("auditSeq", n(rec.audit_seq));
    ex.set("updatedAt", n(rec.updated_at));
    ex.set_if_absent("createdAt", n(rec.updated_at));
    ex.set_if_absent("servingCounter", n(0));
    ex.set_if_absent("lastStepAt", n(0));
    ex.set("batchSize", n(c.batch_size));
    ex.set("intervalSeconds", n(c.interval_seconds));
    ex.set("shards", n(c.shards));
    ex.set("tokenTtlSeconds", n(c.token_ttl_seconds));
    ex.set("mode", s(c.mode.as_str()));
    ex.set("targetArrivalsPerMinute", n(c.target_arrivals_per_minute));
    ex.set("maxBatchSize", n(c.max_batch_size));
    ex.set("reentryGraceSeconds", n(c.reentry_grace_seconds));
    ex.set("maxSessionSeconds", n(c.max_session_seconds));
    ex.set("powDifficulty", n(c.pow_difficulty));
    ex.set("enqueueTokenRequired", AttributeValue::Bool(c.enqueue_token_required));
    let hold = match &rec.hold {
        Some(h) => Some(serde_json::to_string(h).map_err(|e| StoreError::Corrupt(e.to_string()))?),
        None => None,
    };
    ex.opt("hold", hold.map(s));
    ex.opt("resumedAt", rec.resumed_at.map(n));
    // The passes' records (docs/passes.md), JSON like the hold; none: no attribute.
    let passes = if rec.passes.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&rec.passes).map_err(|e| StoreError::Corrupt(e.to_string()))?)
    };
    ex.opt("passes", passes.map(s));
    ex.opt("standbyAlarm", rec.standby_alarm.as_deref().map(s));
    // The page settings (docs/brand.md), JSON; none: no attribute.
    let page = match &rec.page {
        Some(p) => Some(serde_json::to_string(p).map_err(|e| StoreError::Corrupt(e.to_string()))?),
        None => None,
    };
    ex.opt("page", page.map(s));
    if rec.active() {
        ex.set("gsi1pk", s(ACTIVE));
        ex.set("gsi1sk", s(rec.event.as_str()));
    } else {
        ex.remove("gsi1pk");
        ex.remove("gsi1sk");
    }
    ex.opt("prequeueAt", rec.schedule.map(|x| n(x.prequeue_at)));
    ex.opt("openAt", rec.schedule.map(|x| n(x.open_at)));
    ex.opt("closeAt", rec.schedule.and_then(|x| x.close_at).map(n));
    ex.opt("openedAt", rec.opened_at.map(n));
    ex.opt("seed", rec.seed.as_deref().map(s));
    ex.opt("sealedCounts", rec.sealed_counts.as_ref().map(|v| AttributeValue::L(v.iter().map(n).collect())));
    ex.opt("closeReason", rec.close_reason.map(|r| s(r.as_str())));
    let message = match &rec.message {
        Some(m) => Some(serde_json::to_string(m).map_err(|e| StoreError::Corrupt(e.to_string()))?),
        None => None,
    };
    ex.opt("message", message.map(s));
    let condition = match expected {
        None => "attribute_not_exists(pk)".to_owned(),
        Some(r) => {
            ex.values.insert(":expectedRev".into(), n(r));
            let rev = ex.name("rev");
            if r == 0 {
                format!("attribute_exists(pk) AND (attribute_not_exists({rev}) OR {rev} = :expectedRev)")
            } else {
                format!("{rev} = :expectedRev")
            }
        }
    };
    let update = Update::builder()
        .table_name(&store.table)
        .set_key(Some(event_key(&rec.event)))
        .update_expression(ex.expression())
        .condition_expression(condition)
        .set_expression_attribute_names(Some(ex.names))
        .set_expression_attribute_values(Some(ex.values))
        .build()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    store.with_audit(update, &rec.event, audit, "TransactWriteItems(event)").await
}

pub(super) async fn set_prequeue_size(
    store: &DynamoStore,
    event: &EventId,
    size: u64,
    now: u64,
) -> Result<(), StoreError> {
    let res = store
        .client
        .update_item()
        .table_name(&store.table)
        .set_key(Some(event_key(event)))
        .update_expression("SET prequeueSize = :size, updatedAt = :now")
        .condition_expression("attribute_exists(pk)")
        .expression_attribute_values(":size", n(size))
        .expression_attribute_values(":now", n(now))
        .send()
        .await;
    match res {
        Ok(_) => Ok(()),
        Err(e) if is_condition_failed(&e) => Ok(()),
        Err(e) => Err(unavailable("UpdateItem(prequeueSize)", e)),
    }
}

pub(super) async fn set_issued_count(
    store: &DynamoStore,
    event: &EventId,
    issued: u64,
    now: u64,
) -> Result<(), StoreError> {
    let res = store
        .client
        .update_item()
        .table_name(&store.table)
        .set_key(Some(event_key(event)))
        .update_expression("SET issuedCount = :issued, updatedAt = :now")
        .condition_expression("attribute_exists(pk)")
        .expression_attribute_values(":issued", n(issued))
        .expression_attribute_values(":now", n(now))
        .send()
        .await;
    match res {
        Ok(_) => Ok(()),
        Err(e) if is_condition_failed(&e) => Ok(()),
        Err(e) => Err(unavailable("UpdateItem(issuedCount)", e)),
    }
}

pub(super) async fn update_serving(
    store: &DynamoStore,
    event: &EventId,
    u: ServingUpdate,
    audit: Option<&AuditEntry>,
) -> Result<bool, StoreError> {
    let samples = serde_json::to_string(&u.samples).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut values: Item = HashMap::from([
        (":old".to_owned(), n(u.expected)),
        (":new".to_owned(), n(u.new)),
        (":samples".to_owned(), s(samples)),
        (":now".to_owned(), n(u.now)),
    ]);
    let mut names: HashMap<String, String> = HashMap::new();
    let (update, condition) = match u.step {
        Some(step) => {
            values.insert(":step".into(), n(step));
            values.insert(":open".into(), s(EventState::Open.as_str()));
            values.insert(":t".into(), AttributeValue::Bool(true));
            names.insert("#st".into(), "state".into());
            (
                "SET servingCounter = :new, samples = :samples, updatedAt = :now, lastStepAt = :step",
                // Items from before the lifecycle have no `state`: `active` stands for open.
                "servingCounter = :old AND (#st = :open OR (attribute_not_exists(#st) AND active = :t)) \
                 AND (attribute_not_exists(lastStepAt) OR lastStepAt < :step)",
            )
        }
        None => ("SET servingCounter = :new, samples = :samples, updatedAt = :now", "servingCounter = :old"),
    };
    let names = (!names.is_empty()).then_some(names);
    let Some(audit) = audit else {
        let res = store
            .client
            .update_item()
            .table_name(&store.table)
            .set_key(Some(event_key(event)))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(Some(values))
            .send()
            .await;
        return match res {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failed(&e) => Ok(false),
            Err(e) => Err(unavailable("UpdateItem(serving)", e)),
        };
    };
    values.insert(":seq".into(), n(audit.seq));
    let update = Update::builder()
        .table_name(&store.table)
        .set_key(Some(event_key(event)))
        .update_expression(format!("{update}, auditSeq = :seq"))
        .condition_expression(condition)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(Some(values))
        .build()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    store.with_audit(update, event, audit, "TransactWriteItems(serving)").await
}

pub(super) async fn list_active(store: &DynamoStore) -> Result<Vec<EventRecord>, StoreError> {
    let mut out = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let res = store
            .client
            .query()
            .table_name(&store.table)
            .index_name(ACTIVE_INDEX)
            .key_condition_expression("gsi1pk = :a")
            .expression_attribute_values(":a", s(ACTIVE))
            .set_exclusive_start_key(start.take())
            .set_limit(store.page_size)
            .send()
            .await
            .map_err(|e| unavailable("Query(active)", e))?;
        for item in res.items() {
            match parse_event(item) {
                Ok(r) if r.active() => out.push(r),
                Ok(_) => {}
                Err(e) => tracing::error!(event = "tier1.corrupt_event_item", error = %e),
            }
        }
        match res.last_evaluated_key() {
            Some(k) if !k.is_empty() => start = Some(k.clone()),
            _ => break,
        }
    }
    Ok(out)
}
