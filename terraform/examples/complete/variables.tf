variable "region" {
  description = "AWS Region of the regional resources (everything but CloudFront and Lambda@Edge)."
  type        = string
  default     = "ap-northeast-2"
}

variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "vwr"
}

variable "dist_dir" {
  description = "dist/ written by scripts/package.sh (default: the repository's dist/)."
  type        = string
  default     = null
}

variable "site_origin_domain" {
  description = "Host name of your site's origin (what CloudFront forwards the site to), e.g. origin.shop.example.com."
  type        = string
}

variable "protected_backend_url" {
  description = "https:// base URL of your booking API; /api/seats/* and /api/reservations/* go through the entry-token gate to it. null = those paths go to the site origin (tier-1 check only)."
  type        = string
  default     = null
}

variable "gated_events" {
  description = "Event ids the edge gates. Activate in tier 1 first (vwr admin activate), then add here and apply."
  type        = list(string)
  default     = []
}

variable "verifier" {
  description = "cloudfront-function (recommended) or lambda-edge."
  type        = string
  default     = "cloudfront-function"
}

variable "vpc_cidr" {
  description = "CIDR of the VPC created for Redis and the tier-2 functions."
  type        = string
  default     = "10.42.0.0/16"
}

variable "aliases" {
  description = "Alternate domain names of the distribution."
  type        = list(string)
  default     = []
}

variable "acm_certificate_arn" {
  description = "ACM certificate in us-east-1 for the aliases (viewers then need TLS 1.2+). Without it the *.cloudfront.net certificate accepts TLSv1: set it in production."
  type        = string
  default     = null
}

variable "web_acl_id" {
  description = "Your own WAF web ACL (WAFv2 ARN, scope CLOUDFRONT, us-east-1) instead of the one the edge module creates; the waf_* variables are then ignored."
  type        = string
  default     = null
}

# Per-client limits at the edge (terraform/README.md, "WAF"): on by default.
variable "waf_enabled" {
  description = "Create the edge's WAF web ACL: AWS managed IP-reputation and known-bad-inputs rules, per-IP rate limits on assign, check and /api/queue/* (about $10 a month + $0.60 per million requests)."
  type        = bool
  default     = true
}

variable "waf_assign_limit_per_minute" {
  description = "Joins (POST /vwr-api/vwr/assign/*) per client IP per minute before 429. One IP can be a whole household, office or mobile carrier NAT."
  type        = number
  default     = 60
}

variable "waf_check_limit_per_minute" {
  description = "Ticket checks (/vwr-api/vwr/check/*) per client IP per minute before 429."
  type        = number
  default     = 300
}

variable "waf_queue_limit_per_minute" {
  description = "Tier-2 requests (/api/queue/*) per client IP per minute before 429. A tier-2 visitor near the front polls about every second and a carrier NAT puts many behind one address: keep room for 100 (7,500); a 429 stops the heartbeat that keeps a place."
  type        = number
  default     = 10000
}

variable "waf_rate_limit_action" {
  description = "block (429) or count (metrics only: a rehearsal, or a load test from few addresses)."
  type        = string
  default     = "block"
}

variable "waf_block_anonymous_ips" {
  description = "Also block VPNs, proxies, Tor and hosting providers (AWS AnonymousIpList). Turns away real buyers on VPNs."
  type        = bool
  default     = false
}

variable "waf_log_destination_arn" {
  description = "CloudWatch Logs group, S3 bucket or Firehose stream in us-east-1 named aws-waf-logs-* for the blocked and counted requests; null = no WAF logs."
  type        = string
  default     = null
}

variable "alarm_actions" {
  description = "SNS topic ARNs (or other alarm actions) for the alarms."
  type        = list(string)
  default     = []
}

variable "admin_principal_patterns" {
  description = "Optional allow-list of IAM principal ARN patterns for the tier-1 and tier-2 admin routes (`*` = any run of characters), e.g. [\"arn:aws:iam::123456789012:role/ops-*\"]. [] = any principal with execute-api:Invoke on the admin API."
  type        = list(string)
  default     = []
}

