# A complete vwr deployment: tier 1, tier 2 (in a VPC of its own with private subnets and VPC
# endpoints, no NAT), the edge and the alarms. Build dist/ first: scripts/package.sh.

locals {
  dist_dir = coalesce(var.dist_dir, abspath("${path.module}/../../../dist"))
  manifest = jsondecode(file("${local.dist_dir}/manifest.json"))
}

data "aws_availability_zones" "available" {
  #checkov:skip=CKV_AWS_394:Only the first two zones are used, once: the subnets pin them afterwards.
  state = "available"
}

# ---------------------------------------------------------------------------------------------
# Network: private subnets only. The tier-2 functions reach AWS through VPC endpoints.

resource "aws_vpc" "this" {
  #checkov:skip=CKV2_AWS_11:Example network; enable VPC flow logs in production (they cost per GB).
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = "${var.name}-vpc" }
}

resource "aws_default_security_group" "this" {
  vpc_id = aws_vpc.this.id
  tags   = { Name = "${var.name}-default-closed" }
}

resource "aws_subnet" "private" {
  count             = 2
  vpc_id            = aws_vpc.this.id
  availability_zone = data.aws_availability_zones.available.names[count.index]
  cidr_block        = cidrsubnet(var.vpc_cidr, 4, count.index)
  tags              = { Name = "${var.name}-private-${count.index}" }
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id
  tags   = { Name = "${var.name}-private" }
}

