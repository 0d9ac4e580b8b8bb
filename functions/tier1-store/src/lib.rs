//! vwr tier 1, the adapters: the DynamoDB [`dynamo::DynamoStore`] (the real
//! `vwr_tier1::store::PositionStore`) and the CloudFront KeyValueStore [`kvs::KvsEdgeConfig`]
//! (the real `vwr_tier1::edge_sync::EdgeConfigStore`), and [`service`], which puts a tier-1
//! service together on them for the Lambdas.

pub mod alarms;
pub mod dynamo;
pub mod kvs;

use std::sync::Arc;

use vwr_core::time::SystemClock;
use vwr_core::token::Tier1Tokens;
use vwr_tier1::Tier1Service;
use vwr_tier1::config::Tier1Config;

/// The tier-1 service of the Lambdas: DynamoDB table `cfg.table`, the system clock, and the
/// edge configuration kept in step when `cfg.edge_kvs_arn` is set.
pub fn service(cfg: &Tier1Config, tokens: Tier1Tokens, sdk: &aws_config::SdkConfig) -> Arc<Tier1Service> {
    let store = dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), cfg.table.clone());
    let mut svc = Tier1Service::new(Arc::new(store), tokens, cfg.settings.clone(), Arc::new(SystemClock));
    if let Some(arn) = &cfg.edge_kvs_arn {
        svc = svc.with_edge_sync(Arc::new(kvs::KvsEdgeConfig::new(sdk, arn.clone())));
    }
    if let Some(v) = &cfg.enqueue {
        svc = svc.with_enqueue_verifier(v.clone());
    }
    if !cfg.health_alarms.is_empty() {
        let cw = aws_sdk_cloudwatch::Client::new(sdk);
        svc = svc.with_health_signal(Arc::new(alarms::CloudWatchAlarms::new(
            cw,
            cfg.health_alarms.clone(),
            Arc::new(SystemClock),
        )));
    }
    Arc::new(svc)
}
