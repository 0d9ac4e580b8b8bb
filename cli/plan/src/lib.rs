//! What a sale needs and costs, behind `vwr plan` (docs/rehearsal.md#plan).
//!
//! From a sale's [`Inputs`] (audience, peak arrivals, outflow, tier-2 threshold, dwell, region),
//! the per-visitor calls `vwr loadtest` measured ([`Calibration`], `calibration.json`) and a
//! dated price table ([`Prices`], `prices.json`), [`plan`] answers the counter shards, the
//! Lambda concurrency per function, the peak requests per second per API stage, DynamoDB's peak
//! writes, CloudFront requests, Redis operations, SQS messages, the dollars per service, and a
//! warning for every default quota the sale would exceed, priced on what the Terraform deploys
//! ([`Deployment`]: x86_64 Lambda, Valkey, the WAF, the VPC endpoints) with the fixed monthly
//! floor that deployment costs beside the sale. [`render_table`] prints it for people; the
//! [`Plan`] serializes to the JSON of docs/rehearsal.md#plan (`shards`, `lambdaConcurrency`,
//! `peakRequestsPerSecond`, `cost {totalUsd, byService, per1000VisitorsUsd, monthlyFloorUsd,
//! monthlyFloor}`, `warnings`).
//!
//! Pure arithmetic: no AWS call, no clock, no I/O beyond the two embedded files. Every formula
//! is written out in docs/rehearsal.md#how-each-figure-is-derived.

mod calibration;
mod deployment;
mod error;
mod inputs;
mod model;
mod prices;
mod table;

pub use calibration::{
    Calibration, Derived, FunctionProfile, MeasuredCosts, Run, RunConfig, Source, Tier1Wait, Tier2Measured,
};
pub use deployment::{
    ALARM_METRICS, ALWAYS_ON_METRICS, Architecture, DASHBOARDS, Deployment, INTERFACE_ENDPOINTS, RedisEngine,
    SCHEDULED_FUNCTIONS, SECRETS, WAF_RULES,
};
pub use error::PlanError;
pub use inputs::{DEFAULT_DWELL_SECONDS, DEFAULT_REGION, Inputs};
pub use model::{
    Cost, MAX_SHARDS, NEW_ON_DEMAND_TABLE_WRITES, Plan, SHARD_HEADROOM, Totals, WRITES_PER_ITEM_PER_SECOND,
    Warning, plan, plan_deployed,
};
pub use prices::{
    ApiGatewayPrices, CloudFrontPrices, CloudWatchPrices, DeploymentPrices, DynamoPrices, ElastiCachePrices,
    HOURS_PER_MONTH, LambdaPrices, Prices, RegionPrices, SqsPrices,
};
pub use table::{group, render_table};
