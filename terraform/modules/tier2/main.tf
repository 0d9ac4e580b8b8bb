# Tier 2: admission notices (SQS FIFO + DLQ), the tier-2 API and worker (in the VPC, next to
# Redis), the entry-token authorizer (outside the VPC: it needs no Redis), the public tier-2
# HTTP API, and the tier-2 admin routes on the shared admin API.

# ---------------------------------------------------------------------------------------------
# Admission notices

resource "aws_sqs_queue" "notices_dlq" {
  name                      = "${var.name}-notices-dlq.fifo"
  fifo_queue                = true
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = var.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "notices" {
  name       = "${var.name}-notices.fifo"
  fifo_queue = true
  # The worker sets MessageDeduplicationId = userId:eventId; MessageGroupId = eventId.
  content_based_deduplication = false
  # Throughput per event (message group) rather than per queue: many events at once.
  deduplication_scope       = "messageGroup"
  fifo_throughput_limit     = "perMessageGroupId"
  message_retention_seconds = var.notice_retention_seconds
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = var.kms_key_arn

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.notices_dlq.arn
    maxReceiveCount     = var.notice_max_receive_count
  })

  tags = var.tags
}

resource "aws_sqs_queue_redrive_allow_policy" "notices_dlq" {
  queue_url = aws_sqs_queue.notices_dlq.id
  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.notices.arn]
  })
}

# ---------------------------------------------------------------------------------------------
# Functions. Environment: what tier2/tier2/src/config.rs and the Lambda plumbing read (tests/infra
# checks it). The tier-1
# variables (the derived keys of the tier1-link secret, cookie, issuer, audience) let the API and
# the authorizer read callers' tier-1 tokens — never the tier-1 master keys; VWR_TABLE lets the
# API serve events active in tier 1 and keep each event's tier-2 registration (item
# EVT#{eventId}#T2 / T2), which the worker reads back when Redis lost it.

locals {
  api_env = {
    VWR_REDIS_URL_SECRET_ID              = aws_secretsmanager_secret.redis_url.arn
    VWR_REDIS_CLUSTER                    = "true"
    VWR_REDIS_TIMEOUT_MS                 = tostring(var.redis_timeout_ms)
    VWR_TIER2_KEYS_SECRET_ID             = aws_secretsmanager_secret.entry_keys.arn
    VWR_ENTRY_ISSUER                     = var.entry_issuer
    VWR_ENTRY_AUDIENCE                   = var.entry_audience
    VWR_ACTIVE_TTL_SECONDS               = tostring(var.active_ttl_seconds)
    VWR_ENTRY_TOKEN_TTL_SECONDS          = tostring(var.entry_token_ttl_seconds)
    VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS = tostring(var.active_heartbeat_timeout_seconds)
    VWR_WAITING_TIMEOUT_SECONDS          = tostring(var.waiting_timeout_seconds)
    VWR_COLLECT_SECONDS                  = tostring(var.collect_seconds)
    VWR_EVICTED_PLACE_SECONDS            = tostring(var.evicted_place_seconds)
    VWR_ADMIT_BATCH                      = tostring(var.admit_batch)
    VWR_DEFAULT_THRESHOLD                = tostring(var.default_threshold)
    VWR_TIER1_LINK_SECRET_ID             = aws_secretsmanager_secret.tier1_link.arn
    VWR_TABLE                            = var.tier1_table_name
    VWR_TOKEN_ISSUER                     = var.tier1_settings.token_issuer
    VWR_TOKEN_AUDIENCE                   = var.tier1_settings.token_audience
    VWR_COOKIE_PREFIX                    = var.tier1_settings.cookie_prefix
    VWR_ORIGIN_SECRET_ID                 = var.origin_secret_arn
    VWR_ADMIN_PRINCIPALS                 = length(var.admin_principal_patterns) == 0 ? null : join(",", var.admin_principal_patterns)
    VWR_ADMIN_GROUPS_CLAIM               = var.admin_groups_claim
    RUST_LOG                             = var.log_level
    KEYS_REVISION                        = local.keys_revision
  }
  worker_env = {
    VWR_REDIS_URL_SECRET_ID              = aws_secretsmanager_secret.redis_url.arn
    VWR_REDIS_CLUSTER                    = "true"
    VWR_REDIS_TIMEOUT_MS                 = tostring(var.redis_timeout_ms)
    VWR_TIER2_KEYS_SECRET_ID             = aws_secretsmanager_secret.entry_keys.arn
    VWR_ENTRY_ISSUER                     = var.entry_issuer
    VWR_ENTRY_AUDIENCE                   = var.entry_audience
    VWR_ACTIVE_TTL_SECONDS               = tostring(var.active_ttl_seconds)
    VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS = tostring(var.active_heartbeat_timeout_seconds)
    VWR_WAITING_TIMEOUT_SECONDS          = tostring(var.waiting_timeout_seconds)
    VWR_COLLECT_SECONDS                  = tostring(var.collect_seconds)
    VWR_EVICTED_PLACE_SECONDS            = tostring(var.evicted_place_seconds)
    VWR_ADMIT_BATCH                      = tostring(var.admit_batch)
    VWR_DEFAULT_THRESHOLD                = tostring(var.default_threshold)
    VWR_NOTICE_QUEUE_URL                 = aws_sqs_queue.notices.url
    VWR_TABLE                            = var.tier1_table_name
    RUST_LOG                             = var.log_level
    KEYS_REVISION                        = local.keys_revision
  }
  authorizer_env = {
    VWR_TIER2_JWKS           = local.jwks
    VWR_ENTRY_ISSUER         = var.entry_issuer
    VWR_ENTRY_AUDIENCE       = var.entry_audience
    VWR_TIER1_LINK_SECRET_ID = aws_secretsmanager_secret.tier1_link.arn
    VWR_TOKEN_ISSUER         = var.tier1_settings.token_issuer
    VWR_TOKEN_AUDIENCE       = var.tier1_settings.token_audience
    VWR_COOKIE_PREFIX        = var.tier1_settings.cookie_prefix
    RUST_LOG                 = var.log_level
    KEYS_REVISION            = local.keys_revision
  }
}

