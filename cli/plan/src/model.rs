//! The plan: what a sale needs and costs. Each formula is written out in
//! docs/rehearsal.md#how-each-figure-is-derived.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::deployment::{Deployment, SCHEDULED_FUNCTIONS};
use crate::error::PlanError;
use crate::inputs::{Inputs, ceil};
use crate::prices::{DeploymentPrices, Prices};

/// Writes per second one DynamoDB item (a partition) takes (ADR 0001).
pub const WRITES_PER_ITEM_PER_SECOND: f64 = 1_000.0;
/// The share of an item's write rate a shard is planned to use at the peak.
pub const SHARD_HEADROOM: f64 = 0.5;
/// The most shards an event may have (docs/settings.md, `shards` 1–64).
pub const MAX_SHARDS: u64 = 64;
/// Writes per second a new on-demand DynamoDB table takes at once (its initial warm
/// throughput); a faster open is throttled while the table scales, unless it was pre-warmed
/// (docs/rehearsal.md#warnings). `vwr preflight` judges a table whose warm throughput it is not
/// told against the same figure (docs/rehearsal.md#the-checks).
pub const NEW_ON_DEMAND_TABLE_WRITES: u64 = 4_000;

/// Default quotas the plan checks (docs/rehearsal.md#warnings).
const LAMBDA_CONCURRENCY: f64 = 1_000.0;
const API_GATEWAY_ACCOUNT_RPS: f64 = 10_000.0;
const TIER1_STAGE_RPS: f64 = 10_000.0;
const TIER2_STAGE_RPS: f64 = 5_000.0;
const GATE_STAGE_RPS: f64 = 5_000.0;
const DYNAMODB_TABLE_WRITES: f64 = 40_000.0;
const SQS_FIFO_GROUP_MESSAGES: f64 = 3_000.0;
const CLOUDFRONT_DISTRIBUTION_RPS: f64 = 250_000.0;

/// What the sale needs and costs. Serializes to the JSON of `vwr plan --json` (docs/rehearsal.md#plan).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub inputs: Inputs,
    /// What is priced as deployed: the Terraform defaults unless told.
    #[serde(default)]
    pub deployment: Deployment,
    /// Counter shards of the event.
    pub shards: u64,
    /// Concurrent executions per function at the peak.
    pub lambda_concurrency: BTreeMap<String, u64>,
    pub lambda_concurrency_total: u64,
    /// Per API stage (`tier1`, `tier2`, `gate`) and for CloudFront (`cloudfront`).
    pub peak_requests_per_second: BTreeMap<String, u64>,
    pub dynamodb_peak_writes_per_second: u64,
    /// Writes per second on each shard item at the peak.
    pub dynamodb_peak_writes_per_shard: u64,
    /// Requests to CloudFront over the sale.
    pub cloudfront_requests: u64,
    pub redis_ops_per_second: u64,
    pub sqs_messages: u64,
    /// The tier-2 threshold planned (given, or derived from the outflow and dwell).
    pub tier2_threshold: u64,
    pub totals: Totals,
    pub cost: Cost,
    /// Every default quota the sale would exceed.
    pub warnings: Vec<Warning>,
}

/// Counts over the whole sale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// From the open until the last visitor is let through.
    pub wait_minutes: f64,
    /// The wait plus one dwell: how long the sale runs.
    pub sale_minutes: f64,
    pub lambda_invocations: BTreeMap<String, u64>,
    pub api_requests: BTreeMap<String, u64>,
    pub status_fetches_per_visitor: f64,
    pub tier2_calls_per_visitor: f64,
    pub dynamodb_writes: u64,
    pub dynamodb_reads: u64,
    pub redis_ops: u64,
    pub cloudfront_data_out_gb: f64,
    pub cloudfront_function_invocations: u64,
}

