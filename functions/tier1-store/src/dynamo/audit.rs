//! The audit trail: one item per entry, written in the same transaction as the change it
//! records (a taken `seq` fails the transaction), read oldest first.

use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
use vwr_core::EventId;
use vwr_tier1::model::{AuditEntry, StoreError};

use super::items::{AuditItem, Item, audit_key, audit_pk, decode, n, s};
use super::{DynamoStore, is_transaction_condition_failed, unavailable};

impl DynamoStore {
    /// Applies `update` and appends `entry` to the audit trail in one transaction; `Ok(false)`
    /// when a condition failed (a stale revision, a taken audit number).
    pub(super) async fn with_audit(
        &self,
        update: Update,
        event: &EventId,
        entry: &AuditEntry,
        op: &'static str,
    ) -> Result<bool, StoreError> {
        let put = self.audit_put(event, entry)?;
        let res = self
            .client
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(update).build())
            .transact_items(TransactWriteItem::builder().put(put).build())
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) if is_transaction_condition_failed(&e) => Ok(false),
            Err(e) => Err(unavailable(op, e)),
        }
    }

    /// The audit item of `entry`, as a transaction's Put. The sort key is `entry.seq`, and
    /// the Put requires it to be new: of two changes decided on the same item, the second
    /// one's transaction fails and is retried, so the trail is in write order.
    fn audit_put(&self, event: &EventId, entry: &AuditEntry) -> Result<Put, StoreError> {
        let json =
            |v: &serde_json::Value| serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()));
        let mut item: Item = audit_key(event, entry.seq);
        item.extend([
            ("seq".to_owned(), n(entry.seq)),
            ("at".to_owned(), n(entry.at)),
            ("actor".to_owned(), s(&entry.actor)),
            ("action".to_owned(), s(&entry.action)),
            ("before".to_owned(), s(json(&entry.before)?)),
            ("after".to_owned(), s(json(&entry.after)?)),
        ]);
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }
}

pub(super) async fn audit(store: &DynamoStore, event: &EventId) -> Result<Vec<AuditEntry>, StoreError> {
    let json = |t: &str| serde_json::from_str(t).map_err(|e| StoreError::Corrupt(format!("audit item: {e}")));
    let mut out = Vec::new();
    for item in store.partition(audit_pk(event), "Query(audit)").await? {
        let it: AuditItem = decode(&item, "audit item")?;
        out.push(AuditEntry {
            seq: it.seq,
            at: it.at,
            actor: it.actor,
            action: it.action,
            before: json(&it.before)?,
            after: json(&it.after)?,
        });
    }
    Ok(out)
}
