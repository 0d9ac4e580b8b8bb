//! What the plan needs: the part of `vwr plan --json` preflight compares against
//! (docs/rehearsal.md#plan).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::PreflightError;

/// The figures of a `vwr plan --json` file preflight checks. Other keys are ignored; these are
/// required, so a file that is not a plan is refused rather than read as "needs nothing".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanNeeds {
    /// Concurrent executions per function at the peak (`tier1-api`, …).
    pub lambda_concurrency: BTreeMap<String, u64>,
    pub lambda_concurrency_total: u64,
    /// Per API stage (`tier1`, `tier2`, `gate`) and `cloudfront`.
    pub peak_requests_per_second: BTreeMap<String, u64>,
    pub dynamodb_peak_writes_per_second: u64,
}

impl PlanNeeds {
    /// The needs of a plan file's text; `path` names it in the error.
    pub fn from_json(path: &str, text: &str) -> Result<Self, PreflightError> {
        serde_json::from_str(text)
            .map_err(|e| PreflightError::PlanInvalid { path: path.to_owned(), reason: e.to_string() })
    }

    /// Requests per second the account's API Gateway throttle must take: the three stages' peaks.
    pub fn api_account_rps(&self) -> u64 {
        ["tier1", "tier2", "gate"].iter().filter_map(|k| self.peak_requests_per_second.get(*k)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_the_plan_keys_is_refused() {
        let e = PlanNeeds::from_json("x.json", r#"{"shards": 3}"#).unwrap_err();
        assert!(e.to_string().contains("x.json"), "{e}");
        assert!(e.to_string().contains("lambdaConcurrency"), "{e}");
    }

    #[test]
    fn the_account_throttle_needs_the_three_stages() {
        let n = PlanNeeds {
            peak_requests_per_second: [("tier1", 10), ("tier2", 5), ("gate", 1), ("cloudfront", 100)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            ..Default::default()
        };
        assert_eq!(n.api_account_rps(), 16);
    }
}
