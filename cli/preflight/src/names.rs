//! The names of the deployed resources, from the Terraform modules' naming (`var.name` is the
//! prefix; terraform/modules/*/main.tf).

/// The Terraform modules' default `name`.
pub const DEFAULT_PREFIX: &str = "vwr";

/// The functions `vwr plan` sizes: the keys of its `lambdaConcurrency`, and the function names'
/// suffixes (`<prefix>-<key>`).
pub const PLANNED_FUNCTIONS: [&str; 5] =
    ["tier1-api", "tier1-advancer", "tier2-api", "tier2-worker", "tier2-authorizer"];

/// Every vwr function: the planned ones and the admin API's.
pub const FUNCTIONS: [&str; 6] =
    ["tier1-api", "tier1-admin", "tier1-advancer", "tier2-api", "tier2-worker", "tier2-authorizer"];

/// API Gateway's two APIs: the tier APIs are HTTP APIs (`aws_apigatewayv2_*`), the
/// protected-API gate a REST API (`aws_api_gateway_*`, modules/tier2/gate.tf).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKind {
    Http,
    Rest,
}

/// One API stage: its plan key (`peakRequestsPerSecond`), the API's name, the stage's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageName {
    pub key: &'static str,
    pub kind: ApiKind,
    pub api: String,
    pub stage: String,
    /// Absent unless the operator turned it on (tier 2's `protected_backend_url`): its absence
    /// is a warning, not a failure.
    pub optional: bool,
}

/// What preflight reads, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The modules' `name` (`vwr`).
    pub prefix: String,
    /// The tier-1 table (`<prefix>-tier1`).
    pub table: String,
    /// The edge KeyValueStore's ARN (Terraform output `kvs_arn`): its id is not derivable.
    pub kvs_arn: Option<String>,
    /// The CloudFront-scope WAF web ACL (`<prefix>-edge`, modules/edge/waf.tf).
    pub web_acl: String,
}

impl Names {
    /// The names the Terraform modules give with `name = prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            table: format!("{prefix}-tier1"),
            kvs_arn: None,
            web_acl: format!("{prefix}-edge"),
        }
    }

    /// A function's name from its key (`tier1-api` → `vwr-tier1-api`).
    pub fn function(&self, key: &str) -> String {
        format!("{}-{key}", self.prefix)
    }

    /// The public API stages: tier 1's and tier 2's HTTP APIs (`$default` stage, throttled by
    /// `default_route_settings`), the gate's REST API (`live`, throttled by method settings `*/*`).
    pub fn stages(&self) -> Vec<StageName> {
        let p = &self.prefix;
        vec![
            StageName {
                key: "tier1",
                kind: ApiKind::Http,
                api: format!("{p}-tier1"),
                stage: "$default".into(),
                optional: false,
            },
            StageName {
                key: "tier2",
                kind: ApiKind::Http,
                api: format!("{p}-tier2"),
                stage: "$default".into(),
                optional: false,
            },
            StageName {
                key: "gate",
                kind: ApiKind::Rest,
                api: format!("{p}-protected"),
                stage: "live".into(),
                optional: true,
            },
        ]
    }

    /// The alarms modules/observability always creates (its `alarm_names` output less the
    /// optional origin-5xx and per-event line-stalled alarms).
    pub fn expected_alarms(&self) -> Vec<String> {
        let p = &self.prefix;
        let mut names = vec![format!("{p}-tier1-api-5xx"), format!("{p}-tier2-api-5xx")];
        for f in FUNCTIONS {
            names.push(format!("{p}-{f}-errors"));
            names.push(format!("{p}-{f}-throttles"));
        }
        for a in [
            "tier1-advancer-not-running",
            "tier2-worker-not-running",
            "tier2-notice-failures",
            "tier2-notice-dlq",
        ] {
            names.push(format!("{p}-{a}"));
        }
        names.push(format!("{p}-tier1-advancer-stuck"));
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_terraform_modules() {
        let n = Names::new("shop");
        assert_eq!(n.table, "shop-tier1");
        assert_eq!(n.web_acl, "shop-edge");
        assert_eq!(n.function("tier2-worker"), "shop-tier2-worker");
        let stages = n.stages();
        assert_eq!(stages[2].api, "shop-protected");
        assert_eq!(stages[2].stage, "live");
        let alarms = n.expected_alarms();
        assert_eq!(alarms.len(), 19);
        assert!(alarms.contains(&"shop-tier1-advancer-not-running".to_owned()));
    }
}
