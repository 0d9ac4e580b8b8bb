//! Observations and the plan's needs → one row per check. Each rule is written out in
//! docs/rehearsal.md#preflight.

use crate::check::{Report, Row, Status, capacity, group};
use crate::names::{Names, PLANNED_FUNCTIONS};
use crate::needs::PlanNeeds;
use crate::observe::{
    AlarmSeen, FunctionSeen, KvsSeen, LambdaAccount, Observations, Quota, Seen, StageSeen, TableSeen,
    TtlSeen, WebAclSeen,
};

/// The attribute the table's items expire on (functions/tier1-store/src/dynamo/table.rs).
const TTL_ATTRIBUTE: &str = "expiresAt";

/// Every row, in a fixed order: Lambda, API Gateway, DynamoDB, the edge store, alarms, WAF.
pub fn judge(seen: &Observations, names: &Names, plan: Option<&PlanNeeds>) -> Report {
    let mut rows = Vec::new();
    let lambda_limit = limit(&seen.lambda_quota, account_limit(&seen.lambda_account));
    rows.push(quota_row(
        "Lambda concurrent executions (L-B99A9384)",
        &lambda_limit,
        plan.map(|p| p.lambda_concurrency_total),
    ));
    rows.push(unreserved_row(&seen.lambda_account, &seen.functions, plan));
    rows.extend(seen.functions.iter().map(|f| function_row(f, plan)));
    let api_limit = limit(&seen.api_quota, seen.api_account.clone());
    rows.push(quota_row(
        "API Gateway account throttle rate (L-8A5B8E43)",
        &api_limit,
        plan.map(PlanNeeds::api_account_rps),
    ));
    rows.extend(seen.stages.iter().map(|s| stage_row(s, plan)));
    let writes = plan.map(|p| p.dynamodb_peak_writes_per_second);
    rows.push(table_row(&names.table, &seen.table, writes));
    rows.push(ttl_row(&names.table, &seen.ttl));
    rows.push(quota_row("DynamoDB table-level write throughput limit", &seen.dynamodb_quota, writes));
    rows.extend(kvs_rows(&seen.kvs));
    rows.extend(alarm_rows(&seen.alarms, &names.expected_alarms()));
    rows.push(web_acl_row(&names.web_acl, &seen.web_acl));
    Report { checks: rows }
}

fn not_checked(check: &str, reason: &str) -> Row {
    Row::new(check, Status::NotChecked).note(reason)
}

/// The account's limit: its applied quota, else what the service says of the account, else AWS's
/// default for every account.
fn limit(quota: &Seen<Quota>, account: Seen<Quota>) -> Seen<Quota> {
    match quota {
        Seen::Found(q) if !q.aws_default => quota.clone(),
        _ => account.or(quota.clone()),
    }
}

fn account_limit(account: &Seen<LambdaAccount>) -> Seen<Quota> {
    match account {
        Seen::Found(a) => Seen::Found(Quota {
            value: a.concurrent_executions as f64,
            source: "Lambda GetAccountSettings".into(),
            aws_default: false,
        }),
        Seen::Missing => Seen::Missing,
        Seen::NotChecked(r) => Seen::NotChecked(r.clone()),
    }
}

/// An account quota against the plan's figure. A quota is never "missing": unread, it is not checked.
fn quota_row(check: &str, quota: &Seen<Quota>, needed: Option<u64>) -> Row {
    match quota {
        Seen::Found(q) => {
            let mut status = capacity(q.value, needed);
            let mut note = q.source.clone();
            if q.aws_default && status != Status::Fail {
                // A default only overstates a new account's limit: below the need it fails,
                // above it is no proof.
                status = Status::Warn;
                note.push_str("; only AWS's default could be read, not this account's value: check it in Service Quotas");
            }
            if status == Status::Fail {
                note.push_str("; raise it through Service Quotas days before the sale");
            }
            Row::new(check, status).value(q.value).needed(needed).note(note)
        }
        Seen::Missing => not_checked(check, "the quota is not listed").needed(needed),
        Seen::NotChecked(r) => not_checked(check, r).needed(needed),
    }
}

