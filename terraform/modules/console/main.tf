# The console's sign-in and API (docs/console.md, "Sign-in in AWS"): by default an Amazon Cognito
# user pool with the three role groups, its sign-in pages and a public app client for the console
# (cognito.tf); or any OpenID Connect issuer (var.oidc), and no Cognito. The console API is an
# HTTP API of its own (module http_api) with the admin routes of tier 1 and tier 2, each verified
# by one JWT authorizer and served by the same admin functions as the IAM admin API; an HTTP API
# route has one authorization type, so the IAM admin API stays as it is for `vwr admin --sigv4`.
# The functions then map the groups claim to a role (VWR_ADMIN_GROUPS_CLAIM, set by the tier
# modules). The console's files and its config.json are the edge module's (console_config_json).

data "aws_region" "current" {}
data "aws_partition" "current" {}
data "aws_caller_identity" "current" {}

locals {
  cognito = var.oidc == null
  region  = data.aws_region.current.name
  dns     = data.aws_partition.current.dns_suffix
  scopes  = ["openid", "email", "profile"]

  # The one JWT authorizer every console route names.
  authorizer = "oidc"

  # Cognito's issuer is the user pool's endpoint; its `aud` (ID tokens) and `client_id` (access
  # tokens, which API Gateway accepts for the audience too) are the app client's id.
  issuer    = local.cognito ? "https://cognito-idp.${local.region}.${local.dns}/${aws_cognito_user_pool.this[0].id}" : var.oidc.issuer
  client_id = local.cognito ? aws_cognito_user_pool_client.console[0].id : var.oidc.client_id
  audience  = local.cognito ? local.client_id : coalesce(var.oidc.audience, var.oidc.client_id)

  # Unique in the region without a random provider: 8 hex characters of account and region.
  domain_prefix    = coalesce(var.domain_prefix, "${var.name}-console-${substr(sha256("${data.aws_caller_identity.current.account_id}/${local.region}"), 0, 8)}")
  hosted_ui_domain = local.cognito ? "${local.domain_prefix}.auth.${local.region}.amazoncognito.com" : null

  console_urls = [for h in var.site_hosts : "https://${h}/vwr-console/"]
  site_origins = [for h in var.site_hosts : "https://${h}"]

  # Where the console's script may connect (its Content-Security-Policy, the edge module's): the
  # console API, the issuer (discovery, keys, token endpoint) and Cognito's sign-in domain. The
  # API is named by a wildcard of this region's execute-api hosts: its own host name is known only
  # once it exists, and it allows the site's origin (CORS), which is the distribution's name when
  # there are no aliases, while the distribution needs this policy first.
  connect_origins = distinct(concat(
    ["https://*.execute-api.${local.region}.${local.dns}"],
    local.cognito ? ["https://cognito-idp.${local.region}.${local.dns}", "https://${local.hosted_ui_domain}"] : [regex("^https://[^/]+", var.oidc.issuer)],
  ))

  # /vwr-console/config.json, which the console reads at start (docs/console.md).
  config_json = jsonencode({
    api      = module.api.endpoint
    issuer   = local.issuer
    clientId = local.client_id
    scopes   = join(" ", local.scopes)
  })
}

# ---------------------------------------------------------------------------------------------
# The console API: every admin route of both tiers, JWT with the one authorizer (tests/infra
# checks both, and that they are the IAM admin API's routes one to one). A route added to the
# admin API's map reaches this API by itself (the tier modules' admin_routes outputs).

module "api" {
  source                 = "../http_api"
  name                   = "${var.name}-console"
  description            = "vwr console API: the admin routes of tier 1 and tier 2, a JWT (OpenID Connect) authorizer on every route"
  function_name          = var.tier1_admin.function_name
  invoke_arn             = var.tier1_admin.invoke_arn
  integration_timeout_ms = var.tier1_admin.integration_timeout_ms
  routes                 = { for name, key in var.tier1_admin.route_keys : name => { route_key = key, authorization = "JWT", authorizer = "oidc" } }
  authorizers = {
    oidc = {
      type             = "JWT"
      identity_sources = ["$request.header.Authorization"]
      issuer           = local.issuer
      audience         = [local.audience]
    }
  }
  # Statement ids of their own: the IAM admin API's permissions on the same functions stay.
  invoke_permissions = { "apigw-console" = "*/*/api/admin/vwr/*" }
  throttle           = { rate = var.throttle_rate, burst = var.throttle_burst }
  # The console runs on the site's origin: only that origin may call, with a bearer token (no
  # cookies, so no credentials mode).
  cors = {
    allow_origins   = local.site_origins
    allow_methods   = ["GET", "POST", "PUT", "DELETE"]
    allow_headers   = ["authorization", "content-type"]
    max_age_seconds = 3600
  }
  access_log = {
    group_name     = "/aws/apigateway/${var.name}-console"
    retention_days = var.log_retention_days
    # The token's subject; the audit names the person (docs/console.md).
    fields = { caller = "$context.authorizer.claims.sub" }
  }
  kms_key_arn = var.kms_key_arn
  tags        = var.tags
}

module "tier2_routes" {
  source                 = "../http_api/routes"
  for_each               = var.tier2_admin == null ? {} : { tier2 = var.tier2_admin }
  api_id                 = module.api.id
  execution_arn          = module.api.execution_arn
  function_name          = each.value.function_name
  invoke_arn             = each.value.invoke_arn
  integration_timeout_ms = each.value.integration_timeout_ms
  routes                 = { for name, key in each.value.route_keys : name => { route_key = key, authorization = "JWT", authorizer = "oidc" } }
  existing_authorizers   = { oidc = { id = module.api.authorizer_ids["oidc"], type = "JWT" } }
  invoke_permissions     = { "apigw-console" = "*/*/api/queue/admin/*" }
}
