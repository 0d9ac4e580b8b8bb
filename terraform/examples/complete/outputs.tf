output "site_url" {
  description = "The site behind the waiting room (point your DNS aliases at the distribution)."
  value       = "https://${module.edge.distribution_domain}"
}

output "waiting_page_url" {
  description = "Waiting page of an event: append the event id (and ?next=/events/<id>)."
  value       = "https://${module.edge.distribution_domain}/vwr/"
}

output "admin_api_url" {
  description = "For `vwr admin --sigv4 --url <this> …` (IAM; tier 1 and tier 2)."
  value       = module.tier1.admin_api_endpoint
}

output "tier1_api_url" {
  description = "Tier-1 API straight (CloudFront serves it under /vwr-api)."
  value       = module.tier1.public_api_endpoint
}

output "tier2_api_url" {
  description = "Tier-2 API straight (CloudFront serves it under /api/queue)."
  value       = module.tier2.public_api_endpoint
}

output "protected_api_url" {
  description = "Protected-API gate straight (null without protected_backend_url)."
  value       = module.tier2.protected_api_endpoint
}

output "entry_token_jwks" {
  description = "Public keys of entry tokens, for backends that verify them themselves."
  value       = module.tier2.jwks
}

output "notice_queue_url" {
  description = "SQS FIFO queue of admission notices."
  value       = module.tier2.notice_queue_url
}

output "distribution_id" {
  description = "CloudFront distribution id."
  value       = module.edge.distribution_id
}

output "web_acl_arn" {
  description = "WAF web ACL on the distribution (terraform/README.md, \"WAF\")."
  value       = module.edge.web_acl_arn
}

output "dashboard" {
  description = "CloudWatch dashboard."
  value       = module.observability.dashboard_name
}

output "edge_kvs_arn" {
  description = "KeyValueStore of the edge verifier."
  value       = module.edge.kvs_arn
}

output "origin_secret_arn" {
  description = "Secret with the x-vwr-origin-secret value CloudFront sends to every origin: your site origin and protected backend must refuse requests without it (terraform/README.md, \"Locking origins to CloudFront\")."
  value       = module.tier1.origin_secret_arn
}

output "health_alarms" {
  description = "The alarms that hold the advancer (VWR_HEALTH_ALARMS): AlarmName holds every event, eventId=AlarmName one."
  value       = module.tier1.health_alarms
}

output "standby_alarm_name" {
  description = "The alarm a standby event can wait for (`vwr admin standby EVENT --alarm NAME`); null outside us-east-1."
  value       = one(aws_cloudwatch_metric_alarm.standby_spike[*].alarm_name)
}

output "console_url" {
  description = "The console (docs/console.md): sign in with a person of the Cognito user pool (or admin_oidc_issuer) in vwr-viewer, vwr-operator or vwr-admin."
  value       = module.console.console_url
}

output "console_api_url" {
  description = "The console API (the admin routes of both tiers, JWT); the console finds it in /vwr-console/config.json."
  value       = module.console.api_endpoint
}

output "console_user_pool_id" {
  description = "Cognito user pool of the console's people (null with admin_oidc_issuer): aws cognito-idp admin-create-user / admin-add-user-to-group --user-pool-id <this> (docs/console.md)."
  value       = module.console.user_pool_id
}

output "console_hosted_ui_domain" {
  description = "Host name of the Cognito sign-in pages (null with admin_oidc_issuer)."
  value       = module.console.hosted_ui_domain
}

output "console_client_id" {
  description = "The console's public client id (Cognito app client, or admin_oidc_client_id)."
  value       = module.console.client_id
}