/// The account's unreserved pool must hold every planned function that reserves nothing
/// (a function whose reservation could not be read is counted in: the cautious side).
fn unreserved_row(
    account: &Seen<LambdaAccount>,
    functions: &[FunctionSeen],
    plan: Option<&PlanNeeds>,
) -> Row {
    const CHECK: &str = "Lambda unreserved concurrency";
    let needed = plan.map(|p| {
        PLANNED_FUNCTIONS
            .iter()
            .filter(|key| {
                !functions.iter().any(|f| f.key == **key && matches!(f.reserved, Seen::Found(Some(_))))
            })
            .filter_map(|key| p.lambda_concurrency.get(*key))
            .sum()
    });
    match account {
        Seen::Found(LambdaAccount { unreserved: Some(u), .. }) => {
            Row::new(CHECK, capacity(*u as f64, needed))
                .value(*u as f64)
                .needed(needed)
                .note("Lambda GetAccountSettings; the planned functions without a reservation share it")
        }
        Seen::Found(_) => {
            not_checked(CHECK, "GetAccountSettings gave no UnreservedConcurrentExecutions").needed(needed)
        }
        Seen::Missing => not_checked(CHECK, "GetAccountSettings: no account settings").needed(needed),
        Seen::NotChecked(r) => not_checked(CHECK, r).needed(needed),
    }
}

fn function_row(f: &FunctionSeen, plan: Option<&PlanNeeds>) -> Row {
    let check = format!("Lambda {} reserved concurrency", f.key);
    let needed = plan.and_then(|p| p.lambda_concurrency.get(&f.key).copied());
    match &f.reserved {
        Seen::Found(None) => Row::new(check, Status::Ok)
            .seen("unreserved")
            .needed(needed)
            .note(format!("{}: draws on the account's unreserved pool", f.name)),
        Seen::Found(Some(r)) if *r <= 0 => Row::new(check, Status::Fail)
            .value(0.0)
            .needed(needed)
            .note(format!("{}: reserved concurrency 0 throttles every invocation", f.name)),
        Seen::Found(Some(r)) => {
            let status = capacity(*r as f64, needed);
            Row::new(check, status).value(*r as f64).needed(needed).note(format!("{}: reserved", f.name))
        }
        Seen::Missing => {
            Row::new(check, Status::Fail).needed(needed).note(format!("function {} not found", f.name))
        }
        Seen::NotChecked(r) => not_checked(&check, r).needed(needed),
    }
}

fn stage_row(s: &StageSeen, plan: Option<&PlanNeeds>) -> Row {
    let check = format!("API Gateway {} stage throttle rate", s.key);
    let needed = plan.and_then(|p| p.peak_requests_per_second.get(&s.key).copied());
    let at = format!("{} stage {}", s.api, s.stage);
    match &s.rate {
        Seen::Found(Some(rate)) if *rate <= 0.0 => Row::new(check, Status::Fail)
            .value(*rate)
            .needed(needed)
            .note(format!("{at}: a throttle of 0 refuses every request")),
        Seen::Found(Some(rate)) => {
            Row::new(check, capacity(*rate, needed)).value(*rate).needed(needed).note(at)
        }
        Seen::Found(None) => Row::new(check, Status::Warn)
            .seen("none")
            .needed(needed)
            .note(format!("{at}: no stage throttle, only the account's limits it")),
        Seen::Missing if s.optional => Row::new(check, Status::Warn)
            .needed(needed)
            .note(format!("{at} not found: deployed only with tier 2's protected_backend_url")),
        Seen::Missing => Row::new(check, Status::Fail).needed(needed).note(format!("{at} not found")),
        Seen::NotChecked(r) => not_checked(&check, r).needed(needed),
    }
}

fn table_row(name: &str, table: &Seen<TableSeen>, needed: Option<u64>) -> Row {
    let check = "DynamoDB table capacity mode";
    match table {
        Seen::Found(t) if t.on_demand => match t.max_on_demand_writes.filter(|m| *m > 0) {
            Some(max) => Row::new(check, capacity(max as f64, needed))
                .value(max as f64)
                .seen(format!("on-demand, at most {} writes/s", group(max as u64)))
                .needed(needed)
                .note(format!("{name}: its maximum on-demand write throughput")),
            None => warm_row(check, name, t.warm_writes, needed),
        },
        Seen::Found(t) => {
            let wcu = t.provisioned_writes.unwrap_or(0);
            let status = match needed {
                Some(_) => capacity(wcu as f64, needed),
                None => Status::Warn,
            };
            Row::new(check, status)
                .value(wcu as f64)
                .seen(format!("provisioned, {} WCU", group(wcu.max(0) as u64)))
                .needed(needed)
                .note(format!(
                    "{name}: the Terraform makes it on-demand; a provisioned table does not follow a spike"
                ))
        }
        Seen::Missing => Row::new(check, Status::Fail).needed(needed).note(format!("table {name} not found")),
        Seen::NotChecked(r) => not_checked(check, r).needed(needed),
    }
}