resource "aws_route_table_association" "private" {
  count          = length(aws_subnet.private)
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

# ---------------------------------------------------------------------------------------------

module "tier1" {
  source                    = "../../modules/tier1"
  name                      = var.name
  dist_dir                  = local.dist_dir
  architecture              = local.manifest.architecture
  table_deletion_protection = var.table_deletion_protection
  edge_kvs_arn              = module.edge.kvs_arn
  admin_principal_patterns  = var.admin_principal_patterns
  # The console's roles come from this claim of its people's tokens (docs/console.md).
  admin_groups_claim = var.admin_oidc_groups_claim
  # The health gate (docs/outflow.md#health-gate): while one of these alarms is in ALARM the
  # advancer lets nobody new in; everybody keeps their place.
  health_alarm_names = concat(
    var.health_alarm_names,
    var.hold_on_origin_errors && local.origin_5xx != null ? [module.observability.origin_5xx_alarm_name] : [],
  )
  health_alarms_by_event = var.health_alarms_by_event
  # Standby events may wait for the traffic-spike alarm below (docs/lifecycle.md#standby).
  standby_alarm_names = aws_cloudwatch_metric_alarm.standby_spike[*].alarm_name
  # One place per site account (docs/abuse.md): the site's public keys for enqueue tokens.
  enqueue_jwks = var.enqueue_jwks
  # A visitor tier 2 holds keeps the tier-1 session by the hold in its identity cookie
  # (docs/invariants.md#27): tier 2's public keys.
  tier2_jwks   = module.tier2.jwks
  tier2_issuer = module.tier2.entry_issuer
}

module "tier2" {
  source                   = "../../modules/tier2"
  name                     = var.name
  dist_dir                 = local.dist_dir
  architecture             = local.manifest.architecture
  vpc_id                   = aws_vpc.this.id
  subnet_ids               = aws_subnet.private[*].id
  route_table_ids          = [aws_route_table.private.id]
  tier1_link_keys          = module.tier1.tier2_link_keys
  tier1_table_name         = module.tier1.table_name
  tier1_table_arn          = module.tier1.table_arn
  tier1_settings           = module.tier1.settings
  admin_api_id             = module.tier1.admin_api_id
  admin_api_execution_arn  = module.tier1.admin_api_execution_arn
  admin_principal_patterns = var.admin_principal_patterns
  admin_groups_claim       = var.admin_oidc_groups_claim
  origin_secret_arn        = module.tier1.origin_secret_arn
  protected_backend_url    = var.protected_backend_url
}

module "edge" {
  source = "../../modules/edge"
  providers = {
    aws           = aws
    aws.us_east_1 = aws.us_east_1
  }
  name                 = var.name
  dist_dir             = local.dist_dir
  site_origin_domain   = var.site_origin_domain
  tier1_api_domain     = module.tier1.public_api_domain
  tier2_api_domain     = module.tier2.public_api_domain
  protected_api_domain = module.tier2.protected_api_domain
  protected_api_stage  = module.tier2.protected_api_stage
  verifier             = var.verifier
  gated_events         = var.gated_events
  tier1_settings       = module.tier1.settings
  # Derived keys only: the master keys (keys_text) never reach the edge.
  tier1_edge_keys_text = module.tier1.edge_keys_text
  origin_secret        = module.tier1.origin_secret
  aliases              = var.aliases
  acm_certificate_arn  = var.acm_certificate_arn
  # Per-client limits at the edge (terraform/README.md, "WAF"), on unless web_acl_id is given.
  web_acl_id                  = var.web_acl_id
  waf_enabled                 = var.waf_enabled
  waf_assign_limit_per_minute = var.waf_assign_limit_per_minute
  waf_check_limit_per_minute  = var.waf_check_limit_per_minute
  waf_queue_limit_per_minute  = var.waf_queue_limit_per_minute
  waf_rate_limit_action       = var.waf_rate_limit_action
  waf_block_anonymous_ips     = var.waf_block_anonymous_ips
  waf_log_destination_arn     = var.waf_log_destination_arn
  # The console under /vwr-console/ (docs/console.md): its config.json and where it may connect.
  console_config_json     = module.console.config_json
  console_connect_origins = module.console.connect_origins
}

# The console's sign-in and API (docs/console.md, "Sign-in in AWS"): a Cognito user pool with the
# groups vwr-viewer, vwr-operator and vwr-admin, or the OIDC issuer of admin_oidc_issuer; the
# console API carries the admin routes of both tiers, a JWT authorizer on each.
module "console" {
  source     = "../../modules/console"
  name       = var.name
  site_hosts = distinct(concat(var.aliases, [module.edge.distribution_domain]))
  oidc = var.admin_oidc_issuer == null ? null : {
    issuer    = var.admin_oidc_issuer
    client_id = var.admin_oidc_client_id
    audience  = var.admin_oidc_audience
  }
  tier1_admin = module.tier1.admin_routes
  tier2_admin = module.tier2.admin_routes
  # Torn down like the table (terraform/README.md): the pool holds the console's people.
  deletion_protection = var.table_deletion_protection
}

# The origin's 5xx rate, for the health gate: CloudFront's 5xxErrorRate (the site origin
# included) where the advancer runs in us-east-1 — CloudFront's metrics exist there only, and an
# alarm (like the advancer's DescribeAlarms) sees its own region's — else the protected-API gate's
# 5xx share (the booking backend behind it), else none: name an alarm of your own origin in this
# region in health_alarm_names instead (terraform/README.md, "Health gate").
locals {
  origin_5xx = var.region == "us-east-1" ? {
    source          = "cloudfront"
    distribution_id = module.edge.distribution_id
    api_name        = null
    api_stage       = null
    } : var.protected_backend_url != null ? {
    source          = "protected-api"
    distribution_id = null
    api_name        = module.tier2.protected_api_name
    api_stage       = module.tier2.protected_api_stage
  } : null
}

module "observability" {
  source                = "../../modules/observability"
  name                  = var.name
  alarm_actions         = var.alarm_actions
  stall_alarm_event_ids = var.stall_alarm_event_ids
  origin_5xx            = local.origin_5xx
  origin_5xx_percent    = var.origin_5xx_percent
  tier1 = {
    public_api_id   = module.tier1.public_api_id
    function_names  = module.tier1.function_names
    log_group_names = module.tier1.log_group_names
  }
  tier2 = {
    public_api_id     = module.tier2.public_api_id
    function_names    = module.tier2.function_names
    log_group_names   = module.tier2.log_group_names
    notice_queue_name = module.tier2.notice_queue_name
    notice_dlq_name   = module.tier2.notice_dlq_name
    redis_cache_name  = module.tier2.redis_cache_name
  }
}

# hold_on_origin_errors asks for the origin-5xx alarm, which needs a metric the advancer's region
# can see.
check "origin_health_alarm" {
  assert {
    condition     = !var.hold_on_origin_errors || local.origin_5xx != null
    error_message = "hold_on_origin_errors is set, but there is no origin-5xx alarm to hold on: CloudFront's metrics exist in us-east-1 only (region is ${var.region}) and there is no protected_backend_url. Name an alarm of your own origin in this region in health_alarm_names (e.g. your ALB's HTTPCode_Target_5XX_Count), or set hold_on_origin_errors = false."
  }
}

# The OIDC client and audience belong to an issuer: without admin_oidc_issuer the console signs in
# with the Cognito user pool and they are unused.
check "console_oidc" {
  assert {
    condition     = var.admin_oidc_issuer != null || (var.admin_oidc_client_id == null && var.admin_oidc_audience == null)
    error_message = "admin_oidc_client_id or admin_oidc_audience is set without admin_oidc_issuer: the console uses the Cognito user pool and ignores them. Set admin_oidc_issuer too, or leave them out."
  }
}

# With the default *.cloudfront.net certificate CloudFront accepts TLSv1 and the minimum cannot
# be raised: a warning (not an error) on every plan without a custom domain.
check "custom_domain" {
  assert {
    condition     = var.acm_certificate_arn != null
    error_message = "No acm_certificate_arn: the *.cloudfront.net certificate lets viewers connect with TLSv1. For production, set aliases and an ACM certificate (us-east-1); the distribution then requires TLS 1.2 (TLSv1.2_2021)."
  }
}

# A standby event (docs/lifecycle.md#standby) is known but not gated until an alarm fires; this
# one fires when the site's traffic through CloudFront passes standby_requests_per_minute (a
# leaked link, a line-up reveal): `vwr admin standby EVENT --alarm <this name>`. CloudFront's
# metrics exist in us-east-1 only, and the advancer reads alarms of its own region, so it is
# made there only; elsewhere, name an alarm of your own origin in tier 1's standby_alarm_names.
resource "aws_cloudwatch_metric_alarm" "standby_spike" {
  count               = var.region == "us-east-1" ? 1 : 0
  alarm_name          = "${var.name}-standby-spike"
  alarm_description   = "Opens vwr standby events waiting for it: CloudFront requests above ${var.standby_requests_per_minute} a minute."
  namespace           = "AWS/CloudFront"
  metric_name         = "Requests"
  dimensions          = { DistributionId = module.edge.distribution_id, Region = "Global" }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 1
  threshold           = var.standby_requests_per_minute
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
}
