variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "vwr"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 characters of a-z 0-9 -, starting with a letter."
  }
}

variable "dist_dir" {
  description = "Path of the dist/ directory written by scripts/package.sh (edge bundles and the waiting page)."
  type        = string
}

# --- origins ---------------------------------------------------------------------------------

variable "site_origin_domain" {
  description = "Host name of the operator's site (the default behavior's origin), e.g. shop-origin.example.com."
  type        = string
}

variable "site_origin_protocol" {
  description = "How CloudFront talks to the site origin: https-only (recommended: the x-vwr-origin-secret header would cross the network in clear otherwise) or http-only."
  type        = string
  default     = "https-only"

  validation {
    condition     = contains(["https-only", "http-only", "match-viewer"], var.site_origin_protocol)
    error_message = "site_origin_protocol must be https-only, http-only or match-viewer."
  }
}

variable "site_cache_policy_id" {
  description = "Cache policy of the site's default behavior (default: the managed CachingDisabled)."
  type        = string
  default     = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
}

variable "site_origin_request_policy_id" {
  description = "Origin request policy of the site's default behavior (default: the managed AllViewerExceptHostHeader)."
  type        = string
  default     = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
}

variable "tier1_api_domain" {
  description = "Host name of the tier-1 public API (module tier1 output public_api_domain): /vwr-api/*."
  type        = string
}

variable "tier2_api_domain" {
  description = "Host name of the tier-2 public API (module tier2 output public_api_domain): /api/queue/*. null = no tier 2."
  type        = string
  default     = null
}

variable "protected_api_domain" {
  description = "Host name of the protected-API gate (module tier2 output protected_api_domain): /api/seats/*, /api/reservations/*. null = these paths go to the site origin."
  type        = string
  default     = null
}

variable "protected_api_stage" {
  description = "Stage of the protected-API gate (module tier2 output protected_api_stage)."
  type        = string
  default     = null
}

# --- edge verifier ---------------------------------------------------------------------------

variable "verifier" {
  description = "Edge verifier on the site's behaviors: cloudfront-function (recommended: cheapest, KeyValueStore configuration, changes in seconds) or lambda-edge (configuration bundled, changes need a new version and a distribution update)."
  type        = string
  default     = "cloudfront-function"

  validation {
    condition     = contains(["cloudfront-function", "lambda-edge"], var.verifier)
    error_message = "verifier must be cloudfront-function or lambda-edge."
  }
}

variable "fail_mode" {
  description = "What the verifier does when its configuration is unreadable: closed (503 outside the waiting room) or open (pass). Built into the code (__VWR_FAIL_MODE__)."
  type        = string
  default     = "closed"

  validation {
    condition     = contains(["closed", "open"], var.fail_mode)
    error_message = "fail_mode must be closed or open."
  }
}

variable "keys_fail_mode" {
  description = "config.failMode: what the verifier does when the keys are unreadable but a token must be checked (closed or open)."
  type        = string
  default     = "closed"

  validation {
    condition     = contains(["closed", "open"], var.keys_fail_mode)
    error_message = "keys_fail_mode must be closed or open."
  }
}

variable "gated_events" {
  description = "Event ids gated by the edge from the start (config.events). With the CloudFront Function verifier this only seeds the KeyValueStore: afterwards the tier-1 admin API and advancer keep the list in step with activations. With Lambda@Edge it is the list (change it and apply: activate in tier 1 first, add here; remove here before deactivating)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for e in var.gated_events : can(regex("^[A-Za-z0-9_-]{1,64}$", e))]) && length(distinct(var.gated_events)) == length(var.gated_events)
    error_message = "gated_events must be distinct ids of 1-64 characters of A-Z a-z 0-9 _ -."
  }
}

variable "protected_rules" {
  description = "Protected paths (config.rules): a path under path_prefix has its event id in segment event_segment (1-based)."
  type = list(object({
    path_prefix   = string
    event_segment = number
  }))
  default = [
    { path_prefix = "/events/", event_segment = 2 },
    { path_prefix = "/api/seats/", event_segment = 3 },
    { path_prefix = "/api/reservations/", event_segment = 3 },
  ]

  validation {
    condition     = length(var.protected_rules) >= 1 && alltrue([for r in var.protected_rules : startswith(r.path_prefix, "/") && r.event_segment >= 1])
    error_message = "protected_rules needs at least one rule; path_prefix starts with / and event_segment is >= 1."
  }
}

variable "tier1_settings" {
  description = "Tier-1 token and cookie settings (module tier1 output settings): the verifier must agree with the issuer."
  type = object({
    token_issuer   = string
    token_audience = string
    cookie_prefix  = string
  })
}

variable "tier1_edge_keys_text" {
  description = "Tier-1 edge keys `kid:base64url,…` (module tier1 output edge_keys_text): derived keys that only verify tier-1 tokens. Never the master keys (output keys_text)."
  type        = string
  sensitive   = true
}

variable "origin_secret" {
  description = "Value of the x-vwr-origin-secret header sent to every origin (module tier1 output origin_secret): origins refuse requests without it."
  type        = string
  sensitive   = true

  validation {
    condition     = length(var.origin_secret) >= 32
    error_message = "origin_secret must be at least 32 characters."
  }
}

# --- distribution ----------------------------------------------------------------------------

variable "aliases" {
  description = "Alternate domain names of the distribution (needs acm_certificate_arn)."
  type        = list(string)
  default     = []
}

variable "acm_certificate_arn" {
  description = "ACM certificate (us-east-1) for the aliases; viewers then need TLS 1.2 or later (TLSv1.2_2021). null = the *.cloudfront.net certificate, with which CloudFront always accepts TLSv1: use a custom domain in production."
  type        = string
  default     = null
}

