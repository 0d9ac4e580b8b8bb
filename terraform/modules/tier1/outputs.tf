output "table_name" {
  description = "DynamoDB table of tier 1 (VWR_TABLE)."
  value       = aws_dynamodb_table.this.name
}

output "table_arn" {
  description = "ARN of the tier-1 table."
  value       = aws_dynamodb_table.this.arn
}

output "keys_secret_arn" {
  description = "Secrets Manager secret holding the tier-1 master keys (VWR_TIER1_KEYS_SECRET_ID): tier 1's functions only. Tier 2 gets tier2_link_keys."
  value       = aws_secretsmanager_secret.keys.arn
}

output "keys_text" {
  description = "The MASTER tier-1 keys as `kid:base64url,…` (what `vwr keys generate` prints). Secret. Never give them to the edge: use edge_keys_text."
  value       = join(",", [for k in var.key_ids : "${k}:${local.tier1_keys_b64url[k]}"])
  sensitive   = true
}

output "edge_keys_text" {
  description = "The keys derived for the edge verifier, `kid:base64url,…` (KeyValueStore `keys` / Lambda@Edge config.json): they verify tier-1 tokens and nothing else. Secret."
  value       = join(",", [for k in var.key_ids : "${k}:${local.tier1_edge_keys_b64url[k]}"])
  sensitive   = true
}

output "tier2_link_keys" {
  description = "What tier 2 needs to read tier-1 tokens, as the JSON of its VWR_TIER1_LINK_SECRET_ID: {\"signingKid\", \"edge\": {kid: key}, \"place\": {kid: key}}, the edge keys and the place-proof keys, both derived — never the master keys. For the tier2 module's tier1_link_keys. Secret."
  value = jsonencode({
    signingKid = var.key_ids[0]
    edge       = local.tier1_edge_keys_b64url
    place      = local.tier1_place_keys_b64url
  })
  sensitive = true
}

output "origin_secret_arn" {
  description = "Secret holding the x-vwr-origin-secret header value CloudFront sends to every origin (VWR_ORIGIN_SECRET_ID): the site origin and the protected backend read it to refuse requests that did not come through CloudFront."
  value       = aws_secretsmanager_secret.origin.arn
}

output "origin_secret" {
  description = "The x-vwr-origin-secret header value, for the edge module's origin_secret. Secret."
  value       = random_password.origin.result
  sensitive   = true
}

output "settings" {
  description = "Tier-1 token and cookie settings other modules must agree with."
  value = {
    token_issuer   = var.token_issuer
    token_audience = var.token_audience
    cookie_prefix  = var.cookie_prefix
  }
}

output "public_api_endpoint" {
  description = "Base URL of the public tier-1 API (CloudFront strips /vwr-api before it)."
  value       = module.public_api.endpoint
}

output "public_api_domain" {
  description = "Host name of the public tier-1 API, for a CloudFront origin."
  value       = module.public_api.domain
}

output "public_api_name" {
  description = "Name of the public tier-1 HTTP API (for alarms)."
  value       = module.public_api.name
}

output "public_api_id" {
  description = "Id of the public tier-1 HTTP API (for alarms)."
  value       = module.public_api.id
}

output "admin_api_endpoint" {
  description = "Base URL of the admin API: `vwr admin --sigv4 --url <this> …` (IAM auth; tier 1 and tier 2)."
  value       = module.admin_api.endpoint
}

output "admin_api_id" {
  description = "Id of the admin HTTP API (the tier-2 module adds its admin routes to it)."
  value       = module.admin_api.id
}

output "admin_api_execution_arn" {
  description = "Execution ARN of the admin HTTP API (for Lambda permissions and IAM policies of operators)."
  value       = module.admin_api.execution_arn
}

output "admin_routes" {
  description = "The admin API's routes and the function serving them, for another API that carries the same routes (module console's): {function_name, invoke_arn, integration_timeout_ms, route_keys (route name → route key)}. A route added to the admin API reaches it too."
  value = {
    function_name          = module.admin.function_name
    invoke_arn             = module.admin.invoke_arn
    integration_timeout_ms = 15000
    route_keys             = module.admin_api.route_keys
  }
}

output "function_names" {
  description = "Lambda function names by role: api, admin, advancer."
  value = {
    api      = module.api.function_name
    admin    = module.admin.function_name
    advancer = module.advancer.function_name
  }
}

output "log_group_names" {
  description = "Log groups of the functions by role."
  value = {
    api      = module.api.log_group_name
    admin    = module.admin.log_group_name
    advancer = module.advancer.log_group_name
  }
}

output "health_alarms" {
  description = "VWR_HEALTH_ALARMS of the advancer (AlarmName = every event, eventId=AlarmName = one event; null = no alarm holds it)."
  value       = local.health_alarms
}

output "advancer_schedule_name" {
  description = "EventBridge Scheduler schedule of the advancer."
  value       = module.advancer.schedule_name
}
