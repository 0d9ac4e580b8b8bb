//! What the adapter saw: plain values, no AWS type. Each reading is found, missing, or not
//! checked with the endpoint's reason.

/// One reading of the account or the stack.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen<T> {
    Found(T),
    /// The resource does not exist (a not-found answer).
    Missing,
    /// The endpoint could not answer (not served, AccessDenied, unreachable): why.
    NotChecked(String),
}

impl<T> Seen<T> {
    /// The value, if found.
    pub fn found(&self) -> Option<&T> {
        match self {
            Seen::Found(v) => Some(v),
            _ => None,
        }
    }

    /// `self` if found, else `other` if found; else `self`'s answer with `other`'s reason added.
    pub fn or(self, other: Seen<T>) -> Seen<T> {
        match (self, other) {
            (Seen::Found(v), _) | (_, Seen::Found(v)) => Seen::Found(v),
            (Seen::NotChecked(a), Seen::NotChecked(b)) => Seen::NotChecked(format!("{a}; {b}")),
            (first, _) => first,
        }
    }
}

/// A quota's value and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    pub value: f64,
    pub source: String,
    /// AWS's default for every account, not this account's value (which may be lower for a
    /// new account, or raised): read only when nothing better answered.
    pub aws_default: bool,
}

/// Lambda's `GetAccountSettings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LambdaAccount {
    pub concurrent_executions: i64,
    pub unreserved: Option<i64>,
}

/// One vwr function's reserved concurrency (`None` = unreserved).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSeen {
    pub key: String,
    pub name: String,
    pub reserved: Seen<Option<i64>>,
}

/// One API stage's throttle rate (requests per second; `None` = no stage throttle).
#[derive(Debug, Clone, PartialEq)]
pub struct StageSeen {
    pub key: String,
    pub api: String,
    pub stage: String,
    pub optional: bool,
    pub rate: Seen<Option<f64>>,
}

/// DynamoDB's `DescribeTable`, the parts preflight reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSeen {
    pub on_demand: bool,
    /// Write capacity units of a provisioned table.
    pub provisioned_writes: Option<i64>,
    /// An on-demand table's maximum write request units per second, if one is set.
    pub max_on_demand_writes: Option<i64>,
    /// The writes per second the table takes at once (its warm throughput), if told.
    pub warm_writes: Option<i64>,
}

/// DynamoDB's `DescribeTimeToLive`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TtlSeen {
    /// `ENABLED`, `DISABLED`, `ENABLING`, `DISABLING`.
    pub status: String,
    pub attribute: Option<String>,
}

/// The edge KeyValueStore's two entries the edge function reads (edge/src/cloudfront-function.js).
#[derive(Debug, Clone, PartialEq)]
pub struct KvsSeen {
    pub config: Seen<String>,
    pub keys: Seen<String>,
}

/// One alarm and its state (`OK`, `ALARM`, `INSUFFICIENT_DATA`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlarmSeen {
    pub name: String,
    pub state: String,
}

/// One rate-based rule of the web ACL: requests per IP per evaluation window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRule {
    pub name: String,
    pub limit: i64,
    pub window_seconds: i64,
    /// The rule only counts (`waf_rate_limit_action = "count"`).
    pub counts_only: bool,
}

/// The WAF web ACL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebAclSeen {
    pub rate_rules: Vec<RateRule>,
}

/// Everything the adapter read.
#[derive(Debug, Clone, PartialEq)]
pub struct Observations {
    /// Service Quotas `L-B99A9384`.
    pub lambda_quota: Seen<Quota>,
    pub lambda_account: Seen<LambdaAccount>,
    pub functions: Vec<FunctionSeen>,
    /// Service Quotas `L-8A5B8E43`.
    pub api_quota: Seen<Quota>,
    /// API Gateway's `GetAccount` throttle rate.
    pub api_account: Seen<Quota>,
    pub stages: Vec<StageSeen>,
    pub table: Seen<TableSeen>,
    pub ttl: Seen<TtlSeen>,
    /// Service Quotas: DynamoDB's table-level write throughput limit.
    pub dynamodb_quota: Seen<Quota>,
    pub kvs: Seen<KvsSeen>,
    /// Every alarm whose name starts with `<prefix>-`.
    pub alarms: Seen<Vec<AlarmSeen>>,
    pub web_acl: Seen<WebAclSeen>,
}

#[cfg(test)]
mod tests {
    use super::Seen;

    #[test]
    fn a_fallback_keeps_both_reasons_and_any_value() {
        let a: Seen<u8> = Seen::NotChecked("a".into());
        assert_eq!(a.clone().or(Seen::Found(1)), Seen::Found(1));
        assert_eq!(a.clone().or(Seen::NotChecked("b".into())), Seen::NotChecked("a; b".into()));
        assert_eq!(Seen::<u8>::Missing.or(Seen::NotChecked("b".into())), Seen::Missing);
        assert_eq!(Seen::Found(2).or(Seen::Found(3)), Seen::Found(2));
    }
}