# The console's sign-in (docs/console.md, "Sign-in in AWS"): a Cognito user pool unless
# admin_oidc_issuer names another OpenID Connect issuer.
variable "admin_oidc_issuer" {
  description = "Another OpenID Connect issuer for the console's sign-in (Okta, Entra ID, …): its `iss`, e.g. https://example.okta.com/oauth2/default. Register the console there as a public client (authorization code with PKCE, redirect and logout URI https://<site>/vwr-console/). null = a Cognito user pool made here."
  type        = string
  default     = null

  validation {
    condition     = var.admin_oidc_issuer == null ? true : can(regex("^https://[^\\s/?#]+(/[^\\s?#]*)?$", var.admin_oidc_issuer))
    error_message = "admin_oidc_issuer must be an https:// URL without query or fragment, exactly the tokens' iss."
  }
}

variable "admin_oidc_client_id" {
  description = "The console's client id at admin_oidc_issuer (required with it; written to /vwr-console/config.json)."
  type        = string
  default     = null

  validation {
    condition     = var.admin_oidc_client_id == null ? true : can(regex("^\\S+$", var.admin_oidc_client_id))
    error_message = "admin_oidc_client_id must not be empty or hold spaces."
  }
}

variable "admin_oidc_audience" {
  description = "The `aud` the console API accepts from admin_oidc_issuer's tokens. null = admin_oidc_client_id (the `aud` of ID tokens)."
  type        = string
  default     = null

  validation {
    condition     = var.admin_oidc_audience == null ? true : can(regex("^\\S+$", var.admin_oidc_audience))
    error_message = "admin_oidc_audience must not be empty or hold spaces."
  }
}

variable "admin_oidc_groups_claim" {
  description = "The token claim listing a person's groups, of which vwr-viewer, vwr-operator and vwr-admin give the console role (VWR_ADMIN_GROUPS_CLAIM of the admin functions): cognito:groups for the Cognito user pool; e.g. groups (Okta) or roles (Entra ID app roles) for another issuer."
  type        = string
  default     = "cognito:groups"

  validation {
    condition     = can(regex("^\\S+$", var.admin_oidc_groups_claim))
    error_message = "admin_oidc_groups_claim must be a claim name: not empty, no spaces."
  }
}

variable "stall_alarm_event_ids" {
  description = "Events that get a line-stalled alarm (waiting > 0 and nothing served for 5 minutes); add an event before its sale."
  type        = list(string)
  default     = []
}

variable "hold_on_origin_errors" {
  description = "Hold the advancer (nobody new let in, everybody keeps their place) while the origin-5xx alarm is in ALARM: more than origin_5xx_percent % of requests fail with 5xx in 2 of 3 minutes (docs/outflow.md#health-gate). The alarm watches CloudFront's 5xxErrorRate in us-east-1, else the protected-API gate; without either, name your own alarm in health_alarm_names."
  type        = bool
  default     = true
}

variable "origin_5xx_percent" {
  description = "Threshold of the origin-5xx alarm: percentage of requests failing with 5xx (2 of 3 minutes)."
  type        = number
  default     = 5
}

variable "health_alarm_names" {
  description = "More CloudWatch metric alarms (this account and region) that hold the advancer for every event while in ALARM, e.g. your site origin's ALB 5xx alarm."
  type        = list(string)
  default     = []
}

variable "health_alarms_by_event" {
  description = "CloudWatch metric alarms that hold one event: event id -> alarm names, e.g. { \"concert-1\" = [\"concert-1-checkout-5xx\"] }."
  type        = map(list(string))
  default     = {}
}

variable "table_deletion_protection" {
  description = "Protect the DynamoDB table from deletion (false only for throw-away stacks)."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default = {
    Project = "vwr"
  }
}

variable "enqueue_jwks" {
  description = "The site's public JWKS for enqueue tokens (`vwr keys generate` prints one; the site keeps the private key). null = events cannot require enqueue tokens."
  type        = string
  default     = null
}

variable "standby_requests_per_minute" {
  description = "CloudFront requests a minute above which the standby_spike alarm fires and opens the standby events waiting for it (docs/lifecycle.md#standby). Made in us-east-1 only (CloudFront's metrics live there)."
  type        = number
  default     = 60000
  validation {
    condition     = var.standby_requests_per_minute >= 1
    error_message = "standby_requests_per_minute must be at least 1."
  }
}