/// What a new on-demand table takes at once, unless told otherwise (DynamoDB's documented
/// initial throughput); beyond it, writes are throttled while the table scales.
/// One figure with `vwr plan`'s warning, so the two cannot disagree.
pub const NEW_ON_DEMAND_WRITES: i64 = vwr_plan::NEW_ON_DEMAND_TABLE_WRITES as i64;

/// An on-demand table without a maximum: a spike beyond what it takes at once (its warm
/// throughput) is throttled while it scales, so the peak must fit it; pre-warming raises it.
fn warm_row(check: &str, name: &str, warm: Option<i64>, needed: Option<u64>) -> Row {
    let prewarm = |n: u64| {
        format!(
            "; pre-warm it: aws dynamodb update-table --table-name {name} --warm-throughput WriteUnitsPerSecond={n}"
        )
    };
    match warm.filter(|w| *w > 0) {
        Some(w) => {
            let status = capacity(w as f64, needed);
            let mut note = format!("{name}: on-demand, warm throughput {} writes/s", group(w as u64));
            if status != Status::Ok {
                note.push_str(&prewarm(needed.unwrap_or(0)));
            }
            Row::new(check, status)
                .value(w as f64)
                .seen(format!("on-demand, warm {}", group(w as u64)))
                .needed(needed)
                .note(note)
        }
        None => {
            let over = needed.is_some_and(|n| n > NEW_ON_DEMAND_WRITES as u64);
            let mut note = format!(
                "{name}: on-demand, warm throughput not told: a new table takes {} writes/s at once",
                group(NEW_ON_DEMAND_WRITES as u64)
            );
            if over {
                note.push_str(&prewarm(needed.unwrap_or(0)));
            }
            Row::new(check, if over { Status::Warn } else { Status::Ok })
                .seen("on-demand")
                .needed(needed)
                .note(note)
        }
    }
}

fn ttl_row(name: &str, ttl: &Seen<TtlSeen>) -> Row {
    let check = "DynamoDB TTL";
    match ttl {
        Seen::Found(t) => {
            let on = matches!(t.status.as_str(), "ENABLED" | "ENABLING");
            let attribute = t.attribute.as_deref().unwrap_or("");
            let seen =
                if attribute.is_empty() { t.status.clone() } else { format!("{} on {attribute}", t.status) };
            if on && attribute == TTL_ATTRIBUTE {
                Row::new(check, Status::Ok).seen(seen).note(name)
            } else {
                Row::new(check, Status::Warn)
                    .seen(seen)
                    .note(format!("{name}: expired items stay unless TTL is on {TTL_ATTRIBUTE}"))
            }
        }
        Seen::Missing => Row::new(check, Status::Fail).note(format!("table {name} not found")),
        Seen::NotChecked(r) => not_checked(check, r),
    }
}

fn kvs_rows(kvs: &Seen<KvsSeen>) -> Vec<Row> {
    const CONFIG: &str = "Edge KeyValueStore `config` entry";
    const KEYS: &str = "Edge KeyValueStore `keys` entry";
    match kvs {
        Seen::Found(k) => vec![config_row(CONFIG, &k.config), keys_row(KEYS, &k.keys)],
        Seen::Missing => {
            let row = |c| Row::new(c, Status::Fail).note("the KeyValueStore of --kvs-arn not found");
            vec![row(CONFIG), row(KEYS)]
        }
        Seen::NotChecked(r) => vec![not_checked(CONFIG, r), not_checked(KEYS, r)],
    }
}

