# Tier 1: DynamoDB counters, the public API (assign/check), the admin API (IAM only), the
# advancer on EventBridge Scheduler, and the tier-1 HMAC keys in Secrets Manager.

locals {
  # Standard base64 → unpadded base64url, the form `vwr keys generate` prints.
  tier1_keys_b64url = {
    for k in var.key_ids : k => replace(replace(replace(random_bytes.key[k].base64, "+", "-"), "/", "_"), "=", "")
  }
  # The edge gets derived keys only, never the master keys (a leaked edge key cannot sign
  # tickets or reach anything but the edge cookie): SHA-256 of "vwr/edge-token/v1:" + the
  # master key as unpadded base64url, written unpadded base64url. The Rust HmacKeyring::edge_ring
  # derives the same; a test vector pins both (modules/tier1/README.md, "Edge keys").
  tier1_edge_keys_b64url = {
    for k in var.key_ids : k => replace(replace(replace(base64sha256("vwr/edge-token/v1:${local.tier1_keys_b64url[k]}"), "+", "-"), "/", "_"), "=", "")
  }
  # Tier 2 gets derived keys only too (docs/tokens.md#place-proofs): the edge keys (it reads and
  # renews tier-1 tokens) and the place-proof keys (a token takes a place in tier 2's line only
  # with a proof made by tier 1 at redemption), SHA-256 of "vwr/tier2-place/v1:" + the master
  # key as the edge keys are; HmacKeyring::place_ring derives the same (test vector pinned).
  tier1_place_keys_b64url = {
    for k in var.key_ids : k => replace(replace(replace(base64sha256("vwr/tier2-place/v1:${local.tier1_keys_b64url[k]}"), "+", "-"), "/", "_"), "=", "")
  }
  # VWR_ADMIN_PRINCIPALS: null (left out) = any IAM principal the admin API's AWS_IAM lets in.
  admin_principals = length(var.admin_principal_patterns) == 0 ? null : join(",", var.admin_principal_patterns)
  # Changes when the kid list changes, so every function restarts with the new key ring
  # (functions read the secret once per cold start). Holds no key material.
  keys_revision = sha256(join(",", var.key_ids))
  table_name    = "${var.name}-tier1"

  # The health gate (docs/outflow.md#health-gate): VWR_HEALTH_ALARMS is `AlarmName` (holds every
  # event) or `eventId=AlarmName` (holds one event), comma-separated; null (left out) = none.
  health_alarm_entries = concat(
    var.health_alarm_names,
    flatten([for e, names in var.health_alarms_by_event : [for n in names : "${e}=${n}"]]),
  )
  health_alarms = length(local.health_alarm_entries) == 0 ? null : join(",", local.health_alarm_entries)
  # DescribeAlarms is allowed on exactly these alarms (metric alarms of this account and region:
  # the advancer's CloudWatch client asks its own region).
  # The standby alarms (docs/lifecycle.md#standby) are read the same way.
  health_alarm_arns = [
    for n in distinct(concat(var.health_alarm_names, flatten(values(var.health_alarms_by_event)), var.standby_alarm_names)) :
    "arn:${data.aws_partition.current.partition}:cloudwatch:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:alarm:${n}"
  ]
  # The admin function reads a standby's alarm when it is set and in the event's status: an
  # alarm it cannot read (a typo, or one outside standby_alarm_names) is refused with 400.
  standby_alarm_arns = [
    for n in distinct(var.standby_alarm_names) :
    "arn:${data.aws_partition.current.partition}:cloudwatch:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:alarm:${n}"
  ]
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# ---------------------------------------------------------------------------------------------
# Keys

resource "random_bytes" "key" {
  for_each = toset(var.key_ids)
  length   = 32
}

resource "aws_secretsmanager_secret" "keys" {
  #checkov:skip=CKV2_AWS_57:Rotation is a two-step, edge-first procedure driven by var.key_ids (see terraform/README.md), not a rotation Lambda.
  #checkov:skip=CKV_AWS_149:The AWS managed key is used unless var.kms_key_arn is given.
  name                    = "${var.name}/tier1-keys"
  description             = "vwr tier-1 HMAC keys: {\"signingKid\":…,\"keys\":{kid: base64url}} (VWR_TIER1_KEYS_SECRET_ID)"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "keys" {
  secret_id = aws_secretsmanager_secret.keys.id
  secret_string = jsonencode({
    signingKid = var.key_ids[0]
    keys       = local.tier1_keys_b64url
  })
}

# ---------------------------------------------------------------------------------------------
# Origin secret: CloudFront sends it as `x-vwr-origin-secret` to every origin; the public API
# functions (here and in tier 2) refuse requests without it, so the execute-api endpoints
# CloudFront needs cannot be used to go around the edge (terraform/README.md, "Locking origins
# to CloudFront"). The secret string is the header value itself.

resource "random_password" "origin" {
  length  = 64
  special = false
}

resource "aws_secretsmanager_secret" "origin" {
  #checkov:skip=CKV2_AWS_57:CloudFront and the functions must switch together; rotation is a replace-and-apply (terraform/README.md, "Locking origins to CloudFront"), not a rotation Lambda.
  #checkov:skip=CKV_AWS_149:The AWS managed key is used unless var.kms_key_arn is given.
  name                    = "${var.name}/origin-secret"
  description             = "vwr: value of the x-vwr-origin-secret header CloudFront sends to every origin (VWR_ORIGIN_SECRET_ID)"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "origin" {
  secret_id     = aws_secretsmanager_secret.origin.id
  secret_string = random_password.origin.result
}

# ---------------------------------------------------------------------------------------------
# Table (the same shape `vwr bootstrap` creates: functions/tier1-store/src/dynamo/table.rs, ensure_table)

resource "aws_dynamodb_table" "this" {
  #checkov:skip=CKV_AWS_119:Encrypted at rest with the AWS owned key by default; a customer managed key is used when var.kms_key_arn is given.
  name                        = local.table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  range_key                   = "sk"
  deletion_protection_enabled = var.table_deletion_protection

  attribute {
    name = "pk"
    type = "S"
  }
  attribute {
    name = "sk"
    type = "S"
  }
  attribute {
    name = "gsi1pk"
    type = "S"
  }
  attribute {
    name = "gsi1sk"
    type = "S"
  }

  global_secondary_index {
    name            = "active-index"
    hash_key        = "gsi1pk"
    range_key       = "gsi1sk"
    projection_type = "ALL"
  }

  ttl {
    attribute_name = "expiresAt"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = true
  }

  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}

# ---------------------------------------------------------------------------------------------
# Functions. Environment: exactly what the tier-1 Lambdas read (functions/tier1/src/config.rs and
# functions/lambda/src/secrets.rs; tests/infra checks it).

locals {
  api_env = {
    VWR_TIER1_KEYS_SECRET_ID = aws_secretsmanager_secret.keys.arn
    VWR_TABLE                = aws_dynamodb_table.this.name
    VWR_TOKEN_ISSUER         = var.token_issuer
    VWR_TOKEN_AUDIENCE       = var.token_audience
    VWR_COOKIE_PREFIX        = var.cookie_prefix
    VWR_TICKET_TTL_SECONDS   = tostring(var.ticket_ttl_seconds)
    VWR_CACHE_TTL_MS         = tostring(var.cache_ttl_ms)
    VWR_ORIGIN_SECRET_ID     = aws_secretsmanager_secret.origin.arn
    VWR_ENQUEUE_JWKS         = var.enqueue_jwks
    VWR_TIER2_JWKS           = var.tier2_jwks
    VWR_ENTRY_ISSUER         = var.tier2_issuer
    RUST_LOG                 = var.log_level
    KEYS_REVISION            = local.keys_revision
  }
  admin_env = {
    VWR_TIER1_KEYS_SECRET_ID = aws_secretsmanager_secret.keys.arn
    VWR_TABLE                = aws_dynamodb_table.this.name
    VWR_TOKEN_ISSUER         = var.token_issuer
    VWR_TOKEN_AUDIENCE       = var.token_audience
    VWR_COOKIE_PREFIX        = var.cookie_prefix
    VWR_TICKET_TTL_SECONDS   = tostring(var.ticket_ttl_seconds)
    VWR_CACHE_TTL_MS         = tostring(var.cache_ttl_ms)
    VWR_EDGE_KVS_ARN         = var.edge_kvs_arn
    VWR_ADMIN_PRINCIPALS     = local.admin_principals
    VWR_ADMIN_GROUPS_CLAIM   = var.admin_groups_claim
    VWR_ENQUEUE_JWKS         = var.enqueue_jwks
    RUST_LOG                 = var.log_level
    KEYS_REVISION            = local.keys_revision
  }
  advancer_env = {
    VWR_TIER1_KEYS_SECRET_ID  = aws_secretsmanager_secret.keys.arn
    VWR_TABLE                 = aws_dynamodb_table.this.name
    VWR_TOKEN_ISSUER          = var.token_issuer
    VWR_TOKEN_AUDIENCE        = var.token_audience
    VWR_COOKIE_PREFIX         = var.cookie_prefix
    VWR_TICKET_TTL_SECONDS    = tostring(var.ticket_ttl_seconds)
    VWR_CACHE_TTL_MS          = tostring(var.cache_ttl_ms)
    VWR_ADVANCER_TICK_SECONDS = tostring(var.advancer_tick_seconds)
    VWR_EDGE_KVS_ARN          = var.edge_kvs_arn
    VWR_HEALTH_ALARMS         = local.health_alarms
    RUST_LOG                  = var.log_level
    KEYS_REVISION             = local.keys_revision
  }
}

data "aws_iam_policy_document" "api" {
  statement {
    sid       = "Positions"
    actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"]
    resources = [aws_dynamodb_table.this.arn]
  }
  statement {
    sid       = "Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.keys.arn]
  }
  statement {
    sid       = "OriginSecret"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.origin.arn]
  }
}

# A DynamoDB transaction (TransactWriteItems) is authorized item by item: an Update needs
# dynamodb:UpdateItem, a Put dynamodb:PutItem, a ConditionCheck dynamodb:ConditionCheckItem;
# "dynamodb:TransactWriteItems" is not an IAM action. Every lifecycle change (admin and advancer)
# is one transaction: Update of the event item (guarded by its `rev`) + Put of an audit item
# (`pk = EVT#{e}#AUDIT`), hence PutItem below (docs/lifecycle.md).
data "aws_iam_policy_document" "admin" {
  statement {
    sid = "Events"
    # UpdateItem (and PutItem) on the event item, plain or in a lifecycle transaction (activate,
    # deactivate, schedule, pause, resume, close, message, manual advance); PutItem: the audit
    # item of each of them.
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"]
    resources = [aws_dynamodb_table.this.arn]
  }
  statement {
    sid       = "ActiveEvents"
    actions   = ["dynamodb:Query"]
    resources = ["${aws_dynamodb_table.this.arn}/index/active-index"]
  }
  statement {
    # GET /api/admin/vwr/audit/{eventId} and /report/{eventId}: one partition of the base table
    # each (pk = EVT#{e}#AUDIT, EVT#{e}#M).
    sid       = "AuditTrail"
    actions   = ["dynamodb:Query"]
    resources = [aws_dynamodb_table.this.arn]
  }
  statement {
    sid       = "Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.keys.arn]
  }
  dynamic "statement" {
    for_each = var.edge_kvs_arn == null ? [] : [var.edge_kvs_arn]
    content {
      sid       = "EdgeEventList"
      actions   = ["cloudfront-keyvaluestore:DescribeKeyValueStore", "cloudfront-keyvaluestore:GetKey", "cloudfront-keyvaluestore:PutKey"]
      resources = [statement.value]
    }
  }
  dynamic "statement" {
    for_each = length(local.standby_alarm_arns) == 0 ? [] : [local.standby_alarm_arns]
    content {
      sid       = "StandbyAlarms"
      actions   = ["cloudwatch:DescribeAlarms"]
      resources = statement.value
    }
  }
}

data "aws_iam_policy_document" "advancer" {
  statement {
    sid = "Events"
    # UpdateItem: steps, shard seals and the event item in lifecycle transactions (prequeue,
    # open, close); PutItem: their audit items.
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"]
    resources = [aws_dynamodb_table.this.arn]
  }
  statement {
    sid       = "ActiveEvents"
    actions   = ["dynamodb:Query"]
    resources = ["${aws_dynamodb_table.this.arn}/index/active-index"]
  }
  statement {
    sid       = "Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.keys.arn]
  }
  dynamic "statement" {
    for_each = var.edge_kvs_arn == null ? [] : [var.edge_kvs_arn]
    content {
      sid       = "EdgeEventList"
      actions   = ["cloudfront-keyvaluestore:DescribeKeyValueStore", "cloudfront-keyvaluestore:GetKey", "cloudfront-keyvaluestore:PutKey"]
      resources = [statement.value]
    }
  }
  # The health gate: the advancer reads the state of the alarms in VWR_HEALTH_ALARMS (one
  # DescribeAlarms call per 5 s for all of them). DescribeAlarms takes resource-level
  # permissions on metric alarm ARNs, so it is allowed on exactly the listed alarms. (Composite
  # alarms are only returned to a DescribeAlarms allowed on "*": name metric alarms here.)
  dynamic "statement" {
    for_each = length(local.health_alarm_arns) == 0 ? [] : [local.health_alarm_arns]
    content {
      sid       = "HealthAlarms"
      actions   = ["cloudwatch:DescribeAlarms"]
      resources = statement.value
    }
  }
}

module "api" {
  source               = "../lambda"
  function_name        = "${var.name}-tier1-api"
  binary               = "vwr-tier1-api"
  description          = "vwr tier 1: POST /vwr/assign/{eventId}, GET /vwr/check/{eventId}/{requestId}, GET /vwr/status/{eventId}, GET /vwr/page/{eventId}, POST /vwr/release/{eventId}"
  dist_dir             = var.dist_dir
  architecture         = var.architecture
  memory_mb            = var.api_memory_mb
  timeout_seconds      = 10
  reserved_concurrency = var.api_reserved_concurrency
  environment          = local.api_env
  policy_json          = data.aws_iam_policy_document.api.json
  log_retention_days   = var.log_retention_days
  kms_key_arn          = var.kms_key_arn
  tags                 = var.tags
}

module "admin" {
  source          = "../lambda"
  function_name   = "${var.name}-tier1-admin"
  binary          = "vwr-tier1-admin"
  description     = "vwr tier 1 admin API (IAM auth)"
  dist_dir        = var.dist_dir
  architecture    = var.architecture
  memory_mb       = 128
  timeout_seconds = 15
  # A few operators at most; reserved so that a spike on the public API never starves it.
  reserved_concurrency = 5
  environment          = local.admin_env
  policy_json          = data.aws_iam_policy_document.admin.json
  log_retention_days   = var.log_retention_days
  kms_key_arn          = var.kms_key_arn
  tags                 = var.tags
}

module "advancer" {
  source        = "../lambda"
  every_minute  = true
  function_name = "${var.name}-tier1-advancer"
  binary        = "vwr-tier1-advancer"
  description   = "vwr tier 1 advancer: EventBridge Scheduler rate(1 minute), ticks until the deadline"
  dist_dir      = var.dist_dir
  architecture  = var.architecture
  memory_mb     = 128
  # Runs ~57 s per invocation (deadline minus a 3 s margin, at most 60 s).
  timeout_seconds = 75
  # Two overlapping runs at most; reserved so the advancer always runs during a spike.
  reserved_concurrency = 2
  environment          = local.advancer_env
  policy_json          = data.aws_iam_policy_document.advancer.json
  log_retention_days   = var.log_retention_days
  kms_key_arn          = var.kms_key_arn
  tags                 = var.tags
}


# ---------------------------------------------------------------------------------------------
# APIs: the public one (behind CloudFront /vwr-api/*) and the admin one (IAM only), each a
# modules/http_api. The tier-2 module adds its admin routes to the same admin API, so
# `vwr admin --sigv4 --url` needs one URL. Explicit routes (no proxy): tests/infra checks them
# against the Rust routers, and that every admin route is AWS_IAM.

locals {
  # Both access logs name the caller (the IAM principal of an admin request).
  access_log_fields = { caller = "$context.identity.userArn" }
}

module "public_api" {
  source                 = "../http_api"
  name                   = "${var.name}-tier1"
  description            = "vwr tier-1 public API (CloudFront /vwr-api/* strips the prefix)"
  function_name          = module.api.function_name
  invoke_arn             = module.api.invoke_arn
  integration_timeout_ms = 10000
  routes = {
    assign = { route_key = "POST /vwr/assign/{eventId}", authorization = "NONE" }
    check  = { route_key = "GET /vwr/check/{eventId}/{requestId}", authorization = "NONE" }
    # The public status document (docs/lifecycle.md): CloudFront caches it 1 s, keyed on the path.
    status = { route_key = "GET /vwr/status/{eventId}", authorization = "NONE" }
    # The page document (docs/brand.md), cached a minute by CloudFront.
    page = { route_key = "GET /vwr/page/{eventId}", authorization = "NONE" }
    # Early release (docs/outflow.md#early-release): the site ends a visitor's session; the
    # visitor's tier-1 token comes in x-vwr-token or the tier-1 cookie (CloudFront's /vwr-api/*
    # behaviour forwards both).
    release = { route_key = "POST /vwr/release/{eventId}", authorization = "NONE" }
  }
  # null: one permission per route (apigw-<route>), limited to its method and path.
  invoke_permissions = null
  throttle           = { rate = var.api_throttle_rate, burst = var.api_throttle_burst }
  access_log = {
    group_name     = "/aws/apigateway/${var.name}-tier1-public"
    retention_days = var.log_retention_days
    fields         = local.access_log_fields
  }
  kms_key_arn = var.kms_key_arn
  tags        = var.tags
}

module "admin_api" {
  source                 = "../http_api"
  name                   = "${var.name}-admin"
  description            = "vwr admin API (tier 1 and tier 2), AWS_IAM on every route"
  function_name          = module.admin.function_name
  invoke_arn             = module.admin.invoke_arn
  integration_timeout_ms = 15000
  routes = {
    activate   = { route_key = "POST /api/admin/vwr/activate/{eventId}", authorization = "AWS_IAM" }
    deactivate = { route_key = "POST /api/admin/vwr/deactivate/{eventId}", authorization = "AWS_IAM" }
    advance    = { route_key = "POST /api/admin/vwr/advance/{eventId}", authorization = "AWS_IAM" }
    status     = { route_key = "GET /api/admin/vwr/status/{eventId}", authorization = "AWS_IAM" }
    events     = { route_key = "GET /api/admin/vwr/events", authorization = "AWS_IAM" }
    # The sale lifecycle (docs/lifecycle.md, "Admin routes").
    schedule = { route_key = "PUT /api/admin/vwr/schedule/{eventId}", authorization = "AWS_IAM" }
    pause    = { route_key = "POST /api/admin/vwr/pause/{eventId}", authorization = "AWS_IAM" }
    resume   = { route_key = "POST /api/admin/vwr/resume/{eventId}", authorization = "AWS_IAM" }
    close    = { route_key = "POST /api/admin/vwr/close/{eventId}", authorization = "AWS_IAM" }
    message  = { route_key = "PUT /api/admin/vwr/message/{eventId}", authorization = "AWS_IAM" }
    audit    = { route_key = "GET /api/admin/vwr/audit/{eventId}", authorization = "AWS_IAM" }
    # The report after the sale (docs/operate.md#the-report-after-the-sale).
    report = { route_key = "GET /api/admin/vwr/report/{eventId}", authorization = "AWS_IAM" }
    # The health gate (docs/outflow.md#health-gate): {ok: false, reason} holds the advancer.
    health = { route_key = "PUT /api/admin/vwr/health/{eventId}", authorization = "AWS_IAM" }
    # Passes for staff, monitors and callbacks (docs/passes.md).
    pass_create = { route_key = "POST /api/admin/vwr/pass/{eventId}", authorization = "AWS_IAM" }
    pass_list   = { route_key = "GET /api/admin/vwr/pass/{eventId}", authorization = "AWS_IAM" }
    pass_revoke = { route_key = "DELETE /api/admin/vwr/pass/{eventId}/{passId}", authorization = "AWS_IAM" }
    # Standby events (docs/lifecycle.md#standby): ungated until their alarm fires.
    standby     = { route_key = "PUT /api/admin/vwr/standby/{eventId}", authorization = "AWS_IAM" }
    standby_end = { route_key = "DELETE /api/admin/vwr/standby/{eventId}", authorization = "AWS_IAM" }
    # The page in the site's colours and words (docs/brand.md).
    page = { route_key = "PUT /api/admin/vwr/page/{eventId}", authorization = "AWS_IAM" }
    # The caller's name, role and way in (docs/console.md#roles).
    whoami = { route_key = "GET /api/admin/vwr/whoami", authorization = "AWS_IAM" }
  }
  # One permission for every admin path of this function; tier 2's admin routes invoke its own.
  invoke_permissions = { "apigw-admin" = "*/*/api/admin/vwr/*" }
  throttle           = { rate = var.admin_throttle_rate, burst = var.admin_throttle_burst }
  access_log = {
    group_name     = "/aws/apigateway/${var.name}-tier1-admin"
    retention_days = var.log_retention_days
    fields         = local.access_log_fields
  }
  kms_key_arn = var.kms_key_arn
  tags        = var.tags
}
