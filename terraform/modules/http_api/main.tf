# One HTTP API in front of one Lambda function: the API (with CORS when asked), its $default
# stage (auto-deployed, throttled, access-logged) and its access log group; the integration, the routes each with its
# authorization, their authorizers and API Gateway's permissions to invoke the function are
# module http_api/routes (./routes), which also puts routes on an API made elsewhere (tier 2's
# admin routes on tier 1's admin API).

locals {
  # One JSON line per request; callers add fields (tier 1: the IAM caller of admin requests).
  access_log_format = jsonencode(merge({
    requestId = "$context.requestId"
    time      = "$context.requestTimeEpoch"
    method    = "$context.httpMethod"
    route     = "$context.routeKey"
    status    = "$context.status"
    latencyMs = "$context.responseLatency"
    error     = "$context.integrationErrorMessage"
  }, var.access_log.fields))
}

resource "aws_cloudwatch_log_group" "access" {
  #checkov:skip=CKV_AWS_338:Retention is an operator choice (var.access_log.retention_days, the callers' log_retention_days).
  #checkov:skip=CKV_AWS_158:Access logs hold no secrets; a customer managed key is optional through var.kms_key_arn.
  name              = var.access_log.group_name
  retention_in_days = var.access_log.retention_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

resource "aws_apigatewayv2_api" "this" {
  name          = var.name
  description   = var.description
  protocol_type = "HTTP"
  # No custom domain: CloudFront (the public APIs) and `vwr admin --sigv4` (the admin API) call
  # the execute-api host name, so the default endpoint stays; the origin secret is what refuses
  # calls that skip CloudFront (terraform/README.md, "Locking origins to CloudFront").
  disable_execute_api_endpoint = false

  # A browser calling from another origin (the console, module console): API Gateway answers
  # the preflight itself and adds the CORS headers to the function's answers.
  dynamic "cors_configuration" {
    for_each = var.cors == null ? [] : [var.cors]
    content {
      allow_origins = cors_configuration.value.allow_origins
      allow_methods = cors_configuration.value.allow_methods
      allow_headers = cors_configuration.value.allow_headers
      max_age       = cors_configuration.value.max_age_seconds
    }
  }

  tags = var.tags
}

module "routes" {
  source                 = "./routes"
  api_id                 = aws_apigatewayv2_api.this.id
  execution_arn          = aws_apigatewayv2_api.this.execution_arn
  function_name          = var.function_name
  invoke_arn             = var.invoke_arn
  integration_timeout_ms = var.integration_timeout_ms
  routes                 = var.routes
  authorizers            = var.authorizers
  invoke_permissions     = var.invoke_permissions
}

resource "aws_apigatewayv2_stage" "this" {
  api_id      = aws_apigatewayv2_api.this.id
  name        = "$default"
  auto_deploy = true

  default_route_settings {
    throttling_rate_limit  = var.throttle.rate
    throttling_burst_limit = var.throttle.burst
  }

  # A route's own throttle (its route map entry); the route must exist first.
  dynamic "route_settings" {
    for_each = module.routes.throttles
    content {
      route_key              = route_settings.key
      throttling_rate_limit  = route_settings.value.rate
      throttling_burst_limit = route_settings.value.burst
    }
  }

  access_log_settings {
    destination_arn = aws_cloudwatch_log_group.access.arn
    format          = local.access_log_format
  }

  tags = var.tags
}
