//! The tier-1 table: capacity mode, TTL, and the account's table-level write limit.

use aws_sdk_dynamodb::types::BillingMode;
use aws_sdk_servicequotas::Client as QuotaClient;
use aws_sdk_servicequotas::types::ServiceQuota;
use vwr_preflight::{Quota, Seen, TableSeen, TtlSeen};

use super::{reason, unseen};

/// The Service Quotas name of DynamoDB's per-table write limit (on-demand; its code is not
/// documented alongside, so the name is matched).
const TABLE_WRITE_QUOTA: &str = "Table-level write throughput limit";

pub(super) async fn table(
    sdk: &aws_config::SdkConfig,
    name: &str,
) -> (Seen<TableSeen>, Seen<TtlSeen>, Seen<Quota>) {
    let client = aws_sdk_dynamodb::Client::new(sdk);
    let table = match client.describe_table().table_name(name).send().await {
        Ok(out) => match out.table() {
            Some(t) => Seen::Found(TableSeen {
                // A table created on-demand from the start may carry no billing mode summary;
                // a provisioned one always has its throughput with WCU > 0.
                on_demand: match t.billing_mode_summary().and_then(|b| b.billing_mode()) {
                    Some(mode) => *mode == BillingMode::PayPerRequest,
                    None => {
                        t.provisioned_throughput().and_then(|p| p.write_capacity_units()).unwrap_or(0) == 0
                    }
                },
                provisioned_writes: t.provisioned_throughput().and_then(|p| p.write_capacity_units()),
                max_on_demand_writes: t.on_demand_throughput().and_then(|o| o.max_write_request_units()),
                warm_writes: t.warm_throughput().and_then(|w| w.write_units_per_second()),
            }),
            None => Seen::Missing,
        },
        Err(e) => unseen("DescribeTable", &e),
    };
    let ttl = match client.describe_time_to_live().table_name(name).send().await {
        Ok(out) => match out.time_to_live_description() {
            Some(d) => Seen::Found(TtlSeen {
                status: d
                    .time_to_live_status()
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_else(|| "DISABLED".into()),
                attribute: d.attribute_name().map(str::to_owned),
            }),
            None => Seen::Found(TtlSeen { status: "DISABLED".into(), attribute: None }),
        },
        Err(e) => unseen("DescribeTimeToLive", &e),
    };
    (table, ttl, table_write_quota(&QuotaClient::new(sdk)).await)
}

/// The quota applied to the account, else its AWS default, found by name (every page of each
/// list, through the SDK's paginators).
async fn table_write_quota(client: &QuotaClient) -> Seen<Quota> {
    let applied: Result<Vec<ServiceQuota>, _> =
        client.list_service_quotas().service_code("dynamodb").into_paginator().items().send().collect().await;
    let first = match applied {
        Ok(list) => match find(&list, "Service Quotas", false) {
            Some(q) => return Seen::Found(q),
            None => not_named("Service Quotas"),
        },
        Err(e) => reason("ListServiceQuotas dynamodb", &e),
    };
    let defaults: Result<Vec<ServiceQuota>, _> = client
        .list_aws_default_service_quotas()
        .service_code("dynamodb")
        .into_paginator()
        .items()
        .send()
        .collect()
        .await;
    let source = "Service Quotas (AWS default)";
    let second = match defaults {
        Ok(list) => match find(&list, source, true) {
            Some(q) => return Seen::Found(q),
            None => not_named(source),
        },
        Err(e) => reason("ListAWSDefaultServiceQuotas dynamodb", &e),
    };
    Seen::NotChecked(format!("{first}; {second}"))
}

/// The quota named [`TABLE_WRITE_QUOTA`] in one list (`source` says which).
fn find(quotas: &[ServiceQuota], source: &str, aws_default: bool) -> Option<Quota> {
    quotas
        .iter()
        .filter(|q| q.quota_name().is_some_and(|n| n.eq_ignore_ascii_case(TABLE_WRITE_QUOTA)))
        .find_map(|q| q.value())
        .map(|value| Quota { value, source: format!("{source}: {TABLE_WRITE_QUOTA}"), aws_default })
}

/// Why a list that was read has no [`TABLE_WRITE_QUOTA`] (a `not checked` row's reason).
fn not_named(source: &str) -> String {
    format!("{source}: no quota named {TABLE_WRITE_QUOTA:?}")
}
