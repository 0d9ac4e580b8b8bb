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
    fn a_negative_price_is_refused() {
        let text = EMBEDDED.replacen("\"gbHour\": 0.125", "\"gbHour\": -0.125", 1);
        assert_ne!(text, EMBEDDED);
        let e = Prices::from_json(&text).unwrap_err();
        assert!(e.to_string().contains("us-east-1.elasticache.gbHour"), "{e}");
    }
}
