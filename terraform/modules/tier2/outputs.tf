output "public_api_endpoint" {
  description = "Base URL of the public tier-2 API (/api/queue/…)."
  value       = module.public_api.endpoint
}

output "public_api_domain" {
  description = "Host name of the public tier-2 API, for a CloudFront origin."
  value       = module.public_api.domain
}

output "public_api_id" {
  description = "Id of the public tier-2 HTTP API (for alarms)."
  value       = module.public_api.id
}

output "jwks" {
  description = "Public JWKS of the entry-token keys (the same document as GET /api/queue/.well-known/jwks.json)."
  value       = local.jwks
}

output "keys_secret_arn" {
  description = "Secret with the entry-token private keys (VWR_TIER2_KEYS_SECRET_ID)."
  value       = aws_secretsmanager_secret.entry_keys.arn
}

output "notice_queue_url" {
  description = "SQS FIFO queue of admission notices (consume it to react to admissions)."
  value       = aws_sqs_queue.notices.url
}

output "notice_queue_arn" {
  description = "ARN of the notice queue."
  value       = aws_sqs_queue.notices.arn
}

output "notice_dlq_name" {
  description = "Name of the notices' dead-letter queue (alarm on its depth)."
  value       = aws_sqs_queue.notices_dlq.name
}

output "redis_endpoint" {
  description = "Redis endpoint (host:port, TLS)."
  value       = "${local.redis_endpoint.address}:${local.redis_endpoint.port}"
}

output "redis_url" {
  description = "VWR_REDIS_URL with the application user's password. Secret."
  value       = local.redis_url
  sensitive   = true
}

output "authorizer_function_arn" {
  description = "The entry-token authorizer, to attach (REQUEST type, identity source header x-queue-entry-token, no caching) to your own REST API."
  value       = module.authorizer.arn
}

output "protected_api_endpoint" {
  description = "Invoke URL of the protected-API gate (null without protected_backend_url)."
  value       = local.gate ? aws_api_gateway_stage.gate[0].invoke_url : null
}

output "protected_api_domain" {
  description = "Host name of the protected-API gate, for a CloudFront origin (null without it)."
  value       = local.gate ? "${aws_api_gateway_rest_api.gate[0].id}.execute-api.${data.aws_region.current.name}.amazonaws.com" : null
}

output "protected_api_name" {
  description = "Name of the protected-API gate's REST API (its CloudWatch ApiName dimension; the observability module's origin-5xx alarm), null without it."
  value       = local.gate ? aws_api_gateway_rest_api.gate[0].name : null
}

output "protected_api_stage" {
  description = "Stage of the protected-API gate (CloudFront origin path), null without it."
  value       = local.gate ? aws_api_gateway_stage.gate[0].stage_name : null
}

output "function_names" {
  description = "Lambda function names by role: api, worker, authorizer."
  value = {
    api        = module.api.function_name
    worker     = module.worker.function_name
    authorizer = module.authorizer.function_name
  }
}

output "log_group_names" {
  description = "Log groups of the functions by role."
  value = {
    api        = module.api.log_group_name
    worker     = module.worker.log_group_name
    authorizer = module.authorizer.log_group_name
  }
}

output "worker_schedule_name" {
  description = "EventBridge Scheduler schedule of the worker."
  value       = module.worker.schedule_name
}

output "notice_queue_name" {
  description = "Name of the notice queue."
  value       = aws_sqs_queue.notices.name
}

output "redis_cache_name" {
  description = "Name of the ElastiCache Serverless cache (CloudWatch dimension clusterId)."
  value       = aws_elasticache_serverless_cache.this.name
}

output "entry_issuer" {
  description = "`iss` of tier 2's tokens (entry tokens and the identity cookie's holds), for the tier1 module's tier2_issuer."
  value       = var.entry_issuer
}

output "admin_routes" {
  description = "Tier 2's admin routes (on tier 1's admin API) and the function serving them, for another API that carries the same routes (module console's): {function_name, invoke_arn, integration_timeout_ms, route_keys (route name → route key)}."
  value = {
    function_name          = module.api.function_name
    invoke_arn             = module.api.invoke_arn
    integration_timeout_ms = 10000
    route_keys             = module.admin_routes.route_keys
  }
}
