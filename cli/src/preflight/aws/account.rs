//! Account-wide limits and the functions and API stages that draw on them: Service Quotas,
//! Lambda (`GetAccountSettings`, `GetFunctionConcurrency`), API Gateway (`GetAccount`, the
//! stages' throttles).

use aws_sdk_apigateway::Client as RestClient;
use aws_sdk_apigatewayv2::Client as HttpClient;
use aws_sdk_servicequotas::Client as QuotaClient;
use vwr_preflight::{
    ApiKind, FUNCTIONS, FunctionSeen, LambdaAccount, Names, Quota, Seen, StageName, StageSeen,
};

use super::unseen;

/// Lambda: concurrent executions (L-B99A9384).
const LAMBDA_QUOTA: (&str, &str) = ("lambda", "L-B99A9384");
/// API Gateway: throttle rate per account and region (L-8A5B8E43).
const API_QUOTA: (&str, &str) = ("apigateway", "L-8A5B8E43");

/// A quota's applied value, else its AWS default (flagged: the judge prefers the account's own
/// settings to it).
pub(super) async fn quota(client: &QuotaClient, (service, code): (&str, &str)) -> Seen<Quota> {
    let applied = match client.get_service_quota().service_code(service).quota_code(code).send().await {
        Ok(out) => match out.quota().and_then(|q| q.value()) {
            Some(value) => {
                return Seen::Found(Quota {
                    value,
                    source: format!("Service Quotas {code}"),
                    aws_default: false,
                });
            }
            None => Seen::NotChecked(format!("GetServiceQuota {code}: no value")),
        },
        Err(e) => Seen::NotChecked(super::reason(&format!("GetServiceQuota {code}"), &e)),
    };
    let default =
        match client.get_aws_default_service_quota().service_code(service).quota_code(code).send().await {
            Ok(out) => match out.quota().and_then(|q| q.value()) {
                Some(value) => Seen::Found(Quota {
                    value,
                    source: format!("Service Quotas {code} (AWS default)"),
                    aws_default: true,
                }),
                None => Seen::NotChecked(format!("GetAWSDefaultServiceQuota {code}: no value")),
            },
            Err(e) => Seen::NotChecked(super::reason(&format!("GetAWSDefaultServiceQuota {code}"), &e)),
        };
    applied.or(default)
}

/// The Lambda quota, the account's settings, and every vwr function's reserved concurrency.
pub(super) async fn lambda(
    sdk: &aws_config::SdkConfig,
    names: &Names,
) -> (Seen<Quota>, Seen<LambdaAccount>, Vec<FunctionSeen>) {
    let client = aws_sdk_lambda::Client::new(sdk);
    let quota = quota(&QuotaClient::new(sdk), LAMBDA_QUOTA).await;
    let account = match client.get_account_settings().send().await {
        Ok(out) => match out.account_limit() {
            Some(limit) => Seen::Found(LambdaAccount {
                concurrent_executions: i64::from(limit.concurrent_executions()),
                unreserved: limit.unreserved_concurrent_executions().map(i64::from),
            }),
            None => Seen::NotChecked("GetAccountSettings: no AccountLimit".into()),
        },
        Err(e) => unseen("GetAccountSettings", &e),
    };
    let mut functions = Vec::new();
    for key in FUNCTIONS {
        let name = names.function(key);
        let reserved = match client.get_function_concurrency().function_name(&name).send().await {
            Ok(out) => Seen::Found(out.reserved_concurrent_executions().map(i64::from)),
            Err(e) => unseen("GetFunctionConcurrency", &e),
        };
        functions.push(FunctionSeen { key: key.into(), name, reserved });
    }
    (quota, account, functions)
}

/// The API Gateway quota, the account's throttle (`GetAccount`), and the stages' throttles.
pub(super) async fn api_gateway(
    sdk: &aws_config::SdkConfig,
    names: &Names,
) -> (Seen<Quota>, Seen<Quota>, Vec<StageSeen>) {
    let rest = RestClient::new(sdk);
    let http = HttpClient::new(sdk);
    let quota = quota(&QuotaClient::new(sdk), API_QUOTA).await;
    let account = match rest.get_account().send().await {
        Ok(out) => match out.throttle_settings() {
            Some(t) => Seen::Found(Quota {
                value: t.rate_limit(),
                source: "API Gateway GetAccount".into(),
                aws_default: false,
            }),
            None => Seen::NotChecked("GetAccount: no throttleSettings".into()),
        },
        Err(e) => unseen("GetAccount", &e),
    };
    let mut stages = Vec::new();
    for s in names.stages() {
        let rate = match s.kind {
            ApiKind::Http => http_stage_rate(&http, &s).await,
            ApiKind::Rest => rest_stage_rate(&rest, &s).await,
        };
        stages.push(StageSeen { key: s.key.into(), api: s.api, stage: s.stage, optional: s.optional, rate });
    }
    (quota, account, stages)
}

/// An HTTP API's stage throttle: its default route settings (terraform/modules/http_api,
/// `aws_apigatewayv2_stage.this`, the throttle tier1 and tier2 give it).
async fn http_stage_rate(client: &HttpClient, s: &StageName) -> Seen<Option<f64>> {
    let mut next: Option<String> = None;
    let id = loop {
        let out = match client.get_apis().set_next_token(next.take()).send().await {
            Ok(out) => out,
            Err(e) => return unseen("GetApis", &e),
        };
        if let Some(api) = out.items().iter().find(|a| a.name() == Some(s.api.as_str())) {
            break api.api_id().unwrap_or_default().to_owned();
        }
        match out.next_token() {
            Some(t) if !t.is_empty() => next = Some(t.to_owned()),
            _ => return Seen::Missing,
        }
    };
    match client.get_stage().api_id(id).stage_name(&s.stage).send().await {
        Ok(out) => Seen::Found(out.default_route_settings().and_then(|r| r.throttling_rate_limit())),
        Err(e) => unseen("GetStage", &e),
    }
}

/// A REST API's stage throttle: the method settings of every method (`*/*`,
/// modules/tier2/gate.tf `aws_api_gateway_method_settings.gate`).
async fn rest_stage_rate(client: &RestClient, s: &StageName) -> Seen<Option<f64>> {
    let mut position: Option<String> = None;
    let id = loop {
        let out = match client.get_rest_apis().set_position(position.take()).limit(500).send().await {
            Ok(out) => out,
            Err(e) => return unseen("GetRestApis", &e),
        };
        if let Some(api) = out.items().iter().find(|a| a.name() == Some(s.api.as_str())) {
            break api.id().unwrap_or_default().to_owned();
        }
        match out.position() {
            Some(p) if !p.is_empty() => position = Some(p.to_owned()),
            _ => return Seen::Missing,
        }
    };
    match client.get_stage().rest_api_id(id).stage_name(&s.stage).send().await {
        Ok(out) => Seen::Found(
            out.method_settings()
                .and_then(|m| m.get("*/*"))
                .map(|m| m.throttling_rate_limit())
                // -1 turns the stage throttle off; 0 is a throttle that refuses everything.
                .filter(|r| *r >= 0.0),
        ),
        Err(e) => unseen("GetStage", &e),
    }
}
