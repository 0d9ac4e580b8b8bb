//! The plan as people read it: `vwr plan` without `--json` (docs/rehearsal.md#worked-example).

use std::fmt::Write as _;

use crate::deployment::{
    ALARM_METRICS, ALWAYS_ON_METRICS, INTERFACE_ENDPOINTS, SCHEDULED_FUNCTIONS, SECRETS, WAF_RULES,
};
use crate::model::Plan;

/// The human table of a plan: the sale, what is deployed, what it needs, what the sale costs
/// beside the fixed monthly floor, the warnings.
pub fn render_table(plan: &Plan) -> String {
    let i = &plan.inputs;
    let t = &plan.totals;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "sale: {} visitors, peak {} arrivals/s, {} let through per minute, dwell {} s, {}",
        group(i.audience),
        group(i.peak_arrivals_per_second),
        group(i.outflow_per_minute),
        group(i.dwell_seconds),
        i.region
    ));
    line(format!(
        "      line drains in {} min, sale runs {} min; tier-2 threshold {}",
        t.wait_minutes,
        t.sale_minutes,
        group(plan.tier2_threshold as f64)
    ));
    let d = &plan.deployment;
    line(format!(
        "deployed: Lambda {}, ElastiCache Serverless {}, WAF {}, VPC endpoints {}",
        d.architecture,
        d.redis_engine,
        if d.waf { "on" } else { "off" },
        if d.vpc_endpoints { format!("in {} zones", d.availability_zones) } else { "off".to_owned() }
    ));
    line(String::new());
    line(format!("{:<44}{:>14}", "needs", "at the peak"));
    line(format!("{:<44}{:>14}", "counter shards", group(plan.shards as f64)));
    line(format!("{:<44}{:>14}", "DynamoDB writes/s", group(plan.dynamodb_peak_writes_per_second as f64)));
    line(format!("{:<44}{:>14}", "  per shard item", group(plan.dynamodb_peak_writes_per_shard as f64)));
    for (stage, name) in [
        ("tier1", "API Gateway tier1 stage requests/s"),
        ("tier2", "API Gateway tier2 stage requests/s"),
        ("gate", "API Gateway gate stage requests/s"),
        ("cloudfront", "CloudFront requests/s"),
    ] {
        if let Some(rps) = plan.peak_requests_per_second.get(stage) {
            line(format!("{name:<44}{:>14}", group(*rps as f64)));
        }
    }
    for (function, n) in &plan.lambda_concurrency {
        line(format!("{:<44}{:>14}", format!("Lambda concurrency {function}"), group(*n as f64)));
    }
    line(format!(
        "{:<44}{:>14}",
        "Lambda concurrency, all functions",
        group(plan.lambda_concurrency_total as f64)
    ));
    line(format!("{:<44}{:>14}", "Redis operations/s", group(plan.redis_ops_per_second as f64)));
    line(String::new());
    line(format!("{:<44}{:>14}", "over the sale", "total"));
    line(format!("{:<44}{:>14}", "CloudFront requests", group(plan.cloudfront_requests as f64)));
    for api in ["tier1", "tier2", "gate"] {
        if let Some(n) = t.api_requests.get(api) {
            line(format!("{:<44}{:>14}", format!("API Gateway {api} requests"), group(*n as f64)));
        }
    }
    line(format!("{:<44}{:>14}", "DynamoDB writes", group(t.dynamodb_writes as f64)));
    line(format!("{:<44}{:>14}", "DynamoDB reads", group(t.dynamodb_reads as f64)));
    line(format!("{:<44}{:>14}", "Redis operations", group(t.redis_ops as f64)));
    line(format!("{:<44}{:>14}", "SQS messages", group(plan.sqs_messages as f64)));
    line(String::new());
    line(format!(
        "{:<44}{:>14}",
        format!("cost of the sale (USD, prices of {})", plan.cost.prices_as_of),
        "the sale"
    ));
    for (service, usd) in &plan.cost.by_service {
        let name = match service.as_str() {
            "lambda" => format!("lambda ({})", d.architecture),
            "elasticache" => format!("elasticache ({})", d.redis_engine),
            "waf" => "waf (requests inspected)".to_owned(),
            other => other.to_owned(),
        };
        line(format!("{name:<44}{usd:>14.2}"));
    }
    line(format!("{:<44}{:>14.2}", "total", plan.cost.total_usd));
    line(format!("{:<44}{:>14.4}", "per 1,000 visitors", plan.cost.per1000_visitors_usd));
    line(String::new());
    line(format!("{:<44}{:>14}", "fixed monthly floor (USD, sale or not)", "a month"));
    for (item, usd) in &plan.cost.monthly_floor {
        let name = match item.as_str() {
            "waf" => format!("waf (web ACL + {WAF_RULES} rules)"),
            "vpcEndpoints" => {
                format!("vpcEndpoints ({INTERFACE_ENDPOINTS} interface × {} zones)", d.availability_zones)
            }
            "elasticache" => format!("elasticache ({} minimum storage)", d.redis_engine),
            "lambda" => format!("lambda ({}, {} every minute)", d.architecture, SCHEDULED_FUNCTIONS.len()),
            "eventbridgeScheduler" => {
                format!("eventbridgeScheduler ({} schedules)", SCHEDULED_FUNCTIONS.len())
            }
            "secretsManager" => format!("secretsManager ({SECRETS} secrets)"),
            "cloudwatch" => {
                format!("cloudwatch ({ALARM_METRICS} alarms, {ALWAYS_ON_METRICS} metrics, dashboard)")
            }
            other => other.to_owned(),
        };
        line(format!("{name:<44}{usd:>14.2}"));
    }
    line(format!("{:<44}{:>14.2}", "total a month", plan.cost.monthly_floor_usd));
    line(String::new());
    line(format!(
        "{:<44}{:>14.2}",
        "the sale + one month's floor",
        plan.cost.total_usd + plan.cost.monthly_floor_usd
    ));
    line(String::new());
    if plan.warnings.is_empty() {
        line("warnings: none (no default quota exceeded)".to_owned());
    } else {
        line("warnings: default quotas the sale exceeds".to_owned());
        for w in &plan.warnings {
            let code = w.service_quota_code.as_deref().map(|c| format!(" [{c}]")).unwrap_or_default();
            line(format!(
                "! {}{code}: needs {}, default {}",
                w.quota,
                group(w.needed as f64),
                group(w.default as f64)
            ));
            line(format!("  raise: {}", w.how_to_raise));
        }
    }
    out
}

/// A number with thousands separators; whole numbers without decimals, others with up to two
/// (`vwr plan`'s table and `vwr preflight`'s rows).
pub fn group(x: f64) -> String {
    let whole = x.trunc();
    let frac = ((x - whole) * 100.0).round();
    let mut digits = String::new();
    let s = format!("{}", whole.abs() as u64);
    for (n, ch) in s.chars().enumerate() {
        if n > 0 && (s.len() - n) % 3 == 0 {
            digits.push(',');
        }
        digits.push(ch);
    }
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    out.push_str(&digits);
    if frac != 0.0 {
        let _ = write!(out, ".{:02}", frac.abs() as u64);
        while out.ends_with('0') {
            out.pop();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(group(0.0), "0");
        assert_eq!(group(999.0), "999");
        assert_eq!(group(1_000.0), "1,000");
        assert_eq!(group(500_000.0), "500,000");
        assert_eq!(group(1_234_567.5), "1,234,567.5");
        assert_eq!(group(166.67), "166.67");
    }
}
