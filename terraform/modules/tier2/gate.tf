# Optional gate for the operator's protected APIs (docs/api.md#tier-2: /api/seats/**, /api/reservations/**):
# a REST API whose every method goes through the entry-token authorizer (REQUEST type), then
# proxies to var.protected_backend_url. REST, not HTTP API: it has gateway responses, which carry
# the authorizer's refusal (error, message, redirectTo) to the caller.
#
# The prefixes are tier2/tier2/src/protect.rs PROTECTED_PREFIXES (tests/infra checks it).

locals {
  gate = var.protected_backend_url != null
  protected_prefixes = {
    seats        = "seats"
    reservations = "reservations"
  }
  backend = var.protected_backend_url == null ? "" : trimsuffix(var.protected_backend_url, "/")
}

resource "aws_api_gateway_rest_api" "gate" {
  count       = local.gate ? 1 : 0
  name        = "${var.name}-protected"
  description = "vwr entry-token gate in front of the protected booking APIs"
  # CloudFront reaches the gate through this execute-api host name (no custom domain), so the
  # default endpoint stays. CloudFront's x-vwr-origin-secret passes through to the backend
  # (HTTP_PROXY forwards request headers), which refuses requests without it.
  disable_execute_api_endpoint = false

  endpoint_configuration {
    types = ["REGIONAL"]
  }

  tags = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_api_gateway_resource" "api" {
  count       = local.gate ? 1 : 0
  rest_api_id = aws_api_gateway_rest_api.gate[0].id
  parent_id   = aws_api_gateway_rest_api.gate[0].root_resource_id
  path_part   = "api"
}

resource "aws_api_gateway_resource" "prefix" {
  for_each    = local.gate ? local.protected_prefixes : {}
  rest_api_id = aws_api_gateway_rest_api.gate[0].id
  parent_id   = aws_api_gateway_resource.api[0].id
  path_part   = each.value
}

resource "aws_api_gateway_resource" "proxy" {
  for_each    = local.gate ? local.protected_prefixes : {}
  rest_api_id = aws_api_gateway_rest_api.gate[0].id
  parent_id   = aws_api_gateway_resource.prefix[each.key].id
  path_part   = "{proxy+}"
}

resource "aws_api_gateway_authorizer" "entry" {
  count          = local.gate ? 1 : 0
  name           = "entry-token"
  rest_api_id    = aws_api_gateway_rest_api.gate[0].id
  type           = "REQUEST"
  authorizer_uri = module.authorizer.invoke_arn
  # Requests without the header are refused by API Gateway itself (no Lambda invocation; see the
  # UNAUTHORIZED response below). No caching: the policy names one method ARN, and the decision
  # depends on the path's event and the tier-1 cookie too.
  identity_source                  = "method.request.header.x-queue-entry-token"
  authorizer_result_ttl_in_seconds = 0
}

resource "aws_lambda_permission" "authorizer" {
  count         = local.gate ? 1 : 0
  statement_id  = "apigw-authorizer"
  action        = "lambda:InvokeFunction"
  function_name = module.authorizer.function_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = "${aws_api_gateway_rest_api.gate[0].execution_arn}/authorizers/${aws_api_gateway_authorizer.entry[0].id}"
}

resource "aws_api_gateway_method" "proxy" {
  #checkov:skip=CKV2_AWS_53:A transparent proxy: the backend validates its own requests; the gate only checks the entry token.
  for_each      = local.gate ? local.protected_prefixes : {}
  rest_api_id   = aws_api_gateway_rest_api.gate[0].id
  resource_id   = aws_api_gateway_resource.proxy[each.key].id
  http_method   = "ANY"
  authorization = "CUSTOM"
  authorizer_id = aws_api_gateway_authorizer.entry[0].id

  request_parameters = {
    "method.request.path.proxy" = true
  }
}

resource "aws_api_gateway_integration" "proxy" {
  for_each                = local.gate ? local.protected_prefixes : {}
  rest_api_id             = aws_api_gateway_rest_api.gate[0].id
  resource_id             = aws_api_gateway_resource.proxy[each.key].id
  http_method             = aws_api_gateway_method.proxy[each.key].http_method
  type                    = "HTTP_PROXY"
  integration_http_method = "ANY"
  uri                     = "${local.backend}/api/${each.value}/{proxy}"

  request_parameters = {
    "integration.request.path.proxy" = "method.request.path.proxy"
    # Who passed the gate, for the backend (set by the authorizer, never by the client). Only
    # trustworthy on requests that also carry the right x-vwr-origin-secret (terraform/README.md).
    "integration.request.header.x-vwr-user"  = "context.authorizer.userId"
    "integration.request.header.x-vwr-event" = "context.authorizer.eventId"
  }
}

