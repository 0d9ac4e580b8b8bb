output "console_url" {
  description = "The console: https://<first site host>/vwr-console/."
  value       = local.console_urls[0]
}

output "api_endpoint" {
  description = "Base URL of the console API (the admin routes of both tiers, JWT)."
  value       = module.api.endpoint
}

output "api_id" {
  description = "Id of the console API."
  value       = module.api.id
}

output "issuer" {
  description = "The OpenID Connect issuer the console API accepts tokens of."
  value       = local.issuer
}

output "audience" {
  description = "The audience (`aud` or Cognito's `client_id`) the console API accepts."
  value       = local.audience
}

output "client_id" {
  description = "The console's public client id at the issuer."
  value       = local.client_id
}

output "user_pool_id" {
  description = "The Cognito user pool of the console's people (null with another OIDC issuer): aws cognito-idp admin-create-user --user-pool-id <this> … (docs/console.md)."
  value       = local.cognito ? aws_cognito_user_pool.this[0].id : null
}

output "hosted_ui_domain" {
  description = "Host name of the Cognito sign-in pages (null with another OIDC issuer)."
  value       = local.cognito ? "${aws_cognito_user_pool_domain.this[0].domain}.auth.${local.region}.amazoncognito.com" : null
}

output "groups" {
  description = "The role groups (Cognito groups, or the values another issuer puts in the groups claim)."
  value       = keys(local.groups)
}

output "config_json" {
  description = "/vwr-console/config.json: {api, issuer, clientId, scopes} (the edge module's console_config_json)."
  value       = local.config_json
}

output "connect_origins" {
  description = "The origins the console's script connects to, for its Content-Security-Policy (the edge module's console_connect_origins)."
  value       = local.connect_origins
}
