variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "vwr"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 characters of a-z 0-9 -, starting with a letter."
  }
}

variable "site_hosts" {
  description = "Host names the site's distribution answers to (its *.cloudfront.net name and the aliases): the console is https://<host>/vwr-console/ on each, its sign-in callback and logout URL, and each is an origin the console API allows (CORS). The first is the console_url output's."
  type        = list(string)

  validation {
    condition     = length(var.site_hosts) > 0 && alltrue([for h in var.site_hosts : can(regex("^[A-Za-z0-9.-]+$", h))])
    error_message = "site_hosts are host names (no scheme, port or path), at least one."
  }
}

variable "tier1_admin" {
  description = "Tier 1's admin routes and the function serving them (module tier1 output admin_routes): every route becomes a console route."
  type = object({
    function_name          = string
    invoke_arn             = string
    integration_timeout_ms = number
    route_keys             = map(string)
  })
}

variable "tier2_admin" {
  description = "Tier 2's admin routes and the function serving them (module tier2 output admin_routes); null = no tier 2."
  type = object({
    function_name          = string
    invoke_arn             = string
    integration_timeout_ms = number
    route_keys             = map(string)
  })
  default = null
}

variable "oidc" {
  description = "Sign in with another OpenID Connect issuer (Okta, Entra ID, Google, …) instead of the Cognito user pool this module makes otherwise: issuer (the tokens' `iss`, https://…), client_id (the console's public client there, authorization code with PKCE, redirect URI https://<site>/vwr-console/) and audience (the tokens' `aud` the API accepts; null = client_id, the `aud` of ID tokens)."
  type = object({
    issuer    = string
    client_id = string
    audience  = optional(string)
  })
  default = null

  validation {
    condition     = var.oidc == null ? true : can(regex("^https://[^\\s/?#]+(/[^\\s?#]*)?$", var.oidc.issuer))
    error_message = "oidc.issuer must be an https:// URL without query or fragment (the tokens' iss, e.g. https://example.okta.com/oauth2/default)."
  }
  validation {
    condition     = var.oidc == null ? true : can(regex("^\\S+$", var.oidc.client_id))
    error_message = "oidc.client_id is required with an issuer (the console's public client id there)."
  }
  validation {
    condition     = var.oidc == null ? true : try(var.oidc.audience == null || can(regex("^\\S+$", var.oidc.audience)), false)
    error_message = "oidc.audience, when given, is not empty and has no spaces."
  }
}

variable "threat_protection" {
  description = "Cognito threat protection (ENFORCED: risky sign-ins challenged or blocked, compromised passwords refused; AUDIT: logged only; OFF). ENFORCED and AUDIT need the Plus feature plan (about $0.02 a month per active user); OFF keeps Essentials."
  type        = string
  default     = "ENFORCED"

  validation {
    condition     = contains(["ENFORCED", "AUDIT", "OFF"], var.threat_protection)
    error_message = "threat_protection must be ENFORCED, AUDIT or OFF."
  }
}

variable "domain_prefix" {
  description = "Prefix of the Cognito domain of the sign-in pages, https://<prefix>.auth.<region>.amazoncognito.com (unique in the region; a-z 0-9 -). null = <name>-console-<8 hex characters of this account and region>."
  type        = string
  default     = null

  validation {
    condition     = var.domain_prefix == null ? true : can(regex("^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$", var.domain_prefix))
    error_message = "domain_prefix must be 1-63 characters of a-z 0-9 -, not starting or ending with -."
  }
}

variable "deletion_protection" {
  description = "Refuse to delete the Cognito user pool (and its people); false only to tear down a test stack."
  type        = bool
  default     = true
}

variable "throttle_rate" {
  description = "Steady-state requests per second of the console API stage (per route)."
  type        = number
  default     = 20

  validation {
    condition     = var.throttle_rate > 0
    error_message = "throttle_rate must be positive."
  }
}

variable "throttle_burst" {
  description = "Burst of the console API stage (per route)."
  type        = number
  default     = 40

  validation {
    condition     = var.throttle_burst > 0
    error_message = "throttle_burst must be positive."
  }
}

variable "kms_key_arn" {
  description = "Optional customer managed KMS key for the access log group (null = CloudWatch Logs' own encryption)."
  type        = string
  default     = null
}

variable "log_retention_days" {
  description = "Retention of the console API's access log group."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
