//! The edge and the watch on the stack: the CloudFront KeyValueStore the edge function reads,
//! the CloudWatch alarms, the CloudFront-scope WAF web ACL.

use aws_sdk_cloudfrontkeyvaluestore::Client as Kvs;
use aws_sdk_cloudwatch::Client as CloudWatch;
use aws_sdk_wafv2::types::Scope;
use vwr_preflight::{AlarmSeen, KvsSeen, RateRule, Seen, WebAclSeen};

use super::unseen;

/// The entries the edge function reads (edge/src/cloudfront-function.js: `config`, `keys`).
const CONFIG_KEY: &str = "config";
const KEYS_KEY: &str = "keys";

/// A CloudFront-scope web ACL lives in us-east-1, whatever the stack's region.
const CLOUDFRONT_REGION: &str = "us-east-1";

pub(super) async fn kvs(sdk: &aws_config::SdkConfig, arn: Option<&str>) -> Seen<KvsSeen> {
    let Some(arn) = arn else {
        return Seen::NotChecked("no --kvs-arn (the edge module's output kvs_arn)".into());
    };
    let client = Kvs::new(sdk);
    if let Err(e) = client.describe_key_value_store().kvs_arn(arn).send().await {
        return unseen("DescribeKeyValueStore", &e);
    }
    let get = |key: &'static str| {
        let client = client.clone();
        async move {
            match client.get_key().kvs_arn(arn).key(key).send().await {
                Ok(out) => Seen::Found(out.value().to_owned()),
                Err(e) => unseen("GetKey", &e),
            }
        }
    };
    Seen::Found(KvsSeen { config: get(CONFIG_KEY).await, keys: get(KEYS_KEY).await })
}

/// Every metric alarm whose name starts with `prefix` (DescribeAlarms without `AlarmTypes`
/// answers metric alarms: the kind modules/observability makes).
pub(super) async fn alarms(sdk: &aws_config::SdkConfig, prefix: &str) -> Seen<Vec<AlarmSeen>> {
    let client = CloudWatch::new(sdk);
    let mut all = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let out =
            match client.describe_alarms().alarm_name_prefix(prefix).set_next_token(next.take()).send().await
            {
                Ok(out) => out,
                Err(e) => return unseen("DescribeAlarms", &e),
            };
        let state = |s: Option<&aws_sdk_cloudwatch::types::StateValue>| {
            s.map(|s| s.as_str().to_owned()).unwrap_or_default()
        };
        all.extend(out.metric_alarms().iter().map(|a| AlarmSeen {
            name: a.alarm_name().unwrap_or_default().to_owned(),
            state: state(a.state_value()),
        }));
        all.extend(out.composite_alarms().iter().map(|a| AlarmSeen {
            name: a.alarm_name().unwrap_or_default().to_owned(),
            state: state(a.state_value()),
        }));
        match out.next_token() {
            Some(t) if !t.is_empty() => next = Some(t.to_owned()),
            _ => return Seen::Found(all),
        }
    }
}

/// The web ACL named `name` (CLOUDFRONT scope) and its rate-based rules.
pub(super) async fn web_acl(sdk: &aws_config::SdkConfig, name: &str) -> Seen<WebAclSeen> {
    let conf = aws_sdk_wafv2::config::Builder::from(sdk)
        .region(aws_sdk_wafv2::config::Region::new(CLOUDFRONT_REGION))
        .build();
    let client = aws_sdk_wafv2::Client::from_conf(conf);
    let mut marker: Option<String> = None;
    let id = loop {
        let out =
            match client.list_web_acls().scope(Scope::Cloudfront).set_next_marker(marker.take()).send().await
            {
                Ok(out) => out,
                Err(e) => return unseen("ListWebACLs", &e),
            };
        if let Some(acl) = out.web_acls().iter().find(|a| a.name() == Some(name)) {
            break acl.id().unwrap_or_default().to_owned();
        }
        match out.next_marker() {
            Some(m) if !m.is_empty() && !out.web_acls().is_empty() => marker = Some(m.to_owned()),
            _ => return Seen::Missing,
        }
    };
    match client.get_web_acl().name(name).scope(Scope::Cloudfront).id(id).send().await {
        Ok(out) => {
            let rules = out.web_acl().map(|a| a.rules()).unwrap_or_default();
            Seen::Found(WebAclSeen {
                rate_rules: rules
                    .iter()
                    .filter_map(|r| {
                        let rate = r.statement()?.rate_based_statement()?;
                        Some(RateRule {
                            name: r.name().to_owned(),
                            limit: rate.limit(),
                            window_seconds: rate.evaluation_window_sec(),
                            counts_only: r.action().is_some_and(|a| a.count().is_some()),
                        })
                    })
                    .collect(),
            })
        }
        Err(e) => unseen("GetWebACL", &e),
    }
}