variable "web_acl_id" {
  description = "Your own WAF web ACL (WAFv2 ARN, scope CLOUDFRONT, in us-east-1) to attach instead of the module's: with it the module creates none and the waf_* variables are ignored. Give a value known at plan time (a literal or a variable)."
  type        = string
  default     = null
}

# --- WAF (terraform/README.md, "WAF") --------------------------------------------------------

variable "waf_enabled" {
  description = "Create a WAF web ACL (us-east-1, scope CLOUDFRONT) and attach it: AWS managed IP-reputation and known-bad-inputs rules, and per-IP rate-based rules on assign, check and /api/queue/*. About $10 a month plus $0.60 per million requests. Ignored when web_acl_id is set."
  type        = bool
  default     = true
}

variable "waf_assign_limit_per_minute" {
  description = "Most POST /vwr-api/vwr/assign/* (joining the line) one IP address may make in a minute; above it, 429 until its rate falls below. A visitor joins once (a few times with rejoins), but a household, an office or a mobile carrier's NAT shares one address: too low turns real buyers away."
  type        = number
  default     = 60

  validation {
    condition     = var.waf_assign_limit_per_minute >= 10 && var.waf_assign_limit_per_minute <= 2000000000 && floor(var.waf_assign_limit_per_minute) == var.waf_assign_limit_per_minute
    error_message = "waf_assign_limit_per_minute must be a whole number from 10 (the WAF minimum) to 2,000,000,000."
  }
}

variable "waf_check_limit_per_minute" {
  description = "Most GET /vwr-api/vwr/check/* one IP address may make in a minute (the waiting page calls check about once per visitor, at its turn; API clients poll it at nextPollSeconds, at most once a second)."
  type        = number
  default     = 300

  validation {
    condition     = var.waf_check_limit_per_minute >= 10 && var.waf_check_limit_per_minute <= 2000000000 && floor(var.waf_check_limit_per_minute) == var.waf_check_limit_per_minute
    error_message = "waf_check_limit_per_minute must be a whole number from 10 (the WAF minimum) to 2,000,000,000."
  }
}

variable "waf_queue_limit_per_minute" {
  description = "Most /api/queue/* requests (tier 2, any method) one IP address may make in a minute. A tier-2 visitor near the front reads the line document (CDN-cached, but counted here) every second less 20 % jitter and an admitted one renews its entry token every 10 s; a page that still polls status does so every second near the front (up to 75 a minute), and a carrier NAT puts many behind one address: the default holds 100 such visitors with a third to spare (tests/infra/contract.py refuses fewer than 100; docs/abuse.md)."
  type        = number
  default     = 10000

  validation {
    condition     = var.waf_queue_limit_per_minute >= 10 && var.waf_queue_limit_per_minute <= 2000000000 && floor(var.waf_queue_limit_per_minute) == var.waf_queue_limit_per_minute
    error_message = "waf_queue_limit_per_minute must be a whole number from 10 (the WAF minimum) to 2,000,000,000."
  }
}

variable "waf_rate_limit_action" {
  description = "What the rate-based rules do above their limit: block (429 with a JSON body and Retry-After) or count (only the metrics and logs: a rehearsal to size the limits, or a load test from few addresses)."
  type        = string
  default     = "block"

  validation {
    condition     = contains(["block", "count"], var.waf_rate_limit_action)
    error_message = "waf_rate_limit_action must be block or count."
  }
}

variable "waf_block_anonymous_ips" {
  description = "Add the AWS managed AnonymousIpList rule group (VPNs, proxies, Tor, hosting providers). Off by default: it also blocks real buyers on a VPN or a privacy relay."
  type        = bool
  default     = false
}

variable "waf_log_destination_arn" {
  description = "Where the web ACL logs blocked and counted requests: a CloudWatch Logs group, S3 bucket or Firehose stream in us-east-1 whose name starts with aws-waf-logs-. Cookies and the vwr token headers are redacted. null = no logs (the CloudWatch metrics and sampled requests remain)."
  type        = string
  default     = null

  validation {
    condition     = var.waf_log_destination_arn == null || can(regex("aws-waf-logs-", var.waf_log_destination_arn))
    error_message = "waf_log_destination_arn must name a destination whose name starts with aws-waf-logs- (a WAF requirement)."
  }
}

variable "price_class" {
  description = "CloudFront price class."
  type        = string
  default     = "PriceClass_100"

  validation {
    condition     = contains(["PriceClass_All", "PriceClass_200", "PriceClass_100"], var.price_class)
    error_message = "price_class must be PriceClass_All, PriceClass_200 or PriceClass_100."
  }
}

variable "access_log_bucket_domain" {
  description = "Bucket (domain name, ACLs enabled) for CloudFront standard logs; null = none."
  type        = string
  default     = null
}

variable "waiting_page_max_age" {
  description = "Cache-Control max-age of the waiting page HTML (seconds); assets get five times this."
  type        = number
  default     = 60
}

# --- the console ------------------------------------------------------------------------------

variable "console_config_json" {
  description = "/vwr-console/config.json, which the console reads at start (module console output config_json: the console API's URL and the sign-in settings)."
  type        = string
}

# Apart from console_config_json: the distribution's headers need these before the console API
# exists (the API allows the distribution's origin).
variable "console_connect_origins" {
  description = "https:// origins the console's script may connect to besides the site (module console output connect_origins: the console API, the issuer): its Content-Security-Policy's connect-src."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for o in var.console_connect_origins : can(regex("^https://[A-Za-z0-9*.-]+(:[0-9]+)?$", o))])
    error_message = "console_connect_origins are https:// origins (scheme and host, a leading *. allowed, no path)."
  }
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
