//! The API Gateway REST API Lambda authorizer (type REQUEST) in front of protected APIs: the
//! typed event in, the entry-token check of `vwr_tier2::protect`, an IAM policy out.

use aws_lambda_events::apigw::{
    ApiGatewayCustomAuthorizerPolicy, ApiGatewayCustomAuthorizerRequestTypeRequest,
    ApiGatewayCustomAuthorizerResponse,
};
use aws_lambda_events::iam::{IamPolicyEffect, IamPolicyStatement};
use vwr_core::ApiError;
use vwr_core::ErrorCode;
use vwr_tier2::protect::Protector;

fn policy(effect: IamPolicyEffect, method_arn: &str) -> ApiGatewayCustomAuthorizerPolicy {
    let mut statement = IamPolicyStatement::default();
    statement.action = vec!["execute-api:Invoke".to_owned()];
    statement.effect = effect;
    statement.resource = vec![method_arn.to_owned()];
    let mut p = ApiGatewayCustomAuthorizerPolicy::default();
    p.version = Some("2012-10-17".to_owned());
    p.statement = vec![statement];
    p
}

/// The decision for one request: Allow with the context `{userId, eventId, jti}`, or Deny with
/// `{error, message, redirectTo}` — map those into the `ACCESS_DENIED` gateway response
/// template so callers get `{"error":"queue_entry_token_required","redirectTo":"/queue/{eventId}"}`.
pub fn decide(
    p: &Protector,
    event: &ApiGatewayCustomAuthorizerRequestTypeRequest,
) -> ApiGatewayCustomAuthorizerResponse {
    let method_arn = event.method_arn.as_deref().unwrap_or("*");
    let path = event.path.as_deref().unwrap_or("/");
    let mut req = http::Request::builder()
        .uri(path.parse::<http::Uri>().unwrap_or_else(|_| http::Uri::from_static("/")));
    for (name, value) in &event.headers {
        req = req.header(name, value);
    }
    let decision = match req.body(()) {
        Ok(r) => p.authorize(&r.into_parts().0),
        Err(_) => Err(ApiError::forbidden(ErrorCode::QueueEntryTokenRequired, "unreadable request")),
    };
    let mut out = ApiGatewayCustomAuthorizerResponse::default();
    match decision {
        Ok(c) => {
            out.principal_id = Some(c.uid.clone());
            out.policy_document = policy(IamPolicyEffect::Allow, method_arn);
            out.context = serde_json::json!({"userId": c.uid, "eventId": c.sub, "jti": c.jti});
        }
        Err(e) => {
            let body = e.body();
            out.principal_id = Some("anonymous".to_owned());
            out.policy_document = policy(IamPolicyEffect::Deny, method_arn);
            out.context = serde_json::json!({
                "error": e.code.as_str(),
                "message": body["message"],
                "redirectTo": body["redirectTo"],
            });
        }
    }
    out
}