/// Dollars per service and in total: what the sale adds, and beside it the fixed monthly floor
/// the deployment costs with or without a sale (docs/rehearsal.md#the-fixed-monthly-floor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// What the sale adds, the floor left out.
    pub total_usd: f64,
    /// By service, in USD rounded to the cent (`waf`: the requests the web ACL inspects).
    pub by_service: BTreeMap<String, f64>,
    /// The sale's cost per 1,000 visitors of the audience (`totalUsd` ÷ audience × 1,000), to a
    /// hundredth of a cent.
    #[serde(default)]
    pub per1000_visitors_usd: f64,
    /// What the deployment costs a month, sale or not.
    #[serde(default)]
    pub monthly_floor_usd: f64,
    /// The floor by item, USD a month to the cent (`waf`: the web ACL and its rules).
    #[serde(default)]
    pub monthly_floor: BTreeMap<String, f64>,
    pub region: String,
    /// The price table's date.
    pub prices_as_of: String,
}

/// A default quota the sale would exceed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// The quota's name, as AWS (or vwr's Terraform) calls it.
    pub quota: String,
    /// The Service Quotas code, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_quota_code: Option<String>,
    pub needed: u64,
    pub default: u64,
    pub how_to_raise: String,
}

/// Sizes and prices the sale on what the Terraform deploys by default ([`Deployment::default`],
/// docs/rehearsal.md#plan). Fails on invalid inputs ([`Inputs::validate`]).
pub fn plan(inputs: &Inputs, cal: &Calibration, prices: &Prices) -> Result<Plan, PlanError> {
    plan_deployed(inputs, &Deployment::default(), cal, prices)
}