data "aws_iam_policy_document" "api" {
  statement {
    sid       = "Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.entry_keys.arn, aws_secretsmanager_secret.tier1_link.arn, aws_secretsmanager_secret.redis_url.arn]
  }
  statement {
    sid       = "OriginSecret"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [var.origin_secret_arn]
  }
  statement {
    sid       = "Tier1Events"
    actions   = ["dynamodb:GetItem"]
    resources = [var.tier1_table_arn]
  }
  # The registration items only (pk EVT#{eventId}#T2, sk T2): IAM conditions see the partition
  # key alone, so the registration has a partition of its own. Event ids have no '#', and no
  # tier-1 item's key ends in #T2, so this keeps the API's writes off tier 1's event items
  # (EVT#…), position shards (EVT#…#S#…), redemptions (EVT#…#R#…), accounts and audit trail.
  statement {
    sid       = "Registrations"
    actions   = ["dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = [var.tier1_table_arn]
    condition {
      test     = "ForAllValues:StringLike"
      variable = "dynamodb:LeadingKeys"
      values   = ["EVT#*#T2"]
    }
    condition {
      test     = "ForAllValues:StringNotLike"
      variable = "dynamodb:LeadingKeys"
      values   = ["EVT#*#*#*"]
    }
  }
}

data "aws_iam_policy_document" "worker" {
  statement {
    sid       = "Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.entry_keys.arn, aws_secretsmanager_secret.redis_url.arn]
  }
  statement {
    sid       = "Notices"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.notices.arn]
  }
  statement {
    sid       = "Registrations"
    actions   = ["dynamodb:GetItem"]
    resources = [var.tier1_table_arn]
  }
  dynamic "statement" {
    for_each = var.kms_key_arn == null ? [] : [var.kms_key_arn]
    content {
      sid       = "NoticesKey"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [statement.value]
    }
  }
}

data "aws_iam_policy_document" "authorizer" {
  statement {
    sid       = "Tier1Keys"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.tier1_link.arn]
  }
}

module "api" {
  source                 = "../lambda"
  function_name          = "${var.name}-tier2-api"
  binary                 = "vwr-tier2-api"
  description            = "vwr tier 2: /api/queue/* and the tier-2 admin routes"
  dist_dir               = var.dist_dir
  architecture           = var.architecture
  memory_mb              = var.api_memory_mb
  timeout_seconds        = 10
  reserved_concurrency   = var.api_reserved_concurrency
  environment            = local.api_env
  policy_json            = data.aws_iam_policy_document.api.json
  vpc_subnet_ids         = var.subnet_ids
  vpc_security_group_ids = [aws_security_group.functions.id]
  log_retention_days     = var.log_retention_days
  kms_key_arn            = var.kms_key_arn
  tags                   = var.tags
}

