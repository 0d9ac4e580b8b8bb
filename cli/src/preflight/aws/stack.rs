//! The tier-1 table: capacity mode, TTL, and the account's table-level write limit.

use aws_sdk_dynamodb::types::BillingMode;
use aws_sdk_servicequotas::Client as QuotaClient;
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

/// The quota applied to the account, else its AWS default, found by name.
async fn table_write_quota(client: &QuotaClient) -> Seen<Quota> {
    let mut reasons = Vec::new();
    for applied in [true, false] {
        let mut next: Option<String> = None;
        loop {
            let page = if applied {
                client
                    .list_service_quotas()
                    .service_code("dynamodb")
                    .set_next_token(next.take())
                    .send()
                    .await
                    .map(|o| {
                        (
                            o.quotas()
                                .iter()
                                .map(|q| (q.quota_name().map(str::to_owned), q.value()))
                                .collect::<Vec<_>>(),
                            o.next_token().map(str::to_owned),
                        )
                    })
                    .map_err(|e| reason("ListServiceQuotas dynamodb", &e))
            } else {
                client
                    .list_aws_default_service_quotas()
                    .service_code("dynamodb")
                    .set_next_token(next.take())
                    .send()
                    .await
                    .map(|o| {
                        (
                            o.quotas()
                                .iter()
                                .map(|q| (q.quota_name().map(str::to_owned), q.value()))
                                .collect::<Vec<_>>(),
                            o.next_token().map(str::to_owned),
                        )
                    })
                    .map_err(|e| reason("ListAWSDefaultServiceQuotas dynamodb", &e))
            };
            let (quotas, token) = match page {
                Ok(p) => p,
                Err(r) => {
                    reasons.push(r);
                    break;
                }
            };
            let hit = quotas
                .iter()
                .find(|(n, _)| n.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(TABLE_WRITE_QUOTA)));
            if let Some((_, Some(value))) = hit {
                let source = if applied { "Service Quotas" } else { "Service Quotas (AWS default)" };
                return Seen::Found(Quota {
                    value: *value,
                    source: format!("{source}: {TABLE_WRITE_QUOTA}"),
                });
            }
            match token {
                Some(t) if !t.is_empty() => next = Some(t),
                _ => {
                    reasons.push(format!(
                        "{}: no quota named {TABLE_WRITE_QUOTA:?}",
                        if applied { "ListServiceQuotas" } else { "ListAWSDefaultServiceQuotas" }
                    ));
                    break;
                }
            }
        }
    }
    Seen::NotChecked(reasons.join("; "))
}