/// Sizes and prices the sale on `deployment` (docs/rehearsal.md#what-the-terraform-deploys).
/// Fails on invalid inputs ([`Inputs::validate`], [`Deployment::validate`]).
pub fn plan_deployed(
    inputs: &Inputs,
    deployment: &Deployment,
    cal: &Calibration,
    prices: &Prices,
) -> Result<Plan, PlanError> {
    inputs.validate(prices)?;
    deployment.validate()?;
    let p = prices.region(&inputs.region)?;
    let dp = DeploymentPrices::for_region(&inputs.region);
    let engine = deployment.redis_engine.prices(&p.elasticache, &dp);
    let d = &cal.derived;
    let c = &cal.costs;

    // The sale's shape.
    let audience = inputs.audience;
    let peak = inputs.peak_arrivals_per_second;
    let outflow = inputs.outflow_per_second();
    let dwell = inputs.dwell_seconds;
    let wait_minutes = inputs.wait_minutes();
    let sale_seconds = wait_minutes * 60.0 + dwell;
    let threshold = inputs.threshold();
    let active = threshold.min(outflow * dwell);

    // Tier 1.
    let assigns = audience * c.assigns_per_visitor;
    let checks = audience * c.checks_per_visitor;
    let mean_wait = wait_minutes * 60.0 / 2.0;
    let status_per_visitor = c.status_fetches_per_visitor
        + (mean_wait - cal.time_to_admission.tier1_p50_seconds).max(0.0) / d.status_poll_max_seconds;
    let status_fetches = audience * status_per_visitor;
    let origin_fetches = c.origin_status_fetches_per_second * sale_seconds;
    let tier1_calls = assigns + checks + origin_fetches;
    let tier1_rps =
        peak * c.assigns_per_visitor + outflow * c.checks_per_visitor + c.origin_status_fetches_per_second;

    // Counter shards.
    let counter_peak = peak * d.counter_writes_per_assign + outflow * d.counter_writes_per_admission;
    let shards_needed = ceil(counter_peak / (WRITES_PER_ITEM_PER_SECOND * SHARD_HEADROOM)).max(1.0);
    let shards = shards_needed.min(MAX_SHARDS as f64);

    // Tier 2.
    let tier2_base = cal.tier2_calls_besides_heartbeats();
    let tier2_per_visitor = tier2_base + dwell / d.heartbeat_seconds;
    let tier2_calls = audience * tier2_per_visitor;
    let tier2_rps = outflow * tier2_base + active / d.heartbeat_seconds;
    let gate_calls = audience * d.protected_calls_per_visitor;
    let gate_rps = outflow * d.protected_calls_per_visitor;
    let line_reads = audience * cal.tier2.line_reads_per_visitor;
    let line_origin = line_reads * (1.0 - cal.tier2.line_cache_hit_share.unwrap_or(0.0));

    // DynamoDB.
    let advancer_steps = sale_seconds / d.advancer_interval_seconds;
    let dynamo_writes =
        audience * (d.dynamodb_writes_per_assign + d.dynamodb_writes_per_admission) + advancer_steps;
    let dynamo_reads =
        checks * d.dynamodb_reads_per_check + origin_fetches * (shards + 1.0) + advancer_steps * shards;
    let dynamo_peak = peak * d.dynamodb_writes_per_assign + outflow * d.dynamodb_writes_per_admission;
    let per_shard_peak = counter_peak / shards;

    // Redis and SQS.
    let redis_ops = tier2_calls * d.redis_ops_per_tier2_call + audience * d.redis_ops_per_admission;
    let redis_rps = tier2_rps * d.redis_ops_per_tier2_call + outflow * d.redis_ops_per_admission;
    let redis_gb = threshold * d.redis_bytes_per_user / 1e9;
    let sqs_messages = audience * d.sqs_messages_per_admission;
    let sqs_requests = ceil(sqs_messages / d.sqs_messages_per_request);

    // CloudFront.
    let edge_requests = audience * d.edge_requests_per_visitor;
    let cloudfront_requests = audience * d.page_requests_per_visitor
        + assigns
        + checks
        + status_fetches
        + (tier2_calls - line_origin).max(0.0)
        + line_reads
        + edge_requests;
    let cloudfront_gb =
        (audience * d.page_bytes_per_visitor + (status_fetches + line_reads) * d.status_document_bytes) / 1e9;
    let cloudfront_rps = peak * (d.page_requests_per_visitor + c.assigns_per_visitor)
        + audience / d.status_poll_max_seconds
        + outflow * (c.checks_per_visitor + d.edge_requests_per_visitor)
        + tier2_rps;

    // Lambda.
    let scheduled_rps = 1.0 / 60.0;
    let functions: [(&str, f64, f64); 5] = [
        ("tier1-api", tier1_rps, tier1_calls),
        ("tier1-advancer", scheduled_rps, ceil(sale_seconds / 60.0)),
        ("tier2-api", tier2_rps, tier2_calls),
        ("tier2-worker", scheduled_rps, ceil(sale_seconds / 60.0)),
        ("tier2-authorizer", gate_rps, gate_calls),
    ];
    let gb_second_price = deployment.architecture.gb_second_price(p);
    let mut lambda_concurrency = BTreeMap::new();
    let mut lambda_invocations = BTreeMap::new();
    let (mut invocations, mut gb_seconds) = (0.0, 0.0);
    for (name, rps, calls) in functions {
        let f = cal.function(name);
        lambda_concurrency.insert(name.to_owned(), ceil(rps * f.duration_ms / 1000.0) as u64);
        lambda_invocations.insert(name.to_owned(), ceil(calls) as u64);
        // The advancer and the worker run every minute, sale or not: in the monthly floor.
        if !SCHEDULED_FUNCTIONS.contains(&name) {
            invocations += ceil(calls);
            gb_seconds += ceil(calls) * f.duration_ms / 1000.0 * f.memory_mb / 1024.0;
        }
    }
    let lambda_concurrency_total = lambda_concurrency.values().sum();

    // Dollars.
    let http_requests = tier1_calls + tier2_calls;
    let log_gb = (http_requests + gate_calls) * d.log_bytes_per_request / 1e9;
    let mut by_service: BTreeMap<String, f64> = [
        ("lambda", invocations / 1e6 * p.lambda.requests_per_million + gb_seconds * gb_second_price),
        (
            "apiGateway",
            http_requests / 1e6 * p.api_gateway.http_per_million
                + gate_calls / 1e6 * p.api_gateway.rest_per_million,
        ),
        (
            "dynamodb",
            dynamo_writes / 1e6 * p.dynamodb.write_request_units_per_million
                + dynamo_reads / 1e6 * p.dynamodb.read_request_units_per_million,
        ),
        (
            "cloudfront",
            cloudfront_requests / 1e4 * p.cloudfront.https_requests_per10k
                + cloudfront_gb * p.cloudfront.data_out_per_gb
                + edge_requests / 1e6 * p.cloudfront.functions_per_million
                + edge_requests * d.kvs_reads_per_edge_request / 1e6 * p.cloudfront.kvs_reads_per_million,
        ),
        (
            // The engine's minimum storage is billed all month (the floor): the sale adds what
            // it stores beyond it.
            "elasticache",
            redis_ops * d.ecpu_per_redis_op / 1e6 * engine.ecpu_per_million
                + (redis_gb - engine.minimum_gb).max(0.0) * engine.gb_hour * sale_seconds / 3600.0,
        ),
        ("sqs", sqs_requests / 1e6 * p.sqs.fifo_requests_per_million),
        ("cloudwatch", log_gb * p.cloudwatch.logs_ingested_per_gb),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), cents(v)))
    .collect();
    if deployment.waf {
        // The web ACL is on the distribution: it inspects every CloudFront request.
        by_service.insert("waf".to_owned(), cents(cloudfront_requests / 1e6 * dp.waf_requests_per_million));
    }
    let total_usd = cents(by_service.values().sum());
    let monthly_floor: BTreeMap<String, f64> =
        deployment.monthly_floor(p, &dp, cal).into_iter().map(|(k, v)| (k.to_owned(), cents(v))).collect();
    let monthly_floor_usd = cents(monthly_floor.values().sum());

    let peak_requests_per_second: BTreeMap<String, u64> =
        [("tier1", tier1_rps), ("tier2", tier2_rps), ("gate", gate_rps), ("cloudfront", cloudfront_rps)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), ceil(v) as u64))
            .collect();

    let mut warnings = Vec::new();
    let mut warn = |needed: f64, default: f64, quota: &str, code: Option<&str>, how: &str| {
        if needed > default {
            warnings.push(Warning {
                quota: quota.to_owned(),
                service_quota_code: code.map(str::to_owned),
                needed: ceil(needed) as u64,
                default: default as u64,
                how_to_raise: how.to_owned(),
            });
        }
    };
    warn(
        lambda_concurrency_total as f64,
        LAMBDA_CONCURRENCY,
        "AWS Lambda: Concurrent executions (per account and region)",
        Some("L-B99A9384"),
        "Service Quotas console or `aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value N`, days before the sale; new accounts may start below 1,000",
    );
    warn(
        tier1_rps + tier2_rps + gate_rps,
        API_GATEWAY_ACCOUNT_RPS,
        "Amazon API Gateway: Throttle rate (requests per second per account and region, burst 5,000)",
        Some("L-8A5B8E43"),
        "Service Quotas (Amazon API Gateway, Throttle rate) or an AWS Support case; ask for the burst with it, then raise the stage throttles",
    );
    warn(
        tier1_rps,
        TIER1_STAGE_RPS,
        "vwr tier-1 API stage throttle (Terraform tier1 api_throttle_rate, burst api_throttle_burst 5,000)",
        None,
        "set api_throttle_rate and api_throttle_burst of the tier1 module, within the account's API Gateway throttle",
    );
    warn(
        tier2_rps,
        TIER2_STAGE_RPS,
        "vwr tier-2 API stage throttle (Terraform tier2 api_throttle_rate, burst api_throttle_burst 2,000)",
        None,
        "set api_throttle_rate and api_throttle_burst of the tier2 module, within the account's API Gateway throttle",
    );
    warn(
        gate_rps,
        GATE_STAGE_RPS,
        "vwr gate stage throttle (Terraform tier2 protected_api_throttle_rate, burst protected_api_throttle_burst 2,000)",
        None,
        "set protected_api_throttle_rate and protected_api_throttle_burst of the tier2 module",
    );
    warn(
        dynamo_peak,
        DYNAMODB_TABLE_WRITES,
        "Amazon DynamoDB: Table-level write throughput limit (on-demand, write request units per second per table)",
        None,
        "Service Quotas (Amazon DynamoDB, Table-level write throughput limit), or set the table's on-demand maximum throughput",
    );
    warn(
        dynamo_peak,
        NEW_ON_DEMAND_TABLE_WRITES as f64,
        "Amazon DynamoDB: warm throughput of a new on-demand table (writes per second it takes at once)",
        None,
        "pre-warm the table before the sale: `aws dynamodb update-table --table-name TABLE --warm-throughput WriteUnitsPerSecond=N` with N the writes/s needed (vwr preflight reads the table's warm throughput); otherwise the open is throttled while the table scales",
    );
    warn(
        shards_needed,
        MAX_SHARDS as f64,
        "vwr counter shards per event (settings: shards 1-64)",
        None,
        "not raisable: spread the open (a pre-queue, docs/lifecycle.md) or split the audience over several events",
    );
    warn(
        per_shard_peak,
        WRITES_PER_ITEM_PER_SECOND,
        "Amazon DynamoDB: writes per second per partition (one shard item)",
        None,
        "not raisable: more shards (at most 64), or a lower peak",
    );
    warn(
        outflow * d.sqs_messages_per_admission,
        SQS_FIFO_GROUP_MESSAGES,
        "Amazon SQS FIFO: messages per second per message group (300 SendMessageBatch calls of 10)",
        None,
        "turn on high throughput for the notices queue (deduplication per message group, FIFO throughput limit per message group id)",
    );
    warn(
        cloudfront_rps,
        CLOUDFRONT_DISTRIBUTION_RPS,
        "Amazon CloudFront: Request rate per distribution (requests per second)",
        None,
        "Service Quotas (Amazon CloudFront) or an AWS Support case, weeks before the sale",
    );
    warn(
        outflow * dwell,
        threshold,
        "vwr tier-2 threshold (active users at once): outflow per second × dwell",
        None,
        "raise the event's tier-2 threshold (or --threshold here), or lower the outflow: otherwise a tier-2 line grows",
    );

    Ok(Plan {
        inputs: inputs.clone(),
        deployment: deployment.clone(),
        shards: shards as u64,
        lambda_concurrency,
        lambda_concurrency_total,
        peak_requests_per_second,
        dynamodb_peak_writes_per_second: ceil(dynamo_peak) as u64,
        dynamodb_peak_writes_per_shard: ceil(per_shard_peak) as u64,
        cloudfront_requests: ceil(cloudfront_requests) as u64,
        redis_ops_per_second: ceil(redis_rps) as u64,
        sqs_messages: ceil(sqs_messages) as u64,
        tier2_threshold: ceil(threshold) as u64,
        totals: Totals {
            wait_minutes: round2(wait_minutes),
            sale_minutes: round2(sale_seconds / 60.0),
            lambda_invocations,
            api_requests: [("tier1", tier1_calls), ("tier2", tier2_calls), ("gate", gate_calls)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), ceil(v) as u64))
                .collect(),
            status_fetches_per_visitor: round2(status_per_visitor),
            tier2_calls_per_visitor: round2(tier2_per_visitor),
            dynamodb_writes: ceil(dynamo_writes) as u64,
            dynamodb_reads: ceil(dynamo_reads) as u64,
            redis_ops: ceil(redis_ops) as u64,
            cloudfront_data_out_gb: round2(cloudfront_gb),
            cloudfront_function_invocations: ceil(edge_requests) as u64,
        },
        cost: Cost {
            total_usd,
            by_service,
            per1000_visitors_usd: round4(total_usd / audience * 1000.0),
            monthly_floor_usd,
            monthly_floor,
            region: inputs.region.clone(),
            prices_as_of: prices.as_of.clone(),
        },
        warnings,
    })
}

fn cents(usd: f64) -> f64 {
    round2(usd)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
