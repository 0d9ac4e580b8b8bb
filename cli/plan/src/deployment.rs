//! What the Terraform deploys, as far as the dollars go: the Lambda architecture, the Redis
//! engine, the WAF, the VPC endpoints — the defaults of terraform/modules/* unless told — and
//! the fixed monthly floor they cost with or without a sale
//! (docs/rehearsal.md#what-the-terraform-deploys, docs/rehearsal.md#the-fixed-monthly-floor).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::error::PlanError;
use crate::prices::{DeploymentPrices, ElastiCachePrices, HOURS_PER_MONTH, RegionPrices};

/// Rules of the edge's web ACL by default: the AWS managed IP-reputation and known-bad-inputs
/// groups and the per-IP rate rules on assign, check and /api/queue/* (terraform/modules/edge/
/// waf.tf; the anonymous-IP group is off by default).
pub const WAF_RULES: u32 = 5;
/// Interface endpoints of tier 2's VPC: SQS and Secrets Manager (terraform/modules/tier2/
/// network.tf; DynamoDB's is a gateway endpoint, free).
pub const INTERFACE_ENDPOINTS: u32 = 2;
/// Secrets Manager secrets: tier 1's keys and origin secret, tier 2's entry keys, tier-1 link and
/// Redis URL (terraform/modules/tier1/main.tf, terraform/modules/tier2/keys.tf, redis.tf).
pub const SECRETS: u32 = 5;
/// Functions EventBridge Scheduler invokes every minute, sale or not: tier 1's advancer and tier
/// 2's worker (terraform/modules/lambda/schedule.tf, `rate(1 minute)`).
pub const SCHEDULED_FUNCTIONS: [&str; 2] = ["tier1-advancer", "tier2-worker"];
/// Alarm metrics of terraform/modules/observability with terraform/examples/complete: the two
/// APIs' 5xx rate (2 metrics each), the origin's 5xx rate (2), errors and throttles of the six
/// functions (12), the advancer and worker not running, edge sync, standby alarm, notice
/// failures and DLQ (6), and the advancer-stuck query (1).
pub const ALARM_METRICS: u32 = 25;
/// CloudWatch dashboards (terraform/modules/observability).
pub const DASHBOARDS: u32 = 1;
/// Custom metrics published every minute, sale or not: the log metric filters with a default
/// value on the advancer's and the worker's logs (AdvancerRuns, EdgeSyncFailures,
/// StandbyAlarmUnreadable, WorkerRuns, NoticeFailuresTotal).
pub const ALWAYS_ON_METRICS: u32 = 5;

/// The Lambda instruction set (`architecture` of the tier modules; x86_64 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Architecture {
    #[default]
    #[serde(rename = "x86_64")]
    X86,
    #[serde(rename = "arm64")]
    Arm64,
}

/// The ElastiCache Serverless engine (`redis_engine` of the tier2 module; valkey by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedisEngine {
    #[default]
    Valkey,
    Redis,
}

impl Architecture {
    pub const NAMES: [&'static str; 2] = ["x86_64", "arm64"];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::X86 => "x86_64",
            Self::Arm64 => "arm64",
        }
    }

    /// The region's Lambda price per GB-second for this instruction set.
    pub fn gb_second_price(self, p: &RegionPrices) -> f64 {
        match self {
            Self::X86 => p.lambda.gb_second_x86,
            Self::Arm64 => p.lambda.gb_second_arm64,
        }
    }
}

impl RedisEngine {
    pub const NAMES: [&'static str; 2] = ["valkey", "redis"];

    /// As Terraform spells it (`redis_engine`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Valkey => "valkey",
            Self::Redis => "redis",
        }
    }

    /// As the ElastiCache pricing page names it.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Valkey => "Valkey",
            Self::Redis => "Redis OSS",
        }
    }

    /// The engine's Serverless prices: `prices.json` holds Redis OSS's; Valkey's are a third
    /// lower with a 100 MB minimum ([`DeploymentPrices`]).
    pub fn prices(self, redis_oss: &ElastiCachePrices, d: &DeploymentPrices) -> ElastiCachePrices {
        match self {
            Self::Redis => redis_oss.clone(),
            Self::Valkey => ElastiCachePrices {
                ecpu_per_million: redis_oss.ecpu_per_million * d.valkey_share_of_redis_price,
                gb_hour: redis_oss.gb_hour * d.valkey_share_of_redis_price,
                minimum_gb: d.valkey_minimum_gb,
            },
        }
    }
}

