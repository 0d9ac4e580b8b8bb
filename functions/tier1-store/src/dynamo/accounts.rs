//! One place per account (the ticket an account holds, claimed or replaced by a conditional
//! write; docs/abuse.md#one-place-per-account) and proof-of-work solutions, each taken once
//! across all instances (docs/abuse.md#proof-of-work).

use serde::Deserialize;
use vwr_core::EventId;
use vwr_tier1::model::StoreError;

use super::items::{account_key, decode, n, proof_key, s};
use super::{DynamoStore, is_condition_failed, unavailable};

pub(super) async fn account_ticket(
    store: &DynamoStore,
    event: &EventId,
    account: &str,
) -> Result<Option<String>, StoreError> {
    let res = store
        .client
        .get_item()
        .table_name(&store.table)
        .set_key(Some(account_key(event, account)))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| unavailable("GetItem(account)", e))?;
    #[derive(Deserialize)]
    struct AccountItem {
        ticket: String,
    }
    match res.item() {
        Some(item) => Ok(Some(decode::<AccountItem>(item, "account item")?.ticket)),
        None => Ok(None),
    }
}

pub(super) async fn claim_account(
    store: &DynamoStore,
    event: &EventId,
    account: &str,
    request_id: &str,
    expires_at: u64,
) -> Result<Option<String>, StoreError> {
    let mut item = account_key(event, account);
    item.insert("ticket".into(), s(request_id));
    item.insert("expiresAt".into(), n(expires_at));
    let res = store
        .client
        .put_item()
        .table_name(&store.table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await;
    match res {
        Ok(_) => Ok(None),
        Err(e) if is_condition_failed(&e) => match account_ticket(store, event, account).await? {
            Some(t) => Ok(Some(t)),
            None => Err(StoreError::Unavailable("account item vanished".into())),
        },
        Err(e) => Err(unavailable("PutItem(account)", e)),
    }
}

pub(super) async fn replace_account_ticket(
    store: &DynamoStore,
    event: &EventId,
    account: &str,
    old: &str,
    new: &str,
    expires_at: u64,
) -> Result<Option<String>, StoreError> {
    let mut item = account_key(event, account);
    item.insert("ticket".into(), s(new));
    item.insert("expiresAt".into(), n(expires_at));
    let res = store
        .client
        .put_item()
        .table_name(&store.table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(pk) OR ticket = :old")
        .expression_attribute_values(":old", s(old))
        .send()
        .await;
    match res {
        Ok(_) => Ok(None),
        Err(e) if is_condition_failed(&e) => match account_ticket(store, event, account).await? {
            Some(t) => Ok(Some(t)),
            None => Err(StoreError::Unavailable("account item vanished".into())),
        },
        Err(e) => Err(unavailable("PutItem(account replace)", e)),
    }
}

pub(super) async fn use_proof_once(
    store: &DynamoStore,
    event: &EventId,
    key: &str,
    expires_at: u64,
    now: u64,
) -> Result<bool, StoreError> {
    let mut item = proof_key(event, key);
    item.insert("expiresAt".into(), n(expires_at));
    let res = store
        .client
        .put_item()
        .table_name(&store.table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(pk) OR expiresAt <= :now")
        .expression_attribute_values(":now", n(now))
        .send()
        .await;
    match res {
        Ok(_) => Ok(true),
        Err(e) if is_condition_failed(&e) => Ok(false),
        Err(e) => Err(unavailable("PutItem(proof)", e)),
    }
}
