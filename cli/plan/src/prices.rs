//! The dated price table: `prices.json`, list prices per region with their source and date
//! (docs/rehearsal.md#where-the-figures-come-from).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::PlanError;

const EMBEDDED: &str = include_str!("../prices.json");

/// List prices per region, dated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    /// The day the table was written (ISO 8601).
    pub as_of: String,
    pub currency: String,
    /// The pricing pages the figures come from.
    pub source: Vec<String>,
    pub notes: Vec<String>,
    pub regions: BTreeMap<String, RegionPrices>,
}

/// One region's prices, in USD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionPrices {
    pub lambda: LambdaPrices,
    pub api_gateway: ApiGatewayPrices,
    pub dynamodb: DynamoPrices,
    pub cloudfront: CloudFrontPrices,
    pub elasticache: ElastiCachePrices,
    pub sqs: SqsPrices,
    pub cloudwatch: CloudWatchPrices,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LambdaPrices {
    pub requests_per_million: f64,
    pub gb_second_arm64: f64,
    pub gb_second_x86: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiGatewayPrices {
    /// HTTP APIs (the tier-1 and tier-2 APIs).
    pub http_per_million: f64,
    /// REST APIs (the entry-token gate in front of protected APIs).
    pub rest_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamoPrices {
    pub write_request_units_per_million: f64,
    pub read_request_units_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloudFrontPrices {
    pub https_requests_per10k: f64,
    pub data_out_per_gb: f64,
    pub functions_per_million: f64,
    pub kvs_reads_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElastiCachePrices {
    pub ecpu_per_million: f64,
    pub gb_hour: f64,
    /// The least storage billed per hour.
    pub minimum_gb: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SqsPrices {
    pub fifo_requests_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloudWatchPrices {
    pub logs_ingested_per_gb: f64,
}

/// Hours a month is billed by (8,760 ÷ 12), for the fixed monthly fees of the floor
/// (docs/rehearsal.md#the-fixed-monthly-floor).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// Prices of what the Terraform deploys beside the sale's requests, for the engine it picks, the
/// WAF it turns on and the fixed monthly floor (docs/rehearsal.md#the-fixed-monthly-floor). Kept
/// here rather than in `prices.json`: the same public list prices as known on the table's
/// `asOf`, first tier, no free tier, approximate outside us-east-1 like the rest of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentPrices {
    /// AWS WAF pricing (https://aws.amazon.com/waf/pricing/): $5.00 per web ACL a month, the same
    /// in every region (the edge's web ACL has scope CLOUDFRONT).
    pub waf_web_acl_per_month: f64,
    /// AWS WAF pricing: $1.00 per rule a month; an AWS managed rule group of the free ones (IP
    /// reputation, known bad inputs, anonymous IP) is one rule.
    pub waf_rule_per_month: f64,
    /// AWS WAF pricing: $0.60 per million requests the web ACL inspects.
    pub waf_requests_per_million: f64,
    /// Amazon ElastiCache pricing, ElastiCache Serverless: Valkey is priced 33 % below Redis OSS
    /// (us-east-1: $0.0837 against $0.125 per GB-hour, $0.00227 against $0.0034 per million
    /// ECPUs), so Valkey's prices are the region's Redis OSS prices of `prices.json` × 0.67.
    pub valkey_share_of_redis_price: f64,
    /// Amazon ElastiCache pricing, ElastiCache Serverless: the least storage billed for Valkey,
    /// 100 MB (Redis OSS: `minimumGb` of `prices.json`, 1 GB).
    pub valkey_minimum_gb: f64,
    /// AWS PrivateLink pricing, interface VPC endpoints: per endpoint per Availability Zone per
    /// hour (us-east-1 $0.01, eu-west-1 $0.011, ap-northeast-1 $0.014, ap-northeast-2 $0.013).
    /// Gateway endpoints (DynamoDB's) are free.
    pub interface_endpoint_per_az_hour: f64,
    /// AWS Secrets Manager pricing: $0.40 per secret a month.
    pub secret_per_month: f64,
    /// Amazon CloudWatch pricing, alarms: $0.10 per standard-resolution alarm metric a month (a
    /// metric-math alarm pays for each metric it reads).
    pub alarm_metric_per_month: f64,
    /// Amazon CloudWatch pricing, dashboards: $3.00 per dashboard a month.
    pub dashboard_per_month: f64,
    /// Amazon CloudWatch pricing, metrics: $0.30 per custom metric a month (first 10,000).
    pub custom_metric_per_month: f64,
    /// Amazon EventBridge pricing, EventBridge Scheduler: $1.00 per million invocations.
    pub scheduler_invocations_per_million: f64,
}

impl DeploymentPrices {
    /// The prices for `region`: all but the interface endpoint's are the same in the regions of
    /// `prices.json`; an unknown region gets us-east-1's (`Prices::region` refuses it first).
    pub fn for_region(region: &str) -> Self {
        let interface_endpoint_per_az_hour = match region {
            "eu-west-1" => 0.011,
            "ap-northeast-1" => 0.014,
            "ap-northeast-2" => 0.013,
            _ => 0.01,
        };
        Self {
            waf_web_acl_per_month: 5.0,
            waf_rule_per_month: 1.0,
            waf_requests_per_million: 0.60,
            valkey_share_of_redis_price: 0.67,
            valkey_minimum_gb: 0.1,
            interface_endpoint_per_az_hour,
            secret_per_month: 0.40,
            alarm_metric_per_month: 0.10,
            dashboard_per_month: 3.00,
            custom_metric_per_month: 0.30,
            scheduler_invocations_per_million: 1.00,
        }
    }
}

impl Prices {
    /// The table kept in the repository (`cli/plan/prices.json`).
    pub fn embedded() -> Result<Self, PlanError> {
        Self::from_json(EMBEDDED)
    }

    /// A table in the shape of `prices.json`, every price checked to be a number ≥ 0.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        let prices: Self = serde_json::from_str(text).map_err(|e| PlanError::Prices(e.to_string()))?;
        if prices.regions.is_empty() {
            return Err(PlanError::Prices("no region".to_owned()));
        }
        for (region, p) in &prices.regions {
            let value = serde_json::to_value(p).map_err(|e| PlanError::Prices(e.to_string()))?;
            check_numbers(region, &value)?;
        }
        Ok(prices)
    }

    /// The prices of `region`, or [`PlanError::UnknownRegion`] naming the known ones.
    pub fn region(&self, region: &str) -> Result<&RegionPrices, PlanError> {
        self.regions.get(region).ok_or_else(|| PlanError::UnknownRegion {
            region: region.to_owned(),
            known: self.regions.keys().map(String::as_str).collect::<Vec<_>>().join(", "),
        })
    }
}

fn check_numbers(path: &str, value: &serde_json::Value) -> Result<(), PlanError> {
    match value {
        serde_json::Value::Object(map) => {
            map.iter().try_for_each(|(k, v)| check_numbers(&format!("{path}.{k}"), v))
        }
        serde_json::Value::Number(n) if n.as_f64().is_some_and(|x| x >= 0.0) => Ok(()),
        other => Err(PlanError::Prices(format!("{path} is {other}, not a price ≥ 0"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_is_dated_sourced_and_has_the_four_regions() {
        let p = Prices::embedded().unwrap();
        assert_eq!(p.as_of.len(), 10, "an ISO date");
        assert!(p.source.iter().all(|s| s.starts_with("https://aws.amazon.com/")));
        for r in ["us-east-1", "eu-west-1", "ap-northeast-1", "ap-northeast-2"] {
            assert!(p.region(r).is_ok(), "{r}");
        }
    }

    #[test]
    fn an_unknown_region_names_the_known_ones() {
        let e = Prices::embedded().unwrap().region("mars-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "no prices for region \"mars-1\"; known regions: ap-northeast-1, ap-northeast-2, eu-west-1, us-east-1"
        );
    }

    #[test]
    fn valkey_is_a_third_cheaper_than_redis_oss_as_the_pricing_page_says() {
        let us = Prices::embedded().unwrap().region("us-east-1").unwrap().elasticache.clone();
        let d = DeploymentPrices::for_region("us-east-1");
        let near = |a: f64, b: f64| (a - b).abs() / b < 0.005;
        assert!(near(us.gb_hour * d.valkey_share_of_redis_price, 0.0837));
        assert!(near(us.ecpu_per_million * d.valkey_share_of_redis_price, 0.00227));
        assert_eq!(d.valkey_minimum_gb, 0.1);
        assert_eq!(d.waf_requests_per_million, 0.60);
        assert!(DeploymentPrices::for_region("ap-northeast-1").interface_endpoint_per_az_hour > 0.01);
    }

    #[test]
    fn a_negative_price_is_refused() {
        let text = EMBEDDED.replacen("\"gbHour\": 0.125", "\"gbHour\": -0.125", 1);
        assert_ne!(text, EMBEDDED);
        let e = Prices::from_json(&text).unwrap_err();
        assert!(e.to_string().contains("us-east-1.elasticache.gbHour"), "{e}");
    }
}