/// The edge reads `config` as a JSON object (edge/src/verifier-core.js parseConfig); anything
/// else makes it answer per its fail mode.
fn config_row(check: &str, config: &Seen<String>) -> Row {
    match config {
        Seen::Found(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(o)) => {
                // The parts the edge refuses the whole entry for (edge/src/verifier-core.js
                // parseConfig): the rules list, the fail mode; events as a list or an object.
                let events = match o.get("events") {
                    Some(serde_json::Value::Array(a)) => Some(a.len()),
                    Some(serde_json::Value::Object(m)) => Some(
                        m.values()
                            .filter(|v| v.get("active") == Some(&serde_json::Value::Bool(true)))
                            .count(),
                    ),
                    None | Some(serde_json::Value::Null) => Some(0),
                    Some(_) => None,
                };
                let fail_mode = o.get("failMode").and_then(|f| f.as_str()).unwrap_or("default");
                let rules = o.get("rules").and_then(|r| r.as_array());
                let problem = if rules.is_none() {
                    Some("no rules list")
                } else if events.is_none() {
                    Some("events neither a list nor an object")
                } else if !matches!(fail_mode, "default" | "open" | "closed") {
                    Some("failMode neither open nor closed")
                } else {
                    None
                };
                match problem {
                    Some(p) => Row::new(check, Status::Fail)
                        .note(format!("{p}: the edge refuses the entry and answers per its fail mode")),
                    None => Row::new(check, Status::Ok)
                        .seen(format!("{} gated events, failMode {fail_mode}", events.unwrap_or(0)))
                        .note(format!("{} bytes of 1,024", text.len())),
                }
            }
            _ => Row::new(check, Status::Fail).note("not a JSON object: the edge answers per its fail mode"),
        },
        Seen::Missing => {
            Row::new(check, Status::Fail).note("entry missing: the edge answers per its fail mode")
        }
        Seen::NotChecked(r) => not_checked(check, r),
    }
}

/// `keys` is `kid:base64url,…` (never printed: only how many).
fn keys_row(check: &str, keys: &Seen<String>) -> Row {
    match keys {
        Seen::Found(text) => {
            let n = text.split(',').filter(|e| e.trim().contains(':')).count();
            if n == 0 {
                Row::new(check, Status::Fail)
                    .seen("0 keys")
                    .note("no kid:key entry: the edge cannot verify a token")
            } else {
                Row::new(check, Status::Ok).seen(format!("{n} keys"))
            }
        }
        Seen::Missing => Row::new(check, Status::Fail).note("entry missing: the edge cannot verify a token"),
        Seen::NotChecked(r) => not_checked(check, r),
    }
}

fn alarm_rows(alarms: &Seen<Vec<AlarmSeen>>, expected: &[String]) -> Vec<Row> {
    const PRESENT: &str = "CloudWatch alarms present";
    const FIRING: &str = "CloudWatch alarms in ALARM";
    match alarms {
        Seen::Found(list) => {
            let missing: Vec<&str> =
                expected.iter().filter(|e| !list.iter().any(|a| &a.name == *e)).map(String::as_str).collect();
            let present = Row::new(PRESENT, if missing.is_empty() { Status::Ok } else { Status::Fail })
                .seen(format!("{} of {}", expected.len() - missing.len(), expected.len()))
                .note(if missing.is_empty() {
                    format!("{} alarms with the prefix", list.len())
                } else {
                    format!("missing: {}", missing.join(", "))
                });
            let firing: Vec<&str> =
                list.iter().filter(|a| a.state == "ALARM").map(|a| a.name.as_str()).collect();
            let state = if firing.is_empty() {
                Row::new(FIRING, Status::Ok).seen("0").note(format!("of {}", list.len()))
            } else {
                Row::new(FIRING, Status::Warn).seen(firing.len().to_string()).note(firing.join(", "))
            };
            vec![present, state]
        }
        Seen::Missing => vec![
            Row::new(PRESENT, Status::Fail).note("no alarm found"),
            not_checked(FIRING, "no alarm found"),
        ],
        Seen::NotChecked(r) => vec![not_checked(PRESENT, r), not_checked(FIRING, r)],
    }
}

fn web_acl_row(name: &str, acl: &Seen<WebAclSeen>) -> Row {
    let check = "WAF web ACL rate-based rules";
    match acl {
        Seen::Found(a) => {
            let seen = a
                .rate_rules
                .iter()
                .map(|r| format!("{} {}/{}s", r.name, group(r.limit.max(0) as u64), r.window_seconds))
                .collect::<Vec<_>>()
                .join(", ");
            let counting: Vec<&str> =
                a.rate_rules.iter().filter(|r| r.counts_only).map(|r| r.name.as_str()).collect();
            if a.rate_rules.is_empty() {
                Row::new(check, Status::Warn)
                    .seen("none")
                    .note(format!("{name}: no per-IP limit (docs/abuse.md)"))
            } else if !counting.is_empty() {
                Row::new(check, Status::Warn).seen(seen).note(format!(
                    "{name}: {} only count (waf_rate_limit_action = count)",
                    counting.join(", ")
                ))
            } else {
                Row::new(check, Status::Ok).seen(seen).note(name)
            }
        }
        Seen::Missing => {
            Row::new(check, Status::Fail).note(format!("web ACL {name} (CLOUDFRONT scope) not found"))
        }
        Seen::NotChecked(r) => not_checked(check, r),
    }
}

#[cfg(test)]
mod tests;