resource "aws_api_gateway_gateway_response" "access_denied" {
  count         = local.gate ? 1 : 0
  rest_api_id   = aws_api_gateway_rest_api.gate[0].id
  response_type = "ACCESS_DENIED"
  status_code   = "403"

  response_templates = {
    "application/json" = "{\"error\":\"$context.authorizer.error\",\"message\":\"$context.authorizer.message\",\"redirectTo\":\"$context.authorizer.redirectTo\"}"
  }
  response_parameters = {
    "gatewayresponse.header.Cache-Control" = "'no-store'"
  }
}

resource "aws_api_gateway_gateway_response" "unauthorized" {
  count         = local.gate ? 1 : 0
  rest_api_id   = aws_api_gateway_rest_api.gate[0].id
  response_type = "UNAUTHORIZED"
  status_code   = "403"

  response_templates = {
    "application/json" = "{\"error\":\"queue_entry_token_required\",\"message\":\"a valid queue entry token is required (missing)\"}"
  }
  response_parameters = {
    "gatewayresponse.header.Cache-Control" = "'no-store'"
  }
}

resource "aws_api_gateway_gateway_response" "authorizer_failure" {
  count         = local.gate ? 1 : 0
  rest_api_id   = aws_api_gateway_rest_api.gate[0].id
  response_type = "AUTHORIZER_FAILURE"
  status_code   = "503"

  response_templates = {
    "application/json" = "{\"error\":\"authorizer_unavailable\",\"message\":\"the entry-token check is unavailable, try again\"}"
  }
  response_parameters = {
    "gatewayresponse.header.Retry-After"   = "'5'"
    "gatewayresponse.header.Cache-Control" = "'no-store'"
  }
}

resource "aws_api_gateway_deployment" "gate" {
  count       = local.gate ? 1 : 0
  rest_api_id = aws_api_gateway_rest_api.gate[0].id

  triggers = {
    redeploy = sha1(jsonencode([
      aws_api_gateway_resource.proxy,
      aws_api_gateway_method.proxy,
      aws_api_gateway_integration.proxy,
      aws_api_gateway_authorizer.entry,
      aws_api_gateway_gateway_response.access_denied,
      aws_api_gateway_gateway_response.unauthorized,
      aws_api_gateway_gateway_response.authorizer_failure,
    ]))
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_api_gateway_stage" "gate" {
  #checkov:skip=CKV_AWS_76:REST access logs need the account-wide API Gateway CloudWatch role (aws_api_gateway_account), which this module must not take over; the authorizer logs every refusal.
  #checkov:skip=CKV_AWS_120:Responses are per user; caching them would be wrong.
  #checkov:skip=CKV_AWS_73:X-Ray tracing is a cost choice left to the operator.
  #checkov:skip=CKV2_AWS_51:Client certificates authenticate API Gateway to the backend; configure them on the backend side if it needs that.
  #checkov:skip=CKV2_AWS_29:Attach a WAF web ACL to the CloudFront distribution in front (edge module, var.web_acl_id).
  #checkov:skip=CKV2_AWS_4:Execution logging needs the account-wide CloudWatch role (aws_api_gateway_account), which this module must not take over.
  count         = local.gate ? 1 : 0
  rest_api_id   = aws_api_gateway_rest_api.gate[0].id
  deployment_id = aws_api_gateway_deployment.gate[0].id
  stage_name    = "live"
  tags          = var.tags
}

resource "aws_api_gateway_method_settings" "gate" {
  #checkov:skip=CKV_AWS_225:Per-user responses: no caching.
  #checkov:skip=CKV2_AWS_4:Execution logging needs the account-wide CloudWatch role (see the stage).
  count       = local.gate ? 1 : 0
  rest_api_id = aws_api_gateway_rest_api.gate[0].id
  stage_name  = aws_api_gateway_stage.gate[0].stage_name
  method_path = "*/*"

  settings {
    throttling_rate_limit  = var.protected_api_throttle_rate
    throttling_burst_limit = var.protected_api_throttle_burst
    caching_enabled        = false
    metrics_enabled        = true
  }
}
