# Routes on an HTTP API to one Lambda function (AWS_PROXY, payload 2.0): the integration, the
# routes each with its authorization, the authorizers they name, and API Gateway's permissions
# to invoke the function (and REQUEST authorizers' functions). Module http_api calls it for the
# API it makes; tier 2 calls it for its admin routes on tier 1's admin API, and module console
# for tier 2's admin routes on the console API (with the authorizer that API already has).

locals {
  # statement id and source ARN of each invoke permission, by route name (one per route) or by
  # statement id (var.invoke_permissions).
  invoke_permissions = var.invoke_permissions == null ? {
    for k, r in var.routes : k => {
      statement_id = "apigw-${k}"
      source_arn   = "${var.execution_arn}/*/${replace(replace(r.route_key, " ", ""), "/\\{[^}]+\\}/", "*")}"
    }
    } : {
    for sid, path in var.invoke_permissions : sid => {
      statement_id = sid
      source_arn   = "${var.execution_arn}/${path}"
    }
  }
}

resource "aws_apigatewayv2_integration" "this" {
  api_id                 = var.api_id
  integration_type       = "AWS_PROXY"
  integration_uri        = var.invoke_arn
  payload_format_version = "2.0"
  timeout_milliseconds   = var.integration_timeout_ms
}

resource "aws_apigatewayv2_authorizer" "this" {
  for_each                          = var.authorizers
  api_id                            = var.api_id
  name                              = each.key
  authorizer_type                   = each.value.type
  identity_sources                  = each.value.identity_sources
  authorizer_uri                    = each.value.type == "REQUEST" ? each.value.invoke_arn : null
  authorizer_payload_format_version = each.value.type == "REQUEST" ? "2.0" : null
  enable_simple_responses           = each.value.type == "REQUEST" ? true : null
  authorizer_result_ttl_in_seconds  = each.value.type == "REQUEST" ? each.value.result_ttl_seconds : null

  dynamic "jwt_configuration" {
    for_each = each.value.type == "JWT" ? [each.value] : []
    content {
      issuer   = jwt_configuration.value.issuer
      audience = jwt_configuration.value.audience
    }
  }
}

resource "aws_apigatewayv2_route" "this" {
  #checkov:skip=CKV_AWS_309:Authorization is per route (var.routes), which checkov cannot read: the public waiting-room and queue routes are NONE by design (anyone may join the line; requestIds and tokens are signed and checked by the function), admin routes AWS_IAM; tests/infra checks both.
  for_each           = var.routes
  api_id             = var.api_id
  route_key          = each.value.route_key
  target             = "integrations/${aws_apigatewayv2_integration.this.id}"
  authorization_type = each.value.authorization
  # The authorizer named: one this module made, else one already on the API.
  authorizer_id        = each.value.authorizer == null ? null : try(aws_apigatewayv2_authorizer.this[each.value.authorizer].id, var.existing_authorizers[each.value.authorizer].id)
  authorization_scopes = each.value.scopes

  lifecycle {
    precondition {
      condition     = each.value.authorizer == null ? true : try(var.authorizers[each.value.authorizer].type, var.existing_authorizers[each.value.authorizer].type, "") == (each.value.authorization == "JWT" ? "JWT" : "REQUEST")
      error_message = "A JWT route names a JWT authorizer of var.authorizers or var.existing_authorizers, a CUSTOM route a REQUEST one."
    }
  }
}

resource "aws_lambda_permission" "invoke" {
  for_each      = local.invoke_permissions
  statement_id  = each.value.statement_id
  action        = "lambda:InvokeFunction"
  function_name = var.function_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = each.value.source_arn
}

resource "aws_lambda_permission" "authorizer" {
  for_each      = { for k, a in var.authorizers : k => a if a.type == "REQUEST" }
  statement_id  = "apigw-authorizer-${each.key}"
  action        = "lambda:InvokeFunction"
  function_name = each.value.function_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = "${var.execution_arn}/authorizers/${aws_apigatewayv2_authorizer.this[each.key].id}"
}