fn unknown(flag: &'static str, value: &str, known: &[&str]) -> PlanError {
    PlanError::UnknownChoice { flag, value: value.to_owned(), known: known.join(", ") }
}

impl FromStr for Architecture {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Self, PlanError> {
        match s {
            "x86_64" => Ok(Self::X86),
            "arm64" => Ok(Self::Arm64),
            other => Err(unknown("architecture", other, &Self::NAMES)),
        }
    }
}

impl FromStr for RedisEngine {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Self, PlanError> {
        match s {
            "valkey" => Ok(Self::Valkey),
            "redis" => Ok(Self::Redis),
            other => Err(unknown("redis-engine", other, &Self::NAMES)),
        }
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for RedisEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// What is deployed: by default ([`Deployment::default`]) what terraform/modules/* and
/// terraform/examples/complete deploy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    /// The functions' instruction set (`--architecture`).
    pub architecture: Architecture,
    /// Tier 2's ElastiCache Serverless engine (`--redis-engine`).
    pub redis_engine: RedisEngine,
    /// The edge's WAF web ACL (`waf_enabled`, on by default; off with `--no-waf`).
    pub waf: bool,
    /// Tier 2's interface VPC endpoints (`create_vpc_endpoints`, on by default; off with
    /// `--no-vpc-endpoints`).
    pub vpc_endpoints: bool,
    /// Availability Zones of tier 2's subnets, 2 or 3 (`--availability-zones`; 2 in
    /// terraform/examples/complete): each interface endpoint is billed per zone.
    pub availability_zones: u32,
}

impl Default for Deployment {
    fn default() -> Self {
        Self {
            architecture: Architecture::X86,
            redis_engine: RedisEngine::Valkey,
            waf: true,
            vpc_endpoints: true,
            availability_zones: 2,
        }
    }
}

impl Deployment {
    /// Refuses a zone count tier 2's subnets cannot have (2 or 3).
    pub fn validate(&self) -> Result<(), PlanError> {
        if (2..=3).contains(&self.availability_zones) {
            Ok(())
        } else {
            Err(PlanError::AvailabilityZones(self.availability_zones))
        }
    }

    /// What the deployment costs a month with or without a sale, by item, USD unrounded
    /// (docs/rehearsal.md#the-fixed-monthly-floor). The sale's own cost leaves these out.
    pub(crate) fn monthly_floor(
        &self,
        p: &RegionPrices,
        d: &DeploymentPrices,
        cal: &Calibration,
    ) -> BTreeMap<&'static str, f64> {
        let engine = self.redis_engine.prices(&p.elasticache, d);
        let runs_per_month = HOURS_PER_MONTH * 60.0;
        let scheduled_gb_seconds: f64 = SCHEDULED_FUNCTIONS
            .iter()
            .map(|name| {
                let f = cal.function(name);
                runs_per_month * f.duration_ms / 1000.0 * f.memory_mb / 1024.0
            })
            .sum();
        let scheduled_runs = runs_per_month * SCHEDULED_FUNCTIONS.len() as f64;
        let mut floor = BTreeMap::new();
        if self.waf {
            floor.insert("waf", d.waf_web_acl_per_month + f64::from(WAF_RULES) * d.waf_rule_per_month);
        }
        if self.vpc_endpoints {
            floor.insert(
                "vpcEndpoints",
                f64::from(INTERFACE_ENDPOINTS * self.availability_zones)
                    * d.interface_endpoint_per_az_hour
                    * HOURS_PER_MONTH,
            );
        }
        floor.insert("elasticache", engine.minimum_gb * engine.gb_hour * HOURS_PER_MONTH);
        floor.insert(
            "lambda",
            scheduled_runs / 1e6 * p.lambda.requests_per_million
                + scheduled_gb_seconds * self.architecture.gb_second_price(p),
        );
        floor.insert("eventbridgeScheduler", scheduled_runs / 1e6 * d.scheduler_invocations_per_million);
        floor.insert("secretsManager", f64::from(SECRETS) * d.secret_per_month);
        floor.insert(
            "cloudwatch",
            f64::from(ALARM_METRICS) * d.alarm_metric_per_month
                + f64::from(DASHBOARDS) * d.dashboard_per_month
                + f64::from(ALWAYS_ON_METRICS) * d.custom_metric_per_month,
        );
        floor
    }
}
