# Redis: ElastiCache Serverless (cluster mode, TLS only), with an RBAC user group: the
# application user has a generated password; the mandatory `default` user is switched off.

resource "random_password" "redis" {
  for_each = toset(["app", "default"])
  length   = 40
  special  = false
}

resource "aws_elasticache_user" "default" {
  user_id       = "${var.name}-tier2-default"
  user_name     = "default"
  engine        = var.redis_engine
  access_string = "off -@all"
  passwords     = [random_password.redis["default"].result]
  tags          = var.tags
}

resource "aws_elasticache_user" "app" {
  user_id       = "${var.name}-tier2-app"
  user_name     = "${var.name}-tier2"
  engine        = var.redis_engine
  access_string = var.redis_access_string
  passwords     = [random_password.redis["app"].result]
  tags          = var.tags
}

resource "aws_elasticache_user_group" "this" {
  user_group_id = "${var.name}-tier2"
  engine        = var.redis_engine
  user_ids      = [aws_elasticache_user.default.user_id, aws_elasticache_user.app.user_id]
  tags          = var.tags
}

resource "aws_elasticache_serverless_cache" "this" {
  name                 = "${var.name}-tier2"
  description          = "vwr tier 2: per-event lines and active sets"
  engine               = var.redis_engine
  major_engine_version = var.redis_major_version
  subnet_ids           = var.subnet_ids
  security_group_ids   = [aws_security_group.redis.id]
  user_group_id        = aws_elasticache_user_group.this.user_group_id
  kms_key_id           = var.kms_key_arn

  cache_usage_limits {
    data_storage {
      maximum = var.redis_max_data_gb
      unit    = "GB"
    }
    ecpu_per_second {
      maximum = var.redis_max_ecpu_per_second
    }
  }

  tags = var.tags
}

locals {
  redis_endpoint = aws_elasticache_serverless_cache.this.endpoint[0]
  # TLS, cluster mode, ACL user and password (VWR_REDIS_URL / VWR_REDIS_CLUSTER). Secret: see
  # terraform/README.md, "Secrets".
  redis_url = "rediss://${aws_elasticache_user.app.user_name}:${random_password.redis["app"].result}@${local.redis_endpoint.address}:${local.redis_endpoint.port}"
}

# The URL carries the application user's password, so it lives in Secrets Manager and the
# functions read it at start-up (VWR_REDIS_URL_SECRET_ID) rather than from a plain environment
# variable anyone with lambda:GetFunctionConfiguration could read.
resource "aws_secretsmanager_secret" "redis_url" {
  #checkov:skip=CKV2_AWS_57:The password changes with random_password.redis; no rotation Lambda.
  #checkov:skip=CKV_AWS_149:The AWS managed key is used unless var.kms_key_arn is given.
  name                    = "${var.name}/redis-url"
  description             = "vwr tier-2 Redis URL with the application user's password (VWR_REDIS_URL_SECRET_ID)"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "redis_url" {
  secret_id     = aws_secretsmanager_secret.redis_url.id
  secret_string = local.redis_url
}