module "worker" {
  source        = "../lambda"
  every_minute  = true
  function_name = "${var.name}-tier2-worker"
  binary        = "vwr-tier2-worker"
  description   = "vwr tier 2 admission worker: EventBridge Scheduler rate(1 minute), ticks until the deadline"
  dist_dir      = var.dist_dir
  architecture  = var.architecture
  memory_mb     = 128
  # Runs ~57 s per invocation.
  timeout_seconds = 75
  # Overlapping runs are safe (each step is one script); two at most, always available.
  reserved_concurrency   = 2
  environment            = local.worker_env
  policy_json            = data.aws_iam_policy_document.worker.json
  vpc_subnet_ids         = var.subnet_ids
  vpc_security_group_ids = [aws_security_group.functions.id]
  log_retention_days     = var.log_retention_days
  kms_key_arn            = var.kms_key_arn
  tags                   = var.tags
}

module "authorizer" {
  source             = "../lambda"
  function_name      = "${var.name}-tier2-authorizer"
  binary             = "vwr-tier2-authorizer"
  description        = "vwr entry-token authorizer (API Gateway REST, REQUEST) for protected APIs"
  dist_dir           = var.dist_dir
  architecture       = var.architecture
  memory_mb          = 128
  timeout_seconds    = 5
  environment        = local.authorizer_env
  policy_json        = data.aws_iam_policy_document.authorizer.json
  log_retention_days = var.log_retention_days
  kms_key_arn        = var.kms_key_arn
  tags               = var.tags
}

# ---------------------------------------------------------------------------------------------
# Public tier-2 API (CloudFront /api/queue/* → here, cookies forwarded: the caller is the
# subject of their tier-1 token), a modules/http_api. Explicit routes (no proxy): tests/infra
# checks them against the Rust router.

module "public_api" {
  source                 = "../http_api"
  name                   = "${var.name}-tier2"
  description            = "vwr tier-2 public API (/api/queue/*)"
  function_name          = module.api.function_name
  invoke_arn             = module.api.invoke_arn
  integration_timeout_ms = 10000
  routes = {
    check     = { route_key = "POST /api/queue/check/{eventId}", authorization = "NONE" }
    status    = { route_key = "GET /api/queue/status/{eventId}", authorization = "NONE" }
    heartbeat = { route_key = "POST /api/queue/heartbeat/{eventId}", authorization = "NONE" }
    leave     = { route_key = "POST /api/queue/leave/{eventId}", authorization = "NONE" }
    line      = { route_key = "GET /api/queue/line/{eventId}", authorization = "NONE" }
    jwks      = { route_key = "GET /api/queue/.well-known/jwks.json", authorization = "NONE" }
  }
  invoke_permissions = { "apigw-public" = "*/*/api/queue/*" }
  throttle           = { rate = var.api_throttle_rate, burst = var.api_throttle_burst }
  access_log = {
    group_name     = "/aws/apigateway/${var.name}-tier2"
    retention_days = var.log_retention_days
  }
  kms_key_arn = var.kms_key_arn
  tags        = var.tags
}

# Tier-2 admin routes on the shared admin API (AWS_IAM), a modules/http_api/routes: the API, its
# stage and access log are tier 1's.
# The same function serves the public routes above, but these requests never pass CloudFront:
# the function exempts /api/queue/admin/* from the origin-secret check (IAM authenticates them
# instead).

module "admin_routes" {
  source                 = "../http_api/routes"
  api_id                 = var.admin_api_id
  execution_arn          = var.admin_api_execution_arn
  function_name          = module.api.function_name
  invoke_arn             = module.api.invoke_arn
  integration_timeout_ms = 10000
  routes = {
    threshold = { route_key = "PUT /api/queue/admin/threshold/{eventId}", authorization = "AWS_IAM" }
    status    = { route_key = "GET /api/queue/admin/status/{eventId}", authorization = "AWS_IAM" }
    report    = { route_key = "GET /api/queue/admin/report/{eventId}", authorization = "AWS_IAM" }
    remove    = { route_key = "DELETE /api/queue/admin/event/{eventId}", authorization = "AWS_IAM" }
  }
  invoke_permissions = { "apigw-admin" = "*/*/api/queue/admin/*" }
}
